//! Differential tests of the page-mapping FTL against the shadow copy of the host data, through
//! the FTL-agnostic harness of `flashlab_sim::testing` (every FTL must pass the same tests).
//!
//! Every run checks every sector read against the last version written (verify mode), the FTL
//! invariants after every batch of requests, that every request completes and that every read
//! sector is checked; the whole logical space is read back at the end.

use flashlab_sim::config::ExperimentConfig;
use flashlab_sim::flash::OpKind;
use flashlab_sim::testing::{self, Options, Step};
use flashlab_sim::verify::Shadow;
use flashlab_sim::SimError;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

mod common;
use common::{logical, run};

mod small_device;
use small_device::SMALL_DEVICE;

/// GC all the time: one die with one plane of 16 blocks of 8 pages, filled to steady state
/// first, with the smallest over-provisioning pagemap accepts (3.2 spare blocks for the two
/// open blocks plus a one-block reserve), so the device runs out of free blocks every few
/// pages written.
const CONSTANT_GC: &[&str] = &[
    "geometry.channels=1",
    "geometry.planes_per_die=1",
    "geometry.pages_per_block=8",
    "ftl.over_provisioning=0.2",
    "ftl.gc_foreground_free_blocks=1",
    "ftl.gc_background_free_blocks=1",
    "run.precondition=1.0",
    "run.precondition_max_passes=1",
];

fn config(extra: &[&str]) -> ExperimentConfig {
    let mut sets = SMALL_DEVICE.to_vec();
    sets.push("run.precondition=0.0");
    sets.extend_from_slice(extra);
    ExperimentConfig::with_sets("default", &sets).unwrap_or_else(|e| panic!("{extra:?}: {e}"))
}

fn mode(functional: bool) -> &'static str {
    if functional {
        "run.functional_only=true"
    } else {
        "run.functional_only=false"
    }
}

fn gc_config(policy: &str, functional: bool, seed: u64) -> ExperimentConfig {
    let mut sets = CONSTANT_GC.to_vec();
    let policy = format!("ftl.gc_victim=\"{policy}\"");
    let seed = format!("run.seed={seed}");
    sets.extend([policy.as_str(), seed.as_str(), mode(functional)]);
    config(&sets)
}

/// Layout and GC-mode variants (d): multi-plane programs, copyback, one shared write stream,
/// mapping unit equal to and smaller than the page, 4 KiB host sectors.
const VARIANTS: &[(&str, &[&str])] = &[
    ("multi-plane", &["ftl.multi_plane=true"]),
    (
        "copyback+fifo+precondition",
        &[
            "ftl.gc_copyback=true",
            "ftl.gc_victim=\"fifo\"",
            "run.precondition=1.0",
            "run.precondition_max_passes=1",
        ],
    ),
    ("shared-gc-stream", &["ftl.separate_gc_stream=false"]),
    ("unit=page=8k", &["ftl.mapping_unit_bytes=8192"]),
    (
        "4k-units-in-16k-pages,4k-sectors",
        &[
            "geometry.page_bytes=16384",
            "ftl.mapping_unit_bytes=4096",
            "host.sector_bytes=4096",
        ],
    ),
    (
        "unit=page=16k,4k-sectors",
        &[
            "geometry.page_bytes=16384",
            "ftl.mapping_unit_bytes=16384",
            "host.sector_bytes=4096",
        ],
    ),
    (
        "multi-plane+shared-stream+4k-sectors+16k-pages",
        &[
            "ftl.multi_plane=true",
            "ftl.separate_gc_stream=false",
            "geometry.page_bytes=16384",
            "ftl.mapping_unit_bytes=4096",
            "host.sector_bytes=4096",
            "run.precondition=1.0",
            "run.precondition_max_passes=1",
        ],
    ),
    (
        "copyback+shared-stream+4k-sectors+16k-pages",
        &[
            "ftl.gc_copyback=true",
            "ftl.separate_gc_stream=false",
            "ftl.gc_victim=\"fifo\"",
            "geometry.page_bytes=16384",
            "ftl.mapping_unit_bytes=4096",
            "host.sector_bytes=4096",
            "run.precondition=1.0",
            "run.precondition_max_passes=1",
        ],
    ),
];

