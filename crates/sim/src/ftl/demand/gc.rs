//! Data-block GC of the demand-paged core: victim selection per die, moving valid units,
//! their map updates (dirty in the cache, or written to their translation pages), erasing;
//! foreground and background.

use super::{token, DemandFtl, TAG_BACKGROUND_GC};
use crate::flash::Cause;
use crate::ftl::mapping::Stream;
use crate::ftl::{FtlCtx, Issue};
use crate::nand::BlockId;
use crate::SimError;

impl DemandFtl {
    fn free_blocks(&self, die: u32) -> u32 {
        self.blocks.free_in_die(die, false)
    }

    /// Foreground GC: collects victims on `die` until it has more free blocks than the
    /// foreground watermark.
    pub(super) fn ensure_free(&mut self, ctx: &mut FtlCtx<'_>, die: u32) -> Result<(), SimError> {
        let limit = 4 * self.layout.blocks_per_die() + 16;
        let mut runs = 0;
        while self.free_blocks(die) <= self.cfg.gc_foreground_free_blocks {
            if runs == limit || !self.collect(ctx, die, false)? {
                return Err(self.bug(format!(
                    "garbage collection on die {die} cannot free a block after {runs} victims: \
                     no reclaimable space (raise ftl.over_provisioning)"
                )));
            }
            self.stats.foreground_gc_runs += 1;
            runs += 1;
        }
        Ok(())
    }

    /// Background GC on an idle host, one victim per die at a time.
    pub(super) fn background_collect(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        die: u32,
    ) -> Result<(), SimError> {
        if self.background[die as usize]
            || ctx.host_outstanding() > 0
            || self.free_blocks(die) > self.cfg.gc_background_free_blocks
        {
            return Ok(());
        }
        self.background[die as usize] = true;
        if !self.collect(ctx, die, true)? {
            self.background[die as usize] = false;
        }
        Ok(())
    }

    pub(super) fn background_step_done(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        die: u32,
    ) -> Result<(), SimError> {
        self.background[die as usize] = false;
        self.background_collect(ctx, die)
    }

    /// Collects one data victim on `die`; false when there is none worth collecting.
    fn collect(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        die: u32,
        background: bool,
    ) -> Result<bool, SimError> {
        let planes = self.blocks.planes_of(die);
        let Some(victim) = self.blocks.take_victim(planes, self.units_written) else {
            return Ok(false);
        };
        let upb = self.layout.pages_per_block * self.upp;
        let valid = ctx.nand().block(victim).valid_units;
        if valid == upb && background {
            self.blocks.close(victim, valid, self.units_written);
            return Ok(false);
        }
        ctx.counters().record_victim(background);
        let moved = self.move_valid_units(ctx, die, victim)?;
        ctx.counters().record_moved(moved, background);
        let tok = if background {
            token(TAG_BACKGROUND_GC, u64::from(die))
        } else {
            0
        };
        ctx.erase(victim, Issue::new(Cause::Gc).token(tok))?;
        self.blocks.release(victim);
        Ok(true)
    }

    /// Moves the victim's valid units to the die's GC frontier and records their new
    /// locations (dirty cached entries, or written back per translation page).
    fn move_valid_units(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        die: u32,
        victim: BlockId,
    ) -> Result<u64, SimError> {
        let mut moved = 0;
        let mut uncached = std::mem::take(&mut self.uncached);
        uncached.clear();
        for page in 0..self.layout.pages_per_block {
            let ppn = self.layout.ppn(victim, page);
            let valid = (0..self.upp)
                .filter(|&s| ctx.nand().is_valid(ppn * self.upp + s))
                .count() as u32;
            if valid == 0 {
                continue;
            }
            moved += u64::from(valid);
            let read = ctx.read(&[ppn], valid * self.unit_bytes(), Issue::new(Cause::Gc))?;
            let upp = self.upp;
            for unit in (0..upp).map(|s| ppn * upp + s) {
                if !ctx.nand().is_valid(unit) {
                    continue;
                }
                let oob = *ctx.nand().oob(unit);
                let lpn = oob.lpn().ok_or_else(|| {
                    self.bug(format!("valid unit slot {unit} without a logical unit"))
                })?;
                if ctx.payloads() {
                    self.gc_data.copy_from_slice(ctx.nand().unit_data(unit));
                }
                ctx.invalidate(unit)?;
                self.append(ctx, Stream::Gc, die, lpn, oob.seq(), Some(read))?;
                if !self.updated(ctx, lpn) {
                    uncached.push(lpn);
                }
            }
        }
        let result = self.write_back_uncached(ctx, &mut uncached);
        self.uncached = uncached;
        result?;
        Ok(moved)
    }
}
