//! Behaviours of the demand-paged core (`ftl/demand`) the shared differential test does not
//! single out: one translation read serves every miss on its translation page, a load moves
//! one 4 KiB translation page over the bus, `ideal` keeps the map-cache traffic, a blocked
//! request counts once and completes, and one blocked on a dirty set is released by its flush.

use flashlab_sim::config::ExperimentConfig;
use flashlab_sim::testing::{self, Options, Step};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

mod small_device;

/// The shared small device, not preconditioned, with `extra` settings.
fn small_device(extra: &[&str]) -> ExperimentConfig {
    let mut sets = small_device::SMALL_DEVICE.to_vec();
    sets.push("run.precondition=0.0");
    sets.extend_from_slice(extra);
    ExperimentConfig::with_sets("default", &sets).unwrap()
}

/// 2 channels x 2 planes x 16 blocks x 16 pages of 8 KiB, DFTL with a 32-entry map cache:
/// the first 1,024 units share one translation page (a 4 KiB mapping unit of 4-byte entries).
/// Gupta et al.'s entry-level DFTL: every unit its own cache entry (the tests below count
/// per-entry misses).
fn dftl(functional: bool) -> ExperimentConfig {
    let mode = format!("run.functional_only={functional}");
    small_device(&[
        "ftl.name=\"dftl-entry\"",
        "ftl.cmt_bytes=256",
        // A slow read keeps the translation read in flight while the FTL CPU handles all
        // 256 sub-requests (about 1.2 ms at fmmu.txt's DFTL times).
        "timing.read_latency_ns=10000000",
        mode.as_str(),
    ])
}

fn map_cache_counter(config: &ExperimentConfig, steps: &[Step], key: &str) -> u64 {
    let options = Options {
        final_readback: false,
        ..Options::new(1)
    };
    let o = testing::run_steps_with(config, steps, &options).unwrap_or_else(|e| panic!("{e}"));
    let mc = serde_json::to_value(o.map_cache).expect("serializable");
    mc[key]
        .as_u64()
        .unwrap_or_else(|| panic!("no map_cache.{key}: {mc}"))
}

/// Units 0..256 written one by one, then 64 other units (the cache holds none of 0..256),
/// then one 1 MiB read of units 0..256: its 256 sub-requests all miss on the same translation
/// page, and one flash read of that page serves them all: each other miss waits on it, or,
/// once an install's eviction has written the page back, finds it in RAM (the translation
/// buffer keeps a page until its program completes), never reading it again. Timed only: in a
/// functional-only run the read completes at once, and the engine runs a flash completion
/// before the next submission (ARCHITECTURE.md, FTL CPU), so nothing is outstanding to wait.
#[test]
fn one_translation_read_serves_every_miss_on_its_page() {
    {
        let functional = false;
        let cfg = dftl(functional);
        let unit = 8;
        let mut steps: Vec<Step> = (0..256)
            .chain(600..664)
            .map(|u| Step::Write {
                offset_sectors: u * unit,
                sectors: unit,
            })
            .collect();
        let before_reads = map_cache_counter(&cfg, &steps, "translation_reads");
        let before_waits = map_cache_counter(&cfg, &steps, "misses_coalesced");
        let before_buffered = map_cache_counter(&cfg, &steps, "translation_buffer_hits");
        steps.push(Step::Read {
            offset_sectors: 0,
            sectors: 256 * unit,
        });
        let reads = map_cache_counter(&cfg, &steps, "translation_reads") - before_reads;
        let waits = map_cache_counter(&cfg, &steps, "misses_coalesced") - before_waits;
        let buffered = map_cache_counter(&cfg, &steps, "translation_buffer_hits") - before_buffered;
        assert_eq!(
            reads, 1,
            "functional {functional}: translation reads for the 1 MiB read"
        );
        assert_eq!(
            waits + buffered,
            255,
            "functional {functional}: misses that waited on that read"
        );
    }
}