fn variant_config(index: usize, functional: bool) -> ExperimentConfig {
    let mut sets = VARIANTS[index].1.to_vec();
    sets.push(mode(functional));
    config(&sets)
}

fn steps(logical: u64, len: std::ops::Range<usize>) -> impl Strategy<Value = Vec<Step>> {
    proptest::collection::vec(common::step(logical, 32), len)
}

fn queue_depth() -> impl Strategy<Value = usize> {
    prop_oneof![Just(1usize), Just(16usize)]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        max_shrink_iters: 512,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    /// (a) default pagemap settings, (e) queue depth 1 and 16, (f) functional and timed.
    #[test]
    fn pagemap_default_settings(
        steps in steps(logical(&config(&[])), 1..2500),
        qd in queue_depth(),
        functional in any::<bool>(),
    ) {
        run(&config(&[mode(functional)]), &steps, qd)?;
    }

    /// (b) GC running constantly, (c) with each victim policy.
    #[test]
    fn pagemap_constant_gc_each_victim_policy(
        policy in prop::sample::select(vec!["greedy", "cost-benefit", "fifo"]),
        steps in steps(logical(&gc_config("greedy", true, 1)), 400..1200),
        qd in queue_depth(),
        functional in any::<bool>(),
        seed in 0u64..1000,
    ) {
        let cfg = gc_config(policy, functional, seed);
        let o = run(&cfg, &steps, qd)?;
        let block_bytes = u64::from(cfg.geometry.pages_per_block * cfg.geometry.page_bytes);
        let host_blocks = o.sectors_written * o.sector_bytes / block_bytes;
        // At steady state with one spare block beyond the reserve, every block of host data
        // needs (at least about) one victim collected.
        prop_assert!(o.gc.gc_runs >= 10, "GC ran only {} times: {:?}", o.gc.gc_runs, o.gc);
        prop_assert!(
            o.gc.gc_runs * 2 >= host_blocks,
            "GC ran {} times for {host_blocks} blocks of host data", o.gc.gc_runs
        );
        prop_assert!(o.gc.gc_units_moved > 0, "GC never moved valid data: {:?}", o.gc);
    }

    /// (d) multi-plane, copyback, shared GC stream, unit = page and unit < page, 4 KiB sectors.
    #[test]
    fn pagemap_layout_variants(
        variant in 0..VARIANTS.len(),
        steps in steps(logical(&config(&[])), 1..2500),
        qd in queue_depth(),
        functional in any::<bool>(),
    ) {
        run(&variant_config(variant, functional), &steps, qd)
            .map_err(|e| TestCaseError::fail(format!("variant {}: {e}", VARIANTS[variant].0)))?;
    }
}

/// Every combination, deterministically (proptest samples them): each variant and each victim
/// policy under constant GC, at queue depth 1 and 16, functional and timed.
#[test]
fn every_configuration_deterministically() {
    let t = std::time::Instant::now();
    let mut runs = 0;
    for functional in [true, false] {
        for qd in [1, 16] {
            for (i, (name, _)) in VARIANTS.iter().enumerate() {
                let cfg = variant_config(i, functional);
                let steps = testing::random_steps(i as u64, 3000, logical(&cfg));
                let o = testing::run_steps(&cfg, &steps, qd)
                    .unwrap_or_else(|e| panic!("{name} qd {qd} functional {functional}: {e}"));
                assert_eq!(o.checked_sectors, o.sectors_read, "{name}");
                assert!(o.gc.gc_runs > 0, "{name}: no GC: {:?}", o.gc);
                let report = &o.ftl_report;
                if name.contains("multi-plane") {
                    assert_eq!(report["planes_per_program"], 2, "{name}: {report}");
                }
                if name.contains("copyback") {
                    assert!(o.flash.total(OpKind::Copyback) > 0, "{name}: no copyback");
                }
                if name.contains("4k-units-in-16k") {
                    assert_eq!(report["units_per_page"], 4, "{name}: {report}");
                }
                if name.starts_with("unit=page") {
                    assert_eq!(report["units_per_page"], 1, "{name}: {report}");
                }
                runs += 1;
            }
            for (i, policy) in ["greedy", "cost-benefit", "fifo"].into_iter().enumerate() {
                let cfg = gc_config(policy, functional, 7 + i as u64);
                let steps = testing::random_steps(100 + i as u64, 3000, logical(&cfg));
                let o = testing::run_steps(&cfg, &steps, qd)
                    .unwrap_or_else(|e| panic!("{policy} qd {qd} functional {functional}: {e}"));
                assert!(
                    o.gc.gc_runs >= 100,
                    "{policy}: GC ran only {} times",
                    o.gc.gc_runs
                );
                assert!(o.gc.gc_units_moved > 0, "{policy}: {:?}", o.gc);
                runs += 1;
            }
        }
    }
    eprintln!("{runs} configurations in {:?}", t.elapsed());
}

