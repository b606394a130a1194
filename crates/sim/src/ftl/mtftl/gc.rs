//! Foreground garbage collection as task phases, run by a task that holds the metadata
//! semaphore: pick a victim on the die, move its valid units (copyback of fully valid pages
//! into the die's GC block when it is in the victim's plane; otherwise read the page and pack
//! the units that are still valid into GC pages), erase it, release it.

use super::guard::Shared;
use super::task::token;
use super::{Core, GcNandHold, OpenBlock, Phase};
use crate::flash::Cause;
use crate::ftl::mapping::Stream;
use crate::ftl::{FtlCtx, Issue};
use crate::nand::OobEntry;
use crate::rtos::{Step, TaskId};
use crate::SimError;

impl Core {
    /// Starts collecting on `die` (the task holds the metadata semaphore).
    pub(super) fn start_gc(&mut self, t: TaskId, die: u32) -> Result<Option<Step>, SimError> {
        self.count_gc_attempt(t, die)?;
        self.tasks[t].gc.die = die;
        Ok(self.go(t, Phase::GcPick))
    }

    /// Counts a victim for the current allocation, failing when GC keeps finding nothing to
    /// reclaim.
    pub(super) fn count_gc_attempt(&mut self, t: TaskId, die: u32) -> Result<(), SimError> {
        let limit = 2 * self.layout.blocks_per_die() + 2 * self.layout.dies() + 16;
        let gc = &mut self.tasks[t].gc;
        if gc.victims >= limit {
            return Err(self.bug(format!(
                "garbage collection cannot free a block (last tried die {die}) after {limit} attempts: \
                 no reclaimable space (raise ftl.over_provisioning)"
            )));
        }
        gc.victims += 1;
        Ok(())
    }

