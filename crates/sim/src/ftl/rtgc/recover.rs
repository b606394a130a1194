//! Power-loss recovery of RTGC (see the module docs of `rtgc` and
//! `ftl/mapping/recovery.rs`).

use super::Rtgc;
use crate::ftl::mapping::recovery::{mark_newest_valid, newest_copies};
use crate::ftl::mapping::{RecoveryScan, Stream, UNMAPPED};
use crate::nand::Nand;
use crate::SimError;

impl Rtgc {
    pub(super) fn rebuild(
        &mut self,
        nand: &mut Nand,
        scan: &mut RecoveryScan,
    ) -> Result<(), SimError> {
        let ppb = self.layout.pages_per_block;
        let layout = self.layout;
        // A GC copy and its victim page carry the same sequence number: the copy (in a
        // partly written block, the die's GC block) wins.
        let found = {
            let nand_ref: &Nand = nand;
            newest_copies(nand_ref, scan, self.sizing.logical_pages, |unit| {
                (1..ppb).contains(&nand_ref.block(layout.block_of(unit)).write_ptr)
            })?
        };
        scan.units_recovered = mark_newest_valid(nand, &found, "rtgc")?;
        for (lpn, &ppn) in found.slot.iter().enumerate() {
            if ppn != UNMAPPED {
                self.map.set(lpn as u32, ppn);
            }
        }
        scan.count_blocks(nand);
        self.pages_written = found.max_seq;
        self.blocks.recover(nand, self.pages_written, |_| false);
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