/// A long deterministic run (hundreds of thousands of steps) on the constant-GC device, timed,
/// at queue depth 4.
#[test]
fn long_deterministic_run() {
    let t = std::time::Instant::now();
    let cfg = gc_config("greedy", false, 3);
    let steps = testing::random_steps(2024, 300_000, logical(&cfg));
    let o = testing::run_steps(&cfg, &steps, 4).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "{} steps in {:?}: {:?}, {} sectors checked, {} simulated s",
        o.steps,
        t.elapsed(),
        o.gc,
        o.checked_sectors,
        o.simulated_ns as f64 / 1e9
    );
    assert_eq!(o.steps, 300_000);
    assert_eq!(o.checked_sectors, o.sectors_read);
    assert!(o.gc.gc_runs > 10_000, "{:?}", o.gc);
    assert!(o.flash.total(OpKind::Erase) >= o.gc.gc_runs);
}

/// Negative control: the check the harness relies on rejects stale and lost data.
#[test]
fn shadow_rejects_stale_and_trimmed_data() {
    let mut s = Shadow::new(64, 8);
    s.write(0, 16, 5);
    s.write(4, 2, 9);
    s.check(0, &[5, 5, 5, 5, 9, 9, 5, 5], "t").unwrap();
    // An older version of sector 4 (a stale read).
    let err = s.check(4, &[5, 9], "t").unwrap_err();
    assert!(matches!(err, SimError::Verify(_)), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("version 5 for sector 4") && msg.contains("was version 9"),
        "{msg}"
    );
    // Data of a never-written sector, and a lost write (zeros where data was written).
    assert!(s.check(20, &[3], "t").is_err());
    assert!(s.check(0, &[0], "t").is_err());
    // A trim clears only whole 8-sector units: 8..16 reads as never written, 0..8 keeps data.
    s.trim(2, 14);
    s.check(8, &[0; 8], "t").unwrap();
    assert!(
        s.check(8, &[5], "t").is_err(),
        "trimmed data must not come back"
    );
    s.check(2, &[5, 5, 9, 9, 5, 5], "t").unwrap();
    assert_eq!(s.checked_sectors(), 8 + 8 + 6);
}

/// Negative control: a failing step is reported with its index, and reads are really checked
/// (even when the configuration does not ask for verification).
#[test]
fn harness_reports_the_failing_step_and_counts_checks() {
    let cfg = config(&["run.verify=false"]);
    let logical = logical(&cfg);
    let steps = [
        Step::Write {
            offset_sectors: 0,
            sectors: 24,
        },
        Step::Read {
            offset_sectors: 3,
            sectors: 10,
        },
        Step::Write {
            offset_sectors: logical - 4,
            sectors: 8,
        },
    ];
    let strict = Options {
        clamp: false,
        ..Options::new(1)
    };
    let err = testing::run_steps_with(&cfg, &steps, &strict).unwrap_err();
    assert!(err.contains("step 2"), "{err}");
    assert!(err.contains("logical capacity"), "{err}");
    // Clamped, the same steps run, and every sector read is checked.
    let o = testing::run_steps(&cfg, &steps, 1).unwrap();
    assert_eq!(o.sectors_read, 10 + logical);
    assert_eq!(o.checked_sectors, o.sectors_read);
    assert_eq!(o.sectors_written, 24 + 4);
    let without_readback = Options {
        final_readback: false,
        ..Options::new(2)
    };
    let o = testing::run_steps_with(&cfg, &steps, &without_readback).unwrap();
    assert_eq!(o.checked_sectors, 10);
}

