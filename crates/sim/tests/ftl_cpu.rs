//! The FTL CPU model of the engine, driven by a test FTL whose handlers charge given times:
//! flash completions before new submissions, static core affinity (`Ftl::core_for`), busy
//! time per core and per activity, the hardware map unit, and when handler effects commit
//! (own end vs issue order) with the bias in-order commit puts on a multi-core comparison.

use std::cell::RefCell;
use std::rc::Rc;

use flashlab_sim::engine::{CommitOrder, CompletedRequest};
use flashlab_sim::flash::Cause;
use flashlab_sim::ftl::{
    CallTarget, CpuActivity, Ftl, FtlCtx, Issue, MapQueue, MapUnitArbiter, QueueWeights,
};
use flashlab_sim::host::{Op, Request, SubRequest};
use flashlab_sim::nand::{Nand, OobEntry};
use flashlab_sim::{ExperimentConfig, SimError, Simulation};

const UNIT: u64 = 4096;

/// What the test FTL does; every handler is logged as (what, simulated time, logical unit).
#[derive(Default)]
struct Plan {
    /// CPU time of a submit of logical unit `lpn`, split (lookup, update).
    submit_cpu: Option<fn(u64) -> (u64, u64)>,
    /// Map-unit time of each submit.
    submit_map_unit_ns: u64,
    /// CPU time of a flash completion's handler.
    flash_done_cpu_ns: u64,
    /// Map-unit time of a flash completion's handler.
    flash_done_map_unit_ns: u64,
    /// The map unit's arbiter (default FIFO).
    arbiter: Option<MapUnitArbiter>,
    /// The map-unit queue of a flash completion's handler (default: the engine's).
    flash_done_queue: Option<MapQueue>,
    /// (host, GC) request weights each submit sets.
    request_weights: Option<(u32, u32)>,
    /// The first submit also erases block 0 with a callback.
    erase_on_first_submit: bool,
    /// Submits of unit `lpn` run on core `lpn % cores`.
    bind_by_unit: bool,
    /// Submits program page `lpn` of block 0 with a callback (in page order), no host wait.
    program_page_per_unit: bool,
}

type Log = Rc<RefCell<Vec<(&'static str, u64, u64)>>>;

struct TestFtl {
    plan: Plan,
    log: Log,
    submits: u64,
}

impl Ftl for TestFtl {
    fn name(&self) -> &'static str {
        "test-cpu"
    }
    fn logical_bytes(&self) -> u64 {
        1 << 25
    }
    fn chop_bytes(&self) -> u32 {
        UNIT as u32
    }
    fn trim_unit_bytes(&self) -> u32 {
        UNIT as u32
    }
    fn units_per_page(&self) -> u32 {
        1
    }
    fn submit(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let lpn = sub.first_sector * u64::from(ctx.sector_bytes()) / UNIT;
        self.log.borrow_mut().push(("submit", ctx.now(), lpn));
        if let Some(cost) = self.plan.submit_cpu {
            let (lookup, update) = cost(lpn);
            ctx.charge_cpu_for(CpuActivity::Lookup, lookup);
            ctx.charge_cpu_for(CpuActivity::Update, update);
        }
        ctx.charge_map_unit(self.plan.submit_map_unit_ns);
        if let Some((host, gc)) = self.plan.request_weights {
            ctx.set_request_weights(host, gc);
        }
        if self.plan.erase_on_first_submit && self.submits == 0 {
            ctx.erase(0, Issue::new(Cause::Gc).token(1))?;
        }
        if self.plan.program_page_per_unit {
            let ppn = ctx.layout().ppn(0, lpn as u32);
            let entry = [OobEntry::new(lpn as u32, lpn + 1, 0)];
            ctx.program(&[ppn], &entry, None, Issue::new(Cause::Gc).token(lpn + 1))?;
        }
        self.submits += 1;
        ctx.complete(sub.id);
        Ok(())
    }
    fn flash_done(&mut self, ctx: &mut FtlCtx<'_>, token: u64) -> Result<(), SimError> {
        self.log.borrow_mut().push(("flash_done", ctx.now(), token));
        ctx.charge_cpu_for(CpuActivity::Gc, self.plan.flash_done_cpu_ns);
        if let Some(queue) = self.plan.flash_done_queue {
            ctx.set_map_queue(queue);
        }
        ctx.charge_map_unit(self.plan.flash_done_map_unit_ns);
        Ok(())
    }
    fn check_invariants(&self, _nand: &Nand) -> Result<(), String> {
        Ok(())
    }
    fn state_bytes(&self) -> u64 {
        0
    }
    fn core_for(&self, call: CallTarget<'_>, cores: u32) -> Option<u32> {
        match call {
            CallTarget::Submit(sub) if self.plan.bind_by_unit => {
                Some((sub.first_sector * 512 / UNIT % u64::from(cores)) as u32)
            }
            _ => None,
        }
    }
    fn map_unit_arbiter(&self) -> MapUnitArbiter {
        self.plan.arbiter.unwrap_or(MapUnitArbiter::Fifo)
    }
}

