//! The logical-to-physical table: one entry per mapping unit, holding the unit slot
//! (`ppn * units_per_page + slot`) of its current copy, and the invalidation of stale copies.

use super::Blocks;
use crate::ftl::FtlCtx;
use crate::nand::{Divisor, Layout, Nand, Ppn, UnitAddr, OOB_FLAG_TRANSLATION};
use crate::SimError;

/// Entry of an unmapped logical unit.
pub const UNMAPPED: u32 = u32::MAX;

/// Logical unit to unit slot.
#[derive(Debug, Clone)]
pub struct MapTable {
    l2p: Vec<u32>,
    per_page: Divisor,
    units_per_page: u32,
}

impl MapTable {
    /// A table of `logical_units` unmapped units on pages of `units_per_page` slots.
    pub fn new(logical_units: u32, units_per_page: u32) -> Self {
        MapTable {
            l2p: crate::large_array::filled(logical_units as usize, UNMAPPED),
            per_page: Divisor::new(units_per_page),
            units_per_page,
        }
    }

    /// Logical units in the table.
    pub fn len(&self) -> u32 {
        self.l2p.len() as u32
    }

    pub fn is_empty(&self) -> bool {
        self.l2p.is_empty()
    }

    /// Where `lpn` is, if mapped.
    #[inline]
    pub fn get(&self, lpn: u32) -> Option<UnitAddr> {
        let unit = self.l2p[lpn as usize];
        (unit != UNMAPPED).then_some(unit)
    }

    /// Maps `lpn` to `unit` (the caller has dealt with the previous location).
    #[inline]
    pub fn set(&mut self, lpn: u32, unit: UnitAddr) {
        self.l2p[lpn as usize] = unit;
    }

    /// Unmaps `lpn`, returning where it was.
    #[inline]
    pub fn take(&mut self, lpn: u32) -> Option<UnitAddr> {
        let old = self.get(lpn);
        self.l2p[lpn as usize] = UNMAPPED;
        old
    }

    /// The page holding a unit slot.
    #[inline]
    pub fn page_of(&self, unit: UnitAddr) -> Ppn {
        self.per_page.quotient(unit)
    }

    /// The slot of a unit within its page.
    #[inline]
    pub fn slot_of(&self, unit: UnitAddr) -> u32 {
        self.per_page.remainder(unit)
    }

    /// The unit slot `slot` of page `ppn`.
    #[inline]
    pub fn unit_at(&self, ppn: Ppn, slot: u32) -> UnitAddr {
        ppn * self.units_per_page + slot
    }

    /// Invalidates a stale copy in a programmed page and keeps the victim buckets in step.
    pub fn invalidate_programmed(
        &self,
        ctx: &mut FtlCtx<'_>,
        blocks: &mut Blocks,
        unit: UnitAddr,
    ) -> Result<(), SimError> {
        ctx.invalidate(unit)?;
        let block = ctx.layout().block_of(self.page_of(unit));
        blocks.on_invalidate(block, ctx.nand().block(block).valid_units);
        Ok(())
    }

    /// Checks that every mapped unit is the valid copy its slot names, and every valid slot is
    /// mapped (slots flagged [`OOB_FLAG_TRANSLATION`] hold mapping pages, not host data, and
    /// are left to the FTL's own translation checks). `unprogrammed(lpn, unit)` judges a unit mapped to a page not programmed yet
    /// (an FTL buffering data says whether it holds it).
    pub fn check(
        &self,
        nand: &Nand,
        layout: &Layout,
        unprogrammed: impl Fn(u32, UnitAddr) -> Result<(), String>,
    ) -> Result<(), String> {
        self.check_with_pending(nand, layout, unprogrammed, |_| false)
    }

    /// [`MapTable::check`] for an FTL whose GC copies are mapped only once programmed
    /// (CondUpdate): a valid slot nobody maps is accepted where `pending_copy(unit)` says it
    /// is a copy awaiting its map update.
    pub fn check_with_pending(
        &self,
        nand: &Nand,
        layout: &Layout,
        unprogrammed: impl Fn(u32, UnitAddr) -> Result<(), String>,
        pending_copy: impl Fn(UnitAddr) -> bool,
    ) -> Result<(), String> {
        for (lpn, &unit) in self.l2p.iter().enumerate() {
            if unit == UNMAPPED {
                continue;
            }
            if !nand.is_programmed(self.page_of(unit)) {
                unprogrammed(lpn as u32, unit)?;
            } else if !nand.is_valid(unit) || nand.oob(unit).lpn() != Some(lpn as u32) {
                return Err(format!(
                    "L2P maps unit {lpn} to slot {unit}, which holds {:?} (valid: {})",
                    nand.oob(unit).lpn(),
                    nand.is_valid(unit)
                ));
            }
        }
        for unit in 0..layout.pages() * self.units_per_page {
            if nand.is_valid(unit) && nand.oob(unit).flags() & OOB_FLAG_TRANSLATION == 0 {
                let lpn = nand
                    .oob(unit)
                    .lpn()
                    .ok_or("valid slot without a logical unit")?;
                if self.l2p.get(lpn as usize) != Some(&unit) && !pending_copy(unit) {
                    return Err(format!(
                        "slot {unit} is valid for unit {lpn}, but L2P maps that unit to {:?}",
                        self.l2p.get(lpn as usize)
                    ));
                }
            }
        }
        Ok(())
    }

    pub fn state_bytes(&self) -> u64 {
        self.l2p.len() as u64 * 4
    }

    /// Bytes [`MapTable::new`] would allocate for `logical_units`.
    pub fn estimate_bytes(logical_units: u32) -> u64 {
        u64::from(logical_units) * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Geometry;
    use crate::nand::OobEntry;

    #[test]
    fn check_leaves_translation_pages_to_their_own_checks() {
        let g = Geometry {
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 1,
            blocks_per_plane: 4,
            pages_per_block: 4,
            page_bytes: 4096,
            ..Geometry::default()
        };
        let layout = Layout::new(&g);
        let mut nand = Nand::new(layout, 1, 512, false);
        let mut map = MapTable::new(8, 1);
        nand.program(0, &[OobEntry::new(3, 1, 0)], None).unwrap();
        map.set(3, 0);
        // A translation page (TVPN 0) in the next page: valid, but no host unit.
        nand.program(1, &[OobEntry::new(0, 2, OOB_FLAG_TRANSLATION)], None)
            .unwrap();
        map.check(&nand, &layout, |_, _| Ok(())).unwrap();
        // A host slot nobody maps is still caught.
        nand.program(2, &[OobEntry::new(5, 3, 0)], None).unwrap();
        assert!(map.check(&nand, &layout, |_, _| Ok(())).is_err());
    }
}
