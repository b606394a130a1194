//! Translation pages: write-backs (read the old translation page, write the merged one on the
//! translation stream, move the GTD), and translation-block GC.
//!
//! A translation page is one mapping unit (4 KiB by default: 1,024 entries, fmmu.txt 4.2 and
//! Fig. 7); `units_per_page` of them share a flash page, each in its own unit slot with
//! `OobEntry::new(tvpn, seq, OOB_FLAG_TRANSLATION)`. Written translation pages are packed
//! into the page being assembled in the open translation block (the translation buffer) and
//! the flash page is programmed once all its slots are filled, so every program carries
//! whole translation pages and none is padded. The GTD points at a unit slot. A translation
//! page still in the buffer is RAM: a load of it needs no flash read (counted in
//! `translation_buffer_hits`) and a merge needs no read of it; rewriting it leaves its slot
//! empty in the buffer (an invalid slot once programmed). A load reads only the unit's bytes
//! over the bus (a partial data-out of the page).

use super::cache::WriteBack;
use super::{token, DemandFtl, TAG_MAP_PROGRAM};
use crate::flash::{Cause, CmdId};
use crate::ftl::mapping::{Stream, UNMAPPED};
use crate::ftl::{CpuActivity, FtlCtx, Issue};
use crate::nand::{BlockId, OobEntry, Ppn, UnitAddr, OOB_FLAG_TRANSLATION};
use crate::SimError;

/// The bits of a block's erase count a translation program's token carries (what is left
/// of 56 index bits beside the 32-bit block number).
const ERASE_COUNT_MASK: u32 = (1 << 24) - 1;

impl DemandFtl {
    /// Writes a translation page's changed entries back: the old translation page is read
    /// (timed, unless it is in the translation buffer) and the merged one written after it.
    pub(super) fn write_back(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        wb: &WriteBack,
    ) -> Result<(), SimError> {
        if wb.lpns.is_empty() {
            return Ok(());
        }
        let ept = self.sizing.entries_per_tpage;
        for &lpn in &wb.lpns {
            let value = self.map.get(lpn).unwrap_or(UNMAPPED);
            self.flash_copy[wb.tvpn as usize][(lpn % ept) as usize] = value;
        }
        self.stats.flushes += 1;
        self.stats.entries_flushed += wb.lpns.len() as u64;
        if wb.blocks_scanned > 0 {
            self.charge(
                ctx,
                CpuActivity::Flush,
                self.exec.flush_ns(wb.blocks_scanned),
            );
        }
        let old =
            self.gtd[wb.tvpn as usize].filter(|&u| wb.read_old && !self.translation_in_ram(u));
        let dep = match old {
            Some(old) => {
                self.stats.merge_reads += 1;
                let ppn = self.per_page.quotient(old);
                Some(ctx.read(&[ppn], self.unit_bytes(), Issue::new(Cause::Mapping))?)
            }
            None => None,
        };
        self.program_translation(ctx, wb.tvpn, dep)
    }

    /// Writes the translation pages of entries changed while not cached (GC moves, TRIM),
    /// each with the cache's dirty entries of the same page where the cache finds them
    /// cheaply ([`super::cache::MapCachePolicy::uncached_write_back`]).
    pub(super) fn write_back_uncached(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        lpns: &mut [u32],
    ) -> Result<(), SimError> {
        lpns.sort_unstable();
        let ept = self.sizing.entries_per_tpage;
        let mut rest: &[u32] = lpns;
        while let Some(&first) = rest.first() {
            let tvpn = first / ept;
            let n = rest.iter().take_while(|&&l| l / ept == tvpn).count();
            let mut wb = self.cache.uncached_write_back(tvpn);
            wb.lpns.extend_from_slice(&rest[..n]);
            self.write_back(ctx, &wb)?;
            rest = &rest[n..];
        }
        Ok(())
    }

    /// Whether a translation unit slot is in the page being assembled (not yet programmed).
    pub(super) fn in_map_buffer(&self, unit: UnitAddr) -> bool {
        let fr = &self.map_frontier;
        fr.open
            && self.per_page.quotient(unit) == self.layout.ppn(fr.block, fr.page)
            && self.per_page.remainder(unit) < fr.filled
    }

