//! Power-loss recovery of every FTL that supports it (`testing::recovery`): random writes,
//! reads, trims and flushes with verify on, on a small device filled first (GC active),
//! power cut at idle points and with commands in flight (mid-GC), the state rebuilt from the
//! flash alone, every sector judged against what was flushed, then more work on the recovered
//! device and another cut. And every FTL that does not support recovery says so clearly.

use flashlab_sim::config::ExperimentConfig;
use flashlab_sim::ftl::registry;
use flashlab_sim::nand::Nand;
use flashlab_sim::testing::recovery::{run_cuts, Cut};
use flashlab_sim::{SimError, Simulation};

mod small_device;

/// Requests per batch (and the most in flight at a cut).
const QUEUE_DEPTH: usize = 16;
/// Steps per generation (between cuts).
const STEPS: usize = 600;
/// The cut points of one run: idle, mid-batch with most requests still in flight, idle again
/// (the cut after work on a recovered device checks that sequence numbers continued), mid-
/// batch early.
const CUTS: &[Cut] = &[
    Cut::Idle,
    Cut::InFlight(3),
    Cut::Idle,
    Cut::InFlight(9),
    Cut::Idle,
];

const FILLED: &[&str] = &["run.precondition=1.0", "run.precondition_max_passes=1"];

/// Runs every cut of [`CUTS`] on `ftl`'s set-up (plus `extra`), timed and functional-only,
/// on two seeds; returns the FTL reports right after each recovery.
fn run(ftl: &str, extra: &[&str]) -> Vec<serde_json::Value> {
    let mut reports = Vec::new();
    for functional in [false, true] {
        let cfg = set_up(ftl, functional, extra);
        for seed in [1, 2] {
            let what = format!("{ftl} {extra:?} functional {functional} seed {seed}");
            let o = run_cuts(&cfg, seed, STEPS, QUEUE_DEPTH, CUTS)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(o.scans.len(), CUTS.len(), "{what}");
            assert!(o.gc_runs > 0, "{what}: no GC");
            assert!(o.sectors_judged > 0, "{what}");
            assert!(
                o.requests_at_cuts > 0,
                "{what}: no request in flight at the cuts"
            );
            // st-ftl's one task waits for each operation: between two, nothing is queued.
            if !functional && ftl != "st-ftl" {
                assert!(
                    o.in_flight_at_cuts > 0,
                    "{what}: no command in flight at the cuts"
                );
            }
            for scan in &o.scans {
                assert!(
                    scan.units_recovered > 0 && scan.oob_reads > 0,
                    "{what}: {scan:?}"
                );
                assert!(
                    scan.simulated_ns > 0 && scan.max_sequence > 0,
                    "{what}: {scan:?}"
                );
            }
            reports.extend(o.reports_after_recovery);
        }
    }
    reports
}

/// Without `ftl.gc_program_before_erase`, pagemap erases a victim while units it moved wait in
/// a GC page in DRAM: a cut then loses them, flushed data included. The harness sees it.
#[test]
fn pagemap_without_program_before_erase_loses_moved_units() {
    let cfg = set_up("pagemap", false, &["ftl.gc_program_before_erase=false"]);
    let e = run_cuts(&cfg, 1, STEPS, QUEUE_DEPTH, CUTS).unwrap_err();
    assert!(e.contains("data the model does not allow"), "{e}");
}

#[test]
fn pagemap_recovers_at_every_cut() {
    run("pagemap", &[]);
}

/// The scan reads each written page's spare area once (plus the first erased page of each
/// block not full), and its simulated time follows the model of `ftl/mapping/recovery.rs`.
#[test]
fn the_scan_counts_its_reads_and_times_them() {
    let cfg = set_up("pagemap", true, &[]);
    let mut sim = Simulation::new(&cfg).unwrap();
    sim.precondition().unwrap();
    let mut nand: Nand = sim.nand().clone();
    nand.clear_validity();
    let layout = *nand.layout();
    let ppb = layout.pages_per_block;
    let expected_reads: u64 = nand
        .blocks()
        .iter()
        .map(|b| u64::from((b.write_ptr + 1).min(ppb)))
        .sum();
    let (_, scan) = Simulation::recover(&cfg, nand).unwrap();
    assert_eq!(scan.oob_reads, expected_reads);
    assert_eq!(scan.page_reads, 0);
    assert_eq!(
        scan.blocks_free + scan.blocks_open + scan.blocks_closed,
        u64::from(layout.blocks())
    );
    // Two channels of one die each: every die reads its blocks' spare areas in turn.
    let t = &cfg.timing;
    let slowest = scan
        .per_die()
        .iter()
        .map(|d| {
            let bus = (d.oob_reads as f64 * f64::from(layout.oob_bytes) * 1e3 / t.bus_mb_per_s)
                .ceil() as u64;
            d.oob_reads * t.read_oob_latency_ns + bus
        })
        .max()
        .unwrap();
    assert_eq!(scan.simulated_ns, slowest);
    let json = serde_json::to_value(&scan).unwrap();
    assert_eq!(json["oob_reads"], expected_reads);
    assert!(json["simulated_ns"].as_u64().unwrap() > 0);
}

