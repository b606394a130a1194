//! Periodic tasks, deadline misses, per-task latencies, sub-request latencies and the time
//! series, against exact closed forms on a tiny device (as in `host_link_messages.rs`): one
//! channel, one die, one plane, 4 KiB pages and mapping units, tR 50 us, bus 800 MB/s (4 KiB
//! in 5.12 us), no cache operations, no FTL CPU cost, command overhead 500 ns and a link of
//! 1000 MB/s (4 KiB in 4.096 us). A one-page read alone on the idle device takes
//!
//!   500 (command) + 55_120 (flash: tR + bus) + 4_096 (data up) = 59_716 ns,
//!
//! of which its sub-request spends 55_120 ns in the FTL (hand-over to completion). A second
//! one-page read released at the same time waits for the first one's command on the link
//! (its command is in at 1_000 ns) and for the die (free at 55_620 ns): it is done in the FTL
//! at 110_740 ns (109_740 ns after its hand-over) and complete at 114_836 ns.

mod tiny_device;

use flashlab_sim::workload::parse_spec;
use flashlab_sim::{run_experiment, ExperimentConfig, Report};

const ALONE_NS: u64 = 500 + 55_120 + 4_096;
const SECOND_NS: u64 = 1_000 + 109_740 + 4_096;

fn tiny(extra: &[&str]) -> ExperimentConfig {
    tiny_device::tiny_device(1000, extra)
}

