//! Demand-paged page mapping (fmmu.txt section 4.2; DFTL, Gupta et al. ASPLOS 2009): the
//! mapping table lives in translation pages in flash, found through the global translation
//! directory (GTD, TVPN -> TPPN, in RAM), and a RAM map cache ([`cache::MapCachePolicy`])
//! holds part of it.
//!
//! - **Data path** as pagemap's: one mapping unit per host sub-request, units packed into
//!   pages on per-die frontiers through a bounded write buffer (acknowledged when placed).
//! - **Map cache**: every host operation first looks its entry up; a miss reads the entry's
//!   translation page (a timed flash read of its unit's bytes, `Cause::Mapping`), and misses on a page already
//!   being read wait on that one read (coalesced); its completion installs the waiters'
//!   entries in turn and runs each request's continuation. Evictions return write-backs: the
//!   core reads the old translation page and writes the merged one after it on the
//!   translation stream (`Stream::Map`), updates the GTD and invalidates the old one.
//! - **Translation pages** are one mapping unit (4 KiB: 1,024 entries, fmmu.txt Fig. 7),
//!   packed `units_per_page` to a flash page in unit slots flagged `OOB_FLAG_TRANSLATION`;
//!   written ones are buffered until their flash page is full ([`translation`]). Their
//!   flash pages are striped over the dies (`ftl.translation_dies`, one open translation
//!   block per die) so that loads spread as data reads do. A translation page stays in RAM
//!   until its flash program completes: a load or a merge of it then needs no flash read
//!   (reading it from flash would wait for that program, which waits for its own merge
//!   reads: chains that left the dies idle at steady-state GC).
//! - **Idle write-back** ([`idle`]): once the host has been idle for `ftl.idle_write_back_ns`
//!   every dirty entry is written back, so a pause (and the end of preconditioning) leaves
//!   the cache clean.
//! - **Data GC** ([`gc`]; per die, greedy / cost-benefit / FIFO, foreground and background)
//!   reads each victim page holding valid units (timed, `Cause::Gc`), programs the copies to
//!   the die's GC frontier and updates their entries when the program completes, with
//!   CondUpdate (fmmu.txt 4.1): only if the entry still names the old slot, else a host write
//!   won, the copy is dropped and `cond_updates_lost` counts it. A moved entry that is cached
//!   is marked dirty, the others are written to their translation pages when the victim is
//!   erased (one write-back per translation page: a batch update; FMMU adds the cache's dirty
//!   entries of that page, which its DTL finds, while DFTL and CDFTL leave them dirty rather
//!   than scan their table); the victim is erased once every copy is durable and resolved.
//!   A flush programs only host pages: GC copies need none (their sources stay valid).
//!   A host write whose stripe die is at the foreground watermark (no open host block) starts
//!   GC there and goes to the next die that can take it; only when no die can does it wait,
//!   queued and not acknowledged, until an erase.
//! - **Translation GC**: when closed translation blocks exceed twice what the translation pages
//!   fill plus one, the one with the fewest valid pages has them copied and is erased.
//! - **Functional reference**: the core keeps every entry's value in a full host map (the
//!   cache models what RAM holds, not the values); the checks compare it against the data
//!   pages' OOB, the GTD against the translation pages, and the per-TVPN copy of the entries
//!   last written to flash against it for every entry the cache does not hold dirty.
//! - **Execution time** ([`exec_time`]): one Lookup per host read and one Update per host
//!   write, per CMT block the request touches (fmmu.txt Fig. 6's StartLPN and NumLPNs), costed
//!   by where it is served (CMT hit, CMT miss + CTP hit, miss); command, GC update and flush
//!   costs; all charged per handler (`exec_time = "paper"`), or zero (`"ideal"`, fmmu.txt 5.3:
//!   "the FTL execution time is set to zero"): the same cache, misses and translation traffic.
//!
//! - **Power-loss recovery** ([`recover`]): a full OOB scan rebuilds the map; the old
//!   translation pages are erased and every one holding a mapped entry is written anew.
//!
//! Not yet: partial-unit writes larger than one unit per sub-request, multi-plane programs and
//! copyback.

pub mod block_cache;
pub mod cache;
mod check;
pub mod config;
mod digest;
mod entry_bits;
pub mod exec_time;
mod gc;
mod idle;
mod recover;
mod translation;
pub mod twolevel_cache;
mod uncached;

use std::collections::VecDeque;

use block_cache::BlockCache;
use cache::{DftlCache, Lookup, MapCachePolicy, WriteBack};
use config::{ArbiterKind, DemandConfig, ExecTimeModel, Sizing};
use exec_time::{ExecTime, Scheme};
use twolevel_cache::TwoLevelCache;

use super::twolevel::FlushSearch;

use super::mapcache::{MapCacheLevel, MapCacheReport, TranslationGcReport};
use super::mapping::{BlockState, Blocks, MapTable, Stream, UNMAPPED};
use super::registry::{self, FtlEntry};
use super::{CallTarget, CpuActivity, Ftl, FtlCtx, Issue, MapQueue, MapUnitArbiter, QueueWeights};
use crate::config::{ConfigError, ExperimentConfig};
use crate::flash::{Cause, CmdId};
use crate::host::{Op, SubId, SubRequest};
use crate::nand::{BlockId, Divisor, Layout, Nand, OobEntry, Ppn, UnitAddr};
use crate::SimError;

/// Registry entry of DFTL as fmmu.txt 5.2 evaluates it.
pub const DFTL_ENTRY: FtlEntry = registry::settings_entry::<DemandConfig>(
    "dftl",
    "demand-paged page mapping (DFTL as fmmu.txt 5.2 evaluates it): one-level set-associative \
     cached mapping table of 64-byte blocks with second chance, no CTP, batch write-back of a \
     translation page's dirty blocks found by scanning the table, fmmu.txt Fig. 10 execution \
     times",
    |c| Ok(Box::new(DemandFtl::dftl(c)?)),
);

/// Registry entry of Gupta et al.'s entry-level DFTL.
pub const DFTL_ENTRY_LEVEL_ENTRY: FtlEntry = registry::settings_entry::<DemandConfig>(
    "dftl-entry",
    "demand-paged page mapping (DFTL, Gupta et al. ASPLOS 2009): entry-level, fully \
     associative cached mapping table with second chance, batch write-back of a translation \
     page's dirty entries, fmmu.txt Fig. 10 execution times",
    |c| Ok(Box::new(DemandFtl::dftl_entry_level(c)?)),
);

/// Registry entry of CDFTL.
pub const CDFTL_ENTRY: FtlEntry = registry::settings_entry::<DemandConfig>(
    "cdftl",
    "demand-paged page mapping with a two-level map cache in software (CDFTL, fmmu.txt 5.2): \
     set-associative CMT of 64-byte map blocks over cached translation pages, flush victims \
     found by scanning every CMT block, fmmu.txt Fig. 10 execution times",
    |c| Ok(Box::new(DemandFtl::two_level(c, Scheme::Cdftl)?)),
);

