//! The FTL task code as a state machine: each phase is one stretch of firmware between two
//! kernel calls (pend, post, compute, sleep, poll), so tasks interleave exactly where a
//! uC/OS-II task could be switched out. GC phases are in `gc.rs`.

use super::guard::Shared;
use super::{Core, OpenBlock, Phase, ReadGroup, Span};
use crate::flash::Cause;
use crate::ftl::mapping::Stream;
use crate::ftl::{FtlCtx, Issue};
use crate::host::{Op, SubRequest};
use crate::nand::{OobEntry, Ppn};
use crate::rtos::{Step, TaskId};
use crate::SimError;

/// Token of a task's flash commands (a task has at most one in flight).
pub(super) fn token(t: TaskId) -> u64 {
    t as u64 + 1
}

impl Core {
    /// Runs task `t` until its next kernel call.
    pub(super) fn step(&mut self, ctx: &mut FtlCtx<'_>, t: TaskId) -> Result<Step, SimError> {
        loop {
            let phase = self.tasks[t].phase;
            let step = if phase >= Phase::GcPick && phase <= Phase::GcEraseDone {
                self.gc_phase(ctx, t, phase)?
            } else {
                self.phase(ctx, t, phase)?
            };
            if let Some(step) = step {
                return Ok(step);
            }
        }
    }

    /// Moves to `next` and hands `step` to the kernel.
    pub(super) fn then(&mut self, t: TaskId, next: Phase, step: Step) -> Option<Step> {
        self.tasks[t].phase = next;
        Some(step)
    }

    /// Moves to `next` without a kernel call.
    pub(super) fn go(&mut self, t: TaskId, next: Phase) -> Option<Step> {
        self.tasks[t].phase = next;
        None
    }

    pub(super) fn bug(&self, message: String) -> SimError {
        SimError::Ftl {
            ftl: if self.single { "st-ftl" } else { "mt-ftl" },
            message,
        }
    }

    /// The NAND semaphore guarding page `ppn`.
    pub(super) fn lock_of(&self, ppn: Ppn) -> usize {
        match self.cfg.nand_lock {
            super::NandLock::WholeDevice => 0,
            super::NandLock::PerDie => self.layout.die_of(self.layout.block_of(ppn)) as usize,
        }
    }

    pub(super) fn pend_nand(&mut self, t: TaskId, ppn: Ppn, next: Phase) -> Option<Step> {
        let lock = self.lock_of(ppn);
        self.tasks[t].lock = lock;
        self.then(t, next, Step::Pend(self.sems.nand[lock]))
    }

    pub(super) fn post_nand(&mut self, t: TaskId, next: Phase) -> Option<Step> {
        let sem = self.sems.nand[self.tasks[t].lock];
        self.then(t, next, Step::Post(sem))
    }

    /// Waits for the task's operation keeping the CPU (reads, copybacks; every wait of st-ftl);
    /// None once it finished (each `...Done` phase asks first).
    pub(super) fn wait_with_cpu(&mut self, t: TaskId) -> Option<Step> {
        (!self.tasks[t].op_done).then_some(Step::Poll {
            period_ns: self.cfg.nand_poll_ns,
        })
    }

    /// Waits for a program or erase: sleeps until the monitor resumes the task; None once it
    /// finished.
    pub(super) fn wait_released(&mut self, t: TaskId) -> Option<Step> {
        if self.single {
            return self.wait_with_cpu(t);
        }
        let task = &mut self.tasks[t];
        if task.op_done {
            return None;
        }
        task.asleep = true;
        Some(Step::Sleep)
    }

    /// The sectors `[s0, s1)` of unit `lpn` the current request covers.
    pub(super) fn piece(&self, t: TaskId, lpn: u32) -> (usize, usize) {
        let span = &self.tasks[t].span;
        let us = self.unit_sectors;
        let base = u64::from(lpn) * us;
        let s0 = span.first_sector.max(base) - base;
        let s1 = span.end_sector.min(base + us) - base;
        (s0 as usize, s1 as usize)
    }

