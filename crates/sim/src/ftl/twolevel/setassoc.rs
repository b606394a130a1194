//! A set-associative cache of map blocks (fmmu.txt section 4.2, Figs. 6 and 7): `sets x ways`
//! slots, each holding one block (a run of consecutive map entries: a CMT block of a few
//! DPPNs, or a CTP block of a whole translation page) named by its block number (`key`).
//!
//! Only the cache's bookkeeping lives here (tag, valid, transient, dirty and referenced bits);
//! the entries themselves are kept by the FTL. Block `key` goes to set `key % sets`.
//!
//! Replacement (section 4.4) is second chance among blocks that are neither dirty nor
//! transient: a dirty block must be flushed first (a long flash program), and a transient
//! block is waiting for its load and holds the MSHRs of the requests that missed on it. An
//! invalid way is always taken first. When no way of the set can be evicted the allocation
//! fails ([`SetBusy`]) and the request waits until a flush (or a load) frees one: the paper
//! blocks a request only when its whole set is dirty; a set whose remaining ways are still
//! loading blocks too, since those ways cannot be given away either.
//!
//! Nothing here allocates after construction.

/// No slot / no link.
pub const NIL: u32 = u32::MAX;

const VALID: u8 = 1;
const TRANSIENT: u8 = 2;
const DIRTY: u8 = 4;
const REFERENCED: u8 = 8;

/// A block was given a way: `slot` now holds the new block (transient, not yet loaded);
/// `evicted` is the clean block that made room, if the way was in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocated {
    pub slot: u32,
    pub evicted: Option<u32>,
}

/// Every way of the set is dirty or loading: nothing can be evicted now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetBusy {
    pub set: u32,
    /// Whether every way is dirty (the paper's blocking case); otherwise some are loading.
    pub all_dirty: bool,
}

/// The tags and state bits of a `sets x ways` cache (see the module doc).
#[derive(Debug, Clone)]
pub struct SetAssoc {
    sets: u32,
    ways: u32,
    keys: Vec<u32>,
    flags: Vec<u8>,
    /// Second-chance hand per set (next way to examine).
    hands: Vec<u16>,
    dirty: u32,
    /// Slots loading (transient).
    loading: u32,
}

impl SetAssoc {
    /// A cache of `sets x ways` empty slots (`sets >= 1`, `1 <= ways <= 65535`).
    pub fn new(sets: u32, ways: u32) -> Self {
        assert!(sets >= 1 && (1..=u32::from(u16::MAX)).contains(&ways));
        let slots = (sets * ways) as usize;
        SetAssoc {
            sets,
            ways,
            keys: vec![NIL; slots],
            flags: vec![0; slots],
            hands: vec![0; sets as usize],
            dirty: 0,
            loading: 0,
        }
    }

    pub fn sets(&self) -> u32 {
        self.sets
    }
    pub fn ways(&self) -> u32 {
        self.ways
    }
    /// Slots in all (`sets x ways`).
    pub fn slots(&self) -> u32 {
        self.sets * self.ways
    }
    /// The set block `key` maps to.
    pub fn set_of(&self, key: u32) -> u32 {
        key % self.sets
    }
    /// Slots not dirty (free, clean or loading): what the flush watermarks count.
    pub fn non_dirty(&self) -> u32 {
        self.slots() - self.dirty
    }
    /// Dirty slots.
    pub fn dirty(&self) -> u32 {
        self.dirty
    }
    /// Slots an allocation could take now: neither dirty nor loading (free or clean).
    pub fn evictable(&self) -> u32 {
        self.slots() - self.dirty - self.loading
    }

    /// The slot holding block `key` (loaded or loading), marking it referenced; `None` on a
    /// miss. Compares the set's `ways` tags.
    pub fn find(&mut self, key: u32) -> Option<u32> {
        let slot = self.peek(key)?;
        self.flags[slot as usize] |= REFERENCED;
        Some(slot)
    }

