//! System-level behaviour of the engine: the FTL CPU model, host command overhead, closed and
//! open loops, background GC, die-queue policies, flush, determinism and independence of
//! simulations running side by side.

use flashlab_sim::{run_experiment, ExperimentConfig, Report};

/// A small fast device: 2 channels x 2 dies, 4 KiB pages, tR 10 us, fast bus and link, so the
/// resource a test studies is the bottleneck.
fn small(extra: &[&str]) -> ExperimentConfig {
    let mut sets = vec![
        "geometry.channels=2",
        "geometry.chips_per_channel=2",
        "geometry.dies_per_chip=1",
        "geometry.planes_per_die=1",
        "geometry.blocks_per_plane=64",
        "geometry.pages_per_block=64",
        "geometry.page_bytes=4096",
        "timing.read_latency_ns=10000",
        "timing.bus_mb_per_s=4000",
        "host.link_mb_per_s=100000",
        "ftl.over_provisioning=0.25",
        "ftl.mapping_unit_bytes=4096",
        "run.precondition=1.0",
        "run.precondition_max_passes=1",
    ];
    sets.extend_from_slice(extra);
    ExperimentConfig::with_sets("default", &sets).unwrap()
}

fn run(config: &ExperimentConfig) -> Report {
    run_experiment(config, &mut |_| {}).unwrap()
}

fn within(measured: f64, expected: f64, tolerance: f64, what: &str) {
    let err = (measured - expected).abs() / expected;
    assert!(
        err <= tolerance,
        "{what}: measured {measured:.1}, expected {expected:.1} (error {:.2}% > {:.2}%)",
        err * 100.0,
        tolerance * 100.0
    );
}

#[test]
fn ftl_cpu_time_bounds_throughput_per_core() {
    // 20 us of FTL CPU per read dominates (flash: 4 dies / ~11 us); the CPU limits IOPS to
    // cores / 20 us.
    for cores in [1u32, 2] {
        let c = format!("cpu.cores={cores}");
        let config = small(&[
            "ftl.cpu_lookup_ns=20000",
            &c,
            "workload.read_fraction=1.0",
            "workload.queue_depth=64",
            "workload.count=40000",
        ]);
        let r = run(&config);
        let expected = f64::from(cores) / 20e-6;
        within(
            r.host.read.iops,
            expected,
            0.02,
            &format!("read IOPS with {cores} core(s)"),
        );
        assert!(
            r.utilisation.cpu > 0.97,
            "CPU busy {:.3}",
            r.utilisation.cpu
        );
    }
}

#[test]
fn command_overhead_bounds_iops_on_the_link() {
    // Each command occupies the host-to-device lane for 50 us: at most 20,000 commands/s.
    let config = small(&[
        "host.command_overhead_ns=50000",
        "workload.read_fraction=1.0",
        "workload.queue_depth=32",
        "workload.count=20000",
    ]);
    let r = run(&config);
    within(
        r.host.read.iops,
        20_000.0,
        0.02,
        "read IOPS under command overhead",
    );
}

#[test]
fn closed_loop_keeps_queue_depth_outstanding() {
    // Little's law: throughput x mean latency = requests in the system = the queue depth.
    for qd in [1u32, 8, 32] {
        let q = format!("workload.queue_depth={qd}");
        let r = run(&small(&[
            "workload.read_fraction=0.7",
            &q,
            "workload.count=30000",
        ]));
        let in_system = r.host.all.iops * r.host.all.latency_ns.mean / 1e9;
        within(
            in_system,
            f64::from(qd),
            0.01,
            &format!("Little's law at QD {qd}"),
        );
    }
}

#[test]
fn open_loop_follows_the_arrival_rate() {
    // A light load on a half-filled device (no GC due): the device keeps up, so completions
    // follow arrivals and latency stays near the unloaded read time.
    let r = run(&small(&[
        "run.precondition=0.5",
        "workload.range_fraction=0.5",
        "workload.read_fraction=1.0",
        "workload.rate_iops=20000",
        "workload.arrival=\"fixed\"",
        "workload.count=20000",
    ]));
    within(r.host.read.iops, 20_000.0, 0.01, "open-loop read IOPS");
    assert!(
        r.host.read.latency_ns.p99 < 20_000,
        "p99 {} ns on an idle device",
        r.host.read.latency_ns.p99
    );
}

