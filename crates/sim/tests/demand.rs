//! Behaviours of the demand-paged core (`ftl/demand`) the shared differential test does not
//! single out: one translation read serves every miss on its translation page.

use flashlab_sim::config::ExperimentConfig;
use flashlab_sim::testing::{self, Options, Step};

/// 2 channels x 2 planes x 16 blocks x 16 pages of 8 KiB, DFTL with a 32-entry map cache:
/// the whole logical space fits one translation page (2,048 entries).
fn dftl(functional: bool) -> ExperimentConfig {
    let mode = format!("run.functional_only={functional}");
    ExperimentConfig::with_sets(
        "default",
        &[
            "geometry.channels=2",
            "geometry.chips_per_channel=1",
            "geometry.dies_per_chip=1",
            "geometry.planes_per_die=2",
            "geometry.blocks_per_plane=16",
            "geometry.pages_per_block=16",
            "ftl.over_provisioning=0.3",
            "run.precondition=0.0",
            "ftl.name=\"dftl\"",
            "ftl.cmt_bytes=256",
            // A slow read keeps the translation read in flight while the FTL CPU handles all
            // 256 sub-requests (about 1.2 ms at fmmu.txt's DFTL times).
            "timing.read_latency_ns=10000000",
            mode.as_str(),
        ],
    )
    .unwrap()
}

fn map_cache_counter(config: &ExperimentConfig, steps: &[Step], key: &str) -> u64 {
    let options = Options {
        final_readback: false,
        ..Options::new(1)
    };
    let o = testing::run_steps_with(config, steps, &options).unwrap_or_else(|e| panic!("{e}"));
    let mc = serde_json::to_value(o.map_cache).expect("serializable");
    mc[key]
        .as_u64()
        .unwrap_or_else(|| panic!("no map_cache.{key}: {mc}"))
}

/// Units 0..256 written one by one, then 64 other units (the cache holds none of 0..256),
/// then one 1 MiB read of units 0..256: its 256 sub-requests all miss on the same translation
/// page, and one flash read of that page serves them all (255 wait on it). Timed only: in a
/// functional-only run the read completes at once, and the engine runs a flash completion
/// before the next submission (ARCHITECTURE.md, FTL CPU), so nothing is outstanding to wait.
#[test]
fn one_translation_read_serves_every_miss_on_its_page() {
    {
        let functional = false;
        let cfg = dftl(functional);
        let unit = 8;
        let mut steps: Vec<Step> = (0..256)
            .chain(600..664)
            .map(|u| Step::Write {
                offset_sectors: u * unit,
                sectors: unit,
            })
            .collect();
        let before_reads = map_cache_counter(&cfg, &steps, "translation_reads");
        let before_waits = map_cache_counter(&cfg, &steps, "misses_coalesced");
        steps.push(Step::Read {
            offset_sectors: 0,
            sectors: 256 * unit,
        });
        let reads = map_cache_counter(&cfg, &steps, "translation_reads") - before_reads;
        let waits = map_cache_counter(&cfg, &steps, "misses_coalesced") - before_waits;
        assert_eq!(
            reads, 1,
            "functional {functional}: translation reads for the 1 MiB read"
        );
        assert_eq!(
            waits, 255,
            "functional {functional}: misses that waited on that read"
        );
    }
}
