//! WAO-GC (Zhang et al., RTAS 2015; part-ftl.txt section IV, eqs. 12-16): page mapping with
//! lazy, partial garbage collection that bounds how long GC can block a request.
//!
//! - **Page mapping**, one mapping unit per flash page (the paper counts P pages per block).
//!   There is no DRAM write buffer: a host page write completes when its program does.
//!   Partial-page writes read the old page first (read-modify-write).
//! - **Lazy GC per die**: each die fills its open block and takes free blocks without
//!   collecting until only one free block, the *reserved* one, is left. When the open block
//!   is full then, the reserved block opens and the die starts collecting the victim with the
//!   fewest valid pages (greedy). The reserved block takes both the victim's v valid pages and
//!   the n host writes that arrive while it is collected; eq. 12 on λ makes n + v <= P.
//! - **Partial steps**: after each host page write on a die that is collecting, one step on
//!   that die: up to c valid-page copies (read + program, or copyback within a plane when
//!   `gc_copyback` is on) or, once the victim holds no valid page, its erase
//!   (n = ceil(v / c) + 1 steps). Steps are timed flash commands that start only once the
//!   write's program completed, so a request reaching that die later waits behind the step:
//!   at most one when writes come no faster than a step takes (eqs. 13, 14).
//! - **Step scope** (`gc_step_scope`): "die" (default) as above; "device" models one firmware
//!   request loop that runs the steps: every host command issued after a step, on any die,
//!   waits until that step's commands completed (so a read can wait for the steps of all the
//!   other tasks' writes, part-ftl.txt VI.A). Steps then run one after another device-wide.
//! - **Firmware time** (`cpu_page_ns`, default 0): CPU time per host page handled, on the
//!   FTL's cores; host pages wait for a core first come, first served (the engine's order:
//!   WAO-GC does not order by deadline), so a page released behind a burst waits for the
//!   burst's handling (the board's request loop, docs/part-cosmos.md).
//! - No admission control and no background GC (the host being idle does not collect).
//!
//! - **Power-loss recovery** (`recover.rs`): nothing acknowledged is volatile (no write
//!   buffer). The scan reads the spare area of every written page; the copy of each logical
//!   page with the highest sequence number wins, and of a GC copy and its victim page (same
//!   number) the copy in a partly written block. Each die's partly written block becomes its
//!   open block again (host writes continue at its write pointer); a die left without a free
//!   block was collecting: its open block is the reserved one, and the collection restarts on
//!   the greedy victim (copies per step: c, or the fewest that still fit the reserved block).
//!   Sequence numbers continue past the highest found.
//!
//! Choices where the papers are vague (docs/wao-gc.md): the step after the write that opens
//! the reserved block is the collection's first; a victim whose v would break n + v <= P
//! (possible: greedy bounds v by the die's average, not by λ P exactly) is collected with more
//! copies per step, the fewest that fit, and counted (`collections_over_bound`,
//! `writes_without_free_page`); host reads move whole pages over the bus.

mod check;
mod config;
mod gc;
mod recover;

pub use config::{
    largest_ratio, max_victim_valid, ratio_allowed, ratio_bound, smallest_block_for_a_ratio,
    steps_for,
};
pub use config::{Sizing, StepScope, WaoGcConfig};

use super::mapping::{Blocks, MapTable, PageData, VictimPolicy};
use super::registry::{self, FtlEntry};
use super::{Ftl, FtlCtx, Issue};
use crate::config::{ConfigError, ExperimentConfig};
use crate::flash::{CmdId, NIL};
use crate::host::{Op, SubRequest};
use crate::nand::{BlockId, Layout, Nand, OobEntry};
use crate::SimError;

/// Registry entry of WAO-GC.
pub const ENTRY: FtlEntry = registry::settings_entry::<WaoGcConfig>(
    "wao-gc",
    "WAO-GC (RTAS 2015): page mapping, lazy per-die GC from one reserved block, partial \
     steps of c page copies or an erase after each host page write (bounded blocking)",
    |c| Ok(Box::new(WaoGc::new(c)?)),
);