    /// Like [`SetAssoc::find`] without touching the referenced bit.
    pub fn peek(&self, key: u32) -> Option<u32> {
        let first = self.set_of(key) * self.ways;
        (first..first + self.ways)
            .find(|&s| self.flags[s as usize] & VALID != 0 && self.keys[s as usize] == key)
    }

    /// Gives block `key` (not cached) a way of its set: an invalid way if there is one, else
    /// the second-chance victim among clean, loaded ways. The slot is valid, transient and
    /// referenced; [`SetAssoc::fill`] ends the transient state when the load completes.
    /// Appends to `out`, in key order, the dirty slots holding keys `first .. first + n`
    /// (what `peek` then `is_dirty` per key finds, without a division per key).
    pub fn dirty_slots_of_keys(&self, first: u32, n: u32, out: &mut Vec<u32>) {
        if self.dirty == 0 {
            return;
        }
        let mut set = first % self.sets;
        for key in first..first + n {
            let base = set * self.ways;
            if let Some(s) = (base..base + self.ways).find(|&s| {
                self.flags[s as usize] & (VALID | DIRTY) == VALID | DIRTY
                    && self.keys[s as usize] == key
            }) {
                out.push(s);
            }
            set += 1;
            if set == self.sets {
                set = 0;
            }
        }
    }

    pub fn allocate(&mut self, key: u32) -> Result<Allocated, SetBusy> {
        debug_assert!(self.peek(key).is_none(), "block {key} is already cached");
        let set = self.set_of(key);
        let slot = match self.free_way(set) {
            Some(slot) => slot,
            None => self.second_chance(set)?,
        };
        let i = slot as usize;
        let evicted = (self.flags[i] & VALID != 0).then_some(self.keys[i]);
        self.keys[i] = key;
        self.flags[i] = VALID | TRANSIENT | REFERENCED;
        self.loading += 1;
        Ok(Allocated { slot, evicted })
    }

    /// Whether [`SetAssoc::allocate`] of block `key` would fail now (no invalid way and
    /// every way dirty or loading).
    pub fn would_block(&self, key: u32) -> bool {
        let first = self.set_of(key) * self.ways;
        (first..first + self.ways).all(|s| {
            let f = self.flags[s as usize];
            f & VALID != 0 && f & (DIRTY | TRANSIENT) != 0
        })
    }

    fn free_way(&self, set: u32) -> Option<u32> {
        let first = set * self.ways;
        (first..first + self.ways).find(|&s| self.flags[s as usize] & VALID == 0)
    }

    /// Clock over the set's ways, skipping dirty and transient ones; a referenced way loses
    /// its bit and is passed over once.
    fn second_chance(&mut self, set: u32) -> Result<u32, SetBusy> {
        let first = set * self.ways;
        let mut hand = u32::from(self.hands[set as usize]);
        for _ in 0..2 * self.ways {
            let slot = first + hand;
            hand = (hand + 1) % self.ways;
            let f = &mut self.flags[slot as usize];
            if *f & (DIRTY | TRANSIENT) != 0 {
                continue;
            }
            if *f & REFERENCED != 0 {
                *f &= !REFERENCED;
                continue;
            }
            self.hands[set as usize] = hand as u16;
            return Ok(slot);
        }
        let all_dirty = (first..first + self.ways).all(|s| self.flags[s as usize] & DIRTY != 0);
        Err(SetBusy { set, all_dirty })
    }

    /// The load of `slot` completed: its entries are in the cache.
    pub fn fill(&mut self, slot: u32) {
        let f = &mut self.flags[slot as usize];
        self.loading -= u32::from(*f & TRANSIENT != 0);
        *f &= !TRANSIENT;
    }

    /// Marks `slot` dirty; returns whether it was clean before (a new dirty block).
    pub fn mark_dirty(&mut self, slot: u32) -> bool {
        let f = &mut self.flags[slot as usize];
        debug_assert!(*f & VALID != 0);
        let was_clean = *f & DIRTY == 0;
        *f |= DIRTY | REFERENCED;
        self.dirty += u32::from(was_clean);
        was_clean
    }

