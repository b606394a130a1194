//! Workloads: the request-source interface every workload and trace implements, the typed
//! synthetic-workload settings, their compact command-line syntax, the generator, and the
//! file-system models: the desktop ([`desktop`]: a PC's installs, browsing, editing and
//! background I/O), the web browser's cache ([`web`]) and the file-system benchmarks
//! ([`fsbench`]), the last two on the FAT volume of [`fatvol`].

pub mod desktop;
pub mod fatvol;
pub mod fsbench;
pub mod periodic;
mod spec;
mod synthetic;
pub mod web;

pub use desktop::{DesktopModel, DesktopTrace, ThinkTime};
pub use fsbench::FsTrace;
pub use periodic::{PeriodicSource, PeriodicTask, TaskOp, TaskPattern};
pub use spec::{
    parse_count, parse_duration_ns, parse_number, parse_size, parse_spec, parse_tasks, SizeSpec,
    SPEC_HELP,
};
pub use synthetic::SyntheticSource;

use serde::{Deserialize, Serialize};

use crate::config::settings::shown_number;
use crate::config::{ConfigError, MAX_CONFIG_INTEGER, MAX_SIMULATED_NS};
use crate::host::Request;
use crate::settings;
use crate::SimError;

/// How requests are paced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopMode {
    /// Keep exactly `queue_depth` requests outstanding; arrival times are ignored.
    Closed { queue_depth: u32 },
    /// Requests arrive at the times the source gives.
    Open,
    /// Requests arrive at the times the source gives, but the device holds at most
    /// `queue_depth` of them: later arrivals wait host-side, in arrival order, until a request
    /// completes. Their response time counts from arrival, host-side wait included (a host
    /// replaying a timestamped trace into a device queue of that depth).
    BoundedOpen { queue_depth: u32 },
}

/// How a synthetic workload is paced (`workload.pacing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pacing {
    /// Open loop when `rate_iops` > 0, else closed loop at `queue_depth`.
    Auto,
    /// `queue_depth` requests outstanding; `rate_iops` must be 0.
    Closed,
    /// Arrivals at `rate_iops` with the `arrival` process, however many are outstanding.
    Open,
    /// Arrivals at `rate_iops`, at most `queue_depth` in the device, the rest waiting
    /// host-side (their wait is part of the response time).
    BoundedOpen,
}

/// A stream of host requests (synthetic generator, trace reader, ...).
pub trait RequestSource {
    /// The next request, `None` when the stream ends. Closed-loop sources are asked when a
    /// slot frees (`now_ns`); open-loop sources give arrival times in non-decreasing order.
    fn next_request(&mut self, now_ns: u64) -> Result<Option<Request>, SimError>;
    fn loop_mode(&self) -> LoopMode;
    /// Requests the source will produce, when known (for progress bars).
    fn expected_requests(&self) -> Option<u64>;
    /// Simulated duration limit, when the source has one.
    fn duration_ns(&self) -> Option<u64> {
        None
    }
    /// Whether the request just returned belongs to a warm-up prefix, left out of the
    /// statistics (measurements restart at the first request that does not).
    fn in_warmup(&self) -> bool {
        false
    }
    /// Description for reports (asked after the run, so it may say what the run consumed).
    fn describe(&self) -> serde_json::Value;
}

/// Address pattern of a synthetic workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// Consecutive requests, wrapping at the end of the range.
    Sequential,
    /// Uniformly random aligned offsets.
    Uniform,
    /// Zipf-distributed offsets (exponent `zipf_theta`), hot offsets scattered over the range.
    Zipf,
    /// `hot_access` of the requests go to the first `hot_space` of the range.
    Hotcold,
    /// A desktop PC's mix of installs, browsing, editing and background I/O over a sparse
    /// file system ([`desktop`]); sizes, offsets and the read/write mix come from the model.
    Desktop,
    /// A web browser's disk cache on a FAT32 volume ([`web`]): small files written whole,
    /// evicted, read back, and hot FAT, directory and index writes.
    Web,
    /// The file-system benchmarks of nftl-lookup-pagecache.txt on a FAT32 volume
    /// ([`fsbench`]): Andrew, Postmark and IOzone; the stream ends with the benchmarks.
    Fsbench,
    /// Periodic real-time tasks (`workload.tasks`, [`periodic`]): each reads or writes a
    /// fixed size every period, open loop, with a deadline per job.
    Periodic,
}