    fn phase(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        t: TaskId,
        phase: Phase,
    ) -> Result<Option<Step>, SimError> {
        use Phase::*;
        Ok(match phase {
            Idle => self.then(t, Take, Step::Pend(self.sems.host_queue)),
            Take => {
                let sub = self.queue.pop_front().ok_or_else(|| {
                    self.bug("a task took a request from an empty host queue".into())
                })?;
                self.start(t, sub);
                let ns = self.cfg.cpu_request_ns;
                self.then(t, Prioritize, Step::Compute(ns))
            }
            Prioritize => match self.cfg.task_priority {
                super::TaskPriority::Fixed => self.go(t, Dispatch),
                super::TaskPriority::RequestAge => {
                    // Below every task holding an older request; above the monitor.
                    self.requests_taken += 1;
                    let priority = u64::from(self.cfg.tasks) + self.requests_taken;
                    self.then(t, Dispatch, Step::SetPriority(priority))
                }
            },
            Dispatch => {
                let next = match self.sub(t).op {
                    Op::Read => ReadNext,
                    Op::Write => WriteChunk,
                    Op::Trim => TrimLock,
                    Op::Flush => Finish,
                };
                self.go(t, next)
            }
            ReadNext => {
                let task = &mut self.tasks[t];
                if task.span.lpn < task.span.end_lpn {
                    task.read = ReadGroup {
                        lpn: task.span.lpn,
                        count: task.span.end_lpn - task.span.lpn,
                        unit: None,
                        for_write: false,
                    };
                    self.go(t, ReadLock)
                } else {
                    self.go(t, Finish)
                }
            }
            ReadLock => self.then(t, ReadLookup, Step::Pend(self.sems.map)),
            ReadLookup => {
                let k = self.lookup_group(t);
                let ns = self.cfg.cpu_lookup_ns * u64::from(k);
                self.then(t, ReadUnlock, Step::Compute(ns))
            }
            ReadUnlock => {
                let next = if self.tasks[t].read.unit.is_some() {
                    ReadNand
                } else {
                    self.deliver_unmapped(ctx, t)?;
                    ReadNext
                };
                self.then(t, next, Step::Post(self.sems.map))
            }
            ReadNand => {
                let unit = self.tasks[t].read.unit.expect("a mapped group");
                self.pend_nand(t, self.map.page_of(unit), ReadCheck)
            }
            ReadCheck => {
                if self.group_still_mapped(t) {
                    let ns = self.cfg.cpu_command_ns;
                    self.then(t, ReadIssue, Step::Compute(ns))
                } else {
                    self.stats.read_retries += 1;
                    self.go(t, ReadRetry)
                }
            }
            ReadRetry => self.post_nand(t, ReadLock),
            ReadIssue => {
                self.issue_read(ctx, t)?;
                self.go(t, ReadDone)
            }
            ReadDone => self.read_done(t),
            WriteChunk => self.write_chunk(t),
            WriteAllocLock => self.then(t, WriteAlloc, Step::Pend(self.sems.meta)),
            WriteAlloc => self.allocate(t)?,
            WriteAllocDone => self.then(t, WriteNand, Step::Post(self.sems.meta)),
            WriteNand => self.pend_nand(t, self.tasks[t].page, WriteMapLock),
            WriteMapLock => self.then(t, WriteMap, Step::Pend(self.sems.map)),
            WriteMap => {
                let units = u64::from(self.tasks[t].chunk);
                let ns = self.cfg.cpu_map_update_ns * units + self.cfg.cpu_command_ns;
                self.then(t, WriteIssue, Step::Compute(ns))
            }
            WriteIssue => {
                self.issue_write(ctx, t)?;
                self.then(t, WriteDone, Step::Post(self.sems.map))
            }
            WriteDone => {
                if let Some(sleep) = self.wait_released(t) {
                    return Ok(Some(sleep));
                }
                let task = &mut self.tasks[t];
                task.op_done = false;
                task.span.lpn += task.chunk;
                task.rmw_read_upto = 0;
                let next = if task.span.lpn < task.span.end_lpn {
                    WriteChunk
                } else {
                    Finish
                };
                self.post_nand(t, next)
            }
            TrimLock => self.then(t, Trim, Step::Pend(self.sems.map)),
            Trim => {
                let (first, end) = self.whole_units(t);
                let ns = self.cfg.cpu_map_update_ns * u64::from(end.saturating_sub(first));
                self.then(t, TrimApply, Step::Compute(ns))
            }
            TrimApply => {
                let (first, end) = self.whole_units(t);
                for lpn in first..end {
                    if let Some(old) = self.unmap(lpn)? {
                        self.drop_copy(ctx, old)?;
                    }
                }
                self.then(t, Finish, Step::Post(self.sems.map))
            }
            Finish => {
                let ns = self.cfg.cpu_complete_ns;
                self.then(t, Complete, Step::Compute(ns))
            }
            Complete => {
                let task = &mut self.tasks[t];
                let sub = task
                    .sub
                    .take()
                    .expect("a task completes the request it took");
                task.requests += 1;
                ctx.complete(sub.id);
                match self.cfg.task_priority {
                    super::TaskPriority::Fixed => self.go(t, Idle),
                    // Back to its own rank among idle tasks, above every busy one: the
                    // lowest-numbered idle task takes the next request (as with fixed
                    // priorities), so a shallow queue keeps writing one working block.
                    super::TaskPriority::RequestAge => {
                        self.then(t, Idle, Step::SetPriority(t as u64 + 1))
                    }
                }
            }
            MonitorPoll => match self.next_to_wake() {
                Some(_) => self.go(t, MonitorWake),
                None => Some(Step::Poll {
                    period_ns: self.cfg.monitor_poll_ns,
                }),
            },
            MonitorWake => match self.next_to_wake() {
                Some(w) => {
                    self.tasks[w].asleep = false;
                    self.tasks[t].resume = w;
                    let ns = self.cfg.cpu_wake_ns;
                    self.then(t, MonitorResume, Step::Compute(ns))
                }
                None => self.go(t, MonitorPoll),
            },
            MonitorResume => {
                let w = self.tasks[t].resume;
                self.then(t, MonitorPoll, Step::Resume(w))
            }
            _ => return Err(self.bug(format!("task {t} in GC phase {phase:?} outside GC"))),
        })
    }

