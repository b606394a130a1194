//! Data-block GC of the demand-paged core (fmmu.txt 4.1, 4.5): victim selection per die, one
//! victim in flight per die, copies of its valid units whose map update is conditional
//! (CondUpdate), erasing once every copy is durable and resolved; foreground and background.
//!
//! - **Read**: each victim page holding valid units is read (timed, `Cause::Gc`). The old
//!   slots stay valid and mapped meanwhile: host reads keep finding them.
//! - **Program**: on the read's completion each unit still mapped to its old slot (the GC's
//!   Lookup) is appended to the die's GC frontier page with its source slot; the map is not
//!   touched yet. After the victim's last read the GC page is programmed (padded if need be).
//! - **CondUpdate** on the program's completion, per copy: if the map still names the old
//!   slot, the old slot is invalidated and the map points at the copy (a cached entry turns
//!   dirty; the others are written back per translation page when the victim is erased, and
//!   one installed meanwhile by a host miss is cached dirty instead). If a host write or TRIM
//!   moved the entry meanwhile, the host wins: the copy is stale, its slot is invalidated and
//!   `cond_updates_lost` counts it.
//! - **Erase**: once no read or copy of the victim is pending (all its slots invalid).
//! - **Foreground**: a host write whose stripe die needs a new block while keeping no more free
//!   blocks than `gc_foreground_free_blocks` starts a victim there and goes to the next die in
//!   stripe order that can take it (an open host block, or free blocks above the watermark; the
//!   stripe moves on from that die), starting foreground GC on each die it passes at the
//!   watermark: GC is per die and does not hold up the others' writes (the paper's SSD handles
//!   host and GC requests concurrently, fmmu.txt 1 and 4.1). Only when no die can take it does
//!   the write wait (looked up, not acknowledged); later writes then queue behind it in the order
//!   their lookups finish, and the queue is retried in that order on every erase (the host
//!   interface keeps overlapping writes apart, so none overtakes an earlier write of the same
//!   sectors). A GC block becomes a victim candidate only once all its pages are durable, so a
//!   copy awaiting its CondUpdate is never moved.

use super::{token, DemandFtl, NIL, TAG_BACKGROUND_GC, TAG_GC_READ};
use crate::flash::Cause;
use crate::ftl::mapping::{BlockState, Stream, UNMAPPED};
use crate::ftl::twolevel::victim_request_weights;
use crate::ftl::{FtlCtx, Issue, MapQueue};
use crate::nand::{BlockId, Ppn, UnitAddr};
use crate::SimError;

/// The victim being collected on a die.
#[derive(Debug, Clone, Copy)]
pub(super) struct Victim {
    block: BlockId,
    /// Victim page reads not completed.
    reads: u32,
    /// Copies placed whose CondUpdate has not run.
    copies: u32,
    background: bool,
}

/// A victim page read in flight.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct GcRead {
    die: u32,
    ppn: Ppn,
}

/// A programmed GC page awaiting its completion: the source slot of each copy
/// (`UNMAPPED` for a padded slot); `ppn` is `NIL` while the entry is free.
#[derive(Debug, Clone)]
pub(super) struct CopyPage {
    pub(super) ppn: Ppn,
    pub(super) sources: Vec<UnitAddr>,
}

impl DemandFtl {
    fn free_blocks(&self, die: u32) -> u32 {
        self.blocks.free_in_die(die, false)
    }

    /// Whether a block is a victim whose collection is under way (for the block checks).
    pub(super) fn collecting(&self, block: BlockId) -> bool {
        self.victims.iter().flatten().any(|v| v.block == block)
    }

    /// Whether a valid slot nobody maps is a GC copy awaiting its CondUpdate (for the checks).
    pub(super) fn copy_pending(&self, unit: UnitAddr) -> bool {
        let ppn = self.per_page.quotient(unit);
        let slot = self.per_page.remainder(unit) as usize;
        self.copy_pages
            .iter()
            .any(|c| c.ppn == ppn && c.sources[slot] != UNMAPPED)
    }

    /// Whether a victim of `die` still has page reads in flight.
    fn reading(&self, die: u32) -> bool {
        self.victims[die as usize].iter().any(|v| v.reads > 0)
    }

    /// The die a host write goes to now: the host stripe's die if it can take the write
    /// without waiting for GC, else the next die in stripe order that can (the stripe moves
    /// on to it); `None` when no die can, or writes already wait (they keep their order).
    pub(super) fn host_placement_die(
        &mut self,
        ctx: &mut FtlCtx<'_>,
    ) -> Result<Option<u32>, SimError> {
        if !self.stalled.is_empty() {
            return Ok(None);
        }
        for skipped in 0..self.layout.dies() {
            let die = self.layout.striped_die(self.cursor.wrapping_add(skipped));
            if self.takes_host_write(ctx, die)? {
                self.cursor = self.cursor.wrapping_add(skipped);
                return Ok(Some(die));
            }
        }
        Ok(None)
    }

