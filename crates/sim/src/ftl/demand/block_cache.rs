//! DFTL's cached mapping table as fmmu.txt section 5.2 evaluates it: one level, no CTP, a
//! set-associative CMT of cache blocks ("in case of 4-way set associative cache"), each block
//! holding the entries of consecutive logical units (64 bytes: 16 entries, the CMT block of
//! Fig. 6), second-chance replacement ("all map cache schemes use the second chance
//! algorithm").
//!
//! - A miss reads the entry's translation page and installs the block's 16 entries; without a
//!   CTP, the next miss on another block of the same page reads that page again (fmmu.txt
//!   5.3: DFTL "experiences reading the same translation page multiple times since it does not
//!   have a CTP"), even while an earlier read of it is in flight: DFTL has no MSHRs (fmmu.txt
//!   4.2 gives in-cache MSHRs to FMMU), so only the misses of one block (one request's
//!   Lookup of several LPNs) share a read.
//! - Evicting a dirty block writes back every dirty block of its translation page together
//!   (the batch update of 5.2), found by testing every CMT block: the flush cost is charged
//!   for all of them (`blocks_scanned` = the CMT's blocks).
//! - Only the entries changed since their block was loaded or last written back go to flash
//!   (per-entry bits), so `entries_per_flush` counts what the batch carries.
//! - GC updates a cached entry in its block (dirty) and writes uncached ones per translation
//!   page without scanning the table (as Gupta et al.'s DFTL, 3.4), leaving the page's dirty
//!   blocks dirty.
//!
//! The entry-level, fully associative table of Gupta et al. stays as `dftl-entry`
//! ([`super::cache::DftlCache`]).

use std::collections::HashMap;

use super::cache::{Lookup, MapCachePolicy, WriteBack};

const EMPTY: u32 = u32::MAX;

/// Entries of one DFTL CMT block (64 bytes of 4-byte entries, fmmu.txt Fig. 6).
pub const DFTL_BLOCK_ENTRIES: u32 = 16;

/// The set-associative CMT of DFTL (module doc).
pub struct BlockCache {
    sets: u32,
    ways: u32,
    /// Per slot (set * ways + way): the CMT block number cached there, `EMPTY` if none.
    tags: Vec<u32>,
    referenced: Vec<bool>,
    dirty: Vec<bool>,
    /// Per set: the second-chance hand.
    hands: Vec<u32>,
    /// Per entry: changed since its block was loaded or last written back.
    changed: Vec<bool>,
    /// Dirty CMT blocks of each translation page.
    dirty_blocks: HashMap<u32, Vec<u32>>,
    blocks_per_tpage: u32,
    logical_units: u32,
    cached: u32,
    lookups: u64,
    hits: u64,
}

impl BlockCache {
    /// A CMT of `sets` x `ways` blocks over `logical_units` entries, `entries_per_tpage` per
    /// translation page (a multiple of [`DFTL_BLOCK_ENTRIES`]).
    pub fn new(sets: u32, ways: u32, entries_per_tpage: u32, logical_units: u32) -> Self {
        let slots = (sets * ways) as usize;
        BlockCache {
            sets,
            ways,
            tags: vec![EMPTY; slots],
            referenced: vec![false; slots],
            dirty: vec![false; slots],
            hands: vec![0; sets as usize],
            changed: vec![false; logical_units as usize],
            dirty_blocks: HashMap::new(),
            blocks_per_tpage: (entries_per_tpage / DFTL_BLOCK_ENTRIES).max(1),
            logical_units,
            cached: 0,
            lookups: 0,
            hits: 0,
        }
    }

    fn slots(&self) -> u64 {
        u64::from(self.sets) * u64::from(self.ways)
    }

    fn slot_of(&self, block: u32) -> Option<usize> {
        let first = ((block % self.sets) * self.ways) as usize;
        (first..first + self.ways as usize).find(|&s| self.tags[s] == block)
    }

    /// An empty way of the set, else second chance over its ways.
    fn victim(&mut self, set: u32) -> usize {
        let first = (set * self.ways) as usize;
        if let Some(s) = (first..first + self.ways as usize).find(|&s| self.tags[s] == EMPTY) {
            return s;
        }
        loop {
            let hand = &mut self.hands[set as usize];
            let s = first + *hand as usize;
            *hand = (*hand + 1) % self.ways;
            if !std::mem::replace(&mut self.referenced[s], false) {
                return s;
            }
        }
    }

    fn entries(&self, block: u32) -> std::ops::Range<u32> {
        let first = block * DFTL_BLOCK_ENTRIES;
        first..(first + DFTL_BLOCK_ENTRIES).min(self.logical_units)
    }
}

impl MapCachePolicy for BlockCache {
    fn lookup(&mut self, lpn: u32) -> Lookup {
        self.lookups += 1;
        match self.slot_of(lpn / DFTL_BLOCK_ENTRIES) {
            Some(s) => {
                self.hits += 1;
                self.referenced[s] = true;
                Lookup::Hit
            }
            None => Lookup::Miss,
        }
    }

    fn install(&mut self, lpn: u32, out: &mut Vec<WriteBack>) {
        let block = lpn / DFTL_BLOCK_ENTRIES;
        if self.slot_of(block).is_some() {
            return;
        }
        let s = self.victim(block % self.sets);
        match self.tags[s] {
            EMPTY => self.cached += 1,
            old if self.dirty[s] => out.push(self.take_dirty(old / self.blocks_per_tpage)),
            _ => {}
        }
        self.tags[s] = block;
        self.dirty[s] = false;
        // Referenced only once hit again: a block read once leaves first.
        self.referenced[s] = false;
    }

