//! Settings of PaRT-FTL and their checks against the device (part-ftl.txt V.A).

use crate::config::{ConfigError, ExperimentConfig, Geometry};
use crate::nand::OOB_ENTRY_BYTES;
use crate::settings;

settings! {
    /// PaRT-FTL (`[ftl]` with `name = "part-ftl"`).
    pub struct PartConfig in "ftl" {
        /// FTL name.
        name: String = "part-ftl".into(), unit "";
        /// Logical / physical ratio of the data part (lambda, part-ftl.txt V.A: 64.3% of the 75% not used for parity).
        data_ratio: f64 = 0.643, unit "fraction", range 0.01 ..= 0.95;
        /// DRAM write buffer in pages; 0 sizes it to one block per write chip plus two pages per channel.
        write_buffer_pages: u64 = 0, unit "pages", range 0 ..= 1_073_741_824;
        /// GC picks a victim stripe group at each group opening while this many free groups or fewer remain.
        gc_free_groups: u32 = 1, unit "groups", range 1 ..= 1_000_000;
        /// Time to decode a rebuilt page (XOR of its stripe), t_c^d, charged as FTL CPU time (0: hardware XOR, as in the paper's experiments).
        decode_ns: u64 = 0, unit "ns", range 0 ..= 1_000_000_000;
        /// Time to encode a parity page, t_c^e, charged as FTL CPU time per parity page.
        encode_ns: u64 = 0, unit "ns", range 0 ..= 1_000_000_000;
        /// Firmware CPU time per host page read or written (the request loop's work for one page request of the request buffer), charged before the page is served; host pages wait for the FTL core earliest deadline first (0: none).
        cpu_page_ns: u64 = 0, unit "ns", range 0 ..= 1_000_000_000;
    }
}

/// Quantities derived from the settings and the device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizing {
    /// Ways (dies per channel, the paper's chips of one channel).
    pub ways: u32,
    /// Stripe groups (block slots per die).
    pub groups: u32,
    /// Logical pages exported.
    pub logical_pages: u32,
    /// Write-buffer capacity in pages.
    pub buffer_pages: u64,
}

impl PartConfig {
    /// Parses and checks the `[ftl]` table against the device.
    pub fn from_experiment(config: &ExperimentConfig) -> Result<(Self, Sizing), ConfigError> {
        let cfg: PartConfig = crate::ftl::registry::parse_section(config)?;
        cfg.check_ranges()?;
        let sizing = cfg.sizing(&config.geometry)?;
        Ok((cfg, sizing))
    }

    fn sizing(&self, g: &Geometry) -> Result<Sizing, ConfigError> {
        let ways = g.chips_per_channel * g.dies_per_chip;
        if ways < 2 {
            return Err(ConfigError::invalid(
                "geometry.chips_per_channel",
                g.chips_per_channel,
                "part-ftl needs at least two dies per channel (data ways and a parity way)",
                "2 ..= 1024 dies per channel (chips_per_channel x dies_per_chip)",
            ));
        }
        if g.oob_bytes < OOB_ENTRY_BYTES {
            return Err(ConfigError::invalid(
                "geometry.oob_bytes",
                g.oob_bytes,
                format!("part-ftl stores a {OOB_ENTRY_BYTES}-byte OOB entry per page"),
                format!("{OOB_ENTRY_BYTES} ..= 16384"),
            ));
        }
        let groups = g.planes_per_die * g.blocks_per_plane;
        let data_pages = u64::from(groups)
            * u64::from(ways - 1)
            * u64::from(g.channels)
            * u64::from(g.pages_per_block);
        self.check_ratio(g)?;
        let logical = (data_pages as f64 * self.data_ratio).floor() as u64;
        if logical == 0 || logical >= u64::from(u32::MAX) {
            return Err(ConfigError::invalid(
                "ftl.data_ratio",
                self.data_ratio,
                format!(
                    "the device would export {logical} pages; part-ftl addresses 1 ..= 2^32 - 2"
                ),
                "a device of fewer pages, or a larger ratio",
            ));
        }
        let buffer_pages = self.buffer_pages(g)?;
        Ok(Sizing {
            ways,
            groups,
            logical_pages: logical as u32,
            buffer_pages,
        })
    }

    /// Greedy GC must always find a victim group with fewer valid pages than a group holds:
    /// at a group opening the other groups are the open one, at most one being erased, at
    /// most `gc_free_groups` free and the closed rest, so the logical data must fit in
    /// `groups - 3 - gc_free_groups` groups (one group of margin).
    fn check_ratio(&self, g: &Geometry) -> Result<(), ConfigError> {
        let groups = g.planes_per_die * g.blocks_per_plane;
        let usable = f64::from(groups) - 3.0 - f64::from(self.gc_free_groups);
        let max_ratio = (usable / f64::from(groups) * 1e4).floor() / 1e4;
        if self.data_ratio <= max_ratio {
            return Ok(());
        }
        if max_ratio < 0.01 {
            let needed = f64::from(3 + self.gc_free_groups) / (1.0 - self.data_ratio);
            let per_plane = (needed / f64::from(g.planes_per_die)).ceil();
            return Err(ConfigError::invalid(
                "geometry.blocks_per_plane",
                g.blocks_per_plane,
                format!(
                    "part-ftl needs more stripe groups (blocks per die) for ftl.data_ratio {} and ftl.gc_free_groups {}",
                    self.data_ratio, self.gc_free_groups
                ),
                format!("{per_plane} ..= 1048576, or a smaller ftl.data_ratio"),
            ));
        }
        Err(ConfigError::invalid(
            "ftl.data_ratio",
            self.data_ratio,
            format!(
                "too large for {groups} stripe groups (blocks per die): greedy GC could find no victim \
                 (one open group, one being erased and ftl.gc_free_groups = {} free are out of circulation)",
                self.gc_free_groups
            ),
            format!("0.01 ..= {max_ratio}, or more geometry.blocks_per_plane"),
        ))
    }

    /// Write-buffer capacity: as set, or a block per write chip plus two pages per channel;
    /// at least two pages per channel.
    fn buffer_pages(&self, g: &Geometry) -> Result<u64, ConfigError> {
        let min = 2 * u64::from(g.channels);
        let pages = match self.write_buffer_pages {
            0 => u64::from(g.channels) * u64::from(g.pages_per_block) + min,
            n => n,
        };
        if pages < min {
            return Err(ConfigError::invalid(
                "ftl.write_buffer_pages",
                self.write_buffer_pages,
                "must hold at least two pages per write chip",
                format!("0 (auto) or {min} ..= 1073741824"),
            ));
        }
        Ok(pages)
    }
}

impl crate::ftl::registry::FtlSettings for PartConfig {
    fn checked(config: &ExperimentConfig) -> Result<Self, ConfigError> {
        Self::from_experiment(config).map(|(settings, _)| settings)
    }
}
