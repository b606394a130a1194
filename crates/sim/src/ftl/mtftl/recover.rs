//! Power-loss recovery of mt-ftl and st-ftl (see the module docs of `mtftl` and
//! `ftl/mapping/recovery.rs`).

use super::Core;
use crate::ftl::mapping::recovery::{mark_newest_valid, newest_copies};
use crate::ftl::mapping::{RecoveryScan, UNMAPPED};
use crate::nand::Nand;
use crate::SimError;

impl Core {
    pub(super) fn rebuild(
        &mut self,
        nand: &mut Nand,
        scan: &mut RecoveryScan,
        ftl: &'static str,
    ) -> Result<(), SimError> {
        let found = newest_copies(nand, scan, self.sizing.logical_units, |_| false)?;
        scan.units_recovered = mark_newest_valid(nand, &found, ftl)?;
        for (lpn, &unit) in found.slot.iter().enumerate() {
            if unit != UNMAPPED {
                self.map.set(lpn as u32, unit);
            }
        }
        scan.count_blocks(nand);
        self.units_written = found.max_seq;
        self.blocks.recover(nand, self.units_written, |_| false);
        self.valid_on_die.fill(0);
        for b in 0..self.layout.blocks() {
            self.valid_on_die[self.layout.die_of(b) as usize] +=
                u64::from(nand.block(b).valid_units);
        }
        Ok(())
    }
}
