//! fmmu.txt section 5 on `fmmu-16ch`: the four synthetic workloads after a full sequential fill
//! (Figs. 11 and 12: throughput and the utilisation of host link, NAND bus, chips and FTL), the
//! traces at 512 outstanding and zero inter-arrival (Fig. 13: elapsed time normalised to the
//! ideal; the paper's MSR and WebSearch traces are not here, the MQSim excerpts in
//! /work/shared/traces stand in when given) and 4 KiB random reads from 1 ch x 1 way to 32 ch x
//! 8 ways on a PCIe 3.0 x32 link (Fig. 14), each point beside its closed form
//! ([`super::fmmu`]).
//!
//! The map-cache schemes are rows of [`SCHEMES`]: adding an FTL is one line. Until the demand
//! FTLs are merged the only row is the ideal, pagemap with no CPU cost (its map is in RAM, so
//! it has no translation reads: the closed forms' `translation_reads = 0`).

use serde::Serialize;

use super::fmmu::{self as closed, Device, Limit};
use crate::config::ExperimentConfig;
use crate::workload::parse_spec;
use crate::SimError;

/// One map-cache scheme: an FTL, its cores and its settings.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Scheme {
    pub label: &'static str,
    pub ftl: &'static str,
    pub cores: u32,
    pub sets: &'static [&'static str],
}

/// The schemes compared (fmmu.txt 5.1: 1,088 KiB of map cache; DFTL all CMT, CDFTL and FMMU
/// 64 KiB CMT + 1,024 KiB CTP; DFTL and CDFTL on 1, 2 and 4 cores).
pub const SCHEMES: &[Scheme] = &[Scheme {
    label: "ideal",
    ftl: "pagemap",
    cores: 1,
    sets: &[],
}];

/// The synthetic workloads of Fig. 11: (name, workload spec without count).
pub const SYNTHETIC: [(&str, &str); 4] = [
    ("seq-write-64k", "seqwrite:bs=64k,qd=512"),
    ("seq-read-64k", "seqread:bs=64k,qd=512"),
    ("rand-write-4k", "randwrite:bs=4k,qd=512"),
    ("rand-read-4k", "randread:bs=4k,qd=512"),
];

/// The parts of the study.
pub const PARTS: [&str; 3] = ["synthetic", "traces", "scaling"];

/// What to run.
#[derive(Debug, Clone, Serialize)]
pub struct FmmuStudy {
    /// Pages per block (None: the preset's 256); fewer keep the fill short, limits unchanged.
    pub pages_per_block: Option<u32>,
    /// Requests measured per synthetic point and per scaling point.
    pub requests: u64,
    /// Random writes measured (GC must run throughout: several times the spare space).
    pub random_write_requests: u64,
    /// (channels, ways) of Fig. 14.
    pub scaling: Vec<(u32, u32)>,
    /// Trace files of Fig. 13.
    pub traces: Vec<String>,
    /// Parts to run: `synthetic`, `traces`, `scaling`.
    pub parts: Vec<String>,
    pub seed: u64,
}

impl FmmuStudy {
    /// The full study.
    pub fn full() -> FmmuStudy {
        let mut scaling = Vec::new();
        for channels in [1, 2, 4, 8, 16, 32] {
            for ways in [1, 2, 4, 8] {
                scaling.push((channels, ways));
            }
        }
        FmmuStudy {
            pages_per_block: None,
            requests: 100_000,
            random_write_requests: 4_000_000,
            scaling,
            traces: Vec::new(),
            parts: PARTS.iter().map(|p| p.to_string()).collect(),
            seed: 1,
        }
    }

