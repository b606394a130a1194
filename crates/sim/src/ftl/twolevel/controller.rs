//! The FMMU map-cache flow (fmmu.txt sections 4.2-4.5, Fig. 8) over the structures of this
//! module, independent of how the FTL times or stores anything: requests (`R`, the caller's
//! id) go to the CMT; a CMT miss allocates a block, logs the request in it and asks the CTP; a
//! CTP miss allocates a translation-page block and asks the caller to load it
//! ([`Action::Load`]); the load's completion ([`TwoLevel::load_done`]) fills the CTP block, then
//! every CMT block waiting on it, and hands back every request logged in them, in order, for the
//! caller to run again (they now hit). Updates mark CMT blocks dirty and register them in the
//! DTL. [`TwoLevel::flush_step`] flushes one DTL victim into the CTP when the CMT's non-dirty
//! blocks are at the low watermark (until the high one), and writes the oldest dirty CTP block
//! back ([`Action::Write`]) under the CTP's own watermarks; the caller alternates it with
//! requests. A request whose CMT set (or whose translation page's CTP set) has no evictable
//! way is refused ([`Access::Blocked`]) and retried by the caller after a flush
//! ([`TwoLevel::unblock`] does one at once unless every way of the set is loading).
//!
//! Where the paper is silent: a CMT flush whose translation page is loading waits on that load
//! (CTP MSHR #1); a CMT flush whose CTP set has no evictable way is written through as a
//! read-modify-write of the translation page ([`Action::ReadModifyWrite`]) rather than waiting,
//! so a CTP set full of dirty pages cannot stall the CMT.

use super::{Dtl, FlushOrder, Mshrs, SetAssoc, TwoLevelGeometry, Watermarks};

/// How a flush finds the dirty CMT blocks of a translation page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushSearch {
    /// FMMU: the DTL's next links; victim by the DTL's cost-benefit.
    Dtl,
    /// CDFTL (fmmu.txt 5.2): no such structure. The victim is the page of the first dirty
    /// block a rotating cursor meets, and every CMT block is tested for its dirty blocks
    /// (`TwoLevelStats::blocks_scanned` counts them, the input of the flush cost).
    Scan,
}

/// What [`TwoLevel::access`] did with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Served from the CMT (`ctp`: after a CMT miss that hit in the CTP).
    Hit { ctp: bool },
    /// Logged in a loading CMT block; comes back from [`TwoLevel::load_done`].
    Waiting,
    /// No evictable way: retry after a flush.
    Blocked,
}

/// Flash work the caller must do for the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Read translation page `tvpn`, then call [`TwoLevel::load_done`].
    Load(u32),
    /// Program translation page `tvpn` (its entries are clean in the cache from now).
    Write(u32),
    /// Read and program translation page `tvpn` (a flush that found no CTP way).
    ReadModifyWrite(u32),
}

#[derive(Debug, Clone, Copy)]
enum CtpWaiter {
    /// A CMT block waiting to be filled.
    Load(u32),
    /// A CMT flush of this page's entries.
    Flush,
}

/// Counters of the cache's work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TwoLevelStats {
    pub cmt_lookups: u64,
    pub cmt_hits: u64,
    pub ctp_lookups: u64,
    pub ctp_hits: u64,
    /// Requests logged on a CMT block already loading, and CMT loads logged on a CTP block
    /// already loading (no new flash read for either).
    pub misses_coalesced: u64,
    pub blocked: u64,
    /// Refusals (retries included) because the CMT set had no evictable way, and because
    /// the CTP set of the page to load had none (both may hold for one refusal).
    pub blocked_on_cmt: u64,
    pub blocked_on_ctp: u64,
    /// CMT flushes (one TVPN each) and the CMT blocks they cleaned.
    pub flushes: u64,
    pub blocks_flushed: u64,
    /// CMT blocks tested by [`FlushSearch::Scan`] flushes.
    pub blocks_scanned: u64,
}