#[test]
fn wao_gc_recovers_at_every_cut() {
    let reports = run("wao-gc", &[]);
    // Some cut fell while a die was collecting: the collection was rebuilt.
    assert!(
        reports
            .iter()
            .any(|r| r["dies_collecting"].as_u64() > Some(0)),
        "no cut during a collection"
    );
}

#[test]
fn wao_gc_recovers_with_copyback() {
    run("wao-gc", &["ftl.gc_copyback=true"]);
}

#[test]
fn pagemap_recovers_multi_plane_small_units_and_fifo_or_cost_benefit_victims() {
    run(
        "pagemap",
        &[
            "ftl.multi_plane=true",
            "ftl.mapping_unit_bytes=2048",
            "ftl.gc_victim=\"fifo\"",
        ],
    );
    run("pagemap", &["ftl.gc_victim=\"cost-benefit\""]);
}

#[test]
fn mt_ftl_recovers_at_every_cut() {
    run("mt-ftl", &[]);
}

#[test]
fn st_ftl_recovers_at_every_cut() {
    run("st-ftl", &[]);
}

#[test]
fn nftl_recovers_at_every_cut() {
    run("nftl", &[]);
}

#[test]
fn rtgc_recovers_at_every_cut() {
    run("rtgc", &[]);
}

#[test]
fn dftl_recovers_at_every_cut() {
    run("dftl", &[]);
}

#[test]
fn dftl_entry_recovers_at_every_cut() {
    run("dftl-entry", &[]);
}

#[test]
fn cdftl_recovers_at_every_cut() {
    run("cdftl", &[]);
}

#[test]
fn fmmu_recovers_at_every_cut() {
    run("fmmu", &[]);
}

/// A demand-paged FTL's recovery trusts no old translation page (`ftl/demand/recover.rs`):
/// it erases their blocks and writes every translation page holding a mapped entry anew,
/// packed `units_per_page` to a flash page (a last partial page stays in the translation
/// buffer); the scan's time counts those programs and erases.
#[test]
fn a_demand_paged_scan_rewrites_the_translation_pages_and_times_it() {
    let cfg = set_up("dftl", true, &[]);
    let mut sim = Simulation::new(&cfg).unwrap();
    sim.precondition().unwrap();
    let report = sim.ftl().report();
    let (tpages, upp) = (
        report["translation_pages"].as_u64().unwrap(),
        report["units_per_page"].as_u64().unwrap(),
    );
    let mut nand: Nand = sim.nand().clone();
    let translation_blocks = (0..nand.layout().blocks())
        .filter(|&b| {
            let first = nand.layout().ppn(b, 0) * nand.units_per_page();
            nand.block(b).write_ptr > 0
                && nand.oob(first).flags() & flashlab_sim::nand::OOB_FLAG_TRANSLATION != 0
        })
        .count() as u64;
    assert!(translation_blocks > 0);
    nand.clear_validity();
    let (recovered, scan) = Simulation::recover(&cfg, nand).unwrap();
    // Filled: every translation page holds mapped entries.
    assert_eq!(scan.page_programs, tpages / upp, "{scan:?}");
    assert_eq!(scan.block_erases, translation_blocks, "{scan:?}");
    let t = &cfg.timing;
    let layout = *recovered.nand().layout();
    let slowest = scan
        .per_die()
        .iter()
        .map(|d| {
            let bytes = d.oob_reads * u64::from(layout.oob_bytes)
                + d.page_programs * u64::from(layout.page_bytes);
            let bus = (bytes as f64 * 1e3 / t.bus_mb_per_s).ceil() as u64;
            d.oob_reads * t.read_oob_latency_ns
                + d.page_programs * t.program_latency_ns
                + d.block_erases * t.erase_latency_ns
                + bus
        })
        .max()
        .unwrap();
    assert_eq!(scan.simulated_ns, slowest);
    let json = serde_json::to_value(&scan).unwrap();
    assert_eq!(json["page_programs"], scan.page_programs);
    assert_eq!(json["block_erases"], scan.block_erases);
    recovered.check_invariants().unwrap();
}