    /// Writes translation page `tvpn` (after `dep`) into the next slot of the translation
    /// buffer, points the GTD at it and invalidates the previous copy; a full buffer is
    /// programmed.
    fn program_translation(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        tvpn: u32,
        dep: Option<CmdId>,
    ) -> Result<(), SimError> {
        let unit = self.next_translation_slot(tvpn)?;
        if let Some(d) = dep {
            self.map_frontier.deps.push(d);
        }
        self.stats.translation_writes += 1;
        if let Some(old) = self.gtd[tvpn as usize].replace(unit) {
            self.invalidate_translation(ctx, old)?;
        }
        if self.map_frontier.filled == self.upp {
            self.program_map_page(ctx)?;
        }
        Ok(())
    }

    /// Puts translation page `tvpn`, numbered next, into the next slot of the translation
    /// buffer (taking the next translation flash page if none is being assembled); returns
    /// the slot.
    pub(super) fn next_translation_slot(&mut self, tvpn: u32) -> Result<UnitAddr, SimError> {
        if !self.map_frontier.open {
            let (block, page) = self.next_translation_page()?;
            let fr = &mut self.map_frontier;
            fr.open = true;
            fr.block = block;
            fr.page = page;
        }
        self.translation_seq += 1;
        let fr = &mut self.map_frontier;
        let slot = fr.filled;
        fr.entries[slot as usize] = OobEntry::new(tvpn, self.translation_seq, OOB_FLAG_TRANSLATION);
        fr.filled += 1;
        Ok(self.layout.ppn(fr.block, fr.page) * self.upp + slot)
    }

    /// Programs the full translation buffer (its translation pages stay in RAM until the
    /// program completes, [`Self::translation_program_done`]); a full block is closed and
    /// may start translation GC.
    fn program_map_page(&mut self, ctx: &mut FtlCtx<'_>) -> Result<(), SimError> {
        let fr = &self.map_frontier;
        let ppn = self.layout.ppn(fr.block, fr.page);
        let erase_count = ctx.nand().block(fr.block).erase_count & ERASE_COUNT_MASK;
        let tok = token(
            TAG_MAP_PROGRAM,
            u64::from(erase_count) << 32 | u64::from(fr.block),
        );
        ctx.program(
            &[ppn],
            &fr.entries,
            None,
            Issue::new(Cause::Mapping).after(&fr.deps).token(tok),
        )?;
        self.stats.translation_programs += 1;
        let fr = &mut self.map_frontier;
        fr.entries.fill(OobEntry::EMPTY);
        fr.deps.clear();
        fr.filled = 0;
        fr.open = false;
        if fr.page + 1 == self.layout.pages_per_block {
            let block = fr.block;
            self.map_open[self.layout.die_of(block) as usize] = None;
            let valid = ctx.nand().block(block).valid_units;
            self.blocks.close(block, valid, self.units_written);
            self.collect_translation(ctx)?;
        }
        Ok(())
    }

    /// A translation flash page of `block` programmed while the block had been erased
    /// `erase_count` times (modulo [`ERASE_COUNT_MASK`]) is durable (programs of a block
    /// complete in order); a completion from before the block's last erase (a translation GC
    /// victim whose last programs were still in flight) is stale and ignored.
    pub(super) fn translation_program_done(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        block: BlockId,
        erase_count: u32,
    ) -> Result<(), SimError> {
        if ctx.nand().block(block).erase_count & ERASE_COUNT_MASK == erase_count {
            self.blocks.add_durable_page(block);
        }
        Ok(())
    }

    /// Whether a translation unit slot is still in RAM: its flash page is being assembled or
    /// its program has not completed (the translation buffer keeps a page until it is
    /// durable). Loading it or merging with it needs no flash read.
    pub(super) fn translation_in_ram(&self, unit: UnitAddr) -> bool {
        let ppn = self.per_page.quotient(unit);
        self.layout.page_in_block(ppn) >= self.blocks.durable_pages(self.layout.block_of(ppn))
    }

    fn invalidate_translation(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        unit: UnitAddr,
    ) -> Result<(), SimError> {
        if self.in_map_buffer(unit) {
            self.map_frontier.entries[self.per_page.remainder(unit) as usize] = OobEntry::EMPTY;
            return Ok(());
        }
        ctx.invalidate(unit)?;
        let block = self.layout.block_of(self.per_page.quotient(unit));
        self.blocks
            .on_invalidate(block, ctx.nand().block(block).valid_units);
        Ok(())
    }

