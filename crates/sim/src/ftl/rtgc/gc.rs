//! Reclaiming a victim block on one die, for collector jobs and on demand: the greedy victim's
//! valid pages are copied to the die's GC block (keeping their OOB sequence numbers), then the
//! victim is erased. Every command carries the deadline it is done for. A collector's victim
//! returns to the free pool when its erase completes (the job's token); an on-demand victim at
//! once (the host program that needs it is ordered after the erase on the block).

use super::Rtgc;
use crate::flash::{Cause, NIL};
use crate::ftl::mapping::Stream;
use crate::ftl::{FtlCtx, Issue};
use crate::nand::{BlockId, OobEntry, Ppn};
use crate::SimError;

/// The callback token of a collector job's erase: job slot + 1 and the victim block.
fn erase_token(slot: u32, block: BlockId) -> u64 {
    ((u64::from(slot) + 1) << 32) | u64::from(block)
}

impl Rtgc {
    /// Pages `die`'s GC block and free blocks can take.
    fn gc_room(&self, ctx: &FtlCtx<'_>, die: u32) -> u64 {
        let p = u64::from(self.layout.pages_per_block);
        let gc = self.dies[die as usize].gc;
        let left = if gc == NIL {
            0
        } else {
            p - u64::from(ctx.nand().block(gc).write_ptr)
        };
        left + p * u64::from(self.blocks.free_in_die(die, false))
    }

    /// The valid pages of `die`'s greedy victim when it has garbage and they fit.
    fn victim_fits(&self, ctx: &FtlCtx<'_>, die: u32) -> Option<u32> {
        let valid = self.blocks.fewest_valid(self.blocks.planes_of(die))?;
        (valid < self.layout.pages_per_block && u64::from(valid) <= self.gc_room(ctx, die))
            .then_some(valid)
    }

    /// A collector job's reclamation on `die` (job `slot`, deadline `deadline_ns`): the pages
    /// it frees, or None when the die has no victim with garbage or no room for its copies.
    pub(super) fn reclaim_for_job(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        die: u32,
        slot: u32,
        deadline_ns: u64,
    ) -> Result<Option<u32>, SimError> {
        if self.victim_fits(ctx, die).is_none() {
            self.stats.dies_skipped_no_room += 1;
            return Ok(None);
        }
        let victim = self.take_victim(die)?;
        let copied = self.copy_valid(ctx, die, victim, deadline_ns)?;
        let issue = Issue::new(Cause::Gc)
            .deadline(deadline_ns)
            .token(erase_token(slot, victim));
        ctx.erase(victim, issue)?;
        self.pending_erase[victim as usize] = slot + 1;
        ctx.counters().record_victim(false);
        ctx.counters().record_moved(u64::from(copied), false);
        Ok(Some(self.layout.pages_per_block - copied))
    }

    /// Collects one victim of `die` for a host write that found the die at its reserve block
    /// (`realtime`: a real-time task's write, the collectors being behind).
    pub(super) fn collect_on_demand(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        die: u32,
        realtime: bool,
        deadline_ns: u64,
    ) -> Result<(), SimError> {
        if realtime {
            self.stats.fallback_collections += 1;
        } else {
            self.stats.on_demand_collections += 1;
        }
        if self.victim_fits(ctx, die).is_none() {
            // The garbage may sit in collector victims whose erase is still queued: they are
            // erased in the functional state already, so one can be used now.
            return match self.release_pending_victim(die) {
                Some(_) => Ok(()),
                None => Err(self.bug(format!(
                    "die {die} has no free page and no victim whose valid pages fit its GC \
                     block (lower ftl.logical_ratio)"
                ))),
            };
        }
        let victim = self.take_victim(die)?;
        let copied = self.copy_valid(ctx, die, victim, deadline_ns)?;
        ctx.erase(victim, Issue::new(Cause::Gc).deadline(deadline_ns))?;
        self.blocks.release(victim);
        ctx.counters().record_victim(false);
        ctx.counters().record_moved(u64::from(copied), false);
        Ok(())
    }

    /// Releases a collector victim of `die` whose erase has not completed yet.
    fn release_pending_victim(&mut self, die: u32) -> Option<BlockId> {
        let per_die = self.layout.blocks_per_die();
        let first = die * per_die;
        let block = (first..first + per_die).find(|&b| self.pending_erase[b as usize] != 0)?;
        self.pending_erase[block as usize] = 0;
        self.blocks.release(block);
        Some(block)
    }

    /// A collector job's erase completed: its victim is free (unless a write took it early).
    pub(super) fn victim_erased(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        token: u64,
    ) -> Result<(), SimError> {
        let slot = (token >> 32).wrapping_sub(1) as u32;
        let block = token as u32;
        if block >= self.layout.blocks() || slot as usize >= self.jobs.len() {
            return Err(self.bug(format!("completion of unknown token {token:#x}")));
        }
        if self.pending_erase[block as usize] == slot + 1 {
            self.pending_erase[block as usize] = 0;
            self.blocks.release(block);
        }
        self.job_erase_done(ctx, slot)
    }

    fn take_victim(&mut self, die: u32) -> Result<BlockId, SimError> {
        let planes = self.blocks.planes_of(die);
        self.blocks
            .take_victim(planes, self.pages_written)
            .ok_or_else(|| self.bug(format!("die {die} has no closed block to collect")))
    }

    /// Copies the valid pages of `victim` to `die`'s GC block; returns how many.
    fn copy_valid(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        die: u32,
        victim: BlockId,
        deadline_ns: u64,
    ) -> Result<u32, SimError> {
        let mut copied = 0;
        for page in 0..self.layout.pages_per_block {
            let src = self.layout.ppn(victim, page);
            if ctx.nand().is_valid(src) {
                self.copy_page(ctx, die, src, deadline_ns)?;
                copied += 1;
            }
        }
        Ok(copied)
    }

    fn copy_page(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        die: u32,
        src: Ppn,
        deadline_ns: u64,
    ) -> Result<(), SimError> {
        let oob = *ctx.nand().oob(src);
        let lpn = oob
            .lpn()
            .ok_or_else(|| self.bug(format!("valid page {src} without a logical page")))?;
        let dst = self.gc_page(ctx, die)?;
        if ctx.payloads() {
            self.gc_data.copy_from_slice(ctx.nand().unit_data(src));
        }
        let issue = Issue::new(Cause::Gc).deadline(deadline_ns);
        let read = ctx.read(&[src], self.page_bytes(), issue)?;
        ctx.invalidate(src)?;
        let data = ctx.payloads().then_some(self.gc_data.as_slice());
        ctx.program(
            &[dst],
            &[OobEntry::new(lpn, oob.seq(), 0)],
            data,
            issue.after(&[read]),
        )?;
        self.map.set(lpn, dst);
        Ok(())
    }

    /// The next page of `die`'s GC block, opening one (possibly the reserve) when it is full.
    fn gc_page(&mut self, ctx: &mut FtlCtx<'_>, die: u32) -> Result<Ppn, SimError> {
        if let Some(ppn) = self.free_page(ctx, self.dies[die as usize].gc) {
            return Ok(ppn);
        }
        self.close(ctx, self.dies[die as usize].gc);
        let block = self.open_block(die, Stream::Gc)?;
        self.dies[die as usize].gc = block;
        Ok(self.layout.ppn(block, 0))
    }
}
