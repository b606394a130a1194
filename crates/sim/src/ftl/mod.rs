//! FTL plug-ins: the [`Ftl`] trait every algorithm implements, the [`FtlCtx`] through which it
//! touches the device, and the [`registry`] that builds one by name.
//!
//! An FTL is event-driven. The engine calls it when a host sub-request arrives, when a flash
//! command it tagged with a token completes, at a wake-up it asked for, and when the host goes
//! idle. In each call it may:
//! - apply NAND operations through the context (`read`, `program`, `erase`, `copyback`, ...):
//!   the functional effect happens at once (NAND rules checked), the timed command is queued
//!   on its die, optionally after other commands (`Issue::after`);
//! - attach commands to a host sub-request and declare it handled (`complete`): the host sees
//!   it done when every attached command finished;
//! - charge CPU time (`charge_cpu`, `charge_cpu_for` per activity) and map-unit time
//!   (`charge_map_unit`): its commands and completions take effect when that time has run on
//!   one of the configured cores (then on the map unit); commands on one block still start in
//!   the order the FTL issued them;
//! - look at the hardware (`die_status`) and schedule its own wake-ups (`wake_at`).
//!
//! This covers simple FTLs (issue a chain of commands per request) and complex ones
//! (non-blocking map caches with many misses in flight, partial GC steps, EDF-ordered work,
//! an RTOS of FTL tasks) without special cases in the engine.

pub mod demand;
pub mod logblock;
pub mod mapcache;
pub mod mapping;
pub mod merge;
pub mod mtftl;
pub mod nftl;
pub mod pagemap;
pub mod part;
pub mod registry;
pub mod rtgc;
pub mod twolevel;
pub mod waogc;

use rand_pcg::Pcg64Mcg;
use serde::Serialize;

use crate::engine::events::EventQueue;
use crate::flash::{
    Cause, CmdId, DieStatus, FlashOp, FlashScheduler, OpKind, MAX_PLANES_PER_OP, NIL,
};
use crate::host::{SubId, SubRequest};
use crate::nand::{
    BlockId, DieId, Layout, Nand, NandError, OobEntry, Ppn, Spare, OOB_FLAG_TRANSLATION,
};
use crate::verify::Shadow;
use crate::SimError;
use mapcache::MapCacheReport;
use mapping::RecoveryScan;
use merge::{MergeProfile, MergeRecord, MergeStats};