    /// The flash page the next translation buffer fills. Striped (`translation_dies` > 1):
    /// each flash page on the next of `translation_dies` dies spread evenly over the device,
    /// in that die's open translation block, so that loads and write-backs spread over the
    /// dies and channels as data does; a die whose block is full opens another only with a
    /// free block to spare beyond the one its GC may need, else the turn passes on. Otherwise
    /// (or when no die of the stripe can), one block at a time on the die with the most free
    /// blocks.
    fn next_translation_page(&mut self) -> Result<(BlockId, u32), SimError> {
        let (dies, width) = (self.layout.dies(), self.sizing.translation_dies);
        let striped = width > 1;
        for _ in 0..if striped { width } else { 0 } {
            let turn = self.map_die_turn;
            self.map_die_turn = (turn + 1) % width;
            let die = (u64::from(turn) * u64::from(dies) / u64::from(width)) as u32;
            if let Some(page) = self.translation_page_on(die, 1) {
                return Ok(page);
            }
        }
        if let Some(page) = self.map_open.iter().flatten().next().copied() {
            self.map_open[self.layout.die_of(page.0) as usize] = Some((page.0, page.1 + 1));
            return Ok(page);
        }
        let die = (0..dies)
            .max_by_key(|&d| (self.blocks.free_in_die(d, false), std::cmp::Reverse(d)))
            .unwrap_or(0);
        self.translation_page_on(die, 0).ok_or_else(|| {
            self.bug(format!(
                "no free block left on die {die} for translation pages (raise ftl.over_provisioning)"
            ))
        })
    }

    /// The next page of `die`'s open translation block, opening one if the die has more than
    /// `keep` free blocks.
    fn translation_page_on(&mut self, die: u32, keep: u32) -> Option<(BlockId, u32)> {
        let open = match self.map_open[die as usize] {
            Some(open) => open,
            None if self.blocks.free_in_die(die, false) > keep => {
                let plane = self.blocks.roomiest_plane(die);
                (self.blocks.open(plane, Stream::Map, 0)?, 0)
            }
            None => return None,
        };
        self.map_open[die as usize] = Some((open.0, open.1 + 1));
        Some(open)
    }

    /// Translation GC: while closed translation blocks exceed twice the blocks the translation
    /// pages fill plus one, the greedy victim's valid translation pages are read (their unit
    /// bytes, one read per flash page) and written again, and it is erased.
    fn collect_translation(&mut self, ctx: &mut FtlCtx<'_>) -> Result<(), SimError> {
        if self.in_translation_gc {
            return Ok(());
        }
        let limit = 2 * self
            .sizing
            .translation_flash_pages
            .div_ceil(self.layout.pages_per_block)
            + 1;
        self.in_translation_gc = true;
        while self.blocks.closed_translation() > limit {
            let Some(victim) = self.blocks.take_translation_victim() else {
                break;
            };
            self.stats.translation_gc_victims += 1;
            for page in 0..self.layout.pages_per_block {
                self.move_translation_page(ctx, self.layout.ppn(victim, page))?;
            }
            ctx.erase(victim, Issue::new(Cause::Mapping))?;
            self.blocks.release(victim);
        }
        self.in_translation_gc = false;
        Ok(())
    }

    /// Moves the valid translation pages of flash page `ppn` into the translation buffer.
    fn move_translation_page(&mut self, ctx: &mut FtlCtx<'_>, ppn: Ppn) -> Result<(), SimError> {
        let valid = (0..self.upp)
            .filter(|&s| ctx.nand().is_valid(ppn * self.upp + s))
            .count() as u32;
        if valid == 0 {
            return Ok(());
        }
        // A page whose program is still in flight is copied from RAM.
        let read = if self.translation_in_ram(ppn * self.upp) {
            None
        } else {
            Some(ctx.read(
                &[ppn],
                valid * self.unit_bytes(),
                Issue::new(Cause::Mapping),
            )?)
        };
        for s in 0..self.upp {
            let unit = ppn * self.upp + s;
            if !ctx.nand().is_valid(unit) {
                continue;
            }
            let tvpn =
                ctx.nand().oob(unit).lpn().ok_or_else(|| {
                    self.bug(format!("valid translation slot {unit} without a TVPN"))
                })?;
            if self.gtd[tvpn as usize] != Some(unit) {
                return Err(self.bug(format!(
                    "valid translation slot {unit} of page {tvpn} is not where the GTD points"
                )));
            }
            self.program_translation(ctx, tvpn, read)?;
            self.stats.translation_pages_moved += 1;
        }
        Ok(())
    }
}
