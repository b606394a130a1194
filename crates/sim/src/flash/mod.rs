//! The flash scheduler: the timing half of the NAND model.
//!
//! FTLs submit commands (their functional effect has already been applied to [`crate::nand`]);
//! the scheduler decides *when* each runs:
//! - a per-die queue, served in the order of a [`QueuePolicy`] (FIFO, read-first, EDF);
//! - commands on the same block start in the order they were issued, whatever the policy, so
//!   reordering can never break the NAND rules (programs in page order, erase after the reads
//!   of a victim, reads after the program of their page); on chips that program pages in any
//!   order ([`ProgramOrder::Any`]) a read waits for every earlier unstarted writer of its block,
//!   since the pages programmed so far are no longer those below a high-water mark;
//! - explicit dependencies: a command can wait for other commands to complete (a GC program
//!   waits for the reads that fetched its data);
//! - a die runs one cell operation at a time; with `cache_ops` a read's data-out overlaps the
//!   next read's cell time and a program's data-in overlaps the previous program's cell time;
//! - each channel bus is shared by the dies on it, granted round-robin one page-buffer chunk
//!   at a time (or one whole transfer when `page_buffer_bytes` is 0).
//!
//! In functional-only mode every command completes the moment it is released.

use std::collections::VecDeque;

use crate::config::{ProgramOrder, QueuePolicy, Timing};
use crate::engine::events::{Event, EventQueue};
use crate::nand::{BlockId, DieId, Layout};

/// Kinds of flash command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// Page read: cell read, then data out over the bus.
    Read,
    /// Spare-area-only read.
    ReadOob,
    /// Page program: data in over the bus, then cell program.
    Program,
    /// Spare-area-only program (partial page program).
    ProgramOob,
    /// Block erase (die only, no bus).
    Erase,
    /// Page copy inside a plane (read then program, no bus).
    Copyback,
}

impl OpKind {
    pub const ALL: [OpKind; 6] = [
        OpKind::Read,
        OpKind::ReadOob,
        OpKind::Program,
        OpKind::ProgramOob,
        OpKind::Erase,
        OpKind::Copyback,
    ];
    pub fn index(self) -> usize {
        self as usize
    }
    /// Report name.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "reads",
            OpKind::ReadOob => "oob_reads",
            OpKind::Program => "programs",
            OpKind::ProgramOob => "oob_programs",
            OpKind::Erase => "erases",
            OpKind::Copyback => "copybacks",
        }
    }
    fn is_read(self) -> bool {
        matches!(self, OpKind::Read | OpKind::ReadOob)
    }
    fn is_program(self) -> bool {
        matches!(self, OpKind::Program | OpKind::ProgramOob)
    }
}

/// Why a flash command was issued (flash counters are split by cause).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cause {
    /// Serving a host request.
    Host,
    /// Garbage collection.
    Gc,
    /// Mapping-table traffic (translation pages of demand-based FTLs).
    Mapping,
    /// Log-block merges and folds of hybrid and block-mapped FTLs.
    Merge,
}

impl Cause {
    pub const ALL: [Cause; 4] = [Cause::Host, Cause::Gc, Cause::Mapping, Cause::Merge];
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        match self {
            Cause::Host => "host",
            Cause::Gc => "gc",
            Cause::Mapping => "mapping",
            Cause::Merge => "merge",
        }
    }
}

/// Most planes one multi-plane command spans.
pub const MAX_PLANES_PER_OP: usize = 4;

/// A flash command as an FTL describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlashOp {
    pub kind: OpKind,
    pub die: DieId,
    /// Block of each plane the command touches (multi-plane commands list several).
    pub blocks: [BlockId; MAX_PLANES_PER_OP],
    /// Number of entries of `blocks` in use (1 for single-plane commands).
    pub planes: u8,
    /// Page (within its block) read or programmed; the destination page of a copyback.
    pub page: u32,
    /// Bytes crossing the channel bus (all planes together); 0 for erase and copyback.
    pub bus_bytes: u32,
    pub cause: Cause,
    /// Absolute deadline for EDF queues (`u64::MAX`: none).
    pub deadline_ns: u64,
}

