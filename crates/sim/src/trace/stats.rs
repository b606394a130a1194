//! `flashlab trace stats`: what a trace asks of a device. Requests per operation, bytes, the
//! size distribution, footprint (distinct 4 KiB units touched, per device), sequentiality
//! (share of reads/writes/trims starting where the previous request to the same device ended),
//! inter-arrival times and duration. Computed in one streaming pass; memory grows with the
//! footprint (a compressed bitmap), not with the trace's length.

use hdrhistogram::Histogram;
use roaring::RoaringTreemap;
use serde::Serialize;

use super::formats::{TraceFormat, TraceRecord};
use super::ordered::{OrderCounts, Ordered};
use super::reader::TraceReader;
use super::units::UnitCheck;
use crate::host::Op;
use crate::SimError;

/// Footprint granularity.
pub const FOOTPRINT_UNIT_BYTES: u64 = 4096;
/// Upper bounds of the request-size buckets.
const SIZE_BUCKETS: [u64; 9] = [
    4096,
    8192,
    16384,
    32768,
    65536,
    131072,
    262144,
    1 << 20,
    u64::MAX,
];

/// Count and bytes of one operation.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OpCount {
    pub count: u64,
    pub bytes: u64,
}

/// Percentiles of a distribution.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Distribution {
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
}

/// Values recorded for a [`Distribution`]: percentiles from a histogram (to 3 significant
/// digits, reported as the lowest value of their bucket, so exact for round sizes), mean and
/// max exact.
struct Recorder {
    histogram: Histogram<u64>,
    sum: u128,
    max: u64,
}

impl Recorder {
    fn new() -> Recorder {
        Recorder {
            histogram: Histogram::new_with_bounds(1, 1 << 62, 3).expect("valid bounds"),
            sum: 0,
            max: 0,
        }
    }

    fn record(&mut self, v: u64) {
        self.histogram.saturating_record(v);
        self.sum += u128::from(v);
        self.max = self.max.max(v);
    }

    fn distribution(&self) -> Distribution {
        let h = &self.histogram;
        if h.is_empty() {
            return Distribution::default();
        }
        let at = |q| h.lowest_equivalent(h.value_at_quantile(q));
        Distribution {
            mean: self.sum as f64 / h.len() as f64,
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            max: self.max,
        }
    }
}

/// One device's share.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceStats {
    pub device: u32,
    pub requests: u64,
    pub footprint_bytes: u64,
    /// One past the highest byte touched.
    pub highest_byte: u64,
}

/// The statistics of a trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceStats {
    pub requests: u64,
    pub read: OpCount,
    pub write: OpCount,
    pub trim: OpCount,
    pub flush: OpCount,
    pub read_fraction: f64,
    /// Request sizes in bytes (reads, writes, trims).
    pub size_bytes: Distribution,
    /// Requests up to 4 KiB, 8 KiB, ..., 1 MiB, larger.
    pub size_buckets: Vec<(String, u64)>,
    /// Distinct 4 KiB units touched, in bytes (all operations / written).
    pub footprint_bytes: u64,
    pub write_footprint_bytes: u64,
    /// Share of requests starting where the previous one to the same device ended.
    pub sequential_fraction: f64,
    pub interarrival_ns: Distribution,
    /// Share of requests arriving at the same time as the previous one.
    pub zero_interarrival_fraction: f64,
    pub duration_ns: u64,
    pub devices: Vec<DeviceStats>,
    pub skipped: OrderCounts,
    /// Signs that the offsets and sizes are not in the units the format declares, with what
    /// was assumed and how to read the trace otherwise (see [`UnitCheck`]).
    pub unit_warnings: Vec<String>,
}

/// Accumulates [`TraceStats`] record by record.
pub struct StatsBuilder {
    ops: [OpCount; 4],
    sizes: Recorder,
    buckets: [u64; SIZE_BUCKETS.len()],
    gaps: Recorder,
    zero_gaps: u64,
    last_time: Option<u64>,
    footprint: RoaringTreemap,
    written: RoaringTreemap,
    devices: Vec<(u32, u64, u64, u64)>,
    per_device_units: Vec<RoaringTreemap>,
    sequential: u64,
    data_requests: u64,
    units: Option<(UnitCheck, TraceFormat)>,
}

