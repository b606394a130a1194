//! A verify run on the `default` preset's full geometry (64 dies on 8 channels, two planes, two
//! 4 KiB units per 8 KiB page), timed and functional-only: every read is checked against the
//! last data written and the FTL invariants hold at the end (`run_experiment` checks both in
//! verify runs). The differential tests use small devices; this one covers the wide striping.

use flashlab_sim::{run_experiment, ExperimentConfig};

#[test]
fn verify_run_on_the_default_geometry() {
    for functional in ["run.functional_only=false", "run.functional_only=true"] {
        let config = ExperimentConfig::with_sets(
            "default",
            &[
                "geometry.blocks_per_plane=16",
                "ftl.over_provisioning=0.25",
                // Preconditioning ends with idle GC up to the background watermark: the open
                // block and two free blocks per die (up to 384 MiB) are written before GC runs
                // again, so the window writes 470 MiB in 16 KiB writes.
                "workload.count=40000",
                "workload.read_fraction=0.25",
                "workload.block_size=16384",
                "run.precondition=1.0",
                "run.precondition_max_passes=2",
                "run.verify=true",
                functional,
            ],
        )
        .unwrap();
        let r =
            run_experiment(&config, &mut |_| {}).unwrap_or_else(|e| panic!("{functional}: {e}"));
        assert_eq!(r.host.all.count, 40_000);
        let read_sectors = r.host.read.bytes / 512;
        assert_eq!(
            r.verified_sectors,
            Some(read_sectors),
            "{functional}: every read sector checked"
        );
        assert!(r.gc.gc_runs > 0, "{functional}: GC ran");
    }
}