    /// Sizes for CI: 32 pages per block, few requests, three scaling points.
    pub fn quick() -> FmmuStudy {
        FmmuStudy {
            pages_per_block: Some(32),
            requests: 3_000,
            random_write_requests: 20_000,
            scaling: vec![(1, 1), (4, 4), (32, 8)],
            ..FmmuStudy::full()
        }
    }
}

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
    pub iops: f64,
    pub bytes_per_s: f64,
    pub elapsed_ns: u64,
    pub write_amplification: Option<f64>,
    /// Busy shares: the busier host link direction, NAND buses, chips, FTL CPU.
    pub host_link: f64,
    pub nand_bus: f64,
    pub chips: f64,
    pub ftl_cpu: f64,
    /// The closed form's limit in the point's unit (IOPS, or bytes/s for sequential), when
    /// there is one.
    pub closed_form: Option<f64>,
}

impl FmmuStudy {
    /// Runs every part, calling `progress(done, total, what)`.
    pub fn run(
        &self,
        progress: &mut dyn FnMut(usize, usize, &str),
    ) -> Result<Vec<FmmuPoint>, SimError> {
        let wants = |part: &str| self.parts.iter().any(|p| p == part);
        let mut cases: Vec<(&'static str, Scheme, String, u32, u32)> = Vec::new();
        for s in SCHEMES {
            if wants("synthetic") {
                for (name, _) in SYNTHETIC {
                    cases.push(("synthetic", *s, name.into(), 16, 8));
                }
            }
            if wants("traces") {
                for t in &self.traces {
                    cases.push(("traces", *s, t.clone(), 16, 8));
                }
            }
        }
        let scaled = SCHEMES
            .iter()
            .find(|s| s.label == "fmmu")
            .unwrap_or(&SCHEMES[0]);
        if wants("scaling") {
            for &(c, w) in &self.scaling {
                cases.push(("scaling", *scaled, "rand-read-4k".into(), c, w));
            }
        }
        let mut points = Vec::with_capacity(cases.len());
        for (i, (part, scheme, workload, c, w)) in cases.iter().enumerate() {
            progress(
                i,
                cases.len(),
                &format!("{part} {} {workload} {c}x{w}", scheme.label),
            );
            points.push(self.run_point(part, scheme, workload, *c, *w)?);
        }
        progress(cases.len(), cases.len(), "done");
        Ok(points)
    }

    fn config(
        &self,
        part: &str,
        scheme: &Scheme,
        workload: &str,
        channels: u32,
        ways: u32,
    ) -> Result<ExperimentConfig, SimError> {
        let mut sets = vec![
            format!("ftl.name=\"{}\"", scheme.ftl),
            format!("cpu.cores={}", scheme.cores),
            format!("run.seed={}", self.seed),
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
        if part == "scaling" {
            sets.push(format!("host.link_mb_per_s={}", closed::PCIE3_X32_MB_PER_S));
        }
        if part == "traces" {
            sets.push(format!("trace.path={workload:?}"));
            sets.push("trace.replay=\"closed\"".into());
            sets.push("trace.queue_depth=512".into());
        }
        sets.extend(scheme.sets.iter().map(|s| s.to_string()));
        let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
        let mut config = ExperimentConfig::with_sets("fmmu-16ch", &sets)?;
        if part != "traces" {
            let spec = SYNTHETIC
                .iter()
                .find(|s| s.0 == workload)
                .map_or("", |s| s.1);
            let mut w = parse_spec(spec)?;
            w.count = if workload == "rand-write-4k" {
                self.random_write_requests
            } else {
                self.requests
            };
            config.workload = w;
        }
        config.validate()?;
        Ok(config)
    }

    fn run_point(
        &self,
        part: &'static str,
        scheme: &Scheme,
        workload: &str,
        channels: u32,
        ways: u32,
    ) -> Result<FmmuPoint, SimError> {
        let config = self.config(part, scheme, workload, channels, ways)?;
        let r = crate::run_experiment(&config, &mut |_| {})?;
        let closed_form = (scheme.label == "ideal" || part == "scaling")
            .then(|| ideal_limit(&Device::of(&config), workload))
            .flatten()
            .map(|l| l.value());
        Ok(FmmuPoint {
            part,
            scheme: scheme.label,
            ftl: scheme.ftl,
            cores: scheme.cores,
            workload: workload.into(),
            channels,
            ways,
            iops: r.host.all.iops,
            bytes_per_s: r.host.all.mb_per_s * 1e6,
            elapsed_ns: r.elapsed_ns,
            write_amplification: r.write_amplification,
            host_link: r.utilisation.host_link_down.max(r.utilisation.host_link_up),
            nand_bus: r.utilisation.channels.mean,
            chips: r.utilisation.dies.mean,
            ftl_cpu: r.utilisation.cpu,
            closed_form,
        })
    }
}

/// The closed form of a synthetic workload with the map in RAM (random write: none, its
/// write amplification is the run's; see docs/fmmu.md).
fn ideal_limit(dev: &Device, workload: &str) -> Option<Limit> {
    match workload {
        "seq-write-64k" => Some(closed::seq_write(dev, 1.0)),
        "seq-read-64k" => Some(closed::seq_read(dev)),
        "rand-read-4k" => Some(closed::rand_read(dev, 4096.0, 0.0, 0.0)),
        _ => None,
    }
}

/// CSV rows, one per point.
pub fn csv(points: &[FmmuPoint]) -> String {
    let mut out = String::from(
        "part,scheme,ftl,cores,workload,channels,ways,iops,bytes_per_s,elapsed_ns,\
         write_amplification,host_link,nand_bus,chips,ftl_cpu,closed_form\n",
    );
    for p in points {
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{:.1},{:.1},{},{},{:.4},{:.4},{:.4},{:.4},{}\n",
            p.part,
            p.scheme,
            p.ftl,
            p.cores,
            p.workload,
            p.channels,
            p.ways,
            p.iops,
            p.bytes_per_s,
            p.elapsed_ns,
            p.write_amplification
                .map_or(String::new(), |w| format!("{w:.4}")),
            p.host_link,
            p.nand_bus,
            p.chips,
            p.ftl_cpu,
            p.closed_form.map_or(String::new(), |c| format!("{c:.1}")),
        ));
    }
    out
}