    fn sub(&self, t: TaskId) -> &SubRequest {
        self.tasks[t]
            .sub
            .as_ref()
            .expect("a task serving a request")
    }

    /// Takes a request: its unit span.
    fn start(&mut self, t: TaskId, sub: SubRequest) {
        let us = self.unit_sectors;
        let end_sector = sub.first_sector + sub.sectors;
        let task = &mut self.tasks[t];
        task.span = Span {
            first_sector: sub.first_sector,
            end_sector,
            lpn: (sub.first_sector / us) as u32,
            end_lpn: end_sector.div_ceil(us) as u32,
        };
        task.rmw_read_upto = 0;
        task.sub = Some(sub);
    }

    /// An FTL task whose operation finished while it sleeps.
    fn next_to_wake(&self) -> Option<TaskId> {
        let ftl_tasks = self.cfg.tasks as usize;
        (0..ftl_tasks).find(|&w| self.tasks[w].op_done && self.tasks[w].asleep)
    }

    /// Looks up the group starting at `read.lpn`: consecutive units that are all unmapped, or
    /// all on one page. Returns the units looked up.
    fn lookup_group(&mut self, t: TaskId) -> u32 {
        let ReadGroup { lpn, count, .. } = self.tasks[t].read;
        let first = self.map.get(lpn);
        let same = |u: Option<u32>| match (first, u) {
            (None, None) => true,
            (Some(a), Some(b)) => self.map.page_of(a) == self.map.page_of(b),
            _ => false,
        };
        let k = (1..count)
            .find(|&i| !same(self.map.get(lpn + i)))
            .unwrap_or(count);
        let read = &mut self.tasks[t].read;
        read.count = k;
        read.unit = first;
        k
    }

    /// Whether every unit of the group is still on the page looked up.
    fn group_still_mapped(&self, t: TaskId) -> bool {
        let r = self.tasks[t].read;
        let page = self.map.page_of(r.unit.expect("a mapped group"));
        (r.lpn..r.lpn + r.count).all(|l| self.map.get(l).map(|u| self.map.page_of(u)) == Some(page))
    }

    fn deliver_unmapped(&mut self, ctx: &mut FtlCtx<'_>, t: TaskId) -> Result<(), SimError> {
        let r = self.tasks[t].read;
        self.tasks[t].span.lpn += r.count;
        for lpn in r.lpn..r.lpn + r.count {
            let (s0, s1) = self.piece(t, lpn);
            let first = u64::from(lpn) * self.unit_sectors + s0 as u64;
            ctx.deliver(self.sub(t).id, first, &self.zeros[s0..s1])?;
        }
        Ok(())
    }

    fn issue_read(&mut self, ctx: &mut FtlCtx<'_>, t: TaskId) -> Result<(), SimError> {
        let r = self.tasks[t].read;
        let page = self.map.page_of(r.unit.expect("a mapped group"));
        if !r.for_write && ctx.payloads() {
            for lpn in r.lpn..r.lpn + r.count {
                let (s0, s1) = self.piece(t, lpn);
                let unit = self.map.get(lpn).expect("checked under the NAND semaphore");
                let first = u64::from(lpn) * self.unit_sectors + s0 as u64;
                let mut scratch = std::mem::take(&mut self.scratch);
                scratch.clear();
                scratch.extend_from_slice(&ctx.nand().unit_data(unit)[s0..s1]);
                let delivered = ctx.deliver(self.sub(t).id, first, &scratch);
                self.scratch = scratch;
                delivered?;
            }
        }
        let deadline = self.sub(t).deadline_ns;
        let bytes = r.count * self.cfg.mapping_unit_bytes;
        self.must_hold(Shared::Nand(page))?;
        self.tasks[t].op_done = false;
        ctx.read(
            &[page],
            bytes,
            Issue::new(Cause::Host).token(token(t)).deadline(deadline),
        )?;
        Ok(())
    }

