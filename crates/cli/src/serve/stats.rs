//! `flashlab serve --stats-interval`: one line per interval on standard error: requests per
//! wall second, simulated latency percentiles of the requests finished in the interval,
//! write amplification (flash pages programmed over host bytes written, since the start)
//! and GC activity (blocks erased in the interval), and the bytes the device holds staged.

use std::time::{Duration, Instant};

use flashlab_sim::blockdev::{BlockDevice, Finished};
use flashlab_sim::flash::OpKind;
use flashlab_sim::host::Op;
use flashlab_sim::stats::format_ns;
use hdrhistogram::Histogram;

/// The figures of the current interval.
pub struct LiveStats {
    every: Duration,
    started: Instant,
    last: Instant,
    latency: Histogram<u64>,
    requests: u64,
    erases_before: u64,
}

impl LiveStats {
    pub fn new(every: Duration, device: &BlockDevice) -> Self {
        let now = Instant::now();
        LiveStats {
            every,
            started: now,
            last: now,
            latency: Histogram::new(3).expect("3 significant digits is valid"),
            requests: 0,
            erases_before: erases(device),
        }
    }

    /// Counts a finished request.
    pub fn record(&mut self, f: &Finished) {
        self.requests += 1;
        let latency = f.completion_ns.saturating_sub(f.arrival_ns).max(1);
        self.latency.saturating_record(latency);
    }

    /// Prints the interval's line when it is over.
    pub fn maybe_print(&mut self, device: &BlockDevice) {
        let now = Instant::now();
        let elapsed = now - self.last;
        if elapsed < self.every {
            return;
        }
        let sim = device.simulation();
        let page = u64::from(sim.nand().layout().page_bytes);
        let programmed = sim.flash().counters().programmed_pages() * page;
        let written = sim.host_stats().op(Op::Write).bytes;
        let wa = if written > 0 {
            format!("{:.2}", programmed as f64 / written as f64)
        } else {
            "-".into()
        };
        let erased = erases(device);
        let h = &self.latency;
        let pct = |q: f64| {
            if h.is_empty() {
                "-".to_string()
            } else {
                format_ns(h.value_at_quantile(q) as f64)
            }
        };
        eprintln!(
            "[{:>7.1} s] {:>9.0} IOPS  latency (simulated) mean {} p50 {} p99 {} p99.9 {}  WA {wa}  GC {} blocks erased  staged {} KiB  simulated {:.3} s",
            (now - self.started).as_secs_f64(),
            self.requests as f64 / elapsed.as_secs_f64(),
            if h.is_empty() { "-".into() } else { format_ns(h.mean()) },
            pct(0.5),
            pct(0.99),
            pct(0.999),
            erased - self.erases_before,
            device.counters().staged_bytes >> 10,
            sim.now() as f64 / 1e9,
        );
        self.erases_before = erased;
        self.requests = 0;
        self.latency.reset();
        self.last = now;
    }
}

fn erases(device: &BlockDevice) -> u64 {
    device.simulation().flash().counters().total(OpKind::Erase)
}
