//! PaRT-FTL on the Cosmos board's timing (part-ftl.txt VI.B) with a smaller device: reads are
//! never queued on a write die, a read of a page on the write set is rebuilt within eq. 8's
//! bound, the write set rotates after a block on every write die, and the parity of a group
//! (a block per channel) is written between the next group's host programs.

use std::cell::RefCell;
use std::rc::Rc;

use flashlab_sim::config::ExperimentConfig;
use flashlab_sim::host::{Op, Request};
use flashlab_sim::nand::OOB_FLAG_TRANSLATION;
use flashlab_sim::workload::{LoopMode, RequestSource};
use flashlab_sim::{SimError, Simulation};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Requests at given times (relative to the start of the run), open loop.
struct Scripted(std::vec::IntoIter<Request>);

impl RequestSource for Scripted {
    fn next_request(&mut self, _now_ns: u64) -> Result<Option<Request>, SimError> {
        Ok(self.0.next())
    }
    fn loop_mode(&self) -> LoopMode {
        LoopMode::Open
    }
    fn expected_requests(&self) -> Option<u64> {
        None
    }
    fn describe(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
}

/// Cosmos (4 channels x 4 ways, 8 KiB pages, tR 0.125 ms, 0.25 ms per page on the bus,
/// tPROG 1.08 ms, tBERS 3.84 ms) with 16 blocks of 32 pages per die, filled first.
const COSMOS_SMALL: &[&str] = &[
    "geometry.blocks_per_plane=16",
    "geometry.pages_per_block=32",
    "run.precondition=1.0",
    "run.precondition_max_passes=1",
    "timing.die_queue_policy=\"edf\"",
];

const PAGE: u64 = 8192;
const MS: u64 = 1_000_000;
/// One page over a Cosmos channel (8 KiB at 32.768 MB/s).
const XFER_NS: u64 = 250_000;
const TR_NS: u64 = 125_000;
const TPROG_NS: u64 = 1_080_000;

fn config(ftl: &str, extra: &[&str]) -> ExperimentConfig {
    let name = format!("ftl.name=\"{ftl}\"");
    let mut sets = COSMOS_SMALL.to_vec();
    sets.push(&name);
    sets.extend_from_slice(extra);
    ExperimentConfig::with_sets("cosmos", &sets).unwrap()
}

/// Preconditions, then runs open-loop single-page requests: a write every `write_gap_ns`
/// (enough to keep the write dies busy, with GC) and a random read every 3 ms, offset so
/// reads do not queue behind one another. Returns the read latencies and the FTL report.
fn mixed_run(
    cfg: &ExperimentConfig,
    reads: u64,
    write_gap_ns: u64,
) -> (Vec<u64>, serde_json::Value) {
    let mut sim = Simulation::new(cfg).unwrap();
    sim.precondition().unwrap();
    let pages = sim.logical_bytes() / PAGE;
    let start = 0;
    let latencies = Rc::new(RefCell::new(Vec::new()));
    let sink = latencies.clone();
    sim.set_observer(Box::new(move |c| {
        if c.op == Op::Read {
            sink.borrow_mut().push(c.completion_ns - c.arrival_ns);
        }
    }));
    let mut rng = Pcg64Mcg::seed_from_u64(5);
    let end = start + reads * 3 * MS;
    let mut requests = Vec::new();
    let mut t = start;
    while t < end {
        requests.push(Request {
            arrival_ns: t,
            op: Op::Write,
            offset_bytes: rng.random_range(0..pages) * PAGE,
            len_bytes: PAGE,
            deadline_ns: 60 * MS,
            task: None,
        });
        t += write_gap_ns;
    }
    for i in 0..reads {
        requests.push(Request {
            arrival_ns: start + i * 3 * MS + MS / 3,
            op: Op::Read,
            offset_bytes: rng.random_range(0..pages) * PAGE,
            len_bytes: PAGE,
            deadline_ns: 15 * MS,
            task: None,
        });
    }
    requests.sort_by_key(|r| r.arrival_ns);
    sim.run(Box::new(Scripted(requests.into_iter())), &mut |_| {})
        .unwrap();
    sim.check_invariants().unwrap();
    let report = sim.ftl().report();
    let latencies = latencies.borrow().clone();
    assert_eq!(latencies.len() as u64, reads);
    (latencies, report)
}

/// Eq. 8: a rebuilt read takes t_r + t_c^d, t_r being a page read on every read die of the
/// channel (the three cell reads overlap, their transfers share the bus: tR + 3 x 0.25 ms).
/// Queueing adds at most the write die's program data crossing the same bus (0.25 ms).
/// Under pagemap, a read of a die that is programming waits for the program (1.08 ms) or an
/// erase (3.84 ms).
#[test]
fn reads_never_wait_for_the_write_set_and_meet_eq_8() {
    let bound = TR_NS + 3 * XFER_NS + XFER_NS + 20_000;
    let (part, report) = mixed_run(&config("part-ftl", &[]), 1500, 2 * MS);
    let c = &report["counters"];
    let part_max = *part.iter().max().unwrap();
    assert!(
        part_max <= bound,
        "part-ftl read max {part_max} ns above eq. 8's bound {bound} ns: {c}"
    );
    assert!(c["rebuilt_reads"].as_u64().unwrap() > 100, "{c}");
    assert!(c["normal_reads"].as_u64().unwrap() > 100, "{c}");
    assert!(c["gc_erases"].as_u64().unwrap() > 0, "no GC: {c}");
    assert!(c["rotations"].as_u64().unwrap() > 4, "{c}");
    assert_eq!(c["host_reads_on_write_set"], 0, "{c}");
    assert_eq!(c["host_reads_on_busy_writer"], 0, "{c}");
    let (pagemap, _) = mixed_run(
        &config("pagemap", &["ftl.over_provisioning=0.3"]),
        1500,
        2 * MS,
    );
    let pagemap_max = *pagemap.iter().max().unwrap();
    eprintln!("read max: part-ftl {part_max} ns, pagemap {pagemap_max} ns; {c}");
    assert!(
        pagemap_max > TPROG_NS + TR_NS + XFER_NS,
        "pagemap read max {pagemap_max} ns: reads on busy dies should wait for programs"
    );
}

/// Decoding a rebuilt page costs `decode_ns` of FTL CPU time (t_c^d in eq. 8): the slowest
/// read grows by it, a direct read does not pay it.
#[test]
fn decode_time_adds_to_rebuilt_reads() {
    let (fast, _) = mixed_run(&config("part-ftl", &[]), 300, 2 * MS);
    let (slow, report) = mixed_run(&config("part-ftl", &["ftl.decode_ns=500000"]), 300, 2 * MS);
    assert!(report["counters"]["rebuilt_reads"].as_u64().unwrap() > 10);
    let (fast_max, slow_max) = (*fast.iter().max().unwrap(), *slow.iter().max().unwrap());
    assert!(slow_max >= fast_max + 400_000, "{fast_max} -> {slow_max}");
    let (fast_min, slow_min) = (*fast.iter().min().unwrap(), *slow.iter().min().unwrap());
    assert!(slow_min < fast_min + 100_000, "{fast_min} -> {slow_min}");
}

/// Fig. 4: the write set moves to the next way once a block was written on every write die
/// (4 channels x 32 pages); after the three data ways the next group opens at way 0 and the
/// parity way writes a block of parity per channel (the encoding job).
#[test]
fn the_write_set_rotates_after_a_block_on_every_write_die() {
    let cfg = config(
        "part-ftl",
        &["run.precondition=0.0", "run.functional_only=true"],
    );
    let mut sim = Simulation::new(&cfg).unwrap();
    let mut written = 0;
    let mut write_until = |sim: &mut Simulation, pages: u64| {
        while written < pages {
            let r = Request {
                arrival_ns: 0,
                op: Op::Write,
                offset_bytes: written * PAGE,
                len_bytes: PAGE,
                deadline_ns: 0,
                task: None,
            };
            sim.submit(r).unwrap();
            sim.run_until_idle().unwrap();
            written += 1;
        }
        sim.ftl().report()
    };
    let block_per_write_die = 4 * 32;
    let r = write_until(&mut sim, block_per_write_die - 1);
    assert_eq!(
        (r["write_way"].as_u64(), r["counters"]["rotations"].as_u64()),
        (Some(0), Some(0)),
        "{r}"
    );
    let r = write_until(&mut sim, block_per_write_die);
    assert_eq!(
        (r["write_way"].as_u64(), r["counters"]["rotations"].as_u64()),
        (Some(1), Some(1)),
        "{r}"
    );
    let r = write_until(&mut sim, 3 * block_per_write_die - 1);
    assert_eq!(r["write_way"], 2, "{r}");
    assert_eq!(r["counters"]["parity_pages_written"], 0, "{r}");
    let r = write_until(&mut sim, 3 * block_per_write_die);
    // Group 2 opened at way 0 at once, and the parity job ran while the write dies were
    // idle (functional: at once).
    assert_eq!(r["write_way"], 0, "{r}");
    assert_eq!(r["counters"]["rotations"], 3, "{r}");
    assert_eq!(
        r["counters"]["parity_pages_written"], block_per_write_die,
        "{r}"
    );
    assert_eq!(r["counters"]["groups_closed"], 1, "{r}");
    sim.check_invariants().unwrap();
}

/// Bad settings are refused with the field, the value and what is allowed.
#[test]
fn settings_the_design_cannot_run_are_refused() {
    let err = |sets: &[&str]| {
        let mut all = vec!["ftl.name=\"part-ftl\""];
        all.extend_from_slice(sets);
        match ExperimentConfig::with_sets("cosmos", &all) {
            Ok(_) => panic!("{sets:?} accepted"),
            Err(e) => e.to_string(),
        }
    };
    // 16 groups: (16 - 3 - 1) / 16 = 0.75 at most.
    let e = err(&["geometry.blocks_per_plane=16", "ftl.data_ratio=0.8"]);
    assert!(e.contains("ftl.data_ratio") && e.contains("0.75"), "{e}");
    let e = err(&["geometry.blocks_per_plane=4"]);
    assert!(e.contains("geometry.blocks_per_plane"), "{e}");
    let e = err(&["geometry.chips_per_channel=1"]);
    assert!(e.contains("geometry.chips_per_channel"), "{e}");
    let e = err(&["ftl.write_buffer_pages=3"]);
    assert!(
        e.contains("ftl.write_buffer_pages") && e.contains("8 ..="),
        "{e}"
    );
    let e = err(&["ftl.data_ratio=1.5"]);
    assert!(e.contains("ftl.data_ratio"), "{e}");
    assert!(ExperimentConfig::with_sets(
        "cosmos",
        &[
            "ftl.name=\"part-ftl\"",
            "geometry.blocks_per_plane=16",
            "ftl.data_ratio=0.75"
        ]
    )
    .is_ok());
}

/// V.A: 25% of the storage holds parity (one of Cosmos' four ways) and 64.3% of the rest is
/// logical, so 48.2% of the device is exported.
#[test]
fn over_provisioning_of_section_v_a() {
    let cfg = ExperimentConfig::with_sets(
        "cosmos",
        &[
            "ftl.name=\"part-ftl\"",
            "geometry.blocks_per_plane=64",
            "run.functional_only=true",
        ],
    )
    .unwrap();
    let sim = Simulation::new(&cfg).unwrap();
    let raw = cfg.geometry.total_pages() * u64::from(cfg.geometry.page_bytes);
    let share = sim.logical_bytes() as f64 / raw as f64;
    assert!((share - 0.482).abs() < 0.0005, "{share}");
    let report = sim.ftl().report();
    assert_eq!(report["parity_way"], 3);
    assert_eq!(report["write_set_dies"], 4);
    assert_eq!(report["stripe_groups"], 64);
}

/// Writes paced at one page every 2 ms (the four write dies program one page each per
/// 1.33 ms): `write_to_flash_ns` (acknowledgement to program completion) is about one
/// program while the data ways write, and stays so once a group's data is written: its
/// parity (a block per write die, 32 programs) is an EDF job of the write dies' idle time
/// (eq. 3), so a page waits for at most one parity program before its own, not for the block.
#[test]
fn acknowledged_writes_wait_for_at_most_one_parity_program() {
    let cfg = config("part-ftl", &["run.precondition=0.0"]);
    let block_per_write_die = 4 * 32;
    let paced_run = |pages: u64| {
        let mut sim = Simulation::new(&cfg).unwrap();
        let requests: Vec<Request> = (0..pages)
            .map(|i| Request {
                arrival_ns: i * 2 * MS,
                op: Op::Write,
                offset_bytes: i * PAGE,
                len_bytes: PAGE,
                deadline_ns: 0,
                task: None,
            })
            .collect();
        sim.run(Box::new(Scripted(requests.into_iter())), &mut |_| {})
            .unwrap();
        sim.check_invariants().unwrap();
        sim.ftl().report()["counters"].clone()
    };
    let data_turns = paced_run(3 * block_per_write_die - 8);
    let max = data_turns["write_to_flash_ns_max"].as_u64().unwrap();
    assert!(
        (TPROG_NS..TPROG_NS + 2 * XFER_NS).contains(&max),
        "data turns: a page waits for its own program only: {data_turns}"
    );
    let with_parity = paced_run(3 * block_per_write_die + 40);
    assert_eq!(with_parity["parity_pages_written"], block_per_write_die);
    assert_eq!(with_parity["groups_closed"], 1, "{with_parity}");
    let max = with_parity["write_to_flash_ns_max"].as_u64().unwrap();
    assert!(
        max <= 2 * (TPROG_NS + 2 * XFER_NS),
        "a page waits for at most one parity program and its own: {with_parity}"
    );
    assert_eq!(with_parity["parity_rotation_waits"], 0, "{with_parity}");
}

/// Section V: buffered pages are programmed earliest deadline first, not in arrival order.
/// Twelve writes with a 1 s deadline arrive together (the four idle write dies start on the
/// first four), then four with a 1 ms deadline: each write die programs an urgent page next
/// (page 1 of its block), and the remaining lazy pages only after them.
#[test]
fn buffered_pages_are_programmed_earliest_deadline_first() {
    let cfg = config("part-ftl", &["run.precondition=0.0"]);
    let mut sim = Simulation::new(&cfg).unwrap();
    let write = |arrival_ns, lpn, deadline_ns| Request {
        arrival_ns,
        op: Op::Write,
        offset_bytes: lpn * PAGE,
        len_bytes: PAGE,
        deadline_ns,
        task: None,
    };
    let mut requests: Vec<Request> = (0..12).map(|lpn| write(0, lpn, 1000 * MS)).collect();
    requests.extend((100..104).map(|lpn| write(10_000, lpn, MS)));
    sim.run(Box::new(Scripted(requests.into_iter())), &mut |_| {})
        .unwrap();
    sim.check_invariants().unwrap();
    let nand = sim.nand();
    let layout = nand.layout();
    let mut page_of = std::collections::HashMap::new();
    for ppn in 0..layout.pages() {
        let oob = nand.oob(nand.unit_addr(ppn, 0));
        if let (Some(lpn), false) = (oob.lpn(), oob.flags() & OOB_FLAG_TRANSLATION != 0) {
            page_of.insert(u64::from(lpn), layout.page_in_block(ppn));
        }
    }
    for lpn in 100..104 {
        assert_eq!(page_of[&lpn], 1, "urgent page {lpn}: {page_of:?}");
    }
    for lpn in 4..12 {
        assert!(page_of[&lpn] >= 2, "lazy page {lpn}: {page_of:?}");
    }
}

/// Table III (`periodic:tasks=4xw12p@60ms+4xr3p@15ms`) on Cosmos with 64 blocks per die,
/// preconditioned so GC runs: the time from a write's acknowledgement to its page's program
/// stays within the writers' deadline (60 ms, the period eq. 7 schedules C^w in), because
/// the parity of each group is an EDF job with a deadline of seconds (eq. 3's T^e) that the
/// writers' pages preempt. The old parity turn (a block of parity per write die before any
/// further host program) made pages wait about 340 ms.
#[test]
fn acknowledged_pages_reach_flash_within_the_write_deadline_on_table_iii() {
    let mut cfg = ExperimentConfig::with_sets(
        "cosmos",
        &[
            "ftl.name=\"part-ftl\"",
            "geometry.blocks_per_plane=64",
            "run.precondition=1.0",
            "run.seed=1",
            "timing.die_queue_policy=\"edf\"",
        ],
    )
    .unwrap();
    cfg.workload =
        flashlab_sim::workload::parse_spec("periodic:tasks=4xw12p@60ms+4xr3p@15ms,duration=10s")
            .unwrap();
    cfg.validate().unwrap();
    let report = flashlab_sim::run_experiment(&cfg, &mut |_| {}).unwrap();
    let c = &report.ftl_details["counters"];
    let get = |k: &str| c[k].as_u64().unwrap_or_else(|| panic!("{k} missing: {c}"));
    eprintln!("{c}");
    // GC and parity jobs ran in the window.
    assert!(
        get("gc_erases") > 0 && get("parity_pages_written") >= 1024,
        "{c}"
    );
    assert!(get("groups_closed") >= 1, "{c}");
    let deadline_ns = 60 * MS;
    assert!(get("write_to_flash_ns_max") <= deadline_ns, "{c}");
    assert_eq!(get("write_to_flash_late_pages"), 0, "{c}");
    assert_eq!(get("parity_rotation_waits"), 0, "{c}");
    assert_eq!(get("parity_late_pages"), 0, "{c}");
    assert!(
        get("write_to_flash_ns_p50") <= get("write_to_flash_ns_p99"),
        "{c}"
    );
    assert!(
        get("write_to_flash_ns_p99") <= get("write_to_flash_ns_max") + MS,
        "{c}"
    );
    // Reads still never wait for the write set, and no deadline is missed.
    assert_eq!(get("host_reads_on_write_set"), 0, "{c}");
    assert_eq!(get("host_reads_on_busy_writer"), 0, "{c}");
    let deadlines = report
        .deadlines
        .as_ref()
        .expect("periodic tasks have deadlines");
    assert!(deadlines.requests > 3000 && deadlines.misses == 0);
}
