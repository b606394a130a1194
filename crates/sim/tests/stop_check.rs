//! A caller's stop check (how the Python bindings honour Ctrl-C) ends the work promptly with
//! `SimError::Interrupted`: in the sequential fill and inside a random-overwrite window of
//! preconditioning, in the measured run, in a trace's survey and in trace reading, also while
//! every line is skipped. A check that never asks to stop changes nothing.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use flashlab_sim::engine::PreconditionProgress;
use flashlab_sim::trace::{FormatChoice, TraceFormat, TraceReader, TraceSource};
use flashlab_sim::{
    run_experiment, run_experiment_with_stop_check, workload_source, ExperimentConfig, SimError,
    Simulation, StopCheck,
};

/// A small device, preconditioned to `precondition`, with a 100,000-request measured run.
fn config_preconditioned(precondition: &str) -> ExperimentConfig {
    let precondition = format!("run.precondition={precondition}");
    ExperimentConfig::with_sets(
        "default",
        &[
            "geometry.blocks_per_plane=16",
            "ftl.over_provisioning=0.25",
            "workload.count=100000",
            precondition.as_str(),
        ],
    )
    .unwrap()
}

fn config() -> ExperimentConfig {
    config_preconditioned("0.5")
}

/// A stop check that asks to stop once `flag` is raised.
fn stop_when(flag: &Arc<AtomicBool>) -> StopCheck {
    let flag = Arc::clone(flag);
    StopCheck::new(move || flag.load(Ordering::Relaxed))
}

fn assert_interrupted<T: std::fmt::Debug>(result: Result<T, SimError>) {
    let err = result.expect_err("the work stops when asked");
    assert!(matches!(err, SimError::Interrupted), "{err:?}");
    assert!(!err.is_input_error(), "an interrupt is not bad input");
    assert_eq!(err.to_string(), "interrupted");
}

/// Preconditions, raising the stop flag `writes_later` writes after the first progress report
/// `arm_at` accepts (so between progress reports); returns the result and how many
/// preconditioning writes completed after the flag was raised.
fn precondition_stopped(
    arm_at: impl Fn(&PreconditionProgress) -> bool,
    writes_later: u64,
) -> (Result<(), SimError>, u64) {
    let flag = Arc::new(AtomicBool::new(false));
    let mut sim = Simulation::new(&config()).unwrap();
    sim.set_stop_check(Some(stop_when(&flag)));
    // Completions counted from the arming report (u64::MAX: not armed yet).
    let since_armed = Arc::new(AtomicU64::new(u64::MAX));
    let (counter, raise) = (Arc::clone(&since_armed), Arc::clone(&flag));
    sim.set_observer(Box::new(move |_| {
        if counter.load(Ordering::Relaxed) != u64::MAX
            && counter.fetch_add(1, Ordering::Relaxed) + 1 == writes_later
        {
            raise.store(true, Ordering::Relaxed);
        }
    }));
    let result = sim.precondition_with_progress(&mut |p| {
        if since_armed.load(Ordering::Relaxed) == u64::MAX && arm_at(&p) {
            since_armed.store(0, Ordering::Relaxed);
        }
    });
    assert!(
        flag.load(Ordering::Relaxed),
        "the stop flag was never raised"
    );
    let after = since_armed.load(Ordering::Relaxed) - writes_later;
    (result.map(|_| ()), after)
}

#[test]
fn stops_in_the_sequential_fill_within_a_few_megabytes() {
    // The fill writes 1 MiB requests (hundreds here), each a few hundred steps; the check is
    // asked every 1024 steps.
    let (result, writes_after) =
        precondition_stopped(|p| matches!(p, PreconditionProgress::Fill { .. }), 2);
    assert_interrupted(result);
    assert!(
        writes_after <= 4,
        "{writes_after} MiB written after the stop request"
    );
}

#[test]
fn stops_inside_a_random_overwrite_window() {
    // A window is a quarter of the filled units (tens of thousands of single-unit writes
    // here, each a few steps): the stop comes long before the window ends.
    let (result, writes_after) =
        precondition_stopped(|p| matches!(p, PreconditionProgress::Random { .. }), 100);
    assert_interrupted(result);
    assert!(
        writes_after < 1024,
        "{writes_after} random overwrites after the stop request"
    );
}

