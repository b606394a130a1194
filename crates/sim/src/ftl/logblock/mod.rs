//! Log-buffer (hybrid) FTLs of kast.txt: BAST, FAST, SAST and KAST on one shared machinery.
//!
//! Data blocks are block-mapped (page `i` of a logical block lives at page `i` of its data
//! block); updates go to a small pool of log blocks (`ftl.log_blocks`) written in append order
//! and page-mapped. When the pool is full a log block is merged back ([`core`]): a **switch**
//! merge when it is a complete in-place copy of one data block (it becomes the data block),
//! a **partial** merge when it is in place but incomplete (the rest is copied in first), a
//! **full** merge otherwise (every data block it holds pages of is rebuilt in a free block;
//! its cost is N·k·C_copy + (k+1)·C_erase for associativity k, kast.txt section II).
//!
//! The four FTLs differ only in where a page goes and which log block is reclaimed: that is
//! the [`Placement`] each implements (`bast.rs`, `fast.rs`, `sast.rs`, `kast.rs`).
//!
//! Choices common to all four (the papers leave them open):
//! - the mapping unit is the flash page; a host write of part of a page reads the old page
//!   first (read-modify-write) and writes the whole page to a log block;
//! - host writes complete when their page is programmed (no write buffer), so a flush has
//!   nothing to wait for; a merge's commands run before the write that caused it;
//! - one free block is kept out of the logical space as the destination of full merges;
//! - A(L), the data blocks associated with log block L, are those with a *valid* page in L
//!   (a page rewritten elsewhere leaves A(L), kast.txt Fig. 3's R(i+1) -> R(i));
//! - a log block reclaimed with no valid page is a merge of associativity 0 (one erase, the
//!   formula at k = 0): kast.txt counts log-block merges, and a log block returns to the free
//!   state only through a merge (Fig. 3); `dead_log_erases` in the FTL's report counts them;
//! - merges copy pages by copyback within a plane: kast.txt's C_copy is a page read plus a
//!   page program, with no bus transfer (a copy across planes reads and programs).

mod bast;
pub mod core;
mod fast;
mod kast;
mod sast;

pub use bast::{BastConfig, BAST_ENTRY};
pub use fast::{FastConfig, FAST_ENTRY};
pub use kast::{KastConfig, KAST_ENTRY};
pub use sast::{SastConfig, SAST_ENTRY};

use self::core::Core;
use super::merge::MergeProfile;
use super::registry::{self, FtlEntry, FtlSettings};
use super::{Ftl, FtlCtx};
use crate::config::settings::Documented;
use crate::config::{ConfigError, ExperimentConfig};
use crate::host::{Op, SubRequest};
use crate::nand::Nand;
use crate::SimError;

/// Registry names of the log-block FTLs.
pub const NAMES: [&str; 4] = ["bast", "fast", "sast", "kast"];

/// Bytes of state a log-block FTL holds on this device (its page map and block roles), for
/// the memory check before a run.
pub fn estimate_state_bytes(config: &crate::config::ExperimentConfig) -> u64 {
    let g = &config.geometry;
    g.total_pages() * 4 + g.total_blocks() * 8
}

/// What each log-block FTL's settings give the shared machinery: its name, the log blocks,
/// the largest associativity a merge may reach, its placement.
pub trait LogBlockSettings:
    FtlSettings + Documented + serde::de::DeserializeOwned + 'static
{
    /// The placement policy these settings drive.
    type Policy: Placement + 'static;
    /// Registry name.
    const NAME: &'static str;
    /// Log blocks (`ftl.log_blocks`).
    fn log_blocks(&self) -> u32;
    /// Largest associativity of a merged log block, on blocks of `pages_per_block` pages.
    fn max_associativity(&self, pages_per_block: u32) -> u32;
    /// The placement policy, owning the settings.
    fn into_policy(self) -> Self::Policy;
}

/// [`FtlSettings::checked`] of a log-block FTL: parsed, each field's range checked, and the log blocks leave a logical space on the device.
pub fn checked<S: LogBlockSettings>(config: &ExperimentConfig) -> Result<S, ConfigError> {
    let cfg: S = registry::parse_section(config)?;
    cfg.check_ranges()?;
    core::logical_blocks(config, cfg.log_blocks())?;
    Ok(cfg)
}

