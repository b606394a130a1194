//! SAST (Park et al. 2007, Kang et al. 2006; kast.txt section II and Fig. 1(c)):
//! set-associative log blocks with N:K log block mapping. "N log block set can be used only
//! for one data block set which consists of K number of data blocks", so a log block's
//! associativity never exceeds K.
//!
//! The mechanism:
//! - The log buffer (`ftl.log_blocks`) is split into `log_blocks / N` fixed **log-block sets**
//!   of N = `ftl.set_log_blocks` log slots each (set `i` owns slots `i·N .. (i+1)·N`); the
//!   data blocks are grouped into **data-block sets** of K = `ftl.set_data_blocks`
//!   consecutive logical blocks (data-block set `lbn / K`).
//! - A log-block set is bound to at most one data-block set at a time (it is bound while it
//!   holds a log block, and each of its log blocks records that data-block set), and a
//!   data-block set to at most one log-block set. Only the bound data-block set's pages go
//!   into the set's log blocks, appended in request order to the set's open (newest) log
//!   block, so k(L) <= K.
//! - A write to a data-block set with a bound log-block set goes to that set's open log
//!   block; when it is full the set opens another of its slots; when all N are full, the set
//!   merges its own oldest log block and reuses the slot.
//! - A write to a data-block set with no bound log-block set takes a free (unbound) log-block
//!   set; if none is free, the least recently written log-block set is **evicted**: all its
//!   log blocks are merged, oldest first, each one a log-block merge of its own (counted and
//!   timed separately, as kast.txt counts log-block merges), then the set is bound to the new
//!   data-block set. This is the thrashing kast.txt describes ("it invokes a log block
//!   thrashing when the corresponding data block set of write requests are frequently
//!   changed"), and why its log blocks are "merged before [they are] filled with data"
//!   (Fig. 8).
//! - A merge is a switch merge when the log block is a complete in-place copy of one data
//!   block, a partial merge when it is in place but incomplete, a full merge otherwise.
//!
//! Choices where the paper is open:
//! - Of a bound set whose N log blocks are full, the **oldest** log block is merged (the
//!   log blocks of a set are written in request order, so the oldest holds the pages most
//!   likely rewritten since: its merge copies the least).
//! - The evicted set is the **least recently written** one (the time of its newest page);
//!   ties go to the lowest set. LRU is the usual replacement of a set-associative cache,
//!   the analogy kast.txt draws.
//! - `log_blocks` must be a multiple of N (a config error otherwise): sets are fixed, none is
//!   smaller.
//! - A log-block set that holds no log block any more (all erased with no valid page left) is
//!   free again.
//!
//! Earlier versions handed log blocks one at a time from a shared pool to any number of sets
//! and evicted one log block at a time. No paper describes that scheme (kast.txt and its
//! sources fix the log-block sets), and it hides the thrashing of fixed sets, so it is gone.
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
        /// Log blocks (the log buffer); kast.txt's experiments use 32. A multiple of `ftl.set_log_blocks`.
        log_blocks: u32 = 32, unit "blocks", range 1 ..= 65_536;
        /// Data blocks per data-block set (K): the largest associativity of a log block.
        set_data_blocks: u32 = 16, unit "blocks", range 1 ..= 65_536;
        /// Log blocks per log-block set (N); must divide `ftl.log_blocks`.
        set_log_blocks: u32 = 16, unit "blocks", range 1 ..= 65_536;
    }
}