#[test]
fn stops_in_the_measured_run_within_a_few_thousand_steps() {
    let cfg = config_preconditioned("0");
    let flag = Arc::new(AtomicBool::new(false));
    let mut sim = Simulation::new(&cfg).unwrap();
    sim.set_stop_check(Some(stop_when(&flag)));
    let source = workload_source(&cfg, &sim).unwrap();
    let mut completed_at_request = None;
    let result = sim.run(source, &mut |p| {
        if completed_at_request.is_none() {
            completed_at_request = Some(p.completed);
            flag.store(true, Ordering::Relaxed);
        }
    });
    assert_interrupted(result.map(|_| ()));
    let asked = completed_at_request.expect("a progress report before the end");
    let completed = sim.host_stats().completed();
    // A progress point every 1024 steps: far fewer requests than that complete in between.
    assert!(
        completed - asked < 1024,
        "{completed} completed, stop asked at {asked}"
    );
    assert!(completed < 100_000);
}

#[test]
fn run_experiment_with_stop_check_stops_and_otherwise_changes_nothing() {
    let cfg = config();
    let stopped = run_experiment_with_stop_check(&cfg, &mut |_| {}, Some(StopCheck::new(|| true)));
    assert_interrupted(stopped);

    let calls = Arc::new(AtomicU64::new(0));
    let counted = Arc::clone(&calls);
    let never = StopCheck::new(move || {
        counted.fetch_add(1, Ordering::Relaxed);
        false
    });
    let checked = run_experiment_with_stop_check(&cfg, &mut |_| {}, Some(never)).unwrap();
    let plain = run_experiment(&cfg, &mut |_| {}).unwrap();
    assert_eq!(checked.to_json(), plain.to_json());
    assert!(
        calls.load(Ordering::Relaxed) > 100,
        "the check was asked only {} times in a whole run",
        calls.load(Ordering::Relaxed)
    );
}

fn tpcc() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../traces/mqsim_tpcc-small.trace")
        .display()
        .to_string()
}

#[test]
fn stops_in_the_survey_of_a_trace() {
    let path = format!("trace.path={:?}", tpcc());
    let cfg = ExperimentConfig::with_sets("default", &[path.as_str()]).unwrap();
    let ask_stop = StopCheck::new(|| true);
    let surveyed = TraceSource::with_stop_check(&cfg.trace, 1 << 34, 512, Some(ask_stop));
    assert_interrupted(surveyed.map(|_| ()));
    assert!(TraceSource::new(&cfg.trace, 1 << 34, 512).is_ok());
}

fn disksim_ns() -> TraceFormat {
    match FormatChoice::parse("disksim-ns").unwrap() {
        FormatChoice::Exact(f) => f,
        other => panic!("not exact: {other:?}"),
    }
}

/// A reader over `lines` copies of `line` whose check asks to stop at its `stop_at`-th call.
fn reader_stopping_at(line: &str, lines: usize, skip_bad_lines: bool, stop_at: u64) -> TraceReader {
    let text = line.repeat(lines).into_bytes();
    let mut reader = TraceReader::from_bytes("t", text, disksim_ns(), skip_bad_lines);
    let calls = AtomicU64::new(0);
    reader.set_stop_check(Some(StopCheck::new(move || {
        calls.fetch_add(1, Ordering::Relaxed) + 1 >= stop_at
    })));
    reader
}

#[test]
fn trace_reading_stops_every_few_thousand_lines() {
    let mut reader = reader_stopping_at("1000 0 64 8 1\n", 100_000, false, 3);
    let mut records = 0;
    let result = loop {
        match reader.next_record() {
            Ok(Some(_)) => records += 1,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    assert_interrupted(result);
    // Asked at the first line, then every 1024 lines: the third call comes at line 2049.
    assert_eq!(records, 2048);
}

#[test]
fn trace_reading_stops_while_skipping_bad_lines() {
    let mut reader = reader_stopping_at("not a trace line\n", 100_000, true, 2);
    assert_interrupted(reader.next_record());
    assert_eq!(reader.bad_lines(), 1024);
}
