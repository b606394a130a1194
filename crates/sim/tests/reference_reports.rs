//! Reference runs: the same seed gives byte-identical JSON reports, for every registered FTL,
//! across engine and speed work. Each run's report is serialised (minus the fields listed in
//! [`UNSTABLE_FIELDS`]), hashed with SHA-256, and compared with [`EXPECTED`].
//!
//! When a change alters a report on purpose, run
//! `FLASHLAB_UPDATE_REFERENCE=1 cargo test -p flashlab-sim --test reference_reports`, paste
//! the table it prints over [`EXPECTED`], and state in the commit message which runs changed
//! and why (ARCHITECTURE.md, Testing). A speed-up must change no hash.
//!
//! Every run uses a tiny device (four dies on two channels, 32 blocks of 16 4-KiB pages), is preconditioned
//! full so that garbage collection runs in the measured window, mixes reads and writes, and
//! is timed unless its name says `functional`; real-time FTLs get a periodic workload (on EDF
//! die queues for rtgc). Each run is done twice in this process and must give the same bytes
//! both times (no global state).

use flashlab_sim::ftl::registry;
use flashlab_sim::workload::parse_spec;
use flashlab_sim::{run_experiment, ExperimentConfig};
use sha2::{Digest, Sha256};

/// The tiny device all reference runs share, preconditioned full.
const TINY: &[&str] = &[
    "geometry.channels=2",
    "geometry.chips_per_channel=2",
    "geometry.dies_per_chip=1",
    "geometry.planes_per_die=1",
    "geometry.blocks_per_plane=32",
    "geometry.pages_per_block=16",
    "geometry.page_bytes=4096",
    "run.precondition=1.0",
    "run.precondition_max_passes=1",
    "run.seed=7",
];

/// Uniform random 4 KiB reads and writes, half and half, closed loop at queue depth 32 (the
/// generator's defaults but the read fraction and count).
const MIXED: &[&str] = &["workload.read_fraction=0.5", "workload.count=2000"];

/// NFTL needs a chip that programs pages in any order, with room for its headers.
const NFTL_CHIP: &[&str] = &[
    "nand.program_order=\"any\"",
    "nand.partial_programs_per_page=3",
];

/// The FTLs with an over-provisioning setting, whose default is too little for the tiny
/// device (GC per die needs a few spare blocks on every die).
const PAGE_MAPPED: [&str; 7] = [
    "pagemap",
    "mt-ftl",
    "st-ftl",
    "dftl",
    "dftl-entry",
    "cdftl",
    "fmmu",
];

/// One reference run: its FTL, its settings after [`TINY`], and a workload spec replacing
/// the generator's (`None`: the random generator the settings describe).
struct Scenario {
    name: &'static str,
    ftl: &'static str,
    sets: &'static [&'static str],
    workload: Option<&'static str>,
}

/// A periodic task set with reads and writes, for the real-time FTLs.
const PERIODIC: &str = "periodic:tasks=w1p@2ms+r1p@1ms,count=600";

const fn mixed(name: &'static str, ftl: &'static str) -> Scenario {
    Scenario {
        name,
        ftl,
        sets: MIXED,
        workload: None,
    }
}

