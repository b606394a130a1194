//! Page-mapping logic shared by the page-mapping FTLs (`pagemap`, `mt-ftl`, `st-ftl`, ...):
//! the logical-to-physical table of mapping units ([`MapTable`]), the block bookkeeping with
//! free pools and victim choice ([`Blocks`]), the checks of both against the NAND state, and
//! the host data path of the FTLs that map whole pages without a buffer ([`PageData`]).
//!
//! Each FTL keeps its own policy for where writes go (pagemap's write buffer and per-die
//! frontiers, mt-ftl's per-task working blocks) and how GC is paced; what a mapping is, how a
//! stale copy is invalidated and which block is the best victim is decided here, once.

pub mod blocks;
pub mod headroom;
mod pages;
pub mod recovery;
mod sizing;
mod table;

pub use blocks::{BlockState, Blocks, Stream};
pub use pages::PageData;
pub use recovery::{newest_copies, RecoveryScan};
pub use sizing::{estimate_state_bytes, logical_pages_of_ratio, logical_units, units_per_page};
pub use table::{MapTable, UNMAPPED};

use serde::{Deserialize, Serialize};

/// Garbage-collection victim policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VictimPolicy {
    /// Fewest valid units.
    Greedy,
    /// Highest (1 - u) / 2u x age (Kawaguchi et al.); u = valid fraction, age in units written
    /// since the block was closed.
    CostBenefit,
    /// Oldest closed block.
    Fifo,
}
