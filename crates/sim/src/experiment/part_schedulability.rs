//! part-ftl.txt section VI.A: schedulability of random task sets under PaRT-FTL (eqs. 6 and 7),
//! RTGC and WAO-GC (no admission control: section VI.A's blocking test at 100, 75 and 50% GC
//! likelihood), as data: acceptance ratio against total utilisation (Fig. 5), weighted
//! schedulability (Bastoni et al.) against read size (Fig. 6) and write size (Fig. 7).
//!
//! Task sets: UUniFast-discard (Bini & Buttazzo) draws the tasks' utilisations U_i for a total
//! U; each U_i splits into a read part U_i^r and a write part U_i^w ([`ReadShare`]: the paper
//! does not say how; by default a uniformly random share per task); the periods follow from
//! eqs. 17 and 18 on the unpartitioned device (Table IV's WAO-GC column: |F| = 16,
//! t_w = 1.87 ms, t_r = 1.23 ms): T_i^w = ⌈w_i/|F|⌉·t_w / U_i^w, T_i^r = r_i·t_r / U_i^r.
//! So U is the set's read and write load as RTGC and WAO-GC charge it without GC; each scheme
//! then adds its own costs. Every point has its own seeded generator (generator seed, sweep,
//! size, utilisation): one seed reproduces a run, and a point does not depend on the others.
//! The study runs every sweep once per generator seed (default 1, 2, 3) and judges each claim
//! on every seed ([`claims::merge_runs`](super::claims::merge_runs)).
//!
//! PaRT-FTL is judged at section V.A's stated λ = 0.643 ([`FlashParams::part_ftl`]). Beside it,
//! the column `part_ftl_fitted` runs the same task sets with λ = 0.518
//! ([`FlashParams::part_ftl_as_evaluated`]), the λ fitted to eq. 9's 7.3 MB/s: its claims are
//! marked fitted and never counted as reproduced (docs/realtime-analysis.md, Claims).

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::Serialize;

use super::claims::PaperClaim;
use crate::realtime::task::MAX_PERIOD_NS;
use crate::realtime::{part, rtgc, waogc, FlashParams, TaskSpec};

/// The schemes compared, in the order of every curve's columns: PaRT-FTL at the stated λ,
/// RTGC, WAO-GC at three GC likelihoods, and PaRT-FTL at λ fitted to eq. 9.
pub const SCHEMES: [&str; 6] = [
    "part_ftl",
    "rtgc",
    "waogc_100",
    "waogc_75",
    "waogc_50",
    "part_ftl_fitted",
];
/// Columns of a curve.
pub const NSCHEMES: usize = SCHEMES.len();

/// WAO-GC's GC likelihoods (section VI.A), for `SCHEMES[2..]`.
pub const GC_LIKELIHOODS: [f64; 3] = [1.0, 0.75, 0.5];

/// How a task's utilisation splits into its read and write parts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum ReadShare {
    /// U_i^r = s·U_i with s uniform in [0, 1) per task.
    Uniform,
    /// A fixed share s in [0, 1] of every task.
    Fixed(f64),
}

/// The study: the paper's values by [`SchedulabilityStudy::paper`].
#[derive(Debug, Clone, Serialize)]
pub struct SchedulabilityStudy {
    pub sets_per_point: u32,
    pub tasks_per_set: usize,
    /// r_i of Fig. 5 and Fig. 7 (the paper: 1 page).
    pub read_pages: u32,
    /// w_i of Fig. 5 and Fig. 6 (the paper: 3 pages).
    pub write_pages: u32,
    pub utilisations: Vec<f64>,
    pub read_sizes: Vec<u32>,
    pub write_sizes: Vec<u32>,
    pub read_share: ReadShare,
    /// The device periods are generated on (eqs. 17, 18) and RTGC, WAO-GC run on.
    pub shared_device: FlashParams,
    /// PaRT-FTL as judged: section V.A's λ = 0.643 unless changed.
    pub part_device: FlashParams,
    /// PaRT-FTL with λ fitted to eq. 9 (the `part_ftl_fitted` column).
    pub part_device_fitted: FlashParams,
    /// Seeds of the task-set generator (and of WAO-GC's interference draws): every sweep runs
    /// once per seed.
    pub seeds: Vec<u64>,
}

/// The generator seeds of a study unless told otherwise.
pub const DEFAULT_SEEDS: [u64; 3] = [1, 2, 3];

