//! part-ftl.txt sections VI.B-C on the `cosmos` preset: Table III's task set (4 tasks writing
//! 12 pages every 60 ms, 4 reading 3 pages every 15 ms, random pages, deadlines at the end of
//! the period) under `part-ftl` and `wao-gc`, with EDF die queues, after preconditioning (the
//! logical space written full, then random overwrites to steady state), so that both FTLs
//! collect during the measured window. Per FTL: deadline misses (total and per task), request
//! response times (Figs. 10b-13b), single-page latencies in the FTL (Figs. 10c-13c), bandwidth
//! over time (Figs. 10a, 12a) and the comparison of Figs. 14-15. Fig. 16 is WAO-GC's write
//! bandwidth over time from a fresh device: two streams of 24-page writes as fast as possible
//! (closed loop at queue depth 2), before and after its GC starts. The admission line is
//! [`crate::realtime`]'s tests of Table III (eqs. 6-7 and section VI.A's WAO-GC test).
//!
//! The default device has 64 blocks per plane (2 GiB raw) so a run takes seconds; `None`
//! keeps the preset's 4096 (128 GiB). Write latencies mean different things: PaRT-FTL
//! acknowledges a write once it is in its DRAM buffer, WAO-GC once its pages are programmed
//! (it has no buffer); the comparison says so.
//!
//! A third Table III run, [`WAO_GC_DEVICE`], is WAO-GC with `ftl.gc_step_scope = "device"`:
//! a partial step holds every later host command on any die until it completes, as one
//! firmware request loop running the steps would (the blocking of part-ftl.txt VI.A's model).
//! The paper's board misses read deadlines under WAO-GC; the per-die model does not, this one
//! does (docs/part-cosmos.md). A fourth, [`RTGC`], is `rtgc` (docs/rtgc.md), beside RTGC's
//! admission line.
//!
//! The "board" runs ([`board`]) add the board's firmware time per host page (calibrated on
//! Fig. 16's 27 MB/s), FIFO for WAO-GC's request buffer and EDF for PaRT-FTL's, and sweep the
//! readers' release phase against the writers'.

mod board;
mod claims;

pub use board::{
    table_i_firmware, Board, PhaseRow, TableIFirmware, BOARD_CPU_PAGE_NS, BOARD_SUFFIX,
    DERIVED_SUFFIX, FRESH_SUFFIX, TABLE_I_FIRMWARE_BOUND_NS,
};
pub use claims::{claims, CLEARLY_LOWER, LEVEL_TOLERANCE, SOME_SHARE};

use serde::Serialize;

use crate::config::ExperimentConfig;
use crate::realtime::{part, rtgc, waogc, FlashParams, TaskSpec, NS_PER_MS};
use crate::stats::{LatencyReport, LatencySummary, Report};
use crate::workload::parse_spec;
use crate::SimError;

use super::claims::PaperClaim;

/// Table III as a `periodic` workload (without its duration).
pub const TABLE_III: &str = "periodic:tasks=4xw12p@60ms+4xr3p@15ms";
/// Table III's readers without the writers: the read latency that queueing among the reads
/// alone gives (what the writers add is the difference).
pub const TABLE_III_READERS: &str = "periodic:tasks=4xr3p@15ms";
/// The FTLs compared.
pub const FTLS: [&str; 2] = ["part-ftl", "wao-gc"];
/// The label of the Table III run of WAO-GC whose partial steps hold the whole device.
pub const WAO_GC_DEVICE: &str = "wao-gc/device";
/// The Table III run of RTGC (a collector per writer, EDF with the tasks; docs/rtgc.md), after
/// the others.
pub const RTGC: &str = "rtgc";
/// The setting of that run.
const DEVICE_SCOPE: &str = "ftl.gc_step_scope=\"device\"";
/// Blocks per plane of the full run ([`PartCosmosStudy::full`]).
pub const FULL_BLOCKS_PER_PLANE: u32 = 512;
/// Fig. 16's request: 24 pages of 8 KiB.
pub const FIG16_REQUEST_PAGES: u64 = 24;