/// Registry entry of FMMU.
pub const FMMU_ENTRY: FtlEntry = registry::settings_entry::<DemandConfig>(
    "fmmu",
    "demand-paged page mapping with the FMMU hardware map cache (fmmu.txt section 4): \
     set-associative CMT and CTP with in-cache MSHRs, dirty translation list with next links \
     and cost-benefit flush victims, map work on the map unit (160 ns per operation)",
    |c| Ok(Box::new(DemandFtl::two_level(c, Scheme::Fmmu)?)),
);

/// The demand-paged FTLs: the ones with translation blocks (memory estimates need to know).
pub const ENTRIES: [FtlEntry; 4] = [DFTL_ENTRY, DFTL_ENTRY_LEVEL_ENTRY, CDFTL_ENTRY, FMMU_ENTRY];

const TAG_SHIFT: u32 = 56;
const TAG_PROGRAM: u64 = 1;
const TAG_BACKGROUND_GC: u64 = 2;
const TAG_LOAD: u64 = 3;
/// A wake-up (not a flash completion): the idle write-back timer.
const TAG_IDLE: u64 = 4;
/// A GC read of a victim page.
const TAG_GC_READ: u64 = 5;
/// A translation page program (index: the block's erase count << 32 | the block).
const TAG_MAP_PROGRAM: u64 = 6;

fn token(tag: u64, index: u64) -> u64 {
    (tag << TAG_SHIFT) | index
}

/// The open block of a data stream on one die and the page being assembled in it.
#[derive(Debug, Clone)]
struct Frontier {
    open: bool,
    block: BlockId,
    page: u32,
    entries: Vec<OobEntry>,
    data: Vec<u64>,
    filled: u32,
    host_units: u32,
    deps: Vec<CmdId>,
    /// GC frontiers: the source slot of each copy in the page (`UNMAPPED` elsewhere).
    sources: Vec<UnitAddr>,
}

/// A data program in flight.
#[derive(Debug, Clone, Copy, Default)]
struct ProgramRecord {
    block: BlockId,
    erase_count: u32,
    host_units: u32,
    seq: u64,
    /// The GC copies of the page ([`gc::CopyPage`] index), `NIL` if none.
    copies: u32,
}

/// Counters of the map cache (reported in the standard `map_cache` section, so not
/// serialized here) and of the data path (`ftl_details.counters`).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct DemandStats {
    /// Lookup and Update requests charged: one per host request and CMT block it touches.
    #[serde(skip)]
    pub map_requests: u64,
    #[serde(skip)]
    pub lookups: u64,
    #[serde(skip)]
    pub hits: u64,
    #[serde(skip)]
    pub misses_coalesced: u64,
    /// Translation pages read to serve misses.
    #[serde(skip)]
    pub translation_reads: u64,
    /// Old translation pages read to merge a write-back.
    #[serde(skip)]
    pub merge_reads: u64,
    /// Translation pages written (one mapping unit each).
    #[serde(skip)]
    pub translation_writes: u64,
    /// Flash pages programmed with translation pages (`units_per_page` translation pages each).
    pub translation_programs: u64,
    /// Misses served from the translation buffer (a translation page written but its flash
    /// page not yet programmed): no flash read.
    #[serde(skip)]
    pub translation_buffer_hits: u64,
    #[serde(skip)]
    pub flushes: u64,
    /// Dirty entries the write-backs carried.
    #[serde(skip)]
    pub entries_flushed: u64,
    #[serde(skip)]
    pub blocked_requests: u64,
    #[serde(skip)]
    pub cond_updates_lost: u64,
    #[serde(skip)]
    pub translation_gc_victims: u64,
    #[serde(skip)]
    pub translation_pages_moved: u64,
    /// Host reads served from the write buffer.
    pub buffer_read_hits: u64,
    /// Old data read for writes covering part of a mapping unit.
    pub rmw_reads: u64,
    /// Empty unit slots programmed to close a page.
    pub padded_units: u64,
    /// Foreground GC runs (reported in the standard `gc` section).
    #[serde(skip)]
    pub foreground_gc_runs: u64,
    /// Writes that waited for write-buffer space.
    pub writes_waited_for_buffer: u64,
    /// Writes that waited for a free block because no die could take them (every die at the
    /// foreground watermark with its GC under way), counted once each.
    pub writes_waited_for_gc: u64,
    /// Translation-page write-backs done while the host was idle ([`idle`]).
    pub idle_write_backs: u64,
}

/// The demand-paged FTL core with a map-cache policy.
pub struct DemandFtl {
    name: &'static str,
    cfg: DemandConfig,
    sizing: Sizing,
    layout: Layout,
    upp: u32,
    per_page: Divisor,
    unit_sectors: u64,
    map: MapTable,
    blocks: Blocks,
    /// Host frontiers (one per die), then GC frontiers.
    frontiers: Vec<Frontier>,
    cursor: u32,
    units_written: u64,
    buffer_used: u64,
    waiting: VecDeque<SubRequest>,
    records: Vec<ProgramRecord>,
    free_records: Vec<u32>,
    program_done: VecDeque<bool>,
    program_base: u64,
    flushes: VecDeque<(u64, SubId)>,
    background: Vec<bool>,
    host_data: Vec<u64>,
    gc_data: Vec<u64>,
    zeros: Vec<u64>,
    cache: Box<dyn MapCachePolicy>,
    exec: ExecTime,
    /// GTD: the unit slot holding each translation page.
    gtd: Vec<Option<UnitAddr>>,
    /// Entries of each translation page as last written to flash.
    flash_copy: Vec<Vec<u32>>,
    /// Translation reads in flight and the requests waiting on each.
    loading: Waiters,
    /// Scratch list of write-backs (reused, no allocation per operation).
    write_backs: Vec<WriteBack>,
    /// Scratch list of entries changed while not cached (GC moves, TRIM).
    uncached: Vec<u32>,
    /// Requests whose lookup was blocked (a whole cache set dirty or loading).
    blocked: VecDeque<SubRequest>,
    /// Looking blocked requests up again (not counted as new blocked requests).
    retrying: bool,
    /// Entries per miss key ([`Self::miss_key`]): a translation page's, or a CMT block's.
    miss_key_entries: u32,
    /// The translation flash page being assembled in the open translation block.
    map_frontier: Frontier,
    /// Per die: its open translation block and the next page the buffer may take there.
    map_open: Vec<Option<(BlockId, u32)>>,
    /// The die whose translation block takes the next translation flash page.
    map_die_turn: u32,
    translation_seq: u64,
    in_translation_gc: bool,
    /// Host sub-requests submitted so far (tells idle periods apart).
    host_submits: u64,
    /// The idle period (by `host_submits`) whose write-back timer is armed.
    idle_armed_at: Option<u64>,
    /// The data victim being collected on each die.
    victims: Vec<Vec<gc::Victim>>,
    /// Victim page reads in flight (indexed by their tokens) and the free indices.
    gc_reads: Vec<gc::GcRead>,
    free_gc_reads: Vec<u32>,
    /// Programmed GC pages awaiting their CondUpdates (reused entries) and the free ones.
    copy_pages: Vec<gc::CopyPage>,
    free_copy_pages: Vec<u32>,
    /// Host writes (looked up) waiting for a free block because no die could take them
    /// (foreground GC under way on every die), and an empty queue swapped in while they are
    /// retried.
    stalled: VecDeque<SubRequest>,
    stalled_spare: VecDeque<SubRequest>,
    /// Stalled writes are being placed (their entries may have been evicted).
    placing_stalled: bool,
    /// Per die: entries its victim moved while not cached, written back when it is erased.
    gc_uncached: uncached::GcUncached,
    /// Per die: foreground victims started since its host frontier last opened a block.
    fruitless_victims: Vec<u32>,
    stats: DemandStats,
}

