//! NFTL (Ban, US 5,937,425) as nftl-lookup-pagecache.txt section 3.1 describes it, with the
//! paper's two extensions as switchable options: the lookup table (3.2) and the page cache (3.3).
//!
//! - A sector is a virtual block (high bits) and a page offset. The block map sends a virtual
//!   block to its **primary** block; the first write of a sector goes to its own offset of the
//!   primary (pages programmed out of order: the chip must allow `nand.program_order = any`).
//! - A rewrite goes to the **replacement** block, written sequentially from page 0; its
//!   physical address is written as a **header** into the spare area of the primary's page 0
//!   (a spare-only program, free page or not: it counts against the chip's NOP).
//! - A read looks the header up, then searches the replacement block backwards through the
//!   OOB (sector number of each page) from its free-page pointer; not found there, the sector
//!   is in the primary.
//! - A full replacement block is **folded**: the newest copy of every offset is copied into a
//!   new block, which becomes the primary; the old primary and replacement are erased. When
//!   only the fold reserve is free, **GC** folds every virtual block that has a replacement.
//! - Every OOB read and write is a timed flash command: host-path OOB reads and header
//!   programs under `Cause::Host`, fold (and GC) work under `Cause::Merge`; everything a write
//!   causes, folds included, is attached to it (its response time includes them).
//! - All flash commands, of every request, form one chain, each after the previous: the
//!   paper's small controller does one thing at a time. So a fold is never interleaved with
//!   other commands, its blocking time is the sum of its own commands, and it never exceeds
//!   the bound of [`fold_clock`] (`merges.predicted_worst_blocking_ns`):
//!   2N·(tR_oob + bus(oob)) + N·(tR + bus(page)) + N·(bus(page) + tPROG + bus(oob) +
//!   tPROG_oob) + 2·tBERS for N pages per block (18.592 ms on `nftl-samsung`).
//! - Every page program (host writes to primary and replacement blocks, and fold copies) is a
//!   page data write followed by an OOB data write ([`FLAG_VALID`], a spare program of Table
//!   1's 200 us), as section 5 (3) states ("page data write + OOB data write"); a new
//!   replacement block adds its header write (Fig. 2, t2). Fold copies carry it too: Table 5's
//!   AtoPM write times are reproduced by Table 1's costs within 0.4% only with it (docs/nftl.md).
//! - Plain NFTL reads replacement headers from OOB where section 3.2 says: every read (i), a
//!   rewrite (ii), and GC (iii), which reads the header of every mapped primary block (under
//!   `merge`) to find the replacement blocks to fold; a write's fold uses the header its
//!   rewrite just read.
//! - Lookup table: the rep-block table (replacement of each virtual block) and the page-status
//!   bitmap (has the primary page of a sector been written) in RAM, copies of what the OOB
//!   says, so host reads, writes and GC skip those OOB reads (Table 2).
//! - Page cache: the <block, page> of the most recently written sectors (a rewrite renews a
//!   sector, eviction first-in first-out by last write, reads do not renew: see [`cache`]); a
//!   hit sends a read straight to the page and lets a fold skip the search.
//!
//! - **Power-loss recovery** (`recover.rs`), from the flash as NFTL lays it out: the spare
//!   area of every page of every block is read (any-order chips: no write pointer to stop
//!   at). A block's sectors name its virtual block; a page-0 header names a replacement block,
//!   so the block holding it is that virtual block's primary (even before it has a sector of
//!   its own); a virtual block's other block is its primary. The free-page pointer of a
//!   replacement is its written pages; the page-status bitmap is read from the primaries; the
//!   current copy of each sector (newest in the replacement, else the primary's page: the
//!   read path's own search) is marked valid; erased blocks are free, least worn first; the
//!   sequence numbers continue past the highest found; the page cache starts empty. A write
//!   completes once programmed and a fold or trim erases its old blocks in the same step, so
//!   nothing acknowledged is lost, and trims (whole virtual blocks erased) persist.
//!
//! Choices where the paper is silent (tested in `tests/nftl.rs`):
//! - The free-page pointer of each replacement block (Figure 2's "free page ptr") is kept in
//!   RAM, one byte per virtual block, counted in `mapping_table_bytes`.
//! - The header and the page status of offset 0 come from one OOB read of page 0.
//! - A write to a full replacement block folds with the new data in place (the new primary
//!   takes it), so no new replacement block is needed right after a fold.
//! - A fold resolves offsets in turn: a page-cache hit gives the location at once; otherwise it
//!   continues one backward OOB scan of the replacement block (each spare read once per fold)
//!   until the offset is found or the scan reaches page 0, and reads the primary page's spare
//!   (its valid flag) whether the scan found the offset or not (the bitmap never helps a fold,
//!   as Table 2 says). So a fold reads the spare of nearly every page of both blocks: Table 6's
//!   lookup column, which holds only fold scans and read searches, implies it:
//!   (23,547 - 421 x 0.27) / 782 folds = 30.0 OOB reads per fold on AP8K (2N - 2, N = 16) and
//!   (24,038 - 421 x 0.70) / 386 = 61.5 on AP16K (2N - 2.5), where a fold that skips the
//!   primary spares of offsets found in the replacement reads about 23 on AP8K.
//! - The page cache gives reads and folds the location of the sectors it holds; a hit saves a
//!   fold both the scan and the primary spare read of that offset.
//! - Free blocks are reused oldest-freed first; GC keeps one block free for a fold.
//! - TRIM works on whole virtual blocks (both blocks erased, the sectors read as never written).
//! - Sectors smaller than pages: a partial page write reads the old page first (read-modify-write).