/// DFTL (demand-paged mapping, `ftl/demand`) with a map cache far smaller than the logical
/// space: misses, batch write-backs and translation-page reads all the time.
const DFTL_SMALL_CACHE: &[&str] = &["ftl.name=\"dftl\"", "ftl.cmt_bytes=256"];

/// DFTL with GC all the time: one die of 32 blocks of 8 pages filled to steady state, and
/// translation pages rewritten often enough for translation-block GC.
const DFTL_CONSTANT_GC: &[&str] = &[
    "ftl.name=\"dftl\"",
    "ftl.cmt_bytes=256",
    "geometry.channels=1",
    "geometry.planes_per_die=1",
    "geometry.blocks_per_plane=32",
    "geometry.pages_per_block=8",
    "ftl.over_provisioning=0.25",
    "run.precondition=1.0",
    "run.precondition_max_passes=1",
];

/// DFTL passes the shared differential run (every read checked against the shadow copy,
/// invariants after every batch: host map vs OOB, GTD vs translation pages, flash copy of the
/// entries vs the map), functional and timed, at queue depth 1 and 16, with real map-cache
/// traffic and, on the small device, data and translation GC.
#[test]
fn dftl_small_cache_and_constant_gc() {
    for functional in [true, false] {
        for qd in [1, 16] {
            for (name, sets, seed) in [
                ("small-cache", DFTL_SMALL_CACHE, 11),
                ("constant-gc", DFTL_CONSTANT_GC, 12),
            ] {
                let mut sets = sets.to_vec();
                sets.push(mode(functional));
                let cfg = config(&sets);
                let steps = testing::random_steps(seed, 3000, logical(&cfg));
                let o = testing::run_steps(&cfg, &steps, qd)
                    .unwrap_or_else(|e| panic!("dftl {name} qd {qd} functional {functional}: {e}"));
                assert_eq!(o.checked_sectors, o.sectors_read, "{name}");
                let mc = o.map_cache.as_ref().expect("dftl has a map cache");
                assert!(mc.ctp.is_none(), "{name}: one level: {mc:?}");
                for (key, n) in [
                    ("translation_reads", mc.translation_reads),
                    ("translation_writes", mc.translation_writes),
                    ("flushes", mc.flushes),
                ] {
                    assert!(n > 0, "{name}: no {key}: {mc:?}");
                }
                let hit_ratio = mc.cmt.hit_ratio;
                assert!(hit_ratio > 0.0 && hit_ratio < 1.0, "{name}: {mc:?}");
                if name == "constant-gc" {
                    assert!(o.gc.gc_runs >= 50, "{name}: GC ran {} times", o.gc.gc_runs);
                    assert!(
                        mc.translation_gc.victims > 0,
                        "{name}: no translation GC: {mc:?}"
                    );
                }
            }
        }
    }
}

/// 512-byte pages (128 entries per translation page, so the small devices have several), a
/// direct-mapped CMT of four 64-byte blocks and a CTP of one translation page.
const TWO_LEVEL_SMALL: &[&str] = &[
    "geometry.page_bytes=512",
    "ftl.cache_ways=1",
    "ftl.ctp_bytes=512",
];

