//! Map-cache policies of the demand-paged core: which mapping entries the RAM cache holds,
//! which are dirty, what a lookup costs and what an eviction writes back.
//!
//! The core keeps the functional value of every entry (its host map is the reference the
//! checks compare the cache and the flash copy of the translation pages against); a policy
//! decides hits, misses, dirtiness and write-backs, which is what changes timing and flash
//! traffic. Contract: `update(lpn)` only right after a `Hit` or an `install` of the same lpn.

use std::collections::HashMap;

use crate::ftl::mapcache::MapCacheLevel;

/// Result of a map-cache lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// In the first-level cache (the CMT).
    Hit,
    /// Not in the CMT, in the second-level cache (the CTP): no flash read.
    SecondLevelHit,
    /// Not cached: the core loads the entry's translation page.
    Miss,
    /// Cannot be served now (e.g. a whole set dirty); retried after a write-back completes.
    Blocked,
}

/// Dirty entries of one translation page the policy gives back to flash (a batch update).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteBack {
    pub tvpn: u32,
    pub lpns: Vec<u32>,
    /// Cache blocks scanned to find them (the flush cost model's input; 0: no flush cost,
    /// e.g. a two-level cache's CTP write of a page already flushed from the CMT).
    pub blocks_scanned: u64,
    /// Whether the old translation page must be read to merge them (false when the cache
    /// holds the whole page).
    pub read_old: bool,
}

impl WriteBack {
    /// The write-back of entries changed while not cached (GC moves, TRIM) that carries none
    /// of the cache's dirty entries (a cache that could only find them by a scan): no flush
    /// cost, the old page read and merged.
    pub fn without_cached_entries(tvpn: u32) -> Self {
        WriteBack {
            tvpn,
            lpns: Vec::new(),
            blocks_scanned: 0,
            read_old: true,
        }
    }
}

