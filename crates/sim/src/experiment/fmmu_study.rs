//! fmmu.txt section 5 on `fmmu-16ch`: the four synthetic workloads after a full sequential fill
//! (Figs. 11 and 12: throughput and the utilisation of host link, NAND bus, chips and FTL), the
//! traces at 512 outstanding and zero inter-arrival (Fig. 13: elapsed time normalised to the
//! ideal; the paper's MSR and WebSearch traces are not public: the MQSim excerpts built into
//! flashlab stand in unless other traces are given, [`DEFAULT_TRACES`]) and 4 KiB random
//! reads "in map cache case" (over
//! [`SCALING_RANGE_FRACTION`] of the space) from 1 ch x 1 way to 32 ch x 8 ways on a PCIe 3.0
//! x32 link (Fig. 14), each point beside its closed form ([`super::fmmu`]).
//!
//! The map-cache schemes are rows of [`SCHEMES`]: adding an FTL is one line. The ideal is
//! FMMU's caches with every execution time zero (fmmu.txt 5.3: "the FTL execution time is set
//! to zero"): the same translation reads and writes as the others, so its closed forms count
//! the run's translation reads per host operation. The map cache is the paper's 1,088 KiB
//! (DFTL: all CMT; CDFTL, FMMU, ideal: 64 KiB CMT + 1,024 KiB CTP), scaled with the device's
//! pages per block so a shortened device keeps the paper's cache-to-map ratio (`--quick`).

use serde::Serialize;

use super::fmmu::{self as closed, Device, Limit};
use crate::config::ExperimentConfig;
use crate::workload::{parse_spec, LoopMode, RequestSource};
use crate::{Report, SimError, Simulation};

pub mod claims;
pub use claims::claims;

/// How a scheme's 1,088 KiB of map-cache RAM is split (fmmu.txt 5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheSplit {
    /// DFTL: all of it the CMT.
    AllCmt,
    /// CDFTL and FMMU: 64 KiB CMT and 1,024 KiB CTP.
    CmtAndCtp,
}

/// One map-cache scheme: an FTL, its cores, its map-cache RAM and other settings.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Scheme {
    pub label: &'static str,
    pub ftl: &'static str,
    pub cores: u32,
    pub cache: CacheSplit,
    pub sets: &'static [&'static str],
}

impl Scheme {
    const fn of(label: &'static str, ftl: &'static str, cores: u32, cache: CacheSplit) -> Self {
        Scheme {
            label,
            ftl,
            cores,
            cache,
            sets: &[],
        }
    }

    /// `--set` lines of the map-cache RAM, the paper's sizes times `scale`.
    fn cache_sets(&self, scale: f64) -> [String; 2] {
        let bytes = |kib: f64| ((kib * 1024.0 * scale).round() as u64).max(4096);
        let (cmt, ctp) = match self.cache {
            CacheSplit::AllCmt => (bytes(PAPER_CACHE_KIB), 0),
            CacheSplit::CmtAndCtp => (bytes(64.0), bytes(1024.0)),
        };
        [
            format!("ftl.cmt_bytes={cmt}"),
            format!("ftl.ctp_bytes={ctp}"),
        ]
    }
}

/// fmmu.txt 5.1: the map cache's RAM, KiB.
pub const PAPER_CACHE_KIB: f64 = 1088.0;

/// The schemes compared (fmmu.txt 5.1-5.3: DFTL and CDFTL on 1, 2 and 4 cores, FMMU, and
/// the ideal).
pub const SCHEMES: &[Scheme] = &[
    Scheme {
        sets: &["ftl.exec_time=\"ideal\""],
        ..Scheme::of("ideal", "fmmu", 1, CacheSplit::CmtAndCtp)
    },
    Scheme::of("dftl-1c", "dftl", 1, CacheSplit::AllCmt),
    Scheme::of("dftl-2c", "dftl", 2, CacheSplit::AllCmt),
    Scheme::of("dftl-4c", "dftl", 4, CacheSplit::AllCmt),
    Scheme::of("cdftl-1c", "cdftl", 1, CacheSplit::CmtAndCtp),
    Scheme::of("cdftl-2c", "cdftl", 2, CacheSplit::CmtAndCtp),
    Scheme::of("cdftl-4c", "cdftl", 4, CacheSplit::CmtAndCtp),
    Scheme::of("fmmu", "fmmu", 1, CacheSplit::CmtAndCtp),
];

