//! Settings of the demand-paged FTLs and their checks against the device.

use crate::config::{ConfigError, ExperimentConfig, Geometry};
use crate::ftl::mapping::{headroom, logical_units, units_per_page, VictimPolicy};
use crate::settings;
use serde::{Deserialize, Serialize};

/// Which FTL execution times the map cache charges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExecTimeModel {
    /// fmmu.txt Fig. 10's measured times ([`super::exec_time::ExecTime::fig10`]).
    Paper,
    /// Zero FTL time, translation traffic included (fmmu.txt 5.3).
    Ideal,
}

/// How FMMU's hardware map unit picks its next piece of work (fmmu.txt 4.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArbiterKind {
    /// Weighted round robin over the response, host-request and GC-request queues.
    Wrr,
    /// In the order the handlers ran.
    Fifo,
}

settings! {
    /// A demand-paged FTL (`[ftl]` with `name = "dftl"`).
    pub struct DemandConfig in "ftl" {
        /// FTL name.
        name: String = "dftl".into(), unit "";
        /// Share of the physical capacity kept as spare (logical = physical x (1 - over_provisioning)).
        over_provisioning: f64 = 0.2, unit "fraction", range 0.0 ..= 0.95;
        /// Mapping unit (one cached map entry and one host sub-request each); 0: 4 KiB, or the page if smaller.
        mapping_unit_bytes: u32 = 0, unit "bytes", range 0 ..= 65536;
        /// RAM for the cached mapping table (dftl, cdftl and fmmu: 64-byte blocks of 16 entries; dftl-entry: 8 bytes per entry); 0: dftl and dftl-entry 64 KiB, cdftl and fmmu 1/256 of the map up to 64 KiB (fmmu.txt 5.1 scaled).
        cmt_bytes: u64 = 0, unit "bytes", range 0 ..= 1_099_511_627_776;
        /// cdftl and fmmu: RAM of the cached translation pages (CTP); 0: 1/16 of the map up to 1,024 KiB (fmmu.txt 5.1 scaled).
        ctp_bytes: u64 = 0, unit "bytes", range 0 ..= 1_099_511_627_776;
        /// dftl, cdftl and fmmu: ways of the set-associative CMT (and CTP) (fmmu.txt 5.2: 4).
        cache_ways: u32 = 4, unit "ways", range 1 ..= 64;
        /// FTL execution times: "paper" (fmmu.txt Fig. 10 on run.cpu cores) or "ideal" (zero).
        exec_time: ExecTimeModel = ExecTimeModel::Paper, unit "", choices "paper | ideal";
        /// dftl, dftl-entry and cdftl, exec_time "paper": time to test one CMT block in a flush's scan for a translation page's dirty blocks (no source in the paper: about four 400 MHz Cortex-R4 cycles, exec_time.rs).
        flush_scan_ns_per_block: u64 = super::exec_time::DEFAULT_FLUSH_SCAN_NS_PER_BLOCK, unit "ns", range 0 ..= 1_000_000;
        /// Garbage-collection victim policy of data blocks (translation blocks: greedy).
        gc_victim: VictimPolicy = VictimPolicy::Greedy, unit "", choices "greedy | cost-benefit | fifo";
        /// GC runs in the foreground (before a write may open a block) when a die has this many free blocks or fewer.
        gc_foreground_free_blocks: u32 = 2, unit "blocks", range 2 ..= 1_000_000;
        /// GC runs in the background while the host is idle until a die has more free blocks than this.
        gc_background_free_blocks: u32 = 3, unit "blocks", range 2 ..= 1_000_000;
        /// DRAM write buffer: writes are acknowledged once buffered; 0 sizes it to two pages per die.
        write_buffer_bytes: u64 = 0, unit "bytes", range 0 ..= 1_099_511_627_776;
        /// Dies the translation pages are striped over (one open translation block each, spread over the channels; 1: one block at a time on the die with the most free blocks); 0: all dies if each has a spare block for it, else 1.
        translation_dies: u32 = 0, unit "dies", range 0 ..= 1_000_000;
        /// Once the host has been idle this long, every dirty map entry is written back (batched per translation page); 0: never.
        idle_write_back_ns: u64 = 10_000_000, unit "ns", range 0 ..= 3_600_000_000_000;
        /// fmmu: how the map unit picks its next work: "wrr" (weighted round robin over the response, host-request and GC-request queues, fmmu.txt 4.6) or "fifo" (handler order).
        map_unit_arbiter: ArbiterKind = ArbiterKind::Wrr, unit "", choices "wrr | fifo";
        /// fmmu, wrr: jobs of the response queue (flash completions: translation loads, data programs) per round.
        wrr_response_weight: u32 = 8, unit "jobs", range 1 ..= 1024;
        /// fmmu, wrr: jobs of the host and GC request queues together per round, split by the valid share of the last GC victim (at least 1 each).
        wrr_request_weight: u32 = 8, unit "jobs", range 2 ..= 1024;
    }
}

