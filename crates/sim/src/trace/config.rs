//! Typed settings of a trace replay (`[trace]` in a configuration, `--set trace.KEY=VALUE`).

use serde::{Deserialize, Serialize};

use super::formats::FormatChoice;
use crate::config::{ConfigError, MAX_CONFIG_INTEGER, MAX_SIMULATED_NS};
use crate::settings;

/// How the devices of a multi-device trace share the simulated SSD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceSpaces {
    /// Each device gets its own region, one after another (no aliasing).
    Separate,
    /// All devices use the same addresses, overlapping (what MQSim does).
    Shared,
}

/// How trace addresses are placed on the simulated device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AddressMap {
    /// Remove the holes between the extents the trace touches (in `compact_unit_bytes`).
    Compact,
    /// Addresses modulo the logical capacity.
    Wrap,
    /// Addresses as they are; the trace must fit.
    None,
}

/// Open, closed or bounded-open loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayMode {
    /// Requests arrive at the trace's timestamps (scaled by `speedup`).
    Open,
    /// `queue_depth` requests are kept outstanding; timestamps are ignored.
    Closed,
    /// Requests arrive at the trace's timestamps, the device holds at most `queue_depth`,
    /// the rest wait host-side in arrival order (their wait counts in the response time).
    BoundedOpen,
}

settings! {
    /// Replay of a block trace; when `path` is set it replaces the synthetic workload.
    pub struct TraceConfig in "trace" {
        /// Trace file (plain, gzip or zstd; sample:tpcc or sample:wsrch: a sample built in); empty runs the synthetic workload instead.
        path: String = String::new(), unit "";
        /// auto, msr, spc, disksim-ms, disksim-ns, disksim, blkparse-q, blkparse-d, fio or generic:... (see `flashlab trace formats`).
        format: String = String::from("auto"), unit "";
        /// Devices to replay, e.g. `0,3` (blkparse `major:minor`, e.g. `8:0`); empty: all.
        devices: String = String::new(), unit "";
        /// How the devices of the trace share the SSD: separate regions, or shared addresses (as MQSim).
        device_spaces: DeviceSpaces = DeviceSpaces::Separate, unit "", choices "separate | shared";
        /// Placing trace addresses on the SSD: compact (remove unused holes), wrap (modulo capacity) or none (must fit).
        address_map: AddressMap = AddressMap::Compact, unit "", choices "compact | wrap | none";
        /// Granularity of compaction: holes are removed in units of this size.
        compact_unit_bytes: u64 = 4096, unit "bytes", range 512 ..= 1_073_741_824;
        /// open: at the trace's timestamps; closed: queue_depth requests outstanding, timestamps ignored; bounded-open: at the timestamps, at most queue_depth in the device, the rest wait host-side (counted in the response time).
        replay: ReplayMode = ReplayMode::Open, unit "", choices "open | closed | bounded-open";
        /// Requests kept outstanding in closed-loop replay; the most the device holds in bounded-open replay.
        queue_depth: u32 = 32, unit "requests", range 1 ..= 1_048_576;
        /// Replay this many times faster than recorded (0.5: half speed); open and bounded-open only.
        speedup: f64 = 1.0, unit "x", range 0.000001 ..= 1e9;
        /// Replay only the first this many requests of the file (0: all).
        max_requests: u64 = 0, unit "requests", range 0 ..= MAX_CONFIG_INTEGER;
        /// Replay only this much of the trace's own time from its first request (0: all).
        max_duration_ns: u64 = 0, unit "ns", range 0 ..= MAX_SIMULATED_NS;
        /// Leave the first this many requests out of the statistics (they still run).
        warmup_requests: u64 = 0, unit "requests", range 0 ..= MAX_CONFIG_INTEGER;
        /// Leave the requests of this much of the trace's own time out of the statistics.
        warmup_ns: u64 = 0, unit "ns", range 0 ..= MAX_SIMULATED_NS;
        /// Count and skip malformed lines, with a warning, instead of stopping at the first.
        skip_bad_lines: bool = false, unit "";
        /// Requests held to put an unsorted trace in time order; later stragglers are issued late and counted.
        reorder_window: u32 = 4096, unit "requests", range 1 ..= 16_777_216;
        /// Relative deadline given to every request (used by EDF queues; 0: none).
        deadline_ns: u64 = 0, unit "ns", range 0 ..= MAX_SIMULATED_NS;
    }
}

impl TraceConfig {
    /// Whether a trace is to be replayed.
    pub fn enabled(&self) -> bool {
        !self.path.is_empty()
    }

    /// Checks ranges, the format and the device list.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.check_ranges()?;
        self.format_choice()?;
        self.device_list()?;
        if self.compact_unit_bytes % 512 != 0 {
            return Err(ConfigError::invalid(
                "trace.compact_unit_bytes",
                self.compact_unit_bytes,
                "not a multiple of 512",
                "multiples of 512 from 512 to 1 GiB",
            ));
        }
        Ok(())
    }

    /// The parsed `format`.
    pub fn format_choice(&self) -> Result<FormatChoice, ConfigError> {
        FormatChoice::parse(&self.format).map_err(|e| {
            ConfigError::invalid(
                "trace.format",
                &self.format,
                e,
                "see `flashlab trace formats`",
            )
        })
    }

    /// The parsed `devices` (empty: all).
    pub fn device_list(&self) -> Result<Vec<u32>, ConfigError> {
        let bad = |item: &str| {
            ConfigError::invalid(
                "trace.devices",
                &self.devices,
                format!("`{item}` is not a device number"),
                "comma-separated numbers (blkparse: major:minor, e.g. 8:0)",
            )
        };
        let mut list = Vec::new();
        for item in self
            .devices
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            let id = match item.split_once(':') {
                Some((major, minor)) => {
                    let dev = format!("{major},{minor}");
                    super::formats::blkparse::parse_device(dev.as_bytes())
                        .ok_or_else(|| bad(item))?
                }
                None => item.parse::<u32>().map_err(|_| bad(item))?,
            };
            list.push(id);
        }
        Ok(list)
    }
}
