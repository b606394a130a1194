//! Invariant checks of WAO-GC against the NAND state, including its guarantee: a die that is
//! collecting still has room in its reserved block for the victim's remaining valid pages and
//! one host write per remaining step (n + v <= P).

use super::config::steps_for;
use super::WaoGc;
use crate::flash::NIL;
use crate::ftl::mapping::BlockState;
use crate::nand::Nand;

impl WaoGc {
    pub(super) fn check(&self, nand: &Nand) -> Result<(), String> {
        self.map.check(nand, &self.layout, |lpn, unit| {
            Err(format!("L2P maps page {lpn} to unprogrammed page {unit}"))
        })?;
        let collecting = |b| {
            self.dies
                .iter()
                .any(|d| d.collection.is_some_and(|c| c.victim == b))
        };
        self.blocks
            .check_with_victims(|b| nand.block(b).valid_units, collecting)?;
        for die in 0..self.layout.dies() {
            self.check_die(nand, die)?;
        }
        Ok(())
    }

    fn check_die(&self, nand: &Nand, die: u32) -> Result<(), String> {
        let d = &self.dies[die as usize];
        let free = self.blocks.free_in_die(die, false);
        if d.open != NIL
            && (self.layout.die_of(d.open) != die
                || !matches!(self.blocks.state(d.open), BlockState::Open { .. }))
        {
            return Err(format!(
                "die {die}: open block {} is not open on it",
                d.open
            ));
        }
        let Some(col) = d.collection else {
            if free == 0 {
                return Err(format!(
                    "die {die}: no reserved free block and no collection"
                ));
            }
            return Ok(());
        };
        if free != 0 {
            return Err(format!(
                "die {die} collects with {free} free blocks: GC started before the reserve"
            ));
        }
        let p = self.layout.pages_per_block;
        let remaining = (col.scan..p)
            .filter(|&i| nand.is_valid(self.layout.ppn(col.victim, i)))
            .count() as u32;
        let used = nand.block(d.open).write_ptr;
        let needed = remaining + steps_for(remaining, col.copies_per_step);
        if used + needed > p {
            return Err(format!(
                "die {die}: reserved block has {} free pages, the collection of block {} needs \
                 {remaining} copies and {} more host writes",
                p - used,
                col.victim,
                needed - remaining
            ));
        }
        Ok(())
    }
}
