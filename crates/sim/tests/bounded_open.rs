//! Bounded-open pacing: requests arrive at their own times, the device holds at most
//! `queue_depth`, later arrivals wait host-side in arrival order and their response time counts
//! from arrival. Checked against its definition request by request (issue and completion
//! times), against plain open loop, and in the report (host-side wait). Every pacing keeps
//! time running forward: issue at or after arrival, completion at or after issue.

use std::cell::RefCell;
use std::rc::Rc;

use flashlab_sim::engine::CompletedRequest;
use flashlab_sim::host::{Op, Request};
use flashlab_sim::workload::{parse_spec, LoopMode, RequestSource, SyntheticSource};
use flashlab_sim::{ExperimentConfig, Report, SimError, Simulation};

/// A small device (2 dies, reads of 10 us, a fast link): fresh, or filled (functionally, so
/// reads go to the flash).
fn device(filled: bool) -> Simulation {
    let fill = if filled { "1.0" } else { "0" };
    let precondition = format!("run.precondition={fill}");
    let config = ExperimentConfig::with_sets(
        "default",
        &[
            "geometry.channels=2",
            "geometry.chips_per_channel=1",
            "geometry.dies_per_chip=1",
            "geometry.planes_per_die=1",
            "geometry.blocks_per_plane=64",
            "geometry.pages_per_block=64",
            "geometry.page_bytes=4096",
            "timing.read_latency_ns=10000",
            "ftl.over_provisioning=0.25",
            "run.precondition_max_passes=1",
            &precondition,
        ],
    )
    .expect("valid settings");
    let mut sim = Simulation::new(&config).expect("a valid device");
    if filled {
        sim.precondition().expect("preconditioning");
    }
    sim
}

/// Requests given in advance, paced as asked.
struct Given {
    requests: std::vec::IntoIter<Request>,
    mode: LoopMode,
}

impl RequestSource for Given {
    fn next_request(&mut self, _now_ns: u64) -> Result<Option<Request>, SimError> {
        Ok(self.requests.next())
    }
    fn loop_mode(&self) -> LoopMode {
        self.mode
    }
    fn expected_requests(&self) -> Option<u64> {
        None
    }
    fn describe(&self) -> serde_json::Value {
        serde_json::json!({ "kind": "test" })
    }
}

/// Runs `source` on `sim`: every completed request (completion order) and the report.
fn run(mut sim: Simulation, source: Box<dyn RequestSource>) -> (Vec<CompletedRequest>, Report) {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let sink = seen.clone();
    sim.set_observer(Box::new(move |c| sink.borrow_mut().push(*c)));
    let source = sim.run(source, &mut |_| {}).expect("the run finishes");
    assert_eq!(sim.host_queued(), 0, "nothing left waiting host-side");
    let report = flashlab_sim::stats::build_report(&sim, source.describe());
    let done = seen.borrow().clone();
    (done, report)
}

fn read(at_ns: u64, offset: u64) -> Request {
    Request {
        arrival_ns: at_ns,
        op: Op::Read,
        offset_bytes: offset,
        len_bytes: 16384,
        deadline_ns: 0,
        task: None,
    }
}

fn given(requests: Vec<Request>, mode: LoopMode) -> Box<dyn RequestSource> {
    Box::new(Given {
        requests: requests.into_iter(),
        mode,
    })
}

/// A bursty overload: 4-64 KiB random reads and writes at 20,000 requests/s, far more than
/// the two dies serve, so a backlog builds up.
fn overload(pacing: &str, qd: u32) -> Box<dyn RequestSource> {
    // An open loop takes no depth (it would be ignored, so the parser refuses it).
    let depth = if pacing == "open" {
        String::new()
    } else {
        format!(",qd={qd}")
    };
    workload(&format!(
        "randrw:bs=4k-64k,rate=20k,arrival=bursty,count=3000,pacing={pacing}{depth}"
    ))
}

/// The synthetic workload `spec` on [`device`].
fn workload(spec: &str) -> Box<dyn RequestSource> {
    let w = parse_spec(spec).expect("a valid workload");
    let logical = device(false).logical_bytes();
    Box::new(SyntheticSource::new(&w, logical, 5).expect("a source"))
}

fn by_arrival(mut done: Vec<CompletedRequest>) -> Vec<CompletedRequest> {
    done.sort_by_key(|c| (c.arrival_ns, c.issue_ns, c.offset_bytes));
    done
}

/// Most requests in the device at once (between issue and completion).
fn most_in_device(done: &[CompletedRequest]) -> i64 {
    let mut events: Vec<(u64, i64)> = done
        .iter()
        .flat_map(|c| [(c.issue_ns, 1), (c.completion_ns, -1)])
        .collect();
    // At equal times completions come first: the slot a completion frees is reused at once.
    events.sort_unstable();
    let (mut now, mut most) = (0, 0);
    for (_, delta) in events {
        now += delta;
        most = most.max(now);
    }
    most
}

