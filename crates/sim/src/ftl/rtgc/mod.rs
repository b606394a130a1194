//! RTGC (Chang, Kuo and Lo, "Real-time garbage collection for flash-memory storage systems of
//! real-time embedded systems", ACM TECS 3(4), 2004) as a running FTL, the third scheme
//! part-ftl.txt compares (section IV). The paper's full text was not reachable: this is built
//! from part-ftl.txt's description, the paper's abstract and its well-known design, and uses
//! the same collector rule as the admission analysis (`realtime::rtgc`). docs/rtgc.md.
//!
//! - **Page mapping** (one mapping unit per page, λ of the pages logical), no write buffer:
//!   a host page write completes when its program does; host pages are striped over all
//!   dies round robin; partial-page writes read the old page first.
//! - **A collector per writing task** (`collector.rs`): a request with a task id and a
//!   deadline is a job of a periodic task T_i (period = relative deadline, w_i = its pages).
//!   T_i's collector G_i releases jobs at the analysis' rate (`realtime::part::gc_period_ns`
//!   with |F|·α pages per job): one every ⌊|F|α / w_i⌋ writer jobs, at that writer job's
//!   arrival, with deadline release + p_G; or ⌈w_i / |F|α⌉ jobs per writer job with deadlines
//!   spread over its period. A job reclaims one greedy victim on every die (`gc.rs`: valid
//!   pages copied to the die's GC block one at a time, the atomic page copy RTGC's collectors
//!   are built on, then the victim erased); its flash commands carry the job's
//!   deadline, so EDF die queues (`timing.die_queue_policy = "edf"`) schedule collectors
//!   together with the tasks' requests by deadline, which is RTGC's EDF scheduling.
//! - **Tokens**: a writer spends one free-page token per page; it starts with one collector
//!   period's supply plus one job's pages, and each finished collector job gives it |F|·α.
//! - **Safety**: a write that finds its die down to the reserve block collects on demand
//!   (greedy) before it writes: counted as `fallback_collections` for a real-time write
//!   (must stay 0 for an admitted task set) and `on_demand_collections` for writes without a
//!   task (ordinary workloads and preconditioning, RTGC's non-real-time GC).
//!
//! - **Power-loss recovery** (`recover.rs`): nothing acknowledged is volatile (no write
//!   buffer). The scan reads the spare area of every written page; the copy of each logical
//!   page with the highest sequence number wins, and of a GC copy and its victim page (same
//!   number) the copy in a partly written block. A die's partly written blocks become its
//!   host and GC blocks again (fullest first; which was which does not matter for the data).
//!   Collector jobs, tokens and reclamations in progress are RAM state and are gone: a
//!   victim's collection restarts when it is chosen again, collectors restart with their
//!   tasks' next writes. Sequence numbers continue past the highest found.
//!
//! Choices (docs/rtgc.md): a job collects on a die only while the die has at most
//! `collector_free_blocks` free blocks (otherwise the free pages exist already); a victim's
//! block returns to the free pool when its erase completes.

mod check;
mod collector;
mod config;
mod gc;
mod recover;

pub use config::{alpha_pages, RtgcConfig, Sizing};

use super::mapping::{Blocks, MapTable, PageData, Stream, VictimPolicy};
use super::registry::{self, FtlEntry};
use super::{Ftl, FtlCtx, Issue};
use crate::config::{ConfigError, ExperimentConfig};
use crate::flash::NIL;
use crate::host::{Op, SubRequest};
use crate::nand::{BlockId, Layout, Nand, OobEntry, Ppn};
use crate::SimError;
use collector::{Collector, Job};
use gc::Reclaim;
use std::collections::VecDeque;

/// Registry entry of RTGC.
pub const ENTRY: FtlEntry = registry::settings_entry::<RtgcConfig>(
    "rtgc",
    "RTGC (TECS 2004): page mapping, a periodic garbage collector per writing task, each job \
     reclaiming a block on every die with the job's deadline (EDF with the tasks)",
    |c| Ok(Box::new(Rtgc::new(c)?)),
);

/// A die's write state.
#[derive(Debug, Clone, Copy)]
struct Die {
    /// The block host writes go to; `NIL` before the first.
    host: BlockId,
    /// The block GC copies go to; `NIL` before the first.
    gc: BlockId,
}

