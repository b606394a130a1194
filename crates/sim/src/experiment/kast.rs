//! kast.txt section IV: BAST, FAST, SAST and KAST with 32 log blocks on `kast-slc`, SAST
//! and KAST over K (SAST's set holds N = K log blocks, as the paper), on stand-ins for the
//! paper's two traces. Per point: merges by kind (Fig. 6), the associativity of merged log
//! blocks (Fig. 7), the worst merge blocking time (Fig. 8) and the total I/O time (Fig. 9).
//!
//! Stand-ins (the traces are not public): `web` imitates the Internet Explorer trace with the
//! `web` workload (a browser's disk cache on a FAT32 volume: many small files written whole,
//! evicted and read back, hot FAT, directory and index writes; [`crate::workload::web`]);
//! `pc` imitates the PC-applications trace with the `desktop` workload (small random and
//! large sequential I/O). Both run one request at a time (the paper's trace-driven
//! simulation).
//!
//! Every point runs once per seed (`seeds`, one thread each), and its measured window is
//! run in two halves on the same simulation (the second continuing the first's stream and
//! device), so that each figure is also known over the first and the second half of the
//! window: a claim whose halves fall on different sides of its bound is "not measured: not
//! stationary at this size" ([`crate::experiment::claims`]).

use std::cell::RefCell;
use std::rc::Rc;

use serde::Serialize;

use crate::config::ExperimentConfig;
use crate::stats::build_report;
use crate::workload::{parse_spec, LoopMode, RequestSource};
use crate::{SimError, Simulation};

pub mod claims;
pub use claims::claims;

/// The traces' stand-ins: (name, workload spec without count). The paper's Internet Explorer
/// trace ("many small random access files") has two: `web`, a browser cache on a FAT32
/// volume, and `hotcold`, uniformly random 2-8 KiB requests with 90% of them on 1% of the
/// space; the claims are judged on both. `pc` stands in for the PC-applications trace.
pub const WORKLOADS: [(&str, &str); 3] = [
    ("web", "web:qd=1"),
    ("pc", "desktop:qd=1"),
    (
        "hotcold",
        "hotcold:read=0.3,bs=2k-8k,align=2k,hot=0.01:0.9,qd=1",
    ),
];

/// What to run.
#[derive(Debug, Clone, Serialize)]
pub struct KastStudy {
    pub device: String,
    pub log_blocks: u32,
    pub ks: Vec<u32>,
    pub workloads: Vec<String>,
    pub requests: u64,
    /// Requests of the same workload run at least before the measured window, not measured
    /// (the sequential fill leaves every FTL in a state the workload then moves away from);
    /// the warm-up goes on until the merge rate is steady (`KastStudy::warm_up`).
    pub warmup: u64,
    /// One run of every point per seed (claims need at least 3).
    pub seeds: Vec<u64>,
    /// Extra `--set` assignments (e.g. a smaller device for tests).
    pub sets: Vec<String>,
}

impl Default for KastStudy {
    fn default() -> Self {
        KastStudy {
            device: "kast-slc".into(),
            log_blocks: 32,
            ks: vec![1, 2, 4, 8, 16, 32],
            workloads: vec!["web".into(), "hotcold".into(), "pc".into()],
            requests: 20_000,
            warmup: 20_000,
            seeds: vec![1, 2, 3],
            sets: Vec::new(),
        }
    }
}

/// A point's figures over one half of its measured window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Half {
    pub merges: u64,
    pub associativity_max: u32,
    pub blocking_max_ns: u64,
    /// Mean blocking time of a merge (0 when none).
    pub blocking_mean_ns: f64,
    pub total_io_ns: u64,
    /// Log blocks merged at least once in this half (of `log_blocks`).
    pub log_blocks_merged: u32,
    /// Log blocks that held no log block in this half (SAST's sets its data-block sets do
    /// not fill).
    pub log_blocks_unused: u32,
    /// Oldest log block of this half, merged or still allocated at its end, in host page
    /// writes since its allocation.
    pub oldest_log_block_age_page_writes: u64,
}

