//! Power-loss recovery of the page-mapping FTL (see the module docs of `pagemap` and
//! `ftl/mapping/recovery.rs`).

use super::PageMap;
use crate::ftl::mapping::recovery::{mark_newest_valid, newest_copies};
use crate::ftl::mapping::{RecoveryScan, UNMAPPED};
use crate::nand::Nand;
use crate::SimError;

impl PageMap {
    pub(super) fn rebuild(
        &mut self,
        nand: &mut Nand,
        scan: &mut RecoveryScan,
    ) -> Result<(), SimError> {
        let found = newest_copies(nand, scan, self.sizing.logical_units, |_| false)?;
        scan.units_recovered = mark_newest_valid(nand, &found, "pagemap")?;
        for (lpn, &unit) in found.slot.iter().enumerate() {
            if unit != UNMAPPED {
                self.map.set(lpn as u32, unit);
            }
        }
        scan.count_blocks(nand);
        // Host units are numbered by `units_written`: the next one gets a higher number than
        // any copy on flash, so it wins the next recovery's scan.
        self.units_written = found.max_seq;
        self.blocks.recover(nand, self.units_written, |_| false);
        Ok(())
    }
}
