//! The run report: a versioned JSON document (schema `flashlab.report/2`, documented in
//! `docs/report-schema.md`) built from a finished [`Simulation`].

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::config::AdmissionMode;
use crate::engine::{PreconditionSummary, Simulation};
use crate::flash::{Cause, OpKind};
use crate::ftl::mapcache::MapCacheReport;
use crate::ftl::merge::MergeReport;
use crate::ftl::{CpuActivity, FtlCounters, MapQueue};
use crate::host::Op;
use crate::realtime::analysis::{Analysis, RunAdmission};
use crate::stats::{DeadlineStats, LatencyStats, OpStats, TimeSeries};

/// Identifier of the report format; bumped on any incompatible change.
pub const REPORT_SCHEMA: &str = "flashlab.report/2";

/// Latency percentiles of one kind of request, in nanoseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub p99_99: u64,
    pub max: u64,
}

impl LatencySummary {
    pub(crate) fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        LatencySummary {
            mean: h.mean(),
            p50: h.value_at_quantile(0.5),
            p90: h.value_at_quantile(0.9),
            p99: h.value_at_quantile(0.99),
            p99_9: h.value_at_quantile(0.999),
            p99_99: h.value_at_quantile(0.9999),
            max: h.max(),
        }
    }
}

/// Throughput and latency of one kind of host request.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OpReport {
    pub count: u64,
    pub bytes: u64,
    pub iops: f64,
    pub mb_per_s: f64,
    pub latency_ns: LatencySummary,
    /// Latency histogram in quarter-octave buckets, `[low_ns, high_ns, count]` ascending,
    /// empty buckets left out (see [`quarter_octave_histogram`]).
    pub latency_histogram_ns: Vec<[u64; 3]>,
    /// Reads and writes only: the sum of the requests' latencies divided by the host sectors
    /// they moved (`bytes / host.sector_bytes`), nftl-lookup-pagecache.txt Table 5's average
    /// time per sector; 0 when nothing moved. Whatever a request waited for (merges, folds,
    /// GC run for it) is in its latency, so it is charged to that request's sectors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_per_sector_ns: Option<f64>,
}

/// Host-side results per operation.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HostReport {
    pub read: OpReport,
    pub write: OpReport,
    pub trim: OpReport,
    pub flush: OpReport,
    pub all: OpReport,
    /// Time requests waited host-side, included in their latency, before the device took
    /// them: bounded-open pacing holds arrivals while the device has `queue_depth` requests
    /// (zeros with other pacings). Latency minus this wait is the time in the device.
    pub host_wait_ns: LatencySummary,
    /// Sub-requests (the FTL's chop units: a page for page-mapped FTLs) per operation, timed
    /// in the FTL: from their hand-over to the FTL (a write's data has crossed the link) to
    /// the FTL's completion of them (before a read's data crosses the link back).
    pub sub_requests: SubRequestsReport,
}

/// Count, bytes and latency of a set of requests or sub-requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LatencyReport {
    pub count: u64,
    pub bytes: u64,
    pub latency_ns: LatencySummary,
}

impl LatencyReport {
    /// The figures of `s`, all 0 when there is none.
    fn of_some(s: Option<&LatencyStats>) -> Self {
        s.map_or_else(Self::default, Self::of)
    }

    fn of(s: &LatencyStats) -> Self {
        let mut latency_ns = LatencySummary::of(&s.latency);
        latency_ns.mean = s.mean_ns();
        LatencyReport {
            count: s.count,
            bytes: s.bytes,
            latency_ns,
        }
    }
}

/// Sub-request latencies per operation.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SubRequestsReport {
    pub read: LatencyReport,
    pub write: LatencyReport,
    pub trim: LatencyReport,
    pub flush: LatencyReport,
}

/// Deadline outcomes of one periodic task.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TaskDeadlineReport {
    pub task: u32,
    pub requests: u64,
    pub misses: u64,
    pub miss_ratio: f64,
    pub worst_lateness_ns: u64,
}

