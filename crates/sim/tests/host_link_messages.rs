//! The host link's command and completion messages and `host.data_over_link`, against exact
//! closed forms on a tiny device: one channel, one die, one plane, 4 KiB pages and mapping
//! units, tR 50 us, bus 800 MB/s (4 KiB in 5.12 us), no cache operations, no FTL CPU cost, and
//! a link of 1 MB/s (1 us per byte), so each request's latency is
//!
//!   command (command_bytes x 1 us + command_overhead_ns)
//!   + write data down (if data_over_link) + flash + read data up (if data_over_link)
//!   + completion (completion_bytes x 1 us).
//!
//! Writes are acknowledged once buffered (pagemap's write buffer), so their flash time is 0.

mod tiny_device;

use std::cell::RefCell;
use std::rc::Rc;

use flashlab_sim::engine::CompletedRequest;
use flashlab_sim::flash::{Cause, OpKind};
use flashlab_sim::host::{Op, Request};
use flashlab_sim::{run_experiment, ExperimentConfig, Simulation};

const PAGE: u64 = 4096;
/// Link time of one byte at 1 MB/s.
const BYTE_NS: u64 = 1_000;
/// Command overhead used by every case.
const OVERHEAD_NS: u64 = 500;
/// Flash time of a 4 KiB read: tR + 4096 B at 800 MB/s.
const FLASH_READ_NS: u64 = 50_000 + 5_120;
/// Link time of a page of data.
const DATA_NS: u64 = PAGE * BYTE_NS;

fn tiny(extra: &[&str]) -> ExperimentConfig {
    tiny_device::tiny_device(1, extra)
}

/// A preconditioned simulation of `config` that logs every completed request.
fn simulation(config: &ExperimentConfig) -> (Simulation, Rc<RefCell<Vec<CompletedRequest>>>) {
    let mut sim = Simulation::new(config).unwrap_or_else(|e| panic!("{e}"));
    sim.precondition().unwrap_or_else(|e| panic!("{e}"));
    let log = Rc::new(RefCell::new(Vec::new()));
    let sink = Rc::clone(&log);
    sim.set_observer(Box::new(move |c| sink.borrow_mut().push(*c)));
    (sim, log)
}

fn request(op: Op, offset_bytes: u64, len_bytes: u64) -> Request {
    Request::untimed(op, offset_bytes, len_bytes)
}

fn host_reads(sim: &Simulation) -> u64 {
    sim.flash().counters().get(OpKind::Read, Cause::Host)
}

/// Latency of each request run alone on an idle device, one after the other.
fn alone(config: &ExperimentConfig, requests: &[Request]) -> Vec<u64> {
    let (mut sim, log) = simulation(config);
    let mut latencies = Vec::new();
    for r in requests {
        let reads_before = host_reads(&sim);
        sim.submit(*r).unwrap_or_else(|e| panic!("{e}"));
        sim.run_until_idle().unwrap_or_else(|e| panic!("{e}"));
        let done = log.borrow_mut().pop().expect("the request completed");
        assert_eq!((done.op, done.offset_bytes), (r.op, r.offset_bytes));
        if r.op == Op::Read {
            assert_eq!(
                host_reads(&sim) - reads_before,
                r.len_bytes / PAGE,
                "every page read must come from the flash"
            );
        }
        latencies.push(done.completion_ns - done.arrival_ns);
    }
    latencies
}

#[test]
fn defaults_keep_the_link_model_without_messages() {
    // Command: the overhead only; data crosses the link both ways; no completion message.
    let config = tiny(&[]);
    assert_eq!(config.host.command_bytes, 0);
    assert_eq!(config.host.completion_bytes, 0);
    assert!(config.host.data_over_link);
    let lat = alone(
        &config,
        &[request(Op::Read, 0, PAGE), request(Op::Write, 0, PAGE)],
    );
    assert_eq!(lat[0], OVERHEAD_NS + FLASH_READ_NS + DATA_NS, "read");
    assert_eq!(lat[1], OVERHEAD_NS + DATA_NS, "write");
}

