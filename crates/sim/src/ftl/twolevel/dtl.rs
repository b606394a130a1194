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
//!
//! ## Finding the victim without walking the whole list
//! A score is `weight x (1 + age)` with `weight = dirty_blocks x (updated ? 1 : 2)`. Within
//! one weight the oldest entry scores highest, so along the registration order only an entry
//! of a weight not met before can beat the best so far, and none from entry `t` on can score
//! more than the largest weight not yet met times `1 + age(t)`. With the whole list as the
//! window, the choice counts the entries of each (dirty blocks, updated) class and stops
//! walking where that bound is no more than the best score: the same victim as the whole walk
//! (ties still go to the older entry: a later one must score strictly more). The updated bits
//! the whole walk would have cleared are exactly those set, which a list of the entries
//! updated since the last choice finds. With a bounded window every entry of it is examined.

use super::setassoc::NIL;

/// The DTL over `tvpns` translation pages and `slots` CMT slots.
#[derive(Debug, Clone)]
pub struct Dtl {
    /// Per TVPN, everything a walk of the list reads in one record (a flush-victim choice
    /// walks the whole list: one cache line per entry instead of one per field).
    tvpns: Vec<TvpnEntry>,
    oldest: u32,
    newest: u32,
    entries: u32,
    registrations: u64,
    /// Next dirty slot of the same TVPN, per CMT slot.
    next: Vec<u32>,
    /// Registered entries per class `2 x dirty_blocks + (updated ? 0 : 1)`.
    classes: Vec<u32>,
    /// The largest dirty-block count any registered entry may have (its class may be empty).
    max_dirty: u32,
    /// The entries whose updated bit was set since the last choice (`listed` in their entry).
    updated_list: Vec<u32>,
    /// Per class, the choice that last met it (scratch of [`Dtl::choose_victim`]).
    met: Vec<u64>,
    choices: u64,
}

/// One TVPN's DTL entry.
#[derive(Debug, Clone, Copy)]
struct TvpnEntry {
    /// Registration number (while registered).
    registered_at: u64,
    /// First dirty slot of its chain; NIL when the TVPN is not in the list.
    head: u32,
    dirty_blocks: u32,
    /// Registration-order list: toward the tail (newer) and toward the head (older).
    newer: u32,
    older: u32,
    updated: bool,
    /// In `updated_list`.
    listed: bool,
}

fn class(dirty_blocks: u32, updated: bool) -> usize {
    2 * dirty_blocks as usize + usize::from(!updated)
}

impl Dtl {
    pub fn new(tvpns: u32, slots: u32) -> Self {
        let empty = TvpnEntry {
            registered_at: 0,
            head: NIL,
            dirty_blocks: 0,
            newer: NIL,
            older: NIL,
            updated: false,
            listed: false,
        };
        // A TVPN has at most one dirty block per CMT slot.
        let classes = 2 * (slots as usize + 1);
        Dtl {
            tvpns: vec![empty; tvpns as usize],
            oldest: NIL,
            newest: NIL,
            entries: 0,
            registrations: 0,
            next: vec![NIL; slots as usize],
            classes: vec![0; classes],
            max_dirty: 0,
            updated_list: Vec::with_capacity(tvpns as usize),
            met: vec![0; classes],
            choices: 0,
        }
    }

    /// Sets the updated bit of registered `tvpn` (keeping the class counts).
    fn set_updated(&mut self, tvpn: u32) {
        let e = &mut self.tvpns[tvpn as usize];
        if e.updated {
            return;
        }
        self.classes[class(e.dirty_blocks, false)] -= 1;
        self.classes[class(e.dirty_blocks, true)] += 1;
        e.updated = true;
        if !e.listed {
            e.listed = true;
            self.updated_list.push(tvpn);
        }
    }

    /// Clears the updated bit of registered `tvpn` (keeping the class counts).
    fn clear_updated(&mut self, tvpn: u32) {
        let e = &mut self.tvpns[tvpn as usize];
        if e.updated {
            self.classes[class(e.dirty_blocks, true)] -= 1;
            self.classes[class(e.dirty_blocks, false)] += 1;
            e.updated = false;
        }
    }

    /// TVPNs in the list.
    pub fn entries(&self) -> u32 {
        self.entries
    }
    /// Dirty CMT blocks of `tvpn`.
    pub fn dirty_blocks(&self, tvpn: u32) -> u32 {
        self.tvpns[tvpn as usize].dirty_blocks
    }
    pub fn is_registered(&self, tvpn: u32) -> bool {
        self.tvpns[tvpn as usize].head != NIL
    }
    /// The oldest registered TVPN.
    pub fn oldest(&self) -> Option<u32> {
        (self.oldest != NIL).then_some(self.oldest)
    }