    fn update(&mut self, lpn: u32) {
        let block = lpn / DFTL_BLOCK_ENTRIES;
        if let Some(s) = self.slot_of(block) {
            self.changed[lpn as usize] = true;
            if !std::mem::replace(&mut self.dirty[s], true) {
                let tvpn = block / self.blocks_per_tpage;
                self.dirty_blocks.entry(tvpn).or_default().push(block);
            }
        }
    }

    fn state(&self, lpn: u32) -> Option<bool> {
        self.slot_of(lpn / DFTL_BLOCK_ENTRIES)
            .map(|s| self.dirty[s])
    }

    fn take_dirty(&mut self, tvpn: u32) -> WriteBack {
        let blocks = self.dirty_blocks.remove(&tvpn).unwrap_or_default();
        let mut lpns = Vec::new();
        for block in blocks {
            if let Some(s) = self.slot_of(block) {
                self.dirty[s] = false;
            }
            for l in self.entries(block) {
                if std::mem::take(&mut self.changed[l as usize]) {
                    lpns.push(l);
                }
            }
        }
        WriteBack {
            tvpn,
            lpns,
            blocks_scanned: self.slots(),
            read_old: true,
        }
    }

    fn uncached_write_back(&mut self, tvpn: u32) -> WriteBack {
        WriteBack::without_cached_entries(tvpn)
    }

    fn occupancy(&self) -> (usize, usize) {
        let per = DFTL_BLOCK_ENTRIES as usize;
        (self.cached as usize * per, self.slots() as usize * per)
    }

    /// The dirty translation page with the lowest number (deterministic), as an eviction's
    /// batch update would write it.
    fn clean_step(&mut self, out: &mut Vec<WriteBack>) -> (bool, Option<u64>) {
        let Some(&tvpn) = self.dirty_blocks.keys().min() else {
            return (false, None);
        };
        out.push(self.take_dirty(tvpn));
        (true, None)
    }

    fn map_block(&self, lpn: u32) -> u32 {
        lpn / DFTL_BLOCK_ENTRIES
    }

    /// No MSHRs (fmmu.txt gives in-cache MSHRs to FMMU, 4.2) and no CTP: a miss merges only
    /// with misses of its own block (one request's Lookup of several LPNs), so another
    /// block's miss reads the translation page again.
    fn miss_merge_entries(&self) -> Option<u32> {
        Some(DFTL_BLOCK_ENTRIES)
    }

    fn one_level_shape(&self) -> (u32, u32, u32, u64) {
        (
            self.sets,
            self.ways,
            DFTL_BLOCK_ENTRIES,
            u64::from(self.cached),
        )
    }

    fn write_state(&self, out: &mut dyn std::fmt::Write) -> std::fmt::Result {
        let mut dirty: Vec<_> = self.dirty_blocks.iter().collect();
        dirty.sort_unstable();
        let changed: Vec<usize> = (0..self.changed.len())
            .filter(|&l| self.changed[l])
            .collect();
        writeln!(
            out,
            "dftl block cache {}x{} tags {:?} referenced {:?} dirty {:?} hands {:?} \
             cached {} changed {:?} dirty blocks {:?} lookups {} hits {}",
            self.sets,
            self.ways,
            self.tags,
            self.referenced,
            self.dirty,
            self.hands,
            self.cached,
            changed,
            dirty,
            self.lookups,
            self.hits
        )
    }

    fn details(&self) -> serde_json::Value {
        serde_json::json!({
            "cmt_sets": self.sets,
            "cmt_ways": self.ways,
            "cmt_block_entries": DFTL_BLOCK_ENTRIES,
            "cmt_blocks_cached": self.cached,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_miss_installs_the_whole_block() {
        // 2 sets x 2 ways; translation pages of 64 entries (4 blocks).
        let mut c = BlockCache::new(2, 2, 64, 256);
        let mut out = Vec::new();
        assert_eq!(c.lookup(5), Lookup::Miss);
        c.install(5, &mut out);
        for lpn in 0..16 {
            assert_eq!(c.lookup(lpn), Lookup::Hit, "lpn {lpn} shares block 0");
        }
        assert_eq!(c.lookup(16), Lookup::Miss);
        assert_eq!(c.map_block(15), 0);
        assert_eq!(c.map_block(16), 1);
    }

    #[test]
    fn evicting_a_dirty_block_writes_back_its_pages_dirty_blocks_scanning_the_cmt() {
        let mut c = BlockCache::new(2, 2, 64, 256);
        let mut out = Vec::new();
        // Blocks 0 and 2 (set 0) and 1 (set 1) are on translation page 0.
        for lpn in [0, 32, 17] {
            c.install(lpn, &mut out);
            c.update(lpn);
        }
        c.update(33);
        // Block 4 (page 1, set 0): the set is full, the hand evicts block 0.
        c.install(64, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].tvpn, 0);
        assert_eq!(out[0].blocks_scanned, 4, "every CMT block tested");
        let mut lpns = out[0].lpns.clone();
        lpns.sort_unstable();
        assert_eq!(lpns, vec![0, 17, 32, 33], "only the changed entries");
        assert_eq!(c.state(32), Some(false));
        assert_eq!(c.state(17), Some(false));
        assert_eq!(c.state(0), None);
    }

    #[test]
    fn a_referenced_block_gets_a_second_chance_within_its_set() {
        let mut c = BlockCache::new(1, 2, 64, 256);
        let mut out = Vec::new();
        c.install(0, &mut out);
        c.install(16, &mut out);
        assert_eq!(c.lookup(3), Lookup::Hit); // block 0 referenced
        c.install(32, &mut out); // hand at 0: referenced -> skip; block 1 evicted
        assert_eq!(c.state(0), Some(false));
        assert_eq!(c.state(16), None);
        assert_eq!(c.state(32), Some(false));
    }
}
