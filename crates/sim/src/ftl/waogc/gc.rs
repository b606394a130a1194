//! WAO-GC's lazy, partial garbage collection on each die: the reserved block opens and a
//! greedy victim is chosen only when a die's open block is full and one free block is left;
//! then each host page write on that die is followed by one partial step (up to c copies, or
//! the victim's erase).

use super::config::steps_for;
use super::config::StepScope;
use super::{Collection, WaoGc};
use crate::flash::{Cause, CmdId, NIL};
use crate::ftl::mapping::Stream;
use crate::ftl::{FtlCtx, Issue};
use crate::nand::{OobEntry, Ppn};
use crate::SimError;

impl WaoGc {
    /// The free page of `die`'s open block a host write goes to, opening a block when the open
    /// one is full, and the reserved block (starting a collection) when it is the last free one.
    pub(super) fn host_page(&mut self, ctx: &mut FtlCtx<'_>, die: u32) -> Result<Ppn, SimError> {
        if let Some(ppn) = self.free_page(ctx, die) {
            return Ok(ppn);
        }
        let open = self.dies[die as usize].open;
        if open != NIL {
            let valid = ctx.nand().block(open).valid_units;
            self.blocks.close(open, valid, self.pages_written);
            self.dies[die as usize].open = NIL;
        }
        if self.dies[die as usize].collection.is_some() {
            // The collection outlived the reserved block: the sizing of start_collection
            // makes this impossible.
            return Err(self.bug(format!(
                "die {die} has no free page: its open block filled before its victim was erased"
            )));
        }
        let free = self.blocks.free_in_die(die, false);
        let plane = self.blocks.roomiest_plane(die);
        let block = self
            .blocks
            .open(plane, Stream::Host, 0)
            .ok_or_else(|| self.bug(format!("die {die} has no free block")))?;
        self.dies[die as usize].open = block;
        if free == 1 {
            self.start_collection(ctx, die)?;
        }
        Ok(self.layout.ppn(block, 0))
    }

    /// The next page of `die`'s open block, if it has one left.
    fn free_page(&self, ctx: &FtlCtx<'_>, die: u32) -> Option<Ppn> {
        let open = self.dies[die as usize].open;
        if open == NIL {
            return None;
        }
        let next = ctx.nand().block(open).write_ptr;
        (next < self.layout.pages_per_block).then(|| self.layout.ppn(open, next))
    }

    /// Chooses the greedy victim of `die` now that its reserved block is open. Its v valid
    /// pages and the n = ceil(v / c) + 1 writes of its collection must fit the reserved block;
    /// when they do not (eq. 12 bounds v by ceil(λ P) only on average), the collection copies
    /// more pages per step, the fewest that fit, and the shortfall is counted.
    fn start_collection(&mut self, ctx: &mut FtlCtx<'_>, die: u32) -> Result<(), SimError> {
        let planes = self.blocks.planes_of(die);
        let victim = self
            .blocks
            .take_victim(planes, self.pages_written)
            .ok_or_else(|| self.bug(format!("die {die} has no closed block to collect")))?;
        let valid = ctx.nand().block(victim).valid_units;
        let room = self.layout.pages_per_block;
        let c = self.cfg.copies_per_step;
        let mut copies = c;
        if valid + steps_for(valid, c) > room {
            self.stats.collections_over_bound += 1;
            self.stats.writes_without_free_page += u64::from(valid + steps_for(valid, c) - room);
            copies = (c..=valid)
                .find(|&k| valid + steps_for(valid, k) <= room)
                .ok_or_else(|| {
                    self.bug(format!(
                        "the victim on die {die} holds {valid} valid pages of {room}: the \
                         reserved block cannot take them (lower ftl.logical_ratio)"
                    ))
                })?;
        }
        self.stats.max_victim_valid_pages = self.stats.max_victim_valid_pages.max(valid);
        ctx.counters().record_victim(false);
        self.dies[die as usize].collection = Some(Collection {
            victim,
            scan: 0,
            copies_per_step: copies,
            steps: 0,
        });
        Ok(())
    }