    /// Marks `slot` clean (its entries were handed to a flush).
    pub fn mark_clean(&mut self, slot: u32) {
        let f = &mut self.flags[slot as usize];
        let was_dirty = *f & DIRTY != 0;
        *f &= !DIRTY;
        self.dirty -= u32::from(was_dirty);
    }

    /// Empties `slot` (a block that is neither dirty nor loading).
    pub fn invalidate(&mut self, slot: u32) {
        debug_assert!(self.flags[slot as usize] & (DIRTY | TRANSIENT) == 0);
        self.flags[slot as usize] = 0;
        self.keys[slot as usize] = NIL;
    }

    /// The block in `slot`, if any.
    pub fn key(&self, slot: u32) -> Option<u32> {
        (self.flags[slot as usize] & VALID != 0).then_some(self.keys[slot as usize])
    }
    pub fn is_dirty(&self, slot: u32) -> bool {
        self.flags[slot as usize] & DIRTY != 0
    }
    pub fn is_transient(&self, slot: u32) -> bool {
        self.flags[slot as usize] & TRANSIENT != 0
    }
}

/// In-cache MSHRs (section 4.2): the requests waiting for the load of a cache block, logged in
/// the block itself in arrival order. A miss that finds its block already loading appends to
/// that block's list instead of issuing another load; the load's completion releases them all.
///
/// The lists share one pool of nodes that is reused: after warm-up, logging allocates nothing.
#[derive(Debug, Clone)]
pub struct Mshrs<T: Copy> {
    heads: Vec<u32>,
    tails: Vec<u32>,
    nodes: Vec<(T, u32)>,
    free: u32,
    logged: usize,
}

impl<T: Copy> Mshrs<T> {
    /// MSHR lists for `slots` cache slots.
    pub fn new(slots: u32) -> Self {
        Mshrs {
            heads: vec![NIL; slots as usize],
            tails: vec![NIL; slots as usize],
            nodes: Vec::new(),
            free: NIL,
            logged: 0,
        }
    }

    /// Logs `request` at the end of `slot`'s list.
    pub fn log(&mut self, slot: u32, request: T) {
        let node = if self.free == NIL {
            self.nodes.push((request, NIL));
            (self.nodes.len() - 1) as u32
        } else {
            let n = self.free;
            self.free = self.nodes[n as usize].1;
            self.nodes[n as usize] = (request, NIL);
            n
        };
        let s = slot as usize;
        match self.tails[s] {
            NIL => self.heads[s] = node,
            tail => self.nodes[tail as usize].1 = node,
        }
        self.tails[s] = node;
        self.logged += 1;
    }

    /// Whether requests wait on `slot`.
    pub fn waiting(&self, slot: u32) -> bool {
        self.heads[slot as usize] != NIL
    }

    /// Requests logged in all slots.
    pub fn logged(&self) -> usize {
        self.logged
    }

