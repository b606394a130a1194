//! Shared by the differential tests of every FTL: the random host steps and a run of the
//! FTL-agnostic harness (`flashlab_sim::testing`) that checks it really checked the data.

use flashlab_sim::config::ExperimentConfig;
use flashlab_sim::testing::{self, Outcome, Step};
use proptest::prelude::*;

/// Logical sectors of the device `config` builds.
pub fn logical(config: &ExperimentConfig) -> u64 {
    testing::logical_sectors(config).unwrap()
}

/// One random step over `logical` sectors: unaligned sub-unit writes (1..=16 sectors) and
/// multi-page writes, mostly in a hot range (`1 / hot_divisor` of the space, at least 64
/// sectors), reads, trims, flushes.
pub fn step(logical: u64, hot_divisor: u64) -> impl Strategy<Value = Step> {
    let hot = (logical / hot_divisor).max(64).min(logical);
    let offset = move || prop_oneof![3 => 0..hot, 1 => 0..logical];
    prop_oneof![
        5 => (offset(), 1u64..=16).prop_map(|(offset_sectors, sectors)| Step::Write { offset_sectors, sectors }),
        3 => (offset(), 17u64..=160).prop_map(|(offset_sectors, sectors)| Step::Write { offset_sectors, sectors }),
        5 => (offset(), 1u64..=64).prop_map(|(offset_sectors, sectors)| Step::Read { offset_sectors, sectors }),
        2 => (offset(), 1u64..=64).prop_map(|(offset_sectors, sectors)| Step::Trim { offset_sectors, sectors }),
        1 => Just(Step::Flush),
    ]
}

/// Runs the harness and checks that it really checked data: every sector read was compared,
/// and the final read-back covered the whole space.
pub fn run(config: &ExperimentConfig, steps: &[Step], qd: usize) -> Result<Outcome, TestCaseError> {
    let o = testing::run_steps(config, steps, qd).map_err(TestCaseError::fail)?;
    prop_assert_eq!(o.checked_sectors, o.sectors_read);
    prop_assert!(
        o.sectors_read >= o.logical_sectors,
        "the final read-back covers the space"
    );
    Ok(o)
}
