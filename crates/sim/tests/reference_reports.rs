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

/// Random 4 KiB-aligned reads and writes, half and half (the default random generator).
const MIXED: &[&str] = &["workload.read_fraction=0.5", "workload.count=600"];

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
const PERIODIC: &str = "periodic:tasks=w1p@2ms+r1p@1ms,count=300";

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
            "workload.count=600",
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
            "workload.count=600",
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
    ("pagemap/mixed", "9249fd60cfdc83bd"),
    ("pagemap/mixed-functional", "9f5cf8a11e9a3949"),
    ("mt-ftl/mixed", "3726f852ff65fc9a"),
    ("mt-ftl/periodic", "2d9b8b4580868c17"),
    ("st-ftl/mixed", "b97fa3d9c3e9a3ff"),
    ("bast/mixed", "d443bfc6d8bb487a"),
    ("fast/mixed", "db7db34284d331f1"),
    ("sast/mixed", "ab43b038055fb21b"),
    ("kast/mixed", "5454105cf49001e5"),
    ("nftl/mixed", "e0ee0f032a45cdeb"),
    ("dftl/mixed", "c1a7339adf10f408"),
    ("cdftl/mixed", "b897a8ac4a611e14"),
    ("fmmu/mixed", "9713e86c8115a0c9"),
    ("part-ftl/periodic", "16421aec11e0da41"),
    ("wao-gc/periodic", "ba64076f3958a6ba"),
    ("rtgc/periodic-edf", "38b395aa5f32fdea"),
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
