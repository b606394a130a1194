//! Reference runs: the same seed gives byte-identical JSON reports, for every registered FTL,
//! across engine and speed work. Each run's report is serialised (minus the fields listed in
//! [`UNSTABLE_FIELDS`]), hashed with 64-bit FNV-1a, and compared with [`EXPECTED`].
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
const PAGE_MAPPED: [&str; 6] = ["pagemap", "mt-ftl", "st-ftl", "dftl", "cdftl", "fmmu"];

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

/// The FNV-1a hash of each reference run's report, by scenario name.
const EXPECTED: &[(&str, &str)] = &[
    ("pagemap/mixed", "4cc6b82529eff333"),
    ("pagemap/mixed-functional", "5e00c8e8baf8ad93"),
    ("mt-ftl/mixed", "fdb5d30c09e8bd03"),
    ("mt-ftl/periodic", "c7378a7371737f65"),
    ("st-ftl/mixed", "eff0014fae69d626"),
    ("bast/mixed", "188435841a4ff643"),
    ("fast/mixed", "b79d056c58daf00c"),
    ("sast/mixed", "b142dac159d65d61"),
    ("kast/mixed", "f3454152388793c1"),
    ("nftl/mixed", "fe77490c509c232f"),
    ("dftl/mixed", "671821e4ae005ea8"),
    ("cdftl/mixed", "a76adc93ef8992a8"),
    ("fmmu/mixed", "532c71edd67c559b"),
    ("part-ftl/periodic", "6d42ea6f0ba05e4e"),
    ("wao-gc/periodic", "9a66e73ab53d7369"),
    ("rtgc/periodic-edf", "0e9e71c4c525d21a"),
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

/// 64-bit FNV-1a: stable across platforms and releases, needs no dependency.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
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
        let hash = format!("{:016x}", fnv1a(&bytes));
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
