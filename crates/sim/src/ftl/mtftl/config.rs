//! Settings of the multi-threaded and single-threaded page-mapping FTLs, with the firmware
//! costs of a 72 MHz Cortex-M3 (the paper's STM32F103) as documented defaults.

use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, ExperimentConfig, Geometry};
use crate::ftl::mapping::{logical_units, units_per_page, VictimPolicy};
use crate::settings;

/// What one NAND semaphore protects (its granularity). A task holds it from sending a
/// command until the operation completes (see the module doc of `mtftl` for why the paper's
/// board has one per chip).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NandLock {
    /// One semaphore per die (a chip on `mt-board`): tasks use different dies at once, a task
    /// whose die is busy pends on that die's semaphore. The default: the paper's board.
    PerDie,
    /// One semaphore for the whole flash array: one NAND operation at a time on the device,
    /// so tasks overlap only CPU work with it.
    WholeDevice,
}

/// How long garbage collection holds the NAND semaphore of the die it collects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GcNandHold {
    /// From the victim's first page move to its erase: other tasks' operations on that die
    /// wait, as they do behind st-ftl's GC, and cannot stretch the collection.
    Victim,
    /// One page move (or the erase) at a time: other tasks' reads slip in between.
    Page,
}

/// How FTL task priorities are set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskPriority {
    /// Task i has priority i + 1 for ever, the monitor the lowest: uC/OS-II's fixed, distinct
    /// task priorities (the default: the paper's board).
    Fixed,
    /// Ours: the task with the oldest request has the highest priority (renumbered with
    /// `OSTaskChangePrio` when a task takes a request), so the oldest request runs first.
    RequestAge,
}

settings! {
    /// The multi-threaded (`mt-ftl`) and single-threaded (`st-ftl`) page-mapping FTLs on a
    /// simulated uC/OS-II (`[ftl]` with `name = "mt-ftl"` or `"st-ftl"`).
    pub struct MtFtlConfig in "ftl" {
        /// FTL name.
        name: String = "mt-ftl".into(), unit "";
        /// FTL tasks taking host requests (the paper: 4); st-ftl runs exactly one.
        tasks: u32 = 4, unit "tasks", range 1 ..= 63;
        /// Granularity of the NAND semaphores, each held from a command to its completion: one per die (the paper's board: one per chip), or one for the whole device.
        nand_lock: NandLock = NandLock::PerDie, unit "", choices "per-die | whole-device";
        /// FTL task priorities: fixed by task number as uC/OS-II has them (the paper's board), or by request age (ours: the oldest request first).
        task_priority: TaskPriority = TaskPriority::Fixed, unit "", choices "fixed | request-age";
        /// How long GC holds the NAND semaphore of its die: the whole victim, or one page move at a time.
        gc_nand_hold: GcNandHold = GcNandHold::Page, unit "", choices "victim | page";
        /// Share of the physical capacity kept as spare (logical = physical x (1 - over_provisioning)).
        over_provisioning: f64 = 0.07, unit "fraction", range 0.0 ..= 0.95;
        /// Mapping unit (4 KiB: one unit per page on the paper's board).
        mapping_unit_bytes: u32 = 4096, unit "bytes", range 512 ..= 65536;
        /// Garbage-collection victim policy.
        gc_victim: VictimPolicy = VictimPolicy::Greedy, unit "", choices "greedy | cost-benefit | fifo";
        /// A task collects garbage on a die before opening a working block there when the die has this many free blocks or fewer.
        gc_free_blocks: u32 = 1, unit "blocks", range 1 ..= 1_000_000;
        /// GC moves fully valid pages with copyback (inside the plane, no bus transfer) when it can.
        gc_copyback: bool = true, unit "";
        /// Context switch (uC/OS-II OSCtxSw on a Cortex-M3 at 72 MHz, with the scheduler).
        context_switch_ns: u64 = 2_000, unit "ns", range 0 ..= 1_000_000_000;
        /// Taking a request from the host queue and decoding it.
        cpu_request_ns: u64 = 10_000, unit "ns", range 0 ..= 1_000_000_000;
        /// Mapping-table lookup per mapping unit read.
        cpu_lookup_ns: u64 = 1_000, unit "ns", range 0 ..= 1_000_000_000;
        /// Allocating a page in a working block (metadata update).
        cpu_alloc_ns: u64 = 3_000, unit "ns", range 0 ..= 1_000_000_000;
        /// Mapping-table update per mapping unit written, trimmed or moved.
        cpu_map_update_ns: u64 = 2_000, unit "ns", range 0 ..= 1_000_000_000;
        /// Issuing one NAND command (command, address cycles, DMA set-up).
        cpu_command_ns: u64 = 5_000, unit "ns", range 0 ..= 1_000_000_000;
        /// Finishing a request (status into the host response queue).
        cpu_complete_ns: u64 = 10_000, unit "ns", range 0 ..= 1_000_000_000;
        /// Choosing a GC victim.
        cpu_gc_victim_ns: u64 = 10_000, unit "ns", range 0 ..= 1_000_000_000;
        /// Status-register poll period of a task waiting for its read or copyback with the CPU.
        nand_poll_ns: u64 = 1_000, unit "ns", range 1 ..= 1_000_000_000;
        /// Poll period of the monitor task (checking every outstanding NAND operation).
        monitor_poll_ns: u64 = 2_000, unit "ns", range 1 ..= 1_000_000_000;
        /// Monitor work to wake a task whose operation finished.
        cpu_wake_ns: u64 = 2_000, unit "ns", range 0 ..= 1_000_000_000;
    }
}

