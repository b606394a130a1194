//! The desktop workload (`flashlab_sim::workload::desktop`): the figures it is built to have,
//! measured over long runs, as a trace generator and as the `desktop` workload kind.

use flashlab_sim::host::{Op, Request};
use flashlab_sim::workload::desktop::{
    CLUSTER_BYTES, MAX_REQUEST_BYTES, WORKLOAD_FOOTPRINT_FRACTION,
};
use flashlab_sim::workload::{
    parse_spec, DesktopTrace, LoopMode, RequestSource, SyntheticSource, WorkloadConfig,
};
use flashlab_sim::{run_experiment, ExperimentConfig};
use roaring::RoaringTreemap;

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// What a stream of requests looks like.
#[derive(Debug)]
struct Figures {
    read_bytes: u64,
    write_bytes: u64,
    median_bytes: u64,
    /// Share of bytes moved by requests of 64 KiB or more.
    large_byte_share: f64,
    /// Share of requests starting where the previous one ended.
    sequential_share: f64,
    /// Distinct 4 KiB units touched, in bytes.
    footprint_bytes: u64,
    /// Writes of units written before.
    overwritten_bytes: u64,
    highest_byte: u64,
}

impl Figures {
    fn ratio(&self) -> f64 {
        self.write_bytes as f64 / self.read_bytes as f64
    }
}

fn figures(requests: &[Request]) -> Figures {
    let mut sizes: Vec<u64> = requests.iter().map(|r| r.len_bytes).collect();
    sizes.sort_unstable();
    let (mut read_bytes, mut write_bytes, mut large, mut sequential) = (0, 0, 0, 0);
    let mut touched = RoaringTreemap::new();
    let mut written = RoaringTreemap::new();
    let mut overwritten_bytes = 0;
    let mut previous_end = u64::MAX;
    let mut highest_byte = 0;
    for r in requests {
        match r.op {
            Op::Read => read_bytes += r.len_bytes,
            Op::Write => write_bytes += r.len_bytes,
            other => panic!("the desktop model issued a {other:?}"),
        }
        if r.len_bytes >= 64 << 10 {
            large += r.len_bytes;
        }
        sequential += u64::from(r.offset_bytes == previous_end);
        let end = r.offset_bytes + r.len_bytes;
        previous_end = end;
        highest_byte = highest_byte.max(end);
        let units = r.offset_bytes / CLUSTER_BYTES..end / CLUSTER_BYTES;
        touched.insert_range(units.clone());
        if r.op == Op::Write {
            for u in units {
                if !written.insert(u) {
                    overwritten_bytes += CLUSTER_BYTES;
                }
            }
        }
    }
    Figures {
        read_bytes,
        write_bytes,
        median_bytes: sizes[sizes.len() / 2],
        large_byte_share: large as f64 / (read_bytes + write_bytes) as f64,
        sequential_share: sequential as f64 / requests.len() as f64,
        footprint_bytes: touched.len() * CLUSTER_BYTES,
        overwritten_bytes,
        highest_byte,
    }
}

fn trace(partition: u64, footprint: u64, seed: u64, n: usize) -> Vec<Request> {
    let mut t = DesktopTrace::new(partition, footprint, 100.0, seed).unwrap();
    (0..n).map(|_| t.next_request()).collect()
}

fn workload(spec: &str, logical_bytes: u64, seed: u64) -> Vec<Request> {
    let w = parse_spec(spec).unwrap();
    let mut s = SyntheticSource::new(&w, logical_bytes, seed).unwrap();
    std::iter::from_fn(|| s.next_request(0).unwrap()).collect()
}

/// The desktop kind's settings with `sets` changed, as a configuration file would.
fn config_with(sets: &[(&str, toml::Value)]) -> WorkloadConfig {
    let mut table = toml::Table::try_from(parse_spec("desktop:count=1000").unwrap()).unwrap();
    for (key, value) in sets {
        table.insert(key.to_string(), value.clone());
    }
    table.try_into().unwrap()
}

// ---------------------------------------------------------------------------------------------
// The stream's figures (trace generator)
// ---------------------------------------------------------------------------------------------