/// A translation page is one 4 KiB mapping unit even on fmmu-16ch's 16 KiB flash pages
/// (four per flash page): a host read that misses moves 4 KiB of translation page and
/// 4 KiB of data over the NAND bus, not the whole 16 KiB page.
#[test]
fn a_translation_load_moves_one_unit_over_the_bus() {
    use flashlab_sim::engine::Simulation;
    use flashlab_sim::host::{Op, Request};
    let cfg = ExperimentConfig::with_sets(
        "fmmu-16ch",
        &[
            "ftl.name=\"dftl-entry\"",
            "ftl.cmt_bytes=8",
            "run.precondition=0.0",
            "run.functional_only=false",
        ],
    )
    .unwrap();
    let mut sim = Simulation::new(&cfg).unwrap();
    let request = |op, unit: u64| Request {
        arrival_ns: 0,
        op,
        offset_bytes: unit * 4096,
        len_bytes: if op == Op::Flush { 0 } else { 4096 },
        deadline_ns: 0,
        task: None,
    };
    // A one-entry cache: each write evicts the previous unit's dirty entry, so translation
    // pages 0..4 are written back and fill one flash page of the translation block.
    for unit in [0, 1024, 2048, 3072, 4096] {
        sim.submit(request(Op::Write, unit)).unwrap();
        sim.run_until_idle().unwrap();
    }
    sim.submit(request(Op::Flush, 0)).unwrap();
    sim.run_until_idle().unwrap();
    sim.check_invariants().unwrap();
    let before: u64 = sim.flash().channel_busy_ns().iter().sum();
    sim.submit(request(Op::Read, 0)).unwrap();
    sim.run_until_idle().unwrap();
    let bus: u64 = sim.flash().channel_busy_ns().iter().sum::<u64>() - before;
    let unit_ns = cfg.timing.bus_ns(4096);
    assert_eq!(
        bus,
        2 * unit_ns,
        "bus time of the read: translation page + data (one 4 KiB unit each: {unit_ns} ns), \
         a whole 16 KiB page takes {} ns",
        cfg.timing.bus_ns(16384)
    );
    sim.check_invariants().unwrap();
}

/// `exec_time = "ideal"` zeroes the FTL's execution time and nothing else (fmmu.txt 5.3):
/// the same workload on DFTL with a small cache makes the same translation reads and writes
/// as with the paper's times, and the FTL CPU is never busy.
#[test]
fn ideal_exec_time_keeps_the_map_cache_traffic() {
    use flashlab_sim::engine::Simulation;
    use flashlab_sim::host::{Op, Request};
    let run = |exec_time: &str| {
        let exec = format!("ftl.exec_time=\"{exec_time}\"");
        let cfg = small_device(&[
            "run.functional_only=false",
            "ftl.name=\"dftl\"",
            "ftl.cmt_bytes=256",
            // 512-byte units: 128 entries per translation page, several pages.
            "ftl.mapping_unit_bytes=512",
            exec.as_str(),
        ]);
        let mut sim = Simulation::new(&cfg).unwrap();
        let logical_units = sim.logical_bytes() / 512;
        // One request at a time (nothing overlaps, so timing cannot change what misses).
        let mut x: u64 = 12345;
        for i in 0..600 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let op = if i % 3 == 0 { Op::Read } else { Op::Write };
            sim.submit(Request {
                arrival_ns: 0,
                op,
                offset_bytes: (x >> 33) % logical_units * 512,
                len_bytes: 512,
                deadline_ns: 0,
                task: None,
            })
            .unwrap();
            sim.run_until_idle().unwrap();
        }
        sim.check_invariants().unwrap();
        let mc = serde_json::to_value(sim.ftl().map_cache()).unwrap();
        (mc, sim.cpu_busy_ns())
    };
    let (paper, paper_cpu) = run("paper");
    let (ideal, ideal_cpu) = run("ideal");
    for key in [
        "/translation_reads",
        "/translation_writes",
        "/cmt/lookups",
        "/cmt/hits",
    ] {
        assert!(
            paper.pointer(key).and_then(|v| v.as_u64()) > Some(0),
            "paper: no {key}: {paper}"
        );
        assert_eq!(
            paper.pointer(key),
            ideal.pointer(key),
            "{key}: paper {paper}, ideal {ideal}"
        );
    }
    assert!(paper_cpu > 0, "paper: no FTL CPU time");
    assert_eq!(ideal_cpu, 0, "ideal: FTL CPU busy for {ideal_cpu} ns");
}