/// The two-level cache (see the module doc).
pub struct TwoLevel<R: Copy> {
    geometry: TwoLevelGeometry,
    cmt: SetAssoc,
    ctp: SetAssoc,
    cmt_waiting: Mshrs<R>,
    ctp_waiting: Mshrs<CtpWaiter>,
    dtl: Dtl,
    ctp_order: FlushOrder,
    cmt_marks: Watermarks,
    ctp_marks: Watermarks,
    flush_window: u32,
    search: FlushSearch,
    scan_cursor: u32,
    actions: Vec<Action>,
    /// CMT blocks cleaned by flushes since the caller last took them.
    flushed: Vec<u32>,
    slots: Vec<u32>,
    waiters: Vec<CtpWaiter>,
    pub stats: TwoLevelStats,
}

impl<R: Copy> TwoLevel<R> {
    /// A cache of `geometry` over `tvpns` translation pages; watermarks as (low, high)
    /// non-dirty blocks of each cache; `flush_window` DTL entries examined per victim.
    pub fn new(
        geometry: TwoLevelGeometry,
        tvpns: u32,
        cmt_marks: Watermarks,
        ctp_marks: Watermarks,
        flush_window: u32,
    ) -> Self {
        let (cmt_slots, ctp_slots) = (geometry.cmt_slots(), geometry.ctp_slots());
        TwoLevel {
            geometry,
            cmt: SetAssoc::new(geometry.cmt_sets, geometry.cmt_ways),
            ctp: SetAssoc::new(geometry.ctp_sets, geometry.ctp_ways),
            cmt_waiting: Mshrs::new(cmt_slots),
            ctp_waiting: Mshrs::new(ctp_slots),
            dtl: Dtl::new(tvpns, cmt_slots),
            ctp_order: FlushOrder::new(ctp_slots),
            cmt_marks,
            ctp_marks,
            flush_window,
            search: FlushSearch::Dtl,
            scan_cursor: 0,
            actions: Vec::new(),
            flushed: Vec::new(),
            slots: Vec::new(),
            waiters: Vec::new(),
            stats: TwoLevelStats::default(),
        }
    }

    /// Finds flush victims by `search` (default [`FlushSearch::Dtl`]); set before use.
    pub fn with_search(mut self, search: FlushSearch) -> Self {
        self.search = search;
        self
    }

    pub fn geometry(&self) -> &TwoLevelGeometry {
        &self.geometry
    }
    pub fn cmt(&self) -> &SetAssoc {
        &self.cmt
    }
    pub fn ctp(&self) -> &SetAssoc {
        &self.ctp
    }

    /// Flash work asked for since the last call, in order.
    pub fn take_actions(&mut self, out: &mut Vec<Action>) {
        out.append(&mut self.actions);
    }

    /// The CMT blocks (block numbers) that flushes moved into the CTP (or wrote through)
    /// since the last call: their entries are carried by the next write of their page.
    pub fn take_flushed_blocks(&mut self, out: &mut Vec<u32>) {
        out.append(&mut self.flushed);
    }

