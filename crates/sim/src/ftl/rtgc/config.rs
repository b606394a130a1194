//! Settings of the RTGC FTL and the quantities derived from them and the device: the logical
//! space (λ of the pages), α = P - ⌈λ·P⌉ (the fewest pages reclaiming a block frees, as
//! `realtime::FlashParams::reclaimed_pages_bound` computes it) and a collector job's |F|·α.

use crate::config::{ConfigError, ExperimentConfig};
use crate::nand::OOB_ENTRY_BYTES;
use crate::realtime::FlashParams;
use crate::settings;

settings! {
    /// RTGC, real-time garbage collectors per writing task (`[ftl]` with `name = "rtgc"`).
    pub struct RtgcConfig in "ftl" {
        /// FTL name.
        name: String = "rtgc".into(), unit "";
        /// λ: logical pages exported / physical pages (part-ftl.txt section V.A gives RTGC the data capacity of WAO-GC, 48.2%); bounds a greedy victim's valid pages by ⌈λ P⌉, so a collector job frees at least α = P - ⌈λ P⌉ pages on every die.
        logical_ratio: f64 = 0.482, unit "fraction", range 0.01 ..= 0.9;
        /// A collector job reclaims a block on a die only while that die has at most this many free blocks (more free blocks already hold the pages the job guarantees); one of them is the reserve only garbage collection may open.
        collector_free_blocks: u32 = 3, unit "blocks", range 2 ..= 65536;
    }
}

/// Quantities derived from the settings and the device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizing {
    /// Pages exported to the host (mapping unit = flash page).
    pub logical_pages: u32,
    /// P, pages per block.
    pub pages_per_block: u32,
    /// α = P - ⌈λ·P⌉: pages one reclaimed block frees at least.
    pub alpha_pages: u32,
    /// |F|·α: pages a collector job frees at least (one block on every die).
    pub job_pages: u32,
}

/// α = P - ⌈λ·P⌉, with the rounding of the admission analysis.
pub fn alpha_pages(logical_ratio: f64, pages_per_block: u32) -> u32 {
    let params = FlashParams {
        pages_per_block,
        logical_ratio,
        ..FlashParams::rtgc()
    };
    params.reclaimed_pages_bound() as u32
}

impl RtgcConfig {
    /// Parses and checks the `[ftl]` table against the device.
    pub fn from_experiment(config: &ExperimentConfig) -> Result<(Self, Sizing), ConfigError> {
        let cfg: RtgcConfig = crate::ftl::registry::parse_section(config)?;
        cfg.check_ranges()?;
        let sizing = cfg.sizing(config)?;
        Ok((cfg, sizing))
    }

    fn sizing(&self, config: &ExperimentConfig) -> Result<Sizing, ConfigError> {
        let g = &config.geometry;
        let p = g.pages_per_block;
        let alpha = alpha_pages(self.logical_ratio, p);
        if alpha == 0 {
            return Err(ConfigError::invalid(
                "ftl.logical_ratio",
                self.logical_ratio,
                format!("leaves no page to reclaim in a block of {p} pages (α = P - ⌈λ P⌉ = 0)"),
                format!("0.01 ..< {}", f64::from(p - 1) / f64::from(p)),
            ));
        }
        if g.oob_bytes < OOB_ENTRY_BYTES {
            return Err(ConfigError::invalid(
                "geometry.oob_bytes",
                g.oob_bytes,
                format!("rtgc stores a {OOB_ENTRY_BYTES}-byte OOB entry per page"),
                format!("{OOB_ENTRY_BYTES} ..= 16384"),
            ));
        }
        let blocks_per_die = g.planes_per_die * g.blocks_per_plane;
        let needed = self.collector_free_blocks + 3;
        if blocks_per_die < needed {
            return Err(ConfigError::invalid(
                "geometry.blocks_per_plane",
                g.blocks_per_plane,
                format!(
                    "rtgc needs on each die a host block, a GC block, a block of data and \
                     ftl.collector_free_blocks = {} free blocks",
                    self.collector_free_blocks
                ),
                format!("{} ..= 1048576", needed.div_ceil(g.planes_per_die)),
            ));
        }
        let logical_pages =
            crate::ftl::mapping::logical_pages_of_ratio(g, self.logical_ratio, "rtgc")?;
        let dies = g.channels * g.chips_per_channel * g.dies_per_chip;
        Ok(Sizing {
            logical_pages,
            pages_per_block: p,
            alpha_pages: alpha,
            job_pages: dies * alpha,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// α as the admission analysis computes it: P = 256, λ = 0.482 gives 132
    /// (docs/realtime-analysis.md); an exact product is not rounded up.
    #[test]
    fn alpha_matches_the_analysis() {
        assert_eq!(alpha_pages(0.482, 256), 132);
        assert_eq!(alpha_pages(0.5, 16), 8);
        assert_eq!(alpha_pages(0.482, 16), 8);
        assert_eq!(alpha_pages(0.9, 2), 0);
    }
}
