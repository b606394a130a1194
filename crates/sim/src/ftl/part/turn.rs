//! The write set's work: per channel one flash operation at a time, chosen
//! earliest-deadline-first among the write buffer's pages, GC steps (a victim page's read,
//! its program, an erase) and the encoding job (the previous group's parity programs and the
//! parity die's erases), and the rotation of the write set from way to way.
//!
//! The encoding job is eq. 3's task: released when a group's data ways are written, with the
//! deadline `release + T^e`, T^e measured as the time the group took to fill (k P pages at
//! the tasks' write rate: eq. 3's `T^w k P / w`). Host programs with earlier deadlines go
//! first, so parity is preempted between operations (a flash operation is not preemptible);
//! a host page waits for at most one parity program, not a block of them. A page without a
//! deadline counts as due at its acceptance (the buffer drains first; parity fills the write
//! dies' idle time). The write set rotates to the next
//! group's way 0 at once; should its data ways be written before the previous parity job
//! finished, the rotation waits for it (`parity_rotation_waits`). One command per channel is
//! in flight, so the parity die and the write die of a channel are never busy together: a
//! read of a page on the write die is rebuilt (open group: running parity; sealing group:
//! its parity in RAM; closed group: the parity die, idle then), or, while the parity die
//! programs, read from the idle write die.

use std::cmp::Reverse;

use super::{GroupState, PartFtl, NONE};
use crate::flash::Cause;
use crate::ftl::{FtlCtx, Issue};
use crate::nand::{OobEntry, Ppn, OOB_FLAG_TRANSLATION};
use crate::SimError;

const TAG_SHIFT: u32 = 56;
const TAG_HOST_PROGRAM: u64 = 1;
const TAG_PARITY: u64 = 2;
const TAG_GC_READ: u64 = 3;
const TAG_GC_PROGRAM: u64 = 4;
const TAG_ERASE: u64 = 5;

fn token(tag: u64, channel: u32) -> u64 {
    (tag << TAG_SHIFT) | u64::from(channel)
}

/// What a write die does next.
enum Step {
    /// Program the buffered page in this slot.
    Host(u32),
    Erase(u32),
    Copy,
    Parity,
}

/// The encoding job's relative deadline is the sealed group's fill time, at least this.
const MIN_HORIZON_NS: u64 = 1_000_000;

impl PartFtl {
    /// Gives every idle write die its next operation, rotating the write set whenever the
    /// current way's turn is over.
    pub(super) fn dispatch(&mut self, ctx: &mut FtlCtx<'_>) -> Result<(), SimError> {
        loop {
            for channel in 0..self.channels {
                if !self.busy[channel as usize] {
                    self.step_chip(ctx, channel)?;
                }
            }
            if self.sealing_done(ctx) {
                self.finish_sealing();
                continue;
            }
            if !self.turn_over(ctx) {
                if self.write_way + 2 == self.ways
                    && self.sealing.is_some()
                    && self.data_turn_over(ctx)
                    && !self.waiting_for_parity
                {
                    self.waiting_for_parity = true;
                    self.stats.parity_rotation_waits += 1;
                }
                return Ok(());
            }
            self.waiting_for_parity = false;
            self.rotate(ctx)?;
        }
    }

    /// The open block of the write die on `channel` and its write pointer.
    fn target(&self, ctx: &FtlCtx<'_>, channel: u32) -> (u32, u32) {
        let block = self.block(self.die(channel, self.write_way), self.open_group);
        (block, ctx.nand().block(block).write_ptr)
    }

    /// Valid pages of the victim's block on the write die of `channel` (to copy this turn).
    fn victim_valid(&self, ctx: &FtlCtx<'_>, channel: u32) -> u32 {
        match self.victim {
            Some(v) => {
                let block = self.block(self.die(channel, self.write_way), v);
                ctx.nand().block(block).valid_units
            }
            _ => 0,
        }
    }

    /// A block of an erasing group on the write die of `channel`, if one is still due.
    fn erase_due(&self, channel: u32) -> Option<u32> {
        let die = self.die(channel, self.write_way);
        self.erasing
            .iter()
            .map(|&g| self.block(die, g))
            .find(|&b| self.needs_erase[b as usize])
    }

    /// The buffered page with the earliest deadline (then the oldest): its slot and deadline.
    /// Valid after [`Self::drop_stale_pending`].
    fn earliest_pending(&self) -> Option<(u32, u64)> {
        self.pending_order
            .peek()
            .map(|&Reverse((deadline, _, slot))| (slot, deadline))
    }

