//! The queue-depth study of multithreaded-ftl-ucos.txt (Figs. 3 and 4): average and worst
//! response time of `st-ftl` and `mt-ftl` at queue depths 1, 2, 4, ..., 256 on the `mt-board`
//! preset, then the same on SSDs with the parallelism of `cosmos` and `fmmu-16ch` with 4, 8
//! and 16 FTL tasks (what the paper's conclusion could only expect).
//!
//! Every point is an independent run: the device is preconditioned to steady state (fill and
//! random overwrites, functional), then the workload runs at the queue depth, paced by the
//! study's [`StudyMode`]: closed loop (qd requests outstanding; the default), or bounded-open
//! (requests arrive at the workload's times, the device holds at most qd, the rest wait
//! host-side and their wait counts in the response time). Every response time is reported
//! with the number of requests of the run that produced it (`Point::requests`, the table's
//! first line, the claims' size): a level measured on a backlog depends on it. The
//! SSDs keep their preset's channels, ways, dies, planes, page size and timing; their blocks per
//! plane are capped at `ssd_blocks_per_plane` so preconditioning stays short (recorded in the
//! study's JSON options).

use serde::Serialize;

use crate::config::{ConfigError, ExperimentConfig};
use crate::experiment::claims::PaperClaim;
use crate::workload::{parse_spec, Pacing};
use crate::SimError;

pub mod claims;

/// The default workload: the `desktop` model of the paper's Windows 7 trace (installing
/// programs, browsing, editing; 1.32x more bytes written than read, Table 2), laid out over
/// the device's logical space (the compacted trace).
pub const DEFAULT_WORKLOAD: &str = "desktop";

/// The default pacing: a closed loop at queue depth d (the x axis of the paper's Figs. 3 and 4
/// is "the depth of the queue"; see `docs/mt-ftl.md`, "Pacing").
pub const DEFAULT_MODE: StudyMode = StudyMode::Closed;

/// The default mean arrival rate of bounded-open mode, requests/s: assumed (the paper gives
/// none), about 40% of what the 4 GB board serves at depth 1 (st-ftl, 20-28 requests/s),
/// so the board keeps up on average and only the workload's bursts queue host-side. The
/// former 100 requests/s overloaded it (every response time then grew with the run).
pub const DEFAULT_RATE_IOPS: f64 = 10.0;

/// Schema of the study's JSON document.
pub const STUDY_SCHEMA: &str = "flashlab.experiment.mt-ftl/1";

/// How each point paces its requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StudyMode {
    /// The queue depth is the number of requests kept outstanding (a new one arrives when
    /// one completes); the response time is the time in the device.
    Closed,
    /// Requests arrive at the workload's arrival times (`rate_iops`, its arrival process);
    /// the queue depth bounds how many the device holds, the rest wait host-side, and the
    /// response time counts from arrival (a host feeding a timestamped trace to the board).
    BoundedOpen,
}

impl StudyMode {
    /// The name used on the command line and in the outputs.
    pub fn name(self) -> &'static str {
        match self {
            StudyMode::Closed => "closed",
            StudyMode::BoundedOpen => "bounded-open",
        }
    }

    /// What the queue depth means, for tables and plots.
    pub fn describe(self, rate_iops: f64) -> String {
        match self {
            StudyMode::Closed => "closed loop: qd requests outstanding".into(),
            StudyMode::BoundedOpen => format!(
                "bounded-open: arrivals at {rate_iops} requests/s, at most qd in the device, response time from arrival"
            ),
        }
    }
}

