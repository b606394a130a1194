//! NFTL's behaviour against the claims of nftl-lookup-pagecache.txt, on a small device and a
//! synthetic stand-in for its traces (hot random sector writes and reads at queue depth 1):
//! the lookup table removes most OOB reads and improves reads much more than writes; the
//! page cache helps less; flash reads outnumber host reads; the RAM figures of section 5.

use flashlab_sim::config::ExperimentConfig;
use flashlab_sim::ftl::nftl::{lookup_table_bytes, Sizing};
use flashlab_sim::stats::Report;

fn run(pages_per_block: u32, extra: &[&str]) -> Report {
    let ppb = format!("geometry.pages_per_block={pages_per_block}");
    let blocks = format!("geometry.blocks_per_plane={}", 4096 / pages_per_block);
    let mut sets = vec![
        "ftl.name=\"nftl\"",
        ppb.as_str(),
        blocks.as_str(),
        "ftl.over_provisioning=0.03",
        "run.precondition=0.9",
        "run.precondition_max_passes=1",
        "workload.block_size=512",
        "workload.align_bytes=512",
        "workload.read_fraction=0.3",
        "workload.queue_depth=1",
        "workload.count=4000",
        "workload.pattern=\"hotcold\"",
    ];
    sets.extend_from_slice(extra);
    let cfg = ExperimentConfig::with_sets("nftl-samsung", &sets).unwrap_or_else(|e| panic!("{e}"));
    flashlab_sim::run_experiment(&cfg, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"))
}

fn oob_reads(r: &Report) -> u64 {
    r.flash.oob_reads.total
}

#[test]
fn lookup_table_removes_most_oob_reads_and_helps_reads_more_than_writes() {
    for ppb in [16, 32] {
        let plain = run(ppb, &[]);
        let lookup = run(ppb, &["ftl.lookup_table=true"]);
        let saved = 1.0 - oob_reads(&lookup) as f64 / oob_reads(&plain) as f64;
        let gain = |a: f64, b: f64| (a - b) / a;
        let read_gain = gain(
            plain.host.read.latency_ns.mean,
            lookup.host.read.latency_ns.mean,
        );
        let write_gain = gain(
            plain.host.write.latency_ns.mean,
            lookup.host.write.latency_ns.mean,
        );
        eprintln!("ppb {ppb}: OOB reads saved {saved:.3}, read gain {read_gain:.3}, write gain {write_gain:.3}");
        // On this fold-heavy stand-in the fold scans (which the lookup table never helps,
        // Table 2) keep many OOB reads; the host path's header and page-status reads go.
        let host_saved =
            1.0 - lookup.flash.oob_reads.host as f64 / plain.flash.oob_reads.host as f64;
        eprintln!("ppb {ppb}: host-path OOB reads saved {host_saved:.3}");
        assert!(
            saved > 0.15 && host_saved > 0.5,
            "ppb {ppb}: lookup table saved only {saved:.3} of OOB reads ({host_saved:.3} on the host path)"
        );
        assert!(
            read_gain > 2.0 * write_gain,
            "ppb {ppb}: read {read_gain:.3} write {write_gain:.3}"
        );
        assert!(read_gain > 0.1, "ppb {ppb}: read gain {read_gain:.3}");
        // The page cache at the lookup table's RAM saves fewer OOB reads than the lookup table.
        let sizing = Sizing {
            physical_blocks: 0,
            virtual_blocks: plain.ftl_details["virtual_blocks"].as_u64().unwrap() as u32,
            pages_per_block: ppb,
        };
        let entries = format!("ftl.page_cache_entries={}", lookup_table_bytes(&sizing) / 8);
        let cache = run(ppb, &[entries.as_str()]);
        let cache_saved = 1.0 - oob_reads(&cache) as f64 / oob_reads(&plain) as f64;
        eprintln!("ppb {ppb}: page cache saved {cache_saved:.3}");
        assert!(
            cache_saved > 0.0 && cache_saved < saved,
            "ppb {ppb}: cache {cache_saved:.3} lookup {saved:.3}"
        );
        // Folds make the flash read more pages than the host asked for.
        assert!(plain.flash.reads.total > plain.host.read.count, "ppb {ppb}");
    }
}

#[test]
fn ram_of_the_lookup_table_matches_section_5_for_a_34_mb_flash() {
    // 34 MB of 512-byte pages: 4352 blocks of 8 KiB, 2176 of 16 KiB.
    let s8 = Sizing {
        physical_blocks: 4352,
        virtual_blocks: 4352,
        pages_per_block: 16,
    };
    let s16 = Sizing {
        physical_blocks: 2176,
        virtual_blocks: 2176,
        pages_per_block: 32,
    };
    assert_eq!(lookup_table_bytes(&s8), 26_112);
    assert_eq!(lookup_table_bytes(&s16), 17_408);
}

#[test]
fn partial_page_writes_to_never_written_blocks_of_a_fresh_device() {
    // Regression: the old copy of a page whose virtual block had no primary block yet was looked
    // up at a page number computed from the "no block" marker (an overflow, found replaying
    // tpcc on a fresh device). 512 B writes into 4 KiB pages: every write is a partial one.
    let sets = [
        "ftl.name=\"nftl\"",
        "nand.program_order=\"any\"",
        "nand.partial_programs_per_page=3",
        "geometry.pages_per_block=64",
        "geometry.blocks_per_plane=64",
        "run.precondition=0",
        "run.verify=true",
        "workload.block_size=512",
        "workload.align_bytes=512",
        "workload.read_fraction=0.3",
        "workload.count=3000",
    ];
    let cfg = ExperimentConfig::with_sets("default", &sets).unwrap_or_else(|e| panic!("{e}"));
    let report = flashlab_sim::run_experiment(&cfg, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.host.all.count, 3000);
    let counters = &report.ftl_details["counters"];
    assert!(counters["rmw_reads"].as_u64().unwrap() > 0, "{counters}");
    assert!(report.verified_sectors.unwrap() > 0);
}