/// A flash translation layer.
pub trait Ftl {
    /// Registry name.
    fn name(&self) -> &'static str;
    /// Bytes of logical space exported to the host.
    fn logical_bytes(&self) -> u64;
    /// Host reads and writes are split at multiples of this many bytes (one sub-request each).
    fn chop_bytes(&self) -> u32;
    /// Trims deallocate only whole aligned units of this many bytes.
    fn trim_unit_bytes(&self) -> u32;
    /// Mapping units per flash page (OOB entries per page).
    fn units_per_page(&self) -> u32;
    /// A host sub-request (read, write, trim or flush) arrived.
    fn submit(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError>;
    /// A flash command submitted with a non-zero token completed.
    fn flash_done(&mut self, ctx: &mut FtlCtx<'_>, token: u64) -> Result<(), SimError>;
    /// A wake-up asked for with [`FtlCtx::wake_at`].
    fn wakeup(&mut self, _ctx: &mut FtlCtx<'_>, _token: u64) -> Result<(), SimError> {
        Ok(())
    }
    /// The host has no request outstanding: a chance for background work.
    fn idle(&mut self, _ctx: &mut FtlCtx<'_>) -> Result<(), SimError> {
        Ok(())
    }
    /// Checks the FTL's structures against the NAND state (mapping and reverse map agree,
    /// counts add up). Called by tests and verify runs when no command is in flight.
    fn check_invariants(&self, nand: &Nand) -> Result<(), String>;
    /// Clears the FTL-specific counters of [`Ftl::report`] (at the start of a measurement, at
    /// `now_ns`).
    fn reset_counters(&mut self, _now_ns: u64) {}
    /// FTL-specific figures for the report.
    fn report(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
    /// Approximate bytes of FTL state (mapping tables, block lists).
    fn state_bytes(&self) -> u64;
    /// Block-mapped and log-block FTLs return what their design says about merges; the report
    /// then has a `merges` section (JSON null for FTLs that do not merge).
    fn merge_profile(&self) -> Option<MergeProfile> {
        None
    }
    /// Demand-paged FTLs return their map cache's figures; the report then has a `map_cache`
    /// section (JSON null for FTLs without a map cache).
    fn map_cache(&self) -> Option<MapCacheReport> {
        None
    }
    /// Which of the `cores` FTL cores must run `call` (`0 .. cores`), for FTLs whose mapping
    /// table is split statically across cores (fmmu.txt section 3.2); `None`: any free core.
    fn core_for(&self, _call: CallTarget<'_>, _cores: u32) -> Option<u32> {
        None
    }
    /// How the hardware map unit (FTLs that charge [`FtlCtx::charge_map_unit`]) picks its
    /// next piece of work; read once when the simulation is built.
    fn map_unit_arbiter(&self) -> MapUnitArbiter {
        MapUnitArbiter::Fifo
    }
    /// Whether the CPU takes this FTL's waiting host sub-requests earliest deadline first (a
    /// request buffer ordered by deadline, part-ftl.txt V) instead of first come, first
    /// served; read once when the simulation is built. Only matters when handlers charge CPU
    /// time (otherwise nothing waits for a core).
    fn orders_host_calls_by_deadline(&self) -> bool {
        false
    }
    /// Whether [`Ftl::recover`] rebuilds this FTL's state after a power cut: whether the
    /// registry lists it in [`registry::RECOVERABLE`] (the one list; an FTL there overrides
    /// [`Ftl::recover`], which `tests/recovery_every_ftl.rs` checks).
    fn supports_recovery(&self) -> bool {
        registry::RECOVERABLE.contains(&self.name())
    }
    /// Power-loss recovery: rebuilds the FTL's state (freshly built from the registry) from
    /// the flash alone, as the FTL would at power-up: `nand` holds what was programmed and no
    /// valid unit ([`Nand::clear_validity`]); the FTL scans it (counting its reads in `scan`),
    /// marks the copies it keeps valid ([`Nand::mark_valid`]), rebuilds its map and block
    /// lists and numbers its next writes past the highest sequence number found. The result
    /// must pass [`Ftl::check_invariants`]. See `ftl/mapping/recovery.rs`.
    fn recover(&mut self, _nand: &mut Nand, _scan: &mut RecoveryScan) -> Result<(), SimError> {
        Err(SimError::RecoveryUnsupported { ftl: self.name() })
    }
    /// Writes the FTL's whole functional state as text into `out` (what a state digest
    /// hashes: tests compare two ways of reaching a state with it); false if the FTL does not
    /// provide one. The demand-paged FTLs do (`demand/digest.rs` says what it covers).
    fn write_state(&self, _out: &mut dyn std::fmt::Write) -> bool {
        false
    }
}

/// The FTL entry point a handler call is for (see [`Ftl::core_for`]).
#[derive(Debug, Clone, Copy)]
pub enum CallTarget<'a> {
    Submit(&'a SubRequest),
    FlashDone(u64),
    Wakeup(u64),
    Idle,
}

/// A queue of the hardware map unit (fmmu.txt 4.6, Fig. 9). A handler's map-unit work is
/// charged to the queue it is for: a host submit or idle call starts charging the host
/// request queue, a flash completion or wake-up the response queue, and the FTL switches
/// ([`FtlCtx::set_map_queue`]) for work of another kind (GC's map updates, host requests
/// resumed in a completion's handler). Each queue's part of a handler waits separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MapQueue {
    HostRequest = 0,
    GcRequest = 1,
    Response = 2,
}

impl MapQueue {
    pub const ALL: [MapQueue; 3] = [
        MapQueue::HostRequest,
        MapQueue::GcRequest,
        MapQueue::Response,
    ];
    /// Report key.
    pub fn name(self) -> &'static str {
        match self {
            MapQueue::HostRequest => "host_request",
            MapQueue::GcRequest => "gc_request",
            MapQueue::Response => "response",
        }
    }
}

/// Weights of the map unit's queues for weighted round robin (at least 1 each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueWeights {
    pub host_request: u32,
    pub gc_request: u32,
    pub response: u32,
}