impl SchedulabilityStudy {
    /// Section VI.A: 500 sets of 10 tasks per utilisation 0.05..0.95 (step 0.05), reads of 1
    /// page and writes of 3, sizes 1..36 for Figs. 6 and 7; one run per seed of `seeds`.
    pub fn paper(sets_per_point: u32, seeds: &[u64]) -> Self {
        SchedulabilityStudy {
            sets_per_point,
            tasks_per_set: 10,
            read_pages: 1,
            write_pages: 3,
            utilisations: (1..=19).map(|i| f64::from(i) / 20.0).collect(),
            read_sizes: (1..=36).collect(),
            write_sizes: (1..=36).collect(),
            read_share: ReadShare::Uniform,
            shared_device: FlashParams::waogc(),
            part_device: FlashParams::part_ftl(),
            part_device_fitted: FlashParams::part_ftl_as_evaluated(),
            seeds: seeds.to_vec(),
        }
    }

    /// Sets generated in all (every seed): progress is counted in sets.
    pub fn total_sets(&self) -> usize {
        let points = self.utilisations.len() * (1 + self.read_sizes.len() + self.write_sizes.len());
        points * self.sets_per_point as usize * self.seeds.len()
    }

    /// Runs the three sweeps once per seed and judges the claims on every seed;
    /// `progress(done sets, total sets, sweep)`.
    pub fn run(&self, progress: &mut dyn FnMut(usize, usize, &str)) -> StudyResults {
        let total = self.total_sets();
        let mut done = 0;
        let mut runs = Vec::new();
        for &seed in &self.seeds {
            let mut counted = |n: usize, sweep: &str| {
                done += n;
                progress(done, total, sweep);
            };
            runs.push(self.run_seed(seed, &mut counted));
        }
        let per_seed: Vec<_> = runs
            .iter()
            .enumerate()
            .map(|(i, r)| claims::claims(self, r, i == 0))
            .collect();
        let claims = super::claims::merge_runs(per_seed);
        StudyResults {
            acceptance: Curve::mean(runs.iter().map(|r| &r.acceptance)),
            weighted_read_size: Curve::mean(runs.iter().map(|r| &r.weighted_read_size)),
            weighted_write_size: Curve::mean(runs.iter().map(|r| &r.weighted_write_size)),
            runs,
            claims,
        }
    }