#[test]
fn pagemap_recovers_with_a_separate_gc_stream_and_copyback() {
    run(
        "pagemap",
        &["ftl.separate_gc_stream=true", "ftl.gc_copyback=true"],
    );
}

/// The configuration of `ftl`'s set-up (`small_device`'s, shared with the differential
/// test), timed or functional-only, filled first; pagemap with its power-loss-safe GC
/// (`ftl.gc_program_before_erase`).
fn set_up(ftl: &str, functional: bool, extra: &[&str]) -> ExperimentConfig {
    let (preset, mut all) = small_device::set_up(ftl);
    if ftl == "pagemap" {
        all.push("ftl.gc_program_before_erase=true".into());
    }
    all.push(format!("run.functional_only={functional}"));
    all.extend(FILLED.iter().chain(extra).map(|s| s.to_string()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    ExperimentConfig::with_sets(preset, &all).unwrap_or_else(|e| panic!("{ftl}: {e}"))
}

/// Each FTL the registry lists as recoverable rebuilds a filled device (its `Ftl::recover`
/// is its own), and each of the others refuses an image with a message naming it and the
/// FTLs that can.
#[test]
fn every_ftl_supports_recovery_or_says_it_does_not() {
    for entry in registry::entries() {
        let cfg = set_up(entry.name, true, &[]);
        let ftl = registry::build(&cfg).unwrap_or_else(|e| panic!("{}: {e}", entry.name));
        let listed = registry::RECOVERABLE.contains(&entry.name);
        assert_eq!(ftl.supports_recovery(), listed, "{}", entry.name);
        let mut sim = Simulation::new(&cfg).unwrap_or_else(|e| panic!("{}: {e}", entry.name));
        sim.precondition()
            .unwrap_or_else(|e| panic!("{}: {e}", entry.name));
        let mut nand: Nand = sim.nand().clone();
        nand.clear_validity();
        match Simulation::recover(&cfg, nand) {
            Ok(_) => assert!(listed, "{} recovered but is not listed", entry.name),
            Err(e) => {
                assert!(!listed, "{}: {e}", entry.name);
                assert!(matches!(e, SimError::RecoveryUnsupported { .. }));
                assert!(e.is_input_error());
                let msg = e.to_string();
                assert!(
                    msg.contains(&format!(
                        "FTL `{}` does not support power-loss recovery",
                        entry.name
                    )) && msg.contains("pagemap"),
                    "{msg}"
                );
            }
        }
    }
}

/// An image that does not fit the configuration is refused with what differs.
#[test]
fn an_image_of_another_device_is_refused() {
    let cfg = set_up("pagemap", true, &[]);
    let sim = Simulation::new(&cfg).unwrap();
    let mut nand = sim.nand().clone();
    let other = set_up("pagemap", true, &["geometry.blocks_per_plane=32"]);
    let e = Simulation::recover(&other, nand.clone()).err().unwrap();
    assert!(
        e.is_input_error() && e.to_string().contains("geometry"),
        "{e}"
    );
    let verify = set_up("pagemap", true, &["run.verify=true"]);
    let e = Simulation::recover(&verify, nand.clone()).err().unwrap();
    assert!(e.to_string().contains("data versions"), "{e}");
    // Validity left on: not what a power cut leaves.
    let mut sim = Simulation::new(&cfg).unwrap();
    sim.precondition().unwrap();
    let e = Simulation::recover(&cfg, sim.nand().clone()).err().unwrap();
    assert!(e.to_string().contains("marked valid"), "{e}");
    nand.clear_validity();
    let (recovered, scan) = Simulation::recover(&cfg, nand).unwrap();
    assert_eq!(scan.units_recovered, 0);
    recovered.check_invariants().unwrap();
}
