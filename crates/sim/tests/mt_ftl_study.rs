//! The shape of multithreaded-ftl-ucos.txt Figs. 3 and 4 on the `mt-board` preset with the
//! study's defaults (the paper's board: fixed task priorities, a NAND semaphore per chip; the
//! `desktop` workload in a closed loop at each queue depth), through the same study code as
//! `flashlab experiment mt-ftl`.
//!
//! The paper's directions for the mean hold at two run lengths: mt-ftl's gain over st-ftl is
//! nil at depth 1 and a few percent at deep queues, and its worst case is no worse than
//! st-ftl's. In a closed loop the response time is the time in the device, so the mean and the
//! worst case grow with the depth (docs/mt-ftl.md, "Pacing").

use flashlab_sim::experiment::mt_ftl::{Gain, Point, Study, StudyMode, StudyOptions};

fn study(mode: StudyMode, queue_depths: &[u32], requests: u64, blocks: Option<u32>) -> Study {
    let options = StudyOptions {
        mode,
        queue_depths: queue_depths.to_vec(),
        requests,
        board_blocks_per_plane: blocks,
        ssd_presets: vec![],
        // One seed: these tests check the model's shape; the claims' verdicts need three
        // (src/experiment/mt_ftl/claims.rs tests them).
        seeds: vec![1],
        ..StudyOptions::default()
    };
    assert_eq!(options.workload, "desktop");
    assert_eq!(StudyOptions::default().seeds, [1, 2, 3]);
    options.run(&mut |_, _, _| {}).expect("the study runs")
}

fn gain(s: &Study, device: &str, tasks: u32, qd: u32) -> Gain {
    s.gain(device, tasks, qd).expect("a point").clone()
}

fn point(s: &Study, ftl: &str, qd: u32) -> Point {
    s.points
        .iter()
        .find(|p| p.device == "mt-board" && p.ftl == ftl && p.queue_depth == qd)
        .expect("a point")
        .clone()
}

/// The default study on a 1 GB board (1024 blocks per plane: the 4 GB board's spare blocks
/// per working block, a quarter of its preconditioning) at 1,000 and 2,000 requests a run:
/// at both lengths mt-ftl equals st-ftl at depth 1 (the same task and working block serve
/// everything), gains at depths 64 and 256 (seed 1: +5.6% and +5.3% at 1,000 requests, +6.3%
/// and +6.5% at 2,000; the paper: up to about 5.5%), and its worst case is no worse.
#[test]
fn the_papers_board_keeps_the_papers_directions_at_two_run_lengths() {
    assert_eq!(StudyOptions::default().mode, StudyMode::Closed);
    for requests in [1000, 2000] {
        let s = study(StudyMode::Closed, &[1, 64, 256], requests, Some(1024));
        for p in &s.points {
            eprintln!(
                "{requests}: {} qd {}: mean {:.3} s, max {:.3} s",
                p.ftl,
                p.queue_depth,
                p.mean_ns / 1e9,
                p.max_ns as f64 / 1e9
            );
            assert_eq!(p.requests, requests);
            assert_eq!(p.halves[0].requests + p.halves[1].requests, p.requests);
        }
        let g = |qd| gain(&s, "mt-board", 4, qd);
        assert!(g(1).mean_gain.abs() <= 0.01, "{requests}: qd 1: {:?}", g(1));
        for qd in [64, 256] {
            let d = g(qd);
            assert!(
                (0.02..=0.15).contains(&d.mean_gain) && d.mean_gain > g(1).mean_gain + 0.02,
                "{requests}: qd {qd}: {d:?}"
            );
            assert!(d.worst_change <= 0.02, "{requests}: qd {qd}: {d:?}");
        }
        // Where the time goes is reported: mt-ftl waits on NAND semaphores, its CPU is
        // mostly idle; no host-side wait in a closed loop.
        let mt = point(&s, "mt-ftl", 256);
        assert!(mt.sem_wait_ns.nand > 0 && mt.cpu_utilisation > 0.0 && mt.cpu_utilisation < 0.2);
        assert_eq!(mt.host_wait_mean_ns, 0.0);
    }
}

/// With one NAND semaphore for the whole device held through each operation (the other reading
/// of "NAND flash memory" as one resource), the two chips never work at once and mt-ftl
/// loses its gain: the reason the paper's board has one per chip (src/ftl/mtftl/mod.rs).
#[test]
fn a_whole_device_nand_semaphore_takes_the_gain_away() {
    let options = StudyOptions {
        queue_depths: vec![64],
        requests: 1000,
        board_blocks_per_plane: Some(1024),
        ssd_presets: vec![],
        seeds: vec![1],
        sets: vec!["ftl.nand_lock=\"whole-device\"".into()],
        ..StudyOptions::default()
    };
    let s = options.run(&mut |_, _, _| {}).expect("the study runs");
    let g = gain(&s, "mt-board", 4, 64).mean_gain;
    assert!(g < 0.005, "whole-device lock: gain {g}");
}

/// Closed loop keeps qd requests in the device: by Little's law the mean grows with the depth,
/// and so does the worst case: the opposite of Fig. 4's direction.
#[test]
fn closed_loop_deeper_queues_raise_mean_and_worst() {
    let s = study(StudyMode::Closed, &[1, 64], 1000, Some(1024));
    for ftl in ["st-ftl", "mt-ftl"] {
        let (shallow, deep) = (point(&s, ftl, 1), point(&s, ftl, 64));
        assert!(deep.mean_ns > 30.0 * shallow.mean_ns, "{ftl}");
        assert!(deep.max_ns > 3 * shallow.max_ns, "{ftl}");
        assert_eq!(deep.host_wait_mean_ns, 0.0, "{ftl}");
    }
}

/// A real (small) run on three seeds: every claim is judged per seed and merged, carries its
/// parameters and size, and the audit finds no rule that cannot fail.
#[test]
fn a_small_run_on_three_seeds_gives_claims_the_audit_accepts() {
    let options = StudyOptions {
        queue_depths: vec![1, 8],
        requests: 300,
        board_blocks_per_plane: Some(256),
        ssd_presets: vec![],
        ..StudyOptions::default()
    };
    let s = options.run(&mut |_, _, _| {}).expect("the study runs");
    assert_eq!(s.points.len(), 12);
    let problems = flashlab_sim::experiment::claims::audit(&s.claims);
    assert!(problems.is_empty(), "{problems:#?}");
    let equal = &s.claims[2];
    assert_eq!(equal.runs.len(), 3, "{equal:?}");
    assert!(equal.size.contains("300 requests a run"), "{}", equal.size);
}