/// A small device with fast flash, a link that takes no time, `cores` FTL cores.
fn config(cores: u32, extra: &[&str]) -> ExperimentConfig {
    let c = format!("cpu.cores={cores}");
    let mut sets = vec![
        "geometry.channels=2",
        "geometry.chips_per_channel=2",
        "geometry.dies_per_chip=1",
        "geometry.planes_per_die=1",
        "geometry.blocks_per_plane=64",
        "geometry.pages_per_block=64",
        "geometry.page_bytes=4096",
        "timing.read_latency_ns=1000",
        "timing.program_latency_ns=1000",
        "timing.erase_latency_ns=25000",
        "timing.bus_mb_per_s=100000",
        "host.data_over_link=false",
        "host.sector_bytes=512",
        "run.precondition=0",
        "ftl.over_provisioning=0.25",
        c.as_str(),
    ];
    sets.extend_from_slice(extra);
    ExperimentConfig::with_sets("default", &sets).unwrap()
}

struct Run {
    sim: Simulation,
    log: Log,
    done: Rc<RefCell<Vec<CompletedRequest>>>,
}

fn simulation(cores: u32, plan: Plan, extra: &[&str]) -> Run {
    let log = Log::default();
    let ftl = TestFtl {
        plan,
        log: log.clone(),
        submits: 0,
    };
    let mut sim = Simulation::with_ftl(&config(cores, extra), Box::new(ftl)).unwrap();
    let done: Rc<RefCell<Vec<CompletedRequest>>> = Rc::default();
    let sink = done.clone();
    sim.set_observer(Box::new(move |r| sink.borrow_mut().push(*r)));
    Run { sim, log, done }
}

fn read(lpn: u64) -> Request {
    Request {
        arrival_ns: 0,
        op: Op::Read,
        offset_bytes: lpn * UNIT,
        len_bytes: UNIT,
        deadline_ns: 0,
        task: None,
    }
}

/// Submits reads of `lpns` at time 0 and runs to the end; completion time per unit.
fn complete_reads(run: &mut Run, lpns: &[u64]) -> Vec<(u64, u64)> {
    for &l in lpns {
        run.sim.submit(read(l)).unwrap();
    }
    run.sim.run_until_idle().unwrap();
    let mut done: Vec<(u64, u64)> = run
        .done
        .borrow()
        .iter()
        .map(|r| (r.offset_bytes / UNIT, r.completion_ns))
        .collect();
    done.sort();
    done
}