#[test]
fn background_gc_runs_in_idle_gaps() {
    // Writes at a low rate leave the device idle between requests: GC happens in the
    // background, before foreground watermarks are reached.
    let r = run(&small(&[
        "workload.read_fraction=0.0",
        "workload.rate_iops=2000",
        "workload.count=20000",
        "ftl.gc_background_free_blocks=8",
    ]));
    assert!(r.gc.gc_runs > 0, "no GC at all");
    let g = &r.gc;
    assert!(
        g.gc_background_runs * 2 > g.gc_runs,
        "only {} of {} GC runs in the background",
        g.gc_background_runs,
        g.gc_runs
    );
    assert_eq!(
        g.gc_background_runs + g.gc_foreground_runs,
        g.gc_runs,
        "{g:?}"
    );
    assert_eq!(
        g.gc_background_units_moved + g.gc_foreground_units_moved,
        g.gc_units_moved,
        "{g:?}"
    );
    assert!(
        g.gc_background_units_moved * 2 > g.gc_units_moved,
        "background GC moved {} of {} units",
        g.gc_background_units_moved,
        g.gc_units_moved
    );
}

#[test]
fn read_first_shortens_read_tails_behind_gc() {
    let mixed = [
        "workload.read_fraction=0.5",
        "workload.queue_depth=32",
        "workload.count=40000",
        "ftl.over_provisioning=0.15",
    ];
    let fifo = run(&small(
        &[&mixed[..], &["timing.die_queue_policy=\"fifo\""]].concat(),
    ));
    let read_first = run(&small(
        &[&mixed[..], &["timing.die_queue_policy=\"read-first\""]].concat(),
    ));
    assert!(
        fifo.gc.gc_runs > 100,
        "GC must be busy: {}",
        fifo.gc.gc_runs
    );
    let (f, r) = (
        fifo.host.read.latency_ns.p99,
        read_first.host.read.latency_ns.p99,
    );
    assert!(
        r * 2 < f,
        "read-first p99 {r} ns not well below FIFO p99 {f} ns"
    );
}

#[test]
fn flush_makes_buffered_writes_durable() {
    // 8 KiB pages hold two 4 KiB units: a single 4 KiB write stays in the buffer until a flush
    // programs its page, padding the empty slot.
    let base = [
        "geometry.page_bytes=8192",
        "run.precondition=0.0",
        "workload.read_fraction=0.0",
        "workload.count=1",
        "workload.queue_depth=1",
    ];
    let r = run(&small(&base));
    assert_eq!(
        r.flash.programs.total, 0,
        "nothing programmed without a flush"
    );
    let r = run(&small(
        &[&base[..], &["workload.flush_every=1", "workload.count=2"]].concat(),
    ));
    assert_eq!(r.host.flush.count, 1);
    assert_eq!(r.flash.programs.total, 1, "the flush programmed the page");
    assert_eq!(r.ftl_details["counters"]["padded_units"], 1);
}

#[test]
fn one_seed_reproduces_a_run_exactly() {
    let config = small(&[
        "workload.read_fraction=0.6",
        "workload.count=20000",
        "run.seed=11",
    ]);
    let a = run(&config).to_json();
    let b = run(&config).to_json();
    assert_eq!(a, b);
    let other = small(&[
        "workload.read_fraction=0.6",
        "workload.count=20000",
        "run.seed=12",
    ]);
    assert_ne!(a["host"], run(&other).to_json()["host"]);
}

#[test]
fn simulations_side_by_side_do_not_interfere() {
    let configs: Vec<ExperimentConfig> = (1..=4)
        .map(|seed| {
            let s = format!("run.seed={seed}");
            small(&["workload.read_fraction=0.5", "workload.count=10000", &s])
        })
        .collect();
    let alone: Vec<serde_json::Value> = configs.iter().map(|c| run(c).to_json()).collect();
    let together: Vec<serde_json::Value> = std::thread::scope(|s| {
        let handles: Vec<_> = configs
            .iter()
            .map(|c| s.spawn(move || run(c).to_json()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(alone, together);
}

#[test]
fn a_16_gib_device_of_4_kib_pages_needs_about_64_mib() {
    // 16 GiB of 4 KiB pages and 4 KiB mapping units: 4 Mi unit slots of 12-byte OOB entries
    // and a valid bit, 4-byte L2P entries, block bookkeeping.
    let config = ExperimentConfig::with_sets(
        "default",
        &[
            "geometry.page_bytes=4096",
            "geometry.pages_per_block=512",
            "run.precondition=0.0",
        ],
    )
    .unwrap();
    assert_eq!(config.geometry.raw_bytes(), 16 << 30);
    let sim = flashlab_sim::Simulation::new(&config).unwrap();
    let state = sim.nand().state_bytes() + sim.ftl().state_bytes();
    let mib = state as f64 / (1 << 20) as f64;
    assert!(mib <= 66.0, "{mib:.1} MiB of state for 16 GiB");
}
