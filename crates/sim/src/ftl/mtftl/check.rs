//! Invariant checks of the multi-threaded FTL against the NAND state (with nothing in flight).

use super::Core;
use crate::nand::Nand;

impl Core {
    pub(super) fn check(&self, nand: &Nand) -> Result<(), String> {
        self.map.check(nand, &self.layout, |lpn, unit| {
            Err(format!(
                "L2P maps unit {lpn} to slot {unit} of a page never programmed"
            ))
        })?;
        self.blocks.check(|b| nand.block(b).valid_units)?;
        let mut valid = vec![0u64; self.valid_on_die.len()];
        for b in 0..self.layout.blocks() {
            valid[self.layout.die_of(b) as usize] += u64::from(nand.block(b).valid_units);
        }
        if valid != self.valid_on_die {
            return Err(format!(
                "valid units per die counted {:?}, NAND holds {valid:?}",
                self.valid_on_die
            ));
        }
        self.check_open_blocks(nand)
    }

    /// Every page allocated in a working or GC block was programmed, in order, and the
    /// per-die working-block counts match the tasks' blocks.
    fn check_open_blocks(&self, nand: &Nand) -> Result<(), String> {
        let ppb = self.layout.pages_per_block;
        let mut per_die = vec![0u32; self.working_on_die.len()];
        let working = self.tasks.iter().filter_map(|t| t.working);
        // A full block may already have been collected and reused: only open ones are checked.
        for (i, b) in working.enumerate().filter(|(_, b)| b.next_page < ppb) {
            per_die[self.layout.die_of(b.block) as usize] += 1;
            let written = nand.block(b.block).write_ptr;
            if self.tasks[i].sub.is_none() && written != b.next_page {
                return Err(format!(
                    "working block {} of a task: {} pages allocated but {written} programmed",
                    b.block, b.next_page
                ));
            }
        }
        if per_die != self.working_on_die {
            return Err(format!(
                "working blocks per die {:?}, but the tasks hold {per_die:?}",
                self.working_on_die
            ));
        }
        for b in self
            .gc_blocks
            .iter()
            .flatten()
            .filter(|b| b.next_page < ppb)
        {
            let written = nand.block(b.block).write_ptr;
            if written != b.next_page {
                return Err(format!(
                    "GC block {}: {} pages allocated but {written} programmed",
                    b.block, b.next_page
                ));
            }
        }
        Ok(())
    }
}
