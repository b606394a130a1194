//! Power-loss recovery of RTGC (see the module docs of `rtgc` and
//! `ftl/mapping/recovery.rs`).

use super::Rtgc;
use crate::ftl::mapping::recovery::{in_partly_written_block, recover_page_map};
use crate::ftl::mapping::{RecoveryScan, Stream};
use crate::nand::Nand;
use crate::SimError;

impl Rtgc {
    pub(super) fn rebuild(
        &mut self,
        nand: &mut Nand,
        scan: &mut RecoveryScan,
    ) -> Result<(), SimError> {
        let ppb = self.layout.pages_per_block;
        // A GC copy and its victim page carry the same sequence number: the copy (in a
        // partly written block, the die's GC block) wins.
        self.pages_written = recover_page_map(
            nand,
            scan,
            self.sizing.logical_pages,
            in_partly_written_block,
            &mut self.map,
            &mut self.blocks,
            "rtgc",
        )?;
        // Each die's partly written blocks (its host and GC blocks at the cut; which was
        // which does not matter for the data) are its host and GC blocks again, fullest
        // first; any further one stays closed.
        for die in 0..self.layout.dies() {
            let mut partly: Vec<u32> = (0..self.layout.blocks())
                .filter(|&b| self.layout.die_of(b) == die)
                .filter(|&b| (1..ppb).contains(&nand.block(b).write_ptr))
                .collect();
            partly.sort_by_key(|&b| (std::cmp::Reverse(nand.block(b).write_ptr), b));
            if let Some(&b) = partly.first() {
                self.blocks.reopen(b, Stream::Host, 0);
                self.dies[die as usize].host = b;
            }
            if let Some(&b) = partly.get(1) {
                self.blocks.reopen(b, Stream::Gc, 0);
                self.dies[die as usize].gc = b;
            }
        }
        Ok(())
    }
}
