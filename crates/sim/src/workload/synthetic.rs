//! The synthetic request generator: sequential, uniform, Zipf or hot/cold offsets; fixed,
//! mixed or ranged sizes; reads, writes, trims and flushes; closed or open loop (Poisson,
//! fixed or bursty arrivals). The file-system model patterns hand sizes, offsets and
//! operations to their model: [`DesktopModel`] (see [`super::desktop`]), [`WebModel`] (see
//! [`super::web`]) or the file-system-benchmark stream ([`super::fsbench`]).

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp, Zipf};
use rand_pcg::Pcg64Mcg;

use super::desktop::{DesktopModel, ThinkTime, CLUSTER_BYTES, WORKLOAD_FOOTPRINT_FRACTION};
use super::fatvol::FsRequest;
use super::web::{WebModel, WebParams};
use super::{Arrival, LoopMode, Pattern, RequestSource, SizeSpec, WorkloadConfig};
use crate::config::{ConfigError, MAX_SIMULATED_NS};
use crate::host::{Op, Request};
use crate::SimError;

/// Stream of the seed used by workload generators (distinct from the FTL's stream).
const WORKLOAD_STREAM: u64 = 0x005e_ed0f_10ad;
/// A prime above any slot count, to scatter Zipf ranks over the range (2^61 - 1).
const SCATTER_PRIME: u128 = (1 << 61) - 1;

/// Generates the requests of a [`WorkloadConfig`].
#[derive(Debug)]
pub struct SyntheticSource {
    w: WorkloadConfig,
    rng: Pcg64Mcg,
    space_bytes: u64,
    align: u64,
    cursor: u64,
    issued: u64,
    writes_since_flush: u64,
    next_arrival_ns: u64,
    /// Fixed arrivals: the rounding error carried to the next gap (in -0.5 ..= 0.5 ns), so
    /// a gap that is not a whole number of nanoseconds (1.43 ns at 7 x 10^8 requests/s)
    /// keeps the rate exact on average.
    fixed_gap_carry_ns: f64,
    zipf: Option<Zipf<f64>>,
    exp: Option<Exp<f64>>,
    think: Option<ThinkTime>,
    /// The file-system model of a model pattern (its own random generator: the requests do
    /// not depend on the arrival process).
    model: Option<Model>,
}

/// A file-system model making the requests.
#[derive(Debug)]
enum Model {
    Desktop(Box<DesktopModel>),
    Web(Box<WebModel>),
    /// The benchmarks' whole stream, and the next request's index.
    Fsbench(Vec<FsRequest>, usize),
}

impl Model {
    /// The next (op, offset, length) in bytes; None when the stream is over.
    fn next(&mut self) -> Option<(Op, u64, u64)> {
        let sectors = |r: FsRequest| (r.op, r.first_sector * 512, r.sectors * 512);
        match self {
            Model::Desktop(m) => {
                let r = m.next_request();
                Some((r.op, r.offset_bytes, r.len_bytes))
            }
            Model::Web(m) => Some(sectors(m.next_request())),
            Model::Fsbench(stream, next) => {
                let r = stream.get(*next).copied()?;
                *next += 1;
                Some(sectors(r))
            }
        }
    }

