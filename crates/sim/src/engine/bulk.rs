//! Preconditioning's bulk path: one functional-only write taken from an idle device to idle
//! again, with the same FTL calls, in the same order and with the same arguments, as
//! [`Simulation::submit`] followed by [`Simulation::run_until_idle`], but without the host
//! machinery whose only effect is on statistics that preconditioning resets anyway.
//!
//! What it leaves out, and why that changes nothing the FTL or the device sees:
//! - the `CommandIn` hop through the immediate queue: on an idle device the full path's next
//!   step handles it at once (no completion, call or event is waiting), so the command is
//!   chopped here directly;
//! - admission's warm-up bookkeeping (no warm-up prefix is running) and request checks
//!   (preconditioning's writes are aligned and in range by construction; debug-asserted);
//! - host statistics: the request is admitted unmeasured (statistics are reset after
//!   preconditioning), unless a [`super::RequestObserver`] watches, which then sees the
//!   request exactly as before.
//!
//! - the [`crate::host::OverlapTracker`] (a B-tree insert and removal per write, 7% of the
//!   instructions): with nothing else in flight the write starts at once, and the one thing
//!   the FTL sees of the tracker, its length (`host_outstanding`), is kept by
//!   `bulk_outstanding`, 1 from admission until the host sees the write complete (cleared where
//!   the tracker would have let it go, in `request_done`).
//!
//! Everything else the FTL can observe goes through the engine's own code: admission order
//! and version numbers, chopping and sub-request ids, the FTL CPU's call queue (completions
//! and wake-ups before new sub-requests), flash completions, the verify shadow, and wake-up
//! events, which advance simulated time as before. The path is taken only where this equivalence holds: functional-only
//! mode with nothing in flight and no handler effects parked behind an in-order commit
//! ([`Simulation::bulk_path_applies`]); elsewhere preconditioning uses the full path.
//! `tests/precondition_bulk.rs` compares the two on every registered FTL.

use super::{ReqState, Simulation};
use crate::host::Op;
use crate::SimError;

impl Simulation {
    /// Whether [`Simulation::bulk_write`] is equivalent to the full host path now.
    pub(super) fn bulk_path_applies(&self) -> bool {
        self.functional
            && self.order.is_empty()
            && self.immediate.is_empty()
            && self.events.is_empty()
            && self.pending_commits == 0
            && self.last_commit_ns <= self.now
            && !self.warming_up
            && !self.flash.has_completions()
    }

    /// Writes `sectors` sectors from `first_sector` and runs until the device is idle, as
    /// `submit` + `run_until_idle` would (see the module docs); the device must be idle and
    /// functional-only ([`Simulation::bulk_path_applies`]).
    pub(super) fn bulk_write(&mut self, first_sector: u64, sectors: u64) -> Result<(), SimError> {
        debug_assert!(self.bulk_path_applies());
        debug_assert!(first_sector + sectors <= self.logical_sectors && sectors > 0);
        self.requests_admitted += 1;
        self.next_version += 1;
        let id = self.reqs.insert(ReqState {
            op: Op::Write,
            first_sector,
            sectors,
            arrival_ns: self.now,
            issue_ns: self.now,
            deadline_ns: u64::MAX,
            task: None,
            subs_left: 0,
            version: self.next_version,
            seq: self.requests_admitted,
            measured: self.observer.is_some(),
        });
        self.bulk_outstanding = 1;
        let result = self.command_in(id).and_then(|()| self.run_until_idle());
        self.bulk_outstanding = 0;
        result
    }
}
