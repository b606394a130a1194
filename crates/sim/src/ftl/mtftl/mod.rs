//! Multi-threaded page-mapping FTL on a simulated uC/OS-II (`mt-ftl`), and the same FTL code
//! run as one task (`st-ftl`): multithreaded-ftl-ucos.txt, Fig. 2.
//!
//! - **Tasks** ([`crate::rtos`]): `tasks` FTL tasks each take one host request at a time from
//!   the host queue (a counting semaphore the host interface posts) and run it to the end; the
//!   queue is in arrival order (a request the host interface held back until an earlier
//!   overlapping one finished takes its arrival place, as in the board's FIFO queue); a
//!   lowest-priority **monitor** runs when every FTL task sleeps or pends, polls the NAND and
//!   resumes the task whose operation finished. With `task_priority = "fixed"` (the default,
//!   the paper's board) task i keeps priority i + 1 and the monitor the lowest, as uC/OS-II
//!   has them; uC/OS-II hands a semaphore to its highest-priority waiter, so a low-priority
//!   task's request can wait behind the others'. With `"request-age"` (ours) a task that takes
//!   a request lowers its priority below every other busy task (`OSTaskChangePrio`), so the
//!   CPU and every semaphore go to the task with the oldest request, and when it finishes it
//!   returns to priority i + 1, above every busy task. Either way the lowest-numbered idle
//!   task takes the next request, so at queue depth 1 one task (one working block) serves
//!   everything, as in st-ftl.
//! - **Semaphores** protect the FTL metadata (block lists, working blocks, GC), the mapping
//!   table, and the NAND (`nand_lock`: one per die, the default, or one for the whole device;
//!   a task holds it from a command to the operation's completion). Lock order is metadata,
//!   NAND, mapping table, so no two tasks can deadlock. Debug builds and tests check that a
//!   task holds the semaphore guarding what it changes (`guard.rs`: mapping, metadata, the
//!   die's NAND).
//! - **Working blocks**: each task writes into its own block, allocating one page at a time
//!   under the metadata semaphore and programming it before it allocates the next, so the
//!   in-order programming rule holds however tasks interleave. A new working block goes to
//!   the die with the least valid data among those hosting fewer than ceil(tasks / dies)
//!   working blocks: tasks spread over dies, and data stays balanced between them even when
//!   low-priority tasks (which get few requests) keep a working block open for long.
//! - **Waiting**: after issuing a program or an erase a task sleeps (frees the CPU); during a
//!   read or a copyback it keeps the CPU and polls the status (the paper's rule). `st-ftl` has
//!   no monitor: its one task polls for every operation.
//! - **GC**: before opening a working block on a die with `gc_free_blocks` free blocks or
//!   fewer, the task collects victims there (greedy by default) while holding the metadata
//!   semaphore: fully valid pages move by copyback when the die's GC block is in the victim's
//!   plane, others are read and their still-valid units packed into GC pages (original OOB
//!   sequence numbers kept); then the victim is erased. Other tasks keep serving reads
//!   meanwhile; writes that need a page wait for the metadata. GC takes the die's NAND
//!   semaphore per page move (`gc_nand_hold = "page"`, default: reads of other tasks slip in
//!   between) or once for the whole victim (`"victim"`).
//! - **Mapping** and block bookkeeping are [`crate::ftl::mapping`], shared with `pagemap`.
//! - **Power-loss recovery** (`recover.rs`), as pagemap's: the spare area of every written
//!   page is scanned, the highest OOB sequence number per mapping unit wins (GC copies keep
//!   theirs), erased blocks are free, every written block is closed (partly written ones too:
//!   tasks take fresh working blocks, GC fresh GC blocks), the valid units per die are
//!   recounted and the sequence counter continues past the highest found. A write completes
//!   only once programmed and a victim is erased only after its units were programmed
//!   elsewhere, so nothing acknowledged is lost; trims are not on flash and may come back.
//!
//! **The paper's board (the defaults).** multithreaded-ftl-ucos.txt's firmware is four FTL
//! tasks and a monitor (task 4) on uC/OS-II, where "each task has different priority values"
//! and the monitor "is executed" only "if all the tasks are in the sleep mode": fixed,
//! distinct priorities, the monitor lowest (`task_priority = "fixed"`). The tasks fetch
//! requests "from the queue ... one by one", sleep after sending a program or an erase, and
//! keep the CPU through reads and copybacks (below). The paper protects "NAND flash memory"
//! with a semaphore as one shared resource and does not say at what granularity; its board
//! has two NAND chips (Conclusion). We take one semaphore per chip (`nand_lock = "per-die"`:
//! `mt-board` has one die per chip), held from a command to its completion, because:
//! (1) a task "releases the CPU right after issuing the write or the erase operations" "to
//! minimize the waiting time for each task to wait for the NAND operation": with one
//! semaphore for the whole array held through the 0.8-1.5 ms operation every other task waits
//! for the NAND all the same, and only CPU work (tens of microseconds a request) and the UART
//! overlap it; measured, mt-ftl is then slower than st-ftl from depth 2 on (docs/mt-ftl.md,
//! "The paper's board (the defaults)"), the opposite of Fig. 3; (2) the conclusion ties the
//! gain's size to the board's "two NAND flash chips" and expects it to grow with chips "in
//! parallel": only operations on different chips overlapping make the chip count matter;
//! (3) a chip runs one operation at a time (its ready/busy line), so a semaphore per chip is
//! the finest that keeps a busy chip from a second command. The chips' shared 8-bit bus is
//! arbitrated by the flash scheduler (transfers), not by a semaphore. `"whole-device"` keeps
//! the other reading.
//!
//! Choices where the paper is silent (documented, tested): the mapping is updated when the
//! program is issued (under the NAND and mapping semaphores), so a lookup never sees a unit
//! that is not in flash; a reader re-checks its lookup once it holds the NAND semaphore (GC
//! may have moved the unit meanwhile) and retries if it changed; no write buffer, so a write
//! completes when its last program has, and flushes complete at once; partial-unit writes
//! read the old unit first; no background GC; the engine's `cpu.cores` is not used (the RTOS
//! kernel is the CPU). Every step costs the CPU time of its `cpu_*` setting.

