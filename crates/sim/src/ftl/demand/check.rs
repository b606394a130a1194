//! Invariant checks of the demand-paged core: host map against the data pages' OOB, GTD
//! against the translation pages, and the flash copy of every entry the cache does not hold
//! dirty (nor a GC victim moved and has yet to write back) against the host map; GC copies
//! awaiting their CondUpdate and victims being collected are accounted for.

use super::DemandFtl;
use crate::ftl::mapping::UNMAPPED;
use crate::nand::{Nand, OOB_FLAG_TRANSLATION};

impl DemandFtl {
    pub(super) fn check(&self, nand: &Nand) -> Result<(), String> {
        let pending_copy = |unit| self.copy_pending(unit);
        self.map.check_with_pending(
            nand,
            &self.layout,
            |lpn, unit| {
                let (f, slot) = self.assembling_slot(unit).ok_or_else(|| {
                    format!("L2P maps unit {lpn} to unprogrammed slot {unit} outside any open page")
                })?;
                if self.frontiers[f].entries[slot].lpn() != Some(lpn) {
                    return Err(format!(
                        "L2P maps unit {lpn} to buffered slot {unit} holding another unit"
                    ));
                }
                Ok(())
            },
            pending_copy,
        )?;
        self.blocks
            .check_with_victims(|b| nand.block(b).valid_units, |b| self.collecting(b))?;
        self.check_gtd(nand)?;
        self.check_flash_copy()
    }

    /// Every GTD entry names a translation slot of its TVPN (valid in flash, or filled in the
    /// translation buffer), no other translation slot is valid or filled, and a translation
    /// page with a mapped entry has a GTD entry.
    fn check_gtd(&self, nand: &Nand) -> Result<(), String> {
        let mut mapped = 0u64;
        for (tvpn, unit) in self.gtd.iter().enumerate() {
            let Some(unit) = *unit else {
                if self.flash_copy[tvpn].iter().any(|&e| e != UNMAPPED) {
                    return Err(format!(
                        "translation page {tvpn} holds mapped entries but the GTD has no copy of it"
                    ));
                }
                continue;
            };
            mapped += 1;
            let (live, oob) = if self.in_map_buffer(unit) {
                let slot = self.per_page.remainder(unit) as usize;
                (true, self.map_frontier.entries[slot])
            } else {
                (nand.is_valid(unit), *nand.oob(unit))
            };
            if !live || oob.lpn() != Some(tvpn as u32) || oob.flags() & OOB_FLAG_TRANSLATION == 0 {
                return Err(format!(
                    "GTD maps translation page {tvpn} to unit slot {unit}, which is not a live \
                     translation slot of it ({oob:?})"
                ));
            }
        }
        let valid: u64 = (0..self.layout.blocks())
            .filter(|&b| self.blocks.is_translation(b))
            .map(|b| u64::from(nand.block(b).valid_units))
            .sum();
        let buffered = self
            .map_frontier
            .entries
            .iter()
            .filter(|e| e.lpn().is_some())
            .count() as u64;
        if valid + buffered != mapped {
            return Err(format!(
                "{valid} valid translation slots in flash and {buffered} in the translation \
                 buffer for {mapped} translation pages in the GTD"
            ));
        }
        Ok(())
    }

    /// An entry not dirty in the cache has its current value in its translation page.
    fn check_flash_copy(&self) -> Result<(), String> {
        let ept = self.sizing.entries_per_tpage;
        for lpn in 0..self.map.len() {
            if self.cache.state(lpn) == Some(true) || self.gc_uncached.contains(lpn) {
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

#[cfg(test)]
mod tests {
    use super::super::DemandFtl;
    use crate::config::ExperimentConfig;
    use crate::nand::{Layout, Nand};

    /// A GTD entry naming a slot that holds no live translation page of its TVPN is caught.
    #[test]
    fn a_wrong_gtd_entry_is_caught() {
        let cfg = ExperimentConfig::with_sets(
            "fmmu-16ch",
            &["ftl.name=\"dftl\"", "run.precondition=0.0"],
        )
        .unwrap();
        let mut ftl = DemandFtl::dftl(&cfg).unwrap();
        let nand = Nand::new(Layout::new(&cfg.geometry), ftl.upp, 512, false);
        assert_eq!(ftl.check(&nand), Ok(()));
        ftl.gtd[3] = Some(4 * ftl.upp + 1);
        let err = ftl.check(&nand).unwrap_err();
        assert!(err.contains("GTD maps translation page 3"), "{err}");
    }
}
