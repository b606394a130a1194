//! The `web` and `fsbench` workload kinds: what their streams are made of (a browser cache's
//! files written whole and read back, hot FAT, directory and index writes; the benchmarks'
//! stream ending with them), their compact syntax and its errors.

use std::collections::HashMap;

use flashlab_sim::host::{Op, Request};
use flashlab_sim::workload::{parse_spec, RequestSource, SyntheticSource};
use flashlab_sim::{run_experiment, ExperimentConfig};

const MIB: u64 = 1 << 20;

fn stream(spec: &str, space_bytes: u64, seed: u64) -> Vec<Request> {
    let w = parse_spec(spec).unwrap_or_else(|e| panic!("{e}"));
    let mut s = SyntheticSource::new(&w, space_bytes, seed).unwrap_or_else(|e| panic!("{e}"));
    std::iter::from_fn(|| s.next_request(0).unwrap()).collect()
}

/// The browser cache: every read is of sectors the stream wrote before (a cached file);
/// most write requests are small; a hot set of metadata (FAT, directory, index) is
/// rewritten again and again, and files are written sequentially (one request starting where
/// the previous one ended).
#[test]
fn web_stream_is_small_files_written_whole_read_back_and_hot_metadata() {
    let space = 256 * MIB;
    let reqs = stream("web:qd=1,count=20000", space, 5);
    assert_eq!(reqs.len(), 20_000);
    let mut written = vec![false; (space / 512) as usize];
    let (mut reads, mut writes, mut sequential, mut small) = (0u64, 0u64, 0u64, 0u64);
    let mut rewrites: HashMap<u64, u32> = HashMap::new();
    let mut previous_end = u64::MAX;
    for r in &reqs {
        assert!(r.offset_bytes % 512 == 0 && r.len_bytes % 512 == 0, "{r:?}");
        assert!(r.len_bytes > 0 && r.len_bytes <= 64 << 10, "{r:?}");
        assert!(r.offset_bytes + r.len_bytes <= space, "{r:?}");
        let sectors =
            (r.offset_bytes / 512) as usize..((r.offset_bytes + r.len_bytes) / 512) as usize;
        match r.op {
            Op::Read => {
                reads += 1;
                assert!(
                    written[sectors].iter().all(|w| *w),
                    "read of sectors never written: {r:?}"
                );
            }
            Op::Write => {
                writes += 1;
                written[sectors].iter_mut().for_each(|w| *w = true);
                small += u64::from(r.len_bytes <= 8 << 10);
                sequential += u64::from(r.offset_bytes == previous_end);
                *rewrites.entry(r.offset_bytes).or_default() += 1;
                previous_end = r.offset_bytes + r.len_bytes;
            }
            other => panic!("the web model issued a {other:?}"),
        }
    }
    let read_share = reads as f64 / reqs.len() as f64;
    assert!((0.05..0.4).contains(&read_share), "reads {read_share}");
    assert!(
        small as f64 > 0.6 * writes as f64,
        "small writes {small} of {writes}"
    );
    assert!(
        sequential as f64 > 0.4 * writes as f64,
        "sequential {sequential} of {writes}"
    );
    // Hot metadata: offsets written 20 times or more carry a third of the writes.
    let hot: u32 = rewrites.values().filter(|&&n| n >= 20).sum();
    assert!(
        hot as f64 > 0.3 * writes as f64,
        "hot writes {hot} of {writes}"
    );
    assert_eq!(stream("web:qd=1,count=500", space, 5), reqs[..500].to_vec());
}

