//! Merge accounting shared by block-mapped and hybrid (log-block) FTLs: NFTL's folds and the
//! switch, partial and full merges of BAST, FAST, SAST and KAST.
//!
//! An FTL records each merge it finishes through [`crate::ftl::FtlCtx::record_merge`]; the
//! engine owns the [`MergeStats`] (cleared with the other measurements, so merges of the
//! preconditioning are not in the measured report) and the report's `merges` section is built
//! from it for every FTL whose [`crate::ftl::Ftl::merge_profile`] is `Some`. The figures are
//! those the log-block papers compare: merges by kind, the associativity of each merged log
//! block (how many data blocks its pages belonged to; kast.txt bounds it by K) and the time
//! each merge blocked the request that caused it, against the worst case the design predicts.
//! The flash work itself is counted under the `merge` cause in the report's `flash` section.

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::stats::LatencySummary;

/// Kinds of merge (kast.txt section II; NFTL's fold, nftl-lookup-pagecache.txt section 3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MergeKind {
    /// A log block written in full, in place order, becomes the data block: one erase, no copy.
    Switch,
    /// A log block written in place order up to a page: the rest is copied in, then a switch.
    Partial,
    /// Valid pages of the log block's data blocks are copied to new blocks; the old ones erased.
    Full,
    /// NFTL: a replacement chain is folded into a new primary block.
    Fold,
}

impl MergeKind {
    /// Every kind, in report order.
    pub const ALL: [MergeKind; 4] = [
        MergeKind::Switch,
        MergeKind::Partial,
        MergeKind::Full,
        MergeKind::Fold,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// One finished merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergeRecord {
    pub kind: MergeKind,
    /// Data blocks whose pages the merged log block held (1 for a switch or partial merge, and
    /// for an NFTL fold).
    pub associativity: u32,
    /// Simulated time the merge blocked the request that caused it: from the issue of its first
    /// flash command to the completion of its last (0 in functional-only runs).
    pub blocking_ns: u64,
    /// Valid pages copied (a read and a program, or a copyback, each).
    pub pages_copied: u32,
    /// Blocks erased.
    pub erases: u32,
}

/// What a block-level FTL's design says about its merges, for the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MergeProfile {
    /// The longest a merge can block, if the design bounds it: e.g. N·k·C_copy + (k+1)·C_erase
    /// for a log block of N pages associated with k data blocks (kast.txt section II).
    pub predicted_worst_blocking_ns: Option<u64>,
    /// How a log-buffer FTL used its log blocks (None for FTLs without a log buffer).
    pub log_buffer: Option<LogBufferUse>,
}

/// How much of its log buffer a log-block FTL used over the measured window: a log block
/// never merged holds log space the FTL does not use (issue 27: a victim rule with no ageing
/// left KAST running on 6 of its 32 log blocks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct LogBufferUse {
    /// Log blocks (slots) of the buffer.
    pub log_blocks: u32,
    /// Of them, those merged at least once in the window.
    pub log_blocks_merged: u32,
    /// Of them, those that never held a log block in the window (SAST's fixed sets leave the
    /// log blocks of a set its data-block set does not fill unused).
    pub log_blocks_unused: u32,
    /// Largest age of a log block when it was merged, in host page writes since it was
    /// allocated.
    pub oldest_merged_age_page_writes: u64,
    /// Age of the oldest log block still allocated at the end, in host page writes.
    pub oldest_unmerged_age_page_writes: u64,
}

/// Merge figures of a run (owned by the engine, filled through the FTL context).
#[derive(Debug, Clone)]
pub struct MergeStats {
    counts: [u64; 4],
    pages_copied: u64,
    erases: u64,
    /// `associativity[k]`: merges of a log block associated with `k` data blocks.
    associativity: Vec<u64>,
    blocking_ns: Histogram<u64>,
    /// Exact longest blocking time (the histogram keeps 3 significant digits).
    max_blocking_ns: u64,
}

impl Default for MergeStats {
    fn default() -> Self {
        MergeStats {
            counts: [0; 4],
            pages_copied: 0,
            erases: 0,
            associativity: Vec::new(),
            // Grows to fit; 3 significant digits like the host latencies.
            blocking_ns: Histogram::new(3).expect("3 significant digits is a valid precision"),
            max_blocking_ns: 0,
        }
    }
}

impl MergeStats {
    /// Counts one finished merge.
    pub fn record(&mut self, merge: MergeRecord) {
        self.counts[merge.kind.index()] += 1;
        self.pages_copied += u64::from(merge.pages_copied);
        self.erases += u64::from(merge.erases);
        let k = merge.associativity as usize;
        if k >= self.associativity.len() {
            // Grows only when a new maximum appears (at most pages-per-block entries).
            self.associativity.resize(k + 1, 0);
        }
        self.associativity[k] += 1;
        self.max_blocking_ns = self.max_blocking_ns.max(merge.blocking_ns);
        // The histogram grows to fit; only a value beyond its largest possible range clamps.
        if self.blocking_ns.record(merge.blocking_ns).is_err() {
            self.blocking_ns.saturating_record(merge.blocking_ns);
        }
    }

