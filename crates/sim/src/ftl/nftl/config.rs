//! Settings of NFTL and its two extensions, and their checks against the device.

use crate::config::{ConfigError, ExperimentConfig};
use crate::settings;

settings! {
    /// NFTL (`[ftl]` with `name = "nftl"`), nftl-lookup-pagecache.txt section 3.
    pub struct NftlConfig in "ftl" {
        /// FTL name.
        name: String = "nftl".into(), unit "";
        /// Share of the physical blocks not exported (free blocks for replacement blocks and folds; at least 2 blocks).
        over_provisioning: f64 = 0.02, unit "fraction", range 0.0 ..= 0.9;
        /// The lookup table of section 3.2: rep-block table and page-status bitmap in RAM.
        lookup_table: bool = false, unit "";
        /// Entries of the page cache of section 3.3 (sector -> <block, page> of recent writes, FIFO replacement); 0 turns it off.
        page_cache_entries: u32 = 0, unit "entries", range 0 ..= 16_777_216;
    }
}

/// Quantities derived from the settings and the device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizing {
    pub physical_blocks: u32,
    pub virtual_blocks: u32,
    pub pages_per_block: u32,
}

/// Bytes of one page-cache entry: the sector (4 bytes) and its <block, page> (4 bytes).
pub const PAGE_CACHE_ENTRY_BYTES: u64 = 8;
/// Bytes of one block-map or rep-block-table entry (a physical block number).
pub const BLOCK_ENTRY_BYTES: u64 = 4;

impl NftlConfig {
    /// Parses and checks the `[ftl]` table against the device.
    pub fn from_experiment(config: &ExperimentConfig) -> Result<(Self, Sizing), ConfigError> {
        let cfg: NftlConfig = crate::ftl::registry::parse_section(config)?;
        cfg.check_ranges()?;
        let g = &config.geometry;
        let physical = g.total_blocks();
        if physical > u64::from(u32::MAX / 2) {
            return Err(ConfigError::invalid(
                "geometry.blocks_per_plane",
                g.blocks_per_plane,
                "nftl addresses at most 2^31 blocks",
                "a device of fewer than 2^31 blocks",
            ));
        }
        let physical = physical as u32;
        let spare = (f64::from(physical) * cfg.over_provisioning).floor() as u32;
        if spare < 2 {
            let min = (2.0 / f64::from(physical) * 1e4).ceil() / 1e4;
            return Err(ConfigError::invalid(
                "ftl.over_provisioning",
                cfg.over_provisioning,
                format!(
                    "leaves {spare} spare blocks of {physical}; nftl needs 2 (a replacement block and a fold target)"
                ),
                format!("{min} ..= 0.9"),
            ));
        }
        if g.pages_per_block > 255 {
            return Err(ConfigError::invalid(
                "geometry.pages_per_block",
                g.pages_per_block,
                "nftl keeps a one-byte free-page pointer per replacement block",
                "1 ..= 255",
            ));
        }
        Ok((
            cfg,
            Sizing {
                physical_blocks: physical,
                virtual_blocks: physical - spare,
                pages_per_block: g.pages_per_block,
            },
        ))
    }
}

/// RAM the controller needs for the mapping structures, in bytes (what the paper counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct RamCost {
    /// Block map (virtual -> primary block, 4 bytes) and free-page pointer of the replacement
    /// block (1 byte), per virtual block.
    pub mapping_table_bytes: u64,
    /// Rep-block table (4 bytes per virtual block) plus page-status bitmap (a bit per page of
    /// the logical space); 0 when off.
    pub lookup_table_bytes: u64,
    /// Page-cache entries x 8 bytes; 0 when off.
    pub page_cache_bytes: u64,
    pub total_bytes: u64,
}

impl RamCost {
    pub fn new(cfg: &NftlConfig, sizing: &Sizing) -> Self {
        let vb = u64::from(sizing.virtual_blocks);
        let mapping = vb * (BLOCK_ENTRY_BYTES + 1);
        let lookup = if cfg.lookup_table {
            lookup_table_bytes(sizing)
        } else {
            0
        };
        let cache = u64::from(cfg.page_cache_entries) * PAGE_CACHE_ENTRY_BYTES;
        RamCost {
            mapping_table_bytes: mapping,
            lookup_table_bytes: lookup,
            page_cache_bytes: cache,
            total_bytes: mapping + lookup + cache,
        }
    }
}

/// Bytes of the lookup table (section 3.2): (S/B) rep-block entries and (S/P) bits.
pub fn lookup_table_bytes(sizing: &Sizing) -> u64 {
    let vb = u64::from(sizing.virtual_blocks);
    vb * BLOCK_ENTRY_BYTES + (vb * u64::from(sizing.pages_per_block)).div_ceil(8)
}