/// The labels of [`SCHEMES`], comma separated (for `--schemes` and its errors).
pub fn scheme_labels() -> String {
    SCHEMES
        .iter()
        .map(|s| s.label)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Pages per block and blocks per plane of the full study: the paper's capacity and map
/// (16 GiB raw, 256 x 16 in the preset) in 1 MiB blocks. The preset's 16 blocks per plane
/// leave 4.8 spare blocks per die at 15% over-provisioning, too few for the demand FTLs to
/// give each die a translation block (`ftl.translation_dies`), so their translation pages
/// would sit on one die at a time, whose reads would bound every scheme; with 64 blocks per
/// plane every die holds one (docs/fmmu.md).
pub const FULL_PAGES_PER_BLOCK: u32 = 64;
pub const FULL_BLOCKS_PER_PLANE: u32 = 64;

/// The synthetic workloads of Fig. 11: (name, workload spec without count).
pub const SYNTHETIC: [(&str, &str); 4] = [
    ("seq-write-64k", "seqwrite:bs=64k,qd=512"),
    ("seq-read-64k", "seqread:bs=64k,qd=512"),
    ("rand-write-4k", "randwrite:bs=4k,qd=512"),
    ("rand-read-4k", "randread:bs=4k,qd=512"),
];

/// Share of the logical space the scaling part's random reads address: fmmu.txt 5.4 reads "in
/// map cache case", so the reads stay inside what the CTP holds. The CTP keeps 1/16 of the
/// map at 16 ch x 8 ways (1,024 KiB of 16 MiB) and 1/32 at 32 x 8 (the same RAM, twice the
/// map); 1/64 leaves room for the set-associative placement, and its translation pages
/// (1 per 64 of the map's) are loaded once at the start: a few hundred misses against the
/// point's requests.
pub const SCALING_RANGE_FRACTION: f64 = 1.0 / 64.0;

/// The traces of Fig. 13 when none are given: the sample traces built into flashlab (the
/// repository's `traces/`, [`crate::trace::samples`]), WebSearch first as in the paper's
/// figure. The paper's MSR and WebSearch traces are not public.
pub const DEFAULT_TRACES: [&str; 2] = ["sample:wsrch", "sample:tpcc"];

/// The parts of the study (`exec-time`: the model's Fig. 10 table, no runs; `scan-sweep`:
/// CDFTL's random write on 4 cores across [`SCAN_SWEEP_NS`], first seed only).
pub const PARTS: [&str; 5] = ["exec-time", "synthetic", "traces", "scaling", "scan-sweep"];

/// Flush-scan costs per CMT block (`ftl.flush_scan_ns_per_block`) the `scan-sweep` part runs
/// CDFTL's 4-core random write at: 1 to 16 cycles of the 400 MHz Cortex-R4 (2.5 ns each),
/// around the default's four. The paper gives no figure; CDFTL's "about 88% of ideal"
/// depends on it (docs/fmmu.md).
pub const SCAN_SWEEP_NS: [u64; 5] = [3, 5, 10, 20, 40];
/// The scheme the scan sweep runs.
pub const SCAN_SWEEP_SCHEME: &str = "cdftl-4c";

/// What to run.
#[derive(Debug, Clone, Serialize)]
pub struct FmmuStudy {
    /// Pages per block (None: the preset's 256); fewer keep the fill short, limits unchanged.
    pub pages_per_block: Option<u32>,
    /// Blocks per plane (None: the preset's 16); the demand FTLs' GC headroom at 15%
    /// over-provisioning needs 128 x 16 or 32 x 32 pages per plane at least.
    pub blocks_per_plane: Option<u32>,
    /// Requests measured per synthetic point and per scaling point (after the warm-up).
    pub requests: u64,
    /// Requests of the same workload run before each synthetic and scaling point's
    /// measurement (not counted): the map cache and the queue reach their steady state.
    pub warmup_requests: u64,
    /// Sequential writes run before the measured ones: more than the spare space, so the
    /// measurement is at steady GC (the sequential fill leaves every spare block free).
    pub seq_write_warmup: u64,
    /// Random writes measured (after their warm-up; GC runs throughout).
    pub random_write_requests: u64,
    /// Random writes run before the measured ones (not counted): the free blocks the
    /// precondition's idle GC collected are used up, so the measurement is at steady GC.
    pub random_write_warmup: u64,
    /// (channels, ways) of Fig. 14.
    pub scaling: Vec<(u32, u32)>,
    /// Trace files of Fig. 13 (paths, or `sample:NAME` for a built-in sample; the full and
    /// quick studies: [`DEFAULT_TRACES`]).
    pub traces: Vec<String>,
    /// Parts to run: `exec-time`, `synthetic`, `traces`, `scaling`.
    pub parts: Vec<String>,
    /// Labels of the [`SCHEMES`] of the synthetic and traces parts (empty: all); the scaling
    /// part runs FMMU (Fig. 14).
    pub schemes: Vec<String>,
    /// Names of the [`SYNTHETIC`] workloads to run (empty: all four).
    pub synthetic: Vec<String>,
    /// Seeds: every point runs once per seed; claims are judged over them (at least 3).
    pub seeds: Vec<u64>,
}

impl FmmuStudy {
    /// The full study (its sizes: docs/fmmu.md, "Sizes and stationarity").
    pub fn full() -> FmmuStudy {
        let mut scaling = Vec::new();
        for channels in [1, 2, 4, 8, 16, 32] {
            for ways in [1, 2, 4, 8] {
                scaling.push((channels, ways));
            }
        }
        FmmuStudy {
            pages_per_block: Some(FULL_PAGES_PER_BLOCK),
            blocks_per_plane: Some(FULL_BLOCKS_PER_PLANE),
            requests: FULL_REQUESTS,
            warmup_requests: FULL_WARMUP,
            seq_write_warmup: FULL_SEQ_WRITE_WARMUP,
            random_write_requests: FULL_RANDOM_WRITES,
            random_write_warmup: FULL_RANDOM_WRITE_WARMUP,
            scaling,
            traces: DEFAULT_TRACES.iter().map(|t| t.to_string()).collect(),
            parts: PARTS.iter().map(|p| p.to_string()).collect(),
            schemes: Vec::new(),
            synthetic: Vec::new(),
            seeds: DEFAULT_SEEDS.to_vec(),
        }
    }

    /// Sizes for CI: 32 pages per block and 32 blocks per plane (a quarter of the capacity,
    /// and of the map cache), fewer requests, three scaling points, and no random writes
    /// (steady GC needs [`QUICK_RANDOM_WRITE_WARMUP`] writes of warm-up per scheme: the
    /// random-write claims say "not measured at quick size"; `--synthetic rand-write-4k`
    /// runs them at these sizes).
    pub fn quick() -> FmmuStudy {
        FmmuStudy {
            pages_per_block: Some(32),
            blocks_per_plane: Some(32),
            requests: QUICK_REQUESTS,
            warmup_requests: QUICK_WARMUP,
            seq_write_warmup: QUICK_SEQ_WRITE_WARMUP,
            random_write_requests: QUICK_RANDOM_WRITES,
            random_write_warmup: QUICK_RANDOM_WRITE_WARMUP,
            scaling: vec![(1, 1), (4, 4), (32, 8)],
            synthetic: QUICK_SYNTHETIC.iter().map(|s| s.to_string()).collect(),
            // Random writes at steady GC: not at quick size (see above).
            parts: PARTS
                .iter()
                .filter(|p| **p != "scan-sweep")
                .map(|p| p.to_string())
                .collect(),
            ..FmmuStudy::full()
        }
    }

    /// Whether this study runs at the quick device's size or smaller (its claims say what
    /// the full size would measure).
    pub fn is_quick_size(&self) -> bool {
        self.capacity_scale() < FmmuStudy::full().capacity_scale()
    }
}

/// Seeds of every study (`--seeds`).
pub const DEFAULT_SEEDS: [u64; 3] = [1, 2, 3];
/// Full study: requests measured per synthetic and scaling point, after this many of warm-up.
pub const FULL_REQUESTS: u64 = 40_000;
pub const FULL_WARMUP: u64 = 10_000;
/// Sequential 64 KiB writes of warm-up: 3.9 GB, above the 64 x 64 device's 2.4 GB of spare
/// space (quick: 1.0 GB against 0.6 GB).
pub const FULL_SEQ_WRITE_WARMUP: u64 = 60_000;
pub const QUICK_SEQ_WRITE_WARMUP: u64 = 16_000;
/// Full study: random writes measured, after this many of warm-up (the precondition's idle GC
/// leaves free blocks that take about 160,000 writes to use up on the 64 x 64 device).
pub const FULL_RANDOM_WRITES: u64 = 100_000;
pub const FULL_RANDOM_WRITE_WARMUP: u64 = 200_000;
/// Quick study sizes.
pub const QUICK_REQUESTS: u64 = 6_000;
pub const QUICK_WARMUP: u64 = 4_000;
pub const QUICK_RANDOM_WRITES: u64 = 50_000;
pub const QUICK_RANDOM_WRITE_WARMUP: u64 = 60_000;
/// The synthetic workloads of the quick study (random writes need steady GC: see
/// [`FmmuStudy::quick`]).
pub const QUICK_SYNTHETIC: [&str; 3] = ["seq-write-64k", "seq-read-64k", "rand-read-4k"];
/// Length of the time-series intervals a point's halves are summed from.
const HALVES_INTERVAL_NS: u64 = 20_000;

/// One run.
#[derive(Debug, Clone, Serialize)]
pub struct FmmuPoint {
    /// `synthetic`, `traces` or `scaling`.
    pub part: &'static str,
    pub scheme: &'static str,
    pub ftl: &'static str,
    pub cores: u32,
    /// Workload name or trace file.
    pub workload: String,
    pub channels: u32,
    pub ways: u32,
    /// The run's seed (`run.seed`).
    pub seed: u64,
    /// `ftl.flush_scan_ns_per_block` when the point sets it (the scan sweep), else the FTL's
    /// default.
    pub flush_scan_ns_per_block: Option<u64>,
    /// Requests of the same workload run before the measurement (not counted).
    pub warmup: u64,
    /// Requests measured.
    pub measured: u64,
    /// Over the whole measured window, drain included.
    pub iops: f64,
    pub bytes_per_s: f64,
    /// The throughput in the point's unit (bytes/s for the sequential workloads, IOPS
    /// otherwise) while the queue was full: the measured window without its drain (the
    /// figure judged; traces: the whole replay's).
    pub steady: f64,
    /// `steady` over the first and the second half of that window (synthetic and scaling
    /// points; None for traces, whose figure is the whole replay's time).
    pub halves: Option<(f64, f64)>,
    pub elapsed_ns: u64,
    pub write_amplification: Option<f64>,
    /// Busy shares: the busier host link direction, NAND buses, chips, FTL CPU.
    pub host_link: f64,
    pub nand_bus: f64,
    pub chips: f64,
    pub ftl_cpu: f64,
    /// Busy share of FMMU's hardware map unit (zero for the software schemes).
    pub map_unit: f64,
    /// Translation pages read per host operation (the map cache's misses that went to flash).
    pub translation_reads_per_op: f64,
    /// The closed form's limit in the point's unit (IOPS, or bytes/s for sequential), when
    /// there is one.
    pub closed_form: Option<f64>,
}

impl FmmuPoint {
    /// The result in its unit (bytes/s for the sequential workloads, IOPS otherwise), at
    /// steady state: [`FmmuPoint::steady`].
    pub fn value(&self) -> f64 {
        self.steady
    }
}

/// A synthetic source whose first `warmup` requests are a warm-up prefix: the engine
/// restarts every measurement (host statistics, flash counters, utilisation, time series)
/// at the first request after it, with the warm-up's requests still in flight, so the
/// measured window starts with the queue full and the map cache and GC as the workload left
/// them.
struct WarmedUp {
    inner: Box<dyn RequestSource>,
    warmup: u64,
    given: u64,
}

impl RequestSource for WarmedUp {
    fn next_request(&mut self, now_ns: u64) -> Result<Option<crate::host::Request>, SimError> {
        let r = self.inner.next_request(now_ns)?;
        if r.is_some() {
            self.given += 1;
        }
        Ok(r)
    }
    fn loop_mode(&self) -> LoopMode {
        self.inner.loop_mode()
    }
    fn expected_requests(&self) -> Option<u64> {
        self.inner.expected_requests()
    }
    fn in_warmup(&self) -> bool {
        self.given <= self.warmup
    }
    fn describe(&self) -> serde_json::Value {
        let mut d = self.inner.describe();
        d["warmup_requests"] = self.warmup.into();
        d
    }
}

/// The throughput (requests/s, or bytes/s when `bytes`) over the window in which the queue
/// was full, and over its first and second half: from the start of the measurement until
/// `measured - queue_depth` requests had completed (a closed loop keeps `queue_depth`
/// outstanding until its source runs out; the last `queue_depth` completions are the drain,
/// not the steady rate). None without a time series of at least two intervals in it.
fn steady_of(report: &Report, bytes: bool, queue_depth: u64) -> Option<(f64, (f64, f64))> {
    let ts = report.timeseries.as_ref()?;
    let target = report.host.all.count.saturating_sub(queue_depth).max(1);
    let mut done = 0;
    let mut n = ts.intervals.len();
    for (i, iv) in ts.intervals.iter().enumerate() {
        done += iv.requests;
        if done >= target {
            n = i + 1;
            break;
        }
    }
    if n < 2 {
        return None;
    }
    let amount = |iv: &crate::stats::IntervalReport| {
        if bytes {
            (iv.read_bytes + iv.write_bytes) as f64
        } else {
            iv.requests as f64
        }
    };
    let k = n / 2;
    let secs = |m: usize| (m as u64 * ts.interval_ns) as f64 * 1e-9;
    let first: f64 = ts.intervals[..k].iter().map(amount).sum();
    let second: f64 = ts.intervals[k..n].iter().map(amount).sum();
    Some((
        (first + second) / secs(n),
        (first / secs(k), second / secs(n - k)),
    ))
}

/// One point of the study to run: (part, scheme, workload, channels, ways, seed, flush scan
/// cost per CMT block if set).
type Case = (&'static str, Scheme, String, u32, u32, u64, Option<u64>);

impl FmmuStudy {
    /// The study's device capacity over the preset's (the map cache is scaled by it).
    pub fn capacity_scale(&self) -> f64 {
        let pages = self.pages_per_block.unwrap_or(PRESET_PAGES_PER_BLOCK);
        let blocks = self.blocks_per_plane.unwrap_or(PRESET_BLOCKS_PER_PLANE);
        f64::from(pages) * f64::from(blocks)
            / (f64::from(PRESET_PAGES_PER_BLOCK) * f64::from(PRESET_BLOCKS_PER_PLANE))
    }

    /// The schemes of the synthetic and traces parts, in [`SCHEMES`] order.
    pub fn selected_schemes(&self) -> Result<Vec<Scheme>, SimError> {
        if let Some(bad) = self
            .schemes
            .iter()
            .find(|l| !SCHEMES.iter().any(|s| s.label == l.as_str()))
        {
            return Err(SimError::Input {
                location: "schemes".into(),
                message: format!("`{bad}` is not a scheme (allowed: {})", scheme_labels()),
            });
        }
        if let Some(bad) = self
            .synthetic
            .iter()
            .find(|w| !SYNTHETIC.iter().any(|s| s.0 == w.as_str()))
        {
            let names: Vec<&str> = SYNTHETIC.iter().map(|s| s.0).collect();
            return Err(SimError::Input {
                location: "synthetic".into(),
                message: format!(
                    "`{bad}` is not a synthetic workload (allowed: {})",
                    names.join(", ")
                ),
            });
        }
        Ok(SCHEMES
            .iter()
            .filter(|s| self.schemes.is_empty() || self.schemes.iter().any(|l| l == s.label))
            .copied()
            .collect())
    }

    /// The traces of the traces part, checked before anything runs (a misspelt path must
    /// not surface after the synthetic part's minutes): each a file that exists or a built-in
    /// sample. Standard input is refused: every scheme replays each trace.
    pub fn check_traces(&self) -> Result<(), SimError> {
        if !self.parts.iter().any(|p| p == "traces") {
            return Ok(());
        }
        let refuse = |message: String| SimError::Input {
            location: "traces".into(),
            message,
        };
        for trace in &self.traces {
            match trace.as_str() {
                "" => {
                    return Err(refuse(format!(
                        "an empty trace name (give trace files or built-in samples, comma separated: {})",
                        crate::trace::samples::sample_references()
                    )))
                }
                "-" => {
                    return Err(refuse(
                        "standard input cannot be replayed once per scheme: save it to a file"
                            .into(),
                    ))
                }
                _ => {}
            }
            match crate::trace::samples::lookup(trace) {
                Some(sample) => {
                    sample?;
                }
                None => {
                    std::fs::metadata(trace).map_err(|e| SimError::Input {
                        location: trace.clone(),
                        message: format!(
                            "{e} (built-in samples: {})",
                            crate::trace::samples::sample_references()
                        ),
                    })?;
                }
            }
        }
        Ok(())
    }

    /// The points to run, seed by seed (each seed the same list).
    fn cases(&self) -> Result<Vec<Case>, SimError> {
        let wants = |part: &str| self.parts.iter().any(|p| p == part);
        let schemes = self.selected_schemes()?;
        if self.seeds.is_empty() {
            return Err(SimError::Input {
                location: "seeds".into(),
                message: "no seed given (at least one; claims need 3 for a verdict)".into(),
            });
        }
        let scaled = SCHEMES
            .iter()
            .find(|s| s.label == "fmmu")
            .expect("SCHEMES has fmmu");
        let mut cases = Vec::new();
        for &seed in &self.seeds {
            for s in &schemes {
                if wants("synthetic") {
                    for (name, _) in SYNTHETIC {
                        if self.synthetic.is_empty() || self.synthetic.iter().any(|w| w == name) {
                            cases.push(("synthetic", *s, name.into(), 16, 8, seed, None));
                        }
                    }
                }
                if wants("traces") {
                    for t in &self.traces {
                        cases.push(("traces", *s, t.clone(), 16, 8, seed, None));
                    }
                }
            }
            if wants("scaling") {
                for &(c, w) in &self.scaling {
                    let case = ("scaling", *scaled, "rand-read-4k".into(), c, w, seed, None);
                    cases.push(case);
                }
            }
        }
        if wants("scan-sweep") {
            let cdftl = SCHEMES
                .iter()
                .find(|s| s.label == SCAN_SWEEP_SCHEME)
                .expect("SCHEMES has the sweep's scheme");
            let seed = self.seeds[0];
            for ns in SCAN_SWEEP_NS {
                let w = "rand-write-4k".into();
                cases.push(("scan-sweep", *cdftl, w, 16, 8, seed, Some(ns)));
            }
        }
        Ok(cases)
    }

    /// Runs every part for every seed, calling `progress(done, total, what)`. The points run
    /// on as many threads as the machine has cores (each a separate simulation; the result
    /// does not depend on the threads), in seed-major order.
    pub fn run(
        &self,
        progress: &mut dyn FnMut(usize, usize, &str),
    ) -> Result<Vec<FmmuPoint>, SimError> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        self.check_traces()?;
        let cases = self.cases()?;
        let total = cases.len();
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(total)
            .max(1);
        let next = AtomicUsize::new(0);
        let mut results: Vec<Option<Result<FmmuPoint, SimError>>> =
            (0..total).map(|_| None).collect();
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::channel();
            for _ in 0..threads {
                let tx = tx.clone();
                let (next, cases) = (&next, &cases);
                scope.spawn(move || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(part, ref scheme, ref workload, c, w, seed, scan)) = cases.get(i)
                    else {
                        break;
                    };
                    let r = self.run_point(part, scheme, workload, (c, w), seed, scan);
                    let failed = r.is_err();
                    if tx.send((i, r)).is_err() || failed {
                        // A failed point stops this worker; the others finish theirs.
                        next.store(usize::MAX / 2, Ordering::Relaxed);
                        break;
                    }
                });
            }
            drop(tx);
            let mut done = 0;
            progress(0, total, "starting");
            for (i, r) in rx {
                done += 1;
                let (part, scheme, workload, c, w, seed, _) = &cases[i];
                progress(
                    done,
                    total,
                    &format!("{part} {} {workload} {c}x{w} seed {seed}", scheme.label),
                );
                results[i] = Some(r);
            }
        });
        let mut points = Vec::with_capacity(total);
        for r in results {
            match r {
                Some(r) => points.push(r?),
                None => continue,
            }
        }
        if points.len() < total {
            return Err(SimError::Input {
                location: "fmmu study".into(),
                message: format!("{} of {total} points ran", points.len()),
            });
        }
        progress(total, total, "done");
        Ok(points)
    }

    fn config(
        &self,
        part: &str,
        scheme: &Scheme,
        workload: &str,
        (channels, ways): (u32, u32),
        seed: u64,
        scan: Option<u64>,
    ) -> Result<ExperimentConfig, SimError> {
        let mut sets = vec![
            format!("ftl.name=\"{}\"", scheme.ftl),
            format!("cpu.cores={}", scheme.cores),
            format!("run.seed={seed}"),
            format!("geometry.channels={channels}"),
            format!("geometry.chips_per_channel={ways}"),
            "run.precondition=1.0".into(),
        ];
        if workload != "rand-write-4k" {
            sets.push("run.precondition_max_passes=0".into());
        }
        if let Some(p) = self.pages_per_block {
            sets.push(format!("geometry.pages_per_block={p}"));
        }
        if let Some(b) = self.blocks_per_plane {
            sets.push(format!("geometry.blocks_per_plane={b}"));
        }
        if part == "scaling" {
            sets.push(format!("host.link_mb_per_s={}", closed::PCIE3_X32_MB_PER_S));
        }
        if part == "traces" {
            sets.push(format!("trace.path={workload:?}"));
            sets.push("trace.replay=\"closed\"".into());
            sets.push("trace.queue_depth=512".into());
        } else {
            sets.push(format!("run.timeseries_interval_ns={HALVES_INTERVAL_NS}"));
        }
        sets.extend(scheme.cache_sets(self.capacity_scale()));
        sets.extend(scheme.sets.iter().map(|s| s.to_string()));
        if let Some(ns) = scan {
            sets.push(format!("ftl.flush_scan_ns_per_block={ns}"));
        }
        let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
        let mut config = ExperimentConfig::with_sets("fmmu-16ch", &sets)?;
        if part != "traces" {
            let spec = SYNTHETIC
                .iter()
                .find(|s| s.0 == workload)
                .map_or("", |s| s.1);
            let mut w = parse_spec(spec)?;
            let (warmup, measured) = self.sizes(workload);
            w.count = warmup + measured;
            if part == "scaling" {
                w.range_fraction = SCALING_RANGE_FRACTION;
            }
            config.workload = w;
        }
        config.validate()?;
        Ok(config)
    }

    /// (warm-up, measured) requests of a synthetic or scaling point of `workload`.
    pub fn sizes(&self, workload: &str) -> (u64, u64) {
        if workload == "rand-write-4k" {
            (self.random_write_warmup, self.random_write_requests)
        } else if workload == "seq-write-64k" {
            (self.seq_write_warmup, self.requests)
        } else {
            (self.warmup_requests, self.requests)
        }
    }

    /// Runs `config` after its precondition, the first `warmup` requests not counted.
    fn measure(config: &ExperimentConfig, warmup: u64) -> Result<Report, SimError> {
        let mut sim = Simulation::new(config)?;
        if config.run.precondition > 0.0 {
            sim.precondition()?;
        }
        let mut source = crate::workload_source(config, &sim)?;
        if warmup > 0 {
            source = Box::new(WarmedUp {
                inner: source,
                warmup,
                given: 0,
            });
        }
        let source = sim.run(source, &mut |_| {})?;
        let describe = source.describe();
        crate::check_measured(&sim, &describe)?;
        Ok(crate::stats::build_report(&sim, describe))
    }

    fn run_point(
        &self,
        part: &'static str,
        scheme: &Scheme,
        workload: &str,
        (channels, ways): (u32, u32),
        seed: u64,
        scan: Option<u64>,
    ) -> Result<FmmuPoint, SimError> {
        let config = self.config(part, scheme, workload, (channels, ways), seed, scan)?;
        let warmup = if part == "traces" {
            0
        } else {
            self.sizes(workload).0
        };
        let r = Self::measure(&config, warmup)?;
        let ops = r.host.all.count.max(1) as f64;
        let translation_reads_per_op = r.flash.reads.mapping as f64 / ops;
        let translation_bytes = r.ftl_details["entries_per_translation_page"]
            .as_f64()
            .map_or(0.0, |entries| entries * TRANSLATION_ENTRY_BYTES);
        let closed_form = (scheme.label == "ideal" || part == "scaling")
            .then(|| {
                ideal_limit(
                    &Device::of(&config),
                    workload,
                    translation_reads_per_op,
                    translation_bytes,
                )
            })
            .flatten()
            .map(|l| l.value());
        let sequential = workload.starts_with("seq");
        let steady = if part == "traces" {
            None
        } else {
            steady_of(&r, sequential, u64::from(config.workload.queue_depth))
        };
        let whole = if sequential {
            r.host.all.mb_per_s * 1e6
        } else {
            r.host.all.iops
        };
        Ok(FmmuPoint {
            part,
            scheme: scheme.label,
            ftl: scheme.ftl,
            cores: scheme.cores,
            workload: workload.into(),
            channels,
            ways,
            seed,
            flush_scan_ns_per_block: scan,
            warmup,
            measured: r.host.all.count,
            iops: r.host.all.iops,
            bytes_per_s: r.host.all.mb_per_s * 1e6,
            steady: steady.map_or(whole, |s| s.0),
            halves: steady.map(|s| s.1),
            elapsed_ns: r.elapsed_ns,
            write_amplification: r.write_amplification,
            host_link: r.utilisation.host_link_down.max(r.utilisation.host_link_up),
            nand_bus: r.utilisation.channels.mean,
            chips: r.utilisation.dies.mean,
            ftl_cpu: r.utilisation.cpu,
            map_unit: r.utilisation.map_unit.unwrap_or(0.0),
            translation_reads_per_op,
            closed_form,
        })
    }
}

