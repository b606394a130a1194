//! Differential tests of NFTL (plain, + lookup table, + page cache, both) through the same
//! FTL-agnostic harness as every FTL: every sector read is checked against the last version
//! written, the invariants after every batch (block map, replacement blocks and their headers,
//! page-status bitmap and page cache agree with the flash; one valid copy per sector, stale
//! copies and header-only spares skipped by their OOB), every request completes, the whole
//! space is read back at the end.
//!
//! The device is small with few spare blocks, so folds and GC happen constantly: random,
//! sequential and mixed steps, timed and functional, queue depth 1 and 8.

use flashlab_sim::config::ExperimentConfig;
use flashlab_sim::flash::{Cause, OpKind};
use flashlab_sim::testing::{self, Step};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

mod common;
use common::{logical, run};

/// The Samsung chip of the NFTL paper cut down to 48 blocks of 16 pages of 512 B (384 KiB),
/// 3 spare blocks (over-provisioning 0.07).
const BASE: &[&str] = &[
    "ftl.name=\"nftl\"",
    "geometry.blocks_per_plane=48",
    "geometry.pages_per_block=16",
    "ftl.over_provisioning=0.07",
    "run.precondition=0.0",
];

/// Options: plain NFTL, lookup table, page cache, both.
const VARIANTS: &[(&str, &[&str])] = &[
    ("plain", &[]),
    ("lookup", &["ftl.lookup_table=true"]),
    ("cache", &["ftl.page_cache_entries=64"]),
    (
        "lookup+cache",
        &["ftl.lookup_table=true", "ftl.page_cache_entries=7"],
    ),
];

fn config(variant: usize, functional: bool, extra: &[&str]) -> ExperimentConfig {
    let mut sets = BASE.to_vec();
    sets.extend_from_slice(VARIANTS[variant].1);
    sets.push(if functional {
        "run.functional_only=true"
    } else {
        "run.functional_only=false"
    });
    sets.extend_from_slice(extra);
    ExperimentConfig::with_sets("nftl-samsung", &sets).unwrap_or_else(|e| panic!("{e}"))
}

/// Sequential writes over the whole space, twice, with reads behind them.
fn sequential_steps(logical: u64) -> Vec<Step> {
    let mut steps = Vec::new();
    for pass in 0..2 {
        for offset in (0..logical).step_by(24) {
            steps.push(Step::Write {
                offset_sectors: offset,
                sectors: 24,
            });
            if pass == 1 && offset % 96 == 0 {
                steps.push(Step::Read {
                    offset_sectors: offset / 2,
                    sectors: 8,
                });
            }
        }
    }
    steps
}

/// Sequential runs, then random steps over a hot range, then sequential again.
fn mixed_steps(seed: u64, logical: u64) -> Vec<Step> {
    let seq = sequential_steps(logical);
    let mut steps = seq[..seq.len() / 2].to_vec();
    steps.extend(testing::random_steps(seed, 1500, logical / 4));
    steps.extend_from_slice(&seq[seq.len() / 2..]);
    steps
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 32,
        max_shrink_iters: 512,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn nftl_random_steps_each_variant(
        variant in 0..VARIANTS.len(),
        steps in proptest::collection::vec(common::step(logical(&config(0, true, &[])), 8), 1..1500),
        qd in prop_oneof![Just(1usize), Just(8usize)],
        functional in any::<bool>(),
    ) {
        run(&config(variant, functional, &[]), &steps, qd)
            .map_err(|e| TestCaseError::fail(format!("{}: {e}", VARIANTS[variant].0)))?;
    }
}

/// Every variant on random, sequential and mixed steps, timed and functional, at queue depth
/// 1 and 8: the data checks pass, and folds and GC really ran (under the merge cause).
#[test]
fn every_variant_on_random_sequential_and_mixed_steps() {
    for (v, (name, _)) in VARIANTS.iter().enumerate() {
        for functional in [true, false] {
            for qd in [1, 8] {
                let cfg = config(v, functional, &[]);
                let logical = logical(&cfg);
                let workloads = [
                    ("random", testing::random_steps(v as u64, 3000, logical)),
                    ("sequential", sequential_steps(logical)),
                    ("mixed", mixed_steps(v as u64 + 10, logical)),
                ];
                for (kind, steps) in workloads {
                    let what = format!("{name} {kind} functional={functional} qd={qd}");
                    let o = testing::run_steps(&cfg, &steps, qd)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_eq!(o.checked_sectors, o.sectors_read, "{what}");
                    let c = &o.ftl_report["counters"];
                    assert!(c["folds"].as_u64().unwrap() > 10, "{what}: {c}");
                    assert!(o.flash.get(OpKind::Erase, Cause::Merge) > 10, "{what}");
                    assert!(
                        o.flash.get(OpKind::ProgramOob, Cause::Host) > 0,
                        "{what}: no header"
                    );
                    if kind == "random" {
                        assert!(c["gc_runs"].as_u64().unwrap() > 0, "{what}: no GC: {c}");
                    }
                }
            }
        }
    }
}
