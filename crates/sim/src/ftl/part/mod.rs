//! PaRT-FTL (part-ftl.txt, Missimer & West): the dies split into a write set and read sets,
//! RAID-4 parity per channel, reads of a page on a busy write die rebuilt from its stripe.
//!
//! - **Layout** (III.A, Figs. 3-4). The paper's chip is our die; a *way* is a die's position
//!   on its channel (`chips_per_channel x dies_per_chip` ways). The write set `F_w` is one way
//!   across all channels; the other ways serve reads. The last way holds parity (25% of the
//!   storage on a 4 x 4 device). A *stripe group* is block slot `g` of every die (`block =
//!   die x blocks_per_die + g`); the stripe `(channel, g, page)` is that page on each data way
//!   of the channel plus the parity way's page, which holds their XOR.
//! - **Rotation** (Fig. 4). Data ways 0 .. W-2 take turns as the write set, each filling its
//!   block of the open group on every channel (host pages from the write buffer and GC
//!   copies); then the group is *sealing* and the next free group opens at way 0. A turn ends
//!   when every write die's block is full, its GC work is done and its last command completed.
//! - **Parity as eq. 3's encoding job** (issue 29). A sealing group's parity (kept in RAM) is
//!   programmed on the parity way as an EDF job: released when the group's data is written,
//!   due the time the group took to fill later (eq. 3's T^e), interleaved per channel with the
//!   write die's host programs and GC steps, earliest deadline first, so host programs
//!   preempt it between operations (`turn.rs`). One command per channel is in flight, so a
//!   stripe never misses two dies. The time from a write's acknowledgement to its page's
//!   program is reported (`write_to_flash_ns_*`, percentiles, late pages): on Table III it
//!   stays within the writers' 60 ms deadline, where a parity turn of a block per write die
//!   held pages up to 378 ms (docs/part-ftl.md, "Parity as an EDF job").
//! - **Running parity**: the XOR of the open group's pages per (channel, page) is kept in RAM,
//!   so the parity is ready when the group seals and a page of the open group on the write die
//!   is rebuilt as running parity XOR the pages already written on earlier ways.
//! - **Reads** (III.A, eq. 8): a buffered page is served from RAM; a page on a read die is
//!   read; a page on a write die is rebuilt from the other pages of its stripe (all on read
//!   dies; while the parity die programs, a closed group's page is read from the idle write
//!   die) and decoded (`decode_ns`, CPU time). No host read is queued on a die with a program
//!   or erase of ours in flight. With
//!   payloads the delivered data is the XOR of what was read, so verify runs check rebuilds.
//! - **Writes** are acknowledged once in the write buffer (an overwrite of a buffered page is
//!   absorbed); a full buffer makes new writes wait (back-pressure), never drops data. Pages
//!   smaller than a page are read-modify-write (the old page fetched as a host read).
//! - **GC** (III.B-2, V): only on write dies, one flash operation per scheduling step (a
//!   valid-page read, its program, or an erase), interleaved with the buffer's programs
//!   earliest-deadline-first (buffered pages carry their writes' deadlines, GC the earliest
//!   deadline of the writes waiting for buffer room). At each group opening, while
//!   `gc_free_groups` or fewer groups are free, the closed group with the fewest valid data
//!   pages becomes the victim: each data way copies its victim block's valid pages into its
//!   own open block during its turn (a die keeps room for them), so the victim is empty when
//!   the data turns end. Its blocks are erased by each way at its next turn (parity first);
//!   until then rebuilds of the victim's stripes stay possible. Parity pages are not copied.
//! - Parity pages carry `OOB_FLAG_TRANSLATION` (not host data: host-map checks and verify's
//!   durability tracking skip them) and stay valid until their group is empty, so erasing a
//!   live parity page is a NAND error.
//!
//! - **Request buffer** (V): host page requests wait for the FTL core earliest deadline
//!   first; `cpu_page_ns` (default 0) is the firmware time per host page handled.
//!
//! Mapping is per page (the host chop size). Details and choices: docs/part-ftl.md.