    fn read_done(&mut self, t: TaskId) -> Option<Step> {
        if !self.tasks[t].op_done {
            return self.wait_with_cpu(t);
        }
        let task = &mut self.tasks[t];
        task.op_done = false;
        let next = if task.read.for_write {
            task.rmw_read_upto = task.read.lpn + 1;
            self.stats.rmw_reads += 1;
            Phase::WriteChunk
        } else {
            task.span.lpn += task.read.count;
            Phase::ReadNext
        };
        self.post_nand(t, next)
    }

    /// Starts a page of a write: first reads the old copy of a partially written unit (once
    /// per such unit), then allocates.
    fn write_chunk(&mut self, t: TaskId) -> Option<Step> {
        let upp = self.upp;
        let span = self.tasks[t].span;
        let chunk = upp.min(span.end_lpn - span.lpn);
        self.tasks[t].chunk = chunk;
        let done = self.tasks[t].rmw_read_upto;
        for lpn in [span.lpn, span.lpn + chunk - 1] {
            let (s0, s1) = self.piece(t, lpn);
            let partial = s0 > 0 || s1 < self.unit_sectors as usize;
            if partial && lpn + 1 > done && self.map.get(lpn).is_some() {
                self.tasks[t].read = ReadGroup {
                    lpn,
                    count: 1,
                    unit: None,
                    for_write: true,
                };
                return self.go(t, Phase::ReadLock);
            }
        }
        self.go(t, Phase::WriteAllocLock)
    }

    /// Allocates the next page of the task's working block, opening one (after GC) if needed.
    fn allocate(&mut self, t: TaskId) -> Result<Option<Step>, SimError> {
        self.must_hold(Shared::Metadata)?;
        let ppb = self.layout.pages_per_block;
        if let Some(w) = self.tasks[t].working.as_mut().filter(|w| w.next_page < ppb) {
            let page = self.layout.ppn(w.block, w.next_page);
            w.next_page += 1;
            if w.next_page == ppb {
                let die = self.layout.die_of(w.block);
                self.working_on_die[die as usize] -= 1;
            }
            self.tasks[t].page = page;
            self.tasks[t].gc.victims = 0;
            let ns = self.cfg.cpu_alloc_ns;
            return Ok(self.then(t, Phase::WriteAllocDone, Step::Compute(ns)));
        }
        let die = match self.tasks[t].gc.die_chosen {
            Some(d) => d,
            None => {
                let d = self.pick_die();
                self.tasks[t].gc.die_chosen = Some(d);
                d
            }
        };
        if self.blocks.free_in_die(die, false) <= self.cfg.gc_free_blocks {
            if !self.reclaimable(die) {
                // GC here freed what it could (open blocks hold the rest): try another die;
                // count_gc_attempt reports a full device when no die has room.
                self.tasks[t].gc.die_chosen = None;
                self.count_gc_attempt(t, die)?;
                return Ok(None);
            }
            return self.start_gc(t, die);
        }
        let plane = self.blocks.roomiest_plane(die);
        let block = self
            .blocks
            .open(plane, Stream::Host, 0)
            .ok_or_else(|| self.bug(format!("no free block on die {die} for a working block")))?;
        self.working_on_die[die as usize] += 1;
        let task = &mut self.tasks[t];
        task.working = Some(OpenBlock {
            block,
            next_page: 0,
        });
        task.gc.die_chosen = None;
        Ok(None)
    }

    /// The die for a new working block: the one holding the least valid data, counting a
    /// block's worth more on dies that already host their share of working blocks. So tasks
    /// spread over dies, yet data stays balanced (low-priority tasks get few requests and
    /// keep their blocks open long; a hard share would push every other task's data onto the
    /// remaining dies until GC there copies full blocks), among the dies with room (free
    /// blocks above the GC reserve, or garbage to collect). Ties: channel-first order from a
    /// rotating start.
    fn pick_die(&mut self) -> u32 {
        let dies = self.layout.dies();
        let start = self.die_cursor;
        self.die_cursor = self.die_cursor.wrapping_add(1);
        let share = self.sizing.working_blocks_per_die;
        let block_units = u64::from(self.layout.pages_per_block * self.upp);
        let room = |d: u32| {
            self.blocks.free_in_die(d, false) > self.cfg.gc_free_blocks || self.reclaimable(d)
        };
        let key = |d: u32| {
            let busy = self.working_on_die[d as usize] >= share;
            self.valid_on_die[d as usize] + if busy { block_units } else { 0 }
        };
        let order = (0..dies).map(|i| self.layout.striped_die(start.wrapping_add(i) % dies));
        // Dies without room (open blocks and valid data fill them) only when none has room;
        // allocate() then reports the device full.
        order
            .clone()
            .filter(|&d| room(d))
            .min_by_key(|&d| key(d))
            .or_else(|| order.min_by_key(|&d| key(d)))
            .expect("a device has dies")
    }

