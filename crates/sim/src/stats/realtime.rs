//! Real-time figures of a measured run: deadline misses (all requests with a deadline, and
//! per periodic task), latency per task and operation, and the latency of sub-requests in the
//! FTL (part-ftl.txt Figs. 10c-13c: "from when a page read or write is put into the request
//! buffer to when the FTL marks that request as completed").
//!
//! A request misses its deadline when the host sees it complete strictly after its absolute
//! deadline (arrival + relative deadline); its lateness is completion minus deadline.
//! A task's record, and its histogram of an operation, are made when first needed (a new task
//! id, its first request of that operation), never per request; task ids may be sparse.

use hdrhistogram::Histogram;

use crate::host::Op;

/// Deadline outcomes of a set of requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeadlineStats {
    /// Requests completed that had a deadline.
    pub requests: u64,
    /// Those that completed after it.
    pub misses: u64,
    /// Largest completion minus deadline among the misses (0 without misses).
    pub worst_lateness_ns: u64,
}

impl DeadlineStats {
    /// Records a request with absolute deadline `deadline_ns` completed at `done_ns`; true
    /// when it missed.
    pub fn record(&mut self, done_ns: u64, deadline_ns: u64) -> bool {
        self.requests += 1;
        let missed = done_ns > deadline_ns;
        if missed {
            self.misses += 1;
            self.worst_lateness_ns = self.worst_lateness_ns.max(done_ns - deadline_ns);
        }
        missed
    }

    /// Misses per request with a deadline (0 when none had one).
    pub fn miss_ratio(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.misses as f64 / self.requests as f64
        }
    }
}

/// Latencies of one kind of request: count, exact sum and histogram.
#[derive(Debug, Clone)]
pub struct LatencyStats {
    pub count: u64,
    pub bytes: u64,
    pub latency: Histogram<u64>,
    pub latency_sum_ns: u128,
}

impl Default for LatencyStats {
    fn default() -> Self {
        LatencyStats {
            count: 0,
            bytes: 0,
            latency: Histogram::new(3).expect("3 significant digits is a valid precision"),
            latency_sum_ns: 0,
        }
    }
}

impl LatencyStats {
    /// Records one latency, exactly: a write acknowledged from the FTL's buffer spends 0 ns in
    /// the FTL, and its sub-request says so.
    pub fn record(&mut self, bytes: u64, latency_ns: u64) {
        self.count += 1;
        self.bytes += bytes;
        self.latency
            .record(latency_ns)
            .expect("auto-resizing histogram");
        self.latency_sum_ns += u128::from(latency_ns);
    }

    /// Exact mean latency (0 when empty).
    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.latency_sum_ns as f64 / self.count as f64
        }
    }
}

/// What one periodic task's completed requests measured.
#[derive(Debug, Clone, Default)]
pub struct TaskStats {
    /// Latency per operation (indexed by [`Op::index`]), made at its first request.
    ops: [Option<LatencyStats>; 4],
    pub deadlines: DeadlineStats,
}

impl TaskStats {
    /// Latencies of the task's requests of `op`, if it had any.
    pub fn op(&self, op: Op) -> Option<&LatencyStats> {
        self.ops[op.index()].as_ref()
    }
}

/// Per-task records, sorted by task id.
#[derive(Debug, Clone, Default)]
pub struct TaskTable {
    tasks: Vec<(u32, TaskStats)>,
}

impl TaskTable {
    /// The record of `task`, created on first use.
    pub fn get_mut(&mut self, task: u32) -> &mut TaskStats {
        let i = match self.tasks.binary_search_by_key(&task, |(id, _)| *id) {
            Ok(i) => i,
            Err(i) => {
                self.tasks.insert(i, (task, TaskStats::default()));
                i
            }
        };
        &mut self.tasks[i].1
    }

    /// Records a completed request of `task`.
    pub fn record(&mut self, task: u32, op: Op, bytes: u64, latency_ns: u64) {
        self.get_mut(task).ops[op.index()]
            .get_or_insert_with(LatencyStats::default)
            .record(bytes, latency_ns);
    }

    /// Tasks seen, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &TaskStats)> {
        self.tasks.iter().map(|(id, t)| (*id, t))
    }
}
