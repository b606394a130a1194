//! Settings of the page-mapping FTL and their checks against the device.

use super::VictimPolicy;
use crate::config::{ConfigError, ExperimentConfig, Geometry};
use crate::ftl::mapping::{headroom, logical_units, units_per_page};
use crate::settings;

settings! {
    /// The page-mapping FTL (`[ftl]` with `name = "pagemap"`).
    pub struct PagemapConfig in "ftl" {
        /// FTL name.
        name: String = "pagemap".into(), unit "";
        /// Share of the physical capacity kept as spare (logical = physical x (1 - over_provisioning)).
        over_provisioning: f64 = 0.07, unit "fraction", range 0.0 ..= 0.95;
        /// Mapping unit; several units are packed into one flash page through the write buffer.
        mapping_unit_bytes: u32 = 4096, unit "bytes", range 512 ..= 65536;
        /// Garbage-collection victim policy.
        gc_victim: VictimPolicy = VictimPolicy::Greedy, unit "", choices "greedy | cost-benefit | fifo";
        /// GC runs in the foreground (before a write may open a block) when a die has this many free blocks or fewer (per plane with multi_plane).
        gc_foreground_free_blocks: u32 = 1, unit "blocks", range 1 ..= 1_000_000;
        /// GC runs in the background while the host is idle until a die has more free blocks than this.
        gc_background_free_blocks: u32 = 2, unit "blocks", range 1 ..= 1_000_000;
        /// DRAM write buffer: writes are acknowledged once buffered; 0 sizes it to two programs per die.
        write_buffer_bytes: u64 = 0, unit "bytes", range 0 ..= 1_099_511_627_776;
        /// Program (and GC) one page per plane of a die at once with multi-plane commands.
        multi_plane: bool = false, unit "";
        /// GC moves fully valid pages with copyback (no bus transfer) when it can.
        gc_copyback: bool = false, unit "";
        /// GC programs the page holding a victim's last moved units (padded when partly filled) before it erases the victim, so a power cut never loses moved data (flash images, power-loss recovery); costs up to a page of padding per victim, so tiny blocks need more over-provisioning. false: the page waits in DRAM for more units (the papers' model).
        gc_program_before_erase: bool = false, unit "";
        /// GC writes into its own open block per die, apart from host writes.
        separate_gc_stream: bool = true, unit "";
        /// FTL CPU time per mapping unit looked up for a read.
        cpu_lookup_ns: u64 = 0, unit "ns", range 0 ..= 1_000_000_000;
        /// FTL CPU time per mapping unit written or trimmed (map update).
        cpu_update_ns: u64 = 0, unit "ns", range 0 ..= 1_000_000_000;
        /// FTL CPU time per mapping unit moved by GC.
        cpu_gc_unit_ns: u64 = 0, unit "ns", range 0 ..= 1_000_000_000;
        /// FTL CPU time per flash completion the FTL handles.
        cpu_completion_ns: u64 = 0, unit "ns", range 0 ..= 1_000_000_000;
    }
}

/// Quantities derived from the settings and the device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizing {
    pub units_per_page: u32,
    pub planes_per_program: u32,
    pub logical_units: u32,
    pub buffer_units: u64,
    pub spare_blocks_per_die: f64,
}

impl PagemapConfig {
    /// Parses and checks the `[ftl]` table against the device.
    pub fn from_experiment(config: &ExperimentConfig) -> Result<(Self, Sizing), ConfigError> {
        let cfg: PagemapConfig = crate::ftl::registry::parse_section(config)?;
        cfg.check_ranges()?;
        let sizing = cfg.sizing(config)?;
        Ok((cfg, sizing))
    }

