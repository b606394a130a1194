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
//! then adds its own costs. Every point has its own seeded generator (study seed, sweep, size,
//! utilisation): one seed reproduces a study, and a point does not depend on the others.
//!
//! PaRT-FTL runs with B_v = ⌈0.518·P⌉ ([`FlashParams::part_ftl_as_evaluated`]), the reading of
//! λ that reproduces the paper's eq. 9 figure and admits its Table III writers; with the
//! stated λ = 0.643 the Fig. 6 claim does not hold (docs/realtime-analysis.md).

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::Serialize;

use super::claims::PaperClaim;
use crate::realtime::task::MAX_PERIOD_NS;
use crate::realtime::{part, rtgc, waogc, FlashParams, TaskSpec};

/// The schemes compared, in the order of every curve's columns.
pub const SCHEMES: [&str; 5] = ["part_ftl", "rtgc", "waogc_100", "waogc_75", "waogc_50"];

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
    pub part_device: FlashParams,
    pub seed: u64,
}

impl SchedulabilityStudy {
    /// Section VI.A: 500 sets of 10 tasks per utilisation 0.05..0.95 (step 0.05), reads of 1
    /// page and writes of 3, sizes 1..36 for Figs. 6 and 7.
    pub fn paper(sets_per_point: u32, seed: u64) -> Self {
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
            part_device: FlashParams::part_ftl_as_evaluated(),
            seed,
        }
    }

    /// Sets generated in all: progress is counted in sets.
    pub fn total_sets(&self) -> usize {
        let points = self.utilisations.len() * (1 + self.read_sizes.len() + self.write_sizes.len());
        points * self.sets_per_point as usize
    }

    /// Runs the three sweeps; `progress(done sets, total sets, sweep)`.
    pub fn run(&self, progress: &mut dyn FnMut(usize, usize, &str)) -> StudyResults {
        let total = self.total_sets();
        let mut done = 0;
        let mut acceptance = Curve::new("utilisation");
        for (ui, &u) in self.utilisations.iter().enumerate() {
            let tally = self.point(Sweep::Acceptance, 0, ui, self.read_pages, self.write_pages);
            acceptance.push(u, tally.acceptance_ratios());
            done += self.sets_per_point as usize;
            progress(done, total, "acceptance");
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
                    weighted.add(&self.point(sweep, size, ui, r, w));
                }
                curve.push(f64::from(size), weighted.weighted_ratios());
                done += self.sets_per_point as usize * self.utilisations.len();
                progress(done, total, name);
            }
            curve
        };
        let read_size = by_size(Sweep::ReadSize, &self.read_sizes, "read_pages");
        let write_size = by_size(Sweep::WriteSize, &self.write_sizes, "write_pages");
        let mut results = StudyResults {
            acceptance,
            weighted_read_size: read_size,
            weighted_write_size: write_size,
            claims: Vec::new(),
        };
        results.claims = claims::claims(self, &results);
        results
    }

    /// The sets of one point (sweep, size, utilisation index), tallied per scheme.
    fn point(&self, sweep: Sweep, size: u32, ui: usize, r: u32, w: u32) -> Tally {
        let u = self.utilisations[ui];
        let key = mix(
            mix(mix(self.seed, sweep as u64), u64::from(size)),
            ui as u64,
        );
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
    pub fn verdicts(&self, tasks: &[TaskSpec], rng: &mut impl Rng) -> [bool; 5] {
        let shared = &self.shared_device;
        let mut v = [
            part::admission(tasks, &self.part_device).is_ok(),
            rtgc::admission(tasks, shared).is_ok(),
            false,
            false,
            false,
        ];
        for (slot, p) in v[2..].iter_mut().zip(GC_LIKELIHOODS) {
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
    accepted: [u32; 5],
    utilisation: f64,
    accepted_utilisation: [f64; 5],
}

impl Tally {
    fn record(&mut self, u: f64, verdicts: [bool; 5]) {
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
        for i in 0..5 {
            self.accepted[i] += other.accepted[i];
            self.accepted_utilisation[i] += other.accepted_utilisation[i];
        }
    }

    fn acceptance_ratios(&self) -> [f64; 5] {
        self.accepted
            .map(|a| f64::from(a) / f64::from(self.sets.max(1)))
    }

    /// Bastoni et al.: Σ U of schedulable sets / Σ U of all sets.
    fn weighted_ratios(&self) -> [f64; 5] {
        let total = self.utilisation;
        self.accepted_utilisation
            .map(|a| if total > 0.0 { a / total } else { 0.0 })
    }
}

/// One figure: x values and, per x, a ratio per scheme of [`SCHEMES`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Curve {
    pub x_name: &'static str,
    pub points: Vec<(f64, [f64; 5])>,
}

impl Curve {
    fn new(x_name: &'static str) -> Self {
        Curve {
            x_name,
            points: Vec::new(),
        }
    }

    fn push(&mut self, x: f64, ratios: [f64; 5]) {
        self.points.push((x, ratios));
    }

    /// The ratios of one scheme (a name of [`SCHEMES`]) in x order.
    pub fn series(&self, scheme: &str) -> Vec<f64> {
        let i = SCHEMES.iter().position(|s| *s == scheme).expect("a scheme");
        self.points.iter().map(|(_, r)| r[i]).collect()
    }

    /// Header `x_name,part_ftl,rtgc,waogc_100,waogc_75,waogc_50`, one row per x.
    pub fn csv(&self) -> String {
        let mut out = format!("{},{}\n", self.x_name, SCHEMES.join(","));
        for (x, ratios) in &self.points {
            out.push_str(&format!("{x}"));
            for r in ratios {
                out.push_str(&format!(",{r:.4}"));
            }
            out.push('\n');
        }
        out
    }
}

/// The three figures.
#[derive(Debug, Clone, Serialize)]
pub struct StudyResults {
    /// Fig. 5: acceptance ratio against total utilisation.
    pub acceptance: Curve,
    /// Fig. 6: weighted schedulability against read size.
    pub weighted_read_size: Curve,
    /// Fig. 7: weighted schedulability against write size.
    pub weighted_write_size: Curve,
    /// Section VI.A's claims against the curves (and sections V's closed forms).
    pub claims: Vec<PaperClaim>,
}

pub mod claims;
#[cfg(test)]
mod tests;