/// A map-cache replacement and write-back policy.
pub trait MapCachePolicy {
    /// Looks `lpn` up, marking it referenced on a hit.
    fn lookup(&mut self, lpn: u32) -> Lookup;
    /// Caches `lpn` clean after its translation page was read; appends the write-backs of
    /// the entries it evicted to `out`. Does nothing if `lpn` is cached already.
    fn install(&mut self, lpn: u32, out: &mut Vec<WriteBack>);
    /// Marks cached `lpn` dirty (its value changed).
    fn update(&mut self, lpn: u32);
    /// Whether `lpn` is cached, and dirty.
    fn state(&self, lpn: u32) -> Option<bool>;
    /// Takes the dirty entries of `tvpn` (marking them clean) for a write-back the core does
    /// anyway (a GC update of the same translation page).
    fn take_dirty(&mut self, tvpn: u32) -> WriteBack;
    /// The write-back of translation page `tvpn` for entries changed while not cached (GC
    /// moves, TRIM): by default it carries the cache's dirty entries of the page too
    /// ([`MapCachePolicy::take_dirty`]); a cache that could only find them by a scan leaves
    /// them dirty instead.
    fn uncached_write_back(&mut self, tvpn: u32) -> WriteBack {
        self.take_dirty(tvpn)
    }
    /// The cache block holding `lpn`'s entry: one Lookup or Update of a request covers every
    /// entry it needs in one block (fmmu.txt Fig. 6). Entry-level caches: the entry itself.
    fn map_block(&self, lpn: u32) -> u32 {
        lpn
    }
    /// Entries per miss-merging unit when misses in flight merge only on the same cache block
    /// (no MSHRs: DFTL), or None when every miss on a translation page being read waits on
    /// that read (the default: a CTP or in-cache MSHRs).
    fn miss_merge_entries(&self) -> Option<u32> {
        None
    }
    /// A one-level cache's shape: sets, ways, entries per block and blocks loaded (default:
    /// fully associative, one entry per block).
    fn one_level_shape(&self) -> (u32, u32, u32, u64) {
        let (cached, capacity) = self.occupancy();
        (1, capacity as u32, 1, cached as u64)
    }
    /// Cached entries and their capacity.
    fn occupancy(&self) -> (usize, usize);
    /// Background flushing between requests: appends write-backs to `out`; returns the cache
    /// blocks examined when it flushed map blocks (their cost), None when it did not.
    fn flush_step(&mut self, _out: &mut Vec<WriteBack>) -> Option<u64> {
        None
    }
    /// A lookup of `lpn` was [`Lookup::Blocked`]: frees room for it (appending write-backs
    /// to `out`). Returns whether it made room now (the core looks `lpn` up again at once;
    /// false only when the blocking set's ways are all loading, whose reads are in flight),
    /// and the cache blocks examined when it flushed map blocks.
    fn unblock(&mut self, _lpn: u32, _out: &mut Vec<WriteBack>) -> (bool, Option<u64>) {
        (false, None)
    }
    /// Idle-time write-back, whatever the watermarks: appends the write-back of one batch of
    /// dirty entries to `out`; returns whether anything was dirty, and the cache blocks a
    /// map-block flush examined (as [`MapCachePolicy::flush_step`]).
    fn clean_step(&mut self, out: &mut Vec<WriteBack>) -> (bool, Option<u64>);
    /// A two-level cache's CMT and CTP (shape, occupancy, lookups and hits of each); None for
    /// a one-level cache, whose figures are the core's.
    fn levels(&self) -> Option<(MapCacheLevel, MapCacheLevel)> {
        None
    }
    /// Policy-specific figures for `ftl_details` beyond the `map_cache` section (JSON null
    /// when none).
    fn details(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
    /// Clears the policy's own counters (start of the measurement).
    fn reset_counters(&mut self) {}
    /// Writes the cache's whole state as text (`digest.rs`): what it holds, dirty bits,
    /// replacement and flush state, counters; by meaning, not by representation.
    fn write_state(&self, out: &mut dyn std::fmt::Write) -> std::fmt::Result;
}

/// One entry of the DFTL cache.
#[derive(Debug, Clone, Copy)]
struct Slot {
    lpn: u32,
    referenced: bool,
    dirty: bool,
}

/// DFTL's cached mapping table (Gupta et al. 2009): entry-level, second-chance (clock)
/// replacement; evicting a dirty entry writes back every dirty entry of its translation page
/// together (batch update). The software finds them by scanning the whole table (the cost
/// charged: `blocks_scanned` = capacity); the simulator keeps them per translation page.
const NOT_CACHED: u32 = u32::MAX;

pub struct DftlCache {
    slots: Vec<Slot>,
    /// Dirty entries of each translation page.
    dirty: HashMap<u32, Vec<u32>>,
    /// Slot of each logical unit, `NOT_CACHED` if none.
    index: Vec<u32>,
    capacity: usize,
    hand: usize,
    entries_per_tpage: u32,
}

impl DftlCache {
    /// A cache of `capacity` entries over `logical_units` units.
    pub fn new(capacity: usize, entries_per_tpage: u32, logical_units: u32) -> Self {
        DftlCache {
            slots: Vec::with_capacity(capacity),
            dirty: HashMap::new(),
            index: vec![NOT_CACHED; logical_units as usize],
            capacity: capacity.max(1),
            hand: 0,
            entries_per_tpage,
        }
    }

    fn slot(&self, lpn: u32) -> Option<usize> {
        let i = self.index[lpn as usize];
        (i != NOT_CACHED).then_some(i as usize)
    }

    /// Second chance: the first unreferenced entry from the hand, clearing references.
    fn victim(&mut self) -> usize {
        loop {
            let i = self.hand;
            self.hand = (self.hand + 1) % self.slots.len();
            if !std::mem::replace(&mut self.slots[i].referenced, false) {
                return i;
            }
        }
    }
}

impl MapCachePolicy for DftlCache {
    fn lookup(&mut self, lpn: u32) -> Lookup {
        match self.slot(lpn) {
            Some(i) => {
                self.slots[i].referenced = true;
                Lookup::Hit
            }
            None => Lookup::Miss,
        }
    }

