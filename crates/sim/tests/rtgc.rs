//! RTGC (`ftl/rtgc`) against the admission analysis it shares its collector rule with
//! (`realtime::rtgc`): collector jobs are released at the analysis' rate, each victim frees at
//! least α pages, an admitted task set runs without a deadline miss, a late collector job or a
//! fallback collection, a refused one does not, and EDF die queues order collector commands
//! by their job's deadline among the tasks' commands (FIFO does not).

use flashlab_sim::ftl::rtgc::alpha_pages;
use flashlab_sim::realtime::{rtgc, FlashParams, TaskSpec};
use flashlab_sim::workload::parse_spec;
use flashlab_sim::{run_experiment, ExperimentConfig, Report};

/// Two dies (one per channel) of 64 blocks of 16 pages on the `default` preset's timing, data
/// made on the device, preconditioned full (two random passes) so the dies start at the
/// collectors' free-block level; EDF die queues unless a test says otherwise.
const TWO_DIES: &[&str] = &[
    "ftl.name=\"rtgc\"",
    "geometry.channels=2",
    "geometry.chips_per_channel=1",
    "geometry.dies_per_chip=1",
    "geometry.planes_per_die=1",
    "geometry.blocks_per_plane=64",
    "geometry.pages_per_block=16",
    "host.data_over_link=false",
    "run.precondition=1.0",
    "run.precondition_max_passes=2",
    "timing.die_queue_policy=\"edf\"",
];

const MS: f64 = 1e6;

fn config(tasks: &str, extra: &[&str]) -> ExperimentConfig {
    let sets = [TWO_DIES, extra].concat();
    let mut cfg = ExperimentConfig::with_sets("default", &sets).unwrap_or_else(|e| panic!("{e}"));
    cfg.workload = parse_spec(&format!("periodic:tasks={tasks},duration=4s"))
        .unwrap_or_else(|e| panic!("{tasks}: {e}"));
    cfg
}