    /// Whether `die` can take a host write now: its host frontier has room, or it keeps more
    /// free blocks than the foreground watermark once it opens one. Otherwise foreground GC
    /// starts there (victims without valid units are erased at once).
    fn takes_host_write(&mut self, ctx: &mut FtlCtx<'_>, die: u32) -> Result<bool, SimError> {
        if self.frontiers[self.frontier_index(Stream::Host, die)].open {
            return Ok(true);
        }
        let watermark = self.cfg.gc_foreground_free_blocks;
        let limit = 4 * self.layout.blocks_per_die() + 16;
        while self.free_blocks(die) <= watermark && self.victims[die as usize].is_empty() {
            let runs = self.fruitless_victims[die as usize];
            if runs == limit || !self.collect(ctx, die, false)? {
                return Err(self.bug(format!(
                    "garbage collection on die {die} cannot free a block after {runs} victims: \
                     no reclaimable space (raise ftl.over_provisioning)"
                )));
            }
            self.stats.foreground_gc_runs += 1;
            self.fruitless_victims[die as usize] += 1;
        }
        Ok(self.free_blocks(die) > watermark)
    }

    /// Background GC on an idle host, one victim per die at a time.
    pub(super) fn background_collect(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        die: u32,
    ) -> Result<(), SimError> {
        if self.background[die as usize]
            || !self.victims[die as usize].is_empty()
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

    /// Starts collecting one data victim on `die` (the reads of its pages holding valid
    /// units); false when there is none worth collecting.
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
        let valid = ctx.nand().block(victim).valid_units;
        if background && !self.worth_collecting(die, valid) {
            self.blocks.close(victim, valid, self.units_written);
            return Ok(false);
        }
        ctx.counters().record_victim(background);
        let (host, gc) = self.request_weights(valid);
        ctx.set_request_weights(host, gc);
        let mut reads = 0;
        for page in 0..self.layout.pages_per_block {
            let ppn = self.layout.ppn(victim, page);
            let valid = (0..self.upp)
                .filter(|&s| ctx.nand().is_valid(ppn * self.upp + s))
                .count() as u32;
            if valid == 0 {
                continue;
            }
            let index = self.alloc_gc_read(GcRead { die, ppn });
            let issue = Issue::new(Cause::Gc).token(token(TAG_GC_READ, u64::from(index)));
            ctx.read(&[ppn], valid * self.unit_bytes(), issue)?;
            reads += 1;
        }
        self.victims[die as usize].push(Victim {
            block: victim,
            reads,
            copies: 0,
            background,
        });
        self.erase_finished_victims(ctx, die)?;
        Ok(true)
    }

    /// Weights of the map unit's host and GC request queues while a victim with `valid`
    /// valid units is collected ([`victim_request_weights`] of `wrr_request_weight`).
    pub(super) fn request_weights(&self, valid: u32) -> (u32, u32) {
        let units = self.layout.pages_per_block * self.upp;
        victim_request_weights(self.cfg.wrr_request_weight, valid, units)
    }

    fn alloc_gc_read(&mut self, r: GcRead) -> u32 {
        match self.free_gc_reads.pop() {
            Some(i) => {
                self.gc_reads[i as usize] = r;
                i
            }
            None => {
                self.gc_reads.push(r);
                (self.gc_reads.len() - 1) as u32
            }
        }
    }

    /// The in-flight victim of `die` holding page `ppn`.
    fn victim_of(&mut self, die: u32, ppn: Ppn) -> Result<&mut Victim, SimError> {
        let block = self.layout.block_of(ppn);
        match self.victims[die as usize]
            .iter()
            .position(|v| v.block == block)
        {
            Some(i) => Ok(&mut self.victims[die as usize][i]),
            None => Err(self.bug(format!("GC of page {ppn} without its victim"))),
        }
    }

