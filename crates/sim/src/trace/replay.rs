//! [`TraceSource`]: a trace replayed on the simulated SSD.
//!
//! A first pass over the file (the survey) counts the requests and learns the address space
//! each device uses; the second pass replays. Addresses are placed on the SSD by
//! `trace.address_map`: `compact` keeps only the `compact_unit_bytes` units the trace touches,
//! in order, so the holes between extents disappear (as the multi-threaded FTL paper did to
//! fit a desktop partition on a 4 GB board) and the report says how much was removed;
//! `wrap` takes addresses modulo the capacity (a request that would cross the end is moved
//! back to end there); `none` requires the trace to fit. With `device_spaces = separate` each
//! device has its own region. Requests are widened to whole device sectors when needed
//! (counted). Open-loop arrival times are the trace's, relative to its first request, divided
//! by `speedup`; closed loop keeps `queue_depth` requests outstanding; bounded-open keeps the
//! open-loop arrival times but the device holds at most `queue_depth` (the engine holds the
//! rest host-side).

use std::path::Path;

use roaring::RoaringTreemap;
use serde::Serialize;
use serde_json::json;

use super::config::{AddressMap, DeviceSpaces, ReplayMode, TraceConfig};
use super::formats::TraceRecord;
use super::input::TraceInput;
use super::ordered::{OrderCounts, OrderOptions, Ordered};
use super::reader::{ReadOptions, TraceReader};
use super::resolution::ResolutionCheck;
use super::units::UnitCheck;
use crate::config::MAX_SIMULATED_NS;
use crate::host::{Op, Request};
use crate::stop::StopCheck;
use crate::workload::{LoopMode, RequestSource};
use crate::SimError;

/// Bits of a compaction key holding the unit number; the device's index sits above.
const UNIT_BITS: u32 = 48;

/// How the trace's addresses were placed, for the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AddressSummary {
    pub mode: String,
    /// Bytes the trace's address space spans (per device: up to its highest byte touched).
    pub trace_span_bytes: u64,
    /// Bytes of the SSD the replay addresses.
    pub mapped_bytes: u64,
    /// Bytes of unused holes removed by compaction.
    pub removed_bytes: u64,
    /// Distinct `compact_unit_bytes` units touched (compact mode).
    pub touched_units: u64,
    /// Requests widened to whole device sectors.
    pub widened_requests: u64,
}

/// What the survey learnt.
struct Survey {
    requests: u64,
    /// Devices in order of first appearance.
    devices: Vec<u32>,
    /// Per device (same order): one past its highest byte touched.
    device_end: Vec<u64>,
    units: Option<RoaringTreemap>,
    /// Signs of offsets and sizes in other units than the format declares, and of
    /// timestamps too coarse for the open-loop replay asked for.
    warnings: Vec<String>,
    /// Why the offsets and sizes look like bytes read as sectors, if they do (said again
    /// when the trace is too large for the device).
    bytes_read_as_sectors: Option<String>,
}

/// Where each trace address goes.
enum Placement {
    /// Runs of consecutive touched units (first key, first mapped unit), sorted by key.
    Compact {
        runs: Vec<(u64, u64)>,
        unit: u64,
    },
    Linear {
        base: Vec<u64>,
        wrap: bool,
    },
}

/// The maximal runs of consecutive values of `units`, each with its rank (so a lookup is a
/// binary search, whatever the footprint).
fn unit_runs(units: &RoaringTreemap) -> Vec<(u64, u64)> {
    let mut runs = Vec::new();
    let mut previous = None;
    for (rank, key) in units.iter().enumerate() {
        if previous.is_none_or(|p: u64| p + 1 != key) {
            runs.push((key, rank as u64));
        }
        previous = Some(key);
    }
    runs
}