#[test]
fn same_seed_same_stream_other_seed_other_stream() {
    let a = trace(256 * GIB, 3 * GIB, 7, 20_000);
    assert_eq!(a, trace(256 * GIB, 3 * GIB, 7, 20_000));
    assert_ne!(a, trace(256 * GIB, 3 * GIB, 8, 20_000));
}

#[test]
fn bytes_written_over_bytes_read_is_the_papers() {
    // multithreaded-ftl-ucos.txt Table 2: 371 GB written, 282 GB read (1.32).
    for seed in 1..=6 {
        let f = figures(&trace(256 * GIB, 3 * GIB, seed, 100_000));
        assert!(
            (1.15..=1.5).contains(&f.ratio()),
            "seed {seed}: written/read {:.3}\n{f:?}",
            f.ratio()
        );
    }
    let f = figures(&trace(256 * GIB, 3 * GIB, 99, 400_000));
    assert!(
        (1.25..=1.4).contains(&f.ratio()),
        "long run: written/read {:.3}\n{f:?}",
        f.ratio()
    );
}

#[test]
fn most_requests_are_small_most_bytes_large_some_sequential() {
    for seed in [1, 2, 3] {
        let f = figures(&trace(256 * GIB, 3 * GIB, seed, 100_000));
        assert!(f.median_bytes <= 16 << 10, "seed {seed}: {f:?}");
        assert!(f.large_byte_share >= 0.7, "seed {seed}: {f:?}");
        assert!(
            (0.25..=0.6).contains(&f.sequential_share),
            "seed {seed}: {f:?}"
        );
    }
}

#[test]
fn requests_are_whole_aligned_4k_units_of_at_most_1_mib() {
    let partition = 100 * GIB + 1234;
    for r in trace(partition, 2 * GIB, 3, 100_000) {
        assert_eq!(r.offset_bytes % CLUSTER_BYTES, 0, "{r:?}");
        assert_eq!(r.len_bytes % CLUSTER_BYTES, 0, "{r:?}");
        assert!(
            (CLUSTER_BYTES..=MAX_REQUEST_BYTES).contains(&r.len_bytes),
            "{r:?}"
        );
        assert!(r.offset_bytes + r.len_bytes <= partition, "{r:?}");
        assert_eq!(r.deadline_ns, 0);
    }
}

#[test]
fn footprint_stays_within_its_bound_with_holes_between() {
    // A long run on a small footprint: files are created and deleted many times over.
    let f = figures(&trace(8 * GIB, 64 * MIB, 5, 200_000));
    assert!(f.footprint_bytes <= 64 * MIB, "{f:?}");
    assert!(
        f.footprint_bytes > 48 * MIB,
        "most of the footprint is used: {f:?}"
    );
    assert!(
        f.overwritten_bytes > 10 * f.footprint_bytes,
        "space is rewritten many times: {f:?}"
    );
    assert!(
        f.highest_byte > 4 * GIB,
        "holes spread it over the partition: {f:?}"
    );
    // The paper's setting: a large partition, a few GiB touched.
    let f = figures(&trace(256 * GIB, 3 * GIB, 6, 300_000));
    assert!(f.footprint_bytes <= 3 * GIB, "{f:?}");
    assert!(f.highest_byte > 128 * GIB, "{f:?}");
    assert!(f.overwritten_bytes > GIB, "{f:?}");
}

#[test]
fn trace_arrivals_come_in_bursts_at_the_mean_rate() {
    let mut t = DesktopTrace::new(256 * GIB, 3 * GIB, 200.0, 1).unwrap();
    let times: Vec<u64> = (0..200_000).map(|_| t.next_request().arrival_ns).collect();
    let mean_gap = *times.last().unwrap() as f64 / (times.len() - 1) as f64;
    assert!((4e6..6e6).contains(&mean_gap), "mean gap {mean_gap} ns");
    let gaps: Vec<u64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    let idle = gaps.iter().filter(|&&g| g as f64 > 10.0 * mean_gap).count();
    let busy = gaps
        .iter()
        .filter(|&&g| (g as f64) < 0.2 * mean_gap)
        .count();
    assert!(busy > gaps.len() * 9 / 10, "{busy} short gaps");
    assert!((500..5000).contains(&idle), "{idle} idle gaps");
}