const SCENARIOS: &[Scenario] = &[
    mixed("pagemap/mixed", "pagemap"),
    Scenario {
        name: "pagemap/mixed-functional",
        ftl: "pagemap",
        sets: &[
            "workload.read_fraction=0.5",
            "workload.count=2000",
            "run.functional_only=true",
        ],
        workload: None,
    },
    mixed("mt-ftl/mixed", "mt-ftl"),
    Scenario {
        name: "mt-ftl/periodic",
        ftl: "mt-ftl",
        sets: &[],
        workload: Some(PERIODIC),
    },
    mixed("st-ftl/mixed", "st-ftl"),
    mixed("bast/mixed", "bast"),
    mixed("fast/mixed", "fast"),
    mixed("sast/mixed", "sast"),
    mixed("kast/mixed", "kast"),
    Scenario {
        name: "nftl/mixed",
        ftl: "nftl",
        sets: &[
            "workload.read_fraction=0.5",
            "workload.count=2000",
            "nand.program_order=\"any\"",
            "nand.partial_programs_per_page=3",
        ],
        workload: None,
    },
    mixed("dftl/mixed", "dftl"),
    mixed("dftl-entry/mixed", "dftl-entry"),
    mixed("cdftl/mixed", "cdftl"),
    mixed("fmmu/mixed", "fmmu"),
    Scenario {
        name: "part-ftl/periodic",
        ftl: "part-ftl",
        sets: &[],
        workload: Some(PERIODIC),
    },
    Scenario {
        name: "wao-gc/periodic",
        ftl: "wao-gc",
        sets: &[],
        workload: Some(PERIODIC),
    },
    Scenario {
        name: "rtgc/periodic-edf",
        ftl: "rtgc",
        sets: &["timing.die_queue_policy=\"edf\""],
        workload: Some(PERIODIC),
    },
];

/// The SHA-256 of each reference run's report (hex), by scenario name.
const EXPECTED: &[(&str, &str)] = &[
    (
        "pagemap/mixed",
        "0a58edb9e1037cbb6153cb57d98742238eeee7cbb747b0b0abc6b033d92fce6d",
    ),
    (
        "pagemap/mixed-functional",
        "669b5030fc6abd2b6e4580d7fb534502aee031ed9b9fba9de791b7851f682f0d",
    ),
    (
        "mt-ftl/mixed",
        "d49285ad1137c6efa08b32cd04302f6dd5cc398335bff8eda300835b03fc2eec",
    ),
    (
        "mt-ftl/periodic",
        "16c5ac52e4a23744e2a325cfca1a9fb32637d7b43b71c3eee3236de4f9a4ca98",
    ),
    (
        "st-ftl/mixed",
        "9e751b5d37aeb8a1aca2549cba660cbb1a7921db205d8bfbb21bf9fcc1c613c7",
    ),
    (
        "bast/mixed",
        "f5838be7441fe382f384ed3c48f24b261f9b8189b2f8909a168212009ae1151f",
    ),
    (
        "fast/mixed",
        "32e4efe1ded2bdb103144ffee7e550ff4a537dfc1672fee0252dad4b56d9885c",
    ),
    (
        "sast/mixed",
        "cd4a324d48b239304ffe900bd9f202c85b21950327fe747e836e13d9d1af94fc",
    ),
    (
        "kast/mixed",
        "de0c02972cfa05f23717591e1c503271e205fbc0e9c97af3b22a7ef66d664df3",
    ),
    (
        "nftl/mixed",
        "f943b21bd72b3b188dcaa838338912afd6338b831dd10fe0ccb610e6770a27e5",
    ),
    (
        "dftl/mixed",
        "b47164ce0d59076ceaebeb43aa6c63dd9ef6601f3b04f9a3fa3307780e3037bb",
    ),
    (
        "dftl-entry/mixed",
        "a0a24100a86b241d0022d32c36b9507df400bfba3087f6e87352dceb8ad3ccdd",
    ),
    (
        "cdftl/mixed",
        "39125b821b837d7249eb9003701a4d5630a703187bcc33a3ee9e588b0be8310c",
    ),
    (
        "fmmu/mixed",
        "f351e00cecfabe6739b881b6e21be34b90f548c62542a22da0555e784bfc8df8",
    ),
    (
        "part-ftl/periodic",
        "c75eed31ac404cb9269cf87691970ab7657d9fee3fc34e21b61b9484a957f81e",
    ),
    (
        "wao-gc/periodic",
        "367600f76562f35a8e93c231fb2707ec19d76ac74495d03123c913ebd2a36ebb",
    ),
    (
        "rtgc/periodic-edf",
        "3c6c82f3d4871bc9fd1ad860b0378f5cdc87d1561c364e8f2a0766f8357c3558",
    ),
];