    /// CMT slot `slot`, holding entries of `tvpn`, just became dirty.
    pub fn block_dirtied(&mut self, tvpn: u32, slot: u32) {
        if self.tvpns[tvpn as usize].head == NIL {
            self.register(tvpn);
        } else {
            let e = &self.tvpns[tvpn as usize];
            self.classes[class(e.dirty_blocks, e.updated)] -= 1;
        }
        let e = &mut self.tvpns[tvpn as usize];
        self.next[slot as usize] = e.head;
        e.head = slot;
        e.dirty_blocks += 1;
        e.updated = false;
        self.classes[class(e.dirty_blocks, false)] += 1;
        self.max_dirty = self.max_dirty.max(e.dirty_blocks);
        self.set_updated(tvpn);
    }

    /// An already dirty block of `tvpn` was updated again.
    pub fn block_updated(&mut self, tvpn: u32) {
        debug_assert!(self.is_registered(tvpn));
        self.set_updated(tvpn);
    }

    fn register(&mut self, tvpn: u32) {
        let e = &mut self.tvpns[tvpn as usize];
        e.registered_at = self.registrations;
        e.older = self.newest;
        e.newer = NIL;
        self.registrations += 1;
        match self.newest {
            NIL => self.oldest = tvpn,
            n => self.tvpns[n as usize].newer = tvpn,
        }
        self.newest = tvpn;
        self.entries += 1;
    }

    /// Takes `tvpn` out of the list and appends its dirty slots (following the next links) to
    /// `out`; returns how many. The caller marks them clean.
    pub fn take(&mut self, tvpn: u32, out: &mut Vec<u32>) -> u32 {
        let t = tvpn as usize;
        let mut slot = std::mem::replace(&mut self.tvpns[t].head, NIL);
        if slot == NIL {
            return 0;
        }
        while slot != NIL {
            out.push(slot);
            slot = std::mem::replace(&mut self.next[slot as usize], NIL);
        }
        let (older, newer) = (self.tvpns[t].older, self.tvpns[t].newer);
        match older {
            NIL => self.oldest = newer,
            o => self.tvpns[o as usize].newer = newer,
        }
        match newer {
            NIL => self.newest = older,
            n => self.tvpns[n as usize].older = older,
        }
        self.entries -= 1;
        let e = &mut self.tvpns[t];
        self.classes[class(e.dirty_blocks, e.updated)] -= 1;
        e.updated = false;
        std::mem::take(&mut e.dirty_blocks)
    }

    /// The flush victim among the `window` oldest entries (0 = all), by the score of the
    /// module doc; clears the updated bits of the entries it examined.
    pub fn choose_victim(&mut self, window: u32) -> Option<u32> {
        if window > 0 {
            return self.walk(window);
        }
        // The whole list, cut short where no entry further on can win (module doc).
        while self.max_dirty > 0
            && self.classes[class(self.max_dirty, true)] == 0
            && self.classes[class(self.max_dirty, false)] == 0
        {
            self.max_dirty -= 1;
        }
        self.choices += 1;
        let stamp = self.choices;
        // The largest weight among the classes not met yet (0 when none is left).
        let mut unmet = self.largest_unmet_weight(2 * u64::from(self.max_dirty), stamp);
        let mut best: Option<(u128, u32)> = None;
        let mut t = self.oldest;
        while t != NIL {
            let e = self.tvpns[t as usize];
            let age = self.registrations - 1 - e.registered_at;
            if let Some((b, _)) = best {
                if u128::from(unmet) * u128::from(1 + age) <= b {
                    break;
                }
            }
            let score = self.score(t);
            if best.is_none_or(|(b, _)| score > b) {
                best = Some((score, t));
            }
            let c = class(e.dirty_blocks, e.updated);
            if self.met[c] != stamp {
                self.met[c] = stamp;
                unmet = self.largest_unmet_weight(unmet, stamp);
            }
            t = e.newer;
        }
        // The updated bits the whole walk would have cleared.
        let mut listed = std::mem::take(&mut self.updated_list);
        for &u in &listed {
            self.tvpns[u as usize].listed = false;
            if self.tvpns[u as usize].head != NIL {
                self.clear_updated(u);
            }
        }
        listed.clear();
        self.updated_list = listed;
        best.map(|(_, t)| t)
    }

