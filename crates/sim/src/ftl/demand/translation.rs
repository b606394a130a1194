//! Translation pages: write-backs (read the old page, program the merged one on the
//! translation stream, move the GTD), and translation-block GC.

use super::cache::WriteBack;
use super::{group_by_tvpn, DemandFtl};
use crate::flash::{Cause, CmdId};
use crate::ftl::mapping::{Stream, UNMAPPED};
use crate::ftl::{CpuActivity, FtlCtx, Issue};
use crate::nand::{OobEntry, Ppn, OOB_FLAG_TRANSLATION};
use crate::SimError;

impl DemandFtl {
    /// Writes a translation page's changed entries back: the old page is read (timed) and the
    /// merged page programmed after it.
    pub(super) fn write_back(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        wb: WriteBack,
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
        let dep = match self.gtd[wb.tvpn as usize].filter(|_| wb.read_old) {
            Some(old) => {
                self.stats.merge_reads += 1;
                Some(ctx.read(&[old], self.layout.page_bytes, Issue::new(Cause::Mapping))?)
            }
            None => None,
        };
        self.program_translation(ctx, wb.tvpn, dep)
    }

    /// Writes the translation pages of entries changed while not cached (GC moves), each
    /// with the cache's dirty entries of the same page.
    pub(super) fn write_back_uncached(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        lpns: &mut [u32],
    ) -> Result<(), SimError> {
        for (tvpn, changed) in group_by_tvpn(lpns, self.sizing.entries_per_tpage) {
            let mut wb = self.cache.take_dirty(tvpn);
            wb.lpns.extend(changed);
            self.write_back(ctx, wb)?;
        }
        Ok(())
    }

    /// Programs translation page `tvpn` (after `dep`) into the open translation block, points
    /// the GTD at it and invalidates the previous copy.
    fn program_translation(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        tvpn: u32,
        dep: Option<CmdId>,
    ) -> Result<(), SimError> {
        let (block, page) = match self.map_block {
            Some(open) => open,
            None => (self.open_translation_block()?, 0),
        };
        let ppn = self.layout.ppn(block, page);
        self.translation_seq += 1;
        let entries = vec![
            OobEntry::new(tvpn, self.translation_seq, OOB_FLAG_TRANSLATION);
            self.upp as usize
        ];
        let deps: Vec<CmdId> = dep.into_iter().collect();
        ctx.program(
            &[ppn],
            &entries,
            None,
            Issue::new(Cause::Mapping).after(&deps),
        )?;
        self.stats.translation_writes += 1;
        if let Some(old) = self.gtd[tvpn as usize].replace(ppn) {
            self.invalidate_translation(ctx, old)?;
        }
        if page + 1 == self.layout.pages_per_block {
            self.map_block = None;
            let valid = ctx.nand().block(block).valid_units;
            self.blocks.close(block, valid, self.units_written);
            self.collect_translation(ctx)?;
        } else {
            self.map_block = Some((block, page + 1));
        }
        Ok(())
    }

    fn invalidate_translation(&mut self, ctx: &mut FtlCtx<'_>, ppn: Ppn) -> Result<(), SimError> {
        for s in 0..self.upp {
            ctx.invalidate(ppn * self.upp + s)?;
        }
        let block = self.layout.block_of(ppn);
        self.blocks
            .on_invalidate(block, ctx.nand().block(block).valid_units);
        Ok(())
    }

    /// Opens a translation block on the die with the most free blocks.
    fn open_translation_block(&mut self) -> Result<u32, SimError> {
        let die = (0..self.layout.dies())
            .max_by_key(|&d| (self.blocks.free_in_die(d, false), std::cmp::Reverse(d)))
            .unwrap_or(0);
        let plane = self.blocks.roomiest_plane(die);
        self.blocks.open(plane, Stream::Map, 0).ok_or_else(|| {
            self.bug(format!(
                "no free block left on die {die} for translation pages (raise ftl.over_provisioning)"
            ))
        })
    }

    /// Translation GC: while closed translation blocks exceed twice the blocks the translation
    /// pages fill plus one, the greedy victim's valid pages are copied and it is erased.
    fn collect_translation(&mut self, ctx: &mut FtlCtx<'_>) -> Result<(), SimError> {
        if self.in_translation_gc {
            return Ok(());
        }
        let limit = 2 * self
            .sizing
            .translation_pages
            .div_ceil(self.layout.pages_per_block)
            + 1;
        self.in_translation_gc = true;
        while self.blocks.closed_translation() > limit {
            let Some(victim) = self.blocks.take_translation_victim() else {
                break;
            };
            self.stats.translation_gc_victims += 1;
            for page in 0..self.layout.pages_per_block {
                let ppn = self.layout.ppn(victim, page);
                if !ctx.nand().is_valid(ppn * self.upp) {
                    continue;
                }
                let tvpn = ctx.nand().oob(ppn * self.upp).lpn().ok_or_else(|| {
                    self.bug(format!("valid translation page {ppn} without a TVPN"))
                })?;
                let read = ctx.read(&[ppn], self.layout.page_bytes, Issue::new(Cause::Mapping))?;
                self.program_translation(ctx, tvpn, Some(read))?;
                self.stats.translation_pages_moved += 1;
            }
            ctx.erase(victim, Issue::new(Cause::Mapping))?;
            self.blocks.release(victim);
        }
        self.in_translation_gc = false;
        Ok(())
    }
}