impl QueueWeights {
    pub fn of(&self, queue: MapQueue) -> u32 {
        match queue {
            MapQueue::HostRequest => self.host_request,
            MapQueue::GcRequest => self.gc_request,
            MapQueue::Response => self.response,
        }
    }
}

/// How the hardware map unit picks its next piece of work (see `engine/map_unit.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapUnitArbiter {
    /// In the order the handlers ran.
    Fifo,
    /// Weighted round robin over the queues (fmmu.txt 4.6).
    WeightedRoundRobin(QueueWeights),
}

/// What FTL CPU time is spent on; the report splits the FTL's busy time by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CpuActivity {
    /// Map-cache lookups (hit or miss handling).
    Lookup,
    /// Mapping updates after writes and GC copies.
    Update,
    /// Writing dirty map entries back (finding them, building the translation page).
    Flush,
    /// Garbage collection decisions.
    Gc,
    /// Everything else (command handling, buffers).
    Other,
}

impl CpuActivity {
    pub const ALL: [CpuActivity; 5] = [
        CpuActivity::Lookup,
        CpuActivity::Update,
        CpuActivity::Flush,
        CpuActivity::Gc,
        CpuActivity::Other,
    ];
    /// Report key.
    pub fn name(self) -> &'static str {
        match self {
            CpuActivity::Lookup => "lookup",
            CpuActivity::Update => "update",
            CpuActivity::Flush => "flush",
            CpuActivity::Gc => "gc",
            CpuActivity::Other => "other",
        }
    }
}

/// Garbage-collection counters common to FTLs (reported under `gc`), split by when the work
/// ran: in the foreground (a host write waited for free space) or in the background (the host
/// had nothing outstanding). Recorded through [`FtlCounters::record_victim`] and
/// [`FtlCounters::record_moved`], so the totals always equal the sum of the two parts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FtlCounters {
    /// Victim blocks collected.
    pub gc_runs: u64,
    /// Of which while the host was idle.
    pub gc_background_runs: u64,
    /// Of which because host writes needed free blocks.
    pub gc_foreground_runs: u64,
    /// Mapping units copied by GC.
    pub gc_units_moved: u64,
    /// Of which by background GC.
    pub gc_background_units_moved: u64,
    /// Of which by foreground GC.
    pub gc_foreground_units_moved: u64,
}

impl FtlCounters {
    /// One victim block taken by GC.
    pub fn record_victim(&mut self, background: bool) {
        self.gc_runs += 1;
        if background {
            self.gc_background_runs += 1;
        } else {
            self.gc_foreground_runs += 1;
        }
    }

    /// `units` valid mapping units copied out of victims by GC.
    pub fn record_moved(&mut self, units: u64, background: bool) {
        self.gc_units_moved += units;
        if background {
            self.gc_background_units_moved += units;
        } else {
            self.gc_foreground_units_moved += units;
        }
    }
}

