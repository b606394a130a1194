//! The discrete-event engine: one [`Simulation`] owns a device (NAND state, flash scheduler,
//! host link, FTL CPU), an FTL and the host-side request machinery, and advances simulated
//! time from event to event. Nothing is global: many simulations run side by side.
//!
//! FTL handlers run on the FTL CPU: a handler starts when a core is free, runs instantly in
//! simulated terms, and its effects (flash commands, host completions) take effect when its
//! charged CPU time has elapsed, in the order handlers started (in-order commit). With zero
//! CPU cost effects apply at once. In functional-only mode flash, link and CPU take no time.
//!
//! A host request's life: it arrives (with [`LoopMode::BoundedOpen`] pacing it first waits
//! host-side, in arrival order, while the device holds `queue_depth` requests; its response
//! time includes that wait), waits behind earlier overlapping requests
//! ([`OverlapTracker`]), its command message crosses the link down (`CommandIn`), it is chopped
//! into sub-requests; a write sub-request's data crosses the link down before the FTL gets it,
//! a read sub-request's data crosses it up after the FTL finished (both only with
//! `host.data_over_link`); when the last sub-request is done, the completion message (if
//! `host.completion_bytes` > 0) crosses the link up (`CompletionOut`) and the request completes.

mod bulk;
mod cpu;
pub mod events;
mod flush_fence;
mod map_unit;
mod precondition;
mod served;
mod slab;

use std::collections::VecDeque;

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

pub use precondition::{PathCounts, PreconditionPath, PreconditionProgress, PreconditionSummary};
pub use served::{Delivered, Served, Ticket};

use crate::config::{ExperimentConfig, MAX_SIMULATED_NS};
use crate::flash::{CmdId, Completion, FlashScheduler, NIL};
use crate::ftl::merge::MergeStats;
use crate::ftl::{registry, CallTarget, CpuActivity, Effect, Ftl, FtlCounters, FtlCtx, MapQueue};
use crate::host::link::Dir;
use crate::host::{chop, Link, Op, OverlapTracker, Request, SubId, SubRequest};
use crate::nand::{Layout, Nand};
use crate::stats::HostStats;
use crate::stop::{StopCheck, StopPoll};
use crate::verify::Shadow;
use crate::workload::{LoopMode, RequestSource};
use crate::SimError;
use cpu::{Class, FtlCpu};
use events::{Event, EventQueue};
use flush_fence::FlushFence;
pub use map_unit::QueueStats as MapQueueStats;
use map_unit::{Job, MapUnit};
use slab::Slab;

/// Stream of the seed given to the FTL's random numbers.
const FTL_STREAM: u64 = 0xf7_1a_b5;

/// Most requests an open loop may have in the device at once (about 300 MB of request
/// state). An open loop waits for no completion, so arrivals faster than the device serves
/// them pile up without bound: past this many the run stops with an error that gives the
/// figures and the settings that pace it instead (the arrival rate, a bounded-open loop).
pub const MAX_OPEN_LOOP_OUTSTANDING: usize = 1 << 20;

/// Requests a bounded-open loop keeps waiting host-side before it stops reading its source
/// ahead: later arrivals stay in the source until the queue shortens (their arrival times
/// are kept, so response times are the same), and memory stays bounded however far the
/// arrivals outpace the device.
const HOST_QUEUE_READ_AHEAD: usize = 4096;

/// An FTL entry point waiting for (or running on) the FTL CPU.
#[derive(Debug, Clone, Copy)]
enum Call {
    Submit(SubId),
    FlashDone(u64),
    Wakeup(u64),
    Idle,
}

/// When the effects of an FTL handler (releases of its commands, host completions) take
/// effect.
///
/// Measured bias of in-order commit (`tests/ftl_cpu.rs`,
/// `in_order_commit_biases_multi_core_throughput`): a test FTL whose handlers take 10 us for
/// a quarter of the logical units and 1 us for the rest (random 4 KiB reads, no flash work)
/// reaches, as a fraction of its CPU bound (cores / 3.25 us), own-end / in order: 1 core
/// QD 4: 0.987 / 0.987; 2 cores QD 4: 0.987 / 0.872, QD 8: 0.987 / 0.978; 4 cores QD 8:
/// 0.987 / 0.791, QD 16: 0.987 / 0.976, QD 64: 0.987 / 0.987. In-order commit thus
/// understates multi-core throughput when the queue holds few requests per core (a short
/// handler's completion waits for a long one on another core, and the closed loop refills
/// later); with deep queues the cores stay busy either way and only latency suffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitOrder {
    /// When the handler's own CPU time (then its map-unit time) has run. The flash scheduler
    /// still starts commands on one block in issue order (it chains them at submission).
    OwnEnd,
    /// Also not before the effects of every handler that started earlier (in issue order
    /// across cores): a short handler waits behind a long one on another core.
    InOrder,
}

#[derive(Debug, Clone, Copy)]
struct ReqState {
    op: Op,
    first_sector: u64,
    sectors: u64,
    arrival_ns: u64,
    /// When the device took it (after any host-side wait).
    issue_ns: u64,
    /// Absolute deadline (`u64::MAX` for none).
    deadline_ns: u64,
    /// The periodic task that released it.
    task: Option<u32>,
    subs_left: u32,
    version: u64,
    /// Admission order.
    seq: u64,
    /// Counted in the statistics (false for a source's warm-up prefix).
    measured: bool,
}

/// A finished host request, as given to a [`RequestObserver`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletedRequest {
    pub op: Op,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    pub arrival_ns: u64,
    /// When the device took the request: its arrival, or later when it waited host-side
    /// (bounded-open pacing).
    pub issue_ns: u64,
    pub completion_ns: u64,
    /// Whether the request counts in the statistics (not part of a warm-up prefix).
    pub measured: bool,
}

/// Called with every completed request (per-request logs, tests).
pub type RequestObserver = Box<dyn FnMut(&CompletedRequest)>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SubPhase {
    /// Write data crossing the link into the device.
    DataIn,
    /// With the FTL.
    Ftl,
    /// Read data crossing the link to the host.
    DataOut,
}

#[derive(Debug, Clone, Copy)]
struct SubState {
    req: u32,
    first_sector: u64,
    sectors: u64,
    phase: SubPhase,
    pending_cmds: u32,
    ftl_done: bool,
    /// When it was handed to the FTL (its FTL latency runs from here to the FTL's
    /// completion).
    ftl_start_ns: u64,
}

/// Progress of a measured run, passed to the progress callback.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub completed: u64,
    pub expected: Option<u64>,
    pub simulated_ns: u64,
}