    /// A Lookup (`update = false`) or Update/CondUpdate (`update = true`) of DLPN `lpn` for
    /// request `request`.
    pub fn access(&mut self, lpn: u32, request: R, update: bool) -> Access {
        let block = self.geometry.cmt_block(lpn);
        if let Some(slot) = self.cmt.find(block) {
            self.stats.cmt_lookups += 1;
            if self.cmt.is_transient(slot) {
                self.cmt_waiting.log(slot, request);
                self.stats.misses_coalesced += 1;
                return Access::Waiting;
            }
            self.stats.cmt_hits += 1;
            if update {
                self.dirty(slot, block);
            }
            return Access::Hit { ctp: false };
        }
        let tvpn = self.geometry.tvpn_of_block(block);
        let ctp_slot = self.ctp.find(tvpn);
        let ctp_busy = ctp_slot.is_none() && self.ctp.would_block(tvpn);
        let cmt_busy = self.cmt.would_block(block);
        if ctp_busy || cmt_busy {
            self.stats.blocked += 1;
            self.stats.blocked_on_cmt += u64::from(cmt_busy);
            self.stats.blocked_on_ctp += u64::from(ctp_busy);
            return Access::Blocked;
        }
        self.stats.cmt_lookups += 1;
        self.stats.ctp_lookups += 1;
        let slot = self.cmt.allocate(block).expect("checked").slot;
        match ctp_slot {
            Some(c) if !self.ctp.is_transient(c) => {
                self.stats.ctp_hits += 1;
                self.cmt.fill(slot);
                if update {
                    self.dirty(slot, block);
                }
                Access::Hit { ctp: true }
            }
            Some(c) => {
                self.stats.misses_coalesced += 1;
                self.ctp_waiting.log(c, CtpWaiter::Load(slot));
                self.cmt_waiting.log(slot, request);
                Access::Waiting
            }
            None => {
                let c = self.ctp.allocate(tvpn).expect("checked").slot;
                self.actions.push(Action::Load(tvpn));
                self.ctp_waiting.log(c, CtpWaiter::Load(slot));
                self.cmt_waiting.log(slot, request);
                Access::Waiting
            }
        }
    }

    fn dirty(&mut self, slot: u32, block: u32) {
        let tvpn = self.geometry.tvpn_of_block(block);
        let newly = self.cmt.mark_dirty(slot);
        match (self.search, newly) {
            (FlushSearch::Scan, _) => {}
            (FlushSearch::Dtl, true) => self.dtl.block_dirtied(tvpn, slot),
            (FlushSearch::Dtl, false) => self.dtl.block_updated(tvpn),
        }
    }

    /// Translation page `tvpn` was read: fills its CTP block and the CMT blocks waiting on it,
    /// and appends their requests, in the order they were logged, to `released`.
    pub fn load_done(&mut self, tvpn: u32, released: &mut Vec<R>) {
        let Some(c) = self.ctp.peek(tvpn) else {
            return;
        };
        self.ctp.fill(c);
        let mut waiters = std::mem::take(&mut self.waiters);
        self.ctp_waiting.release(c, &mut waiters);
        for &w in &waiters {
            match w {
                CtpWaiter::Load(slot) => {
                    self.cmt.fill(slot);
                    self.cmt_waiting.release(slot, released);
                }
                CtpWaiter::Flush => {
                    self.ctp.mark_dirty(c);
                    self.ctp_order.push(c);
                }
            }
        }
        waiters.clear();
        self.waiters = waiters;
    }

    /// The entry of DLPN `lpn` changed: marks its loaded CMT block dirty; false if the block
    /// is not loaded.
    pub fn updated(&mut self, lpn: u32) -> bool {
        let block = self.geometry.cmt_block(lpn);
        match self.cmt.peek(block) {
            Some(slot) if !self.cmt.is_transient(slot) => {
                self.dirty(slot, block);
                true
            }
            _ => false,
        }
    }

    /// Whether the cache holds `lpn`'s entry (its CMT block loaded), and whether the entry
    /// may differ from its translation page in flash (its CMT block or its CTP page dirty;
    /// a dirty CTP page counts even when the CMT block is gone).
    pub fn state(&self, lpn: u32) -> Option<bool> {
        let tvpn = self.geometry.tvpn(lpn);
        let ctp_dirty = self.ctp.peek(tvpn).is_some_and(|c| self.ctp.is_dirty(c));
        match self.cmt.peek(self.geometry.cmt_block(lpn)) {
            Some(s) if !self.cmt.is_transient(s) => Some(self.cmt.is_dirty(s) || ctp_dirty),
            _ => ctp_dirty.then_some(true),
        }
    }