/// Mapped unit of `key` (a touched unit) among `runs`.
fn compact_unit(runs: &[(u64, u64)], key: u64) -> u64 {
    let i = runs
        .partition_point(|&(first, _)| first <= key)
        .saturating_sub(1);
    runs.get(i)
        .map_or(0, |&(first, rank)| rank + key.saturating_sub(first))
}

/// A trace replayed as host requests.
pub struct TraceSource {
    cfg: TraceConfig,
    stream: Ordered,
    devices: Vec<u32>,
    placement: Placement,
    capacity: u64,
    sector: u64,
    expected: u64,
    last_time_ns: u64,
    in_warmup: bool,
    counts: ReplayCounts,
    address: AddressSummary,
    /// What the survey found suspicious (units, coarse timestamps).
    survey_warnings: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
struct ReplayCounts {
    reads: u64,
    writes: u64,
    trims: u64,
    flushes: u64,
    warmup_requests: u64,
}

fn open_ordered(
    cfg: &TraceConfig,
    input: &TraceInput,
    stop: Option<&StopCheck>,
) -> Result<Ordered, SimError> {
    let options = ReadOptions {
        format: cfg.format_choice()?,
        skip_bad_lines: cfg.skip_bad_lines,
    };
    let mut reader = TraceReader::open_input(input, &options)?;
    reader.set_stop_check(stop.cloned());
    Ok(Ordered::new(
        reader,
        OrderOptions {
            devices: cfg.device_list()?,
            reorder_window: cfg.reorder_window as usize,
            max_requests: cfg.max_requests,
            max_duration_ns: cfg.max_duration_ns,
        },
    ))
}

fn device_index(devices: &mut Vec<u32>, device: u32) -> usize {
    match devices.iter().position(|&d| d == device) {
        Some(i) => i,
        None => {
            devices.push(device);
            devices.len() - 1
        }
    }
}

fn survey(
    cfg: &TraceConfig,
    input: &TraceInput,
    stop: Option<&StopCheck>,
) -> Result<Survey, SimError> {
    let mut stream = open_ordered(cfg, input, stop)?;
    let compact = cfg.address_map == AddressMap::Compact;
    let separate = cfg.device_spaces == DeviceSpaces::Separate;
    let unit = cfg.compact_unit_bytes;
    let mut s = Survey {
        requests: 0,
        devices: Vec::new(),
        device_end: Vec::new(),
        units: compact.then(RoaringTreemap::new),
        warnings: Vec::new(),
        bytes_read_as_sectors: None,
    };
    let mut unit_check = UnitCheck::new(stream.reader().format());
    let mut resolution = ResolutionCheck::default();
    while let Some(r) = stream.next_record()? {
        s.requests += 1;
        unit_check.add(&r);
        resolution.add(&r);
        if r.op == Op::Flush {
            continue;
        }
        let d = device_index(&mut s.devices, r.device);
        if d == s.device_end.len() {
            s.device_end.push(0);
        }
        let end = r.offset_bytes.saturating_add(r.len_bytes);
        s.device_end[d] = s.device_end[d].max(end);
        if let Some(units) = &mut s.units {
            let high = if separate { (d as u64) << UNIT_BITS } else { 0 };
            let (first, last) = (r.offset_bytes / unit, (end - 1) / unit);
            if last >= 1 << UNIT_BITS {
                return Err(SimError::Input {
                    location: cfg.path.clone(),
                    message: format!("byte offset {end} is too large to compact in {unit}-byte units (limit 2^48 units)"),
                });
            }
            units.insert_range(high | first..=high | last);
        }
    }
    let format = stream.reader().format();
    s.warnings = unit_check.warnings(format);
    s.bytes_read_as_sectors = unit_check.bytes_read_as_sectors_warning(format);
    if cfg.replay == ReplayMode::Open {
        s.warnings.extend(resolution.open_loop_warning());
    }
    Ok(s)
}

fn gib(bytes: u64) -> String {
    format!("{:.3} GiB", bytes as f64 / (1u64 << 30) as f64)
}

impl TraceSource {
    /// Surveys the trace and prepares its replay on a device of `logical_bytes` with
    /// `sector_bytes` sectors.
    pub fn new(
        cfg: &TraceConfig,
        logical_bytes: u64,
        sector_bytes: u64,
    ) -> Result<TraceSource, SimError> {
        Self::with_stop_check(cfg, logical_bytes, sector_bytes, None)
    }