impl FlashOp {
    /// A single-plane command on `block` of `die`.
    pub fn single(kind: OpKind, die: DieId, block: BlockId, bus_bytes: u32, cause: Cause) -> Self {
        FlashOp {
            kind,
            die,
            blocks: [block; MAX_PLANES_PER_OP],
            planes: 1,
            page: 0,
            bus_bytes,
            cause,
            deadline_ns: u64::MAX,
        }
    }
    fn blocks(&self) -> &[BlockId] {
        &self.blocks[..self.planes as usize]
    }
}

/// Handle of a submitted command; stale handles (of completed commands) are harmless.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CmdId {
    idx: u32,
    gen: u32,
}

impl CmdId {
    /// The handle of a command that completed when it was issued (functional-only mode).
    pub const DONE: CmdId = CmdId { idx: NIL, gen: 0 };
}

/// A finished command the engine must report: to the FTL (`token != 0`) and/or to the host
/// sub-request it was attached to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub token: u64,
    pub sub: u32,
}

/// Marker for "none" in index fields.
pub const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Free,
    /// Waiting for release (end of the issuing FTL handler) and/or dependencies.
    Pending,
    Queued,
    Running,
}

/// Scheduling state of a command: what dependency tracking touches, kept apart from the
/// command's description so thousands of queued commands stay cache-friendly.
#[derive(Debug, Clone, Copy)]
struct CmdState {
    gen: u32,
    /// Unfinished dependencies: commands to complete plus same-block predecessors to start.
    waits: u32,
    /// Commands waiting for this one to complete.
    on_complete: u32,
    /// Commands waiting for this one to start.
    on_start: u32,
    stage: Stage,
    released: bool,
}

/// What a command does and whom to tell when it is done.
#[derive(Debug, Clone, Copy)]
struct CmdData {
    op: FlashOp,
    token: u64,
    sub: u32,
    xfer_left: u32,
}

/// Ordering state of one block: its latest unstarted command of any kind, its latest
/// unstarted writer (program, erase, copyback destination, OOB program), how many pages have
/// started programming since its last erase started, and erases not yet started.
#[derive(Debug, Clone, Copy)]
struct BlockOrder {
    last_any: (u32, u32),
    last_writer: (u32, u32),
    writer_is_not_program: bool,
    started_pages: u32,
    erases_pending: u32,
}

impl Default for BlockOrder {
    fn default() -> Self {
        BlockOrder {
            last_any: (NIL, 0),
            last_writer: (NIL, 0),
            writer_is_not_program: false,
            started_pages: 0,
            erases_pending: 0,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Edge {
    cmd: u32,
    next: u32,
}

#[derive(Debug, Clone, Default)]
struct Die {
    queue: VecDeque<u32>,
    /// Command occupying the cell (array) of the die.
    cell: u32,
    /// Command occupying the cache register (cache operations only).
    cache: u32,
    /// Command that finished one phase and waits for the other resource.
    waiting: u32,
    active_since: u64,
    busy_ns: u64,
}

#[derive(Debug, Clone, Default)]
struct Channel {
    busy: bool,
    current_slot: u32,
    chunk_bytes: u32,
    next_slot: u32,
    /// Per die slot on the channel: command wanting the bus, or NIL.
    want: Vec<u32>,
    pending: u32,
    busy_ns: u64,
}

/// Per-cause counts of each kind of flash operation (pages for reads and programs, blocks for
/// erases), and utilisation counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlashCounters {
    pub ops: [[u64; 4]; 6],
}

impl FlashCounters {
    /// Counts one command: a page per plane for reads and programs (a block per plane for
    /// erases), one page for a copyback.
    fn record(&mut self, op: &FlashOp) {
        let units = if op.kind == OpKind::Copyback {
            1
        } else {
            u64::from(op.planes)
        };
        self.ops[op.kind.index()][op.cause.index()] += units;
    }
    /// Pages written to flash by programs and copybacks, all causes (the numerator of write
    /// amplification).
    pub fn programmed_pages(&self) -> u64 {
        self.total(OpKind::Program) + self.total(OpKind::Copyback)
    }
    pub fn get(&self, kind: OpKind, cause: Cause) -> u64 {
        self.ops[kind.index()][cause.index()]
    }
    pub fn total(&self, kind: OpKind) -> u64 {
        self.ops[kind.index()].iter().sum()
    }
}

/// What a die is doing, for FTLs that decide by the state of the hardware.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DieStatus {
    /// Kind of the command holding the die's cell, if any.
    pub cell: Option<OpKind>,
    /// Commands waiting in the die's queue.
    pub queued: usize,
}

/// Timing-model state of all dies and channels.
#[derive(Debug)]
pub struct FlashScheduler {
    layout: Layout,
    timing: Timing,
    instant: bool,
    state: Vec<CmdState>,
    data: Vec<CmdData>,
    free_cmds: Vec<u32>,
    edges: Vec<Edge>,
    free_edges: Vec<u32>,
    dies: Vec<Die>,
    channels: Vec<Channel>,
    /// Per block: what later commands on it must wait for (see [`BlockOrder`]).
    order: Vec<BlockOrder>,
    /// Commands whose dependencies were met during the current step, to enqueue.
    ready: Vec<u32>,
    completed: Vec<Completion>,
    counters: FlashCounters,
    in_flight: usize,
    /// Report completed programs (verify runs track what is durable).
    report_programs: bool,
    finished_programs: Vec<CmdId>,
    /// Pages of a block may be programmed in any order (reads then wait for every earlier
    /// writer of their block).
    any_order: bool,
}

impl FlashScheduler {
    /// A scheduler for `layout`; `instant` completes every command when released.
    pub fn new(layout: Layout, timing: Timing, instant: bool) -> Self {
        let die = Die {
            cell: NIL,
            cache: NIL,
            waiting: NIL,
            ..Die::default()
        };
        let channel = Channel {
            want: vec![NIL; layout.dies_per_channel() as usize],
            ..Channel::default()
        };
        FlashScheduler {
            layout,
            timing,
            instant,
            state: Vec::new(),
            data: Vec::new(),
            free_cmds: Vec::new(),
            edges: Vec::new(),
            free_edges: Vec::new(),
            dies: vec![die; layout.dies() as usize],
            channels: vec![channel; layout.channels as usize],
            order: if instant {
                Vec::new()
            } else {
                vec![BlockOrder::default(); layout.blocks() as usize]
            },
            ready: Vec::new(),
            completed: Vec::new(),
            counters: FlashCounters::default(),
            in_flight: 0,
            report_programs: false,
            finished_programs: Vec::new(),
            any_order: false,
        }
    }