/// A victim being collected on a die.
#[derive(Debug, Clone, Copy)]
struct Collection {
    victim: BlockId,
    /// Next page of the victim to look at for valid data.
    scan: u32,
    /// Copies per step of this collection: c, or more when its victim breaks n + v <= P.
    copies_per_step: u32,
    /// Steps run so far.
    steps: u32,
}

/// A die's write state.
#[derive(Debug, Clone, Copy)]
struct Die {
    /// The block host writes (and, while collecting, GC copies) go to; `NIL` before the first.
    open: BlockId,
    collection: Option<Collection>,
}

/// Counters of WAO-GC (reported under `ftl.counters`).
#[derive(Debug, Clone, Default, serde::Serialize)]
struct WaoGcStats {
    /// Partial GC steps run (copy steps plus erase steps).
    partial_steps: u64,
    /// Steps that copied valid pages.
    copy_steps: u64,
    /// Steps that erased a victim (one per finished collection).
    erase_steps: u64,
    /// Steps by the number of pages they copied: index i counts steps of i copies (index 0:
    /// erase steps), the last index steps of more than c copies (collections over the bound).
    steps_by_copies: Vec<u64>,
    /// The most copies any step did (c unless a collection was over the bound).
    max_copies_in_step: u32,
    /// The most steps any finished collection took (eq. 12 keeps it <= ceil(ceil(λ P) / c) + 1).
    max_steps_per_collection: u32,
    /// The most valid pages a victim held when chosen.
    max_victim_valid_pages: u32,
    /// Pages moved with copyback.
    copyback_pages: u64,
    /// Collections whose victim held too many valid pages for n + v <= P at c copies per step.
    collections_over_bound: u64,
    /// Host writes that, at c copies per step, would have found their die's reserved block
    /// full before its victim was erased (must stay 0 when eq. 12 holds).
    writes_without_free_page: u64,
    /// Old pages read for partial-page writes.
    rmw_reads: u64,
}

impl WaoGcStats {
    fn new(copies_per_step: u32) -> Self {
        WaoGcStats {
            steps_by_copies: vec![0; copies_per_step as usize + 2],
            ..WaoGcStats::default()
        }
    }
}

/// The WAO-GC FTL.
pub struct WaoGc {
    cfg: WaoGcConfig,
    sizing: Sizing,
    layout: Layout,
    pages: PageData,
    map: MapTable,
    blocks: Blocks,
    dies: Vec<Die>,
    /// Host pages written so far, in channel-first die order (the next page's die).
    cursor: u32,
    /// Host pages written: the OOB sequence number of the next.
    pages_written: u64,
    /// Data versions of the page a GC copy programs (reused).
    gc_data: Vec<u64>,
    /// With `gc_step_scope = "device"`: the last commands of the latest partial step (its
    /// programs, copybacks or erase), which every later host command waits for. Each step
    /// follows a host write that waited for the previous hold, so the latest step's commands
    /// complete after all earlier steps'. Empty with "die" scope. Capacity reused.
    step_hold: Vec<CmdId>,
    stats: WaoGcStats,
}

impl WaoGc {
    pub fn new(config: &ExperimentConfig) -> Result<Self, ConfigError> {
        let (cfg, sizing) = WaoGcConfig::from_experiment(config)?;
        let layout = Layout::new(&config.geometry);
        let spp = config.geometry.page_bytes / config.host.sector_bytes;
        Ok(WaoGc {
            map: MapTable::new(sizing.logical_pages, 1),
            blocks: Blocks::new(layout, 1, VictimPolicy::Greedy),
            dies: vec![
                Die {
                    open: NIL,
                    collection: None,
                };
                layout.dies() as usize
            ],
            layout,
            pages: PageData::new(spp, config.geometry.page_bytes),
            cursor: 0,
            pages_written: 0,
            gc_data: vec![0; spp as usize],
            step_hold: Vec::with_capacity(cfg.copies_per_step as usize + 1),
            stats: WaoGcStats::new(cfg.copies_per_step),
            sizing,
            cfg,
        })
    }

    fn bug(&self, message: String) -> SimError {
        SimError::Ftl {
            ftl: "wao-gc",
            message,
        }
    }