    /// [`TraceSource::new`] whose survey and replay end with [`SimError::Interrupted`] when
    /// `stop` asks them to (see [`crate::stop`]).
    pub fn with_stop_check(
        cfg: &TraceConfig,
        logical_bytes: u64,
        sector_bytes: u64,
        stop: Option<StopCheck>,
    ) -> Result<TraceSource, SimError> {
        cfg.validate()?;
        // Read once (a copy if it is a pipe), surveyed, then replayed.
        let input = TraceInput::new(Path::new(&cfg.path))?;
        let survey = survey(cfg, &input, stop.as_ref())?;
        let (placement, address) = place(cfg, &survey, logical_bytes)?;
        Ok(TraceSource {
            cfg: cfg.clone(),
            stream: open_ordered(cfg, &input, stop.as_ref())?,
            devices: survey.devices,
            placement,
            capacity: logical_bytes,
            sector: sector_bytes,
            expected: survey.requests,
            last_time_ns: 0,
            in_warmup: false,
            counts: ReplayCounts::default(),
            address,
            survey_warnings: survey.warnings,
        })
    }

    /// Warnings known before the replay: signs that the trace's units are not the ones its
    /// format declares (see [`UnitCheck`]), or that its timestamps are too coarse for an
    /// open-loop replay (see [`ResolutionCheck`]).
    pub fn survey_warnings(&self) -> &[String] {
        &self.survey_warnings
    }

    /// A warning about skipped malformed lines, if any were skipped (so far).
    pub fn bad_lines_warning(&self) -> Option<String> {
        let reader = self.stream.reader();
        (reader.bad_lines() > 0).then(|| {
            format!(
                "skipped {} malformed lines; the first: {}",
                reader.bad_lines(),
                reader.bad_examples().join(" | ")
            )
        })
    }

