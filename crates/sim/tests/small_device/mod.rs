//! The small device several integration tests share: 2 channels x 1 die x 2 planes x 16 blocks
//! x 16 pages of the `default` preset's 8 KiB (8 MiB raw), 30% over-provisioning; and every
//! registered FTL's set-up on small devices (the differential test's, the served device's).
#![allow(dead_code)]

use flashlab_sim::config::ExperimentConfig;

/// Settings of the small device (on the `default` preset); tests add theirs after them.
pub const SMALL_DEVICE: &[&str] = &[
    "geometry.channels=2",
    "geometry.chips_per_channel=1",
    "geometry.dies_per_chip=1",
    "geometry.planes_per_die=2",
    "geometry.blocks_per_plane=16",
    "geometry.pages_per_block=16",
    "ftl.over_provisioning=0.3",
];

/// GC from the start: filled once, then the steps (the differential test).
const FILLED: &[&str] = &["run.precondition=1.0", "run.precondition_max_passes=1"];

/// The FTLs' devices: the small device of `small_device` (2 dies of 2 planes x 16 blocks x 16
/// pages of 8 KiB) unless the FTL needs another shape.
const PAGE_MAPPED: &[&str] = &[];
const MT: &[&str] = &["geometry.page_bytes=4096"];
/// Log-block FTLs: one die of 64 blocks of 16 pages of 2 KiB (their settings are in
/// [`SET_UPS`]).
const LOG_BLOCK: &[&str] = &[
    "geometry.channels=1",
    "geometry.planes_per_die=1",
    "geometry.blocks_per_plane=64",
    "geometry.page_bytes=2048",
    "geometry.oob_bytes=64",
];
/// NFTL: the small-block chip with 48 blocks of 16 pages and few spare blocks (folds and GC
/// all the time).
const NFTL: &[&str] = &[
    "geometry.blocks_per_plane=48",
    "geometry.pages_per_block=16",
    "ftl.over_provisioning=0.07",
];
/// Demand-paged map caches: the `cosmos` board's 16 dies with 64 blocks of 16 pages each
/// (small blocks: GC chains victims into part-full GC blocks all the time, where a padded GC
/// page once left a die without a free block), their default caches.
const DEMAND: &[&str] = &[
    "geometry.blocks_per_plane=64",
    "geometry.pages_per_block=16",
];
/// PaRT-FTL: the `default` preset's 8 channels x 8 ways (7 data ways and parity), 16 blocks
/// of 32 pages per plane (512 MiB), its default write buffer.
const PART: &[&str] = &[
    "geometry.blocks_per_plane=16",
    "geometry.pages_per_block=32",
];
/// Real-time baselines: GC all the time on one die of 16 blocks of 8 pages (at λ 0.45).
const REAL_TIME: &[&str] = &[
    "geometry.channels=1",
    "geometry.planes_per_die=1",
    "geometry.pages_per_block=8",
];

/// Every registered FTL: preset, device settings on top of [`SMALL_DEVICE`] (whose `ftl.*`
/// settings are dropped for FTLs that size their logical space otherwise) and FTL settings.
pub const SET_UPS: &[(&str, &str, &[&str], &[&str])] = &[
    ("pagemap", "default", PAGE_MAPPED, &[]),
    ("mt-ftl", "default", MT, &[]),
    ("st-ftl", "default", MT, &[]),
    ("bast", "default", LOG_BLOCK, &["ftl.log_blocks=6"]),
    ("fast", "default", LOG_BLOCK, &["ftl.log_blocks=6"]),
    (
        "sast",
        "default",
        LOG_BLOCK,
        &[
            "ftl.log_blocks=8",
            "ftl.set_data_blocks=4",
            "ftl.set_log_blocks=2",
        ],
    ),
    (
        "kast",
        "default",
        LOG_BLOCK,
        &["ftl.log_blocks=6", "ftl.max_associativity=3"],
    ),
    ("nftl", "nftl-samsung", NFTL, &[]),
    ("dftl", "cosmos", DEMAND, &[]),
    ("dftl-entry", "cosmos", DEMAND, &[]),
    ("cdftl", "cosmos", DEMAND, &[]),
    ("fmmu", "cosmos", DEMAND, &[]),
    ("part-ftl", "default", PART, &[]),
    ("wao-gc", "default", REAL_TIME, &["ftl.logical_ratio=0.45"]),
    ("rtgc", "default", REAL_TIME, &["ftl.logical_ratio=0.45"]),
];

/// The preset and settings of `ftl`'s set-up (without the preconditioning of [`FILLED`]).
pub fn set_up(ftl: &str) -> (&'static str, Vec<String>) {
    let &(_, preset, device, settings) = SET_UPS
        .iter()
        .find(|(name, ..)| *name == ftl)
        .unwrap_or_else(|| panic!("FTL `{ftl}` has no set-up in SET_UPS"));
    let own_sizing = matches!(
        ftl,
        "bast" | "fast" | "sast" | "kast" | "part-ftl" | "wao-gc" | "rtgc"
    );
    let mut all: Vec<String> = if preset == "default" && ftl != "part-ftl" {
        SMALL_DEVICE
            .iter()
            .filter(|s| !(own_sizing && s.starts_with("ftl.")))
            .map(|s| s.to_string())
            .collect()
    } else {
        Vec::new()
    };
    all.push(format!("ftl.name=\"{ftl}\""));
    all.extend(device.iter().chain(settings).map(|s| s.to_string()));
    (preset, all)
}

/// The configuration of `ftl`'s set-up, timed or functional-only, filled first.
pub fn config(ftl: &str, functional: bool) -> ExperimentConfig {
    let (preset, mut all) = set_up(ftl);
    all.push(format!("run.functional_only={functional}"));
    all.extend(FILLED.iter().map(|s| s.to_string()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    ExperimentConfig::with_sets(preset, &all).unwrap_or_else(|e| panic!("{ftl}: {e}"))
}