    /// Builds the model of `w`'s pattern over `space` bytes.
    fn build(w: &WorkloadConfig, space: u64, seed: u64) -> Result<Option<Model>, ConfigError> {
        let too_small = |reason: String| {
            ConfigError::invalid(
                "workload.range_fraction",
                w.range_fraction,
                reason,
                "a larger range_fraction or device",
            )
        };
        let fat_model = matches!(w.pattern, Pattern::Web | Pattern::Fsbench);
        if fat_model && space > FAT_MODEL_MAX_BYTES {
            // The FAT volume keeps a flag per 4 KiB cluster and fsbench's stream is made
            // whole: bound the memory they take.
            return Err(ConfigError::invalid(
                "workload.range_fraction",
                w.range_fraction,
                format!(
                    "the {} workload's FAT volume would be {space} bytes, above {FAT_MODEL_MAX_BYTES} bytes (64 GiB)",
                    w.pattern.name()
                ),
                format!(
                    "a range_fraction addressing at most 64 GiB (here at most {:.6})",
                    w.range_fraction * FAT_MODEL_MAX_BYTES as f64 / space as f64
                ),
            ));
        }
        Ok(Some(match w.pattern {
            Pattern::Desktop => {
                let footprint = (space as f64 * WORKLOAD_FOOTPRINT_FRACTION) as u64;
                let share = WORKLOAD_FOOTPRINT_FRACTION * 100.0;
                let model = DesktopModel::new(space, footprint, seed).map_err(|reason| {
                    too_small(format!("the desktop workload touches {share:.0}% of the {space} bytes addressed: {reason}"))
                })?;
                Model::Desktop(Box::new(model))
            }
            Pattern::Web => {
                let params = WebParams {
                    cache_fraction: w.web_cache_fraction,
                    used_fraction: w.web_used_fraction,
                    hit_fraction: w.web_hit_fraction,
                };
                let model = WebModel::new(space / 512, params, seed).map_err(|reason| {
                    too_small(format!(
                        "the web workload's volume of {space} bytes: {reason}"
                    ))
                })?;
                Model::Web(Box::new(model))
            }
            Pattern::Fsbench => {
                if space < FSBENCH_MIN_BYTES {
                    return Err(too_small(format!(
                        "the fsbench volume of {space} bytes is below {FSBENCH_MIN_BYTES} bytes (4 MiB)"
                    )));
                }
                let util = w.fsbench_utilisation_resolved();
                let sectors = space / 512;
                let top = (sectors as f64 * util) as u64;
                let stream = super::fsbench::generate(w.fsbench_phases, sectors, top, 1.0, seed);
                Model::Fsbench(stream, 0)
            }
            _ => return Ok(None),
        }))
    }
}

/// Largest FAT volume of the web and fsbench models.
const FAT_MODEL_MAX_BYTES: u64 = 64 << 30;
/// Smallest volume the fsbench stream is generated on.
const FSBENCH_MIN_BYTES: u64 = 4 << 20;

impl SyntheticSource {
    /// A generator over the first `range_fraction` of `logical_bytes`.
    pub fn new(w: &WorkloadConfig, logical_bytes: u64, seed: u64) -> Result<Self, ConfigError> {
        w.validate()?;
        if w.pattern == Pattern::Periodic {
            return Err(ConfigError::invalid(
                "workload.pattern",
                "periodic",
                "periodic tasks are made by the periodic source, which needs the device's page size",
                "build it with workload::PeriodicSource (flashlab::workload_source does)",
            ));
        }
        let model_pattern = w.pattern.is_model();
        let align = if w.pattern == Pattern::Desktop {
            CLUSTER_BYTES
        } else if model_pattern {
            512
        } else if w.align_bytes == 0 {
            w.block_size.min_bytes()
        } else {
            w.align_bytes
        };
        let range = (logical_bytes as f64 * w.range_fraction) as u64;
        if align > range {
            return Err(ConfigError::invalid(
                "workload.align_bytes",
                super::spec::show_size(align),
                format!("larger than the {range} bytes the workload addresses"),
                format!("0 (the request size) or multiples of 512 up to {range}"),
            ));
        }
        let space = range / align * align;
        let model = Model::build(w, space, seed)?;
        let max = w.block_size.max_bytes();
        if model.is_none() && max > space {
            return Err(ConfigError::invalid(
                "workload.block_size",
                &w.block_size,
                format!("requests of {max} bytes do not fit the {space}-byte range addressed"),
                format!("sizes up to {space} bytes (or a larger workload.range_fraction)"),
            ));
        }
        let slots = (space.saturating_sub(max)) / align + 1;
        let zipf = match w.pattern {
            Pattern::Zipf => Some(Zipf::new(slots as f64, w.zipf_theta).map_err(|e| {
                ConfigError::invalid(
                    "workload.zipf_theta",
                    w.zipf_theta,
                    e.to_string(),
                    "0.0 ..= 10.0",
                )
            })?),
            _ => None,
        };
        let exp = (w.rate_iops > 0.0 && w.arrival == Arrival::Poisson)
            .then(|| Exp::new(w.rate_iops / 1e9).expect("positive rate"));
        let think = (w.rate_iops > 0.0 && w.arrival == Arrival::Bursty)
            .then(|| ThinkTime::new(1e9 / w.rate_iops));
        Ok(SyntheticSource {
            w: w.clone(),
            rng: Pcg64Mcg::seed_from_u64(seed ^ WORKLOAD_STREAM),
            space_bytes: space,
            align,
            cursor: 0,
            issued: 0,
            writes_since_flush: 0,
            next_arrival_ns: 0,
            fixed_gap_carry_ns: 0.0,
            zipf,
            exp,
            think,
            model,
        })
    }