    /// Places `r` on the SSD: (offset, length) in device bytes.
    fn map(&mut self, r: &TraceRecord) -> Result<(u64, u64), SimError> {
        if r.op == Op::Flush {
            return Ok((0, 0));
        }
        let d = device_index(&mut self.devices, r.device);
        let start = match &self.placement {
            Placement::Compact { runs, unit } => {
                let high = if self.cfg.device_spaces == DeviceSpaces::Separate {
                    (d as u64) << UNIT_BITS
                } else {
                    0
                };
                compact_unit(runs, high | (r.offset_bytes / unit)) * unit + r.offset_bytes % unit
            }
            Placement::Linear { base, .. } => base.get(d).copied().unwrap_or(0) + r.offset_bytes,
        };
        let wrap = matches!(self.placement, Placement::Linear { wrap: true, .. });
        let start = if wrap { start % self.capacity } else { start };
        let (first, end) = (
            start / self.sector * self.sector,
            (start + r.len_bytes).div_ceil(self.sector) * self.sector,
        );
        if first != start || end != start + r.len_bytes {
            self.address.widened_requests += 1;
        }
        let len = end - first;
        if len > self.capacity {
            return Err(SimError::Input {
                location: self.cfg.path.clone(),
                message: format!(
                    "a {} of {len} bytes is larger than the device ({} bytes)",
                    r.op.name(),
                    self.capacity
                ),
            });
        }
        if wrap {
            // A wrapped request crossing the end is moved back to end there (documented).
            return Ok((first.min(self.capacity - len), len));
        }
        if first + len > self.capacity {
            return Err(SimError::Input {
                location: self.cfg.path.clone(),
                message: format!(
                    "a {} at trace offset {} lands past the device's end; the trace changed since it was surveyed?",
                    r.op.name(),
                    r.offset_bytes
                ),
            });
        }
        Ok((first, len))
    }
}

impl TraceSource {
    /// Arrival time of a request at `time_ns` of trace time (from the first request), scaled
    /// by the speed-up; an error beyond the simulated clock's range.
    fn arrival_ns(&self, time_ns: u64) -> Result<u64, SimError> {
        let scaled = time_ns as f64 / self.cfg.speedup;
        // A closed loop ignores arrival times.
        if self.cfg.replay == ReplayMode::Closed || scaled <= MAX_SIMULATED_NS as f64 {
            return Ok(if self.cfg.speedup == 1.0 {
                time_ns
            } else {
                scaled.round() as u64
            });
        }
        let speedup = if self.cfg.speedup == 1.0 {
            String::new()
        } else {
            format!(
                " with trace.speedup = {}",
                crate::config::settings::shown_number(self.cfg.speedup)
            )
        };
        Err(SimError::Input {
            location: self.cfg.path.clone(),
            message: format!(
                "request {} is {time_ns} ns after the first{speedup}: it would arrive after {:.3e} s of simulated time, beyond the 146 years (2^62 ns) the simulated clock holds; check the time unit (--trace-format), raise trace.speedup or limit trace.max_duration_ns",
                self.stream.emitted(),
                scaled / 1e9
            ),
        })
    }
}

/// Where each device's addresses start, and the span of them all: separate devices follow
/// each other, each starting on a compaction unit; shared ones all start at 0.
fn device_regions(cfg: &TraceConfig, s: &Survey) -> (Vec<u64>, u64) {
    if cfg.device_spaces == DeviceSpaces::Shared {
        let span = s.device_end.iter().copied().max().unwrap_or(0);
        return (vec![0; s.device_end.len()], span);
    }
    let unit = cfg.compact_unit_bytes;
    let mut base = Vec::with_capacity(s.device_end.len());
    let mut next = 0u64;
    for &end in &s.device_end {
        base.push(next);
        next = next.saturating_add(end.div_ceil(unit) * unit);
    }
    let span = match (base.last(), s.device_end.last()) {
        (Some(b), Some(e)) => b.saturating_add(*e),
        _ => 0,
    };
    (base, span)
}

/// Decides where the trace goes, or explains why it does not fit.
fn place(
    cfg: &TraceConfig,
    s: &Survey,
    capacity: u64,
) -> Result<(Placement, AddressSummary), SimError> {
    let (base, span) = device_regions(cfg, s);
    let mut summary = AddressSummary {
        mode: format!("{:?}", cfg.address_map).to_lowercase(),
        trace_span_bytes: span,
        ..AddressSummary::default()
    };
    // When the units look wrong, that is the likelier reason (and wrapping or a larger
    // device would replay the trace wrongly): said before the fixes for the declared units.
    let too_big = |what: String, fix: &str| {
        let size = format!(
            "{what}, more than the device's {} ({capacity} bytes)",
            gib(capacity)
        );
        SimError::Input {
            location: cfg.path.clone(),
            message: match &s.bytes_read_as_sectors {
                Some(units) => format!("{size}; but {units}; if they are sectors, {fix}"),
                None => format!("{size}; {fix}"),
            },
        }
    };
    let placement = match cfg.address_map {
        AddressMap::Compact => {
            let empty = RoaringTreemap::new();
            let units = s.units.as_ref().unwrap_or(&empty);
            let unit = cfg.compact_unit_bytes;
            summary.touched_units = units.len();
            summary.mapped_bytes = units.len() * unit;
            summary.removed_bytes = span.saturating_sub(summary.mapped_bytes);
            if summary.mapped_bytes > capacity {
                return Err(too_big(
                    format!("the trace touches {} even compacted", gib(summary.mapped_bytes)),
                    "use trace.address_map=wrap, fewer requests (trace.max_requests) or a larger device",
                ));
            }
            Placement::Compact {
                runs: unit_runs(units),
                unit,
            }
        }
        AddressMap::Wrap | AddressMap::None => {
            summary.mapped_bytes = span.min(capacity);
            let wrap = cfg.address_map == AddressMap::Wrap;
            if !wrap && span > capacity {
                return Err(too_big(
                    format!("the trace addresses {}", gib(span)),
                    "use trace.address_map=compact or wrap, or a larger device",
                ));
            }
            Placement::Linear { base, wrap }
        }
    };
    Ok((placement, summary))
}

impl RequestSource for TraceSource {
    fn next_request(&mut self, _now_ns: u64) -> Result<Option<Request>, SimError> {
        let Some(r) = self.stream.next_record()? else {
            return Ok(None);
        };
        let (offset_bytes, len_bytes) = self.map(&r)?;
        self.last_time_ns = r.time_ns;
        let index = self.stream.emitted() - 1;
        self.in_warmup = index < self.cfg.warmup_requests || r.time_ns < self.cfg.warmup_ns;
        self.counts.warmup_requests += u64::from(self.in_warmup);
        match r.op {
            Op::Read => self.counts.reads += 1,
            Op::Write => self.counts.writes += 1,
            Op::Trim => self.counts.trims += 1,
            Op::Flush => self.counts.flushes += 1,
        }
        let arrival_ns = self.arrival_ns(r.time_ns)?;
        Ok(Some(Request {
            arrival_ns,
            op: r.op,
            offset_bytes,
            len_bytes,
            deadline_ns: self.cfg.deadline_ns,
            task: None,
        }))
    }