/// Deadline outcomes of the measured requests that had a deadline.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DeadlineReport {
    /// Requests completed that had a deadline.
    pub requests: u64,
    /// Those the host saw complete after their deadline.
    pub misses: u64,
    pub miss_ratio: f64,
    /// Largest completion minus deadline among the misses (0 without misses).
    pub worst_lateness_ns: u64,
    /// The same per periodic task with deadlines, in task order.
    pub tasks: Vec<TaskDeadlineReport>,
}

/// The admission test of a periodic run against what the run measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdmissionReport {
    /// `run.admission`: "enforce" or "report".
    pub mode: AdmissionMode,
    /// The test's verdict; `None` (null) when the set cannot be analysed.
    pub admitted: Option<bool>,
    /// The failing test's message when refused.
    pub refusal: Option<String>,
    /// Why the set cannot be analysed (e.g. a deadline shorter than its period).
    pub not_analysable: Option<String>,
    /// Every test with its terms, the scheme's bounds, the analysis device.
    pub analysis: Option<Analysis>,
    /// Jobs with a deadline that completed in the measured window.
    pub jobs: u64,
    pub deadline_misses: u64,
    /// Largest response time of the tasks' reads and writes.
    pub read_max_ns: u64,
    pub write_max_ns: u64,
    /// "admitted, no miss", "admitted, missed" (the analysis was unsafe), "refused, no miss"
    /// (the test was pessimistic for this run), "refused, missed", or "not analysable".
    pub outcome: &'static str,
}

impl AdmissionReport {
    fn of(run: RunAdmission, deadlines: Option<&DeadlineReport>, tasks: &[TaskReport]) -> Self {
        let jobs = deadlines.map_or(0, |d| d.requests);
        let misses = deadlines.map_or(0, |d| d.misses);
        let admitted = run.analysis.as_ref().map(|a| a.admitted);
        let outcome = match (admitted, misses > 0) {
            (Some(true), false) => "admitted, no miss",
            (Some(true), true) => "admitted, missed",
            (Some(false), false) => "refused, no miss",
            (Some(false), true) => "refused, missed",
            (None, _) => "not analysable",
        };
        let max = |f: fn(&TaskReport) -> u64| tasks.iter().map(f).max().unwrap_or(0);
        AdmissionReport {
            mode: run.mode,
            admitted,
            refusal: run.analysis.as_ref().and_then(|a| a.refusal.clone()),
            not_analysable: run.not_analysable,
            analysis: run.analysis,
            jobs,
            deadline_misses: misses,
            read_max_ns: max(|t| t.read.latency_ns.max),
            write_max_ns: max(|t| t.write.latency_ns.max),
            outcome,
        }
    }
}

/// The admission section of `sim`'s report: the test [`crate::engine::Simulation::new`] ran.
fn admission_report(
    sim: &Simulation,
    deadlines: Option<&DeadlineReport>,
    tasks: &[TaskReport],
) -> Option<AdmissionReport> {
    let run = sim.admission()?.clone();
    Some(AdmissionReport::of(run, deadlines, tasks))
}

/// Latencies of one periodic task's requests per operation.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TaskReport {
    pub task: u32,
    pub read: LatencyReport,
    pub write: LatencyReport,
    pub trim: LatencyReport,
    pub flush: LatencyReport,
}

/// What completed in one interval of the time series.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct IntervalReport {
    /// Start of the interval, from the start of the measurement.
    pub start_ns: u64,
    /// Requests completed in the interval (every kind).
    pub requests: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// `read_bytes` / 10^6 / the interval's length in seconds.
    pub read_mb_per_s: f64,
    pub write_mb_per_s: f64,
    /// Mean and largest latency of the requests completed in the interval (0 when none).
    pub mean_latency_ns: f64,
    pub max_latency_ns: u64,
    /// Requests completed in the interval after their deadline.
    pub deadline_misses: u64,
}

