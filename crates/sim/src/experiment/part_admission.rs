//! How pessimistic each admission test of part-ftl.txt is (issue 29, part 3): task sets swept
//! across the admission boundary, each run as a periodic simulation on the `cosmos` preset, and
//! per scheme (PaRT-FTL's eqs. 6-7, RTGC's EDF test, WAO-GC's section VI.A worst case) the
//! region the test admits against the region where no run misses a deadline.
//!
//! Method:
//! - A *family* is a task set whose periods all scale with one period `T` (the readers' period,
//!   or the writers' when there are no readers): Table III's readers (4 x 3 pages), larger reads
//!   (4 x 12 pages), Table III's writers (4 x 12 pages), smaller writes (4 x 3 pages), and Table
//!   III's mix (4 x 12-page writes every 4T with 4 x 3-page reads every T; T = 15 ms is Table III
//!   itself). Every term of every test is a capacity over a period of the set, so a test's
//!   value (utilisation, or worst response / deadline for WAO-GC) is proportional to 1/T: each
//!   family has one *analysis boundary* T_a, the shortest period the test admits, found by
//!   bisection on the scheme's [`Scheme::check`] against the analysis device of the same
//!   configuration (`realtime::derive::analysis_device`), and a set's test value is T_a / T.
//! - The periods run on a geometric grid anchored at the family's Table III period
//!   (`points_per_octave` points per halving), from one octave above the longest analysis
//!   boundary of the three schemes down. Each (scheme, family, seed) runs its grid from the top
//!   and stops once `misses_to_stop` consecutive periods missed a deadline *and* the period is
//!   below the scheme's analysis boundary (so every admitted grid point is run, and the region
//!   past the first miss is shown but not explored to exhaustion: an overloaded set only
//!   accumulates a backlog), or at `min_period_ns`.
//! - Each run is the FTL of the scheme (`part-ftl`, `rtgc`, `wao-gc`) on `cosmos` with
//!   `blocks_per_plane` blocks per plane, preconditioned (the logical space written, then
//!   random overwrites to steady state, as part-cosmos does), EDF die queues, the family's
//!   tasks released together at time 0 (the critical instant) for `duration_ns`, uniformly
//!   random page-aligned offsets drawn from `run.seed`, deadlines at the end of the period.
//! - The *simulated boundary* T_s of a (scheme, family) is the shortest grid period such that
//!   no run at it or at any longer grid period missed a deadline on any seed; the true
//!   no-miss boundary lies between T_s and the next grid period below it. The *pessimism* is
//!   T_a / T_s: how much shorter a period the device sustained than the test allows, which is
//!   also the test's value at T_s (it is proportional to 1/T), i.e. the ratio of the boundary
//!   utilisations. Above 1: the test is pessimistic by that factor; below 1: the test admits
//!   sets that miss (unsafe). It is a measurement, not one of the paper's claims: the paper
//!   gives no figure for it, so it is reported beside the claims, not judged.
//!
//! Choices where the paper is silent: the families (the paper tries only Table III), the grid,
//! the stop rule, the release phase (all tasks at 0: the synchronous release a utilisation test
//! must cover), and the duration. The claims (one per scheme, [`claims`]): every set the test
//! admits misses no deadline, on every seed (part-ftl.txt VI.B.1: "The task set passes
//! PaRT-FTL's admission control, so no deadlines are missed"). docs/part-admission.md.

mod claims;

pub use claims::{claims, DOC};

use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;

use crate::config::ExperimentConfig;
use crate::realtime::{
    derive, part, rtgc, waogc, FlashParams, Scheme, TaskSpec, UtilisationTest, NS_PER_MS,
};
use crate::stats::Report;
use crate::workload::parse_spec;
use crate::SimError;

use super::claims::PaperClaim;

/// The schemes compared, with the FTL each runs on.
pub const SCHEMES: [(Scheme, &str); 3] = [
    (Scheme::PartFtl, "part-ftl"),
    (Scheme::Rtgc, "rtgc"),
    (Scheme::WaoGc, "wao-gc"),
];

/// The FTL that runs `scheme`'s sets.
pub fn ftl_of(scheme: Scheme) -> &'static str {
    SCHEMES
        .iter()
        .find(|(s, _)| *s == scheme)
        .map_or("part-ftl", |(_, f)| f)
}

/// A task set whose periods all scale with one period T.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Family {
    /// "reads 4x3p", ...
    pub name: &'static str,
    /// Reading tasks and their pages per job (period T).
    pub readers: u32,
    pub read_pages: u32,
    /// Writing tasks and their pages per job (period `write_period_factor` x T).
    pub writers: u32,
    pub write_pages: u32,
    pub write_period_factor: u32,
    /// The family's period in Table III (the grid's anchor), ms.
    pub anchor_ms: f64,
}

