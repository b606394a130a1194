//! Power-loss recovery of mt-ftl and st-ftl (see the module docs of `mtftl` and
//! `ftl/mapping/recovery.rs`).

use super::Core;
use crate::ftl::mapping::recovery::recover_page_map;
use crate::ftl::mapping::RecoveryScan;
use crate::nand::Nand;
use crate::SimError;

impl Core {
    pub(super) fn rebuild(
        &mut self,
        nand: &mut Nand,
        scan: &mut RecoveryScan,
        ftl: &'static str,
    ) -> Result<(), SimError> {
        self.units_written = recover_page_map(
            nand,
            scan,
            self.sizing.logical_units,
            |_, _| false,
            &mut self.map,
            &mut self.blocks,
            ftl,
        )?;
        self.valid_on_die.fill(0);
        for b in 0..self.layout.blocks() {
            self.valid_on_die[self.layout.die_of(b) as usize] +=
                u64::from(nand.block(b).valid_units);
        }
        Ok(())
    }
}