/// Bandwidth and latency per interval (`run.timeseries_interval_ns`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TimeSeriesReport {
    /// The intervals' length: `requested_interval_ns`, or a power-of-two multiple of it
    /// when the run needed more than [`crate::stats::MAX_INTERVALS`] of those.
    pub interval_ns: u64,
    /// The interval asked for (`run.timeseries_interval_ns`).
    pub requested_interval_ns: u64,
    pub intervals: Vec<IntervalReport>,
}

impl TimeSeriesReport {
    /// Whether the interval was lengthened to keep the number of intervals bounded.
    pub fn coarsened(&self) -> bool {
        self.interval_ns != self.requested_interval_ns
    }

    /// What a coarsened series means for the user (None when it has the interval asked for).
    pub fn coarsened_warning(&self) -> Option<String> {
        if !self.coarsened() {
            return None;
        }
        let covered_ns = self.intervals.len() as u64 * self.interval_ns;
        let enough_ns = covered_ns.div_ceil(crate::stats::MAX_INTERVALS as u64);
        Some(format!(
            "the time series has intervals of {} ns, not the {} ns asked for \
             (run.timeseries_interval_ns): the run lasted about {:.6} s of simulated time and a \
             series keeps at most {} intervals (the interval doubled until they fit, sums \
             exact); an interval of {enough_ns} ns or more is kept as asked",
            self.interval_ns,
            self.requested_interval_ns,
            covered_ns as f64 / 1e9,
            crate::stats::MAX_INTERVALS,
        ))
    }

    fn of(series: &TimeSeries) -> Self {
        let interval_ns = series.interval_ns();
        let secs = interval_ns as f64 / 1e9;
        let intervals = series
            .intervals()
            .iter()
            .enumerate()
            .map(|(i, at)| IntervalReport {
                start_ns: i as u64 * interval_ns,
                requests: at.requests,
                read_bytes: at.read_bytes,
                write_bytes: at.write_bytes,
                read_mb_per_s: at.read_bytes as f64 / 1e6 / secs,
                write_mb_per_s: at.write_bytes as f64 / 1e6 / secs,
                mean_latency_ns: if at.requests > 0 {
                    at.latency_sum_ns as f64 / at.requests as f64
                } else {
                    0.0
                },
                max_latency_ns: at.latency_max_ns,
                deadline_misses: at.deadline_misses,
            })
            .collect();
        TimeSeriesReport {
            interval_ns,
            requested_interval_ns: series.requested_interval_ns(),
            intervals,
        }
    }
}

/// Columns of [`write_timeseries_csv`], in order.
pub const TIMESERIES_CSV_HEADER: &str = "start_ns,requests,read_bytes,write_bytes,read_mb_per_s,write_mb_per_s,mean_latency_ns,max_latency_ns,deadline_misses";

/// The time series as CSV: a header line, then one line per interval.
pub fn write_timeseries_csv(
    series: &TimeSeriesReport,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    writeln!(out, "{TIMESERIES_CSV_HEADER}")?;
    for i in &series.intervals {
        writeln!(
            out,
            "{},{},{},{},{:.6},{:.6},{:.1},{},{}",
            i.start_ns,
            i.requests,
            i.read_bytes,
            i.write_bytes,
            i.read_mb_per_s,
            i.write_mb_per_s,
            i.mean_latency_ns,
            i.max_latency_ns,
            i.deadline_misses
        )?;
    }
    Ok(())
}

/// Flash operations of one kind, split by cause.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CauseSplit {
    pub host: u64,
    pub gc: u64,
    pub mapping: u64,
    pub merge: u64,
    pub total: u64,
}

/// Flash operation counts (pages for reads and programs, blocks for erases).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FlashReport {
    pub reads: CauseSplit,
    pub programs: CauseSplit,
    pub erases: CauseSplit,
    pub oob_reads: CauseSplit,
    pub oob_programs: CauseSplit,
    pub copybacks: CauseSplit,
}