/// Counters of RTGC (reported under `ftl.counters`).
#[derive(Debug, Clone, Default, serde::Serialize)]
struct RtgcStats {
    /// Writer jobs (host write requests of a task with a deadline) seen.
    writer_jobs: u64,
    /// Collector jobs released.
    collector_jobs_released: u64,
    /// Collector jobs whose last erase completed.
    collector_jobs_completed: u64,
    /// Of which after their deadline.
    collector_jobs_late: u64,
    /// Released jobs that found no die needing space (done at release).
    collector_jobs_idle: u64,
    /// Victim blocks collector jobs reclaimed.
    collector_victims: u64,
    /// Pages those victims freed (P minus the valid pages copied).
    collector_pages_reclaimed: u64,
    /// The fewest pages a collector's victim freed (null before the first).
    min_reclaimed_pages_per_victim: Option<u32>,
    /// Collector victims that freed fewer than α pages.
    victims_below_alpha: u64,
    /// Reclamations of collector jobs skipped on a die: no victim with garbage, or its GC
    /// block and free blocks could not take the victim's valid pages.
    dies_skipped_no_room: u64,
    /// On-demand collections for real-time writes (collectors behind): 0 for admitted sets.
    fallback_collections: u64,
    /// On-demand collections for writes without a task (non-real-time GC).
    on_demand_collections: u64,
    /// Tokens given to writers (initial allotments and finished collector jobs).
    tokens_granted: u64,
    /// Tokens writers spent (one per page).
    tokens_spent: u64,
    /// Real-time page writes made with no token left.
    writes_without_token: u64,
    /// Old pages read for partial-page writes.
    rmw_reads: u64,
}

/// The RTGC FTL.
pub struct Rtgc {
    cfg: RtgcConfig,
    sizing: Sizing,
    layout: Layout,
    pages: PageData,
    map: MapTable,
    blocks: Blocks,
    dies: Vec<Die>,
    /// Collectors by task id (grown when a new task writes).
    collectors: Vec<Collector>,
    /// Collector jobs by slot; finished slots are reused (`free_jobs`).
    jobs: Vec<Job>,
    free_jobs: Vec<u32>,
    /// Per die: the collector reclamation under way, and the job slots waiting for the die.
    active: Vec<Option<Reclaim>>,
    queued: Vec<VecDeque<u32>>,
    /// Per block: a collector victim whose erase is issued but not completed (not free yet).
    pending_erase: Vec<bool>,
    /// Host pages written so far (the next page's die, round robin).
    cursor: u32,
    /// Pages programmed by host writes: the OOB sequence number of the next.
    pages_written: u64,
    /// Data versions of the page a GC copy programs (reused).
    gc_data: Vec<u64>,
    stats: RtgcStats,
}

impl Rtgc {
    pub fn new(config: &ExperimentConfig) -> Result<Self, ConfigError> {
        let (cfg, sizing) = RtgcConfig::from_experiment(config)?;
        let layout = Layout::new(&config.geometry);
        let spp = config.geometry.page_bytes / config.host.sector_bytes;
        Ok(Rtgc {
            map: MapTable::new(sizing.logical_pages, 1),
            blocks: Blocks::new(layout, 1, VictimPolicy::Greedy),
            dies: vec![Die { host: NIL, gc: NIL }; layout.dies() as usize],
            layout,
            pages: PageData::new(spp, config.geometry.page_bytes),
            collectors: Vec::new(),
            jobs: Vec::new(),
            free_jobs: Vec::new(),
            active: vec![None; layout.dies() as usize],
            queued: vec![VecDeque::new(); layout.dies() as usize],
            pending_erase: vec![false; layout.blocks() as usize],
            cursor: 0,
            pages_written: 0,
            gc_data: vec![0; spp as usize],
            stats: RtgcStats::default(),
            sizing,
            cfg,
        })
    }

    fn bug(&self, message: String) -> SimError {
        SimError::Ftl {
            ftl: "rtgc",
            message,
        }
    }

    fn page_bytes(&self) -> u32 {
        self.layout.page_bytes
    }

    fn write(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let realtime = self.writer_page(ctx, sub)?;
        let (lpn, s0, s1) = self.pages.piece(sub);
        let full = self.pages.is_full(s0, s1);
        let old = self.map.get(lpn);
        let mut rmw = None;
        if let Some(old) = old.filter(|_| !full) {
            let issue = Issue::host(sub.id).deadline(sub.deadline_ns);
            rmw = Some(ctx.read(&[old], self.page_bytes(), issue)?);
            self.stats.rmw_reads += 1;
        }
        if ctx.payloads() {
            let old = old.filter(|_| !full);
            self.pages
                .merge_host_data(ctx.nand(), old, s0..s1, sub.version);
        }
        self.pages_written += 1;
        let seq = self.pages_written;
        Nand::check_seq(seq).map_err(|source| SimError::Nand {
            ftl: "rtgc",
            source,
        })?;
        let die = self.layout.striped_die(self.cursor);
        self.cursor = self.cursor.wrapping_add(1);
        let ppn = self.host_page(ctx, die, realtime, sub.deadline_ns)?;
        // Collecting for this page may have moved the old copy.
        if let Some(old) = self.map.get(lpn) {
            self.map.invalidate_programmed(ctx, &mut self.blocks, old)?;
        }
        self.map.set(lpn, ppn);
        let data = ctx.payloads().then_some(self.pages.host_data());
        let issue = Issue::host(sub.id).deadline(sub.deadline_ns);
        ctx.program(
            &[ppn],
            &[OobEntry::new(lpn, seq, 0)],
            data,
            issue.after(rmw.as_slice()),
        )?;
        ctx.complete(sub.id);
        Ok(())
    }