    fn size(&mut self) -> u64 {
        match &self.w.block_size {
            SizeSpec::Fixed(b) => *b,
            SizeSpec::Mix(mix) => {
                let total: u64 = mix.iter().map(|(_, w)| u64::from(*w)).sum();
                let mut pick = self.rng.random_range(0..total);
                for (b, w) in mix {
                    if pick < u64::from(*w) {
                        return *b;
                    }
                    pick -= u64::from(*w);
                }
                mix[mix.len() - 1].0
            }
            SizeSpec::Range(lo, hi) => {
                let (lo, hi) = (lo.div_ceil(self.align), hi / self.align);
                self.rng.random_range(lo..=hi.max(lo)) * self.align
            }
        }
    }

    fn offset(&mut self, size: u64) -> u64 {
        let slots = (self.space_bytes - size) / self.align + 1;
        match self.w.pattern {
            Pattern::Sequential => {
                if self.cursor + size > self.space_bytes {
                    self.cursor = 0;
                }
                let at = self.cursor;
                self.cursor += size;
                at
            }
            // Model requests come from their model, never from here.
            Pattern::Uniform
            | Pattern::Desktop
            | Pattern::Web
            | Pattern::Fsbench
            | Pattern::Periodic => self.rng.random_range(0..slots) * self.align,
            Pattern::Zipf => {
                let z = self.zipf.as_ref().expect("zipf pattern has a distribution");
                // Ranks are scattered over the range so the hot offsets are not all adjacent.
                let rank = (z.sample(&mut self.rng) as u64).clamp(1, slots) - 1;
                let slot = ((u128::from(rank) * SCATTER_PRIME) % u128::from(slots)) as u64;
                slot * self.align
            }
            Pattern::Hotcold => {
                let hot = ((slots as f64 * self.w.hot_space) as u64).clamp(1, slots);
                let slot = if self.rng.random_bool(self.w.hot_access) || hot == slots {
                    self.rng.random_range(0..hot)
                } else {
                    self.rng.random_range(hot..slots)
                };
                slot * self.align
            }
        }
    }

    fn op(&mut self) -> Op {
        if self.w.flush_every > 0 && self.writes_since_flush >= self.w.flush_every {
            self.writes_since_flush = 0;
            return Op::Flush;
        }
        if self.w.trim_fraction > 0.0 && self.rng.random_bool(self.w.trim_fraction) {
            return Op::Trim;
        }
        let read = self.w.read_fraction >= 1.0
            || (self.w.read_fraction > 0.0 && self.rng.random_bool(self.w.read_fraction));
        if read {
            Op::Read
        } else {
            self.writes_since_flush += 1;
            Op::Write
        }
    }