/// CDFTL and FMMU (the two-level CMT + CTP cache on the demand-paged core) pass the same
/// differential run as DFTL with [`TWO_LEVEL_SMALL`] caches (misses, blocked requests and
/// flushes all the time) and, on the small device, data and translation GC.
#[test]
fn cdftl_and_fmmu_small_cache_and_constant_gc() {
    for ftl in ["cdftl", "fmmu"] {
        for functional in [true, false] {
            for qd in [1, 16] {
                for (name, sets, seed) in [
                    ("small-cache", DFTL_SMALL_CACHE, 21),
                    ("constant-gc", DFTL_CONSTANT_GC, 22),
                ] {
                    let name_set = format!("ftl.name=\"{ftl}\"");
                    let mut sets: Vec<&str> = sets[1..].to_vec();
                    sets.push(&name_set);
                    sets.extend_from_slice(TWO_LEVEL_SMALL);
                    sets.push(mode(functional));
                    let cfg = config(&sets);
                    let steps = testing::random_steps(seed, 3000, logical(&cfg));
                    let o = testing::run_steps(&cfg, &steps, qd).unwrap_or_else(|e| {
                        panic!("{ftl} {name} qd {qd} functional {functional}: {e}")
                    });
                    assert_eq!(o.checked_sectors, o.sectors_read, "{ftl} {name}");
                    let mc = o.map_cache.as_ref().expect("a two-level map cache");
                    let ctp = mc.ctp.as_ref().expect("a CTP");
                    for (key, n) in [
                        ("translation_reads", mc.translation_reads),
                        ("translation_writes", mc.translation_writes),
                        ("flushes", mc.flushes),
                        ("ctp lookups", ctp.lookups),
                        (
                            "cmt_flushes",
                            o.ftl_report["two_level"]["cmt_flushes"]
                                .as_u64()
                                .unwrap_or(0),
                        ),
                    ] {
                        assert!(n > 0, "{ftl} {name}: no {key}: {mc:?}");
                    }
                    assert!(
                        ctp.hit_ratio < 1.0,
                        "{ftl} {name}: every CTP lookup hit: {mc:?}"
                    );
                    if qd == 16 {
                        assert!(mc.blocked_requests > 0, "{ftl} {name}: {mc:?}");
                    }
                    let hit_ratio = mc.cmt.hit_ratio;
                    assert!(hit_ratio > 0.0 && hit_ratio < 1.0, "{ftl} {name}: {mc:?}");
                    if name == "constant-gc" {
                        assert!(o.gc.gc_runs >= 50, "{ftl} {name}: GC ran {}", o.gc.gc_runs);
                    }
                }
            }
        }
    }
}

/// PaRT-FTL's device: 4 channels x 4 ways (three data ways and a parity way, as Fig. 3), 16
/// stripe groups of 8-page blocks, so the write set rotates every few dozen pages and GC
/// collects a group every group written once the device is full; the smallest write buffer
/// (two pages per write die), so host writes wait for room.
const PART_SMALL: &[&str] = &[
    "ftl.name=\"part-ftl\"",
    "geometry.channels=4",
    "geometry.chips_per_channel=4",
    "geometry.dies_per_chip=1",
    "geometry.planes_per_die=1",
    "geometry.blocks_per_plane=16",
    "geometry.pages_per_block=8",
    "ftl.write_buffer_pages=8",
    "run.precondition=1.0",
    "run.precondition_max_passes=1",
];

/// PaRT-FTL passes the shared differential run, functional and timed, at queue depth 1 and
/// 16: every read (buffered, direct or rebuilt from its stripe) checked against the shadow
/// copy, invariants after every batch (host map vs OOB, every closed stripe's parity the XOR
/// of its members, the running parity of the open group, one way written at a time).
#[test]
fn part_ftl_rotations_rebuilds_and_gc() {
    for functional in [true, false] {
        for qd in [1, 16] {
            let mut sets = PART_SMALL.to_vec();
            sets.push(mode(functional));
            let cfg = ExperimentConfig::with_sets("default", &sets).unwrap();
            let steps = testing::random_steps(31, 3000, logical(&cfg));
            let o = testing::run_steps(&cfg, &steps, qd)
                .unwrap_or_else(|e| panic!("part-ftl qd {qd} functional {functional}: {e}"));
            assert_eq!(o.checked_sectors, o.sectors_read);
            let c = &o.ftl_report["counters"];
            let what = format!("qd {qd} functional {functional}: {c}");
            for key in [
                "rebuilt_reads",
                "normal_reads",
                "parity_pages_written",
                "rotations",
                "gc_steps",
                "rmw_reads",
            ] {
                assert!(c[key].as_u64().unwrap() > 0, "no {key}: {what}");
            }
            assert_eq!(c["host_reads_on_write_set"], 0, "{what}");
            if !functional && qd > 1 {
                // Functional-only programs complete at once, and at queue depth 1 the buffer
                // drains between requests: nothing stays buffered.
                assert!(c["buffer_reads"].as_u64().unwrap() > 0, "{what}");
                assert!(c["backpressure_waits"].as_u64().unwrap() > 0, "{what}");
            }
            assert!(o.gc.gc_runs >= 5, "{what}: {:?}", o.gc);
            assert!(o.gc.gc_units_moved > 0, "{what}: {:?}", o.gc);
        }
    }
}