/// FMMU and CDFTL with a one-block CMT and a one-page CTP (one set, one way each; 512-byte
/// pages and units, 128 entries per translation page). Reads of units 0, 16 and 32 arrive
/// together once translation page 0 is only in flash: the read of unit 0 takes the CMT's
/// only way and waits on a slow translation read, so the other two are blocked (their set is
/// loading) and looked up again after every handler until the way is free. Each blocked
/// request counts once in `blocked_requests` however often it is retried, and all complete
/// with their data (the harness checks every read).
#[test]
fn a_blocked_request_counts_once_and_completes() {
    for ftl in ["fmmu", "cdftl"] {
        let name = format!("ftl.name=\"{ftl}\"");
        let cfg = small_device(&[
            "geometry.page_bytes=512",
            "run.functional_only=false",
            "timing.read_latency_ns=1000000",
            name.as_str(),
            "ftl.cache_ways=1",
            "ftl.cmt_bytes=64",
            "ftl.ctp_bytes=512",
        ]);
        let write = |unit: u64| Step::Write {
            offset_sectors: unit,
            sectors: 1,
        };
        let read = |unit: u64| Step::Read {
            offset_sectors: unit,
            sectors: 1,
        };
        // Nine steps: batches of three, the reads in the fourth.
        let mut steps: Vec<Step> = [0, 16, 32, 128, 256, 384, 512, 640].map(write).to_vec();
        steps.push(Step::Flush);
        let before = counters(&cfg, &steps, 3);
        steps.extend([read(0), read(16), read(32)]);
        let after = counters(&cfg, &steps, 3);
        let delta = |key: &str| after[key].as_u64().unwrap() - before[key].as_u64().unwrap();
        assert!(delta("translation_reads") >= 1, "{ftl}: {after}");
        assert_eq!(delta("blocked_requests"), 2, "{ftl}: {after}");
    }
}

/// 32 requests at a time (70% one-sector writes, 30% reads) on 12 hot units over a 1-way CMT
/// of 256 bytes and a 1-way CTP of one page, timed: most lookups find their set dirty. A
/// blocked request's flush makes room at once (into the CTP, or a write-back that waits in
/// the translation buffer), so nothing later completes to look it up again: it must be looked
/// up again right after its flush, or the run goes idle with it outstanding (as it did in 8
/// of these 8 runs). Every read is checked against the last data written.
#[test]
fn a_request_blocked_on_a_dirty_set_is_released_by_its_flush() {
    for ftl in ["cdftl", "fmmu"] {
        for seed in [0, 2, 3, 6] {
            let name = format!("ftl.name=\"{ftl}\"");
            let cfg = small_device(&[
                "run.functional_only=false",
                name.as_str(),
                "ftl.cache_ways=1",
                "ftl.ctp_bytes=4096",
                "ftl.cmt_bytes=256",
            ]);
            let steps = hot_unit_mix(seed, testing::logical_sectors(&cfg).unwrap());
            let options = Options {
                clamp: false,
                ..Options::new(32)
            };
            let o = testing::run_steps_with(&cfg, &steps, &options)
                .unwrap_or_else(|e| panic!("{ftl} seed {seed}: {e}"));
            assert_eq!(o.checked_sectors, o.sectors_read, "{ftl} seed {seed}");
            let blocked = o.map_cache.expect("a map cache").blocked_requests;
            assert!(blocked > 100, "{ftl} seed {seed}: {blocked} blocked");
        }
    }
}