// ---------------------------------------------------------------------------------------------
// The `desktop` workload kind
// ---------------------------------------------------------------------------------------------

#[test]
fn workload_kind_closed_loop_within_its_footprint() {
    let logical = 4 * GIB;
    let reqs = workload("desktop:qd=8,count=1e5", logical, 3);
    assert_eq!(reqs.len(), 100_000);
    let f = figures(&reqs);
    assert!((1.15..=1.5).contains(&f.ratio()), "{f:?}");
    assert!(f.median_bytes <= 16 << 10, "{f:?}");
    assert!(f.highest_byte <= logical, "{f:?}");
    assert!(
        f.footprint_bytes as f64 <= logical as f64 * WORKLOAD_FOOTPRINT_FRACTION,
        "{f:?}"
    );
    let w = parse_spec("desktop:qd=8,count=1e5,range=0.5").unwrap();
    let mut s = SyntheticSource::new(&w, logical, 3).unwrap();
    assert_eq!(s.loop_mode(), LoopMode::Closed { queue_depth: 8 });
    let mut touched = 0;
    while let Some(r) = s.next_request(0).unwrap() {
        assert!(r.offset_bytes + r.len_bytes <= logical / 2, "{r:?}");
        touched += 1;
    }
    assert_eq!(touched, 100_000);
    let d = s.describe();
    assert_eq!(d["spec"], "desktop:qd=8,count=100000,range=0.5");
    assert!(d["footprint_bytes"].as_u64().unwrap() <= (logical as f64 * 0.5 * 0.6) as u64);
}

#[test]
fn workload_kind_same_seed_same_stream() {
    let a = workload("desktop:count=20000", 4 * GIB, 11);
    assert_eq!(a, workload("desktop:count=20000", 4 * GIB, 11));
    assert_ne!(a, workload("desktop:count=20000", 4 * GIB, 12));
}

#[test]
fn workload_kind_open_loop_is_bursty_and_keeps_the_requests() {
    let open = workload("desktop:rate=1000,count=50000", 4 * GIB, 2);
    let closed = workload("desktop:count=50000", 4 * GIB, 2);
    let strip = |v: &[Request]| -> Vec<(Op, u64, u64)> {
        v.iter()
            .map(|r| (r.op, r.offset_bytes, r.len_bytes))
            .collect()
    };
    assert_eq!(
        strip(&open),
        strip(&closed),
        "pacing does not change the requests"
    );
    assert!(open.windows(2).all(|w| w[0].arrival_ns <= w[1].arrival_ns));
    let mean_gap = open.last().unwrap().arrival_ns as f64 / (open.len() - 1) as f64;
    assert!(
        (0.75e6..1.25e6).contains(&mean_gap),
        "mean gap {mean_gap} ns"
    );
    // Poisson and fixed arrivals are still available.
    let fixed = workload("desktop:rate=1000,arrival=fixed,count=10", 4 * GIB, 2);
    assert_eq!(fixed[9].arrival_ns, 9_000_000);
    let w = parse_spec("desktop:rate=1000,count=10,deadline=5ms,duration=1s").unwrap();
    let s = SyntheticSource::new(&w, 4 * GIB, 2).unwrap();
    assert_eq!(s.loop_mode(), LoopMode::Open);
    assert_eq!(s.duration_ns(), Some(1_000_000_000));
}

