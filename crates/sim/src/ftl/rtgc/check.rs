//! Invariant checks of RTGC against the NAND state: the map and the block bookkeeping agree
//! with the flash, each die's host and GC blocks are open on it, a die keeps its reserve
//! block, and a block awaiting its collector's erase is a victim.

use super::Rtgc;
use crate::flash::NIL;
use crate::ftl::mapping::BlockState;
use crate::nand::Nand;

impl Rtgc {
    pub(super) fn check(&self, nand: &Nand) -> Result<(), String> {
        self.map.check(nand, &self.layout, |lpn, unit| {
            Err(format!("L2P maps page {lpn} to unprogrammed page {unit}"))
        })?;
        self.blocks.check_with_victims(
            |b| nand.block(b).valid_units,
            |b| {
                self.pending_erase[b as usize]
                    || self.active.iter().flatten().any(|r| r.victim == b)
            },
        )?;
        for (b, &pending) in self.pending_erase.iter().enumerate() {
            if pending && self.blocks.state(b as u32) != BlockState::Victim {
                return Err(format!("block {b} awaits its erase but is not a victim"));
            }
        }
        for die in 0..self.layout.dies() {
            let d = &self.dies[die as usize];
            for (what, block) in [("host", d.host), ("GC", d.gc)] {
                if block != NIL
                    && (self.layout.die_of(block) != die
                        || !matches!(self.blocks.state(block), BlockState::Open { .. }))
                {
                    return Err(format!("die {die}: {what} block {block} is not open on it"));
                }
            }
            if d.host != NIL && self.blocks.free_in_die(die, false) == 0 {
                let full = nand.block(d.host).write_ptr == self.layout.pages_per_block;
                if full {
                    return Err(format!("die {die}: host block full and no free block"));
                }
            }
        }
        Ok(())
    }
}
