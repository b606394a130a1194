//! Which mt-ftl task serves which request, and the report of where time goes.

use flashlab_sim::config::ExperimentConfig;

fn run(queue_depth: u32, sets: &[&str]) -> flashlab_sim::Report {
    let mut all = vec![
        "ftl.name=\"mt-ftl\"",
        "geometry.blocks_per_plane=64",
        "run.precondition=1",
    ];
    all.extend_from_slice(sets);
    let mut cfg = ExperimentConfig::with_sets("mt-board", &all).expect("valid settings");
    let spec = format!("randrw:bs=4k:50/16k:50,qd={queue_depth},count=400");
    cfg.workload = flashlab_sim::workload::parse_spec(&spec).expect("a valid workload");
    flashlab_sim::run_experiment(&cfg, &mut |_| {}).expect("the run finishes")
}

fn requests_per_task(report: &flashlab_sim::Report) -> Vec<u64> {
    let tasks = report.ftl_details["rtos"]["tasks"]
        .as_array()
        .expect("tasks");
    tasks
        .iter()
        .filter(|t| t["name"].as_str().unwrap_or("").starts_with("ftl"))
        .map(|t| t["requests"].as_u64().expect("requests"))
        .collect()
}

/// Like uC/OS-II handing a semaphore to the highest-priority waiter: an idle task ranks by
/// its number, so at queue depth 1 one task (one working block) serves everything, for both
/// priority schemes, as st-ftl does.
#[test]
fn at_queue_depth_one_the_first_task_serves_every_request() {
    for priority in ["request-age", "fixed"] {
        let p = format!("ftl.task_priority=\"{priority}\"");
        let report = run(1, &[&p]);
        assert_eq!(requests_per_task(&report), vec![400, 0, 0, 0], "{priority}");
    }
}

/// At depth 8 every task works, and with request-age priorities none starves.
#[test]
fn deep_queues_spread_requests_over_every_task() {
    let report = run(8, &[]);
    let counts = requests_per_task(&report);
    assert_eq!(counts.iter().sum::<u64>(), 400);
    assert!(counts.iter().all(|&n| n >= 40), "{counts:?}");
    assert_eq!(report.ftl_details["gc_nand_hold"], "page");
}

/// Holding the die for a whole victim serves the same data; other tasks wait on its NAND
/// semaphore instead of slipping reads in between GC pages.
#[test]
fn gc_can_hold_the_die_for_a_whole_victim() {
    let report = run(8, &["ftl.gc_nand_hold=\"victim\"", "run.verify=true"]);
    assert_eq!(report.ftl_details["gc_nand_hold"], "victim");
    assert!(report.gc.gc_runs > 0, "the run collected garbage");
}
