//! The Dirty Translation List (fmmu.txt sections 4.2 and 4.5): which CMT blocks are dirty, per
//! translation page (TVPN), so a flush walks one TVPN's dirty blocks along `next` links instead
//! of scanning the cache.
//!
//! Per TVPN: the head of its chain of dirty CMT slots, the number of dirty blocks, the updated
//! bit and its place in the list (registration order, oldest at the head). Per CMT slot: the
//! `next` link. A block that becomes dirty is pushed on its TVPN's chain (the paper: the
//! entry's link moves to the block, the block takes the old link); a TVPN not in the list is
//! registered at the tail. A flush takes a whole TVPN out of the list at once (batch update).
//!
//! ## Flush victim: cost-benefit of the three criteria of section 4.5
//! The paper names the criteria (greedy: most dirty blocks; oldest-update-first: earliest
//! registered in the DTL; least-recently-updated: the updated bit) but gives no formula. We
//! score each candidate TVPN `t` as
//!
//! `score(t) = dirty_blocks(t) x (1 + age(t)) x (updated(t) ? 1 : 2)`
//!
//! where `age(t)` counts the TVPNs registered after `t` (its distance from the tail in
//! registration order). Benefit: more dirty blocks written by one translation-page program
//! (greedy); older entries have had their chance to gather blocks (oldest-update-first); an
//! entry updated since the last choice is likely to be updated again soon, so flushing it now
//! would dirty it again (least-recently-updated halves its score). The highest score wins;
//! ties go to the older entry. The candidates are the `window` oldest entries (0 = the whole
//! list): a hardware unit examines a bounded number per decision. After a choice the updated
//! bits of the examined entries are cleared (a second chance, as for the replacement bits), so
//! "updated" means updated since the previous choice that looked at it.

use super::setassoc::NIL;

/// The DTL over `tvpns` translation pages and `slots` CMT slots.
#[derive(Debug, Clone)]
pub struct Dtl {
    /// First dirty slot of each TVPN's chain; NIL when the TVPN is not in the list.
    head: Vec<u32>,
    dirty_blocks: Vec<u32>,
    updated: Vec<bool>,
    /// Registration number of each registered TVPN.
    registered_at: Vec<u64>,
    /// Registration-order list: toward the tail (newer) and toward the head (older).
    newer: Vec<u32>,
    older: Vec<u32>,
    oldest: u32,
    newest: u32,
    entries: u32,
    registrations: u64,
    /// Next dirty slot of the same TVPN, per CMT slot.
    next: Vec<u32>,
}

impl Dtl {
    pub fn new(tvpns: u32, slots: u32) -> Self {
        let t = tvpns as usize;
        Dtl {
            head: vec![NIL; t],
            dirty_blocks: vec![0; t],
            updated: vec![false; t],
            registered_at: vec![0; t],
            newer: vec![NIL; t],
            older: vec![NIL; t],
            oldest: NIL,
            newest: NIL,
            entries: 0,
            registrations: 0,
            next: vec![NIL; slots as usize],
        }
    }

    /// TVPNs in the list.
    pub fn entries(&self) -> u32 {
        self.entries
    }
    /// Dirty CMT blocks of `tvpn`.
    pub fn dirty_blocks(&self, tvpn: u32) -> u32 {
        self.dirty_blocks[tvpn as usize]
    }
    pub fn is_registered(&self, tvpn: u32) -> bool {
        self.head[tvpn as usize] != NIL
    }
    /// The oldest registered TVPN.
    pub fn oldest(&self) -> Option<u32> {
        (self.oldest != NIL).then_some(self.oldest)
    }

    /// CMT slot `slot`, holding entries of `tvpn`, just became dirty.
    pub fn block_dirtied(&mut self, tvpn: u32, slot: u32) {
        let t = tvpn as usize;
        if self.head[t] == NIL {
            self.register(tvpn);
        }
        self.next[slot as usize] = self.head[t];
        self.head[t] = slot;
        self.dirty_blocks[t] += 1;
        self.updated[t] = true;
    }

    /// An already dirty block of `tvpn` was updated again.
    pub fn block_updated(&mut self, tvpn: u32) {
        debug_assert!(self.is_registered(tvpn));
        self.updated[tvpn as usize] = true;
    }