/// Quantities derived from the settings and the device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizing {
    pub units_per_page: u32,
    pub logical_units: u32,
    pub buffer_units: u64,
    /// Entries of one translation page: one mapping unit of 4-byte entries (fmmu.txt 4.2:
    /// a 4 KiB translation page holds 1,024 entries).
    pub entries_per_tpage: u32,
    pub translation_pages: u32,
    /// Flash pages the translation pages fill (`units_per_page` of them per flash page).
    pub translation_flash_pages: u32,
    /// Dies holding an open translation block (`translation_dies`, resolved).
    pub translation_dies: u32,
    pub cmt_entries: usize,
}

/// Bytes of one mapping entry in a translation page.
const ENTRY_BYTES: u32 = 4;
/// Bytes of one cached entry (logical and physical address).
pub const CMT_ENTRY_BYTES: u64 = 8;

impl DemandConfig {
    /// Parses and checks the `[ftl]` table against the device.
    pub fn from_experiment(config: &ExperimentConfig) -> Result<(Self, Sizing), ConfigError> {
        let mut cfg: DemandConfig = crate::ftl::registry::parse_section(config)?;
        cfg.check_ranges()?;
        if cfg.mapping_unit_bytes == 0 {
            cfg.mapping_unit_bytes = config.geometry.page_bytes.min(4096);
        }
        let sizing = cfg.sizing(config)?;
        Ok((cfg, sizing))
    }

    /// CDFTL's and FMMU's CMT and CTP shapes: 64-byte CMT blocks, translation pages of one
    /// mapping unit (fmmu.txt Fig. 7: a 4 KiB CTP block), `cache_ways` ways; sizes as set, or the paper's fractions of the
    /// map (fmmu.txt 5.1: 64 KiB CMT and 1,024 KiB CTP for a 16 MiB map), one set at least.
    pub fn two_level_geometry(
        &self,
        sizing: &Sizing,
    ) -> Result<crate::ftl::twolevel::TwoLevelGeometry, ConfigError> {
        const CMT_BLOCK_BYTES: u32 = 64;
        let page = self.mapping_unit_bytes;
        let ways = u64::from(self.cache_ways);
        let map_bytes = u64::from(sizing.logical_units) * u64::from(ENTRY_BYTES);
        let auto = |set: u64, bytes: u64, fraction: u64, max: u64| match set {
            0 => (map_bytes / fraction).min(max).max(bytes * ways),
            b => b,
        };
        let cmt = auto(self.cmt_bytes, u64::from(CMT_BLOCK_BYTES), 256, 64 << 10);
        let ctp = auto(self.ctp_bytes, u64::from(page), 16, 1 << 20);
        crate::ftl::twolevel::TwoLevelGeometry::new(
            page,
            CMT_BLOCK_BYTES,
            cmt,
            self.cache_ways,
            ctp,
            self.cache_ways,
        )
        .map_err(|reason| {
            ConfigError::invalid(
                "ftl.cmt_bytes / ftl.ctp_bytes",
                format!("{cmt} / {ctp}"),
                reason,
                format!(
                    "at least {} / {} bytes (one set of ftl.cache_ways ways), with ftl.mapping_unit_bytes a power of two of at least 64",
                    u64::from(CMT_BLOCK_BYTES) * ways,
                    u64::from(page) * ways
                ),
            )
        })
    }

    /// Sets of DFTL's CMT of 64-byte blocks in `cache_ways` ways (`cmt_bytes`, 0: 64 KiB).
    pub fn dftl_cmt_sets(&self, sizing: &Sizing) -> Result<u32, ConfigError> {
        let block_bytes = u64::from(super::block_cache::DFTL_BLOCK_ENTRIES * ENTRY_BYTES);
        let set_bytes = block_bytes * u64::from(self.cache_ways);
        let sets = self.dftl_cmt_bytes() / set_bytes;
        if sets == 0 || sizing.entries_per_tpage % super::block_cache::DFTL_BLOCK_ENTRIES != 0 {
            return Err(ConfigError::invalid(
                "ftl.cmt_bytes",
                self.cmt_bytes,
                format!(
                    "dftl's CMT needs one set of ftl.cache_ways = {} blocks of {block_bytes} bytes, and translation pages of whole blocks",
                    self.cache_ways
                ),
                format!("{set_bytes} ..= 2^40, with ftl.mapping_unit_bytes at least 64"),
            ));
        }
        Ok(sets.min(u64::from(u32::MAX / self.cache_ways)) as u32)
    }