    /// The free page of `die`'s host block a write goes to; opening a block when it is full,
    /// after collecting on demand while the die has too few free blocks.
    fn host_page(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        die: u32,
        realtime: bool,
        deadline_ns: u64,
    ) -> Result<Ppn, SimError> {
        if let Some(ppn) = self.free_page(ctx, self.dies[die as usize].host) {
            return Ok(ppn);
        }
        self.close(ctx, self.dies[die as usize].host);
        self.dies[die as usize].host = NIL;
        // A real-time write collects only when the collectors left the die at its reserve
        // block; other writes have no collector and keep the die at the collectors' level.
        let keep = if realtime {
            1
        } else {
            self.cfg.collector_free_blocks
        };
        while self.blocks.free_in_die(die, false) <= keep {
            self.collect_on_demand(ctx, die, realtime, deadline_ns)?;
        }
        let block = self.open_block(die, Stream::Host)?;
        self.dies[die as usize].host = block;
        Ok(self.layout.ppn(block, 0))
    }

    /// The next page of an open block, if it has one left.
    fn free_page(&self, ctx: &FtlCtx<'_>, block: BlockId) -> Option<Ppn> {
        if block == NIL {
            return None;
        }
        let next = ctx.nand().block(block).write_ptr;
        (next < self.layout.pages_per_block).then(|| self.layout.ppn(block, next))
    }

    /// Closes a full block (none: nothing to do), making it a GC candidate.
    fn close(&mut self, ctx: &FtlCtx<'_>, block: BlockId) {
        if block != NIL {
            let valid = ctx.nand().block(block).valid_units;
            self.blocks.close(block, valid, self.pages_written);
        }
    }

    /// Opens a free block of `die` (its roomiest plane).
    fn open_block(&mut self, die: u32, stream: Stream) -> Result<BlockId, SimError> {
        let plane = self.blocks.roomiest_plane(die);
        self.blocks
            .open(plane, stream, 0)
            .ok_or_else(|| self.bug(format!("die {die} has no free block")))
    }
}

impl Ftl for Rtgc {
    fn name(&self) -> &'static str {
        "rtgc"
    }
    fn logical_bytes(&self) -> u64 {
        u64::from(self.sizing.logical_pages) * u64::from(self.page_bytes())
    }
    fn chop_bytes(&self) -> u32 {
        self.page_bytes()
    }
    fn trim_unit_bytes(&self) -> u32 {
        self.page_bytes()
    }
    fn units_per_page(&self) -> u32 {
        1
    }

    fn submit(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        match sub.op {
            Op::Read => self.pages.read(ctx, &self.map, sub, &[]),
            Op::Write => self.write(ctx, sub),
            Op::Trim => self.pages.trim(ctx, &mut self.map, &mut self.blocks, sub),
            // A write completes only once programmed: nothing acknowledged is volatile.
            Op::Flush => {
                ctx.complete(sub.id);
                Ok(())
            }
        }
    }

    fn flash_done(&mut self, ctx: &mut FtlCtx<'_>, token: u64) -> Result<(), SimError> {
        self.collector_done(ctx, token)
    }

    fn check_invariants(&self, nand: &Nand) -> Result<(), String> {
        self.check(nand)
    }

    fn reset_counters(&mut self, _now_ns: u64) {
        self.stats = RtgcStats::default();
    }

    fn report(&self) -> serde_json::Value {
        serde_json::json!({
            "logical_ratio": self.cfg.logical_ratio,
            "collector_free_blocks": self.cfg.collector_free_blocks,
            "pages_per_block": self.sizing.pages_per_block,
            "logical_pages": self.sizing.logical_pages,
            "alpha_pages": self.sizing.alpha_pages,
            "job_reclaimed_pages": self.sizing.job_pages,
            "collectors": self.collectors_report(),
            "counters": self.stats,
        })
    }

    fn state_bytes(&self) -> u64 {
        self.map.state_bytes() + self.blocks.state_bytes()
    }

    fn recover(
        &mut self,
        nand: &mut Nand,
        scan: &mut super::mapping::RecoveryScan,
    ) -> Result<(), SimError> {
        self.rebuild(nand, scan)
    }
}

/// Bytes the mapping table and block bookkeeping of RTGC would take on the device of
/// `config` (one mapping unit per page, λ of the pages logical).
pub fn estimate_state_bytes(config: &ExperimentConfig) -> Result<u64, ConfigError> {
    let (_, sizing) = RtgcConfig::from_experiment(config)?;
    let layout = Layout::new(&config.geometry);
    Ok(MapTable::estimate_bytes(sizing.logical_pages)
        + Blocks::estimate_bytes(&layout, 1, VictimPolicy::Greedy, false))
}

impl registry::FtlSettings for RtgcConfig {
    fn checked(config: &ExperimentConfig) -> Result<Self, ConfigError> {
        Self::from_experiment(config).map(|(settings, _)| settings)
    }
}
