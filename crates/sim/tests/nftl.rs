//! NFTL's behaviour against the claims of nftl-lookup-pagecache.txt, on a small device and a
//! synthetic stand-in for its traces (hot random sector writes and reads at queue depth 1):
//! the lookup table removes most OOB reads and improves reads much more than writes; the
//! page cache helps less; flash reads outnumber host reads; the RAM figures of section 5.

use flashlab_sim::config::ExperimentConfig;
use flashlab_sim::ftl::nftl::{lookup_table_bytes, Sizing};
use flashlab_sim::host::Op;
use flashlab_sim::stats::{build_report, Report};
use flashlab_sim::testing::sector_request;
use flashlab_sim::Simulation;

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

/// nftl-samsung's worst fold for 32 pages per block (`fold_clock.rs`): 64 OOB reads of 10 us,
/// 32 page reads of 36 us, 32 programs of 200 us each followed by its OOB data write of 200 us
/// (section 5 (3)), 2 erases of 2 ms.
const SAMSUNG_WORST_FOLD_NS: u64 =
    64 * 10_000 + 32 * 36_000 + 32 * (200_000 + 200_000) + 2 * 2_000_000;

#[test]
fn a_gc_fold_of_a_block_whose_replacement_holds_one_sector_is_the_predicted_worst() {
    // 16 blocks of 32 pages, 2 spare: 14 virtual blocks. Virtual block 0 is written in full,
    // then its last sector 32 times (its replacement block full of that one sector). One
    // sector of each other virtual block takes the free blocks; a rewrite then needs a
    // replacement block and GC folds block 0: a scan of all 32 replacement pages, an OOB read
    // of each of the 32 primary pages (the one the scan found too), 32 copies, 2 erases. The
    // bound, exactly.
    let sets = [
        "ftl.name=\"nftl\"",
        "geometry.blocks_per_plane=16",
        "ftl.over_provisioning=0.125",
        "run.precondition=0",
    ];
    for lookup in [false, true] {
        let lookup_set = format!("ftl.lookup_table={lookup}");
        let sets = [sets[0], sets[1], sets[2], sets[3], lookup_set.as_str()];
        let cfg =
            ExperimentConfig::with_sets("nftl-samsung", &sets).unwrap_or_else(|e| panic!("{e}"));
        let mut sim = Simulation::new(&cfg).unwrap_or_else(|e| panic!("{e}"));
        let mut requests = vec![sector_request(Op::Write, 0, 32)];
        requests.extend((0..32).map(|_| sector_request(Op::Write, 31, 1)));
        requests.extend((1..14).map(|vb| sector_request(Op::Write, vb * 32, 1)));
        requests.push(sector_request(Op::Write, 32, 1));
        for r in requests {
            sim.submit(r).unwrap_or_else(|e| panic!("{e}"));
            sim.run_until_idle().unwrap_or_else(|e| panic!("{e}"));
        }
        let report = build_report(&sim, serde_json::json!({ "kind": "hand" }));
        let merges = report.merges.expect("nftl reports merges");
        let counters = &report.ftl_details["counters"];
        assert_eq!(counters["gc_folds"], 1);
        assert_eq!(
            (merges.fold, merges.pages_copied, merges.erases),
            (1, 32, 2)
        );
        // Section 3.2 (iii): plain NFTL's GC reads the header of each of the 14 primary blocks
        // to find their replacement blocks (under `merge`); the rep-block table removes them.
        let gc_headers = if lookup { 0 } else { 14 };
        assert_eq!(
            counters["oob_reads_gc_header"], gc_headers,
            "lookup {lookup}"
        );
        assert_eq!(report.flash.oob_reads.merge, 64 + gc_headers);
        // Every page program is followed by its OOB data write: 78 host sector writes (32 + 32
        // + 13 + 1) and 32 copies, plus the headers of the two replacement blocks (block 0's and,
        // after GC, virtual block 1's).
        assert_eq!(counters["oob_data_programs"], 78 + 32);
        assert_eq!(report.flash.oob_programs.total, 78 + 32 + 2);
        assert_eq!(
            merges.predicted_worst_blocking_ns,
            Some(SAMSUNG_WORST_FOLD_NS)
        );
        assert_eq!(merges.blocking_ns.max, SAMSUNG_WORST_FOLD_NS);
    }
}

#[test]
fn no_fold_blocks_longer_than_predicted_on_a_fold_heavy_run_at_queue_depth_8() {
    // Random 512 B rewrites of a 90%-full device, queue depth 8 (other requests' commands
    // queued behind each fold): write folds and GC folds all the time.
    let report = run(
        32,
        &["workload.queue_depth=8", "workload.read_fraction=0.1"],
    );
    let merges = report.merges.expect("nftl reports merges");
    let predicted = merges
        .predicted_worst_blocking_ns
        .expect("nftl bounds its folds");
    assert_eq!(predicted, SAMSUNG_WORST_FOLD_NS);
    let gc_folds = report.ftl_details["counters"]["gc_folds"].as_u64().unwrap();
    eprintln!(
        "{} folds ({gc_folds} by GC): worst {} ns, mean {:.0} ns, predicted {predicted} ns ({:.1}%)",
        merges.fold,
        merges.blocking_ns.max,
        merges.blocking_ns.mean,
        100.0 * merges.blocking_ns.max as f64 / predicted as f64
    );
    assert!(merges.fold > 100 && gc_folds > 0, "{merges:?}");
    assert!(merges.blocking_ns.max <= predicted, "{merges:?}");
    // Hot random sectors leave many offsets in a replacement block, so the scan finds them
    // and few primary pages are checked: the worst fold comes within 10% of the bound.
    assert!(
        merges.blocking_ns.max as f64 >= 0.9 * predicted as f64,
        "{merges:?}"
    );
}
