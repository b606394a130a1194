//! The report's standard `map_cache` section (`ftl/mapcache.rs`): present for the demand-paged
//! FTLs (with a CTP level for the two-level caches), null for the others, counters of the
//! measured phase only, and `entries_per_flush` counting the dirty entries each translation
//! page write carries (what batching saves), per map-cache policy.

use flashlab_sim::config::ExperimentConfig;
use flashlab_sim::run_experiment;
use flashlab_sim::testing::{self, Options, Step};
use flashlab_sim::workload::parse_spec;

mod small_device;
use small_device::SMALL_DEVICE;

fn config(ftl: &str, extra: &[&str]) -> ExperimentConfig {
    let name = format!("ftl.name=\"{ftl}\"");
    let mut sets = SMALL_DEVICE.to_vec();
    sets.push(&name);
    sets.extend_from_slice(extra);
    ExperimentConfig::with_sets("default", &sets).unwrap_or_else(|e| panic!("{ftl}: {e}"))
}

fn check_level(ftl: &str, name: &str, level: &serde_json::Value) {
    let (lookups, hits) = (level["lookups"].as_u64(), level["hits"].as_u64());
    let (Some(lookups), Some(hits)) = (lookups, hits) else {
        panic!("{ftl} {name}: {level}");
    };
    assert!(lookups > 0 && hits <= lookups, "{ftl} {name}: {level}");
    let ratio = level["hit_ratio"].as_f64().unwrap();
    assert!(
        (ratio - hits as f64 / lookups as f64).abs() < 1e-12,
        "{ftl} {name}: {level}"
    );
    let occupied = level["occupied_entries"].as_u64().unwrap();
    assert!(occupied <= level["capacity_entries"].as_u64().unwrap());
}

/// A half-preconditioned device of 512-byte pages (128 entries per translation page), 2,000
/// random reads and writes of one mapping unit (one lookup each).
#[test]
fn map_cache_is_a_standard_section_of_the_measured_phase() {
    const REQUESTS: u64 = 2000;
    for ftl in ["pagemap", "dftl", "cdftl", "fmmu"] {
        let cache: &[&str] = match ftl {
            "pagemap" => &["ftl.mapping_unit_bytes=512"],
            _ => &["ftl.cmt_bytes=1024"],
        };
        let small_pages = ["geometry.page_bytes=512", "geometry.blocks_per_plane=64"];
        let mut cfg = config(
            ftl,
            &[&["run.precondition=0.5"], &small_pages[..], cache].concat(),
        );
        cfg.workload = parse_spec(&format!("randrw:bs=512,count={REQUESTS}")).unwrap();
        let report = run_experiment(&cfg, &mut |_| {})
            .unwrap_or_else(|e| panic!("{ftl}: {e}"))
            .to_json();
        let mc = &report["map_cache"];
        assert!(
            report["ftl_details"].get("map_cache").is_none(),
            "{ftl}: a free-form copy left in ftl_details"
        );
        if ftl == "pagemap" {
            assert!(mc.is_null(), "pagemap has no map cache: {mc}");
            continue;
        }
        check_level(ftl, "cmt", &mc["cmt"]);
        let lookups = mc["cmt"]["lookups"].as_u64().unwrap();
        assert!(
            lookups <= REQUESTS,
            "{ftl}: {lookups} lookups for {REQUESTS} requests: preconditioning counted"
        );
        assert!(mc["translation_reads"].as_u64() > Some(0), "{ftl}: {mc}");
        let flushes = mc["flushes"].as_u64().unwrap();
        let entries = mc["entries_flushed"].as_u64().unwrap();
        let per_flush = mc["entries_per_flush"].as_f64().unwrap();
        assert!(flushes > 0 && (per_flush - entries as f64 / flushes as f64).abs() < 1e-12);
        if ftl == "dftl" {
            assert!(mc["ctp"].is_null(), "dftl has one level: {mc}");
        } else {
            check_level(ftl, "ctp", &mc["ctp"]);
            let ctp_lookups = mc["ctp"]["lookups"].as_u64().unwrap();
            let cmt_misses = lookups - mc["cmt"]["hits"].as_u64().unwrap();
            // CMT misses go to the CTP, except those waiting on a CMT block already loading.
            assert!(
                ctp_lookups <= cmt_misses && ctp_lookups + 100 > cmt_misses,
                "{ftl}: CMT misses go to the CTP: {mc}"
            );
        }
    }
}