mod cache;
mod check;
mod config;
mod fold_clock;
mod recover;

pub use config::{lookup_table_bytes, NftlConfig, RamCost, Sizing, PAGE_CACHE_ENTRY_BYTES};
pub use fold_clock::worst_fold_ns;

use std::collections::VecDeque;

use fold_clock::{Command, FoldClock};

use cache::PageCache;

use super::merge::{MergeKind, MergeProfile, MergeRecord};
use super::registry::FtlEntry;
use super::{Ftl, FtlCtx, Issue};
use crate::config::{ConfigError, ExperimentConfig, ProgramOrder};
use crate::flash::{Cause, CmdId};
use crate::ftl::registry;
use crate::host::{Op, SubId, SubRequest};
use crate::nand::{BlockId, Layout, Nand, OobEntry, Ppn, Spare};
use crate::SimError;

/// Registry entry of NFTL.
pub const ENTRY: FtlEntry = registry::settings_entry::<NftlConfig>(
    "nftl",
    "NFTL block mapping (primary + replacement block, folds) with the lookup table and \
              page cache of nftl-lookup-pagecache.txt as options; small-block NAND",
    |c| Ok(Box::new(Nftl::new(c)?)),
);

fn validate(c: &ExperimentConfig) -> Result<(NftlConfig, Sizing), ConfigError> {
    if c.nand.program_order != ProgramOrder::Any {
        return Err(ConfigError::invalid(
            "nand.program_order",
            "sequential",
            "nftl writes each sector at its own offset of the primary block, out of order",
            "any (small-block NAND, e.g. --device nftl-samsung)",
        ));
    }
    if c.nand.partial_programs_per_page < 2 {
        return Err(ConfigError::invalid(
            "nand.partial_programs_per_page",
            c.nand.partial_programs_per_page,
            "nftl programs a replacement-block header into the spare area of a primary page as well as its data",
            "2 ..= 15",
        ));
    }
    NftlConfig::from_experiment(c)
}

/// OOB flag of the primary's page 0 once it carries a replacement-block header.
pub const FLAG_HEADER: u8 = 0x01;
/// OOB flag the OOB data write sets after a page's data program (sector number and valid
/// flag, section 3.1; the simulator keeps the sector number with the data program).
pub const FLAG_VALID: u8 = 0x02;

const NIL: u32 = u32::MAX;

