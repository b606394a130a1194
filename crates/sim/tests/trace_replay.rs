//! Trace replay on the simulated SSD: open loop keeps arrival times exactly, closed loop keeps
//! exactly QD requests outstanding, addresses are compacted / wrapped / checked as asked,
//! limits and warm-up apply, and every FTL replays the real traces with every read checked.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use flashlab_sim::engine::CompletedRequest;
use flashlab_sim::ftl::registry;
use flashlab_sim::{run_experiment, workload_source, ExperimentConfig, SimError, Simulation};

fn tpcc() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../traces/mqsim_tpcc-small.trace")
        .display()
        .to_string()
}

fn temp_trace(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("flashlab-replay-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

/// A small fresh device replaying `trace` with `sets`.
fn config(trace: &str, sets: &[&str]) -> ExperimentConfig {
    let path = format!("trace.path={:?}", trace);
    let mut all = vec![
        "geometry.blocks_per_plane=64",
        "run.precondition=0",
        path.as_str(),
    ];
    all.extend_from_slice(sets);
    ExperimentConfig::with_sets("default", &all).unwrap()
}

/// Runs and returns every completed request in completion order, and the report.
fn replay(
    cfg: &ExperimentConfig,
) -> Result<(Vec<CompletedRequest>, flashlab_sim::Report), SimError> {
    let mut sim = Simulation::new(cfg)?;
    let seen = Rc::new(RefCell::new(Vec::new()));
    let sink = seen.clone();
    sim.set_observer(Box::new(move |c| sink.borrow_mut().push(*c)));
    let source = workload_source(cfg, &sim)?;
    let source = sim.run(source, &mut |_| {})?;
    let report = flashlab_sim::stats::build_report(&sim, source.describe());
    let done = seen.borrow().clone();
    Ok((done, report))
}

fn by_arrival(mut done: Vec<CompletedRequest>) -> Vec<CompletedRequest> {
    done.sort_by_key(|c| (c.arrival_ns, c.offset_bytes));
    done
}

#[test]
fn open_loop_keeps_arrival_times_exactly() {
    // Not sorted, with equal times, and a first request that is not at time 0.
    let text =
        "1000 0 0 8 0\n1000 0 64 8 1\n123457 0 128 16 0\n5000 0 256 8 1\n9000001 0 512 8 0\n";
    let path = temp_trace("open.trace", text);
    let p = path.to_str().unwrap();
    let (done, _) = replay(&config(p, &[])).unwrap();
    let arrivals: Vec<u64> = by_arrival(done).iter().map(|c| c.arrival_ns).collect();
    assert_eq!(arrivals, vec![0, 0, 4000, 122_457, 9_000_001 - 1000]);
    let (done, _) = replay(&config(p, &["trace.speedup=4"])).unwrap();
    let arrivals: Vec<u64> = by_arrival(done).iter().map(|c| c.arrival_ns).collect();
    assert_eq!(arrivals, vec![0, 0, 1000, 30_614, 2_249_750]);
    std::fs::remove_file(path).ok();
}

#[test]
fn open_loop_replays_the_real_trace_at_its_timestamps() {
    let (done, report) = replay(&config(&tpcc(), &[])).unwrap();
    assert_eq!(done.len(), 6999);
    let text = std::fs::read_to_string(tpcc()).unwrap();
    let mut times: Vec<u64> = text
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    times.sort_unstable();
    let expected: Vec<u64> = times.iter().map(|t| t - times[0]).collect();
    let got: Vec<u64> = by_arrival(done).iter().map(|c| c.arrival_ns).collect();
    assert_eq!(got, expected);
    assert_eq!(report.workload["name"], "mqsim_tpcc-small.trace");
    assert_eq!(report.workload["format"], "disksim-ns");
    assert_eq!(report.workload["replay"]["mode"], "open");
    assert_eq!(report.workload["summary"]["requests"], 6999);
}

#[test]
fn closed_loop_keeps_exactly_queue_depth_outstanding() {
    for qd in [1u64, 8, 64] {
        let set = format!("trace.queue_depth={qd}");
        let (done, _) = replay(&config(&tpcc(), &["trace.replay=closed", &set])).unwrap();
        assert_eq!(done.len(), 6999);
        let mut events: Vec<(u64, i64)> = done
            .iter()
            .flat_map(|c| [(c.arrival_ns, 1), (c.completion_ns, -1)])
            .collect();
        events.sort_unstable();
        let (mut outstanding, mut admitted, mut i) = (0i64, 0u64, 0);
        while i < events.len() {
            let t = events[i].0;
            while i < events.len() && events[i].0 == t {
                outstanding += events[i].1;
                admitted += u64::from(events[i].1 == 1);
                i += 1;
            }
            if admitted < 6999 {
                assert_eq!(outstanding, qd as i64, "QD {qd} at {t} ns");
            } else {
                assert!(outstanding <= qd as i64);
            }
        }
        assert_eq!(outstanding, 0);
    }
}

#[test]
fn bounded_open_replay_keeps_the_trace_times_and_holds_the_rest_host_side() {
    // Twenty times faster than recorded: more than the device keeps up with at depth 2.
    let fast = ["trace.speedup=20"];
    let (open, _) = replay(&config(&tpcc(), &fast)).unwrap();
    let bounded = [
        "trace.speedup=20",
        "trace.replay=bounded-open",
        "trace.queue_depth=2",
    ];
    let (done, report) = replay(&config(&tpcc(), &bounded)).unwrap();
    assert_eq!(done.len(), 6999);
    let arrivals = |d: &[CompletedRequest]| -> Vec<u64> {
        by_arrival(d.to_vec())
            .iter()
            .map(|c| c.arrival_ns)
            .collect()
    };
    assert_eq!(
        arrivals(&done),
        arrivals(&open),
        "the trace's times, scaled"
    );
    assert!(done
        .iter()
        .all(|c| c.arrival_ns <= c.issue_ns && c.issue_ns <= c.completion_ns));
    let mut events: Vec<(u64, i64)> = done
        .iter()
        .flat_map(|c| [(c.issue_ns, 1), (c.completion_ns, -1)])
        .collect();
    events.sort_unstable();
    let mut in_device = 0;
    for (_, delta) in events {
        in_device += delta;
        assert!(in_device <= 2);
    }
    let waited = done.iter().filter(|c| c.issue_ns > c.arrival_ns).count();
    assert!(waited > 1000, "{waited} waited host-side");
    assert!(report.host.host_wait_ns.max > 0);
    assert_eq!(report.workload["replay"]["mode"], "bounded-open");
    assert_eq!(report.workload["replay"]["queue_depth"], 2);
}

#[test]
fn compaction_removes_holes_keeps_order_and_separates_devices() {
    let gib = 1u64 << 30;
    let text = format!(
        "1 0 0 8 0\n2 0 {} 8 0\n3 0 {} 16 0\n4 1 0 8 0\n",
        gib / 512,
        100 * gib / 512
    );
    let path = temp_trace("holes.trace", &text);
    let p = path.to_str().unwrap();
    let (done, report) = replay(&config(p, &[])).unwrap();
    let offsets: Vec<u64> = by_arrival(done).iter().map(|c| c.offset_bytes).collect();
    assert_eq!(offsets, vec![0, 4096, 8192, 16384]);
    let a = &report.workload["summary"]["address"];
    assert_eq!(a["mapped_bytes"], 5 * 4096);
    assert_eq!(a["touched_units"], 5);
    let span = 100 * gib + 8192 + 4096;
    assert_eq!(a["trace_span_bytes"], span);
    assert_eq!(a["removed_bytes"], span - 5 * 4096);
    // Shared spaces: device 1's offset 0 is device 0's offset 0.
    let (done, _) = replay(&config(p, &["trace.device_spaces=shared"])).unwrap();
    let offsets: Vec<u64> = by_arrival(done).iter().map(|c| c.offset_bytes).collect();
    assert_eq!(offsets, vec![0, 4096, 8192, 0]);
    // Coarser units keep more of the layout.
    let (done, _) = replay(&config(p, &["trace.compact_unit_bytes=1048576"])).unwrap();
    let offsets: Vec<u64> = by_arrival(done).iter().map(|c| c.offset_bytes).collect();
    assert_eq!(offsets, vec![0, 1 << 20, 2 << 20, 3 << 20]);
    std::fs::remove_file(path).ok();
}

#[test]
fn wrap_takes_addresses_modulo_capacity_and_none_refuses_what_does_not_fit() {
    let cfg = config("x", &[]);
    let capacity = Simulation::new(&cfg).unwrap().logical_bytes();
    let text = format!(
        "1 0 {} 8 0\n2 0 {} 8 1\n",
        (capacity + 8192) / 512,
        (capacity - 2048) / 512
    );
    let path = temp_trace("wrap.trace", &text);
    let p = path.to_str().unwrap();
    let (done, _) = replay(&config(p, &["trace.address_map=wrap"])).unwrap();
    let offsets: Vec<u64> = by_arrival(done).iter().map(|c| c.offset_bytes).collect();
    // The second crosses the end: moved back to end there.
    assert_eq!(offsets, vec![8192, capacity - 4096]);
    let err = replay(&config(p, &["trace.address_map=none"]))
        .err()
        .unwrap();
    assert!(err.is_input_error());
    let msg = err.to_string();
    assert!(
        msg.contains("compact or wrap") && msg.contains("wrap.trace"),
        "{msg}"
    );
    std::fs::remove_file(path).ok();
}

#[test]
fn limits_devices_and_warmup_select_what_runs_and_what_counts() {
    let (done, report) = replay(&config(&tpcc(), &["trace.max_requests=100"])).unwrap();
    assert_eq!((done.len(), report.host.all.count), (100, 100));

    let (done, _) = replay(&config(&tpcc(), &["trace.max_duration_ns=10000000"])).unwrap();
    assert!(!done.is_empty() && done.iter().all(|c| c.arrival_ns < 10_000_000));
    let text = std::fs::read_to_string(tpcc()).unwrap();
    let times: Vec<u64> = text
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    let t0 = *times.iter().min().unwrap();
    assert_eq!(
        done.len(),
        times.iter().filter(|&&t| t - t0 < 10_000_000).count()
    );

    let (done, _) = replay(&config(&tpcc(), &["trace.devices=0,3"])).unwrap();
    let on_0_or_3 = text
        .lines()
        .filter(|l| matches!(l.split_whitespace().nth(1), Some("0" | "3")))
        .count();
    assert_eq!(done.len(), on_0_or_3);

    let (done, report) = replay(&config(
        &tpcc(),
        &["trace.warmup_requests=1000", "trace.replay=closed"],
    ))
    .unwrap();
    assert_eq!(done.len(), 6999);
    assert_eq!(done.iter().filter(|c| !c.measured).count(), 1000);
    assert_eq!(report.host.all.count, 5999);
    assert_eq!(report.workload["summary"]["warmup_requests"], 1000);

    let (_, report) = replay(&config(&tpcc(), &["trace.warmup_ns=50000000"])).unwrap();
    let warm = times.iter().filter(|&&t| t - t0 < 50_000_000).count() as u64;
    assert_eq!(report.host.all.count, 6999 - warm);
}

#[test]
fn requests_are_widened_to_whole_device_sectors() {
    let text = "1 0 1 1 0\n2 0 9 2 1\n";
    let path = temp_trace("sectors.trace", text);
    let p = path.to_str().unwrap();
    let (done, report) = replay(&config(
        p,
        &["host.sector_bytes=4096", "trace.address_map=none"],
    ))
    .unwrap();
    let got: Vec<(u64, u64)> = by_arrival(done)
        .iter()
        .map(|c| (c.offset_bytes, c.len_bytes))
        .collect();
    assert_eq!(got, vec![(0, 4096), (4096, 4096)]);
    assert_eq!(report.workload["summary"]["address"]["widened_requests"], 2);
    std::fs::remove_file(path).ok();
}

#[test]
fn every_ftl_replays_the_real_traces_with_every_read_checked() {
    let wsrch = tpcc().replace("tpcc", "wsrch");
    // Page-mapped FTLs replay onto a half-full device. Block-mapped and log-block FTLs fill
    // half of the 16 GiB device only through merges (minutes per run): they replay onto a
    // fresh one, which is where a partial write once looked up a page of a missing block.
    let page_mapped = ["pagemap", "mt-ftl", "st-ftl"];
    for entry in registry::entries() {
        let precondition = if page_mapped.contains(&entry.name) {
            "run.precondition=0.5"
        } else {
            "run.precondition=0"
        };
        let name = format!("ftl.name={:?}", entry.name);
        for (trace, replay_mode, requests) in [
            (tpcc(), "trace.replay=closed", 6999),
            (wsrch.clone(), "trace.replay=open", 24_783),
        ] {
            let mut sets = vec![
                name.as_str(),
                replay_mode,
                "trace.queue_depth=64",
                "run.verify=true",
                precondition,
            ];
            if entry.name == "nftl" {
                // NFTL needs a small-block-like chip: pages in any order, room for headers.
                sets.extend([
                    "nand.program_order=\"any\"",
                    "nand.partial_programs_per_page=3",
                    "geometry.pages_per_block=64",
                ]);
            }
            let cfg = config(&trace, &sets);
            let report = run_experiment(&cfg, &mut |_| {}).unwrap();
            let what = format!("{} on {replay_mode}", entry.name);
            assert_eq!(
                report.host.all.count, requests,
                "{what}: every request completed"
            );
            assert_eq!(report.workload["summary"]["requests"], requests, "{what}");
            let sectors_read = report.host.read.bytes / u64::from(cfg.host.sector_bytes);
            assert!(sectors_read > 0, "{what}: the trace reads");
            assert_eq!(
                report.verified_sectors,
                Some(sectors_read),
                "{what}: every sector read was checked"
            );
            assert_eq!(report.workload["kind"], "trace");
        }
    }
}

#[test]
fn bad_trace_settings_name_the_field() {
    for (set, field) in [
        ("trace.format=\"nope\"", "trace.format"),
        ("trace.devices=\"a,b\"", "trace.devices"),
        ("trace.compact_unit_bytes=1000", "trace.compact_unit_bytes"),
        ("trace.speedup=0", "trace.speedup"),
        ("trace.replay=\"sideways\"", "trace.replay"),
    ] {
        let err = ExperimentConfig::with_sets("default", &[set])
            .unwrap_err()
            .to_string();
        assert!(err.contains(field), "{set}: {err}");
    }
}

#[test]
fn a_limited_replay_reads_nothing_past_its_limit() {
    let mut text: String = (0..200)
        .map(|i| format!("{} 0 {} 8 0\n", i * 10, i * 8))
        .collect();
    text.push_str("this line is broken\n");
    let path = temp_trace("limit.trace", &text);
    let p = path.to_str().unwrap();
    let (done, _) = replay(&config(
        p,
        &["trace.max_requests=5", "trace.format=\"disksim-ns\""],
    ))
    .unwrap();
    assert_eq!(done.len(), 5);
    let err = replay(&config(p, &["trace.format=\"disksim-ns\""]))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("limit.trace:201:"), "{err}");
    std::fs::remove_file(path).ok();
}

#[test]
fn separate_device_regions_that_do_not_fit_are_refused_not_overlapped() {
    // Device 0 needs one 4 KiB compaction unit; device 1 ends 512 bytes short of the
    // capacity: separately they need 3.5 KiB more than there is, shared they fit.
    let capacity = Simulation::new(&config("x", &[])).unwrap().logical_bytes();
    let text = format!("1000 0 0 1 0\n2000 1 {} 8 0\n", capacity / 512 - 9);
    let path = temp_trace("regions.trace", &text);
    let p = path.to_str().unwrap();
    let err = replay(&config(p, &["trace.address_map=none"]))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("compact or wrap"), "{err}");
    let (done, _) = replay(&config(
        p,
        &["trace.address_map=none", "trace.device_spaces=shared"],
    ))
    .unwrap();
    let offsets: Vec<u64> = by_arrival(done).iter().map(|c| c.offset_bytes).collect();
    assert_eq!(offsets, vec![0, capacity - 9 * 512]);
    std::fs::remove_file(path).ok();
}