/// One simulated SSD with its FTL, and the requests in flight on it.
pub struct Simulation {
    cfg: ExperimentConfig,
    functional: bool,
    now: u64,
    events: EventQueue,
    immediate: VecDeque<Event>,
    nand: Nand,
    flash: FlashScheduler,
    ftl: Box<dyn Ftl>,
    ftl_counters: FtlCounters,
    merge_stats: MergeStats,
    rng: Pcg64Mcg,
    link: Link,
    order: OverlapTracker,
    reqs: Slab<ReqState>,
    subs: Slab<SubState>,
    /// FTL calls waiting for a core, and the cores.
    cpu: FtlCpu<Call>,
    /// The FTL's hardware map unit and its queues.
    map_unit: MapUnit,
    /// Map-unit work whose handler's CPU time has not ended yet (arbitrated map unit).
    map_unit_arrivals: Slab<(MapQueue, Job)>,
    /// Arbitrated map unit: parts of each parked batch (indexed like `batches`) still to run.
    map_unit_parts_left: Vec<u8>,
    effects: Vec<Effect>,
    /// Effects of handlers whose time has not run yet, one batch per handler.
    batches: Slab<Vec<Effect>>,
    /// Emptied batches, reused (no allocation per handler).
    spare_batches: Vec<Vec<Effect>>,
    pending_commits: usize,
    last_commit_ns: u64,
    commit_order: CommitOrder,
    /// The FTL's host sub-requests wait for a core in deadline order
    /// ([`crate::ftl::Ftl::orders_host_calls_by_deadline`]), not in arrival order.
    host_calls_by_deadline: bool,
    completions: Vec<Completion>,
    /// Programs completed (verify runs: what became durable).
    finished_programs: Vec<CmdId>,
    unblocked: Vec<u32>,
    /// Flushes the FTL completed, held until the trims handed to it before them are done.
    flush_fence: FlushFence,
    /// Flushes the fence released, scratch (no allocation per trim).
    released_flushes: Vec<u32>,
    shadow: Option<Shadow>,
    stats: HostStats,
    source: Option<Box<dyn RequestSource>>,
    source_done: bool,
    /// How the current source is paced (read once when it starts).
    pacing: Option<LoopMode>,
    next_open: Option<(Request, bool)>,
    /// Arrived requests waiting host-side, in arrival order, for room in the device
    /// (bounded-open pacing), with whether they are measured.
    host_queue: VecDeque<(Request, bool)>,
    /// The host queue reached [`HOST_QUEUE_READ_AHEAD`]: the next arrival is read from the
    /// source when it shortens.
    open_paused: bool,
    /// When the current source started (open-loop arrival times are relative to it).
    source_start_ns: u64,
    /// A warm-up prefix is running: measurements restart at the first measured request.
    warming_up: bool,
    observer: Option<RequestObserver>,
    requests_admitted: u64,
    next_version: u64,
    sector_bytes: u64,
    chop_sectors: u64,
    logical_sectors: u64,
    measure_start_ns: u64,
    precondition: Option<PreconditionSummary>,
    /// Preconditioning's bulk write in flight, which bypasses the overlap tracker
    /// (`bulk.rs`): 0 or 1, counted in the FTL's `host_outstanding`.
    bulk_outstanding: usize,
    /// Asked every so many steps whether to stop (see [`crate::stop`]).
    stop: StopPoll,
    /// The real-time admission test run before the run (`run.admission`), for the report.
    admission: Option<crate::realtime::analysis::RunAdmission>,
    /// Requests served from outside ([`Simulation::start_serving`]): completions and read
    /// deliveries not yet taken.
    served: Option<Box<served::ServedLog>>,
}

impl Simulation {
    /// Builds the device and FTL of a validated configuration.
    pub fn new(cfg: &ExperimentConfig) -> Result<Self, SimError> {
        cfg.validate()?;
        if cfg.run.max_memory_bytes > 0 {
            crate::memory::check_limit(cfg, cfg.run.max_memory_bytes, "run.max_memory_bytes")?;
        }
        let ftl = registry::build(cfg)?;
        // A real-time task set the test refuses does not run under `run.admission = "enforce"`.
        let admission = crate::realtime::analysis::run_admission(cfg)?;
        let mut sim = Self::with_ftl(cfg, ftl)?;
        sim.admission = admission;
        Ok(sim)
    }

    /// Builds the device of a configuration around a given FTL (one not in the registry, such
    /// as a test's); `cfg.ftl` is not used to build it.
    pub fn with_ftl(cfg: &ExperimentConfig, ftl: Box<dyn Ftl>) -> Result<Self, SimError> {
        let device = cfg.device();
        let layout = Layout::new(&device.geometry);
        let payloads = cfg.run.payloads || cfg.run.verify;
        let nand = Nand::new(
            layout,
            ftl.units_per_page(),
            device.host.sector_bytes,
            payloads,
        )
        .with_rules(&device.nand);
        let functional = cfg.run.functional_only;
        let map_unit = MapUnit::new(ftl.map_unit_arbiter());
        let host_calls_by_deadline = ftl.orders_host_calls_by_deadline();
        let mut flash = FlashScheduler::new(layout, device.timing.clone(), functional);
        flash.set_program_order(device.nand.program_order);
        flash.report_programs(cfg.run.verify);
        let sector_bytes = u64::from(device.host.sector_bytes);
        let logical_sectors = ftl.logical_bytes() / sector_bytes;
        let shadow = cfg.run.verify.then(|| {
            Shadow::new(
                logical_sectors,
                u64::from(ftl.trim_unit_bytes()) / sector_bytes,
            )
        });
        Ok(Simulation {
            functional,
            now: 0,
            events: EventQueue::new(),
            immediate: VecDeque::new(),
            chop_sectors: u64::from(ftl.chop_bytes()) / sector_bytes,
            nand,
            flash,
            ftl,
            ftl_counters: FtlCounters::default(),
            merge_stats: MergeStats::default(),
            rng: Pcg64Mcg::seed_from_u64(cfg.run.seed ^ FTL_STREAM),
            link: Link::new(device.host.clone()),
            order: OverlapTracker::default(),
            reqs: Slab::default(),
            subs: Slab::default(),
            cpu: FtlCpu::new(cfg.cpu.cores),
            map_unit,
            map_unit_arrivals: Slab::default(),
            map_unit_parts_left: Vec::new(),
            effects: Vec::new(),
            batches: Slab::default(),
            spare_batches: Vec::new(),
            pending_commits: 0,
            last_commit_ns: 0,
            commit_order: CommitOrder::OwnEnd,
            host_calls_by_deadline,
            completions: Vec::new(),
            finished_programs: Vec::new(),
            unblocked: Vec::new(),
            flush_fence: FlushFence::default(),
            released_flushes: Vec::new(),
            shadow,
            stats: HostStats::new(),
            source: None,
            source_done: true,
            pacing: None,
            next_open: None,
            host_queue: VecDeque::new(),
            open_paused: false,
            source_start_ns: 0,
            warming_up: false,
            observer: None,
            requests_admitted: 0,
            next_version: 0,
            sector_bytes,
            logical_sectors,
            measure_start_ns: 0,
            precondition: None,
            bulk_outstanding: 0,
            stop: StopPoll::default(),
            admission: None,
            served: None,
            cfg: cfg.clone(),
        })
    }