/// The families swept: Table III's readers and writers alone and with other request sizes,
/// and Table III's mix.
pub const FAMILIES: [Family; 5] = [
    Family {
        name: "reads 4x3p",
        readers: 4,
        read_pages: 3,
        writers: 0,
        write_pages: 0,
        write_period_factor: 1,
        anchor_ms: 15.0,
    },
    Family {
        name: "reads 4x12p",
        readers: 4,
        read_pages: 12,
        writers: 0,
        write_pages: 0,
        write_period_factor: 1,
        anchor_ms: 15.0,
    },
    Family {
        name: "writes 4x12p",
        readers: 0,
        read_pages: 0,
        writers: 4,
        write_pages: 12,
        write_period_factor: 1,
        anchor_ms: 60.0,
    },
    Family {
        name: "writes 4x3p",
        readers: 0,
        read_pages: 0,
        writers: 4,
        write_pages: 3,
        write_period_factor: 1,
        anchor_ms: 60.0,
    },
    Family {
        name: "Table III mix",
        readers: 4,
        read_pages: 3,
        writers: 4,
        write_pages: 12,
        write_period_factor: 4,
        anchor_ms: 15.0,
    },
];

impl Family {
    /// The `periodic` workload's task list at period `t_ns` (writers first, as Table III),
    /// periods in whole microseconds.
    pub fn spec(&self, t_ns: u64) -> String {
        let us = |ns: u64| ns / 1_000;
        let mut parts = Vec::new();
        if self.writers > 0 {
            parts.push(format!(
                "{}xw{}p@{}us",
                self.writers,
                self.write_pages,
                us(t_ns) * u64::from(self.write_period_factor)
            ));
        }
        if self.readers > 0 {
            parts.push(format!(
                "{}xr{}p@{}us",
                self.readers,
                self.read_pages,
                us(t_ns)
            ));
        }
        parts.join("+")
    }

    /// The family's tasks at period `t_ns` in the analysis' model (pages are device pages).
    pub fn tasks(&self, t_ns: f64) -> Vec<TaskSpec> {
        let mut tasks = Vec::new();
        for _ in 0..self.writers {
            tasks.push(TaskSpec {
                read_pages: 0,
                read_period_ns: 0.0,
                write_pages: self.write_pages,
                write_period_ns: t_ns * f64::from(self.write_period_factor),
            });
        }
        for _ in 0..self.readers {
            tasks.push(TaskSpec {
                read_pages: self.read_pages,
                read_period_ns: t_ns,
                write_pages: 0,
                write_period_ns: 0.0,
            });
        }
        tasks
    }
}

/// The analysis' view of one scheme's configured device.
#[derive(Debug, Clone, Serialize)]
pub struct AnalysisDeviceRow {
    pub scheme: &'static str,
    pub ftl: &'static str,
    pub params: FlashParams,
    /// Where the parameters come from (measured on the timing model, or a table's).
    pub source: String,
}

/// What to run.
#[derive(Debug, Clone, Serialize)]
pub struct PartAdmissionStudy {
    /// The device preset: `cosmos` (the analysis times the model's sets) or `cosmos-table-iv`
    /// (the same device, the analysis with Table IV's measured times).
    pub device: String,
    /// `geometry.blocks_per_plane` of every run.
    pub blocks_per_plane: u32,
    /// Release window of every run.
    pub duration_ns: u64,
    /// Grid points per halving of the period.
    pub points_per_octave: u32,
    /// The grid starts this many octaves above the longest analysis boundary of the schemes.
    pub octaves_above: f64,
    /// No period below this is run.
    pub min_period_ns: u64,
    /// A (scheme, family, seed) stops after this many consecutive periods with a miss (below
    /// the scheme's analysis boundary).
    pub misses_to_stop: u32,
    /// `timing.die_queue_policy` of every run.
    pub die_queue_policy: String,
    /// `run.seed` of the runs; each claim is judged on every seed.
    pub seeds: Vec<u64>,
    /// The families' names (default: all of [`FAMILIES`]).
    pub families: Vec<String>,
    /// Extra `--set` assignments for every run (and for the analysis device).
    pub sets: Vec<String>,
}

impl Default for PartAdmissionStudy {
    /// The quick size: 16 blocks per plane, 2 s of releases, 2 points per octave, seeds 1-3.
    fn default() -> Self {
        PartAdmissionStudy {
            device: "cosmos".into(),
            blocks_per_plane: 16,
            duration_ns: 2_000_000_000,
            points_per_octave: 2,
            octaves_above: 1.0,
            min_period_ns: 500_000,
            misses_to_stop: 2,
            die_queue_policy: "edf".into(),
            seeds: vec![1, 2, 3],
            families: FAMILIES.iter().map(|f| f.name.to_string()).collect(),
            sets: Vec::new(),
        }
    }
}