/// Busy fraction of a set of resources.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Utilisation {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    pub each: Vec<f64>,
}

/// FTL CPU time spent on one [`CpuActivity`], all cores together.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ActivityBusy {
    pub busy_ns: u64,
    /// `busy_ns` / (cores x window).
    pub fraction: f64,
}

/// FTL CPU time per activity (the keys are [`CpuActivity::name`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ActivitiesReport {
    pub lookup: ActivityBusy,
    pub update: ActivityBusy,
    pub flush: ActivityBusy,
    pub gc: ActivityBusy,
    pub other: ActivityBusy,
}

/// Work of one queue of the hardware map unit in the window (fmmu.txt 4.6).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MapQueueReport {
    /// Handlers whose map-unit work was served.
    pub jobs: u64,
    /// Map-unit time they took.
    pub busy_ns: u64,
    /// Mean time they waited for the map unit after their CPU time ended.
    pub mean_wait_ns: f64,
}

/// The map unit's queues (keys are [`MapQueue::name`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MapUnitQueuesReport {
    pub host_request: MapQueueReport,
    pub gc_request: MapQueueReport,
    pub response: MapQueueReport,
}

/// Busy fractions of dies, channel buses, the FTL CPU (all cores, each core, each activity),
/// the FTL's hardware map unit and the host link: the resources of fmmu.txt Fig. 12.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UtilisationReport {
    pub dies: Utilisation,
    pub channels: Utilisation,
    /// Busy fraction of all FTL cores together.
    pub cpu: f64,
    /// Busy fraction of each FTL core.
    pub cpu_cores: Utilisation,
    pub cpu_activities: ActivitiesReport,
    /// Busy fraction of the hardware map unit; `None` (JSON null) when the FTL gave it no
    /// work in the window (FTLs without one).
    pub map_unit: Option<f64>,
    /// Work and waiting of each map-unit queue; `None` (JSON null) when the map unit had no
    /// work in the window.
    pub map_unit_queues: Option<MapUnitQueuesReport>,
    pub host_link_down: f64,
    pub host_link_up: f64,
}

/// Erase counts over all blocks.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WearReport {
    pub erase_count_min: u32,
    pub erase_count_mean: f64,
    pub erase_count_max: u32,
}

/// Device and memory figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DeviceReport {
    pub raw_bytes: u64,
    pub logical_bytes: u64,
    pub dies: u32,
    pub channels: u32,
    /// Bytes of simulator state (NAND state + FTL structures).
    pub state_bytes: u64,
}

/// Everything a run measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub flashlab_version: &'static str,
    pub ftl: String,
    pub preset: String,
    /// The complete configuration of the run (re-runnable with `--config`).
    pub config: serde_json::Value,
    pub workload: serde_json::Value,
    pub device: DeviceReport,
    pub precondition: Option<PreconditionSummary>,
    /// Simulated time from the first arrival to the last completion.
    pub elapsed_ns: u64,
    pub host: HostReport,
    /// Deadline misses of the requests that had a deadline (`workload.deadline_ns`, a trace's,
    /// or a periodic task's); `None` (JSON null) when none had one.
    pub deadlines: Option<DeadlineReport>,
    /// Latencies of each periodic task's requests, in task order (empty when no request came
    /// from a task).
    pub tasks: Vec<TaskReport>,
    /// The real-time admission test of a periodic run on part-ftl, wao-gc or rtgc beside what
    /// the run measured (`run.admission`); `None` (JSON null) when it does not apply.
    pub admission: Option<AdmissionReport>,
    /// Bandwidth and latency per interval; `None` (JSON null) when
    /// `run.timeseries_interval_ns` is 0.
    pub timeseries: Option<TimeSeriesReport>,
    /// Bytes programmed to flash (programs and copybacks, all causes) per byte written by the
    /// host; `None` (JSON null) when the host wrote too little for the ratio to mean anything
    /// (see [`min_meaningful_write_bytes`]): the flash work is still in `flash` and `gc`.
    pub write_amplification: Option<f64>,
    /// Bytes the host had to write in the measured window for `write_amplification` to be
    /// given: one page on every die.
    pub write_amplification_min_host_bytes: u64,
    pub flash: FlashReport,
    pub gc: FtlCounters,
    /// Merges and folds of block-mapped and log-block FTLs; `None` (JSON null) for FTLs that
    /// do not merge.
    pub merges: Option<MergeReport>,
    /// Map-cache figures of demand-paged FTLs (`null` for the others).
    pub map_cache: Option<MapCacheReport>,
    pub utilisation: UtilisationReport,
    pub wear: WearReport,
    /// FTL-specific figures.
    pub ftl_details: serde_json::Value,
    /// Sectors whose read data was checked against the shadow copy (verify runs).
    pub verified_sectors: Option<u64>,
}