    pub(super) fn gc_phase(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        t: TaskId,
        phase: Phase,
    ) -> Result<Option<Step>, SimError> {
        use Phase::*;
        Ok(match phase {
            GcPick => {
                self.pick_victim(ctx, t)?;
                let ns = self.cfg.cpu_gc_victim_ns;
                self.then(t, GcPicked, Step::Compute(ns))
            }
            GcPicked => match self.cfg.gc_nand_hold {
                GcNandHold::Victim => self.pend_nand(t, self.victim_page_at(t, 0), GcScan),
                GcNandHold::Page => self.go(t, GcScan),
            },
            GcScan => self.scan(ctx, t)?,
            GcCopyNand => self.page_nand(t, GcCopyMapLock),
            GcCopyMapLock => self.then(t, GcCopy, Step::Pend(self.sems.map)),
            GcCopy => {
                let ns = self.cfg.cpu_command_ns + self.cfg.cpu_map_update_ns * u64::from(self.upp);
                self.then(t, GcCopyIssue, Step::Compute(ns))
            }
            GcCopyIssue => {
                self.copyback(ctx, t)?;
                self.then(t, GcCopyDone, Step::Post(self.sems.map))
            }
            GcCopyDone | GcReadDone => {
                if let Some(poll) = self.wait_with_cpu(t) {
                    return Ok(Some(poll));
                }
                self.tasks[t].op_done = false;
                let next = if phase == GcReadDone {
                    self.collect_read_units(ctx, t)
                } else {
                    GcScan
                };
                self.tasks[t].gc.page += 1;
                self.page_done(t, next)
            }
            GcReadNand => self.page_nand(t, GcReadCmd),
            GcReadCmd => {
                let ns = self.cfg.cpu_command_ns;
                self.then(t, GcReadIssue, Step::Compute(ns))
            }
            GcReadIssue => {
                let src = self.victim_page(t);
                let bytes = self.tasks[t].gc.page_units.len() as u32 * self.cfg.mapping_unit_bytes;
                self.must_hold(Shared::Nand(src))?;
                self.tasks[t].op_done = false;
                ctx.read(&[src], bytes, Issue::new(Cause::Gc).token(token(t)))?;
                self.go(t, GcReadDone)
            }
            GcProgNand => self.page_nand(t, GcProgMapLock),
            GcProgMapLock => self.then(t, GcProg, Step::Pend(self.sems.map)),
            GcProg => {
                let k = self.upp.min(self.tasks[t].gc.moving.len() as u32);
                let ns = self.cfg.cpu_command_ns + self.cfg.cpu_map_update_ns * u64::from(k);
                self.then(t, GcProgIssue, Step::Compute(ns))
            }
            GcProgIssue => {
                self.program_moving(ctx, t)?;
                self.then(t, GcProgDone, Step::Post(self.sems.map))
            }
            GcProgDone => {
                if let Some(sleep) = self.wait_released(t) {
                    return Ok(Some(sleep));
                }
                let task = &mut self.tasks[t];
                task.op_done = false;
                let scanned = task.gc.page == self.layout.pages_per_block;
                let moving = task.gc.moving.len() as u32;
                let next = if moving >= self.upp || (scanned && moving > 0) {
                    GcProgNand
                } else if scanned {
                    GcEraseNand
                } else {
                    GcScan
                };
                self.page_done(t, next)
            }
            GcEraseNand => {
                let victim = self.tasks[t].gc.victim;
                let valid = ctx.nand().block(victim).valid_units;
                if valid != 0 {
                    return Err(self.bug(format!(
                        "GC victim block {victim} still has {valid} valid units before its erase"
                    )));
                }
                self.page_nand(t, GcErase)
            }
            GcErase => {
                let ns = self.cfg.cpu_command_ns;
                self.then(t, GcEraseIssue, Step::Compute(ns))
            }
            GcEraseIssue => {
                let victim = self.tasks[t].gc.victim;
                self.must_hold(Shared::Nand(self.layout.ppn(victim, 0)))?;
                self.tasks[t].op_done = false;
                ctx.erase(victim, Issue::new(Cause::Gc).token(token(t)))?;
                self.go(t, GcEraseDone)
            }
            GcEraseDone => {
                if let Some(sleep) = self.wait_released(t) {
                    return Ok(Some(sleep));
                }
                self.tasks[t].op_done = false;
                self.must_hold(Shared::Metadata)?;
                self.blocks.release(self.tasks[t].gc.victim);
                self.post_nand(t, WriteAlloc)
            }
            _ => return Err(self.bug(format!("task {t} in phase {phase:?} inside GC"))),
        })
    }

    /// Before a page move or the erase: takes the die's NAND semaphore unless GC holds it
    /// for the whole victim.
    fn page_nand(&mut self, t: TaskId, next: Phase) -> Option<Step> {
        match self.cfg.gc_nand_hold {
            GcNandHold::Victim => self.go(t, next),
            GcNandHold::Page => self.pend_nand(t, self.victim_page_at(t, 0), next),
        }
    }

    /// After a page move: releases the die's NAND semaphore unless GC holds it for the victim.
    fn page_done(&mut self, t: TaskId, next: Phase) -> Option<Step> {
        match self.cfg.gc_nand_hold {
            GcNandHold::Victim => self.go(t, next),
            GcNandHold::Page => self.post_nand(t, next),
        }
    }

    fn victim_page(&self, t: TaskId) -> u32 {
        self.victim_page_at(t, self.tasks[t].gc.page)
    }

    fn victim_page_at(&self, t: TaskId, page: u32) -> u32 {
        self.layout.ppn(self.tasks[t].gc.victim, page)
    }

    fn pick_victim(&mut self, ctx: &mut FtlCtx<'_>, t: TaskId) -> Result<(), SimError> {
        self.must_hold(Shared::Metadata)?;
        let die = self.tasks[t].gc.die;
        let planes = self.blocks.planes_of(die);
        let victim = self
            .blocks
            .take_victim(planes, self.units_written)
            .ok_or_else(|| {
                self.bug(format!(
                    "no GC victim on die {die}: every block is free or open (raise ftl.over_provisioning)"
                ))
            })?;
        ctx.counters().record_victim(false);
        let gc = &mut self.tasks[t].gc;
        gc.victim = victim;
        gc.page = 0;
        gc.moving.clear();
        Ok(())
    }

