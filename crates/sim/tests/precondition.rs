//! Preconditioning leaves the device as it would be after sitting idle: background GC has run
//! to its watermark inside the (untimed, unmeasured) preconditioning, so the measured window
//! pays no GC debt, and a window that writes (almost) nothing reports no write amplification.

use flashlab_sim::ftl::registry;
use flashlab_sim::{run_experiment, ExperimentConfig, Report};

/// A small device (4 dies, 128 blocks of 64 4-KiB pages each), preconditioned in full.
fn small(ftl: &str, extra: &[&str]) -> ExperimentConfig {
    let name = format!("ftl.name=\"{ftl}\"");
    let mut sets = vec![
        name.as_str(),
        "geometry.channels=2",
        "geometry.chips_per_channel=2",
        "geometry.dies_per_chip=1",
        "geometry.planes_per_die=1",
        "geometry.blocks_per_plane=128",
        "geometry.pages_per_block=64",
        "geometry.page_bytes=4096",
        "run.precondition=1.0",
        "run.precondition_max_passes=1",
    ];
    if PAGE_MAPPED.contains(&ftl) {
        sets.push("ftl.over_provisioning=0.15");
    }
    sets.extend_from_slice(extra);
    ExperimentConfig::with_sets("default", &sets).unwrap()
}

/// The FTLs with an over-provisioning setting (block-mapped and log-block FTLs keep their
/// spare blocks as log, replacement or merge blocks instead).
const PAGE_MAPPED: [&str; 3] = ["pagemap", "mt-ftl", "st-ftl"];

fn run(config: &ExperimentConfig) -> Report {
    run_experiment(config, &mut |_| {}).unwrap()
}

/// Random reads at a low rate: the host is idle between almost every two requests.
const IDLE_READS: [&str; 3] = [
    "workload.read_fraction=1.0",
    "workload.rate_iops=2000",
    "workload.count=3000",
];

/// NFTL needs a chip that programs pages in any order, with room for its headers.
fn small_block_rules(ftl: &str) -> &'static [&'static str] {
    if ftl == "nftl" {
        &[
            "nand.program_order=\"any\"",
            "nand.partial_programs_per_page=3",
        ]
    } else {
        &[]
    }
}

#[test]
fn a_read_only_run_after_preconditioning_does_no_gc() {
    for entry in registry::entries() {
        let mut sets = IDLE_READS.to_vec();
        sets.extend_from_slice(small_block_rules(entry.name));
        let r = run(&small(entry.name, &sets));
        let what = entry.name;
        assert_eq!(r.host.read.count, 3000, "{what}");
        assert_eq!(
            r.gc.gc_runs, 0,
            "{what}: GC in a read-only window: {:?}",
            r.gc
        );
        // Map-cache FTLs (cdftl, fmmu) may write back map entries dirtied before the window
        // (their watermark flushes run between requests) and collect translation blocks;
        // no data is programmed or erased.
        let map_cache = matches!(what, "dftl" | "cdftl" | "fmmu");
        for (kind, c) in [("programs", &r.flash.programs), ("erases", &r.flash.erases)] {
            assert_eq!(c.total - c.mapping, 0, "{what} {kind}: {c:?}");
            assert!(map_cache || c.mapping == 0, "{what} {kind}: {c:?}");
        }
        assert_eq!(r.write_amplification, None, "{what}: nothing was written");
    }
}

#[test]
fn preconditioning_pays_the_background_gc_debt_itself() {
    // pagemap collects in the background up to 4 free blocks per die, in the foreground only at
    // 1: random overwrites end between the two, so the idle step has work to do.
    let r = run(&small(
        "pagemap",
        &[
            &IDLE_READS[..],
            &[
                "ftl.gc_foreground_free_blocks=1",
                "ftl.gc_background_free_blocks=4",
            ],
        ]
        .concat(),
    ));
    let pre = r.precondition.as_ref().expect("preconditioned");
    assert!(pre.idle_gc_victims > 0, "no idle GC at the end: {pre:?}");
    assert!(pre.idle_gc_units_moved > 0, "{pre:?}");
    assert_eq!(r.gc.gc_runs, 0, "{:?}", r.gc);
    // Reads never wait behind GC: a read costs tR plus transfers, about 60 us here.
    assert!(
        r.host.read.latency_ns.max < 500_000,
        "read max {} ns on an idle, GC-free device",
        r.host.read.latency_ns.max
    );
}

#[test]
fn write_amplification_is_null_when_almost_nothing_was_written() {
    // A couple of 4 KiB writes among the reads: less than a page on each of the 4 dies.
    let r = run(&small(
        "pagemap",
        &["workload.read_fraction=0.995", "workload.count=400"],
    ));
    assert!(r.host.write.bytes > 0, "the run wrote something");
    assert!(r.host.write.bytes < r.write_amplification_min_host_bytes);
    assert_eq!(r.write_amplification, None);
    let json = r.to_json();
    assert!(
        json["write_amplification"].is_null(),
        "{}",
        json["write_amplification"]
    );
    // Enough writes: the ratio is given.
    let r = run(&small(
        "pagemap",
        &["workload.read_fraction=0.5", "workload.count=2000"],
    ));
    let wa = r
        .write_amplification
        .expect("a write-heavy window has a WA");
    assert!((0.5..10.0).contains(&wa), "WA {wa}");
}
