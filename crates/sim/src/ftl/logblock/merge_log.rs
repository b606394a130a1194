//! Merge accounting of the log-block FTLs: every merge as a [`MergeRecord`] (the shape of the
//! shared `ftl/merge.rs` accounting of issue 11), summed into the FTL's report.
//!
//! Kept here until the shared accounting lands on main; the FTLs then forward each record to
//! `FtlCtx::record_merge` as well.

use serde::Serialize;

/// What a merge did to the log block it reclaimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MergeKind {
    /// A complete in-place log block becomes the data block (no copy).
    Switch,
    /// An in-place log block is completed from the data block, then becomes the data block.
    Partial,
    /// Every data block associated with the log block is rebuilt in a free block.
    Full,
    /// NFTL fold (not used by the log-block FTLs).
    Fold,
}

/// One merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergeRecord {
    pub kind: MergeKind,
    /// Data blocks whose pages the merged log block held.
    pub associativity: u32,
    /// Simulated time from the merge's first command's issue to its last one's completion.
    pub blocking_ns: u64,
    /// Valid pages copied.
    pub pages_copied: u32,
    /// Blocks erased.
    pub erases: u32,
}

/// Merge totals since the last counter reset.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MergeLog {
    pub switch: u64,
    pub partial: u64,
    pub full: u64,
    pub total: u64,
    pub pages_copied: u64,
    pub erases: u64,
    pub associativity_max: u32,
    /// `[associativity, merges]` pairs, ascending.
    pub associativity_histogram: Vec<[u64; 2]>,
    pub blocking_ns_max: u64,
    pub blocking_ns_mean: f64,
    #[serde(skip)]
    blocking_ns_sum: u128,
    /// Log blocks with no valid page left, erased without a merge.
    pub dead_log_erases: u64,
}

impl MergeLog {
    /// Adds one merge.
    pub fn record(&mut self, r: &MergeRecord) {
        match r.kind {
            MergeKind::Switch => self.switch += 1,
            MergeKind::Partial => self.partial += 1,
            MergeKind::Full | MergeKind::Fold => self.full += 1,
        }
        self.total += 1;
        self.pages_copied += u64::from(r.pages_copied);
        self.erases += u64::from(r.erases);
        self.associativity_max = self.associativity_max.max(r.associativity);
        let k = u64::from(r.associativity);
        match self
            .associativity_histogram
            .binary_search_by_key(&k, |e| e[0])
        {
            Ok(i) => self.associativity_histogram[i][1] += 1,
            Err(i) => self.associativity_histogram.insert(i, [k, 1]),
        }
        self.blocking_ns_max = self.blocking_ns_max.max(r.blocking_ns);
        self.blocking_ns_sum += u128::from(r.blocking_ns);
        self.blocking_ns_mean = self.blocking_ns_sum as f64 / self.total as f64;
    }
}