impl std::str::FromStr for StudyMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "closed" => Ok(StudyMode::Closed),
            "bounded-open" => Ok(StudyMode::BoundedOpen),
            other => Err(format!("`{other}`: expected closed or bounded-open")),
        }
    }
}

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudyOptions {
    /// Workload in the `--workload` syntax; its queue depth is replaced by each point's, its
    /// pacing by `mode` (and its rate by `rate_iops` in bounded-open mode).
    pub workload: String,
    pub mode: StudyMode,
    /// Mean arrival rate in bounded-open mode (requests/s), with the workload's arrival
    /// process (the desktop workload's: bursty).
    pub rate_iops: f64,
    pub queue_depths: Vec<u32>,
    /// Requests measured per point.
    pub requests: u64,
    /// Blocks per plane of the board (None: the preset's 4096, 4 GB).
    pub board_blocks_per_plane: Option<u32>,
    /// FTL tasks of mt-ftl on the board (the paper: 4).
    pub board_tasks: u32,
    /// Parallel SSDs (presets) of the second part; empty skips it.
    pub ssd_presets: Vec<String>,
    pub ssd_blocks_per_plane: u32,
    pub ssd_tasks: Vec<u32>,
    /// Fraction of the SSDs' logical space preconditioned (the board: all of it). At full
    /// steady state GC, which runs under the metadata semaphore, dominates and serializes both
    /// FTLs alike; half full, the host requests the tasks parallelize dominate.
    pub ssd_precondition: f64,
    /// Seeds: every point is run once per seed, and the claims are judged over them (at
    /// least [`crate::experiment::claims::MIN_RUNS`] for a verdict).
    pub seeds: Vec<u64>,
    /// Extra `KEY=VALUE` settings for every run.
    pub sets: Vec<String>,
}

impl Default for StudyOptions {
    fn default() -> Self {
        StudyOptions {
            workload: DEFAULT_WORKLOAD.into(),
            mode: DEFAULT_MODE,
            rate_iops: DEFAULT_RATE_IOPS,
            queue_depths: (0..=8).map(|i| 1 << i).collect(),
            requests: 20_000,
            board_blocks_per_plane: None,
            board_tasks: 4,
            ssd_presets: vec!["cosmos".into(), "fmmu-16ch".into()],
            ssd_blocks_per_plane: 128,
            ssd_tasks: vec![4, 8, 16],
            ssd_precondition: 0.5,
            seeds: vec![1, 2, 3],
            sets: Vec::new(),
        }
    }
}

/// One run of the study.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    pub seed: u64,
    /// `board` or `ssd`.
    pub part: &'static str,
    pub device: String,
    pub ftl: String,
    pub tasks: u32,
    pub queue_depth: u32,
    pub requests: u64,
    /// Response time (from arrival), mean, p99 and worst.
    pub mean_ns: f64,
    pub p99_ns: u64,
    pub max_ns: u64,
    /// Mean time spent waiting host-side before the device took the request (part of the
    /// response time; 0 in closed mode).
    pub host_wait_mean_ns: f64,
    pub iops: f64,
    /// None when the run wrote too little for the ratio to mean anything (see the report).
    pub write_amplification: Option<f64>,
    /// RTOS CPU busy share (steps and context switches), and share spent polling.
    pub cpu_utilisation: f64,
    pub polling_share: f64,
    /// Total semaphore waits per semaphore kind (`metadata`, `mapping`, `nand`), in ns.
    pub sem_wait_ns: SemWaits,
    /// The response time over the first and the second half of the run's requests (in
    /// completion order): a figure is stationary when its halves agree.
    pub halves: [Half; 2],
}

/// The response time over one half of a run's requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Half {
    pub requests: u64,
    pub mean_ns: f64,
    pub max_ns: u64,
}

/// Interval of the time series a point's halves are cut from (coarsened by the run when it
/// would need more than [`crate::stats::MAX_INTERVALS`]).
const HALVES_INTERVAL_NS: u64 = 1_000_000;

/// The first and the second half of a run's requests, in completion order, from its time
/// series (an interval goes to the half its first request belongs to).
pub fn halves(series: &crate::stats::TimeSeriesReport) -> [Half; 2] {
    let total: u64 = series.intervals.iter().map(|i| i.requests).sum();
    let mut sums = [0.0f64; 2];
    let mut out = [Half::default(); 2];
    let mut seen = 0u64;
    for i in series.intervals.iter().filter(|i| i.requests > 0) {
        let h = usize::from(2 * seen >= total);
        seen += i.requests;
        sums[h] += i.mean_latency_ns * i.requests as f64;
        out[h].requests += i.requests;
        out[h].max_ns = out[h].max_ns.max(i.max_latency_ns);
    }
    for (half, sum) in out.iter_mut().zip(sums) {
        half.mean_ns = if half.requests > 0 {
            sum / half.requests as f64
        } else {
            0.0
        };
    }
    out
}