/// One run.
#[derive(Debug, Clone, Serialize)]
pub struct KastPoint {
    pub seed: u64,
    pub workload: String,
    pub ftl: String,
    /// K (SAST, KAST); the sweep's K for BAST and FAST, which do not depend on it.
    pub k: u32,
    pub merges: u64,
    pub switch: u64,
    pub partial: u64,
    pub full: u64,
    /// Pages copied by all merges (what a merge costs besides its erases).
    pub pages_copied: u64,
    pub associativity_max: u32,
    pub associativity_mean: f64,
    pub blocking_max_ns: u64,
    /// Mean blocking time of a merge over the window (0 when none).
    pub blocking_mean_ns: f64,
    pub predicted_worst_ns: Option<u64>,
    /// Sum of the response times of the measured requests (the paper's I/O execution time).
    pub total_io_ns: u64,
    /// The figures over the first and the second half of the measured requests.
    pub halves: [Half; 2],
    /// Requests of the unmeasured warm-up (after the sequential fill).
    pub warmup_requests: u64,
    /// Whether the warm-up ended with merges at a steady rate ([`steady`]) rather than at its
    /// cap.
    pub warmup_steady: bool,
}

/// The first `left` requests of a shared source: the window's halves run as two runs of one
/// simulation on one stream.
struct Capped {
    inner: Rc<RefCell<Box<dyn RequestSource>>>,
    left: u64,
}

impl RequestSource for Capped {
    fn next_request(&mut self, now_ns: u64) -> Result<Option<crate::host::Request>, SimError> {
        if self.left == 0 {
            return Ok(None);
        }
        let r = self.inner.borrow_mut().next_request(now_ns)?;
        if r.is_some() {
            self.left -= 1;
        }
        Ok(r)
    }
    fn loop_mode(&self) -> LoopMode {
        self.inner.borrow().loop_mode()
    }
    fn expected_requests(&self) -> Option<u64> {
        Some(self.left)
    }
    fn in_warmup(&self) -> bool {
        self.inner.borrow().in_warmup()
    }
    fn describe(&self) -> serde_json::Value {
        self.inner.borrow().describe()
    }
}

impl KastStudy {
    /// The (workload, FTL, K) runs of one seed: BAST and FAST once (they do not depend on K).
    fn cases(&self) -> Vec<(String, &'static str, u32)> {
        let mut cases = Vec::new();
        for w in &self.workloads {
            for ftl in ["bast", "fast"] {
                cases.push((w.clone(), ftl, *self.ks.first().unwrap_or(&1)));
            }
            for &k in &self.ks {
                cases.push((w.clone(), "sast", k));
                cases.push((w.clone(), "kast", k));
            }
        }
        cases
    }

