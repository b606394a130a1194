//! The two-level map cache of CDFTL and FMMU (fmmu.txt section 4) as a policy of the
//! demand-paged core: a set-associative CMT of map blocks over a set-associative CTP of
//! translation pages ([`crate::ftl::twolevel::TwoLevel`]).
//!
//! How the controller's work maps onto the core:
//! - `Access::Waiting` is a core miss: the core issues (or joins) the one translation read
//!   of the page, whose completion fills the CTP page and every CMT block waiting on it
//!   (`load_done`); the controller's `Action::Load` of a lookup is that read. A CMT miss that
//!   hits in the CTP is a hit (no flash read).
//! - `Access::Blocked` (a whole set dirty or loading): the core asks
//!   [`MapCachePolicy::unblock`] to flush a dirty way of the set (a CMT block into the CTP,
//!   or a CTP page's write-back) and looks the request up again at once. Rule: a blocked
//!   request always has something under way that releases it. The flush makes room at once
//!   and no completion of it follows (the write-back may wait in the translation buffer), so
//!   waiting for the next handler could wait forever on an otherwise idle device. Only a set
//!   whose ways are all loading (no dirty way: `unblock` says no room) queues the request;
//!   those loads are reads in flight, and their completions look it up again.
//! - Flushing runs one `flush_step` between requests (watermarks on the CMT's and CTP's
//!   non-dirty blocks). A CMT flush costs `flush_ns(blocks)` (CDFTL: every CMT block scanned;
//!   FMMU: the dirty blocks followed by the DTL's next links). `Action::Write` programs the
//!   CTP page (no read: the CTP holds it); `Action::ReadModifyWrite`, and a write of a page
//!   the CTP received by a flush-time load, read the old page first. A flush-time load is
//!   completed at once (its read is issued with the later write, as a merge read).
//! - A page write carries the page's dirty entries: those of the CMT blocks flushed into
//!   the page since its last write (per-entry bits: an entry updated in the CMT is `changed`;
//!   its block's flush makes it `pending` in its page; the page's write takes the pending
//!   ones), so `entries_per_flush` counts what the batch update really writes back. Entries
//!   still dirty in the CMT stay dirty and go with their own block's flush.
//!
//! Not modelled here: the weighted round-robin arbiter between requests, responses and
//! flushes ([`crate::ftl::twolevel::Wrr`]): the core runs one flush step after every handler.

use super::cache::{Lookup, MapCachePolicy, WriteBack};
use super::entry_bits::EntryBits;
use crate::ftl::mapcache::MapCacheLevel;
use crate::ftl::twolevel::{
    Access, Action, FlushSearch, SetAssoc, TwoLevel, TwoLevelGeometry, Watermarks,
};

/// The CMT + CTP policy (module doc).
pub struct TwoLevelCache {
    cache: TwoLevel<()>,
    scan: bool,
    logical_units: u32,
    /// Pages the CTP received by a flush-time load: their next write reads them first.
    needs_read: Vec<bool>,
    /// Per entry: updated in its (loaded) CMT block since that block's last flush.
    changed: EntryBits,
    /// Per entry: handed to its translation page (by a CMT flush) and not yet written.
    pending: EntryBits,
    actions: Vec<Action>,
    flushed_blocks: Vec<u32>,
    released: Vec<()>,
}

impl TwoLevelCache {
    /// A cache of `geometry` over `logical_units` entries; `search` is FMMU's DTL or CDFTL's
    /// scan. Watermarks: [`watermarks`] of each cache.
    pub fn new(geometry: TwoLevelGeometry, logical_units: u32, search: FlushSearch) -> Self {
        let tvpns = logical_units.div_ceil(geometry.entries_per_tpage);
        let cache = TwoLevel::new(
            geometry,
            tvpns,
            watermarks(geometry.cmt_slots(), geometry.cmt_ways),
            watermarks(geometry.ctp_slots(), geometry.ctp_ways),
            0,
        )
        .with_search(search);
        TwoLevelCache {
            cache,
            scan: search == FlushSearch::Scan,
            logical_units,
            needs_read: vec![false; tvpns as usize],
            changed: EntryBits::new(logical_units),
            pending: EntryBits::new(logical_units),
            actions: Vec::new(),
            flushed_blocks: Vec::new(),
            released: Vec::new(),
        }
    }

    /// The entries of translation page `tvpn`.
    fn page(&self, tvpn: u32) -> std::ops::Range<u32> {
        let ept = self.cache.geometry().entries_per_tpage;
        let first = tvpn * ept;
        first..(first + ept).min(self.logical_units)
    }

    /// The entries of CMT block `block`.
    fn block(&self, block: u32) -> std::ops::Range<u32> {
        let epb = self.cache.geometry().entries_per_cmt_block;
        let first = block * epb;
        first..(first + epb).min(self.logical_units)
    }

