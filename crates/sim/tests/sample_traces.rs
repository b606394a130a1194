//! The sample traces built into flashlab (`trace::samples`) are the repository's `traces/`
//! files byte for byte, with their licence, and those are the files as MQSim ships them (their
//! SHA-256: never edited); every trace there is built in; `sample:NAME` reads the same requests
//! as the file; and the fmmu study replays them when given no traces.

use std::path::{Path, PathBuf};

use flashlab_sim::experiment::fmmu_study::{FmmuStudy, DEFAULT_TRACES};
use flashlab_sim::trace::samples::{self, LICENSE, LICENSE_FILE_NAME, SAMPLES};
use flashlab_sim::trace::{ReadOptions, TraceInput, TraceReader, TraceRecord};
use sha2::{Digest, Sha256};

/// SHA-256 of the files as they came with MQSim (CMU-SAFARI/MQSim, `traces/`): the
/// repository's copies must stay exactly these.
const ORIGINALS: [(&str, &str); 3] = [
    (
        "mqsim_tpcc-small.trace",
        "404dd97c3fd4bf605c23abb1f57823226d31da9ed5caeb37b01236496a81fa56",
    ),
    (
        "mqsim_wsrch-small.trace",
        "84ebefd565aeb5db3bb807ef3c609e952aeaa59c4e78e132181059d0c5ea74d1",
    ),
    (
        "LICENSE_mqsim.txt",
        "ac97156c5c625bdf5d3fb5667c647a0e425decd221617fbfed1c193b4c91e906",
    ),
];

/// The repository's `traces/` folder (in the clone, never beside it).
fn traces_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces")
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn records(path: &str) -> Vec<TraceRecord> {
    let mut reader = TraceReader::open(Path::new(path), &ReadOptions::default())
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = Vec::new();
    while let Some(r) = reader.next_record().unwrap() {
        out.push(r);
    }
    out
}

#[test]
fn repository_traces_are_the_originals() {
    for (name, sha256) in ORIGINALS {
        let digest = format!("{:x}", Sha256::digest(read(&traces_dir().join(name))));
        assert_eq!(
            digest, sha256,
            "traces/{name} is not the file MQSim ships: the sample traces must never be edited"
        );
    }
}

#[test]
fn built_in_samples_are_the_repository_files_byte_for_byte() {
    for s in &SAMPLES {
        let file = read(&traces_dir().join(s.file_name));
        assert!(
            file == s.bytes,
            "the built-in {} differs from traces/{} ({} against {} bytes): the files must never be edited",
            s.reference(),
            s.file_name,
            s.bytes.len(),
            file.len()
        );
    }
    assert_eq!(
        read(&traces_dir().join(LICENSE_FILE_NAME)),
        LICENSE.as_bytes(),
        "the built-in licence differs from traces/{LICENSE_FILE_NAME}"
    );
}

/// Every trace the repository carries is built in (a new one needs its entry in SAMPLES), and
/// the folder documents them.
#[test]
fn every_repository_trace_is_built_in_and_documented() {
    let mut on_disk: Vec<String> = std::fs::read_dir(traces_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".trace"))
        .collect();
    on_disk.sort();
    let built_in: Vec<&str> = SAMPLES.iter().map(|s| s.file_name).collect();
    assert_eq!(on_disk, built_in);
    let readme = String::from_utf8(read(&traces_dir().join("README.md"))).unwrap();
    for s in &SAMPLES {
        assert!(
            readme.contains(s.file_name) && readme.contains(&s.reference()),
            "traces/README.md does not describe {} ({})",
            s.file_name,
            s.reference()
        );
    }
    assert!(readme.contains(LICENSE_FILE_NAME) && readme.contains("Never edit"));
}

/// `sample:NAME` reads exactly the requests of the file, in the format detected from it.
#[test]
fn a_sample_reads_as_its_file() {
    for s in &SAMPLES {
        let file = traces_dir().join(s.file_name);
        let from_file = records(file.to_str().unwrap());
        let from_sample = records(&s.reference());
        assert_eq!(from_sample.len() as u64, s.requests, "{}", s.name);
        assert!(from_sample == from_file, "{} reads otherwise", s.name);
        let input = TraceInput::new(Path::new(&s.reference())).unwrap();
        assert!(input.is_sample() && !input.is_spooled());
        assert_eq!(input.label(), s.reference());
    }
    let reader = TraceReader::open(Path::new("sample:tpcc"), &ReadOptions::default()).unwrap();
    assert_eq!(reader.format().to_string(), "disksim-ns");
    let e = TraceInput::new(Path::new("sample:msr"))
        .unwrap_err()
        .to_string();
    assert!(e.contains(&samples::sample_references()), "{e}");
}

/// The fmmu study's traces part needs no files: with no traces given it replays the built-in
/// samples, and it refuses missing ones before running anything.
#[test]
fn the_fmmu_study_defaults_to_the_samples_and_checks_its_traces_first() {
    for study in [FmmuStudy::quick(), FmmuStudy::full()] {
        assert_eq!(study.traces, DEFAULT_TRACES.map(String::from).to_vec());
        study.check_traces().unwrap();
    }
    let missing = FmmuStudy {
        traces: vec!["sample:tpcc".into(), "no/such.trace".into()],
        ..FmmuStudy::quick()
    };
    let e = missing.run(&mut |_, _, _| {}).unwrap_err();
    assert!(e.is_input_error(), "{e}");
    assert!(e.to_string().starts_with("no/such.trace: "), "{e}");
    let empty = FmmuStudy {
        traces: vec![String::new()],
        ..FmmuStudy::quick()
    };
    assert!(empty
        .check_traces()
        .unwrap_err()
        .to_string()
        .contains("empty trace name"));
    // Without the traces part, its traces are not looked at.
    let no_traces_part = FmmuStudy {
        parts: vec!["exec-time".into()],
        ..missing
    };
    no_traces_part.check_traces().unwrap();
}
