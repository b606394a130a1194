//! The two-level map cache of CDFTL and FMMU (fmmu.txt section 4) as a policy of the
//! demand-paged core: a set-associative CMT of map blocks over a set-associative CTP of
//! translation pages ([`crate::ftl::twolevel::TwoLevel`]).
//!
//! How the controller's work maps onto the core:
//! - `Access::Waiting` is a core miss: the core issues (or joins) the one translation read
//!   of the page, whose completion fills the CTP page and every CMT block waiting on it
//!   (`load_done`); the controller's `Action::Load` of a lookup is that read. A CMT miss that
//!   hits in the CTP is a hit (no flash read).
//! - `Access::Blocked` (a whole set dirty or loading): the core queues the request, asks
//!   [`MapCachePolicy::unblock`] to flush a dirty way of the set, and looks it up again after
//!   the next handler (or load completion).
//! - Flushing runs one `flush_step` between requests (watermarks on the CMT's and CTP's
//!   non-dirty blocks). A CMT flush costs `flush_ns(blocks)` (CDFTL: every CMT block scanned;
//!   FMMU: the dirty blocks followed by the DTL's next links). `Action::Write` programs the
//!   CTP page (no read: the CTP holds it); `Action::ReadModifyWrite`, and a write of a page
//!   the CTP received by a flush-time load, read the old page first. A flush-time load is
//!   completed at once (its read is issued with the later write, as a merge read).
//! - The entries of a written page are taken from the core's map (the functional truth), so
//!   a page write also carries entries still dirty in the CMT; those stay dirty and are
//!   written again by their own flush.
//!
//! Not modelled here: the weighted round-robin arbiter between requests, responses and
//! flushes ([`crate::ftl::twolevel::Wrr`]): the core runs one flush step after every handler.

use super::cache::{Lookup, MapCachePolicy, WriteBack};
use crate::ftl::twolevel::{Access, Action, FlushSearch, TwoLevel, TwoLevelGeometry, Watermarks};

/// The CMT + CTP policy (module doc).
pub struct TwoLevelCache {
    cache: TwoLevel<()>,
    scan: bool,
    logical_units: u32,
    /// Pages the CTP received by a flush-time load: their next write reads them first.
    needs_read: Vec<bool>,
    actions: Vec<Action>,
    released: Vec<()>,
}

impl TwoLevelCache {
    /// A cache of `geometry` over `logical_units` entries; `search` is FMMU's DTL or CDFTL's
    /// scan. Watermarks (non-dirty blocks): flush from 1/8 up to 1/4 of each cache.
    pub fn new(geometry: TwoLevelGeometry, logical_units: u32, search: FlushSearch) -> Self {
        let tvpns = logical_units.div_ceil(geometry.entries_per_tpage);
        let marks = |slots: u32| Watermarks::new(slots / 8, (slots / 4).max(1));
        let cache = TwoLevel::new(
            geometry,
            tvpns,
            marks(geometry.cmt_slots()),
            marks(geometry.ctp_slots()),
            0,
        )
        .with_search(search);
        TwoLevelCache {
            cache,
            scan: search == FlushSearch::Scan,
            logical_units,
            needs_read: vec![false; tvpns as usize],
            actions: Vec::new(),
            released: Vec::new(),
        }
    }

    /// Every entry of translation page `tvpn`.
    fn page(&self, tvpn: u32) -> Vec<u32> {
        let ept = self.cache.geometry().entries_per_tpage;
        let first = tvpn * ept;
        (first..(first + ept).min(self.logical_units)).collect()
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
                lpns: self.page(tvpn),
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

impl MapCachePolicy for TwoLevelCache {
    fn lookup(&mut self, lpn: u32) -> Lookup {
        match self.cache.access(lpn, (), false) {
            Access::Hit { .. } => Lookup::Hit,
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
        self.cache.updated(lpn);
    }

    fn state(&self, lpn: u32) -> Option<bool> {
        self.cache.state(lpn)
    }

    fn take_dirty(&mut self, tvpn: u32) -> WriteBack {
        let cached = self.cache.ctp().peek(tvpn).is_some();
        let examined = self.cache.take_page(tvpn);
        WriteBack {
            tvpn,
            lpns: self.page(tvpn),
            blocks_scanned: u64::from(examined),
            read_old: !cached || std::mem::take(&mut self.needs_read[tvpn as usize]),
        }
    }

    fn occupancy(&self) -> (usize, usize) {
        let g = self.cache.geometry();
        let cmt = self.cache.cmt();
        let loaded = (0..cmt.slots()).filter(|&s| cmt.key(s).is_some()).count();
        let per_block = g.entries_per_cmt_block as usize;
        (loaded * per_block, g.cmt_slots() as usize * per_block)
    }

    fn flush_step(&mut self, out: &mut Vec<WriteBack>) -> Option<u64> {
        let before = self.mark();
        self.cache.flush_step();
        self.drain(out, before)
    }

    fn unblock(&mut self, lpn: u32, out: &mut Vec<WriteBack>) -> Option<u64> {
        let before = self.mark();
        self.cache.unblock(lpn);
        self.drain(out, before)
    }

    fn levels(&self) -> serde_json::Value {
        let s = &self.cache.stats;
        let g = self.cache.geometry();
        serde_json::json!({
            "sets": g.ctp_sets,
            "ways": g.ctp_ways,
            "cmt_sets": g.cmt_sets,
            "cmt_ways": g.cmt_ways,
            "cmt_block_entries": g.entries_per_cmt_block,
            "lookups": s.ctp_lookups,
            "hits": s.ctp_hits,
            "hit_ratio": if s.ctp_lookups == 0 { 0.0 } else { s.ctp_hits as f64 / s.ctp_lookups as f64 },
            "cmt_flushes": s.flushes,
            "cmt_blocks_flushed": s.blocks_flushed,
            "cmt_blocks_scanned": s.blocks_scanned,
        })
    }
}