/// Counters of the report (`ftl_details`).
#[derive(Debug, Clone, Default, serde::Serialize)]
struct NftlStats {
    /// Host sector (page) reads and writes the FTL served (the file-system side of Table 4).
    host_page_reads: u64,
    host_page_writes: u64,
    folds: u64,
    /// GC runs (each folds every virtual block with a replacement block).
    gc_runs: u64,
    gc_folds: u64,
    fold_pages_copied: u64,
    /// OOB reads by purpose: replacement-block header, page status, backward search (reads),
    /// fold scans.
    oob_reads_header: u64,
    oob_reads_status: u64,
    oob_reads_search: u64,
    oob_reads_fold: u64,
    /// Of the header reads, those GC makes (plain NFTL, section 3.2 (iii)).
    oob_reads_gc_header: u64,
    header_programs: u64,
    /// OOB data writes after data programs (host writes and fold copies).
    oob_data_programs: u64,
    page_cache_hits: u64,
    page_cache_misses: u64,
    rmw_reads: u64,
}

/// The NFTL FTL.
pub struct Nftl {
    cfg: NftlConfig,
    sizing: Sizing,
    layout: Layout,
    ppb: u32,
    /// Host sectors per page.
    spp: u64,
    primary: Vec<BlockId>,
    replacement: Vec<BlockId>,
    /// Next free page of each virtual block's replacement block.
    rep_next: Vec<u8>,
    /// Page-status bitmap (only consulted with the lookup table; always kept, to check it).
    written: Vec<u64>,
    free: VecDeque<BlockId>,
    cache: PageCache,
    seq: u64,
    /// Last command issued: every command waits for the previous one (one chain).
    last: CmdId,
    data: Vec<u64>,
    /// Blocking times of the folds in flight.
    folds: FoldClock,
    /// The longest fold the design allows (`merges.predicted_worst_blocking_ns`).
    worst_fold_ns: u64,
    stats: NftlStats,
}

/// Where the commands of the current request go: its host sub-request.
#[derive(Clone, Copy)]
struct Req {
    sub: SubId,
}

impl Nftl {
    pub fn new(config: &ExperimentConfig) -> Result<Self, ConfigError> {
        let (cfg, sizing) = validate(config)?;
        let layout = Layout::new(&config.geometry);
        let vb = sizing.virtual_blocks as usize;
        let pages = vb * sizing.pages_per_block as usize;
        let spp = u64::from(config.geometry.page_bytes / config.host.sector_bytes);
        Ok(Nftl {
            cache: PageCache::new(cfg.page_cache_entries),
            layout,
            ppb: sizing.pages_per_block,
            spp,
            primary: vec![NIL; vb],
            replacement: vec![NIL; vb],
            rep_next: vec![0; vb],
            written: vec![0; pages.div_ceil(64)],
            free: (0..sizing.physical_blocks).collect(),
            seq: 0,
            last: CmdId::DONE,
            data: vec![0; spp as usize],
            folds: FoldClock::new(
                &config.timing,
                config.geometry.page_bytes,
                config.geometry.oob_bytes,
            ),
            worst_fold_ns: worst_fold_ns(
                &config.timing,
                config.geometry.page_bytes,
                config.geometry.oob_bytes,
                sizing.pages_per_block,
            ),
            stats: NftlStats::default(),
            sizing,
            cfg,
        })
    }

    /// RAM of the mapping structures the configuration implies.
    pub fn ram(&self) -> RamCost {
        RamCost::new(&self.cfg, &self.sizing)
    }

    fn bug(&self, message: String) -> SimError {
        SimError::Ftl {
            ftl: "nftl",
            message,
        }
    }

    fn is_written(&self, lpn: u32) -> bool {
        self.written[(lpn / 64) as usize] >> (lpn % 64) & 1 == 1
    }
    fn set_written(&mut self, lpn: u32, on: bool) {
        let w = &mut self.written[(lpn / 64) as usize];
        if on {
            *w |= 1 << (lpn % 64);
        } else {
            *w &= !(1 << (lpn % 64));
        }
    }