    pub fn config(&self) -> &ExperimentConfig {
        &self.cfg
    }

    /// Power-loss recovery: a simulation of `cfg` whose FTL rebuilt its state from `nand`,
    /// the flash as a power cut left it (what was programmed, no unit valid; see
    /// `ftl/mapping/recovery.rs`). The FTL is built from the registry and scans the flash
    /// ([`Ftl::recover`]); the flash scheduler takes every programmed page as programmed
    /// (as after preconditioning), and host writes are numbered past every data version the
    /// flash holds. Returns the simulation, at time 0 with nothing in flight, and what the
    /// scan did. In verify runs the shadow knows no sector yet: each sector's first read
    /// adopts what it returns ([`Shadow::recovered`]); writes and trims make it known.
    ///
    /// Errors: an FTL without recovery ([`SimError::RecoveryUnsupported`]), an image of
    /// another geometry, mapping unit or payload setting ([`SimError::Input`]), or a
    /// rebuilt state that fails the FTL's invariants ([`SimError::Ftl`]).
    pub fn recover(
        cfg: &ExperimentConfig,
        mut nand: Nand,
    ) -> Result<(Simulation, crate::ftl::mapping::RecoveryScan), SimError> {
        cfg.validate()?;
        let mut ftl = registry::build(cfg)?;
        if !ftl.supports_recovery() {
            return Err(SimError::RecoveryUnsupported { ftl: ftl.name() });
        }
        let device = cfg.device();
        let layout = Layout::new(&device.geometry);
        let payloads = cfg.run.payloads || cfg.run.verify;
        let image = |message: String| SimError::Input {
            location: "flash image".into(),
            message,
        };
        if *nand.layout() != layout {
            return Err(image(format!(
                "its geometry {:?} is not the configured one {layout:?}",
                nand.layout()
            )));
        }
        if nand.units_per_page() != ftl.units_per_page() {
            return Err(image(format!(
                "it holds {} mapping units per page, FTL `{}` as configured {}",
                nand.units_per_page(),
                ftl.name(),
                ftl.units_per_page()
            )));
        }
        if nand.has_payloads() != payloads {
            return Err(image(format!(
                "it {} data versions, the configuration (run.payloads, run.verify) {}",
                if nand.has_payloads() {
                    "holds"
                } else {
                    "holds no"
                },
                if payloads { "needs them" } else { "has none" }
            )));
        }
        if nand.program_order() != device.nand.program_order {
            return Err(image(
                "its NAND program order is not the configured nand.program_order".into(),
            ));
        }
        if nand.any_valid() {
            return Err(image(
                "it has unit slots marked valid: recovery starts from the flash alone \
                 (Nand::clear_validity)"
                    .into(),
            ));
        }
        let mut scan =
            crate::ftl::mapping::RecoveryScan::new(ftl.name(), layout, device.timing.clone());
        ftl.recover(&mut nand, &mut scan)?;
        scan.finish();
        let name = ftl.name();
        let mut sim = Self::with_ftl(cfg, ftl)?;
        sim.next_version = nand.max_payload_version();
        sim.nand = nand;
        for block in 0..layout.blocks() {
            sim.flash
                .assume_programmed(block, sim.nand.block(block).write_ptr);
        }
        if let Some(shadow) = &mut sim.shadow {
            *shadow = Shadow::recovered(
                sim.logical_sectors,
                u64::from(sim.ftl.trim_unit_bytes()) / sim.sector_bytes,
            );
        }
        sim.check_invariants().map_err(|message| SimError::Ftl {
            ftl: name,
            message: format!("state rebuilt by power-loss recovery is inconsistent: {message}"),
        })?;
        Ok((sim, scan))
    }

    /// The data version of the last write admitted (0 before any): tests that model what
    /// each write carried read it after [`Simulation::submit`].
    pub fn last_write_version(&self) -> u64 {
        self.next_version
    }

    /// The admission test [`Simulation::new`] ran (`None` when it does not apply).
    pub fn admission(&self) -> Option<&crate::realtime::analysis::RunAdmission> {
        self.admission.as_ref()
    }
    pub fn now(&self) -> u64 {
        self.now
    }
    pub fn nand(&self) -> &Nand {
        &self.nand
    }
    pub fn ftl(&self) -> &dyn Ftl {
        self.ftl.as_ref()
    }
    pub fn flash(&self) -> &FlashScheduler {
        &self.flash
    }
    pub fn host_stats(&self) -> &HostStats {
        &self.stats
    }
    pub fn ftl_counters(&self) -> &FtlCounters {
        &self.ftl_counters
    }

    /// Merges and folds since the measurements were last cleared.
    pub fn merge_stats(&self) -> &MergeStats {
        &self.merge_stats
    }
    pub fn shadow(&self) -> Option<&Shadow> {
        self.shadow.as_ref()
    }
    pub fn logical_bytes(&self) -> u64 {
        self.logical_sectors * self.sector_bytes
    }
    pub fn precondition_summary(&self) -> Option<&PreconditionSummary> {
        self.precondition.as_ref()
    }
    pub fn measure_start_ns(&self) -> u64 {
        self.measure_start_ns
    }
    pub fn link(&self) -> &Link {
        &self.link
    }
    /// FTL CPU time of all cores since the measurement started.
    pub fn cpu_busy_ns(&self) -> u64 {
        self.cpu.busy_ns()
    }
    /// FTL CPU time of each core since the measurement started.
    pub fn core_busy_ns(&self) -> &[u64] {
        self.cpu.core_busy_ns()
    }
    /// FTL CPU time spent on `activity` (all cores) since the measurement started.
    pub fn cpu_activity_busy_ns(&self, activity: CpuActivity) -> u64 {
        self.cpu.activity_busy_ns(activity)
    }
    /// Time of the FTL's hardware map unit since the measurement started.
    pub fn map_unit_busy_ns(&self) -> u64 {
        self.map_unit.busy_ns()
    }
    /// Work and waiting of one map-unit queue since the measurement started.
    pub fn map_queue_stats(&self, queue: MapQueue) -> MapQueueStats {
        self.map_unit.queue_stats(queue)
    }
    /// When FTL handler effects take effect (see [`CommitOrder`]); for measuring the bias of
    /// in-order commit.
    #[doc(hidden)]
    pub fn set_commit_order(&mut self, order: CommitOrder) {
        self.commit_order = order;
    }
    /// Requests the device holds (admitted, not yet completed).
    pub fn outstanding(&self) -> usize {
        self.order.len()
    }
    /// Requests that arrived and wait host-side for room in the device (bounded-open pacing).
    pub fn host_queued(&self) -> usize {
        self.host_queue.len()
    }