    /// Merges of `kind` so far.
    pub fn count(&self, kind: MergeKind) -> u64 {
        self.counts[kind.index()]
    }

    /// Merges of every kind so far.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The highest associativity of a merged log block (0 before any merge).
    pub fn max_associativity(&self) -> u32 {
        self.associativity.iter().rposition(|&n| n > 0).unwrap_or(0) as u32
    }

    /// The report section, with the design's prediction.
    pub fn report(&self, profile: MergeProfile) -> MergeReport {
        let total = self.total();
        let weighted: u64 = self
            .associativity
            .iter()
            .enumerate()
            .map(|(k, &n)| k as u64 * n)
            .sum();
        MergeReport {
            switch: self.count(MergeKind::Switch),
            partial: self.count(MergeKind::Partial),
            full: self.count(MergeKind::Full),
            fold: self.count(MergeKind::Fold),
            total,
            pages_copied: self.pages_copied,
            erases: self.erases,
            associativity: AssociativityReport {
                max: self.max_associativity(),
                mean: if total > 0 {
                    weighted as f64 / total as f64
                } else {
                    0.0
                },
                histogram: self
                    .associativity
                    .iter()
                    .enumerate()
                    .filter(|(_, &n)| n > 0)
                    .map(|(k, &n)| (k as u32, n))
                    .collect(),
            },
            blocking_ns: self.blocking_summary(),
            predicted_worst_blocking_ns: profile.predicted_worst_blocking_ns,
            log_buffer: profile.log_buffer,
        }
    }
}

impl MergeStats {
    /// Blocking-time percentiles with the exact maximum; a percentile (the histogram's bucket
    /// value, 3 significant digits) never shows above it.
    fn blocking_summary(&self) -> LatencySummary {
        let max = self.max_blocking_ns;
        let s = LatencySummary::of(&self.blocking_ns);
        LatencySummary {
            mean: s.mean.min(max as f64),
            p50: s.p50.min(max),
            p90: s.p90.min(max),
            p99: s.p99.min(max),
            p99_9: s.p99_9.min(max),
            p99_99: s.p99_99.min(max),
            max,
        }
    }
}

/// Associativity of the merged log blocks.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AssociativityReport {
    pub max: u32,
    pub mean: f64,
    /// `(associativity, merges)` pairs, ascending, only those that occurred.
    pub histogram: Vec<(u32, u64)>,
}

/// The report's `merges` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MergeReport {
    pub switch: u64,
    pub partial: u64,
    pub full: u64,
    pub fold: u64,
    pub total: u64,
    pub pages_copied: u64,
    pub erases: u64,
    pub associativity: AssociativityReport,
    /// Time each merge blocked the request that caused it.
    pub blocking_ns: LatencySummary,
    pub predicted_worst_blocking_ns: Option<u64>,
    /// The log buffer's use (log-block FTLs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_buffer: Option<LogBufferUse>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merge(kind: MergeKind, associativity: u32, blocking_ns: u64) -> MergeRecord {
        MergeRecord {
            kind,
            associativity,
            blocking_ns,
            pages_copied: 3 * associativity,
            erases: associativity + 1,
        }
    }

    #[test]
    fn counts_each_kind_and_the_associativity_of_each_merge() {
        let mut stats = MergeStats::default();
        stats.record(merge(MergeKind::Full, 4, 9_000));
        stats.record(merge(MergeKind::Full, 2, 5_000));
        stats.record(merge(MergeKind::Switch, 1, 1_000));
        stats.record(merge(MergeKind::Fold, 1, 2_000));
        let r = stats.report(MergeProfile {
            predicted_worst_blocking_ns: Some(10_000),
            log_buffer: None,
        });
        assert_eq!((r.switch, r.partial, r.full, r.fold), (1, 0, 2, 1));
        assert_eq!(r.total, 4);
        assert_eq!(r.pages_copied, 3 * (4 + 2 + 1 + 1));
        assert_eq!(r.erases, 5 + 3 + 2 + 2);
        assert_eq!(r.associativity.max, 4);
        assert_eq!(r.associativity.mean, 2.0);
        assert_eq!(r.associativity.histogram, vec![(1, 2), (2, 1), (4, 1)]);
        assert_eq!(r.blocking_ns.max, 9_000);
        assert!(
            r.blocking_ns.p99 <= 9_000 && r.blocking_ns.p99_99 <= 9_000,
            "{r:?}"
        );
        assert!((r.blocking_ns.mean - 4_250.0).abs() < 10.0, "{r:?}");
        assert_eq!(r.predicted_worst_blocking_ns, Some(10_000));
    }

    #[test]
    fn nothing_merged_reports_zeros() {
        let r = MergeStats::default().report(MergeProfile::default());
        assert_eq!(r, MergeReport::default());
    }
}