    fn issue(&self, req: Req, cause: Cause) -> Issue<'static> {
        Issue {
            cause,
            after: &[],
            token: 0,
            sub: Some(req.sub),
            deadline_ns: u64::MAX,
        }
    }

    /// Reads a spare area, after the request's previous command.
    fn oob(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        req: Req,
        ppn: Ppn,
        cause: Cause,
    ) -> Result<Spare, SimError> {
        let after = [self.last];
        let issue = self.folds.tag(self.issue(req, cause), Command::OobRead);
        let (id, spare) = ctx.read_oob(ppn, issue.after(&after))?;
        self.last = id;
        Ok(spare)
    }

    fn read_page(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        req: Req,
        ppn: Ppn,
        cause: Cause,
    ) -> Result<(), SimError> {
        let after = [self.last];
        let bytes = self.layout.page_bytes;
        let issue = self.folds.tag(self.issue(req, cause), Command::PageRead);
        self.last = ctx.read(&[ppn], bytes, issue.after(&after))?;
        Ok(())
    }

    /// Programs `ppn` with sector `lpn` and the data in `self.data` (or `data`).
    fn program_page(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        req: Req,
        ppn: Ppn,
        lpn: u32,
        data: Option<&[u64]>,
        cause: Cause,
    ) -> Result<(), SimError> {
        self.seq += 1;
        let entry = [OobEntry::new(lpn, self.seq, 0)];
        let after = [self.last];
        let issue = self.folds.tag(self.issue(req, cause), Command::PageProgram);
        let issue = issue.after(&after);
        self.last = match (ctx.payloads(), data) {
            (true, Some(d)) => ctx.program(&[ppn], &entry, Some(d), issue)?,
            (true, None) => {
                let d = std::mem::take(&mut self.data);
                let r = ctx.program(&[ppn], &entry, Some(&d), issue);
                self.data = d;
                r?
            }
            (false, _) => ctx.program(&[ppn], &entry, None, issue)?,
        };
        // The OOB data write of section 5 (3): "page data write + OOB data write", a spare
        // program of its own (Table 1's Write OOB, 200 us) after the data program.
        let after = [self.last];
        let issue = self.folds.tag(self.issue(req, cause), Command::OobProgram);
        self.last = ctx.program_oob(ppn, FLAG_VALID, 0, issue.after(&after))?;
        self.stats.oob_data_programs += 1;
        Ok(())
    }

    fn erase(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        req: Req,
        block: BlockId,
        cause: Cause,
        token: u64,
    ) -> Result<(), SimError> {
        let after = [self.last];
        let issue = self.issue(req, cause).token(token);
        let issue = self.folds.tag(issue, Command::Erase).after(&after);
        self.last = ctx.erase(block, issue)?;
        self.free.push_back(block);
        Ok(())
    }

    /// The current copy of a sector, from the NAND state (bookkeeping only, no flash command):
    /// the newest in the replacement block, else the primary's page.
    fn current_copy(&self, nand: &Nand, vb: u32, off: u32) -> Option<Ppn> {
        let lpn = vb * self.ppb + off;
        let r = self.replacement[vb as usize];
        if r != NIL {
            for page in (0..u32::from(self.rep_next[vb as usize])).rev() {
                let ppn = self.layout.ppn(r, page);
                if nand.oob(ppn).lpn() == Some(lpn) {
                    return Some(ppn);
                }
            }
        }
        let p = self.primary[vb as usize];
        if p == NIL {
            return None;
        }
        let ppn = self.layout.ppn(p, off);
        (nand.is_programmed(ppn) && nand.oob(ppn).lpn() == Some(lpn)).then_some(ppn)
    }

    /// A free block for a primary or a replacement: GC first when only the fold reserve is left.
    fn take_block(&mut self, ctx: &mut FtlCtx<'_>, req: Req) -> Result<BlockId, SimError> {
        if self.free.len() < 2 {
            self.collect(ctx, req)?;
        }
        if self.free.len() < 2 {
            return Err(self.bug(format!("no free block after GC ({} free)", self.free.len())));
        }
        Ok(self.free.pop_front().expect("checked"))
    }

    /// GC: folds every virtual block that has a replacement block.
    fn collect(&mut self, ctx: &mut FtlCtx<'_>, req: Req) -> Result<(), SimError> {
        self.stats.gc_runs += 1;
        for vb in 0..self.sizing.virtual_blocks {
            let p = self.primary[vb as usize];
            if p == NIL {
                continue;
            }
            // Section 3.2 (iii): without the rep-block table GC learns each primary block's
            // replacement from its header, an OOB read of page 0 (under `merge`).
            if !self.cfg.lookup_table {
                self.stats.oob_reads_header += 1;
                self.stats.oob_reads_gc_header += 1;
                let spare = self.oob(ctx, req, self.layout.ppn(p, 0), Cause::Merge)?;
                let rep = match spare {
                    Spare::Programmed { tag, .. } => tag.checked_sub(1).unwrap_or(NIL),
                    Spare::Erased => NIL,
                };
                if rep != self.replacement[vb as usize] {
                    return Err(self.bug(format!(
                        "GC: header of virtual block {vb} says {rep}, RAM copy {}",
                        self.replacement[vb as usize]
                    )));
                }
            }
            if self.replacement[vb as usize] != NIL {
                self.stats.gc_folds += 1;
                ctx.counters().record_victim(false);
                let copied = self.fold(ctx, req, vb, None)?;
                ctx.counters().record_moved(copied, false);
            }
        }
        Ok(())
    }

    /// Folds virtual block `vb` into a new primary (with `extra`: the new data of one offset,
    /// written into the new primary instead of its old copy). Returns the pages copied.
    fn fold(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        req: Req,
        vb: u32,
        extra: Option<u32>,
    ) -> Result<u64, SimError> {
        self.stats.folds += 1;
        let fold_id = self.folds.begin();
        let (p, r) = (self.primary[vb as usize], self.replacement[vb as usize]);
        let target = self
            .free
            .pop_front()
            .ok_or_else(|| self.bug("no free block for a fold".into()))?;
        let used = u32::from(self.rep_next[vb as usize]);
        // Newest replacement page of each offset found so far by the backward scan.
        let mut found: Vec<u32> = vec![NIL; self.ppb as usize];
        let mut scan = used;
        let mut copied = 0;
        for off in 0..self.ppb {
            let lpn = vb * self.ppb + off;
            let dst = self.layout.ppn(target, off);
            if extra == Some(off) {
                let old = self.current_copy(ctx.nand(), vb, off);
                if let Some(old) = old {
                    ctx.invalidate(old)?;
                }
                self.program_page(ctx, req, dst, lpn, None, Cause::Host)?;
                self.cache.insert(lpn, dst);
                continue;
            }
            let src = match self.cache.get(lpn) {
                Some(ppn) => {
                    self.stats.page_cache_hits += 1;
                    Some(ppn)
                }
                None => {
                    if self.cache.is_enabled() {
                        self.stats.page_cache_misses += 1;
                    }
                    self.locate_for_fold(ctx, req, vb, off, r, p, &mut found, &mut scan)?
                }
            };
            let Some(src) = src else { continue };
            self.read_page(ctx, req, src, Cause::Merge)?;
            let data: Vec<u64> = ctx.nand().unit_data(src).to_vec();
            ctx.invalidate(src)?;
            self.program_page(ctx, req, dst, lpn, Some(&data), Cause::Merge)?;
            self.cache.update(lpn, dst);
            copied += 1;
        }
        self.stats.fold_pages_copied += copied;
        // Stale copies left in the old blocks are invalid already. The last erase reports
        // the end of the fold (its blocking time).
        let erased: Vec<BlockId> = [p, r].into_iter().filter(|&b| b != NIL).collect();
        self.folds.finish(
            fold_id,
            MergeRecord {
                kind: MergeKind::Fold,
                associativity: 1,
                blocking_ns: 0,
                pages_copied: copied as u32,
                erases: erased.len() as u32,
            },
        );
        for (i, &block) in erased.iter().enumerate() {
            if ctx.nand().block(block).valid_units != 0 {
                return Err(self.bug(format!(
                    "fold of virtual block {vb} leaves valid data in block {block}"
                )));
            }
            let last = i + 1 == erased.len();
            self.erase(
                ctx,
                req,
                block,
                Cause::Merge,
                if last { fold_id } else { 0 },
            )?;
        }
        self.primary[vb as usize] = target;
        self.replacement[vb as usize] = NIL;
        self.rep_next[vb as usize] = 0;
        Ok(copied)
    }

    /// Where a fold finds offset `off`: the replacement (continuing its backward OOB scan),
    /// else the primary's page if its spare says it holds the sector.
    #[allow(clippy::too_many_arguments)]
    fn locate_for_fold(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        req: Req,
        vb: u32,
        off: u32,
        r: BlockId,
        p: BlockId,
        found: &mut [u32],
        scan: &mut u32,
    ) -> Result<Option<Ppn>, SimError> {
        let lpn = vb * self.ppb + off;
        while found[off as usize] == NIL && *scan > 0 {
            *scan -= 1;
            let ppn = self.layout.ppn(r, *scan);
            self.stats.oob_reads_fold += 1;
            if let Spare::Programmed { entry, .. } = self.oob(ctx, req, ppn, Cause::Merge)? {
                if let Some(l) = entry.lpn() {
                    let o = (l - vb * self.ppb) as usize;
                    if found[o] == NIL {
                        found[o] = *scan;
                    }
                }
            }
        }
        // The primary page's spare (its valid flag) is read whether or not the scan found the
        // offset: the fold reads the spare of every page of both blocks it does not know from
        // the page cache (the module doc; Table 6's lookup column implies it).
        let ppn = self.layout.ppn(p, off);
        self.stats.oob_reads_fold += 1;
        let spare = self.oob(ctx, req, ppn, Cause::Merge)?;
        if found[off as usize] != NIL {
            return Ok(Some(self.layout.ppn(r, found[off as usize])));
        }
        Ok(match spare {
            Spare::Programmed { entry, .. } if entry.lpn() == Some(lpn) => Some(ppn),
            _ => None,
        })
    }

    /// The replacement block of `vb` and whether primary page `off` holds data, from RAM (lookup
    /// table) or from the spare areas (page 0's header, page `off`'s sector number).
    fn probe(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        req: Req,
        vb: u32,
        off: u32,
        need_rep: bool,
    ) -> Result<(BlockId, bool), SimError> {
        let lpn = vb * self.ppb + off;
        let p = self.primary[vb as usize];
        if self.cfg.lookup_table {
            return Ok((self.replacement[vb as usize], self.is_written(lpn)));
        }
        let mut rep = NIL;
        let status_spare;
        if off == 0 || need_rep {
            self.stats.oob_reads_header += 1;
            let spare = self.oob(ctx, req, self.layout.ppn(p, 0), Cause::Host)?;
            if let Spare::Programmed { tag, .. } = spare {
                rep = tag.checked_sub(1).unwrap_or(NIL);
            }
            status_spare = if off == 0 { Some(spare) } else { None };
        } else {
            status_spare = None;
        }
        let spare = match status_spare {
            Some(s) => s,
            None => {
                self.stats.oob_reads_status += 1;
                self.oob(ctx, req, self.layout.ppn(p, off), Cause::Host)?
            }
        };
        let written = matches!(spare, Spare::Programmed { entry, .. } if entry.lpn() == Some(lpn));
        Ok((rep, written))
    }

    fn write(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let req = Req { sub: sub.id };
        let lpn = (sub.first_sector / self.spp) as u32;
        let (vb, off) = (lpn / self.ppb, lpn % self.ppb);
        self.stats.host_page_writes += 1;
        self.fill_data(ctx, req, sub, vb, off)?;
        self.write_page(ctx, req, vb, off)?;
        ctx.complete(sub.id);
        Ok(())
    }

    /// The page's new data in `self.data`: the host's sectors over the old copy's (read first).
    fn fill_data(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        req: Req,
        sub: &SubRequest,
        vb: u32,
        off: u32,
    ) -> Result<(), SimError> {
        let s0 = (sub.first_sector % self.spp) as usize;
        let s1 = s0 + sub.sectors as usize;
        let partial = s0 > 0 || s1 < self.spp as usize;
        let old = if partial {
            self.current_copy(ctx.nand(), vb, off)
        } else {
            None
        };
        if let Some(old) = old {
            self.stats.rmw_reads += 1;
            self.read_page(ctx, req, old, Cause::Host)?;
        }
        if ctx.payloads() {
            match old {
                Some(old) => self.data.copy_from_slice(ctx.nand().unit_data(old)),
                None => self.data.fill(0),
            }
            self.data[s0..s1].fill(sub.version);
        }
        Ok(())
    }

    /// Writes the page of `self.data` to sector (vb, off), folding or collecting as needed.
    fn write_page(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        req: Req,
        vb: u32,
        off: u32,
    ) -> Result<(), SimError> {
        let lpn = vb * self.ppb + off;
        if self.primary[vb as usize] == NIL {
            let p = self.take_block(ctx, req)?;
            self.primary[vb as usize] = p;
        }
        loop {
            let (rep, written) = self.probe(ctx, req, vb, off, false)?;
            if !written {
                let ppn = self.layout.ppn(self.primary[vb as usize], off);
                self.program_page(ctx, req, ppn, lpn, None, Cause::Host)?;
                self.set_written(lpn, true);
                self.cache.insert(lpn, ppn);
                return Ok(());
            }
            // A rewrite: it goes to the replacement block.
            let rep = if self.cfg.lookup_table || off == 0 {
                rep
            } else {
                self.probe(ctx, req, vb, 0, true)?.0
            };
            if rep == NIL {
                if self.free.len() < 2 {
                    self.collect(ctx, req)?;
                    continue;
                }
                self.new_replacement(ctx, req, vb)?;
                continue;
            }
            let next = u32::from(self.rep_next[vb as usize]);
            if next == self.ppb {
                self.fold(ctx, req, vb, Some(off))?;
                return Ok(());
            }
            let old = self.current_copy(ctx.nand(), vb, off);
            if let Some(old) = old {
                ctx.invalidate(old)?;
            }
            let ppn = self.layout.ppn(rep, next);
            self.program_page(ctx, req, ppn, lpn, None, Cause::Host)?;
            self.rep_next[vb as usize] += 1;
            self.cache.insert(lpn, ppn);
            return Ok(());
        }
    }

    /// Takes a replacement block for `vb` and writes its header into the primary's page 0.
    fn new_replacement(&mut self, ctx: &mut FtlCtx<'_>, req: Req, vb: u32) -> Result<(), SimError> {
        let r = self.take_block(ctx, req)?;
        let header = self.layout.ppn(self.primary[vb as usize], 0);
        let after = [self.last];
        self.last = ctx.program_oob(
            header,
            FLAG_HEADER,
            r + 1,
            self.issue(req, Cause::Host).after(&after),
        )?;
        self.stats.header_programs += 1;
        self.replacement[vb as usize] = r;
        self.rep_next[vb as usize] = 0;
        Ok(())
    }

    fn read(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let req = Req { sub: sub.id };
        let lpn = (sub.first_sector / self.spp) as u32;
        let (vb, off) = (lpn / self.ppb, lpn % self.ppb);
        self.stats.host_page_reads += 1;
        let src = self.locate_for_read(ctx, req, vb, off)?;
        let s0 = (sub.first_sector % self.spp) as usize;
        let s1 = s0 + sub.sectors as usize;
        match src {
            Some(ppn) => {
                if ctx.payloads() {
                    let d: Vec<u64> = ctx.nand().unit_data(ppn)[s0..s1].to_vec();
                    ctx.deliver(sub.id, sub.first_sector, &d)?;
                }
                self.read_page(ctx, req, ppn, Cause::Host)?;
            }
            None => {
                let zeros = vec![0; s1 - s0];
                ctx.deliver(sub.id, sub.first_sector, &zeros)?;
            }
        }
        ctx.complete(sub.id);
        Ok(())
    }

    /// The page holding sector (vb, off) as a read finds it: page cache, else header, page
    /// status and backward search of the replacement block.
    fn locate_for_read(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        req: Req,
        vb: u32,
        off: u32,
    ) -> Result<Option<Ppn>, SimError> {
        let lpn = vb * self.ppb + off;
        if let Some(ppn) = self.cache.get(lpn) {
            self.stats.page_cache_hits += 1;
            return Ok(Some(ppn));
        }
        if self.cache.is_enabled() {
            self.stats.page_cache_misses += 1;
        }
        if self.primary[vb as usize] == NIL {
            return Ok(None);
        }
        let (rep, written) = self.probe(ctx, req, vb, off, true)?;
        if !written {
            return Ok(None);
        }
        if rep != NIL {
            for page in (0..u32::from(self.rep_next[vb as usize])).rev() {
                let ppn = self.layout.ppn(rep, page);
                self.stats.oob_reads_search += 1;
                if let Spare::Programmed { entry, .. } = self.oob(ctx, req, ppn, Cause::Host)? {
                    if entry.lpn() == Some(lpn) {
                        return Ok(Some(ppn));
                    }
                }
            }
        }
        Ok(Some(self.layout.ppn(self.primary[vb as usize], off)))
    }

    /// TRIM of whole virtual blocks: both blocks erased, the sectors unwritten.
    fn trim(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let req = Req { sub: sub.id };
        let sectors_per_block = self.spp * u64::from(self.ppb);
        let first = sub.first_sector.div_ceil(sectors_per_block);
        let end = ((sub.first_sector + sub.sectors) / sectors_per_block)
            .min(u64::from(self.sizing.virtual_blocks));
        for vb in first..end {
            let vb = vb as u32;
            for block in [self.primary[vb as usize], self.replacement[vb as usize]] {
                if block == NIL {
                    continue;
                }
                for page in 0..self.ppb {
                    let ppn = self.layout.ppn(block, page);
                    if ctx.nand().is_valid(ppn) {
                        ctx.invalidate(ppn)?;
                    }
                }
                self.erase(ctx, req, block, Cause::Host, 0)?;
            }
            self.primary[vb as usize] = NIL;
            self.replacement[vb as usize] = NIL;
            self.rep_next[vb as usize] = 0;
            for off in 0..self.ppb {
                let lpn = vb * self.ppb + off;
                self.set_written(lpn, false);
                self.cache.remove(lpn);
            }
        }
        ctx.complete(sub.id);
        Ok(())
    }
}