/// Builds a log-block FTL: the shared core, the bound on merge associativity (at most a
/// block's pages) with its predicted worst merge, and the placement.
fn build<S: LogBlockSettings>(config: &ExperimentConfig) -> Result<Box<dyn Ftl>, ConfigError> {
    let cfg = S::checked(config)?;
    let settings = serde_json::to_value(&cfg).unwrap_or_default();
    let mut core = Core::new(config, S::NAME, cfg.log_blocks())?;
    let k = cfg.max_associativity(core.n).min(core.n);
    core.max_merge_associativity = Some(k);
    core.predicted_worst_ns = Some(core.worst_merge_ns(&config.timing, k));
    Ok(Box::new(LogBlockFtl {
        core,
        policy: cfg.into_policy(),
        name: S::NAME,
        settings,
    }))
}

/// The registry entry of the log-block FTL with settings `S`.
pub const fn entry<S: LogBlockSettings>(summary: &'static str) -> FtlEntry {
    registry::settings_entry::<S>(S::NAME, summary, build::<S>)
}

/// Where a log-block FTL puts a page, and which log block it reclaims to make room.
pub trait Placement {
    /// Returns the log slot that takes a host write of `lpn` (with a free page), merging or
    /// converting log blocks first as the FTL's rules say.
    fn place(&mut self, core: &mut Core, ctx: &mut FtlCtx<'_>, lpn: u32)
        -> Result<usize, SimError>;
    /// FTL-specific invariants (on top of the shared ones).
    fn check(&self, _core: &Core) -> Result<(), String> {
        Ok(())
    }
}

/// A log-block FTL: the shared core driven by one placement policy.
pub struct LogBlockFtl<P: Placement> {
    core: Core,
    policy: P,
    name: &'static str,
    /// The resolved settings, for the report.
    settings: serde_json::Value,
}

impl<P: Placement> LogBlockFtl<P> {
    /// Pieces of a sub-request, one per page: (page, first sector, sector range in the page).
    fn pieces(&self, sub: &SubRequest) -> impl Iterator<Item = (u32, u64, std::ops::Range<usize>)> {
        let spp = self.core.sectors_per_page;
        let (first, end) = (sub.first_sector, sub.first_sector + sub.sectors);
        (first / spp..end.div_ceil(spp)).map(move |p| {
            let base = p * spp;
            let s0 = first.max(base);
            let s1 = end.min(base + spp);
            (p as u32, s0, (s0 - base) as usize..(s1 - base) as usize)
        })
    }

    fn write(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        for (lpn, _, range) in self.pieces(sub).collect::<Vec<_>>() {
            self.core
                .prepare_write(ctx, sub.id, lpn, range, sub.version)?;
            let slot = self.policy.place(&mut self.core, ctx, lpn)?;
            self.core.append_host(ctx, slot, lpn, sub.id)?;
        }
        ctx.complete(sub.id);
        Ok(())
    }
}

impl<P: Placement> Ftl for LogBlockFtl<P> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn logical_bytes(&self) -> u64 {
        u64::from(self.core.logical_blocks)
            * u64::from(self.core.n)
            * u64::from(self.core.page_bytes)
    }
    fn chop_bytes(&self) -> u32 {
        self.core.page_bytes
    }
    fn trim_unit_bytes(&self) -> u32 {
        self.core.page_bytes
    }
    fn units_per_page(&self) -> u32 {
        1
    }

    fn submit(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        match sub.op {
            Op::Read => {
                for (lpn, first, range) in self.pieces(sub).collect::<Vec<_>>() {
                    self.core
                        .read(ctx, sub.id, sub.deadline_ns, lpn, first, range)?;
                }
            }
            Op::Write => return self.write(ctx, sub),
            Op::Trim => {
                let spp = self.core.sectors_per_page;
                let first = sub.first_sector.div_ceil(spp);
                let end = (sub.first_sector + sub.sectors) / spp;
                for lpn in first..end {
                    self.core.trim(ctx, lpn as u32)?;
                }
            }
            Op::Flush => {}
        }
        ctx.complete(sub.id);
        Ok(())
    }

