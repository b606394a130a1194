//! Timestamps too coarse for an open-loop replay: a trace recorded with a clock of 1 s
//! resolution gives most consecutive requests the same timestamp, and an open-loop replay
//! then sends each second's requests at once, a burst the recording's clock made, not the
//! workload. [`ResolutionCheck`] watches the records of a pass in time order and, when most
//! gaps between consecutive requests are zero, says how many, the timestamps' resolution
//! when it is coarse (every timestamp a multiple of it), and what to replay with instead.

use super::formats::TraceRecord;

/// Gaps looked at before the check says anything (a handful of lines proves nothing).
const MIN_GAPS: u64 = 100;
/// Share of zero gaps from which the timestamps are called coarse (per thousand).
const ZERO_GAPS_PER_MILLE: u64 = 900;
/// Resolutions this fine are not worth naming (and are not followed further).
const FINE_RESOLUTION_NS: u64 = 1_000;

/// Watches the gaps between consecutive requests' timestamps.
#[derive(Debug, Clone, Default)]
pub struct ResolutionCheck {
    first_ns: Option<u64>,
    previous_ns: u64,
    gaps: u64,
    zero_gaps: u64,
    /// Greatest common divisor of every timestamp's distance from the first (0: none yet).
    resolution_ns: u64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl ResolutionCheck {
    /// Looks at the next record in time order.
    pub fn add(&mut self, r: &TraceRecord) {
        let Some(first) = self.first_ns else {
            self.first_ns = Some(r.time_ns);
            self.previous_ns = r.time_ns;
            return;
        };
        self.gaps += 1;
        self.zero_gaps += u64::from(r.time_ns == self.previous_ns);
        self.previous_ns = r.time_ns;
        if self.resolution_ns == 0 || self.resolution_ns > FINE_RESOLUTION_NS {
            self.resolution_ns = gcd(self.resolution_ns, r.time_ns.saturating_sub(first));
        }
    }

    /// A warning for an open-loop replay when most gaps are zero (None when they are not).
    pub fn open_loop_warning(&self) -> Option<String> {
        if self.gaps < MIN_GAPS || self.zero_gaps * 1000 < self.gaps * ZERO_GAPS_PER_MILLE {
            return None;
        }
        let resolution = if self.resolution_ns > FINE_RESOLUTION_NS {
            format!(
                " (every timestamp is a multiple of {})",
                shown_time(self.resolution_ns)
            )
        } else {
            String::new()
        };
        Some(format!(
            "{:.1}% of the {} gaps between consecutive requests are zero{resolution}: replayed open \
             loop, the requests of one timestamp arrive at once, in bursts the trace's clock made; \
             for the device's own pace replay closed loop (trace.replay=closed) or bounded-open \
             (trace.replay=bounded-open, at most trace.queue_depth in the device), or check the \
             time unit (--trace-format)",
            self.zero_gaps as f64 * 100.0 / self.gaps as f64,
            self.gaps
        ))
    }
}

/// A resolution for a message: `1 s`, `10 ms`, `100 us`, else nanoseconds.
fn shown_time(ns: u64) -> String {
    for (unit, name) in [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")] {
        if ns % unit == 0 {
            return format!("{} {name}", ns / unit);
        }
    }
    format!("{ns} ns")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Op;

    fn at(time_ns: u64) -> TraceRecord {
        TraceRecord {
            time_ns,
            device: 0,
            op: Op::Read,
            offset_bytes: 0,
            len_bytes: 4096,
        }
    }

    fn check(times: impl Iterator<Item = u64>) -> Option<String> {
        let mut c = ResolutionCheck::default();
        times.for_each(|t| c.add(&at(t)));
        c.open_loop_warning()
    }

    #[test]
    fn second_resolution_timestamps_are_announced_with_the_figures() {
        // 300 requests per second over 10 s: 2990 of 2999 gaps are zero.
        let w = check((0..3000).map(|i| (5 + i / 300) * 1_000_000_000)).expect("a warning");
        assert!(w.starts_with("99.7% of the 2999 gaps"), "{w}");
        assert!(w.contains("every timestamp is a multiple of 1 s"), "{w}");
        assert!(w.contains("trace.replay=closed"), "{w}");
        assert!(w.contains("trace.replay=bounded-open"), "{w}");
    }

    #[test]
    fn fine_timestamps_and_short_traces_pass() {
        assert_eq!(check((0..3000).map(|i| i * 1_337)), None);
        // Bursts of two (half the gaps zero) are a workload, not a clock.
        assert_eq!(check((0..3000).map(|i| i / 2 * 1_000_000)), None);
        assert_eq!(check((0..50).map(|_| 7)), None);
        // All at one instant: no resolution to name, but the zero gaps are.
        let w = check((0..500).map(|_| 7)).expect("a warning");
        assert!(w.starts_with("100.0% of the 499 gaps"), "{w}");
        assert!(!w.contains("multiple of"), "{w}");
    }
}