    /// Starts the ordering of `block` with its first `pages` pages programmed before this
    /// scheduler existed (in a functional-only phase, e.g. preconditioning), so a read of one
    /// of them waits for no later program of the block.
    pub fn assume_programmed(&mut self, block: BlockId, pages: u32) {
        if let Some(o) = self.order.get_mut(block as usize) {
            o.started_pages = pages;
        }
    }

    /// The chip's program order (sequential by default), which decides what a read of a page
    /// must wait for.
    pub fn set_program_order(&mut self, order: ProgramOrder) {
        self.any_order = order == ProgramOrder::Any;
    }

    /// Makes completed programs available to [`FlashScheduler::drain_finished_programs`].
    pub fn report_programs(&mut self, on: bool) {
        self.report_programs = on;
    }

    /// Moves the handles of the programs completed since the last call to `out` (only with
    /// [`FlashScheduler::report_programs`]).
    pub fn drain_finished_programs(&mut self, out: &mut Vec<CmdId>) {
        out.append(&mut self.finished_programs);
    }

    pub fn counters(&self) -> &FlashCounters {
        &self.counters
    }
    /// Carries counters over to a rebuilt scheduler.
    pub fn restore_counters(&mut self, counters: FlashCounters) {
        self.counters = counters;
    }
    pub fn reset_counters(&mut self) {
        self.counters = FlashCounters::default();
        for d in &mut self.dies {
            d.busy_ns = 0;
        }
        for c in &mut self.channels {
            c.busy_ns = 0;
        }
    }
    /// Commands submitted and not yet completed.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }
    pub fn is_instant(&self) -> bool {
        self.instant
    }
    pub fn die_status(&self, die: DieId) -> DieStatus {
        let d = &self.dies[die as usize];
        DieStatus {
            cell: (d.cell != NIL).then(|| self.data[d.cell as usize].op.kind),
            queued: d.queue.len(),
        }
    }
    /// Busy time of each die (cell or cache register in use), measured since the last reset;
    /// `now` closes the interval of dies still busy.
    pub fn die_busy_ns(&self, now: u64) -> Vec<u64> {
        self.dies
            .iter()
            .map(|d| {
                let open = if d.cell != NIL || d.cache != NIL {
                    now.saturating_sub(d.active_since)
                } else {
                    0
                };
                d.busy_ns + open
            })
            .collect()
    }
    /// Bus-busy time of each channel since the last reset.
    pub fn channel_busy_ns(&self) -> Vec<u64> {
        self.channels.iter().map(|c| c.busy_ns).collect()
    }
    /// Restarts die busy intervals at `now` (after a reset of the measurement).
    pub fn restart_busy_clock(&mut self, now: u64) {
        for d in &mut self.dies {
            d.active_since = now;
        }
    }

