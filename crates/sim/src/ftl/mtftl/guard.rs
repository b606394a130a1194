//! The lock discipline of the task code: a task changes shared state only while it holds the
//! semaphore that guards it. Checked in debug builds and tests (the kernel tracks who holds
//! each lock, [`crate::rtos::Held`]); release builds compile the checks away.
//!
//! | shared state | semaphore |
//! |---|---|
//! | mapping table; validity of units, valid counts and closed-block index it implies | mapping |
//! | free blocks, working and GC blocks, victim choice, working blocks per die | metadata |
//! | a NAND command to a die | that die's NAND semaphore (or the device's) |
//!
//! Every change goes through the helpers below (or asks [`Core::must_hold`] first).

use super::Core;
use crate::ftl::FtlCtx;
use crate::nand::{Ppn, UnitAddr};
use crate::SimError;

/// What a task is about to change (read by the checks of debug builds only).
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(debug_assertions), allow(dead_code))]
pub(super) enum Shared {
    Mapping,
    Metadata,
    /// A command to the die holding this page.
    Nand(Ppn),
}

impl Core {
    /// Fails (debug builds) unless the stepping task holds the semaphore guarding `what`.
    #[cfg(debug_assertions)]
    pub(super) fn must_hold(&self, what: Shared) -> Result<(), SimError> {
        let (sem, name) = match what {
            Shared::Mapping => (self.sems.map, "changed the mapping table"),
            Shared::Metadata => (self.sems.meta, "changed the block metadata"),
            Shared::Nand(ppn) => (
                self.sems.nand[self.lock_of(ppn)],
                "sent a command to the NAND",
            ),
        };
        if self.held.contains(&sem) {
            return Ok(());
        }
        let held: Vec<&str> = self.held.iter().map(|&s| self.sem_name(s)).collect();
        Err(self.bug(format!(
            "lock discipline: task {} {name} without holding the `{}` semaphore (it holds [{}])",
            self.stepping,
            self.sem_name(sem),
            held.join(", ")
        )))
    }

    /// Release builds do not check.
    #[cfg(not(debug_assertions))]
    #[inline(always)]
    pub(super) fn must_hold(&self, _what: Shared) -> Result<(), SimError> {
        Ok(())
    }

    #[cfg(debug_assertions)]
    fn sem_name(&self, sem: crate::rtos::SemId) -> &'static str {
        match sem {
            s if s == self.sems.map => "mapping",
            s if s == self.sems.meta => "metadata",
            s if s == self.sems.host_queue => "host-queue",
            _ => "nand",
        }
    }

    /// Maps `lpn` to `unit` (mapping semaphore).
    pub(super) fn remap(&mut self, lpn: u32, unit: UnitAddr) -> Result<(), SimError> {
        self.must_hold(Shared::Mapping)?;
        self.map.set(lpn, unit);
        Ok(())
    }

    /// Unmaps `lpn`, giving its old slot (mapping semaphore).
    pub(super) fn unmap(&mut self, lpn: u32) -> Result<Option<UnitAddr>, SimError> {
        self.must_hold(Shared::Mapping)?;
        Ok(self.map.take(lpn))
    }

    /// Marks a programmed slot invalid and updates its block's valid count (mapping
    /// semaphore).
    pub(super) fn invalidate(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        unit: UnitAddr,
    ) -> Result<(), SimError> {
        self.must_hold(Shared::Mapping)?;
        self.map.invalidate_programmed(ctx, &mut self.blocks, unit)
    }
}

#[cfg(all(test, debug_assertions))]
mod tests {
    use super::*;
    use crate::config::ExperimentConfig;
    use crate::ftl::mtftl::MtFtl;

    fn ftl() -> MtFtl {
        let cfg = ExperimentConfig::with_sets(
            "mt-board",
            &[
                "ftl.name=\"mt-ftl\"",
                "ftl.nand_lock=\"per-die\"",
                "geometry.blocks_per_plane=64",
            ],
        )
        .expect("valid settings");
        MtFtl::new(&cfg).expect("an FTL")
    }

    #[test]
    fn a_change_is_refused_unless_its_semaphore_is_held() {
        let mut f = ftl();
        let core = &mut f.core;
        let die1_page = core.layout.ppn(core.layout.blocks() - 1, 0);
        let die0_page = core.layout.ppn(0, 0);
        core.stepping = 2;
        core.held = vec![core.sems.meta, core.sems.nand[0]];
        assert!(core.must_hold(Shared::Metadata).is_ok());
        assert!(core.must_hold(Shared::Nand(die0_page)).is_ok());
        let e = core.must_hold(Shared::Mapping).unwrap_err().to_string();
        assert!(
            e.contains("task 2 changed the mapping table without holding the `mapping` semaphore")
                && e.contains("[metadata, nand]"),
            "{e}"
        );
        let e = core
            .must_hold(Shared::Nand(die1_page))
            .unwrap_err()
            .to_string();
        assert!(e.contains("sent a command to the NAND"), "{e}");
        assert!(core.remap(0, 0).is_err() && core.unmap(0).is_err());
        core.held = vec![core.sems.map];
        assert!(core.remap(0, 0).is_ok());
        assert_eq!(core.unmap(0).unwrap(), Some(0));
        assert!(core.must_hold(Shared::Metadata).is_err());
    }
}
