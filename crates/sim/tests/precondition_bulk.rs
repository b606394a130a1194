//! Preconditioning's bulk path (`engine/bulk.rs`) leaves exactly the state the full host path
//! leaves: for every registered FTL, preconditioning both ways makes the same FTL calls in the
//! same order with the same arguments (recorded by a wrapper around the FTL), gives the same
//! summary, FTL invariants hold, and a timed run afterwards (verified against the shadow map
//! where asked) gives a byte-identical report. The bulk path must really be taken, or the
//! comparison proves nothing.

use std::cell::RefCell;
use std::rc::Rc;

use flashlab_sim::engine::{PathCounts, PreconditionPath, PreconditionSummary};
use flashlab_sim::ftl::mapcache::MapCacheReport;
use flashlab_sim::ftl::merge::MergeProfile;
use flashlab_sim::ftl::{registry, CallTarget, Ftl, FtlCtx, MapUnitArbiter};
use flashlab_sim::host::SubRequest;
use flashlab_sim::nand::Nand;
use flashlab_sim::stats::build_report;
use flashlab_sim::workload::parse_spec;
use flashlab_sim::SimError;
use flashlab_sim::{workload_source, ExperimentConfig, Simulation};

/// A small device (four dies, 48 blocks of 16 4-KiB pages each), preconditioned past one
/// random pass so that GC runs during preconditioning and in the measured window.
const SMALL: &[&str] = &[
    "geometry.channels=2",
    "geometry.chips_per_channel=2",
    "geometry.dies_per_chip=1",
    "geometry.planes_per_die=1",
    "geometry.blocks_per_plane=48",
    "geometry.pages_per_block=16",
    "geometry.page_bytes=4096",
    "run.precondition=0.95",
    "run.precondition_max_passes=1.5",
    "run.seed=11",
    "workload.read_fraction=0.5",
    "workload.count=1500",
];

/// FTLs with an over-provisioning setting (GC per die needs spare blocks on every die).
const PAGE_MAPPED: [&str; 6] = ["pagemap", "mt-ftl", "st-ftl", "dftl", "cdftl", "fmmu"];

/// Real-time FTLs get a periodic task set, as in the reference runs.
const REAL_TIME: [&str; 3] = ["part-ftl", "wao-gc", "rtgc"];

fn config(ftl: &str, extra: &[&str]) -> ExperimentConfig {
    let name = format!("ftl.name={ftl:?}");
    let mut sets = SMALL.to_vec();
    sets.push(&name);
    if ftl == "nftl" {
        sets.extend_from_slice(&[
            "nand.program_order=\"any\"",
            "nand.partial_programs_per_page=3",
        ]);
    }
    if PAGE_MAPPED.contains(&ftl) {
        sets.push("ftl.over_provisioning=0.3");
    }
    if ftl == "rtgc" {
        sets.push("timing.die_queue_policy=\"edf\"");
    }
    sets.extend_from_slice(extra);
    let mut cfg = ExperimentConfig::with_sets("default", &sets).unwrap_or_else(|e| panic!("{e}"));
    if REAL_TIME.contains(&ftl) {
        cfg.workload = parse_spec("periodic:tasks=w1p@2ms+r1p@1ms,count=500").unwrap();
    }
    cfg
}

/// Every FTL call with its arguments, the time and the host requests outstanding.
type CallLog = Rc<RefCell<Vec<String>>>;

/// The registry's FTL, recording every call it gets into a [`CallLog`].
struct Recording {
    inner: Box<dyn Ftl>,
    log: CallLog,
}

impl Recording {
    fn record(&self, ctx: &FtlCtx<'_>, call: String) {
        let line = format!("{call} at {} with {}", ctx.now(), ctx.host_outstanding());
        self.log.borrow_mut().push(line);
    }
}

impl Ftl for Recording {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn logical_bytes(&self) -> u64 {
        self.inner.logical_bytes()
    }
    fn chop_bytes(&self) -> u32 {
        self.inner.chop_bytes()
    }
    fn trim_unit_bytes(&self) -> u32 {
        self.inner.trim_unit_bytes()
    }
    fn units_per_page(&self) -> u32 {
        self.inner.units_per_page()
    }
    fn submit(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        self.record(ctx, format!("submit {sub:?}"));
        self.inner.submit(ctx, sub)
    }
    fn flash_done(&mut self, ctx: &mut FtlCtx<'_>, token: u64) -> Result<(), SimError> {
        self.record(ctx, format!("flash_done {token}"));
        self.inner.flash_done(ctx, token)
    }
    fn wakeup(&mut self, ctx: &mut FtlCtx<'_>, token: u64) -> Result<(), SimError> {
        self.record(ctx, format!("wakeup {token}"));
        self.inner.wakeup(ctx, token)
    }
    fn idle(&mut self, ctx: &mut FtlCtx<'_>) -> Result<(), SimError> {
        self.record(ctx, "idle".into());
        self.inner.idle(ctx)
    }
    fn check_invariants(&self, nand: &Nand) -> Result<(), String> {
        self.inner.check_invariants(nand)
    }
    fn reset_counters(&mut self, now_ns: u64) {
        self.inner.reset_counters(now_ns)
    }
    fn report(&self) -> serde_json::Value {
        self.inner.report()
    }
    fn state_bytes(&self) -> u64 {
        self.inner.state_bytes()
    }
    fn merge_profile(&self) -> Option<MergeProfile> {
        self.inner.merge_profile()
    }
    fn map_cache(&self) -> Option<MapCacheReport> {
        self.inner.map_cache()
    }
    fn core_for(&self, call: CallTarget<'_>, cores: u32) -> Option<u32> {
        self.inner.core_for(call, cores)
    }
    fn map_unit_arbiter(&self) -> MapUnitArbiter {
        self.inner.map_unit_arbiter()
    }
    fn orders_host_calls_by_deadline(&self) -> bool {
        self.inner.orders_host_calls_by_deadline()
    }
}

