//! Page-mapping FTL: every mapping unit (4 KiB by default) maps to any unit slot of any page.
//!
//! - **Write buffer**: writes are acknowledged once in DRAM. Units are packed into pages on one
//!   die's open block (one page per plane with `multi_plane`); a full page is programmed and
//!   the next page goes to the next die in channel-first order. The buffer holds units from
//!   acceptance until their program completes; a write that does not fit waits. Reads of
//!   buffered units are served from DRAM. A flush programs partial pages (padding them).
//! - **Partial-unit writes** are read-modify-write: the old unit is read from flash (unless
//!   buffered) and the new page's program waits for that read.
//! - **GC** per die: in the foreground when a die has `gc_foreground_free_blocks` free blocks
//!   or fewer and a host write needs a new block; in the background while the host is idle,
//!   up to `gc_background_free_blocks`. The victim (greedy, cost-benefit or FIFO) has its valid
//!   units read and rewritten into the die's GC block (or copied back when the page is fully
//!   valid and `gc_copyback` is on), then it is erased; with `gc_program_before_erase` the GC
//!   page holding the victim's last units is programmed first (padded when partly filled), so
//!   a power cut never finds a moved unit only in DRAM (off by default: the padding makes tiny
//!   blocks need more over-provisioning, `tests/gc_headroom.rs`). GC copies keep the unit's original OOB
//!   sequence number, so the newest copy of a unit is always identifiable.
//! - **Reads during GC**: a moved unit is mapped to its GC page when the copy is issued (the
//!   victim's erase is issued in the same step). Until that page is durable a host read of the
//!   unit is served from controller RAM like a buffered host unit, without a flash read: it
//!   never waits for the copy's program. (Optimistic when the GC read fetching the unit has not
//!   completed yet; rare: at most 2 of 10,074 reads in docs/part-ftl.md's EDF run.) A victim's
//!   copies are issued at once, so with FIFO die queues a host read of another page of that die
//!   waits behind them (docs/part-ftl.md, "Measured").
//! - **TRIM** unmaps whole mapping units; partial units are left as they are.
//!
//! - **Power-loss recovery** (`recover.rs`): the scan reads the spare area of every written
//!   page of every block (up to the first erased page), and the copy of each mapping unit with
//!   the highest OOB sequence number wins (GC copies keep the number, so a copy and its
//!   not-yet-erased source are the same data: the first found is kept). The winners are marked
//!   valid and mapped; erased blocks are free (least worn first), every written block is
//!   closed in its victim bucket with its valid count, **partly written blocks included**
//!   (their free pages come back when GC collects them; new writes open fresh blocks, so no
//!   page is programmed next to one a cut may have left half-programmed). The host sequence
//!   counter continues past the highest number found. A device whose data must survive a cut
//!   sets `gc_program_before_erase` (without it, units GC moved into a GC page still in DRAM
//!   are lost with it, flushed or not: `tests/recovery_every_ftl.rs` shows it). Data that was in the DRAM write buffer
//!   is gone (writes acknowledged after the last completed flush may read their old data);
//!   trims are not on flash, so a trimmed unit may come back.
//!
//! Choices where papers are silent: free blocks are reused oldest-first (spreads erases);
//! programs from the host block count as host programs even when `separate_gc_stream` is off
//! and they carry GC units.

mod check;
mod config;
mod gc;
mod recover;

pub use super::mapping::VictimPolicy;
pub use config::PagemapConfig;

use std::collections::VecDeque;

use super::mapping::{BlockState, Blocks, MapTable, Stream};
use config::Sizing;

use super::registry::FtlEntry;
use super::{Ftl, FtlCtx, Issue};
use crate::config::{ConfigError, ExperimentConfig};
use crate::flash::{Cause, CmdId, MAX_PLANES_PER_OP};
use crate::ftl::registry;
use crate::host::{Op, SubId, SubRequest};
use crate::nand::{BlockId, Divisor, Layout, Nand, OobEntry, Ppn, UnitAddr};
use crate::SimError;