    /// Checks the FTL invariants and NAND bookkeeping (meaningful when nothing is in flight).
    pub fn check_invariants(&self) -> Result<(), String> {
        self.nand.check_consistency()?;
        self.ftl.check_invariants(&self.nand)
    }

    /// Clears every measurement (host statistics, flash and FTL counters, utilisation).
    pub fn reset_measurements(&mut self) {
        self.stats =
            HostStats::new().with_timeseries(self.cfg.run.timeseries_interval_ns, self.now);
        self.flash.reset_counters();
        self.flash.restart_busy_clock(self.now);
        self.ftl_counters = FtlCounters::default();
        self.merge_stats = MergeStats::default();
        self.ftl.reset_counters(self.now);
        self.link.reset_counters();
        self.cpu.reset_counters();
        self.map_unit.reset_counters();
        self.measure_start_ns = self.now;
    }

    /// Switches between functional-only and timed simulation (only when nothing is in flight).
    pub(crate) fn set_functional(&mut self, functional: bool) {
        debug_assert_eq!(self.flash.in_flight(), 0);
        if functional != self.functional {
            self.functional = functional;
            let timing = self.cfg.timing.clone();
            let layout = *self.nand.layout();
            let counters = self.flash.counters().clone();
            self.flash = FlashScheduler::new(layout, timing, functional);
            self.flash.set_program_order(self.cfg.nand.program_order);
            self.flash.restore_counters(counters);
            self.flash.report_programs(self.shadow.is_some());
            // A timed scheduler takes over pages programmed in the functional phase.
            for block in 0..layout.blocks() {
                self.flash
                    .assume_programmed(block, self.nand.block(block).write_ptr);
            }
        }
    }

    /// Admits one request now (or at its arrival time if later, for open-loop use).
    pub fn submit(&mut self, request: Request) -> Result<(), SimError> {
        let request = Request {
            arrival_ns: request.arrival_ns.max(self.now),
            ..request
        };
        self.admit(request, true)
    }

    /// From now on, asks `check` every [`crate::stop`] progress point (a fixed number of
    /// steps, in preconditioning and measured runs) whether to stop; when it says so, the
    /// running call ends with [`SimError::Interrupted`] and the simulation is to be dropped.
    /// `None` removes the check.
    pub fn set_stop_check(&mut self, check: Option<StopCheck>) {
        self.stop.set(check);
    }

    /// The stop check set by [`Simulation::set_stop_check`], to hand to a request source.
    pub fn stop_check(&self) -> Option<StopCheck> {
        self.stop.check().cloned()
    }

    /// Calls `observer` with every request completed from now on.
    pub fn set_observer(&mut self, observer: RequestObserver) {
        self.observer = Some(observer);
    }

    /// Runs until no event, call or request is left.
    pub fn run_until_idle(&mut self) -> Result<(), SimError> {
        while self.step()? {}
        Ok(())
    }

    /// Runs until the host statistics count `completed` requests complete, or nothing is
    /// left; a closed loop driven from outside submits its next request then (the
    /// differential test's continuous queue).
    pub fn run_until_completed(&mut self, completed: u64) -> Result<(), SimError> {
        while self.stats.completed() < completed && self.step()? {}
        Ok(())
    }

    /// Does the next thing: routes flash completions, then runs a ready FTL call, else handles
    /// an event due now, else advances time to the next event. False when nothing is left.
    fn step(&mut self) -> Result<bool, SimError> {
        self.stop.point()?;
        self.drain_completions()?;
        if let Some(call) = self.next_call() {
            self.run_call(call)?;
        } else if let Some(ev) = self.immediate.pop_front() {
            self.handle(ev)?;
        } else if let Some((t, ev)) = self.events.pop() {
            self.now = t;
            self.handle(ev)?;
        } else {
            return Ok(false);
        }
        Ok(true)
    }

