//! When to flush and how to weigh the map unit's queues: the flush watermarks (fmmu.txt
//! section 4.5) and the host/GC request weights of the weighted round-robin arbiter (section
//! 4.6, Fig. 9; the arbiter itself is the engine's map unit, `engine/map_unit.rs`).

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

/// Weights of the map unit's host and GC request queues while a GC victim with `valid` of
/// `units` units valid is collected (fmmu.txt 4.6: changed at run time by the victim's valid
/// count "to minimize the fluctuation of SSD write performance"; the paper gives no
/// formula). Collecting the victim copies `valid` units and frees room for `units - valid`
/// host units, so `request_weight` (>= 2) is split in that ratio:
/// `gc = clamp(round(request_weight x valid / units), 1, request_weight - 1)`,
/// `host = request_weight - gc`. Neither queue starves (each keeps at least 1). Returns
/// `(host, gc)`.
pub fn victim_request_weights(request_weight: u32, valid: u32, units: u32) -> (u32, u32) {
    let w = u64::from(request_weight.max(2));
    let units = u64::from(units.max(1));
    let share = (w * u64::from(valid).min(units) + units / 2) / units;
    let gc = share.clamp(1, w - 1);
    ((w - gc) as u32, gc as u32)
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

    #[test]
    fn host_and_gc_weights_follow_the_gc_victims_valid_count() {
        assert_eq!(
            victim_request_weights(8, 48, 64),
            (2, 6),
            "3/4 valid: GC 6 of 8"
        );
        assert_eq!(victim_request_weights(8, 8, 64), (7, 1), "1/8 valid: GC 1");
        assert_eq!(victim_request_weights(8, 32, 64), (4, 4));
        assert_eq!(victim_request_weights(8, 0, 64), (7, 1), "GC never starves");
        assert_eq!(
            victim_request_weights(8, 64, 64),
            (1, 7),
            "the host never starves"
        );
        assert_eq!(
            victim_request_weights(8, 99, 64),
            (1, 7),
            "more valid than units"
        );
        assert_eq!(victim_request_weights(2, 10, 16), (1, 1));
    }
}
