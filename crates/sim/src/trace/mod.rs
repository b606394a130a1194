//! Block traces: readers for the common formats (MSR Cambridge, SPC/UMass, DiskSim in
//! milliseconds or nanoseconds, blkparse, fio iologs, a generic described CSV), streaming
//! from plain, gzip or zstd files; replay on the simulated SSD ([`TraceSource`]); statistics
//! ([`trace_stats`]) and conversion ([`TraceWriter`]); the sample traces built in
//! ([`samples`]: `sample:tpcc`, `sample:wsrch`).
//!
//! Pipeline: [`TraceReader`] (lines -> records, file:line errors) -> [`Ordered`] (device
//! selection, time order, limits) -> [`TraceSource`] (address placement, pacing) -> engine.

mod config;
pub mod fields;
pub mod formats;
mod input;
mod ordered;
mod reader;
mod replay;
mod resolution;
pub mod samples;
mod stats;
mod units;

pub use config::{AddressMap, DeviceSpaces, ReplayMode, TraceConfig};
pub use formats::{FormatChoice, TraceFormat, TraceRecord, TraceWriter, FORMAT_NAMES};
pub use input::{Compression, LineReader, TraceInput, STDIN_LABEL};
pub use ordered::{OrderCounts, OrderOptions, Ordered};
pub use reader::{ReadOptions, TraceReader};
pub use replay::{AddressSummary, TraceSource};
pub use resolution::ResolutionCheck;
pub use stats::{render_stats, stats_document, trace_stats, StatsBuilder, TraceStats};
pub use units::UnitCheck;

/// Largest request a trace may hold; anything larger is a unit mistake, not a request.
pub const MAX_REQUEST_BYTES: u64 = 1 << 40;