mod check;
mod config;
mod turn;

pub use config::PartConfig;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::mapping::MapTable;
use super::registry::{self, FtlEntry};
use super::{Ftl, FtlCtx, Issue};
use crate::config::{ConfigError, ExperimentConfig};
use crate::flash::{CmdId, OpKind};
use crate::host::{Op, SubId, SubRequest};
use crate::nand::{Layout, Nand, Ppn};
use crate::SimError;
use config::Sizing;

/// Registry entry of PaRT-FTL.
pub const ENTRY: FtlEntry = registry::settings_entry::<PartConfig>(
    "part-ftl",
    "PaRT-FTL: one way per channel writes while the others serve reads; reads of a busy \
     write die rebuilt from RAID-4 stripe parity; rotating write set, group GC",
    |c| Ok(Box::new(PartFtl::new(c)?)),
);

const NONE: u32 = u32::MAX;

/// Life cycle of a stripe group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GroupState {
    Free,
    Open,
    Closed,
    /// Closed, its valid pages being copied out during the open group's data turns.
    Victim,
    /// Empty; its blocks are erased as their ways take their turns.
    Erasing,
    /// Its data ways are written; its parity pages are being programmed (an EDF job
    /// interleaved with the next group's host programs), its parity kept in RAM until then.
    Sealing,
}

/// A page in the write buffer, not yet programmed.
#[derive(Debug, Clone, Default)]
struct Slot {
    lpn: u32,
    seq: u64,
    deadline_ns: u64,
    /// Flush epoch of its first acceptance.
    epoch: u64,
    /// When it was first accepted into the buffer (an absorbed overwrite keeps this time).
    accepted_ns: u64,
    /// Waiting in the buffer for its program (not yet issued).
    pending: bool,
    data: Vec<u64>,
    /// Reads of the old page a read-modify-write waits for.
    deps: Vec<CmdId>,
}

/// What the FTL report shows beyond the GC counters.
#[derive(Debug, Clone, Default, serde::Serialize)]
struct PartStats {
    normal_reads: u64,
    rebuilt_reads: u64,
    /// Flash reads issued for rebuilds.
    rebuild_member_reads: u64,
    buffer_reads: u64,
    rmw_reads: u64,
    /// Host reads issued to a die of the write set (a defect if not 0).
    host_reads_on_write_set: u64,
    /// Host reads issued to a die whose cell was programming or erasing, as the scheduler
    /// saw it (a defect if not 0).
    host_reads_on_busy_writer: u64,
    host_pages_programmed: u64,
    parity_pages_written: u64,
    rotations: u64,
    groups_closed: u64,
    gc_steps: u64,
    gc_erases: u64,
    max_buffer_pages: u64,
    backpressure_waits: u64,
    absorbed_overwrites: u64,
    /// Time from a host page's acceptance into the buffer (its write's acknowledgement) to
    /// the completion of its program, summed over `host_pages_programmed` and its maximum:
    /// how long acknowledged data waits for flash (write-set turns, GC, a parity program),
    /// the figure to set beside an unbuffered FTL's write latency.
    write_to_flash_ns_total: u64,
    write_to_flash_ns_max: u64,
    /// Host pages whose program completed after their write's deadline.
    write_to_flash_late_pages: u64,
    /// Parity pages programmed after their encoding job's deadline (eq. 3's period).
    parity_late_pages: u64,
    /// Rotations to a new group that waited for the previous group's parity (the data ways
    /// were written before the parity job finished: host programs held meanwhile).
    parity_rotation_waits: u64,
    /// Host reads of a closed group's page on the write way served from the idle write die,
    /// because the parity die of its channel was programming (its stripe could not be rebuilt
    /// without waiting).
    direct_reads_on_idle_write_die: u64,
}

