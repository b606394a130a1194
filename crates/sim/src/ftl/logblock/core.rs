//! The log-buffer machinery shared by BAST, FAST, SAST and KAST: the block map (logical
//! block -> data block, page `i` of a data block holds page `i` of its logical block), a pool
//! of log blocks written in append order with a page map each, and the switch, partial and
//! full merges that turn log blocks back into data blocks.
//!
//! The newest copy of every logical page is kept in one map (`lpn -> physical page`), which
//! is exactly what the block map plus the log blocks' page maps resolve to; every write or
//! move invalidates the copy it replaces wherever it is (data block or any log block), so a
//! read can never find a stale copy and a merged page never stays valid in another log block.
//!
//! All flash work (host reads, read-modify-write reads, merges, page programs) is one chain of
//! commands, each after the previous: the simple controller of these papers does one thing at
//! a time, so a merge is never interleaved with other requests' commands, its blocking time is
//! the sum of its commands, and its time is charged to the write that caused it.

use crate::config::{ConfigError, ExperimentConfig, Timing};
use crate::flash::{Cause, CmdId};
use crate::ftl::{FtlCtx, Issue};
use crate::host::SubId;
use crate::nand::{BlockId, Layout, Nand, OobEntry, Ppn};
use crate::SimError;

use crate::ftl::merge::{LogBufferUse, MergeKind, MergeRecord};

pub(crate) const UNMAPPED: u32 = u32::MAX;
const NO_BLOCK: BlockId = BlockId::MAX;
/// Free blocks kept out of the logical space: the destination of a full merge.
pub(crate) const RESERVE_BLOCKS: u32 = 1;

/// What a physical block is used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Free,
    Data(u32),
    Log(u32),
}

/// Sequential (in-place, one data block) or random log block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogKind {
    Sequential,
    Random,
}

/// One allocated log block.
#[derive(Debug, Clone)]
pub struct LogBlock {
    pub block: BlockId,
    pub kind: LogKind,
    /// Pages programmed so far (the next page to write).
    pub written: u32,
    /// Logical blocks with valid pages here and how many: A(L) of kast.txt, k(L) its length.
    pub assoc: Vec<(u32, u32)>,
    /// Every page `i` written holds page `i` of `in_place_lbn` (or is padding).
    pub in_place: bool,
    pub in_place_lbn: u32,
    /// Allocation order and last write, in host page writes.
    pub opened_at: u64,
    pub last_write: u64,
    /// SAST's data-block set (0 for the others).
    pub group: u32,
}

impl LogBlock {
    pub fn associativity(&self) -> u32 {
        self.assoc.len() as u32
    }
    pub fn holds(&self, lbn: u32) -> bool {
        self.assoc.iter().any(|&(l, _)| l == lbn)
    }
    pub fn valid_pages(&self) -> u32 {
        self.assoc.iter().map(|&(_, n)| n).sum()
    }
}

/// Which merges a reclaimed log block may get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeMode {
    /// Switch when complete and in place, otherwise full (BAST).
    SwitchOrFull,
    /// Switch, partial when in place but incomplete, otherwise full.
    Any,
}

/// A merge whose blocking time is measured when its last command completes: from the start
/// of its first command (that command's completion minus its service time, as the commands
/// of a merge run one after the other) to the completion of its last.
#[derive(Debug, Clone, Copy)]
struct Pending {
    start_ns: Option<u64>,
    first_service_ns: u64,
    record: MergeRecord,
}

/// Token tag of a merge's last command.
pub(crate) const TAG_MERGE: u64 = 1 << 56;
/// Token tag of a merge's first command.
pub(crate) const TAG_MERGE_START: u64 = 2 << 56;
const TAG_INDEX: u64 = (1 << 56) - 1;