impl Pattern {
    /// Whether a file-system model makes the sizes, offsets and read/write mix.
    pub fn is_model(self) -> bool {
        matches!(self, Pattern::Desktop | Pattern::Web | Pattern::Fsbench)
    }

    /// The kind's name in the compact syntax.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Sequential => "sequential",
            Pattern::Uniform => "uniform",
            Pattern::Zipf => "zipf",
            Pattern::Hotcold => "hotcold",
            Pattern::Desktop => "desktop",
            Pattern::Web => "web",
            Pattern::Fsbench => "fsbench",
            Pattern::Periodic => "periodic",
        }
    }
}

/// Inter-arrival times of an open-loop workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    /// Exponential inter-arrival times (a Poisson process).
    Poisson,
    /// Constant inter-arrival time.
    Fixed,
    /// Bursts of requests separated by idle (think) gaps, at the same mean rate
    /// ([`ThinkTime`]); the default of the desktop kind.
    Bursty,
}

settings! {
    /// A synthetic workload (see `flashlab run --help` for the compact `--workload` syntax).
    pub struct WorkloadConfig in "workload" {
        /// Address pattern.
        pattern: Pattern = Pattern::Uniform, unit "", choices "sequential | uniform | zipf | hotcold | desktop | web | fsbench | periodic";
        /// Fraction of reads among reads and writes.
        read_fraction: f64 = 0.7, unit "fraction", range 0.0 ..= 1.0;
        /// Fraction of all requests that are trims (deallocations) of a request-sized range.
        trim_fraction: f64 = 0.0, unit "fraction", range 0.0 ..= 1.0;
        /// Issue a flush after every this many writes (0: never).
        flush_every: u64 = 0, unit "writes", range 0 ..= MAX_CONFIG_INTEGER;
        /// Request size: `4k`, a weighted mix `4k:70,64k:30`, or a range `4k-128k`.
        block_size: SizeSpec = SizeSpec::fixed(4096), unit "bytes";
        /// Offsets (and sizes of a range) are multiples of this; 0 aligns to the request size.
        align_bytes: u64 = 4096, unit "bytes", range 0 ..= 1_099_511_627_776;
        /// Requests kept outstanding (closed loop), or the most the device holds (bounded-open); unused in open loop.
        queue_depth: u32 = 32, unit "requests", range 1 ..= 1_048_576;
        /// Open-loop arrival rate; 0 runs closed loop at queue_depth (at most one request per nanosecond, the simulated clock's resolution).
        rate_iops: f64 = 0.0, unit "requests/s", range 0.0 ..= 1e9;
        /// auto: open loop when rate_iops > 0, else closed; closed; open; bounded-open: arrivals at rate_iops, at most queue_depth in the device, the rest wait host-side (counted in the response time).
        pacing: Pacing = Pacing::Auto, unit "", choices "auto | closed | open | bounded-open";
        /// Inter-arrival distribution of an open loop.
        arrival: Arrival = Arrival::Poisson, unit "", choices "poisson | fixed | bursty";
        /// Requests to issue (0: unlimited, then duration_ns must be set).
        count: u64 = 1_000_000, unit "requests", range 0 ..= MAX_CONFIG_INTEGER;
        /// Stop issuing after this much simulated time (0: no limit).
        duration_ns: u64 = 0, unit "ns", range 0 ..= MAX_SIMULATED_NS;
        /// Zipf exponent (pattern zipf); 0 is uniform, 0.99 is YCSB's default.
        zipf_theta: f64 = 0.99, unit "", range 0.0 ..= 10.0;
        /// Share of the range that is hot (pattern hotcold).
        hot_space: f64 = 0.2, unit "fraction", range 0.000001 ..= 0.999999;
        /// Share of requests that go to the hot space (pattern hotcold).
        hot_access: f64 = 0.8, unit "fraction", range 0.0 ..= 1.0;
        /// Fraction of the logical space the workload addresses (from offset 0).
        range_fraction: f64 = 1.0, unit "fraction", range 0.000001 ..= 1.0;
        /// Relative deadline given to every request (used by EDF queues; 0: none).
        deadline_ns: u64 = 0, unit "ns", range 0 ..= MAX_SIMULATED_NS;
        /// Web: the browser cache's quota, as a share of the volume (IE's default of the time: a few percent of the drive).
        web_cache_fraction: f64 = 0.03, unit "fraction", range 0.0001 ..= 0.9;
        /// Web: share of the volume's data area other files hold (never written by the stream).
        web_used_fraction: f64 = 0.5, unit "fraction", range 0.0 ..= 0.95;
        /// Web: share of the objects a page view fetches that are in the disk cache (read back).
        web_hit_fraction: f64 = 0.4, unit "fraction", range 0.0 ..= 1.0;
        /// Fsbench: the benchmarks run: combo (Andrew, Postmark, Postmark long, IOzone) or atopm (Andrew, Postmark).
        fsbench_phases: FsTrace = FsTrace::Combo, unit "", choices "combo | atopm";
        /// Fsbench: share of the volume the files may fill; 0: the paper's for the phases (combo 0.94, atopm 0.23).
        fsbench_utilisation: f64 = 0.0, unit "fraction", range 0.0 ..= 1.0;
        /// Periodic: the tasks ([[workload.tasks]] tables: op, pages or bytes, period_ns, offset_ns, deadline_ns, count, pattern; see workload.tasks.*).
        tasks: Vec<PeriodicTask> = Vec::new(), unit "";
    }
}

