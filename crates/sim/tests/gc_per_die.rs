//! Foreground GC of the demand-paged core is per die (fmmu.txt 4.1): a host write whose stripe
//! die is at `ftl.gc_foreground_free_blocks` starts GC there and goes to another die with
//! room, and waits only when no die has any. Scenario: two dies, translation pages on die 0
//! only (`ftl.translation_dies = 1`) and a map cache of a few entries, so nearly every write
//! also writes a translation page back on die 0: die 0 reaches its foreground watermark long
//! before die 1, whose free blocks outlast the run. Random 4 KiB overwrites of the whole
//! logical space, every read checked against the last data written.

use flashlab_sim::config::ExperimentConfig;
use flashlab_sim::testing::{self, Options, Step};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Sectors of one 4 KiB mapping unit.
const UNIT_SECTORS: u64 = 8;

fn config(ftl: &str, functional: bool) -> ExperimentConfig {
    let name = format!("ftl.name=\"{ftl}\"");
    let mode = format!("run.functional_only={functional}");
    ExperimentConfig::with_sets(
        "default",
        &[
            name.as_str(),
            "geometry.channels=2",
            "geometry.chips_per_channel=1",
            "geometry.dies_per_chip=1",
            "geometry.planes_per_die=1",
            "geometry.blocks_per_plane=64",
            "geometry.pages_per_block=8",
            "geometry.page_bytes=4096",
            "ftl.over_provisioning=0.5",
            "ftl.translation_dies=1",
            "ftl.cmt_bytes=256",
            "run.precondition=0.0",
            mode.as_str(),
        ],
    )
    .unwrap_or_else(|e| panic!("{ftl}: {e}"))
}

/// `writes` random whole-unit writes over the logical space, a read of one unit after every
/// fourth, at queue depth 8.
fn steps(config: &ExperimentConfig, writes: usize) -> Vec<Step> {
    let units = testing::logical_sectors(config).unwrap() / UNIT_SECTORS;
    let mut rng = Pcg64Mcg::seed_from_u64(7);
    let mut steps = Vec::new();
    for i in 0..writes {
        let unit = |rng: &mut Pcg64Mcg| rng.random_range(0..units) * UNIT_SECTORS;
        steps.push(Step::Write {
            offset_sectors: unit(&mut rng),
            sectors: UNIT_SECTORS,
        });
        if i % 4 == 3 {
            steps.push(Step::Read {
                offset_sectors: unit(&mut rng),
                sectors: UNIT_SECTORS,
            });
        }
    }
    steps
}

/// (foreground GC victims, writes that waited for GC) of a run of `writes` writes.
fn run(ftl: &str, functional: bool, writes: usize) -> (u64, u64) {
    let cfg = config(ftl, functional);
    let steps = steps(&cfg, writes);
    let options = Options {
        clamp: false,
        ..Options::new(8)
    };
    let o = testing::run_steps_with(&cfg, &steps, &options)
        .unwrap_or_else(|e| panic!("{ftl} functional {functional}: {e}"));
    assert_eq!(
        o.checked_sectors, o.sectors_read,
        "{ftl}: every read checked"
    );
    let waited = o.ftl_report["counters"]["writes_waited_for_gc"]
        .as_u64()
        .unwrap_or_else(|| panic!("{ftl}: no writes_waited_for_gc in {}", o.ftl_report));
    (o.gc.gc_foreground_runs, waited)
}

/// Die 0 runs foreground GC while die 1 has free blocks: no write waits for it (each one is
/// placed, and acknowledged, on die 1 meanwhile), for every scheme of the core, timed and
/// functional.
#[test]
fn writes_go_to_another_die_while_one_die_collects() {
    for ftl in ["dftl", "cdftl", "fmmu"] {
        for functional in [false, true] {
            let (foreground, waited) = run(ftl, functional, 1150);
            assert!(
                foreground > 0,
                "{ftl} functional {functional}: die 0 never reached its foreground watermark"
            );
            assert_eq!(
                waited, 0,
                "{ftl} functional {functional}: {waited} writes waited for GC ({foreground} \
                 foreground victims) while die 1 had free blocks"
            );
        }
    }
}

/// Run on until die 1 collects too: some writes find every die collecting and wait (counted
/// once each), are placed in order once an erase frees a block, and every read still returns
/// the last data written.
#[test]
fn writes_wait_only_when_every_die_collects_and_are_then_placed() {
    for ftl in ["dftl", "cdftl", "fmmu"] {
        for functional in [false, true] {
            let (foreground, waited) = run(ftl, functional, 3000);
            assert!(
                waited > 0 && waited < 3000,
                "{ftl} functional {functional}: {waited} writes waited for GC ({foreground} \
                 foreground victims)"
            );
        }
    }
}
