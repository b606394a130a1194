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
        "491e21cb42f6a74584782f942372d15e76f9c7b98c6221fd1c51737481af584e",
    ),
    (
        "pagemap/mixed-functional",
        "96ac653949cd691482094b72134ff09f164f8ac4eb9a8806ccec3a410b2d2fd9",
    ),
    (
        "mt-ftl/mixed",
        "db73d028c6ab6b553fe61ea3a9048bb900f0e574686a89a4a8750e73beef1cc2",
    ),
    (
        "mt-ftl/periodic",
        "4757ae74584745af176a315445c061790da3f5b9dd1028f6bd63c0239a255006",
    ),
    (
        "st-ftl/mixed",
        "112abc2ab103ba6a608b2dceddcf2a817483ddd85092d1a528db8d39499ad15d",
    ),
    (
        "bast/mixed",
        "8aececa625aa9707e46511bbbd803fc165683aec9a700f785f45723635d514e9",
    ),
    (
        "fast/mixed",
        "5a7b8ffaa32128e494d7c84235007f5b50b358180426e25c4b26af07173dd797",
    ),
    (
        "sast/mixed",
        "c26042874724830fc7ba7f4b7c6068c57541f40f8230637500002011ba7f9840",
    ),
    (
        "kast/mixed",
        "898fa63d98b778f8ef0f5de92fb787529926f47f39173a6179dafa228f384a1f",
    ),
    (
        "nftl/mixed",
        "c9c7cf8f015366879eae6a6aa65ebaa2e51834fcafafb59e84c8e4a57b4345fe",
    ),
    (
        "dftl/mixed",
        "b877480bde17f8509895b3bdee1dd3e3145f1317809b934c2fdfa5bc94e47c5b",
    ),
    (
        "dftl-entry/mixed",
        "f3eb0e29d4a6b9ed244ce7843ae7d6c464f1f607e9172979b1f91e7147745bc9",
    ),
    (
        "cdftl/mixed",
        "dd55875d7de7ff6b82e76f8cf3774d0a4c6cfeddf4291206b741f62951c122cf",
    ),
    (
        "fmmu/mixed",
        "85c8286ef964db3fec65f417314554ddbbc0b40b49396dd9c9b805df73732021",
    ),
    (
        "part-ftl/periodic",
        "85f1f4831f3bbbdd7c268a6755a31604fd4db2dfaa6f3b8a8973b81bedd1d50f",
    ),
    (
        "wao-gc/periodic",
        "4e0b71fefde9f78d22a0a8003fed61f796920493499738c2d356d70e6755dd33",
    ),
    (
        "rtgc/periodic-edf",
        "63d72188951fdf37489b661affe502739ecebd1706679bc6f922aa50fb234bb5",
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
