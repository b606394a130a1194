//! Bandwidth and latency per interval of simulated time (`run.timeseries_interval_ns`):
//! part-ftl.txt Fig. 16's bandwidth over time. A request counts in the interval its
//! completion falls in, counted from the start of the measurement. The vector of intervals
//! grows once per interval, never per request.
//!
//! A run's length is not known before it ends (a closed loop runs as fast as the device),
//! so the number of intervals is bounded as it grows: when a completion would need more
//! than [`MAX_INTERVALS`], the interval doubles (as often as needed) and neighbouring
//! intervals merge, every sum and maximum kept exact. The report gives the interval used
//! and the one asked for, and the command line warns. (A 1 ns interval on a 200 s run
//! would otherwise need 2 x 10^11 intervals, 12 TB.)

/// Most intervals a series keeps (64 bytes each here, a few hundred in a JSON report).
pub const MAX_INTERVALS: usize = 100_000;

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

impl Interval {
    /// Adds `other`'s completions to this interval's.
    fn merge(&mut self, other: &Interval) {
        self.requests += other.requests;
        self.read_bytes += other.read_bytes;
        self.write_bytes += other.write_bytes;
        self.latency_sum_ns += other.latency_sum_ns;
        self.latency_max_ns = self.latency_max_ns.max(other.latency_max_ns);
        self.deadline_misses += other.deadline_misses;
    }
}

/// Completed work per fixed interval from `start_ns`.
#[derive(Debug, Clone, Default)]
pub struct TimeSeries {
    interval_ns: u64,
    requested_interval_ns: u64,
    start_ns: u64,
    intervals: Vec<Interval>,
}

impl TimeSeries {
    /// A series of `interval_ns`-long intervals from `start_ns` (`interval_ns` > 0).
    pub fn new(interval_ns: u64, start_ns: u64) -> Self {
        debug_assert!(interval_ns > 0);
        TimeSeries {
            interval_ns,
            requested_interval_ns: interval_ns,
            start_ns,
            intervals: Vec::new(),
        }
    }

    /// The interval's length: the one asked for, or a power-of-two multiple of it once the
    /// run needed more than [`MAX_INTERVALS`] of those.
    pub fn interval_ns(&self) -> u64 {
        self.interval_ns
    }
    /// The interval asked for (`run.timeseries_interval_ns`).
    pub fn requested_interval_ns(&self) -> u64 {
        self.requested_interval_ns
    }
    pub fn start_ns(&self) -> u64 {
        self.start_ns
    }
    /// Intervals from the first to the one of the last completion.
    pub fn intervals(&self) -> &[Interval] {
        &self.intervals
    }

    /// The interval `done_ns` falls in, added (with the empty ones before it) if new; the
    /// intervals are coarsened first if it lies beyond [`MAX_INTERVALS`].
    fn at(&mut self, done_ns: u64) -> &mut Interval {
        let since_start = done_ns.saturating_sub(self.start_ns);
        if since_start / self.interval_ns >= MAX_INTERVALS as u64 {
            self.coarsen_to_reach(since_start);
        }
        let i = (since_start / self.interval_ns) as usize;
        if self.intervals.len() <= i {
            self.intervals.resize(i + 1, Interval::default());
        }
        &mut self.intervals[i]
    }

    /// Doubles the interval until `since_start` falls within [`MAX_INTERVALS`] of them,
    /// merging the intervals kept so far accordingly.
    fn coarsen_to_reach(&mut self, since_start: u64) {
        let mut factor: u64 = 1;
        while since_start / self.interval_ns.saturating_mul(factor) >= MAX_INTERVALS as u64 {
            factor *= 2;
        }
        self.interval_ns = self.interval_ns.saturating_mul(factor);
        self.intervals = self
            .intervals
            .chunks(factor.min(usize::MAX as u64) as usize)
            .map(|group| {
                let mut merged = Interval::default();
                group.iter().for_each(|i| merged.merge(i));
                merged
            })
            .collect();
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

    #[test]
    fn a_series_longer_than_the_bound_is_coarsened_with_every_sum_kept() {
        // 1 ns intervals; completions up to 2.5 x the bound.
        let mut s = TimeSeries::new(1, 0);
        let last = (MAX_INTERVALS as u64) * 5 / 2;
        let mut expected = Interval::default();
        for t in (0..=last).step_by(997) {
            s.record(t, t % 3, 512, t);
            expected.merge(&Interval {
                requests: 1,
                read_bytes: t % 3,
                write_bytes: 512,
                latency_sum_ns: u128::from(t),
                latency_max_ns: t,
                deadline_misses: 0,
            });
        }
        s.record_miss(last);
        expected.deadline_misses = 1;
        assert_eq!(s.requested_interval_ns(), 1);
        assert_eq!(s.interval_ns(), 4, "doubled until 2.5 x the bound fits");
        assert!(s.intervals().len() <= MAX_INTERVALS);
        assert_eq!(s.intervals().len() as u64, last / 4 + 1);
        let mut total = Interval::default();
        s.intervals().iter().for_each(|i| total.merge(i));
        assert_eq!(total, expected, "nothing lost in the merges");
        // Each completion is in the interval of its time at the new length.
        assert_eq!(s.intervals()[997 / 4].requests, 1);
        assert_eq!(s.intervals()[(last / 4) as usize].deadline_misses, 1);
    }

    #[test]
    fn a_far_completion_coarsens_in_one_step_within_memory() {
        // 200 s of simulated time at 1 ns: 2 x 10^11 intervals asked for.
        let mut s = TimeSeries::new(1, 1_000);
        s.record(1_500, 0, 4096, 10);
        s.record(1_000 + 200_000_000_000, 4096, 0, 20);
        assert!(s.intervals().len() <= MAX_INTERVALS);
        assert_eq!(
            s.interval_ns(),
            1 << 21,
            "the smallest power of two that holds 200 s"
        );
        assert_eq!(s.intervals()[0].write_bytes, 4096);
        assert_eq!(s.intervals().last().unwrap().read_bytes, 4096);
    }
}