mod check;
mod config;
mod gc;
mod guard;
mod recover;
mod task;

pub use config::{GcNandHold, MtFtlConfig, NandLock, TaskPriority};

use std::collections::VecDeque;

use config::Sizing;
use serde::Serialize;

use super::mapping::{Blocks, MapTable};
use super::registry::FtlEntry;
use super::{Ftl, FtlCtx};
use crate::config::{ConfigError, ExperimentConfig};
use crate::host::SubRequest;
use crate::nand::{BlockId, Layout, Nand, OobEntry, Ppn, UnitAddr};
use crate::rtos::{Held, Kernel, Program, SemId, Step, TaskId};
use crate::SimError;

const MT_SUMMARY: &str = "multi-threaded page-mapping FTL on a simulated uC/OS-II: FTL tasks with \
     their own working blocks, a NAND-polling monitor, semaphores on metadata, mapping and NAND";
const ST_SUMMARY: &str = "single-threaded page-mapping FTL: the mt-ftl code as one uC/OS-II task \
     that finishes each request before taking the next";

const fn entry(name: &'static str, summary: &'static str) -> FtlEntry {
    FtlEntry {
        name,
        summary,
        field_docs: |c| {
            MtFtlConfig::from_experiment(c)
                .map(|(cfg, _)| cfg)
                .unwrap_or_else(|_| MtFtlConfig::named(c.ftl_name()))
                .field_docs()
        },
        validate: |c| MtFtlConfig::from_experiment(c).map(|_| ()),
        resolve: |c| {
            let (cfg, _) = MtFtlConfig::from_experiment(c)?;
            Ok(toml::Table::try_from(&cfg).expect("mt-ftl settings serialize"))
        },
        build: |c| Ok(Box::new(MtFtl::new(c)?)),
    }
}