/// 1,600 one-sector steps, 70% writes, on 12 units spread over the first `sectors`.
fn hot_unit_mix(seed: u64, sectors: u64) -> Vec<Step> {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let hot: Vec<u64> = (0..12)
        .map(|_| rng.random_range(0..sectors / 8) * 8)
        .collect();
    (0..1600)
        .map(|_| {
            let offset_sectors = hot[rng.random_range(0..hot.len())] + rng.random_range(0..8);
            if rng.random_bool(0.7) {
                Step::Write {
                    offset_sectors,
                    sectors: 1,
                }
            } else {
                Step::Read {
                    offset_sectors,
                    sectors: 1,
                }
            }
        })
        .collect()
}

/// The FTL's counters after `steps` submitted in batches of `qd`, each run to idle.
fn counters(config: &ExperimentConfig, steps: &[Step], qd: usize) -> serde_json::Value {
    let options = Options {
        final_readback: false,
        ..Options::new(qd)
    };
    let o = testing::run_steps_with(config, steps, &options).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.checked_sectors, o.sectors_read);
    // The data-path counters with the standard map_cache section's figures.
    let mut all = o.ftl_report["counters"].clone();
    let mc = serde_json::to_value(o.map_cache).expect("serializable");
    for (key, value) in mc.as_object().expect("a map_cache section") {
        all[key] = value.clone();
    }
    all
}

/// fmmu-16ch at the FMMU study's quick size (32 pages x 32 blocks: 64 blocks per die),
/// filled sequentially and left idle, then `workload` with the `extra` settings.
fn quick_fmmu_run(workload: &str, extra: &[&str]) -> flashlab_sim::Report {
    let mut sets = vec![
        "ftl.name=\"fmmu\"",
        "ftl.exec_time=\"ideal\"",
        "geometry.pages_per_block=32",
        "geometry.blocks_per_plane=32",
        "ftl.cmt_bytes=16384",
        "ftl.ctp_bytes=262144",
        "run.precondition=1.0",
        "run.precondition_max_passes=0",
    ];
    sets.extend_from_slice(extra);
    let mut config = ExperimentConfig::with_sets("fmmu-16ch", &sets).unwrap();
    config.workload = flashlab_sim::workload::parse_spec(workload).unwrap();
    flashlab_sim::run_experiment(&config, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"))
}

/// After a sequential fill the map cache is full of dirty entries; sitting idle writes them
/// back (`ftl.idle_write_back_ns`), so random reads measured afterwards write nothing back
/// and no lookup waits for a flush; with the write-back off, the reads' misses must flush
/// first.
#[test]
fn an_idle_host_leaves_the_map_cache_clean() {
    let reads = "randread:bs=4k,qd=64,count=400";
    let clean = quick_fmmu_run(reads, &[]);
    let mc = clean.map_cache.as_ref().unwrap();
    assert_eq!(mc.translation_writes, 0, "{mc:?}");
    assert_eq!(mc.flushes, 0, "{mc:?}");
    assert!(mc.translation_reads > 100, "{mc:?}");
    let dirty = quick_fmmu_run(reads, &["ftl.idle_write_back_ns=0"]);
    let mc = dirty.map_cache.as_ref().unwrap();
    assert!(mc.translation_writes > 0 && mc.flushes > 0, "{mc:?}");
}

/// Translation pages are striped over every die when each has a spare block for it: random
/// reads that miss load translation pages from all dies, so no die is much busier than the
/// average; on one die at a time (`ftl.translation_dies=1`) that die bounds the run.
#[test]
fn translation_pages_spread_over_the_dies() {
    let reads = "randread:bs=4k,qd=512,count=3000";
    let striped = quick_fmmu_run(reads, &[]);
    assert_eq!(striped.ftl_details["translation_dies"], 128);
    let dies = &striped.utilisation.dies;
    assert!(dies.max < 2.0 * dies.mean, "{dies:?}");
    let one = quick_fmmu_run(reads, &["ftl.translation_dies=1"]);
    assert_eq!(one.ftl_details["translation_dies"], 1);
    assert!(one.utilisation.dies.max > 0.9, "{:?}", one.utilisation.dies);
    let iops = |r: &flashlab_sim::Report| r.host.all.count as f64 / r.elapsed_ns as f64;
    assert!(iops(&striped) > 2.0 * iops(&one));
}