    /// Finds the next victim page with valid units and chooses how to move it.
    fn scan(&mut self, ctx: &mut FtlCtx<'_>, t: TaskId) -> Result<Option<Step>, SimError> {
        let ppb = self.layout.pages_per_block;
        loop {
            let gc = &self.tasks[t].gc;
            if gc.page == ppb {
                let next = if gc.moving.is_empty() {
                    Phase::GcEraseNand
                } else {
                    Phase::GcProgNand
                };
                return Ok(self.go(t, next));
            }
            let src = self.victim_page(t);
            let mut units = std::mem::take(&mut self.tasks[t].gc.page_units);
            units.clear();
            units.extend(
                (0..self.upp)
                    .map(|s| self.map.unit_at(src, s))
                    .filter(|&u| ctx.nand().is_valid(u)),
            );
            let (found, full) = (!units.is_empty(), units.len() == self.upp as usize);
            self.tasks[t].gc.page_units = units;
            if !found {
                self.tasks[t].gc.page += 1;
                continue;
            }
            let copy = full && self.tasks[t].gc.moving.is_empty() && self.copyback_possible(t)?;
            let next = if copy {
                Phase::GcCopyNand
            } else {
                Phase::GcReadNand
            };
            return Ok(self.go(t, next));
        }
    }

    /// Whether the die's GC block (opened in the victim's plane when possible) can take a
    /// copyback from the victim.
    fn copyback_possible(&mut self, t: TaskId) -> Result<bool, SimError> {
        if !self.cfg.gc_copyback {
            return Ok(false);
        }
        let victim_plane = self.layout.plane_of(self.tasks[t].gc.victim);
        let gcb = self.gc_block(t, Some(victim_plane))?;
        Ok(self.layout.plane_of(gcb.block) == victim_plane)
    }

    /// The die's GC block with a free page, opening one (in `plane` if it has a free block).
    fn gc_block(&mut self, t: TaskId, plane: Option<u32>) -> Result<OpenBlock, SimError> {
        self.must_hold(Shared::Metadata)?;
        let die = self.tasks[t].gc.die;
        let ppb = self.layout.pages_per_block;
        if let Some(b) = self.gc_blocks[die as usize].filter(|b| b.next_page < ppb) {
            return Ok(b);
        }
        let plane = plane
            .filter(|&p| self.blocks.free_in_plane(p) > 0)
            .unwrap_or_else(|| self.blocks.roomiest_plane(die));
        let block = self.blocks.open(plane, Stream::Gc, 0).ok_or_else(|| {
            self.bug(format!(
                "no free block on die {die} for GC (raise ftl.over_provisioning or ftl.gc_free_blocks)"
            ))
        })?;
        let b = OpenBlock {
            block,
            next_page: 0,
        };
        self.gc_blocks[die as usize] = Some(b);
        Ok(b)
    }

    /// Takes the next page of the die's GC block.
    fn gc_page(&mut self, t: TaskId) -> Result<u32, SimError> {
        let b = self.gc_block(t, None)?;
        let die = self.tasks[t].gc.die as usize;
        self.gc_blocks[die] = Some(OpenBlock {
            next_page: b.next_page + 1,
            ..b
        });
        Ok(self.layout.ppn(b.block, b.next_page))
    }