/// Registry entry of the multi-threaded FTL.
pub const MT_ENTRY: FtlEntry = entry("mt-ftl", MT_SUMMARY);
/// Registry entry of the single-threaded FTL.
pub const ST_ENTRY: FtlEntry = entry("st-ftl", ST_SUMMARY);

/// An open block filled page by page (a task's working block or a die's GC block).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OpenBlock {
    block: BlockId,
    /// Next page to allocate.
    next_page: u32,
}

/// What a task's next step does (see `task.rs` and `gc.rs`). GC phases are contiguous.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    Idle,
    Take,
    Prioritize,
    Dispatch,
    // A read of the units [lpn, lpn + k) of one page (host read or the old unit of a
    // partial write), then `after`.
    ReadLock,
    ReadLookup,
    ReadUnlock,
    ReadNand,
    ReadCheck,
    ReadRetry,
    ReadIssue,
    ReadDone,
    ReadNext,
    // Writes, one page per chunk.
    WriteChunk,
    WriteAllocLock,
    WriteAlloc,
    WriteAllocDone,
    WriteNand,
    WriteMapLock,
    WriteMap,
    WriteIssue,
    WriteDone,
    // Trims.
    TrimLock,
    Trim,
    TrimApply,
    Finish,
    Complete,
    // Garbage collection, holding the metadata semaphore.
    GcPick,
    GcPicked,
    GcScan,
    GcCopyNand,
    GcCopyMapLock,
    GcCopy,
    GcCopyIssue,
    GcCopyDone,
    GcReadNand,
    GcReadCmd,
    GcReadIssue,
    GcReadDone,
    GcProgNand,
    GcProgMapLock,
    GcProg,
    GcProgIssue,
    GcProgDone,
    GcEraseNand,
    GcErase,
    GcEraseIssue,
    GcEraseDone,
    // The monitor.
    MonitorPoll,
    MonitorWake,
    MonitorResume,
}

/// The units of the request a task serves.
#[derive(Debug, Clone, Copy, Default)]
struct Span {
    first_sector: u64,
    end_sector: u64,
    /// Next unit to handle, and the end.
    lpn: u32,
    end_lpn: u32,
}

/// A group of units of one page being read.
#[derive(Debug, Clone, Copy, Default)]
struct ReadGroup {
    lpn: u32,
    count: u32,
    /// Slot of the first unit (`None`: unmapped units, nothing to read).
    unit: Option<UnitAddr>,
    /// Served for a partial write (no delivery to the host).
    for_write: bool,
}

/// A garbage collection in progress.
#[derive(Debug, Clone, Default)]
struct GcRun {
    die: u32,
    victim: BlockId,
    /// Next victim page to look at.
    page: u32,
    /// Victim slots read and waiting to be packed into a GC page.
    moving: Vec<UnitAddr>,
    /// Slots of the page being read or copied back.
    page_units: Vec<UnitAddr>,
    /// Victims collected for the current allocation (a bound against livelock).
    victims: u32,
    /// Die chosen for the next working block (kept while GC makes room there).
    die_chosen: Option<u32>,
}

/// One FTL task.
#[derive(Debug, Clone)]
struct Task {
    phase: Phase,
    sub: Option<SubRequest>,
    span: Span,
    read: ReadGroup,
    /// Units in the page being written.
    chunk: u32,
    /// One past the last unit whose old copy a partial write read (0: none yet).
    rmw_read_upto: u32,
    /// The task the monitor resumes next.
    resume: TaskId,
    page: Ppn,
    /// NAND semaphore held.
    lock: usize,
    op_done: bool,
    /// Asleep waiting for the monitor to report its operation.
    asleep: bool,
    working: Option<OpenBlock>,
    entries: Vec<OobEntry>,
    data: Vec<u64>,
    gc: GcRun,
    requests: u64,
}

/// Semaphores.
#[derive(Debug, Clone)]
struct Sems {
    host_queue: SemId,
    meta: SemId,
    map: SemId,
    nand: Vec<SemId>,
}

