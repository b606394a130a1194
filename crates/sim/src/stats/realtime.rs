//! Real-time figures of a measured run: deadline misses (all requests with a deadline, and
//! per periodic task), latency per task and operation, and the latency of sub-requests in the
//! FTL (part-ftl.txt Figs. 10c-13c: "from when a page read or write is put into the request
//! buffer to when the FTL marks that request as completed").
//!
//! A request misses its deadline when the host sees it complete strictly after its absolute
//! deadline (arrival + relative deadline); its lateness is completion minus deadline.
//! Per-task records grow when a task id is first seen, never per request.

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
    /// Records one latency (at least 1 ns, as the host statistics do).
    pub fn record(&mut self, bytes: u64, latency_ns: u64) {
        let v = latency_ns.max(1);
        self.count += 1;
        self.bytes += bytes;
        self.latency.record(v).expect("auto-resizing histogram");
        self.latency_sum_ns += u128::from(v);
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
    /// Latency per operation (indexed by [`Op::index`]).
    pub ops: [LatencyStats; 4],
    pub deadlines: DeadlineStats,
}

/// Per-task records, indexed by task id (grown when a larger id is first seen).
#[derive(Debug, Clone, Default)]
pub struct TaskTable {
    tasks: Vec<Option<TaskStats>>,
}

impl TaskTable {
    /// The record of `task`, created on first use.
    pub fn get_mut(&mut self, task: u32) -> &mut TaskStats {
        let i = task as usize;
        if self.tasks.len() <= i {
            self.tasks.resize(i + 1, None);
        }
        self.tasks[i].get_or_insert_with(TaskStats::default)
    }

    /// Records a completed request of `task`.
    pub fn record(&mut self, task: u32, op: Op, bytes: u64, latency_ns: u64) {
        self.get_mut(task).ops[op.index()].record(bytes, latency_ns);
    }

    /// Tasks seen, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &TaskStats)> {
        self.tasks
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.as_ref().map(|t| (i as u32, t)))
    }
}