impl Report {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("report serializes")
    }
}

/// An operation's figures; the mean latency is exact (`latency_sum_ns` / `count`), the
/// percentiles come from the histogram.
fn op_report(
    count: u64,
    bytes: u64,
    latency: &Histogram<u64>,
    latency_sum_ns: u128,
    elapsed_ns: u64,
) -> OpReport {
    let secs = elapsed_ns as f64 / 1e9;
    let per_s = |v: f64| if secs > 0.0 { v / secs } else { 0.0 };
    let mut latency_ns = LatencySummary::of(latency);
    if count > 0 {
        latency_ns.mean = latency_sum_ns as f64 / count as f64;
    }
    OpReport {
        count,
        bytes,
        iops: per_s(count as f64),
        mb_per_s: per_s(bytes as f64 / 1e6),
        latency_ns,
        latency_histogram_ns: quarter_octave_histogram(latency),
        latency_per_sector_ns: None,
    }
}

/// The histogram's counts in quarter-octave buckets: values below 8 one bucket each, then
/// four buckets per doubling, `[m·2^e, (m+1)·2^e - 1]` for m = 4..=7, as `[low, high, count]`
/// in ascending order, empty buckets left out. Coarse enough for a short report, fine enough
/// (12-25% wide) for a latency distribution or CDF. The HDR histogram's own buckets are powers
/// of two wide and aligned, each at most a bucket of these, so the counts are exact.
fn quarter_octave_histogram(h: &Histogram<u64>) -> Vec<[u64; 3]> {
    let mut buckets: Vec<[u64; 3]> = Vec::new();
    for recorded in h.iter_recorded() {
        let value = h.highest_equivalent(recorded.value_iterated_to());
        let (low, high) = quarter_octave(value);
        match buckets.last_mut() {
            Some(last) if last[0] == low => last[2] += recorded.count_at_value(),
            _ => buckets.push([low, high, recorded.count_at_value()]),
        }
    }
    buckets
}

/// Bounds of the quarter-octave bucket holding `value` (see [`quarter_octave_histogram`]).
fn quarter_octave(value: u64) -> (u64, u64) {
    if value < 8 {
        return (value, value);
    }
    let shift = 63 - value.leading_zeros() - 2; // value >> shift is 4..=7
    let low = (value >> shift) << shift;
    (low, low + ((1 << shift) - 1))
}

/// Sum of latencies per host sector moved (0 when no sector moved).
fn latency_per_sector_ns(s: &OpStats, sector_bytes: u64) -> f64 {
    let sectors = s.bytes as f64 / sector_bytes as f64;
    if sectors > 0.0 {
        s.latency_sum_ns as f64 / sectors
    } else {
        0.0
    }
}

fn cause_split(sim: &Simulation, kind: OpKind) -> CauseSplit {
    let c = sim.flash().counters();
    CauseSplit {
        host: c.get(kind, Cause::Host),
        gc: c.get(kind, Cause::Gc),
        mapping: c.get(kind, Cause::Mapping),
        merge: c.get(kind, Cause::Merge),
        total: c.total(kind),
    }
}