#[test]
fn messages_add_their_link_time_to_reads_and_writes() {
    let config = tiny(&["host.command_bytes=16", "host.completion_bytes=8"]);
    let command = 16 * BYTE_NS + OVERHEAD_NS;
    let completion = 8 * BYTE_NS;
    let lat = alone(
        &config,
        &[request(Op::Read, 0, PAGE), request(Op::Write, 0, PAGE)],
    );
    assert_eq!(
        lat[0],
        command + FLASH_READ_NS + DATA_NS + completion,
        "read"
    );
    assert_eq!(lat[1], command + DATA_NS + completion, "write");
}

#[test]
fn without_data_on_the_link_only_the_messages_cross_it() {
    let config = tiny(&[
        "host.command_bytes=16",
        "host.completion_bytes=8",
        "host.data_over_link=false",
    ]);
    let command = 16 * BYTE_NS + OVERHEAD_NS;
    let completion = 8 * BYTE_NS;
    let (mut sim, log) = simulation(&config);
    let mut latencies = Vec::new();
    // A two-page read: both pages on the one die, one after the other, then one completion.
    for r in [
        request(Op::Read, 0, PAGE),
        request(Op::Write, 0, PAGE),
        request(Op::Read, 2 * PAGE, 2 * PAGE),
    ] {
        sim.submit(r).unwrap();
        sim.run_until_idle().unwrap();
        let done = log.borrow_mut().pop().unwrap();
        latencies.push(done.completion_ns - done.arrival_ns);
    }
    assert_eq!(latencies[0], command + FLASH_READ_NS + completion, "read");
    assert_eq!(latencies[1], command + completion, "write");
    assert_eq!(
        latencies[2],
        command + 2 * FLASH_READ_NS + completion,
        "two-page read"
    );
    assert_eq!(
        sim.link().busy_ns(),
        (3 * command, 3 * completion),
        "the link carried the messages and nothing else"
    );
}

#[test]
fn trims_and_flushes_carry_command_and_completion_messages() {
    let config = tiny(&[
        "host.command_bytes=16",
        "host.completion_bytes=8",
        "host.data_over_link=false",
    ]);
    let lat = alone(
        &config,
        &[request(Op::Trim, PAGE, PAGE), request(Op::Flush, 0, 0)],
    );
    let messages = 16 * BYTE_NS + OVERHEAD_NS + 8 * BYTE_NS;
    assert_eq!(lat, vec![messages, messages]);
}

/// `requests` submitted together at time 0 on a full- or half-duplex link; their latencies in
/// submission order.
fn together(full_duplex: bool, extra: &[&str], requests: &[Request]) -> Vec<u64> {
    let duplex = format!("host.full_duplex={full_duplex}");
    let mut sets = vec!["host.completion_bytes=8", duplex.as_str()];
    sets.extend_from_slice(extra);
    let (mut sim, log) = simulation(&tiny(&sets));
    for r in requests {
        sim.submit(*r).unwrap();
    }
    sim.run_until_idle().unwrap();
    let log = log.borrow();
    requests
        .iter()
        .map(|r| {
            let c = log
                .iter()
                .find(|c| (c.op, c.offset_bytes) == (r.op, r.offset_bytes))
                .expect("completed");
            c.completion_ns - c.arrival_ns
        })
        .collect()
}

#[test]
fn half_duplex_completions_wait_for_commands() {
    // Two reads, no data on the link, 64-byte commands: c = 64.5 us > f = 55.12 us. Down: the
    // first command [0, c], the second [c, 2c]; the first read leaves the flash at c + f, the
    // second (same die, free by then) at 2c + f.
    let c = 64 * BYTE_NS + OVERHEAD_NS;
    let f = FLASH_READ_NS;
    let s = 8 * BYTE_NS;
    let extra = ["host.command_bytes=64", "host.data_over_link=false"];
    let reads = [request(Op::Read, 0, PAGE), request(Op::Read, PAGE, PAGE)];
    // Full duplex: each completion goes up at once.
    assert_eq!(
        together(true, &extra, &reads),
        vec![c + f + s, 2 * c + f + s]
    );
    // Half duplex: the first completion waits for the second command to cross.
    assert_eq!(
        together(false, &extra, &reads),
        vec![2 * c + s, 2 * c + f + s]
    );
}