/// Counters of this FTL.
#[derive(Debug, Clone, Default, Serialize)]
struct MtStats {
    /// Reads whose lookup changed (GC moved the unit) before they held the NAND semaphore.
    read_retries: u64,
    /// Old units read for partial-unit writes.
    rmw_reads: u64,
    /// Unit slots of programmed pages left empty (requests ending mid-page, GC tails).
    padded_units: u64,
    gc_copyback_pages: u64,
    gc_read_pages: u64,
    gc_programmed_pages: u64,
}

/// Everything but the kernel: what the task code works on.
struct Core {
    cfg: MtFtlConfig,
    sizing: Sizing,
    layout: Layout,
    upp: u32,
    unit_sectors: u64,
    /// The single task polls for every operation (st-ftl).
    single: bool,
    map: MapTable,
    blocks: Blocks,
    queue: VecDeque<SubRequest>,
    tasks: Vec<Task>,
    sems: Sems,
    /// Working blocks a die hosts, and the die order cursor.
    working_on_die: Vec<u32>,
    /// Valid units per die (GC moves units within a die, so only host writes and trims
    /// change it).
    valid_on_die: Vec<u64>,
    die_cursor: u32,
    gc_blocks: Vec<Option<OpenBlock>>,
    units_written: u64,
    /// Requests taken (the priority of the next one with `task_priority = "request-age"`).
    requests_taken: u64,
    zeros: Vec<u64>,
    /// Read data on its way to the host (verify runs).
    scratch: Vec<u64>,
    stats: MtStats,
    /// The task being stepped and the locks it holds (lock-discipline checks, `guard.rs`).
    #[cfg(debug_assertions)]
    stepping: TaskId,
    #[cfg(debug_assertions)]
    held: Vec<SemId>,
}

/// The FTL: the kernel and the state its tasks share.
pub struct MtFtl {
    name: &'static str,
    kernel: Kernel,
    core: Core,
    monitor: Option<TaskId>,
    wake_scheduled: Option<u64>,
    measure_start_ns: u64,
    last_ns: u64,
}

impl MtFtl {
    pub fn new(config: &ExperimentConfig) -> Result<Self, ConfigError> {
        let (cfg, sizing) = MtFtlConfig::from_experiment(config)?;
        let name = if cfg.name == "st-ftl" {
            "st-ftl"
        } else {
            "mt-ftl"
        };
        let layout = Layout::new(&config.geometry);
        let upp = sizing.units_per_page;
        let unit_sectors = u64::from(cfg.mapping_unit_bytes / config.host.sector_bytes);
        let payloads = config.run.payloads || config.run.verify;
        let spp = (config.geometry.page_bytes / config.host.sector_bytes) as usize;
        let mut kernel = Kernel::new(cfg.context_switch_ns);
        let locks = match cfg.nand_lock {
            NandLock::WholeDevice => 1,
            NandLock::PerDie => layout.dies(),
        };
        let sems = Sems {
            host_queue: kernel.add_semaphore("host-queue", 0),
            meta: kernel.add_lock("metadata"),
            map: kernel.add_lock("mapping"),
            nand: (0..locks)
                .map(|i| {
                    let name = match cfg.nand_lock {
                        NandLock::WholeDevice => "nand".to_string(),
                        NandLock::PerDie => format!("nand-die{i}"),
                    };
                    kernel.add_lock(&name)
                })
                .collect(),
        };
        let task = Task {
            phase: Phase::Idle,
            sub: None,
            span: Span::default(),
            read: ReadGroup::default(),
            chunk: 0,
            rmw_read_upto: 0,
            resume: 0,
            page: 0,
            lock: 0,
            op_done: false,
            asleep: false,
            working: None,
            entries: vec![OobEntry::EMPTY; upp as usize],
            data: if payloads { vec![0; spp] } else { Vec::new() },
            gc: GcRun {
                moving: Vec::with_capacity(2 * upp as usize),
                page_units: Vec::with_capacity(upp as usize),
                ..GcRun::default()
            },
            requests: 0,
        };
        for t in 0..cfg.tasks {
            kernel.add_task(&format!("ftl{t}"), u64::from(t) + 1);
        }
        let single = cfg.tasks == 1 && name == "st-ftl";
        let monitor = (!single).then(|| kernel.add_task("monitor", u64::MAX));
        let mut tasks = vec![task; cfg.tasks as usize];
        if let Some(m) = monitor {
            let mut mon = tasks[0].clone();
            mon.phase = Phase::MonitorPoll;
            tasks.push(mon);
            debug_assert_eq!(tasks.len() - 1, m);
        }
        Ok(MtFtl {
            name,
            kernel,
            monitor,
            wake_scheduled: None,
            measure_start_ns: 0,
            last_ns: 0,
            core: Core {
                map: MapTable::new(sizing.logical_units, upp),
                blocks: Blocks::new(layout, upp, cfg.gc_victim),
                queue: VecDeque::new(),
                tasks,
                sems,
                working_on_die: vec![0; layout.dies() as usize],
                valid_on_die: vec![0; layout.dies() as usize],
                die_cursor: 0,
                gc_blocks: vec![None; layout.dies() as usize],
                units_written: 0,
                requests_taken: 0,
                zeros: vec![0; unit_sectors as usize],
                scratch: Vec::with_capacity(unit_sectors as usize),
                stats: MtStats::default(),
                #[cfg(debug_assertions)]
                stepping: 0,
                #[cfg(debug_assertions)]
                held: Vec::new(),
                layout,
                upp,
                unit_sectors,
                single,
                sizing,
                cfg,
            },
        })
    }