impl WorkloadConfig {
    /// Checks ranges and combinations.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.check_ranges()?;
        self.block_size.validate("workload.block_size")?;
        if self.count == 0 && self.duration_ns == 0 {
            return Err(ConfigError::invalid(
                "workload.count",
                0,
                "an unlimited count needs workload.duration_ns",
                "count >= 1, or duration_ns >= 1",
            ));
        }
        self.check_periodic()?;
        self.check_arrival_span()?;
        self.check_pacing()?;
        if self.pattern.is_model() {
            self.check_model()?;
        }
        self.check_model_parameters()?;
        if self.align_bytes % 512 != 0 {
            return Err(ConfigError::invalid(
                "workload.align_bytes",
                self.align_bytes,
                "not a multiple of 512",
                "multiples of 512 (or 0)",
            ));
        }
        Ok(())
    }

    /// The requests this workload makes must be whole sectors of a device with
    /// `sector_bytes` sectors (`host.sector_bytes`); checked with the configuration, not when
    /// the first odd request reaches the device after preconditioning. Offsets are multiples
    /// of the alignment (`align_bytes`, else the smallest request), range sizes multiples of
    /// it too, fixed and mixed sizes as given; the FAT32 models (web, fsbench) write 512-byte
    /// sectors, the desktop model 4 KiB clusters, periodic tasks pages or bytes.
    pub fn check_sector_size(&self, sector_bytes: u64) -> Result<(), ConfigError> {
        let sector = sector_bytes.max(1);
        let whole = |bytes: u64| bytes % sector == 0;
        let sectors = format!("host.sector_bytes = {sector_bytes}");
        match self.pattern {
            Pattern::Web | Pattern::Fsbench if sector_bytes != 512 => {
                return Err(ConfigError::invalid(
                    "host.sector_bytes",
                    sector_bytes,
                    format!(
                        "the {} workload's FAT32 volume writes 512-byte sectors (workload.pattern = {})",
                        self.pattern.name(),
                        self.pattern.name()
                    ),
                    "512 with this workload",
                ));
            }
            Pattern::Periodic => {
                if let Some((i, t)) = self
                    .tasks
                    .iter()
                    .enumerate()
                    .find(|(_, t)| t.pages == 0 && !whole(t.bytes))
                {
                    return Err(ConfigError::invalid(
                        format!("workload.tasks[{i}].bytes"),
                        t.bytes,
                        format!("not a whole number of sectors ({sectors})"),
                        format!("multiples of {sector_bytes}, or pages"),
                    ));
                }
                return Ok(());
            }
            p if p.is_model() => return Ok(()),
            _ => {}
        }
        let align = if self.align_bytes == 0 {
            self.block_size.min_bytes()
        } else {
            self.align_bytes
        };
        if !whole(align) {
            let (field, value) = if self.align_bytes == 0 {
                ("workload.block_size", self.block_size.to_string())
            } else {
                ("workload.align_bytes", spec::show_size(align))
            };
            return Err(ConfigError::invalid(
                field,
                value,
                format!(
                    "requests would start inside a sector: offsets are multiples of {align} bytes, \
                     not of the device's sectors ({sectors})"
                ),
                format!("an alignment (align=, or the smallest size when it is 0) that is a multiple of {sector_bytes}"),
            ));
        }
        let odd_size = match &self.block_size {
            SizeSpec::Fixed(b) => Some(*b).filter(|b| !whole(*b)),
            SizeSpec::Mix(mix) => mix.iter().map(|(b, _)| *b).find(|b| !whole(*b)),
            // Range sizes are multiples of the alignment.
            SizeSpec::Range(..) => None,
        };
        if let Some(size) = odd_size {
            return Err(ConfigError::invalid(
                "workload.block_size",
                &self.block_size,
                format!("requests of {size} bytes are not whole sectors ({sectors})"),
                format!("sizes that are multiples of {sector_bytes}"),
            ));
        }
        Ok(())
    }

    /// An open loop's `count` requests must arrive within the simulated clock's range.
    fn check_arrival_span(&self) -> Result<(), ConfigError> {
        if self.rate_iops <= 0.0 || self.count == 0 {
            return Ok(());
        }
        let span_ns = self.count as f64 / self.rate_iops * 1e9;
        if span_ns <= MAX_SIMULATED_NS as f64 {
            return Ok(());
        }
        let years = span_ns / 1e9 / (365.25 * 86_400.0);
        let min_rate = self.count as f64 / (MAX_SIMULATED_NS as f64 / 1e9);
        Err(ConfigError::invalid(
            "workload.rate_iops",
            shown_number(self.rate_iops),
            format!(
                "{} requests at this rate arrive over {} years of simulated time, beyond the \
                 146 years the simulated clock holds",
                self.count,
                shown_number(years.round())
            ),
            format!(
                "at least {:.3e} requests/s for workload.count = {}, or a smaller count with a duration",
                min_rate * 1.001,
                self.count
            ),
        ))
    }

    /// How requests are paced (`pacing`, resolved against `rate_iops`).
    pub fn loop_mode(&self) -> LoopMode {
        let queue_depth = self.queue_depth;
        match self.pacing {
            Pacing::Closed => LoopMode::Closed { queue_depth },
            Pacing::Open => LoopMode::Open,
            Pacing::BoundedOpen => LoopMode::BoundedOpen { queue_depth },
            Pacing::Auto if self.rate_iops > 0.0 => LoopMode::Open,
            Pacing::Auto => LoopMode::Closed { queue_depth },
        }
    }

    /// An explicit pacing must agree with `rate_iops`.
    fn check_pacing(&self) -> Result<(), ConfigError> {
        let open = matches!(self.pacing, Pacing::Open | Pacing::BoundedOpen);
        if open && self.rate_iops == 0.0 {
            return Err(ConfigError::invalid(
                "workload.pacing",
                crate::config::settings::render_value(&self.pacing),
                "needs arrivals: set workload.rate_iops (rate=) above 0",
                "closed or auto without a rate; open or bounded-open with rate_iops > 0",
            ));
        }
        if self.pacing == Pacing::Closed && self.rate_iops > 0.0 {
            return Err(ConfigError::invalid(
                "workload.pacing",
                "closed",
                format!(
                    "closed loop ignores arrivals, but rate_iops is {}",
                    self.rate_iops
                ),
                "rate_iops = 0 with closed; open or bounded-open with a rate",
            ));
        }
        Ok(())
    }

    /// A file-system model (desktop, web, fsbench) makes its own sizes, offsets and
    /// read/write mix: settings for them must keep their defaults.
    fn check_model(&self) -> Result<(), ConfigError> {
        let kind = self.pattern.name();
        let keep = |name: &str, value: &dyn std::fmt::Display, same: bool| {
            if same {
                return Ok(());
            }
            Err(ConfigError::invalid(
                format!("workload.{name}"),
                value,
                format!("does not apply to the {kind} workload (its sizes, offsets and read/write mix come from its model)"),
                format!("the default; the {kind} workload takes queue_depth, rate_iops, pacing, arrival, count, duration_ns, range_fraction, deadline_ns{}", match self.pattern {
                    Pattern::Web => ", web_cache_fraction, web_used_fraction, web_hit_fraction",
                    Pattern::Fsbench => ", fsbench_phases, fsbench_utilisation",
                    _ => "",
                }),
            ))
        };
        let d = WorkloadConfig::default();
        // Each field named once: its name, its value and whether it kept its default.
        macro_rules! at_default {
            ($($field:ident),*) => {
                $( keep(stringify!($field), &self.$field, self.$field == d.$field)?; )*
            };
        }
        at_default!(
            block_size,
            read_fraction,
            trim_fraction,
            flush_every,
            align_bytes,
            zipf_theta,
            hot_space,
            hot_access
        );
        Ok(())
    }

    /// The web and fsbench parameters apply to their kinds only.
    fn check_model_parameters(&self) -> Result<(), ConfigError> {
        let d = WorkloadConfig::default();
        let only = |name: &str, value: &dyn std::fmt::Display, same: bool, kind: Pattern| {
            if same || self.pattern == kind {
                return Ok(());
            }
            Err(ConfigError::invalid(
                format!("workload.{name}"),
                value,
                format!(
                    "applies to the {} workload only, not {}",
                    kind.name(),
                    self.pattern.name()
                ),
                format!(
                    "the default with pattern {}; any value with pattern {}",
                    self.pattern.name(),
                    kind.name()
                ),
            ))
        };
        macro_rules! only_for {
            ($kind:expr => $($field:ident),*) => {
                $( only(stringify!($field), &self.$field, self.$field == d.$field, $kind)?; )*
            };
        }
        only_for!(Pattern::Web => web_cache_fraction, web_used_fraction, web_hit_fraction);
        let phases = crate::config::settings::render_value(&self.fsbench_phases);
        let fs = Pattern::Fsbench;
        only(
            "fsbench_phases",
            &phases,
            self.fsbench_phases == d.fsbench_phases,
            fs,
        )?;
        only_for!(fs => fsbench_utilisation);
        Ok(())
    }

    /// A periodic workload has tasks and nothing of the other kinds' request making (its
    /// tasks give sizes, operations, arrivals and deadlines); tasks belong to it alone.
    fn check_periodic(&self) -> Result<(), ConfigError> {
        if self.pattern != Pattern::Periodic {
            if self.tasks.is_empty() {
                return Ok(());
            }
            return Err(ConfigError::invalid(
                "workload.tasks",
                format!("{} task entries", self.tasks.len()),
                format!(
                    "tasks apply to the periodic workload only, not {}",
                    self.pattern.name()
                ),
                "no tasks, or pattern = \"periodic\" (--workload periodic:tasks=...)",
            ));
        }
        periodic::validate_tasks(&self.tasks)?;
        let d = WorkloadConfig::default();
        let keep = |name: &str, value: &dyn std::fmt::Display, same: bool| {
            if same {
                return Ok(());
            }
            Err(ConfigError::invalid(
                format!("workload.{name}"),
                value,
                "does not apply to the periodic workload (its tasks give sizes, operations, release times and deadlines)",
                "the default; the periodic workload takes tasks, count, duration_ns, range_fraction",
            ))
        };
        macro_rules! at_default {
            ($($field:ident),*) => {
                $( keep(stringify!($field), &self.$field, self.$field == d.$field)?; )*
            };
        }
        at_default!(
            block_size,
            read_fraction,
            trim_fraction,
            flush_every,
            align_bytes,
            queue_depth,
            rate_iops,
            zipf_theta,
            hot_space,
            hot_access,
            deadline_ns
        );
        use crate::config::settings::render_value;
        keep(
            "pacing",
            &render_value(&self.pacing),
            self.pacing == d.pacing,
        )?;
        keep(
            "arrival",
            &render_value(&self.arrival),
            self.arrival == d.arrival,
        )?;
        Ok(())
    }

    /// The fsbench volume's utilisation: the one asked, or the paper's sector range for the
    /// phases (combo 94.19%, atopm 14.36%: [`FsTrace::top_share`]).
    pub fn fsbench_utilisation_resolved(&self) -> f64 {
        if self.fsbench_utilisation > 0.0 {
            self.fsbench_utilisation
        } else {
            self.fsbench_phases.top_share()
        }
    }

    /// The compact `--workload` form of this workload.
    pub fn to_spec(&self) -> String {
        spec::to_spec(self)
    }
}
