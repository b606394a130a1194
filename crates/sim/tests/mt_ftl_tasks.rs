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
    let report = run(8, &["ftl.task_priority=\"request-age\""]);
    let counts = requests_per_task(&report);
    assert_eq!(counts.iter().sum::<u64>(), 400);
    assert!(counts.iter().all(|&n| n >= 40), "{counts:?}");
    assert_eq!(report.ftl_details["gc_nand_hold"], "page");
}

fn nand_pends(report: &flashlab_sim::Report) -> u64 {
    let sems = report.ftl_details["rtos"]["semaphores"]
        .as_array()
        .expect("semaphores");
    sems.iter()
        .filter(|s| s["name"].as_str().unwrap_or("").starts_with("nand"))
        .map(|s| s["pends"].as_u64().expect("pends"))
        .sum()
}

/// Holding the die for a whole victim serves the same data (checked) and takes the NAND
/// semaphore once per victim instead of once per page moved: fewer pends for the same work.
#[test]
fn gc_can_hold_the_die_for_a_whole_victim() {
    let verify = "run.verify=true";
    let page = run(8, &["ftl.gc_nand_hold=\"page\"", verify]);
    let victim = run(8, &["ftl.gc_nand_hold=\"victim\"", verify]);
    assert_eq!(victim.ftl_details["gc_nand_hold"], "victim");
    assert!(
        victim.gc.gc_runs > 0 && page.gc.gc_runs > 0,
        "the runs collected garbage"
    );
    assert!(
        nand_pends(&victim) < nand_pends(&page),
        "victim {} vs page {}",
        nand_pends(&victim),
        nand_pends(&page)
    );
}

/// Debug builds check that a task changes the mapping table, the block metadata or a die's
/// NAND only while it holds the semaphore guarding it (`ftl/mtftl/guard.rs`): writes (whole
/// and partial units), trims, reads and GC (copybacks, and read pages packed into GC pages;
/// both GC hold modes) on 8 tasks with a NAND semaphore per die, timed and functional, every
/// sector read checked. A task path that skips one of its semaphores fails here.
#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "the lock discipline is checked in debug builds only"
)]
fn tasks_change_shared_state_only_under_its_semaphore() {
    use flashlab_sim::testing;
    let variants: [&[&str]; 3] = [
        &["ftl.gc_nand_hold=\"page\"", "run.functional_only=false"],
        &[
            "ftl.gc_nand_hold=\"victim\"",
            "ftl.gc_copyback=false",
            "run.functional_only=true",
        ],
        &[
            "ftl.gc_nand_hold=\"page\"",
            "geometry.page_bytes=16384",
            "geometry.oob_bytes=448",
            "ftl.mapping_unit_bytes=4096",
            "run.functional_only=false",
        ],
    ];
    for variant in variants {
        let mut sets = vec![
            "ftl.name=\"mt-ftl\"",
            "ftl.tasks=8",
            "ftl.nand_lock=\"per-die\"",
            "geometry.channels=2",
            "geometry.chips_per_channel=2",
            "geometry.dies_per_chip=1",
            "geometry.planes_per_die=1",
            "geometry.blocks_per_plane=16",
            "geometry.pages_per_block=8",
            "geometry.page_bytes=4096",
            "ftl.over_provisioning=0.4",
            "run.precondition=1.0",
            "run.precondition_max_passes=1",
        ];
        sets.extend_from_slice(variant);
        let cfg = ExperimentConfig::with_sets("default", &sets).expect("valid settings");
        let logical = testing::logical_sectors(&cfg).expect("a device");
        let steps = testing::random_steps(11, 3000, logical);
        let o = testing::run_steps(&cfg, &steps, 16).unwrap_or_else(|e| panic!("{variant:?}: {e}"));
        assert_eq!(o.checked_sectors, o.sectors_read);
        let counters = &o.ftl_report["counters"];
        let moved = |what: &str| counters[what].as_u64().unwrap_or(0);
        assert!(
            moved("gc_copyback_pages") + moved("gc_programmed_pages") > 0,
            "{variant:?}: no GC"
        );
    }
}

