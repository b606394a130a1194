//! Invariant checks of the page-mapping FTL against the NAND state.

use super::{PageMap, UNMAPPED};
use crate::nand::Nand;

impl PageMap {
    pub(super) fn check(&self, nand: &Nand) -> Result<(), String> {
        self.check_forward_map(nand)?;
        self.check_reverse_map(nand)?;
        self.blocks.check(|b| nand.block(b).valid_units)?;
        self.check_frontiers(nand)?;
        self.check_buffer()
    }

    /// Every mapped unit points at a valid slot holding it (or at its slot in a page being
    /// assembled).
    fn check_forward_map(&self, nand: &Nand) -> Result<(), String> {
        for (lpn, &unit) in self.l2p.iter().enumerate() {
            if unit == UNMAPPED {
                continue;
            }
            if nand.is_programmed(self.per_page.quotient(unit)) {
                if !nand.is_valid(unit) || nand.oob(unit).lpn() != Some(lpn as u32) {
                    return Err(format!(
                        "L2P maps unit {lpn} to slot {unit}, which holds {:?} (valid: {})",
                        nand.oob(unit).lpn(),
                        nand.is_valid(unit)
                    ));
                }
            } else {
                let (f, slot) = self.assembling_slot(unit).ok_or_else(|| {
                    format!("L2P maps unit {lpn} to unprogrammed slot {unit} outside any open page")
                })?;
                if self.frontiers[f].entries[slot].lpn() != Some(lpn as u32) {
                    return Err(format!(
                        "L2P maps unit {lpn} to buffered slot {unit} holding another unit"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Every valid slot in NAND is the current location of the unit its OOB names.
    fn check_reverse_map(&self, nand: &Nand) -> Result<(), String> {
        let units = self.layout.pages() * self.upp;
        for unit in 0..units {
            if nand.is_valid(unit) {
                let lpn = nand
                    .oob(unit)
                    .lpn()
                    .ok_or("valid slot without a logical unit")?;
                if self.l2p.get(lpn as usize) != Some(&unit) {
                    return Err(format!(
                        "slot {unit} is valid for unit {lpn}, but L2P maps that unit to {:?}",
                        self.l2p.get(lpn as usize)
                    ));
                }
            }
        }
        Ok(())
    }

    fn check_frontiers(&self, nand: &Nand) -> Result<(), String> {
        for (i, f) in self.frontiers.iter().enumerate().filter(|(_, f)| f.open) {
            for &b in &f.blocks[..self.lanes as usize] {
                if nand.block(b).write_ptr != f.page {
                    return Err(format!(
                        "frontier {i}: block {b} write pointer {} but assembling page {}",
                        nand.block(b).write_ptr,
                        f.page
                    ));
                }
            }
        }
        Ok(())
    }

    /// With nothing in flight, the buffer holds exactly the host units of assembling pages.
    fn check_buffer(&self) -> Result<(), String> {
        if !self.program_done.is_empty() {
            return Ok(());
        }
        let assembling: u64 = self.frontiers.iter().map(|f| u64::from(f.host_units)).sum();
        if assembling != self.buffer_used {
            return Err(format!(
                "write buffer counts {} units but assembling pages hold {assembling} host units",
                self.buffer_used
            ));
        }
        Ok(())
    }
}