    /// The entries a write of `tvpn` carries (the pending ones, and with `changed_too` those
    /// changed in the CMT), marked written.
    fn take_entries(&mut self, tvpn: u32, changed_too: bool) -> Vec<u32> {
        let mut lpns = Vec::new();
        let page = self.page(tvpn);
        let changed = changed_too.then_some(&mut self.changed);
        self.pending.take_union(changed, page, &mut lpns);
        lpns
    }

    /// Blocks a CMT flush examines so far (the cost counter).
    fn examined(&self) -> u64 {
        let s = &self.cache.stats;
        if self.scan {
            s.blocks_scanned
        } else {
            s.blocks_flushed
        }
    }

    /// Turns the controller's flash work into write-backs; returns the blocks examined by
    /// CMT flushes since `before`, if any flush ran since `flushes`.
    fn drain(&mut self, out: &mut Vec<WriteBack>, before: (u64, u64)) -> Option<u64> {
        // The flushed blocks' changed entries now belong to their page's next write.
        self.cache.take_flushed_blocks(&mut self.flushed_blocks);
        for b in std::mem::take(&mut self.flushed_blocks) {
            let entries = self.block(b);
            self.pending.move_from(&mut self.changed, entries);
        }
        self.cache.take_actions(&mut self.actions);
        for a in std::mem::take(&mut self.actions) {
            let (tvpn, read_old) = match a {
                Action::Load(t) => {
                    self.cache.load_done(t, &mut self.released);
                    self.needs_read[t as usize] = true;
                    continue;
                }
                Action::Write(t) => (t, std::mem::take(&mut self.needs_read[t as usize])),
                Action::ReadModifyWrite(t) => (t, true),
            };
            out.push(WriteBack {
                tvpn,
                lpns: self.take_entries(tvpn, false),
                blocks_scanned: 0,
                read_old,
            });
        }
        self.released.clear();
        (self.cache.stats.flushes > before.0).then(|| self.examined() - before.1)
    }

    fn mark(&self) -> (u64, u64) {
        (self.cache.stats.flushes, self.examined())
    }
}

/// The least busy fraction of a cache at which flushing starts (see [`watermarks`]).
pub const LEAST_BUSY_AT_LOW: f64 = 0.375;

/// Flush watermarks of a cache of `slots` blocks in sets of `ways` ways, on its evictable
/// blocks (neither dirty nor loading: the controller counts both as busy, since a request
/// blocks when no way of its set can be given to it, fmmu.txt 4.4). With a fraction `b` of
/// the blocks busy and spread over the sets (random requests), a set is all busy with
/// probability about `b^ways`. Flushing starts (low watermark) where that is 1/64:
/// `b = (1/64)^(1/ways)` (4 ways: 35% of the blocks busy) and stops at the high watermark,
/// halfway from there to all evictable. With both levels at their low watermark about 1
/// request in 32 finds a set busy, fewer above it. The paper gives no levels; it asks that
/// the non-dirty blocks stay above the threshold so that requests are not blocked (4.5).
/// Flushing never starts before [`LEAST_BUSY_AT_LOW`] of the blocks are busy: with few
/// ways the formula would flush every dirty block at once, writing each update through
/// instead of batching it (4 ways: 37.5% busy at the low watermark, about 1/50 per level).
pub fn watermarks(slots: u32, ways: u32) -> Watermarks {
    let busy_at_low = (1.0f64 / 64.0)
        .powf(1.0 / f64::from(ways.max(1)))
        .max(LEAST_BUSY_AT_LOW);
    let low = ((1.0 - busy_at_low) * f64::from(slots)).floor() as u32;
    let low = low.min(slots.saturating_sub(1));
    let high = (low + (slots - low).div_ceil(2)).max(low + 1);
    Watermarks::new(low, high)
}

/// The shape and occupancy of one cache (lookups filled by the caller).
fn level(cache: &SetAssoc, block_entries: u32) -> MapCacheLevel {
    let loaded = (0..cache.slots())
        .filter(|&s| cache.key(s).is_some() && !cache.is_transient(s))
        .count();
    MapCacheLevel::new(cache.sets(), cache.ways(), block_entries, loaded as u64)
}

impl MapCachePolicy for TwoLevelCache {
    fn map_block(&self, lpn: u32) -> u32 {
        lpn / self.cache.geometry().entries_per_cmt_block
    }

    fn lookup(&mut self, lpn: u32) -> Lookup {
        match self.cache.access(lpn, (), false) {
            Access::Hit { ctp: false } => Lookup::Hit,
            Access::Hit { ctp: true } => Lookup::SecondLevelHit,
            Access::Blocked => Lookup::Blocked,
            Access::Waiting => {
                // The core issues (or joins) the read of the page the controller asked for.
                self.cache.take_actions(&mut self.actions);
                self.actions.clear();
                Lookup::Miss
            }
        }
    }

