//! A record of what the NAND state changed, in order, for a caller that mirrors the flash
//! somewhere else (the persistent flash image of `flashlab serve`, [`crate::blockdev`]).
//!
//! When turned on ([`Nand::start_journal`]), every data program, copyback and spare-only
//! program appends the page's whole new record (state byte, spare tag, OOB entries, data
//! versions) and every erase the block. The mirror drains the journal in order
//! ([`Nand::take_journal`]), so a page erased and reprogrammed between two drains is still
//! mirrored step by step (a GC copy reads its source before the source's erase). The buffers
//! are reused: no allocation per operation once they have grown.

use super::{BlockId, Nand, OobEntry, Ppn};

/// One change of the flash, in the order the FTL issued it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlashChange {
    /// Page `ppn` now holds the record at index `record` of the journal's records (a data
    /// program, a copyback from `copied_from`, or a spare-only program when `spare_only`).
    Page {
        ppn: Ppn,
        record: u32,
        copied_from: Option<Ppn>,
        spare_only: bool,
    },
    /// Block `block` was erased (its erase count is `erase_count` now).
    Erase { block: BlockId, erase_count: u32 },
}

/// A page as the flash holds it: what a power-up scan reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRecord<'a> {
    /// Partial programs since the erase (low 4 bits) and whether the data area is programmed
    /// (0x10); 0 for an erased page.
    pub state: u8,
    /// The spare tag word (0 when none).
    pub tag: u32,
    /// One OOB entry per unit slot.
    pub entries: &'a [OobEntry],
    /// One data version per sector (empty when payloads are off).
    pub versions: &'a [u64],
}

/// The changes since the last drain.
#[derive(Debug, Clone, Default)]
pub struct FlashJournal {
    pub changes: Vec<FlashChange>,
    states: Vec<(u8, u32)>,
    entries: Vec<OobEntry>,
    versions: Vec<u64>,
    units_per_page: usize,
    sectors_per_page: usize,
}

impl FlashJournal {
    /// The page record a [`FlashChange::Page`] points at.
    pub fn record(&self, record: u32) -> PageRecord<'_> {
        let i = record as usize;
        let (state, tag) = self.states[i];
        let (u, s) = (self.units_per_page, self.sectors_per_page);
        let versions = if self.versions.is_empty() {
            &[][..]
        } else {
            &self.versions[i * s..(i + 1) * s]
        };
        PageRecord {
            state,
            tag,
            entries: &self.entries[i * u..(i + 1) * u],
            versions,
        }
    }

    /// Forgets the drained changes, keeping the buffers.
    pub fn clear(&mut self) {
        self.changes.clear();
        self.states.clear();
        self.entries.clear();
        self.versions.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}

impl Nand {
    /// Starts recording every change in a journal (see the module doc); a journal already
    /// started keeps what it recorded (a flash image mirrors what recovery wrote).
    pub fn start_journal(&mut self) {
        if self.journal.is_some() {
            return;
        }
        let journal = FlashJournal {
            units_per_page: self.units_per_page() as usize,
            sectors_per_page: if self.has_payloads() {
                self.sectors_per_page() as usize
            } else {
                0
            },
            ..FlashJournal::default()
        };
        self.journal = Some(Box::new(journal));
    }

    /// Swaps the recorded changes into `out` (cleared first), leaving an empty journal that
    /// reuses `out`'s buffers. Does nothing when no journal was started.
    pub fn take_journal(&mut self, out: &mut FlashJournal) {
        if let Some(journal) = self.journal.as_deref_mut() {
            out.clear();
            out.units_per_page = journal.units_per_page;
            out.sectors_per_page = journal.sectors_per_page;
            std::mem::swap(journal, out);
        }
    }

    /// Appends page `ppn`'s current record to the journal, if one is on.
    pub(super) fn journal_page(&mut self, ppn: Ppn, copied_from: Option<Ppn>, spare_only: bool) {
        if self.journal.is_none() {
            return;
        }
        let (state, tag) = (self.page_state_byte(ppn), self.spare_tag(ppn));
        let upp = self.units_per_page() as usize;
        let spp = self.sectors_per_page() as usize;
        let base = ppn as usize;
        let journal = self.journal.as_deref_mut().expect("checked above");
        let index = journal.states.len() as u32;
        journal.states.push((state, tag));
        journal
            .entries
            .extend_from_slice(&self.oob[base * upp..(base + 1) * upp]);
        if journal.sectors_per_page > 0 {
            if let Some(store) = &self.payload {
                journal
                    .versions
                    .extend_from_slice(&store[base * spp..(base + 1) * spp]);
            }
        }
        journal.changes.push(FlashChange::Page {
            ppn,
            record: index,
            copied_from,
            spare_only,
        });
    }

    /// Appends an erase of `block` to the journal, if one is on.
    pub(super) fn journal_erase(&mut self, block: BlockId) {
        let erase_count = self.block(block).erase_count;
        if let Some(journal) = self.journal.as_deref_mut() {
            journal
                .changes
                .push(FlashChange::Erase { block, erase_count });
        }
    }
}