    /// One partial step on `die` after the host program `write`: up to the collection's copies
    /// per step, or, when its victim holds no valid page any more, the victim's erase (which
    /// ends the collection). The step's commands start once `write` completed, so a command
    /// that does not wait for others (an erase) cannot overtake the write on the die.
    pub(super) fn partial_step(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        die: u32,
        write: CmdId,
    ) -> Result<(), SimError> {
        let Some(mut col) = self.dies[die as usize].collection else {
            return Ok(());
        };
        if self.cfg.gc_step_scope == StepScope::Device {
            self.step_hold.clear();
        }
        let mut copied = 0;
        while copied < col.copies_per_step {
            let Some(src) = self.next_valid(ctx, &mut col) else {
                break;
            };
            self.copy_page(ctx, die, src, write)?;
            copied += 1;
        }
        col.steps += 1;
        self.record_step(copied);
        if copied > 0 {
            ctx.counters().record_moved(u64::from(copied), false);
            self.dies[die as usize].collection = Some(col);
            return Ok(());
        }
        let erase = ctx.erase(col.victim, Issue::new(Cause::Gc).after(&[write]))?;
        self.hold_for_device(erase);
        self.blocks.release(col.victim);
        self.dies[die as usize].collection = None;
        self.stats.max_steps_per_collection = self.stats.max_steps_per_collection.max(col.steps);
        Ok(())
    }

    /// With device scope, later host commands wait for `cmd`, a last command of the step.
    fn hold_for_device(&mut self, cmd: CmdId) {
        if self.cfg.gc_step_scope == StepScope::Device {
            self.step_hold.push(cmd);
        }
    }

    fn record_step(&mut self, copied: u32) {
        let s = &mut self.stats;
        s.partial_steps += 1;
        if copied == 0 {
            s.erase_steps += 1;
        } else {
            s.copy_steps += 1;
        }
        let last = s.steps_by_copies.len() - 1;
        s.steps_by_copies[(copied as usize).min(last)] += 1;
        s.max_copies_in_step = s.max_copies_in_step.max(copied);
    }

    /// The next valid page of the victim from the collection's scan position.
    fn next_valid(&self, ctx: &FtlCtx<'_>, col: &mut Collection) -> Option<Ppn> {
        while col.scan < self.layout.pages_per_block {
            let ppn = self.layout.ppn(col.victim, col.scan);
            col.scan += 1;
            if ctx.nand().is_valid(ppn) {
                return Some(ppn);
            }
        }
        None
    }

    /// Copies valid page `src` of the victim to the next page of `die`'s open (reserved) block,
    /// keeping its OOB sequence number, with copyback when enabled and within one plane.
    fn copy_page(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        die: u32,
        src: Ppn,
        write: CmdId,
    ) -> Result<(), SimError> {
        let oob = *ctx.nand().oob(src);
        let lpn = oob
            .lpn()
            .ok_or_else(|| self.bug(format!("valid page {src} without a logical page")))?;
        let dst = self.free_page(ctx, die).ok_or_else(|| {
            self.bug(format!(
                "die {die}: no free page for a GC copy in the reserved block"
            ))
        })?;
        let same_plane = self.layout.plane_of(self.layout.block_of(src))
            == self.layout.plane_of(self.layout.block_of(dst));
        if self.cfg.gc_copyback && same_plane {
            let copy = ctx.copyback(src, dst, Issue::new(Cause::Gc).after(&[write]))?;
            self.hold_for_device(copy);
            ctx.invalidate(src)?;
            self.stats.copyback_pages += 1;
        } else {
            if ctx.payloads() {
                self.gc_data.copy_from_slice(ctx.nand().unit_data(src));
            }
            let after_write = [write];
            let issue = Issue::new(Cause::Gc).after(&after_write);
            let read = ctx.read(&[src], self.page_bytes(), issue)?;
            ctx.invalidate(src)?;
            let data = ctx.payloads().then_some(self.gc_data.as_slice());
            let program = ctx.program(
                &[dst],
                &[OobEntry::new(lpn, oob.seq(), 0)],
                data,
                Issue::new(Cause::Gc).after(&[read]),
            )?;
            self.hold_for_device(program);
        }
        self.map.set(lpn, dst);
        Ok(())
    }
}