/// What to run.
#[derive(Debug, Clone, Serialize)]
pub struct PartCosmosStudy {
    /// `geometry.blocks_per_plane`; `None` keeps the preset's (the full 128 GiB DIMM).
    pub blocks_per_plane: Option<u32>,
    /// Table III's release window.
    pub duration_ns: u64,
    /// Bandwidth-over-time interval of the Table III runs.
    pub interval_ns: u64,
    /// `timing.die_queue_policy` of every run.
    pub die_queue_policy: String,
    /// Fig. 16's run length from a fresh device.
    pub fig16_duration_ns: u64,
    /// Fig. 16's bandwidth interval (the paper plots per second).
    pub fig16_interval_ns: u64,
    /// `run.seed` of every run: the study runs once per seed and judges each claim on every
    /// seed (default 1, 2, 3).
    pub seeds: Vec<u64>,
    /// Extra `--set` assignments for every run.
    pub sets: Vec<String>,
    /// Firmware time per host page of the board runs (`ftl.cpu_page_ns`); 0: no board runs.
    pub board_cpu_page_ns: u64,
    /// Release of the board runs' readers after the writers (the headline board runs).
    pub board_reader_offset_ns: u64,
    /// The readers' release offsets of the board's phase sweep.
    pub board_reader_phases_ns: Vec<u64>,
    /// Fig. 16's run length on the board (27 MB/s reaches GC's start later than 121 MB/s).
    pub board_fig16_duration_ns: u64,
}

impl Default for PartCosmosStudy {
    fn default() -> Self {
        PartCosmosStudy {
            blocks_per_plane: Some(64),
            duration_ns: 10_000_000_000,
            interval_ns: 500_000_000,
            die_queue_policy: "edf".into(),
            fig16_duration_ns: 40_000_000_000,
            fig16_interval_ns: 1_000_000_000,
            seeds: vec![1, 2, 3],
            sets: Vec::new(),
            board_cpu_page_ns: BOARD_CPU_PAGE_NS,
            board_reader_offset_ns: board::READER_OFFSET_NS,
            board_reader_phases_ns: board::READER_PHASES_MS
                .iter()
                .map(|ms| ms * 1_000_000)
                .collect(),
            board_fig16_duration_ns: 150_000_000_000,
        }
    }
}

/// Count, mean, p99 and max of one latency distribution, with the tail for the plots.
#[derive(Debug, Clone, Serialize)]
pub struct Latency {
    pub count: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p99_9_ns: u64,
    pub max_ns: u64,
}

impl Latency {
    fn of(count: u64, s: &LatencySummary) -> Self {
        Latency {
            count,
            mean_ns: s.mean,
            p50_ns: s.p50,
            p90_ns: s.p90,
            p99_ns: s.p99,
            p99_9_ns: s.p99_9,
            max_ns: s.max,
        }
    }

    fn of_report(r: &LatencyReport) -> Self {
        Self::of(r.count, &r.latency_ns)
    }

    /// (percentile label, latency) from the median to the maximum.
    pub fn tail(&self) -> [(&'static str, u64); 5] {
        [
            ("p50", self.p50_ns),
            ("p90", self.p90_ns),
            ("p99", self.p99_ns),
            ("p99.9", self.p99_9_ns),
            ("max", self.max_ns),
        ]
    }
}

/// One periodic task's requests.
#[derive(Debug, Clone, Serialize)]
pub struct TaskRow {
    pub task: u32,
    pub op: &'static str,
    pub misses: u64,
    pub worst_lateness_ns: u64,
    pub latency: Latency,
}

/// One interval of the bandwidth over time.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct BandwidthPoint {
    pub start_ns: u64,
    pub read_mb_per_s: f64,
    pub write_mb_per_s: f64,
    pub deadline_misses: u64,
}

/// Table III under one FTL.
#[derive(Debug, Clone, Serialize)]
pub struct FtlRun {
    pub ftl: String,
    pub logical_bytes: u64,
    pub elapsed_ns: u64,
    pub deadline_requests: u64,
    pub deadline_misses: u64,
    pub read_deadline_misses: u64,
    pub write_deadline_misses: u64,
    pub worst_lateness_ns: u64,
    pub tasks: Vec<TaskRow>,
    /// Response time of a whole request (Figs. 10b-13b).
    pub read: Latency,
    pub write: Latency,
    /// Latency of one page in the FTL (Figs. 10c-13c).
    pub page_read: Latency,
    pub page_write: Latency,
    pub read_mb_per_s: f64,
    pub write_mb_per_s: f64,
    pub bandwidth: Vec<BandwidthPoint>,
    pub gc_victims: u64,
    pub gc_pages_moved: u64,
    pub erases: u64,
    pub write_amplification: Option<f64>,
    /// The FTL's own counters (`ftl_details.counters`).
    pub ftl_counters: serde_json::Value,
}

/// For FTLs that acknowledge writes from a buffer (their counters have `write_to_flash_ns_*`):
/// how long an acknowledged page waited for its program to complete, the figure to set beside
/// an unbuffered FTL's write latency.
fn until_on_flash_lines(r: &SeedResults) -> String {
    let mut out = String::new();
    for x in &r.runs {
        let c = &x.ftl_counters;
        let (Some(total), Some(max), Some(pages)) = (
            c["write_to_flash_ns_total"].as_u64(),
            c["write_to_flash_ns_max"].as_u64(),
            c["host_pages_programmed"].as_u64().filter(|&p| p > 0),
        ) else {
            continue;
        };
        out += &format!(
            "{}: acknowledged pages reached flash after {:.3} ms on average, {:.3} ms at most \
             (write_to_flash_ns)\n",
            x.ftl,
            total as f64 / pages as f64 / 1e6,
            max as f64 / 1e6
        );
    }
    out
}

