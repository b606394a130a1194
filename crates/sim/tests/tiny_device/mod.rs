//! The one-die device whose timings the closed-form tests compute by hand: 4 KiB pages,
//! tR 50 us, an 800 MB/s bus, no cache operations or page-buffer chunks, 500 ns per command
//! on the host link, every logical page mapped (reads go to the flash). Shared by
//! `host_link_messages.rs` and `realtime_report.rs`, which differ only in the link's speed.

use flashlab_sim::ExperimentConfig;

/// The tiny device with its host link at `link_mb_per_s`, then `extra` settings.
pub fn tiny_device(link_mb_per_s: u32, extra: &[&str]) -> ExperimentConfig {
    let link = format!("host.link_mb_per_s={link_mb_per_s}");
    let mut sets = vec![
        "geometry.channels=1",
        "geometry.chips_per_channel=1",
        "geometry.dies_per_chip=1",
        "geometry.planes_per_die=1",
        "geometry.blocks_per_plane=16",
        "geometry.pages_per_block=16",
        "geometry.page_bytes=4096",
        "timing.read_latency_ns=50000",
        "timing.bus_mb_per_s=800",
        "timing.cache_ops=false",
        "timing.page_buffer_bytes=0",
        &link,
        "host.command_overhead_ns=500",
        "ftl.mapping_unit_bytes=4096",
        "ftl.over_provisioning=0.25",
        "run.precondition=1.0",
        "run.precondition_max_passes=0",
    ];
    sets.extend_from_slice(extra);
    ExperimentConfig::with_sets("default", &sets).unwrap_or_else(|e| panic!("{e}"))
}