    /// DFTL's cached mapping table (`cmt_bytes`, 0: 64 KiB).
    fn dftl_cmt_bytes(&self) -> u64 {
        match self.cmt_bytes {
            0 => 64 << 10,
            b => b,
        }
    }

    fn sizing(&self, config: &ExperimentConfig) -> Result<Sizing, ConfigError> {
        let g = &config.geometry;
        let units_per_page = units_per_page(config, self.mapping_unit_bytes, "dftl")?;
        if self.gc_background_free_blocks < self.gc_foreground_free_blocks {
            return Err(ConfigError::invalid(
                "ftl.gc_background_free_blocks",
                self.gc_background_free_blocks,
                "below ftl.gc_foreground_free_blocks",
                format!("{} ..= 1000000", self.gc_foreground_free_blocks),
            ));
        }
        let logical_units = logical_units(
            g,
            units_per_page,
            self.mapping_unit_bytes,
            self.over_provisioning,
            "dftl",
        )?;
        let entries_per_tpage = self.mapping_unit_bytes / ENTRY_BYTES;
        let translation_pages = logical_units.div_ceil(entries_per_tpage);
        let translation_flash_pages = translation_pages.div_ceil(units_per_page);
        let translation_dies = self.check_spare(g, units_per_page, translation_flash_pages)?;
        let program_units = u64::from(units_per_page);
        let dies = u64::from(g.channels * g.chips_per_channel * g.dies_per_chip);
        let buffer_units = if self.write_buffer_bytes == 0 {
            2 * program_units * dies
        } else {
            self.write_buffer_bytes / u64::from(self.mapping_unit_bytes)
        };
        if buffer_units < 2 * program_units {
            return Err(ConfigError::invalid(
                "ftl.write_buffer_bytes",
                self.write_buffer_bytes,
                "must hold at least two pages",
                format!(
                    "0 (auto) or {} ..= 2^40",
                    2 * program_units * u64::from(self.mapping_unit_bytes)
                ),
            ));
        }
        Ok(Sizing {
            units_per_page,
            logical_units,
            buffer_units,
            entries_per_tpage,
            translation_pages,
            translation_flash_pages,
            translation_dies,
            cmt_entries: (self.dftl_cmt_bytes() / CMT_ENTRY_BYTES).max(1) as usize,
        })
    }

    /// Spare blocks per die must cover the die's open host and GC blocks, the foreground
    /// reserve and its share of the translation blocks: one open on each of the dies the
    /// translation pages are striped over, and the closed ones (translation GC keeps at most
    /// twice the blocks the translation pages fill plus one). Returns the striping width:
    /// `translation_dies`, or (0) every die when each can give a whole spare block to it,
    /// else 1 (one translation block open at a time, on the die with the most free blocks).
    fn check_spare(
        &self,
        g: &Geometry,
        units_per_page: u32,
        translation_flash_pages: u32,
    ) -> Result<u32, ConfigError> {
        let dies = g.channels * g.chips_per_channel * g.dies_per_chip;
        if self.translation_dies > dies {
            return Err(ConfigError::invalid(
                "ftl.translation_dies",
                self.translation_dies,
                format!("the device has {dies} dies"),
                format!("0 (auto) ..= {dies}"),
            ));
        }
        let closed = (2.0 * f64::from(translation_flash_pages.div_ceil(g.pages_per_block)) + 1.0)
            / f64::from(dies);
        let base = f64::from(2 + self.gc_foreground_free_blocks) + closed;
        // Striped, each die holding one gives it a whole block; one at a time, on the die
        // with the most free blocks, the open block is a share.
        let needed = |width: u32| {
            base + if width > 1 {
                1.0
            } else {
                1.0 / f64::from(dies)
            }
        };
        let blocks_per_die = f64::from(g.planes_per_die * g.blocks_per_plane);
        let spare = blocks_per_die * self.over_provisioning;
        let fits = |width: u32| {
            spare >= needed(width)
                && headroom::balanced(g, units_per_page, needed(width), self.over_provisioning)
        };
        let width = match self.translation_dies {
            0 if fits(dies) => dies,
            0 => 1,
            w => w,
        };
        let needed = needed(width);
        if spare < needed {
            let min_op = ((needed / blocks_per_die) * 1e4).ceil() / 1e4;
            return Err(ConfigError::invalid(
                "ftl.over_provisioning",
                self.over_provisioning,
                format!(
                    "the device is too small for it: {spare:.2} spare blocks per die, dftl needs \
                     {needed:.2} (open host, GC and translation blocks, ftl.gc_foreground_free_blocks \
                     and the translation pages on {width} dies)"
                ),
                format!("{min_op} ..= 0.95, or more geometry.blocks_per_plane, or fewer ftl.translation_dies"),
            ));
        }
        headroom::check_die_balance(g, units_per_page, self.over_provisioning, needed, "dftl")?;
        Ok(width)
    }
}
