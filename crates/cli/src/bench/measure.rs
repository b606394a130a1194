//! Measuring one line: wall time of preconditioning and of the measured run, peak resident
//! memory (reset before each line), and the figures the report gives; progress on standard
//! error for lines that take long.

use std::time::{Duration, Instant};

use flashlab_sim::engine::PreconditionProgress;
use flashlab_sim::stats::build_report;
use flashlab_sim::{SimError, Simulation};

use super::plan::{Line, ScalingSize};

/// A line reports its progress on standard error once it has taken this long, and then again
/// after each such interval.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// Figures of one benchmark line: a device and FTL in one mode.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Figures {
    pub section: &'static str,
    pub ftl: String,
    pub device: String,
    pub mode: &'static str,
    pub requests: u64,
    pub precondition_s: f64,
    pub run_s: f64,
    pub requests_per_s: f64,
    pub peak_rss_mib: Option<f64>,
    pub state_mib: f64,
    pub write_amplification: Option<f64>,
    pub gc_victims: u64,
    pub merges: Option<u64>,
    pub simulated_s: f64,
    /// The workload of an FTL or rtos line, the trace file of a trace line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    pub precondition: PreconditionFigures,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtos: Option<RtosFigures>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaling: Option<ScalingFigures>,
}

/// What preconditioning wrote and how fast: mapping units of the sequential fill, random
/// overwrites, and units the idle background GC moved at the end, per wall second.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct PreconditionFigures {
    pub fill_units: u64,
    pub random_writes: u64,
    pub idle_gc_units_moved: u64,
    /// The sum of the three.
    pub units_written: u64,
    pub units_per_s: f64,
    /// Wall time of the fill, and of the rest (random overwrites, idle GC).
    pub fill_s: f64,
    pub random_s: f64,
    pub random_passes: f64,
    pub steady: bool,
    /// Of the last random window.
    pub write_amplification: f64,
    /// Precondition section: the pagemap line's units per second over this line's (how many
    /// times slower this FTL preconditions; issue 28 asks at most 1.3 of the demand-paged
    /// FTLs); absent on other sections' lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x_pagemap: Option<f64>,
}

/// The simulated firmware's kernel in the measured run (an mt-ftl or st-ftl line).
#[derive(Debug, Clone, serde::Serialize)]
pub struct RtosFigures {
    pub context_switches: u64,
    pub context_switches_per_request: f64,
    /// Shares of the simulated time (None in functional-only runs, which take none).
    pub cpu_utilisation: Option<f64>,
    pub polling_share: Option<f64>,
}

/// A scaling line: its size, and figures relative to the base size's line in the same mode.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScalingFigures {
    #[serde(flatten)]
    pub size: ScalingSize,
    /// Wall time per request over the base size's (filled once the section is measured).
    pub cost_per_request_ratio: Option<f64>,
    pub ratio_base_gib: Option<u32>,
    pub peak_rss_mib_per_gib: Option<f64>,
    pub state_mib_per_gib: f64,
}

/// Measures one line on a fresh simulation.
pub fn measure(line: &Line) -> Result<Figures, SimError> {
    let config = &line.config;
    let mut progress = Ticker::new(&line.label);
    reset_peak_rss();
    let t0 = Instant::now();
    let mut sim = Simulation::new(config)?;
    let mut fill_end = None;
    let summary = sim.precondition_with_progress(&mut |p| {
        if let PreconditionProgress::Fill {
            done_bytes,
            total_bytes,
        } = p
        {
            if done_bytes >= total_bytes {
                fill_end = Some(Instant::now());
            }
        }
        progress.tick(|| precondition_progress(p));
    })?;
    let t1 = Instant::now();
    let source = if line.precondition_only {
        None
    } else {
        let source = flashlab_sim::workload_source(config, &sim)?;
        let source = sim.run(source, &mut |p| {
            progress.tick(|| match p.expected {
                Some(n) => format!("{} of {n} requests", p.completed),
                None => format!("{} requests", p.completed),
            })
        })?;
        Some(source.describe())
    };
    let run_s = if line.precondition_only {
        0.0
    } else {
        t1.elapsed().as_secs_f64()
    };
    let unit_bytes = u64::from(sim.nand().layout().page_bytes / sim.ftl().units_per_page());
    let report = build_report(&sim, source.unwrap_or_default());
    let requests = if line.precondition_only {
        0
    } else {
        report.host.all.count
    };
    let fill_end = fill_end.unwrap_or(t1);
    let precondition = PreconditionFigures {
        fill_units: summary.fill_bytes / unit_bytes.max(1),
        random_writes: summary.random_writes,
        idle_gc_units_moved: summary.idle_gc_units_moved,
        units_written: summary.fill_bytes / unit_bytes.max(1)
            + summary.random_writes
            + summary.idle_gc_units_moved,
        units_per_s: 0.0,
        fill_s: (fill_end - t0).as_secs_f64(),
        random_s: (t1 - fill_end).as_secs_f64(),
        random_passes: summary.random_passes,
        steady: summary.steady,
        write_amplification: summary.write_amplification,
        x_pagemap: None,
    };
    let precondition_s = (t1 - t0).as_secs_f64();
    let precondition = PreconditionFigures {
        units_per_s: precondition.units_written as f64 / precondition_s.max(1e-9),
        ..precondition
    };
    let timed = !config.run.functional_only;
    let rtos = rtos_figures(&report.ftl_details["rtos"], requests, timed);
    let peak_rss_mib = peak_rss_bytes().map(|b| b as f64 / (1 << 20) as f64);
    let state_mib = report.device.state_bytes as f64 / (1 << 20) as f64;
    Ok(Figures {
        section: line.section.name(),
        ftl: report.ftl.clone(),
        device: report.preset.clone(),
        mode: line.mode,
        requests,
        precondition_s,
        run_s,
        requests_per_s: if line.precondition_only {
            0.0
        } else {
            requests as f64 / run_s.max(1e-9)
        },
        peak_rss_mib,
        state_mib,
        write_amplification: report.write_amplification,
        gc_victims: report.gc.gc_runs,
        merges: report.merges.as_ref().map(|m| m.total),
        simulated_s: report.elapsed_ns as f64 / 1e9,
        workload: line.what.clone(),
        precondition,
        rtos,
        scaling: line.scaling.map(|size| ScalingFigures {
            size,
            cost_per_request_ratio: None,
            ratio_base_gib: None,
            peak_rss_mib_per_gib: peak_rss_mib.map(|m| m / f64::from(size.device_gib)),
            state_mib_per_gib: state_mib / f64::from(size.device_gib),
        }),
    })
}

