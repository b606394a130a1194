//! The queue-depth study of multithreaded-ftl-ucos.txt (Figs. 3 and 4): average and worst
//! response time of `st-ftl` and `mt-ftl` at queue depths 1, 2, 4, ..., 256 on the `mt-board`
//! preset, then the same on SSDs with the parallelism of `cosmos` and `fmmu-16ch` with 4, 8
//! and 16 FTL tasks (what the paper's conclusion could only expect).
//!
//! Every point is an independent run: the device is preconditioned to steady state (fill and
//! random overwrites, functional), then the workload runs at the queue depth, paced by the
//! study's [`StudyMode`]: closed loop (qd requests outstanding), or bounded-open (requests
//! arrive at the workload's times, the device holds at most qd, the rest wait host-side and
//! their wait counts in the response time). The
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

/// The default pacing (see `docs/mt-ftl.md` for why).
pub const DEFAULT_MODE: StudyMode = StudyMode::BoundedOpen;

/// The default mean arrival rate of bounded-open mode, requests/s.
pub const DEFAULT_RATE_IOPS: f64 = 100.0;

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
    pub seed: u64,
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
            seed: 1,
            sets: Vec::new(),
        }
    }
}

/// One run of the study.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
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
        let board_sets: Vec<String> = self
            .board_blocks_per_plane
            .map(|b| vec![format!("geometry.blocks_per_plane={b}")])
            .unwrap_or_default();
        for &qd in &self.queue_depths {
            for (ftl, tasks) in [("st-ftl", 1), ("mt-ftl", self.board_tasks)] {
                cases.push(Case {
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

    /// Runs the study; `progress(done, total, what)` is called before each run.
    pub fn run(&self, progress: &mut dyn FnMut(usize, usize, &str)) -> Result<Study, SimError> {
        let cases = self.cases();
        let mut points = Vec::with_capacity(cases.len());
        for (i, case) in cases.iter().enumerate() {
            let what = format!(
                "{} {} tasks={} qd={}",
                case.device, case.ftl, case.tasks, case.queue_depth
            );
            progress(i, cases.len(), &what);
            points.push(self.run_case(case)?);
        }
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
        let seed = format!("run.seed={}", self.seed);
        let fill = if case.part == "ssd" {
            self.ssd_precondition
        } else {
            1.0
        };
        let precondition = format!("run.precondition={fill}");
        let mut sets: Vec<&str> = vec![&name, &tasks, &seed, &precondition];
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
        Ok(Point {
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
        })
    }
}

/// mt-ftl against st-ftl on the same device and queue depth.
fn gains(points: &[Point]) -> Vec<Gain> {
    let mut out = Vec::new();
    for mt in points.iter().filter(|p| p.ftl == "mt-ftl") {
        let st = points.iter().find(|p| {
            p.ftl == "st-ftl" && p.device == mt.device && p.queue_depth == mt.queue_depth
        });
        if let Some(st) = st {
            out.push(Gain {
                part: mt.part,
                device: mt.device.clone(),
                tasks: mt.tasks,
                queue_depth: mt.queue_depth,
                mean_gain: 1.0 - mt.mean_ns / st.mean_ns,
                worst_change: mt.max_ns as f64 / st.max_ns.max(1) as f64 - 1.0,
                speedup: st.mean_ns / mt.mean_ns,
            });
        }
    }
    out
}

impl Study {
    /// Rows of the CSV file (one per run).
    pub fn csv(&self) -> String {
        let mut out = String::from(
            "mode,part,device,ftl,tasks,queue_depth,requests,mean_ms,p99_ms,max_ms,host_wait_mean_ms,\
             iops,write_amplification,cpu_utilisation,polling_share,metadata_wait_ms,mapping_wait_ms,\
             nand_wait_ms\n",
        );
        let ms = |ns: f64| ns / 1e6;
        for p in &self.points {
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{:.6},{:.6},{:.6},{:.6},{:.3},{},{:.4},{:.4},{:.3},{:.3},{:.3}\n",
                self.options.mode.name(),
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
            ));
        }
        out
    }

    /// The gain of mt-ftl at `queue_depth` on `device` with `tasks` tasks.
    pub fn gain(&self, device: &str, tasks: u32, queue_depth: u32) -> Option<&Gain> {
        self.gains
            .iter()
            .find(|g| g.device == device && g.tasks == tasks && g.queue_depth == queue_depth)
    }
}