/// Registry entry of the page-mapping FTL.
pub const ENTRY: FtlEntry = registry::settings_entry::<PagemapConfig>(
    "pagemap",
    "page-mapping FTL: write buffer packing mapping units into pages, GC with watermarks \
              (greedy, cost-benefit, FIFO), TRIM, read-modify-write of partial units",
    |c| Ok(Box::new(PageMap::new(c)?)),
);

const TAG_SHIFT: u32 = 56;
const TAG_PROGRAM: u64 = 1;
const TAG_BACKGROUND_GC: u64 = 2;

fn token(tag: u64, index: u64) -> u64 {
    (tag << TAG_SHIFT) | index
}

/// The mapping units a sub-request touches, as (unit, first sector, end sector) within each
/// unit of `unit_sectors` sectors.
fn unit_pieces(sub: &SubRequest, unit_sectors: u64) -> impl Iterator<Item = (u32, usize, usize)> {
    let (first, end) = (sub.first_sector, sub.first_sector + sub.sectors);
    (first / unit_sectors..end.div_ceil(unit_sectors)).map(move |u| {
        let base = u * unit_sectors;
        let s0 = first.max(base) - base;
        let s1 = end.min(base + unit_sectors) - base;
        (u as u32, s0 as usize, s1 as usize)
    })
}

/// An open block (one per plane of a program group) and the page being assembled in it.
#[derive(Debug, Clone)]
struct Frontier {
    open: bool,
    blocks: [BlockId; MAX_PLANES_PER_OP],
    page: u32,
    entries: Vec<OobEntry>,
    data: Vec<u64>,
    filled: u32,
    host_units: u32,
    deps: Vec<CmdId>,
}

/// A program in flight.
#[derive(Debug, Clone, Copy, Default)]
struct ProgramRecord {
    blocks: [BlockId; MAX_PLANES_PER_OP],
    erase_counts: [u32; MAX_PLANES_PER_OP],
    lanes: u8,
    host_units: u32,
    seq: u64,
}

/// Counters specific to this FTL.
#[derive(Debug, Clone, Default, serde::Serialize)]
struct PagemapStats {
    buffer_read_hits: u64,
    rmw_reads: u64,
    padded_units: u64,
    foreground_gc_runs: u64,
    copyback_pages: u64,
    writes_waited_for_buffer: u64,
}

/// The page-mapping FTL.
pub struct PageMap {
    cfg: PagemapConfig,
    sizing: Sizing,
    layout: Layout,
    upp: u32,
    per_page: Divisor,
    lanes: u32,
    unit_sectors: u64,
    map: MapTable,
    blocks: Blocks,
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
    /// Data of the unit a host write places (kept apart from GC's: placing a host unit may
    /// run foreground GC).
    host_data: Vec<u64>,
    gc_data: Vec<u64>,
    /// Valid slots of the victim page being moved (reused).
    gc_units: Vec<UnitAddr>,
    zeros: Vec<u64>,
    stats: PagemapStats,
}

impl PageMap {
    pub fn new(config: &ExperimentConfig) -> Result<Self, ConfigError> {
        let (cfg, sizing) = PagemapConfig::from_experiment(config)?;
        let layout = Layout::new(&config.geometry);
        let upp = sizing.units_per_page;
        let lanes = sizing.planes_per_program;
        let unit_sectors = u64::from(cfg.mapping_unit_bytes / config.host.sector_bytes);
        let payloads = config.run.payloads || config.run.verify;
        let spp = (config.geometry.page_bytes / config.host.sector_bytes) as usize;
        let frontier = Frontier {
            open: false,
            blocks: [0; MAX_PLANES_PER_OP],
            page: 0,
            entries: vec![OobEntry::EMPTY; (upp * lanes) as usize],
            data: if payloads {
                vec![0; spp * lanes as usize]
            } else {
                Vec::new()
            },
            filled: 0,
            host_units: 0,
            deps: Vec::new(),
        };
        let streams = if cfg.separate_gc_stream { 2 } else { 1 };
        Ok(PageMap {
            blocks: Blocks::new(layout, upp, cfg.gc_victim),
            frontiers: vec![frontier; (layout.dies() * streams) as usize],
            map: MapTable::new(sizing.logical_units, upp),
            layout,
            upp,
            per_page: Divisor::new(upp),
            lanes,
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
            gc_units: Vec::with_capacity(upp as usize),
            zeros: vec![0; unit_sectors as usize],
            stats: PagemapStats::default(),
            sizing,
            cfg,
        })
    }