    /// Replays `source` to its end, measuring from now (or from the end of the source's
    /// warm-up prefix); `progress` is called periodically. Gives the source back, so it can
    /// describe what it did.
    pub fn run(
        &mut self,
        source: Box<dyn RequestSource>,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Box<dyn RequestSource>, SimError> {
        self.reset_measurements();
        self.source_start_ns = self.now;
        self.warming_up = false;
        let expected = source.expected_requests();
        self.source = Some(source);
        self.source_done = false;
        self.start_source()?;
        let mut reported = 0;
        while self.step()? {
            let done = self.stats.completed();
            if done >= reported + 16_384 {
                reported = done;
                progress(Progress {
                    completed: done,
                    expected,
                    simulated_ns: self.now,
                });
            }
        }
        progress(Progress {
            completed: self.stats.completed(),
            expected,
            simulated_ns: self.now,
        });
        self.pacing = None;
        Ok(self.source.take().expect("the source stays during a run"))
    }

    fn start_source(&mut self) -> Result<(), SimError> {
        self.pacing = self.source.as_ref().map(|s| s.loop_mode());
        self.open_paused = false;
        match self.pacing {
            Some(LoopMode::Closed { queue_depth }) => {
                for _ in 0..queue_depth {
                    if !self.pull_closed()? {
                        break;
                    }
                }
            }
            Some(LoopMode::Open | LoopMode::BoundedOpen { .. }) => self.pull_open()?,
            None => {}
        }
        Ok(())
    }

    /// An open-loop request arrived: the device takes it now, unless bounded-open pacing
    /// holds it host-side behind the others waiting (the device holds `queue_depth`).
    fn arrive(&mut self, r: Request, measured: bool) -> Result<(), SimError> {
        match self.pacing {
            Some(LoopMode::BoundedOpen { queue_depth })
                if !self.host_queue.is_empty() || self.order.len() >= queue_depth as usize =>
            {
                self.host_queue.push_back((r, measured));
                return Ok(());
            }
            Some(LoopMode::Open) if self.order.len() >= MAX_OPEN_LOOP_OUTSTANDING => {
                return Err(self.open_loop_backlog_error());
            }
            _ => {}
        }
        self.admit(r, measured)
    }

    /// The error of an open loop whose arrivals outpace the device without bound.
    fn open_loop_backlog_error(&self) -> SimError {
        let elapsed_ns = self.now.saturating_sub(self.source_start_ns);
        SimError::Input {
            location: "open loop".into(),
            message: format!(
                "arrivals outpace the device: {} requests are outstanding after {:.6} s of \
                 simulated time ({} arrived, {} completed); an open loop waits for none, so \
                 they would pile up without bound (the limit is {MAX_OPEN_LOOP_OUTSTANDING}); \
                 lower the arrival rate (workload.rate_iops, trace.speedup) or hold the excess \
                 host-side in a bounded-open loop (workload.pacing=bounded-open with qd=N, \
                 trace.replay=bounded-open)",
                self.order.len(),
                elapsed_ns as f64 / 1e9,
                self.requests_admitted + 1,
                self.stats.completed()
            ),
        }
    }

    /// Bounded-open pacing: hands the device the requests waiting host-side while it has room.
    fn admit_held(&mut self) -> Result<(), SimError> {
        let Some(LoopMode::BoundedOpen { queue_depth }) = self.pacing else {
            return Ok(());
        };
        while self.order.len() < queue_depth as usize {
            let Some((r, measured)) = self.host_queue.pop_front() else {
                break;
            };
            self.admit(r, measured)?;
        }
        if self.open_paused && self.host_queue.len() < HOST_QUEUE_READ_AHEAD {
            self.open_paused = false;
            self.pull_open()?;
        }
        Ok(())
    }

    /// Admits the next closed-loop request now; false when the source is exhausted.
    fn pull_closed(&mut self) -> Result<bool, SimError> {
        let Some(source) = self.source.as_mut() else {
            return Ok(false);
        };
        if self.source_done {
            return Ok(false);
        }
        if let Some(limit) = source.duration_ns() {
            if self.now >= self.source_start_ns.saturating_add(limit) {
                self.source_done = true;
                return Ok(false);
            }
        }
        match source.next_request(self.now)? {
            Some(r) => {
                let measured = !source.in_warmup();
                self.admit(
                    Request {
                        arrival_ns: self.now,
                        ..r
                    },
                    measured,
                )?;
                Ok(true)
            }
            None => {
                self.source_done = true;
                Ok(false)
            }
        }
    }

    /// Schedules the arrival of the next open-loop request.
    fn pull_open(&mut self) -> Result<(), SimError> {
        let Some(source) = self.source.as_mut() else {
            return Ok(());
        };
        match source.next_request(self.now)? {
            Some(r) => {
                let at = self
                    .source_start_ns
                    .checked_add(r.arrival_ns)
                    .filter(|&at| at <= MAX_SIMULATED_NS)
                    .ok_or_else(|| SimError::Input {
                        location: format!("request #{}", self.requests_admitted + 1),
                        message: format!(
                            "arrives {} ns after the start, beyond the 146 years (2^62 ns) the simulated clock holds",
                            r.arrival_ns
                        ),
                    })?;
                let measured = !source.in_warmup();
                self.next_open = Some((
                    Request {
                        arrival_ns: at,
                        ..r
                    },
                    measured,
                ));
                self.events.schedule(at.max(self.now), Event::Arrival);
            }
            None => self.source_done = true,
        }
        Ok(())
    }

    fn admit(&mut self, r: Request, measured: bool) -> Result<(), SimError> {
        self.requests_admitted += 1;
        if !measured {
            self.warming_up = true;
        } else if self.warming_up {
            self.warming_up = false;
            self.reset_measurements();
        }
        let (first, count) = self.check_request(&r)?;
        let version = if r.op == Op::Write {
            self.next_version += 1;
            self.next_version
        } else {
            0
        };
        let deadline_ns = if r.deadline_ns > 0 {
            r.arrival_ns.saturating_add(r.deadline_ns)
        } else {
            u64::MAX
        };
        let id = self.reqs.insert(ReqState {
            op: r.op,
            first_sector: first,
            sectors: count,
            arrival_ns: r.arrival_ns,
            issue_ns: self.now.max(r.arrival_ns),
            deadline_ns,
            task: r.task,
            subs_left: 0,
            version,
            seq: self.requests_admitted,
            measured,
        });
        if r.op == Op::Flush {
            if let Some(shadow) = &mut self.shadow {
                shadow.flush_arrived(id);
            }
        }
        if self.order.arrive(id, r.op, first, count) {
            self.start_request(id);
        }
        Ok(())
    }

    /// Converts a request to sectors, rejecting what the device cannot serve.
    fn check_request(&self, r: &Request) -> Result<(u64, u64), SimError> {
        let bad = |message: String| SimError::Input {
            location: format!("request #{}", self.requests_admitted),
            message,
        };
        if r.op == Op::Flush {
            return Ok((0, 0));
        }
        let s = self.sector_bytes;
        if r.offset_bytes % s != 0 || r.len_bytes % s != 0 {
            return Err(bad(format!(
                "{} of {} bytes at byte offset {} is not aligned to {s}-byte sectors",
                r.op.name(),
                r.len_bytes,
                r.offset_bytes
            )));
        }
        if r.len_bytes == 0 {
            return Err(bad(format!(
                "{} of zero bytes at offset {}",
                r.op.name(),
                r.offset_bytes
            )));
        }
        let end = r.offset_bytes.checked_add(r.len_bytes);
        let capacity = self.logical_sectors * s;
        if end.is_none_or(|e| e > capacity) {
            return Err(bad(format!(
                "{} of {} bytes at offset {} ends beyond the {capacity}-byte logical capacity",
                r.op.name(),
                r.len_bytes,
                r.offset_bytes
            )));
        }
        Ok((r.offset_bytes / s, r.len_bytes / s))
    }

    /// Schedules `event` at `time`, or queues it for now in functional-only mode.
    fn at(&mut self, time: u64, event: Event) {
        if self.functional || time <= self.now {
            self.immediate.push_back(event);
        } else {
            self.events.schedule(time, event);
        }
    }

    /// Sends the command message of a request down the link.
    fn start_request(&mut self, req: u32) {
        if self.functional {
            self.immediate.push_back(Event::CommandIn { req });
            return;
        }
        let end = self.link.command(self.now);
        self.at(end, Event::CommandIn { req });
    }

    /// The command reached the device: create its sub-requests.
    fn command_in(&mut self, req: u32) -> Result<(), SimError> {
        let r = *self.reqs.get(req);
        match r.op {
            Op::Read | Op::Write => {
                // Write data crosses the link before the FTL sees it (no time when functional,
                // not at all when the data is made on the device).
                let data_in = r.op == Op::Write && !self.functional && self.link.data_over_link();
                let mut n = 0;
                for (first, count) in chop(r.first_sector, r.sectors, self.chop_sectors) {
                    n += 1;
                    let sub = self.subs.insert(SubState {
                        req,
                        first_sector: first,
                        sectors: count,
                        phase: if data_in {
                            SubPhase::DataIn
                        } else {
                            SubPhase::Ftl
                        },
                        pending_cmds: 0,
                        ftl_done: false,
                        ftl_start_ns: self.now,
                    });
                    if let (Op::Read, Some(shadow)) = (r.op, &mut self.shadow) {
                        shadow.begin_read(sub, first, count);
                    }
                    if data_in {
                        let bytes = count * self.sector_bytes;
                        let end = self.link.transfer(Dir::Down, self.now, bytes, 0);
                        self.at(end, Event::LinkDone { sub });
                    } else {
                        self.push_call(Call::Submit(sub))?;
                    }
                }
                self.reqs.get_mut(req).subs_left = n;
            }
            Op::Trim | Op::Flush => {
                if r.op == Op::Trim {
                    self.flush_fence.trim_started(req);
                }
                let sub = self.subs.insert(SubState {
                    req,
                    first_sector: r.first_sector,
                    sectors: r.sectors,
                    phase: SubPhase::Ftl,
                    pending_cmds: 0,
                    ftl_done: false,
                    ftl_start_ns: self.now,
                });
                self.reqs.get_mut(req).subs_left = 1;
                self.push_call(Call::Submit(sub))?;
            }
        }
        Ok(())
    }

    fn link_done(&mut self, sub: SubId) -> Result<(), SimError> {
        match self.subs.get(sub).phase {
            SubPhase::DataIn => {
                let s = self.subs.get_mut(sub);
                s.phase = SubPhase::Ftl;
                s.ftl_start_ns = self.now;
                self.push_call(Call::Submit(sub))
            }
            SubPhase::DataOut => self.sub_done(sub),
            SubPhase::Ftl => unreachable!("link transfer of a sub-request held by the FTL"),
        }
    }

    /// Called when the FTL finished with a sub-request or one of its commands completed.
    fn check_sub(&mut self, sub: SubId) -> Result<(), SimError> {
        let s = self.subs.get(sub);
        if !(s.ftl_done && s.pending_cmds == 0 && s.phase == SubPhase::Ftl) {
            return Ok(());
        }
        let (sectors, ftl_start_ns) = (s.sectors, s.ftl_start_ns);
        let r = self.reqs.get(s.req);
        let op = r.op;
        if r.measured {
            let bytes = sectors * self.sector_bytes;
            self.stats
                .record_sub_request(op, bytes, self.now - ftl_start_ns);
        }
        if op == Op::Read && !self.functional && self.link.data_over_link() {
            let bytes = s.sectors * self.sector_bytes;
            self.subs.get_mut(sub).phase = SubPhase::DataOut;
            let end = self.link.transfer(Dir::Up, self.now, bytes, 0);
            self.at(end, Event::LinkDone { sub });
            Ok(())
        } else {
            self.sub_done(sub)
        }
    }

    fn sub_done(&mut self, sub: SubId) -> Result<(), SimError> {
        let req = self.subs.get(sub).req;
        self.subs.remove(sub);
        if let (Op::Read, Some(shadow)) = (self.reqs.get(req).op, &mut self.shadow) {
            shadow.end_read(sub, self.ftl.name())?;
        }
        let r = self.reqs.get_mut(req);
        r.subs_left -= 1;
        if r.subs_left == 0 {
            self.device_done(req)?;
        }
        Ok(())
    }

    /// The device finished a request. A flush waits here for the trims handed to the FTL before it ([`FlushFence`]); a
    /// trim releases the flushes that waited for it, whose completions follow its own.
    fn device_done(&mut self, req: u32) -> Result<(), SimError> {
        match self.reqs.get(req).op {
            Op::Flush if !self.flush_fence.flush_done(req) => return Ok(()),
            Op::Trim => {
                self.completion_out(req)?;
                let mut released = std::mem::take(&mut self.released_flushes);
                self.flush_fence.trim_done(req, &mut released);
                let result = released.drain(..).try_for_each(|f| self.completion_out(f));
                self.released_flushes = released;
                return result;
            }
            _ => {}
        }
        self.completion_out(req)
    }

    /// The completion message of request `req` crosses the link up (no time when
    /// functional), then the host sees it complete.
    fn completion_out(&mut self, req: u32) -> Result<(), SimError> {
        if !self.functional {
            if let Some(end) = self.link.completion(self.now) {
                self.at(end, Event::CompletionOut { req });
                return Ok(());
            }
        }
        self.request_done(req)
    }

    /// The host sees the request complete.
    fn request_done(&mut self, req: u32) -> Result<(), SimError> {
        let r = *self.reqs.get(req);
        self.reqs.remove(req);
        if r.measured {
            self.record_completed(&r);
        }
        if let Some(observer) = &mut self.observer {
            observer(&CompletedRequest {
                op: r.op,
                offset_bytes: r.first_sector * self.sector_bytes,
                len_bytes: r.sectors * self.sector_bytes,
                arrival_ns: r.arrival_ns,
                issue_ns: r.issue_ns,
                completion_ns: self.now,
                measured: r.measured,
            });
        }
        if self.served.is_some() {
            self.log_served(r.seq, r.op, r.arrival_ns);
        }
        if let Some(shadow) = &mut self.shadow {
            match r.op {
                Op::Write => shadow.write(r.first_sector, r.sectors, r.version),
                Op::Trim => shadow.trim(r.first_sector, r.sectors),
                Op::Flush => shadow.flush_completed(req, self.ftl.name())?,
                Op::Read => {}
            }
        }
        let mut unblocked = std::mem::take(&mut self.unblocked);
        self.order.finish(req, &mut unblocked);
        // A preconditioning bulk write (the only request then) is done for the FTL too.
        self.bulk_outstanding = 0;
        for id in unblocked.drain(..) {
            self.start_request(id);
        }
        self.unblocked = unblocked;
        match self.pacing {
            Some(LoopMode::Closed { .. }) => {
                self.pull_closed()?;
            }
            Some(LoopMode::BoundedOpen { .. }) => self.admit_held()?,
            _ => {}
        }
        if self.order.is_empty() && !self.source_done && !self.functional {
            self.push_call(Call::Idle)?;
        }
        Ok(())
    }

    /// Adds a measured request the host sees complete now to the statistics: latency,
    /// host-side wait, deadline and task.
    fn record_completed(&mut self, r: &ReqState) {
        let latency = self.now - r.arrival_ns;
        let bytes = r.sectors * self.sector_bytes;
        self.stats
            .record(r.op, bytes, r.arrival_ns, self.now, latency);
        self.stats.record_host_wait(r.issue_ns - r.arrival_ns);
        if r.deadline_ns != u64::MAX {
            self.stats.record_deadline(r.task, self.now, r.deadline_ns);
        }
        if let Some(task) = r.task {
            self.stats.record_task(task, r.op, bytes, latency);
        }
    }

    /// Queues an FTL call for the CPU, in its priority class, bound to the core the FTL names
    /// (timed runs only); host sub-requests by deadline when the FTL asks (idle calls then
    /// after every sub-request).
    fn push_call(&mut self, call: Call) -> Result<(), SimError> {
        let class = match call {
            Call::FlashDone(_) | Call::Wakeup(_) => Class::Urgent,
            Call::Submit(_) | Call::Idle => Class::Normal,
        };
        let core = if self.functional {
            None
        } else {
            self.core_for(call)?
        };
        let order_key = match call {
            Call::Submit(sub) if self.host_calls_by_deadline => {
                self.reqs.get(self.subs.get(sub).req).deadline_ns
            }
            Call::Idle if self.host_calls_by_deadline => u64::MAX,
            _ => 0,
        };
        self.cpu.push(call, class, core, order_key);
        Ok(())
    }

    /// The core the FTL binds `call` to, checked to exist.
    fn core_for(&self, call: Call) -> Result<Option<u32>, SimError> {
        let cores = self.cpu.cores();
        let sub;
        let target = match call {
            Call::Submit(id) => {
                sub = self.sub_request(id);
                CallTarget::Submit(&sub)
            }
            Call::FlashDone(token) => CallTarget::FlashDone(token),
            Call::Wakeup(token) => CallTarget::Wakeup(token),
            Call::Idle => CallTarget::Idle,
        };
        match self.ftl.core_for(target, cores) {
            Some(k) if k >= cores => Err(SimError::Ftl {
                ftl: self.ftl.name(),
                message: format!("core_for chose core {k} of {cores} cores (0 .. {cores})"),
            }),
            core => Ok(core),
        }
    }

    /// What the FTL is given of sub-request `id`.
    fn sub_request(&self, id: SubId) -> SubRequest {
        let s = self.subs.get(id);
        let r = self.reqs.get(s.req);
        SubRequest {
            id,
            op: r.op,
            first_sector: s.first_sector,
            sectors: s.sectors,
            version: r.version,
            deadline_ns: r.deadline_ns,
            arrival_seq: r.seq,
            arrival_ns: r.arrival_ns,
            request_sectors: r.sectors,
            request_first_sector: r.first_sector,
            task: r.task,
        }
    }

    /// The next FTL call that can run now and its core (functional runs: any call).
    fn next_call(&mut self) -> Option<(Call, u32)> {
        self.cpu.pop(self.functional)
    }

    /// Runs one FTL entry point on `core` and schedules its effects after its time.
    fn run_call(&mut self, (call, core): (Call, u32)) -> Result<(), SimError> {
        let request = match call {
            Call::Submit(sub) => Some(self.sub_request(sub)),
            _ => None,
        };
        let mut effects = std::mem::take(&mut self.effects);
        effects.clear();
        let mut ctx = FtlCtx {
            now: self.now,
            ftl_name: self.ftl.name(),
            nand: &mut self.nand,
            flash: &mut self.flash,
            effects: &mut effects,
            events: &mut self.events,
            shadow: self.shadow.as_mut(),
            deliveries: self.served.as_deref_mut().map(|log| &mut log.by_sub),
            counters: &mut self.ftl_counters,
            merges: &mut self.merge_stats,
            rng: &mut self.rng,
            cpu_ns: 0,
            cpu_by_activity: [0; 5],
            map_unit_ns: [0; 3],
            map_queue: match call {
                Call::Submit(_) | Call::Idle => MapQueue::HostRequest,
                Call::FlashDone(_) | Call::Wakeup(_) => MapQueue::Response,
            },
            request_weights: None,
            host_outstanding: self.order.len() + self.bulk_outstanding,
            sector_bytes: self.sector_bytes as u32,
        };
        let result = match call {
            Call::Submit(_) => match &request {
                Some(request) => self.ftl.submit(&mut ctx, request),
                None => unreachable!("a submit call has its sub-request"),
            },
            Call::FlashDone(token) => self.ftl.flash_done(&mut ctx, token),
            Call::Wakeup(token) => self.ftl.wakeup(&mut ctx, token),
            Call::Idle => self.ftl.idle(&mut ctx),
        };

        let (by_activity, unit_ns) = if self.functional {
            ([0; 5], [0; 3])
        } else {
            (ctx.cpu_by_activity, ctx.map_unit_ns)
        };
        if let Some((host, gc)) = ctx.request_weights {
            self.map_unit.set_request_weights(host, gc);
        }
        if self.served.is_some() {
            self.resolve_deliveries();
        }
        result?;
        let cpu_end = self.now + self.cpu.occupy(core, &by_activity);
        let has_unit_work = unit_ns.iter().any(|&ns| ns > 0);
        if has_unit_work
            && self.map_unit.is_arbitrated()
            && self.commit_order == CommitOrder::OwnEnd
        {
            self.queue_map_unit_parts(&mut effects, unit_ns, cpu_end);
        } else {
            self.commit_after_map_unit(&mut effects, unit_ns, cpu_end)?;
        }
        if cpu_end > self.now {
            // After the commit event: effects due when the core frees apply before the core's
            // next handler runs.
            self.events.schedule(cpu_end, Event::CoreFree { core });
        }
        self.effects = effects;
        Ok(())
    }

    /// Applies a handler's effects once its CPU time and then its map-unit time (reserved in
    /// handler order) have run, or at once if both are zero.
    fn commit_after_map_unit(
        &mut self,
        effects: &mut Vec<Effect>,
        unit_ns: [u64; 3],
        cpu_end: u64,
    ) -> Result<(), SimError> {
        let ready = self.map_unit.reserve(cpu_end, unit_ns);
        let commit_at = match self.commit_order {
            CommitOrder::OwnEnd => ready,
            CommitOrder::InOrder => ready.max(self.last_commit_ns),
        };
        self.last_commit_ns = self.last_commit_ns.max(commit_at);
        let in_order_wait = self.commit_order == CommitOrder::InOrder && self.pending_commits > 0;
        if commit_at == self.now && !in_order_wait {
            for &effect in effects.iter() {
                self.apply(effect)?;
            }
            effects.clear();
        } else {
            let slot = self.park(effects);
            self.events
                .schedule(commit_at, Event::Commit { batch: slot });
        }
        Ok(())
    }

    /// Keeps a handler's effects in a batch until its time has run (then [`Self::commit`]).
    /// Attachments apply at once: they only hold a sub-request open until its command
    /// completes, which cannot happen before the command is released, so a later handler's
    /// commit cannot complete it early.
    fn park(&mut self, effects: &mut Vec<Effect>) -> u32 {
        let mut batch = self.spare_batches.pop().unwrap_or_default();
        for &effect in effects.iter() {
            match effect {
                Effect::Attach(sub) => self.subs.get_mut(sub).pending_cmds += 1,
                _ => batch.push(effect),
            }
        }
        effects.clear();
        self.pending_commits += 1;
        self.batches.insert(batch)
    }

    /// Arbitrated map unit: each queue's part of a handler's map-unit work (`unit_ns`, per
    /// [`MapQueue`]) waits in its queue from `cpu_end`; the effects take effect once every
    /// part has run.
    fn queue_map_unit_parts(&mut self, effects: &mut Vec<Effect>, unit_ns: [u64; 3], cpu_end: u64) {
        let batch = self.park(effects);
        let slot = batch as usize;
        if self.map_unit_parts_left.len() <= slot {
            self.map_unit_parts_left.resize(slot + 1, 0);
        }
        self.map_unit_parts_left[slot] = unit_ns.iter().filter(|&&ns| ns > 0).count() as u8;
        for queue in MapQueue::ALL {
            let ns = unit_ns[queue as usize];
            if ns > 0 {
                let job = Job {
                    batch,
                    ns,
                    ready_ns: cpu_end,
                };
                self.map_unit_arrive(queue, job);
            }
        }
    }

    /// Arbitrated map unit: `job` joins `queue` when its handler's CPU time ends.
    fn map_unit_arrive(&mut self, queue: MapQueue, job: Job) {
        if job.ready_ns > self.now {
            let slot = self.map_unit_arrivals.insert((queue, job));
            self.events
                .schedule(job.ready_ns, Event::MapUnitReady { job: slot });
        } else {
            self.map_unit.enqueue(queue, job);
            self.start_map_unit();
        }
    }

    /// Arbitrated map unit: if it is idle, the arbiter's next pick starts now.
    fn start_map_unit(&mut self) {
        if let Some((batch, end)) = self.map_unit.start_next(self.now) {
            self.events.schedule(end, Event::MapUnitDone { batch });
        }
    }

    fn apply(&mut self, effect: Effect) -> Result<(), SimError> {
        match effect {
            Effect::Attach(sub) => self.subs.get_mut(sub).pending_cmds += 1,
            Effect::Release(cmd) => self.flash.release(cmd, self.now, &mut self.events),
            Effect::Done { token, sub } => self.flash.complete_instant(token, sub),
            Effect::Complete(sub) => {
                self.subs.get_mut(sub).ftl_done = true;
                self.check_sub(sub)?;
            }
        }
        Ok(())
    }

    /// The time of the handler whose effects are in `batch` has run: they take effect.
    fn commit(&mut self, batch: u32) -> Result<(), SimError> {
        let mut effects = std::mem::take(self.batches.get_mut(batch));
        self.batches.remove(batch);
        self.pending_commits -= 1;
        for &effect in &effects {
            self.apply(effect)?;
        }
        effects.clear();
        self.spare_batches.push(effects);
        Ok(())
    }

    /// Routes finished flash commands to their sub-requests and FTL callbacks.
    fn drain_completions(&mut self) -> Result<(), SimError> {
        if !self.flash.has_completions() {
            return Ok(());
        }
        if let Some(shadow) = &mut self.shadow {
            let mut programs = std::mem::take(&mut self.finished_programs);
            self.flash.drain_finished_programs(&mut programs);
            for cmd in programs.drain(..) {
                shadow.program_completed(cmd);
            }
            self.finished_programs = programs;
        }
        let mut done = std::mem::take(&mut self.completions);
        self.flash.drain_completions(&mut done);
        for c in done.drain(..) {
            if c.sub != NIL {
                self.subs.get_mut(c.sub).pending_cmds -= 1;
                self.check_sub(c.sub)?;
            }
            if c.token != 0 {
                self.push_call(Call::FlashDone(c.token))?;
            }
        }
        self.completions = done;
        Ok(())
    }

    fn handle(&mut self, event: Event) -> Result<(), SimError> {
        match event {
            Event::CellDone { .. } | Event::BusDone { .. } => {
                self.flash.on_event(event, self.now, &mut self.events);
                Ok(())
            }
            Event::LinkDone { sub } => self.link_done(sub),
            Event::CommandIn { req } => self.command_in(req),
            Event::CompletionOut { req } => self.request_done(req),
            Event::CoreFree { core } => {
                self.cpu.free_core(core);
                Ok(())
            }
            Event::Commit { batch } => self.commit(batch),
            Event::MapUnitReady { job: slot } => {
                let (queue, job) = *self.map_unit_arrivals.get(slot);
                self.map_unit_arrivals.remove(slot);
                self.map_unit_arrive(queue, job);
                Ok(())
            }
            Event::MapUnitDone { batch } => {
                self.map_unit.finished();
                let left = &mut self.map_unit_parts_left[batch as usize];
                *left -= 1;
                let result = if *left == 0 {
                    self.commit(batch)
                } else {
                    Ok(())
                };
                self.start_map_unit();
                result
            }
            Event::Wakeup { slot } => {
                let token = self.events.take_wakeup(slot);
                self.push_call(Call::Wakeup(token))
            }
            Event::Arrival => {
                let (r, measured) = self
                    .next_open
                    .take()
                    .expect("an arrival event has a request");
                self.arrive(r, measured)?;
                if self.host_queue.len() >= HOST_QUEUE_READ_AHEAD {
                    // Read on when the queue shortens (admit_held).
                    self.open_paused = true;
                    return Ok(());
                }
                self.pull_open()
            }
        }
    }
}
