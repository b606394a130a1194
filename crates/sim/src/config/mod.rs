//! Typed configuration: device (geometry, timing, host link, FTL CPU), FTL, workload and run
//! settings, presets, and the loader that layers preset -> TOML file -> `--set` overrides.
//!
//! Every value carries its unit in its name and is validated when the configuration is built;
//! errors name the field and the allowed range (see [`ConfigError`]).

mod device;
mod error;
mod experiment;
mod presets;
#[doc(hidden)]
pub mod settings;

pub use device::{
    CpuConfig, DeviceConfig, Geometry, HostConfig, NandRules, ProgramOrder, QueuePolicy, Timing,
};
pub use error::ConfigError;
pub(crate) use experiment::first_line;
pub use experiment::{AdmissionMode, ConfigSource, ExperimentConfig, RunConfig};
pub use presets::{preset, preset_names, MeasuredSetTimes, Preset, PRESETS};
pub use settings::FieldDoc;

/// Latest simulated time a run may reach: 2^62 ns, about 146 years. Settings and arrivals
/// that would go beyond it are refused (the clock would overflow).
pub const MAX_SIMULATED_NS: u64 = 1 << 62;

/// Largest integer a configuration holds: 2^63 - 1, the largest a TOML file (or `--set`)
/// can write, so every configuration can be written back.
pub const MAX_CONFIG_INTEGER: u64 = i64::MAX as u64;