    /// Drops the entries of `pending_order` that no longer describe a pending page (see the
    /// field), so that its top is the page to program next.
    fn drop_stale_pending(&mut self) {
        while let Some(&Reverse((_, seq, slot))) = self.pending_order.peek() {
            let s = &self.slots[slot as usize];
            if s.pending && s.seq == seq {
                return;
            }
            self.pending_order.pop();
        }
    }

    /// GC's deadline: the earliest of the writes waiting for buffer room.
    fn gc_deadline(&self) -> u64 {
        self.waiting
            .iter()
            .map(|w| w.deadline_ns)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// The encoding job's relative deadline, released at `now`: the time its group took to
    /// fill (eq. 3's T^e, measured).
    fn horizon_ns(&self, now: u64) -> u64 {
        now.saturating_sub(self.group_opened_ns).max(MIN_HORIZON_NS)
    }

    /// The write die's next step and its deadline.
    fn data_step(&self, ctx: &FtlCtx<'_>, channel: u32) -> Option<(Step, u64)> {
        let (_, written) = self.target(ctx, channel);
        let room = self.pages_per_block - written;
        let erase = self.erase_due(channel);
        let to_copy = self.victim_valid(ctx, channel);
        // Host pages may use the block only beyond the room the victim's pages need.
        let host = (room > to_copy).then(|| self.earliest_pending()).flatten();
        let gc_due = erase.is_some() || to_copy > 0;
        let gc_deadline = self.gc_deadline();
        match host {
            Some((i, deadline)) if !gc_due || deadline <= gc_deadline => {
                let deadline = if deadline == u64::MAX {
                    self.slots[i as usize].accepted_ns
                } else {
                    deadline
                };
                Some((Step::Host(i), deadline))
            }
            _ if erase.is_some() => erase.map(|b| (Step::Erase(b), gc_deadline)),
            _ if to_copy > 0 => Some((Step::Copy, gc_deadline)),
            _ => None,
        }
    }

    /// A block of an erasing group on the parity die of `channel`, if one is still due.
    fn parity_erase_due(&self, channel: u32) -> Option<u32> {
        let die = self.die(channel, self.parity_way());
        self.erasing
            .iter()
            .map(|&g| self.block(die, g))
            .find(|&b| self.needs_erase[b as usize])
    }

    /// The encoding job's next step on the parity die of `channel` (its erases first).
    fn seal_step(&self, ctx: &FtlCtx<'_>, channel: u32) -> Option<(Step, u64)> {
        let group = self.sealing?;
        if let Some(b) = self.parity_erase_due(channel) {
            return Some((Step::Erase(b), self.sealing_deadline_ns));
        }
        let block = self.block(self.die(channel, self.parity_way()), group);
        (ctx.nand().block(block).write_ptr < self.pages_per_block)
            .then_some((Step::Parity, self.sealing_deadline_ns))
    }

    /// Earliest deadline first between the write die's step and the encoding job's (a tie
    /// goes to the write die).
    fn choose(&self, ctx: &FtlCtx<'_>, channel: u32) -> Option<Step> {
        match (self.data_step(ctx, channel), self.seal_step(ctx, channel)) {
            (Some((d, dd)), Some((p, pd))) => Some(if pd < dd { p } else { d }),
            (d, p) => d.or(p).map(|(step, _)| step),
        }
    }

    /// The encoding job is done: every parity page of the sealing group programmed, the
    /// parity dies' erases done, nothing of it in flight.
    fn sealing_done(&self, ctx: &FtlCtx<'_>) -> bool {
        let Some(group) = self.sealing else {
            return false;
        };
        (0..self.channels).all(|channel| {
            let c = channel as usize;
            let block = self.block(self.die(channel, self.parity_way()), group);
            !(self.busy[c] && self.inflight_on_parity_die[c])
                && ctx.nand().block(block).write_ptr == self.pages_per_block
                && self.parity_erase_due(channel).is_none()
        })
    }

    /// Closes the sealing group: its parity is on flash.
    fn finish_sealing(&mut self) {
        if let Some(group) = self.sealing.take() {
            self.group_state[group as usize] = GroupState::Closed;
            self.stats.groups_closed += 1;
        }
    }

    fn step_chip(&mut self, ctx: &mut FtlCtx<'_>, channel: u32) -> Result<(), SimError> {
        self.drop_stale_pending();
        let Some(step) = self.choose(ctx, channel) else {
            return Ok(());
        };
        self.busy[channel as usize] = true;
        self.inflight_on_parity_die[channel as usize] = match step {
            Step::Parity => true,
            Step::Erase(block) => (block / self.groups) % self.ways == self.parity_way(),
            Step::Host(_) | Step::Copy => false,
        };
        match step {
            Step::Host(slot) => self.program_buffered(ctx, channel, slot),
            Step::Parity => self.program_parity(ctx, channel),
            Step::Erase(block) => self.erase_block(ctx, channel, block),
            Step::Copy => self.read_victim_page(ctx, channel),
        }
    }

    /// Programs the buffered page in slot `index` (the top of `pending_order`) into the write
    /// die's open block.
    fn program_buffered(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        channel: u32,
        index: u32,
    ) -> Result<(), SimError> {
        if self.pending_order.pop().map(|Reverse((_, _, s))| s) != Some(index) {
            return Err(self.bug(format!("slot {index} is not the next buffered page")));
        }
        self.pending_pages -= 1;
        let (block, page) = self.target(ctx, channel);
        let ppn = self.layout.ppn(block, page);
        let mut slot = std::mem::take(&mut self.slots[index as usize]);
        if let Some(old) = self.map.get(slot.lpn) {
            ctx.invalidate(old)?;
        }
        let entry = [OobEntry::new(slot.lpn, slot.seq, 0)];
        let data = (!slot.data.is_empty()).then_some(slot.data.as_slice());
        let issue = Issue::new(Cause::Host)
            .after(&slot.deps)
            .token(token(TAG_HOST_PROGRAM, channel))
            .deadline(slot.deadline_ns);
        let result = ctx.program(&[ppn], &entry, data, issue);
        self.add_to_parity(channel, page, &slot.data);
        self.map.set(slot.lpn, ppn);
        self.buffered[slot.lpn as usize] = NONE;
        self.inflight_epoch[channel as usize] = slot.epoch;
        self.inflight_accepted_ns[channel as usize] = slot.accepted_ns;
        self.inflight_deadline_ns[channel as usize] = slot.deadline_ns;
        slot.deps.clear();
        slot.pending = false;
        self.slots[index as usize] = slot;
        self.free_slots.push(index);
        self.stats.host_pages_programmed += 1;
        result.map(|_| ())
    }

    fn add_to_parity(&mut self, channel: u32, page: u32, data: &[u64]) {
        if !self.parity.is_empty() {
            let r = self.parity_range(channel, page);
            Self::xor_into(&mut self.parity[r], data);
        }
    }

    /// Programs the next parity page of the sealing group on `channel` (a job of the
    /// encoding task).
    fn program_parity(&mut self, ctx: &mut FtlCtx<'_>, channel: u32) -> Result<(), SimError> {
        let group = self
            .sealing
            .expect("parity steps only while a group is sealing");
        let block = self.block(self.die(channel, self.parity_way()), group);
        let page = ctx.nand().block(block).write_ptr;
        let ppn = self.layout.ppn(block, page);
        ctx.charge_cpu(self.cfg.encode_ns);
        let entry = [OobEntry::new(group, 0, OOB_FLAG_TRANSLATION)];
        let r = self.parity_range(channel, page);
        let data = (!self.sealing_parity.is_empty()).then(|| &self.sealing_parity[r]);
        let issue = Issue::new(Cause::Host)
            .token(token(TAG_PARITY, channel))
            .deadline(self.sealing_deadline_ns);
        ctx.program(&[ppn], &entry, data, issue)?;
        self.stats.parity_pages_written += 1;
        Ok(())
    }

    /// Reads the next valid page of the victim's block on the write die (a GC step).
    fn read_victim_page(&mut self, ctx: &mut FtlCtx<'_>, channel: u32) -> Result<(), SimError> {
        let victim = self.victim.expect("copy steps only with a victim");
        let block = self.block(self.die(channel, self.write_way), victim);
        let c = channel as usize;
        while self.gc_cursor[c] < self.pages_per_block
            && !ctx
                .nand()
                .is_valid(self.layout.ppn(block, self.gc_cursor[c]))
        {
            self.gc_cursor[c] += 1;
        }
        if self.gc_cursor[c] == self.pages_per_block {
            return Err(self.bug(format!(
                "victim block {block} counts valid pages but none is left to copy"
            )));
        }
        let src = self.layout.ppn(block, self.gc_cursor[c]);
        self.gc_cursor[c] += 1;
        self.gc_reading[c] = src;
        self.stats.gc_steps += 1;
        let bytes = self.layout.page_bytes;
        let issue = Issue::new(Cause::Gc).token(token(TAG_GC_READ, channel));
        ctx.read(&[src], bytes, issue)?;
        Ok(())
    }

    /// The victim page read on `channel` arrived: programs its copy (unless the host rewrote
    /// or trimmed it meanwhile).
    fn program_copy(&mut self, ctx: &mut FtlCtx<'_>, channel: u32) -> Result<(), SimError> {
        let src: Ppn = self.gc_reading[channel as usize];
        let entry = *ctx.nand().oob(src);
        let Some(lpn) = entry.lpn().filter(|&l| self.map.get(l) == Some(src)) else {
            self.busy[channel as usize] = false;
            return Ok(());
        };
        let (block, page) = self.target(ctx, channel);
        let ppn = self.layout.ppn(block, page);
        let payloads = ctx.payloads();
        if payloads {
            self.scratch.copy_from_slice(ctx.nand().unit_data(src));
        }
        ctx.invalidate(src)?;
        let data = payloads.then_some(self.scratch.as_slice());
        let issue = Issue::new(Cause::Gc).token(token(TAG_GC_PROGRAM, channel));
        ctx.program(&[ppn], &[OobEntry::new(lpn, entry.seq(), 0)], data, issue)?;
        if payloads {
            let r = self.parity_range(channel, page);
            Self::xor_into(&mut self.parity[r], &self.scratch);
        }
        self.map.set(lpn, ppn);
        self.stats.gc_steps += 1;
        ctx.counters().record_moved(1, false);
        Ok(())
    }

    /// Erases a block of an empty group (its parity pages invalidated first).
    fn erase_block(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        channel: u32,
        block: u32,
    ) -> Result<(), SimError> {
        if (block / self.groups) % self.ways == self.parity_way() {
            let written = ctx.nand().block(block).write_ptr;
            for page in 0..written {
                let ppn = self.layout.ppn(block, page);
                if ctx.nand().is_valid(ppn) {
                    ctx.invalidate(ppn)?;
                }
            }
        }
        ctx.erase(
            block,
            Issue::new(Cause::Gc).token(token(TAG_ERASE, channel)),
        )?;
        self.needs_erase[block as usize] = false;
        self.stats.gc_steps += 1;
        self.stats.gc_erases += 1;
        let group = block % self.groups;
        let dies = self.channels * self.ways;
        let done = (0..dies).all(|d| !self.needs_erase[self.block(d, group) as usize]);
        if done {
            self.erasing.retain(|&g| g != group);
            self.group_state[group as usize] = GroupState::Free;
            self.free_groups.push_back(group);
        }
        Ok(())
    }

    /// A tagged command of a write die completed.
    pub(super) fn step_done(&mut self, ctx: &mut FtlCtx<'_>, tok: u64) -> Result<(), SimError> {
        let channel = (tok & ((1 << TAG_SHIFT) - 1)) as u32;
        let c = channel as usize;
        match tok >> TAG_SHIFT {
            TAG_GC_READ => self.program_copy(ctx, channel)?,
            TAG_HOST_PROGRAM => {
                self.busy[c] = false;
                let epoch = self.inflight_epoch[c];
                let now = ctx.now();
                let waited = now.saturating_sub(self.inflight_accepted_ns[c]);
                self.stats.write_to_flash_ns_total += waited;
                self.stats.write_to_flash_ns_max = self.stats.write_to_flash_ns_max.max(waited);
                self.to_flash
                    .record(waited)
                    .expect("auto-resizing histogram");
                if now > self.inflight_deadline_ns[c] {
                    self.stats.write_to_flash_late_pages += 1;
                }
                self.buffer_released(ctx, epoch)?;
            }
            TAG_PARITY => {
                self.busy[c] = false;
                if ctx.now() > self.sealing_deadline_ns {
                    self.stats.parity_late_pages += 1;
                }
            }
            TAG_GC_PROGRAM | TAG_ERASE => self.busy[c] = false,
            other => return Err(self.bug(format!("unknown completion tag {other}"))),
        }
        self.dispatch(ctx)
    }

    /// Whether every write die finished its turn: block full, GC work done, nothing in
    /// flight; after the last data way, also the previous group's encoding job.
    fn turn_over(&self, ctx: &FtlCtx<'_>) -> bool {
        if self.write_way + 2 == self.ways && self.sealing.is_some() {
            return false;
        }
        self.data_turn_over(ctx)
    }

    /// Whether every write die finished its turn (the encoding job aside).
    fn data_turn_over(&self, ctx: &FtlCtx<'_>) -> bool {
        (0..self.channels).all(|channel| {
            let c = channel as usize;
            // A parity command in flight leaves the write die idle.
            (!self.busy[c] || self.inflight_on_parity_die[c])
                && self.target(ctx, channel).1 == self.pages_per_block
                && self.erase_due(channel).is_none()
                && self.victim_valid(ctx, channel) == 0
        })
    }

    /// Moves the write set to the next way (Fig. 4): after the last data way the group's
    /// parity becomes the encoding job (programmed on the parity way, interleaved with the
    /// host programs of the next group, earliest deadline first) and the next group opens at
    /// way 0.
    fn rotate(&mut self, ctx: &mut FtlCtx<'_>) -> Result<(), SimError> {
        self.stats.rotations += 1;
        self.gc_cursor.fill(0);
        if self.write_way + 2 != self.ways {
            self.write_way += 1;
            return Ok(());
        }
        self.victim_copied(ctx)?;
        if self.sealing.is_some() {
            return Err(self.bug("a group's data is written before the previous parity".into()));
        }
        let now = ctx.now();
        self.group_state[self.open_group as usize] = GroupState::Sealing;
        self.sealing = Some(self.open_group);
        self.sealing_deadline_ns = now.saturating_add(self.horizon_ns(now));
        std::mem::swap(&mut self.parity, &mut self.sealing_parity);
        let group = self.free_groups.pop_front().ok_or_else(|| {
            self.bug("no free stripe group left (GC fell behind: lower ftl.data_ratio)".into())
        })?;
        self.group_state[group as usize] = GroupState::Open;
        self.open_group = group;
        self.group_opened_ns = now;
        self.write_way = 0;
        self.parity.fill(0);
        self.select_victim(ctx);
        Ok(())
    }

    /// The data turns are over: the victim is empty and its blocks become due for erasure.
    fn victim_copied(&mut self, ctx: &FtlCtx<'_>) -> Result<(), SimError> {
        let Some(victim) = self.victim.take() else {
            return Ok(());
        };
        let valid = self.group_valid(ctx, victim);
        if valid != 0 {
            return Err(self.bug(format!(
                "victim group {victim} still holds {valid} valid pages after the data turns"
            )));
        }
        self.start_erasing(victim);
        Ok(())
    }

    fn start_erasing(&mut self, group: u32) {
        self.group_state[group as usize] = GroupState::Erasing;
        for die in 0..self.channels * self.ways {
            let b = self.block(die, group);
            self.needs_erase[b as usize] = true;
        }
        self.erasing.push(group);
    }

    /// Valid data pages of a group (parity excluded).
    pub(super) fn group_valid(&self, ctx: &FtlCtx<'_>, group: u32) -> u32 {
        self.group_valid_in(ctx.nand(), group)
    }

    pub(super) fn group_valid_in(&self, nand: &crate::nand::Nand, group: u32) -> u32 {
        (0..self.channels)
            .flat_map(|c| (0..self.parity_way()).map(move |w| (c, w)))
            .map(|(c, w)| nand.block(self.block(self.die(c, w), group)).valid_units)
            .sum()
    }

    /// At a group opening: closed groups without valid data are erased as they are; while
    /// `gc_free_groups` or fewer groups are free, the closed group with the fewest valid data
    /// pages becomes the victim (greedy).
    fn select_victim(&mut self, ctx: &mut FtlCtx<'_>) {
        for g in 0..self.groups {
            if self.group_state[g as usize] == GroupState::Closed && self.group_valid(ctx, g) == 0 {
                self.start_erasing(g);
            }
        }
        if self.free_groups.len() > self.cfg.gc_free_groups as usize {
            return;
        }
        let best = (0..self.groups)
            .filter(|&g| self.group_state[g as usize] == GroupState::Closed)
            .min_by_key(|&g| (self.group_valid(ctx, g), g));
        if let Some(g) = best {
            self.group_state[g as usize] = GroupState::Victim;
            self.victim = Some(g);
            ctx.counters().record_victim(false);
        }
    }
}