    fn copyback(&mut self, ctx: &mut FtlCtx<'_>, t: TaskId) -> Result<(), SimError> {
        let src = self.victim_page(t);
        let dst = self.gc_page(t)?;
        self.must_hold(Shared::Nand(src))?;
        self.tasks[t].op_done = false;
        ctx.copyback(src, dst, Issue::new(Cause::Gc).token(token(t)))?;
        let mut moved = 0;
        for s in 0..self.upp {
            let (from, to) = (self.map.unit_at(src, s), self.map.unit_at(dst, s));
            if let Some(lpn) = ctx.nand().is_valid(to).then(|| ctx.nand().oob(to).lpn()) {
                let lpn = lpn.ok_or_else(|| self.bug(format!("valid slot {to} without a unit")))?;
                self.invalidate(ctx, from)?;
                self.remap(lpn, to)?;
                moved += 1;
            }
        }
        ctx.counters().record_moved(moved, false);
        self.stats.gc_copyback_pages += 1;
        self.close_if_full(ctx, dst)
    }

    /// After a victim page was read: queue its units that are still valid for packing.
    fn collect_read_units(&mut self, ctx: &mut FtlCtx<'_>, t: TaskId) -> Phase {
        self.stats.gc_read_pages += 1;
        let gc = &mut self.tasks[t].gc;
        let nand = ctx.nand();
        gc.moving
            .extend(gc.page_units.iter().copied().filter(|&u| nand.is_valid(u)));
        if gc.moving.len() >= self.upp as usize {
            Phase::GcProgNand
        } else {
            Phase::GcScan
        }
    }

    /// Programs up to a page of the queued units that are still valid into the GC block.
    fn program_moving(&mut self, ctx: &mut FtlCtx<'_>, t: TaskId) -> Result<(), SimError> {
        let upp = self.upp as usize;
        let us = self.unit_sectors as usize;
        let mut moving = std::mem::take(&mut self.tasks[t].gc.moving);
        let mut entries = std::mem::take(&mut self.tasks[t].entries);
        let mut data = std::mem::take(&mut self.tasks[t].data);
        entries.fill(OobEntry::EMPTY);
        data.fill(0);
        let take = upp.min(moving.len());
        let mut k = 0;
        for &u in &moving[..take] {
            if !ctx.nand().is_valid(u) {
                continue;
            }
            let oob = *ctx.nand().oob(u);
            if !data.is_empty() {
                data[k * us..(k + 1) * us].copy_from_slice(ctx.nand().unit_data(u));
            }
            entries[k] = OobEntry::new(oob.lpn().expect("a valid slot has a unit"), oob.seq(), 0);
            k += 1;
        }
        moving.drain(..take);
        let result = self.program_gc_page(ctx, t, &entries[..], &data, k);
        self.tasks[t].gc.moving = moving;
        self.tasks[t].entries = entries;
        self.tasks[t].data = data;
        result
    }

    /// Programs `k` packed units into the next GC page and remaps them there.
    fn program_gc_page(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        t: TaskId,
        entries: &[OobEntry],
        data: &[u64],
        k: usize,
    ) -> Result<(), SimError> {
        if k == 0 {
            // Every queued unit was overwritten meanwhile: nothing to program.
            self.tasks[t].op_done = true;
            return Ok(());
        }
        let dst = self.gc_page(t)?;
        self.must_hold(Shared::Nand(dst))?;
        for (i, e) in entries[..k].iter().enumerate() {
            let lpn = e.lpn().expect("packed units have a unit");
            let old = self.map.get(lpn).expect("a valid unit is mapped");
            self.invalidate(ctx, old)?;
            self.remap(lpn, self.map.unit_at(dst, i as u32))?;
        }
        self.tasks[t].op_done = false;
        let payload = (!data.is_empty()).then_some(data);
        ctx.program(
            &[dst],
            entries,
            payload,
            Issue::new(Cause::Gc).token(token(t)),
        )?;
        ctx.counters().record_moved(k as u64, false);
        self.stats.gc_programmed_pages += 1;
        self.stats.padded_units += (self.upp as usize - k) as u64;
        self.close_if_full(ctx, dst)
    }
}
