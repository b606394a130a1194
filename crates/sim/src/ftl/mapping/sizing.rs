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
        // At least one of the device's units must stay logical.
        let max = ((1.0 - 1.0 / total_units as f64) * 1e4).floor() / 1e4;
        return Err(ConfigError::invalid(
            "ftl.over_provisioning",
            over_provisioning,
            format!("leaves no logical unit of the device's {total_units}"),
            format!("0 ..= {max}, or a larger device"),
        ));
    }
    Ok(logical_units)
}

/// Logical pages of an FTL that maps whole pages and exports `logical_ratio` of the device's
/// pages (`wao-gc`, `rtgc`); errors name the setting: a device of 2^32 pages or more, or a
/// ratio that leaves no logical page. `ftl` names the FTL in errors.
pub fn logical_pages_of_ratio(
    g: &Geometry,
    logical_ratio: f64,
    ftl: &str,
) -> Result<u32, ConfigError> {
    let total_pages = g.total_pages();
    if total_pages >= u64::from(u32::MAX) {
        return Err(ConfigError::invalid(
            "geometry.blocks_per_plane",
            g.blocks_per_plane,
            format!("the device would have {total_pages} pages; {ftl} maps fewer than 2^32"),
            "a smaller device",
        ));
    }
    let logical_pages = (total_pages as f64 * logical_ratio).floor() as u32;
    if logical_pages == 0 {
        return Err(ConfigError::invalid(
            "ftl.logical_ratio",
            logical_ratio,
            format!("leaves no logical page of the device's {total_pages}"),
            "a larger ratio or device",
        ));
    }
    Ok(logical_pages)
}

/// Bytes the mapping table and block bookkeeping of a page-mapping FTL would take on this
/// device, from the `[ftl]` table's `mapping_unit_bytes` and `over_provisioning` (every
/// registered FTL maps pages through [`super::MapTable`] and [`super::Blocks`]).
pub fn estimate_state_bytes(config: &ExperimentConfig) -> Result<u64, ConfigError> {
    let ftl = config.ftl_name();
    if crate::ftl::logblock::NAMES.contains(&ftl) {
        return Ok(crate::ftl::logblock::estimate_state_bytes(config));
    }
    if ftl == crate::ftl::waogc::ENTRY.name {
        return crate::ftl::waogc::estimate_state_bytes(config);
    }
    if ftl == crate::ftl::rtgc::ENTRY.name {
        return crate::ftl::rtgc::estimate_state_bytes(config);
    }
    let setting = |key: &str| config.ftl.get(key);
    let unit_bytes = setting("mapping_unit_bytes")
        .and_then(toml::Value::as_integer)
        .and_then(|v| u32::try_from(v).ok())
        .unwrap_or(if ftl == "nftl" {
            config.geometry.page_bytes
        } else {
            4096
        });
    let over_provisioning = setting("over_provisioning")
        .and_then(toml::Value::as_float)
        .unwrap_or(0.07);
    let upp = units_per_page(config, unit_bytes, ftl)?;
    let logical = logical_units(&config.geometry, upp, unit_bytes, over_provisioning, ftl)?;
    let layout = crate::nand::Layout::new(&config.geometry);
    // Every page-mapping FTL's `gc_victim` defaults to greedy.
    let policy = setting("gc_victim")
        .and_then(|v| v.clone().try_into::<super::VictimPolicy>().ok())
        .unwrap_or(super::VictimPolicy::Greedy);
    let demand = &crate::ftl::demand::ENTRIES;
    let translation = demand.iter().any(|entry| entry.name == ftl);
    let blocks = super::Blocks::estimate_bytes(&layout, upp, policy, translation);
    Ok(super::MapTable::estimate_bytes(logical) + blocks)
}