/// PaRT-FTL.
pub struct PartFtl {
    cfg: PartConfig,
    sizing: Sizing,
    layout: Layout,
    channels: u32,
    ways: u32,
    groups: u32,
    pages_per_block: u32,
    spp: usize,
    map: MapTable,
    // Layout state.
    group_state: Vec<GroupState>,
    free_groups: VecDeque<u32>,
    erasing: Vec<u32>,
    /// Per block: erase still due (blocks of erasing groups).
    needs_erase: Vec<bool>,
    open_group: u32,
    victim: Option<u32>,
    write_way: u32,
    /// Running parity of the open group: `spp` versions per (channel, page).
    parity: Vec<u64>,
    // Write-set dies, by channel.
    busy: Vec<bool>,
    gc_cursor: Vec<u32>,
    gc_reading: Vec<Ppn>,
    inflight_epoch: Vec<u64>,
    /// Acceptance time of the host page whose program is in flight, per channel.
    inflight_accepted_ns: Vec<u64>,
    /// Deadline of the host page whose program is in flight, per channel.
    inflight_deadline_ns: Vec<u64>,
    /// Per channel: the command in flight is on the parity die (a parity program or erase).
    inflight_on_parity_die: Vec<bool>,
    /// The group whose parity is being programmed (eq. 3's encoding job), if any.
    sealing: Option<u32>,
    /// Its parity, kept in RAM until programmed (rebuilds of its stripes read it from here).
    sealing_parity: Vec<u64>,
    /// The encoding job's absolute deadline: its release (the group's data written) plus
    /// the time the group took to fill (eq. 3's period T^e, measured).
    sealing_deadline_ns: u64,
    /// When the open group was opened.
    group_opened_ns: u64,
    /// The data ways are written and the rotation waits for the previous parity (counted
    /// once per wait).
    waiting_for_parity: bool,
    /// Acknowledgement-to-flash times of the host pages programmed (percentiles).
    to_flash: hdrhistogram::Histogram<u64>,
    // Write buffer.
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    /// Buffered pages in program order, earliest deadline then oldest write first: (deadline,
    /// seq, slot). An entry whose slot is no longer pending with that seq (programmed,
    /// trimmed, or overwritten: the overwrite pushes a new entry) is stale and dropped when it
    /// comes to the top, so choosing a page costs O(log n), not a scan of the buffer.
    pending_order: BinaryHeap<Reverse<(u64, u64, u32)>>,
    /// Pages waiting in the buffer for their program.
    pending_pages: usize,
    buffered: Vec<u32>,
    buffer_used: u64,
    waiting: VecDeque<SubRequest>,
    units_written: u64,
    epoch_base: u64,
    epoch_counts: VecDeque<u64>,
    flushes: VecDeque<(u64, SubId)>,
    // Scratch.
    scratch: Vec<u64>,
    read_cmds: Vec<CmdId>,
    zeros: Vec<u64>,
    stats: PartStats,
}

impl PartFtl {
    pub fn new(config: &ExperimentConfig) -> Result<Self, ConfigError> {
        let (cfg, sizing) = PartConfig::from_experiment(config)?;
        let g = &config.geometry;
        let layout = Layout::new(g);
        let payloads = config.run.payloads || config.run.verify;
        let spp = (g.page_bytes / config.host.sector_bytes) as usize;
        let parity_len = if payloads {
            g.channels as usize * g.pages_per_block as usize * spp
        } else {
            0
        };
        let mut ftl = PartFtl {
            map: MapTable::new(sizing.logical_pages, 1),
            layout,
            channels: g.channels,
            ways: sizing.ways,
            groups: sizing.groups,
            pages_per_block: g.pages_per_block,
            spp,
            group_state: vec![GroupState::Free; sizing.groups as usize],
            free_groups: (1..sizing.groups).collect(),
            erasing: Vec::new(),
            needs_erase: vec![false; layout.blocks() as usize],
            open_group: 0,
            victim: None,
            write_way: 0,
            parity: vec![0; parity_len],
            busy: vec![false; g.channels as usize],
            gc_cursor: vec![0; g.channels as usize],
            gc_reading: vec![0; g.channels as usize],
            inflight_epoch: vec![0; g.channels as usize],
            inflight_accepted_ns: vec![0; g.channels as usize],
            inflight_deadline_ns: vec![0; g.channels as usize],
            inflight_on_parity_die: vec![false; g.channels as usize],
            sealing: None,
            sealing_parity: vec![0; parity_len],
            sealing_deadline_ns: 0,
            group_opened_ns: 0,
            waiting_for_parity: false,
            to_flash: hdrhistogram::Histogram::new(3).expect("3 significant digits"),
            slots: Vec::new(),
            free_slots: Vec::new(),
            pending_order: BinaryHeap::new(),
            pending_pages: 0,
            buffered: vec![NONE; sizing.logical_pages as usize],
            buffer_used: 0,
            waiting: VecDeque::new(),
            units_written: 0,
            epoch_base: 0,
            epoch_counts: VecDeque::from([0]),
            flushes: VecDeque::new(),
            scratch: vec![0; spp],
            read_cmds: Vec::with_capacity(sizing.ways as usize),
            zeros: vec![0; spp],
            stats: PartStats::default(),
            sizing,
            cfg,
        };
        ftl.group_state[0] = GroupState::Open;
        Ok(ftl)
    }