/// Quantities derived from the settings and the device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizing {
    pub units_per_page: u32,
    pub logical_units: u32,
    pub spare_blocks_per_die: f64,
    /// Working blocks a die may host at once (tasks spread over the dies).
    pub working_blocks_per_die: u32,
}

impl MtFtlConfig {
    /// Parses and checks the `[ftl]` table against the device.
    pub fn from_experiment(config: &ExperimentConfig) -> Result<(Self, Sizing), ConfigError> {
        let mut cfg: MtFtlConfig = crate::ftl::registry::parse_section(config)?;
        if cfg.name == "st-ftl" && !config.ftl.contains_key("tasks") {
            cfg.tasks = 1;
        }
        cfg.check_ranges()?;
        if cfg.name == "st-ftl" && cfg.tasks != 1 {
            return Err(ConfigError::invalid(
                "ftl.tasks",
                cfg.tasks,
                "st-ftl runs one FTL task (use mt-ftl for more)",
                "1",
            ));
        }
        let sizing = cfg.sizing(config)?;
        Ok((cfg, sizing))
    }

    /// The defaults of `name` (`mt-ftl` or `st-ftl`).
    pub fn named(name: &str) -> Self {
        MtFtlConfig {
            name: name.into(),
            tasks: if name == "st-ftl" { 1 } else { 4 },
            ..MtFtlConfig::default()
        }
    }

    fn sizing(&self, config: &ExperimentConfig) -> Result<Sizing, ConfigError> {
        let g = &config.geometry;
        let units_per_page = units_per_page(config, self.mapping_unit_bytes, &self.name)?;
        let dies = g.total_dies();
        let working_blocks_per_die = self.tasks.div_ceil(dies);
        let spare_blocks_per_die = self.check_spare_blocks(g, working_blocks_per_die)?;
        let logical_units = logical_units(
            g,
            units_per_page,
            self.mapping_unit_bytes,
            self.over_provisioning,
            &self.name,
        )?;
        Ok(Sizing {
            units_per_page,
            logical_units,
            spare_blocks_per_die,
            working_blocks_per_die,
        })
    }

    /// Spare blocks per die must cover the working blocks a die hosts, its GC block and the
    /// GC reserve, or GC could find nothing to reclaim.
    fn check_spare_blocks(&self, g: &Geometry, working: u32) -> Result<f64, ConfigError> {
        let blocks_per_die = f64::from(g.planes_per_die * g.blocks_per_plane);
        let spare = blocks_per_die * self.over_provisioning;
        let needed = f64::from(working + 1 + self.gc_free_blocks);
        if spare >= needed {
            return Ok(spare);
        }
        let min_op = (needed / blocks_per_die * 1e4).ceil() / 1e4;
        Err(ConfigError::invalid(
            "ftl.over_provisioning",
            self.over_provisioning,
            format!(
                "{spare:.2} spare blocks per die; {} needs {needed} ({working} working block(s) per die for {} task(s), \
                 a GC block and ftl.gc_free_blocks)",
                self.name, self.tasks
            ),
            if min_op <= 0.95 {
                format!("{min_op} ..= 0.95, or fewer ftl.tasks")
            } else {
                "a larger device (geometry.blocks_per_plane)".into()
            },
        ))
    }
}