    /// Cleans every dirty CMT block of `tvpn` and its CTP page, whose entries the caller
    /// writes to flash anyway (a GC update of the same page); returns the CMT blocks examined
    /// (followed by the DTL, or all of them by the CDFTL scan).
    pub fn take_page(&mut self, tvpn: u32) -> u32 {
        self.slots.clear();
        let examined = match self.search {
            FlushSearch::Dtl => self.dtl.take(tvpn, &mut self.slots),
            FlushSearch::Scan => {
                super::scan_dirty_blocks(&self.cmt, &self.geometry, tvpn, &mut self.slots)
            }
        };
        for &s in &self.slots {
            self.cmt.mark_clean(s);
        }
        if let Some(c) = self.ctp.peek(tvpn).filter(|&c| !self.ctp.is_transient(c)) {
            self.ctp.mark_clean(c);
        }
        examined
    }

    /// A request on `lpn` was [`Access::Blocked`]: flushes the page of a dirty way of its CMT
    /// set, or writes back a dirty page of its CTP set, making room now (true: retry the
    /// request at once); false when the set's ways are loading (the load's completion frees
    /// them).
    pub fn unblock(&mut self, lpn: u32) -> bool {
        let block = self.geometry.cmt_block(lpn);
        if self.cmt.would_block(block) {
            let ways = self.cmt.ways();
            let first = self.cmt.set_of(block) * ways;
            let Some(slot) = (first..first + ways).find(|&s| self.cmt.is_dirty(s)) else {
                return false;
            };
            let victim = self.cmt.key(slot).expect("a dirty slot is valid");
            self.flush_cmt(self.geometry.tvpn_of_block(victim));
            return true;
        }
        let tvpn = self.geometry.tvpn(lpn);
        if self.ctp.peek(tvpn).is_some() || !self.ctp.would_block(tvpn) {
            return false;
        }
        let ways = self.ctp.ways();
        let first = self.ctp.set_of(tvpn) * ways;
        let Some(c) = (first..first + ways).find(|&s| self.ctp.is_dirty(s)) else {
            return false;
        };
        self.ctp.mark_clean(c);
        let page = self.ctp.key(c).expect("a dirty slot is valid");
        self.actions.push(Action::Write(page));
        true
    }

    /// One step of flushing (module doc); returns whether it did anything.
    pub fn flush_step(&mut self) -> bool {
        let mut did = false;
        if self.cmt_marks.should_flush(self.cmt.evictable()) {
            if let Some(tvpn) = self.flush_victim() {
                self.flush_cmt(tvpn);
                did = true;
            }
        }
        if self.ctp_marks.should_flush(self.ctp.evictable()) {
            if let Some(c) = self.oldest_dirty_ctp() {
                self.ctp.mark_clean(c);
                let tvpn = self.ctp.key(c).expect("a queued CTP block is valid");
                self.actions.push(Action::Write(tvpn));
                did = true;
            }
        }
        did
    }

    /// Idle-time cleaning, whatever the watermarks: flushes the page of the dirty CMT block the
    /// flush search picks or, with the CMT clean, writes a dirty CTP page (not loading);
    /// false when both levels are clean.
    pub fn clean_step(&mut self) -> bool {
        if let Some(tvpn) = self.flush_victim() {
            self.flush_cmt(tvpn);
            return true;
        }
        let Some(c) =
            (0..self.ctp.slots()).find(|&c| self.ctp.is_dirty(c) && !self.ctp.is_transient(c))
        else {
            return false;
        };
        self.ctp.mark_clean(c);
        let tvpn = self.ctp.key(c).expect("a dirty slot is valid");
        self.actions.push(Action::Write(tvpn));
        true
    }

    /// The oldest CTP block of the flush order that is still dirty. Entries made clean
    /// meanwhile (written by [`TwoLevel::take_page`] or [`TwoLevel::unblock`]) are dropped:
    /// writing them again would be a redundant translation write.
    fn oldest_dirty_ctp(&mut self) -> Option<u32> {
        std::iter::from_fn(|| self.ctp_order.pop()).find(|&c| self.ctp.is_dirty(c))
    }