    fn next_arrival(&mut self) -> u64 {
        let at = self.next_arrival_ns;
        let gap = match (&self.exp, &self.think) {
            (Some(exp), _) => exp.sample(&mut self.rng).round() as u64,
            (None, Some(think)) => think.gap_ns(&mut self.rng),
            (None, None) => {
                let exact = 1e9 / self.w.rate_iops + self.fixed_gap_carry_ns;
                let whole = exact.round();
                self.fixed_gap_carry_ns = exact - whole;
                whole as u64
            }
        };
        self.next_arrival_ns = at.saturating_add(gap);
        at
    }
}

impl RequestSource for SyntheticSource {
    fn next_request(&mut self, now_ns: u64) -> Result<Option<Request>, SimError> {
        if self.w.count > 0 && self.issued >= self.w.count {
            return Ok(None);
        }
        let open = self.w.rate_iops > 0.0;
        let arrival = if open { self.next_arrival() } else { now_ns };
        if self.w.duration_ns > 0 && arrival >= self.w.duration_ns {
            return Ok(None);
        }
        if arrival > MAX_SIMULATED_NS {
            return Err(SimError::Input {
                location: "workload.rate_iops".into(),
                message: format!(
                    "request {} would arrive after {arrival} ns, beyond the 146 years (2^62 ns) the simulated clock holds; raise the rate or lower workload.count",
                    self.issued + 1
                ),
            });
        }
        let (op, offset, len) = if let Some(model) = &mut self.model {
            let Some(next) = model.next() else {
                return Ok(None);
            };
            next
        } else {
            let op = self.op();
            match op {
                Op::Flush => (op, 0, 0),
                _ => {
                    let size = self.size();
                    (op, self.offset(size), size)
                }
            }
        };
        self.issued += 1;
        let deadline_ns = self.w.deadline_ns;
        Ok(Some(Request {
            arrival_ns: arrival,
            op,
            offset_bytes: offset,
            len_bytes: len,
            deadline_ns,
            task: None,
        }))
    }

    fn loop_mode(&self) -> LoopMode {
        self.w.loop_mode()
    }

    fn expected_requests(&self) -> Option<u64> {
        let stream = match &self.model {
            Some(Model::Fsbench(stream, _)) => Some(stream.len() as u64),
            _ => None,
        };
        match (self.w.count, stream) {
            (0, stream) => stream,
            (count, Some(len)) => Some(count.min(len)),
            (count, None) => Some(count),
        }
    }

    fn duration_ns(&self) -> Option<u64> {
        (self.w.duration_ns > 0).then_some(self.w.duration_ns)
    }