fn run(workload: &str, extra: &[&str]) -> Report {
    let mut config = tiny(extra);
    config.workload = parse_spec(workload).unwrap_or_else(|e| panic!("{e}"));
    run_experiment(&config, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"))
}

/// Within the 0.1% of the latency histograms.
fn near(measured: u64, exact: u64) -> bool {
    measured.abs_diff(exact) * 1000 <= exact
}

#[test]
fn a_single_task_alone_meets_a_generous_deadline() {
    let r = run("periodic:tasks=r1p@1ms,count=10", &[]);
    assert_eq!(r.host.read.count, 10);
    assert_eq!(r.host.read.latency_ns.mean, ALONE_NS as f64, "closed form");
    let d = r.deadlines.as_ref().expect("the jobs have deadlines");
    assert_eq!((d.requests, d.misses, d.worst_lateness_ns), (10, 0, 0));
    assert_eq!(d.miss_ratio, 0.0);
    assert_eq!(d.tasks.len(), 1);
    assert_eq!((d.tasks[0].task, d.tasks[0].requests), (0, 10));
    assert_eq!(r.tasks.len(), 1);
    let t = &r.tasks[0];
    assert_eq!((t.task, t.read.count, t.write.count), (0, 10, 0));
    assert_eq!(t.read.latency_ns.mean, ALONE_NS as f64);
    assert!(near(t.read.latency_ns.max, ALONE_NS), "{:?}", t.read);
    let sub = &r.host.sub_requests.read;
    assert_eq!((sub.count, sub.bytes), (10, 10 * 4096));
    assert_eq!(sub.latency_ns.mean, 55_120.0, "tR + bus, in the FTL only");
}

#[test]
fn a_buffered_write_takes_no_time_in_the_ftl() {
    // Acknowledged from the write buffer: 0 ns in the FTL (recorded exactly), and the request
    // takes its command and its data's crossing of the link: 500 + 4_096 ns.
    let r = run("periodic:tasks=w1p@1ms,count=5", &[]);
    let sub = &r.host.sub_requests.write;
    assert_eq!(
        (sub.count, sub.latency_ns.mean, sub.latency_ns.max),
        (5, 0.0, 0)
    );
    assert_eq!(r.host.write.latency_ns.mean, (500 + 4_096) as f64);
    assert_eq!(r.tasks[0].write.latency_ns.mean, (500 + 4_096) as f64);
}

#[test]
fn a_deadline_met_exactly_is_not_a_miss() {
    let exact = format!("periodic:tasks=r1p@1ms/deadline={ALONE_NS}ns,count=5");
    let d = run(&exact, &[]).deadlines.expect("deadlines");
    assert_eq!((d.requests, d.misses), (5, 0));
    let early = format!("periodic:tasks=r1p@1ms/deadline={}ns,count=5", ALONE_NS - 1);
    let d = run(&early, &[]).deadlines.expect("deadlines");
    assert_eq!((d.misses, d.worst_lateness_ns), (5, 1), "1 ns late");
}

#[test]
fn a_tiny_deadline_is_missed_by_every_job_by_the_closed_form() {
    // Tasks 0 and 1 are released together: task 0 goes first (task-id order) and meets the
    // period deadline; task 1 waits for it and misses its 100 us deadline.
    let r = run(
        "periodic:tasks=r1p@1ms+r1p@1ms/deadline=100us,count=20",
        &["run.timeseries_interval_ns=2500000"],
    );
    let d = r.deadlines.as_ref().expect("deadlines");
    assert_eq!((d.requests, d.misses), (20, 10));
    assert_eq!(d.miss_ratio, 0.5);
    assert_eq!(d.worst_lateness_ns, SECOND_NS - 100_000);
    let per_task: Vec<(u32, u64, u64, u64)> = d
        .tasks
        .iter()
        .map(|t| (t.task, t.requests, t.misses, t.worst_lateness_ns))
        .collect();
    assert_eq!(
        per_task,
        vec![(0, 10, 0, 0), (1, 10, 10, SECOND_NS - 100_000)]
    );
    assert_eq!(r.tasks[0].read.latency_ns.mean, ALONE_NS as f64);
    assert_eq!(r.tasks[1].read.latency_ns.mean, SECOND_NS as f64);
    let sub = &r.host.sub_requests.read;
    assert_eq!(sub.latency_ns.mean, (55_120.0 + 109_740.0) / 2.0);
    assert!(near(sub.latency_ns.max, 109_740), "{sub:?}");

    // Jobs at 0, 1, ..., 9 ms, done within 115 us: intervals of 2.5 ms hold 3, 2, 3, 2 pairs.
    let ts = r.timeseries.as_ref().expect("a time series was asked for");
    assert_eq!(ts.interval_ns, 2_500_000);
    let per_interval: Vec<(u64, u64, u64, u64)> = ts
        .intervals
        .iter()
        .map(|i| (i.start_ns, i.requests, i.deadline_misses, i.max_latency_ns))
        .collect();
    assert_eq!(
        per_interval,
        vec![
            (0, 6, 3, SECOND_NS),
            (2_500_000, 4, 2, SECOND_NS),
            (5_000_000, 6, 3, SECOND_NS),
            (7_500_000, 4, 2, SECOND_NS),
        ]
    );
    let first = &ts.intervals[0];
    assert_eq!(first.read_bytes, 6 * 4096);
    assert_eq!(first.read_mb_per_s, 6.0 * 4096.0 / 1e6 / 0.0025);
    assert_eq!(first.mean_latency_ns, (ALONE_NS + SECOND_NS) as f64 / 2.0);
}

#[test]
fn time_series_sums_equal_the_totals() {
    let r = run(
        "periodic:tasks=2xw3p@2ms+3xr2p@1ms/deadline=150us,duration=40ms",
        &["run.timeseries_interval_ns=3000000"],
    );
    let ts = r.timeseries.as_ref().expect("time series");
    let sum = |f: &dyn Fn(&flashlab_sim::stats::IntervalReport) -> u64| -> u64 {
        ts.intervals.iter().map(f).sum()
    };
    assert_eq!(sum(&|i| i.requests), r.host.all.count);
    assert_eq!(sum(&|i| i.read_bytes), r.host.read.bytes);
    assert_eq!(sum(&|i| i.write_bytes), r.host.write.bytes);
    let d = r.deadlines.as_ref().expect("deadlines");
    assert_eq!(sum(&|i| i.deadline_misses), d.misses);
    assert!(
        d.misses > 0,
        "150 us is too short for three readers on one die"
    );
    let max = ts.intervals.iter().map(|i| i.max_latency_ns).max().unwrap();
    assert!(
        near(r.host.all.latency_ns.max, max),
        "{max} vs {:?}",
        r.host.all
    );
    let last_start = ts.intervals.last().unwrap().start_ns;
    let measured_end = r.elapsed_ns;
    assert!(last_start <= measured_end && measured_end < last_start + 3_000_000);
    // Per task: 20 writes each from tasks 0-1, 40 reads each from tasks 2-4.
    let counts: Vec<(u32, u64, u64)> = r
        .tasks
        .iter()
        .map(|t| (t.task, t.write.count, t.read.count))
        .collect();
    assert_eq!(
        counts,
        vec![(0, 20, 0), (1, 20, 0), (2, 0, 40), (3, 0, 40), (4, 0, 40)]
    );
    assert_eq!(r.host.sub_requests.write.count, 2 * 20 * 3);
    assert_eq!(r.host.sub_requests.read.count, 3 * 40 * 2);
}

#[test]
fn ordinary_workloads_have_no_tasks_and_no_deadline_section() {
    let r = run("randread:qd=2,count=50", &[]);
    assert!(r.deadlines.is_none());
    assert!(r.tasks.is_empty());
    assert!(r.timeseries.is_none());
    let json = r.to_json();
    assert!(json["deadlines"].is_null() && json["timeseries"].is_null());
    assert_eq!(json["tasks"], serde_json::json!([]));
    assert_eq!(json["host"]["sub_requests"]["read"]["count"], 50);
    // A workload-wide deadline counts, without tasks.
    let r = run("randread:qd=2,count=50,deadline=1ms", &[]);
    let d = r.deadlines.expect("deadlines");
    assert_eq!((d.requests, d.misses), (50, 0));
    assert!(d.tasks.is_empty() && r.tasks.is_empty());
}

#[test]
fn requests_submitted_with_sparse_task_ids_are_reported_per_task() {
    use flashlab_sim::host::{Op, Request};
    use flashlab_sim::{stats::build_report, Simulation};
    let config = tiny(&[]);
    let mut sim = Simulation::new(&config).unwrap_or_else(|e| panic!("{e}"));
    sim.precondition().unwrap_or_else(|e| panic!("{e}"));
    sim.reset_measurements();
    for (task, deadline_ns) in [(4_000_000_000, 1_000), (7, 0), (4_000_000_000, ALONE_NS)] {
        let request = Request {
            arrival_ns: 0,
            op: Op::Read,
            offset_bytes: 0,
            len_bytes: 4096,
            deadline_ns,
            task: Some(task),
        };
        sim.submit(request).unwrap_or_else(|e| panic!("{e}"));
        sim.run_until_idle().unwrap_or_else(|e| panic!("{e}"));
    }
    let r = build_report(&sim, serde_json::Value::Null);
    let tasks: Vec<(u32, u64)> = r.tasks.iter().map(|t| (t.task, t.read.count)).collect();
    assert_eq!(tasks, vec![(7, 1), (4_000_000_000, 2)], "in task-id order");
    let d = r.deadlines.expect("two requests had deadlines");
    assert_eq!((d.requests, d.misses), (2, 1));
    assert_eq!(d.worst_lateness_ns, ALONE_NS - 1_000);
    assert_eq!(d.tasks.len(), 1, "task 7 had no deadline");
    assert_eq!((d.tasks[0].task, d.tasks[0].misses), (4_000_000_000, 1));
}