/// The kernel figures of an FTL report's `rtos` details, if it has them.
fn rtos_figures(rtos: &serde_json::Value, requests: u64, timed: bool) -> Option<RtosFigures> {
    let switches = rtos.get("context_switches")?.as_u64()?;
    let share = |key: &str| rtos[key].as_f64().filter(|_| timed);
    Some(RtosFigures {
        context_switches: switches,
        context_switches_per_request: switches as f64 / requests.max(1) as f64,
        cpu_utilisation: share("cpu_utilisation"),
        polling_share: share("polling_share"),
    })
}

/// Fills in the scaling lines' cost per request relative to the base size's line of the same
/// mode: 16 GiB when measured, else the first size.
pub fn relate_scaling(lines: &mut [Figures]) {
    let size = |f: &Figures| f.scaling.as_ref().map(|s| s.size.device_gib);
    let base_gib = if lines.iter().any(|f| size(f) == Some(16)) {
        16
    } else {
        match lines.first().and_then(size) {
            Some(gib) => gib,
            None => return,
        }
    };
    let base: Vec<(&'static str, f64)> = lines
        .iter()
        .filter(|f| size(f) == Some(base_gib))
        .map(|f| (f.mode, f.requests_per_s))
        .collect();
    for f in lines.iter_mut() {
        let Some(&(_, base_per_s)) = base.iter().find(|(m, _)| *m == f.mode) else {
            continue;
        };
        let per_s = f.requests_per_s;
        if let Some(s) = f.scaling.as_mut() {
            s.ratio_base_gib = Some(base_gib);
            s.cost_per_request_ratio = Some(base_per_s / per_s.max(1e-9));
        }
    }
}

fn precondition_progress(p: PreconditionProgress) -> String {
    match p {
        PreconditionProgress::Fill {
            done_bytes,
            total_bytes,
        } => format!(
            "preconditioning: fill {:.0}%",
            done_bytes as f64 * 100.0 / total_bytes.max(1) as f64
        ),
        PreconditionProgress::Random {
            passes,
            max_passes,
            write_amplification,
        } => format!(
            "preconditioning: random overwrites, {passes:.2} of at most {max_passes} passes, write amplification {write_amplification:.2}"
        ),
    }
}

/// Says on standard error how a long line is doing, every [`PROGRESS_EVERY`].
struct Ticker<'a> {
    label: &'a str,
    next: Instant,
    start: Instant,
}

impl<'a> Ticker<'a> {
    fn new(label: &'a str) -> Self {
        let start = Instant::now();
        Ticker {
            label,
            next: start + PROGRESS_EVERY,
            start,
        }
    }

    fn tick(&mut self, what: impl FnOnce() -> String) {
        let now = Instant::now();
        if now >= self.next {
            self.next = now + PROGRESS_EVERY;
            let s = (now - self.start).as_secs();
            eprintln!("bench: {} ({s} s): {}", self.label, what());
        }
    }
}

/// Resets the kernel's peak-RSS mark of this process (Linux >= 4.0; ignored elsewhere), after
/// handing the memory earlier lines freed back to the kernel (glibc keeps freed heap memory
/// otherwise, and a line's peak would count what the previous lines left there).
fn reset_peak_rss() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator; nothing is borrowed.
    unsafe {
        libc::malloc_trim(0);
    }
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident set size of this process since start or the last reset.
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
