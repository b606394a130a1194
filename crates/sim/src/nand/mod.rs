//! The NAND model's functional state: what every page holds, with the NAND rules enforced.
//!
//! It knows nothing of time (timing lives in [`crate::flash`]). State is compact: per mapping-unit
//! slot a 12-byte OOB entry (logical unit, 48-bit sequence number, flags) and one valid bit, per
//! block 12 bytes; page data is optional and stored as one 64-bit *data version* per host
//! sector (enough to check that reads return the last data written, and linear under XOR for
//! parity). A rule broken by an FTL is returned as a [`NandError`], which the engine reports as
//! an internal error naming the FTL.

mod addr;
mod journal;
mod state;

pub use addr::{BlockId, DieId, Divisor, Layout, Ppn, UnitAddr};
pub use journal::{FlashChange, FlashJournal, PageRecord};
pub use state::{
    BlockMeta, Nand, NandError, OobEntry, Spare, OOB_ENTRY_BYTES, OOB_FLAG_TRANSLATION,
};