impl DemandFtl {
    /// DFTL (fmmu.txt 5.2): the core with a set-associative CMT of 64-byte blocks of
    /// `cmt_bytes` ([`BlockCache`]).
    pub fn dftl(config: &ExperimentConfig) -> Result<Self, ConfigError> {
        let (cfg, sizing) = DemandConfig::from_experiment(config)?;
        let sets = cfg.dftl_cmt_sets(&sizing)?;
        let cache = BlockCache::new(
            sets,
            cfg.cache_ways,
            sizing.entries_per_tpage,
            sizing.logical_units,
        );
        let exec = Self::exec_time(&cfg, Scheme::Dftl, config.cpu.cores);
        Ok(Self::new(
            config,
            "dftl",
            cfg,
            sizing,
            Box::new(cache),
            exec,
        ))
    }

    /// Gupta et al.'s DFTL: the core with an entry-level second-chance cache of `cmt_bytes`.
    pub fn dftl_entry_level(config: &ExperimentConfig) -> Result<Self, ConfigError> {
        let (cfg, sizing) = DemandConfig::from_experiment(config)?;
        let cache = DftlCache::new(
            sizing.cmt_entries,
            sizing.entries_per_tpage,
            sizing.logical_units,
        );
        let exec = Self::exec_time(&cfg, Scheme::Dftl, config.cpu.cores);
        Ok(Self::new(
            config,
            "dftl-entry",
            cfg,
            sizing,
            Box::new(cache),
            exec,
        ))
    }

    /// The execution-time model the settings ask for.
    fn exec_time(cfg: &DemandConfig, scheme: Scheme, cores: u32) -> ExecTime {
        match cfg.exec_time {
            ExecTimeModel::Paper => ExecTime::fig10(scheme, cores, cfg.flush_scan_ns_per_block),
            ExecTimeModel::Ideal => ExecTime::ideal(),
        }
    }

    /// CDFTL (`Scheme::Cdftl`: flush by scanning, times on the cores) or FMMU
    /// (`Scheme::Fmmu`: DTL, times on the map unit): the core with a two-level cache.
    pub fn two_level(config: &ExperimentConfig, scheme: Scheme) -> Result<Self, ConfigError> {
        let (cfg, sizing) = DemandConfig::from_experiment(config)?;
        let geometry = cfg.two_level_geometry(&sizing)?;
        let (name, search) = match scheme {
            Scheme::Fmmu => ("fmmu", FlushSearch::Dtl),
            _ => ("cdftl", FlushSearch::Scan),
        };
        let cache = TwoLevelCache::new(geometry, sizing.logical_units, search);
        let exec = Self::exec_time(&cfg, scheme, config.cpu.cores);
        Ok(Self::new(config, name, cfg, sizing, Box::new(cache), exec))
    }

    /// The core with any policy and execution-time model.
    pub fn new(
        config: &ExperimentConfig,
        name: &'static str,
        cfg: DemandConfig,
        sizing: Sizing,
        cache: Box<dyn MapCachePolicy>,
        exec: ExecTime,
    ) -> Self {
        let layout = Layout::new(&config.geometry);
        let upp = sizing.units_per_page;
        let miss_key_entries = cache
            .miss_merge_entries()
            .unwrap_or(sizing.entries_per_tpage)
            .max(1);
        let unit_sectors = u64::from(cfg.mapping_unit_bytes / config.host.sector_bytes);
        let payloads = config.run.payloads || config.run.verify;
        let spp = (config.geometry.page_bytes / config.host.sector_bytes) as usize;
        let frontier = Frontier {
            open: false,
            block: 0,
            page: 0,
            entries: vec![OobEntry::EMPTY; upp as usize],
            data: if payloads { vec![0; spp] } else { Vec::new() },
            filled: 0,
            host_units: 0,
            deps: Vec::new(),
            sources: vec![UNMAPPED; upp as usize],
        };
        let ept = sizing.entries_per_tpage as usize;
        let flash_copy = (0..sizing.translation_pages)
            .map(|t| {
                let n = (sizing.logical_units as usize - t as usize * ept).min(ept);
                vec![UNMAPPED; n]
            })
            .collect();
        DemandFtl {
            name,
            blocks: Blocks::with_translation(layout, upp, cfg.gc_victim),
            frontiers: vec![frontier.clone(); (layout.dies() * 2) as usize],
            map: MapTable::new(sizing.logical_units, upp),
            layout,
            upp,
            per_page: Divisor::new(upp),
            unit_sectors,
            cursor: 0,
            units_written: 0,
            buffer_used: 0,
            waiting: VecDeque::new(),
            records: Vec::new(),
            free_records: Vec::new(),
            program_done: VecDeque::new(),
            program_base: 0,
            flushes: VecDeque::new(),
            background: vec![false; layout.dies() as usize],
            host_data: vec![0; unit_sectors as usize],
            gc_data: vec![0; unit_sectors as usize],
            zeros: vec![0; unit_sectors as usize],
            cache,
            exec,
            gtd: vec![None; sizing.translation_pages as usize],
            flash_copy,
            loading: Waiters::new(sizing.logical_units.div_ceil(miss_key_entries)),
            miss_key_entries,
            write_backs: Vec::new(),
            uncached: Vec::new(),
            blocked: VecDeque::new(),
            retrying: false,
            map_frontier: Frontier {
                entries: vec![OobEntry::EMPTY; upp as usize],
                data: Vec::new(),
                ..frontier.clone()
            },
            map_open: vec![None; layout.dies() as usize],
            map_die_turn: 0,
            translation_seq: 0,
            in_translation_gc: false,
            host_submits: 0,
            idle_armed_at: None,
            victims: vec![Vec::new(); layout.dies() as usize],
            gc_reads: Vec::new(),
            free_gc_reads: Vec::new(),
            copy_pages: Vec::new(),
            free_copy_pages: Vec::new(),
            stalled: VecDeque::new(),
            stalled_spare: VecDeque::new(),
            placing_stalled: false,
            gc_uncached: uncached::GcUncached::new(layout.dies(), sizing.logical_units),
            fruitless_victims: vec![0; layout.dies() as usize],
            stats: DemandStats::default(),
            sizing,
            cfg,
        }
    }

