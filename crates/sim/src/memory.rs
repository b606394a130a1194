//! The memory a simulated device needs, known before it is allocated: the NAND state (OOB
//! entries, valid bits, block records, optional data versions), the FTL's mapping table and
//! block bookkeeping, and the verify shadow. A device far beyond the machine's memory is
//! refused with the figure instead of aborting mid-allocation. For `pagemap` (greedy victim)
//! that is 12 U + U/8 + 4 L + 36 B + 4 P (u + 1) bytes (U unit slots, L logical units, B
//! blocks, P planes, u units per block): at most 16 bytes per 4 KiB unit on the 4, 16 and
//! 256 GiB devices (docs/performance.md, "Memory"; tests/memory_budget.rs checks it).
//!
//! The library enforces only `run.max_memory_bytes` (part of the configuration, so a run stays
//! a function of it); [`check_available`] compares with the memory the machine has free, for
//! entry points (the command line, Python) to call before building a simulation.

use crate::config::{ConfigError, ExperimentConfig};
use crate::nand::{Layout, Nand};

/// Bytes of simulator state the device of `config` needs (what the report's
/// `device.state_bytes` then shows, plus the verify shadow).
pub fn estimate_state_bytes(config: &ExperimentConfig) -> Result<u64, ConfigError> {
    let layout = Layout::new(&config.geometry);
    let ftl = crate::ftl::mapping::estimate_state_bytes(config)?;
    let unit_bytes = config
        .ftl
        .get("mapping_unit_bytes")
        .and_then(toml::Value::as_integer)
        .unwrap_or(if matches!(config.ftl_name(), "nftl" | "wao-gc" | "rtgc") {
            i64::from(config.geometry.page_bytes)
        } else {
            4096
        }) as u32;
    let units_per_page = (config.geometry.page_bytes / unit_bytes.max(1)).max(1);
    let sector = config.host.sector_bytes;
    let payloads = config.run.payloads || config.run.verify;
    let any_order = config.nand.program_order == crate::config::ProgramOrder::Any;
    let nand = Nand::estimate_bytes(&layout, units_per_page, sector, payloads, any_order);
    let shadow = if config.run.verify {
        // One version per logical sector: at most the raw capacity's sectors.
        config.geometry.raw_bytes() / u64::from(sector) * 8
    } else {
        0
    };
    Ok(nand + ftl + shadow)
}

/// Refuses `config` when its state would exceed `limit_bytes`, saying where the limit comes
/// from (`source`); returns the estimate.
pub fn check_limit(
    config: &ExperimentConfig,
    limit_bytes: u64,
    source: &str,
) -> Result<u64, ConfigError> {
    let needed = estimate_state_bytes(config)?;
    if needed <= limit_bytes {
        return Ok(needed);
    }
    let gib = |b: u64| format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64);
    Err(ConfigError::invalid(
        "geometry",
        format!(
            "{} channels x {} chips x {} dies x {} planes x {} blocks x {} pages of {} bytes",
            config.geometry.channels,
            config.geometry.chips_per_channel,
            config.geometry.dies_per_chip,
            config.geometry.planes_per_die,
            config.geometry.blocks_per_plane,
            config.geometry.pages_per_block,
            config.geometry.page_bytes
        ),
        format!(
            "simulating this device needs about {} of memory, more than {source} ({})",
            gib(needed),
            gib(limit_bytes)
        ),
        format!(
            "a device needing at most {}: fewer geometry.blocks_per_plane (or other dimensions); \
             to run anyway, raise run.max_memory_bytes above {needed}",
            gib(limit_bytes)
        ),
    ))
}

/// The memory the machine has available now (Linux `MemAvailable`), if known.
pub fn available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// For entry points: refuses `config` when its state would exceed the memory available now,
/// unless `run.max_memory_bytes` sets the limit (then [`crate::Simulation::new`] checks it).
pub fn check_available(config: &ExperimentConfig) -> Result<(), ConfigError> {
    if config.run.max_memory_bytes > 0 {
        return Ok(());
    }
    match available_bytes() {
        Some(available) => check_limit(config, available, "the memory available").map(|_| ()),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Simulation;

    /// The estimate is what the built device then holds (the report's state_bytes), for
    /// each FTL, with data versions and with a 4 KiB-sector device.
    #[test]
    fn estimate_matches_the_built_device() {
        for sets in [
            &["geometry.blocks_per_plane=16", "ftl.over_provisioning=0.25"][..],
            &[
                "geometry.blocks_per_plane=16",
                "ftl.over_provisioning=0.25",
                "run.payloads=true",
                "ftl.mapping_unit_bytes=8192",
            ],
            &[
                "geometry.blocks_per_plane=16",
                "ftl.over_provisioning=0.25",
                "host.sector_bytes=4096",
                "ftl.name=\"mt-ftl\"",
            ],
            &[
                "geometry.blocks_per_plane=16",
                "ftl.over_provisioning=0.25",
                "ftl.gc_victim=\"fifo\"",
            ],
            &[
                "ftl.name=\"mt-ftl\"",
                "geometry.blocks_per_plane=16",
                "ftl.over_provisioning=0.25",
                "ftl.gc_victim=\"cost-benefit\"",
            ],
            &[
                "ftl.name=\"st-ftl\"",
                "geometry.blocks_per_plane=16",
                "ftl.over_provisioning=0.2",
            ],
            &[
                "ftl.name=\"wao-gc\"",
                "geometry.blocks_per_plane=16",
                "ftl.logical_ratio=0.4",
                "run.payloads=true",
            ],
        ] {
            let config = ExperimentConfig::with_sets("default", sets).unwrap();
            let estimate = estimate_state_bytes(&config).unwrap();
            let sim = Simulation::new(&config).unwrap();
            let held = sim.nand().state_bytes() + sim.ftl().state_bytes();
            // mt-ftl adds a few hundred bytes per task.
            assert!(
                held >= estimate && held - estimate < 4096,
                "{sets:?}: estimated {estimate}, holds {held}"
            );
        }
    }

    #[test]
    fn a_limit_below_the_estimate_is_refused_with_the_figures() {
        let config = ExperimentConfig::with_sets("default", &[]).unwrap();
        let needed = estimate_state_bytes(&config).unwrap();
        assert_eq!(check_limit(&config, needed, "test").unwrap(), needed);
        let err = check_limit(&config, needed - 1, "the test limit")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("the test limit") && err.contains("GiB"),
            "{err}"
        );
        assert!(
            err.contains(&format!("raise run.max_memory_bytes above {needed}")),
            "{err}"
        );
        let limited =
            ExperimentConfig::with_sets("default", &["run.max_memory_bytes=1000000"]).unwrap();
        let err = Simulation::new(&limited)
            .err()
            .expect("refused")
            .to_string();
        assert!(err.contains("run.max_memory_bytes"), "{err}");
    }
}
