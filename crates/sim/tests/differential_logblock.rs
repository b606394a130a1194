//! Differential tests of the log-block FTLs (BAST, FAST, SAST, KAST) through the same
//! FTL-agnostic harness as every FTL: every sector read is checked against the last version
//! written, the invariants after every batch (map and flash agree, A(L) of every log block
//! equals its valid pages per data block, data blocks hold their pages in place, KAST's
//! k(L) <= K), every request completes, the whole space is read back at the end.
//!
//! The device is tiny (64 blocks of 16 pages, 4 to 8 log blocks) and filled first, so
//! merges run constantly, under random, sequential and mixed workloads.

use flashlab_sim::config::ExperimentConfig;
use flashlab_sim::ftl::merge::MergeReport;
use flashlab_sim::testing::{self, Outcome, Step};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

mod common;

/// One die, one plane, 64 blocks of 16 pages of 2 KiB, 512-byte sectors, filled first.
const DEVICE: &[&str] = &[
    "geometry.channels=1",
    "geometry.chips_per_channel=1",
    "geometry.dies_per_chip=1",
    "geometry.planes_per_die=1",
    "geometry.blocks_per_plane=64",
    "geometry.pages_per_block=16",
    "geometry.page_bytes=2048",
    "geometry.oob_bytes=64",
    "run.precondition=1.0",
    "run.precondition_max_passes=1",
    // Only for the default FTL of the preset, replaced below.
    "ftl.mapping_unit_bytes=2048",
    "ftl.over_provisioning=0.3",
];

/// FTL variants: name and `[ftl]` settings.
const FTLS: &[(&str, &[(&str, i64)])] = &[
    ("bast", &[("log_blocks", 6)]),
    ("fast", &[("log_blocks", 6)]),
    (
        "sast",
        &[
            ("log_blocks", 8),
            ("set_data_blocks", 4),
            ("set_log_blocks", 2),
        ],
    ),
    (
        "sast",
        &[
            ("log_blocks", 4),
            ("set_data_blocks", 1),
            ("set_log_blocks", 1),
        ],
    ),
    ("kast", &[("log_blocks", 6), ("max_associativity", 3)]),
    (
        "kast",
        &[
            ("log_blocks", 4),
            ("max_associativity", 1),
            ("max_sequential_log_blocks", 1),
        ],
    ),
    (
        "kast",
        &[
            ("log_blocks", 8),
            ("max_associativity", 16),
            ("max_sequential_log_blocks", 0),
        ],
    ),
    // SAST with 2 fixed sets of 3 log blocks (each merged as a set when evicted) and BAST
    // without partial merges; appended so the proptest regressions keep their indices.
    (
        "sast",
        &[
            ("log_blocks", 6),
            ("set_data_blocks", 3),
            ("set_log_blocks", 3),
        ],
    ),
    ("bast", &[("log_blocks", 6), ("partial_merge", 0)]),
];

/// The device with FTL variant `i`, timed or functional.
pub fn config(i: usize, functional: bool, extra: &[&str]) -> ExperimentConfig {
    let mode = format!("run.functional_only={functional}");
    let mut sets = DEVICE.to_vec();
    sets.push(&mode);
    sets.extend_from_slice(extra);
    let mut cfg = ExperimentConfig::with_sets("default", &sets).unwrap_or_else(|e| panic!("{e}"));
    let (name, settings) = FTLS[i];
    let mut ftl = toml::Table::new();
    ftl.insert("name".into(), name.into());
    for &(k, v) in settings {
        // BAST's `partial_merge` is the one boolean setting (0 or 1 here).
        let value: toml::Value = if k == "partial_merge" {
            (v != 0).into()
        } else {
            v.into()
        };
        ftl.insert(k.into(), value);
    }
    cfg.ftl = ftl;
    cfg
}

/// Sequential streams: runs of whole blocks written in order, with reads behind them.
fn sequential_steps(logical: u64, n: usize) -> Vec<Step> {
    let chunk = 64;
    (0..n)
        .map(|i| {
            let at = (i as u64 * chunk) % logical;
            if i % 4 == 3 {
                Step::Read {
                    offset_sectors: at.saturating_sub(3 * chunk),
                    sectors: chunk,
                }
            } else {
                Step::Write {
                    offset_sectors: at,
                    sectors: chunk,
                }
            }
        })
        .collect()
}

/// Random and sequential interleaved: a sequential stream with small random writes between.
fn mixed_steps(seed: u64, logical: u64, n: usize) -> Vec<Step> {
    let random = testing::random_steps(seed, n, logical);
    let seq = sequential_steps(logical, n);
    random
        .into_iter()
        .zip(seq)
        .flat_map(|(a, b)| [a, b])
        .take(n)
        .collect()
}

fn merges(o: &Outcome) -> &MergeReport {
    o.merges.as_ref().expect("log-block FTLs report merges")
}

fn run_all(i: usize, steps: &[Step], functional: bool, qd: usize) -> Outcome {
    let cfg = config(i, functional, &[]);
    let o = testing::run_steps(&cfg, steps, qd)
        .unwrap_or_else(|e| panic!("{:?} functional={functional} qd={qd}: {e}", FTLS[i]));
    assert_eq!(o.checked_sectors, o.sectors_read);
    o
}

/// Each FTL variant, each workload, timed and functional, queue depth 1 and 8: data checked,
/// invariants hold, and merges really ran (of the kinds the workload calls for).
#[test]
fn every_log_block_ftl_under_random_sequential_and_mixed_workloads() {
    for (i, ftl) in FTLS.iter().enumerate() {
        let logical = common::logical(&config(i, true, &[]));
        let workloads = [
            ("random", testing::random_steps(i as u64, 1500, logical)),
            ("sequential", sequential_steps(logical, 600)),
            ("mixed", mixed_steps(i as u64 + 50, logical, 1500)),
        ];
        for (workload, steps) in &workloads {
            for (functional, qd) in [(true, 1), (false, 8)] {
                let o = run_all(i, steps, functional, qd);
                let m = merges(&o);
                let total = m.total;
                assert!(
                    total >= 10,
                    "{:?} {workload}: only {total} merges: {m:?}",
                    ftl
                );
                if *workload == "sequential" {
                    assert!(
                        m.switch > 0,
                        "{:?} {workload}: no switch merge on whole-block writes: {m:?}",
                        ftl
                    );
                }
                if *workload == "random" {
                    assert!(m.full > 0, "{:?}: no full merge: {m:?}", ftl);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        max_shrink_iters: 256,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    /// Random step lists on every variant (hot range 1/4 of the space: many copies of the
    /// same pages in several log blocks).
    #[test]
    fn log_block_ftls_random_steps(
        i in 0..FTLS.len(),
        steps in proptest::collection::vec(common::step(16 * 16 * 4 * 50, 4), 1..600),
        qd in prop_oneof![Just(1usize), Just(8usize)],
        functional in any::<bool>(),
    ) {
        common::run(&config(i, functional, &[]), &steps, qd)?;
    }
}
