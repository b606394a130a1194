//! The sample traces built into flashlab, from the command line, run in an empty directory
//! with nothing beside it (as after `pip install .`, far from any checkout): `bench`'s trace
//! section and the fmmu study find them with no options, `--trace sample:NAME` replays one,
//! `trace samples` lists them with their licence and extracts them byte for byte; a
//! `--trace-dir` without traces is refused, saying so.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{assert_bad_input, path_str, scratch, Outcome, BIN};
use serde_json::Value;

/// The repository's `traces/` folder.
fn repository_traces() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces")
}

/// An empty directory inside an empty directory: nothing beside it, nothing in it.
fn lone_dir(test: &str) -> PathBuf {
    let dir = scratch(test).join("lone");
    std::fs::create_dir(&dir).unwrap();
    dir
}

/// Runs the binary in `dir` with `args` (stdin closed).
fn flashlab_in(dir: &Path, args: &[&str]) -> Outcome {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("the flashlab binary runs");
    Outcome {
        args: args.iter().map(|a| a.to_string()).collect(),
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A small reference device: 4 GiB with 25% over-provisioning, preconditioned to 20%.
const SMALL: &[&str] = &[
    "--precondition",
    "0.2",
    "--set",
    "geometry.blocks_per_plane=16",
    "--set",
    "ftl.over_provisioning=0.25",
];

/// Without --trace-dir, the trace section replays the built-in samples: it needs no file.
#[test]
fn bench_trace_section_finds_the_samples_anywhere() {
    let dir = lone_dir("bench-samples");
    let args = [
        &[
            "bench",
            "--sections",
            "trace",
            "--mode",
            "timed",
            "--json",
            "-",
        ],
        SMALL,
    ]
    .concat();
    let r = flashlab_in(&dir, &args);
    r.assert_success();
    let lines = r.json();
    let names: Vec<(&str, &str, u64)> = lines
        .as_array()
        .expect("an array of lines")
        .iter()
        .map(|m| {
            (
                m["section"].as_str().unwrap(),
                m["workload"].as_str().unwrap(),
                m["requests"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("trace", "mqsim_tpcc-small.trace", 6999),
            ("trace", "mqsim_wsrch-small.trace", 24783)
        ],
        "{}",
        r.context()
    );
    assert!(
        r.stderr
            .contains("trace replay (the sample traces built in)"),
        "{}",
        r.context()
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "bench wrote files"
    );
}

/// A --trace-dir that is missing or holds no trace is refused before anything runs, saying
/// so; --trace-dir without the trace section is refused too.
#[test]
fn bench_refuses_a_trace_dir_without_traces() {
    let dir = lone_dir("bench-no-traces");
    std::fs::write(dir.join("notes.txt"), "not a trace").unwrap();
    let empty = path_str(&dir);
    assert_bad_input(
        &flashlab_in(
            &dir,
            &["bench", "--sections", "trace", "--trace-dir", empty],
        ),
        &[
            &format!("--trace-dir {empty}"),
            "holds no *.trace file",
            "sample:tpcc, sample:wsrch",
        ],
    );
    assert_bad_input(
        &flashlab_in(
            &dir,
            &["bench", "--sections", "trace", "--trace-dir", "nowhere"],
        ),
        &["--trace-dir nowhere", "cannot list it", "No such file"],
    );
    // The whole default bench is refused at once too, not after minutes of other sections.
    assert_bad_input(
        &flashlab_in(&dir, &["bench", "--trace-dir", "nowhere"]),
        &["--trace-dir nowhere"],
    );
    assert_bad_input(
        &flashlab_in(
            &dir,
            &["bench", "--sections", "reference", "--trace-dir", empty],
        ),
        &["--trace-dir", "trace section is not selected"],
    );
    assert_bad_input(
        &flashlab_in(
            &dir,
            &[
                "bench",
                "--workload",
                "periodic:tasks=w1p@1ms",
                "--trace-dir",
                empty,
            ],
        ),
        &["--trace-dir", "does not apply to a periodic workload"],
    );
}

/// `--trace sample:NAME` replays a built-in sample from anywhere, every read checked; an
/// unknown name lists the samples.
#[test]
fn run_replays_a_sample_by_name() {
    let dir = lone_dir("run-sample");
    let args = [
        &[
            "run",
            "--quiet",
            "--trace",
            "sample:tpcc",
            "--verify",
            "--set",
            "trace.replay=\"closed\"",
            "--set",
            "trace.queue_depth=64",
            "--json",
            "-",
        ],
        SMALL,
    ]
    .concat();
    let r = flashlab_in(&dir, &args);
    r.assert_success();
    let report = r.json();
    assert_eq!(report["host"]["all"]["count"], 6999, "{}", r.context());
    assert_eq!(report["workload"]["format"], "disksim-ns");
    assert_eq!(report["workload"]["path"], "sample:tpcc");
    assert_bad_input(
        &flashlab_in(&dir, &["trace", "stats", "sample:msr"]),
        &[
            "sample:msr",
            "no such sample trace",
            "sample:tpcc, sample:wsrch",
        ],
    );
}

/// `trace samples` names both samples and prints their licence; `--extract` writes the
/// repository's files byte for byte, keeps identical files, and refuses (changing nothing)
/// when a different file is in the way.
#[test]
fn trace_samples_lists_and_extracts_them_with_their_licence() {
    let dir = lone_dir("samples-extract");
    let r = flashlab_in(&dir, &["trace", "samples"]);
    r.assert_success();
    let licence = std::fs::read_to_string(repository_traces().join("LICENSE_mqsim.txt")).unwrap();
    for expected in [
        "sample:tpcc",
        "sample:wsrch",
        "mqsim_tpcc-small.trace",
        "24783 requests",
        "LICENSE_mqsim.txt",
        licence.as_str(),
    ] {
        assert!(
            r.stdout.contains(expected),
            "no `{expected}`\n{}",
            r.context()
        );
    }

    let r = flashlab_in(&dir, &["trace", "samples", "--extract", "out"]);
    r.assert_success();
    let names = [
        "mqsim_tpcc-small.trace",
        "mqsim_wsrch-small.trace",
        "LICENSE_mqsim.txt",
    ];
    for name in names {
        let extracted = std::fs::read(dir.join("out").join(name)).unwrap();
        let original = std::fs::read(repository_traces().join(name)).unwrap();
        assert!(extracted == original, "{name} extracted otherwise");
    }
    flashlab_in(&dir, &["trace", "samples", "--extract", "out"]).assert_success();

    std::fs::remove_file(dir.join("out/mqsim_tpcc-small.trace")).unwrap();
    std::fs::write(dir.join("out/LICENSE_mqsim.txt"), "edited").unwrap();
    let r = flashlab_in(&dir, &["trace", "samples", "--extract", "out"]);
    assert_eq!(r.code, Some(74), "{}", r.context());
    assert!(
        r.stderr
            .contains("LICENSE_mqsim.txt: it exists and is not the built-in"),
        "{}",
        r.context()
    );
    assert!(
        !dir.join("out/mqsim_tpcc-small.trace").exists(),
        "a refused extraction wrote files"
    );
}

/// The fmmu study's traces part replays the built-in samples when no traces are given, and
/// refuses a missing trace before it makes its output directory.
#[test]
fn fmmu_study_finds_its_traces_with_none_given() {
    let dir = lone_dir("fmmu-samples");
    let r = flashlab_in(
        &dir,
        &[
            "experiment",
            "fmmu",
            "--quick",
            "--parts",
            "traces",
            "--schemes",
            "ideal",
            "--out",
            "study",
            "--no-progress",
            "--seeds",
            "1",
        ],
    );
    r.assert_success();
    let text = std::fs::read_to_string(dir.join("study/results.json")).unwrap();
    let json: Value = serde_json::from_str(&text).unwrap();
    let workloads: Vec<&str> = json["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["workload"].as_str().unwrap())
        .collect();
    assert_eq!(
        workloads,
        ["sample:wsrch", "sample:tpcc"],
        "{}",
        r.context()
    );
    assert_eq!(
        json["study"]["traces"],
        serde_json::json!(["sample:wsrch", "sample:tpcc"])
    );

    let r = flashlab_in(
        &dir,
        &[
            "experiment",
            "fmmu",
            "--parts",
            "traces",
            "--traces",
            "sample:tpcc,missing.trace",
            "--out",
            "refused",
        ],
    );
    assert_bad_input(&r, &["missing.trace", "sample:tpcc, sample:wsrch"]);
    assert!(!dir.join("refused").exists(), "made the output directory");
}