/// The closed form of a synthetic workload at zero FTL time, random reads counting the run's
/// translation reads per host read of `translation_bytes` each (random write: none, its
/// write amplification is the run's; see docs/fmmu.md).
fn ideal_limit(
    dev: &Device,
    workload: &str,
    translation_reads: f64,
    translation_bytes: f64,
) -> Option<Limit> {
    match workload {
        "seq-write-64k" => Some(closed::seq_write(dev, 1.0)),
        "seq-read-64k" => Some(closed::seq_read(dev)),
        "rand-read-4k" => Some(closed::rand_read(
            dev,
            4096.0,
            translation_reads,
            translation_bytes,
        )),
        _ => None,
    }
}

/// Pages per block and blocks per plane of `fmmu-16ch` (the map-cache sizes scale with the
/// study's).
const PRESET_PAGES_PER_BLOCK: u32 = 256;
const PRESET_BLOCKS_PER_PLANE: u32 = 16;
/// Bytes of one entry of a translation page in flash.
const TRANSLATION_ENTRY_BYTES: f64 = 4.0;

/// CSV rows, one per point.
pub fn csv(points: &[FmmuPoint]) -> String {
    let mut out = String::from(
        "part,scheme,ftl,cores,workload,channels,ways,seed,warmup,measured,iops,bytes_per_s,\
         steady,first_half,second_half,elapsed_ns,write_amplification,host_link,nand_bus,chips,ftl_cpu,map_unit,translation_reads_per_op,\
         closed_form,flush_scan_ns_per_block\n",
    );
    for p in points {
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{:.1},{:.1},{:.1},{},{},{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{},{}\n",
            p.part,
            p.scheme,
            p.ftl,
            p.cores,
            p.workload,
            p.channels,
            p.ways,
            p.seed,
            p.warmup,
            p.measured,
            p.iops,
            p.bytes_per_s,
            p.steady,
            p.halves.map_or(String::new(), |h| format!("{:.1}", h.0)),
            p.halves.map_or(String::new(), |h| format!("{:.1}", h.1)),
            p.elapsed_ns,
            p.write_amplification
                .map_or(String::new(), |w| format!("{w:.4}")),
            p.host_link,
            p.nand_bus,
            p.chips,
            p.ftl_cpu,
            p.map_unit,
            p.translation_reads_per_op,
            p.closed_form.map_or(String::new(), |c| format!("{c:.1}")),
            p.flush_scan_ns_per_block
                .map_or(String::new(), |ns| ns.to_string()),
        ));
    }
    out
}