#[test]
fn a_flash_completion_runs_before_submissions_that_arrived_earlier() {
    // One core, 10 us per submission, 64 submissions at time 0; the first erases a block
    // (25 us, done at 35 us). Its completion handler runs when the core next frees (40 us),
    // ahead of the 60 submissions still queued, not after them (640 us).
    let plan = Plan {
        submit_cpu: Some(|_| (10_000, 0)),
        erase_on_first_submit: true,
        ..Plan::default()
    };
    let mut run = simulation(1, plan, &[]);
    let lpns: Vec<u64> = (0..64).collect();
    complete_reads(&mut run, &lpns);
    let log = run.log.borrow();
    let at = log.iter().position(|e| e.0 == "flash_done").unwrap();
    assert_eq!(log[at].1, 40_000, "completion handler at {:?}", log[at]);
    assert_eq!(at, 4, "submissions handled before it: {at}");
}

#[test]
fn calls_bound_to_a_core_wait_for_it_and_do_not_block_others() {
    // Two cores, unit n bound to core n % 2, 10 us per submission: the eight even units
    // queue for core 0 (done at 10, 20, .. 80 us) while the odd unit submitted after them
    // runs on core 1 at once (done at 10 us).
    let plan = Plan {
        submit_cpu: Some(|_| (10_000, 0)),
        bind_by_unit: true,
        ..Plan::default()
    };
    let mut run = simulation(2, plan, &[]);
    let lpns = [0, 2, 4, 6, 8, 10, 12, 14, 1];
    let done = complete_reads(&mut run, &lpns);
    let expected: Vec<(u64, u64)> = [(1, 10_000)]
        .into_iter()
        .chain((0..8).map(|i| (2 * i, 10_000 * (i + 1))))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(done, expected);
    assert_eq!(run.sim.core_busy_ns(), &[80_000, 10_000]);
}

#[test]
fn report_splits_cpu_time_by_core_and_activity() {
    // Two cores, each submission 3 us of lookup and 1 us of update, bound by unit; 6 even
    // units and 2 odd ones: core 0 busy 24 us, core 1 8 us, in a 24 us window.
    let plan = Plan {
        submit_cpu: Some(|_| (3_000, 1_000)),
        bind_by_unit: true,
        ..Plan::default()
    };
    let mut run = simulation(2, plan, &[]);
    complete_reads(&mut run, &[0, 2, 4, 6, 8, 10, 1, 3]);
    let report = flashlab_sim::stats::build_report(&run.sim, serde_json::Value::Null).to_json();
    let u = &report["utilisation"];
    assert_eq!(u["cpu_cores"]["each"], serde_json::json!([1.0, 8.0 / 24.0]));
    assert_eq!(u["cpu"], serde_json::json!(32.0 / 48.0));
    let activity = |name: &str| &u["cpu_activities"][name];
    assert_eq!(activity("lookup")["busy_ns"], 24_000);
    assert_eq!(activity("lookup")["fraction"], serde_json::json!(0.5));
    assert_eq!(activity("update")["busy_ns"], 8_000);
    assert_eq!(activity("gc")["busy_ns"], 0);
    assert_eq!(u["map_unit"], serde_json::Value::Null, "no map unit in use");
    for key in ["dies", "channels", "host_link_down", "host_link_up"] {
        assert!(!u[key].is_null(), "{key} reported (fmmu.txt Fig. 12)");
    }
}

#[test]
fn map_unit_serves_handlers_one_at_a_time_after_their_cpu_time() {
    // Four cores, no CPU time, 1 us of map unit each: the unit serves the two handlers one
    // after the other, so they complete at 1 us and 2 us.
    let plan = Plan {
        submit_map_unit_ns: 1_000,
        ..Plan::default()
    };
    let mut run = simulation(4, plan, &[]);
    assert_eq!(complete_reads(&mut run, &[0, 1]), [(0, 1_000), (1, 2_000)]);
    let report = flashlab_sim::stats::build_report(&run.sim, serde_json::Value::Null).to_json();
    assert_eq!(report["utilisation"]["map_unit"], serde_json::json!(1.0));
    // With CPU time first: 2 us of CPU then 1 us on the unit each, on two cores.
    let plan = Plan {
        submit_cpu: Some(|_| (2_000, 0)),
        submit_map_unit_ns: 1_000,
        ..Plan::default()
    };
    let mut run = simulation(2, plan, &[]);
    assert_eq!(complete_reads(&mut run, &[0, 1]), [(0, 3_000), (1, 4_000)]);
}