#[test]
fn half_duplex_messages_share_the_lane_with_data() {
    // A write and a read with data on the link. Down: the write's command [0, c], the read's
    // [c, 2c], the write's data [2c, 2c + d]; the read leaves the flash at 2c + f (f < d).
    let c = 16 * BYTE_NS + OVERHEAD_NS;
    let d = DATA_NS;
    let f = FLASH_READ_NS;
    let s = 8 * BYTE_NS;
    let extra = ["host.command_bytes=16"];
    let requests = [
        request(Op::Write, 5 * PAGE, PAGE),
        request(Op::Read, 0, PAGE),
    ];
    // Full duplex: up, the read's data [2c + f, 2c + f + d], then the write's completion (its
    // data arrived at 2c + d, before), then the read's.
    assert_eq!(
        together(true, &extra, &requests),
        vec![2 * c + f + d + s, 2 * c + f + d + 2 * s]
    );
    // Half duplex, one lane: the read's data after the write's [2c + d, 2c + 2d], then the
    // write's completion, then the read's.
    assert_eq!(
        together(false, &extra, &requests),
        vec![2 * c + 2 * d + s, 2 * c + 2 * d + 2 * s]
    );
}

#[test]
fn messages_bound_iops_on_the_link() {
    // Reads without data on the link, flash far faster than the link: 16 us commands down
    // and 8 us completions up. Full duplex: one command per 16 us (62,500 IOPS); half duplex:
    // 24 us per request on the shared lane (41,667 IOPS).
    for (full_duplex, expected) in [(true, 1e6 / 16.0), (false, 1e6 / 24.0)] {
        let duplex = format!("host.full_duplex={full_duplex}");
        let config = tiny(&[
            "host.command_overhead_ns=0",
            "host.command_bytes=16",
            "host.completion_bytes=8",
            "host.data_over_link=false",
            "timing.read_latency_ns=1000",
            &duplex,
            "workload.read_fraction=1.0",
            "workload.block_size=4096",
            "workload.align_bytes=4096",
            "workload.queue_depth=16",
            "workload.count=10000",
        ]);
        let r = run_experiment(&config, &mut |_| {}).unwrap();
        let error = r.host.read.iops / expected - 1.0;
        assert!(
            error.abs() <= 0.01,
            "full_duplex={full_duplex}: {:.0} IOPS, expected {expected:.0}",
            r.host.read.iops
        );
        if full_duplex {
            assert!(r.utilisation.host_link_down > 0.99);
            assert!((r.utilisation.host_link_up - 0.5).abs() < 0.01);
        } else {
            assert!(r.utilisation.host_link_down > 0.99);
        }
    }
}

#[test]
fn mt_board_requests_cost_their_uart_descriptors() {
    // 16 bytes down and 8 up at 11,520 bytes/s; a 4 KiB page read: tR 60 us + 409.6 us on the
    // 10 MB/s bus; no data on the UART.
    let config = ExperimentConfig::with_sets(
        "mt-board",
        &[
            "geometry.blocks_per_plane=64",
            "run.precondition=1.0",
            "run.precondition_max_passes=0",
        ],
    )
    .unwrap();
    let lat = alone(
        &config,
        &[request(Op::Read, 0, PAGE), request(Op::Write, 0, PAGE)],
    );
    let (command, completion) = (1_388_889, 694_444);
    assert_eq!(lat[0], command + 60_000 + 409_600 + completion, "read");
    assert_eq!(lat[1], command + completion, "write");
}

#[test]
fn functional_only_runs_take_no_link_time() {
    let config = tiny(&[
        "host.command_bytes=16",
        "host.completion_bytes=8",
        "run.functional_only=true",
        "workload.read_fraction=0.5",
        "workload.count=2000",
    ]);
    let r = run_experiment(&config, &mut |_| {}).unwrap();
    assert_eq!(r.host.all.count, 2000);
    assert_eq!(r.elapsed_ns, 0);
}

#[test]
fn message_sizes_out_of_range_name_the_field() {
    for (set, field) in [
        ("host.command_bytes=65537", "host.command_bytes"),
        ("host.completion_bytes=100000", "host.completion_bytes"),
    ] {
        let err = ExperimentConfig::with_sets("default", &[set])
            .map(|_| ())
            .expect_err(set)
            .to_string();
        assert!(err.contains(field), "{err}");
        assert!(err.contains("0 ..= 65536"), "{err}");
        assert!(!err.contains('\n'), "{err}");
    }
    let err = ExperimentConfig::with_sets("default", &["host.data_over_link=2"])
        .map(|_| ())
        .expect_err("a number is not a bool")
        .to_string();
    assert!(err.contains("host.data_over_link"), "{err}");
}