impl Default for StatsBuilder {
    fn default() -> Self {
        StatsBuilder {
            ops: Default::default(),
            sizes: Recorder::new(),
            buckets: [0; SIZE_BUCKETS.len()],
            gaps: Recorder::new(),
            zero_gaps: 0,
            last_time: None,
            footprint: RoaringTreemap::new(),
            written: RoaringTreemap::new(),
            devices: Vec::new(),
            per_device_units: Vec::new(),
            sequential: 0,
            data_requests: 0,
            units: None,
        }
    }
}

impl StatsBuilder {
    /// A builder that also checks the records' units against those `format` declares.
    pub fn checking_units(format: &TraceFormat) -> StatsBuilder {
        StatsBuilder {
            units: Some((UnitCheck::new(format), format.clone())),
            ..StatsBuilder::default()
        }
    }

    /// Adds one record (times in non-decreasing order).
    pub fn add(&mut self, r: &TraceRecord) {
        if let Some((check, _)) = &mut self.units {
            check.add(r);
        }
        let op = &mut self.ops[r.op.index()];
        op.count += 1;
        op.bytes += r.len_bytes;
        if let Some(last) = self.last_time {
            let gap = r.time_ns.saturating_sub(last);
            self.gaps.record(gap);
            self.zero_gaps += u64::from(gap == 0);
        }
        self.last_time = Some(r.time_ns);
        let d = match self.devices.iter().position(|x| x.0 == r.device) {
            Some(i) => i,
            None => {
                self.devices.push((r.device, 0, u64::MAX, 0));
                self.per_device_units.push(RoaringTreemap::new());
                self.devices.len() - 1
            }
        };
        self.devices[d].1 += 1;
        if r.op == Op::Flush || r.len_bytes == 0 {
            return;
        }
        self.data_requests += 1;
        let end = r.offset_bytes.saturating_add(r.len_bytes);
        self.sequential += u64::from(self.devices[d].2 == r.offset_bytes);
        self.devices[d].2 = end;
        self.devices[d].3 = self.devices[d].3.max(end);
        self.sizes.record(r.len_bytes);
        let bucket = SIZE_BUCKETS
            .iter()
            .position(|&b| r.len_bytes <= b)
            .unwrap_or(SIZE_BUCKETS.len() - 1);
        self.buckets[bucket] += 1;
        let (first, last) = (
            r.offset_bytes / FOOTPRINT_UNIT_BYTES,
            (end - 1) / FOOTPRINT_UNIT_BYTES,
        );
        let key = |u: u64| ((d as u64) << 48) | (u & ((1 << 48) - 1));
        self.footprint
            .insert_range(key(first)..=key(last.min(first + (1 << 47))));
        self.per_device_units[d].insert_range(first..=last);
        if r.op == Op::Write {
            self.written
                .insert_range(key(first)..=key(last.min(first + (1 << 47))));
        }
    }