/// PaRT-FTL with firmware time per host page (`ftl.cpu_page_ns`): host pages queue for the FTL
/// core, earliest deadline first (here none has a deadline: first come, first served among
/// them), while programs, rebuilds and GC go on; every read checked, timed at queue depth 16.
#[test]
fn part_ftl_with_firmware_time() {
    let mut sets = PART_SMALL.to_vec();
    sets.extend(["run.functional_only=false", "ftl.cpu_page_ns=200000"]);
    let cfg = ExperimentConfig::with_sets("default", &sets).unwrap();
    let steps = testing::random_steps(37, 3000, logical(&cfg));
    let o = testing::run_steps(&cfg, &steps, 16).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(o.checked_sectors, o.sectors_read);
    let c = &o.ftl_report["counters"];
    assert!(c["rebuilt_reads"].as_u64().unwrap() > 0, "{c}");
    assert!(o.gc.gc_runs >= 5, "{:?}", o.gc);
}

/// Writes to disjoint parts of one page do not overlap, so the host lets them reach the FTL
/// together; while the write buffer is full they all wait, and each must then merge into the
/// page's buffered copy (a second copy would lose the first part: a bug the trace replay of
/// tpcc found).
#[test]
fn part_ftl_parts_of_one_page_waiting_for_buffer_room() {
    let mut sets = PART_SMALL.to_vec();
    sets.extend(["run.functional_only=false", "run.precondition=0.0"]);
    let cfg = ExperimentConfig::with_sets("default", &sets).unwrap();
    let mut steps: Vec<Step> = (0..40)
        .map(|i| Step::Write {
            offset_sectors: i * 16,
            sectors: 16,
        })
        .collect();
    for (first, n) in [(1600, 3), (1603, 7), (1610, 4), (1614, 2)] {
        steps.push(Step::Write {
            offset_sectors: first,
            sectors: n,
        });
    }
    let o = testing::run_steps(&cfg, &steps, 64).unwrap_or_else(|e| panic!("{e}"));
    let c = &o.ftl_report["counters"];
    assert!(c["backpressure_waits"].as_u64().unwrap() >= 4, "{c}");
    assert!(c["absorbed_overwrites"].as_u64().unwrap() >= 3, "{c}");
}
/// WAO-GC variants (`ftl/waogc`), on the small device without its over-provisioning (WAO-GC
/// sizes the logical space by λ, `ftl.logical_ratio`): the defaults (c = 2, λ = 0.482),
/// copyback, steps holding the whole device (with copyback), 200 us of firmware time per host
/// page (host pages queue for the FTL core), c = 1 (λ 0.4, under eq. 12's 0.4375 for P = 16), and GC all the time on one die of
/// 16 blocks of 8 pages filled to steady state at λ 0.45 (eq. 12 allows 0.5 for P = 8).
const WAO_GC_VARIANTS: &[(&str, &[&str])] = &[
    ("defaults", &[]),
    ("copyback", &["ftl.gc_copyback=true"]),
    (
        "device-scope copyback",
        &["ftl.gc_step_scope=\"device\"", "ftl.gc_copyback=true"],
    ),
    ("c=1", &["ftl.copies_per_step=1", "ftl.logical_ratio=0.4"]),
    ("firmware time", &["ftl.cpu_page_ns=200000"]),
    (
        "constant-gc",
        &[
            "geometry.channels=1",
            "geometry.planes_per_die=1",
            "geometry.pages_per_block=8",
            "ftl.logical_ratio=0.45",
            "run.precondition=1.0",
            "run.precondition_max_passes=1",
        ],
    ),
];

