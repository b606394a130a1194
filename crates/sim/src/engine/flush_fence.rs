//! Flushes complete after the trims handed to the FTL before them.
//!
//! A flush promises that every write acknowledged before it is on flash, unless a trim
//! covering it completed first (trims are not persisted by the model, so data a trim dropped
//! before it was programmed is gone only once the host has seen the trim complete: see
//! [`crate::verify`]). An FTL with a write buffer may drop a buffered page because of a trim
//! it is still working on and, in the same handler, find that the flush it holds has nothing
//! left to wait for (PaRT-FTL did: the flush's completion reached the host before the trim's,
//! so for a moment the host was told that data was durable which was neither on flash nor
//! trimmed). The engine therefore holds a flush the FTL completed until every trim the FTL
//! was handed before that moment is done; its completion message then follows theirs on the
//! link. This is shared machinery: no FTL has to get the order right itself, and holding a
//! flush behind a trim in flight costs at most that trim's remaining time.

use std::collections::VecDeque;

/// The trims in the FTL and the flushes held behind them.
#[derive(Debug, Default)]
pub(super) struct FlushFence {
    /// Trims handed to the FTL, from the oldest not done yet on, in hand-over order: (host
    /// request id, done).
    trims: VecDeque<(u32, bool)>,
    /// Trims handed over before the front of `trims` (all done).
    trims_before: u64,
    /// Flushes the FTL completed, waiting for the trims handed over before them: (trims
    /// handed over by then, host request id), in completion order.
    held: VecDeque<(u64, u32)>,
}

impl FlushFence {
    /// Trim request `req` was handed to the FTL.
    pub fn trim_started(&mut self, req: u32) {
        self.trims.push_back((req, false));
    }

    /// The FTL completed flush request `req`: true when it may complete now, false when it is
    /// held (then it comes back from [`FlushFence::trim_done`]).
    pub fn flush_done(&mut self, req: u32) -> bool {
        if self.trims.is_empty() && self.held.is_empty() {
            return true;
        }
        let handed_over = self.trims_before + self.trims.len() as u64;
        self.held.push_back((handed_over, req));
        // Earlier held flushes wait for earlier trims: only this one can leave.
        self.release().is_some()
    }

    /// The FTL completed trim request `req`: `released` gets the flushes that may complete
    /// now, in the order the FTL completed them.
    pub fn trim_done(&mut self, req: u32, released: &mut Vec<u32>) {
        // Request ids are reused: an earlier trim with this id may still wait here, done,
        // behind an older one.
        if let Some(entry) = self
            .trims
            .iter_mut()
            .find(|&&mut (r, done)| r == req && !done)
        {
            entry.1 = true;
        }
        while self.trims.front().is_some_and(|&(_, done)| done) {
            self.trims.pop_front();
            self.trims_before += 1;
        }
        while let Some(flush) = self.release() {
            released.push(flush);
        }
    }

    /// Pops the oldest held flush if every trim handed over before it is done.
    fn release(&mut self) -> Option<u32> {
        let &(handed_over, req) = self.held.front()?;
        if self.trims_before < handed_over {
            return None;
        }
        self.held.pop_front();
        Some(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flush_without_trims_in_the_ftl_completes_at_once() {
        let mut f = FlushFence::default();
        assert!(f.flush_done(1));
        f.trim_started(2);
        f.trim_done(2, &mut Vec::new());
        assert!(f.flush_done(3), "the trim was done before the flush");
    }

    #[test]
    fn a_flush_waits_for_the_trims_handed_over_before_it() {
        let mut f = FlushFence::default();
        f.trim_started(10);
        f.trim_started(11);
        assert!(!f.flush_done(1), "two trims in the FTL");
        f.trim_started(12); // handed over after the flush completed: not its business
        let mut released = Vec::new();
        f.trim_done(11, &mut released);
        assert!(released.is_empty(), "trim 10 is still in the FTL");
        f.trim_done(10, &mut released);
        assert_eq!(released, [1]);
        assert!(!f.flush_done(2), "trim 12 is still in the FTL");
        released.clear();
        f.trim_done(12, &mut released);
        assert_eq!(released, [2]);
    }

    #[test]
    fn a_reused_request_id_marks_its_own_trim_done() {
        let mut f = FlushFence::default();
        f.trim_started(10);
        f.trim_started(11);
        let mut released = Vec::new();
        f.trim_done(11, &mut released); // done, waiting behind trim 10
        f.trim_started(11); // the id is reused by a new trim
        assert!(!f.flush_done(1));
        f.trim_done(11, &mut released);
        f.trim_done(10, &mut released);
        assert_eq!(released, [1], "both trims 11 are done");
    }

    #[test]
    fn held_flushes_leave_in_order() {
        let mut f = FlushFence::default();
        f.trim_started(10);
        assert!(!f.flush_done(1));
        assert!(
            !f.flush_done(2),
            "behind a held flush, even with nothing new in the FTL"
        );
        let mut released = Vec::new();
        f.trim_done(10, &mut released);
        assert_eq!(released, [1, 2]);
    }
}