    /// Takes the completions gathered since the last call.
    pub fn drain_completions(&mut self, out: &mut Vec<Completion>) {
        out.append(&mut self.completed);
    }
    pub fn has_completions(&self) -> bool {
        !self.completed.is_empty() || !self.finished_programs.is_empty()
    }

    /// Counts a command of a functional-only run, which completes the moment it is released
    /// (the caller reports its completion with [`FlashScheduler::complete_instant`]).
    pub fn count_instant(&mut self, op: &FlashOp) {
        debug_assert!(self.instant);
        self.counters.record(op);
    }

    /// Reports the completion of a functional-only command at its release.
    pub fn complete_instant(&mut self, token: u64, sub: u32) {
        self.completed.push(Completion { token, sub });
    }

    /// Submits a command that will start only after it is released and `after` completed.
    pub fn submit(&mut self, op: FlashOp, after: &[CmdId], token: u64, sub: u32) -> CmdId {
        self.counters.record(&op);
        self.in_flight += 1;
        let idx = self.alloc_cmd(op, token, sub);
        let gen = self.state[idx as usize].gen;
        if !self.instant {
            for dep in after {
                if self.is_live(*dep) {
                    let e = self.alloc_edge(idx, self.state[dep.idx as usize].on_complete);
                    self.state[dep.idx as usize].on_complete = e;
                    self.state[idx as usize].waits += 1;
                }
            }
            self.chain_same_block(idx, gen);
        }
        CmdId { idx, gen }
    }

    /// Releases a submitted command (the FTL handler that issued it has committed).
    pub fn release(&mut self, id: CmdId, now: u64, events: &mut EventQueue) {
        if !self.is_live(id) {
            return;
        }
        let idx = id.idx;
        if self.instant {
            self.complete(idx);
            return;
        }
        self.state[idx as usize].released = true;
        if self.state[idx as usize].waits == 0 {
            self.ready.push(idx);
        }
        self.flush_ready(now, events);
    }

    /// Handles a scheduler event.
    pub fn on_event(&mut self, event: Event, now: u64, events: &mut EventQueue) {
        match event {
            Event::CellDone { die } => self.cell_done(die, now, events),
            Event::BusDone { channel } => self.bus_done(channel, now, events),
            _ => unreachable!("not a flash event: {event:?}"),
        }
        self.flush_ready(now, events);
    }

    fn is_live(&self, id: CmdId) -> bool {
        self.state
            .get(id.idx as usize)
            .is_some_and(|c| c.gen == id.gen && c.stage != Stage::Free)
    }

    fn alloc_cmd(&mut self, op: FlashOp, token: u64, sub: u32) -> u32 {
        let data = CmdData {
            op,
            token,
            sub,
            xfer_left: op.bus_bytes,
        };
        let state = CmdState {
            gen: 0,
            waits: 0,
            on_complete: NIL,
            on_start: NIL,
            stage: Stage::Pending,
            released: false,
        };
        match self.free_cmds.pop() {
            Some(i) => {
                let gen = self.state[i as usize].gen;
                self.state[i as usize] = CmdState { gen, ..state };
                self.data[i as usize] = data;
                i
            }
            None => {
                self.state.push(state);
                self.data.push(data);
                (self.state.len() - 1) as u32
            }
        }
    }

    fn alloc_edge(&mut self, cmd: u32, next: u32) -> u32 {
        let e = Edge { cmd, next };
        match self.free_edges.pop() {
            Some(i) => {
                self.edges[i as usize] = e;
                i
            }
            None => {
                self.edges.push(e);
                (self.edges.len() - 1) as u32
            }
        }
    }

