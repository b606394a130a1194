//! Differential tests of the multi-threaded (`mt-ftl`) and single-threaded (`st-ftl`) FTLs
//! through the same FTL-agnostic harness as every FTL: every sector read is checked against
//! the last version written, the invariants after every batch (mapping and reverse map agree,
//! block lists and counts, working and GC blocks programmed in order), every request
//! completes, the whole space is read back at the end.
//!
//! Tasks interleave: up to 16 FTL tasks, deep queues (64), one NAND semaphore or one per die,
//! GC running all the time, mapping units smaller than pages, unaligned sub-unit writes.

use flashlab_sim::config::ExperimentConfig;
use flashlab_sim::testing::{self, Step};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

mod common;
use common::{logical, run};

/// A small device: 2 channels x 2 chips x 1 plane x 16 blocks x 16 pages of 4 KiB (4 MiB
/// raw), fresh, 30% over-provisioning.
const BASE: &[&str] = &[
    "geometry.channels=2",
    "geometry.chips_per_channel=2",
    "geometry.dies_per_chip=1",
    "geometry.planes_per_die=1",
    "geometry.blocks_per_plane=16",
    "geometry.pages_per_block=16",
    "geometry.page_bytes=4096",
    "ftl.over_provisioning=0.3",
    "run.precondition=0.0",
];

/// GC all the time: filled to steady state first, few spare blocks.
const CONSTANT_GC: &[&str] = &[
    "geometry.pages_per_block=8",
    "ftl.over_provisioning=0.3",
    "run.precondition=1.0",
    "run.precondition_max_passes=1",
];

fn config(ftl: &str, extra: &[&str]) -> ExperimentConfig {
    let name = format!("ftl.name=\"{ftl}\"");
    let mut sets = BASE.to_vec();
    sets.push(name.as_str());
    sets.extend_from_slice(extra);
    ExperimentConfig::with_sets("default", &sets).unwrap_or_else(|e| panic!("{extra:?}: {e}"))
}

/// Variants: (ftl, settings).
const VARIANTS: &[(&str, &[&str])] = &[
    ("st-ftl", &["ftl.tasks=1"]),
    ("mt-ftl", &["ftl.tasks=4"]),
    (
        "mt-ftl",
        &[
            "ftl.tasks=16",
            "ftl.nand_lock=\"per-die\"",
            "ftl.task_priority=\"request-age\"",
            "ftl.over_provisioning=0.4",
        ],
    ),
    (
        "mt-ftl",
        &[
            "ftl.tasks=16",
            "ftl.nand_lock=\"whole-device\"",
            "ftl.task_priority=\"fixed\"",
            "ftl.gc_copyback=false",
            "ftl.over_provisioning=0.4",
        ],
    ),
    (
        "mt-ftl",
        &[
            "ftl.tasks=8",
            "ftl.nand_lock=\"per-die\"",
            "ftl.gc_nand_hold=\"victim\"",
            "ftl.over_provisioning=0.4",
            "geometry.page_bytes=16384",
            "geometry.oob_bytes=448",
            "ftl.mapping_unit_bytes=4096",
        ],
    ),
    (
        "st-ftl",
        &[
            "geometry.page_bytes=16384",
            "geometry.oob_bytes=448",
            "ftl.mapping_unit_bytes=4096",
            "host.sector_bytes=4096",
        ],
    ),
    (
        "mt-ftl",
        &[
            "ftl.tasks=4",
            "geometry.planes_per_die=2",
            "ftl.nand_lock=\"per-die\"",
        ],
    ),
];

fn variant(index: usize, functional: bool, gc: bool) -> ExperimentConfig {
    let (ftl, sets) = VARIANTS[index];
    let mut all = if gc { CONSTANT_GC.to_vec() } else { Vec::new() };
    all.extend_from_slice(sets);
    all.push(if functional {
        "run.functional_only=true"
    } else {
        "run.functional_only=false"
    });
    config(ftl, &all)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 32,
        max_shrink_iters: 512,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    /// Every variant, with and without constant GC, functional and timed, queue depth 1 to 64.
    #[test]
    fn mt_and_st_ftl_return_the_last_data_written(
        index in 0..VARIANTS.len(),
        gc in any::<bool>(),
        functional in any::<bool>(),
        qd in prop::sample::select(vec![1usize, 4, 16, 64]),
        steps in proptest::collection::vec(common::step(logical(&variant(0, true, false)), 16), 200..1500),
    ) {
        let cfg = variant(index, functional, gc);
        let limit = logical(&cfg);
        let steps: Vec<Step> = steps.into_iter().map(|s| clip(s, limit)).collect();
        run(&cfg, &steps, qd)?;
    }
}

/// Keeps a step inside `logical` sectors (variants differ in capacity).
fn clip(step: Step, logical: u64) -> Step {
    let fit = |offset: u64, sectors: u64| {
        let sectors = sectors.min(logical);
        (offset % (logical - sectors + 1), sectors)
    };
    match step {
        Step::Write {
            offset_sectors,
            sectors,
        } => {
            let (offset_sectors, sectors) = fit(offset_sectors, sectors);
            Step::Write {
                offset_sectors,
                sectors,
            }
        }
        Step::Read {
            offset_sectors,
            sectors,
        } => {
            let (offset_sectors, sectors) = fit(offset_sectors, sectors);
            Step::Read {
                offset_sectors,
                sectors,
            }
        }
        Step::Trim {
            offset_sectors,
            sectors,
        } => {
            let (offset_sectors, sectors) = fit(offset_sectors, sectors);
            Step::Trim {
                offset_sectors,
                sectors,
            }
        }
        other => other,
    }
}

/// Each variant once, deterministically, with GC and a deep queue.
#[test]
fn every_variant_deterministically() {
    for (index, described) in VARIANTS.iter().enumerate() {
        for (functional, gc, qd) in [(false, true, 64), (true, true, 16), (false, false, 1)] {
            let cfg = variant(index, functional, gc);
            let steps = testing::random_steps(index as u64 + 7, 3000, logical(&cfg));
            let o = testing::run_steps(&cfg, &steps, qd)
                .unwrap_or_else(|e| panic!("variant {index} {described:?} gc={gc} qd={qd}: {e}"));
            assert_eq!(o.checked_sectors, o.sectors_read);
            if gc {
                assert!(o.gc.gc_runs > 0, "variant {index}: GC never ran");
            }
            let tasks = o.ftl_report["tasks"].as_u64().unwrap_or(0);
            if tasks > 1 && !functional && qd == 64 {
                // The tasks really interleaved: some waited for another's semaphore.
                let waits: u64 = o.ftl_report["rtos"]["semaphores"]
                    .as_array()
                    .expect("semaphore figures")
                    .iter()
                    .filter(|s| s["name"] != "host-queue")
                    .map(|s| s["waits"].as_u64().unwrap_or(0))
                    .sum();
                assert!(
                    waits > 0,
                    "variant {index}: no task ever waited for another"
                );
            }
        }
    }
}