/// Registry entry of SAST.
pub const SAST_ENTRY: FtlEntry = super::entry::<SastConfig>(
    "SAST log-buffer FTL: fixed sets of N log blocks, each bound to one set of K data blocks (kast.txt)",
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

impl Sast {
    /// Log blocks per log-block set (N).
    fn n(&self) -> usize {
        self.cfg.set_log_blocks as usize
    }

    /// Number of log-block sets.
    fn sets(&self, core: &Core) -> usize {
        core.logs.len() / self.n()
    }

    /// The log slots of log-block set `set`.
    fn set_slots(&self, set: usize) -> std::ops::Range<usize> {
        set * self.n()..(set + 1) * self.n()
    }

    /// The allocated log slots of `set`, oldest first.
    fn allocated(&self, core: &Core, set: usize) -> Vec<usize> {
        let mut slots: Vec<usize> = self
            .set_slots(set)
            .filter(|&s| core.logs[s].is_some())
            .collect();
        slots.sort_by_key(|&s| (core.log(s).opened_at, s));
        slots
    }

    /// The data-block set `set` is bound to: that of its log blocks (none when it has none).
    fn bound(&self, core: &Core, set: usize) -> Option<u32> {
        self.set_slots(set)
            .find_map(|s| core.logs[s].as_ref().map(|l| l.group))
    }

    /// When `set` was last written (its newest page).
    fn last_write(&self, core: &Core, set: usize) -> u64 {
        self.set_slots(set)
            .filter_map(|s| core.logs[s].as_ref().map(|l| l.last_write))
            .max()
            .unwrap_or(0)
    }

    /// Merges every log block of `set`, oldest first, each as a merge of its own.
    fn evict(&self, core: &mut Core, ctx: &mut FtlCtx<'_>, set: usize) -> Result<(), SimError> {
        for slot in self.allocated(core, set) {
            // A merge may already have erased a later log block left with no valid page.
            if core.logs[slot].is_some() {
                core.reclaim(ctx, slot, MergeMode::Any)?;
            }
        }
        Ok(())
    }
}

impl Placement for Sast {
    fn place(
        &mut self,
        core: &mut Core,
        ctx: &mut FtlCtx<'_>,
        lpn: u32,
    ) -> Result<usize, SimError> {
        let dset = core.lbn(lpn) / self.cfg.set_data_blocks;
        let sets = self.sets(core);
        let set = match (0..sets).find(|&i| self.bound(core, i) == Some(dset)) {
            Some(set) => {
                let mine = self.allocated(core, set);
                let open = *mine.last().expect("a bound set holds a log block");
                if !core.is_full(open) {
                    return Ok(open);
                }
                if mine.len() >= self.n() {
                    core.reclaim(ctx, mine[0], MergeMode::Any)?;
                }
                set
            }
            None => match (0..sets).find(|&i| self.bound(core, i).is_none()) {
                Some(set) => set,
                None => {
                    let victim = (0..sets)
                        .min_by_key(|&i| (self.last_write(core, i), i))
                        .ok_or_else(|| core.bug("SAST has no log-block set".into()))?;
                    self.evict(core, ctx, victim)?;
                    victim
                }
            },
        };
        let slot = self
            .set_slots(set)
            .find(|&s| core.logs[s].is_none())
            .ok_or_else(|| core.bug(format!("SAST log-block set {set} has no free slot")))?;
        core.open_log_at(slot, LogKind::Random, dset)
    }

    /// Each log block holds pages of its set's bound data-block set only, a data-block set is
    /// bound to one log-block set at most, a set holds at most N log blocks, and only a set's
    /// newest log block has free pages (its log blocks are written in request order).
    fn check(&self, core: &Core) -> Result<(), String> {
        if core.logs.len() % self.n() != 0 {
            return Err(format!(
                "{} log slots are not sets of {}",
                core.logs.len(),
                self.n()
            ));
        }
        let mut bound_to: Vec<(u32, usize)> = Vec::new();
        for set in 0..self.sets(core) {
            let Some(dset) = self.bound(core, set) else {
                continue;
            };
            if let Some(&(_, other)) = bound_to.iter().find(|&&(d, _)| d == dset) {
                return Err(format!(
                    "SAST data-block set {dset} is bound to log-block sets {other} and {set}"
                ));
            }
            bound_to.push((dset, set));
            let mine = self.allocated(core, set);
            if mine.len() > self.n() {
                return Err(format!(
                    "SAST log-block set {set} holds {} log blocks",
                    mine.len()
                ));
            }
            for (i, &s) in mine.iter().enumerate() {
                let log = core.log(s);
                if log.group != dset {
                    return Err(format!(
                        "SAST log slot {s} of set {set} (bound to data-block set {dset}) \
                         belongs to data-block set {}",
                        log.group
                    ));
                }
                if let Some(&(l, _)) = log
                    .assoc
                    .iter()
                    .find(|&&(l, _)| l / self.cfg.set_data_blocks != dset)
                {
                    return Err(format!(
                        "SAST log slot {s} of data-block set {dset} holds data block {l}"
                    ));
                }
                if i + 1 < mine.len() && !core.is_full(s) {
                    return Err(format!(
                        "SAST log slot {s} of set {set} has free pages but is not its newest"
                    ));
                }
            }
        }
        Ok(())
    }
}

impl registry::FtlSettings for SastConfig {
    fn checked(config: &ExperimentConfig) -> Result<Self, ConfigError> {
        let cfg: SastConfig = super::checked(config)?;
        let (total, n) = (cfg.log_blocks, cfg.set_log_blocks);
        if total % n != 0 {
            let divisors: Vec<String> = (1..=total)
                .filter(|d| total % d == 0)
                .map(|d| d.to_string())
                .collect();
            return Err(ConfigError::invalid(
                "ftl.set_log_blocks",
                n,
                format!(
                    "the {total} log blocks (`ftl.log_blocks`) are split into fixed sets of \
                     `ftl.set_log_blocks` log blocks, so it must divide them"
                ),
                format!("a divisor of {total}: {}", divisors.join(", ")),
            ));
        }
        Ok(cfg)
    }
}
