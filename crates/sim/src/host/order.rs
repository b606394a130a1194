//! Ordering of overlapping requests: a request waits while an earlier unfinished request
//! overlaps it and either of them writes or trims; reads overlapping reads run freely.

use super::Op;

#[derive(Debug, Clone, Copy)]
struct Span {
    id: u32,
    op: Op,
    first: u64,
    end: u64,
}

impl Span {
    fn conflicts(&self, other: &Span) -> bool {
        (self.op.modifies() || other.op.modifies())
            && self.first < other.end
            && other.first < self.end
            && self.op != Op::Flush
            && other.op != Op::Flush
    }
}

/// Unfinished requests in arrival order, each started or blocked.
#[derive(Debug, Default)]
pub struct OverlapTracker {
    spans: Vec<Span>,
    /// How many unfinished requests are still blocked.
    blocked: usize,
    blocked_flags: Vec<bool>,
}

impl OverlapTracker {
    /// Registers a request (`first`, `count` in sectors); returns whether it may start now.
    pub fn arrive(&mut self, id: u32, op: Op, first: u64, count: u64) -> bool {
        let span = Span {
            id,
            op,
            first,
            end: first + count,
        };
        let free = !self.spans.iter().any(|s| s.conflicts(&span));
        self.spans.push(span);
        if self.blocked_flags.len() <= id as usize {
            self.blocked_flags.resize(id as usize + 1, false);
        }
        self.blocked_flags[id as usize] = !free;
        if !free {
            self.blocked += 1;
        }
        free
    }

    /// Removes a finished request; pushes the ids of requests that may now start (in arrival
    /// order) to `started`.
    pub fn finish(&mut self, id: u32, started: &mut Vec<u32>) {
        if let Some(pos) = self.spans.iter().position(|s| s.id == id) {
            self.spans.remove(pos);
        }
        if self.blocked == 0 {
            return;
        }
        for i in 0..self.spans.len() {
            let s = self.spans[i];
            if !self.blocked_flags[s.id as usize] {
                continue;
            }
            if !self.spans[..i].iter().any(|e| e.conflicts(&s)) {
                self.blocked_flags[s.id as usize] = false;
                self.blocked -= 1;
                started.push(s.id);
            }
        }
    }

    /// Unfinished requests (started or blocked).
    pub fn len(&self) -> usize {
        self.spans.len()
    }
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_write_waits_and_reads_share() {
        let mut t = OverlapTracker::default();
        assert!(t.arrive(0, Op::Read, 0, 8));
        assert!(t.arrive(1, Op::Read, 4, 8), "reads overlap freely");
        assert!(!t.arrive(2, Op::Write, 6, 2), "write waits for the reads");
        assert!(t.arrive(3, Op::Write, 100, 8), "disjoint write runs");
        assert!(
            !t.arrive(4, Op::Read, 7, 1),
            "read waits for the earlier write"
        );
        let mut started = vec![];
        t.finish(0, &mut started);
        assert!(started.is_empty(), "request 1 still overlaps the write");
        t.finish(1, &mut started);
        assert_eq!(started, vec![2]);
        started.clear();
        t.finish(2, &mut started);
        assert_eq!(started, vec![4]);
    }

    #[test]
    fn flush_orders_against_nothing() {
        let mut t = OverlapTracker::default();
        assert!(t.arrive(0, Op::Write, 0, 8));
        assert!(t.arrive(1, Op::Flush, 0, 0));
    }
}