    /// Runs every task step due now and asks for a wake-up when the kernel next needs one.
    fn run_kernel(&mut self, ctx: &mut FtlCtx<'_>) -> Result<(), SimError> {
        self.last_ns = ctx.now();
        let mut runner = Runner {
            core: &mut self.core,
            ctx,
            error: None,
        };
        let next = self.kernel.run(runner.ctx.now(), &mut runner);
        if let Some(e) = runner.error {
            return Err(e);
        }
        if let Some(t) = next {
            if self.wake_scheduled.is_none_or(|s| t < s) {
                ctx.wake_at(t, 1);
                self.wake_scheduled = Some(t);
            }
        }
        Ok(())
    }

    fn kernel_report(&self) -> serde_json::Value {
        let s = self.kernel.stats();
        let elapsed = self.last_ns.saturating_sub(self.measure_start_ns).max(1) as f64;
        let polling: u64 = s.tasks.iter().map(|t| t.polling_ns).sum();
        let tasks: Vec<serde_json::Value> = s
            .tasks
            .iter()
            .zip(&self.core.tasks)
            .map(|(t, task)| {
                let mut v = serde_json::to_value(t).expect("task stats serialize");
                v["requests"] = task.requests.into();
                v["cpu_utilisation"] = (t.cpu_ns as f64 / elapsed).into();
                v
            })
            .collect();
        let semaphores: Vec<serde_json::Value> = s
            .semaphores
            .iter()
            .map(|m| {
                let mut v = serde_json::to_value(m).expect("semaphore stats serialize");
                v["mean_wait_ns"] = (m.wait_ns as f64 / m.waits.max(1) as f64).into();
                v
            })
            .collect();
        serde_json::json!({
            "measured_ns": self.last_ns.saturating_sub(self.measure_start_ns),
            "cpu_busy_ns": s.busy_ns(),
            "cpu_utilisation": s.busy_ns() as f64 / elapsed,
            "polling_ns": polling,
            "polling_share": polling as f64 / elapsed,
            "context_switches": s.context_switches,
            "context_switch_ns": s.context_switch_ns,
            "tasks": tasks,
            "semaphores": semaphores,
        })
    }
}

/// The task code, run by the kernel with the engine's context at hand.
struct Runner<'r, 'c> {
    core: &'r mut Core,
    ctx: &'r mut FtlCtx<'c>,
    error: Option<SimError>,
}

