//! The shape of multithreaded-ftl-ucos.txt Figs. 3 and 4 on the `mt-board` preset (4 GB, the
//! `desktop` workload: the study's defaults, 5,000 requests per point), and the larger gain
//! on a parallel SSD, through the same study code as `flashlab experiment mt-ftl`.

use flashlab_sim::experiment::mt_ftl::{Study, StudyOptions};

fn study() -> Study {
    let options = StudyOptions {
        queue_depths: vec![1, 2, 4, 8, 64, 256],
        requests: 5000,
        ssd_presets: vec!["cosmos".into()],
        ssd_tasks: vec![16],
        ..StudyOptions::default()
    };
    assert_eq!(options.workload, "desktop");
    options.run(&mut |_, _, _| {}).expect("the study runs")
}

#[test]
fn board_gain_is_a_few_percent_and_grows_with_depth_while_a_parallel_ssd_gains_much_more() {
    let s = study();
    let gain = |device: &str, tasks, qd| s.gain(device, tasks, qd).expect("a point").clone();
    for g in s.gains.iter() {
        eprintln!("{g:?}");
    }
    // Shallow queues: the same (negligible at 1-2; see docs/mt-ftl.md for depth 4).
    for qd in [1, 2] {
        let g = gain("mt-board", 4, qd);
        assert!(g.mean_gain.abs() <= 0.03, "qd {qd}: {g:?}");
    }
    let g4 = gain("mt-board", 4, 4);
    assert!(g4.mean_gain.abs() <= 0.08, "qd 4: {g4:?}");
    // From depth 8 on mt-ftl is better, by a few percent (the paper: up to about 5.5%).
    for qd in [8, 64, 256] {
        let g = gain("mt-board", 4, qd);
        assert!((0.01..=0.12).contains(&g.mean_gain), "qd {qd}: {g:?}");
        assert!(
            g.mean_gain > gain("mt-board", 4, 1).mean_gain + 0.03,
            "qd {qd}: {g:?}"
        );
    }
    // The worst case barely changes at deep queues.
    for qd in [64, 256] {
        let g = gain("mt-board", 4, qd);
        assert!(g.worst_change.abs() <= 0.2, "qd {qd}: {g:?}");
    }
    // Where the time goes is reported: mt-ftl waits on NAND semaphores, its CPU is mostly idle.
    let mt = s
        .points
        .iter()
        .find(|p| p.device == "mt-board" && p.ftl == "mt-ftl" && p.queue_depth == 256)
        .expect("a point");
    assert!(mt.sem_wait_ns.nand > 0 && mt.cpu_utilisation > 0.0 && mt.cpu_utilisation < 0.2);
    // A parallel SSD: many times the board's gain.
    let board = gain("mt-board", 4, 64).mean_gain;
    let ssd = gain("cosmos", 16, 64).mean_gain;
    assert!(ssd > 0.25 && ssd > 3.0 * board, "board {board}, ssd {ssd}");
    for qd in [8, 64, 256] {
        let ssd = gain("cosmos", 16, qd).mean_gain;
        assert!(ssd > 0.25, "cosmos qd {qd}: {ssd}");
    }
}