/// Fig. 16: WAO-GC's write bandwidth from a fresh device.
#[derive(Debug, Clone, Serialize)]
pub struct Fig16 {
    pub interval_ns: u64,
    /// Write MB/s per full interval.
    pub write_mb_per_s: Vec<f64>,
    /// Bytes written when the first die runs out of free blocks but its reserved one: every
    /// die has filled all its blocks but one (WAO-GC's lazy trigger, docs/wao-gc.md).
    pub gc_trigger_bytes: u64,
    /// The interval in which the cumulative bytes written reach `gc_trigger_bytes`.
    pub gc_start_interval: Option<usize>,
    pub before_mb_per_s: f64,
    /// The mean over the first and the second half of the intervals before GC (stationarity).
    pub before_halves_mb_per_s: (f64, f64),
    /// Mean of the last half of the intervals after GC started.
    pub after_mb_per_s: f64,
    /// The mean over the first and the second half of that last half (stationarity).
    pub after_halves_mb_per_s: (f64, f64),
    pub min_after_mb_per_s: f64,
    pub gc_victims: u64,
    pub write_amplification: Option<f64>,
}

/// Table III against an admission test of [`crate::realtime`].
#[derive(Debug, Clone, Serialize)]
pub struct AdmissionLine {
    pub scheme: &'static str,
    pub parameters: &'static str,
    /// Eq. 6 (read set) and eq. 7 (write set) utilisations; `None` for WAO-GC.
    pub read_utilisation: Option<f64>,
    pub write_utilisation: Option<f64>,
    pub passes: bool,
    pub detail: String,
}

/// What one seed measured.
#[derive(Debug, Clone, Serialize)]
pub struct SeedResults {
    pub seed: u64,
    pub runs: Vec<FtlRun>,
    /// The same FTLs and state with Table III's readers alone.
    pub readers_alone: Vec<FtlRun>,
    pub fig16: Fig16,
    /// The board set-up's phase sweep and Fig. 16 (its headline runs are in `runs`).
    pub board: Option<Board>,
}

/// Everything the study measured: per seed, then the analysis and the claims.
#[derive(Debug, Clone, Serialize)]
pub struct PartCosmosResults {
    pub study: PartCosmosStudy,
    /// Per seed of the study, in its order.
    pub seeds: Vec<SeedResults>,
    pub admission: Vec<AdmissionLine>,
    /// Eq. 8 with Table IV: t_r + t_c^d.
    pub eq8_read_bound_ns: f64,
    /// t_r of the simulated device for eq. 6 (a rebuild's worst case).
    pub model_read_ns: f64,
    pub claims: Vec<PaperClaim>,
}

impl PartCosmosResults {
    /// The first seed's results (the plots' and the tests' detail).
    pub fn first(&self) -> &SeedResults {
        &self.seeds[0]
    }
}

impl PartCosmosStudy {
    /// The full run (`flashlab reproduce --full`): 512 blocks per plane (16 GiB raw), eight
    /// times the default device, Fig. 16 over 320 s (GC from about 140 s, the level after it
    /// settled over the last 90 s) and on the board over 1,200 s (GC from about 625 s). The
    /// 128 GiB DIMM (4096 blocks, Fig. 16 over 2,500 s and 8,000 s on the board) takes about
    /// 5 CPU minutes a seed, over an hour of wall time for three seeds on a shared machine.
    /// The Table III figures depend on the device size only through GC, which the
    /// preconditioning brings to steady state at any size, and Fig. 16's levels only on when GC
    /// starts; the halves of every rate judged show whether it is stationary at this size.
    pub fn full() -> Self {
        PartCosmosStudy {
            blocks_per_plane: Some(FULL_BLOCKS_PER_PLANE),
            fig16_duration_ns: 320_000_000_000,
            board_fig16_duration_ns: 1_200_000_000_000,
            ..Self::default()
        }
    }

    /// The seed the configurations are built with (the first of `seeds`).
    fn seed(&self) -> u64 {
        self.seeds.first().copied().unwrap_or(1)
    }

    /// This study with `seed` alone.
    fn with_seed(&self, seed: u64) -> Self {
        PartCosmosStudy {
            seeds: vec![seed],
            ..self.clone()
        }
    }

