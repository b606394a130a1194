//! SAST (Park et al. 2007, Kang et al. 2006; kast.txt section II): set-associative log
//! blocks. Data blocks are grouped in sets of `ftl.set_data_blocks` (K) consecutive logical
//! blocks; a set may hold up to `ftl.set_log_blocks` (N) log blocks, shared by its data blocks
//! only, written in request order. So a log block's associativity never exceeds K.
//!
//! - A write goes to its set's newest log block with a free page, or to a new log block of
//!   the set.
//! - When the set already has N full log blocks, its oldest one is merged.
//! - When no log block is free, the oldest log block of another set is merged (thrashing when
//!   writes move between sets, as kast.txt notes); the set's own oldest when no other set
//!   holds one.
//! - A merge is a switch or partial merge when the log block is in place, a full merge
//!   otherwise.
//!
//! Defaults: N = K = 16 (kast.txt's experiments set N = K; Fig. 8 uses K = 16).

use super::core::{Core, LogKind, MergeMode};
use super::{LogBlockSettings, Placement};
use crate::config::{ConfigError, ExperimentConfig};
use crate::ftl::registry;
use crate::ftl::registry::FtlEntry;
use crate::ftl::FtlCtx;
use crate::settings;
use crate::SimError;

settings! {
    /// SAST, the set-associative log-buffer FTL (`[ftl]` with `name = "sast"`).
    pub struct SastConfig in "ftl" {
        /// FTL name.
        name: String = "sast".into(), unit "";
        /// Log blocks (the log buffer); kast.txt's experiments use 32.
        log_blocks: u32 = 32, unit "blocks", range 1 ..= 65_536;
        /// Data blocks per set (K): the largest associativity of a log block.
        set_data_blocks: u32 = 16, unit "blocks", range 1 ..= 65_536;
        /// Log blocks a set may hold at once (N; at or above `ftl.log_blocks`: all of them).
        set_log_blocks: u32 = 16, unit "blocks", range 1 ..= 65_536;
    }
}

/// Registry entry of SAST.
pub const SAST_ENTRY: FtlEntry = super::entry::<SastConfig>(
    "SAST log-buffer FTL: N log blocks shared by a set of K data blocks (kast.txt)",
);

impl LogBlockSettings for SastConfig {
    type Policy = Sast;
    const NAME: &'static str = "sast";
    fn log_blocks(&self) -> u32 {
        self.log_blocks
    }
    fn max_associativity(&self, _pages_per_block: u32) -> u32 {
        self.set_data_blocks
    }
    fn into_policy(self) -> Sast {
        Sast { cfg: self }
    }
}

/// SAST's placement.
pub struct Sast {
    cfg: SastConfig,
}

impl Placement for Sast {
    fn place(
        &mut self,
        core: &mut Core,
        ctx: &mut FtlCtx<'_>,
        lpn: u32,
    ) -> Result<usize, SimError> {
        let set = core.lbn(lpn) / self.cfg.set_data_blocks;
        let of_set = |core: &Core| -> Vec<usize> {
            core.slots().filter(|&s| core.log(s).group == set).collect()
        };
        let mine = of_set(core);
        if let Some(&s) = mine
            .iter()
            .filter(|&&s| !core.is_full(s))
            .max_by_key(|&&s| core.log(s).opened_at)
        {
            return Ok(s);
        }
        if mine.len() as u32 >= self.cfg.set_log_blocks {
            let oldest = *mine
                .iter()
                .min_by_key(|&&s| core.log(s).opened_at)
                .expect("set has log blocks");
            core.reclaim(ctx, oldest, MergeMode::Any)?;
        } else if core.free_slot().is_none() {
            let victim = core
                .slots()
                .filter(|&s| core.log(s).group != set)
                .min_by_key(|&s| core.log(s).opened_at)
                .or_else(|| mine.iter().copied().min_by_key(|&s| core.log(s).opened_at))
                .ok_or_else(|| core.bug("no log block to reclaim".into()))?;
            core.reclaim(ctx, victim, MergeMode::Any)?;
        }
        core.open_log(LogKind::Random, set)
    }

    fn check(&self, core: &Core) -> Result<(), String> {
        for s in core.slots() {
            let log = core.log(s);
            if let Some(&(l, _)) = log
                .assoc
                .iter()
                .find(|&&(l, _)| l / self.cfg.set_data_blocks != log.group)
            {
                return Err(format!(
                    "SAST log slot {s} of set {} holds data block {l}",
                    log.group
                ));
            }
        }
        Ok(())
    }
}

impl registry::FtlSettings for SastConfig {
    fn checked(config: &ExperimentConfig) -> Result<Self, ConfigError> {
        super::checked(config)
    }
}
