//! Bandwidth and latency per interval of simulated time (`run.timeseries_interval_ns`):
//! part-ftl.txt Fig. 16's bandwidth over time. A request counts in the interval its
//! completion falls in, counted from the start of the measurement. The vector of intervals
//! grows once per interval, never per request.

/// What completed in one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Interval {
    pub requests: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub latency_sum_ns: u128,
    pub latency_max_ns: u64,
    pub deadline_misses: u64,
}

/// Completed work per fixed interval from `start_ns`.
#[derive(Debug, Clone, Default)]
pub struct TimeSeries {
    interval_ns: u64,
    start_ns: u64,
    intervals: Vec<Interval>,
}

impl TimeSeries {
    /// A series of `interval_ns`-long intervals from `start_ns` (`interval_ns` > 0).
    pub fn new(interval_ns: u64, start_ns: u64) -> Self {
        debug_assert!(interval_ns > 0);
        TimeSeries {
            interval_ns,
            start_ns,
            intervals: Vec::new(),
        }
    }

    pub fn interval_ns(&self) -> u64 {
        self.interval_ns
    }
    pub fn start_ns(&self) -> u64 {
        self.start_ns
    }
    /// Intervals from the first to the one of the last completion.
    pub fn intervals(&self) -> &[Interval] {
        &self.intervals
    }

    /// The interval `done_ns` falls in, added (with the empty ones before it) if new.
    fn at(&mut self, done_ns: u64) -> &mut Interval {
        let i = (done_ns.saturating_sub(self.start_ns) / self.interval_ns) as usize;
        if self.intervals.len() <= i {
            self.intervals.resize(i + 1, Interval::default());
        }
        &mut self.intervals[i]
    }

    /// Records a request completed at `done_ns`: its read or written bytes and latency.
    pub fn record(&mut self, done_ns: u64, read_bytes: u64, write_bytes: u64, latency_ns: u64) {
        let at = self.at(done_ns);
        at.requests += 1;
        at.read_bytes += read_bytes;
        at.write_bytes += write_bytes;
        at.latency_sum_ns += u128::from(latency_ns);
        at.latency_max_ns = at.latency_max_ns.max(latency_ns);
    }

    /// Records a deadline missed by a request completed at `done_ns`.
    pub fn record_miss(&mut self, done_ns: u64) {
        self.at(done_ns).deadline_misses += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_land_in_the_interval_of_their_completion() {
        let mut s = TimeSeries::new(100, 1_000);
        s.record(1_050, 4096, 0, 30);
        s.record(1_099, 0, 8192, 70);
        s.record(1_100, 0, 512, 5);
        s.record(1_350, 512, 0, 9);
        s.record_miss(1_350);
        let i = s.intervals();
        assert_eq!(i.len(), 4, "the empty third interval is kept");
        assert_eq!(
            (i[0].requests, i[0].read_bytes, i[0].write_bytes),
            (2, 4096, 8192)
        );
        assert_eq!((i[0].latency_sum_ns, i[0].latency_max_ns), (100, 70));
        assert_eq!((i[1].requests, i[1].write_bytes), (1, 512));
        assert_eq!(i[2], Interval::default());
        assert_eq!((i[3].requests, i[3].deadline_misses), (1, 1));
    }
}