/// One run: a family at one period under one scheme and seed.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub family: String,
    pub scheme: &'static str,
    pub ftl: &'static str,
    /// The family's period T.
    pub period_ns: u64,
    /// The `periodic` tasks.
    pub tasks: String,
    pub seed: u64,
    /// Whether the scheme's test admits the set on the analysis device.
    pub admitted: bool,
    /// The test's value (<= 1 passes): the largest utilisation (PaRT-FTL: max of eqs. 6, 7;
    /// RTGC: its EDF sum) or worst response / deadline (WAO-GC).
    pub test_value: f64,
    /// Eq. 6 and eq. 7 for PaRT-FTL; None for the others.
    pub read_utilisation: Option<f64>,
    pub write_utilisation: Option<f64>,
    /// The terms, e.g. "eq. 6 read 0.98 + blocking 0.08; eq. 7 ...".
    pub terms: String,
    pub requests: u64,
    pub misses: u64,
    pub read_misses: u64,
    pub write_misses: u64,
    /// The largest response / deadline over the tasks, and that task's figures.
    pub worst_ratio: f64,
    pub worst_response_ns: u64,
    pub worst_deadline_ns: u64,
    pub gc_victims: u64,
}

/// The two boundaries of one scheme on one family.
#[derive(Debug, Clone, Serialize)]
pub struct Boundary {
    pub scheme: &'static str,
    pub family: String,
    /// T_a: the shortest period the test admits (bisection, to 0.01%).
    pub analysis_period_ns: f64,
    /// T_s: the shortest grid period with no miss at it or above on any seed (None: the
    /// longest period run already missed).
    pub simulated_period_ns: Option<u64>,
    /// The grid period below T_s, where some seed missed (None: none missed down to the
    /// shortest period run).
    pub first_miss_period_ns: Option<u64>,
    /// T_a / T_s (None without T_s): the test's value at the simulated boundary, the least
    /// pessimism the grid shows (the device's no-miss boundary lies in (first miss, T_s]).
    pub pessimism: Option<f64>,
    /// T_a / first miss (None without a miss): the most pessimism the grid allows.
    pub pessimism_upper: Option<f64>,
    /// Runs of admitted sets, and their misses.
    pub admitted_runs: usize,
    pub admitted_misses: u64,
    /// Runs of refused sets that missed nothing.
    pub refused_runs_without_miss: usize,
}

/// Everything the study measured.
#[derive(Debug, Clone, Serialize)]
pub struct PartAdmissionResults {
    pub study: PartAdmissionStudy,
    pub devices: Vec<AnalysisDeviceRow>,
    /// Per (family, scheme, seed), periods from long to short.
    pub rows: Vec<Row>,
    /// Per (family, scheme).
    pub boundaries: Vec<Boundary>,
    pub claims: Vec<PaperClaim>,
}

/// One chain of runs: a family under a scheme and seed, down the grid.
struct Chain {
    family: Family,
    scheme: Scheme,
    seed: u64,
    grid: Vec<u64>,
    analysis_period_ns: f64,
}

impl PartAdmissionStudy {
    /// The full run (`flashlab reproduce --full`, docs/part-admission.md): 64 blocks per plane
    /// (as part-cosmos), 20 s of releases, 4 points per octave (boundaries to 19%), seeds 1-5.
    pub fn full() -> Self {
        PartAdmissionStudy {
            blocks_per_plane: 64,
            duration_ns: 20_000_000_000,
            points_per_octave: 4,
            seeds: vec![1, 2, 3, 4, 5],
            ..Self::default()
        }
    }

    /// The families selected, in [`FAMILIES`] order; an unknown name is an error naming it.
    pub fn selected_families(&self) -> Result<Vec<Family>, SimError> {
        for name in &self.families {
            if !FAMILIES.iter().any(|f| f.name == name) {
                let all: Vec<&str> = FAMILIES.iter().map(|f| f.name).collect();
                return Err(input(format!(
                    "unknown family `{name}` (allowed: {})",
                    all.join(", ")
                )));
            }
        }
        let chosen: Vec<Family> = FAMILIES
            .iter()
            .filter(|f| self.families.iter().any(|n| n == f.name))
            .copied()
            .collect();
        if chosen.is_empty() {
            return Err(input("no family selected".into()));
        }
        Ok(chosen)
    }

