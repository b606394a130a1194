//! FAST (Lee et al. 2007, kast.txt section II): fully associative random log blocks (RLBs)
//! written in request order, plus one sequential log block (SLB).
//!
//! - A write at page offset 0 goes to a new SLB; the previous SLB is merged first (switch
//!   when complete, partial when in place but incomplete, full when some page was rewritten
//!   elsewhere in the meantime).
//! - The next page in sequence of the SLB's data block is appended to the SLB; any other
//!   write to that data block merges the SLB first and goes to the RLBs.
//! - Other writes append to the current RLB; when every RLB is full, the oldest one
//!   (round-robin, as FAST's paper) is fully merged: every data block it holds a valid page
//!   of is rebuilt, taking that block's pages from every log block (so no merged page stays
//!   valid in another log block).
//!
//! Choice: of `ftl.log_blocks`, one slot is the SLB's, the rest are RLBs (at least 2 log
//! blocks).

use super::core::{Core, LogKind, MergeMode};
use super::{LogBlockSettings, Placement};
use crate::config::{ConfigError, ExperimentConfig};
use crate::ftl::registry;
use crate::ftl::registry::FtlEntry;
use crate::ftl::FtlCtx;
use crate::settings;
use crate::SimError;

settings! {
    /// FAST, the fully associative log-buffer FTL (`[ftl]` with `name = "fast"`).
    pub struct FastConfig in "ftl" {
        /// FTL name.
        name: String = "fast".into(), unit "";
        /// Log blocks: one sequential log block and the rest random log blocks; kast.txt's experiments use 32.
        log_blocks: u32 = 32, unit "blocks", range 2 ..= 65_536;
    }
}

/// Registry entry of FAST.
pub const FAST_ENTRY: FtlEntry = super::entry::<FastConfig>("FAST log-buffer FTL: fully associative random log blocks and one sequential log block (kast.txt)");

impl LogBlockSettings for FastConfig {
    type Policy = Fast;
    const NAME: &'static str = "fast";
    fn log_blocks(&self) -> u32 {
        self.log_blocks
    }
    fn max_associativity(&self, pages_per_block: u32) -> u32 {
        pages_per_block
    }
    fn into_policy(self) -> Fast {
        Fast
    }
}

/// FAST's placement.
pub struct Fast;

impl Fast {
    fn slb(core: &Core) -> Option<usize> {
        core.slots()
            .find(|&s| core.log(s).kind == LogKind::Sequential)
    }

    fn random_log(&mut self, core: &mut Core, ctx: &mut FtlCtx<'_>) -> Result<usize, SimError> {
        let current = core
            .slots()
            .filter(|&s| core.log(s).kind == LogKind::Random && !core.is_full(s))
            .max_by_key(|&s| core.log(s).opened_at);
        if let Some(s) = current {
            return Ok(s);
        }
        let randoms = core
            .slots()
            .filter(|&s| core.log(s).kind == LogKind::Random)
            .count();
        if randoms + 1 >= core.logs.len() {
            let oldest = core
                .slots()
                .filter(|&s| core.log(s).kind == LogKind::Random)
                .min_by_key(|&s| core.log(s).opened_at)
                .ok_or_else(|| core.bug("no random log block to merge".into()))?;
            core.reclaim(ctx, oldest, MergeMode::Any)?;
        }
        core.open_log(LogKind::Random, 0)
    }
}

impl Placement for Fast {
    fn place(
        &mut self,
        core: &mut Core,
        ctx: &mut FtlCtx<'_>,
        lpn: u32,
    ) -> Result<usize, SimError> {
        let (lbn, off) = (core.lbn(lpn), core.offset(lpn));
        let slb = Self::slb(core);
        if off == 0 {
            if let Some(s) = slb {
                core.reclaim(ctx, s, MergeMode::Any)?;
            }
            return core.open_log(LogKind::Sequential, lbn);
        }
        if let Some(s) = slb.filter(|&s| core.log(s).group == lbn) {
            if core.log(s).written == off {
                return Ok(s);
            }
            core.reclaim(ctx, s, MergeMode::Any)?;
        }
        self.random_log(core, ctx)
    }

    fn check(&self, core: &Core) -> Result<(), String> {
        let slbs = core
            .slots()
            .filter(|&s| core.log(s).kind == LogKind::Sequential)
            .count();
        if slbs > 1 {
            return Err(format!("FAST has {slbs} sequential log blocks"));
        }
        Ok(())
    }
}

impl registry::FtlSettings for FastConfig {
    fn checked(config: &ExperimentConfig) -> Result<Self, ConfigError> {
        super::checked(config)
    }
}