fn assert_time_runs_forward(done: &[CompletedRequest], what: &str) {
    for c in done {
        assert!(
            c.arrival_ns <= c.issue_ns && c.issue_ns <= c.completion_ns,
            "{what}: {c:?}"
        );
    }
}

#[test]
fn at_depth_one_the_second_of_two_simultaneous_arrivals_waits_for_the_first() {
    // Two reads of the same 16 KiB: the same work, in the device or not.
    let two = || vec![read(1000, 0), read(1000, 0)];
    let (open, _) = run(device(true), given(two(), LoopMode::Open));
    let bounded = LoopMode::BoundedOpen { queue_depth: 1 };
    let (done, report) = run(device(true), given(two(), bounded));
    assert_eq!(done.len(), 2);
    let (first, second) = (done[0], done[1]);
    assert_eq!((first.arrival_ns, second.arrival_ns), (1000, 1000));
    assert_eq!(first.issue_ns, 1000, "the first goes to the device at once");
    assert_eq!(
        second.issue_ns, first.completion_ns,
        "the second goes when the first completes"
    );
    // Its response time includes the first's service, then its own (the same work).
    let service = first.completion_ns - first.issue_ns;
    let own = second.completion_ns - second.issue_ns;
    assert_eq!(second.completion_ns - second.arrival_ns, service + own);
    assert_eq!(own, service);
    // In open loop both are in the device at once and finish sooner.
    assert!(open.iter().all(|c| c.issue_ns == 1000));
    let open_last = open.iter().map(|c| c.completion_ns).max().unwrap();
    assert!(open_last < second.completion_ns, "{open:?} vs {done:?}");
    // The report says how long the second waited host-side (histograms keep 3 digits).
    let wait = &report.host.host_wait_ns;
    let close = |a: f64, b: f64| (a - b).abs() <= 0.001 * b;
    assert!(close(wait.max as f64, service as f64), "{wait:?}");
    assert!(close(wait.mean, service as f64 / 2.0), "{wait:?}");
    let worst = report.host.all.latency_ns.max as f64;
    assert!(close(worst, (service + own) as f64), "{worst}");
}

#[test]
fn a_bound_above_any_backlog_is_plain_open_loop() {
    let (open, open_report) = run(device(false), overload("open", 32));
    let (bounded, bounded_report) = run(device(false), overload("bounded-open", 1_048_576));
    assert_eq!(open.len(), 3000);
    assert_eq!(bounded, open, "request by request");
    assert_eq!(bounded_report.host, open_report.host);
    assert!(open.iter().all(|c| c.issue_ns == c.arrival_ns));
    assert_eq!(open_report.host.host_wait_ns.max, 0);
}

#[test]
fn the_device_never_holds_more_than_the_depth_and_waiting_requests_go_in_arrival_order() {
    for qd in [1u32, 4, 16] {
        let (done, report) = run(device(false), overload("bounded-open", qd));
        assert_eq!(done.len(), 3000);
        assert_time_runs_forward(&done, &format!("qd {qd}"));
        assert_eq!(most_in_device(&done), i64::from(qd), "qd {qd}");
        let done = by_arrival(done);
        // Host-side waiting is first come, first served.
        assert!(
            done.windows(2).all(|w| w[0].issue_ns <= w[1].issue_ns),
            "qd {qd}: issued out of arrival order"
        );
        // A request waits only while the device is full: it goes when another completes.
        let completions: std::collections::HashSet<u64> =
            done.iter().map(|c| c.completion_ns).collect();
        let waited: Vec<_> = done.iter().filter(|c| c.issue_ns > c.arrival_ns).collect();
        assert!(waited.len() > 1000, "qd {qd}: only {} waited", waited.len());
        assert!(waited.iter().all(|c| completions.contains(&c.issue_ns)));
        // The report's host-side wait is the requests' own.
        let mean_wait = done
            .iter()
            .map(|c| (c.issue_ns - c.arrival_ns) as f64)
            .sum::<f64>()
            / done.len() as f64;
        let reported = report.host.host_wait_ns.mean;
        assert!(
            (reported - mean_wait).abs() <= 0.002 * mean_wait,
            "qd {qd}: reported {reported}, requests {mean_wait}"
        );
        // Latency counts from arrival, host-side wait included.
        let mean_latency = done
            .iter()
            .map(|c| (c.completion_ns - c.arrival_ns) as f64)
            .sum::<f64>()
            / done.len() as f64;
        let latency = report.host.all.latency_ns.mean;
        assert!((latency - mean_latency).abs() <= 0.002 * mean_latency);
        assert!(mean_wait > 0.0 && latency > mean_wait, "qd {qd}");
    }
}

#[test]
fn open_and_closed_loops_issue_at_arrival_and_complete_after_issue() {
    let (open, _) = run(device(false), overload("open", 8));
    let (closed, _) = run(device(false), workload("randrw:bs=4k-64k,count=3000,qd=8"));
    for (what, done) in [("open", open), ("closed", closed)] {
        assert_eq!(done.len(), 3000, "{what}");
        assert_time_runs_forward(&done, what);
        assert!(done.iter().all(|c| c.issue_ns == c.arrival_ns), "{what}");
    }
}