/// The (host sector, data version) pairs a program of `pages` pages carries: unit slot `i`
/// whose OOB entry names logical unit `l` holds sectors `l * unit_sectors ..`, with the
/// versions of its run of `data` (never-written sectors, version 0, are left out). Slots
/// flagged [`OOB_FLAG_TRANSLATION`] hold no host data (translation or parity pages).
fn programmed_sectors<'d>(
    nand: &Nand,
    entries: &'d [OobEntry],
    data: &'d [u64],
    pages: usize,
) -> impl Iterator<Item = (u64, u64)> + 'd {
    let upp = nand.units_per_page() as usize;
    let unit_sectors = nand.sectors_per_page() as usize / upp.max(1);
    entries[..pages * upp]
        .iter()
        .enumerate()
        .filter(|(_, e)| e.flags() & OOB_FLAG_TRANSLATION == 0)
        .filter_map(move |(slot, e)| e.lpn().map(|l| (slot, u64::from(l))))
        .flat_map(move |(slot, lpn)| {
            (0..unit_sectors).filter_map(move |j| {
                let version = *data.get(slot * unit_sectors + j)?;
                (version != 0).then_some((lpn * unit_sectors as u64 + j as u64, version))
            })
        })
}

/// Something an FTL handler did that takes effect once its CPU time has run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// A command was attached to a host sub-request (counted before it can complete).
    Attach(SubId),
    Release(CmdId),
    /// A functional-only command completes at release: callback token and sub-request.
    Done {
        token: u64,
        sub: SubId,
    },
    Complete(SubId),
}

/// How a command is issued: its cause, dependencies, callback token, host sub-request and
/// deadline.
#[derive(Debug, Clone, Copy)]
pub struct Issue<'d> {
    pub cause: Cause,
    pub after: &'d [CmdId],
    pub token: u64,
    pub sub: Option<SubId>,
    pub deadline_ns: u64,
}

impl Issue<'static> {
    /// A command for `cause`, without dependencies, callback or host sub-request.
    pub fn new(cause: Cause) -> Self {
        Issue {
            cause,
            after: &[],
            token: 0,
            sub: None,
            deadline_ns: u64::MAX,
        }
    }
    /// A host command attached to sub-request `sub`.
    pub fn host(sub: SubId) -> Self {
        Issue {
            sub: Some(sub),
            ..Issue::new(Cause::Host)
        }
    }
}

impl<'d> Issue<'d> {
    /// Starts only after `deps` completed.
    pub fn after<'e>(self, deps: &'e [CmdId]) -> Issue<'e> {
        Issue {
            cause: self.cause,
            after: deps,
            token: self.token,
            sub: self.sub,
            deadline_ns: self.deadline_ns,
        }
    }
    /// Calls [`Ftl::flash_done`] with `token` (non-zero) on completion.
    pub fn token(self, token: u64) -> Self {
        Issue { token, ..self }
    }
    /// Absolute deadline for EDF die queues.
    pub fn deadline(self, deadline_ns: u64) -> Self {
        Issue {
            deadline_ns,
            ..self
        }
    }
}

/// The FTL's view of the device during one handler call.
pub struct FtlCtx<'a> {
    pub(crate) now: u64,
    pub(crate) ftl_name: &'static str,
    pub(crate) nand: &'a mut Nand,
    pub(crate) flash: &'a mut FlashScheduler,
    pub(crate) effects: &'a mut Vec<Effect>,
    pub(crate) events: &'a mut EventQueue,
    pub(crate) shadow: Option<&'a mut Shadow>,
    /// A served device's read deliveries of this call: (sub-request, first sector, sectors,
    /// version) runs.
    pub(crate) deliveries: Option<&'a mut Vec<(SubId, u64, u64, u64)>>,
    pub(crate) counters: &'a mut FtlCounters,
    pub(crate) merges: &'a mut MergeStats,
    pub(crate) rng: &'a mut Pcg64Mcg,
    pub(crate) cpu_ns: u64,
    /// CPU time of this call per [`CpuActivity`] (sums to `cpu_ns`).
    pub(crate) cpu_by_activity: [u64; 5],
    /// Time of this call on the FTL's hardware map unit per [`MapQueue`]
    /// ([`FtlCtx::charge_map_unit`]).
    pub(crate) map_unit_ns: [u64; 3],
    /// The map-unit queue [`FtlCtx::charge_map_unit`] charges now.
    pub(crate) map_queue: MapQueue,
    /// New (host, GC) request weights of the map unit's arbiter, if the FTL set them.
    pub(crate) request_weights: Option<(u32, u32)>,
    pub(crate) host_outstanding: usize,
    pub(crate) sector_bytes: u32,
}

