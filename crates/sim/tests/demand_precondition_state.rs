//! Preconditioning of the demand-paged FTLs (dftl, cdftl, fmmu) leaves exactly the state it
//! left before issue 28's speed work, whichever path its writes take.
//!
//! For each FTL, on a small device with GC, map-cache evictions, translation write-backs and
//! translation-block GC during preconditioning: the state after preconditioning (the FTL's
//! whole functional state as `Ftl::write_state` writes it, see `ftl/demand/digest.rs` for
//! what it covers, plus the NAND state: every unit slot's OOB entry and valid bit, every
//! page's programmed flag, every block record) and the JSON report of a timed run of reads
//! and writes afterwards are hashed (FNV-1a, 64 bits) and
//! - compared between the bulk path and the full host path (byte for byte: the texts and
//!   reports themselves), and
//! - compared with the hashes pinned below, which the code before the speed work produced
//!   (`FLASHLAB_UPDATE_REFERENCE=1 cargo test -p flashlab-sim --test
//!   demand_precondition_state -- --nocapture` prints them; change them only with a reason
//!   in the commit).

use flashlab_sim::engine::PreconditionPath;
use flashlab_sim::stats::build_report;
use flashlab_sim::{workload_source, ExperimentConfig, Simulation};

/// 2 channels x 2 chips x 2 planes, 24 blocks of 32 pages of 16 KiB (4 units per page), 20%
/// over-provisioning: GC and translation GC run while preconditioning; small map caches.
const SMALL: &[&str] = &[
    "geometry.channels=2",
    "geometry.chips_per_channel=2",
    "geometry.dies_per_chip=1",
    "geometry.planes_per_die=2",
    "geometry.blocks_per_plane=24",
    "geometry.pages_per_block=32",
    "ftl.over_provisioning=0.2",
    "ftl.cmt_bytes=4096",
    "ftl.ctp_bytes=32768",
    "run.precondition=0.9",
    "run.precondition_max_passes=2",
    "run.seed=5",
    "workload.read_fraction=0.4",
    "workload.count=3000",
];

/// (FTL, hash of the state after preconditioning, hash of the report of the run after).
const PINNED: [(&str, u64, u64); 3] = [
    ("dftl", 0x028de96a4cb7321a, 0x2eac7d629566f8e0),
    ("cdftl", 0x517fb9a36305bc94, 0xf507cbcac39ccdfd),
    ("fmmu", 0xb052880cf3934cfa, 0xa0dd779f4350d59f),
];

/// FNV-1a, 64 bits: stable across toolchains (the pinned values must not move with std).
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 = (self.0 ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

impl std::fmt::Write for Fnv {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.bytes(s.as_bytes());
        Ok(())
    }
}

fn config(ftl: &str) -> ExperimentConfig {
    let name = format!("ftl.name={ftl:?}");
    let mut sets = SMALL.to_vec();
    sets.push(&name);
    ExperimentConfig::with_sets("fmmu-16ch", &sets).unwrap_or_else(|e| panic!("{e}"))
}

/// The FTL's and the NAND's state as text.
fn state(sim: &Simulation) -> String {
    let mut text = String::new();
    assert!(
        sim.ftl().write_state(&mut text),
        "{} writes its state",
        sim.ftl().name()
    );
    let nand = sim.nand();
    let upp = nand.units_per_page();
    text.push_str(&format!("\nnand blocks {:?}\n", nand.blocks()));
    for ppn in 0..nand.layout().pages() {
        text.push_str(&format!("{}:", u8::from(nand.is_programmed(ppn))));
        for s in 0..upp {
            let unit = ppn * upp + s;
            text.push_str(&format!("{:?}{} ", nand.oob(unit), nand.is_valid(unit)));
        }
    }
    text
}

struct Outcome {
    state: String,
    report: String,
    writes: u64,
}

fn run(ftl: &str, path: PreconditionPath) -> Outcome {
    let cfg = config(ftl);
    let mut sim = Simulation::new(&cfg).unwrap_or_else(|e| panic!("{ftl}: {e}"));
    let (summary, _) = sim
        .precondition_on_path(path, &mut |_| {})
        .unwrap_or_else(|e| panic!("{ftl}: {e}"));
    sim.check_invariants()
        .unwrap_or_else(|e| panic!("{ftl}: after preconditioning: {e}"));
    let state = state(&sim);
    let source = workload_source(&cfg, &sim).unwrap();
    let source = sim
        .run(source, &mut |_| {})
        .unwrap_or_else(|e| panic!("{ftl}: {e}"));
    sim.check_invariants()
        .unwrap_or_else(|e| panic!("{ftl}: after the run: {e}"));
    let report = build_report(&sim, source.describe()).to_json().to_string();
    Outcome {
        state,
        report,
        writes: summary.random_writes,
    }
}

fn hash(text: &str) -> u64 {
    let mut h = Fnv::new();
    h.bytes(text.as_bytes());
    h.0
}

#[test]
fn demand_paged_preconditioning_leaves_the_pinned_state_on_both_paths() {
    let update = std::env::var_os("FLASHLAB_UPDATE_REFERENCE").is_some();
    let mut failures = Vec::new();
    for (ftl, state_hash, report_hash) in PINNED {
        let bulk = run(ftl, PreconditionPath::Bulk);
        let full = run(ftl, PreconditionPath::Full);
        assert!(bulk.writes > 0, "{ftl}: random overwrites ran");
        assert!(
            bulk.state == full.state,
            "{ftl}: the bulk path leaves the full path's state"
        );
        assert_eq!(bulk.report, full.report, "{ftl}: reports after both paths");
        let got = (hash(&bulk.state), hash(&bulk.report));
        if update {
            println!("    (\"{ftl}\", {:#018x}, {:#018x}),", got.0, got.1);
        } else if got != (state_hash, report_hash) {
            failures.push(format!(
                "{ftl}: state {:#018x} report {:#018x}, pinned {state_hash:#018x} {report_hash:#018x}",
                got.0, got.1
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The digest sees what it claims to: a changed dirty bit, cache entry or map entry changes it.
#[test]
fn the_state_text_covers_the_map_cache() {
    let cfg = config("fmmu");
    let mut a = Simulation::new(&cfg).unwrap();
    a.precondition().unwrap();
    let before = state(&a);
    let b = Simulation::new(&cfg).unwrap();
    assert_ne!(
        before,
        state(&b),
        "a preconditioned device differs from a new one"
    );
    // One more host write changes the map, the cache and the NAND.
    let source = workload_source(
        &config_with("fmmu", &["workload.count=1", "workload.read_fraction=0"]),
        &a,
    )
    .unwrap();
    a.run(source, &mut |_| {}).unwrap();
    assert_ne!(before, state(&a), "a write changes the state text");
}

fn config_with(ftl: &str, sets: &[&str]) -> ExperimentConfig {
    let mut all: Vec<String> = SMALL.iter().map(|s| s.to_string()).collect();
    all.push(format!("ftl.name={ftl:?}"));
    all.extend(sets.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    ExperimentConfig::with_sets("fmmu-16ch", &refs).unwrap()
}