fn utilisation(busy: &[u64], window_ns: u64) -> Utilisation {
    if busy.is_empty() || window_ns == 0 {
        return Utilisation::default();
    }
    let each: Vec<f64> = busy
        .iter()
        .map(|&b| (b as f64 / window_ns as f64).min(1.0))
        .collect();
    Utilisation {
        mean: each.iter().sum::<f64>() / each.len() as f64,
        min: each.iter().copied().fold(f64::INFINITY, f64::min),
        max: each.iter().copied().fold(0.0, f64::max),
        each,
    }
}

fn host_report(sim: &Simulation) -> HostReport {
    let stats = sim.host_stats();
    let elapsed = stats.elapsed_ns();
    let op = |op: Op| {
        let s = stats.op(op);
        op_report(s.count, s.bytes, &s.latency, s.latency_sum_ns, elapsed)
    };
    let sector_bytes = u64::from(sim.config().host.sector_bytes);
    let per_sector = |o: Op| OpReport {
        latency_per_sector_ns: Some(latency_per_sector_ns(stats.op(o), sector_bytes)),
        ..op(o)
    };
    let all_bytes: u64 = Op::ALL.iter().map(|&o| stats.op(o).bytes).sum();
    let all_sum: u128 = Op::ALL.iter().map(|&o| stats.op(o).latency_sum_ns).sum();
    HostReport {
        read: per_sector(Op::Read),
        write: per_sector(Op::Write),
        trim: op(Op::Trim),
        flush: op(Op::Flush),
        all: op_report(
            stats.completed(),
            all_bytes,
            &stats.all_latency(),
            all_sum,
            elapsed,
        ),
        host_wait_ns: LatencySummary::of(stats.host_wait()),
        sub_requests: SubRequestsReport {
            read: LatencyReport::of(stats.sub_requests(Op::Read)),
            write: LatencyReport::of(stats.sub_requests(Op::Write)),
            trim: LatencyReport::of(stats.sub_requests(Op::Trim)),
            flush: LatencyReport::of(stats.sub_requests(Op::Flush)),
        },
    }
}

fn task_deadline(task: u32, d: &DeadlineStats) -> TaskDeadlineReport {
    TaskDeadlineReport {
        task,
        requests: d.requests,
        misses: d.misses,
        miss_ratio: d.miss_ratio(),
        worst_lateness_ns: d.worst_lateness_ns,
    }
}

/// Deadline outcomes, `None` when no measured request had a deadline.
fn deadline_report(sim: &Simulation) -> Option<DeadlineReport> {
    let stats = sim.host_stats();
    let all = stats.deadlines();
    (all.requests > 0).then(|| DeadlineReport {
        requests: all.requests,
        misses: all.misses,
        miss_ratio: all.miss_ratio(),
        worst_lateness_ns: all.worst_lateness_ns,
        tasks: stats
            .tasks()
            .iter()
            .filter(|(_, t)| t.deadlines.requests > 0)
            .map(|(id, t)| task_deadline(id, &t.deadlines))
            .collect(),
    })
}

fn task_reports(sim: &Simulation) -> Vec<TaskReport> {
    sim.host_stats()
        .tasks()
        .iter()
        .map(|(task, t)| TaskReport {
            task,
            read: LatencyReport::of_some(t.op(Op::Read)),
            write: LatencyReport::of_some(t.op(Op::Write)),
            trim: LatencyReport::of_some(t.op(Op::Trim)),
            flush: LatencyReport::of_some(t.op(Op::Flush)),
        })
        .collect()
}

fn flash_report(sim: &Simulation) -> FlashReport {
    FlashReport {
        reads: cause_split(sim, OpKind::Read),
        programs: cause_split(sim, OpKind::Program),
        erases: cause_split(sim, OpKind::Erase),
        oob_reads: cause_split(sim, OpKind::ReadOob),
        oob_programs: cause_split(sim, OpKind::ProgramOob),
        copybacks: cause_split(sim, OpKind::Copyback),
    }
}