impl<'a> FtlCtx<'a> {
    /// Current simulated time.
    pub fn now(&self) -> u64 {
        self.now
    }
    pub fn layout(&self) -> &Layout {
        self.nand.layout()
    }
    /// Read-only view of the NAND state.
    pub fn nand(&self) -> &Nand {
        self.nand
    }
    /// Whether pages carry data versions (writes should supply them, reads deliver them).
    pub fn payloads(&self) -> bool {
        self.nand.has_payloads()
    }
    pub fn sector_bytes(&self) -> u32 {
        self.sector_bytes
    }
    /// Host requests outstanding (0 means the host is idle).
    pub fn host_outstanding(&self) -> usize {
        self.host_outstanding
    }
    /// Counts a finished merge or fold in the report's `merges` section.
    pub fn record_merge(&mut self, merge: MergeRecord) {
        self.merges.record(merge);
    }
    pub fn die_status(&self, die: DieId) -> DieStatus {
        self.flash.die_status(die)
    }
    pub fn counters(&mut self) -> &mut FtlCounters {
        self.counters
    }
    /// Seeded random numbers for randomized FTL decisions.
    pub fn rng(&mut self) -> &mut Pcg64Mcg {
        self.rng
    }
    /// Charges `ns` of FTL CPU time to this handler (as [`CpuActivity::Other`]).
    pub fn charge_cpu(&mut self, ns: u64) {
        self.charge_cpu_for(CpuActivity::Other, ns);
    }
    /// Charges `ns` of FTL CPU time spent on `activity` to this handler.
    pub fn charge_cpu_for(&mut self, activity: CpuActivity, ns: u64) {
        self.cpu_ns += ns;
        self.cpu_by_activity[activity as usize] += ns;
    }
    /// Charges `ns` on the FTL's hardware map unit (FMMU, fmmu.txt section 4), as work of the
    /// current map-unit queue ([`FtlCtx::set_map_queue`]): one unit beside the CPU cores that
    /// serves its queues' work as its arbiter picks it ([`Ftl::map_unit_arbiter`]); the
    /// handler's effects take effect once its CPU time and all its map-unit work have run.
    pub fn charge_map_unit(&mut self, ns: u64) {
        self.map_unit_ns[self.map_queue as usize] += ns;
    }
    /// The map-unit queue the following [`FtlCtx::charge_map_unit`] calls charge (at the
    /// start of a call: see [`MapQueue`]).
    pub fn set_map_queue(&mut self, queue: MapQueue) {
        self.map_queue = queue;
    }
    /// The map-unit queue [`FtlCtx::charge_map_unit`] charges now.
    pub fn map_queue(&self) -> MapQueue {
        self.map_queue
    }
    /// New weights of the map unit's host and GC request queues (weighted round robin only;
    /// at least 1 each), from the next visit of each queue on.
    pub fn set_request_weights(&mut self, host: u32, gc: u32) {
        self.request_weights = Some((host, gc));
    }
    /// Asks for [`Ftl::wakeup`] with `token` at absolute time `at_ns` (not earlier than now).
    pub fn wake_at(&mut self, at_ns: u64, token: u64) {
        self.events.schedule_wakeup(at_ns.max(self.now), token);
    }
    /// The FTL is done with a host sub-request; it completes once its attached commands have.
    pub fn complete(&mut self, sub: SubId) {
        self.effects.push(Effect::Complete(sub));
    }

