//! How long each NFTL fold blocks, and how long the worst one can.
//!
//! A fold's blocking time runs from the start of its first flash command to the completion of
//! its last (the erase of the old blocks). NFTL issues every command in one chain, each after
//! the previous, so no other command runs in between and the time is the sum of the fold's
//! own commands. The start is taken from the first command's completion minus its service
//! time (cell time plus bus transfer), which is exact because nothing delays it once started.
//!
//! The worst fold ([`worst_fold_ns`]) is the bound `merges.predicted_worst_blocking_ns`
//! reports, derived from what [`super::Nftl`]'s fold can issue for a block of N pages:
//!
//! - OOB reads: the backward scan reads each replacement page at most once (N), and the
//!   spare of every primary page whose offset the page cache does not give is read too (its
//!   valid flag, found in the replacement or not: see [`super::Nftl`]'s module doc), at most
//!   N: 2N (a GC fold with no cache hit; a write's fold skips its own offset, 2N - 1);
//! - page reads and programs: one each per offset copied, at most N (a GC fold of a fully
//!   written block; a write's fold programs its new page without reading it); every program
//!   is followed by its OOB data write (section 5 (3): "page data write + OOB data write");
//! - erases: the old primary and the replacement, 2. No header is programmed: the new primary
//!   has no replacement yet.
//!
//! `2N·(tR_oob + bus(oob)) + N·(tR + bus(page)) + N·(bus(page) + tPROG + bus(oob) +
//! tPROG_oob) + 2·tBERS`.
//! On `nftl-samsung` (N = 32; OOB read 10 us, page read 36 us, program 200 us, OOB write
//! 200 us, erase 2 ms): 64 x 10 + 32 x 36 + 32 x (200 + 200) + 2 x 2000 = 18,592 us.

use std::collections::HashMap;

use crate::config::Timing;
use crate::ftl::merge::MergeRecord;
use crate::ftl::Issue;
use crate::SimError;

/// Token bit of a fold's first command (its last carries the bare fold id).
const FIRST_COMMAND: u64 = 1 << 62;

/// Kinds of flash command a fold issues, for their service times.
#[derive(Debug, Clone, Copy)]
pub(super) enum Command {
    OobRead,
    PageRead,
    PageProgram,
    OobProgram,
    Erase,
}

/// Service time of each command kind: cell time plus bus transfer.
#[derive(Debug, Clone, Copy)]
struct ServiceTimes {
    oob_read_ns: u64,
    page_read_ns: u64,
    page_program_ns: u64,
    oob_program_ns: u64,
    erase_ns: u64,
}

impl ServiceTimes {
    fn new(timing: &Timing, page_bytes: u32, oob_bytes: u32) -> Self {
        let page_bus = timing.bus_ns(u64::from(page_bytes));
        ServiceTimes {
            oob_read_ns: timing.read_oob_latency_ns + timing.bus_ns(u64::from(oob_bytes)),
            page_read_ns: timing.read_latency_ns + page_bus,
            page_program_ns: page_bus + timing.program_latency_ns,
            oob_program_ns: timing.bus_ns(u64::from(oob_bytes)) + timing.program_oob_latency_ns,
            erase_ns: timing.erase_latency_ns,
        }
    }

    fn of(&self, command: Command) -> u64 {
        match command {
            Command::OobRead => self.oob_read_ns,
            Command::PageRead => self.page_read_ns,
            Command::PageProgram => self.page_program_ns,
            Command::OobProgram => self.oob_program_ns,
            Command::Erase => self.erase_ns,
        }
    }
}

/// The longest fold of a block of `pages_per_block` pages (see the module doc).
pub fn worst_fold_ns(
    timing: &Timing,
    page_bytes: u32,
    oob_bytes: u32,
    pages_per_block: u32,
) -> u64 {
    let t = ServiceTimes::new(timing, page_bytes, oob_bytes);
    let n = u64::from(pages_per_block);
    2 * n * t.oob_read_ns
        + n * t.page_read_ns
        + n * (t.page_program_ns + t.oob_program_ns)
        + 2 * t.erase_ns
}

/// A fold issued but not finished.
#[derive(Debug, Clone, Copy)]
struct Pending {
    record: Option<MergeRecord>,
    start_ns: Option<u64>,
    first_service_ns: u64,
}

/// Blocking-time accounting of the folds in flight.
#[derive(Debug)]
pub(super) struct FoldClock {
    service: ServiceTimes,
    pending: HashMap<u64, Pending>,
    /// The fold whose first command is not issued yet.
    starting: Option<u64>,
    next_id: u64,
}

impl FoldClock {
    pub fn new(timing: &Timing, page_bytes: u32, oob_bytes: u32) -> Self {
        FoldClock {
            service: ServiceTimes::new(timing, page_bytes, oob_bytes),
            pending: HashMap::new(),
            starting: None,
            next_id: 1,
        }
    }

    /// Opens a fold: its next command is its first. Returns its id (the token of its last).
    pub fn begin(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.pending.insert(
            id,
            Pending {
                record: None,
                start_ns: None,
                first_service_ns: 0,
            },
        );
        self.starting = Some(id);
        id
    }

    /// Tags the first command of a starting fold (its completion gives the fold's start).
    pub fn tag<'d>(&mut self, issue: Issue<'d>, command: Command) -> Issue<'d> {
        let Some(id) = self.starting.take() else {
            return issue;
        };
        if let Some(p) = self.pending.get_mut(&id) {
            p.first_service_ns = self.service.of(command);
        }
        if issue.token != 0 {
            // The fold's last command is its first too: its completion measures both.
            return issue;
        }
        issue.token(FIRST_COMMAND | id)
    }

    /// The fold's figures, known once its commands are issued.
    pub fn finish(&mut self, id: u64, record: MergeRecord) {
        self.starting = None;
        if let Some(p) = self.pending.get_mut(&id) {
            p.record = Some(record);
        }
    }

    /// A tagged command completed at `now_ns`: the finished fold, with its blocking time, when
    /// it was the fold's last.
    pub fn command_done(
        &mut self,
        token: u64,
        now_ns: u64,
    ) -> Result<Option<MergeRecord>, SimError> {
        let id = token & !FIRST_COMMAND;
        let unknown = || SimError::Ftl {
            ftl: "nftl",
            message: format!("completion of unknown fold {id} (token {token})"),
        };
        let p = self.pending.get_mut(&id).ok_or_else(unknown)?;
        let start = now_ns.saturating_sub(p.first_service_ns);
        if token & FIRST_COMMAND != 0 {
            p.start_ns = Some(start);
            return Ok(None);
        }
        let p = self.pending.remove(&id).ok_or_else(unknown)?;
        let mut record = p.record.ok_or_else(unknown)?;
        record.blocking_ns = now_ns - p.start_ns.unwrap_or(start);
        Ok(Some(record))
    }
}