/// The table: throughput, share of the ideal's, closed form and utilisations per point
/// (`ftl`: the cores; `map`: FMMU's map unit); traces as elapsed time over the ideal's.
pub fn table(points: &[FmmuPoint]) -> String {
    let mut out = format!(
        "{:<9} {:<9} {:>5} {:>4} {:<22} {:>5} {:>12} {:>7} {:>12} {:>7} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}\n",
        "part",
        "scheme",
        "cores",
        "seed",
        "workload",
        "geom",
        "result",
        "ideal",
        "closed form",
        "of it",
        "tr/op",
        "link",
        "bus",
        "chips",
        "ftl",
        "map"
    );
    for p in points {
        let sequential = p.workload.starts_with("seq");
        // The scan sweep's points are compared with the synthetic part's ideal.
        let ideal_part = if p.part == "scan-sweep" {
            "synthetic"
        } else {
            p.part
        };
        let ideal = points.iter().find(|q| {
            q.part == ideal_part
                && q.scheme == "ideal"
                && q.workload == p.workload
                && q.seed == p.seed
                && (q.channels, q.ways) == (p.channels, p.ways)
        });
        let value = |q: &FmmuPoint| q.value();
        let show = |v: f64| {
            if sequential {
                format!("{:.2} GB/s", v / 1e9)
            } else if p.part == "traces" {
                let base = ideal.map_or(f64::NAN, |q| q.elapsed_ns as f64);
                format!("{:.3}x ideal", p.elapsed_ns as f64 / base)
            } else {
                format!("{:.0} KIOPS", v / 1e3)
            }
        };
        let of_ideal = match ideal {
            Some(q) if p.part != "traces" => format!("{:.1}%", 100.0 * value(p) / value(q)),
            _ => "-".into(),
        };
        let (closed, share) = p.closed_form.map_or(("-".into(), "-".into()), |c| {
            (show(c), format!("{:.1}%", 100.0 * value(p) / c))
        });
        out.push_str(&format!(
            "{:<9} {:<9} {:>5} {:>4} {:<22} {:>5} {:>12} {:>7} {:>12} {:>7} {:>6.3} {:>5.1}% {:>5.1}% {:>5.1}% {:>5.1}% {:>5.1}%\n",
            p.part,
            p.scheme,
            p.cores,
            p.seed,
            match p.flush_scan_ns_per_block {
                Some(ns) => format!("{} scan {ns} ns", p.workload),
                None => p.workload.rsplit('/').next().unwrap_or("").to_string(),
            },
            format!("{}x{}", p.channels, p.ways),
            show(value(p)),
            of_ideal,
            closed,
            share,
            p.translation_reads_per_op,
            100.0 * p.host_link,
            100.0 * p.nand_bus,
            100.0 * p.chips,
            100.0 * p.ftl_cpu,
            100.0 * p.map_unit,
        ));
    }
    out
}