    fn flush_victim(&mut self) -> Option<u32> {
        match self.search {
            FlushSearch::Dtl => self.dtl.choose_victim(self.flush_window),
            FlushSearch::Scan => {
                let n = self.cmt.slots();
                let slot = (0..n)
                    .map(|i| (self.scan_cursor + i) % n)
                    .find(|&s| self.cmt.is_dirty(s))?;
                self.scan_cursor = (slot + 1) % n;
                let block = self.cmt.key(slot).expect("a dirty slot is valid");
                Some(self.geometry.tvpn_of_block(block))
            }
        }
    }

    /// Writes the whole state as text (a state digest's input): both caches, the MSHRs, the
    /// DTL (by meaning, [`Dtl::write_state`]), the CTP flush order, watermarks, the scan
    /// cursor, pending actions and flushed blocks, and the counters.
    pub fn write_state(&self, out: &mut dyn std::fmt::Write) -> std::fmt::Result
    where
        R: std::fmt::Debug,
    {
        writeln!(
            out,
            "two-level {:?} cmt {:?} ctp {:?} waiting {:?} {:?}",
            self.geometry, self.cmt, self.ctp, self.cmt_waiting, self.ctp_waiting
        )?;
        self.dtl.write_state(out)?;
        writeln!(
            out,
            "order {:?} marks {:?} {:?} window {} search {:?} cursor {} actions {:?} flushed {:?} stats {:?}",
            self.ctp_order,
            self.cmt_marks,
            self.ctp_marks,
            self.flush_window,
            self.search,
            self.scan_cursor,
            self.actions,
            self.flushed,
            self.stats
        )
    }