/// 48 reads at once on one core, 1 us of map unit per submit (a host request) and per
/// completion of the program each submit issues (a response, unless `plan` names another
/// queue): the map unit's report section.
fn map_unit_queues(arbiter: MapUnitArbiter, plan: Plan) -> serde_json::Value {
    let plan = Plan {
        submit_map_unit_ns: 1_000,
        flash_done_map_unit_ns: 1_000,
        program_page_per_unit: true,
        arbiter: Some(arbiter),
        ..plan
    };
    let mut run = simulation(1, plan, &[]);
    let lpns: Vec<u64> = (0..48).collect();
    assert_eq!(complete_reads(&mut run, &lpns).len(), 48);
    let report = flashlab_sim::stats::build_report(&run.sim, serde_json::Value::Null).to_json();
    report["utilisation"]["map_unit_queues"].clone()
}

#[test]
fn weighted_round_robin_serves_responses_ahead_of_queued_requests() {
    // FIFO: each program's completion waits behind the submits queued before it. Weighted
    // round robin (fmmu.txt 4.6) with responses weighing 4 and host requests 1 serves a
    // completion after at most the job running and one host request.
    let fifo = map_unit_queues(MapUnitArbiter::Fifo, Plan::default());
    let wrr = map_unit_queues(wrr(1, 1, 4), Plan::default());
    for q in [&fifo, &wrr] {
        assert_eq!(q["host_request"]["jobs"], 48);
        assert_eq!(q["response"]["jobs"], 48);
        assert_eq!(q["gc_request"]["jobs"], 0);
        assert_eq!(q["response"]["busy_ns"], 48_000);
    }
    let wait = |q: &serde_json::Value, key: &str| q[key]["mean_wait_ns"].as_f64().unwrap();
    assert!(
        wait(&fifo, "response") > 10_000.0,
        "FIFO: completions queue behind submits: {fifo}"
    );
    assert!(
        wait(&wrr, "response") <= 2_000.0,
        "WRR: a completion waits for at most two jobs: {wrr}"
    );
    assert!(wait(&wrr, "host_request") > wait(&fifo, "host_request"));
}

fn wrr(host_request: u32, gc_request: u32, response: u32) -> MapUnitArbiter {
    MapUnitArbiter::WeightedRoundRobin(QueueWeights {
        host_request,
        gc_request,
        response,
    })
}

#[test]
fn the_ftl_routes_work_to_the_gc_queue_and_sets_its_weight() {
    // The completions go to the GC request queue; the submits set the host and GC weights,
    // overriding the arbiter's initial (1, 1): GC waits less the more it weighs.
    let gc_wait = |host: u32, gc: u32| {
        let plan = Plan {
            flash_done_queue: Some(MapQueue::GcRequest),
            request_weights: Some((host, gc)),
            ..Plan::default()
        };
        let q = map_unit_queues(wrr(1, 1, 1), plan);
        assert_eq!(q["gc_request"]["jobs"], 48);
        assert_eq!(q["response"]["jobs"], 0);
        q["gc_request"]["mean_wait_ns"].as_f64().unwrap()
    };
    let (favoured, even, starved) = (gc_wait(1, 4), gc_wait(1, 1), gc_wait(4, 1));
    assert!(
        favoured < even && even < starved,
        "GC mean wait with GC weighing 4, 1 and 1/4 of host: {favoured} {even} {starved}"
    );
}

#[test]
fn a_short_handler_commits_before_a_long_one_on_another_core() {
    // Two cores: unit 0 takes 10 us, unit 1 (issued after it) 1 us. Own-end commit: unit 1
    // completes at 1 us; in issue order it would wait for unit 0 (10 us).
    let plan = Plan {
        submit_cpu: Some(|lpn| (if lpn == 0 { 10_000 } else { 1_000 }, 0)),
        ..Plan::default()
    };
    let mut run = simulation(2, plan, &[]);
    assert_eq!(complete_reads(&mut run, &[0, 1]), [(0, 10_000), (1, 1_000)]);
}