    /// Checks the settings (before any run): fields in range, the configuration of every
    /// scheme valid.
    pub fn check(&self) -> Result<(), SimError> {
        if self.seeds.is_empty() {
            return Err(input("seeds: at least one".into()));
        }
        if self.points_per_octave == 0 {
            return Err(input("points_per_octave = 0: must be at least 1".into()));
        }
        if !(self.octaves_above.is_finite() && self.octaves_above >= 0.0) {
            return Err(input(format!(
                "octaves_above = {}: must be a finite number >= 0",
                self.octaves_above
            )));
        }
        if self.min_period_ns < 10_000 {
            return Err(input(format!(
                "min_period_ns = {}: must be at least 10000 (10 us)",
                self.min_period_ns
            )));
        }
        if self.misses_to_stop == 0 {
            return Err(input("misses_to_stop = 0: must be at least 1".into()));
        }
        let families = self.selected_families()?;
        for (scheme, _) in SCHEMES {
            let config = self.config(scheme, &families[0], 15_000_000, self.seeds[0])?;
            analysis_device(scheme, &config)?;
        }
        Ok(())
    }

    /// The configuration of `family` at period `t_ns` under `scheme`'s FTL with `seed`.
    pub fn config(
        &self,
        scheme: Scheme,
        family: &Family,
        t_ns: u64,
        seed: u64,
    ) -> Result<ExperimentConfig, SimError> {
        let mut sets = vec![
            format!("ftl.name=\"{}\"", ftl_of(scheme)),
            format!("run.seed={seed}"),
            format!("timing.die_queue_policy=\"{}\"", self.die_queue_policy),
            format!("geometry.blocks_per_plane={}", self.blocks_per_plane),
            "run.precondition=1.0".to_string(),
        ];
        sets.extend(self.sets.iter().cloned());
        // The study runs the sets the test refuses, and analyses every set itself.
        sets.push("run.admission=\"off\"".to_string());
        let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
        let mut config = ExperimentConfig::with_sets(&self.device, &refs)?;
        config.workload = parse_spec(&format!(
            "periodic:tasks={},duration={}ns",
            family.spec(t_ns),
            self.duration_ns
        ))?;
        config.validate()?;
        Ok(config)
    }

    /// Runs every chain (on as many threads as the machine has cores; the result does not
    /// depend on the threads), then the boundaries and the claims; `progress(done, total,
    /// what)` counts chains.
    pub fn run(
        &self,
        progress: &mut dyn FnMut(usize, usize, &str),
    ) -> Result<PartAdmissionResults, SimError> {
        self.check()?;
        let families = self.selected_families()?;
        let mut devices = Vec::new();
        let mut params = Vec::new();
        for (scheme, ftl) in SCHEMES {
            let config = self.config(scheme, &families[0], 15_000_000, self.seeds[0])?;
            let (p, source) = analysis_device(scheme, &config)?;
            params.push((scheme, p));
            devices.push(AnalysisDeviceRow {
                scheme: scheme.name(),
                ftl,
                params: p,
                source,
            });
        }
        let mut chains = Vec::new();
        for family in &families {
            let bounds: Vec<f64> = params
                .iter()
                .map(|(s, p)| analysis_boundary_ns(*s, family, p))
                .collect();
            let grid = self.grid(family, bounds.iter().copied().fold(0.0, f64::max));
            for (k, (scheme, _)) in params.iter().enumerate() {
                for &seed in &self.seeds {
                    chains.push(Chain {
                        family: *family,
                        scheme: *scheme,
                        seed,
                        grid: grid.clone(),
                        analysis_period_ns: bounds[k],
                    });
                }
            }
        }
        let per_chain = self.run_chains(&chains, &params, progress)?;
        let rows: Vec<Row> = per_chain.into_iter().flatten().collect();
        let mut boundaries = Vec::new();
        for family in &families {
            for (scheme, p) in &params {
                boundaries.push(boundary(
                    &rows,
                    family,
                    *scheme,
                    analysis_boundary_ns(*scheme, family, p),
                ));
            }
        }
        let mut results = PartAdmissionResults {
            study: self.clone(),
            devices,
            rows,
            boundaries,
            claims: Vec::new(),
        };
        results.claims = claims(&results);
        Ok(results)
    }

    /// The family's grid: `anchor · 2^(-j/ppo)` (whole microseconds) from the first point at
    /// or above `2^octaves_above` times `longest_boundary_ns` down to `min_period_ns`.
    pub fn grid(&self, family: &Family, longest_boundary_ns: f64) -> Vec<u64> {
        let ppo = f64::from(self.points_per_octave);
        let anchor_ns = family.anchor_ms * NS_PER_MS;
        let top_ns =
            longest_boundary_ns.max(self.min_period_ns as f64) * 2f64.powf(self.octaves_above);
        let j_start = -(ppo * (top_ns / anchor_ns).log2() - 1e-9).ceil() as i64;
        let mut grid = Vec::new();
        for j in j_start.. {
            let t_ns = anchor_ns * 2f64.powf(-(j as f64) / ppo);
            let us = (t_ns / 1e3).round() as u64;
            if us * 1_000 < self.min_period_ns {
                break;
            }
            if grid.last() != Some(&(us * 1_000)) {
                grid.push(us * 1_000);
            }
        }
        grid
    }

