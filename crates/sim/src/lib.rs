//! # flashlab-sim
//!
//! The core of flashlab: a simulated SSD (NAND functional state plus a timing model of dies,
//! channel buses, host link and FTL CPU), FTL plug-ins chosen by name, workloads, metrics.
//!
//! ```
//! use flashlab_sim::{config::ExperimentConfig, run_experiment};
//! let config = ExperimentConfig::with_sets("default", &[
//!     "geometry.blocks_per_plane=16",
//!     "ftl.over_provisioning=0.25",
//!     "workload.count=2000",
//!     "run.precondition=0.5",
//! ]).unwrap();
//! let report = run_experiment(&config, &mut |_| {}).unwrap();
//! assert_eq!(report.host.all.count, 2000);
//! ```
//!
//! Layers (see `ARCHITECTURE.md`): [`workload`] produces [`host::Request`]s; the [`engine`]
//! chops them, orders overlapping ones, moves data over the host [`host::Link`] and hands
//! sub-requests to the [`ftl`]; the FTL applies operations to the [`nand`] state and submits
//! timed commands to the [`flash`] scheduler; [`stats`] turns what happened into a report.

pub mod blockdev;
pub mod config;
pub mod engine;
pub mod experiment;
pub mod flash;
pub mod ftl;
pub mod host;
pub mod large_array;
pub mod memory;
pub mod nand;
pub mod realtime;
pub mod rtos;
pub mod stats;
pub mod stop;
pub mod testing;
pub mod trace;
pub mod verify;
pub mod workload;

use thiserror::Error;

pub use config::{ConfigError, ExperimentConfig};
pub use engine::{Progress, Simulation};
pub use stats::Report;
pub use stop::StopCheck;

/// Why a simulation could not run or finish.
#[derive(Debug, Error)]
pub enum SimError {
    /// Bad configuration (user input).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Bad request or trace input, with where it came from.
    #[error("{location}: {message}")]
    Input { location: String, message: String },
    /// An FTL broke a NAND rule: a bug in the FTL.
    #[error("internal error in FTL `{ftl}`: {source}")]
    Nand {
        ftl: &'static str,
        source: nand::NandError,
    },
    /// An FTL detected an inconsistency or could not proceed.
    #[error("internal error in FTL `{ftl}`: {message}")]
    Ftl { ftl: &'static str, message: String },
    /// A read returned other data than the last written (verify runs).
    #[error("data check failed: {0}")]
    Verify(String),
    /// The caller's [`StopCheck`] asked to stop (neither bad input nor a defect).
    #[error("interrupted")]
    Interrupted,
    /// `run.admission = "enforce"` and the real-time test refuses the task set (user input).
    #[error("{0}")]
    Admission(String),
    /// A flash image was to be recovered with an FTL that cannot rebuild its state from the
    /// flash (user input: the FTL chosen for an existing image).
    #[error("FTL `{ftl}` does not support power-loss recovery: it cannot rebuild its state from a flash image (FTLs that can: {})", crate::ftl::registry::RECOVERABLE.join(", "))]
    RecoveryUnsupported { ftl: &'static str },
}

impl SimError {
    /// Whether the error comes from user input (configuration, workload, trace) rather than a
    /// defect of the simulator or an FTL.
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            SimError::Config(_)
                | SimError::Input { .. }
                | SimError::Admission(_)
                | SimError::RecoveryUnsupported { .. }
        )
    }
}

/// The request source a configuration asks for: its trace when `trace.path` is set, else its
/// synthetic workload.
pub fn workload_source(
    config: &ExperimentConfig,
    sim: &Simulation,
) -> Result<Box<dyn workload::RequestSource>, SimError> {
    if config.trace.enabled() {
        let sector = u64::from(config.host.sector_bytes);
        let source = trace::TraceSource::with_stop_check(
            &config.trace,
            sim.logical_bytes(),
            sector,
            sim.stop_check(),
        )?;
        Ok(Box::new(source))
    } else if config.workload.pattern == workload::Pattern::Periodic {
        let page_bytes = u64::from(sim.nand().layout().page_bytes);
        let source = workload::PeriodicSource::new(
            &config.workload,
            sim.logical_bytes(),
            page_bytes,
            config.run.seed,
        )?;
        Ok(Box::new(source))
    } else {
        let source =
            workload::SyntheticSource::new(&config.workload, sim.logical_bytes(), config.run.seed)?;
        Ok(Box::new(source))
    }
}

/// Runs one experiment: builds the device, preconditions it, replays the configured trace or
/// synthetic workload with full timing (or functionally), checks invariants in verify runs, and reports.
pub fn run_experiment(
    config: &ExperimentConfig,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report, SimError> {
    run_experiment_with_stop_check(config, progress, None)
}

/// [`run_experiment`] that ends with [`SimError::Interrupted`] when `stop` asks it to, at a
/// progress point of preconditioning, trace reading or the measured run.
pub fn run_experiment_with_stop_check(
    config: &ExperimentConfig,
    progress: &mut dyn FnMut(Progress),
    stop: Option<StopCheck>,
) -> Result<Report, SimError> {
    let mut sim = Simulation::new(config)?;
    sim.set_stop_check(stop);
    if config.run.precondition > 0.0 {
        sim.precondition()?;
    }
    let source = workload_source(config, &sim)?;
    let source = sim.run(source, progress)?;
    let describe = source.describe();
    check_measured(&sim, &describe)?;
    if config.run.verify {
        sim.check_invariants().map_err(|message| SimError::Ftl {
            ftl: sim.ftl().name(),
            message: format!("invariant broken at the end of the run: {message}"),
        })?;
    }
    Ok(stats::build_report(&sim, describe))
}

/// A run that measured no request has no result (a table of zeros would look like one): an
/// input error saying why, from the source's description (`workload`).
pub fn check_measured(sim: &Simulation, workload: &serde_json::Value) -> Result<(), SimError> {
    if sim.host_stats().completed() > 0 {
        return Ok(());
    }
    let number = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    let (location, why) = if workload["kind"] == "trace" {
        let summary = &workload["summary"];
        let replay = &workload["replay"];
        let requests = number(&summary["requests"]);
        let why = if requests == 0 {
            format!(
                "the trace has no request to replay ({} lines read, {} requests of other devices left out by trace.devices, {} of zero length)",
                number(&summary["lines_read"]),
                number(&summary["skipped"]["other_devices"]),
                number(&summary["skipped"]["zero_length"]),
            )
        } else {
            format!(
                "all {requests} requests of the trace fell in the warm-up (trace.warmup_requests = {}, trace.warmup_ns = {}): shorten the warm-up",
                number(&replay["warmup_requests"]),
                number(&replay["warmup_ns"]),
            )
        };
        (
            workload["path"].as_str().unwrap_or("trace").to_string(),
            why,
        )
    } else {
        (
            "workload".to_string(),
            "no request completed (is workload.duration_ns shorter than the first arrival?)".into(),
        )
    };
    Err(SimError::Input {
        location,
        message: format!("nothing was measured: {why}"),
    })
}