    fn install(&mut self, lpn: u32, out: &mut Vec<WriteBack>) {
        if self.slot(lpn).is_some() {
            return;
        }
        // Referenced only once hit again: a page read once leaves first.
        let slot = Slot {
            lpn,
            referenced: false,
            dirty: false,
        };
        if self.slots.len() < self.capacity {
            self.index[lpn as usize] = self.slots.len() as u32;
            self.slots.push(slot);
            return;
        }
        let i = self.victim();
        let old = self.slots[i];
        self.index[old.lpn as usize] = NOT_CACHED;
        if old.dirty {
            out.push(self.take_dirty(old.lpn / self.entries_per_tpage));
        }
        self.slots[i] = slot;
        self.index[lpn as usize] = i as u32;
    }

    fn update(&mut self, lpn: u32) {
        if let Some(i) = self.slot(lpn) {
            if !std::mem::replace(&mut self.slots[i].dirty, true) {
                let tvpn = lpn / self.entries_per_tpage;
                self.dirty.entry(tvpn).or_default().push(lpn);
            }
        }
    }

    fn state(&self, lpn: u32) -> Option<bool> {
        self.slot(lpn).map(|i| self.slots[i].dirty)
    }

    fn take_dirty(&mut self, tvpn: u32) -> WriteBack {
        let lpns = self.dirty.remove(&tvpn).unwrap_or_default();
        for lpn in &lpns {
            if let Some(i) = self.slot(*lpn) {
                self.slots[i].dirty = false;
            }
        }
        WriteBack {
            tvpn,
            lpns,
            blocks_scanned: self.capacity as u64,
            read_old: true,
        }
    }

    /// DFTL's GC (Gupta et al. 2009, 3.4): a moved entry that is cached is updated in the
    /// cache (lazy copying), the others are batched per translation page; cached dirty
    /// entries of the page stay dirty (no scan of the table to find them).
    fn uncached_write_back(&mut self, tvpn: u32) -> WriteBack {
        WriteBack::without_cached_entries(tvpn)
    }

    fn occupancy(&self) -> (usize, usize) {
        (self.slots.len(), self.capacity)
    }

    fn write_state(&self, out: &mut dyn std::fmt::Write) -> std::fmt::Result {
        let mut dirty: Vec<_> = self.dirty.iter().collect();
        dirty.sort_unstable();
        writeln!(
            out,
            "dftl cache {:?} hand {} capacity {} dirty {:?}",
            self.slots, self.hand, self.capacity, dirty
        )
    }

    /// The dirty translation page with the lowest number (deterministic, whatever the
    /// hash map's order), as an eviction's batch update would write it.
    fn clean_step(&mut self, out: &mut Vec<WriteBack>) -> (bool, Option<u64>) {
        let Some(&tvpn) = self.dirty.keys().min() else {
            return (false, None);
        };
        out.push(self.take_dirty(tvpn));
        (true, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicting_a_dirty_entry_writes_back_its_whole_translation_page() {
        let mut c = DftlCache::new(3, 4, 16);
        let mut out = Vec::new();
        for lpn in [0, 1, 5] {
            c.install(lpn, &mut out);
            c.update(lpn);
        }
        assert!(out.is_empty());
        // None hit since: the hand evicts 0 (tvpn 0, with 1 dirty too).
        c.install(9, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].tvpn, 0);
        let mut lpns = out[0].lpns.clone();
        lpns.sort_unstable();
        assert_eq!(lpns, vec![0, 1]);
        assert_eq!(c.state(1), Some(false));
        assert_eq!(c.state(5), Some(true));
        assert_eq!(c.state(0), None);
    }

    #[test]
    fn a_referenced_entry_gets_a_second_chance() {
        let mut c = DftlCache::new(2, 4, 16);
        let mut out = Vec::new();
        c.install(0, &mut out);
        c.install(1, &mut out);
        c.install(2, &mut out); // evicts 0
        assert_eq!(c.lookup(1), Lookup::Hit); // 1 referenced again
        c.install(3, &mut out); // hand at 1: referenced -> skip; 2 unreferenced -> evicted
        assert_eq!(c.state(1), Some(false));
        assert_eq!(c.state(2), None);
    }
}
