//! The report's `map_cache` section: the figures every demand-paged map cache shares (DFTL's
//! one-level cached mapping table, CDFTL's and FMMU's CMT over CTP; fmmu.txt sections 4 and 5).
//!
//! A map-cache FTL counts its work and returns a [`MapCacheReport`] from
//! [`crate::ftl::Ftl::map_cache`]; the engine puts it at the top of the report as `map_cache`
//! (JSON null for FTLs without a map cache, like `merges`). The counters are cleared with the
//! FTL's other counters at the start of the measurement, so preconditioning is not in them;
//! capacity and occupancy describe the cache at the end of the run.

use serde::Serialize;

/// One level of the cache (DFTL's cached mapping table, or CDFTL's and FMMU's CMT or CTP).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct MapCacheLevel {
    /// Mapping entries the level can hold.
    pub capacity_entries: u64,
    /// Mapping entries it holds at the end of the run (loaded blocks x entries per block).
    pub occupied_entries: u64,
    /// Entries of one cache block (1 for DFTL's entry-level table, a translation page for the
    /// CTP).
    pub block_entries: u32,
    /// Sets and ways (DFTL's table: one fully associative set).
    pub sets: u32,
    pub ways: u32,
    /// Lookups that reached this level, and those it served.
    pub lookups: u64,
    pub hits: u64,
    /// `hits / lookups` (0 without lookups).
    pub hit_ratio: f64,
}

impl MapCacheLevel {
    /// A level of `sets x ways` blocks of `block_entries` entries, `occupied_blocks` loaded.
    pub fn new(sets: u32, ways: u32, block_entries: u32, occupied_blocks: u64) -> Self {
        let blocks = u64::from(sets) * u64::from(ways);
        MapCacheLevel {
            capacity_entries: blocks * u64::from(block_entries),
            occupied_entries: occupied_blocks * u64::from(block_entries),
            block_entries,
            sets,
            ways,
            ..MapCacheLevel::default()
        }
    }

    /// With `lookups` of which `hits` were served; sets the ratio.
    pub fn with_lookups(mut self, lookups: u64, hits: u64) -> Self {
        self.lookups = lookups;
        self.hits = hits;
        self.hit_ratio = ratio(hits, lookups);
        self
    }
}

/// Translation-block garbage collection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TranslationGcReport {
    /// Translation blocks collected.
    pub victims: u64,
    /// Valid translation pages they had copied out.
    pub pages_moved: u64,
}

/// The report's `map_cache` section (see docs/report-schema.md, "Map cache fields").
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MapCacheReport {
    /// The first level: every lookup goes to it.
    pub cmt: MapCacheLevel,
    /// The second level (CDFTL, FMMU: cached translation pages); None for one-level caches.
    pub ctp: Option<MapCacheLevel>,
    /// Misses that waited on a load already in flight (no new flash read).
    pub misses_coalesced: u64,
    /// Translation pages read to serve misses.
    pub translation_reads: u64,
    /// Misses served from RAM without a flash read: the translation page was written back
    /// but its flash page was not yet programmed (demand core's translation buffer).
    pub translation_buffer_hits: u64,
    /// Old translation pages read to merge a write-back into.
    pub merge_reads: u64,
    /// Translation pages programmed (write-backs and translation GC copies).
    pub translation_writes: u64,
    /// Write-backs of dirty entries to a translation page (one page each).
    pub flushes: u64,
    /// Dirty entries those write-backs carried.
    pub entries_flushed: u64,
    /// `entries_flushed / flushes` (0 without flushes): what batching gains per page write.
    pub entries_per_flush: f64,
    /// Requests refused at least once because every way of their set was dirty (or loading);
    /// each counted once.
    pub blocked_requests: u64,
    /// GC map updates dropped because a newer host write had remapped the unit (CondUpdate).
    pub cond_updates_lost: u64,
    pub translation_gc: TranslationGcReport,
}

impl MapCacheReport {
    /// Sets `entries_flushed` and the mean per flush.
    pub fn with_flushes(mut self, flushes: u64, entries_flushed: u64) -> Self {
        self.flushes = flushes;
        self.entries_flushed = entries_flushed;
        self.entries_per_flush = ratio(entries_flushed, flushes);
        self
    }
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_are_parts_of_their_wholes_and_zero_when_empty() {
        let level = MapCacheLevel::new(4, 2, 16, 3).with_lookups(40, 30);
        assert_eq!(level.capacity_entries, 4 * 2 * 16);
        assert_eq!(level.occupied_entries, 3 * 16);
        assert_eq!(level.hit_ratio, 0.75);
        assert_eq!(MapCacheLevel::new(1, 1, 1, 0).hit_ratio, 0.0);
        let r = MapCacheReport::default().with_flushes(4, 10);
        assert_eq!(r.entries_per_flush, 2.5);
        assert_eq!(MapCacheReport::default().entries_per_flush, 0.0);
    }
}