/// What one way of preconditioning, then the run, gave.
struct Outcome {
    summary: PreconditionSummary,
    counts: PathCounts,
    /// FTL calls during preconditioning.
    calls: Vec<String>,
    report: String,
}

/// Preconditions on `path`, checks the invariants, runs the workload; the summary, the path
/// counts and the report's JSON.
fn run(ftl: &str, cfg: &ExperimentConfig, path: PreconditionPath) -> Outcome {
    let what = format!("{ftl} on {path:?}");
    let log = CallLog::default();
    let recording = Recording {
        inner: registry::build(cfg).unwrap_or_else(|e| panic!("{what}: {e}")),
        log: log.clone(),
    };
    let mut sim =
        Simulation::with_ftl(cfg, Box::new(recording)).unwrap_or_else(|e| panic!("{what}: {e}"));
    let (summary, counts) = sim
        .precondition_on_path(path, &mut |_| {})
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let calls = log.take();
    sim.check_invariants()
        .unwrap_or_else(|e| panic!("{what}: after preconditioning: {e}"));
    let source = workload_source(cfg, &sim).unwrap();
    let source = sim
        .run(source, &mut |_| {})
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    sim.check_invariants()
        .unwrap_or_else(|e| panic!("{what}: after the run: {e}"));
    let report = build_report(&sim, source.describe()).to_json().to_string();
    Outcome {
        summary,
        counts,
        calls,
        report,
    }
}

/// Preconditions `ftl` with `extra` settings both ways and compares.
fn assert_paths_agree(ftl: &str, extra: &[&str]) {
    let cfg = config(ftl, extra);
    let what = format!("{ftl} {extra:?}");
    let full = run(ftl, &cfg, PreconditionPath::Full);
    let bulk = run(ftl, &cfg, PreconditionPath::Bulk);
    assert_eq!(full.counts.bulk, 0, "{what}");
    assert!(
        bulk.counts.full == 0 && bulk.counts.bulk == full.counts.full,
        "{what}: every write takes the bulk path: {:?} of {:?}",
        bulk.counts,
        full.counts
    );
    assert!(
        full.summary.random_writes > 0,
        "{what}: no random overwrites"
    );
    if let Some(i) = (0..full.calls.len().max(bulk.calls.len()))
        .find(|&i| full.calls.get(i) != bulk.calls.get(i))
    {
        panic!(
            "{what}: FTL call {i} of preconditioning differs (of {} calls): full path {:?}, bulk path {:?}",
            full.calls.len(),
            full.calls.get(i),
            bulk.calls.get(i)
        );
    }
    assert_eq!(bulk.summary, full.summary, "{what}: summaries differ");
    assert!(
        bulk.report == full.report,
        "{what}: reports after preconditioning differ:\nfull: {}\nbulk: {}",
        full.report,
        bulk.report
    );
}

#[test]
fn bulk_path_leaves_the_state_of_the_full_path_for_every_ftl() {
    for entry in registry::entries() {
        assert_paths_agree(entry.name, &[]);
    }
}

/// With verify on, the shadow map checks every read of preconditioned data, and the bulk
/// path feeds the shadow as the full path does.
#[test]
fn bulk_path_keeps_verify_runs_identical() {
    for ftl in ["pagemap", "mt-ftl", "fast", "nftl", "dftl", "part-ftl"] {
        assert_paths_agree(ftl, &["run.verify=true"]);
    }
}

/// A multi-core FTL CPU and a functional-only measured run change nothing either.
#[test]
fn bulk_path_agrees_with_several_cores_and_functional_runs() {
    for ftl in ["pagemap", "cdftl", "part-ftl"] {
        assert_paths_agree(ftl, &["cpu.cores=2"]);
        assert_paths_agree(ftl, &["run.functional_only=true"]);
    }
}
