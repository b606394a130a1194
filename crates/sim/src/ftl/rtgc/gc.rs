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

/// Callback tokens: a collector copy's program completed on a die, a collector victim's
/// erase completed.
const COPY_DONE: u64 = 1 << 32;
const ERASE_DONE: u64 = 2 << 32;

/// A collector job's reclamation under way on a die: one page copy in flight at a time (a
/// copy is RTGC's atomic unit; between copies, requests with earlier deadlines go first).
#[derive(Debug, Clone, Copy)]
pub(super) struct Reclaim {
    pub victim: BlockId,
    /// Next page of the victim to look at.
    scan: u32,
    pub slot: u32,
    deadline_ns: u64,
    copied: u32,
    erase_issued: bool,
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

    /// Queues job `slot`'s reclamation on `die`; it starts when the die's current one ends.
    pub(super) fn queue_reclaim(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        die: u32,
        slot: u32,
    ) -> Result<(), SimError> {
        self.queued[die as usize].push_back(slot);
        if self.active[die as usize].is_none() {
            self.start_next(ctx, die)?;
        }
        Ok(())
    }

    /// Starts the next queued reclamation of `die` (skipping, and counting, those whose die has
    /// no victim with garbage or no room for its copies).
    fn start_next(&mut self, ctx: &mut FtlCtx<'_>, die: u32) -> Result<(), SimError> {
        while let Some(slot) = self.queued[die as usize].pop_front() {
            if self.victim_fits(ctx, die).is_none() {
                self.stats.dies_skipped_no_room += 1;
                self.job_die_done(ctx, slot)?;
                continue;
            }
            let victim = self.take_victim(die)?;
            ctx.counters().record_victim(false);
            self.active[die as usize] = Some(Reclaim {
                victim,
                scan: 0,
                slot,
                deadline_ns: self.jobs[slot as usize].deadline_ns,
                copied: 0,
                erase_issued: false,
            });
            return self.reclaim_step(ctx, die);
        }
        Ok(())
    }

    /// The next step of `die`'s reclamation: copy its victim's next valid page, or erase it.
    fn reclaim_step(&mut self, ctx: &mut FtlCtx<'_>, die: u32) -> Result<(), SimError> {
        let Some(mut r) = self.active[die as usize] else {
            return Ok(());
        };
        match self.next_valid(ctx, &mut r) {
            Some(src) => {
                self.copy_page(ctx, die, src, r.deadline_ns, COPY_DONE | u64::from(die))?;
                ctx.counters().record_moved(1, false);
                r.copied += 1;
            }
            None => {
                let issue = Issue::new(Cause::Gc)
                    .deadline(r.deadline_ns)
                    .token(ERASE_DONE | u64::from(r.victim));
                ctx.erase(r.victim, issue)?;
                self.pending_erase[r.victim as usize] = true;
                r.erase_issued = true;
            }
        }
        self.active[die as usize] = Some(r);
        Ok(())
    }

    /// A collector reclamation behind a write that needs space: its remaining copies and its
    /// erase are issued now and its victim is free at once (the program that takes it waits
    /// for the erase on the block).
    fn finish_reclaim_now(&mut self, ctx: &mut FtlCtx<'_>, die: u32) -> Result<bool, SimError> {
        let Some(r) = self.active[die as usize].filter(|r| !r.erase_issued) else {
            return Ok(false);
        };
        while !self.active[die as usize].is_some_and(|r| r.erase_issued) {
            self.reclaim_step(ctx, die)?;
        }
        self.pending_erase[r.victim as usize] = false;
        self.blocks.release(r.victim);
        Ok(true)
    }

    /// The next valid page of a reclamation's victim from its scan position.
    fn next_valid(&self, ctx: &FtlCtx<'_>, r: &mut Reclaim) -> Option<Ppn> {
        while r.scan < self.layout.pages_per_block {
            let ppn = self.layout.ppn(r.victim, r.scan);
            r.scan += 1;
            if ctx.nand().is_valid(ppn) {
                return Some(ppn);
            }
        }
        None
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
        if self.finish_reclaim_now(ctx, die)? {
            return Ok(());
        }
        if self.victim_fits(ctx, die).is_none() {
            // The garbage may sit in a collector victim whose erase is still queued: erased
            // in the functional state already, it can be used now.
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
        let block = (first..first + per_die).find(|&b| self.pending_erase[b as usize])?;
        self.pending_erase[block as usize] = false;
        self.blocks.release(block);
        Some(block)
    }

    /// A collector command with a callback completed: after a copy, the die's next step;
    /// after an erase, the victim is free (unless a write took it early) and the reclamation
    /// is done.
    pub(super) fn collector_done(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        token: u64,
    ) -> Result<(), SimError> {
        let low = token as u32;
        match token & !u64::from(u32::MAX) {
            COPY_DONE if low < self.layout.dies() => {
                if self.active[low as usize].is_some_and(|r| !r.erase_issued) {
                    self.reclaim_step(ctx, low)?;
                }
                Ok(())
            }
            ERASE_DONE if low < self.layout.blocks() => self.reclaim_erased(ctx, low),
            _ => Err(self.bug(format!("completion of unknown token {token:#x}"))),
        }
    }

    fn reclaim_erased(&mut self, ctx: &mut FtlCtx<'_>, block: BlockId) -> Result<(), SimError> {
        let die = self.layout.die_of(block);
        let r = self.active[die as usize]
            .filter(|r| r.victim == block && r.erase_issued)
            .ok_or_else(|| self.bug(format!("erase of block {block}: no reclamation of it")))?;
        if self.pending_erase[block as usize] {
            self.pending_erase[block as usize] = false;
            self.blocks.release(block);
        }
        self.active[die as usize] = None;
        self.record_reclaimed(self.layout.pages_per_block - r.copied);
        self.job_die_done(ctx, r.slot)?;
        self.start_next(ctx, die)
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
                self.copy_page(ctx, die, src, deadline_ns, 0)?;
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
        token: u64,
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
            issue.token(token).after(&[read]),
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
