//! When to flush and which queue to serve next: the flush watermarks (fmmu.txt section 4.5)
//! and the weighted round-robin arbiter (section 4.6, Fig. 9).

/// Flush hysteresis on the number of non-dirty cache blocks: flushing starts when it falls to
/// `low` and continues, alternating with request processing, until it reaches `high`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watermarks {
    low: u32,
    high: u32,
    flushing: bool,
}

impl Watermarks {
    /// `low < high`.
    pub fn new(low: u32, high: u32) -> Self {
        assert!(low < high, "low watermark {low} must be below high {high}");
        Watermarks {
            low,
            high,
            flushing: false,
        }
    }
    /// Whether to flush now, given `non_dirty` blocks.
    pub fn should_flush(&mut self, non_dirty: u32) -> bool {
        if non_dirty <= self.low {
            self.flushing = true;
        } else if non_dirty >= self.high {
            self.flushing = false;
        }
        self.flushing
    }
    pub fn low(&self) -> u32 {
        self.low
    }
    pub fn high(&self) -> u32 {
        self.high
    }
}

/// The queues the CMT serves (Fig. 9): host requests (HRM), GC requests (GCM) and the CTP's
/// responses to its loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queue {
    Host = 0,
    Gc = 1,
    Response = 2,
}

const QUEUES: [Queue; 3] = [Queue::Host, Queue::Gc, Queue::Response];

/// Weighted round robin over the three queues: the current queue is served up to its weight
/// in a row while it has work, then the next non-empty queue in turn. Responses weigh more
/// than requests (one response releases every request waiting on its block).
///
/// The host and GC weights follow the GC victim's valid count (section 4.6: "to minimize the
/// fluctuation of SSD write performance"; the paper gives no formula). Collecting a victim
/// with `v` valid units of `n` copies `v` units and frees room for `n - v` host units, so the
/// request weight `request_weight` is split in that ratio:
/// `gc = clamp(round(request_weight x v / n), 1, request_weight - 1)`,
/// `host = request_weight - gc`. Neither queue starves (each keeps at least 1).
#[derive(Debug, Clone)]
pub struct Wrr {
    weights: [u32; 3],
    request_weight: u32,
    current: usize,
    served: u32,
}

impl Wrr {
    /// Host and GC share `request_weight` (>= 2), half each until a GC victim is known;
    /// responses weigh `response_weight` (>= 1).
    pub fn new(request_weight: u32, response_weight: u32) -> Self {
        assert!(request_weight >= 2 && response_weight >= 1);
        let gc = request_weight / 2;
        Wrr {
            weights: [request_weight - gc, gc, response_weight],
            request_weight,
            current: 0,
            served: 0,
        }
    }

    pub fn weight(&self, q: Queue) -> u32 {
        self.weights[q as usize]
    }

    /// Sets the host and GC weights for a GC victim with `valid` of `units` units valid.
    pub fn gc_victim(&mut self, valid: u32, units: u32) {
        let w = u64::from(self.request_weight);
        let share = (w * u64::from(valid) + u64::from(units) / 2) / u64::from(units.max(1));
        let gc = share.clamp(1, w - 1) as u32;
        self.weights[Queue::Gc as usize] = gc;
        self.weights[Queue::Host as usize] = self.request_weight - gc;
    }

    /// The queue to serve next among those with work (`pending[q]`), or `None` if all are
    /// empty.
    pub fn pick(&mut self, pending: [bool; 3]) -> Option<Queue> {
        if pending[self.current] && self.served < self.weights[self.current] {
            self.served += 1;
            return Some(QUEUES[self.current]);
        }
        for step in 1..=3 {
            let q = (self.current + step) % 3;
            if pending[q] {
                self.current = q;
                self.served = 1;
                return Some(QUEUES[q]);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flushing_starts_at_low_and_stops_at_high() {
        let mut w = Watermarks::new(2, 5);
        assert!(!w.should_flush(4));
        assert!(!w.should_flush(3));
        assert!(w.should_flush(2), "starts at the low watermark");
        assert!(w.should_flush(3), "keeps going between the watermarks");
        assert!(w.should_flush(4));
        assert!(!w.should_flush(5), "stops at the high watermark");
        assert!(!w.should_flush(4), "does not restart above low");
    }

    fn serve(w: &mut Wrr, n: usize, pending: [bool; 3]) -> [u32; 3] {
        let mut got = [0; 3];
        for _ in 0..n {
            got[w.pick(pending).unwrap() as usize] += 1;
        }
        got
    }

    #[test]
    fn busy_queues_are_served_in_proportion_to_their_weights() {
        let mut w = Wrr::new(4, 6);
        // host 2, gc 2, responses 6 per round of 10.
        assert_eq!(serve(&mut w, 100, [true; 3]), [20, 20, 60]);
        // Only one queue with work gets everything.
        assert_eq!(serve(&mut w, 7, [false, true, false]), [0, 7, 0]);
        assert_eq!(w.pick([false; 3]), None);
    }

    #[test]
    fn host_and_gc_weights_follow_the_gc_victims_valid_count() {
        let mut w = Wrr::new(8, 8);
        w.gc_victim(48, 64); // 3/4 valid: GC gets 6 of 8
        assert_eq!((w.weight(Queue::Host), w.weight(Queue::Gc)), (2, 6));
        assert_eq!(serve(&mut w, 160, [true; 3]), [20, 60, 80]);
        w.gc_victim(8, 64); // 1/8 valid: GC 1, host 7
        assert_eq!((w.weight(Queue::Host), w.weight(Queue::Gc)), (7, 1));
        w.gc_victim(0, 64);
        assert_eq!(w.weight(Queue::Gc), 1, "GC never starves");
        w.gc_victim(64, 64);
        assert_eq!(w.weight(Queue::Host), 1, "the host never starves");
    }
}