    /// Makes `idx` wait for the start of the commands on its blocks that the NAND rules order
    /// before it: programs and erases in issue order, an erase after everything before it, a
    /// read after the program of its page (and after a pending erase).
    fn chain_same_block(&mut self, idx: u32, gen: u32) {
        let op = self.data[idx as usize].op;
        let this = (idx, gen);
        for (i, &block) in op.blocks().iter().enumerate() {
            let o = self.order[block as usize];
            // A copyback reads its source (second block) and programs its destination.
            let reads = op.kind.is_read() || (op.kind == OpKind::Copyback && i == 1);
            let wait_for = if reads {
                let writer_pending = self.unstarted(o.last_writer).is_some();
                (writer_pending
                    && (self.any_order
                        || o.erases_pending > 0
                        || o.writer_is_not_program
                        || op.page >= o.started_pages))
                    .then_some(o.last_writer)
            } else if op.kind == OpKind::Erase {
                Some(o.last_any)
            } else {
                Some(o.last_writer)
            };
            if let Some(prev) = wait_for {
                self.wait_for_start(idx, prev);
            }
            let o = &mut self.order[block as usize];
            o.last_any = this;
            if !reads {
                o.last_writer = this;
                o.writer_is_not_program = matches!(op.kind, OpKind::Erase | OpKind::ProgramOob);
                o.erases_pending += u32::from(op.kind == OpKind::Erase);
            }
        }
    }

    /// The command `(idx, gen)` if it is live and has not started.
    fn unstarted(&self, (idx, gen): (u32, u32)) -> Option<u32> {
        (idx != NIL && self.is_live(CmdId { idx, gen }))
            .then_some(idx)
            .filter(|&i| matches!(self.state[i as usize].stage, Stage::Pending | Stage::Queued))
    }

    /// Adds a start dependency of `idx` on `prev` unless `prev` started, or a FIFO die queue
    /// already keeps it ahead (it is queued on the same die).
    fn wait_for_start(&mut self, idx: u32, prev: (u32, u32)) {
        let Some(p) = self.unstarted(prev) else {
            return;
        };
        if p == idx {
            return;
        }
        let queued_ahead = self.state[p as usize].stage == Stage::Queued
            && self.timing.die_queue_policy == QueuePolicy::Fifo
            && self.data[p as usize].op.die == self.data[idx as usize].op.die;
        if !queued_ahead {
            let e = self.alloc_edge(idx, self.state[p as usize].on_start);
            self.state[p as usize].on_start = e;
            self.state[idx as usize].waits += 1;
        }
    }

    /// Decrements the waits of every command on an edge list and frees the list.
    fn notify(&mut self, mut edge: u32) {
        while edge != NIL {
            let Edge { cmd, next } = self.edges[edge as usize];
            self.free_edges.push(edge);
            let c = &mut self.state[cmd as usize];
            c.waits -= 1;
            if c.waits == 0 && c.released {
                self.ready.push(cmd);
            }
            edge = next;
        }
    }

    fn flush_ready(&mut self, now: u64, events: &mut EventQueue) {
        while let Some(idx) = self.ready.pop() {
            let die = self.data[idx as usize].op.die;
            self.state[idx as usize].stage = Stage::Queued;
            self.dies[die as usize].queue.push_back(idx);
            self.try_start(die, now, events);
        }
    }

    fn select(&self, die: DieId) -> Option<usize> {
        let q = &self.dies[die as usize].queue;
        if q.is_empty() {
            return None;
        }
        Some(match self.timing.die_queue_policy {
            QueuePolicy::Fifo => 0,
            QueuePolicy::ReadFirst => q
                .iter()
                .position(|&c| self.data[c as usize].op.kind.is_read())
                .unwrap_or(0),
            QueuePolicy::Edf => {
                let mut best = 0;
                for (i, &c) in q.iter().enumerate() {
                    if self.data[c as usize].op.deadline_ns
                        < self.data[q[best] as usize].op.deadline_ns
                    {
                        best = i;
                    }
                }
                best
            }
        })
    }

    fn kind_of(&self, idx: u32) -> Option<OpKind> {
        (idx != NIL).then(|| self.data[idx as usize].op.kind)
    }

    fn can_start(&self, die: DieId, kind: OpKind) -> bool {
        let d = &self.dies[die as usize];
        if !self.timing.cache_ops {
            return d.cell == NIL;
        }
        if d.waiting != NIL {
            return false;
        }
        let cell = self.kind_of(d.cell);
        let cache = self.kind_of(d.cache);
        if kind.is_read() {
            d.cell == NIL && cache.is_none_or(OpKind::is_read)
        } else if kind.is_program() {
            d.cache == NIL && cell.is_none_or(OpKind::is_program)
        } else {
            d.cell == NIL && d.cache == NIL
        }
    }