#[test]
fn programs_released_out_of_issue_order_still_run_in_page_order() {
    // Two cores: page 0 of block 0 is programmed by a 10 us handler, page 1 by a 1 us
    // handler that commits first. The program of page 1 must not start before page 0's
    // (its callback comes after), and the NAND state stays consistent.
    let plan = Plan {
        submit_cpu: Some(|lpn| (if lpn == 0 { 10_000 } else { 1_000 }, 0)),
        program_page_per_unit: true,
        ..Plan::default()
    };
    let mut run = simulation(2, plan, &[]);
    complete_reads(&mut run, &[0, 1]);
    let log = run.log.borrow();
    let callbacks: Vec<(u64, u64)> = log
        .iter()
        .filter(|e| e.0 == "flash_done")
        .map(|e| (e.2, e.1))
        .collect();
    assert_eq!(callbacks.len(), 2);
    assert_eq!(callbacks[0].0, 1, "page 0's program first: {callbacks:?}");
    assert!(callbacks[0].1 < callbacks[1].1, "{callbacks:?}");
    run.sim.check_invariants().unwrap();
}

/// Read IOPS of the test FTL with mixed handlers (units divisible by 4: 10 us, others 1 us:
/// 3.25 us on average) at queue depth `qd` on `cores` cores, committing in `order`.
fn mixed_iops(cores: u32, qd: u32, order: CommitOrder) -> f64 {
    let plan = Plan {
        submit_cpu: Some(|lpn| (if lpn % 4 == 0 { 10_000 } else { 1_000 }, 0)),
        ..Plan::default()
    };
    let q = format!("workload.queue_depth={qd}");
    let extra = [
        "workload.read_fraction=1.0",
        "workload.count=20000",
        "workload.range_fraction=1.0",
        q.as_str(),
    ];
    let mut run = simulation(cores, plan, &extra);
    run.sim.set_commit_order(order);
    let source = flashlab_sim::workload_source(run.sim.config(), &run.sim).unwrap();
    run.sim.run(source, &mut |_| {}).unwrap();
    let report = flashlab_sim::stats::build_report(&run.sim, serde_json::Value::Null);
    report.host.read.iops
}

#[test]
fn in_order_commit_biases_multi_core_throughput() {
    // The CPU bound is cores / 3.25 us. Own-end commit reaches it once the queue holds a few
    // requests per core; in-order commit loses throughput on several cores at moderate depth
    // (a short handler's completion waits behind a long one, so fewer requests are queued).
    // Measured (fractions of the bound, own-end / in order): 1 core QD 4: 0.987 / 0.987;
    // 2 cores QD 4: 0.987 / 0.872, QD 8: 0.987 / 0.978; 4 cores QD 8: 0.987 / 0.791,
    // QD 16: 0.987 / 0.976, QD 64: 0.987 / 0.987 (0.987: the random mix of this run has a
    // little more than a quarter of long handlers).
    let bound = |cores: u32| f64::from(cores) / 3.25e-6;
    let fraction = |cores, qd, order| mixed_iops(cores, qd, order) / bound(cores);
    for (cores, qd) in [(1, 4), (2, 4), (2, 8), (4, 8), (4, 16), (4, 64)] {
        let own = fraction(cores, qd, CommitOrder::OwnEnd);
        let in_order = fraction(cores, qd, CommitOrder::InOrder);
        eprintln!("cores {cores} QD {qd}: own-end {own:.3} of the bound, in order {in_order:.3}");
        assert!(
            (own - 1.0).abs() < 0.03,
            "{cores} cores QD {qd}: own-end {own:.3}"
        );
        if qd <= cores * 2 && cores > 1 {
            assert!(
                in_order < own - 0.05,
                "{cores} cores QD {qd}: in order {in_order:.3}"
            );
        }
    }
}
