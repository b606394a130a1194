//! Tiny blocks and little over-provisioning (issue 10): a configuration either runs to the
//! end or is refused when it is built, naming the setting to change; never an internal error
//! ("garbage collection cannot free a block", exit code 70). Sweeps pages per block x
//! over-provisioning x FTL on a small 8-die device (8 KiB pages of two 4 KiB mapping units,
//! 32 blocks per die); every configuration accepted runs a stress: a full fill, then random
//! 4 KiB overwrites of three times the logical space.

use flashlab_sim::config::ExperimentConfig;
use flashlab_sim::{run_experiment, SimError};

const FTLS: [&str; 4] = ["pagemap", "mt-ftl", "st-ftl", "dftl"];
const PAGES_PER_BLOCK: [u32; 6] = [1, 2, 4, 8, 16, 64];
const OVER_PROVISIONING: [f64; 11] = [0.03, 0.05, 0.07, 0.1, 0.13, 0.16, 0.2, 0.25, 0.3, 0.4, 0.5];
/// Random overwrites after the fill, in multiples of the logical space.
const PASSES: f64 = 3.0;

fn config(
    ftl: &str,
    pages_per_block: u32,
    over_provisioning: f64,
) -> Result<ExperimentConfig, SimError> {
    let sets = [
        "geometry.channels=2".to_string(),
        "geometry.chips_per_channel=2".into(),
        "geometry.dies_per_chip=2".into(),
        "geometry.planes_per_die=2".into(),
        "geometry.blocks_per_plane=16".into(),
        format!("geometry.pages_per_block={pages_per_block}"),
        format!("ftl.name=\"{ftl}\""),
        format!("ftl.over_provisioning={over_provisioning}"),
        "run.functional_only=true".into(),
        "run.precondition=1.0".into(),
        "run.precondition_max_passes=1".into(),
        "workload.pattern=\"uniform\"".into(),
        "workload.read_fraction=0.0".into(),
        "workload.block_size=4096".into(),
    ];
    let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
    let mut config = ExperimentConfig::with_sets("default", &sets)?;
    let logical_units =
        flashlab_sim::testing::logical_sectors(&config).map_err(|e| SimError::Input {
            location: "config".into(),
            message: e,
        })? * u64::from(config.host.sector_bytes)
            / 4096;
    config.workload.count = (logical_units as f64 * PASSES) as u64;
    Ok(config)
}

/// What happened to one configuration of the sweep.
#[derive(Debug)]
enum Outcome {
    Ran,
    Refused(String),
    Failed(String),
}

fn try_one(ftl: &str, pages_per_block: u32, over_provisioning: f64) -> Outcome {
    let config = match config(ftl, pages_per_block, over_provisioning) {
        Ok(c) => c,
        Err(e) if e.is_input_error() => return Outcome::Refused(e.to_string()),
        Err(e) => return Outcome::Failed(format!("building: {e}")),
    };
    match run_experiment(&config, &mut |_| {}) {
        Ok(_) => Outcome::Ran,
        Err(e) => Outcome::Failed(e.to_string()),
    }
}

#[test]
fn tiny_blocks_run_or_are_refused_with_the_setting_to_change() {
    let mut problems = Vec::new();
    let mut ran = 0;
    let mut refused = 0;
    for ftl in FTLS {
        for ppb in PAGES_PER_BLOCK {
            let mut accepted_from = None;
            for op in OVER_PROVISIONING {
                let what = format!("{ftl}, {ppb} pages per block, over-provisioning {op}");
                match try_one(ftl, ppb, op) {
                    Outcome::Ran => {
                        ran += 1;
                        accepted_from.get_or_insert(op);
                    }
                    Outcome::Refused(message) => {
                        refused += 1;
                        let names_setting = ["ftl.over_provisioning", "geometry.pages_per_block"]
                            .iter()
                            .any(|s| message.contains(s));
                        if !names_setting || !message.contains("allowed: ") {
                            problems.push(format!("{what}: refused without naming the setting and its range: {message}"));
                        }
                        if let Some(from) = accepted_from {
                            problems.push(format!(
                                "{what}: refused, though {from} was accepted: {message}"
                            ));
                        }
                    }
                    Outcome::Failed(message) => {
                        problems.push(format!("{what}: accepted, then failed: {message}"));
                    }
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
    // The sweep crosses the boundary: both outcomes occur.
    assert!(ran > 0 && refused > 0, "ran {ran}, refused {refused}");
}

#[test]
fn refusals_say_why_and_what_to_change() {
    let refusal = |ftl, ppb, op| match try_one(ftl, ppb, op) {
        Outcome::Refused(m) => m,
        other => panic!("{ftl}, {ppb} pages per block, {op}: {other:?}"),
    };
    // pagemap: the dies' shares of the data wander; the range names the smallest that works.
    let m = refusal("pagemap", 1, 0.1);
    assert!(
        m.contains("ftl.over_provisioning = 0.1") && m.contains("8 dies"),
        "{m}"
    );
    assert!(m.contains("or more geometry.pages_per_block"), "{m}");
    // mt-ftl: one-page blocks of two units never gain a page: no over-provisioning helps.
    let m = refusal("mt-ftl", 1, 0.5);
    assert!(
        m.contains("geometry.pages_per_block = 1") && m.contains("pads"),
        "{m}"
    );
    assert!(
        m.contains("ftl.mapping_unit_bytes = geometry.page_bytes"),
        "{m}"
    );
    let m = refusal("st-ftl", 4, 0.1);
    assert!(
        m.contains("ftl.over_provisioning = 0.1") && m.contains("st-ftl"),
        "{m}"
    );
}