/// Report fields left out of the hash: the crate version (a release bump changes no
/// behaviour). The report holds no wall-clock figure; add any such field here.
const UNSTABLE_FIELDS: &[&str] = &["flashlab_version"];

fn config(s: &Scenario) -> ExperimentConfig {
    let name = format!("ftl.name={:?}", s.ftl);
    let mut sets = TINY.to_vec();
    sets.push(&name);
    if s.ftl == "nftl" {
        sets.extend_from_slice(NFTL_CHIP);
    }
    if PAGE_MAPPED.contains(&s.ftl) {
        sets.push("ftl.over_provisioning=0.3");
    }
    sets.extend_from_slice(s.sets);
    let mut cfg =
        ExperimentConfig::with_sets("default", &sets).unwrap_or_else(|e| panic!("{}: {e}", s.name));
    if let Some(spec) = s.workload {
        cfg.workload = parse_spec(spec).unwrap_or_else(|e| panic!("{}: {e}", s.name));
    }
    cfg
}

/// The report of a scenario as the bytes that are hashed.
fn report_bytes(s: &Scenario) -> Vec<u8> {
    let report =
        run_experiment(&config(s), &mut |_| {}).unwrap_or_else(|e| panic!("{}: {e}", s.name));
    let (reads, writes, erases) = (
        report.host.read.count,
        report.host.write.count,
        report.flash.erases.total,
    );
    assert!(
        reads > 0 && writes > 0 && erases > 0,
        "{}: a reference run reads, writes and erases (GC or merges) in its measured window: \
         {reads} reads, {writes} writes, {erases} erases",
        s.name
    );
    let mut json = report.to_json();
    let fields = json.as_object_mut().expect("a report is a JSON object");
    for field in UNSTABLE_FIELDS {
        fields.remove(*field);
    }
    serde_json::to_vec(&json).expect("report serializes")
}

/// SHA-256 of the report bytes, in hex: stable across platforms and releases.
fn digest(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

#[test]
fn every_registered_ftl_has_a_reference_run() {
    let missing: Vec<&str> = registry::entries()
        .iter()
        .map(|e| e.name)
        .filter(|name| !SCENARIOS.iter().any(|s| s.ftl == *name))
        .collect();
    assert!(
        missing.is_empty(),
        "no reference run for {missing:?}: add one to SCENARIOS"
    );
    for (name, _) in EXPECTED {
        let runs = SCENARIOS.iter().filter(|s| s.name == *name).count();
        assert_eq!(
            runs, 1,
            "{name}: an expected hash needs exactly one scenario of that name"
        );
    }
    for s in SCENARIOS {
        assert!(
            EXPECTED.iter().any(|(name, _)| *name == s.name),
            "{}: no expected hash (FLASHLAB_UPDATE_REFERENCE=1 prints the table)",
            s.name
        );
    }
}

#[test]
fn reference_reports_are_deterministic_and_unchanged() {
    let mut table = String::new();
    let mut changed = Vec::new();
    for s in SCENARIOS {
        let bytes = report_bytes(s);
        assert!(
            bytes == report_bytes(s),
            "{}: two runs with the same seed in one process gave different reports",
            s.name
        );
        let hash = digest(&bytes);
        table.push_str(&format!("    ({:?}, {:?}),\n", s.name, hash));
        let expected = EXPECTED.iter().find(|(name, _)| *name == s.name);
        if expected.map(|(_, h)| *h) != Some(hash.as_str()) {
            changed.push(format!(
                "{}: expected {:?}, got {hash}",
                s.name,
                expected.map(|e| e.1)
            ));
        }
    }
    if std::env::var_os("FLASHLAB_UPDATE_REFERENCE").is_some() {
        println!("const EXPECTED: &[(&str, &str)] = &[\n{table}];");
        return;
    }
    assert!(
        changed.is_empty(),
        "reference reports changed:\n  {}\nIf intended, rerun with FLASHLAB_UPDATE_REFERENCE=1 \
         -- --nocapture, paste the printed table over EXPECTED in {} and state in the commit \
         message which runs changed and why.",
        changed.join("\n  "),
        file!()
    );
}
