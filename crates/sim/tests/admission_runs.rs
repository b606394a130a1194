//! `run.admission` (issue 29): every periodic run on a real-time FTL runs the scheme's test
//! first. `enforce` refuses what `flashlab admit` refuses, with the same message; `report`
//! puts the verdict beside the measured misses; `off` and other runs have no `admission`.
//! And the paper's guarantee, tried: sets the tests admit miss no deadline on any seed, on a
//! preconditioned device whose GC runs.

use flashlab_sim::config::ConfigSource;
use flashlab_sim::realtime::analysis::{admit_config, analyse};
use flashlab_sim::workload::parse_spec;
use flashlab_sim::{run_experiment, ExperimentConfig, Report, SimError};

const TABLE_III: &str = "4xw12p@60ms+4xr3p@15ms";

fn config(ftl: &str, tasks: &str, duration: &str, sets: &[&str]) -> ExperimentConfig {
    let mut sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    sets.push(format!("ftl.name=\"{ftl}\""));
    sets.push("geometry.blocks_per_plane=64".into());
    sets.push("timing.die_queue_policy=\"edf\"".into());
    let mut c = ExperimentConfig::load(&ConfigSource {
        preset: Some("cosmos-table-iv"),
        file: None,
        sets: &sets,
    })
    .unwrap_or_else(|e| panic!("{e}"));
    c.workload = parse_spec(&format!("periodic:tasks={tasks},duration={duration}")).unwrap();
    c
}

fn run(c: &ExperimentConfig) -> Result<Report, SimError> {
    run_experiment(c, &mut |_| {})
}

/// What `flashlab admit --device cosmos-table-iv --ftl FTL --tasks TASKS` says when refused.
fn admit_refusal(ftl: &str, tasks: &str) -> String {
    let source = ConfigSource {
        preset: Some("cosmos-table-iv"),
        ..ConfigSource::default()
    };
    let a = analyse(&admit_config(&source, ftl, tasks).unwrap()).unwrap();
    assert!(!a.admitted, "{a}");
    a.refusal.expect("a refusal has its message")
}

#[test]
fn enforce_refuses_what_admit_refuses_with_the_same_message() {
    for ftl in ["part-ftl", "wao-gc", "rtgc"] {
        let c = config(ftl, TABLE_III, "200ms", &["run.admission=\"enforce\""]);
        let e = run(&c).expect_err("Table III is refused by every scheme's test");
        assert!(e.is_input_error(), "exit 2, not an internal error: {e}");
        let text = e.to_string();
        let refusal = admit_refusal(ftl, TABLE_III);
        assert!(text.contains(&refusal), "{ftl}: {text} lacks {refusal}");
        assert!(text.starts_with("admission refused by "), "{text}");
    }
    let e = run(&config(
        "part-ftl",
        TABLE_III,
        "200ms",
        &["run.admission=\"enforce\""],
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("read set utilisation 1.07 > 1 (eq. 6)"), "{e}");
}

#[test]
fn report_puts_the_verdict_beside_the_measured_misses() {
    let r = run(&config("part-ftl", TABLE_III, "500ms", &[])).unwrap();
    let a = r
        .admission
        .as_ref()
        .expect("a periodic run on part-ftl is analysed");
    assert_eq!(a.admitted, Some(false));
    let analysis = a.analysis.as_ref().unwrap();
    assert_eq!(analysis.tests.len(), 2);
    assert!((analysis.tests[0].total - 1.066).abs() < 0.001);
    let d = r.deadlines.as_ref().unwrap();
    assert_eq!((a.jobs, a.deadline_misses), (d.requests, d.misses));
    let expected = if d.misses == 0 {
        "refused, no miss"
    } else {
        "refused, missed"
    };
    assert_eq!(a.outcome, expected);
    let json = r.to_json();
    assert_eq!(json["admission"]["mode"], "report");
    assert_eq!(json["admission"]["analysis"]["scheme"], "PaRT-FTL");
    assert_eq!(
        json["admission"]["analysis"]["bounds"][0]["equation"],
        "eq. 8"
    );
}

#[test]
fn off_and_runs_the_tests_do_not_cover_have_no_admission() {
    let off = run(&config(
        "part-ftl",
        TABLE_III,
        "100ms",
        &["run.admission=\"off\""],
    ))
    .unwrap();
    assert!(off.admission.is_none());
    assert!(off.to_json()["admission"].is_null());
    let pagemap = run(&config("pagemap", TABLE_III, "100ms", &[])).unwrap();
    assert!(pagemap.admission.is_none());
    let mut random = config(
        "part-ftl",
        TABLE_III,
        "100ms",
        &["run.admission=\"enforce\""],
    );
    random.workload = parse_spec("randread:count=100").unwrap();
    assert!(run(&random).unwrap().admission.is_none());
}

#[test]
fn a_set_the_tests_cannot_analyse_is_reported_or_refused() {
    let mut c = config("part-ftl", "4xr3p@20ms", "100ms", &[]);
    c.workload.tasks[0].deadline_ns = 10_000_000;
    let r = run(&c).unwrap();
    let a = r.admission.unwrap();
    assert_eq!((a.admitted, a.outcome), (None, "not analysable"));
    assert!(a
        .not_analysable
        .unwrap()
        .contains("workload.tasks[0].deadline_ns"));
    c.run.admission = flashlab_sim::config::AdmissionMode::Enforce;
    let e = run(&c).unwrap_err().to_string();
    assert!(
        e.starts_with("admission cannot analyse this task set"),
        "{e}"
    );
}

/// Sets each scheme's test admits near its boundary, on Table IV's times: eq. 6 0.80 and
/// eq. 7 0.75 for PaRT-FTL; WAO-GC's worst read response 0.95 of its deadline (3 x 1.23 ms +
/// 4 partial steps of 6.2 ms against 30 ms); RTGC's utilisation 0.89.
const ADMITTED: [(&str, &str); 3] = [
    ("part-ftl", "4xw12p@100ms+4xr3p@20ms"),
    ("wao-gc", "4xw12p@60ms+4xr3p@30ms"),
    ("rtgc", "4xw12p@60ms+4xr3p@30ms"),
];

#[test]
fn admitted_sets_miss_no_deadline_on_any_seed() {
    for (ftl, tasks) in ADMITTED {
        for seed in 1..=3 {
            let seed_set = format!("run.seed={seed}");
            let c = config(ftl, tasks, "2s", &["run.admission=\"enforce\"", &seed_set]);
            let r = run(&c).unwrap_or_else(|e| panic!("{ftl} {tasks}: {e}"));
            let a = r.admission.as_ref().unwrap();
            assert_eq!(a.admitted, Some(true), "{ftl}");
            assert!(r.flash.erases.gc > 0, "{ftl}: GC ran");
            assert!(a.jobs > 100, "{ftl}: {} jobs", a.jobs);
            assert_eq!(a.deadline_misses, 0, "{ftl} seed {seed}: {}", a.outcome);
            assert_eq!(a.outcome, "admitted, no miss");
        }
    }
}