    /// A victim page was read: each unit still mapped there is copied to the GC page (its
    /// map update waits for the program). After the victim's last read, a GC page left part
    /// full is filled by the next victim if the die still needs one, else programmed as it
    /// is: no copy waits in the GC page while no victim of the die is being read.
    pub(super) fn gc_read_done(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        index: u32,
    ) -> Result<(), SimError> {
        let GcRead { die, ppn } = self.gc_reads[index as usize];
        self.free_gc_reads.push(index);
        ctx.set_map_queue(MapQueue::GcRequest);
        let background = self.victim_of(die, ppn)?.background;
        let mut copied = 0;
        let upp = self.upp;
        for unit in (0..upp).map(|s| ppn * upp + s) {
            if !ctx.nand().is_valid(unit) {
                continue;
            }
            let oob = *ctx.nand().oob(unit);
            let lpn = oob
                .lpn()
                .filter(|&l| self.map.get(l) == Some(unit))
                .ok_or_else(|| self.bug(format!("valid victim slot {unit} is not mapped")))?;
            if ctx.payloads() {
                self.gc_data.copy_from_slice(ctx.nand().unit_data(unit));
            }
            // Counted before the append: a full page's program may resolve the copy at once.
            self.victim_of(die, ppn)?.copies += 1;
            self.append_copy(ctx, die, lpn, oob.seq(), unit)?;
            copied += 1;
        }
        ctx.counters().record_moved(copied, background);
        let v = self.victim_of(die, ppn)?;
        v.reads -= 1;
        if v.reads == 0 {
            let watermark = if background {
                self.cfg.gc_background_free_blocks
            } else {
                self.cfg.gc_foreground_free_blocks
            };
            if self.free_blocks(die) <= watermark && self.next_victim_fits(die) {
                self.collect(ctx, die, background)?;
            }
            if !self.reading(die) {
                self.program_gc_page(ctx, die)?;
            }
        }
        self.erase_finished_victims(ctx, die)
    }

    /// Whether a background victim with `valid` units frees more than its copies take: the
    /// pages they fill (the GC page being programmed, padded, after its victim) stay fewer
    /// than a block, or they join a part-full GC page.
    fn worth_collecting(&self, die: u32, valid: u32) -> bool {
        let fr = &self.frontiers[self.frontier_index(Stream::Gc, die)];
        let filled = if fr.open { fr.filled } else { 0 };
        (filled + valid).div_ceil(self.upp) < self.layout.pages_per_block
    }

    /// Whether the GC page of `die` is part full and the next victim's valid units fit in
    /// what its GC block has left (so that the victims whose copies wait there need no
    /// further free block before they are erased).
    fn next_victim_fits(&self, die: u32) -> bool {
        let fr = &self.frontiers[self.frontier_index(Stream::Gc, die)];
        if !fr.open || fr.filled == 0 {
            return false;
        }
        let room = (self.layout.pages_per_block - fr.page) * self.upp - fr.filled;
        self.blocks
            .fewest_valid(self.blocks.planes_of(die))
            .is_some_and(|valid| valid <= room)
    }

    /// Programs the GC page of `die` if it holds copies (padding its empty slots).
    fn program_gc_page(&mut self, ctx: &mut FtlCtx<'_>, die: u32) -> Result<(), SimError> {
        let f = self.frontier_index(Stream::Gc, die);
        if self.frontiers[f].open && self.frontiers[f].filled > 0 {
            self.program_frontier(ctx, f)?;
        }
        Ok(())
    }

    /// A GC page is durable: the CondUpdate of each of its copies (see the module doc).
    pub(super) fn gc_program_done(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        index: u32,
        die: u32,
    ) -> Result<(), SimError> {
        ctx.set_map_queue(MapQueue::GcRequest);
        let ppn = std::mem::replace(&mut self.copy_pages[index as usize].ppn, NIL);
        let sources = std::mem::take(&mut self.copy_pages[index as usize].sources);
        let result = self.cond_update_page(ctx, die, ppn, &sources);
        self.copy_pages[index as usize].sources = sources;
        self.free_copy_pages.push(index);
        result?;
        self.erase_finished_victims(ctx, die)
    }

    fn cond_update_page(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        die: u32,
        ppn: Ppn,
        sources: &[UnitAddr],
    ) -> Result<(), SimError> {
        for (slot, &old) in sources.iter().enumerate() {
            if old == UNMAPPED {
                continue;
            }
            let copy = ppn * self.upp + slot as u32;
            let lpn = ctx.nand().oob(copy).lpn().ok_or_else(|| {
                self.bug(format!("GC copy in slot {copy} without a logical unit"))
            })?;
            if self.map.get(lpn) == Some(old) {
                self.map.invalidate_programmed(ctx, &mut self.blocks, old)?;
                self.map.set(lpn, copy);
                if !self.updated(ctx, lpn) {
                    self.gc_uncached.push(die, lpn);
                }
            } else {
                // The host rewrote (or trimmed) the unit while its copy was in flight.
                self.map
                    .invalidate_programmed(ctx, &mut self.blocks, copy)?;
                self.stats.cond_updates_lost += 1;
            }
            self.victim_of(die, self.per_page.quotient(old))?.copies -= 1;
        }
        Ok(())
    }