    fn try_start(&mut self, die: DieId, now: u64, events: &mut EventQueue) {
        while let Some(pos) = self.select(die) {
            let idx = self.dies[die as usize].queue[pos];
            if !self.can_start(die, self.data[idx as usize].op.kind) {
                break;
            }
            let queue = &mut self.dies[die as usize].queue;
            if pos == 0 {
                queue.pop_front();
            } else {
                queue.remove(pos);
            }
            self.start(die, idx, now, events);
        }
    }

    fn start(&mut self, die: DieId, idx: u32, now: u64, events: &mut EventQueue) {
        let op = self.data[idx as usize].op;
        self.state[idx as usize].stage = Stage::Running;
        for (i, &block) in op.blocks().iter().enumerate() {
            let o = &mut self.order[block as usize];
            if o.last_any.0 == idx {
                o.last_any = (NIL, 0);
            }
            if o.last_writer.0 == idx {
                o.last_writer = (NIL, 0);
            }
            match op.kind {
                OpKind::Erase => {
                    o.erases_pending -= 1;
                    o.started_pages = 0;
                }
                OpKind::Program => o.started_pages = o.started_pages.max(op.page + 1),
                OpKind::Copyback if i == 0 => o.started_pages = o.started_pages.max(op.page + 1),
                _ => {}
            }
        }
        let waiters = std::mem::replace(&mut self.state[idx as usize].on_start, NIL);
        self.notify(waiters);
        let t = &self.timing;
        match op.kind {
            OpKind::Read | OpKind::ReadOob => {
                let cell_ns = if op.kind == OpKind::Read {
                    t.read_latency_ns
                } else {
                    t.read_oob_latency_ns
                };
                self.set_cell(die, idx, now);
                events.schedule(now + cell_ns, Event::CellDone { die });
            }
            OpKind::Program | OpKind::ProgramOob => {
                if self.timing.cache_ops {
                    self.set_cache(die, idx, now);
                } else {
                    self.set_cell(die, idx, now);
                }
                self.request_bus(idx, now, events);
            }
            OpKind::Erase => {
                let ns = t.erase_latency_ns;
                self.set_cell(die, idx, now);
                events.schedule(now + ns, Event::CellDone { die });
            }
            OpKind::Copyback => {
                let ns = t.read_latency_ns + t.program_latency_ns;
                self.set_cell(die, idx, now);
                events.schedule(now + ns, Event::CellDone { die });
            }
        }
    }

    fn cell_done(&mut self, die: DieId, now: u64, events: &mut EventQueue) {
        let idx = self.dies[die as usize].cell;
        let kind = self.data[idx as usize].op.kind;
        if kind.is_read() {
            if !self.timing.cache_ops {
                self.request_bus(idx, now, events);
            } else if self.dies[die as usize].cache == NIL {
                self.set_cache(die, idx, now);
                self.set_cell(die, NIL, now);
                self.request_bus(idx, now, events);
            } else {
                self.dies[die as usize].waiting = idx;
            }
        } else {
            self.set_cell(die, NIL, now);
            self.complete(idx);
            let waiting = self.dies[die as usize].waiting;
            if waiting != NIL && self.data[waiting as usize].op.kind.is_program() {
                self.dies[die as usize].waiting = NIL;
                self.set_cache(die, NIL, now);
                self.start_program_cell(die, waiting, now, events);
            }
        }
        self.try_start(die, now, events);
    }

    fn start_program_cell(&mut self, die: DieId, idx: u32, now: u64, events: &mut EventQueue) {
        let ns = if self.data[idx as usize].op.kind == OpKind::Program {
            self.timing.program_latency_ns
        } else {
            self.timing.program_oob_latency_ns
        };
        self.set_cell(die, idx, now);
        events.schedule(now + ns, Event::CellDone { die });
    }