    /// The counters, with the acknowledgement-to-flash percentiles beside their sum and max.
    fn counters_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(&self.stats).expect("counters serialise");
        let h = &self.to_flash;
        let q = |x: f64| {
            if h.is_empty() {
                0
            } else {
                h.value_at_quantile(x)
            }
        };
        for (key, x) in [
            ("write_to_flash_ns_p50", 0.5),
            ("write_to_flash_ns_p90", 0.9),
            ("write_to_flash_ns_p99", 0.99),
            ("write_to_flash_ns_p999", 0.999),
        ] {
            v[key] = q(x).into();
        }
        v
    }

    fn bug(&self, message: String) -> SimError {
        SimError::Ftl {
            ftl: "part-ftl",
            message,
        }
    }

    /// The die at `way` of `channel`.
    fn die(&self, channel: u32, way: u32) -> u32 {
        channel * self.ways + way
    }

    /// The block of stripe group `group` on `die`.
    fn block(&self, die: u32, group: u32) -> u32 {
        die * self.groups + group
    }

    /// (channel, way, group, page) of a physical page.
    fn place_of(&self, ppn: Ppn) -> (u32, u32, u32, u32) {
        let block = self.layout.block_of(ppn);
        let die = block / self.groups;
        (
            die / self.ways,
            die % self.ways,
            block % self.groups,
            self.layout.page_in_block(ppn),
        )
    }

    fn parity_way(&self) -> u32 {
        self.ways - 1
    }

    /// The running parity of (channel, page) of the open group.
    fn parity_range(&self, channel: u32, page: u32) -> std::ops::Range<usize> {
        let at = (channel * self.pages_per_block + page) as usize * self.spp;
        at..at + self.spp
    }

    fn xor_into(dst: &mut [u64], src: &[u64]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d ^= s;
        }
    }

    fn current_epoch(&self) -> u64 {
        self.epoch_base + self.epoch_counts.len() as u64 - 1
    }

    /// Issues one host read (instrumented: a read on the write set is counted as a defect).
    fn issue_read(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        sub: &SubRequest,
        ppn: Ppn,
        bytes: u32,
    ) -> Result<(), SimError> {
        let (channel, way, _, _) = self.place_of(ppn);
        let c = channel as usize;
        let writing = if way == self.parity_way() {
            self.busy[c] && self.inflight_on_parity_die[c]
        } else {
            way == self.write_way && !(self.busy[c] && self.inflight_on_parity_die[c])
        };
        if writing {
            self.stats.host_reads_on_write_set += 1;
        }
        let cell = ctx.die_status(self.die(channel, way)).cell;
        if matches!(cell, Some(OpKind::Program | OpKind::Erase)) {
            self.stats.host_reads_on_busy_writer += 1;
        }
        let issue = Issue::host(sub.id).deadline(sub.deadline_ns);
        let id = ctx.read(&[ppn], bytes, issue)?;
        self.read_cmds.push(id);
        Ok(())
    }

    /// Fetches a mapped page for host sub-request `sub`: read directly from a read die, or
    /// rebuilt from its stripe when its die is in the write set. The page's data (payloads)
    /// lands in `scratch`, the read commands in `read_cmds`.
    fn fetch(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        sub: &SubRequest,
        ppn: Ppn,
        bytes: u32,
    ) -> Result<(), SimError> {
        self.read_cmds.clear();
        let (channel, way, group, page) = self.place_of(ppn);
        let sealing = self.sealing == Some(group);
        let open = group == self.open_group;
        // A closed group's stripe needs its parity die: while that die programs, the write
        // die is idle (one command in flight per channel) and the page is read there.
        let parity_die_busy =
            self.busy[channel as usize] && self.inflight_on_parity_die[channel as usize];
        let direct = way == self.write_way && !open && !sealing && parity_die_busy;
        if direct {
            self.stats.direct_reads_on_idle_write_die += 1;
        }
        if way != self.write_way || direct {
            self.stats.normal_reads += 1;
            if ctx.payloads() {
                self.scratch.copy_from_slice(ctx.nand().unit_data(ppn));
            }
            return self.issue_read(ctx, sub, ppn, bytes);
        }
        self.stats.rebuilt_reads += 1;
        ctx.charge_cpu(self.cfg.decode_ns);
        if ctx.payloads() {
            self.scratch.fill(0);
            let r = self.parity_range(channel, page);
            if open {
                Self::xor_into(&mut self.scratch, &self.parity[r]);
            } else if sealing {
                Self::xor_into(&mut self.scratch, &self.sealing_parity[r]);
            }
        }
        // Open group: the pages of earlier ways (later ones are not written: zero). Sealing:
        // the other data pages, the parity from RAM (its die may be programming). Closed:
        // every other page of the stripe, parity included.
        let last = if open {
            self.write_way
        } else if sealing {
            self.parity_way()
        } else {
            self.ways
        };
        for member_way in (0..last).filter(|&w| w != way) {
            let member = self
                .layout
                .ppn(self.block(self.die(channel, member_way), group), page);
            if ctx.payloads() {
                Self::xor_into(&mut self.scratch, ctx.nand().unit_data(member));
            }
            self.stats.rebuild_member_reads += 1;
            self.issue_read(ctx, sub, member, bytes)?;
        }
        Ok(())
    }

    fn page_of_sub(&self, sub: &SubRequest) -> (u32, usize, usize) {
        let spp = self.spp as u64;
        let lpn = sub.first_sector / spp;
        let s0 = (sub.first_sector - lpn * spp) as usize;
        (lpn as u32, s0, s0 + sub.sectors as usize)
    }

    fn read(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let (lpn, s0, s1) = self.page_of_sub(sub);
        let slot = self.buffered[lpn as usize];
        if slot != NONE {
            self.stats.buffer_reads += 1;
            if ctx.payloads() {
                ctx.deliver(
                    sub.id,
                    sub.first_sector,
                    &self.slots[slot as usize].data[s0..s1],
                )?;
            }
        } else if let Some(ppn) = self.map.get(lpn) {
            let bytes = (s1 - s0) as u32 * ctx.sector_bytes();
            self.fetch(ctx, sub, ppn, bytes)?;
            if ctx.payloads() {
                ctx.deliver(sub.id, sub.first_sector, &self.scratch[s0..s1])?;
            }
        } else {
            ctx.deliver(sub.id, sub.first_sector, &self.zeros[s0..s1])?;
        }
        ctx.complete(sub.id);
        Ok(())
    }

    fn write(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let (lpn, _, _) = self.page_of_sub(sub);
        let buffered = self.buffered[lpn as usize] != NONE;
        if !buffered && (!self.waiting.is_empty() || self.buffer_used >= self.sizing.buffer_pages) {
            self.stats.backpressure_waits += 1;
            self.waiting.push_back(*sub);
            return Ok(());
        }
        self.accept_write(ctx, sub)?;
        self.dispatch(ctx)
    }

    /// Merges a write into the buffered copy of its page (sub-requests of non-overlapping
    /// parts of one page may both be outstanding).
    fn absorb(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest, slot: u32) {
        let (_, s0, s1) = self.page_of_sub(sub);
        self.stats.absorbed_overwrites += 1;
        self.units_written += 1;
        let s = &mut self.slots[slot as usize];
        s.seq = self.units_written;
        s.deadline_ns = s.deadline_ns.min(sub.deadline_ns);
        self.pending_order
            .push(Reverse((s.deadline_ns, s.seq, slot)));
        if !s.data.is_empty() {
            s.data[s0..s1].fill(sub.version);
        }
        ctx.complete(sub.id);
    }

    /// Puts a host write into the write buffer and acknowledges it.
    fn accept_write(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let (lpn, s0, s1) = self.page_of_sub(sub);
        let slot = self.buffered[lpn as usize];
        if slot != NONE {
            self.absorb(ctx, sub, slot);
            return Ok(());
        }
        let full = s0 == 0 && s1 == self.spp;
        self.read_cmds.clear();
        self.scratch.fill(0);
        if let Some(old) = self.map.get(lpn).filter(|_| !full) {
            self.stats.rmw_reads += 1;
            let bytes = self.layout.page_bytes;
            self.fetch(ctx, sub, old, bytes)?;
        }
        let index = self.alloc_slot(ctx.payloads());
        self.units_written += 1;
        let epoch = self.current_epoch();
        let s = &mut self.slots[index as usize];
        s.lpn = lpn;
        s.seq = self.units_written;
        s.deadline_ns = sub.deadline_ns;
        s.epoch = epoch;
        s.accepted_ns = ctx.now();
        s.pending = true;
        s.deps.clear();
        s.deps.extend_from_slice(&self.read_cmds);
        if !s.data.is_empty() {
            s.data.copy_from_slice(&self.scratch);
            s.data[s0..s1].fill(sub.version);
        }
        self.buffered[lpn as usize] = index;
        self.pending_order
            .push(Reverse((sub.deadline_ns, self.units_written, index)));
        self.pending_pages += 1;
        self.buffer_used += 1;
        *self.epoch_counts.back_mut().expect("an epoch is open") += 1;
        self.stats.max_buffer_pages = self.stats.max_buffer_pages.max(self.buffer_used);
        ctx.complete(sub.id);
        Ok(())
    }

    fn alloc_slot(&mut self, payloads: bool) -> u32 {
        if let Some(i) = self.free_slots.pop() {
            return i;
        }
        self.slots.push(Slot {
            data: if payloads {
                vec![0; self.spp]
            } else {
                Vec::new()
            },
            deps: Vec::with_capacity(self.ways as usize),
            ..Slot::default()
        });
        (self.slots.len() - 1) as u32
    }

    /// A buffered page left the buffer (programmed and completed, or trimmed): frees its room,
    /// completes flushes whose data is all on flash, admits waiting writes.
    fn buffer_released(&mut self, ctx: &mut FtlCtx<'_>, epoch: u64) -> Result<(), SimError> {
        self.buffer_used -= 1;
        self.epoch_counts[(epoch - self.epoch_base) as usize] -= 1;
        while self.epoch_counts.len() > 1 && self.epoch_counts.front() == Some(&0) {
            self.epoch_counts.pop_front();
            self.epoch_base += 1;
        }
        while let Some(&(epoch, sub)) = self.flushes.front() {
            if epoch >= self.epoch_base {
                break;
            }
            self.flushes.pop_front();
            ctx.complete(sub);
        }
        while self.buffer_used < self.sizing.buffer_pages {
            let Some(w) = self.waiting.pop_front() else {
                break;
            };
            self.accept_write(ctx, &w)?;
        }
        Ok(())
    }

    /// Drops a buffered page (its logical page was trimmed).
    fn drop_buffered(&mut self, ctx: &mut FtlCtx<'_>, lpn: u32) -> Result<(), SimError> {
        let slot = std::mem::replace(&mut self.buffered[lpn as usize], NONE);
        if slot == NONE {
            return Ok(());
        }
        if !std::mem::take(&mut self.slots[slot as usize].pending) {
            return Err(self.bug(format!("buffered page {lpn} not pending")));
        }
        self.pending_pages -= 1;
        self.free_slots.push(slot);
        let epoch = self.slots[slot as usize].epoch;
        self.buffer_released(ctx, epoch)
    }

    fn trim(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let spp = self.spp as u64;
        let first = sub.first_sector.div_ceil(spp);
        let end = ((sub.first_sector + sub.sectors) / spp).min(u64::from(self.map.len()));
        for lpn in first..end {
            let lpn = lpn as u32;
            self.drop_buffered(ctx, lpn)?;
            if let Some(old) = self.map.take(lpn) {
                ctx.invalidate(old)?;
            }
        }
        ctx.complete(sub.id);
        self.dispatch(ctx)
    }

    /// A flush completes once every page buffered before it is programmed (its epoch done).
    fn flush(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let epoch = self.current_epoch();
        if self.epoch_counts.back() == Some(&0) && self.epoch_counts.len() == 1 {
            ctx.complete(sub.id);
            return Ok(());
        }
        self.flushes.push_back((epoch, sub.id));
        self.epoch_counts.push_back(0);
        Ok(())
    }
}