/// Writes to one entry of every translation page in turn (a stride of a whole page), with a
/// cache too small to hold them: each translation page write carries exactly one dirty
/// entry, for every policy. (A two-level cache that wrote whole CTP pages reported a whole
/// page of entries per flush.)
#[test]
fn entries_per_flush_counts_the_dirty_entries_written_back() {
    for ftl in ["dftl", "cdftl", "fmmu"] {
        let cfg = config(
            ftl,
            &[
                "run.precondition=0.0",
                "geometry.page_bytes=512",
                "geometry.blocks_per_plane=64",
                "ftl.cmt_bytes=64",
                "ftl.cache_ways=1",
                "ftl.ctp_bytes=512",
            ],
        );
        let options = Options {
            final_readback: false,
            ..Options::new(1)
        };
        let probe = testing::run_steps_with(&cfg, &[], &options).unwrap();
        let per_page = probe.ftl_report["entries_per_translation_page"]
            .as_u64()
            .unwrap();
        let pages = probe.ftl_report["translation_pages"].as_u64().unwrap();
        let unit_sectors = probe.ftl_report["mapping_unit_bytes"].as_u64().unwrap() / 512;
        assert!(pages >= 8, "{ftl}: {pages} translation pages");
        let steps: Vec<Step> = (0..3 * pages)
            .map(|k| Step::Write {
                offset_sectors: (k % pages) * per_page * unit_sectors,
                sectors: unit_sectors,
            })
            .collect();
        let o = testing::run_steps_with(&cfg, &steps, &options).unwrap_or_else(|e| panic!("{e}"));
        let mc = o.map_cache.expect("a map cache");
        assert!(mc.flushes >= pages, "{ftl}: {mc:?}");
        assert_eq!(mc.entries_per_flush, 1.0, "{ftl}: {mc:?}");
    }
}

/// FMMU's map unit under random writes with GC (fmmu.txt 4.6): host lookups and updates wait
/// in the host request queue, translation loads' completions in the response queue, GC's
/// CondUpdates in the GC request queue, whichever arbiter; FTLs on cores have no map unit.
#[test]
fn fmmu_map_unit_work_is_split_by_queue() {
    for (ftl, arbiter) in [("fmmu", "wrr"), ("fmmu", "fifo"), ("dftl", "wrr")] {
        let arbiter = format!("ftl.map_unit_arbiter=\"{arbiter}\"");
        let mut cfg = config(
            ftl,
            &["run.precondition=0.9", "ftl.cmt_bytes=1024", &arbiter],
        );
        cfg.workload = parse_spec("randwrite:bs=4k,count=4000,qd=32").unwrap();
        let report = run_experiment(&cfg, &mut |_| {})
            .unwrap_or_else(|e| panic!("{ftl} {arbiter}: {e}"))
            .to_json();
        let queues = &report["utilisation"]["map_unit_queues"];
        if ftl == "dftl" {
            assert!(queues.is_null(), "dftl runs on the cores: {queues}");
            continue;
        }
        assert!(
            report["gc"]["gc_units_moved"].as_u64() > Some(0),
            "GC copied units"
        );
        for queue in ["host_request", "gc_request", "response"] {
            let q = &queues[queue];
            assert!(q["jobs"].as_u64() > Some(0), "{arbiter} {queue}: {queues}");
            assert!(q["busy_ns"].as_u64() >= q["jobs"].as_u64(), "{queues}");
        }
        let busy = |queue: &str| queues[queue]["busy_ns"].as_u64().unwrap();
        let update_ns = report["ftl_details"]["exec_time"]["update_ns"]
            .as_u64()
            .unwrap();
        // Each write's lookup and update: a host request, or a response when a translation
        // load released it.
        assert!(
            busy("host_request") + busy("response") >= 4000 * 2 * update_ns,
            "{queues}"
        );
        let moved = report["gc"]["gc_units_moved"].as_u64().unwrap();
        let lost = report["map_cache"]["cond_updates_lost"].as_u64().unwrap();
        assert!(
            busy("gc_request") >= (moved - lost) * update_ns,
            "one CondUpdate per copy kept: {queues}"
        );
    }
}
