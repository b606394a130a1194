//! Power-loss recovery of the page-mapping FTL (see the module docs of `pagemap` and
//! `ftl/mapping/recovery.rs`).

use super::PageMap;
use crate::ftl::mapping::recovery::recover_page_map;
use crate::ftl::mapping::RecoveryScan;
use crate::nand::Nand;
use crate::SimError;

impl PageMap {
    pub(super) fn rebuild(
        &mut self,
        nand: &mut Nand,
        scan: &mut RecoveryScan,
    ) -> Result<(), SimError> {
        // Host units are numbered by `units_written`: the next one gets a higher number than
        // any copy on flash, so it wins the next recovery's scan.
        self.units_written = recover_page_map(
            nand,
            scan,
            self.sizing.logical_units,
            |_, _| false,
            &mut self.map,
            &mut self.blocks,
            "pagemap",
        )?;
        Ok(())
    }
}