    /// Erases the victims of `die` none of whose reads or copies is pending (none of their
    /// slots is then valid), after writing back the entries moved while not cached, and lets
    /// the writes waiting for a block try again.
    fn erase_finished_victims(&mut self, ctx: &mut FtlCtx<'_>, die: u32) -> Result<(), SimError> {
        let mut erased = false;
        while let Some(i) = self.victims[die as usize]
            .iter()
            .position(|v| v.reads == 0 && v.copies == 0)
        {
            let v = self.victims[die as usize].swap_remove(i);
            let mut uncached = self.gc_uncached.take(die);
            let result = self.write_back_uncached(ctx, &mut uncached);
            self.gc_uncached.restore(die, uncached);
            result?;
            let tok = if v.background {
                token(TAG_BACKGROUND_GC, u64::from(die))
            } else {
                0
            };
            ctx.erase(v.block, Issue::new(Cause::Gc).token(tok))?;
            self.blocks.release(v.block);
            erased = true;
        }
        if erased {
            self.retry_stalled(ctx)?;
            // Foreground GC ending on an idle host hands over to background GC.
            self.background_collect(ctx, die)?;
        }
        Ok(())
    }

    /// A GC block is closed (a victim candidate) once all its pages are durable.
    pub(super) fn close_durable_gc_block(&mut self, ctx: &mut FtlCtx<'_>, block: BlockId) {
        let f = self.frontier_index(Stream::Gc, self.layout.die_of(block));
        let assembling = self.frontiers[f].open && self.frontiers[f].block == block;
        if !assembling
            && matches!(
                self.blocks.state(block),
                BlockState::Open {
                    stream: Stream::Gc,
                    ..
                }
            )
            && self.blocks.durable_pages(block) == self.layout.pages_per_block
        {
            let valid = ctx.nand().block(block).valid_units;
            self.blocks.close(block, valid, self.units_written);
        }
    }

    /// Host writes queued for a free block are placed again in their order (one that still
    /// finds no die queues again, and so do those behind it). Each was looked up already;
    /// its entry may have been evicted meanwhile (see `accept_write`).
    fn retry_stalled(&mut self, ctx: &mut FtlCtx<'_>) -> Result<(), SimError> {
        if self.stalled.is_empty() {
            return Ok(());
        }
        let mut queue = std::mem::take(&mut self.stalled_spare);
        std::mem::swap(&mut queue, &mut self.stalled);
        // The writes reach the map unit now, as host requests.
        let map_queue = ctx.map_queue();
        ctx.set_map_queue(MapQueue::HostRequest);
        self.placing_stalled = true;
        let mut result = Ok(());
        while let Some(sub) = queue.pop_front() {
            result = self.accept_write(ctx, &sub);
            if result.is_err() {
                break;
            }
        }
        self.placing_stalled = false;
        queue.clear();
        self.stalled_spare = queue;
        ctx.set_map_queue(map_queue);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::super::exec_time::Scheme;
    use super::DemandFtl;
    use crate::config::ExperimentConfig;
    use crate::ftl::{Ftl, MapUnitArbiter};

    #[test]
    fn request_weights_follow_the_victims_valid_share() {
        let config = ExperimentConfig::with_sets(
            "default",
            &[
                "ftl.name=\"fmmu\"",
                "geometry.pages_per_block=16",
                "geometry.page_bytes=4096",
                "ftl.wrr_request_weight=8",
            ],
        )
        .unwrap();
        let fmmu = DemandFtl::two_level(&config, Scheme::Fmmu).unwrap();
        // 16 units per block: (host, GC) = 8 split by valid / 16, at least 1 each.
        let weights: Vec<_> = [0, 1, 4, 8, 12, 16, 99]
            .iter()
            .map(|&v| fmmu.request_weights(v))
            .collect();
        assert_eq!(
            weights,
            [(7, 1), (7, 1), (6, 2), (4, 4), (2, 6), (1, 7), (1, 7)]
        );
    }

    #[test]
    fn responses_outweigh_each_request_queue_by_default() {
        // fmmu.txt 4.6: "Response queues have a higher weight than request queues".
        let config = ExperimentConfig::with_sets("default", &["ftl.name=\"fmmu\""]).unwrap();
        let fmmu = DemandFtl::two_level(&config, Scheme::Fmmu).unwrap();
        let MapUnitArbiter::WeightedRoundRobin(w) = fmmu.map_unit_arbiter() else {
            panic!("fmmu's default arbiter is weighted round robin");
        };
        let units = config.geometry.pages_per_block;
        for valid in [0, units / 2, units] {
            let (host, gc) = fmmu.request_weights(valid);
            assert!(w.response > host && w.response > gc, "{w:?} {host} {gc}");
        }
    }
}
