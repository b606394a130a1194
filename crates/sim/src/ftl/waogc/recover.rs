//! Power-loss recovery of WAO-GC (see the module docs of `waogc` and
//! `ftl/mapping/recovery.rs`).

use super::config::steps_for;
use super::{Collection, WaoGc};
use crate::flash::NIL;
use crate::ftl::mapping::recovery::{image_error, in_partly_written_block, recover_page_map};
use crate::ftl::mapping::{RecoveryScan, Stream};
use crate::nand::Nand;
use crate::SimError;

impl WaoGc {
    pub(super) fn rebuild(
        &mut self,
        nand: &mut Nand,
        scan: &mut RecoveryScan,
    ) -> Result<(), SimError> {
        // A GC copy and its victim page carry the same sequence number: the copy, in the
        // die's open (reserved) block, wins, so the victim keeps only what is left to move.
        self.pages_written = recover_page_map(
            nand,
            scan,
            self.sizing.logical_pages,
            in_partly_written_block,
            &mut self.map,
            &mut self.blocks,
            "wao-gc",
        )?;
        for die in 0..self.layout.dies() {
            self.rebuild_die(nand, die)?;
        }
        Ok(())
    }

    /// A die's open block is its partly written block (at most one: a die fills one block at
    /// a time; should a cut leave more, the fullest is taken and the others stay closed). A
    /// die without a free block was collecting: its open block is the reserved one, and the
    /// collection restarts on the greedy victim, whose remaining pages must fit.
    fn rebuild_die(&mut self, nand: &Nand, die: u32) -> Result<(), SimError> {
        let ppb = self.layout.pages_per_block;
        let open = (0..self.layout.blocks())
            .filter(|&b| self.layout.die_of(b) == die)
            .filter(|&b| (1..ppb).contains(&nand.block(b).write_ptr))
            .max_by_key(|&b| (nand.block(b).write_ptr, std::cmp::Reverse(b)));
        if let Some(b) = open {
            self.blocks.reopen(b, Stream::Host, 0);
            self.dies[die as usize].open = b;
        }
        if self.blocks.free_in_die(die, false) > 0 {
            return Ok(());
        }
        let Some(open) = open else {
            return Err(image_error(format!(
                "wao-gc: die {die} has neither a free block nor a partly written one: no room \
                 to continue (not an image WAO-GC wrote with these settings)"
            )));
        };
        let planes = self.blocks.planes_of(die);
        let victim = self
            .blocks
            .take_victim(planes, self.pages_written)
            .ok_or_else(|| {
                image_error(format!("wao-gc: die {die} has no free and no closed block"))
            })?;
        let valid = nand.block(victim).valid_units;
        let room = ppb - nand.block(open).write_ptr;
        let c = self.cfg.copies_per_step;
        let copies = (c..=valid.max(c))
            .find(|&k| valid + steps_for(valid, k) <= room)
            .ok_or_else(|| {
                image_error(format!(
                    "wao-gc: die {die} was collecting, but its victim (block {victim}, {valid} \
                     valid pages) does not fit the {room} free pages of its reserved block"
                ))
            })?;
        self.dies[die as usize].collection = Some(Collection {
            victim,
            scan: 0,
            copies_per_step: copies,
            steps: 0,
        });
        debug_assert_ne!(self.dies[die as usize].open, NIL);
        Ok(())
    }
}