/// The table: throughput, closed form and utilisations per point; traces normalised to ideal.
pub fn table(points: &[FmmuPoint]) -> String {
    let mut out = format!(
        "{:<9} {:<8} {:>5} {:<28} {:>6} {:>12} {:>12} {:>7} {:>6} {:>6} {:>6} {:>6}\n",
        "part",
        "scheme",
        "cores",
        "workload",
        "geom",
        "result",
        "closed form",
        "of it",
        "link",
        "bus",
        "chips",
        "ftl"
    );
    for p in points {
        let sequential = p.workload.starts_with("seq");
        let show = |v: f64| {
            if sequential {
                format!("{:.2} GB/s", v / 1e9)
            } else if p.part == "traces" {
                let ideal = points
                    .iter()
                    .find(|q| q.part == "traces" && q.scheme == "ideal" && q.workload == p.workload)
                    .map_or(f64::NAN, |q| q.elapsed_ns as f64);
                format!("{:.3}x ideal", p.elapsed_ns as f64 / ideal)
            } else {
                format!("{:.0} KIOPS", v / 1e3)
            }
        };
        let value = if sequential { p.bytes_per_s } else { p.iops };
        let (closed, share) = p.closed_form.map_or(("-".into(), "-".into()), |c| {
            (show(c), format!("{:.1}%", 100.0 * value / c))
        });
        out.push_str(&format!(
            "{:<9} {:<8} {:>5} {:<28} {:>6} {:>12} {:>12} {:>7} {:>5.1}% {:>5.1}% {:>5.1}% {:>5.1}%\n",
            p.part,
            p.scheme,
            p.cores,
            p.workload.rsplit('/').next().unwrap_or(""),
            format!("{}x{}", p.channels, p.ways),
            show(value),
            closed,
            share,
            100.0 * p.host_link,
            100.0 * p.nand_bus,
            100.0 * p.chips,
            100.0 * p.ftl_cpu,
        ));
    }
    out
}