    /// Hands read data of sub-request `sub` to the host: `versions` are the data versions of
    /// consecutive sectors from `first_sector` (0 = never written). In verify runs they are
    /// checked against the shadow copy, and every sector of a read must be delivered exactly
    /// once before the sub-request completes.
    pub fn deliver(
        &mut self,
        sub: SubId,
        first_sector: u64,
        versions: &[u64],
    ) -> Result<(), SimError> {
        if let Some(log) = self.deliveries.as_deref_mut() {
            let mut at = 0;
            while at < versions.len() {
                let run = versions[at..]
                    .iter()
                    .take_while(|&&v| v == versions[at])
                    .count();
                log.push((sub, first_sector + at as u64, run as u64, versions[at]));
                at += run;
            }
        }
        match self.shadow.as_deref_mut() {
            Some(shadow) => shadow.deliver(sub, first_sector, versions, self.ftl_name),
            None => Ok(()),
        }
    }

    /// Reads pages (one per plane of one die for a multi-plane read), moving `bus_bytes`
    /// over the channel.
    pub fn read(
        &mut self,
        ppns: &[Ppn],
        bus_bytes: u32,
        issue: Issue<'_>,
    ) -> Result<CmdId, SimError> {
        for &p in ppns {
            self.nand.check_readable(p).map_err(|e| self.nand_err(e))?;
        }
        let op = self.op_for(OpKind::Read, ppns, bus_bytes, &issue)?;
        Ok(self.submit(op, issue))
    }

    /// Reads the spare area of one page, programmed or free: returns what it holds
    /// ([`Spare::Erased`] for a page not programmed since its block's erase).
    pub fn read_oob(&mut self, ppn: Ppn, issue: Issue<'_>) -> Result<(CmdId, Spare), SimError> {
        let spare = self.nand.spare(ppn).map_err(|e| self.nand_err(e))?;
        let bytes = self.layout().oob_bytes;
        let op = self.op_for(OpKind::ReadOob, &[ppn], bytes, &issue)?;
        Ok((self.submit(op, issue), spare))
    }

    /// Programs pages (one per plane of one die for a multi-plane program): `entries` holds
    /// `units_per_page` OOB entries per page, `data` (payload runs) `sectors_per_page`
    /// versions per page.
    pub fn program(
        &mut self,
        ppns: &[Ppn],
        entries: &[OobEntry],
        data: Option<&[u64]>,
        issue: Issue<'_>,
    ) -> Result<CmdId, SimError> {
        let upp = self.nand.units_per_page() as usize;
        let spp = self.nand.sectors_per_page() as usize;
        for (i, &p) in ppns.iter().enumerate() {
            let e = entries
                .get(i * upp..(i + 1) * upp)
                .ok_or_else(|| SimError::Ftl {
                    ftl: self.ftl_name,
                    message: format!(
                        "program of {} pages given {} OOB entries",
                        ppns.len(),
                        entries.len()
                    ),
                })?;
            let d = data.and_then(|d| d.get(i * spp..(i + 1) * spp));
            self.nand
                .program(p, e, d)
                .map_err(|err| self.nand_err(err))?;
        }
        let bytes = self.layout().page_bytes * ppns.len() as u32;
        let op = self.op_for(OpKind::Program, ppns, bytes, &issue)?;
        let id = self.submit(op, issue);
        if let (Some(data), Some(shadow)) = (data, self.shadow.as_deref_mut()) {
            let pairs = programmed_sectors(self.nand, entries, data, ppns.len());
            if id == CmdId::DONE {
                shadow.made_durable(pairs);
            } else {
                shadow.program_issued(id, pairs);
            }
        }
        Ok(id)
    }

    /// Erases a block.
    pub fn erase(&mut self, block: BlockId, issue: Issue<'_>) -> Result<CmdId, SimError> {
        self.nand.erase(block).map_err(|e| self.nand_err(e))?;
        let first = self.layout().ppn(block, 0);
        let op = self.op_for(OpKind::Erase, &[first], 0, &issue)?;
        Ok(self.submit(op, issue))
    }