/// The benchmarks' stream ends with the benchmarks (before `count`), atopm stays in the first
/// quarter of the volume, and the stream is the one `experiment nftl` replays.
#[test]
fn fsbench_kind_replays_the_benchmarks_and_ends_with_them() {
    let space = 32 * MIB;
    let atopm = stream("fsbench:phases=atopm,qd=1", space, 2);
    let expected = flashlab_sim::workload::fsbench::generate(
        flashlab_sim::workload::FsTrace::AtoPm,
        space / 512,
        ((space / 512) as f64 * flashlab_sim::workload::FsTrace::AtoPm.top_share()) as u64,
        1.0,
        2,
    );
    assert_eq!(atopm.len(), expected.len());
    for (r, e) in atopm.iter().zip(&expected) {
        assert_eq!(
            (r.op, r.offset_bytes, r.len_bytes),
            (e.op, e.first_sector * 512, e.sectors * 512)
        );
    }
    let top = atopm
        .iter()
        .map(|r| r.offset_bytes + r.len_bytes)
        .max()
        .unwrap();
    assert!(top as f64 <= 0.24 * space as f64, "{top}");
    let combo = stream("fsbench:util=0.6,qd=1", space, 2);
    let top = combo
        .iter()
        .map(|r| r.offset_bytes + r.len_bytes)
        .max()
        .unwrap();
    assert!((0.5..=0.61).contains(&(top as f64 / space as f64)), "{top}");
    assert_eq!(
        stream("fsbench:phases=atopm,count=100", space, 2).len(),
        100
    );
}

#[test]
fn kinds_round_trip_and_errors_name_the_field_and_range() {
    for spec in [
        "web:cache=0.05,used=0.3,hit=0.2,qd=4",
        "fsbench:phases=atopm,util=0.5,qd=1",
    ] {
        let w = parse_spec(spec).unwrap();
        assert_eq!(
            parse_spec(&w.to_spec()).unwrap(),
            w,
            "{spec} -> {}",
            w.to_spec()
        );
    }
    let cases = [
        (
            "web:cache=2",
            "workload.web_cache_fraction",
            "0.0001 ..= 0.9",
        ),
        ("web:used=0.99", "workload.web_used_fraction", "0 ..= 0.95"),
        ("web:bs=4k", "workload.block_size", "web"),
        (
            "randwrite:hit=0.5",
            "workload.web_hit_fraction",
            "web workload only",
        ),
        (
            "fsbench:phases=andrew",
            "workload.fsbench_phases",
            "combo | atopm",
        ),
        (
            "fsbench:util=1.5",
            "workload.fsbench_utilisation",
            "0 ..= 1",
        ),
        (
            "fsbench:cache=0.1",
            "workload.web_cache_fraction",
            "web workload only",
        ),
        ("custom:pattern=web", "workload.pattern", "workload kind"),
    ];
    for (spec, field, allowed) in cases {
        let e = parse_spec(spec).unwrap_err().to_string();
        assert!(e.contains(field) && e.contains(allowed), "{spec}: {e}");
    }
    let w = parse_spec("web:count=10").unwrap();
    let e = SyntheticSource::new(&w, 8 * MIB, 1)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("workload.range_fraction") && e.contains("too small"),
        "{e}"
    );
    for spec in ["web:count=10", "fsbench:count=10"] {
        let w = parse_spec(spec).unwrap();
        let Err(e) = SyntheticSource::new(&w, 128 << 30, 1) else {
            panic!("{spec}: a 128 GiB FAT volume accepted")
        };
        let e = e.to_string();
        let named = e.contains("workload.range_fraction") && e.contains("64 GiB");
        assert!(named && e.contains("0.5"), "{spec}: {e}");
    }
}

/// Both kinds run on a block-mapped FTL with no other option than the workload.
#[test]
fn web_and_fsbench_run_on_kast() {
    for spec in [
        "web:qd=1,count=3000",
        "fsbench:phases=atopm,qd=1,count=3000",
    ] {
        let mut cfg = ExperimentConfig::with_sets(
            "kast-slc",
            &["ftl.name=\"kast\"", "geometry.blocks_per_plane=512"],
        )
        .unwrap();
        cfg.workload = parse_spec(spec).unwrap();
        let report = run_experiment(&cfg, &mut |_| {}).unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(report.host.all.count, 3000, "{spec}");
        assert!(report.merges.unwrap().total > 0, "{spec}");
    }
}
