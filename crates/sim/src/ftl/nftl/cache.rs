//! The page cache of section 3.3: the <block, page> of the most recently written sectors, with
//! the paper's simple replacement (not LRU): entries are replaced in FIFO order of insertion,
//! a rewrite of a cached sector updates its entry in place. A microcontroller would search the
//! entries linearly; the simulator indexes them with a hash map (same hits, less host CPU).

use std::collections::HashMap;

use crate::nand::Ppn;

#[derive(Debug, Clone)]
pub struct PageCache {
    /// (sector, page) per slot; `u32::MAX` sector: empty.
    slots: Vec<(u32, Ppn)>,
    index: HashMap<u32, u32>,
    /// Next slot to replace.
    cursor: u32,
}

const EMPTY: u32 = u32::MAX;

impl PageCache {
    pub fn new(entries: u32) -> Self {
        PageCache {
            slots: vec![(EMPTY, 0); entries as usize],
            index: HashMap::with_capacity(entries as usize),
            cursor: 0,
        }
    }
    pub fn is_enabled(&self) -> bool {
        !self.slots.is_empty()
    }
    pub fn get(&self, lpn: u32) -> Option<Ppn> {
        self.index.get(&lpn).map(|&s| self.slots[s as usize].1)
    }
    /// Records that `lpn` was written to `ppn` (a write, or a fold moving it).
    pub fn insert(&mut self, lpn: u32, ppn: Ppn) {
        if !self.is_enabled() {
            return;
        }
        if let Some(&s) = self.index.get(&lpn) {
            self.slots[s as usize].1 = ppn;
            return;
        }
        let s = self.cursor;
        let (old, _) = self.slots[s as usize];
        if old != EMPTY {
            self.index.remove(&old);
        }
        self.slots[s as usize] = (lpn, ppn);
        self.index.insert(lpn, s);
        self.cursor = (s + 1) % self.slots.len() as u32;
    }
    /// Points a cached sector at its new page (fold), without touching the FIFO order.
    pub fn update(&mut self, lpn: u32, ppn: Ppn) {
        if let Some(&s) = self.index.get(&lpn) {
            self.slots[s as usize].1 = ppn;
        }
    }
    /// Forgets a sector (trimmed).
    pub fn remove(&mut self, lpn: u32) {
        if let Some(s) = self.index.remove(&lpn) {
            self.slots[s as usize] = (EMPTY, 0);
        }
    }
    pub fn state_bytes(&self) -> u64 {
        (self.slots.len() * 8 + self.index.capacity() * 12) as u64
    }
    /// Every cached entry, for invariant checks.
    pub fn entries(&self) -> impl Iterator<Item = (u32, Ppn)> + '_ {
        self.slots.iter().copied().filter(|(l, _)| *l != EMPTY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_in_insertion_order_and_updates_in_place() {
        let mut c = PageCache::new(2);
        c.insert(1, 10);
        c.insert(2, 20);
        c.insert(1, 11); // update: 1 keeps its (oldest) place
        assert_eq!(c.get(1), Some(11));
        c.insert(3, 30); // replaces the oldest insertion: 1
        assert_eq!((c.get(1), c.get(2), c.get(3)), (None, Some(20), Some(30)));
        c.update(2, 21);
        c.remove(3);
        assert_eq!((c.get(2), c.get(3)), (Some(21), None));
        let off = PageCache::new(0);
        assert!(!off.is_enabled());
    }
}