    /// Copies a page to a free page of the same plane inside the die.
    pub fn copyback(&mut self, src: Ppn, dst: Ppn, issue: Issue<'_>) -> Result<CmdId, SimError> {
        self.nand.copyback(src, dst).map_err(|e| self.nand_err(e))?;
        let mut op = self.op_for(OpKind::Copyback, &[dst], 0, &issue)?;
        op.blocks[1] = self.layout().block_of(src);
        op.planes = if op.blocks[1] == op.blocks[0] { 1 } else { 2 };
        Ok(self.submit(op, issue))
    }

    /// Spare-area-only partial program of a page, programmed or free: sets OOB flag bits and,
    /// when `tag` is not 0, the page's spare tag (see [`Nand::program_spare`]).
    pub fn program_oob(
        &mut self,
        ppn: Ppn,
        flags: u8,
        tag: u32,
        issue: Issue<'_>,
    ) -> Result<CmdId, SimError> {
        self.nand
            .program_spare(ppn, flags, tag)
            .map_err(|e| self.nand_err(e))?;
        let bytes = self.layout().oob_bytes;
        let op = self.op_for(OpKind::ProgramOob, &[ppn], bytes, &issue)?;
        Ok(self.submit(op, issue))
    }

    /// Invalidates a unit slot in the NAND bookkeeping (no flash command).
    pub fn invalidate(&mut self, unit: crate::nand::UnitAddr) -> Result<(), SimError> {
        self.nand.invalidate(unit).map_err(|e| self.nand_err(e))
    }

    fn nand_err(&self, source: NandError) -> SimError {
        SimError::Nand {
            ftl: self.ftl_name,
            source,
        }
    }

    fn op_for(
        &self,
        kind: OpKind,
        ppns: &[Ppn],
        bus_bytes: u32,
        issue: &Issue<'_>,
    ) -> Result<FlashOp, SimError> {
        let l = self.layout();
        if ppns.is_empty() || ppns.len() > MAX_PLANES_PER_OP {
            return Err(SimError::Ftl {
                ftl: self.ftl_name,
                message: format!(
                    "{kind:?} command spans {} pages (1 ..= {MAX_PLANES_PER_OP})",
                    ppns.len()
                ),
            });
        }
        let first = l.block_of(ppns[0]);
        let die = l.die_of(first);
        let mut op = FlashOp::single(kind, die, first, bus_bytes, issue.cause);
        op.deadline_ns = issue.deadline_ns;
        op.page = l.page_in_block(ppns[0]);
        if ppns.len() == 1 {
            return Ok(op);
        }
        op.planes = ppns.len() as u8;
        for (i, &p) in ppns.iter().enumerate() {
            let b = l.block_of(p);
            let same_plane_before = ppns[..i]
                .iter()
                .any(|&q| l.plane_of(l.block_of(q)) == l.plane_of(b));
            if l.die_of(b) != die
                || same_plane_before
                || l.page_in_block(p) != l.page_in_block(ppns[0])
            {
                return Err(SimError::Ftl {
                    ftl: self.ftl_name,
                    message: "a multi-plane command needs one page per plane of one die, at the same page index"
                        .into(),
                });
            }
            op.blocks[i] = b;
        }
        Ok(op)
    }

    fn submit(&mut self, op: FlashOp, issue: Issue<'_>) -> CmdId {
        if let Some(sub) = issue.sub {
            self.effects.push(Effect::Attach(sub));
        }
        if self.flash.is_instant() {
            // Functional-only: no timing state; only a callback or a host sub-request can
            // observe the completion.
            self.flash.count_instant(&op);
            if issue.token != 0 || issue.sub.is_some() {
                self.effects.push(Effect::Done {
                    token: issue.token,
                    sub: issue.sub.unwrap_or(NIL),
                });
            }
            return CmdId::DONE;
        }
        let id = self
            .flash
            .submit(op, issue.after, issue.token, issue.sub.unwrap_or(NIL));
        self.effects.push(Effect::Release(id));
        id
    }
}