    fn describe(&self) -> serde_json::Value {
        let mut d = serde_json::json!({
            "kind": "synthetic",
            "spec": self.w.to_spec(),
            "addressed_bytes": self.space_bytes,
        });
        match &self.model {
            Some(Model::Desktop(model)) => d["footprint_bytes"] = model.footprint_bytes().into(),
            Some(Model::Fsbench(stream, _)) => d["stream_requests"] = stream.len().into(),
            _ => {}
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::parse_spec;

    fn take(spec: &str, n: usize) -> Vec<Request> {
        let w = parse_spec(spec).unwrap();
        let mut s = SyntheticSource::new(&w, 1 << 30, 7).unwrap();
        (0..n).map_while(|_| s.next_request(0).unwrap()).collect()
    }

    #[test]
    fn sequential_requests_follow_each_other_and_wrap() {
        let w = parse_spec("seqwrite:bs=64k,count=100").unwrap();
        let mut s = SyntheticSource::new(&w, 256 << 10, 1).unwrap();
        let offs: Vec<u64> = (0..6)
            .map(|_| s.next_request(0).unwrap().unwrap().offset_bytes)
            .collect();
        assert_eq!(offs, vec![0, 65536, 131072, 196608, 0, 65536]);
    }

    #[test]
    fn uniform_offsets_are_aligned_in_range_and_cover_it() {
        let reqs = take("randwrite:bs=4k,count=20000", 20000);
        assert!(reqs
            .iter()
            .all(|r| r.offset_bytes % 4096 == 0 && r.offset_bytes + 4096 <= 1 << 30));
        let upper = reqs.iter().filter(|r| r.offset_bytes >= 1 << 29).count();
        assert!((9000..11000).contains(&upper), "{upper}");
    }

    #[test]
    fn read_fraction_and_count_are_respected() {
        let reqs = take("randrw:read=0.3,count=10000", 20000);
        assert_eq!(reqs.len(), 10000);
        let reads = reqs.iter().filter(|r| r.op == Op::Read).count();
        assert!((2700..3300).contains(&reads), "{reads}");
    }

    #[test]
    fn hot_space_gets_its_share() {
        let reqs = take("hotcold:hot=0.1:0.9,count=20000", 20000);
        let hot = reqs
            .iter()
            .filter(|r| r.offset_bytes < (1 << 30) / 10)
            .count();
        assert!((17500..18500).contains(&hot), "{hot}");
    }

    #[test]
    fn zipf_concentrates_on_few_offsets() {
        let reqs = take("zipf:theta=1.2,count=20000", 20000);
        let mut counts = std::collections::HashMap::new();
        for r in &reqs {
            *counts.entry(r.offset_bytes).or_insert(0) += 1;
        }
        let top = counts.values().max().copied().unwrap();
        assert!(top > 1000, "hottest offset only {top} times");
    }

    #[test]
    fn open_loop_rate_sets_arrivals() {
        let reqs = take("randread:rate=1000,arrival=fixed,count=5", 5);
        let t: Vec<u64> = reqs.iter().map(|r| r.arrival_ns).collect();
        assert_eq!(t, vec![0, 1_000_000, 2_000_000, 3_000_000, 4_000_000]);
        let reqs = take("randread:rate=1000,count=2000", 2000);
        let mean_gap = reqs.last().unwrap().arrival_ns as f64 / 1999.0;
        assert!((900_000.0..1_100_000.0).contains(&mean_gap), "{mean_gap}");
    }

    #[test]
    fn fixed_arrivals_below_a_nanosecond_apart_keep_their_rate() {
        // 1.43 ns apart: rounding each gap alone would give 1 ns (10^9 requests/s).
        let reqs = take("randread:rate=7e8,arrival=fixed,count=7001", 7001);
        assert_eq!(reqs.last().unwrap().arrival_ns, 10_000);
        let t: Vec<u64> = reqs.iter().take(4).map(|r| r.arrival_ns).collect();
        assert_eq!(t, vec![0, 1, 3, 4]);
        // A duration ends such a stream (it used to stay at time 0 forever at 10^12/s).
        let w = parse_spec("randread:rate=1e9,arrival=fixed,count=0,duration=1us").unwrap();
        let mut s = SyntheticSource::new(&w, 1 << 30, 1).unwrap();
        let mut n = 0;
        while s.next_request(0).unwrap().is_some() {
            n += 1;
        }
        assert_eq!(n, 1000);
    }

    #[test]
    fn flushes_and_trims_appear() {
        let reqs = take("randwrite:flush=10,trim=0.1,count=1000", 1000);
        let flushes = reqs.iter().filter(|r| r.op == Op::Flush).count();
        let trims = reqs.iter().filter(|r| r.op == Op::Trim).count();
        assert!((70..100).contains(&flushes), "{flushes}");
        assert!((60..140).contains(&trims), "{trims}");
    }

    #[test]
    fn same_seed_same_stream() {
        assert_eq!(take("randrw:count=100", 100), take("randrw:count=100", 100));
    }

    #[test]
    fn too_large_requests_are_rejected() {
        let w = parse_spec("randwrite:bs=1m").unwrap();
        let e = SyntheticSource::new(&w, 512 << 10, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("workload.block_size"), "{e}");
    }
}