    /// The counters of the map cache and data path.
    pub fn stats(&self) -> &DemandStats {
        &self.stats
    }

    fn unit_bytes(&self) -> u32 {
        self.cfg.mapping_unit_bytes
    }

    fn tvpn_of(&self, lpn: u32) -> u32 {
        lpn / self.sizing.entries_per_tpage
    }

    fn bug(&self, message: String) -> SimError {
        SimError::Ftl {
            ftl: self.name,
            message,
        }
    }

    /// Charges FTL time on the cores, or on the map unit for a hardware map cache.
    fn charge(&self, ctx: &mut FtlCtx<'_>, activity: CpuActivity, ns: u64) {
        if ns == 0 {
            return;
        }
        if self.exec.on_map_unit && activity != CpuActivity::Other {
            ctx.charge_map_unit(ns);
        } else {
            ctx.charge_cpu_for(activity, ns);
        }
    }

    /// The logical unit of a sub-request (one unit each: the chop size is the unit).
    fn lpn_of(&self, sub: &SubRequest) -> Result<u32, SimError> {
        let lpn = sub.first_sector / self.unit_sectors;
        let last = (sub.first_sector + sub.sectors.max(1) - 1) / self.unit_sectors;
        if last != lpn || lpn >= u64::from(self.map.len()) {
            return Err(self.bug(format!(
                "sub-request of sectors {}+{} is not inside one mapping unit of the logical space",
                sub.first_sector, sub.sectors
            )));
        }
        Ok(lpn as u32)
    }

    fn frontier_index(&self, stream: Stream, die: u32) -> usize {
        match stream {
            Stream::Gc => (self.layout.dies() + die) as usize,
            _ => die as usize,
        }
    }

    fn host_die(&self) -> u32 {
        self.layout.striped_die(self.cursor)
    }

    /// Whether a mapped unit is still in the DRAM buffer (its page not durably programmed).
    fn buffered(&self, unit: UnitAddr) -> bool {
        let ppn = self.per_page.quotient(unit);
        self.layout.page_in_block(ppn) >= self.blocks.durable_pages(self.layout.block_of(ppn))
    }

    /// Frontier and slot holding a unit of a page still being assembled.
    fn assembling_slot(&self, unit: UnitAddr) -> Option<(usize, usize)> {
        let ppn = self.per_page.quotient(unit);
        let block = self.layout.block_of(ppn);
        let BlockState::Open { stream, .. } = self.blocks.state(block) else {
            return None;
        };
        let f = self.frontier_index(stream, self.layout.die_of(block));
        let fr = &self.frontiers[f];
        (fr.open && fr.block == block && fr.page == self.layout.page_in_block(ppn))
            .then(|| (f, self.per_page.remainder(unit) as usize))
    }

    /// Copies the data versions of a mapped unit into `out` (from NAND or the assembling page).
    fn unit_data(&self, nand: &Nand, unit: UnitAddr, out: &mut [u64]) {
        if nand.is_programmed(self.per_page.quotient(unit)) {
            out.copy_from_slice(nand.unit_data(unit));
        } else if let Some((f, slot)) = self.assembling_slot(unit) {
            let n = out.len();
            out.copy_from_slice(&self.frontiers[f].data[slot * n..(slot + 1) * n]);
        }
    }

    /// Drops the current location of a logical unit.
    fn unmap(&mut self, ctx: &mut FtlCtx<'_>, lpn: u32) -> Result<(), SimError> {
        let Some(old) = self.map.take(lpn) else {
            return Ok(());
        };
        if ctx.nand().is_programmed(self.per_page.quotient(old)) {
            self.map.invalidate_programmed(ctx, &mut self.blocks, old)
        } else if let Some((f, slot)) = self.assembling_slot(old) {
            self.frontiers[f].entries[slot] = OobEntry::EMPTY;
            Ok(())
        } else {
            Err(self.bug(format!(
                "unit {lpn} maps to slot {old}, neither programmed nor buffered"
            )))
        }
    }

    // ---- map cache: resolve, load, continue ----

