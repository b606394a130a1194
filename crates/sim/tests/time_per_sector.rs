//! The report's time per sector (`host.{read,write}.latency_per_sector_ns`,
//! nftl-lookup-pagecache.txt Table 5's metric) against a run worked out by hand: NFTL with its
//! lookup table on the `nftl-samsung` chip, requests one at a time, no host-link time, so each
//! latency is the sum of its flash commands.

use flashlab_sim::config::ExperimentConfig;
use flashlab_sim::host::Op;
use flashlab_sim::stats::{build_report, render_table};
use flashlab_sim::testing::sector_request;
use flashlab_sim::Simulation;

/// nftl-samsung's commands with their bus transfers (512 B at 20 MB/s: 25.6 us; 16 B: 0.8 us).
const PAGE_READ_NS: f64 = 10_400.0 + 25_600.0;
const PAGE_PROGRAM_NS: f64 = 25_600.0 + 174_400.0;
const OOB_PROGRAM_NS: f64 = 800.0 + 199_200.0;
const OOB_READ_NS: f64 = 9_200.0 + 800.0;

#[test]
fn time_per_sector_is_the_latency_sum_over_the_sectors_moved() {
    let sets = [
        "ftl.name=\"nftl\"",
        "ftl.lookup_table=true",
        "run.precondition=0",
        "host.data_over_link=false",
        "host.command_bytes=0",
        "host.completion_bytes=0",
        "host.command_overhead_ns=0",
    ];
    let cfg = ExperimentConfig::with_sets("nftl-samsung", &sets).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(&cfg).unwrap_or_else(|e| panic!("{e}"));
    // Writes: four new sectors (four programs into the primary block); then sector 0 again
    // (a replacement block: its header programmed into the primary's spare, then the page),
    // each page program followed by its OOB data write.
    // Reads: sectors 1-2, then 3. The lookup table spares the header and page-status OOB
    // reads, not the backward search of the replacement block (its one page), so each sector
    // is an OOB read and a page read of the primary.
    for r in [
        sector_request(Op::Write, 0, 4),
        sector_request(Op::Write, 0, 1),
        sector_request(Op::Read, 1, 2),
        sector_request(Op::Read, 3, 1),
    ] {
        sim.submit(r).unwrap_or_else(|e| panic!("{e}"));
        sim.run_until_idle().unwrap_or_else(|e| panic!("{e}"));
    }
    let report = build_report(&sim, serde_json::json!({ "kind": "hand" }));
    // Every page program is followed by its OOB data write (section 5 (3): "page data write
    // + OOB data write").
    let writes_ns = 5.0 * (PAGE_PROGRAM_NS + OOB_PROGRAM_NS) + OOB_PROGRAM_NS;
    let reads_ns = 3.0 * (OOB_READ_NS + PAGE_READ_NS);
    let (write, read) = (&report.host.write, &report.host.read);
    assert_eq!((write.count, read.count), (2, 2));
    // Per sector: 2,200 us over 5 sectors, 138 us over 3; per request it would be 1,100 and 69.
    assert_eq!(
        write.latency_per_sector_ns,
        Some(writes_ns / 5.0),
        "{write:?}"
    );
    assert_eq!(read.latency_per_sector_ns, Some(reads_ns / 3.0), "{read:?}");
    // The mean latency is exact too (the histogram keeps 3 significant digits).
    assert_eq!(write.latency_ns.mean, writes_ns / 2.0, "{write:?}");
    assert_eq!(read.latency_ns.mean, reads_ns / 2.0, "{read:?}");
    let all = &report.host.all;
    assert_eq!(all.latency_ns.mean, (writes_ns + reads_ns) / 4.0, "{all:?}");
    // Only reads and writes carry it.
    let json = report.to_json();
    for kind in ["trim", "flush", "all"] {
        assert!(json["host"][kind].get("latency_per_sector_ns").is_none());
    }
    let table = render_table(&report);
    assert!(
        table.contains(
            "time per 512 B sector (latencies / sectors moved): read 46.00 us, write 440.00 us"
        ),
        "{table}"
    );
}

#[test]
fn time_per_sector_counts_host_sectors_not_requests_or_pages() {
    // 4 KiB host sectors on 8 KiB pages: a 16 KiB read is 4 sectors, not 1 request or 2 pages.
    let sets = [
        "host.sector_bytes=4096",
        "workload.pattern=\"uniform\"",
        "workload.read_fraction=1.0",
        "workload.block_size=16384",
        "workload.align_bytes=16384",
        "workload.queue_depth=1",
        "workload.count=50",
        "run.precondition=0.2",
    ];
    let cfg = ExperimentConfig::with_sets("default", &sets).unwrap_or_else(|e| panic!("{e}"));
    let report = flashlab_sim::run_experiment(&cfg, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let read = &report.host.read;
    let per_sector = read.latency_per_sector_ns.expect("reads carry it");
    let expected = read.latency_ns.mean / 4.0;
    assert!(
        (per_sector - expected).abs() <= expected * 0.002,
        "per sector {per_sector}, mean latency / 4 = {expected}"
    );
    assert_eq!(report.host.write.latency_per_sector_ns, Some(0.0));
}

/// The mean latencies are exact on a busy random run (odd latencies the histogram rounds),
/// against the sum of the completed requests' latencies as an observer sees them.
#[test]
fn mean_latencies_are_the_exact_sums_over_the_counts() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let sets = [
        "geometry.blocks_per_plane=16",
        "ftl.over_provisioning=0.25",
        "run.precondition=0",
        "workload.count=3000",
        "workload.queue_depth=16",
    ];
    let cfg = ExperimentConfig::with_sets("default", &sets).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(&cfg).unwrap_or_else(|e| panic!("{e}"));
    let sums = Rc::new(RefCell::new([(0u128, 0u64); 2]));
    let sink = sums.clone();
    sim.set_observer(Box::new(move |c| {
        let i = usize::from(c.op == Op::Write);
        let mut s = sink.borrow_mut();
        s[i].0 += u128::from(c.completion_ns - c.arrival_ns);
        s[i].1 += 1;
    }));
    let source = flashlab_sim::workload_source(&cfg, &sim).unwrap_or_else(|e| panic!("{e}"));
    let source = sim
        .run(source, &mut |_| {})
        .unwrap_or_else(|e| panic!("{e}"));
    let report = build_report(&sim, source.describe());
    let [(read_sum, reads), (write_sum, writes)] = *sums.borrow();
    assert!(reads > 0 && writes > 0);
    let exact = |sum: u128, n: u64| sum as f64 / n as f64;
    assert_eq!(report.host.read.latency_ns.mean, exact(read_sum, reads));
    assert_eq!(report.host.write.latency_ns.mean, exact(write_sum, writes));
    let all = exact(read_sum + write_sum, reads + writes);
    assert_eq!(report.host.all.latency_ns.mean, all);
}