fn run(cfg: &ExperimentConfig) -> Report {
    run_experiment(cfg, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"))
}

fn counter(r: &Report, key: &str) -> u64 {
    r.ftl_details["counters"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("no counter {key}: {}", r.ftl_details))
}

/// The analysis' view of the device of `cfg` (RTGC's column on two chips): page read and
/// write as cell time plus the page's transfer, the erase, λ.
fn device(cfg: &ExperimentConfig) -> FlashParams {
    let t = &cfg.timing;
    let transfer = f64::from(cfg.geometry.page_bytes) / (t.bus_mb_per_s * 1e6) * 1e9;
    let ratio = cfg.ftl.get("logical_ratio").and_then(|v| v.as_float());
    FlashParams {
        chips: 2,
        write_chips: 2,
        parallel_reads: 2,
        data_chips: 2,
        parity_chips: 0,
        pages_per_block: cfg.geometry.pages_per_block,
        page_bytes: cfg.geometry.page_bytes,
        read_ns: t.read_latency_ns as f64 + transfer,
        gc_read_ns: t.read_latency_ns as f64 + transfer,
        write_ns: t.program_latency_ns as f64 + transfer,
        erase_ns: t.erase_latency_ns as f64,
        logical_ratio: ratio.unwrap_or(0.482),
        ..FlashParams::rtgc()
    }
    .validated()
    .unwrap()
}

/// Task 0 writes `pages` every `period_ms`; task 1 reads a page every 5 ms.
fn task_set(pages: u32, period_ms: f64) -> [TaskSpec; 2] {
    [
        TaskSpec::writer(pages, period_ms * MS).unwrap(),
        TaskSpec::reader(1, 5.0 * MS).unwrap(),
    ]
}

/// The collector period the FTL reports for task 0 is `realtime::rtgc::gc_task`'s, and the
/// number of jobs released follows it: one every p_G / p writer jobs, or p / p_G per writer
/// job.
fn assert_analysis_rate(r: &Report, tasks: &[TaskSpec; 2], dev: &FlashParams) {
    let gc = rtgc::gc_task(&tasks[0], dev).unwrap();
    let collector = &r.ftl_details["collectors"][0];
    assert_eq!(
        collector["collector_period_ns"].as_f64().unwrap(),
        gc.period_ns
    );
    let writer_jobs = counter(r, "writer_jobs");
    assert_eq!(writer_jobs, collector["writer_jobs"].as_u64().unwrap());
    let period = tasks[0].write_period_ns;
    let expected = if gc.period_ns >= period {
        writer_jobs.div_ceil((gc.period_ns / period).round() as u64)
    } else {
        writer_jobs * (period / gc.period_ns).round() as u64
    };
    assert_eq!(
        counter(r, "collector_jobs_released"),
        expected,
        "{}",
        r.ftl_details
    );
}

/// 2 pages every 20 ms and a 1-page read every 5 ms: admitted (α = 16 - ⌈0.482·16⌉ = 8 per
/// die, a job frees 16 pages, one job every 8 writer jobs, p_G = 160 ms). Over 4 s of the
/// periodic workload the collectors run (victims on both dies), every victim frees at least α,
/// every job finishes by its deadline, no write finds its die at the reserve, no write lacks a
/// token and no request misses its deadline.
#[test]
fn an_admitted_set_runs_at_the_analysis_rate_without_misses() {
    let cfg = config("w2p@20ms+r1p@5ms", &[]);
    let dev = device(&cfg);
    let tasks = task_set(2, 20.0);
    rtgc::admission(&tasks, &dev).unwrap_or_else(|t| panic!("refused: {t}"));
    let r = run(&cfg);
    assert_analysis_rate(&r, &tasks, &dev);
    let alpha = alpha_pages(0.482, 16);
    assert_eq!(alpha, 8);
    assert_eq!(f64::from(alpha), dev.reclaimed_pages_bound());
    let victims = counter(&r, "collector_victims");
    assert!(victims >= 20, "{}", r.ftl_details);
    let min = counter(&r, "min_reclaimed_pages_per_victim");
    assert!(min >= u64::from(alpha), "{}", r.ftl_details);
    assert_eq!(counter(&r, "victims_below_alpha"), 0);
    assert!(counter(&r, "collector_pages_reclaimed") >= victims * u64::from(alpha));
    let released = counter(&r, "collector_jobs_released");
    assert_eq!(counter(&r, "collector_jobs_completed"), released);
    assert_eq!(counter(&r, "collector_jobs_late"), 0, "{}", r.ftl_details);
    assert_eq!(counter(&r, "fallback_collections"), 0, "{}", r.ftl_details);
    assert_eq!(counter(&r, "writes_without_token"), 0, "{}", r.ftl_details);
    let deadlines = r.deadlines.as_ref().unwrap();
    assert_eq!(deadlines.requests, 200 + 800);
    assert_eq!(deadlines.misses, 0, "{deadlines:?}");
}

/// 24 pages every 20 ms: more than a job frees (16), so two collector jobs per writer job
/// (p_G = 10 ms), which the analysis refuses (GC alone 2 x 8.4 ms / 20 ms). The FTL still
/// releases them at that rate, and requests miss their deadlines.
#[test]
fn a_refused_set_misses_deadlines() {
    let cfg = config("w24p@20ms+r1p@5ms", &[]);
    let dev = device(&cfg);
    let tasks = task_set(24, 20.0);
    let refused = rtgc::admission(&tasks, &dev).unwrap_err();
    assert!(refused.total() > 1.0, "{refused}");
    let r = run(&cfg);
    assert_analysis_rate(&r, &tasks, &dev);
    assert_eq!(
        counter(&r, "collector_jobs_released"),
        2 * counter(&r, "writer_jobs")
    );
    let deadlines = r.deadlines.as_ref().unwrap();
    assert!(deadlines.misses > 0, "{deadlines:?}");
}

/// A heavy overload (16 pages every 2 ms, four times what the dies can program): collectors
/// fall behind, writes collect on demand and spend tokens they do not have.
#[test]
fn an_overload_falls_back_to_on_demand_collection() {
    let r = run(&config("w16p@2ms+r1p@5ms", &[]));
    assert!(counter(&r, "fallback_collections") > 0, "{}", r.ftl_details);
    assert!(counter(&r, "writes_without_token") > 0, "{}", r.ftl_details);
    assert!(counter(&r, "collector_jobs_late") > 0, "{}", r.ftl_details);
    assert!(r.deadlines.as_ref().unwrap().misses > 0);
}

/// Collector commands carry their job's deadline, and the EDF die queues order them with the
/// tasks' commands. A writer of 24 pages every 30 ms needs a collector job every 15 ms (a job
/// frees 16 pages); a flood of 12 page reads every millisecond, due in 10 s, keeps the dies
/// busy; a reader of one page every 5 ms is due at the end of its period. EDF runs the
/// collectors' copies and erases before the flood (every job ends by its deadline) and the
/// tight reads before both; FIFO makes collector jobs late and the tight reads miss ten times
/// more.
#[test]
fn collector_commands_are_scheduled_by_their_deadlines() {
    let run_with = |policy: &str| {
        let policy = format!("timing.die_queue_policy=\"{policy}\"");
        let r = run(&config(
            "w24p@30ms+r12p@1ms/deadline=10s+r1p@5ms",
            &[&policy],
        ));
        assert!(counter(&r, "collector_victims") >= 100, "{}", r.ftl_details);
        assert_eq!(counter(&r, "fallback_collections"), 0, "{}", r.ftl_details);
        let tight_misses = r.deadlines.as_ref().unwrap().tasks[2].misses;
        (counter(&r, "collector_jobs_late"), tight_misses)
    };
    let (edf_late, edf_misses) = run_with("edf");
    let (fifo_late, fifo_misses) = run_with("fifo");
    assert_eq!(edf_late, 0, "EDF: late collector jobs");
    assert!(fifo_late > 10, "FIFO: {fifo_late} late collector jobs");
    assert!(
        edf_misses * 10 < fifo_misses,
        "tight reads missed: EDF {edf_misses}, FIFO {fifo_misses}"
    );
}

/// Settings the device cannot honour are refused with the field named.
#[test]
fn bad_settings_name_the_field() {
    let bad = |sets: &[&str]| {
        let mut all = TWO_DIES.to_vec();
        all.extend_from_slice(sets);
        ExperimentConfig::with_sets("default", &all)
            .and_then(|c| flashlab_sim::ftl::registry::validate(&c).map(|_| c))
            .err()
            .unwrap_or_else(|| panic!("{sets:?} accepted"))
            .to_string()
    };
    assert!(bad(&["ftl.logical_ratio=0.95"]).contains("ftl.logical_ratio"));
    assert!(
        bad(&["geometry.pages_per_block=2", "ftl.logical_ratio=0.9"]).contains("ftl.logical_ratio")
    );
    assert!(bad(&["ftl.collector_free_blocks=62"]).contains("geometry.blocks_per_plane"));
    assert!(bad(&["ftl.collector_free_blocks=1"]).contains("ftl.collector_free_blocks"));
}