    fn run_chains(
        &self,
        chains: &[Chain],
        params: &[(Scheme, FlashParams)],
        progress: &mut dyn FnMut(usize, usize, &str),
    ) -> Result<Vec<Vec<Row>>, SimError> {
        let total = chains.len();
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(total)
            .max(1);
        let next = AtomicUsize::new(0);
        let mut results: Vec<Option<Result<Vec<Row>, SimError>>> =
            (0..total).map(|_| None).collect();
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::channel();
            for _ in 0..threads {
                let tx = tx.clone();
                let next = &next;
                scope.spawn(move || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(chain) = chains.get(i) else {
                        break;
                    };
                    let dev = params
                        .iter()
                        .find(|(s, _)| *s == chain.scheme)
                        .map(|(_, p)| *p)
                        .expect("every scheme has a device");
                    let r = self.run_chain(chain, &dev);
                    let failed = r.is_err();
                    if tx.send((i, r)).is_err() || failed {
                        next.store(usize::MAX / 2, Ordering::Relaxed);
                        break;
                    }
                });
            }
            drop(tx);
            progress(0, total, "starting");
            for (done, (i, r)) in rx.into_iter().enumerate() {
                let c = &chains[i];
                progress(
                    done + 1,
                    total,
                    &format!("{} {} seed {}", c.scheme.name(), c.family.name, c.seed),
                );
                results[i] = Some(r);
            }
        });
        let mut out = Vec::with_capacity(total);
        for r in results {
            match r {
                Some(r) => out.push(r?),
                None => return Err(input(format!("{} of {total} chains ran", out.len()))),
            }
        }
        progress(total, total, "done");
        Ok(out)
    }

    /// One chain: the grid from the top until the stop rule.
    fn run_chain(&self, chain: &Chain, dev: &FlashParams) -> Result<Vec<Row>, SimError> {
        let mut rows = Vec::new();
        let mut missing = 0;
        for &t_ns in &chain.grid {
            let config = self.config(chain.scheme, &chain.family, t_ns, chain.seed)?;
            let tasks = derive::workload_tasks(&config)?;
            let report = crate::run_experiment(&config, &mut |_| {})?;
            let row = row_of(chain, t_ns, &config, &tasks, dev, &report);
            missing = if row.misses > 0 { missing + 1 } else { 0 };
            rows.push(row);
            if missing >= self.misses_to_stop && (t_ns as f64) < chain.analysis_period_ns {
                break;
            }
        }
        Ok(rows)
    }
}

fn input(message: String) -> SimError {
    SimError::Input {
        location: "part-admission study".into(),
        message,
    }
}

/// The scheme's parameters of the configured device (`realtime::derive`), and where they
/// come from; the configuration's FTL must be `scheme`'s.
fn analysis_device(
    scheme: Scheme,
    config: &ExperimentConfig,
) -> Result<(FlashParams, String), SimError> {
    let d = derive::analysis_device(config)?;
    if d.scheme != scheme {
        return Err(input(format!(
            "the analysis device of {} is {}'s",
            scheme.name(),
            d.scheme.name()
        )));
    }
    Ok((d.params, d.source))
}

