//! The building blocks of the two-level map caches CDFTL and FMMU (fmmu.txt section 4): the
//! set-associative cache of map blocks with second-chance replacement among clean blocks and
//! in-cache MSHRs ([`setassoc`]), the Dirty Translation List with next links and the
//! cost-benefit flush victim ([`dtl`]), the flush watermarks and the weighted round-robin
//! arbiter ([`pacing`]), the cache shapes and address arithmetic, and CDFTL's flush scan
//! ([`geometry`]); the FMMU flow over them ([`controller`]). Pure structures, unit tested here; the FTLs use them.

pub mod controller;
pub mod dtl;
pub mod geometry;
pub mod pacing;
pub mod setassoc;

pub use controller::{Access, Action, FlushSearch, TwoLevel, TwoLevelStats};
pub use dtl::{Dtl, FlushOrder};
pub use geometry::{scan_dirty_blocks, TwoLevelGeometry, ENTRY_BYTES};
pub use pacing::{victim_request_weights, Watermarks};
pub use setassoc::{Allocated, Mshrs, SetAssoc, SetBusy, NIL};