    /// Runs every point on every seed (a thread per seed), calling `progress(done, total,
    /// what)`; points in seed order, each seed's in the order of its cases.
    pub fn run(
        &self,
        progress: &mut dyn FnMut(usize, usize, &str),
    ) -> Result<Vec<KastPoint>, SimError> {
        let cases = self.cases();
        let total = cases.len() * self.seeds.len();
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let results = std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .seeds
                .iter()
                .map(|&seed| {
                    let (tx, cases) = (tx.clone(), &cases);
                    scope.spawn(move || self.run_seed(seed, cases, &tx))
                })
                .collect();
            drop(tx);
            let mut done = 0;
            progress(0, total, "start");
            for what in rx {
                done += 1;
                progress(done, total, &what);
            }
            handles
                .into_iter()
                .map(|h| h.join().expect("a seed's thread panicked"))
                .collect::<Vec<_>>()
        });
        progress(total, total, "done");
        let mut points = Vec::new();
        for r in results {
            points.extend(r?);
        }
        Ok(points)
    }

    fn run_seed(
        &self,
        seed: u64,
        cases: &[(String, &'static str, u32)],
        tx: &std::sync::mpsc::Sender<String>,
    ) -> Result<Vec<KastPoint>, SimError> {
        let mut points = Vec::new();
        for (w, ftl, k) in cases {
            let p = self.run_point(seed, w, ftl, *k)?;
            let _ = tx.send(format!("seed {seed}: {w} {ftl} K={k}"));
            if ftl == &"bast" || ftl == &"fast" {
                points.extend(self.ks.iter().map(|&k| KastPoint { k, ..p.clone() }));
            } else {
                points.push(p);
            }
        }
        Ok(points)
    }

    fn config(
        &self,
        seed: u64,
        workload: &str,
        ftl: &str,
        k: u32,
    ) -> Result<ExperimentConfig, SimError> {
        let spec = WORKLOADS
            .iter()
            .find(|w| w.0 == workload)
            .ok_or_else(|| {
                crate::config::ConfigError::invalid(
                    "--workloads",
                    workload,
                    "unknown stand-in",
                    "web, pc, hotcold",
                )
            })?
            .1;
        let mut sets = vec![
            format!("ftl.name=\"{ftl}\""),
            format!("ftl.log_blocks={}", self.log_blocks),
            format!("run.seed={seed}"),
            "run.precondition=1.0".into(),
            // A sequential fill only: a uniformly random pass leaves cold random pages in the
            // log blocks that decided FAST's worst merges (issue 27); the paper has none.
            "run.precondition_max_passes=0".into(),
        ];
        match ftl {
            "sast" => {
                sets.push(format!("ftl.set_data_blocks={k}"));
                sets.push(format!("ftl.set_log_blocks={}", k.min(self.log_blocks)));
            }
            "kast" => sets.push(format!("ftl.max_associativity={k}")),
            _ => {}
        }
        sets.extend(self.sets.iter().cloned());
        let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
        let mut config = ExperimentConfig::with_sets(&self.device, &refs)?;
        let mut w = parse_spec(spec)?;
        w.count = self.warmup * WARMUP_MAX_FACTOR + self.requests;
        config.workload = w;
        config.validate()?;
        Ok(config)
    }

    /// One point: precondition, the warm-up, then the measured window in two halves (runs of
    /// one simulation on one stream: together exactly the single run of warm-up and window,
    /// each measured on its own).
    fn run_point(
        &self,
        seed: u64,
        workload: &str,
        ftl: &str,
        k: u32,
    ) -> Result<KastPoint, SimError> {
        let config = self.config(seed, workload, ftl, k)?;
        let mut sim = Simulation::new(&config)?;
        if config.run.precondition > 0.0 {
            sim.precondition()?;
        }
        let inner = Rc::new(RefCell::new(crate::workload_source(&config, &sim)?));
        let (warmup_requests, warmup_steady) = self.warm_up(&mut sim, &inner)?;
        let first = self.requests / 2;
        let (a, ma) = run_half(&mut sim, &inner, first)?;
        let (b, mb) = run_half(&mut sim, &inner, self.requests - first)?;
        let merges = a.merges + b.merges;
        let per_merge = |x: f64| if merges == 0 { 0.0 } else { x / merges as f64 };
        Ok(KastPoint {
            seed,
            workload: workload.into(),
            ftl: ftl.into(),
            k,
            merges,
            switch: ma.switch + mb.switch,
            partial: ma.partial + mb.partial,
            full: ma.full + mb.full,
            pages_copied: ma.pages_copied + mb.pages_copied,
            associativity_max: a.associativity_max.max(b.associativity_max),
            associativity_mean: per_merge(
                ma.associativity.mean * ma.total as f64 + mb.associativity.mean * mb.total as f64,
            ),
            blocking_max_ns: a.blocking_max_ns.max(b.blocking_max_ns),
            blocking_mean_ns: per_merge(
                a.blocking_mean_ns * a.merges as f64 + b.blocking_mean_ns * b.merges as f64,
            ),
            predicted_worst_ns: mb.predicted_worst_blocking_ns,
            total_io_ns: a.total_io_ns + b.total_io_ns,
            halves: [a, b],
            warmup_requests,
            warmup_steady,
        })
    }

    /// The unmeasured warm-up: `warmup` requests, then chunks of a quarter of that until two
    /// chunks in a row merge at the same rate ([`steady`]), at most `WARMUP_MAX_FACTOR` x
    /// `warmup` requests. Returns the requests run and whether the merges were steady.
    fn warm_up(
        &self,
        sim: &mut Simulation,
        inner: &Rc<RefCell<Box<dyn RequestSource>>>,
    ) -> Result<(u64, bool), SimError> {
        if self.warmup == 0 {
            return Ok((0, false));
        }
        run_half(sim, inner, self.warmup)?;
        let chunk = (self.warmup / 4).max(1);
        let mut done = self.warmup + chunk;
        let mut before = run_half(sim, inner, chunk)?.0.merges;
        loop {
            let last = run_half(sim, inner, chunk)?.0.merges;
            done += chunk;
            if steady(before, last) {
                return Ok((done, true));
            }
            if done + chunk > self.warmup * WARMUP_MAX_FACTOR {
                return Ok((done, false));
            }
            before = last;
        }
    }
}

/// The warm-up stops at most at this multiple of `warmup`.
pub const WARMUP_MAX_FACTOR: u64 = 4;

/// Whether two equal chunks of requests merged at the same rate: within 10%, or within two
/// standard deviations of counting noise (2·sqrt(a + b), the counts taken as Poisson).
pub fn steady(a: u64, b: u64) -> bool {
    let diff = a.abs_diff(b) as f64;
    diff <= 0.1 * a.max(b) as f64 || diff <= 2.0 * ((a + b) as f64).sqrt()
}

/// The next `requests` of `inner` on `sim`, measured on their own.
fn run_half(
    sim: &mut Simulation,
    inner: &Rc<RefCell<Box<dyn RequestSource>>>,
    requests: u64,
) -> Result<(Half, crate::ftl::merge::MergeReport), SimError> {
    let capped = Capped {
        inner: Rc::clone(inner),
        left: requests,
    };
    let source = sim.run(Box::new(capped), &mut |_| {})?;
    let describe = source.describe();
    crate::check_measured(sim, &describe)?;
    let report = build_report(sim, describe);
    let m = report.merges.unwrap_or_default();
    let all = &report.host.all;
    let half = Half {
        merges: m.total,
        associativity_max: m.associativity.max,
        blocking_max_ns: m.blocking_ns.max,
        blocking_mean_ns: m.blocking_ns.mean,
        // The exact mean times the count: the sum of the latencies.
        total_io_ns: (all.latency_ns.mean * all.count as f64).round() as u64,
        log_blocks_merged: m.log_buffer.map_or(0, |u| u.log_blocks_merged),
        log_blocks_unused: m.log_buffer.map_or(0, |u| u.log_blocks_unused),
        oldest_log_block_age_page_writes: m.log_buffer.map_or(0, |u| {
            u.oldest_merged_age_page_writes
                .max(u.oldest_unmerged_age_page_writes)
        }),
    };
    Ok((half, m))
}

/// A figure's title and how a point gives its value.
type Metric = (&'static str, fn(&KastPoint) -> String);

/// The figures' data as text tables: one per workload and metric, K across, of the first
/// seed's points (the title says which; results.csv has every seed's).
pub fn table(points: &[KastPoint]) -> String {
    let mut out = String::new();
    let Some(seed) = points.first().map(|p| p.seed) else {
        return out;
    };
    out += &warmup_line(points);
    let points: Vec<KastPoint> = points.iter().filter(|p| p.seed == seed).cloned().collect();
    let points = points.as_slice();
    let mut workloads: Vec<&str> = points.iter().map(|p| p.workload.as_str()).collect();
    workloads.dedup();
    let metrics: [Metric; 8] = [
        ("Fig. 6 log block merges", |p| p.merges.to_string()),
        ("Fig. 7 max associativity of a merged log block", |p| {
            p.associativity_max.to_string()
        }),
        ("Fig. 8 worst merge blocking time (ms)", |p| {
            format!("{:.1}", p.blocking_max_ns as f64 / 1e6)
        }),
        ("Fig. 8 mean merge blocking time (ms)", |p| {
            format!("{:.1}", p.blocking_mean_ns / 1e6)
        }),
        ("Fig. 9 total I/O time (s)", |p| {
            format!("{:.2}", p.total_io_ns as f64 / 1e9)
        }),
        ("pages copied by merges (thousands)", |p| {
            format!("{:.1}", p.pages_copied as f64 / 1e3)
        }),
        (
            "log blocks merged in each half of the window (fewest; unused in brackets)",
            |p| {
                let h = p.halves.iter().min_by_key(|h| h.log_blocks_merged);
                h.map_or("-".into(), |h| {
                    format!("{} ({})", h.log_blocks_merged, h.log_blocks_unused)
                })
            },
        ),
        (
            "oldest log block (thousand host page writes since allocation)",
            |p| {
                let age = p.halves.iter().map(|h| h.oldest_log_block_age_page_writes);
                format!("{:.1}", age.max().unwrap_or(0) as f64 / 1e3)
            },
        ),
    ];
    for w in workloads {
        let ks: Vec<u32> = {
            let mut ks: Vec<u32> = points
                .iter()
                .filter(|p| p.workload == w)
                .map(|p| p.k)
                .collect();
            ks.sort_unstable();
            ks.dedup();
            ks
        };
        for (title, value) in metrics {
            out += &format!("{w}: {title} (seed {seed})\n{:<6}", "K");
            for k in &ks {
                out += &format!("{k:>10}");
            }
            out += "\n";
            for ftl in ["bast", "fast", "sast", "kast"] {
                out += &format!("{ftl:<6}");
                for &k in &ks {
                    let p = points
                        .iter()
                        .find(|p| p.workload == w && p.ftl == ftl && p.k == k);
                    out += &format!("{:>10}", p.map_or("-".into(), value));
                }
                out += "\n";
            }
            out += "\n";
        }
    }
    out
}

/// The warm-up's length over every point and how many ended steady.
fn warmup_line(points: &[KastPoint]) -> String {
    // BAST and FAST run once and are listed at every K.
    let first_k = points.iter().map(|p| p.k).min().unwrap_or(0);
    let runs: Vec<&KastPoint> = points
        .iter()
        .filter(|p| !matches!(p.ftl.as_str(), "bast" | "fast") || p.k == first_k)
        .collect();
    let lengths = runs.iter().map(|p| p.warmup_requests);
    let (min, max) = (lengths.clone().min(), lengths.max());
    let steady = runs.iter().filter(|p| p.warmup_steady).count();
    format!(
        "warm-up after a sequential fill (unmeasured): {} to {} requests a run; merge rate \
         steady at its end in {steady} of {} runs\n\n",
        min.unwrap_or(0),
        max.unwrap_or(0),
        runs.len()
    )
}

/// One CSV row per point.
pub fn csv(points: &[KastPoint]) -> String {
    let mut out = String::from(
        "seed,workload,ftl,k,merges,switch,partial,full,pages_copied,associativity_max,associativity_mean,blocking_max_ns,blocking_mean_ns,predicted_worst_ns,total_io_ns,warmup_requests,warmup_steady\n",
    );
    for p in points {
        out += &format!(
            "{},{},{},{},{},{},{},{},{},{},{:.3},{},{:.0},{},{:.0},{},{}\n",
            p.seed,
            p.workload,
            p.ftl,
            p.k,
            p.merges,
            p.switch,
            p.partial,
            p.full,
            p.pages_copied,
            p.associativity_max,
            p.associativity_mean,
            p.blocking_max_ns,
            p.blocking_mean_ns,
            p.predicted_worst_ns
                .map_or(String::new(), |v| v.to_string()),
            p.total_io_ns,
            p.warmup_requests,
            p.warmup_steady
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The window run in two halves is the single run of the whole window: the same merges,
    /// the same total I/O time, each half measured on its own.
    #[test]
    fn the_two_halves_add_up_to_the_single_run() {
        let study = KastStudy {
            requests: 600,
            warmup: 0,
            seeds: vec![2],
            sets: vec!["geometry.blocks_per_plane=512".into()],
            ..KastStudy::default()
        };
        for (ftl, k) in [("kast", 4), ("fast", 1)] {
            let p = study.run_point(2, "web", ftl, k).unwrap();
            let config = study.config(2, "web", ftl, k).unwrap();
            let whole = crate::run_experiment(&config, &mut |_| {}).unwrap();
            let m = whole.merges.unwrap_or_default();
            let all = &whole.host.all;
            assert_eq!(p.merges, m.total, "{ftl}: {p:?}");
            assert!(
                p.merges > 0 && p.halves[0].merges > 0 && p.halves[1].merges > 0,
                "{p:?}"
            );
            assert_eq!(p.halves[0].merges + p.halves[1].merges, p.merges);
            assert_eq!(p.pages_copied, m.pages_copied);
            assert_eq!(p.associativity_max, m.associativity.max);
            assert_eq!(p.blocking_max_ns, m.blocking_ns.max);
            let total = (all.latency_ns.mean * all.count as f64).round() as u64;
            assert!(
                p.total_io_ns.abs_diff(total) <= 2,
                "{} vs {total}",
                p.total_io_ns
            );
        }
        // A warm-up runs first and is left out of the window.
        let warm = KastStudy {
            warmup: 300,
            ..study.clone()
        };
        let p = warm.run_point(2, "web", "kast", 4).unwrap();
        let config = warm.config(2, "web", "kast", 4).unwrap();
        assert_eq!(config.workload.count, 4 * 300 + 600);
        let whole = crate::run_experiment(&config, &mut |_| {}).unwrap();
        assert!(p.merges < whole.merges.unwrap_or_default().total, "{p:?}");
        assert_eq!(p.halves[0].merges + p.halves[1].merges, p.merges, "{p:?}");
    }

    #[test]
    fn every_seed_runs_every_point_and_the_table_shows_the_first() {
        let study = KastStudy {
            requests: 200,
            ks: vec![2],
            workloads: vec!["web".into()],
            seeds: vec![5, 6],
            sets: vec!["geometry.blocks_per_plane=512".into()],
            ..KastStudy::default()
        };
        let mut calls = 0;
        let points = study.run(&mut |_, _, _| calls += 1).unwrap();
        assert_eq!(points.len(), 2 * 4);
        assert_eq!(points.iter().filter(|p| p.seed == 5).count(), 4);
        assert!(calls >= 2 * 4, "{calls}");
        assert!(table(&points).contains("(seed 5)"));
        assert_eq!(csv(&points).lines().count(), 9);
    }
}
