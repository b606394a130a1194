//! Checks and sizes common to the page-mapping FTLs: mapping units per page (the unit must
//! divide the page and its OOB entries must fit) and the logical units exported.

use crate::config::{ConfigError, ExperimentConfig, Geometry};
use crate::nand::OOB_ENTRY_BYTES;

/// Mapping units of `unit_bytes` per page; `ftl` names the FTL in errors.
pub fn units_per_page(
    config: &ExperimentConfig,
    unit_bytes: u32,
    ftl: &str,
) -> Result<u32, ConfigError> {
    let g = &config.geometry;
    let sector = config.host.sector_bytes;
    if unit_bytes % sector != 0 || g.page_bytes % unit_bytes != 0 {
        return Err(ConfigError::invalid(
            "ftl.mapping_unit_bytes",
            unit_bytes,
            format!(
                "must be a multiple of host.sector_bytes ({sector}) dividing geometry.page_bytes ({})",
                g.page_bytes
            ),
            format!("{sector} ..= {} dividing the page", g.page_bytes),
        ));
    }
    let units_per_page = g.page_bytes / unit_bytes;
    let oob_needed = units_per_page * OOB_ENTRY_BYTES;
    if g.oob_bytes < oob_needed {
        return Err(ConfigError::invalid(
            "geometry.oob_bytes",
            g.oob_bytes,
            format!(
                "{ftl} stores a {OOB_ENTRY_BYTES}-byte OOB entry per mapping unit ({units_per_page} per page)"
            ),
            format!("{oob_needed} ..= 16384, or a larger ftl.mapping_unit_bytes"),
        ));
    }
    Ok(units_per_page)
}

/// Logical units exported: the physical units less the over-provisioning.
pub fn logical_units(
    g: &Geometry,
    units_per_page: u32,
    unit_bytes: u32,
    over_provisioning: f64,
    ftl: &str,
) -> Result<u32, ConfigError> {
    let total_units = g.total_pages() * u64::from(units_per_page);
    if total_units >= u64::from(u32::MAX) {
        return Err(ConfigError::invalid(
            "ftl.mapping_unit_bytes",
            unit_bytes,
            format!("the device would have {total_units} mapping units; {ftl} addresses fewer than 2^32"),
            "a larger mapping unit or a smaller device",
        ));
    }
    let logical_units = (total_units as f64 * (1.0 - over_provisioning)).floor() as u32;
    if logical_units == 0 {
        return Err(ConfigError::invalid(
            "ftl.over_provisioning",
            over_provisioning,
            "leaves no logical space",
            "0.0 ..= 0.95",
        ));
    }
    Ok(logical_units)
}