    /// The bus transfer of `idx` finished.
    fn transfer_done(&mut self, idx: u32, now: u64, events: &mut EventQueue) {
        let op = self.data[idx as usize].op;
        let die = op.die;
        if op.kind.is_read() {
            self.complete(idx);
            if self.timing.cache_ops {
                self.set_cache(die, NIL, now);
                let waiting = self.dies[die as usize].waiting;
                if waiting != NIL {
                    self.dies[die as usize].waiting = NIL;
                    self.set_cache(die, waiting, now);
                    self.set_cell(die, NIL, now);
                    self.request_bus(waiting, now, events);
                }
            } else {
                self.set_cell(die, NIL, now);
            }
        } else if !self.timing.cache_ops {
            let ns = if op.kind == OpKind::Program {
                self.timing.program_latency_ns
            } else {
                self.timing.program_oob_latency_ns
            };
            events.schedule(now + ns, Event::CellDone { die });
        } else if self.dies[die as usize].cell == NIL {
            self.set_cache(die, NIL, now);
            self.start_program_cell(die, idx, now, events);
        } else {
            self.dies[die as usize].waiting = idx;
        }
        self.try_start(die, now, events);
    }

    fn request_bus(&mut self, idx: u32, now: u64, events: &mut EventQueue) {
        let die = self.data[idx as usize].op.die;
        if self.data[idx as usize].xfer_left == 0 {
            self.transfer_done(idx, now, events);
            return;
        }
        let ch = self.layout.channel_of(die) as usize;
        let slot = self.layout.slot_on_channel(die) as usize;
        debug_assert_eq!(
            self.channels[ch].want[slot], NIL,
            "one transfer per die at a time"
        );
        self.channels[ch].want[slot] = idx;
        self.channels[ch].pending += 1;
        if !self.channels[ch].busy {
            self.grant_bus(ch as u32, now, events);
        }
    }

    fn grant_bus(&mut self, channel: u32, now: u64, events: &mut EventQueue) {
        let chunk_limit = self.timing.page_buffer_bytes;
        let c = &mut self.channels[channel as usize];
        if c.pending == 0 {
            return;
        }
        let slots = c.want.len() as u32;
        let mut slot = c.next_slot % slots;
        while c.want[slot as usize] == NIL {
            slot = (slot + 1) % slots;
        }
        let idx = c.want[slot as usize];
        let left = self.data[idx as usize].xfer_left;
        let chunk = if chunk_limit == 0 {
            left
        } else {
            left.min(chunk_limit)
        };
        let ns = self.timing.bus_ns(u64::from(chunk));
        c.busy = true;
        c.current_slot = slot;
        c.chunk_bytes = chunk;
        c.next_slot = (slot + 1) % slots;
        c.busy_ns += ns;
        events.schedule(now + ns, Event::BusDone { channel });
    }

    fn bus_done(&mut self, channel: u32, now: u64, events: &mut EventQueue) {
        let c = &mut self.channels[channel as usize];
        c.busy = false;
        let slot = c.current_slot as usize;
        let idx = c.want[slot];
        let cmd = &mut self.data[idx as usize];
        cmd.xfer_left -= c.chunk_bytes;
        if cmd.xfer_left == 0 {
            c.want[slot] = NIL;
            c.pending -= 1;
            self.transfer_done(idx, now, events);
        }
        if !self.channels[channel as usize].busy {
            self.grant_bus(channel, now, events);
        }
    }

    fn set_cell(&mut self, die: DieId, idx: u32, now: u64) {
        self.track_activity(die, now, |d| d.cell = idx);
    }

    fn set_cache(&mut self, die: DieId, idx: u32, now: u64) {
        self.track_activity(die, now, |d| d.cache = idx);
    }

    fn track_activity(&mut self, die: DieId, now: u64, change: impl FnOnce(&mut Die)) {
        let d = &mut self.dies[die as usize];
        let was = d.cell != NIL || d.cache != NIL;
        change(d);
        let is = d.cell != NIL || d.cache != NIL;
        if !was && is {
            d.active_since = now;
        } else if was && !is {
            d.busy_ns += now.saturating_sub(d.active_since);
        }
    }

    fn complete(&mut self, idx: u32) {
        let d = &self.data[idx as usize];
        if self.report_programs && d.op.kind == OpKind::Program {
            let gen = self.state[idx as usize].gen;
            self.finished_programs.push(CmdId { idx, gen });
        }
        if d.token != 0 || d.sub != NIL {
            self.completed.push(Completion {
                token: d.token,
                sub: d.sub,
            });
        }
        let c = &mut self.state[idx as usize];
        c.stage = Stage::Free;
        c.gen = c.gen.wrapping_add(1);
        let edges = std::mem::replace(&mut c.on_complete, NIL);
        self.in_flight -= 1;
        self.free_cmds.push(idx);
        self.notify(edges);
    }
}

#[cfg(test)]
mod tests;
