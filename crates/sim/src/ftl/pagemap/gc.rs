//! Garbage collection of the page-mapping FTL: victim selection per die, moving valid units
//! (or copying fully valid pages back inside the plane), erasing, foreground and background.

use super::{token, PageMap, ProgramRecord, TAG_BACKGROUND_GC, TAG_PROGRAM};
use crate::flash::Cause;
use crate::ftl::mapping::Stream;
use crate::ftl::{FtlCtx, Issue};
use crate::nand::BlockId;
use crate::SimError;

impl PageMap {
    /// Free blocks of a die as the watermarks count them (per plane with multi-plane).
    fn free_blocks(&self, die: u32) -> u32 {
        self.blocks.free_in_die(die, self.lanes > 1)
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

    /// Background GC on an idle host: one victim per die at a time, continued when its erase
    /// completes while the host stays idle.
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

    /// Planes a victim may come from: the die's plane(s) with the fewest free blocks when
    /// programs span planes (each plane needs free blocks), otherwise all planes of the die.
    fn victim_planes(&self, die: u32) -> (u32, u32) {
        let planes = self.blocks.planes_of(die);
        if self.lanes == 1 {
            return (planes.start, planes.end);
        }
        let p = planes
            .clone()
            .filter(|&p| self.blocks.closed_in_plane(p) > 0)
            .min_by_key(|&p| (self.blocks.free_in_plane(p), p))
            .unwrap_or(planes.start);
        (p, p + 1)
    }

    /// Collects one victim on `die`; false when there is none worth collecting.
    pub(super) fn collect(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        die: u32,
        background: bool,
    ) -> Result<bool, SimError> {
        let (lo, hi) = self.victim_planes(die);
        let Some(victim) = self.blocks.take_victim(lo..hi, self.units_written) else {
            return Ok(false);
        };
        let upb = self.layout.pages_per_block * self.upp;
        let valid = ctx.nand().block(victim).valid_units;
        if valid == upb && background {
            // Nothing to reclaim: put it back and stop.
            self.blocks.close(victim, valid, self.units_written);
            return Ok(false);
        }
        ctx.counters().record_victim(background);
        let moved = self.move_valid_units(ctx, die, victim)?;
        // The victim's last units may wait in the GC page being assembled: with
        // `gc_program_before_erase`, program it (padded) before the erase, or a power cut in
        // between would lose them (flushed data included).
        let f = self.frontier_index(Stream::Gc, die);
        if self.cfg.gc_program_before_erase
            && self.frontiers[f].open
            && self.frontiers[f].filled > 0
        {
            self.program_frontier(ctx, f)?;
        }
        ctx.counters().record_moved(moved, background);
        ctx.charge_cpu(self.cfg.cpu_gc_unit_ns * moved);
        let tok = if background {
            token(TAG_BACKGROUND_GC, u64::from(die))
        } else {
            0
        };
        ctx.erase(victim, Issue::new(Cause::Gc).token(tok))?;
        self.blocks.release(victim);
        Ok(true)
    }

    fn move_valid_units(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        die: u32,
        victim: BlockId,
    ) -> Result<u64, SimError> {
        let mut moved = 0;
        let upp = self.upp;
        let mut units = std::mem::take(&mut self.gc_units);
        for page in 0..self.layout.pages_per_block {
            let ppn = self.layout.ppn(victim, page);
            units.clear();
            units.extend(
                (0..upp)
                    .map(|s| ppn * upp + s)
                    .filter(|&u| ctx.nand().is_valid(u)),
            );
            if units.is_empty() {
                continue;
            }
            moved += units.len() as u64;
            if units.len() == upp as usize && self.try_copyback(ctx, die, ppn)? {
                continue;
            }
            let read = ctx.read(
                &[ppn],
                units.len() as u32 * self.unit_bytes(),
                Issue::new(Cause::Gc),
            )?;
            for &unit in &units {
                // A valid slot of the victim is where its unit is mapped: invalidate it there
                // and append the unit to the GC page, keeping its sequence number.
                let oob = *ctx.nand().oob(unit);
                let lpn = oob.lpn().ok_or_else(|| {
                    self.bug(format!("valid unit slot {unit} without a logical unit"))
                })?;
                if ctx.payloads() {
                    self.gc_data.copy_from_slice(ctx.nand().unit_data(unit));
                }
                ctx.invalidate(unit)?;
                self.append(ctx, Stream::Gc, die, lpn, oob.seq(), Some(read))?;
            }
        }
        self.gc_units = units;
        Ok(moved)
    }

    /// Copies a fully valid page into the GC block of the same plane without a bus transfer.
    fn try_copyback(&mut self, ctx: &mut FtlCtx<'_>, die: u32, src: u32) -> Result<bool, SimError> {
        if !self.cfg.gc_copyback || self.lanes != 1 {
            return Ok(false);
        }
        let f = self.frontier_index(Stream::Gc, die);
        if !self.frontiers[f].open {
            self.open_frontier(ctx, Stream::Gc, die)?;
        }
        let fr = &self.frontiers[f];
        let dst_block = fr.blocks[0];
        if fr.filled > 0
            || self.layout.plane_of(dst_block) != self.layout.plane_of(self.layout.block_of(src))
        {
            return Ok(false);
        }
        let dst = self.layout.ppn(dst_block, fr.page);
        let record = ProgramRecord {
            blocks: fr.blocks,
            lanes: 1,
            erase_counts: [ctx.nand().block(dst_block).erase_count; 4],
            host_units: 0,
            seq: self.program_base + self.program_done.len() as u64,
        };
        let tok = token(TAG_PROGRAM, u64::from(self.alloc_record(record)));
        self.program_done.push_back(false);
        ctx.copyback(src, dst, Issue::new(Cause::Gc).token(tok))?;
        for s in 0..self.upp {
            let (from, to) = (src * self.upp + s, dst * self.upp + s);
            let lpn = ctx
                .nand()
                .oob(to)
                .lpn()
                .expect("copied valid unit has a logical unit");
            self.map.set(lpn, to);
            ctx.invalidate(from)?;
        }
        self.stats.copyback_pages += 1;
        let fr = &mut self.frontiers[f];
        fr.page += 1;
        if fr.page == self.layout.pages_per_block {
            fr.open = false;
            self.blocks.close(
                dst_block,
                ctx.nand().block(dst_block).valid_units,
                self.units_written,
            );
        }
        Ok(true)
    }
}