/// Log-buffer state and primitives.
pub struct Core {
    pub(crate) name: &'static str,
    pub(crate) layout: Layout,
    /// Pages per block (N).
    pub n: u32,
    pub(crate) sectors_per_page: u64,
    pub(crate) page_bytes: u32,
    pub logical_blocks: u32,
    pub(crate) map: Vec<Ppn>,
    pub(crate) data_block: Vec<BlockId>,
    pub(crate) role: Vec<Role>,
    pub(crate) free: std::collections::VecDeque<BlockId>,
    pub logs: Vec<Option<LogBlock>>,
    /// Host page writes so far (the clock of log-block ages).
    pub writes: u64,
    seq: u64,
    last: CmdId,
    pending: Vec<Option<Pending>>,
    /// The merge whose first command has not been issued yet.
    starting: Option<usize>,
    timing: Timing,
    /// Data of the page a merge is moving.
    pub(crate) page: Vec<u64>,
    /// Data of the host page being written (merges may run between its preparation and its
    /// program).
    pub(crate) host_page: Vec<u64>,
    /// Log blocks with no valid page left, erased without a merge.
    pub dead_log_erases: u64,
    /// Largest associativity a merge may have (KAST's K); a larger one is an FTL bug.
    pub max_merge_associativity: Option<u32>,
    /// Worst merge blocking time the design bounds (kast.txt section II), when it has one.
    pub predicted_worst_ns: Option<u64>,
    /// Merges per log slot (pins "every slot gets merged").
    pub merges_per_slot: Vec<u64>,
    /// Largest age (host page writes since allocation) of a log block when it was merged.
    oldest_merged_age: u64,
    /// Log slots that held a log block at some time in the window.
    used_in_window: Vec<bool>,
}

impl Core {
    /// A fresh log buffer of `log_blocks` blocks on the device of `config`.
    pub fn new(
        config: &ExperimentConfig,
        name: &'static str,
        log_blocks: u32,
    ) -> Result<Self, ConfigError> {
        let logical_blocks = logical_blocks(config, log_blocks)?;
        let g = &config.geometry;
        let layout = Layout::new(g);
        let spp = u64::from(g.page_bytes / config.host.sector_bytes);
        Ok(Core {
            name,
            layout,
            n: g.pages_per_block,
            sectors_per_page: spp,
            page_bytes: g.page_bytes,
            logical_blocks,
            map: vec![UNMAPPED; (logical_blocks * g.pages_per_block) as usize],
            data_block: vec![NO_BLOCK; logical_blocks as usize],
            role: vec![Role::Free; layout.blocks() as usize],
            free: (0..layout.blocks()).collect(),
            logs: vec![None; log_blocks as usize],
            writes: 0,
            seq: 0,
            last: CmdId::DONE,
            pending: Vec::new(),
            starting: None,
            timing: config.timing.clone(),
            page: vec![0; spp as usize],
            host_page: vec![0; spp as usize],
            dead_log_erases: 0,
            max_merge_associativity: None,
            predicted_worst_ns: None,
            merges_per_slot: vec![0; log_blocks as usize],
            oldest_merged_age: 0,
            used_in_window: vec![false; log_blocks as usize],
        })
    }

    /// kast.txt section II: N·k·C_copy + (k+1)·C_erase, with C_copy the longest page a merge
    /// writes on this device. A copy is the paper's page read plus page program, a copyback
    /// within a plane; but a rebuilt data block's holes are programmed empty (pages are
    /// programmed in order), a program with its bus transfer, which takes longer than a
    /// copyback when the transfer is longer than the read (kast-slc: 200 + 51.2 us against
    /// 225 us); and on a device of several planes a copy may cross planes (a read and a program
    /// with both transfers). The bound takes the longest, so it holds for every merge.
    pub fn worst_merge_ns(&self, timing: &Timing, k: u32) -> u64 {
        u64::from(self.n) * u64::from(k) * self.copy_ns(timing)
            + u64::from(k + 1) * timing.erase_latency_ns
    }

    /// Section II's merge cost of a log block of associativity `k` on this device.
    pub fn merge_cost_ns(&self, k: u32) -> u64 {
        self.worst_merge_ns(&self.timing, k)
    }

    /// C_copy of the bound: the longest page a merge writes on this device (a copyback, an
    /// empty page programmed into a hole, or a copy across planes).
    pub fn copy_ns(&self, timing: &Timing) -> u64 {
        let copyback = timing.read_latency_ns + timing.program_latency_ns;
        let transfer = timing.bus_ns(u64::from(self.page_bytes));
        let hole = timing.program_latency_ns + transfer;
        if self.layout.planes() <= 1 {
            return copyback.max(hole);
        }
        copyback + 2 * transfer
    }

