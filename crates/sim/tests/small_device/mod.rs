//! The small device several integration tests share: 2 channels x 1 die x 2 planes x 16 blocks
//! x 16 pages of the `default` preset's 8 KiB (8 MiB raw), 30% over-provisioning.

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