impl Ftl for PartFtl {
    fn name(&self) -> &'static str {
        "part-ftl"
    }
    fn logical_bytes(&self) -> u64 {
        u64::from(self.sizing.logical_pages) * u64::from(self.layout.page_bytes)
    }
    fn chop_bytes(&self) -> u32 {
        self.layout.page_bytes
    }
    fn trim_unit_bytes(&self) -> u32 {
        self.layout.page_bytes
    }
    fn units_per_page(&self) -> u32 {
        1
    }

    fn submit(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        match sub.op {
            Op::Read => {
                ctx.charge_cpu(self.cfg.cpu_page_ns);
                self.read(ctx, sub)
            }
            Op::Write => {
                ctx.charge_cpu(self.cfg.cpu_page_ns);
                self.write(ctx, sub)
            }
            Op::Trim => self.trim(ctx, sub),
            Op::Flush => self.flush(ctx, sub),
        }
    }

    /// Part-ftl.txt V: "The FTL retrieves the requests and orders them according to Earliest
    /// Deadline First".
    fn orders_host_calls_by_deadline(&self) -> bool {
        true
    }

    fn flash_done(&mut self, ctx: &mut FtlCtx<'_>, token: u64) -> Result<(), SimError> {
        self.step_done(ctx, token)
    }

    fn check_invariants(&self, nand: &Nand) -> Result<(), String> {
        self.check(nand)
    }

    fn reset_counters(&mut self, _now_ns: u64) {
        self.stats = PartStats {
            max_buffer_pages: self.buffer_used,
            ..PartStats::default()
        };
        self.to_flash.reset();
    }

    fn report(&self) -> serde_json::Value {
        serde_json::json!({
            "ways": self.ways,
            "write_set_dies": self.channels,
            "parity_way": self.parity_way(),
            "stripe_groups": self.groups,
            "logical_pages": self.sizing.logical_pages,
            "write_buffer_pages": self.sizing.buffer_pages,
            "write_way": self.write_way,
            "sealing_group": self.sealing,
            "free_groups": self.free_groups.len(),
            "counters": self.counters_json(),
        })
    }

    fn state_bytes(&self) -> u64 {
        self.map.state_bytes()
            + self.buffered.len() as u64 * 4
            + self.needs_erase.len() as u64
            + self.parity.len() as u64 * 8
            + u64::from(self.groups) * 8
            + self.sizing.buffer_pages * (self.layout.page_bytes as u64 + 32)
    }
}
