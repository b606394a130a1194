//! Measurements: per-operation counts, bytes and latency histograms (HDR, 3 significant
//! digits, so p99.99 and max stay exact to 0.1% without storing samples), and the report.

mod realtime;
mod report;
mod table;
mod timeseries;

pub use realtime::{DeadlineStats, LatencyStats, TaskStats, TaskTable};
pub use report::{
    build_report, write_timeseries_csv, DeadlineReport, IntervalReport, LatencyReport,
    LatencySummary, OpReport, Report, SubRequestsReport, TaskDeadlineReport, TaskReport,
    TimeSeriesReport, REPORT_SCHEMA, TIMESERIES_CSV_HEADER,
};
pub use table::{format_ns, render_table};
pub use timeseries::{Interval, TimeSeries, MAX_INTERVALS};

use hdrhistogram::Histogram;

use crate::host::Op;

/// Count, bytes and latency of one kind of host operation.
#[derive(Debug, Clone)]
pub struct OpStats {
    pub count: u64,
    pub bytes: u64,
    pub latency: Histogram<u64>,
    /// Exact sum of the latencies (the histogram keeps 3 significant digits): the numerator
    /// of the time per sector.
    pub latency_sum_ns: u128,
}

impl OpStats {
    fn new() -> Self {
        OpStats {
            count: 0,
            bytes: 0,
            latency: Histogram::new(3).expect("3 significant digits is a valid precision"),
            latency_sum_ns: 0,
        }
    }
}

/// Host-side statistics of a measured run.
#[derive(Debug, Clone)]
pub struct HostStats {
    ops: [OpStats; 4],
    /// Time each request waited host-side before the device took it (bounded-open pacing;
    /// zero otherwise).
    host_wait: Histogram<u64>,
    first_arrival_ns: Option<u64>,
    last_completion_ns: u64,
    /// Sub-requests per operation, from their hand-over to the FTL to the FTL's completion.
    sub_requests: [LatencyStats; 4],
    /// Requests that had a deadline.
    deadlines: DeadlineStats,
    /// Requests of periodic tasks, per task.
    tasks: TaskTable,
    /// Completed work per interval, when asked for (`run.timeseries_interval_ns`).
    timeseries: Option<TimeSeries>,
}

impl Default for HostStats {
    fn default() -> Self {
        Self::new()
    }
}

impl HostStats {
    pub fn new() -> Self {
        HostStats {
            ops: [
                OpStats::new(),
                OpStats::new(),
                OpStats::new(),
                OpStats::new(),
            ],
            host_wait: Histogram::new(3).expect("valid precision"),
            first_arrival_ns: None,
            last_completion_ns: 0,
            sub_requests: Default::default(),
            deadlines: DeadlineStats::default(),
            tasks: TaskTable::default(),
            timeseries: None,
        }
    }

    /// Keeps a time series of `interval_ns`-long intervals from `start_ns` (none when 0).
    pub fn with_timeseries(mut self, interval_ns: u64, start_ns: u64) -> Self {
        self.timeseries = (interval_ns > 0).then(|| TimeSeries::new(interval_ns, start_ns));
        self
    }

    /// Records a completed request.
    pub fn record(&mut self, op: Op, bytes: u64, arrival_ns: u64, done_ns: u64, latency_ns: u64) {
        let s = &mut self.ops[op.index()];
        s.count += 1;
        s.bytes += bytes;
        // Histograms start at 1 ns (functional-only runs have zero latencies) and grow to fit
        // any value, so recording cannot fail.
        let v = latency_ns.max(1);
        s.latency.record(v).expect("auto-resizing histogram");
        s.latency_sum_ns += u128::from(v);
        self.first_arrival_ns = Some(
            self.first_arrival_ns
                .map_or(arrival_ns, |f| f.min(arrival_ns)),
        );
        self.last_completion_ns = self.last_completion_ns.max(done_ns);
        if let Some(series) = &mut self.timeseries {
            let (read, write) = match op {
                Op::Read => (bytes, 0),
                Op::Write => (0, bytes),
                Op::Trim | Op::Flush => (0, 0),
            };
            series.record(done_ns, read, write, v);
        }
    }

    /// Records the deadline outcome of a completed request (absolute `deadline_ns`) and,
    /// with a task, in that task's figures.
    pub fn record_deadline(&mut self, task: Option<u32>, done_ns: u64, deadline_ns: u64) {
        let missed = self.deadlines.record(done_ns, deadline_ns);
        if let Some(task) = task {
            self.tasks
                .get_mut(task)
                .deadlines
                .record(done_ns, deadline_ns);
        }
        if let (true, Some(series)) = (missed, &mut self.timeseries) {
            series.record_miss(done_ns);
        }
    }

    /// Records the latency of a completed request of periodic task `task`.
    pub fn record_task(&mut self, task: u32, op: Op, bytes: u64, latency_ns: u64) {
        self.tasks.record(task, op, bytes, latency_ns);
    }

    /// Records a sub-request the FTL completed `latency_ns` after it was handed over.
    pub fn record_sub_request(&mut self, op: Op, bytes: u64, latency_ns: u64) {
        self.sub_requests[op.index()].record(bytes, latency_ns);
    }

    /// Records how long a completed request waited host-side before the device took it.
    pub fn record_host_wait(&mut self, wait_ns: u64) {
        self.host_wait
            .record(wait_ns)
            .expect("auto-resizing histogram");
    }

    pub fn op(&self, op: Op) -> &OpStats {
        &self.ops[op.index()]
    }
    /// Latencies of every completed request: the per-operation histograms added (the same
    /// buckets as recording each request twice, without the second recording per request).
    pub fn all_latency(&self) -> Histogram<u64> {
        let mut all = Histogram::new(3).expect("valid precision");
        for s in &self.ops {
            all.add(&s.latency).expect("auto-resizing histogram");
        }
        all
    }
    /// Host-side waits of the completed requests (zeros unless bounded-open pacing held some).
    pub fn host_wait(&self) -> &Histogram<u64> {
        &self.host_wait
    }
    /// Completed requests of every kind.
    pub fn completed(&self) -> u64 {
        self.ops.iter().map(|s| s.count).sum()
    }
    /// From the first arrival to the last completion.
    pub fn elapsed_ns(&self) -> u64 {
        self.first_arrival_ns
            .map_or(0, |f| self.last_completion_ns.saturating_sub(f))
    }
    pub fn first_arrival_ns(&self) -> Option<u64> {
        self.first_arrival_ns
    }
    pub fn last_completion_ns(&self) -> u64 {
        self.last_completion_ns
    }
    /// Sub-requests of one operation (FTL latency).
    pub fn sub_requests(&self, op: Op) -> &LatencyStats {
        &self.sub_requests[op.index()]
    }
    /// Deadline outcomes of the requests that had one.
    pub fn deadlines(&self) -> &DeadlineStats {
        &self.deadlines
    }
    /// Figures per periodic task.
    pub fn tasks(&self) -> &TaskTable {
        &self.tasks
    }
    /// The time series, when one is kept.
    pub fn timeseries(&self) -> Option<&TimeSeries> {
        self.timeseries.as_ref()
    }
}