/// WAO-GC passes the shared differential run (every read checked against the shadow copy,
/// invariants after every batch, including that a collecting die's reserved block still holds
/// the rest of its collection), functional and timed, at queue depth 1 and 16, with
/// collections under way on every die.
#[test]
fn wao_gc_variants() {
    let device: Vec<&str> = SMALL_DEVICE
        .iter()
        .copied()
        .filter(|s| !s.starts_with("ftl."))
        .collect();
    for functional in [true, false] {
        for qd in [1, 16] {
            for (i, (name, sets)) in WAO_GC_VARIANTS.iter().enumerate() {
                let mut all = device.clone();
                all.extend([
                    "ftl.name=\"wao-gc\"",
                    "run.precondition=0.0",
                    mode(functional),
                ]);
                all.extend_from_slice(sets);
                let cfg = ExperimentConfig::with_sets("default", &all)
                    .unwrap_or_else(|e| panic!("wao-gc {name}: {e}"));
                let steps = testing::random_steps(31 + i as u64, 4000, logical(&cfg));
                let o = testing::run_steps(&cfg, &steps, qd).unwrap_or_else(|e| {
                    panic!("wao-gc {name} qd {qd} functional {functional}: {e}")
                });
                let what = format!("wao-gc {name} qd {qd} functional {functional}");
                assert_eq!(o.checked_sectors, o.sectors_read, "{what}");
                let counters = &o.ftl_report["counters"];
                assert!(o.gc.gc_runs >= 20, "{what}: GC ran {}", o.gc.gc_runs);
                assert!(o.gc.gc_units_moved > 0, "{what}: {:?}", o.gc);
                assert_eq!(counters["writes_without_free_page"], 0, "{what}");
                assert!(counters["rmw_reads"].as_u64().unwrap() > 0, "{what}");
                if name.contains("copyback") {
                    assert!(o.flash.total(OpKind::Copyback) > 0, "{what}: no copyback");
                }
                if name.starts_with("c=1") {
                    assert_eq!(counters["max_copies_in_step"], 1, "{what}");
                }
            }
        }
    }
}

/// RTGC variants (`ftl/rtgc`), on the small device without its over-provisioning (RTGC sizes
/// the logical space by λ, `ftl.logical_ratio`), each with writes of no task (the on-demand,
/// non-real-time GC) or of one periodic task (its collector's jobs, released per writer job
/// and erased while later requests run): the defaults, collectors on every die all the time
/// (`collector_free_blocks` 12 of 32 blocks per die), and GC all the time on one die of 16
/// blocks of 8 pages filled to steady state at λ 0.45.
const RTGC_VARIANTS: &[(&str, &[&str])] = &[
    ("defaults", &[]),
    ("eager collectors", &["ftl.collector_free_blocks=12"]),
    (
        "constant-gc",
        &[
            "geometry.channels=1",
            "geometry.planes_per_die=1",
            "geometry.pages_per_block=8",
            "ftl.logical_ratio=0.45",
            "run.precondition=1.0",
            "run.precondition_max_passes=1",
        ],
    ),
];

/// RTGC passes the shared differential run (every read checked against the shadow copy,
/// invariants after every batch), functional and timed, at queue depth 1 and 16, with and
/// without a periodic writer (writes with a 2 ms deadline as task 0).
#[test]
fn rtgc_variants() {
    let device: Vec<&str> = SMALL_DEVICE
        .iter()
        .copied()
        .filter(|s| !s.starts_with("ftl."))
        .collect();
    for functional in [true, false] {
        for qd in [1, 16] {
            for (i, (name, sets)) in RTGC_VARIANTS.iter().enumerate() {
                for write_task in [None, Some((0, 2_000_000))] {
                    let mut all = device.clone();
                    all.extend([
                        "ftl.name=\"rtgc\"",
                        "run.precondition=0.0",
                        mode(functional),
                    ]);
                    all.extend_from_slice(sets);
                    let what =
                        format!("rtgc {name} qd {qd} functional {functional} task {write_task:?}");
                    let cfg = ExperimentConfig::with_sets("default", &all)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    let steps = testing::random_steps(41 + i as u64, 4000, logical(&cfg));
                    let options = testing::Options {
                        write_task,
                        ..testing::Options::new(qd)
                    };
                    let o = testing::run_steps_with(&cfg, &steps, &options)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_eq!(o.checked_sectors, o.sectors_read, "{what}");
                    let counters = &o.ftl_report["counters"];
                    assert!(o.gc.gc_runs >= 20, "{what}: GC ran {}", o.gc.gc_runs);
                    assert!(o.gc.gc_units_moved > 0, "{what}: {:?}", o.gc);
                    assert!(counters["rmw_reads"].as_u64().unwrap() > 0, "{what}");
                    let victims = counters["collector_victims"].as_u64().unwrap();
                    if write_task.is_some() {
                        assert!(victims >= 10, "{what}: {counters}");
                    } else {
                        assert_eq!(victims, 0, "{what}: {counters}");
                        assert!(counters["on_demand_collections"].as_u64().unwrap() > 0);
                    }
                }
            }
        }
    }
}
