//! The shared differential run for every registered FTL at queue depth 64, kept full in a
//! closed loop (`testing::Options::continuous`): random writes (half of them smaller than a
//! page, at any sector offset: read-modify-write), reads, trims and flushes
//! (`testing::random_steps`), on a small device filled first so that GC runs, timed and
//! functional-only. Only a continuous queue makes a flush arrive while writes acknowledged
//! before it are still in a write buffer, and a trim race it: batches of requests submitted
//! at once and run to idle (the FTLs' own differential tests) never did, so PaRT-FTL's flush
//! that completed ahead of the trim that let it go, and DFTL-family flushes that padded GC
//! pages until a die had no free block left, went unseen (issue 25).
//!
//! A new FTL must be added to [`SET_UPS`]: the test fails for a registered FTL without one.

use flashlab_sim::config::ExperimentConfig;
use flashlab_sim::ftl::registry;
use flashlab_sim::testing::{self, Options, Step};

mod small_device;
use small_device::{config, SET_UPS};

/// Requests kept outstanding.
const QUEUE_DEPTH: usize = 64;
/// Steps of the random mix (idle every 8 x 64 steps).
const STEPS: usize = 3000;
/// Steps of the hot mix, and between its idle points: PaRT-FTL's early flush needed 700 to
/// 3,500 steps without one on its set-up here (5,000 to 6,700 on the `default` device).
const HOT_STEPS: usize = 6000;
const HOT_IDLE_EVERY: usize = 3000;
/// Seeds of the hot mix: each race above shows on some seeds only (the padded GC page on 1
/// to 3 of 8, at 900 to 4,700 steps).
const HOT_SEEDS: [u64; 3] = [1, 2, 3];

/// The hostile run of issue 25 (PaRT-FTL's early flush): a very hot Zipf mix of reads,
/// sector-aligned writes and trims of 512 B to 16 KiB, a flush every 37 writes.
const HOT_MIX: &str = "zipf:theta=1.1,read=0.3,trim=0.15,flush=37,bs=512-16k,align=512";

/// The runs of one configuration: `testing::random_steps` and [`HOT_MIX`] on each of
/// [`HOT_SEEDS`], with their options.
fn step_lists(cfg: &ExperimentConfig, ftl: &str) -> Vec<(String, Vec<Step>, Options)> {
    let logical = testing::logical_sectors(cfg).unwrap_or_else(|e| panic!("{ftl}: {e}"));
    let sector = u64::from(cfg.host.sector_bytes);
    let hot_options = Options {
        idle_every_steps: HOT_IDLE_EVERY,
        ..Options::continuous(QUEUE_DEPTH)
    };
    let mut runs = vec![(
        "random steps".to_string(),
        testing::random_steps(25, STEPS, logical),
        Options::continuous(QUEUE_DEPTH),
    )];
    for seed in HOT_SEEDS {
        let hot = testing::workload_steps(HOT_MIX, seed, HOT_STEPS, logical, sector)
            .unwrap_or_else(|e| panic!("{ftl}: {e}"));
        runs.push((format!("hot mix seed {seed}"), hot, hot_options.clone()));
    }
    runs
}

/// Runs one FTL's set-up, timed and functional-only, on every step list.
fn run(ftl: &str) {
    for functional in [false, true] {
        let cfg = config(ftl, functional);
        for (name, steps, options) in step_lists(&cfg, ftl) {
            let what = format!("{ftl} {name} functional {functional}");
            let o = testing::run_steps_with(&cfg, &steps, &options)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(o.checked_sectors, o.sectors_read, "{what}");
            assert!(o.sectors_trimmed > 0 && o.sectors_written > 0, "{what}");
            let merges = o.merges.as_ref().map_or(0, |m| m.total);
            assert!(o.gc.gc_runs + merges > 0, "{what}: no GC");
        }
    }
}

#[test]
fn every_registered_ftl_has_a_set_up() {
    let registered: Vec<&str> = registry::entries().iter().map(|e| e.name).collect();
    let covered: Vec<&str> = SET_UPS.iter().map(|(name, ..)| *name).collect();
    assert_eq!(registered, covered, "add the new FTL to SET_UPS");
}

macro_rules! every_ftl {
    ($($test:ident => $ftl:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                run($ftl);
            }
        )*
    };
}

every_ftl! {
    pagemap_at_queue_depth_64 => "pagemap",
    mt_ftl_at_queue_depth_64 => "mt-ftl",
    st_ftl_at_queue_depth_64 => "st-ftl",
    bast_at_queue_depth_64 => "bast",
    fast_at_queue_depth_64 => "fast",
    sast_at_queue_depth_64 => "sast",
    kast_at_queue_depth_64 => "kast",
    nftl_at_queue_depth_64 => "nftl",
    dftl_at_queue_depth_64 => "dftl",
    dftl_entry_at_queue_depth_64 => "dftl-entry",
    cdftl_at_queue_depth_64 => "cdftl",
    fmmu_at_queue_depth_64 => "fmmu",
    part_ftl_at_queue_depth_64 => "part-ftl",
    wao_gc_at_queue_depth_64 => "wao-gc",
    rtgc_at_queue_depth_64 => "rtgc",
}