    /// The largest weight (at most `from`) of a non-empty class not met in choice `stamp`.
    fn largest_unmet_weight(&self, from: u64, stamp: u64) -> u64 {
        let mut w = from;
        while w > 0 {
            // Weight w: dirty_blocks w with the updated bit, or w / 2 without it.
            let updated = class(w as u32, true);
            if w <= u64::from(self.max_dirty)
                && self.classes[updated] > 0
                && self.met[updated] != stamp
            {
                return w;
            }
            if w % 2 == 0 {
                let not_updated = class((w / 2) as u32, false);
                if self.classes[not_updated] > 0 && self.met[not_updated] != stamp {
                    return w;
                }
            }
            w -= 1;
        }
        0
    }

    /// The choice among the `window` oldest entries, every one of them examined.
    fn walk(&mut self, window: u32) -> Option<u32> {
        let mut best: Option<(u128, u32)> = None;
        let mut t = self.oldest;
        let mut seen = 0;
        while t != NIL && seen < window {
            let score = self.score(t);
            if best.is_none_or(|(b, _)| score > b) {
                best = Some((score, t));
            }
            self.clear_updated(t);
            t = self.tvpns[t as usize].newer;
            seen += 1;
        }
        best.map(|(_, t)| t)
    }

    /// [`Dtl::choose_victim`] of the whole list as the plain walk does it (tests compare).
    #[cfg(test)]
    fn walk_all(&mut self) -> Option<u32> {
        self.walk(u32::MAX)
    }

    /// Writes the list as text (a state digest's input), by meaning: per registered TVPN in
    /// registration order (oldest first) its registration number, dirty blocks, updated bit
    /// and chain of dirty slots; the registration counter.
    pub fn write_state(&self, out: &mut dyn std::fmt::Write) -> std::fmt::Result {
        write!(out, "dtl {} {}:", self.entries, self.registrations)?;
        let mut t = self.oldest;
        while t != NIL {
            let e = &self.tvpns[t as usize];
            write!(
                out,
                " {t}@{} x{} {}",
                e.registered_at, e.dirty_blocks, e.updated
            )?;
            let mut s = e.head;
            while s != NIL {
                write!(out, " s{s}")?;
                s = self.next[s as usize];
            }
            write!(out, ";")?;
            t = e.newer;
        }
        writeln!(out, " newest {}", self.newest)
    }

    fn score(&self, tvpn: u32) -> u128 {
        let e = &self.tvpns[tvpn as usize];
        let age = self.registrations - 1 - e.registered_at;
        let recency = if e.updated { 1 } else { 2 };
        u128::from(e.dirty_blocks) * u128::from(1 + age) * recency
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

    /// The choice cut short picks what the walk of the whole list picks and leaves the same
    /// list, on random sequences of dirtied, updated and taken pages with 1 to 40 dirty
    /// blocks a page.
    #[test]
    fn the_shortened_choice_is_the_whole_walks() {
        let (tvpns, slots) = (16u32, 256u32);
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u32| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % u64::from(n)) as u32
        };
        let mut dtl = Dtl::new(tvpns, slots);
        let mut free: Vec<u32> = (0..slots).collect();
        let mut taken = Vec::new();
        let (mut choices, mut most) = (0, 0);
        for step in 0..40_000 {
            let tvpn = next(tvpns);
            match next(20) {
                0..=9 if !free.is_empty() => {
                    let slot = free.swap_remove(next(free.len() as u32) as usize);
                    dtl.block_dirtied(tvpn, slot);
                    most = most.max(dtl.dirty_blocks(tvpn));
                }
                10..=13 if dtl.is_registered(tvpn) => dtl.block_updated(tvpn),
                14 => {
                    taken.clear();
                    dtl.take(tvpn, &mut taken);
                    free.extend_from_slice(&taken);
                }
                _ => {
                    let mut plain = dtl.clone();
                    let want = plain.walk_all();
                    let got = dtl.choose_victim(0);
                    assert_eq!(got, want, "step {step}");
                    let (mut a, mut b) = (String::new(), String::new());
                    dtl.write_state(&mut a).unwrap();
                    plain.write_state(&mut b).unwrap();
                    assert_eq!(a, b, "step {step}: the same list after the choice");
                    if let Some(v) = got.filter(|_| next(3) == 0) {
                        taken.clear();
                        dtl.take(v, &mut taken);
                        free.extend_from_slice(&taken);
                    }
                    choices += 1;
                }
            }
        }
        assert!(
            choices > 1000 && most >= 10,
            "{choices} choices, {most} dirty blocks at most"
        );
    }

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
