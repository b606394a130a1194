//! The write set's work: per write die one flash operation at a time, chosen
//! earliest-deadline-first among the write buffer's pages and GC steps (a victim page's read,
//! its program, an erase), the parity turn, and the rotation of the write set from way to way.

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
            if !self.turn_over(ctx) {
                return Ok(());
            }
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
            Some(v) if !self.parity_turn() => {
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

    fn choose(&self, ctx: &FtlCtx<'_>, channel: u32) -> Option<Step> {
        let (_, written) = self.target(ctx, channel);
        let room = self.pages_per_block - written;
        let erase = self.erase_due(channel);
        if self.parity_turn() {
            return erase
                .map(Step::Erase)
                .or((room > 0).then_some(Step::Parity));
        }
        let to_copy = self.victim_valid(ctx, channel);
        // Host pages may use the block only beyond the room the victim's pages need.
        let host = (room > to_copy).then(|| self.earliest_pending()).flatten();
        let gc_due = erase.is_some() || to_copy > 0;
        match host {
            Some((i, deadline)) if !gc_due || deadline <= self.gc_deadline() => Some(Step::Host(i)),
            _ if erase.is_some() => erase.map(Step::Erase),
            _ if to_copy > 0 => Some(Step::Copy),
            _ => None,
        }
    }

    fn step_chip(&mut self, ctx: &mut FtlCtx<'_>, channel: u32) -> Result<(), SimError> {
        self.drop_stale_pending();
        let Some(step) = self.choose(ctx, channel) else {
            return Ok(());
        };
        self.busy[channel as usize] = true;
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

    /// Programs the next parity page of the open group on `channel` (the parity turn).
    fn program_parity(&mut self, ctx: &mut FtlCtx<'_>, channel: u32) -> Result<(), SimError> {
        let (block, page) = self.target(ctx, channel);
        let ppn = self.layout.ppn(block, page);
        ctx.charge_cpu(self.cfg.encode_ns);
        let entry = [OobEntry::new(self.open_group, 0, OOB_FLAG_TRANSLATION)];
        let r = self.parity_range(channel, page);
        let data = (!self.parity.is_empty()).then(|| &self.parity[r]);
        let issue = Issue::new(Cause::Host).token(token(TAG_PARITY, channel));
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
        if self.write_way == self.parity_way() {
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
                let waited = ctx.now().saturating_sub(self.inflight_accepted_ns[c]);
                self.stats.write_to_flash_ns_total += waited;
                self.stats.write_to_flash_ns_max = self.stats.write_to_flash_ns_max.max(waited);
                self.buffer_released(ctx, epoch)?;
            }
            TAG_PARITY | TAG_GC_PROGRAM | TAG_ERASE => self.busy[c] = false,
            other => return Err(self.bug(format!("unknown completion tag {other}"))),
        }
        self.dispatch(ctx)
    }

    /// Whether every write die finished its turn: block full, GC work done, nothing in
    /// flight.
    fn turn_over(&self, ctx: &FtlCtx<'_>) -> bool {
        (0..self.channels).all(|channel| {
            !self.busy[channel as usize]
                && self.target(ctx, channel).1 == self.pages_per_block
                && self.erase_due(channel).is_none()
                && self.victim_valid(ctx, channel) == 0
        })
    }

    /// Moves the write set to the next way (Fig. 4): after the last data way the parity way,
    /// after the parity way the next group's way 0.
    fn rotate(&mut self, ctx: &mut FtlCtx<'_>) -> Result<(), SimError> {
        self.stats.rotations += 1;
        self.gc_cursor.fill(0);
        if self.write_way + 2 == self.ways {
            self.victim_copied(ctx)?;
        }
        if !self.parity_turn() {
            self.write_way += 1;
            return Ok(());
        }
        self.group_state[self.open_group as usize] = GroupState::Closed;
        self.stats.groups_closed += 1;
        let group = self.free_groups.pop_front().ok_or_else(|| {
            self.bug("no free stripe group left (GC fell behind: lower ftl.data_ratio)".into())
        })?;
        self.group_state[group as usize] = GroupState::Open;
        self.open_group = group;
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