#[test]
fn workload_kind_refuses_keys_that_do_not_apply() {
    for (key, field) in [
        ("bs=4k", "workload.block_size"),
        ("read=0.5", "workload.read_fraction"),
        ("trim=0.1", "workload.trim_fraction"),
        ("flush=10", "workload.flush_every"),
        ("pattern=uniform", "workload.pattern"),
        ("theta=1.1", "workload.zipf_theta"),
        ("hot=0.2:0.8", "workload.hot_space"),
        ("align=8k", "workload.align_bytes"),
        ("block_size=4k", "workload.block_size"),
    ] {
        let spec = format!("desktop:qd=4,{key}");
        let e = parse_spec(&spec).unwrap_err().to_string();
        let name = key.split('=').next().unwrap();
        assert!(
            e.contains(field) && e.contains(&format!("`{name}`")) && e.contains("desktop"),
            "{spec}: {e}"
        );
    }
    // The same through a configuration file: fields left at their defaults pass, others not.
    assert!(config_with(&[]).validate().is_ok());
    for (key, value) in [
        ("read_fraction", toml::Value::Float(0.3)),
        ("block_size", toml::Value::String("64k".into())),
        ("trim_fraction", toml::Value::Float(0.2)),
        ("hot_access", toml::Value::Float(0.5)),
    ] {
        let e = config_with(&[(key, value)])
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("workload.{key}")) && e.contains("desktop"),
            "{key}: {e}"
        );
    }
    // `pattern=desktop` is a kind, not a pattern.
    let e = parse_spec("custom:pattern=desktop")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("workload.pattern") && e.contains("--workload desktop"),
        "{e}"
    );
}

#[test]
fn workload_kind_needs_room() {
    let w = parse_spec("desktop:count=10").unwrap();
    let e = SyntheticSource::new(&w, 40 * MIB, 1)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("workload.range_fraction") && e.contains("too small"),
        "{e}"
    );
    let w = parse_spec("desktop:count=10,range=0.001").unwrap();
    let e = SyntheticSource::new(&w, 16 * GIB, 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("workload.range_fraction"), "{e}");
}

#[test]
fn workload_kind_runs_on_the_mt_board_with_every_read_checked() {
    let config = ExperimentConfig::with_sets(
        "mt-board",
        &[
            "workload.pattern=\"desktop\"",
            "workload.arrival=\"bursty\"",
            "workload.count=20000",
            "workload.queue_depth=8",
            "run.precondition=0.0",
            "run.functional_only=true",
            "run.verify=true",
        ],
    )
    .unwrap();
    let r = run_experiment(&config, &mut |_| {}).unwrap();
    assert_eq!(r.host.all.count, 20_000);
    assert!(
        r.host.write.bytes > r.host.read.bytes,
        "written {} read {}",
        r.host.write.bytes,
        r.host.read.bytes
    );
}

/// The figures of a few streams, for the documentation:
/// `cargo test -p flashlab-sim --test desktop_workload -- --ignored --nocapture`.
#[test]
#[ignore]
fn print_figures() {
    for (seed, n) in [(1, 100_000), (2, 100_000), (3, 100_000), (99, 1_000_000)] {
        let f = figures(&trace(256 * GIB, 3 * GIB, seed, n));
        println!(
            "seed {seed}, {n} requests: written/read {:.3}, median {} B, sequential {:.1}%, \
             bytes in requests >= 64 KiB {:.1}%, footprint {:.2} GiB, rewritten {:.2} GiB",
            f.ratio(),
            f.median_bytes,
            f.sequential_share * 100.0,
            f.large_byte_share * 100.0,
            f.footprint_bytes as f64 / GIB as f64,
            f.overwritten_bytes as f64 / GIB as f64
        );
    }
}

/// Settings the desktop model makes for itself are refused from a config file too (not only
/// in the `--workload` form), naming the field and the default it must keep.
#[test]
fn desktop_config_refuses_settings_its_model_makes() {
    let base = ["workload.pattern=\"desktop\""];
    assert!(ExperimentConfig::with_sets("default", &base).is_ok());
    for (set, field) in [
        ("workload.read_fraction=0.9", "workload.read_fraction"),
        ("workload.block_size=\"8k\"", "workload.block_size"),
        ("workload.hot_access=0.5", "workload.hot_access"),
    ] {
        let err = ExperimentConfig::with_sets("default", &[base[0], set])
            .expect_err(set)
            .to_string();
        assert!(
            err.contains(field) && err.contains("does not apply to the desktop workload"),
            "{set}: {err}"
        );
    }
}