    /// The three sweeps with the generator seed `seed`; `counted(sets done, sweep)`.
    fn run_seed(&self, seed: u64, counted: &mut dyn FnMut(usize, &str)) -> SeedRun {
        let mut acceptance = Curve::new("utilisation");
        for (ui, &u) in self.utilisations.iter().enumerate() {
            let tally = self.point(
                seed,
                Sweep::Acceptance,
                0,
                ui,
                self.read_pages,
                self.write_pages,
            );
            acceptance.push(u, tally.acceptance_ratios());
            counted(self.sets_per_point as usize, "acceptance");
        }
        let mut by_size = |sweep: Sweep, sizes: &[u32], name: &'static str| {
            let mut curve = Curve::new(name);
            for &size in sizes {
                let (r, w) = match sweep {
                    Sweep::ReadSize => (size, self.write_pages),
                    _ => (self.read_pages, size),
                };
                let mut weighted = Tally::default();
                for ui in 0..self.utilisations.len() {
                    weighted.add(&self.point(seed, sweep, size, ui, r, w));
                }
                curve.push(f64::from(size), weighted.weighted_ratios());
                counted(self.sets_per_point as usize * self.utilisations.len(), name);
            }
            curve
        };
        let weighted_read_size = by_size(Sweep::ReadSize, &self.read_sizes, "read_pages");
        let weighted_write_size = by_size(Sweep::WriteSize, &self.write_sizes, "write_pages");
        SeedRun {
            seed,
            acceptance,
            weighted_read_size,
            weighted_write_size,
        }
    }

    /// The sets of one point (seed, sweep, size, utilisation index), tallied per scheme.
    fn point(&self, seed: u64, sweep: Sweep, size: u32, ui: usize, r: u32, w: u32) -> Tally {
        let u = self.utilisations[ui];
        let key = mix(mix(mix(seed, sweep as u64), u64::from(size)), ui as u64);
        let mut sets = Pcg64::seed_from_u64(key);
        let mut blocking = Pcg64::seed_from_u64(mix(key, 1));
        let mut tally = Tally::default();
        for _ in 0..self.sets_per_point {
            let tasks = self.task_set(u, r, w, &mut sets);
            tally.record(u, self.verdicts(&tasks, &mut blocking));
        }
        tally
    }

    /// One random task set of total utilisation `u` (UUniFast-discard, eqs. 17 and 18).
    pub fn task_set(&self, u: f64, r: u32, w: u32, rng: &mut impl Rng) -> Vec<TaskSpec> {
        let dev = &self.shared_device;
        uunifast_discard(self.tasks_per_set, u, rng)
            .into_iter()
            .map(|ui| {
                let share = match self.read_share {
                    ReadShare::Uniform => rng.random::<f64>(),
                    ReadShare::Fixed(s) => s,
                };
                let (ur, uw) = (share * ui, (1.0 - share) * ui);
                let write_ns = f64::from(w.div_ceil(dev.chips)) * dev.write_ns;
                let read_ns = f64::from(r) * dev.read_ns;
                TaskSpec {
                    read_pages: if ur > 0.0 { r } else { 0 },
                    read_period_ns: (read_ns / ur).min(MAX_PERIOD_NS),
                    write_pages: if uw > 0.0 { w } else { 0 },
                    write_period_ns: (write_ns / uw).min(MAX_PERIOD_NS),
                }
            })
            .collect()
    }

    /// Whether each scheme of [`SCHEMES`] schedules `tasks`.
    pub fn verdicts(&self, tasks: &[TaskSpec], rng: &mut impl Rng) -> [bool; NSCHEMES] {
        let shared = &self.shared_device;
        let mut v = [
            part::admission(tasks, &self.part_device).is_ok(),
            rtgc::admission(tasks, shared).is_ok(),
            false,
            false,
            false,
            part::admission(tasks, &self.part_device_fitted).is_ok(),
        ];
        for (slot, p) in v[2..5].iter_mut().zip(GC_LIKELIHOODS) {
            *slot = waogc::interference_test(tasks, shared, p, rng).is_ok();
        }
        v
    }
}

#[derive(Clone, Copy)]
enum Sweep {
    Acceptance = 1,
    ReadSize = 2,
    WriteSize = 3,
}

/// UUniFast (Bini & Buttazzo 2005), redrawn while a task's utilisation exceeds 1 (discard):
/// `n` utilisations summing to `total`. The expected number of draws grows quickly as `total`
/// nears `n`; the study's totals are at most 0.95.
pub fn uunifast_discard(n: usize, total: f64, rng: &mut impl Rng) -> Vec<f64> {
    assert!(
        n > 0 && total >= 0.0 && total < n as f64,
        "UUniFast-discard needs 0 <= total < n"
    );
    loop {
        let mut utilisations = Vec::with_capacity(n);
        let mut remaining = total;
        for i in 1..n {
            let next = remaining * rng.random::<f64>().powf(1.0 / (n - i) as f64);
            utilisations.push(remaining - next);
            remaining = next;
        }
        utilisations.push(remaining);
        if utilisations.iter().all(|&u| u <= 1.0) {
            return utilisations;
        }
    }
}

/// SplitMix64's finaliser over `a` and `b`: independent seeds per point.
fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b
        .wrapping_add(0x9e37_79b9_7f4a_7c15)
        .wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Counts of one point: sets, sets schedulable per scheme, and their utilisations.
#[derive(Debug, Default, Clone)]
struct Tally {
    sets: u32,
    accepted: [u32; NSCHEMES],
    utilisation: f64,
    accepted_utilisation: [f64; NSCHEMES],
}

impl Tally {
    fn record(&mut self, u: f64, verdicts: [bool; NSCHEMES]) {
        self.sets += 1;
        self.utilisation += u;
        for (i, ok) in verdicts.into_iter().enumerate() {
            if ok {
                self.accepted[i] += 1;
                self.accepted_utilisation[i] += u;
            }
        }
    }

    fn add(&mut self, other: &Tally) {
        self.sets += other.sets;
        self.utilisation += other.utilisation;
        for i in 0..NSCHEMES {
            self.accepted[i] += other.accepted[i];
            self.accepted_utilisation[i] += other.accepted_utilisation[i];
        }
    }

    fn acceptance_ratios(&self) -> [f64; NSCHEMES] {
        self.accepted
            .map(|a| f64::from(a) / f64::from(self.sets.max(1)))
    }