    fn loop_mode(&self) -> LoopMode {
        match self.cfg.replay {
            ReplayMode::Open => LoopMode::Open,
            ReplayMode::Closed => LoopMode::Closed {
                queue_depth: self.cfg.queue_depth,
            },
            ReplayMode::BoundedOpen => LoopMode::BoundedOpen {
                queue_depth: self.cfg.queue_depth,
            },
        }
    }

    fn expected_requests(&self) -> Option<u64> {
        Some(self.expected)
    }

    fn in_warmup(&self) -> bool {
        self.in_warmup
    }

    fn describe(&self) -> serde_json::Value {
        let reader = self.stream.reader();
        let c = &self.cfg;
        let order: &OrderCounts = &self.stream.counts;
        json!({
            "kind": "trace",
            "name": Path::new(&c.path).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            "path": c.path,
            "format": reader.format().name(),
            "format_requested": c.format,
            "compression": reader.compression().name(),
            "notes": reader.notes(),
            "warnings": self.survey_warnings.iter().cloned().chain(self.bad_lines_warning()).chain(reader.trailing_bytes_warning()).collect::<Vec<_>>(),
            "replay": {
                "mode": c.replay,
                "queue_depth": (c.replay != ReplayMode::Open).then_some(c.queue_depth),
                "speedup": c.speedup,
                "devices": c.devices,
                "device_spaces": c.device_spaces,
                "address_map": c.address_map,
                "compact_unit_bytes": c.compact_unit_bytes,
                "max_requests": c.max_requests,
                "max_duration_ns": c.max_duration_ns,
                "warmup_requests": c.warmup_requests,
                "warmup_ns": c.warmup_ns,
                "reorder_window": c.reorder_window,
                "skip_bad_lines": c.skip_bad_lines,
                "deadline_ns": c.deadline_ns,
            },
            "summary": {
                "lines_read": reader.lines_read(),
                "bad_lines": reader.bad_lines(),
                "requests": self.stream.emitted(),
                "reads": self.counts.reads,
                "writes": self.counts.writes,
                "trims": self.counts.trims,
                "flushes": self.counts.flushes,
                "warmup_requests": self.counts.warmup_requests,
                "trace_duration_ns": self.last_time_ns,
                "devices": self.devices,
                "skipped": order,
                "address": self.address,
            },
        })
    }
}