/// The board's queue is first come, first served: a write that had to wait for an earlier
/// overlapping one (the host interface holds it until that one finishes) takes its arrival
/// place in the FTL's queue, not the end, so a chain of rewrites of a hot block does not wait
/// a whole queue per link.
#[test]
fn a_request_held_for_an_overlapping_one_keeps_its_place_in_the_queue() {
    use flashlab_sim::host::{Op, Request};
    use std::cell::RefCell;
    use std::rc::Rc;
    for ftl in ["st-ftl", "mt-ftl"] {
        let name = format!("ftl.name=\"{ftl}\"");
        let cfg = ExperimentConfig::with_sets(
            "mt-board",
            &[&name, "geometry.blocks_per_plane=64", "run.precondition=0"],
        )
        .expect("valid settings");
        let mut sim = flashlab_sim::Simulation::new(&cfg).expect("a device");
        let order = Rc::new(RefCell::new(Vec::new()));
        let sink = order.clone();
        sim.set_observer(Box::new(move |c| sink.borrow_mut().push(c.offset_bytes)));
        let write = |offset_bytes: u64| Request {
            arrival_ns: 0,
            op: Op::Write,
            offset_bytes,
            len_bytes: 16384,
            deadline_ns: 0,
            task: None,
        };
        let hot = 0;
        let others = |base: u64| (1..=12).map(move |i| base + i * (1 << 20));
        sim.submit(write(hot)).expect("admitted");
        for offset in others(0) {
            sim.submit(write(offset)).expect("admitted");
        }
        sim.submit(write(hot)).expect("admitted");
        for offset in others(32 << 20) {
            sim.submit(write(offset)).expect("admitted");
        }
        sim.run_until_idle().expect("the run finishes");
        let order = order.borrow();
        assert_eq!(order.len(), 26, "{ftl}");
        let second = order.iter().skip(1).position(|&o| o == hot).expect("done") + 1;
        let later_before = order[..second].iter().filter(|&&o| o >= 32 << 20).count();
        // st-ftl serves in order: the rewrite of the hot block right after the 12 between
        // them. mt-ftl's four tasks take later requests while the rewrite's command crosses
        // the UART once the first write is done, but it goes ahead of the rest.
        let most = if ftl == "st-ftl" { 0 } else { 4 };
        assert!(later_before <= most, "{ftl}: {order:?}");
    }
}

/// The defaults are the paper's board (multithreaded-ftl-ucos.txt, Implementation): four FTL
/// tasks with fixed, distinct uC/OS-II priorities (task i at i + 1) and the monitor below them
/// all, and one NAND semaphore per chip (mt-board: one die per chip). With fixed priorities
/// the CPU and every semaphore go to the lowest-numbered waiting task, so at depth 8 task 0
/// serves more requests than task 3 (with request-age priorities they share them evenly).
#[test]
fn the_defaults_are_the_papers_board() {
    let report = run(8, &[]);
    let d = &report.ftl_details;
    assert_eq!(d["task_priority"], "fixed");
    assert_eq!(d["nand_lock"], "per-die");
    let tasks = d["rtos"]["tasks"].as_array().expect("tasks");
    let priorities: Vec<u64> = tasks
        .iter()
        .map(|t| t["priority"].as_u64().expect("a priority"))
        .collect();
    assert_eq!(&priorities[..4], &[1, 2, 3, 4]);
    assert_eq!(tasks[4]["name"], "monitor");
    assert!(
        priorities[4] > 4,
        "the monitor is the lowest: {priorities:?}"
    );
    let nand: Vec<&str> = d["rtos"]["semaphores"]
        .as_array()
        .expect("semaphores")
        .iter()
        .filter_map(|s| s["name"].as_str().filter(|n| n.starts_with("nand")))
        .collect();
    assert_eq!(nand, ["nand-die0", "nand-die1"]);
    let fixed = requests_per_task(&report);
    let by_age = requests_per_task(&run(8, &["ftl.task_priority=\"request-age\""]));
    let spread = |c: &[u64]| c.iter().max().unwrap() - c.iter().min().unwrap();
    assert!(fixed[0] > fixed[3], "{fixed:?}");
    assert!(
        spread(&fixed) > spread(&by_age),
        "fixed {fixed:?}, by age {by_age:?}"
    );
}