    fn flush_cmt(&mut self, tvpn: u32) {
        self.slots.clear();
        let blocks = match self.search {
            FlushSearch::Dtl => self.dtl.take(tvpn, &mut self.slots),
            FlushSearch::Scan => {
                let scanned =
                    super::scan_dirty_blocks(&self.cmt, &self.geometry, tvpn, &mut self.slots);
                self.stats.blocks_scanned += u64::from(scanned);
                self.slots.len() as u32
            }
        };
        for &s in &self.slots {
            self.cmt.mark_clean(s);
            self.flushed
                .push(self.cmt.key(s).expect("a dirty slot is valid"));
        }
        self.stats.flushes += 1;
        self.stats.blocks_flushed += u64::from(blocks);
        match self.ctp.find(tvpn) {
            Some(c) if !self.ctp.is_transient(c) => {
                self.ctp.mark_dirty(c);
                self.ctp_order.push(c);
            }
            Some(c) => self.ctp_waiting.log(c, CtpWaiter::Flush),
            None => match self.ctp.allocate(tvpn) {
                Ok(a) => {
                    self.actions.push(Action::Load(tvpn));
                    self.ctp_waiting.log(a.slot, CtpWaiter::Flush);
                }
                Err(_) => self.actions.push(Action::ReadModifyWrite(tvpn)),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 16 entries per translation page, 4 per CMT block; `cmt_ways` x 1 set of CMT, 8 CTP
    /// pages.
    fn cache(cmt_ways: u32, cmt_marks: (u32, u32)) -> TwoLevel<u32> {
        let g = TwoLevelGeometry::new(64, 16, u64::from(16 * cmt_ways), cmt_ways, 512, 8).unwrap();
        let (low, high) = cmt_marks;
        TwoLevel::new(g, 64, Watermarks::new(low, high), Watermarks::new(0, 1), 0)
    }

    fn actions(c: &mut TwoLevel<u32>) -> Vec<Action> {
        let mut out = Vec::new();
        c.take_actions(&mut out);
        out
    }

    /// Loads `lpn`'s page and makes its CMT block dirty.
    fn dirty(c: &mut TwoLevel<u32>, lpn: u32) {
        if c.access(lpn, 0, true) == Access::Waiting {
            let mut released = Vec::new();
            c.load_done(c.geometry().tvpn(lpn), &mut released);
            assert_eq!(c.access(lpn, 0, true), Access::Hit { ctp: false });
        }
    }

    #[test]
    fn many_misses_on_one_block_and_one_page_are_served_by_one_load() {
        let mut c = cache(2, (0, 1));
        for r in 0..100 {
            assert_eq!(c.access(r % 4, r, r % 2 == 0), Access::Waiting);
        }
        // Another CMT block of the same translation page waits on the same CTP load.
        assert_eq!(c.access(4, 100, false), Access::Waiting);
        assert_eq!(actions(&mut c), vec![Action::Load(0)], "one flash read");
        assert_eq!(c.stats.misses_coalesced, 100);
        let mut released = Vec::new();
        c.load_done(0, &mut released);
        assert_eq!(released, (0..=100).collect::<Vec<_>>(), "all, in order");
        assert_eq!(c.access(3, 101, false), Access::Hit { ctp: false });
        assert_eq!(c.access(4, 102, false), Access::Hit { ctp: false });
        assert!(actions(&mut c).is_empty());
    }

    #[test]
    fn a_request_blocks_only_on_a_whole_dirty_set_and_a_flush_releases_it() {
        let mut c = cache(2, (0, 2));
        dirty(&mut c, 0);
        assert_eq!(
            c.access(20, 1, false),
            Access::Waiting,
            "one clean way left"
        );
        let mut released = Vec::new();
        c.load_done(1, &mut released);
        // Block 5 (lpn 20) is clean: a miss evicts it instead of blocking.
        assert_eq!(c.access(4, 2, true), Access::Hit { ctp: true });
        assert_eq!(c.stats.blocked, 0);
        c.access(4, 2, true);
        assert_eq!(c.cmt().dirty(), 2);
        assert_eq!(c.access(8, 3, false), Access::Blocked);
        assert_eq!(c.stats.blocked, 1);
        assert!(c.flush_step(), "no clean block: at the low watermark");
        assert_eq!((c.stats.flushes, c.stats.blocks_flushed), (1, 2));
        assert_eq!(c.access(8, 3, false), Access::Hit { ctp: true });
    }

    #[test]
    fn unblock_flushes_the_blocked_set_and_a_dirty_ctp_page_keeps_its_entries_dirty() {
        let mut c = cache(1, (0, 1));
        dirty(&mut c, 0);
        assert_eq!(
            c.access(16, 1, false),
            Access::Blocked,
            "the one way is dirty"
        );
        assert!(c.unblock(16));
        assert_eq!(c.stats.flushes, 1);
        assert_eq!(c.state(0), Some(true), "flushed to the CTP, not to flash");
        assert_eq!(c.access(16, 1, false), Access::Waiting);
        assert_eq!(
            c.state(0),
            Some(true),
            "CMT block evicted, CTP page still dirty"
        );
        let mut released = Vec::new();
        c.load_done(1, &mut released);
        assert_eq!(released, vec![1]);
        assert!(c.updated(16));
        assert_eq!(
            c.take_page(1),
            1,
            "the DTL follows page 1's one dirty block"
        );
        c.take_page(0);
        assert_eq!((c.state(0), c.state(16)), (None, Some(false)));
    }

    #[test]
    fn flushing_runs_from_the_low_to_the_high_watermark() {
        let mut c = cache(8, (2, 5));
        for k in 0..5 {
            dirty(&mut c, 16 * k);
        }
        assert_eq!(c.cmt().non_dirty(), 3);
        assert!(!c.flush_step(), "above the low watermark");
        dirty(&mut c, 16 * 5);
        assert!(c.flush_step());
        assert!(c.flush_step(), "between the watermarks");
        assert!(c.flush_step());
        assert_eq!(c.cmt().non_dirty(), 5);
        assert!(!c.flush_step(), "stopped at the high watermark");
        assert_eq!(c.stats.flushes, 3);
    }

    #[test]
    fn cdftl_flushes_find_a_pages_dirty_blocks_by_scanning_every_cmt_block() {
        let mut c = cache(8, (4, 8)).with_search(FlushSearch::Scan);
        for lpn in [16, 0, 20, 36] {
            dirty(&mut c, lpn); // blocks 4 and 5 of page 1, block 0 of page 0, 9 of page 2
        }
        assert!(c.flush_step());
        let (first, after_first) = (c.stats.blocks_flushed, c.cmt().dirty());
        assert_eq!(c.stats.blocks_scanned, 8, "every CMT block tested");
        assert_eq!(
            (first, after_first),
            (2, 2),
            "page 1's two blocks in one flush"
        );
        while c.flush_step() {}
        assert_eq!((c.stats.flushes, c.stats.blocks_flushed), (3, 4));
        assert_eq!(c.stats.blocks_scanned, 24);
        assert_eq!(c.cmt().dirty(), 0);
    }

    #[test]
    fn the_ctp_writes_pages_back_in_the_order_the_cmt_flushed_them() {
        let g = TwoLevelGeometry::new(64, 16, 16, 1, 512, 8).unwrap();
        let mut c: TwoLevel<u32> =
            TwoLevel::new(g, 64, Watermarks::new(0, 1), Watermarks::new(5, 8), 0);
        for tvpn in [3, 1, 2] {
            dirty(&mut c, 16 * tvpn);
            assert!(c.flush_step());
        }
        while c.flush_step() {}
        let writes: Vec<Action> = actions(&mut c)
            .into_iter()
            .filter(|a| matches!(a, Action::Write(_)))
            .collect();
        assert_eq!(
            writes,
            vec![Action::Write(3), Action::Write(1), Action::Write(2)]
        );
        assert_eq!(c.ctp().dirty(), 0);
    }

    #[test]
    fn a_page_cleaned_by_a_gc_write_back_is_not_written_again_by_the_ctp() {
        let g = TwoLevelGeometry::new(64, 16, 16, 1, 512, 8).unwrap();
        let mut c: TwoLevel<u32> =
            TwoLevel::new(g, 64, Watermarks::new(0, 1), Watermarks::new(5, 8), 0);
        for tvpn in [3, 1] {
            dirty(&mut c, 16 * tvpn);
            assert!(c.flush_step());
        }
        assert_eq!(
            c.ctp().dirty(),
            2,
            "above the CTP's low watermark: nothing written"
        );
        // GC rewrites page 3 with its dirty entries: it is clean but still in the flush order.
        c.take_page(3);
        actions(&mut c);
        for tvpn in [2, 4] {
            dirty(&mut c, 16 * tvpn);
            c.flush_step();
        }
        while c.flush_step() {}
        let writes: Vec<Action> = actions(&mut c)
            .into_iter()
            .filter(|a| matches!(a, Action::Write(_)))
            .collect();
        assert_eq!(
            writes,
            vec![Action::Write(1), Action::Write(2), Action::Write(4)],
            "no second write of page 3"
        );
    }

    #[test]
    fn flushes_report_the_cmt_blocks_they_cleaned() {
        let mut c = cache(8, (7, 8));
        dirty(&mut c, 16);
        dirty(&mut c, 20);
        assert!(c.flush_step());
        let mut blocks = Vec::new();
        c.take_flushed_blocks(&mut blocks);
        blocks.sort_unstable();
        assert_eq!(blocks, vec![4, 5], "page 1's two dirty blocks");
        c.take_flushed_blocks(&mut blocks);
        assert_eq!(blocks.len(), 2, "taken once");
    }
}