    fn unit_bytes(&self) -> u32 {
        self.cfg.mapping_unit_bytes
    }

    fn frontier_index(&self, stream: Stream, die: u32) -> usize {
        match stream {
            Stream::Gc if self.cfg.separate_gc_stream => (self.layout.dies() + die) as usize,
            _ => die as usize,
        }
    }

    /// The die the host stream currently fills.
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
        let BlockState::Open { stream, lane } = self.blocks.state(block) else {
            return None;
        };
        let f = self.frontier_index(stream, self.layout.die_of(block));
        let fr = &self.frontiers[f];
        (fr.open && fr.page == self.layout.page_in_block(ppn)).then(|| {
            (
                f,
                (u32::from(lane) * self.upp + self.per_page.remainder(unit)) as usize,
            )
        })
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

    /// Drops the current location of a logical unit (invalidating it in NAND or in the buffer).
    fn unmap(&mut self, ctx: &mut FtlCtx<'_>, lpn: u32) -> Result<(), SimError> {
        match self.map.take(lpn) {
            Some(old) => self.drop_location(ctx, lpn, old),
            None => Ok(()),
        }
    }

    /// Invalidates the slot `old` that held logical unit `lpn` (in NAND or in the buffer).
    fn drop_location(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        lpn: u32,
        old: UnitAddr,
    ) -> Result<(), SimError> {
        if ctx.nand().is_programmed(self.per_page.quotient(old)) {
            self.map.invalidate_programmed(ctx, &mut self.blocks, old)?;
        } else if let Some((f, slot)) = self.assembling_slot(old) {
            self.frontiers[f].entries[slot] = OobEntry::EMPTY;
        } else {
            return Err(self.bug(format!(
                "unit {lpn} maps to slot {old}, neither programmed nor buffered"
            )));
        }
        Ok(())
    }

    fn bug(&self, message: String) -> SimError {
        SimError::Ftl {
            ftl: "pagemap",
            message,
        }
    }

