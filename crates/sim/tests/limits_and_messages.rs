//! Issue 25, classes 5, 8, 9 and 10 in the library: what a setting may allocate is bounded
//! (an open loop's backlog, a bounded-open loop's read-ahead, the time series), messages use
//! the user's words (choices, settings, ranges), and ambiguous or impossible combinations
//! are refused with the configuration instead of after preconditioning. Each table row
//! failed before its fix.

use std::cell::Cell;
use std::rc::Rc;

use flashlab_sim::engine::MAX_OPEN_LOOP_OUTSTANDING;
use flashlab_sim::host::{Op, Request};
use flashlab_sim::stats::MAX_INTERVALS;
use flashlab_sim::workload::{LoopMode, RequestSource};
use flashlab_sim::{ExperimentConfig, SimError, Simulation};

/// The error of loading the default preset with `sets` (`accepted` when there is none).
fn config_error(sets: &[&str]) -> String {
    match ExperimentConfig::with_sets("default", sets) {
        Ok(_) => String::from("accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn configuration_messages_use_the_users_words() {
    let periodic = "workload.pattern=\"periodic\"";
    let duration = "workload.duration_ns=1000000";
    // (settings, words the message must hold, words it must not)
    let rows: &[(&[&str], &[&str], &[&str])] = &[
        (
            &["trace.replay=\"bogus\""],
            &["trace.replay = bogus: unknown choice (allowed: open | closed | bounded-open)"],
            &["variant"],
        ),
        (
            &["timing.die_queue_policy=\"lifo\""],
            &[
                "timing.die_queue_policy = lifo: unknown choice",
                "fifo | read-first | edf",
            ],
            &["variant", "`fifo`"],
        ),
        (
            &["ftl.gc_victim=\"oldest\""],
            &["ftl.gc_victim = oldest: unknown choice", "greedy"],
            &["variant"],
        ),
        (
            &["run.bogus=1"],
            &["run.bogus: unknown setting `bogus` (allowed: seed, precondition,"],
            &["field"],
        ),
        (
            &["bogus.x=1"],
            &["bogus: unknown section `bogus` (allowed: preset, geometry,"],
            &["field"],
        ),
        (
            &["ftl.bogus=1"],
            &["ftl.bogus: unknown setting `bogus` (allowed: name, over_provisioning,"],
            &["field"],
        ),
        // 2^32 in a 32-bit field: out of range, with the documented range.
        (
            &["workload.queue_depth=4294967296"],
            &["workload.queue_depth = 4294967296 is out of range (allowed: 1 ..= 1048576)"],
            &["whole number"],
        ),
        (
            &["ftl.name=\"mt-ftl\"", "ftl.tasks=4294967296"],
            &["ftl.tasks = 4294967296 is out of range (allowed: 1 ..= 63)"],
            &["whole number"],
        ),
        // A task's field: its value and its documented range, not `= ?` and 2^63.
        (
            &[
                periodic,
                duration,
                "workload.tasks=[{op=\"write\",pages=2.5,period_ns=1000000}]",
            ],
            &["workload.tasks[0].pages = 2.5: expected a whole number (allowed: 0 ..= 1048576)"],
            &["= ?", "9223372036854775807"],
        ),
        (
            &[
                periodic,
                duration,
                "workload.tasks=[{op=\"erase\",pages=1,period_ns=1000000}]",
            ],
            &["workload.tasks[0].op = erase: unknown choice (allowed: read | write)"],
            &["variant"],
        ),
        // More than one request per nanosecond, the clock's resolution.
        (
            &[
                "workload.rate_iops=1e12",
                "workload.count=0",
                "workload.duration_ns=1000000",
            ],
            &["workload.rate_iops = 1000000000000 is out of range (allowed: 0 ..= 1000000000)"],
            &[],
        ),
        // Requests a 4 KiB-sector device cannot take: refused with the configuration.
        (
            &[
                "host.sector_bytes=4096",
                "workload.block_size=\"512-16k\"",
                "workload.align_bytes=512",
            ],
            &[
                "workload.align_bytes = 512",
                "host.sector_bytes = 4096",
                "inside a sector",
            ],
            &[],
        ),
        (
            &[
                "host.sector_bytes=4096",
                "workload.block_size=\"4k:50,6k:50\"",
            ],
            &[
                "workload.block_size",
                "6144 bytes",
                "host.sector_bytes = 4096",
            ],
            &[],
        ),
        (
            &["host.sector_bytes=4096", "workload.pattern=\"web\""],
            &["host.sector_bytes = 4096", "512-byte sectors"],
            &[],
        ),
    ];
    let mut failures = Vec::new();
    for (sets, mentions, never) in rows {
        let e = config_error(sets);
        let missing: Vec<_> = mentions.iter().filter(|m| !e.contains(*m)).collect();
        let present: Vec<_> = never.iter().filter(|m| e.contains(*m)).collect();
        if !missing.is_empty() || !present.is_empty() || e.contains('\n') {
            failures.push(format!(
                "{sets:?}\n  {e}\n  missing {missing:?}, should not say {present:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // A whole number written as a float in a task is that number; sizes that fit pass.
    ExperimentConfig::with_sets(
        "default",
        &[
            periodic,
            duration,
            "workload.tasks=[{op=\"write\",pages=2.0,period_ns=1000000}]",
        ],
    )
    .expect("pages = 2.0 is 2 pages");
    ExperimentConfig::with_sets(
        "default",
        &["host.sector_bytes=4096", "workload.block_size=\"4k-16k\""],
    )
    .expect("4 KiB multiples fit 4 KiB sectors");
}

/// A small device, fresh.
fn small_device(extra: &[&str]) -> Simulation {
    let mut sets = vec![
        "geometry.channels=2",
        "geometry.chips_per_channel=1",
        "geometry.dies_per_chip=1",
        "geometry.planes_per_die=1",
        "geometry.blocks_per_plane=64",
        "geometry.pages_per_block=64",
        "geometry.page_bytes=4096",
        "ftl.over_provisioning=0.25",
        "run.precondition=0",
    ];
    sets.extend_from_slice(extra);
    let config = ExperimentConfig::with_sets("default", &sets).expect("valid settings");
    Simulation::new(&config).expect("a valid device")
}

/// 512-byte reads all arriving at time 0 (far more than the device serves at once), over
/// the first `sectors` sectors (spread, so that finding overlaps stays cheap), counting how
/// many the engine has taken.
struct Flood {
    left: u64,
    sectors: u64,
    mode: LoopMode,
    taken: Rc<Cell<u64>>,
}

impl RequestSource for Flood {
    fn next_request(&mut self, _now_ns: u64) -> Result<Option<Request>, SimError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        self.taken.set(self.taken.get() + 1);
        Ok(Some(Request {
            arrival_ns: 0,
            op: Op::Read,
            offset_bytes: (self.left % self.sectors) * 512,
            len_bytes: 512,
            deadline_ns: 0,
            task: None,
        }))
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

#[test]
fn an_open_loop_that_outpaces_the_device_stops_at_its_bound_with_the_figures() {
    let mut sim = small_device(&[]);
    let taken = Rc::new(Cell::new(0));
    let flood = Flood {
        left: MAX_OPEN_LOOP_OUTSTANDING as u64 + 10,
        sectors: sim.logical_bytes() / 512,
        mode: LoopMode::Open,
        taken: taken.clone(),
    };
    let e = match sim.run(Box::new(flood), &mut |_| {}) {
        Ok(_) => panic!("an unbounded backlog must be refused"),
        Err(e) => e,
    };
    assert!(e.is_input_error(), "{e}");
    let e = e.to_string();
    for m in [
        "arrivals outpace the device",
        &format!("{MAX_OPEN_LOOP_OUTSTANDING} requests are outstanding"),
        "workload.rate_iops",
        "bounded-open",
    ] {
        assert!(e.contains(m), "missing `{m}`: {e}");
    }
    assert_eq!(
        taken.get(),
        MAX_OPEN_LOOP_OUTSTANDING as u64 + 1,
        "stopped at the bound"
    );
}

#[test]
fn a_bounded_open_loop_reads_its_source_only_so_far_ahead() {
    let mut sim = small_device(&[]);
    let taken = Rc::new(Cell::new(0));
    let completed = Rc::new(Cell::new(0u64));
    let most_ahead = Rc::new(Cell::new(0u64));
    {
        let (taken, completed, most_ahead) = (taken.clone(), completed.clone(), most_ahead.clone());
        sim.set_observer(Box::new(move |_| {
            completed.set(completed.get() + 1);
            most_ahead.set(most_ahead.get().max(taken.get() - completed.get()));
        }));
    }
    let count = 50_000;
    let flood = Flood {
        left: count,
        sectors: sim.logical_bytes() / 512,
        mode: LoopMode::BoundedOpen { queue_depth: 4 },
        taken: taken.clone(),
    };
    sim.run(Box::new(flood), &mut |_| {})
        .expect("the run finishes");
    assert_eq!(completed.get(), count, "every request completes");
    // Before: all 50,000 arrivals were read at once and held host-side.
    assert!(
        most_ahead.get() <= 4096 + 4 + 1,
        "read {} requests ahead of the completions",
        most_ahead.get()
    );
}

#[test]
fn a_time_series_of_a_tiny_interval_is_coarsened_and_says_so() {
    let mut sim = small_device(&[
        "run.timeseries_interval_ns=1",
        "workload.count=20000",
        "workload.read_fraction=0",
    ]);
    let config = sim.config().clone();
    let source = flashlab_sim::workload_source(&config, &sim).expect("a source");
    let source = sim.run(source, &mut |_| {}).expect("the run finishes");
    let report = flashlab_sim::stats::build_report(&sim, source.describe());
    let series = report.timeseries.expect("a time series");
    assert_eq!(series.requested_interval_ns, 1);
    assert!(series.interval_ns > 1 && series.interval_ns.is_power_of_two());
    assert!(
        series.intervals.len() <= MAX_INTERVALS,
        "{}",
        series.intervals.len()
    );
    let total: u64 = series.intervals.iter().map(|i| i.requests).sum();
    assert_eq!(total, report.host.all.count, "every request counted once");
    let warning = series
        .coarsened_warning()
        .expect("a coarsened series says so");
    assert!(warning.contains("not the 1 ns asked for"), "{warning}");
    assert!(warning.contains(&MAX_INTERVALS.to_string()), "{warning}");
}
