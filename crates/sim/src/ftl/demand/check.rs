//! Invariant checks of the demand-paged core: host map against the data pages' OOB, GTD
//! against the translation pages, and the flash copy of every entry the cache does not hold
//! dirty against the host map.

use super::DemandFtl;
use crate::ftl::mapping::UNMAPPED;
use crate::nand::{Nand, OOB_FLAG_TRANSLATION};

impl DemandFtl {
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
        self.check_gtd(nand)?;
        self.check_flash_copy()
    }

    /// Every GTD entry names a valid translation page of its TVPN, and no other translation
    /// slot is valid.
    fn check_gtd(&self, nand: &Nand) -> Result<(), String> {
        let mut mapped = 0u64;
        for (tvpn, tppn) in self.gtd.iter().enumerate() {
            let Some(tppn) = *tppn else { continue };
            mapped += 1;
            for s in 0..self.upp {
                let unit = tppn * self.upp + s;
                let oob = nand.oob(unit);
                if !nand.is_valid(unit)
                    || oob.lpn() != Some(tvpn as u32)
                    || oob.flags() & OOB_FLAG_TRANSLATION == 0
                {
                    return Err(format!(
                        "GTD maps translation page {tvpn} to page {tppn}, whose slot {s} is not \
                         a valid translation slot of it ({oob:?})"
                    ));
                }
            }
        }
        let valid: u64 = (0..self.layout.blocks())
            .filter(|&b| self.blocks.is_translation(b))
            .map(|b| u64::from(nand.block(b).valid_units))
            .sum();
        if valid != mapped * u64::from(self.upp) {
            return Err(format!(
                "{valid} valid translation slots for {mapped} translation pages in the GTD"
            ));
        }
        Ok(())
    }

    /// An entry not dirty in the cache has its current value in its translation page.
    fn check_flash_copy(&self) -> Result<(), String> {
        if self.ideal {
            return Ok(());
        }
        let ept = self.sizing.entries_per_tpage;
        for lpn in 0..self.map.len() {
            if self.cache.state(lpn) == Some(true) {
                continue;
            }
            let tvpn = lpn / ept;
            let on_flash = self.flash_copy[tvpn as usize][(lpn % ept) as usize];
            let current = self.map.get(lpn).unwrap_or(UNMAPPED);
            if on_flash != current {
                return Err(format!(
                    "entry {lpn} is not dirty in the map cache but translation page {tvpn} holds \
                     {on_flash:#x} while the map says {current:#x}"
                ));
            }
        }
        Ok(())
    }
}