    pub fn lbn(&self, lpn: u32) -> u32 {
        lpn / self.n
    }
    pub fn offset(&self, lpn: u32) -> u32 {
        lpn % self.n
    }
    pub fn log(&self, slot: usize) -> &LogBlock {
        self.logs[slot].as_ref().expect("allocated log slot")
    }
    pub fn is_full(&self, slot: usize) -> bool {
        self.log(slot).written == self.n
    }
    pub fn free_pages(&self, slot: usize) -> u32 {
        self.n - self.log(slot).written
    }
    /// Allocated log slots.
    pub fn slots(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.logs.len()).filter(|&s| self.logs[s].is_some())
    }
    pub fn free_slot(&self) -> Option<usize> {
        self.logs.iter().position(Option::is_none)
    }
    pub(crate) fn mapped(&self, lpn: u32) -> Option<Ppn> {
        let p = self.map[lpn as usize];
        (p != UNMAPPED).then_some(p)
    }

    pub(crate) fn bug(&self, message: String) -> SimError {
        SimError::Ftl {
            ftl: self.name,
            message,
        }
    }

    /// Takes a free log slot and a free block for it.
    pub fn open_log(&mut self, kind: LogKind, group: u32) -> Result<usize, SimError> {
        let slot = self
            .free_slot()
            .ok_or_else(|| self.bug("no free log slot".into()))?;
        self.open_log_at(slot, kind, group)
    }

    fn take_free_block(&mut self) -> Result<BlockId, SimError> {
        self.free
            .pop_front()
            .ok_or_else(|| self.bug("no free block left for a log block or a merge".into()))
    }

    /// Drops the current copy of `lpn` (invalidating it in NAND and in its log block's A(L)).
    pub(crate) fn unmap(&mut self, ctx: &mut FtlCtx<'_>, lpn: u32) -> Result<(), SimError> {
        let Some(old) = self.mapped(lpn) else {
            return Ok(());
        };
        self.map[lpn as usize] = UNMAPPED;
        ctx.invalidate(old)?;
        let block = self.layout.block_of(old);
        if let Role::Log(slot) = self.role[block as usize] {
            let lbn = self.lbn(lpn);
            let log = self.logs[slot as usize]
                .as_mut()
                .expect("log slot of a log block");
            let i = log
                .assoc
                .iter()
                .position(|&(l, _)| l == lbn)
                .expect("a valid page's data block is in A(L)");
            log.assoc[i].1 -= 1;
            if log.assoc[i].1 == 0 {
                log.assoc.swap_remove(i);
            }
        }
        Ok(())
    }

    /// Issues one command after the previous one of the chain, returning its id.
    fn issue_read(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        ppn: Ppn,
        issue: Issue<'_>,
    ) -> Result<(), SimError> {
        let deps = [self.last];
        let service = self.timing.read_latency_ns + self.timing.bus_ns(u64::from(self.page_bytes));
        let issue = self.first_of_merge(issue, service);
        self.last = ctx.read(&[ppn], self.page_bytes, issue.after(&deps))?;
        Ok(())
    }

    fn issue_program(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        ppn: Ppn,
        entry: OobEntry,
        issue: Issue<'_>,
    ) -> Result<(), SimError> {
        let deps = [self.last];
        let service =
            self.timing.program_latency_ns + self.timing.bus_ns(u64::from(self.page_bytes));
        let issue = self.first_of_merge(issue, service);
        let page = if issue.cause == Cause::Host {
            &self.host_page
        } else {
            &self.page
        };
        let data = ctx.payloads().then_some(page.as_slice());
        self.last = ctx.program(&[ppn], &[entry], data, issue.after(&deps))?;
        Ok(())
    }

    fn issue_erase(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        block: BlockId,
        token: u64,
    ) -> Result<(), SimError> {
        let deps = [self.last];
        let issue = Issue::new(Cause::Merge).token(token);
        let issue = self.first_of_merge(issue, self.timing.erase_latency_ns);
        self.last = ctx.erase(block, issue.after(&deps))?;
        Ok(())
    }

    /// Tags the first command of a starting merge (whose completion gives the merge's start).
    fn first_of_merge<'d>(&mut self, issue: Issue<'d>, service_ns: u64) -> Issue<'d> {
        let Some(i) = self.starting.take() else {
            return issue;
        };
        let p = self.pending[i].as_mut().expect("starting merge");
        p.first_service_ns = service_ns;
        if issue.token != 0 {
            // The merge's last command is its first too: its completion measures both.
            return issue;
        }
        issue.token(TAG_MERGE_START | i as u64)
    }

    /// Host read of one page piece: the newest copy, or zeros.
    pub fn read(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        sub: SubId,
        deadline_ns: u64,
        lpn: u32,
        first_sector: u64,
        range: std::ops::Range<usize>,
    ) -> Result<(), SimError> {
        match self.mapped(lpn) {
            Some(ppn) => {
                self.issue_read(ctx, ppn, Issue::host(sub).deadline(deadline_ns))?;
                let data = if ctx.payloads() {
                    ctx.nand().unit_data(ppn)[range].to_vec()
                } else {
                    vec![0; range.len()]
                };
                ctx.deliver(sub, first_sector, &data)
            }
            None => ctx.deliver(sub, first_sector, &vec![0; range.len()]),
        }
    }

    /// Prepares the host data of a page write into `self.page` (reading the old page first
    /// when the write covers only part of it).
    pub fn prepare_write(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        sub: SubId,
        lpn: u32,
        range: std::ops::Range<usize>,
        version: u64,
    ) -> Result<(), SimError> {
        let whole = range.start == 0 && range.end == self.sectors_per_page as usize;
        self.host_page.fill(0);
        if let (false, Some(old)) = (whole, self.mapped(lpn)) {
            self.issue_read(ctx, old, Issue::host(sub))?;
            if ctx.payloads() {
                self.host_page.copy_from_slice(ctx.nand().unit_data(old));
            }
        }
        self.host_page[range].fill(version);
        Ok(())
    }

    /// Appends the host page in `self.page` to log `slot` (which must have a free page).
    pub fn append_host(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        slot: usize,
        lpn: u32,
        sub: SubId,
    ) -> Result<(), SimError> {
        self.writes += 1;
        self.seq += 1;
        crate::nand::Nand::check_seq(self.seq).map_err(|e| SimError::Nand {
            ftl: self.name,
            source: e,
        })?;
        let seq = self.seq;
        self.append(ctx, slot, lpn, seq, Issue::host(sub))
    }

    /// Moves the newest copy of `lpn` into log `slot` (a padding copy; a program of an empty
    /// page when `lpn` has no data), charged as merge work.
    pub fn append_copy(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        slot: usize,
        lpn: u32,
    ) -> Result<u32, SimError> {
        self.append_copy_token(ctx, slot, lpn, 0)
    }

    /// [`Core::append_copy`] whose last command carries `token`.
    fn append_copy_token(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        slot: usize,
        lpn: u32,
        token: u64,
    ) -> Result<u32, SimError> {
        let issue = Issue::new(Cause::Merge).token(token);
        match self.mapped(lpn) {
            Some(old) => {
                let ppn = self.next_page(slot)?;
                self.copy_page(ctx, lpn, old, ppn, issue)?;
                self.note_append(slot, lpn);
                Ok(1)
            }
            None => {
                self.append_padding(ctx, slot, lpn, issue)?;
                Ok(0)
            }
        }
    }

    /// Copies the newest copy of `lpn` (at `old`) to the free page `dst` as merge work and
    /// maps `lpn` there: a copyback when both are on one plane (kast.txt's C_copy, a page read
    /// and a page program with no bus transfer), otherwise a read and a program.
    fn copy_page(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        lpn: u32,
        old: Ppn,
        dst: Ppn,
        issue: Issue<'_>,
    ) -> Result<(), SimError> {
        let plane = |p: Ppn| self.layout.plane_of(self.layout.block_of(p));
        if plane(old) == plane(dst) {
            let deps = [self.last];
            let service = self.timing.read_latency_ns + self.timing.program_latency_ns;
            let issue = self.first_of_merge(issue, service);
            // The copyback carries the source's OOB entry (its sequence number) and data.
            self.last = ctx.copyback(old, dst, issue.after(&deps))?;
            self.unmap(ctx, lpn)?;
        } else {
            let seq = self.load(ctx, old)?;
            self.unmap(ctx, lpn)?;
            self.issue_program(ctx, dst, OobEntry::new(lpn, seq, 0), issue)?;
        }
        self.map[lpn as usize] = dst;
        Ok(())
    }

    /// Reads page `old` into `self.page` (merge work), returning its sequence number.
    fn load(&mut self, ctx: &mut FtlCtx<'_>, old: Ppn) -> Result<u64, SimError> {
        self.issue_read(ctx, old, Issue::new(Cause::Merge))?;
        if ctx.payloads() {
            self.page.copy_from_slice(ctx.nand().unit_data(old));
        }
        Ok(ctx.nand().oob(old).seq())
    }

    /// The next free page of log `slot`.
    fn next_page(&self, slot: usize) -> Result<Ppn, SimError> {
        let log = self.log(slot);
        if log.written >= self.n {
            return Err(self.bug(format!("append to full log block in slot {slot}")));
        }
        Ok(self.layout.ppn(log.block, log.written))
    }

    /// Host write of `lpn` (data in `self.host_page`) to the next page of log `slot`.
    fn append(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        slot: usize,
        lpn: u32,
        seq: u64,
        issue: Issue<'_>,
    ) -> Result<(), SimError> {
        let ppn = self.next_page(slot)?;
        self.unmap(ctx, lpn)?;
        self.issue_program(ctx, ppn, OobEntry::new(lpn, seq, 0), issue)?;
        self.map[lpn as usize] = ppn;
        self.note_append(slot, lpn);
        Ok(())
    }

    /// Log `slot`'s bookkeeping after its next page took `lpn`: in-place order, A(L), age.
    fn note_append(&mut self, slot: usize, lpn: u32) {
        let (lbn, off) = (self.lbn(lpn), self.offset(lpn));
        let writes = self.writes;
        let log = self.logs[slot].as_mut().expect("allocated");
        if log.written == 0 {
            log.in_place_lbn = lbn;
        }
        log.in_place &= log.in_place_lbn == lbn && off == log.written;
        log.written += 1;
        log.last_write = writes;
        match log.assoc.iter_mut().find(|(l, _)| *l == lbn) {
            Some(e) => e.1 += 1,
            None => log.assoc.push((lbn, 1)),
        }
    }

    fn append_padding(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        slot: usize,
        lpn: u32,
        issue: Issue<'_>,
    ) -> Result<(), SimError> {
        let lbn = self.lbn(lpn);
        let off = self.offset(lpn);
        let log = self.log(slot);
        let ppn = self.layout.ppn(log.block, log.written);
        self.page.fill(0);
        self.issue_program(ctx, ppn, OobEntry::EMPTY, issue)?;
        let log = self.logs[slot].as_mut().expect("allocated");
        if log.written == 0 {
            log.in_place_lbn = lbn;
        }
        log.in_place &= log.in_place_lbn == lbn && off == log.written;
        log.written += 1;
        Ok(())
    }

    /// Whether log `slot` can become `lbn`'s data block: in place, and each page written is
    /// still the newest copy of its logical page or that page has no data.
    fn mergeable_in_place(&self, slot: usize) -> bool {
        let log = self.log(slot);
        if !log.in_place || log.written == 0 || log.assoc.len() > 1 {
            return false;
        }
        let lbn = log.in_place_lbn;
        (0..log.written).all(|i| {
            let lpn = lbn * self.n + i;
            let here = self.layout.ppn(log.block, i);
            match self.mapped(lpn) {
                None => true,
                Some(p) => p == here,
            }
        })
    }

    /// Reclaims log `slot`: erases it when it holds no valid page, otherwise merges it with
    /// the best merge `mode` allows. The slot is free afterwards.
    pub fn reclaim(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        slot: usize,
        mode: MergeMode,
    ) -> Result<(), SimError> {
        if self.log(slot).assoc.is_empty() {
            return self.erase_dead(ctx, slot);
        }
        self.note_merged(slot);
        if self.mergeable_in_place(slot) {
            let complete = self.is_full(slot);
            if complete || mode == MergeMode::Any {
                return self.merge_in_place(ctx, slot);
            }
        }
        self.merge_full(ctx, slot)
    }

    /// Reclaims a log block holding no valid page. kast.txt counts merges of log blocks, and
    /// every log block returns to the free state through a merge (Fig. 3): this is a full
    /// merge with k(L) = 0, whose cost is section II's formula at k = 0, one erase. It is
    /// counted with the merges (associativity 0) and also in `dead_log_erases`.
    fn erase_dead(&mut self, ctx: &mut FtlCtx<'_>, slot: usize) -> Result<(), SimError> {
        self.note_merged(slot);
        let token = self.begin_merge();
        let block = self.log(slot).block;
        self.issue_erase(ctx, block, token)?;
        self.release_block(block);
        self.logs[slot] = None;
        self.dead_log_erases += 1;
        let record = MergeRecord {
            kind: MergeKind::Full,
            associativity: 0,
            blocking_ns: 0,
            pages_copied: 0,
            erases: 1,
        };
        self.finish_merge(ctx, token, true, record);
        Ok(())
    }

    /// Counts a merge of log `slot` for the log buffer's use (every slot merged, ages).
    fn note_merged(&mut self, slot: usize) {
        self.merges_per_slot[slot] += 1;
        let age = self.writes - self.log(slot).opened_at;
        self.oldest_merged_age = self.oldest_merged_age.max(age);
    }

    /// How the log buffer was used since the counters were last reset.
    pub fn log_buffer_use(&self) -> LogBufferUse {
        LogBufferUse {
            log_blocks: self.logs.len() as u32,
            log_blocks_merged: self.merges_per_slot.iter().filter(|&&m| m > 0).count() as u32,
            log_blocks_unused: self.used_in_window.iter().filter(|&&u| !u).count() as u32,
            oldest_merged_age_page_writes: self.oldest_merged_age,
            oldest_unmerged_age_page_writes: self
                .slots()
                .map(|s| self.writes - self.log(s).opened_at)
                .max()
                .unwrap_or(0),
        }
    }

    /// Clears the merge counters of the log buffer's use (the start of a measured window).
    pub fn reset_use(&mut self) {
        self.dead_log_erases = 0;
        self.merges_per_slot.fill(0);
        self.oldest_merged_age = 0;
        for (used, log) in self.used_in_window.iter_mut().zip(&self.logs) {
            *used = log.is_some();
        }
    }

    fn release_block(&mut self, block: BlockId) {
        self.role[block as usize] = Role::Free;
        self.free.push_back(block);
    }

    /// Switch or partial merge: the in-place log block is completed with the newest copies
    /// of its missing pages and becomes the data block; the old data block is erased.
    fn merge_in_place(&mut self, ctx: &mut FtlCtx<'_>, slot: usize) -> Result<(), SimError> {
        let token = self.begin_merge();
        let (block, lbn, written) = {
            let l = self.log(slot);
            (l.block, l.in_place_lbn, l.written)
        };
        let kind = if written == self.n {
            MergeKind::Switch
        } else {
            MergeKind::Partial
        };
        let last = self.last_mapped_offset(lbn);
        let old = self.data_block[lbn as usize];
        let mut copied = 0;
        let end = last.map_or(0, |l| l + 1);
        for off in written..end {
            let last_command = old == NO_BLOCK && off + 1 == end;
            let tok = if last_command { token } else { 0 };
            copied += self.append_copy_token(ctx, slot, lbn * self.n + off, tok)?;
        }
        self.logs[slot] = None;
        self.role[block as usize] = Role::Data(lbn);
        self.data_block[lbn as usize] = block;
        let mut erases = 0;
        if old != NO_BLOCK {
            self.issue_erase(ctx, old, token)?;
            self.release_block(old);
            erases = 1;
        }
        let record = MergeRecord {
            kind,
            associativity: 1,
            blocking_ns: 0,
            pages_copied: copied,
            erases,
        };
        self.finish_merge(ctx, token, old != NO_BLOCK || end > written, record);
        self.release_dead_sequential(ctx)
    }

    /// Full merge: every data block in A(L) is rebuilt from the newest copies of its pages
    /// (wherever they are) in a free block, its old data block erased; then L is erased.
    fn merge_full(&mut self, ctx: &mut FtlCtx<'_>, slot: usize) -> Result<(), SimError> {
        let lbns: Vec<u32> = self.log(slot).assoc.iter().map(|&(l, _)| l).collect();
        let k = lbns.len() as u32;
        if let Some(max) = self.max_merge_associativity {
            if k > max {
                return Err(self.bug(format!(
                    "merge of log slot {slot} with associativity {k} above the bound {max}"
                )));
            }
        }
        let token = self.begin_merge();
        let mut record = MergeRecord {
            kind: MergeKind::Full,
            associativity: k,
            blocking_ns: 0,
            pages_copied: 0,
            erases: 1,
        };
        for lbn in lbns {
            let (copied, erased) = self.rebuild(ctx, lbn)?;
            record.pages_copied += copied;
            record.erases += erased;
        }
        let block = self.log(slot).block;
        if self.log(slot).valid_pages() != 0 {
            return Err(self.bug(format!("full merge left valid pages in log slot {slot}")));
        }
        self.issue_erase(ctx, block, token)?;
        self.release_block(block);
        self.logs[slot] = None;
        self.finish_merge(ctx, token, true, record);
        self.release_dead_sequential(ctx)
    }

    /// Copies the newest copy of every page of `lbn` into a fresh block that becomes its data
    /// block (holes below the last page with data are programmed empty: pages are programmed
    /// in order); erases the old data block. Returns (pages copied, blocks erased).
    fn rebuild(&mut self, ctx: &mut FtlCtx<'_>, lbn: u32) -> Result<(u32, u32), SimError> {
        let Some(last) = self.last_mapped_offset(lbn) else {
            return Ok((0, 0));
        };
        let new = self.take_free_block()?;
        self.role[new as usize] = Role::Data(lbn);
        let mut copied = 0;
        for off in 0..=last {
            let lpn = lbn * self.n + off;
            let ppn = self.layout.ppn(new, off);
            match self.mapped(lpn) {
                Some(old) => {
                    self.copy_page(ctx, lpn, old, ppn, Issue::new(Cause::Merge))?;
                    copied += 1;
                }
                None => {
                    self.page.fill(0);
                    self.issue_program(ctx, ppn, OobEntry::EMPTY, Issue::new(Cause::Merge))?;
                }
            }
        }
        let old = std::mem::replace(&mut self.data_block[lbn as usize], new);
        if old == NO_BLOCK {
            return Ok((copied, 0));
        }
        self.issue_erase(ctx, old, 0)?;
        self.release_block(old);
        Ok((copied, 1))
    }

    /// Sequential log blocks left without a valid page (their data block was rebuilt by a
    /// full merge) can never be switched: they are erased at once.
    fn release_dead_sequential(&mut self, ctx: &mut FtlCtx<'_>) -> Result<(), SimError> {
        for slot in 0..self.logs.len() {
            let dead = self.logs[slot].as_ref().is_some_and(|l| {
                l.assoc.is_empty() && (l.kind == LogKind::Sequential || l.written == self.n)
            });
            if dead {
                self.erase_dead(ctx, slot)?;
            }
        }
        Ok(())
    }

    fn last_mapped_offset(&self, lbn: u32) -> Option<u32> {
        (0..self.n)
            .rev()
            .find(|&off| self.map[(lbn * self.n + off) as usize] != UNMAPPED)
    }

    /// Opens the accounting of a merge; its next command is its first. Returns the token
    /// its last command carries.
    fn begin_merge(&mut self) -> u64 {
        let index = match self.pending.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                self.pending.push(None);
                self.pending.len() - 1
            }
        };
        self.pending[index] = Some(Pending {
            start_ns: None,
            first_service_ns: 0,
            record: MergeRecord {
                kind: MergeKind::Full,
                associativity: 0,
                blocking_ns: 0,
                pages_copied: 0,
                erases: 0,
            },
        });
        self.starting = Some(index);
        TAG_MERGE | index as u64
    }

    /// Records a merge: at its last command's completion when it issued commands (`issued`),
    /// at once otherwise.
    fn finish_merge(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        token: u64,
        issued: bool,
        record: MergeRecord,
    ) {
        let index = (token & TAG_INDEX) as usize;
        self.starting = None;
        if issued {
            self.pending[index].as_mut().expect("pending merge").record = record;
        } else {
            self.pending[index] = None;
            ctx.record_merge(record);
        }
    }

    /// A command of a merge carrying `token` completed.
    pub fn merge_command_done(&mut self, ctx: &mut FtlCtx<'_>, token: u64) -> Result<(), SimError> {
        let index = (token & TAG_INDEX) as usize;
        let now = ctx.now();
        let Some(p) = self.pending.get_mut(index).and_then(Option::as_mut) else {
            return Err(self.bug(format!("completion of unknown merge {index}")));
        };
        let start = now.saturating_sub(p.first_service_ns);
        if token & !TAG_INDEX == TAG_MERGE_START {
            p.start_ns = Some(start);
            return Ok(());
        }
        let mut record = p.record;
        record.blocking_ns = now - p.start_ns.unwrap_or(start);
        self.pending[index] = None;
        ctx.record_merge(record);
        Ok(())
    }

    /// Trims whole pages.
    pub fn trim(&mut self, ctx: &mut FtlCtx<'_>, lpn: u32) -> Result<(), SimError> {
        self.unmap(ctx, lpn)
    }

    /// Bytes of the mapping structures a controller would hold: the block map (4 bytes per
    /// logical block), and per log block its page map (4 bytes per page) and its A(L) set.
    pub fn ram_bytes(&self) -> u64 {
        let logs = self.logs.len() as u64;
        u64::from(self.logical_blocks) * 4 + logs * u64::from(self.n) * 4 + logs * 16
    }

    /// Map and log blocks agree with the NAND state.
    pub fn check(&self, nand: &Nand) -> Result<(), String> {
        let mut valid_total = 0u64;
        for (lpn, &ppn) in self.map.iter().enumerate() {
            if ppn == UNMAPPED {
                continue;
            }
            valid_total += 1;
            if !nand.is_valid(ppn) || nand.oob(ppn).lpn() != Some(lpn as u32) {
                return Err(format!(
                    "page {lpn} maps to {ppn}, which does not hold it valid"
                ));
            }
            let block = self.layout.block_of(ppn);
            match self.role[block as usize] {
                Role::Data(lbn) => {
                    if lbn != self.lbn(lpn as u32)
                        || self.layout.page_in_block(ppn) != self.offset(lpn as u32)
                    {
                        return Err(format!(
                            "page {lpn} at {ppn}: not its place in data block {block}"
                        ));
                    }
                }
                Role::Log(_) => {}
                Role::Free => return Err(format!("page {lpn} maps into free block {block}")),
            }
        }
        let nand_valid: u64 = nand.blocks().iter().map(|b| u64::from(b.valid_units)).sum();
        if nand_valid != valid_total {
            return Err(format!(
                "{nand_valid} valid pages on flash, {valid_total} mapped"
            ));
        }
        for (lbn, &b) in self.data_block.iter().enumerate() {
            if b != NO_BLOCK && self.role[b as usize] != Role::Data(lbn as u32) {
                return Err(format!(
                    "data block {b} of logical block {lbn} has role {:?}",
                    self.role[b as usize]
                ));
            }
        }
        for slot in self.slots() {
            self.check_log(nand, slot)?;
        }
        for &b in &self.free {
            if self.role[b as usize] != Role::Free || nand.block(b).write_ptr != 0 {
                return Err(format!("free block {b} is in use or not erased"));
            }
        }
        let used =
            self.data_block.iter().filter(|&&b| b != NO_BLOCK).count() + self.slots().count();
        if used + self.free.len() != self.role.len() {
            return Err(format!(
                "{used} data and log blocks + {} free != {} blocks",
                self.free.len(),
                self.role.len()
            ));
        }
        Ok(())
    }

    fn check_log(&self, nand: &Nand, slot: usize) -> Result<(), String> {
        let log = self.log(slot);
        if self.role[log.block as usize] != Role::Log(slot as u32) {
            return Err(format!(
                "log slot {slot}: block {} has another role",
                log.block
            ));
        }
        if nand.block(log.block).write_ptr != log.written {
            return Err(format!(
                "log slot {slot}: {} pages written, flash says {}",
                log.written,
                nand.block(log.block).write_ptr
            ));
        }
        let mut counts: Vec<(u32, u32)> = Vec::new();
        for i in 0..log.written {
            let ppn = self.layout.ppn(log.block, i);
            if !nand.is_valid(ppn) {
                continue;
            }
            let lbn = self.lbn(nand.oob(ppn).lpn().expect("valid page has an entry"));
            match counts.iter_mut().find(|(l, _)| *l == lbn) {
                Some(e) => e.1 += 1,
                None => counts.push((lbn, 1)),
            }
        }
        let mut assoc = log.assoc.clone();
        assoc.sort_unstable();
        counts.sort_unstable();
        if assoc != counts {
            return Err(format!(
                "log slot {slot}: A(L) {assoc:?} but valid pages per data block {counts:?}"
            ));
        }
        Ok(())
    }

    /// [`Core::open_log`] in log slot `slot` (which must be free): for placements that own
    /// fixed slots (SAST's log-block sets).
    pub fn open_log_at(
        &mut self,
        slot: usize,
        kind: LogKind,
        group: u32,
    ) -> Result<usize, SimError> {
        if self.logs.get(slot).is_none_or(Option::is_some) {
            return Err(self.bug(format!("log slot {slot} is not free")));
        }
        let block = self.take_free_block()?;
        self.role[block as usize] = Role::Log(slot as u32);
        self.used_in_window[slot] = true;
        self.logs[slot] = Some(LogBlock {
            block,
            kind,
            written: 0,
            assoc: Vec::new(),
            in_place: true,
            in_place_lbn: UNMAPPED,
            opened_at: self.writes,
            last_write: self.writes,
            group,
        });
        Ok(slot)
    }
}

/// Logical blocks the device exports: all blocks but the log blocks and the merge reserve.
pub fn logical_blocks(config: &ExperimentConfig, log_blocks: u32) -> Result<u32, ConfigError> {
    let g = &config.geometry;
    let blocks =
        g.planes_per_die * g.blocks_per_plane * g.channels * g.chips_per_channel * g.dies_per_chip;
    let needed = log_blocks + RESERVE_BLOCKS + 1;
    if blocks < needed {
        return Err(ConfigError::invalid(
            "ftl.log_blocks",
            log_blocks,
            format!("the device has {blocks} blocks; the log blocks, one merge reserve block and one data block must fit"),
            format!("1 ..= {}", blocks.saturating_sub(RESERVE_BLOCKS + 1).max(1)),
        ));
    }
    let pages = u64::from(blocks - log_blocks - RESERVE_BLOCKS) * u64::from(g.pages_per_block);
    if pages >= u64::from(u32::MAX) {
        return Err(ConfigError::invalid(
            "geometry.blocks_per_plane",
            g.blocks_per_plane,
            "the log-block FTLs address fewer than 2^32 pages",
            "a smaller device",
        ));
    }
    Ok(blocks - log_blocks - RESERVE_BLOCKS)
}