/// Semaphore waits summed by kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SemWaits {
    pub metadata: u64,
    pub mapping: u64,
    pub nand: u64,
}

/// mt-ftl against st-ftl at one queue depth.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gain {
    pub seed: u64,
    pub part: &'static str,
    pub device: String,
    pub tasks: u32,
    pub queue_depth: u32,
    /// 1 - mean(mt) / mean(st): positive when mt-ftl is faster.
    pub mean_gain: f64,
    /// max(mt) / max(st) - 1: positive when mt-ftl's worst case is worse.
    pub worst_change: f64,
    /// mean(st) / mean(mt).
    pub speedup: f64,
    /// `mean_gain` and `worst_change` over the first and the second half of the requests.
    pub mean_gain_halves: [f64; 2],
    pub worst_change_halves: [f64; 2],
}

/// The whole study.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Study {
    pub schema: &'static str,
    pub options: StudyOptions,
    pub points: Vec<Point>,
    pub gains: Vec<Gain>,
    /// The paper's claims about Figs. 3-4 and its conclusion against these results.
    pub claims: Vec<PaperClaim>,
}

/// One run to do.
#[derive(Debug, Clone)]
struct Case {
    seed: u64,
    part: &'static str,
    device: String,
    ftl: &'static str,
    tasks: u32,
    queue_depth: u32,
    sets: Vec<String>,
}

impl StudyOptions {
    fn cases(&self) -> Vec<Case> {
        let mut cases = Vec::new();
        for &seed in &self.seeds {
            cases.extend(self.seed_cases(seed));
        }
        cases
    }

    fn seed_cases(&self, seed: u64) -> Vec<Case> {
        let mut cases = Vec::new();
        let board_sets: Vec<String> = self
            .board_blocks_per_plane
            .map(|b| vec![format!("geometry.blocks_per_plane={b}")])
            .unwrap_or_default();
        for &qd in &self.queue_depths {
            for (ftl, tasks) in [("st-ftl", 1), ("mt-ftl", self.board_tasks)] {
                cases.push(Case {
                    seed,
                    part: "board",
                    device: "mt-board".into(),
                    ftl,
                    tasks,
                    queue_depth: qd,
                    sets: board_sets.clone(),
                });
            }
        }
        for preset in &self.ssd_presets {
            let preset_blocks = crate::config::preset(preset)
                .map_or(self.ssd_blocks_per_plane, |p| {
                    p.device.geometry.blocks_per_plane
                });
            let blocks = self.ssd_blocks_per_plane.min(preset_blocks);
            let sets = vec![format!("geometry.blocks_per_plane={blocks}")];
            for &qd in &self.queue_depths {
                let st = std::iter::once(("st-ftl", 1));
                let mt = self.ssd_tasks.iter().map(|&t| ("mt-ftl", t));
                for (ftl, tasks) in st.chain(mt) {
                    cases.push(Case {
                        seed,
                        part: "ssd",
                        device: preset.clone(),
                        ftl,
                        tasks,
                        queue_depth: qd,
                        sets: sets.clone(),
                    });
                }
            }
        }
        cases
    }