    /// Appends a unit to a stream's page on `die` (dropping its old location), programming the
    /// page when it is full.
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
            ftl: "pagemap",
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
        let upp = self.upp;
        let spu = self.unit_sectors as usize;
        let fr = &mut self.frontiers[f];
        let slot = fr.filled;
        let ppn = self
            .layout
            .ppn(fr.blocks[self.per_page.quotient(slot) as usize], fr.page);
        self.map.set(lpn, ppn * upp + self.per_page.remainder(slot));
        fr.entries[slot as usize] = OobEntry::new(lpn, seq, 0);
        if !fr.data.is_empty() {
            let data = match stream {
                Stream::Host => &self.host_data,
                // pagemap has no translation pages: only host and GC units are placed.
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
        if fr.filled == upp * self.lanes {
            self.program_frontier(ctx, f)?;
        }
        Ok(())
    }

    /// Opens new blocks for a stream on `die`, collecting garbage first for the host stream.
    fn open_frontier(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        stream: Stream,
        die: u32,
    ) -> Result<(), SimError> {
        if stream == Stream::Host {
            self.ensure_free(ctx, die)?;
        }
        let f = self.frontier_index(stream, die);
        if self.frontiers[f].open {
            // Foreground GC sharing the host stream opened it already.
            return Ok(());
        }
        let stream_tag = if self.cfg.separate_gc_stream {
            stream
        } else {
            Stream::Host
        };
        for lane in 0..self.lanes {
            let plane = if self.lanes > 1 {
                die * self.layout.planes_per_die + lane
            } else {
                self.blocks.roomiest_plane(die)
            };
            let block = self.blocks.open(plane, stream_tag, lane as u8).ok_or_else(|| {
                self.bug(format!(
                    "no free block left on die {die} plane {plane} for the {} stream (raise ftl.over_provisioning or ftl.gc_foreground_free_blocks)",
                    if stream == Stream::Host { "host" } else { "GC" }
                ))
            })?;
            self.frontiers[f].blocks[lane as usize] = block;
        }
        let fr = &mut self.frontiers[f];
        fr.open = true;
        fr.page = 0;
        Ok(())
    }

    /// Programs the page being assembled in frontier `f` (padding empty slots).
    fn program_frontier(&mut self, ctx: &mut FtlCtx<'_>, f: usize) -> Result<(), SimError> {
        let lanes = self.lanes as usize;
        let fr = &self.frontiers[f];
        let mut ppns: [Ppn; MAX_PLANES_PER_OP] = [0; MAX_PLANES_PER_OP];
        let mut record = ProgramRecord {
            blocks: fr.blocks,
            lanes: lanes as u8,
            host_units: fr.host_units,
            seq: self.program_base + self.program_done.len() as u64,
            ..ProgramRecord::default()
        };
        for (lane, &block) in fr.blocks[..lanes].iter().enumerate() {
            ppns[lane] = self.layout.ppn(block, fr.page);
            record.erase_counts[lane] = ctx.nand().block(block).erase_count;
        }
        self.stats.padded_units += u64::from(self.upp * self.lanes - fr.filled);
        let host_frontier = f < self.layout.dies() as usize;
        let cause = if host_frontier && (fr.host_units > 0 || self.cfg.separate_gc_stream) {
            Cause::Host
        } else {
            Cause::Gc
        };
        let tok = token(TAG_PROGRAM, u64::from(self.alloc_record(record)));
        self.program_done.push_back(false);
        let fr = &self.frontiers[f];
        let data = (!fr.data.is_empty()).then_some(fr.data.as_slice());
        ctx.program(
            &ppns[..lanes],
            &fr.entries,
            data,
            Issue::new(cause).after(&fr.deps).token(tok),
        )?;
        if f == self.frontier_index(Stream::Host, self.host_die()) {
            // The next host page goes to the next die in channel-first order.
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
            let blocks = fr.blocks;
            for &b in &blocks[..lanes] {
                self.blocks
                    .close(b, ctx.nand().block(b).valid_units, self.units_written);
            }
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

    /// A program (or copyback) completed: its pages are durable, its buffer space is free.
    fn program_completed(&mut self, ctx: &mut FtlCtx<'_>, index: u32) -> Result<(), SimError> {
        let r = self.records[index as usize];
        self.free_records.push(index);
        for lane in 0..r.lanes as usize {
            let b = r.blocks[lane];
            if ctx.nand().block(b).erase_count == r.erase_counts[lane] {
                self.blocks.add_durable_page(b);
            }
        }
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
        while let Some(w) = self.waiting.front() {
            let units = unit_pieces(w, self.unit_sectors).count() as u64;
            if self.buffer_used + units > self.sizing.buffer_units {
                break;
            }
            let w = self.waiting.pop_front().expect("front exists");
            self.accept_write(ctx, &w)?;
        }
        Ok(())
    }

    fn write(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let units = unit_pieces(sub, self.unit_sectors).count() as u64;
        if !self.waiting.is_empty() || self.buffer_used + units > self.sizing.buffer_units {
            self.stats.writes_waited_for_buffer += 1;
            self.waiting.push_back(*sub);
            return Ok(());
        }
        self.accept_write(ctx, sub)
    }

    fn accept_write(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let spu = self.unit_sectors as usize;
        let units = unit_pieces(sub, self.unit_sectors).count() as u64;
        ctx.charge_cpu(self.cfg.cpu_update_ns * units);
        self.buffer_used += units;
        for (lpn, s0, s1) in unit_pieces(sub, self.unit_sectors) {
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
            let die = self.host_die();
            self.place(ctx, Stream::Host, die, lpn, self.units_written, dep)?;
        }
        ctx.complete(sub.id);
        Ok(())
    }

    fn read(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let mut group: Option<(Ppn, u32)> = None;
        let issue = Issue::host(sub.id).deadline(sub.deadline_ns);
        let mut count = 0;
        for (lpn, s0, s1) in unit_pieces(sub, self.unit_sectors) {
            count += 1;
            let first = u64::from(lpn) * self.unit_sectors + s0 as u64;
            let Some(unit) = self.map.get(lpn) else {
                ctx.deliver(sub.id, first, &self.zeros[s0..s1])?;
                continue;
            };
            if ctx.payloads() {
                let mut data = std::mem::take(&mut self.host_data);
                self.unit_data(ctx.nand(), unit, &mut data);
                let r = ctx.deliver(sub.id, first, &data[s0..s1]);
                self.host_data = data;
                r?;
            }
            if self.buffered(unit) {
                self.stats.buffer_read_hits += 1;
                continue;
            }
            let ppn = self.per_page.quotient(unit);
            group = match group {
                Some((p, k)) if p == ppn => Some((p, k + 1)),
                Some((p, k)) => {
                    ctx.read(&[p], k * self.unit_bytes(), issue)?;
                    Some((ppn, 1))
                }
                None => Some((ppn, 1)),
            };
        }
        if let Some((p, k)) = group {
            ctx.read(&[p], k * self.unit_bytes(), issue)?;
        }
        ctx.charge_cpu(self.cfg.cpu_lookup_ns * count);
        ctx.complete(sub.id);
        Ok(())
    }

    fn trim(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let spu = self.unit_sectors;
        let first = sub.first_sector.div_ceil(spu);
        let end = ((sub.first_sector + sub.sectors) / spu).min(u64::from(self.map.len()));
        for lpn in first..end {
            self.unmap(ctx, lpn as u32)?;
        }
        ctx.charge_cpu(self.cfg.cpu_update_ns * end.saturating_sub(first));
        ctx.complete(sub.id);
        Ok(())
    }

    fn flush(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        for f in 0..self.frontiers.len() {
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
}

impl Ftl for PageMap {
    fn name(&self) -> &'static str {
        "pagemap"
    }
    fn logical_bytes(&self) -> u64 {
        u64::from(self.sizing.logical_units) * u64::from(self.unit_bytes())
    }
    fn chop_bytes(&self) -> u32 {
        self.layout.page_bytes
    }
    fn trim_unit_bytes(&self) -> u32 {
        self.unit_bytes()
    }
    fn units_per_page(&self) -> u32 {
        self.upp
    }

    fn submit(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        match sub.op {
            Op::Read => self.read(ctx, sub),
            Op::Write => self.write(ctx, sub),
            Op::Trim => self.trim(ctx, sub),
            Op::Flush => self.flush(ctx, sub),
        }
    }

    fn flash_done(&mut self, ctx: &mut FtlCtx<'_>, tok: u64) -> Result<(), SimError> {
        ctx.charge_cpu(self.cfg.cpu_completion_ns);
        let index = tok & ((1 << TAG_SHIFT) - 1);
        match tok >> TAG_SHIFT {
            TAG_PROGRAM => self.program_completed(ctx, index as u32),
            TAG_BACKGROUND_GC => self.background_step_done(ctx, index as u32),
            other => Err(self.bug(format!("unknown completion tag {other}"))),
        }
    }

    fn idle(&mut self, ctx: &mut FtlCtx<'_>) -> Result<(), SimError> {
        for die in 0..self.layout.dies() {
            self.background_collect(ctx, die)?;
        }
        Ok(())
    }

    fn check_invariants(&self, nand: &Nand) -> Result<(), String> {
        self.check(nand)
    }

    fn reset_counters(&mut self, _now_ns: u64) {
        self.stats = PagemapStats::default();
    }

    fn report(&self) -> serde_json::Value {
        serde_json::json!({
            "mapping_unit_bytes": self.unit_bytes(),
            "units_per_page": self.upp,
            "planes_per_program": self.lanes,
            "logical_units": self.sizing.logical_units,
            "write_buffer_units": self.sizing.buffer_units,
            "spare_blocks_per_die": self.sizing.spare_blocks_per_die,
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

impl registry::FtlSettings for PagemapConfig {
    fn checked(config: &ExperimentConfig) -> Result<Self, ConfigError> {
        Self::from_experiment(config).map(|(settings, _)| settings)
    }
}
