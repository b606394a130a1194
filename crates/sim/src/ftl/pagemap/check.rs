//! Invariant checks of the page-mapping FTL against the NAND state.

use super::PageMap;
use crate::nand::Nand;

impl PageMap {
    pub(super) fn check(&self, nand: &Nand) -> Result<(), String> {
        self.map.check(nand, &self.layout, |lpn, unit| {
            let (f, slot) = self.assembling_slot(unit).ok_or_else(|| {
                format!("L2P maps unit {lpn} to unprogrammed slot {unit} outside any open page")
            })?;
            if self.frontiers[f].entries[slot].lpn() != Some(lpn) {
                return Err(format!(
                    "L2P maps unit {lpn} to buffered slot {unit} holding another unit"
                ));
            }
            Ok(())
        })?;
        self.blocks.check(|b| nand.block(b).valid_units)?;
        self.check_frontiers(nand)?;
        self.check_buffer()
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
