//! Ordering of overlapping requests: a request waits while an earlier unfinished request
//! overlaps it and either of them writes or trims; reads overlapping reads run freely.
//!
//! Each request counts the earlier unfinished requests it conflicts with and each request
//! lists the later ones it blocks, so a finish touches only its own dependents. Conflicts are
//! found through an index ordered by first sector: a span can only overlap spans starting
//! within the longest span length before its end, so an arrival looks at a narrow window
//! instead of every unfinished request (open-loop replays can pile up thousands).
//!
//! The index is a sorted vector while it is small (closed loops keep a few dozen requests:
//! a binary search and a short move beat a B-tree's node walk and allocation several times
//! over) and a B-tree once it grows past [`SMALL_INDEX`] entries; both iterate in the same
//! (first sector, id) order, so which one holds the index never changes a result.

use std::collections::BTreeSet;
use std::ops::Range;

use super::Op;

#[derive(Debug, Clone, Copy)]
struct Span {
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

/// One unfinished request, in the slot of its id.
#[derive(Debug, Default, Clone)]
struct Entry {
    span: Option<Span>,
    /// Earlier unfinished requests this one conflicts with; it starts when this reaches 0.
    blockers: u32,
    /// Later requests waiting for this one, in arrival order (capacity reused across ids).
    dependents: Vec<u32>,
}

/// Most unfinished requests the sorted-vector index holds before it becomes a B-tree.
const SMALL_INDEX: usize = 256;

/// (first sector, id) of every unfinished request, in that order.
#[derive(Debug)]
enum FirstSectorIndex {
    Small(Vec<(u64, u32)>),
    Large(BTreeSet<(u64, u32)>),
}

impl Default for FirstSectorIndex {
    fn default() -> Self {
        FirstSectorIndex::Small(Vec::with_capacity(SMALL_INDEX))
    }
}

impl FirstSectorIndex {
    fn insert(&mut self, key: (u64, u32)) {
        match self {
            FirstSectorIndex::Small(v) if v.len() < SMALL_INDEX => {
                let at = v.partition_point(|&k| k < key);
                v.insert(at, key);
            }
            FirstSectorIndex::Small(v) => {
                let mut tree: BTreeSet<_> = v.drain(..).collect();
                tree.insert(key);
                *self = FirstSectorIndex::Large(tree);
            }
            FirstSectorIndex::Large(t) => {
                t.insert(key);
            }
        }
    }

    fn remove(&mut self, key: (u64, u32)) {
        match self {
            FirstSectorIndex::Small(v) => {
                if let Ok(at) = v.binary_search(&key) {
                    v.remove(at);
                }
            }
            FirstSectorIndex::Large(t) => {
                t.remove(&key);
            }
        }
    }

    /// Ids of the requests whose key lies in `range`, in key order.
    fn for_each_in(&self, range: Range<(u64, u32)>, mut visit: impl FnMut(u32)) {
        match self {
            FirstSectorIndex::Small(v) => {
                let from = v.partition_point(|&k| k < range.start);
                for &(first, id) in &v[from..] {
                    if (first, id) >= range.end {
                        break;
                    }
                    visit(id);
                }
            }
            FirstSectorIndex::Large(t) => t.range(range).for_each(|&(_, id)| visit(id)),
        }
    }

    fn len(&self) -> usize {
        match self {
            FirstSectorIndex::Small(v) => v.len(),
            FirstSectorIndex::Large(t) => t.len(),
        }
    }
}

/// Unfinished requests, each started or blocked.
#[derive(Debug, Default)]
pub struct OverlapTracker {
    entries: Vec<Entry>,
    by_first: FirstSectorIndex,
    /// Longest span seen, bounding how far before a span's end an overlapping one may start.
    longest: u64,
}

impl OverlapTracker {
    /// Registers a request (`first`, `count` in sectors); returns whether it may start now.
    /// Ids may be reused once their request has finished.
    pub fn arrive(&mut self, id: u32, op: Op, first: u64, count: u64) -> bool {
        let span = Span {
            op,
            first,
            end: first + count,
        };
        let slot = id as usize;
        if self.entries.len() <= slot {
            self.entries.resize(slot + 1, Entry::default());
        }
        debug_assert!(
            self.entries[slot].span.is_none(),
            "id {id} still unfinished"
        );
        self.longest = self.longest.max(count);
        let window = (span.first.saturating_sub(self.longest), 0)..(span.end, 0);
        let mut blockers = 0;
        let entries = &mut self.entries;
        self.by_first.for_each_in(window, |other| {
            let entry = &mut entries[other as usize];
            if entry.span.is_some_and(|s| s.conflicts(&span)) {
                entry.dependents.push(id);
                blockers += 1;
            }
        });
        let entry = &mut self.entries[slot];
        entry.span = Some(span);
        entry.blockers = blockers;
        self.by_first.insert((first, id));
        blockers == 0
    }

    /// Removes a finished request; pushes the ids of requests that may now start (in arrival
    /// order) to `started`.
    pub fn finish(&mut self, id: u32, started: &mut Vec<u32>) {
        let slot = id as usize;
        let Some(span) = self.entries.get_mut(slot).and_then(|e| e.span.take()) else {
            return;
        };
        self.by_first.remove((span.first, id));
        let mut dependents = std::mem::take(&mut self.entries[slot].dependents);
        for &d in &dependents {
            let waiting = &mut self.entries[d as usize];
            waiting.blockers -= 1;
            if waiting.blockers == 0 {
                started.push(d);
            }
        }
        dependents.clear();
        self.entries[slot].dependents = dependents;
    }