    fn register(&mut self, tvpn: u32) {
        let t = tvpn as usize;
        self.registered_at[t] = self.registrations;
        self.registrations += 1;
        self.older[t] = self.newest;
        self.newer[t] = NIL;
        match self.newest {
            NIL => self.oldest = tvpn,
            n => self.newer[n as usize] = tvpn,
        }
        self.newest = tvpn;
        self.entries += 1;
    }

    /// Takes `tvpn` out of the list and appends its dirty slots (following the next links) to
    /// `out`; returns how many. The caller marks them clean.
    pub fn take(&mut self, tvpn: u32, out: &mut Vec<u32>) -> u32 {
        let t = tvpn as usize;
        let mut slot = std::mem::replace(&mut self.head[t], NIL);
        if slot == NIL {
            return 0;
        }
        while slot != NIL {
            out.push(slot);
            slot = std::mem::replace(&mut self.next[slot as usize], NIL);
        }
        let (older, newer) = (self.older[t], self.newer[t]);
        match older {
            NIL => self.oldest = newer,
            o => self.newer[o as usize] = newer,
        }
        match newer {
            NIL => self.newest = older,
            n => self.older[n as usize] = older,
        }
        self.entries -= 1;
        self.updated[t] = false;
        std::mem::take(&mut self.dirty_blocks[t])
    }

    /// The flush victim among the `window` oldest entries (0 = all), by the score of the
    /// module doc; clears the updated bits of the entries it examined.
    pub fn choose_victim(&mut self, window: u32) -> Option<u32> {
        let mut best: Option<(u128, u32)> = None;
        let mut t = self.oldest;
        let mut seen = 0;
        while t != NIL && (window == 0 || seen < window) {
            let score = self.score(t);
            if best.is_none_or(|(b, _)| score > b) {
                best = Some((score, t));
            }
            self.updated[t as usize] = false;
            t = self.newer[t as usize];
            seen += 1;
        }
        best.map(|(_, t)| t)
    }

    /// Writes the list as text (a state digest's input), by meaning: per registered TVPN in
    /// registration order (oldest first) its registration number, dirty blocks, updated bit
    /// and chain of dirty slots; the registration counter.
    pub fn write_state(&self, out: &mut dyn std::fmt::Write) -> std::fmt::Result {
        write!(out, "dtl {} {}:", self.entries, self.registrations)?;
        let mut t = self.oldest;
        while t != NIL {
            let i = t as usize;
            write!(
                out,
                " {t}@{} x{} {}",
                self.registered_at[i], self.dirty_blocks[i], self.updated[i]
            )?;
            let mut s = self.head[i];
            while s != NIL {
                write!(out, " s{s}")?;
                s = self.next[s as usize];
            }
            write!(out, ";")?;
            t = self.newer[i];
        }
        writeln!(out, " newest {}", self.newest)
    }

    fn score(&self, tvpn: u32) -> u128 {
        let t = tvpn as usize;
        let age = self.registrations - 1 - self.registered_at[t];
        let recency = if self.updated[t] { 1 } else { 2 };
        u128::from(self.dirty_blocks[t]) * u128::from(1 + age) * recency
    }
}

/// CTP flush order (section 4.5): dirty CTP blocks in the order the CMT's flushes made them
/// dirty; the CTP writes them back oldest first. An intrusive FIFO over the CTP slots.
#[derive(Debug, Clone)]
pub struct FlushOrder {
    next: Vec<u32>,
    queued: Vec<bool>,
    first: u32,
    last: u32,
    len: u32,
}