impl Ftl for Nftl {
    fn name(&self) -> &'static str {
        "nftl"
    }
    fn recover(
        &mut self,
        nand: &mut Nand,
        scan: &mut super::mapping::RecoveryScan,
    ) -> Result<(), SimError> {
        self.rebuild(nand, scan)
    }
    fn logical_bytes(&self) -> u64 {
        u64::from(self.sizing.virtual_blocks)
            * u64::from(self.ppb)
            * u64::from(self.layout.page_bytes)
    }
    fn chop_bytes(&self) -> u32 {
        self.layout.page_bytes
    }
    fn trim_unit_bytes(&self) -> u32 {
        self.ppb * self.layout.page_bytes
    }
    fn units_per_page(&self) -> u32 {
        1
    }

    fn submit(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        match sub.op {
            Op::Read => self.read(ctx, sub),
            Op::Write => self.write(ctx, sub),
            Op::Trim => self.trim(ctx, sub),
            // Writes complete once programmed: nothing acknowledged is only in RAM.
            Op::Flush => {
                ctx.complete(sub.id);
                Ok(())
            }
        }
    }

    fn flash_done(&mut self, ctx: &mut FtlCtx<'_>, token: u64) -> Result<(), SimError> {
        if let Some(record) = self.folds.command_done(token, ctx.now())? {
            ctx.record_merge(record);
        }
        Ok(())
    }

    fn merge_profile(&self) -> Option<MergeProfile> {
        Some(MergeProfile {
            predicted_worst_blocking_ns: Some(self.worst_fold_ns),
            log_buffer: None,
        })
    }

    fn check_invariants(&self, nand: &Nand) -> Result<(), String> {
        self.check(nand)
    }

    fn reset_counters(&mut self, _now_ns: u64) {
        self.stats = NftlStats::default();
    }

    fn report(&self) -> serde_json::Value {
        serde_json::json!({
            "lookup_table": self.cfg.lookup_table,
            "page_cache_entries": self.cfg.page_cache_entries,
            "virtual_blocks": self.sizing.virtual_blocks,
            "physical_blocks": self.sizing.physical_blocks,
            "ram": self.ram(),
            "counters": self.stats,
        })
    }

    fn state_bytes(&self) -> u64 {
        (self.primary.len() * 8
            + self.rep_next.len()
            + self.written.len() * 8
            + self.free.len() * 4) as u64
            + self.cache.state_bytes()
    }
}

impl registry::FtlSettings for NftlConfig {
    fn checked(config: &ExperimentConfig) -> Result<Self, ConfigError> {
        validate(config).map(|(settings, _)| settings)
    }
}