/// Busy fractions over the window from the start of the measurement to the last completion.
fn utilisation_report(sim: &Simulation) -> UtilisationReport {
    let end = sim
        .host_stats()
        .last_completion_ns()
        .max(sim.measure_start_ns());
    let window = end - sim.measure_start_ns();
    let (down, up) = sim.link().busy_ns();
    let frac = |b: u64| {
        if window > 0 {
            (b as f64 / window as f64).min(1.0)
        } else {
            0.0
        }
    };
    let cores = u64::from(sim.config().cpu.cores).max(1);
    let all_cores = |b: u64| {
        if window > 0 {
            (b as f64 / (cores * window) as f64).min(1.0)
        } else {
            0.0
        }
    };
    let activity = |a: CpuActivity| {
        let busy_ns = sim.cpu_activity_busy_ns(a);
        ActivityBusy {
            busy_ns,
            fraction: all_cores(busy_ns),
        }
    };
    let map_unit = sim.map_unit_busy_ns();
    let queue = |q: MapQueue| {
        let s = sim.map_queue_stats(q);
        MapQueueReport {
            jobs: s.jobs,
            busy_ns: s.busy_ns,
            mean_wait_ns: if s.jobs > 0 {
                s.wait_ns as f64 / s.jobs as f64
            } else {
                0.0
            },
        }
    };
    UtilisationReport {
        dies: utilisation(&sim.flash().die_busy_ns(end), window),
        channels: utilisation(&sim.flash().channel_busy_ns(), window),
        cpu: all_cores(sim.cpu_busy_ns()),
        cpu_cores: utilisation(sim.core_busy_ns(), window),
        cpu_activities: ActivitiesReport {
            lookup: activity(CpuActivity::Lookup),
            update: activity(CpuActivity::Update),
            flush: activity(CpuActivity::Flush),
            gc: activity(CpuActivity::Gc),
            other: activity(CpuActivity::Other),
        },
        map_unit: (map_unit > 0).then(|| frac(map_unit)),
        map_unit_queues: (map_unit > 0).then(|| MapUnitQueuesReport {
            host_request: queue(MapQueue::HostRequest),
            gc_request: queue(MapQueue::GcRequest),
            response: queue(MapQueue::Response),
        }),
        host_link_down: frac(down),
        host_link_up: frac(up),
    }
}

/// Host bytes a measured window must write for its write amplification to be reported: one
/// page on every die. Below that, what the flash programmed is dominated by what the write
/// buffer still holds, page padding, or GC of data written before the window, and the ratio
/// swings from 0 to thousands without saying anything about the FTL.
pub fn min_meaningful_write_bytes(layout: &crate::nand::Layout) -> u64 {
    u64::from(layout.dies()) * u64::from(layout.page_bytes)
}

/// Flash bytes programmed per host byte written, when the host wrote enough (see
/// [`min_meaningful_write_bytes`]).
fn write_amplification(programmed_bytes: u64, host_written: u64, min_host: u64) -> Option<f64> {
    (host_written > 0 && host_written >= min_host)
        .then(|| programmed_bytes as f64 / host_written as f64)
}

