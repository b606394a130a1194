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

use serde::Serialize;

use crate::config::ExperimentConfig;
use crate::workload::parse_spec;
use crate::SimError;

pub mod claims;
pub use claims::claims;

/// The traces' stand-ins: (name, workload spec without count). `hotcold` (uniformly random
/// 2-8 KiB requests, 90% of them on 1% of the space) was the web stand-in before the `web`
/// model; it is kept as the purely random workload to compare with (not run by default).
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
    pub seed: u64,
    /// Extra `--set` assignments (e.g. a smaller device for tests).
    pub sets: Vec<String>,
}

impl Default for KastStudy {
    fn default() -> Self {
        KastStudy {
            device: "kast-slc".into(),
            log_blocks: 32,
            ks: vec![1, 2, 4, 8, 16, 32],
            workloads: vec!["web".into(), "pc".into()],
            requests: 20_000,
            seed: 1,
            sets: Vec::new(),
        }
    }
}

/// One run.
#[derive(Debug, Clone, Serialize)]
pub struct KastPoint {
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
    pub predicted_worst_ns: Option<u64>,
    /// Sum of the response times of the measured requests (the paper's I/O execution time).
    pub total_io_ns: u64,
}

impl KastStudy {
    /// Runs every point, calling `progress(done, total, what)`.
    pub fn run(
        &self,
        progress: &mut dyn FnMut(usize, usize, &str),
    ) -> Result<Vec<KastPoint>, SimError> {
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
        let mut points = Vec::new();
        for (i, (w, ftl, k)) in cases.iter().enumerate() {
            progress(i, cases.len(), &format!("{w} {ftl} K={k}"));
            let p = self.run_point(w, ftl, *k)?;
            if ftl == &"bast" || ftl == &"fast" {
                points.extend(self.ks.iter().map(|&k| KastPoint { k, ..p.clone() }));
            } else {
                points.push(p);
            }
        }
        progress(cases.len(), cases.len(), "done");
        Ok(points)
    }

    fn config(&self, workload: &str, ftl: &str, k: u32) -> Result<ExperimentConfig, SimError> {
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
            format!("run.seed={}", self.seed),
            "run.precondition=1.0".into(),
            "run.precondition_max_passes=1".into(),
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
        w.count = self.requests;
        config.workload = w;
        config.validate()?;
        Ok(config)
    }

    fn run_point(&self, workload: &str, ftl: &str, k: u32) -> Result<KastPoint, SimError> {
        let config = self.config(workload, ftl, k)?;
        let report = crate::run_experiment(&config, &mut |_| {})?;
        let m = report.merges.unwrap_or_default();
        let all = &report.host.all;
        Ok(KastPoint {
            workload: workload.into(),
            ftl: ftl.into(),
            k,
            merges: m.total,
            switch: m.switch,
            partial: m.partial,
            full: m.full,
            pages_copied: m.pages_copied,
            associativity_max: m.associativity.max,
            associativity_mean: m.associativity.mean,
            blocking_max_ns: m.blocking_ns.max,
            predicted_worst_ns: m.predicted_worst_blocking_ns,
            // The exact mean times the count: the sum of the latencies.
            total_io_ns: (all.latency_ns.mean * all.count as f64).round() as u64,
        })
    }
}

/// A figure's title and how a point gives its value.
type Metric = (&'static str, fn(&KastPoint) -> String);

/// The figures' data as text tables: one per workload and metric, K across.
pub fn table(points: &[KastPoint]) -> String {
    let mut out = String::new();
    let mut workloads: Vec<&str> = points.iter().map(|p| p.workload.as_str()).collect();
    workloads.dedup();
    let metrics: [Metric; 5] = [
        ("Fig. 6 log block merges", |p| p.merges.to_string()),
        ("Fig. 7 max associativity of a merged log block", |p| {
            p.associativity_max.to_string()
        }),
        ("Fig. 8 worst merge blocking time (ms)", |p| {
            format!("{:.1}", p.blocking_max_ns as f64 / 1e6)
        }),
        ("Fig. 9 total I/O time (s)", |p| {
            format!("{:.2}", p.total_io_ns as f64 / 1e9)
        }),
        ("pages copied by merges (thousands)", |p| {
            format!("{:.1}", p.pages_copied as f64 / 1e3)
        }),
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
            out += &format!("{w}: {title}\n{:<6}", "K");
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

/// One CSV row per point.
pub fn csv(points: &[KastPoint]) -> String {
    let mut out = String::from(
        "workload,ftl,k,merges,switch,partial,full,pages_copied,associativity_max,associativity_mean,blocking_max_ns,predicted_worst_ns,total_io_ns\n",
    );
    for p in points {
        out += &format!(
            "{},{},{},{},{},{},{},{},{},{:.3},{},{},{:.0}\n",
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
            p.predicted_worst_ns
                .map_or(String::new(), |v| v.to_string()),
            p.total_io_ns
        );
    }
    out
}