    /// Whether GC on `die` can reclaim space: a closed block with more invalid units than
    /// the padding of the last GC page of a victim may waste (`units_per_page - 1`).
    pub(super) fn reclaimable(&self, die: u32) -> bool {
        let upb = self.layout.pages_per_block * self.upp;
        self.blocks
            .fewest_valid(self.blocks.planes_of(die))
            .is_some_and(|v| v + self.upp - 1 < upb)
    }

    /// Programs the chunk's units into the allocated page and maps them there.
    fn issue_write(&mut self, ctx: &mut FtlCtx<'_>, t: TaskId) -> Result<(), SimError> {
        let (page, chunk, lpn0) = {
            let task = &self.tasks[t];
            (task.page, task.chunk, task.span.lpn)
        };
        self.must_hold(Shared::Nand(page))?;
        let sub = *self.sub(t);
        let us = self.unit_sectors as usize;
        let mut entries = std::mem::take(&mut self.tasks[t].entries);
        let mut data = std::mem::take(&mut self.tasks[t].data);
        entries.fill(OobEntry::EMPTY);
        data.fill(0);
        for i in 0..chunk {
            let lpn = lpn0 + i;
            let (s0, s1) = self.piece(t, lpn);
            let old = self.unmap(lpn)?;
            if !data.is_empty() {
                let slot = &mut data[i as usize * us..(i as usize + 1) * us];
                if let Some(old) = old.filter(|_| s0 > 0 || s1 < us) {
                    slot.copy_from_slice(ctx.nand().unit_data(old));
                }
                slot[s0..s1].fill(sub.version);
            }
            if let Some(old) = old {
                self.drop_copy(ctx, old)?;
            }
            self.units_written += 1;
            entries[i as usize] = OobEntry::new(lpn, self.units_written, 0);
            self.remap(lpn, self.map.unit_at(page, i))?;
        }
        self.stats.padded_units += u64::from(self.upp - chunk);
        let die = self.layout.die_of(self.layout.block_of(page));
        self.valid_on_die[die as usize] += u64::from(chunk);
        self.tasks[t].op_done = false;
        let issue = Issue::new(Cause::Host)
            .token(token(t))
            .deadline(sub.deadline_ns);
        let result = ctx.program(
            &[page],
            &entries,
            (!data.is_empty()).then_some(&data),
            issue,
        );
        self.tasks[t].entries = entries;
        self.tasks[t].data = data;
        result?;
        self.close_if_full(ctx, page)
    }

    /// Invalidates the stale copy of a unit written or trimmed.
    fn drop_copy(&mut self, ctx: &mut FtlCtx<'_>, old: u32) -> Result<(), SimError> {
        self.invalidate(ctx, old)?;
        let die = self
            .layout
            .die_of(self.layout.block_of(self.map.page_of(old)));
        self.valid_on_die[die as usize] -= 1;
        Ok(())
    }

    /// A block whose last page was just issued becomes a GC candidate.
    /// (The closed blocks are indexed by valid count, which changes under the mapping
    /// semaphore, so closing takes it too.)
    pub(super) fn close_if_full(&mut self, ctx: &FtlCtx<'_>, page: Ppn) -> Result<(), SimError> {
        if self.layout.page_in_block(page) + 1 == self.layout.pages_per_block {
            self.must_hold(Shared::Mapping)?;
            let block = self.layout.block_of(page);
            let valid = ctx.nand().block(block).valid_units;
            self.blocks.close(block, valid, self.units_written);
        }
        Ok(())
    }

    /// Whole mapping units of the current (trim) request, clipped to the logical space.
    fn whole_units(&self, t: TaskId) -> (u32, u32) {
        let span = &self.tasks[t].span;
        let us = self.unit_sectors;
        let first = span.first_sector.div_ceil(us);
        let end = (span.end_sector / us).min(u64::from(self.map.len()));
        (first as u32, end.max(first) as u32)
    }
}