    fn flash_done(&mut self, ctx: &mut FtlCtx<'_>, token: u64) -> Result<(), SimError> {
        self.core.merge_command_done(ctx, token)
    }

    fn check_invariants(&self, nand: &Nand) -> Result<(), String> {
        self.core.check(nand)?;
        self.policy.check(&self.core)
    }

    fn reset_counters(&mut self, _now_ns: u64) {
        self.core.reset_use();
    }

    fn merge_profile(&self) -> Option<MergeProfile> {
        Some(MergeProfile {
            predicted_worst_blocking_ns: self.core.predicted_worst_ns,
            log_buffer: Some(self.core.log_buffer_use()),
        })
    }

    fn report(&self) -> serde_json::Value {
        serde_json::json!({
            "settings": self.settings,
            "logical_blocks": self.core.logical_blocks,
            "log_blocks": self.core.logs.len(),
            "pages_per_block": self.core.n,
            "ram_bytes": self.core.ram_bytes(),
            "dead_log_erases": self.core.dead_log_erases,
            "merges_per_log_slot": self.core.merges_per_slot,
        })
    }

    fn state_bytes(&self) -> u64 {
        self.core.map.len() as u64 * 4 + self.core.role.len() as u64 * 8 + self.core.ram_bytes()
    }
}

#[cfg(test)]
mod tests {
    use crate::config::ExperimentConfig;

    /// The error of building `sets` on kast-slc, as the user sees it.
    fn error(sets: &[&str]) -> String {
        let cfg = ExperimentConfig::with_sets("kast-slc", sets);
        let cfg = match cfg {
            Ok(cfg) => cfg,
            Err(e) => return e.to_string(),
        };
        match crate::ftl::registry::build(&cfg) {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn limits_above_the_log_blocks_mean_no_limit() {
        // KAST's default of 4 sequential log blocks with fewer log blocks.
        assert_eq!(error(&["ftl.name=\"kast\"", "ftl.log_blocks=3"]), "");
    }

    /// SAST's log buffer is split into fixed sets of N log blocks: N must divide it.
    #[test]
    fn sast_log_blocks_must_be_a_multiple_of_the_set_size() {
        // The default N = 16 with 3 or 24 log blocks.
        for (log_blocks, allowed) in [(3, "1, 3"), (24, "1, 2, 3, 4, 6, 8, 12, 24")] {
            let log_blocks = format!("ftl.log_blocks={log_blocks}");
            let message = error(&["ftl.name=\"sast\"", log_blocks.as_str()]);
            assert!(message.contains("ftl.set_log_blocks"), "{message}");
            assert!(message.contains(allowed), "{message}");
        }
        let message = error(&[
            "ftl.name=\"sast\"",
            "ftl.log_blocks=32",
            "ftl.set_log_blocks=5",
        ]);
        assert!(message.contains("ftl.set_log_blocks"), "{message}");
        assert!(message.contains("1, 2, 4, 8, 16, 32"), "{message}");
        for n in [1, 2, 4, 8, 16, 32] {
            let n = format!("ftl.set_log_blocks={n}");
            let sets = ["ftl.name=\"sast\"", "ftl.log_blocks=32", n.as_str()];
            assert_eq!(error(&sets), "", "{n}");
        }
    }

    #[test]
    fn bad_settings_name_the_field_and_the_range() {
        for (sets, field, range) in [
            (
                &["ftl.name=\"bast\"", "ftl.log_blocks=0"][..],
                "ftl.log_blocks",
                "1 ..= 65536",
            ),
            (
                &["ftl.name=\"fast\"", "ftl.log_blocks=1"],
                "ftl.log_blocks",
                "2 ..= 65536",
            ),
            (
                &["ftl.name=\"kast\"", "ftl.log_blocks=60000"],
                "ftl.log_blocks",
                "",
            ),
        ] {
            let message = error(sets);
            assert!(message.contains(field), "{sets:?}: {message}");
            assert!(message.contains(range), "{sets:?}: {message}");
        }
    }
}