    /// Moves `slot`'s requests, in the order they were logged, to the end of `out`.
    pub fn release(&mut self, slot: u32, out: &mut Vec<T>) {
        let s = slot as usize;
        let mut n = std::mem::replace(&mut self.heads[s], NIL);
        self.tails[s] = NIL;
        while n != NIL {
            let (request, next) = self.nodes[n as usize];
            out.push(request);
            self.nodes[n as usize].1 = self.free;
            self.free = n;
            self.logged -= 1;
            n = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dirty slots of a key range are what peek and is_dirty find key by key.
    #[test]
    fn dirty_slots_of_keys_is_peek_then_is_dirty() {
        let mut c = SetAssoc::new(7, 3);
        let mut x = 0x1234_5678_9abc_def1u64;
        for _ in 0..3000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = (x % 40) as u32;
            match c.peek(key) {
                Some(s) if x % 3 == 0 => {
                    c.fill(s);
                    c.mark_dirty(s);
                }
                Some(s) if x % 3 == 1 && !c.is_transient(s) => c.mark_clean(s),
                Some(_) => {}
                None => {
                    let _ = c.allocate(key);
                }
            }
            let (first, n) = ((x >> 20) as u32 % 40, (x >> 30) as u32 % 12);
            let mut got = Vec::new();
            c.dirty_slots_of_keys(first, n, &mut got);
            let want: Vec<u32> = (first..first + n)
                .filter_map(|k| c.peek(k))
                .filter(|&s| c.is_dirty(s))
                .collect();
            assert_eq!(got, want);
        }
        assert!(c.dirty() > 0);
    }

    #[test]
    fn hit_after_allocate_and_sets_by_key() {
        let mut c = SetAssoc::new(4, 2);
        let a = c.allocate(9).unwrap();
        assert_eq!(a.slot / 2, 1, "block 9 goes to set 9 % 4 = 1");
        assert_eq!(a.evicted, None);
        assert!(c.is_transient(a.slot));
        assert_eq!(c.find(9), Some(a.slot));
        assert_eq!(c.find(13), None, "same set, other tag");
        c.fill(a.slot);
        assert!(!c.is_transient(a.slot));
        assert_eq!(c.key(a.slot), Some(9));
    }

    #[test]
    fn second_chance_spares_referenced_and_never_evicts_dirty_or_loading() {
        let mut c = SetAssoc::new(1, 4);
        for k in 0..4 {
            let s = c.allocate(k).unwrap().slot;
            c.fill(s);
        }
        // All four are referenced: the clock clears them all and then takes way 0.
        assert_eq!(c.allocate(4).unwrap().evicted, Some(0));
        c.fill(c.peek(4).unwrap());
        // Block 1 is dirty; block 2 is referenced again: the victim is 3.
        c.mark_dirty(c.peek(1).unwrap());
        c.find(2);
        assert_eq!(c.allocate(5).unwrap().evicted, Some(3));
        // Block 5 (way 3) is loading, 1 dirty: the hand is at way 0, whose block 4 was
        // referenced at allocation and loses its bit; way 2 lost its bit on the last pass.
        assert_eq!(c.allocate(6).unwrap().evicted, Some(2));
        assert!(c.peek(1).is_some(), "a dirty block is never evicted");
        assert!(c.peek(5).is_some(), "a loading block is never evicted");
    }

    #[test]
    fn a_whole_dirty_set_blocks_and_a_flush_releases_it() {
        let mut c = SetAssoc::new(2, 2);
        for k in [0, 2] {
            let s = c.allocate(k).unwrap().slot;
            c.fill(s);
            c.mark_dirty(s);
        }
        assert_eq!(c.non_dirty(), 2);
        assert_eq!(
            c.allocate(4),
            Err(SetBusy {
                set: 0,
                all_dirty: true
            })
        );
        // The other set is unaffected.
        assert!(c.allocate(1).is_ok());
        c.mark_clean(c.peek(2).unwrap());
        assert_eq!(c.allocate(4).unwrap().evicted, Some(2));
        assert_eq!(c.dirty(), 1);
    }

    #[test]
    fn a_set_of_loading_blocks_is_busy_but_not_all_dirty() {
        let mut c = SetAssoc::new(1, 2);
        c.allocate(0).unwrap();
        let s = c.allocate(1).unwrap().slot;
        c.fill(s);
        c.mark_dirty(s);
        assert_eq!(
            c.allocate(2),
            Err(SetBusy {
                set: 0,
                all_dirty: false
            })
        );
    }

    #[test]
    fn mshrs_release_every_waiter_in_order_and_reuse_nodes() {
        let mut m: Mshrs<u32> = Mshrs::new(3);
        for r in 0..100 {
            m.log(1, r);
        }
        m.log(2, 500);
        assert!(m.waiting(1) && m.waiting(2) && !m.waiting(0));
        let mut out = Vec::new();
        m.release(1, &mut out);
        assert_eq!(out, (0..100).collect::<Vec<_>>());
        assert!(!m.waiting(1));
        assert_eq!(m.logged(), 1);
        for r in 0..99 {
            m.log(0, r);
        }
        assert_eq!(m.nodes.len(), 101, "freed nodes are reused");
        out.clear();
        m.release(2, &mut out);
        assert_eq!(out, vec![500]);
    }
}