    /// Runs the study; `progress(done, total, what)` is called as runs finish. The runs are
    /// independent and go on as many threads as the machine has cores.
    pub fn run(&self, progress: &mut dyn FnMut(usize, usize, &str)) -> Result<Study, SimError> {
        if self.seeds.is_empty() {
            return Err(ConfigError::invalid(
                "--seeds",
                "(none)",
                "every point runs once per seed",
                "one seed or more, e.g. 1,2,3",
            )
            .into());
        }
        let cases = self.cases();
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(cases.len())
            .max(1);
        let mut done: Vec<Option<Point>> = vec![None; cases.len()];
        progress(0, cases.len(), "starting");
        let next = std::sync::atomic::AtomicUsize::new(0);
        let failed = std::sync::atomic::AtomicBool::new(false);
        let (send, receive) = std::sync::mpsc::channel();
        let result = std::thread::scope(|scope| {
            for _ in 0..threads {
                let send = send.clone();
                let (next, failed, cases) = (&next, &failed, &cases);
                scope.spawn(move || loop {
                    use std::sync::atomic::Ordering::Relaxed;
                    let i = next.fetch_add(1, Relaxed);
                    if i >= cases.len() || failed.load(Relaxed) {
                        break;
                    }
                    let point = self.run_case(&cases[i]);
                    if point.is_err() {
                        failed.store(true, Relaxed);
                    }
                    if send.send((i, point)).is_err() {
                        break;
                    }
                });
            }
            drop(send);
            let mut finished = 0;
            for (i, point) in receive {
                let case = &cases[i];
                done[i] = Some(point?);
                finished += 1;
                let what = format!(
                    "seed {} {} {} tasks={} qd={}",
                    case.seed, case.device, case.ftl, case.tasks, case.queue_depth
                );
                progress(finished, cases.len(), &what);
            }
            Ok::<(), SimError>(())
        });
        result?;
        let points: Vec<Point> = done.into_iter().flatten().collect();
        progress(cases.len(), cases.len(), "done");
        let gains = gains(&points);
        let mut study = Study {
            schema: STUDY_SCHEMA,
            options: self.clone(),
            points,
            gains,
            claims: Vec::new(),
        };
        study.claims = claims::claims(&study);
        Ok(study)
    }

    fn config(&self, case: &Case) -> Result<ExperimentConfig, SimError> {
        let name = format!("ftl.name=\"{}\"", case.ftl);
        let tasks = format!("ftl.tasks={}", case.tasks);
        let seed = format!("run.seed={}", case.seed);
        let series = format!("run.timeseries_interval_ns={HALVES_INTERVAL_NS}");
        let fill = if case.part == "ssd" {
            self.ssd_precondition
        } else {
            1.0
        };
        let precondition = format!("run.precondition={fill}");
        let mut sets: Vec<&str> = vec![&name, &tasks, &seed, &precondition, &series];
        sets.extend(case.sets.iter().map(String::as_str));
        sets.extend(self.sets.iter().map(String::as_str));
        let mut config = ExperimentConfig::with_sets(&case.device, &sets)?;
        let mut workload = parse_spec(&self.workload)?;
        workload.queue_depth = case.queue_depth;
        match self.mode {
            StudyMode::Closed => {
                workload.rate_iops = 0.0;
                workload.pacing = Pacing::Closed;
            }
            StudyMode::BoundedOpen => {
                if !(self.rate_iops > 0.0 && self.rate_iops.is_finite()) {
                    return Err(ConfigError::invalid(
                        "--rate",
                        self.rate_iops,
                        "bounded-open mode needs arrivals",
                        "a rate above 0 requests/s",
                    )
                    .into());
                }
                workload.rate_iops = self.rate_iops;
                workload.pacing = Pacing::BoundedOpen;
            }
        }
        workload.count = self.requests;
        workload.duration_ns = 0;
        config.workload = workload;
        config.validate()?;
        Ok(config)
    }

    fn run_case(&self, case: &Case) -> Result<Point, SimError> {
        let config = self.config(case)?;
        let report = crate::run_experiment(&config, &mut |_| {})?;
        let all = &report.host.all;
        let rtos = &report.ftl_details["rtos"];
        let mut waits = SemWaits::default();
        for s in rtos["semaphores"].as_array().into_iter().flatten() {
            let ns = s["wait_ns"].as_u64().unwrap_or(0);
            match s["name"].as_str().unwrap_or("") {
                "metadata" => waits.metadata += ns,
                "mapping" => waits.mapping += ns,
                n if n.starts_with("nand") => waits.nand += ns,
                _ => {}
            }
        }
        let halves = report.timeseries.as_ref().map(halves).unwrap_or_default();
        Ok(Point {
            seed: case.seed,
            part: case.part,
            device: case.device.clone(),
            ftl: case.ftl.into(),
            tasks: case.tasks,
            queue_depth: case.queue_depth,
            requests: all.count,
            mean_ns: all.latency_ns.mean,
            p99_ns: all.latency_ns.p99,
            max_ns: all.latency_ns.max,
            host_wait_mean_ns: report.host.host_wait_ns.mean,
            iops: all.iops,
            write_amplification: report.write_amplification,
            cpu_utilisation: rtos["cpu_utilisation"].as_f64().unwrap_or(0.0),
            polling_share: rtos["polling_share"].as_f64().unwrap_or(0.0),
            sem_wait_ns: waits,
            halves,
        })
    }
}