    /// Runs every seed (the FTLs, Fig. 16 and the board set-up), then judges the claims on
    /// every seed; `progress(done, total, what)`.
    pub fn run(
        &self,
        progress: &mut dyn FnMut(usize, usize, &str),
    ) -> Result<PartCosmosResults, SimError> {
        let per_seed = 2 * FTLS.len() + 4;
        let total = per_seed * self.seeds.len();
        let mut seeds = Vec::new();
        for (k, &seed) in self.seeds.iter().enumerate() {
            let mut step = |i: usize, what: &str| {
                progress(k * per_seed + i, total, &format!("seed {seed}: {what}"));
            };
            seeds.push(self.with_seed(seed).run_seed(&mut step)?);
        }
        progress(total, total, "done");
        let eq8_read_bound_ns = part::read_latency_bound_ns(&FlashParams::part_ftl());
        let model_read_ns = self.model_rebuild_read_ns()?;
        let mut results = PartCosmosResults {
            study: self.clone(),
            seeds,
            admission: admission_lines(model_read_ns),
            eq8_read_bound_ns,
            model_read_ns,
            claims: Vec::new(),
        };
        results.claims = claims(&results);
        Ok(results)
    }

    /// One seed (`self.seeds[0]`): Table III under each FTL, its readers alone, the device-wide
    /// and RTGC runs, Fig. 16 and the board set-up.
    fn run_seed(&self, step: &mut dyn FnMut(usize, &str)) -> Result<SeedResults, SimError> {
        let mut runs = Vec::new();
        let mut readers_alone = Vec::new();
        for (i, ftl) in FTLS.iter().enumerate() {
            step(2 * i, &format!("Table III, {ftl}"));
            runs.push(self.run_periodic(ftl, TABLE_III)?);
            step(2 * i + 1, &format!("Table III's readers, {ftl}"));
            readers_alone.push(self.run_periodic(ftl, TABLE_III_READERS)?);
        }
        let n = 2 * FTLS.len();
        step(n, "Table III, wao-gc with device-wide steps");
        let device = self.table_iii_device_scope_config()?;
        runs.push(ftl_run(
            WAO_GC_DEVICE,
            &crate::run_experiment(&device, &mut |_| {})?,
        ));
        step(n + 1, "Table III, rtgc");
        runs.push(self.run_periodic(RTGC, TABLE_III)?);
        step(n + 2, "Fig. 16, wao-gc");
        let fig16 = self.run_fig16()?;
        step(n + 3, "the board set-up");
        let board = self.run_board(&mut runs)?;
        Ok(SeedResults {
            seed: self.seed(),
            runs,
            readers_alone,
            fig16,
            board,
        })
    }

    fn config(
        &self,
        ftl: &str,
        extra: &[String],
        workload: &str,
    ) -> Result<ExperimentConfig, SimError> {
        let mut sets = vec![
            format!("ftl.name=\"{ftl}\""),
            format!("run.seed={}", self.seed()),
            format!("timing.die_queue_policy=\"{}\"", self.die_queue_policy),
        ];
        if let Some(b) = self.blocks_per_plane {
            sets.push(format!("geometry.blocks_per_plane={b}"));
        }
        sets.extend(extra.iter().cloned());
        sets.extend(self.sets.iter().cloned());
        let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
        let mut config = ExperimentConfig::with_sets("cosmos", &refs)?;
        config.workload = parse_spec(workload)?;
        config.validate()?;
        Ok(config)
    }

    /// t_r of the simulated device for eq. 6: a rebuild's worst case, the cell read and one
    /// page transfer per way of the channel (the other ways' pages and one program's data
    /// sharing the bus: tests/part_ftl.rs's bound).
    pub fn model_rebuild_read_ns(&self) -> Result<f64, SimError> {
        let c = self.table_iii_config("part-ftl")?;
        let ways = f64::from(c.geometry.chips_per_channel * c.geometry.dies_per_chip);
        let transfer_ns = f64::from(c.geometry.page_bytes) * 1e3 / c.timing.bus_mb_per_s;
        Ok(c.timing.read_latency_ns as f64 + ways * transfer_ns)
    }

    /// Table III's configuration under `ftl` (preconditioned, with the time series).
    pub fn table_iii_config(&self, ftl: &str) -> Result<ExperimentConfig, SimError> {
        self.periodic_config(ftl, TABLE_III)
    }

    /// Table III under WAO-GC with `gc_step_scope = "device"` (the [`WAO_GC_DEVICE`] run).
    pub fn table_iii_device_scope_config(&self) -> Result<ExperimentConfig, SimError> {
        self.periodic_config_with("wao-gc", TABLE_III, Some(DEVICE_SCOPE))
    }