    /// Looks the entry of a sub-request up and runs it now (hit) or once its translation page
    /// is read (miss). A blocked lookup (its set all dirty or loading) makes room at once and
    /// is looked up again, or, when every way of the set is loading, waits in `blocked` for a
    /// load's completion (see [`Self::unblock`]).
    fn resolve(&mut self, ctx: &mut FtlCtx<'_>, sub: SubRequest) -> Result<(), SimError> {
        let lpn = self.lpn_of(&sub)?;
        let mut counted = self.retrying;
        loop {
            match self.cache.lookup(lpn) {
                hit @ (Lookup::Hit | Lookup::SecondLevelHit) => {
                    self.stats.lookups += 1;
                    self.stats.hits += 1;
                    let ns = match hit {
                        Lookup::Hit => self.exec.lookup_hit_ns,
                        _ => self.exec.second_level_hit_ns,
                    };
                    self.charge_map_request(ctx, &sub, lpn, ns);
                    return self.proceed(ctx, &sub);
                }
                Lookup::Miss => {
                    self.stats.lookups += 1;
                    self.charge_map_request(ctx, &sub, lpn, self.exec.lookup_miss_ns);
                    return self.load(ctx, lpn, sub);
                }
                Lookup::Blocked => {
                    // Counted once per request, and as a lookup once it is served.
                    if !counted {
                        self.stats.blocked_requests += 1;
                        counted = true;
                    }
                    if !self.unblock(ctx, lpn)? {
                        self.blocked.push_back(sub);
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Charges the map-cache request of a host sub-request (a read's Lookup, a write's Update,
    /// fmmu.txt 4.1) if the sub-request starts one: one request's units on one CMT block are
    /// one Lookup or Update carrying StartLPN and NumLPNs (Fig. 6), charged with its first
    /// unit (see [`exec_time`]). Decided from the sub-request alone, so sub-requests of
    /// several requests interleaved over the cores are charged alike.
    fn charge_map_request(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest, lpn: u32, ns: u64) {
        let request_lpn = sub.request_first_sector / self.unit_sectors;
        let starts = u64::from(lpn) <= request_lpn
            || self.cache.map_block(lpn) != self.cache.map_block(lpn - 1);
        if !starts {
            return;
        }
        self.stats.map_requests += 1;
        let activity = match sub.op {
            Op::Write => CpuActivity::Update,
            _ => CpuActivity::Lookup,
        };
        self.charge(ctx, activity, ns);
    }

    /// Makes room for a blocked lookup of `lpn`; returns whether it did. A blocked request
    /// must always have something under way that releases it: the flush of a dirty way of
    /// its set runs now (the CMT block goes into the CTP, or the CTP page's write-back waits
    /// in the translation buffer: neither completes later to run [`Self::pace`]), so the
    /// caller looks it up again at once; only a set whose ways are all loading makes it wait,
    /// and those loads' completions run `pace`, which looks it up again. (Each room-making
    /// flush cleans a block, so the retries end.)
    fn unblock(&mut self, ctx: &mut FtlCtx<'_>, lpn: u32) -> Result<bool, SimError> {
        let mut out = std::mem::take(&mut self.write_backs);
        let (room, blocks) = self.cache.unblock(lpn, &mut out);
        self.flushed(ctx, blocks, out)?;
        Ok(room)
    }

    /// What misses in flight merge on: the translation page (a cache with MSHRs or a CTP:
    /// every miss on a page being read waits on that read), or, for a cache without them
    /// ([`MapCachePolicy::miss_merge_entries`]: DFTL), the CMT block, so each block's miss
    /// reads its translation page even while another read of it is in flight.
    fn miss_key(&self, lpn: u32) -> u32 {
        lpn / self.miss_key_entries
    }

    /// The translation page of a miss key.
    fn tvpn_of_key(&self, key: u32) -> u32 {
        ((u64::from(key) * u64::from(self.miss_key_entries))
            / u64::from(self.sizing.entries_per_tpage)) as u32
    }

    /// Queues a request on its translation page's read, issuing the read if none is in flight
    /// for its miss key ([`Self::miss_key`]).
    fn load(&mut self, ctx: &mut FtlCtx<'_>, lpn: u32, sub: SubRequest) -> Result<(), SimError> {
        let tvpn = self.tvpn_of(lpn);
        let key = self.miss_key(lpn);
        if self.loading.is_loading(key) {
            self.loading.push(key, sub);
            self.stats.misses_coalesced += 1;
            return Ok(());
        }
        let tunit = match self.gtd[tvpn as usize] {
            Some(u) if !self.translation_in_ram(u) => u,
            other => {
                // Never written (every entry unmapped) or still in the translation buffer:
                // nothing to read from flash.
                if other.is_some() {
                    self.stats.translation_buffer_hits += 1;
                }
                self.install(ctx, lpn)?;
                return self.proceed(ctx, &sub);
            }
        };
        self.stats.translation_reads += 1;
        let issue = Issue::new(Cause::Mapping).token(token(TAG_LOAD, u64::from(key)));
        self.loading.push(key, sub);
        // One translation page: only its unit's bytes cross the bus.
        let tppn = self.per_page.quotient(tunit);
        ctx.read(&[tppn], self.unit_bytes(), issue)?;
        Ok(())
    }

    /// A translation page was read for miss key `key`: each waiter's entry is installed and
    /// its request runs.
    fn loaded(&mut self, ctx: &mut FtlCtx<'_>, key: u32) -> Result<(), SimError> {
        let mut next = self.loading.detach(key);
        if next == NIL {
            let tvpn = self.tvpn_of_key(key);
            return Err(self.bug(format!(
                "translation page {tvpn} read (miss key {key}) without waiters"
            )));
        }
        while next != NIL {
            let (sub, after) = self.loading.take(next);
            next = after;
            let lpn = self.lpn_of(&sub)?;
            self.install(ctx, lpn)?;
            self.proceed(ctx, &sub)?;
        }
        Ok(())
    }

    /// Charges a map-cache flush that examined `blocks` cache blocks and does its write-backs.
    fn flushed(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        blocks: Option<u64>,
        out: Vec<WriteBack>,
    ) -> Result<(), SimError> {
        if let Some(blocks) = blocks {
            self.charge(ctx, CpuActivity::Flush, self.exec.flush_ns(blocks));
        }
        self.write_back_all(ctx, out)
    }

    /// Does the write-backs of `out`, then keeps the emptied list for reuse.
    fn write_back_all(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        mut out: Vec<WriteBack>,
    ) -> Result<(), SimError> {
        let result = out.iter().try_for_each(|wb| self.write_back(ctx, wb));
        out.clear();
        if out.capacity() > self.write_backs.capacity() {
            self.write_backs = out;
        }
        result
    }

    /// Between requests: one background flush step of the map cache, then the requests it
    /// blocked are looked up again (in arrival order; one still blocked queues again).
    fn pace(&mut self, ctx: &mut FtlCtx<'_>) -> Result<(), SimError> {
        let mut out = std::mem::take(&mut self.write_backs);
        let blocks = self.cache.flush_step(&mut out);
        self.flushed(ctx, blocks, out)?;
        self.retrying = true;
        let mut result = Ok(());
        for _ in 0..self.blocked.len() {
            let sub = self.blocked.pop_front().expect("counted");
            result = self.resolve(ctx, sub);
            if result.is_err() {
                break;
            }
        }
        self.retrying = false;
        result
    }

    /// Caches an entry, writing back what the policy evicts; an entry GC moved while not
    /// cached (its translation page not yet written back) is cached dirty.
    fn install(&mut self, ctx: &mut FtlCtx<'_>, lpn: u32) -> Result<(), SimError> {
        let mut out = std::mem::take(&mut self.write_backs);
        self.cache.install(lpn, &mut out);
        for _ in 0..self.gc_uncached.remove_each(lpn) {
            self.cache.update(lpn);
        }
        self.write_back_all(ctx, out)
    }

    /// Records an entry changed by GC or a TRIM, charging its update: dirty in the cache, or
    /// (not cached) the caller writes its translation page back.
    fn updated(&mut self, ctx: &mut FtlCtx<'_>, lpn: u32) -> bool {
        self.charge(ctx, CpuActivity::Update, self.exec.update_ns);
        self.mark_updated(lpn)
    }

    /// Records a changed entry (no charge: a host write's Update was charged when its entry
    /// was found); returns whether it is cached.
    fn mark_updated(&mut self, lpn: u32) -> bool {
        if self.cache.state(lpn).is_some() {
            self.cache.update(lpn);
            true
        } else {
            false
        }
    }

    /// Runs a request whose entry is cached.
    fn proceed(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        self.charge(ctx, CpuActivity::Other, self.exec.command_ns);
        match sub.op {
            Op::Read => self.read(ctx, sub),
            Op::Write => self.accept_write(ctx, sub),
            Op::Trim | Op::Flush => Err(self.bug(format!("a {:?} is not looked up", sub.op))),
        }
    }

    // ---- host operations ----

    fn write(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        if !self.waiting.is_empty() || self.buffer_used + 1 > self.sizing.buffer_units {
            self.stats.writes_waited_for_buffer += 1;
            self.waiting.push_back(*sub);
            return Ok(());
        }
        self.buffer_used += 1;
        self.resolve(ctx, *sub)
    }

    /// Places a looked-up write on the die [`Self::host_placement_die`] picks, or queues it
    /// (in `stalled`, not acknowledged) when no die can take it; once one is queued, the
    /// writes whose lookups finish later queue behind it. No later write of the same sectors
    /// can overtake a queued one: the host interface lets a request overlapping an unfinished
    /// write reach the FTL only once that write completed (`host::order`); writes of other
    /// sectors of the same unit commute (each merges the unit's data as it then is).
    fn accept_write(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let Some(die) = self.host_placement_die(ctx)? else {
            if !self.placing_stalled {
                self.stats.writes_waited_for_gc += 1;
            }
            self.stalled.push_back(*sub);
            return Ok(());
        };
        let spu = self.unit_sectors as usize;
        let lpn = self.lpn_of(sub)?;
        let s0 = (sub.first_sector - u64::from(lpn) * self.unit_sectors) as usize;
        let s1 = s0 + sub.sectors as usize;
        let full = s0 == 0 && s1 == spu;
        let old = self.map.get(lpn);
        let mut dep = None;
        if let Some(old) = old.filter(|&o| !full && !self.buffered(o)) {
            let ppn = self.per_page.quotient(old);
            dep = Some(ctx.read(&[ppn], self.unit_bytes(), Issue::host(sub.id))?);
            self.stats.rmw_reads += 1;
        }
        if ctx.payloads() {
            let mut data = std::mem::take(&mut self.host_data);
            match old.filter(|_| !full) {
                Some(old) => self.unit_data(ctx.nand(), old, &mut data),
                None => data.fill(0),
            }
            data[s0..s1].fill(sub.version);
            self.host_data = data;
        }
        self.units_written += 1;
        self.place(ctx, Stream::Host, die, lpn, self.units_written, dep)?;
        if !self.mark_updated(lpn) {
            if !self.placing_stalled {
                return Err(self.bug(format!("host write of lpn {lpn} without its cached entry")));
            }
            // Looked up, then waited for a block while its entry was evicted: the new
            // location goes to its translation page at once (as a TRIM's does).
            let mut uncached = std::mem::take(&mut self.uncached);
            uncached.clear();
            uncached.push(lpn);
            let result = self.write_back_uncached(ctx, &mut uncached);
            self.uncached = uncached;
            result?;
        }
        ctx.complete(sub.id);
        Ok(())
    }

    fn read(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let lpn = self.lpn_of(sub)?;
        let s0 = (sub.first_sector - u64::from(lpn) * self.unit_sectors) as usize;
        let s1 = s0 + sub.sectors as usize;
        let Some(unit) = self.map.get(lpn) else {
            ctx.deliver(sub.id, sub.first_sector, &self.zeros[s0..s1])?;
            ctx.complete(sub.id);
            return Ok(());
        };
        if ctx.payloads() {
            let mut data = std::mem::take(&mut self.host_data);
            self.unit_data(ctx.nand(), unit, &mut data);
            let r = ctx.deliver(sub.id, sub.first_sector, &data[s0..s1]);
            self.host_data = data;
            r?;
        }
        if self.buffered(unit) {
            self.stats.buffer_read_hits += 1;
        } else {
            let issue = Issue::host(sub.id).deadline(sub.deadline_ns);
            let ppn = self.per_page.quotient(unit);
            ctx.read(&[ppn], self.unit_bytes(), issue)?;
        }
        ctx.complete(sub.id);
        Ok(())
    }

    /// TRIM unmaps the whole units it covers (partial units stay as they are); their entries
    /// are marked dirty where cached and written to their translation pages otherwise.
    fn trim(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let spu = self.unit_sectors;
        let first = sub.first_sector.div_ceil(spu);
        let end = ((sub.first_sector + sub.sectors) / spu).min(u64::from(self.map.len()));
        let mut uncached = std::mem::take(&mut self.uncached);
        uncached.clear();
        for lpn in (first..end).map(|l| l as u32) {
            if self.map.get(lpn).is_none() {
                continue;
            }
            self.unmap(ctx, lpn)?;
            if !self.updated(ctx, lpn) {
                uncached.push(lpn);
            }
        }
        let result = self.write_back_uncached(ctx, &mut uncached);
        self.uncached = uncached;
        result?;
        ctx.complete(sub.id);
        Ok(())
    }

    /// A flush programs the host pages being assembled (padded) and completes once every
    /// program issued so far is done. GC pages are left to fill: a copy's source stays valid
    /// and mapped until the copy is durable, so no acknowledged data waits in them, and
    /// padding one would break GC's room arithmetic (a victim is chained into the GC block
    /// only when its valid units fit in what is left of it: a padded page in between left a
    /// die with no free block for the last copies; issue 25).
    fn flush(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        for f in 0..self.layout.dies() as usize {
            if self.frontiers[f].open && self.frontiers[f].filled > 0 {
                self.program_frontier(ctx, f)?;
            }
        }
        let target = self.program_base + self.program_done.len() as u64;
        if self.program_base >= target {
            ctx.complete(sub.id);
        } else {
            self.flushes.push_back((target, sub.id));
        }
        Ok(())
    }

    // ---- data frontiers ----

    /// Appends a unit to a stream's page on `die` (dropping its old location).
    fn place(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        stream: Stream,
        die: u32,
        lpn: u32,
        seq: u64,
        dep: Option<CmdId>,
    ) -> Result<(), SimError> {
        let f = self.frontier_index(stream, die);
        while !self.frontiers[f].open {
            self.open_frontier(ctx, stream, die)?;
        }
        self.unmap(ctx, lpn)?;
        Nand::check_seq(seq).map_err(|e| SimError::Nand {
            ftl: self.name,
            source: e,
        })?;
        self.append(ctx, stream, die, lpn, seq, dep)
    }

    /// Appends an unmapped unit to a stream's page on `die` and maps it there.
    fn append(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        stream: Stream,
        die: u32,
        lpn: u32,
        seq: u64,
        dep: Option<CmdId>,
    ) -> Result<(), SimError> {
        let f = self.frontier_index(stream, die);
        while !self.frontiers[f].open {
            self.open_frontier(ctx, stream, die)?;
        }
        let spu = self.unit_sectors as usize;
        let fr = &mut self.frontiers[f];
        let slot = fr.filled;
        let ppn = self.layout.ppn(fr.block, fr.page);
        self.map.set(lpn, ppn * self.upp + slot);
        fr.entries[slot as usize] = OobEntry::new(lpn, seq, 0);
        if !fr.data.is_empty() {
            let data = match stream {
                Stream::Host => &self.host_data,
                Stream::Gc | Stream::Map => &self.gc_data,
            };
            fr.data[slot as usize * spu..(slot as usize + 1) * spu].copy_from_slice(data);
        }
        if stream == Stream::Host {
            fr.host_units += 1;
        }
        if let Some(d) = dep {
            if fr.deps.last() != Some(&d) {
                fr.deps.push(d);
            }
        }
        fr.filled += 1;
        if fr.filled == self.upp {
            self.program_frontier(ctx, f)?;
        }
        Ok(())
    }

    /// Opens a new block for a data stream on `die` (the host's once
    /// [`Self::host_placement_die`] picked `die`).
    fn open_frontier(
        &mut self,
        _ctx: &mut FtlCtx<'_>,
        stream: Stream,
        die: u32,
    ) -> Result<(), SimError> {
        let f = self.frontier_index(stream, die);
        if self.frontiers[f].open {
            return Ok(());
        }
        if stream == Stream::Host {
            self.fruitless_victims[die as usize] = 0;
        }
        let plane = self.blocks.roomiest_plane(die);
        let block = self.blocks.open(plane, stream, 0).ok_or_else(|| {
            self.bug(format!(
                "no free block left on die {die} plane {plane} for the {stream:?} stream \
                 (raise ftl.over_provisioning or ftl.gc_foreground_free_blocks)"
            ))
        })?;
        let fr = &mut self.frontiers[f];
        fr.block = block;
        fr.open = true;
        fr.page = 0;
        Ok(())
    }

    /// Programs the page being assembled in frontier `f` (padding empty slots).
    fn program_frontier(&mut self, ctx: &mut FtlCtx<'_>, f: usize) -> Result<(), SimError> {
        let fr = &self.frontiers[f];
        let ppn = self.layout.ppn(fr.block, fr.page);
        let copies = self.take_copies(f, ppn);
        let fr = &self.frontiers[f];
        let record = ProgramRecord {
            block: fr.block,
            erase_count: ctx.nand().block(fr.block).erase_count,
            host_units: fr.host_units,
            seq: self.program_base + self.program_done.len() as u64,
            copies,
        };
        self.stats.padded_units += u64::from(self.upp - fr.filled);
        let cause = if f < self.layout.dies() as usize {
            Cause::Host
        } else {
            Cause::Gc
        };
        let tok = token(TAG_PROGRAM, u64::from(self.alloc_record(record)));
        self.program_done.push_back(false);
        let fr = &self.frontiers[f];
        let data = (!fr.data.is_empty()).then_some(fr.data.as_slice());
        ctx.program(
            &[ppn],
            &fr.entries,
            data,
            Issue::new(cause).after(&fr.deps).token(tok),
        )?;
        if f == self.frontier_index(Stream::Host, self.host_die()) {
            self.cursor = self.cursor.wrapping_add(1);
        }
        let fr = &mut self.frontiers[f];
        fr.entries.fill(OobEntry::EMPTY);
        fr.filled = 0;
        fr.host_units = 0;
        fr.deps.clear();
        fr.page += 1;
        if fr.page == self.layout.pages_per_block {
            fr.open = false;
            let b = fr.block;
            if f < self.layout.dies() as usize {
                self.blocks
                    .close(b, ctx.nand().block(b).valid_units, self.units_written);
            }
        }
        Ok(())
    }

    /// Moves the source slots of a GC page's copies (if any) to a free [`gc::CopyPage`].
    fn take_copies(&mut self, f: usize, ppn: Ppn) -> u32 {
        let fr = &mut self.frontiers[f];
        if fr.sources.iter().all(|&s| s == UNMAPPED) {
            return NIL;
        }
        let index = match self.free_copy_pages.pop() {
            Some(i) => i,
            None => {
                self.copy_pages.push(gc::CopyPage {
                    ppn: NIL,
                    sources: vec![UNMAPPED; self.upp as usize],
                });
                (self.copy_pages.len() - 1) as u32
            }
        };
        let page = &mut self.copy_pages[index as usize];
        page.ppn = ppn;
        std::mem::swap(&mut page.sources, &mut fr.sources);
        fr.sources.fill(UNMAPPED);
        index
    }

    /// Appends a GC copy of the unit in slot `source` to the GC page of `die`, leaving the
    /// map at `source` until the page's program completes (CondUpdate, [`gc`]).
    fn append_copy(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        die: u32,
        lpn: u32,
        seq: u64,
        source: UnitAddr,
    ) -> Result<(), SimError> {
        let f = self.frontier_index(Stream::Gc, die);
        while !self.frontiers[f].open {
            self.open_frontier(ctx, Stream::Gc, die)?;
        }
        let spu = self.unit_sectors as usize;
        let fr = &mut self.frontiers[f];
        let slot = fr.filled as usize;
        fr.entries[slot] = OobEntry::new(lpn, seq, 0);
        fr.sources[slot] = source;
        if !fr.data.is_empty() {
            fr.data[slot * spu..(slot + 1) * spu].copy_from_slice(&self.gc_data);
        }
        fr.filled += 1;
        if fr.filled == self.upp {
            self.program_frontier(ctx, f)?;
        }
        Ok(())
    }

    fn alloc_record(&mut self, r: ProgramRecord) -> u32 {
        match self.free_records.pop() {
            Some(i) => {
                self.records[i as usize] = r;
                i
            }
            None => {
                self.records.push(r);
                (self.records.len() - 1) as u32
            }
        }
    }

    /// A data program completed: its page is durable, its buffer space is free.
    fn program_completed(&mut self, ctx: &mut FtlCtx<'_>, index: u32) -> Result<(), SimError> {
        let r = self.records[index as usize];
        self.free_records.push(index);
        if ctx.nand().block(r.block).erase_count == r.erase_count {
            self.blocks.add_durable_page(r.block);
        }
        if r.copies != NIL {
            self.gc_program_done(ctx, r.copies, self.layout.die_of(r.block))?;
        }
        self.close_durable_gc_block(ctx, r.block);
        self.buffer_used -= u64::from(r.host_units);
        self.program_done[(r.seq - self.program_base) as usize] = true;
        while self.program_done.front() == Some(&true) {
            self.program_done.pop_front();
            self.program_base += 1;
        }
        while let Some(&(target, sub)) = self.flushes.front() {
            if self.program_base < target {
                break;
            }
            self.flushes.pop_front();
            ctx.complete(sub);
        }
        // Writes that waited for the buffer reach the map unit now, as host requests.
        let queue = ctx.map_queue();
        ctx.set_map_queue(MapQueue::HostRequest);
        while !self.waiting.is_empty() && self.buffer_used < self.sizing.buffer_units {
            let w = self.waiting.pop_front().expect("not empty");
            self.buffer_used += 1;
            self.resolve(ctx, w)?;
        }
        ctx.set_map_queue(queue);
        Ok(())
    }
}

impl Ftl for DemandFtl {
    fn name(&self) -> &'static str {
        self.name
    }
    fn logical_bytes(&self) -> u64 {
        u64::from(self.sizing.logical_units) * u64::from(self.unit_bytes())
    }
    fn chop_bytes(&self) -> u32 {
        self.unit_bytes()
    }
    fn trim_unit_bytes(&self) -> u32 {
        self.unit_bytes()
    }
    fn units_per_page(&self) -> u32 {
        self.upp
    }

    fn submit(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        self.host_submits += 1;
        match sub.op {
            Op::Write => self.write(ctx, sub)?,
            Op::Flush => self.flush(ctx, sub)?,
            Op::Trim => self.trim(ctx, sub)?,
            Op::Read => self.resolve(ctx, *sub)?,
        }
        self.pace(ctx)
    }

    fn flash_done(&mut self, ctx: &mut FtlCtx<'_>, tok: u64) -> Result<(), SimError> {
        let index = tok & ((1 << TAG_SHIFT) - 1);
        match tok >> TAG_SHIFT {
            TAG_PROGRAM => self.program_completed(ctx, index as u32)?,
            TAG_BACKGROUND_GC => self.background_step_done(ctx, index as u32)?,
            TAG_LOAD => self.loaded(ctx, index as u32)?,
            TAG_GC_READ => self.gc_read_done(ctx, index as u32)?,
            TAG_MAP_PROGRAM => {
                self.translation_program_done(ctx, index as u32, (index >> 32) as u32)?
            }
            other => return Err(self.bug(format!("unknown completion tag {other}"))),
        }
        self.pace(ctx)
    }

    fn wakeup(&mut self, ctx: &mut FtlCtx<'_>, tok: u64) -> Result<(), SimError> {
        match tok >> TAG_SHIFT {
            TAG_IDLE => self.idle_timer(ctx, tok & ((1 << TAG_SHIFT) - 1)),
            other => Err(self.bug(format!("unknown wake-up tag {other}"))),
        }
    }

    fn idle(&mut self, ctx: &mut FtlCtx<'_>) -> Result<(), SimError> {
        for die in 0..self.layout.dies() {
            self.background_collect(ctx, die)?;
        }
        self.arm_idle_write_back(ctx);
        Ok(())
    }

    fn check_invariants(&self, nand: &Nand) -> Result<(), String> {
        self.check(nand)
    }

    fn recover(
        &mut self,
        nand: &mut Nand,
        scan: &mut super::mapping::RecoveryScan,
    ) -> Result<(), SimError> {
        self.rebuild(nand, scan)
    }

    fn write_state(&self, out: &mut dyn std::fmt::Write) -> bool {
        self.write_digest(out).is_ok()
    }

    fn reset_counters(&mut self, _now_ns: u64) {
        self.stats = DemandStats::default();
        self.cache.reset_counters();
    }

    fn report(&self) -> serde_json::Value {
        serde_json::json!({
            "mapping_unit_bytes": self.unit_bytes(),
            "units_per_page": self.upp,
            "logical_units": self.sizing.logical_units,
            "write_buffer_units": self.sizing.buffer_units,
            "translation_pages": self.sizing.translation_pages,
            "translation_dies": self.sizing.translation_dies,
            "entries_per_translation_page": self.sizing.entries_per_tpage,
            "exec_time": self.exec,
            "two_level": self.cache.details(),
            "counters": &self.stats,
        })
    }

    fn map_cache(&self) -> Option<MapCacheReport> {
        let s = &self.stats;
        let (cmt, ctp) = match self.cache.levels() {
            Some((cmt, ctp)) => (cmt, Some(ctp)),
            None => {
                // One level: the core's lookups are its own.
                let (sets, ways, block_entries, loaded) = self.cache.one_level_shape();
                let level = MapCacheLevel::new(sets, ways, block_entries, loaded);
                (level.with_lookups(s.lookups, s.hits), None)
            }
        };
        let report = MapCacheReport {
            cmt,
            ctp,
            misses_coalesced: s.misses_coalesced,
            translation_reads: s.translation_reads,
            translation_buffer_hits: s.translation_buffer_hits,
            merge_reads: s.merge_reads,
            translation_writes: s.translation_writes,
            blocked_requests: s.blocked_requests,
            cond_updates_lost: s.cond_updates_lost,
            translation_gc: TranslationGcReport {
                victims: s.translation_gc_victims,
                pages_moved: s.translation_pages_moved,
            },
            ..MapCacheReport::default()
        };
        Some(report.with_flushes(s.flushes, s.entries_flushed))
    }

    fn state_bytes(&self) -> u64 {
        let copy: u64 = self.flash_copy.iter().map(|c| 4 * c.len() as u64).sum();
        self.map.state_bytes() + self.blocks.state_bytes() + copy + 8 * self.gtd.len() as u64
    }

    fn core_for(&self, call: CallTarget<'_>, cores: u32) -> Option<u32> {
        match call {
            CallTarget::Submit(sub) if cores > 1 && matches!(sub.op, Op::Read | Op::Write) => {
                let lpn = (sub.first_sector / self.unit_sectors) as u32;
                Some(self.tvpn_of(lpn) % cores)
            }
            CallTarget::FlashDone(tok) if cores > 1 && tok >> TAG_SHIFT == TAG_LOAD => {
                let key = (tok & ((1 << TAG_SHIFT) - 1)) as u32;
                Some(self.tvpn_of_key(key) % cores)
            }
            _ => None,
        }
    }

    fn map_unit_arbiter(&self) -> MapUnitArbiter {
        match self.cfg.map_unit_arbiter {
            ArbiterKind::Fifo => MapUnitArbiter::Fifo,
            ArbiterKind::Wrr => {
                let (host_request, gc_request) = self.request_weights(0);
                MapUnitArbiter::WeightedRoundRobin(QueueWeights {
                    host_request,
                    gc_request,
                    response: self.cfg.wrr_response_weight,
                })
            }
        }
    }
}

impl registry::FtlSettings for DemandConfig {
    fn checked(config: &ExperimentConfig) -> Result<Self, ConfigError> {
        Self::from_experiment(config).map(|(settings, _)| settings)
    }
}

const NIL: u32 = u32::MAX;

/// Requests waiting on translation reads: an intrusive list per translation page in flight
/// (head and tail per TVPN, a next index per waiter) over a slab of waiters reused through a
/// free list, so a miss allocates nothing once the slab has grown to the peak in flight.
struct Waiters {
    /// (head, tail) per TVPN, `NIL` when no read of it is in flight.
    lists: Vec<(u32, u32)>,
    slab: Vec<(SubRequest, u32)>,
    free: Vec<u32>,
}

impl Waiters {
    fn new(tvpns: u32) -> Self {
        Waiters {
            lists: vec![(NIL, NIL); tvpns as usize],
            slab: Vec::new(),
            free: Vec::new(),
        }
    }

    fn is_loading(&self, tvpn: u32) -> bool {
        self.lists[tvpn as usize].0 != NIL
    }

    /// Appends a waiter to the read of `tvpn` (starting its list if none).
    fn push(&mut self, tvpn: u32, sub: SubRequest) {
        let node = match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = (sub, NIL);
                i
            }
            None => {
                self.slab.push((sub, NIL));
                (self.slab.len() - 1) as u32
            }
        };
        let list = &mut self.lists[tvpn as usize];
        if list.0 == NIL {
            *list = (node, node);
        } else {
            self.slab[list.1 as usize].1 = node;
            list.1 = node;
        }
    }

    /// Ends the read of `tvpn`: its first waiter (`NIL` if none); walk on with [`Self::take`].
    fn detach(&mut self, tvpn: u32) -> u32 {
        std::mem::replace(&mut self.lists[tvpn as usize], (NIL, NIL)).0
    }

    /// Frees waiter `node`: its request and the next waiter of its list.
    fn take(&mut self, node: u32) -> (SubRequest, u32) {
        self.free.push(node);
        self.slab[node as usize]
    }
}