    fn install(&mut self, lpn: u32, _out: &mut Vec<WriteBack>) {
        let tvpn = self.cache.geometry().tvpn(lpn);
        self.cache.load_done(tvpn, &mut self.released);
        self.released.clear();
    }

    fn update(&mut self, lpn: u32) {
        if self.cache.updated(lpn) {
            self.changed.set(lpn);
        } else {
            // Not in a loaded CMT block but its CTP page is dirty (`state`): the entry goes
            // with that page's write.
            self.pending.set(lpn);
        }
    }

    fn state(&self, lpn: u32) -> Option<bool> {
        self.cache.state(lpn)
    }

    fn take_dirty(&mut self, tvpn: u32) -> WriteBack {
        let cached = self.cache.ctp().peek(tvpn).is_some();
        let examined = self.cache.take_page(tvpn);
        WriteBack {
            tvpn,
            lpns: self.take_entries(tvpn, true),
            blocks_scanned: u64::from(examined),
            read_old: !cached || std::mem::take(&mut self.needs_read[tvpn as usize]),
        }
    }

    /// FMMU folds the page's dirty entries in (the DTL's next links find them); CDFTL could
    /// only find them by scanning every CMT block, so they stay dirty and the old page is
    /// read to merge the changed entries.
    fn uncached_write_back(&mut self, tvpn: u32) -> WriteBack {
        if !self.scan {
            return self.take_dirty(tvpn);
        }
        WriteBack::without_cached_entries(tvpn)
    }

    fn occupancy(&self) -> (usize, usize) {
        let cmt = level(
            self.cache.cmt(),
            self.cache.geometry().entries_per_cmt_block,
        );
        (cmt.occupied_entries as usize, cmt.capacity_entries as usize)
    }

    fn flush_step(&mut self, out: &mut Vec<WriteBack>) -> Option<u64> {
        let before = self.mark();
        self.cache.flush_step();
        self.drain(out, before)
    }

    fn clean_step(&mut self, out: &mut Vec<WriteBack>) -> (bool, Option<u64>) {
        let before = self.mark();
        let did = self.cache.clean_step();
        (did, self.drain(out, before))
    }

    fn unblock(&mut self, lpn: u32, out: &mut Vec<WriteBack>) -> (bool, Option<u64>) {
        let before = self.mark();
        let room = self.cache.unblock(lpn);
        (room, self.drain(out, before))
    }

    fn levels(&self) -> Option<(MapCacheLevel, MapCacheLevel)> {
        let s = &self.cache.stats;
        let g = self.cache.geometry();
        let cmt = level(self.cache.cmt(), g.entries_per_cmt_block);
        let ctp = level(self.cache.ctp(), g.entries_per_tpage);
        Some((
            cmt.with_lookups(s.cmt_lookups, s.cmt_hits),
            ctp.with_lookups(s.ctp_lookups, s.ctp_hits),
        ))
    }

    fn details(&self) -> serde_json::Value {
        let s = &self.cache.stats;
        serde_json::json!({
            "cmt_flushes": s.flushes,
            "cmt_blocks_flushed": s.blocks_flushed,
            "cmt_blocks_scanned": s.blocks_scanned,
            "refusals_on_cmt_set": s.blocked_on_cmt,
            "refusals_on_ctp_set": s.blocked_on_ctp,
        })
    }

    fn reset_counters(&mut self) {
        self.cache.stats = Default::default();
    }