    /// `tasks` (a `periodic` workload without duration) under `ftl`, preconditioned.
    fn periodic_config(&self, ftl: &str, tasks: &str) -> Result<ExperimentConfig, SimError> {
        self.periodic_config_with(ftl, tasks, None)
    }

    /// [`Self::periodic_config`] with one more FTL setting.
    fn periodic_config_with(
        &self,
        ftl: &str,
        tasks: &str,
        setting: Option<&str>,
    ) -> Result<ExperimentConfig, SimError> {
        let mut extra = vec![
            "run.precondition=1.0".to_string(),
            format!("run.timeseries_interval_ns={}", self.interval_ns),
        ];
        extra.extend(setting.map(String::from));
        let workload = format!("{tasks},duration={}ns", self.duration_ns);
        self.config(ftl, &extra, &workload)
    }

    /// Fig. 16's configuration: a fresh device, two closed-loop streams of 24-page writes.
    pub fn fig16_config(&self) -> Result<ExperimentConfig, SimError> {
        self.fig16_config_with(self.fig16_duration_ns, None)
    }

    /// [`Self::fig16_config`] for `duration_ns`, with one more setting.
    fn fig16_config_with(
        &self,
        duration_ns: u64,
        setting: Option<&str>,
    ) -> Result<ExperimentConfig, SimError> {
        let mut extra = vec![
            "run.precondition=0".to_string(),
            format!("run.timeseries_interval_ns={}", self.fig16_interval_ns),
        ];
        extra.extend(setting.map(String::from));
        let page = self
            .config("wao-gc", &extra, "randwrite")?
            .geometry
            .page_bytes;
        let workload = format!(
            "randwrite:bs={},align={page},qd=2,duration={}ns",
            FIG16_REQUEST_PAGES * u64::from(page),
            duration_ns
        );
        self.config("wao-gc", &extra, &workload)
    }

    fn run_periodic(&self, ftl: &str, tasks: &str) -> Result<FtlRun, SimError> {
        let report = crate::run_experiment(&self.periodic_config(ftl, tasks)?, &mut |_| {})?;
        Ok(ftl_run(ftl, &report))
    }

    fn run_fig16(&self) -> Result<Fig16, SimError> {
        self.run_fig16_of(&self.fig16_config()?, self.fig16_duration_ns)
    }

    fn run_fig16_of(&self, config: &ExperimentConfig, duration_ns: u64) -> Result<Fig16, SimError> {
        let report = crate::run_experiment(config, &mut |_| {})?;
        let g = &config.geometry;
        let dies = u64::from(g.channels * g.chips_per_channel * g.dies_per_chip);
        let blocks_per_die = u64::from(g.planes_per_die * g.blocks_per_plane);
        let block_bytes = u64::from(g.pages_per_block) * u64::from(g.page_bytes);
        let trigger = dies * (blocks_per_die - 1) * block_bytes;
        Ok(fig16(&report, self.fig16_interval_ns, duration_ns, trigger))
    }
}

fn ftl_run(ftl: &str, r: &Report) -> FtlRun {
    let tasks: Vec<TaskRow> = r
        .tasks
        .iter()
        .map(|t| {
            let (op, lat) = if t.write.count > 0 {
                ("write", &t.write)
            } else {
                ("read", &t.read)
            };
            let d = r
                .deadlines
                .as_ref()
                .and_then(|d| d.tasks.iter().find(|x| x.task == t.task));
            TaskRow {
                task: t.task,
                op,
                misses: d.map_or(0, |d| d.misses),
                worst_lateness_ns: d.map_or(0, |d| d.worst_lateness_ns),
                latency: Latency::of_report(lat),
            }
        })
        .collect();
    let misses_of =
        |op: &str| -> u64 { tasks.iter().filter(|t| t.op == op).map(|t| t.misses).sum() };
    let bandwidth = r.timeseries.as_ref().map_or(Vec::new(), |ts| {
        ts.intervals
            .iter()
            .map(|i| BandwidthPoint {
                start_ns: i.start_ns,
                read_mb_per_s: i.read_mb_per_s,
                write_mb_per_s: i.write_mb_per_s,
                deadline_misses: i.deadline_misses,
            })
            .collect()
    });
    FtlRun {
        ftl: ftl.into(),
        logical_bytes: r.device.logical_bytes,
        elapsed_ns: r.elapsed_ns,
        deadline_requests: r.deadlines.as_ref().map_or(0, |d| d.requests),
        deadline_misses: r.deadlines.as_ref().map_or(0, |d| d.misses),
        read_deadline_misses: misses_of("read"),
        write_deadline_misses: misses_of("write"),
        worst_lateness_ns: r.deadlines.as_ref().map_or(0, |d| d.worst_lateness_ns),
        tasks,
        read: Latency::of(r.host.read.count, &r.host.read.latency_ns),
        write: Latency::of(r.host.write.count, &r.host.write.latency_ns),
        page_read: Latency::of_report(&r.host.sub_requests.read),
        page_write: Latency::of_report(&r.host.sub_requests.write),
        read_mb_per_s: r.host.read.mb_per_s,
        write_mb_per_s: r.host.write.mb_per_s,
        bandwidth,
        gc_victims: r.gc.gc_runs,
        gc_pages_moved: r.gc.gc_units_moved,
        erases: r.flash.erases.total,
        write_amplification: r.write_amplification,
        ftl_counters: r.ftl_details["counters"].clone(),
    }
}

