//! Demand-paged FTLs at steady-state GC: 4 KiB random writes at queue depth 128 on a device
//! preconditioned to steady state (fmmu-16ch reduced to 4 channels x 2 ways and 32 x 32 blocks
//! of 32 pages, so that it fills in seconds), with map caches far smaller than the mapping
//! table, so that nearly every write loads a translation page and every GC move writes one.
//!
//! - With zero FTL time (`exec_time = "ideal"`) the dies are the bottleneck: they stay busy.
//!   Guards the translation buffer keeping a page in RAM until its program completes: loads
//!   and merges that read such a page from flash wait for its program, which waits for its
//!   own merge reads, and these chains left the dies idle most of the time (43% busy, a third
//!   of the throughput).
//! - DFTL with the paper's execution times is not held up by its own GC: a GC write-back does
//!   not scan the cached mapping table for the page's dirty entries (Gupta et al. 2009, 3.4:
//!   cached entries are updated in the cache, the others batched per translation page). A
//!   scan of the whole table per write-back made the FTL CPU the bottleneck at 3% of the
//!   dies' throughput.

use flashlab_sim::{run_experiment, ExperimentConfig, Report};

fn run(ftl: &str, exec_time: &str) -> Report {
    let cache: &[&str] = if ftl == "dftl" {
        &["ftl.cmt_bytes=69632"]
    } else {
        &["ftl.cmt_bytes=4096", "ftl.ctp_bytes=65536"]
    };
    let name = format!("ftl.name=\"{ftl}\"");
    let exec = format!("ftl.exec_time=\"{exec_time}\"");
    let mut sets = vec![
        name.as_str(),
        exec.as_str(),
        "geometry.channels=4",
        "geometry.chips_per_channel=2",
        "geometry.pages_per_block=32",
        "geometry.blocks_per_plane=32",
        "run.seed=1",
        "run.precondition=1.0",
        "workload.pattern=\"uniform\"",
        "workload.read_fraction=0.0",
        "workload.block_size=\"4k\"",
        "workload.queue_depth=128",
        "workload.count=20000",
    ];
    sets.extend_from_slice(cache);
    let config = ExperimentConfig::with_sets("fmmu-16ch", &sets)
        .unwrap_or_else(|e| panic!("{ftl} {exec_time}: {e}"));
    run_experiment(&config, &mut |_| {}).unwrap_or_else(|e| panic!("{ftl} {exec_time}: {e}"))
}

fn write_iops(report: &Report) -> f64 {
    report.host.write.iops
}

#[test]
fn with_zero_ftl_time_the_dies_are_the_bottleneck_at_steady_gc() {
    for ftl in ["dftl", "cdftl", "fmmu"] {
        let report = run(ftl, "ideal");
        let dies = report.utilisation.dies.mean;
        let gc = report.gc.gc_runs;
        eprintln!(
            "{ftl}: {:.0} IOPS, dies {:.1}% busy, {gc} GC victims",
            write_iops(&report),
            100.0 * dies
        );
        assert!(gc > 100, "{ftl}: steady-state GC ran ({gc} victims)");
        assert!(dies > 0.9, "{ftl}: dies {:.1}% busy", 100.0 * dies);
    }
}

#[test]
fn dftl_gc_write_backs_do_not_scan_the_cached_mapping_table() {
    let paper = write_iops(&run("dftl", "paper"));
    let ideal = write_iops(&run("dftl", "ideal"));
    eprintln!("dftl: paper {paper:.0} IOPS, ideal {ideal:.0} IOPS");
    assert!(
        paper > 0.5 * ideal,
        "paper execution times {paper:.0} IOPS against {ideal:.0} with none"
    );
}