    fn write_state(&self, out: &mut dyn std::fmt::Write) -> std::fmt::Result {
        self.cache.write_state(out)?;
        let set = |bits: &dyn Fn(u32) -> bool| -> Vec<u32> {
            (0..self.logical_units).filter(|&l| bits(l)).collect()
        };
        writeln!(
            out,
            "scan {} needs read {:?} changed {:?} pending {:?} actions {:?} flushed {:?}",
            self.scan,
            set(&|t| self.needs_read.get(t as usize).copied().unwrap_or(false)),
            set(&|l| self.changed.get(l)),
            set(&|l| self.pending.get(l)),
            self.actions,
            self.flushed_blocks
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 16 entries per translation page, 4 per CMT block; CMT 2 sets x 2 ways, CTP 4 sets x 2
    /// ways; 256 entries (16 pages).
    fn small(search: FlushSearch) -> TwoLevelCache {
        let g = TwoLevelGeometry::new(64, 16, 64, 2, 512, 2).unwrap();
        TwoLevelCache::new(g, 256, search)
    }

    /// Loads `lpn`'s page into the cache (miss, then the read completes).
    fn load(c: &mut TwoLevelCache, lpn: u32) {
        let mut out = Vec::new();
        if c.lookup(lpn) == Lookup::Miss {
            c.install(lpn, &mut out);
        }
        assert!(out.is_empty());
        assert!(c.state(lpn).is_some(), "lpn {lpn} cached");
    }

    #[test]
    fn a_page_write_carries_the_dirty_entries_not_the_whole_page() {
        for search in [FlushSearch::Dtl, FlushSearch::Scan] {
            let mut c = small(search);
            let mut written = Vec::new();
            for page in 0..4 {
                let first = 16 * page;
                load(&mut c, first);
                c.update(first);
                c.update(first + 1);
                let mut out = Vec::new();
                for _ in 0..4 {
                    c.flush_step(&mut out);
                }
                written.extend(out);
            }
            assert!(!written.is_empty(), "{search:?}: the CTP wrote pages back");
            for wb in &written {
                let first = 16 * wb.tvpn;
                assert_eq!(wb.lpns, vec![first, first + 1], "{search:?}: {wb:?}");
            }
        }
    }

    #[test]
    fn a_whole_dirty_set_blocks_and_a_flush_lets_the_request_through() {
        // Direct-mapped CMT of 4 blocks: block 0 and block 4 share set 0.
        let g = TwoLevelGeometry::new(64, 16, 64, 1, 512, 2).unwrap();
        let mut c = TwoLevelCache::new(g, 256, FlushSearch::Dtl);
        load(&mut c, 0);
        c.update(0);
        assert_eq!(c.lookup(16), Lookup::Blocked, "set 0's one way is dirty");
        let mut out = Vec::new();
        let (room, examined) = c.unblock(16, &mut out);
        assert!(room && examined.is_some(), "a CMT flush made room");
        assert_ne!(c.lookup(16), Lookup::Blocked, "served after the flush");
    }

    /// Random 4 KiB writes through the paper's cache (fmmu.txt 5.1: 64 KiB CMT of 64-byte
    /// blocks, 1,024 KiB CTP of 4 KiB pages, 4 ways, a 16 GB device: 4 Mi entries), 32 loads
    /// outstanding (completed oldest first), one flush step between requests (4.5). A blocked
    /// request is retried after each step and counted once. With the watermarks of
    /// [`watermarks`] a request finds its CMT or CTP set busy with probability about 1/64
    /// each at worst (the low watermark), less above it: fewer than 1 in 16 requests block.
    /// (The former levels, flushing from 1/8 to 1/4 of the blocks non-dirty, blocked about a
    /// half; 1/16 per level on non-dirty blocks, loading ones not counted, about a quarter.)
    #[test]
    fn random_writes_on_the_papers_cache_rarely_block() {
        let g = TwoLevelGeometry::new(4096, 64, 64 << 10, 4, 1 << 20, 4).unwrap();
        let entries = 4 << 20;
        let mut c = TwoLevel::<u32>::new(
            g,
            entries / g.entries_per_tpage,
            watermarks(g.cmt_slots(), g.cmt_ways),
            watermarks(g.ctp_slots(), g.ctp_ways),
            0,
        );
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut random = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % u64::from(entries)) as u32
        };
        let (mut loads, mut actions, mut released) = (Vec::new(), Vec::new(), Vec::new());
        let mut retry: Option<u32> = None;
        let (mut requests, mut blocked) = (0u32, 0u32);
        while requests < 50_000 {
            let (lpn, again) = match retry.take() {
                Some(lpn) => (lpn, true),
                None => (random(), false),
            };
            match c.access(lpn, lpn, true) {
                Access::Blocked => {
                    blocked += u32::from(!again);
                    retry = Some(lpn);
                    c.unblock(lpn);
                }
                _ => requests += 1,
            }
            // A request's miss waits for its read; a flush's load completes at once (as in
            // the core: its read goes with the page's write).
            c.take_actions(&mut actions);
            loads.extend(actions.drain(..).filter_map(|a| match a {
                Action::Load(t) => Some(t),
                _ => None,
            }));
            c.flush_step();
            c.take_actions(&mut actions);
            for a in actions.drain(..) {
                if let Action::Load(t) = a {
                    c.load_done(t, &mut released);
                }
            }
            // A full queue, or a request waiting on a set whose ways are loading.
            if loads.len() > 32 || (retry.is_some() && !loads.is_empty()) {
                let t = loads.remove(0);
                c.load_done(t, &mut released);
                for r in released.drain(..) {
                    c.updated(r);
                }
            }
        }
        let fraction = f64::from(blocked) / f64::from(requests);
        assert!(
            fraction < 1.0 / 16.0,
            "{blocked} of {requests} blocked: {:?}, CMT {} dirty, CTP {} dirty",
            c.stats,
            c.cmt().dirty(),
            c.ctp().dirty()
        );
    }
}