    /// Unfinished requests (started or blocked).
    pub fn len(&self) -> usize {
        self.by_first.len()
    }
    pub fn is_empty(&self) -> bool {
        self.by_first.len() == 0
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

    #[test]
    fn reused_ids_do_not_inherit_waits() {
        let mut t = OverlapTracker::default();
        assert!(t.arrive(0, Op::Write, 0, 8));
        assert!(!t.arrive(1, Op::Write, 0, 8));
        let mut started = vec![];
        t.finish(0, &mut started);
        assert_eq!(started, vec![1]);
        assert!(
            !t.arrive(0, Op::Read, 4, 1),
            "reused id waits for request 1"
        );
        started.clear();
        t.finish(1, &mut started);
        assert_eq!(started, vec![0]);
        assert_eq!(t.len(), 1);
    }

    /// The obvious rule, quadratic: a request may run when no earlier unfinished one conflicts.
    #[derive(Default)]
    struct Reference {
        spans: Vec<(u32, Span)>,
        running: Vec<u32>,
    }

    impl Reference {
        fn runnable(&self) -> Vec<u32> {
            let mut ids = vec![];
            for (i, (id, s)) in self.spans.iter().enumerate() {
                if !self.spans[..i].iter().any(|(_, e)| e.conflicts(s)) {
                    ids.push(*id);
                }
            }
            ids
        }
    }

    proptest::proptest! {
        // Failure seeds are kept next to this file and committed with the fix.
        #![proptest_config(proptest::test_runner::Config {
            failure_persistence: Some(Box::new(
                proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
            )),
            ..proptest::test_runner::Config::default()
        })]

        #[test]
        fn matches_the_quadratic_rule(ops in proptest::collection::vec(
            (0u8..4, 0u64..64, 0u64..16, proptest::bool::ANY), 1..200)) {
            let mut t = OverlapTracker::default();
            let mut r = Reference::default();
            let mut free_ids: Vec<u32> = (0..32).rev().collect();
            for (kind, first, count, finish_one) in ops {
                if finish_one && !r.running.is_empty() {
                    let id = r.running.remove(first as usize % r.running.len());
                    r.spans.retain(|(i, _)| *i != id);
                    free_ids.push(id);
                    let mut started = vec![];
                    t.finish(id, &mut started);
                    let now: Vec<u32> = r.runnable().into_iter()
                        .filter(|i| !r.running.contains(i)).collect();
                    proptest::prop_assert_eq!(&started, &now);
                    r.running.extend(now);
                } else if let Some(id) = free_ids.pop() {
                    let op = [Op::Read, Op::Write, Op::Trim, Op::Flush][kind as usize];
                    let span = Span { op, first, end: first + count };
                    r.spans.push((id, span));
                    let free = t.arrive(id, op, first, count);
                    proptest::prop_assert_eq!(free, r.runnable().contains(&id));
                    if free {
                        r.running.push(id);
                    }
                }
                proptest::prop_assert_eq!(t.len(), r.spans.len());
            }
        }
    }

    /// A brute-force model: a request conflicts with every unfinished earlier one, in
    /// (first sector, id) order; finishing releases dependents in that order.
    #[derive(Default)]
    struct Model {
        unfinished: Vec<(u64, u32, Span)>,
        blockers: std::collections::HashMap<u32, u32>,
        dependents: std::collections::HashMap<u32, Vec<u32>>,
    }

    impl Model {
        fn arrive(&mut self, id: u32, span: Span) -> bool {
            let mut earlier: Vec<_> = self.unfinished.clone();
            earlier.sort_by_key(|&(first, id, _)| (first, id));
            let mut n = 0;
            for (_, other, s) in earlier {
                if s.conflicts(&span) {
                    self.dependents.entry(other).or_default().push(id);
                    n += 1;
                }
            }
            self.blockers.insert(id, n);
            self.unfinished.push((span.first, id, span));
            n == 0
        }
        fn finish(&mut self, id: u32, started: &mut Vec<u32>) {
            self.unfinished.retain(|&(_, i, _)| i != id);
            for d in self.dependents.remove(&id).unwrap_or_default() {
                let b = self.blockers.get_mut(&d).unwrap();
                *b -= 1;
                if *b == 0 {
                    started.push(d);
                }
            }
        }
    }

    #[test]
    fn small_and_large_index_order_like_a_full_scan() {
        // More unfinished requests than the sorted vector holds, so the index switches to a
        // B-tree midway; every decision must match the brute-force model.
        let mut t = OverlapTracker::default();
        let mut m = Model::default();
        let mut state = 12345u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        let (mut live, mut next_id) = (Vec::new(), 0u32);
        for step in 0..4000 {
            let grow = step < 1500 || next() % 2 == 0;
            if grow || live.is_empty() {
                let op = [Op::Read, Op::Write, Op::Trim][(next() % 3) as usize];
                let (first, count) = (next() % 2048, 1 + next() % 16);
                let span = Span {
                    op,
                    first,
                    end: first + count,
                };
                assert_eq!(t.arrive(next_id, op, first, count), m.arrive(next_id, span));
                live.push(next_id);
                next_id += 1;
            } else {
                let id = live.swap_remove((next() as usize) % live.len());
                let (mut a, mut b) = (vec![], vec![]);
                t.finish(id, &mut a);
                m.finish(id, &mut b);
                assert_eq!(a, b, "requests started when {id} finished");
            }
            assert_eq!(t.len(), live.len());
        }
        assert!(
            matches!(t.by_first, FirstSectorIndex::Large(_)),
            "the index grew"
        );
    }
}
