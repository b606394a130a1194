//! The shape of multithreaded-ftl-ucos.txt Figs. 3 and 4 on `mt-board` (scaled to 1 GB so the
//! test is quick; every other board value as the preset), and the larger gain on a parallel
//! SSD, through the same study code as `flashlab experiment mt-ftl`.

use flashlab_sim::experiment::mt_ftl::{Study, StudyOptions};

use flashlab_sim::experiment::mt_ftl::DESKTOP_MIX as WORKLOAD;

fn study(options: StudyOptions) -> Study {
    options.run(&mut |_, _, _| {}).expect("the study runs")
}

#[test]
fn board_gain_is_small_at_shallow_queues_and_a_few_percent_at_depth_256() {
    let s = study(StudyOptions {
        workload: WORKLOAD.into(),
        queue_depths: vec![1, 2, 4, 8, 64, 256],
        requests: 5000,
        board_blocks_per_plane: Some(256),
        ssd_presets: Vec::new(),
        ..StudyOptions::default()
    });
    let gain = |qd| s.gain("mt-board", 4, qd).expect("a board point").clone();
    for qd in [1, 2, 4] {
        let g = gain(qd);
        assert!(g.mean_gain.abs() <= 0.05, "qd {qd}: {g:?}");
    }
    for qd in [8, 64, 256] {
        assert!(gain(qd).mean_gain > 0.0, "qd {qd}: {:?}", gain(qd));
    }
    let deep = gain(256);
    assert!((0.01..=0.15).contains(&deep.mean_gain), "{deep:?}");
    assert!(deep.worst_change.abs() <= 0.10, "{deep:?}");
    // Where the time goes is reported: mt-ftl waits on NAND semaphores, its CPU is mostly idle.
    let mt = s
        .points
        .iter()
        .find(|p| p.ftl == "mt-ftl" && p.queue_depth == 256)
        .expect("a point");
    assert!(mt.sem_wait_ns.nand > 0 && mt.cpu_utilisation > 0.0 && mt.cpu_utilisation < 0.2);
}

#[test]
fn a_parallel_ssd_gains_much_more_than_the_board() {
    let s = study(StudyOptions {
        workload: WORKLOAD.into(),
        queue_depths: vec![64],
        requests: 4000,
        board_blocks_per_plane: Some(256),
        ssd_presets: vec!["cosmos".into()],
        ssd_blocks_per_plane: 128,
        ssd_tasks: vec![16],
        ..StudyOptions::default()
    });
    let board = s.gain("mt-board", 4, 64).expect("board").mean_gain;
    let ssd = s.gain("cosmos", 16, 64).expect("ssd").mean_gain;
    eprintln!("board gain {board:.3}, cosmos gain {ssd:.3}");
    assert!(ssd > 0.25 && ssd > 4.0 * board, "board {board}, ssd {ssd}");
}