/// Builds the report of a finished run.
pub fn build_report(sim: &Simulation, workload: serde_json::Value) -> Report {
    let host = host_report(sim);
    let flash = flash_report(sim);
    let layout = sim.nand().layout();
    let page_bytes = u64::from(layout.page_bytes);
    let programmed = sim.flash().counters().programmed_pages() * page_bytes;
    let min_host = min_meaningful_write_bytes(layout);
    let write_amplification = write_amplification(programmed, host.write.bytes, min_host);
    let (emin, emean, emax) = sim.nand().erase_count_summary();
    let deadlines = deadline_report(sim);
    let tasks = task_reports(sim);
    Report {
        schema: REPORT_SCHEMA,
        flashlab_version: env!("CARGO_PKG_VERSION"),
        ftl: sim.ftl().name().to_string(),
        preset: sim.config().preset.clone(),
        config: serde_json::to_value(sim.config()).unwrap_or(serde_json::Value::Null),
        workload,
        device: DeviceReport {
            raw_bytes: u64::from(layout.pages()) * page_bytes,
            logical_bytes: sim.logical_bytes(),
            dies: layout.dies(),
            channels: layout.channels,
            state_bytes: sim.nand().state_bytes() + sim.ftl().state_bytes(),
        },
        precondition: sim.precondition_summary().cloned(),
        elapsed_ns: sim.host_stats().elapsed_ns(),
        host,
        admission: admission_report(sim, deadlines.as_ref(), &tasks),
        deadlines,
        tasks,
        timeseries: sim.host_stats().timeseries().map(TimeSeriesReport::of),
        write_amplification,
        write_amplification_min_host_bytes: min_host,
        flash,
        gc: sim.ftl_counters().clone(),
        merges: sim
            .ftl()
            .merge_profile()
            .map(|profile| sim.merge_stats().report(profile)),
        map_cache: sim.ftl().map_cache(),
        utilisation: utilisation_report(sim),
        wear: WearReport {
            erase_count_min: emin,
            erase_count_mean: emean,
            erase_count_max: emax,
        },
        ftl_details: sim.ftl().report(),
        verified_sectors: sim.shadow().map(|s| s.checked_sectors()),
    }
}

#[cfg(test)]
mod tests {
    use hdrhistogram::Histogram;

    use super::{quarter_octave, quarter_octave_histogram, write_amplification};

    #[test]
    fn quarter_octaves_are_four_buckets_per_doubling() {
        assert_eq!(quarter_octave(0), (0, 0));
        assert_eq!(quarter_octave(7), (7, 7));
        assert_eq!(quarter_octave(8), (8, 9));
        assert_eq!(quarter_octave(15), (14, 15));
        assert_eq!(quarter_octave(1_000_000), (917_504, 1_048_575)); // 7·2^17 ..= 2^20 - 1
        assert_eq!(quarter_octave(u64::MAX), (7 << 61, u64::MAX));
    }

    #[test]
    fn the_histogram_counts_every_latency_in_its_bucket() {
        let mut h = Histogram::<u64>::new(3).unwrap();
        for (value, count) in [(3, 2), (1_000, 5), (1_100, 1), (1_300, 4), (999_999, 7)] {
            h.record_n(value, count).unwrap();
        }
        // 1,000 is in 896..=1,023 (7·2^7 ..), 1,100 and 1,300 in the next two buckets.
        assert_eq!(
            quarter_octave_histogram(&h),
            vec![
                [3, 3, 2],
                [896, 1_023, 5],
                [1_024, 1_279, 1],
                [1_280, 1_535, 4],
                [917_504, 1_048_575, 7],
            ]
        );
        let mut wide = Histogram::<u64>::new(3).unwrap();
        wide.record_n(2_000_000, 3).unwrap(); // HDR buckets of 1,024 ns here: still exact
        wide.record_n(2_097_151, 1).unwrap();
        wide.record_n(2_097_152, 2).unwrap();
        assert_eq!(
            quarter_octave_histogram(&wide),
            vec![[1_835_008, 2_097_151, 4], [2_097_152, 2_621_439, 2]]
        );
        assert!(quarter_octave_histogram(&Histogram::<u64>::new(3).unwrap()).is_empty());
    }

    #[test]
    fn write_amplification_needs_enough_host_writes() {
        assert_eq!(write_amplification(8192, 4096, 4096), Some(2.0));
        assert_eq!(write_amplification(1 << 30, 4095, 4096), None);
        assert_eq!(write_amplification(0, 0, 0), None, "nothing written");
        assert_eq!(write_amplification(0, 4096, 4096), Some(0.0));
    }
}
