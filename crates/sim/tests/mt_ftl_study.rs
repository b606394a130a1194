//! The shape of multithreaded-ftl-ucos.txt Figs. 3 and 4 on the `mt-board` preset (4 GB, the
//! `desktop` workload: the study's defaults, 5,000 requests per point), and the larger gain
//! on a parallel SSD, through the same study code as `flashlab experiment mt-ftl`.
//!
//! The paper's directions hold in bounded-open mode (requests arrive at 100/s, the queue depth
//! bounds how many the board holds, the response time counts from arrival): deeper queues
//! lower the worst and the mean response time, and mt-ftl's gain over st-ftl is nil at depth 1
//! and a few percent from depth 8 on. In closed mode the response time is the time in the
//! device, and the mean and the worst case grow with the depth instead (docs/mt-ftl.md).

use flashlab_sim::experiment::mt_ftl::{Gain, Point, Study, StudyMode, StudyOptions};

const DEPTHS: [u32; 6] = [1, 2, 4, 8, 64, 256];
const DEEP: [u32; 3] = [8, 64, 256];

fn study(mode: StudyMode, queue_depths: &[u32], requests: u64, ssd: bool) -> Study {
    let options = StudyOptions {
        mode,
        queue_depths: queue_depths.to_vec(),
        requests,
        ssd_presets: if ssd { vec!["cosmos".into()] } else { vec![] },
        ssd_tasks: vec![16],
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

#[test]
fn bounded_open_deeper_queues_lower_worst_and_mean_and_the_gain_grows_from_nil_to_a_few_percent() {
    let s = study(StudyMode::BoundedOpen, &DEPTHS, 5000, true);
    assert_eq!(StudyOptions::default().mode, StudyMode::BoundedOpen);
    for p in &s.points {
        eprintln!(
            "{} {} qd {}: mean {:.3} s, max {:.3} s, host wait {:.3} s",
            p.device,
            p.ftl,
            p.queue_depth,
            p.mean_ns / 1e9,
            p.max_ns as f64 / 1e9,
            p.host_wait_mean_ns / 1e9
        );
    }
    // Fig. 4: "The worst performance improves as the queue length increases"; the mean too.
    for ftl in ["st-ftl", "mt-ftl"] {
        let shallow = point(&s, ftl, 1);
        for qd in DEEP {
            let deep = point(&s, ftl, qd);
            assert!(
                (deep.max_ns as f64) < 0.97 * shallow.max_ns as f64,
                "{ftl} worst at qd {qd}: {} vs {} at qd 1",
                deep.max_ns,
                shallow.max_ns
            );
            assert!(
                deep.mean_ns < 0.97 * shallow.mean_ns,
                "{ftl} mean at qd {qd}: {} vs {} at qd 1",
                deep.mean_ns,
                shallow.mean_ns
            );
        }
        // The board is overloaded: most of the response time is the wait for the board.
        assert!(shallow.host_wait_mean_ns > 0.9 * shallow.mean_ns, "{ftl}");
    }
    // Fig. 3: equal at depth 1 (the same task and working block serve everything), then the
    // gain grows with the depth to a few percent (the paper: up to about 5.5%).
    let g = |qd| gain(&s, "mt-board", 4, qd).mean_gain;
    assert!(g(1).abs() <= 0.01, "qd 1: {}", g(1));
    assert!(g(1) < g(2), "qd 2: {} vs {}", g(2), g(1));
    for qd in [4, 8, 64, 256] {
        assert!(g(2) < g(qd), "qd {qd}: {} vs {} at 2", g(qd), g(2));
    }
    for qd in DEEP {
        assert!((0.04..=0.15).contains(&g(qd)), "qd {qd}: {}", g(qd));
    }
    // mt-ftl's worst case is no worse than st-ftl's at deep queues.
    for qd in DEEP {
        let w = gain(&s, "mt-board", 4, qd).worst_change;
        assert!(w <= 0.02, "qd {qd}: worst change {w}");
    }
    // The halves of each run split its requests, and the overloaded board's backlog grows:
    // the second half's mean response is well above the first's.
    for p in s.points.iter().filter(|p| p.device == "mt-board") {
        assert_eq!(p.halves[0].requests + p.halves[1].requests, p.requests);
        assert!(p.halves[1].mean_ns > 1.25 * p.halves[0].mean_ns, "{p:?}");
    }
    // With one seed no claim has a verdict but "not measured".
    assert!(s
        .claims
        .iter()
        .all(|c| c.verdict == flashlab_sim::experiment::claims::Verdict::NotMeasured));
    // Where the time goes is reported: mt-ftl waits on NAND semaphores, its CPU is mostly idle.
    let mt = point(&s, "mt-ftl", 256);
    assert!(mt.sem_wait_ns.nand > 0 && mt.cpu_utilisation > 0.0 && mt.cpu_utilisation < 0.2);
    // A parallel SSD: many times the board's gain.
    let board = g(64);
    for qd in DEEP {
        let ssd = gain(&s, "cosmos", 16, qd).mean_gain;
        assert!(
            ssd > 0.25 && ssd > 3.0 * board,
            "cosmos qd {qd}: {ssd} (board {board})"
        );
    }
}

/// Closed loop keeps qd requests in the device: by Little's law the mean grows with the depth,
/// and so does the worst case: the opposite of Fig. 4's direction.
#[test]
fn closed_loop_deeper_queues_raise_mean_and_worst() {
    let s = study(StudyMode::Closed, &[1, 64], 2000, false);
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