/// mt-ftl against st-ftl on the same seed, device and queue depth.
fn gains(points: &[Point]) -> Vec<Gain> {
    let mut out = Vec::new();
    for mt in points.iter().filter(|p| p.ftl == "mt-ftl") {
        let st = points.iter().find(|p| {
            p.ftl == "st-ftl"
                && p.seed == mt.seed
                && p.device == mt.device
                && p.queue_depth == mt.queue_depth
        });
        if let Some(st) = st {
            let gain = |mt: f64, st: f64| 1.0 - mt / st;
            let worst = |mt: u64, st: u64| mt as f64 / st.max(1) as f64 - 1.0;
            let half = |h: usize| (mt.halves[h], st.halves[h]);
            out.push(Gain {
                seed: mt.seed,
                part: mt.part,
                device: mt.device.clone(),
                tasks: mt.tasks,
                queue_depth: mt.queue_depth,
                mean_gain: gain(mt.mean_ns, st.mean_ns),
                worst_change: worst(mt.max_ns, st.max_ns),
                speedup: st.mean_ns / mt.mean_ns,
                mean_gain_halves: [0, 1].map(|h| gain(half(h).0.mean_ns, half(h).1.mean_ns)),
                worst_change_halves: [0, 1].map(|h| worst(half(h).0.max_ns, half(h).1.max_ns)),
            });
        }
    }
    out
}

impl Study {
    /// Rows of the CSV file (one per run).
    pub fn csv(&self) -> String {
        let mut out = String::from(
            "mode,seed,part,device,ftl,tasks,queue_depth,requests,mean_ms,p99_ms,max_ms,host_wait_mean_ms,\
             iops,write_amplification,cpu_utilisation,polling_share,metadata_wait_ms,mapping_wait_ms,\
             nand_wait_ms,first_half_mean_ms,second_half_mean_ms,first_half_max_ms,\
             second_half_max_ms\n",
        );
        let ms = |ns: f64| ns / 1e6;
        for p in &self.points {
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{},{:.6},{:.6},{:.6},{:.6},{:.3},{},{:.4},{:.4},{:.3},{:.3},{:.3},\
                 {:.6},{:.6},{:.6},{:.6}\n",
                self.options.mode.name(),
                p.seed,
                p.part,
                p.device,
                p.ftl,
                p.tasks,
                p.queue_depth,
                p.requests,
                ms(p.mean_ns),
                ms(p.p99_ns as f64),
                ms(p.max_ns as f64),
                ms(p.host_wait_mean_ns),
                p.iops,
                p.write_amplification
                    .map_or(String::new(), |wa| format!("{wa:.4}")),
                p.cpu_utilisation,
                p.polling_share,
                ms(p.sem_wait_ns.metadata as f64),
                ms(p.sem_wait_ns.mapping as f64),
                ms(p.sem_wait_ns.nand as f64),
                ms(p.halves[0].mean_ns),
                ms(p.halves[1].mean_ns),
                ms(p.halves[0].max_ns as f64),
                ms(p.halves[1].max_ns as f64),
            ));
        }
        out
    }

    /// The first seed's (the plots' and the docs' figures).
    pub fn first_seed(&self) -> u64 {
        self.options.seeds.first().copied().unwrap_or(0)
    }

    /// The gain of mt-ftl at `queue_depth` on `device` with `tasks` tasks, on the first seed.
    pub fn gain(&self, device: &str, tasks: u32, queue_depth: u32) -> Option<&Gain> {
        self.gain_on(self.first_seed(), device, tasks, queue_depth)
    }

    /// The gain of mt-ftl at `queue_depth` on `device` with `tasks` tasks, on `seed`.
    pub fn gain_on(&self, seed: u64, device: &str, tasks: u32, queue_depth: u32) -> Option<&Gain> {
        self.gains.iter().find(|g| {
            g.seed == seed && g.device == device && g.tasks == tasks && g.queue_depth == queue_depth
        })
    }
}
