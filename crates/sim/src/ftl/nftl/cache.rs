//! The page cache of section 3.3: the <block, page> of "the most recently written sectors".
//!
//! Choices (the paper says only "most recently written" and "not ... LRU based eviction"):
//! - Recency is the time of the last **write**: a rewrite of a cached sector makes it the most
//!   recently written (its entry moves to the back of the queue), so the cache always holds the
//!   N most recently written distinct sectors.
//! - Eviction is first-in first-out by that write time: a full cache drops the sector written
//!   longest ago. Read hits change nothing (that would be LRU, which the paper says it is not),
//!   and a fold moving a cached sector updates its <block, page> without making it newer (the
//!   host did not write it).
//!
//! A microcontroller would keep a ring of N entries and search it linearly; the simulator
//! keeps a queue of (sector, write stamp) with lazy deletion and a hash map from sector to
//! (page, stamp): the same hits, less host CPU.

use std::collections::{HashMap, VecDeque};

use crate::nand::Ppn;

#[derive(Debug, Clone)]
pub struct PageCache {
    capacity: usize,
    /// Sectors in write order, oldest first, with the stamp of that write (stale when the
    /// sector was written again since: its stamp in `index` differs).
    order: VecDeque<(u32, u64)>,
    /// Sector -> (page, stamp of its last write).
    index: HashMap<u32, (Ppn, u64)>,
    stamp: u64,
}

impl PageCache {
    pub fn new(entries: u32) -> Self {
        PageCache {
            capacity: entries as usize,
            order: VecDeque::new(),
            index: HashMap::with_capacity(entries as usize),
            stamp: 0,
        }
    }
    pub fn is_enabled(&self) -> bool {
        self.capacity > 0
    }
    pub fn get(&self, lpn: u32) -> Option<Ppn> {
        self.index.get(&lpn).map(|&(ppn, _)| ppn)
    }
    /// Records that the host wrote `lpn` to `ppn`: it becomes the most recently written.
    pub fn insert(&mut self, lpn: u32, ppn: Ppn) {
        if !self.is_enabled() {
            return;
        }
        self.stamp += 1;
        let stamp = self.stamp;
        if self.index.insert(lpn, (ppn, stamp)).is_none() && self.index.len() > self.capacity {
            self.evict_oldest();
        }
        self.order.push_back((lpn, stamp));
        // Stale queue entries (rewritten sectors) are dropped when they reach the front; keep
        // the queue bounded when the same sectors are rewritten over and over.
        if self.order.len() > 2 * self.capacity + 16 {
            let index = &self.index;
            self.order
                .retain(|&(l, s)| index.get(&l).is_some_and(|&(_, t)| t == s));
        }
    }
    fn evict_oldest(&mut self) {
        while let Some((lpn, stamp)) = self.order.pop_front() {
            if self.index.get(&lpn).is_some_and(|&(_, s)| s == stamp) {
                self.index.remove(&lpn);
                return;
            }
        }
    }
    /// Points a cached sector at its new page (fold), without making it more recent.
    pub fn update(&mut self, lpn: u32, ppn: Ppn) {
        if let Some(e) = self.index.get_mut(&lpn) {
            e.0 = ppn;
        }
    }
    /// Forgets a sector (trimmed).
    pub fn remove(&mut self, lpn: u32) {
        self.index.remove(&lpn);
    }
    pub fn state_bytes(&self) -> u64 {
        (self.order.capacity() * 12 + self.index.capacity() * 16) as u64
    }
    /// Every cached entry, for invariant checks.
    pub fn entries(&self) -> impl Iterator<Item = (u32, Ppn)> + '_ {
        self.index.iter().map(|(&l, &(p, _))| (l, p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_most_recently_written_sectors_a_rewrite_renews() {
        let mut c = PageCache::new(2);
        c.insert(1, 10);
        c.insert(2, 20);
        c.insert(1, 11); // rewrite: 1 becomes the most recently written
        assert_eq!(c.get(1), Some(11));
        c.insert(3, 30); // evicts the sector written longest ago: 2
        assert_eq!((c.get(1), c.get(2), c.get(3)), (Some(11), None, Some(30)));
        // A read hit or a fold move does not renew: 1 is now the oldest write.
        assert_eq!(c.get(1), Some(11));
        c.update(1, 12);
        c.insert(4, 40);
        assert_eq!((c.get(1), c.get(3), c.get(4)), (None, Some(30), Some(40)));
        c.remove(3);
        assert_eq!(c.get(3), None);
        c.insert(5, 50); // room after the remove: nothing evicted
        assert_eq!((c.get(4), c.get(5)), (Some(40), Some(50)));
        assert_eq!(c.entries().count(), 2);
        // Rewriting the same sector many times keeps the queue bounded and the cache exact.
        for i in 0..1000 {
            c.insert(5, 100 + i);
        }
        assert!(c.order.len() <= 2 * 2 + 16 + 1);
        assert_eq!((c.get(4), c.get(5)), (Some(40), Some(1099)));
        let off = PageCache::new(0);
        assert!(!off.is_enabled());
    }
}