    pub fn finish(self, skipped: OrderCounts) -> TraceStats {
        let mut devices: Vec<DeviceStats> = self
            .devices
            .iter()
            .zip(&self.per_device_units)
            .map(|(&(device, requests, _, highest), units)| DeviceStats {
                device,
                requests,
                footprint_bytes: units.len() * FOOTPRINT_UNIT_BYTES,
                highest_byte: highest,
            })
            .collect();
        devices.sort_by_key(|d| d.device);
        let requests: u64 = self.ops.iter().map(|o| o.count).sum();
        let rw = self.ops[0].count + self.ops[1].count;
        let labels = [
            "<=4K", "<=8K", "<=16K", "<=32K", "<=64K", "<=128K", "<=256K", "<=1M", ">1M",
        ];
        TraceStats {
            requests,
            read_fraction: if rw > 0 {
                self.ops[0].count as f64 / rw as f64
            } else {
                0.0
            },
            read: self.ops[0].clone(),
            write: self.ops[1].clone(),
            trim: self.ops[2].clone(),
            flush: self.ops[3].clone(),
            size_bytes: self.sizes.distribution(),
            size_buckets: labels
                .iter()
                .zip(self.buckets)
                .map(|(l, c)| (l.to_string(), c))
                .collect(),
            footprint_bytes: self.footprint.len() * FOOTPRINT_UNIT_BYTES,
            write_footprint_bytes: self.written.len() * FOOTPRINT_UNIT_BYTES,
            sequential_fraction: ratio(self.sequential, self.data_requests),
            interarrival_ns: self.gaps.distribution(),
            zero_interarrival_fraction: ratio(self.zero_gaps, requests.saturating_sub(1)),
            duration_ns: self.last_time.unwrap_or(0),
            devices,
            skipped,
            unit_warnings: self
                .units
                .map(|(check, format)| check.warnings(&format))
                .unwrap_or_default(),
        }
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Statistics of a whole ordered stream; `progress` is called every 1M records.
pub fn trace_stats(
    stream: &mut Ordered,
    progress: &mut dyn FnMut(&Ordered),
) -> Result<TraceStats, SimError> {
    let mut b = StatsBuilder::checking_units(stream.reader().format());
    while let Some(r) = stream.next_record()? {
        b.add(&r);
        if stream.emitted() % (1 << 20) == 0 {
            progress(stream);
        }
    }
    Ok(b.finish(stream.counts.clone()))
}

/// The `flashlab trace stats --json` document (schema `flashlab.trace-stats/1`).
pub fn stats_document(file: &str, reader: &TraceReader, stats: &TraceStats) -> serde_json::Value {
    serde_json::json!({
        "schema": "flashlab.trace-stats/1",
        "file": file,
        "format": reader.format().name(),
        "compression": reader.compression().name(),
        "notes": reader.notes(),
        "lines": reader.lines_read(),
        "bad_lines": reader.bad_lines(),
        "bad_line_examples": reader.bad_examples(),
        "stats": stats,
    })
}

fn size(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.2} {}", UNITS[i])
    }
}

fn time(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} us", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// The statistics as a readable table.
pub fn render_stats(s: &TraceStats) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "requests        {:>12}   duration {}",
        s.requests,
        time(s.duration_ns as f64)
    );
    for (name, c) in [
        ("reads", &s.read),
        ("writes", &s.write),
        ("trims", &s.trim),
        ("flushes", &s.flush),
    ] {
        let share = ratio(c.count, s.requests) * 100.0;
        let _ = writeln!(
            o,
            "  {name:<13} {:>12}   {share:5.1}%   {}",
            c.count,
            size(c.bytes)
        );
    }
    let z = &s.size_bytes;
    let _ = writeln!(
        o,
        "request size    mean {}  p50 {}  p90 {}  p99 {}  max {}",
        size(z.mean as u64),
        size(z.p50),
        size(z.p90),
        size(z.p99),
        size(z.max)
    );
    let buckets: Vec<String> = s
        .size_buckets
        .iter()
        .filter(|(_, c)| *c > 0)
        .map(|(l, c)| format!("{l}: {:.1}%", ratio(*c, s.requests) * 100.0))
        .collect();
    let _ = writeln!(o, "  sizes         {}", buckets.join("  "));
    let _ = writeln!(
        o,
        "footprint       {} ({} written), 4 KiB units",
        size(s.footprint_bytes),
        size(s.write_footprint_bytes)
    );
    let _ = writeln!(
        o,
        "sequential      {:.1}% of requests start where the previous one on their device ended",
        s.sequential_fraction * 100.0
    );
    let g = &s.interarrival_ns;
    let _ = writeln!(
        o,
        "inter-arrival   mean {}  p50 {}  p90 {}  p99 {}  max {}  ({:.1}% zero)",
        time(g.mean),
        time(g.p50 as f64),
        time(g.p90 as f64),
        time(g.p99 as f64),
        time(g.max as f64),
        s.zero_interarrival_fraction * 100.0
    );
    let _ = writeln!(o, "devices         {}", s.devices.len());
    for d in s.devices.iter().take(16) {
        let _ = writeln!(
            o,
            "  device {:<8} {:>10} requests   footprint {}   highest byte {}",
            d.device,
            d.requests,
            size(d.footprint_bytes),
            size(d.highest_byte)
        );
    }
    let k = &s.skipped;
    if k.other_devices + k.zero_length + k.late > 0 {
        let _ = writeln!(o, "not counted     {} of other devices, {} of zero length; {} out of time order beyond the window (up to {} late)", k.other_devices, k.zero_length, k.late, time(k.max_late_ns as f64));
    }
    o
}