fn fig16(r: &Report, interval_ns: u64, duration_ns: u64, trigger: u64) -> Fig16 {
    let intervals = r.timeseries.as_ref().map_or(&[][..], |t| &t.intervals[..]);
    // Only intervals the run covered whole (the last one is cut by the duration).
    let full: Vec<_> = intervals
        .iter()
        .filter(|i| i.start_ns + interval_ns <= duration_ns)
        .collect();
    let mut written = 0;
    let mut gc_start = None;
    for (k, i) in full.iter().enumerate() {
        written += i.write_bytes;
        if written >= trigger && gc_start.is_none() {
            gc_start = Some(k);
        }
    }
    let mbps: Vec<f64> = full.iter().map(|i| i.write_mb_per_s).collect();
    let mean = |v: &[f64]| {
        if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    let (before, after) = match gc_start {
        Some(k) => (&mbps[..k], &mbps[k + 1..]),
        None => (&mbps[..], &[][..]),
    };
    let settled = &after[after.len() / 2..];
    let halves = |v: &[f64]| {
        let (a, b) = v.split_at(v.len() / 2);
        (mean(a), mean(b))
    };
    Fig16 {
        interval_ns,
        write_mb_per_s: mbps.clone(),
        gc_trigger_bytes: trigger,
        gc_start_interval: gc_start,
        before_mb_per_s: mean(before),
        before_halves_mb_per_s: halves(before),
        after_mb_per_s: mean(settled),
        after_halves_mb_per_s: halves(settled),
        min_after_mb_per_s: after.iter().copied().reduce(f64::min).unwrap_or(0.0),
        gc_victims: r.gc.gc_runs,
        write_amplification: r.write_amplification,
    }
}

/// Table III's eight tasks in the analysis' task model.
pub fn table_iii_tasks() -> Vec<TaskSpec> {
    let ms = |v: f64| v * NS_PER_MS;
    let writer = TaskSpec::writer(12, ms(60.0)).expect("a valid writer");
    let reader = TaskSpec::reader(3, ms(15.0)).expect("a valid reader");
    [writer; 4].into_iter().chain([reader; 4]).collect()
}

/// Table III against PaRT-FTL's eqs. 6-7 (as stated, as evaluated, and with the simulated
/// device's rebuild time `model_read_ns` as t_r), WAO-GC's test and RTGC's.
pub fn admission_lines(model_read_ns: f64) -> Vec<AdmissionLine> {
    let tasks = table_iii_tasks();
    let mut lines = Vec::new();
    let model = FlashParams {
        read_ns: model_read_ns,
        ..FlashParams::part_ftl_as_evaluated()
    };
    for (parameters, dev) in [
        ("Table IV, lambda 0.643 (V.A)", FlashParams::part_ftl()),
        (
            "Table IV, lambda 0.518 (reproduces eq. 9)",
            FlashParams::part_ftl_as_evaluated(),
        ),
        ("lambda 0.518, t_r of the simulated cosmos", model),
    ] {
        let read = part::read_test(&tasks, &dev);
        let write = part::write_test(&tasks, &dev);
        lines.push(AdmissionLine {
            scheme: "PaRT-FTL",
            parameters,
            read_utilisation: Some(read.total()),
            write_utilisation: Some(write.total()),
            passes: read.passes() && write.passes(),
            detail: format!("{read}; {write}"),
        });
    }
    let verdict = waogc::worst_case_test(&tasks, &FlashParams::waogc());
    lines.push(AdmissionLine {
        scheme: "WAO-GC",
        parameters: "Table IV, lambda 0.482, c = 2 (VI.A worst case)",
        read_utilisation: None,
        write_utilisation: None,
        passes: verdict.is_ok(),
        detail: match verdict {
            Ok(()) => "every request within its period".into(),
            Err(m) => format!(
                "{} of task {} responds in {:.2} ms > {:.2} ms ({} partial steps)",
                m.request,
                m.task,
                m.response_ns / NS_PER_MS,
                m.deadline_ns / NS_PER_MS,
                m.steps
            ),
        },
    });
    let test = rtgc::admission_test(&tasks, &FlashParams::rtgc());
    lines.push(AdmissionLine {
        scheme: "RTGC",
        parameters: "WAO-GC's column, lambda 0.482, a block per chip per collector job",
        read_utilisation: None,
        write_utilisation: None,
        passes: test.passes(),
        detail: test.to_string(),
    });
    lines
}

fn fmt_ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

/// What would make the figures absurd: latencies longer than the run, no GC in the measured
/// window, write amplification out of range, bandwidth above the tasks' demand. Empty when
/// the results are plausible.
pub fn absurdities(r: &PartCosmosResults) -> Vec<String> {
    r.seeds
        .iter()
        .flat_map(|s| {
            seed_absurdities(s)
                .into_iter()
                .map(move |p| format!("seed {}: {p}", s.seed))
        })
        .collect()
}

fn seed_absurdities(r: &SeedResults) -> Vec<String> {
    let mut out = Vec::new();
    for run in &r.runs {
        let f = &run.ftl;
        for (what, l) in [
            ("read", &run.read),
            ("write", &run.write),
            ("page read", &run.page_read),
            ("page write", &run.page_write),
        ] {
            if l.max_ns > run.elapsed_ns {
                out.push(format!("{f}: {what} max {} ns beyond the run", l.max_ns));
            }
            if l.count == 0 {
                out.push(format!("{f}: no {what} measured"));
            }
        }
        // The fresh-device board runs are there to have no GC; GC there would be absurd.
        let fresh = f.ends_with(board::FRESH_SUFFIX);
        if fresh && (run.gc_victims > 0 || run.erases > 0) {
            out.push(format!("{f}: GC on a fresh device"));
        }
        if !fresh && (run.gc_victims == 0 || run.erases == 0) {
            out.push(format!("{f}: no GC in the measured window"));
        }
        match run.write_amplification {
            Some(wa) if (1.0..=20.0).contains(&wa) => {}
            wa => out.push(format!("{f}: write amplification {wa:?}")),
        }
    }
    if r.fig16.gc_victims == 0 {
        out.push("Fig. 16: no GC".into());
    }
    if r.board.as_ref().is_some_and(|b| b.fig16.gc_victims == 0) {
        out.push("Fig. 16 on the board: no GC".into());
    }
    out
}

/// The text table: comparison, per task, admission, Fig. 16, claims.
pub fn table(r: &PartCosmosResults) -> String {
    let mut out = String::new();
    let dev = r
        .study
        .blocks_per_plane
        .map_or("full 128 GiB".to_string(), |b| format!("{b} blocks/plane"));
    out += &format!(
        "Table III ({TABLE_III}) on cosmos ({dev}), {} s, die queues {}, preconditioned\n",
        r.study.duration_ns as f64 / 1e9,
        r.study.die_queue_policy
    );
    for s in &r.seeds {
        out += &format!("\n=== seed {} ===\n", s.seed);
        out += &seed_table(s);
    }
    out += "\nadmission of Table III (crate::realtime)\n";
    for a in &r.admission {
        out += &format!(
            "{:<9} {:<45} {:<6} {}\n",
            a.scheme,
            a.parameters,
            if a.passes { "passes" } else { "fails" },
            a.detail
        );
    }
    out += "\nclaims (judged on every seed; the board's on every seed and reader phase)\n";
    out += &super::claims::claims_text(&r.claims);
    out
}

/// One seed's tables: comparison, per task, readers alone, Fig. 16, the board.
fn seed_table(r: &SeedResults) -> String {
    let mut out = String::new();
    out += &format!(
        "{:<13} {:>9} {:>6} {:>6} | {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9} | {:>9} {:>9} | {:>9} {:>9} | {:>6} {:>5} {:>5}\n",
        "ftl", "misses", "read", "write", "rd mean", "rd p99", "rd max", "wr mean", "wr p99", "wr max",
        "pg rd p99", "pg rd max", "pg wr p99", "pg wr max", "victim", "erase", "WA"
    );
    for x in &r.runs {
        out += &format!(
            "{:<13} {:>9} {:>6} {:>6} | {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9} | {:>9} {:>9} | {:>9} {:>9} | {:>6} {:>5} {:>5.2}\n",
            x.ftl,
            format!("{}/{}", x.deadline_misses, x.deadline_requests),
            x.read_deadline_misses,
            x.write_deadline_misses,
            format!("{:.3}", x.read.mean_ns / 1e6),
            fmt_ms(x.read.p99_ns),
            fmt_ms(x.read.max_ns),
            format!("{:.3}", x.write.mean_ns / 1e6),
            fmt_ms(x.write.p99_ns),
            fmt_ms(x.write.max_ns),
            fmt_ms(x.page_read.p99_ns),
            fmt_ms(x.page_read.max_ns),
            fmt_ms(x.page_write.p99_ns),
            fmt_ms(x.page_write.max_ns),
            x.gc_victims,
            x.erases,
            x.write_amplification.unwrap_or(0.0)
        );
    }
    out += "latencies in ms: rd/wr = request response time (Figs. 10b-13b), pg = one page in the \
            FTL (Figs. 10c-13c); PaRT-FTL acknowledges writes from its DRAM buffer, WAO-GC after \
            the program\n";
    out += &until_on_flash_lines(r);
    out += "\nper task\n";
    out += &format!(
        "{:<13} {:>4} {:<5} {:>7} {:>9} {:>9} {:>9} {:>7}\n",
        "ftl", "task", "op", "jobs", "mean", "p99", "max", "misses"
    );
    for x in &r.runs {
        for t in &x.tasks {
            out += &format!(
                "{:<13} {:>4} {:<5} {:>7} {:>9} {:>9} {:>9} {:>7}\n",
                x.ftl,
                t.task,
                t.op,
                t.latency.count,
                format!("{:.3}", t.latency.mean_ns / 1e6),
                fmt_ms(t.latency.p99_ns),
                fmt_ms(t.latency.max_ns),
                t.misses
            );
        }
    }
    out += "\nreads with and without the writers (what the writers add to the reads)\n";
    out += &format!(
        "{:<9} {:>13} {:>13} {:>13} {:>13}\n",
        "ftl", "rd p99 alone", "rd max alone", "rd p99 mixed", "rd max mixed"
    );
    for (alone, mixed) in r.readers_alone.iter().zip(&r.runs) {
        out += &format!(
            "{:<9} {:>13} {:>13} {:>13} {:>13}\n",
            alone.ftl,
            fmt_ms(alone.read.p99_ns),
            fmt_ms(alone.read.max_ns),
            fmt_ms(mixed.read.p99_ns),
            fmt_ms(mixed.read.max_ns)
        );
    }
    let f = &r.fig16;
    out += &format!(
        "\nFig. 16 (wao-gc, fresh device, 2 streams of {FIG16_REQUEST_PAGES}-page writes): {:.1} MB/s \
         before GC, GC starts in interval {} ({} bytes written), {:.1} MB/s after (last half), \
         lowest {:.1}; {} victims\n",
        f.before_mb_per_s,
        f.gc_start_interval.map_or("-".into(), |k| k.to_string()),
        f.gc_trigger_bytes,
        f.after_mb_per_s,
        f.min_after_mb_per_s,
        f.gc_victims
    );
    out += &board::table(r);
    out
}

/// CSV: one row per FTL and task, then the overall rows (task `all`).
pub fn csv(results: &PartCosmosResults) -> String {
    let mut out = String::from(
        "seed,ftl,task,op,requests,misses,mean_ns,p50_ns,p90_ns,p99_ns,p99_9_ns,max_ns\n",
    );
    for r in &results.seeds {
        let seed = r.seed;
        let row = |ftl: &str, task: &str, op: &str, misses: u64, l: &Latency| {
            format!(
                "{seed},{ftl},{task},{op},{},{misses},{:.0},{},{},{},{},{}\n",
                l.count, l.mean_ns, l.p50_ns, l.p90_ns, l.p99_ns, l.p99_9_ns, l.max_ns
            )
        };
        for x in &r.runs {
            for t in &x.tasks {
                out += &row(&x.ftl, &t.task.to_string(), t.op, t.misses, &t.latency);
            }
            out += &row(&x.ftl, "all", "read", x.read_deadline_misses, &x.read);
            out += &row(&x.ftl, "all", "write", x.write_deadline_misses, &x.write);
            out += &row(&x.ftl, "page", "read", 0, &x.page_read);
            out += &row(&x.ftl, "page", "write", 0, &x.page_write);
        }
    }
    out
}

/// CSV of the bandwidth over time: every FTL's intervals, then Fig. 16's.
pub fn bandwidth_csv(results: &PartCosmosResults) -> String {
    let mut out = String::from("seed,run,start_ns,read_mb_per_s,write_mb_per_s,deadline_misses\n");
    for r in &results.seeds {
        let seed = r.seed;
        for x in &r.runs {
            for b in &x.bandwidth {
                out += &format!(
                    "{seed},{},{},{:.3},{:.3},{}\n",
                    x.ftl, b.start_ns, b.read_mb_per_s, b.write_mb_per_s, b.deadline_misses
                );
            }
        }
        for (k, mbps) in r.fig16.write_mb_per_s.iter().enumerate() {
            out += &format!(
                "{seed},fig16-wao-gc,{},0,{mbps:.3},0\n",
                k as u64 * r.fig16.interval_ns
            );
        }
    }
    out
}