impl Program for Runner<'_, '_> {
    fn step(&mut self, task: TaskId, now_ns: u64, _held: Held<'_>) -> Step {
        debug_assert_eq!(now_ns, self.ctx.now(), "steps run at the engine's time");
        if self.error.is_some() {
            return Step::Sleep;
        }
        #[cfg(debug_assertions)]
        {
            self.core.stepping = task;
            self.core.held.clear();
            self.core.held.extend_from_slice(_held.locks());
        }
        match self.core.step(self.ctx, task) {
            Ok(step) => step,
            Err(e) => {
                self.error = Some(e);
                Step::Sleep
            }
        }
    }
}

impl Ftl for MtFtl {
    fn name(&self) -> &'static str {
        self.name
    }
    fn recover(
        &mut self,
        nand: &mut Nand,
        scan: &mut super::mapping::RecoveryScan,
    ) -> Result<(), SimError> {
        self.core.rebuild(nand, scan, self.name)
    }
    fn logical_bytes(&self) -> u64 {
        u64::from(self.core.sizing.logical_units) * u64::from(self.core.cfg.mapping_unit_bytes)
    }
    fn chop_bytes(&self) -> u32 {
        // A task takes a whole request (the paper's I/O instruction): chop only giant ones.
        1 << 30
    }
    fn trim_unit_bytes(&self) -> u32 {
        self.core.cfg.mapping_unit_bytes
    }
    fn units_per_page(&self) -> u32 {
        self.core.upp
    }

    fn submit(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        // In arrival order: a request that waited for an overlapping one keeps its place.
        let queue = &mut self.core.queue;
        let place = queue.partition_point(|q| q.arrival_seq <= sub.arrival_seq);
        queue.insert(place, *sub);
        self.kernel.post(self.core.sems.host_queue, ctx.now());
        self.run_kernel(ctx)
    }

    fn flash_done(&mut self, ctx: &mut FtlCtx<'_>, token: u64) -> Result<(), SimError> {
        let t = token as usize - 1;
        let task = &mut self.core.tasks[t];
        task.op_done = true;
        match self.monitor {
            Some(m) if task.asleep => self.kernel.notify(m, ctx.now()),
            _ => self.kernel.notify(t, ctx.now()),
        }
        self.run_kernel(ctx)
    }

    fn wakeup(&mut self, ctx: &mut FtlCtx<'_>, _token: u64) -> Result<(), SimError> {
        if self.wake_scheduled == Some(ctx.now()) {
            self.wake_scheduled = None;
        }
        self.run_kernel(ctx)
    }

    fn check_invariants(&self, nand: &Nand) -> Result<(), String> {
        self.core.check(nand)
    }

    fn reset_counters(&mut self, now_ns: u64) {
        self.core.stats = MtStats::default();
        for t in &mut self.core.tasks {
            t.requests = 0;
        }
        self.kernel.reset_stats(now_ns);
        self.measure_start_ns = now_ns;
        self.last_ns = now_ns;
    }

    fn report(&self) -> serde_json::Value {
        let c = &self.core;
        serde_json::json!({
            "tasks": c.cfg.tasks,
            "monitor": self.monitor.is_some(),
            "nand_lock": c.cfg.nand_lock,
            "task_priority": c.cfg.task_priority,
            "gc_nand_hold": c.cfg.gc_nand_hold,
            "mapping_unit_bytes": c.cfg.mapping_unit_bytes,
            "units_per_page": c.upp,
            "logical_units": c.sizing.logical_units,
            "spare_blocks_per_die": c.sizing.spare_blocks_per_die,
            "working_blocks_per_die": c.sizing.working_blocks_per_die,
            "counters": c.stats,
            "rtos": self.kernel_report(),
        })
    }

    fn state_bytes(&self) -> u64 {
        let c = &self.core;
        let per_task = std::mem::size_of::<Task>()
            + c.upp as usize * std::mem::size_of::<OobEntry>()
            + 3 * c.upp as usize * 4;
        c.map.state_bytes() + c.blocks.state_bytes() + (c.tasks.len() * per_task) as u64
    }
}