/// fmmu.txt Fig. 10 as the model charges it: per-handler times of each scheme on 1, 2 and 4
/// cores (FMMU on its map unit), and a flush of the paper's CMT.
pub fn exec_time_table() -> String {
    use crate::ftl::demand::exec_time::{
        ExecTime, Scheme as Fig10, DEFAULT_FLUSH_SCAN_NS_PER_BLOCK,
    };
    let mut out = format!(
        "{:<6} {:>5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>12}\n",
        "scheme", "cores", "CMT hit", "CTP hit", "miss", "GC update", "cmd", "flush"
    );
    // 64-byte CMT blocks: DFTL 1,088 KiB of them, CDFTL and FMMU 64 KiB.
    let cmt_blocks = |scheme| match scheme {
        Fig10::Dftl => 1088 * 1024 / 64,
        _ => 64 * 1024 / 64,
    };
    let rows = [
        ("dftl", Fig10::Dftl, 1),
        ("dftl", Fig10::Dftl, 2),
        ("dftl", Fig10::Dftl, 4),
        ("cdftl", Fig10::Cdftl, 1),
        ("cdftl", Fig10::Cdftl, 2),
        ("cdftl", Fig10::Cdftl, 4),
        ("fmmu", Fig10::Fmmu, 1),
    ];
    for (name, scheme, cores) in rows {
        let t = ExecTime::fig10(scheme, cores, DEFAULT_FLUSH_SCAN_NS_PER_BLOCK);
        let ctp = if scheme == Fig10::Dftl {
            "-".to_string()
        } else {
            t.second_level_hit_ns.to_string()
        };
        out.push_str(&format!(
            "{:<6} {:>5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>12}\n",
            name,
            cores,
            t.lookup_hit_ns,
            ctp,
            t.lookup_miss_ns,
            t.update_ns,
            t.command_ns,
            t.flush_ns(cmt_blocks(scheme)),
        ));
    }
    out.push_str(&format!(
        "(ns per handler on one core; an N-core FTL serves N handlers at once, so per request the \
         whole FTL takes 1/N of these; one Lookup or Update per host request and CMT block it \
         touches; command per 4 KiB sub-request; flush: the scheme's time plus {} ns per CMT \
         block scanned (`ftl.flush_scan_ns_per_block`); fmmu: on its hardware map unit, flush \
         capped at 10 us)\n",
        DEFAULT_FLUSH_SCAN_NS_PER_BLOCK
    ));
    out
}