    fn sizing(&self, config: &ExperimentConfig) -> Result<Sizing, ConfigError> {
        let g = &config.geometry;
        let units_per_page = units_per_page(config, self.mapping_unit_bytes, "pagemap")?;
        let planes_per_program = if self.multi_plane {
            g.planes_per_die.min(crate::flash::MAX_PLANES_PER_OP as u32)
        } else {
            1
        };
        let spare_blocks_per_die =
            self.check_spare_blocks(g, units_per_page, planes_per_program)?;
        headroom::check_die_balance(
            g,
            units_per_page,
            self.over_provisioning,
            self.reserved_blocks(planes_per_program),
            "pagemap",
        )?;
        let logical_units = logical_units(
            g,
            units_per_page,
            self.mapping_unit_bytes,
            self.over_provisioning,
            "pagemap",
        )?;
        let buffer_units = self.buffer_units(g, units_per_page * planes_per_program)?;
        Ok(Sizing {
            units_per_page,
            planes_per_program,
            logical_units,
            buffer_units,
            spare_blocks_per_die,
        })
    }

    /// Blocks per die out of circulation: the open host and GC blocks (one per plane of a
    /// program) and the foreground reserve.
    fn reserved_blocks(&self, planes_per_program: u32) -> f64 {
        f64::from((2 + self.gc_foreground_free_blocks) * planes_per_program)
    }

    /// Spare blocks per die, checked against the blocks out of circulation. The smallest
    /// over-provisioning named also keeps the dies balanced ([`headroom::check_die_balance`]).
    fn check_spare_blocks(
        &self,
        g: &Geometry,
        units_per_page: u32,
        planes_per_program: u32,
    ) -> Result<f64, ConfigError> {
        const MAX_OP: f64 = 0.95;
        if self.gc_background_free_blocks < self.gc_foreground_free_blocks {
            return Err(ConfigError::invalid(
                "ftl.gc_background_free_blocks",
                self.gc_background_free_blocks,
                "below ftl.gc_foreground_free_blocks",
                format!("{} ..= 1000000", self.gc_foreground_free_blocks),
            ));
        }
        let blocks_per_die = f64::from(g.planes_per_die * g.blocks_per_plane);
        let spare = blocks_per_die * self.over_provisioning;
        let needed = self.reserved_blocks(planes_per_program);
        if spare >= needed {
            return Ok(spare);
        }
        let what = "open host and GC blocks plus ftl.gc_foreground_free_blocks";
        let min_op = headroom::balance_min_op(g, units_per_page, needed)
            .map_or(f64::INFINITY, |balanced| {
                balanced.max((needed / blocks_per_die * 1e4).ceil() / 1e4)
            });
        if min_op > MAX_OP {
            let min_blocks = (needed / (MAX_OP * f64::from(g.planes_per_die))).ceil();
            return Err(ConfigError::invalid(
                "geometry.blocks_per_plane",
                g.blocks_per_plane,
                format!(
                    "the device is too small for pagemap at any ftl.over_provisioning: it needs {needed} \
                     spare blocks per die ({what})"
                ),
                format!("{min_blocks} ..= 1048576"),
            ));
        }
        Err(ConfigError::invalid(
            "ftl.over_provisioning",
            self.over_provisioning,
            format!("the device is too small for it: {spare:.2} spare blocks per die, pagemap needs {needed} ({what})"),
            format!("{min_op} ..= {MAX_OP}, or more geometry.blocks_per_plane"),
        ))
    }

    /// Write-buffer capacity in units: as set, or two programs per die; at least two programs.
    fn buffer_units(&self, g: &Geometry, program_units: u32) -> Result<u64, ConfigError> {
        let program_units = u64::from(program_units);
        let dies = u64::from(g.channels * g.chips_per_channel * g.dies_per_chip);
        let units = if self.write_buffer_bytes == 0 {
            2 * program_units * dies
        } else {
            self.write_buffer_bytes / u64::from(self.mapping_unit_bytes)
        };
        if units < 2 * program_units {
            return Err(ConfigError::invalid(
                "ftl.write_buffer_bytes",
                self.write_buffer_bytes,
                "must hold at least two programs",
                format!(
                    "0 (auto) or {} ..= 2^40",
                    2 * program_units * u64::from(self.mapping_unit_bytes)
                ),
            ));
        }
        Ok(units)
    }
}