/// T_a: the shortest period at which `scheme`'s test admits `family` on `dev` (the test's
/// value is proportional to 1/T: bisection in log space to a relative 1e-4).
pub fn analysis_boundary_ns(scheme: Scheme, family: &Family, dev: &FlashParams) -> f64 {
    let admits = |t: f64| scheme.check(&family.tasks(t), dev).is_ok();
    let (mut lo, mut hi) = (1e3, 1e13);
    if admits(lo) {
        return lo;
    }
    if !admits(hi) {
        return f64::INFINITY;
    }
    while hi / lo > 1.0 + 1e-4 {
        let mid = (lo * hi).sqrt();
        if admits(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The scheme's test on `tasks`: (admitted, value, eq. 6, eq. 7, terms).
fn test_of(
    scheme: Scheme,
    tasks: &[TaskSpec],
    dev: &FlashParams,
) -> (bool, f64, Option<f64>, Option<f64>, String) {
    let admitted = scheme.check(tasks, dev).is_ok();
    let terms = |t: &UtilisationTest| {
        let parts: Vec<String> = t.terms.iter().map(|(n, u)| format!("{n} {u:.3}")).collect();
        format!("{} {:.3} = {}", t.source, t.total(), parts.join(" + "))
    };
    match scheme {
        Scheme::PartFtl => {
            let (r, w) = (part::read_test(tasks, dev), part::write_test(tasks, dev));
            let has_reads = tasks.iter().any(TaskSpec::reads);
            let has_writes = tasks.iter().any(TaskSpec::writes);
            let value = r.total().max(w.total());
            let mut text = Vec::new();
            if has_reads {
                text.push(terms(&r));
            }
            if has_writes {
                text.push(terms(&w));
            }
            (
                admitted,
                value,
                has_reads.then(|| r.total()),
                has_writes.then(|| w.total()),
                text.join("; "),
            )
        }
        Scheme::Rtgc => {
            let t = rtgc::admission_test(tasks, dev);
            (admitted, t.total(), None, None, terms(&t))
        }
        Scheme::WaoGc => {
            let (ratio, text) = waogc_worst_ratio(tasks, dev);
            (admitted, ratio, None, None, text)
        }
    }
}

/// Section VI.A's worst case as a value: the largest response / period over the requests
/// (each delayed by a partial step of every other writer and of its own write), and the
/// request that gives it.
fn waogc_worst_ratio(tasks: &[TaskSpec], dev: &FlashParams) -> (f64, String) {
    let writers = tasks.iter().filter(|t| t.writes()).count() as u32;
    let step_ns = waogc::partial_step_ns(dev);
    let mut worst = (0.0, String::new());
    for t in tasks {
        let others = writers - u32::from(t.writes());
        for (present, op, service_ns, deadline_ns, own) in [
            (
                t.reads(),
                "read",
                waogc::read_service_ns(t, dev),
                t.read_period_ns,
                0,
            ),
            (
                t.writes(),
                "write",
                waogc::write_service_ns(t, dev),
                t.write_period_ns,
                1,
            ),
        ] {
            if !present {
                continue;
            }
            let steps = others + own;
            let response_ns = service_ns + f64::from(steps) * step_ns;
            let ratio = response_ns / deadline_ns;
            if ratio > worst.0 {
                worst = (
                    ratio,
                    format!(
                        "VI.A worst {op} {:.3} ms ({steps} partial steps) / {:.3} ms = {ratio:.3}",
                        response_ns / NS_PER_MS,
                        deadline_ns / NS_PER_MS
                    ),
                );
            }
        }
    }
    worst
}

fn row_of(
    chain: &Chain,
    t_ns: u64,
    config: &ExperimentConfig,
    tasks: &[TaskSpec],
    dev: &FlashParams,
    report: &Report,
) -> Row {
    let (admitted, test_value, read_utilisation, write_utilisation, terms) =
        test_of(chain.scheme, tasks, dev);
    // Task ids are positions in the expanded task list; each task's deadline.
    let deadlines: Vec<(u64, bool)> = config
        .workload
        .tasks
        .iter()
        .flat_map(|t| {
            std::iter::repeat_n(
                (
                    t.deadline_resolved_ns(),
                    t.op == crate::workload::TaskOp::Read,
                ),
                t.count as usize,
            )
        })
        .collect();
    let (mut worst_ratio, mut worst_response_ns, mut worst_deadline_ns) = (0.0, 0, 0);
    let (mut read_misses, mut write_misses) = (0, 0);
    for t in &report.tasks {
        let Some(&(deadline_ns, reads)) = deadlines.get(t.task as usize) else {
            continue;
        };
        let max_ns = if reads {
            t.read.latency_ns.max
        } else {
            t.write.latency_ns.max
        };
        let ratio = max_ns as f64 / deadline_ns as f64;
        if ratio > worst_ratio {
            (worst_ratio, worst_response_ns, worst_deadline_ns) = (ratio, max_ns, deadline_ns);
        }
        let misses = report
            .deadlines
            .as_ref()
            .and_then(|d| d.tasks.iter().find(|x| x.task == t.task))
            .map_or(0, |d| d.misses);
        if reads {
            read_misses += misses;
        } else {
            write_misses += misses;
        }
    }
    Row {
        family: chain.family.name.into(),
        scheme: chain.scheme.name(),
        ftl: ftl_of(chain.scheme),
        period_ns: t_ns,
        tasks: chain.family.spec(t_ns),
        seed: chain.seed,
        admitted,
        test_value,
        read_utilisation,
        write_utilisation,
        terms,
        requests: report.deadlines.as_ref().map_or(0, |d| d.requests),
        misses: report.deadlines.as_ref().map_or(0, |d| d.misses),
        read_misses,
        write_misses,
        worst_ratio,
        worst_response_ns,
        worst_deadline_ns,
        gc_victims: report.gc.gc_runs,
    }
}

/// The boundaries of `scheme` on `family` from its rows (every seed).
fn boundary(rows: &[Row], family: &Family, scheme: Scheme, analysis_period_ns: f64) -> Boundary {
    let mine: Vec<&Row> = rows
        .iter()
        .filter(|r| r.family == family.name && r.scheme == scheme.name())
        .collect();
    let mut periods: Vec<u64> = mine.iter().map(|r| r.period_ns).collect();
    periods.sort_unstable_by(|a, b| b.cmp(a));
    periods.dedup();
    let mut simulated = None;
    let mut first_miss = None;
    for &p in &periods {
        if mine.iter().any(|r| r.period_ns == p && r.misses > 0) {
            first_miss = Some(p);
            break;
        }
        simulated = Some(p);
    }
    let admitted: Vec<&&Row> = mine.iter().filter(|r| r.admitted).collect();
    Boundary {
        scheme: scheme.name(),
        family: family.name.into(),
        analysis_period_ns,
        simulated_period_ns: simulated,
        first_miss_period_ns: first_miss,
        pessimism: simulated.map(|s| analysis_period_ns / s as f64),
        pessimism_upper: first_miss.map(|m| analysis_period_ns / m as f64),
        admitted_runs: admitted.len(),
        admitted_misses: admitted.iter().map(|r| r.misses).sum(),
        refused_runs_without_miss: mine.iter().filter(|r| !r.admitted && r.misses == 0).count(),
    }
}

fn ms(ns: f64) -> String {
    format!("{:.2}", ns / NS_PER_MS)
}

fn opt_ms(ns: Option<u64>) -> String {
    ns.map_or("-".into(), |v| ms(v as f64))
}

/// The text table: devices, boundaries with the pessimism, the runs per family, the claims.
pub fn table(r: &PartAdmissionResults) -> String {
    let s = &r.study;
    let mut out = format!(
        "part-admission on {} ({} blocks/plane), {} s of releases, die queues {}, \
         preconditioned, {} points per octave, seeds {:?}\n\nanalysis devices\n",
        s.device,
        s.blocks_per_plane,
        s.duration_ns as f64 / 1e9,
        s.die_queue_policy,
        s.points_per_octave,
        s.seeds
    );
    for d in &r.devices {
        let p = &d.params;
        out += &format!(
            "{:<9} ({:<8}) t_r {} ms, t'_r {} ms, t_w {} ms, t_e {} ms, lambda {}, c {}: {}\n",
            d.scheme,
            d.ftl,
            ms(p.read_ns),
            ms(p.gc_read_ns),
            ms(p.write_ns),
            ms(p.erase_ns),
            p.logical_ratio,
            p.copies_per_partial_step,
            d.source
        );
    }
    out += "\nboundaries (periods in ms; T_a: the test's shortest admitted period; T_s: the \
            shortest grid period with no miss there or above on any seed; first miss: the grid \
            period below it, where a seed missed; pessimism: T_a / T_s - T_a / first miss, the \
            test's value at the device's boundary, which lies between them)\n";
    out += &format!(
        "{:<14} {:<9} {:>9} {:>9} {:>10} {:>11} {:>9} {:>14} {:>15}\n",
        "family",
        "scheme",
        "T_a",
        "T_s",
        "first miss",
        "pessimism",
        "admitted",
        "admitted miss",
        "refused no miss"
    );
    for b in &r.boundaries {
        out += &format!(
            "{:<14} {:<9} {:>9} {:>9} {:>10} {:>11} {:>9} {:>14} {:>15}\n",
            b.family,
            b.scheme,
            ms(b.analysis_period_ns),
            opt_ms(b.simulated_period_ns),
            opt_ms(b.first_miss_period_ns),
            match (b.pessimism, b.pessimism_upper) {
                (Some(lo), Some(hi)) => format!("{lo:.2}-{hi:.2}"),
                (Some(lo), None) => format!(">={lo:.2}"),
                (None, Some(hi)) => format!("<{hi:.2}"),
                (None, None) => "-".into(),
            },
            b.admitted_runs,
            b.admitted_misses,
            b.refused_runs_without_miss
        );
    }
    out += "\nruns (misses per seed; * admitted by the scheme's test)\n";
    out += &format!(
        "{:<14} {:<9} {:>9} {:>7} {:>9} {:>18} {:>12}\n",
        "family", "scheme", "T (ms)", "test", "admitted", "misses", "worst/dl"
    );
    let mut keys: Vec<(&str, &str, u64)> = r
        .rows
        .iter()
        .map(|x| (x.family.as_str(), x.scheme, x.period_ns))
        .collect();
    keys.dedup();
    let mut seen = std::collections::BTreeSet::new();
    for (family, scheme, period) in keys {
        if !seen.insert((family, scheme, period)) {
            continue;
        }
        let runs: Vec<&Row> = r
            .rows
            .iter()
            .filter(|x| x.family == family && x.scheme == scheme && x.period_ns == period)
            .collect();
        let misses: Vec<String> = runs.iter().map(|x| x.misses.to_string()).collect();
        let worst = runs.iter().map(|x| x.worst_ratio).fold(0.0, f64::max);
        out += &format!(
            "{:<14} {:<9} {:>9} {:>7.3} {:>9} {:>18} {:>12.3}\n",
            family,
            scheme,
            ms(period as f64),
            runs[0].test_value,
            if runs[0].admitted { "*" } else { "" },
            misses.join("/"),
            worst
        );
    }
    out += "\nclaims (judged on every seed)\n";
    out += &super::claims::claims_text(&r.claims);
    out
}

/// CSV: one row per run (family x scheme x period x seed).
pub fn csv(r: &PartAdmissionResults) -> String {
    let mut out = String::from(
        "family,scheme,ftl,period_ns,tasks,seed,admitted,test_value,read_utilisation,\
         write_utilisation,terms,requests,misses,read_misses,write_misses,worst_response_ns,\
         worst_deadline_ns,worst_ratio,gc_victims\n",
    );
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.6}"));
    for x in &r.rows {
        out += &format!(
            "{},{},{},{},{},{},{},{:.6},{},{},\"{}\",{},{},{},{},{},{},{:.6},{}\n",
            x.family,
            x.scheme,
            x.ftl,
            x.period_ns,
            x.tasks,
            x.seed,
            x.admitted,
            x.test_value,
            opt(x.read_utilisation),
            opt(x.write_utilisation),
            x.terms,
            x.requests,
            x.misses,
            x.read_misses,
            x.write_misses,
            x.worst_response_ns,
            x.worst_deadline_ns,
            x.worst_ratio,
            x.gc_victims
        );
    }
    out
}

/// Absurd results: no GC in a writing family's runs, no requests, a response longer than the
/// run. Empty when plausible.
pub fn absurdities(r: &PartAdmissionResults) -> Vec<String> {
    let mut out = Vec::new();
    for x in &r.rows {
        let what = format!(
            "{} {} T={} ms seed {}",
            x.scheme,
            x.family,
            ms(x.period_ns as f64),
            x.seed
        );
        if x.requests == 0 {
            out.push(format!("{what}: no request"));
        }
        if x.worst_response_ns == 0 {
            out.push(format!("{what}: no latency measured"));
        }
    }
    for b in &r.boundaries {
        if b.admitted_runs == 0 {
            out.push(format!("{} {}: no admitted set run", b.scheme, b.family));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_is_anchored_at_table_iii_and_starts_above_every_boundary() {
        let study = PartAdmissionStudy::default();
        let reads = &FAMILIES[0];
        let grid = study.grid(reads, 17.3e6);
        // One octave above 17.3 ms: the first grid point at or above 34.6 ms, then halving
        // every two points, through Table III's 15 ms, down to min_period_ns.
        assert_eq!(
            &grid[..4],
            &[42_426_000, 30_000_000, 21_213_000, 15_000_000]
        );
        assert!(grid.windows(2).all(|w| w[0] > w[1]));
        assert!(*grid.last().unwrap() >= study.min_period_ns);
        assert!(*grid.last().unwrap() < study.min_period_ns * 2);
        let fine = PartAdmissionStudy {
            points_per_octave: 4,
            ..study
        };
        assert!(fine.grid(reads, 17.3e6).contains(&15_000_000));
        assert_eq!(fine.grid(reads, 17.3e6)[0], 35_676_000);
    }

    #[test]
    fn a_familys_spec_is_its_tasks() {
        let mix = &FAMILIES[4];
        assert_eq!(mix.spec(15_000_000), "4xw12p@60000us+4xr3p@15000us");
        let tasks = mix.tasks(15e6);
        assert_eq!(tasks.len(), 8);
        assert_eq!(tasks[0], TaskSpec::writer(12, 60e6).unwrap());
        assert_eq!(tasks[7], TaskSpec::reader(3, 15e6).unwrap());
    }

    #[test]
    fn the_boundary_of_the_paper_device_is_table_iiis_arithmetic() {
        // Eq. 7 on Table IV (lambda 0.643): 4 x 12 pages / 60 ms is 1.254, so T_a = 75.2 ms;
        // eq. 6: (12 x 1.23 + 1.23) / T <= 1, T_a = 15.99 ms.
        let dev = FlashParams::part_ftl();
        let w = analysis_boundary_ns(Scheme::PartFtl, &FAMILIES[2], &dev);
        assert!((w / 1e6 - 75.25).abs() < 0.1, "{w}");
        let r = analysis_boundary_ns(Scheme::PartFtl, &FAMILIES[0], &dev);
        assert!((r / 1e6 - 15.99).abs() < 0.01, "{r}");
    }
}