impl FlushOrder {
    pub fn new(slots: u32) -> Self {
        FlushOrder {
            next: vec![NIL; slots as usize],
            queued: vec![false; slots as usize],
            first: NIL,
            last: NIL,
            len: 0,
        }
    }
    /// Queues `slot` (a CTP block just made dirty); a block already queued keeps its place.
    pub fn push(&mut self, slot: u32) {
        if std::mem::replace(&mut self.queued[slot as usize], true) {
            return;
        }
        match self.last {
            NIL => self.first = slot,
            l => self.next[l as usize] = slot,
        }
        self.last = slot;
        self.len += 1;
    }
    /// The oldest queued slot, dequeued.
    pub fn pop(&mut self) -> Option<u32> {
        let s = self.first;
        if s == NIL {
            return None;
        }
        self.first = std::mem::replace(&mut self.next[s as usize], NIL);
        if self.first == NIL {
            self.last = NIL;
        }
        self.queued[s as usize] = false;
        self.len -= 1;
        Some(s)
    }
    pub fn len(&self) -> u32 {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flush_walks_only_its_tvpns_dirty_blocks() {
        let mut d = Dtl::new(8, 16);
        d.block_dirtied(3, 5);
        d.block_dirtied(1, 0);
        d.block_dirtied(3, 9);
        d.block_dirtied(3, 2);
        assert_eq!(d.entries(), 2);
        assert_eq!(d.dirty_blocks(3), 3);
        let mut out = Vec::new();
        assert_eq!(d.take(3, &mut out), 3);
        out.sort();
        assert_eq!(out, vec![2, 5, 9]);
        assert!(!d.is_registered(3));
        assert_eq!(d.oldest(), Some(1));
        out.clear();
        assert_eq!(d.take(1, &mut out), 1);
        assert_eq!(out, vec![0]);
        assert_eq!(d.entries(), 0);
        assert_eq!(d.oldest(), None);
        // Re-registration after a flush goes to the tail with fresh links.
        d.block_dirtied(3, 9);
        out.clear();
        d.take(3, &mut out);
        assert_eq!(out, vec![9]);
    }

    /// Hand-built DTL: oldest A (1 dirty block), B (3), C (2, newest). Ages 2, 1, 0.
    fn three_entries() -> Dtl {
        let mut d = Dtl::new(8, 16);
        d.block_dirtied(0, 0); // A = TVPN 0
        d.block_dirtied(1, 1); // B = TVPN 1
        d.block_dirtied(1, 2);
        d.block_dirtied(1, 3);
        d.block_dirtied(2, 4); // C = TVPN 2
        d.block_dirtied(2, 5);
        d
    }

    #[test]
    fn victim_is_the_cost_benefit_of_greedy_age_and_recency() {
        // All updated: scores A 1x3x1 = 3, B 3x2x1 = 6, C 2x1x1 = 2: greedy-and-old B wins.
        let mut d = three_entries();
        assert_eq!(d.choose_victim(0), Some(1));
        // The choice cleared every updated bit; C updated again halves its weight only:
        // A 1x3x2 = 6, B 3x2x2 = 12, C 2x1x1 = 2.
        d.block_updated(2);
        assert_eq!(d.choose_victim(0), Some(1));
        let mut out = Vec::new();
        d.take(1, &mut out);
        // Without B: A 6 (age 2, not updated) beats C (2 blocks, age 0, updated: 2).
        d.block_updated(2);
        assert_eq!(d.choose_victim(0), Some(0));
    }

    #[test]
    fn recently_updated_entries_lose_to_idle_ones_of_equal_size_and_age() {
        let mut d = Dtl::new(8, 16);
        d.block_dirtied(0, 0);
        d.block_dirtied(0, 1); // TVPN 0: 2 blocks, age 1
        d.block_dirtied(1, 2);
        d.block_dirtied(1, 3);
        d.block_dirtied(1, 4); // TVPN 1: 3 blocks, age 0
        d.choose_victim(0); // clears the bits (0: 2x2 = 4 vs 1: 3x1 = 3 -> 0)
        d.block_updated(0);
        // 0: 2x2x1 = 4 (updated), 1: 3x1x2 = 6 (idle): the idle one wins.
        assert_eq!(d.choose_victim(0), Some(1));
    }

    #[test]
    fn the_window_limits_the_candidates_to_the_oldest() {
        let mut d = three_entries();
        assert_eq!(d.choose_victim(1), Some(0), "only A examined");
    }

    #[test]
    fn ctp_flush_order_is_first_dirtied_first() {
        let mut f = FlushOrder::new(4);
        f.push(2);
        f.push(0);
        f.push(2);
        assert_eq!(f.len(), 2);
        assert_eq!(f.pop(), Some(2));
        f.push(3);
        assert_eq!(f.pop(), Some(0));
        assert_eq!(f.pop(), Some(3));
        assert_eq!(f.pop(), None);
        f.push(2);
        assert_eq!(f.pop(), Some(2));
    }
}
