//! BAST (Kim et al. 2002, kast.txt section II): block-associative log blocks. Each log block
//! belongs to one data block; its pages are appended in write order. A write to a data block
//! without a log block takes a free one, or reclaims the least recently written log block.
//! A full log block is merged before the next write to it.
//!
//! Merges: kast.txt section II names three merges for the log-buffer FTLs it compares, "full
//! merge, partial merge and switch merge [4]. The partial merge and switch merge can be
//! possible only when all the pages within the log block are written sequentially at the
//! page offset determined by their logical page address", and says nothing that excludes
//! BAST. So, by default (`ftl.partial_merge = true`), a log block is switched when it is a
//! complete in-place copy of its data block, **partially merged** when it is in place but
//! incomplete (a victim evicted before it filled up: the missing pages are copied in from
//! the data block, which is then erased), and fully merged otherwise. Kim et al. 2002's
//! original BAST knows only the switch and the full merge: `ftl.partial_merge = false`
//! gives that (an in-place incomplete log block is then fully merged).
//!
//! Choice: the victim when no log block is free is the least recently written one (the
//! papers say "one of the log blocks"); ties go to the lowest slot.

use super::core::{Core, LogKind, MergeMode};
use super::{LogBlockSettings, Placement};
use crate::config::{ConfigError, ExperimentConfig};
use crate::ftl::registry;
use crate::ftl::registry::FtlEntry;
use crate::ftl::FtlCtx;
use crate::settings;
use crate::SimError;

settings! {
    /// BAST, the block-associative log-buffer FTL (`[ftl]` with `name = "bast"`).
    pub struct BastConfig in "ftl" {
        /// FTL name.
        name: String = "bast".into(), unit "";
        /// Log blocks (the log buffer); kast.txt's experiments use 32.
        log_blocks: u32 = 32, unit "blocks", range 1 ..= 65_536;
        /// Partial merges of in-place log blocks evicted before they fill up (kast.txt section II); false: switch or full merges only (Kim et al. 2002).
        partial_merge: bool = true, unit "";
    }
}

/// Registry entry of BAST.
pub const BAST_ENTRY: FtlEntry = super::entry::<BastConfig>(
    "BAST log-buffer FTL: one log block per data block, switch, partial or full merges (kast.txt)",
);

impl LogBlockSettings for BastConfig {
    type Policy = Bast;
    const NAME: &'static str = "bast";
    fn log_blocks(&self) -> u32 {
        self.log_blocks
    }
    fn max_associativity(&self, _pages_per_block: u32) -> u32 {
        1
    }
    fn into_policy(self) -> Bast {
        Bast {
            mode: if self.partial_merge {
                MergeMode::Any
            } else {
                MergeMode::SwitchOrFull
            },
        }
    }
}

/// BAST's placement.
pub struct Bast {
    /// The merges a reclaimed log block may get (`ftl.partial_merge`).
    mode: MergeMode,
}

impl Placement for Bast {
    fn place(
        &mut self,
        core: &mut Core,
        ctx: &mut FtlCtx<'_>,
        lpn: u32,
    ) -> Result<usize, SimError> {
        let lbn = core.lbn(lpn);
        let own = core.slots().find(|&s| core.log(s).group == lbn);
        if let Some(slot) = own {
            if !core.is_full(slot) {
                return Ok(slot);
            }
            core.reclaim(ctx, slot, self.mode)?;
        }
        if core.free_slot().is_none() {
            let victim = core
                .slots()
                .min_by_key(|&s| core.log(s).last_write)
                .ok_or_else(|| core.bug("no log block to reclaim".into()))?;
            core.reclaim(ctx, victim, self.mode)?;
        }
        core.open_log(LogKind::Random, lbn)
    }

    fn check(&self, core: &Core) -> Result<(), String> {
        for s in core.slots() {
            let log = core.log(s);
            if log.assoc.iter().any(|&(l, _)| l != log.group) {
                return Err(format!(
                    "BAST log slot {s} of data block {} holds others: {:?}",
                    log.group, log.assoc
                ));
            }
        }
        Ok(())
    }
}

impl registry::FtlSettings for BastConfig {
    fn checked(config: &ExperimentConfig) -> Result<Self, ConfigError> {
        super::checked(config)
    }
}
