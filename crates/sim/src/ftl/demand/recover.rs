//! Power-loss recovery of the demand-paged FTLs (dftl, dftl-entry, cdftl, fmmu; see
//! `ftl/mapping/recovery.rs` for what a power cut leaves and the scan's time model).
//!
//! **What is lost.** The map cache's dirty entries, the translation buffer (translation
//! pages not yet programmed), the write buffer and the GTD are RAM. A translation page on
//! flash holds its entries as of its last write-back: entries dirty in the cache at the cut,
//! and entries a GC moved and had not written back, are stale there (a stale entry may name a
//! slot that was erased and rewritten since).
//!
//! **Choice: a full OOB scan, then every translation page rewritten.** DFTL's paper (Gupta
//! et al.) and fmmu.txt say nothing of recovery. The scan reads the OOB of every programmed
//! page, as pagemap's does: the newest copy of every logical unit by sequence number is its
//! entry (translation slots, flagged `OOB_FLAG_TRANSLATION`, are skipped). The old translation
//! pages cannot say which of their entries are stale, so none is trusted: their blocks are
//! erased and every translation page holding a mapped entry is written anew from the rebuilt
//! map (a translation page with no mapped entry stays unwritten, as on a fresh device), packed
//! `units_per_page` to a flash page on the translation dies as in normal operation; a last,
//! partly filled page stays in the translation buffer. The scan's simulated time counts these
//! programs and erases. The map cache starts empty (clean), so every entry's flash copy is its
//! current value, which the invariant checks verify.
//!
//! The translation pages' contents are not kept by the NAND model (nor by a flash image): a
//! firmware that reads its translation pages and rolls forward with the data pages written
//! after them would read fewer pages; the full scan is what a firmware without checkpoints
//! must do, and its result is the same map.

use super::DemandFtl;
use crate::ftl::mapping::recovery::{mark_newest_valid, newest_copies};
use crate::ftl::mapping::{RecoveryScan, UNMAPPED};
use crate::nand::{BlockId, Nand, OobEntry, OOB_FLAG_TRANSLATION};
use crate::SimError;

impl DemandFtl {
    pub(super) fn rebuild(
        &mut self,
        nand: &mut Nand,
        scan: &mut RecoveryScan,
    ) -> Result<(), SimError> {
        let found = newest_copies(nand, scan, self.sizing.logical_units, |_| false)?;
        scan.units_recovered = mark_newest_valid(nand, &found, self.name)?;
        for (lpn, &unit) in found.slot.iter().enumerate() {
            if unit != UNMAPPED {
                self.map.set(lpn as u32, unit);
            }
        }
        scan.count_blocks(nand);
        self.erase_translation_blocks(nand, scan)?;
        // Host units and translation pages are numbered past every copy on flash, so the
        // next recovery's scan finds theirs newest.
        self.units_written = found.max_seq;
        self.translation_seq = found.max_seq;
        self.blocks.recover(nand, found.max_seq, |_| false);
        self.rewrite_translation_pages(nand, scan)
    }

    /// Erases every block holding translation slots (none is valid: the scan trusts no old
    /// translation page). Translation blocks hold nothing else.
    fn erase_translation_blocks(
        &mut self,
        nand: &mut Nand,
        scan: &mut RecoveryScan,
    ) -> Result<(), SimError> {
        for block in 0..self.layout.blocks() {
            if !self.holds_translation(nand, block) {
                continue;
            }
            nand.erase(block).map_err(|source| SimError::Nand {
                ftl: self.name,
                source,
            })?;
            scan.count_erase(block);
        }
        Ok(())
    }

    /// Whether any programmed slot of `block` is a translation slot.
    fn holds_translation(&self, nand: &Nand, block: BlockId) -> bool {
        let written = nand.block(block).write_ptr.min(self.layout.pages_per_block);
        (0..written)
            .map(|page| self.layout.ppn(block, page))
            .filter(|&ppn| nand.is_programmed(ppn))
            .flat_map(|ppn| (0..self.upp).map(move |s| ppn * self.upp + s))
            .any(|unit| nand.oob(unit).flags() & OOB_FLAG_TRANSLATION != 0)
    }

    /// Writes every translation page with a mapped entry from the rebuilt map (module docs).
    fn rewrite_translation_pages(
        &mut self,
        nand: &mut Nand,
        scan: &mut RecoveryScan,
    ) -> Result<(), SimError> {
        let ept = self.sizing.entries_per_tpage;
        for tvpn in 0..self.sizing.translation_pages {
            let first = tvpn * ept;
            let mut mapped = false;
            for (i, entry) in self.flash_copy[tvpn as usize].iter_mut().enumerate() {
                *entry = self.map.get(first + i as u32).unwrap_or(UNMAPPED);
                mapped |= *entry != UNMAPPED;
            }
            if mapped {
                self.place_recovered_translation(nand, scan, tvpn)?;
            }
        }
        Ok(())
    }

    /// Puts translation page `tvpn` into the translation buffer and programs the buffer's
    /// flash page when full (at once: nothing else runs during recovery).
    fn place_recovered_translation(
        &mut self,
        nand: &mut Nand,
        scan: &mut RecoveryScan,
        tvpn: u32,
    ) -> Result<(), SimError> {
        let unit = self.next_translation_slot(tvpn)?;
        self.gtd[tvpn as usize] = Some(unit);
        let fr = &self.map_frontier;
        if fr.filled < self.upp {
            return Ok(());
        }
        let (block, page) = (fr.block, fr.page);
        let ppn = self.layout.ppn(block, page);
        nand.program(ppn, &fr.entries, None)
            .map_err(|source| SimError::Nand {
                ftl: self.name,
                source,
            })?;
        scan.count_program(ppn);
        let fr = &mut self.map_frontier;
        fr.entries.fill(OobEntry::EMPTY);
        fr.filled = 0;
        fr.open = false;
        self.blocks.add_durable_page(block);
        if page + 1 == self.layout.pages_per_block {
            self.map_open[self.layout.die_of(block) as usize] = None;
            let valid = nand.block(block).valid_units;
            self.blocks.close(block, valid, self.units_written);
        }
        Ok(())
    }
}