    fn page_bytes(&self) -> u32 {
        self.layout.page_bytes
    }

    fn write(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let (lpn, s0, s1) = self.pages.piece(sub);
        let full = self.pages.is_full(s0, s1);
        let old = self.map.get(lpn);
        let mut rmw = None;
        if let Some(old) = old.filter(|_| !full) {
            let issue = Issue::host(sub.id).after(&self.step_hold);
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
            ftl: "wao-gc",
            source,
        })?;
        let die = self.layout.striped_die(self.cursor);
        self.cursor = self.cursor.wrapping_add(1);
        let ppn = self.host_page(ctx, die)?;
        if let Some(old) = old {
            self.map.invalidate_programmed(ctx, &mut self.blocks, old)?;
        }
        self.map.set(lpn, ppn);
        let data = ctx.payloads().then_some(self.pages.host_data());
        // The read-modify-write read already waited for the step hold.
        let after = if rmw.is_some() {
            rmw.as_slice()
        } else {
            self.step_hold.as_slice()
        };
        let program = ctx.program(
            &[ppn],
            &[OobEntry::new(lpn, seq, 0)],
            data,
            Issue::host(sub.id).after(after),
        )?;
        if self.dies[die as usize].collection.is_some() {
            self.partial_step(ctx, die, program)?;
        }
        ctx.complete(sub.id);
        Ok(())
    }
}

impl Ftl for WaoGc {
    fn name(&self) -> &'static str {
        "wao-gc"
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
            Op::Read => {
                ctx.charge_cpu(self.cfg.cpu_page_ns);
                self.pages.read(ctx, &self.map, sub, &self.step_hold)
            }
            Op::Write => {
                ctx.charge_cpu(self.cfg.cpu_page_ns);
                self.write(ctx, sub)
            }
            Op::Trim => self.pages.trim(ctx, &mut self.map, &mut self.blocks, sub),
            // A write completes only once programmed: nothing acknowledged is volatile.
            Op::Flush => {
                ctx.complete(sub.id);
                Ok(())
            }
        }
    }

    fn flash_done(&mut self, _ctx: &mut FtlCtx<'_>, token: u64) -> Result<(), SimError> {
        Err(self.bug(format!(
            "completion of token {token}, which wao-gc never asks for"
        )))
    }

    fn check_invariants(&self, nand: &Nand) -> Result<(), String> {
        self.check(nand)
    }

    fn reset_counters(&mut self, _now_ns: u64) {
        self.stats = WaoGcStats::new(self.cfg.copies_per_step);
    }

    fn report(&self) -> serde_json::Value {
        let p = self.sizing.pages_per_block;
        let c = self.cfg.copies_per_step;
        let victim_bound = (self.cfg.logical_ratio * f64::from(p)).ceil() as u32;
        serde_json::json!({
            "logical_ratio": self.cfg.logical_ratio,
            "eq12_ratio_bound": self.sizing.ratio_bound,
            "largest_ratio": largest_ratio(p, c),
            "copies_per_step": c,
            "gc_step_scope": self.cfg.gc_step_scope,
            "pages_per_block": p,
            "logical_pages": self.sizing.logical_pages,
            "victim_valid_pages_bound": victim_bound,
            "steps_per_collection_bound": steps_for(victim_bound, c),
            "dies_collecting": self.dies.iter().filter(|d| d.collection.is_some()).count(),
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

/// Bytes the mapping table and block bookkeeping of WAO-GC would take on the device of
/// `config` (one mapping unit per page, λ of the pages logical).
pub fn estimate_state_bytes(config: &ExperimentConfig) -> Result<u64, ConfigError> {
    let (_, sizing) = WaoGcConfig::from_experiment(config)?;
    let layout = Layout::new(&config.geometry);
    Ok(MapTable::estimate_bytes(sizing.logical_pages)
        + Blocks::estimate_bytes(&layout, 1, VictimPolicy::Greedy, false))
}

impl registry::FtlSettings for WaoGcConfig {
    fn checked(config: &ExperimentConfig) -> Result<Self, ConfigError> {
        Self::from_experiment(config).map(|(settings, _)| settings)
    }
}