    /// Bastoni et al.: Σ U of schedulable sets / Σ U of all sets.
    fn weighted_ratios(&self) -> [f64; NSCHEMES] {
        let total = self.utilisation;
        self.accepted_utilisation
            .map(|a| if total > 0.0 { a / total } else { 0.0 })
    }
}

/// One figure: x values and, per x, a ratio per scheme of [`SCHEMES`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Curve {
    pub x_name: &'static str,
    pub points: Vec<(f64, [f64; NSCHEMES])>,
}

impl Curve {
    pub fn new(x_name: &'static str) -> Self {
        Curve {
            x_name,
            points: Vec::new(),
        }
    }

    pub fn push(&mut self, x: f64, ratios: [f64; NSCHEMES]) {
        self.points.push((x, ratios));
    }

    /// The mean of curves over the same x values (the plots' curve over seeds).
    pub fn mean<'a>(curves: impl Iterator<Item = &'a Curve>) -> Curve {
        let curves: Vec<&Curve> = curves.collect();
        let Some(first) = curves.first() else {
            return Curve::new("");
        };
        let n = curves.len() as f64;
        let mut mean = Curve::new(first.x_name);
        for (i, (x, _)) in first.points.iter().enumerate() {
            let mut sum = [0.0; NSCHEMES];
            for c in &curves {
                for (s, r) in sum.iter_mut().zip(c.points[i].1) {
                    *s += r;
                }
            }
            mean.push(*x, sum.map(|s| s / n));
        }
        mean
    }

    /// The ratios of one scheme (a name of [`SCHEMES`]) in x order.
    pub fn series(&self, scheme: &str) -> Vec<f64> {
        let i = SCHEMES.iter().position(|s| *s == scheme).expect("a scheme");
        self.points.iter().map(|(_, r)| r[i]).collect()
    }

    /// Header `x_name,part_ftl,rtgc,waogc_100,waogc_75,waogc_50,part_ftl_fitted`, one row per x.
    pub fn csv(&self) -> String {
        Self::csv_by_seed(&[(None, self)])
    }

    /// The curves of several seeds in one table: a `seed` column first when seeds are given.
    pub fn csv_by_seed(curves: &[(Option<u64>, &Curve)]) -> String {
        let Some((seed, first)) = curves.first() else {
            return String::new();
        };
        let seed_column = if seed.is_some() { "seed," } else { "" };
        let mut out = format!("{seed_column}{},{}\n", first.x_name, SCHEMES.join(","));
        for (seed, curve) in curves {
            for (x, ratios) in &curve.points {
                if let Some(s) = seed {
                    out.push_str(&format!("{s},"));
                }
                out.push_str(&format!("{x}"));
                for r in ratios {
                    out.push_str(&format!(",{r:.4}"));
                }
                out.push('\n');
            }
        }
        out
    }
}

/// The three figures of one generator seed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeedRun {
    pub seed: u64,
    /// Fig. 5: acceptance ratio against total utilisation.
    pub acceptance: Curve,
    /// Fig. 6: weighted schedulability against read size.
    pub weighted_read_size: Curve,
    /// Fig. 7: weighted schedulability against write size.
    pub weighted_write_size: Curve,
}

/// The three figures per seed, their means over the seeds (the plots), and the claims.
#[derive(Debug, Clone, Serialize)]
pub struct StudyResults {
    /// Per generator seed, in the study's order.
    pub runs: Vec<SeedRun>,
    /// Fig. 5, the mean over the seeds.
    pub acceptance: Curve,
    /// Fig. 6, the mean over the seeds.
    pub weighted_read_size: Curve,
    /// Fig. 7, the mean over the seeds.
    pub weighted_write_size: Curve,
    /// Section VI.A's claims judged on every seed (and section V's closed forms, exactly).
    pub claims: Vec<PaperClaim>,
}

impl StudyResults {
    /// One figure's table over every seed (a `seed` column first): `pick` chooses the figure.
    pub fn csv(&self, pick: fn(&SeedRun) -> &Curve) -> String {
        let curves: Vec<(Option<u64>, &Curve)> =
            self.runs.iter().map(|r| (Some(r.seed), pick(r))).collect();
        Curve::csv_by_seed(&curves)
    }
}

pub mod claims;
#[cfg(test)]
mod tests;
