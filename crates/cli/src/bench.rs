//! `flashlab bench`: simulator speed and memory on the reference scenario: 1 million 4 KiB
//! random writes at queue depth 32 on the `default` preset (16 GiB: 8 channels x 4 chips x
//! 2 dies x 2 planes, 8 KiB pages, 256 pages per block, 7% over-provisioning), preconditioned
//! to 90%, so garbage collection runs all the time. Prints simulated host requests per wall
//! second (measured phase only) and the process's peak resident memory, with full timing and
//! functional-only. Peak memory is reset between modes (Linux `clear_refs`).
//!
//! Then one line per block-level FTL of issue 11 on its paper's device ([`BLOCK_FTLS`]: NFTL on
//! `nftl-samsung`, BAST, FAST, SAST and KAST on `kast-slc`), so their speed is watched like
//! pagemap's: the same random writes (`--block-ftl-requests` of them, 20,000 by default: about
//! a second a line) after a sequential fill only. Their merges reach a steady rate within a
//! few thousand writes (the log blocks or free blocks are few), so a random pre-pass, which
//! takes 7-10 s on `kast-slc`, would change nothing but the time.
//!
//! Then one line per demand-paged map-cache FTL of issue 12 ([`MAP_CACHE_FTLS`]: DFTL with its
//! default 64 KiB cache, small beside the `default` device's 15 MiB map, CDFTL and FMMU)
//! beside pagemap on the reference device (`--device`, `--set`), random writes after a
//! sequential fill, with each line's time per request over pagemap's (issue 12: DFTL at most
//! 3x).
//!
//! With a periodic workload (`--workload periodic:...`, or `[[workload.tasks]]` in `--config`)
//! the reference lines run it instead of the random writes: its open-loop job arrivals, bounded
//! by its own `count` and `duration`, after the same preconditioning. There is no queue depth
//! to set and the FTL comparison lines (random writes) are not run, so `--requests`, `--qd`,
//! `--block-ftl-requests` and `--map-cache-requests` are refused with it. Requests per second
//! stay simulated requests per wall second; each timed line adds the simulated time and the
//! request rate in it (the workload's offered rate when the device keeps up).

use std::path::PathBuf;
use std::time::Instant;

use flashlab_sim::config::{ConfigSource, ExperimentConfig};
use flashlab_sim::stats::build_report;
use flashlab_sim::workload::{Pattern, SyntheticSource};
use flashlab_sim::{SimError, Simulation};

use super::fail;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Measured 4 KiB random writes per mode (1000000, 1e6, 250k) [default: 1000000]
    #[arg(long, value_parser = super::count_arg)]
    requests: Option<u64>,
    /// Fraction of the logical space preconditioned first
    #[arg(long, default_value_t = 0.9)]
    precondition: f64,
    /// Queue depth (also --queue-depth) [default: 32]
    #[arg(long, visible_alias = "queue-depth")]
    qd: Option<u32>,
    /// Which modes to measure
    #[arg(long, value_enum, default_value_t = Mode::Both)]
    mode: Mode,
    /// Device preset (as `flashlab run --device`)
    #[arg(short, long, value_name = "PRESET", default_value = "default")]
    device: String,
    /// Extra settings (repeatable)
    #[arg(short, long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// A periodic workload in place of the random writes, e.g.
    /// periodic:tasks=4xw12p@60ms+4xr3p@15ms,duration=10s (`flashlab run --help`)
    #[arg(short, long, value_name = "SPEC")]
    workload: Option<String>,
    /// TOML configuration layered over the preset (as `flashlab run --config`); a periodic
    /// workload in it (`[[workload.tasks]]`) replaces the random writes, another gives way to them
    #[arg(short, long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Write the figures as JSON to FILE (`-` for standard output)
    #[arg(long, value_name = "FILE")]
    json: Option<std::path::PathBuf>,
    /// Measured 4 KiB random writes of each block-level FTL line (0: no such lines); those
    /// lines take --qd, --precondition and --mode, not --device, --set or --requests [default:
    /// 20000]
    #[arg(long, value_parser = super::count_arg)]
    block_ftl_requests: Option<u64>,
    /// Measured 4 KiB random writes of each map-cache FTL line and its pagemap baseline (0: no
    /// such lines); those lines take --qd, --precondition, --mode, --device, --set and --config
    /// [default: 100000]
    #[arg(long, value_parser = super::count_arg)]
    map_cache_requests: Option<u64>,
}

impl BenchArgs {
    fn requests(&self) -> u64 {
        self.requests.unwrap_or(1_000_000)
    }
    fn qd(&self) -> u32 {
        self.qd.unwrap_or(32)
    }
    fn block_ftl_requests(&self) -> u64 {
        self.block_ftl_requests.unwrap_or(20_000)
    }
    fn map_cache_requests(&self) -> u64 {
        self.map_cache_requests.unwrap_or(100_000)
    }
}

/// A periodic workload the reference lines run instead of the random writes.
struct PeriodicRun {
    /// Its settings (from `--workload`; empty when it comes from `--config` or `--set`).
    sets: Vec<String>,
    /// One line saying what it is.
    title: String,
}

/// The map-cache FTLs of issue 12, after their pagemap baseline, on the reference device.
pub const MAP_CACHE_FTLS: [&str; 4] = ["pagemap", "dftl", "cdftl", "fmmu"];

/// The block-level FTLs of issue 11, each on the device of its paper.
pub const BLOCK_FTLS: [(&str, &str); 5] = [
    ("nftl", "nftl-samsung"),
    ("bast", "kast-slc"),
    ("fast", "kast-slc"),
    ("sast", "kast-slc"),
    ("kast", "kast-slc"),
];

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Timed,
    Functional,
    Both,
}

/// Figures of one benchmark line: a device and FTL in one mode.
#[derive(Debug, Clone, serde::Serialize)]
struct Figures {
    ftl: String,
    device: String,
    mode: &'static str,
    requests: u64,
    precondition_s: f64,
    run_s: f64,
    requests_per_s: f64,
    peak_rss_mib: Option<f64>,
    state_mib: f64,
    write_amplification: Option<f64>,
    gc_victims: u64,
    merges: Option<u64>,
    simulated_s: f64,
}

pub fn bench_command(a: &BenchArgs) -> i32 {
    let modes: &[(&str, bool)] = match a.mode {
        Mode::Timed => &[("timed", false)],
        Mode::Functional => &[("functional", true)],
        Mode::Both => &[("timed", false), ("functional", true)],
    };
    // Check the output and the configuration of every line before measuring anything.
    let json_out = match super::open_output(a.json.as_deref()) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let periodic = match periodic_workload(a) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let (reference, block_lines, map_lines) = match bench_lines(a, modes, periodic.as_ref()) {
        Ok(lines) => lines,
        Err(e) => return fail(&e),
    };
    // With the JSON on standard output, the tables go to standard error.
    let json_on_stdout = json_out
        .as_ref()
        .is_some_and(super::output::Output::is_stdout);
    let say = |line: String| {
        if json_on_stdout {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    say(match &periodic {
        Some(p) => format!(
            "flashlab bench: {}, device `{}`, preconditioned to {:.0}%",
            p.title,
            a.device,
            a.precondition * 100.0
        ),
        None => format!(
            "flashlab bench: {} x 4 KiB random writes, QD {}, device `{}`, preconditioned to {:.0}%",
            a.requests(),
            a.qd(),
            a.device,
            a.precondition * 100.0
        ),
    });
    say(format!(
        "{:<11} {:>11} {:>10} {:>8} {:>14} {:>14} {:>10} {:>6} {:>9}",
        "mode",
        "requests",
        "precond s",
        "run s",
        "requests/s",
        "peak RSS MiB",
        "state MiB",
        "WA",
        "GC runs"
    ));
    let mut all = Vec::new();
    for (name, config) in &reference {
        match measure(name, config) {
            Ok(f) => {
                say(reference_row(&f));
                all.push(f);
            }
            Err(e) => return fail(&e),
        }
    }
    if periodic.is_some() {
        for f in all.iter().filter(|f| f.simulated_s > 0.0) {
            say(simulated_rate_line(f));
        }
    }
    if !block_lines.is_empty() {
        say(format!(
            "\nblock-level FTLs: {} x 4 KiB random writes each, QD {}, after a sequential fill of {:.0}%",
            a.block_ftl_requests(),
            a.qd(),
            a.precondition * 100.0
        ));
        say(format!(
            "{:<6} {:<13} {:<11} {:>10} {:>8} {:>14} {:>14} {:>6} {:>9}",
            "ftl",
            "device",
            "mode",
            "precond s",
            "run s",
            "requests/s",
            "peak RSS MiB",
            "WA",
            "merges"
        ));
    }
    for (name, config) in &block_lines {
        match measure(name, config) {
            Ok(f) => {
                say(block_row(&f));
                all.push(f);
            }
            Err(e) => return fail(&e),
        }
    }
    if !map_lines.is_empty() {
        say(format!(
            "\nmap-cache FTLs on `{}`: {} x 4 KiB random writes each, QD {}, after a sequential fill of {:.0}%",
            a.device,
            a.map_cache_requests(),
            a.qd(),
            a.precondition * 100.0
        ));
        say(format!(
            "{:<8} {:<11} {:>10} {:>8} {:>14} {:>14} {:>6} {:>11}",
            "ftl", "mode", "precond s", "run s", "requests/s", "peak RSS MiB", "WA", "x pagemap"
        ));
    }
    let mut baseline: Vec<(&str, f64)> = Vec::new();
    for (name, config) in &map_lines {
        match measure(name, config) {
            Ok(f) => {
                if f.ftl == "pagemap" {
                    baseline.push((name, f.requests_per_s));
                }
                let base = baseline.iter().find(|(m, _)| m == name).map(|b| b.1);
                say(map_cache_row(&f, base));
                all.push(f);
            }
            Err(e) => return fail(&e),
        }
    }
    match json_out {
        Some(out) => {
            super::write_json(out, &serde_json::to_value(&all).expect("figures serialize"))
        }
        None => 0,
    }
}

type Lines = Vec<(&'static str, ExperimentConfig)>;

/// The periodic workload of `--workload`, `--config` or `--set`, if it is one; `--workload`
/// takes nothing else, and the options of the random-write lines do not go with it.
fn periodic_workload(a: &BenchArgs) -> Result<Option<PeriodicRun>, SimError> {
    let spec_sets = match &a.workload {
        Some(spec) => super::workload_sets(spec)?,
        None => Vec::new(),
    };
    let mut sets = spec_sets.clone();
    sets.extend(a.sets.iter().cloned());
    let config = ExperimentConfig::load(&ConfigSource {
        preset: Some(&a.device),
        file: a.config.as_deref(),
        sets: &sets,
    })?;
    if config.trace.enabled() {
        return Err(SimError::Input {
            location: "trace.path".into(),
            message: format!(
                "bench does not replay traces ({}): give a periodic workload or none (`flashlab run --trace` replays one)",
                config.trace.path
            ),
        });
    }
    let w = &config.workload;
    if w.pattern != Pattern::Periodic {
        return match &a.workload {
            Some(spec) => Err(SimError::Input {
                location: format!("--workload {spec}"),
                message: format!(
                    "bench measures its 4 KiB random writes or a periodic workload, not {} (allowed: periodic:tasks=..., e.g. periodic:tasks=4xw12p@60ms+4xr3p@15ms,duration=10s)",
                    w.pattern.name()
                ),
            }),
            None => Ok(None),
        };
    }
    let random_write_options = [
        ("--requests", a.requests.is_some()),
        ("--qd", a.qd.is_some()),
        ("--block-ftl-requests", a.block_ftl_requests.is_some()),
        ("--map-cache-requests", a.map_cache_requests.is_some()),
    ];
    if let Some((option, _)) = random_write_options.iter().find(|o| o.1) {
        return Err(SimError::Input {
            location: (*option).into(),
            message: "does not apply to a periodic workload: its tasks release their jobs open loop until its count or duration (periodic:...,count=N or duration=10s), and the FTL comparison lines run random writes only (bench without the periodic workload)".into(),
        });
    }
    let tasks: u64 = w.tasks.iter().map(|t| t.count).sum();
    let mut bound = format!("at most {} jobs", w.count);
    if w.duration_ns > 0 {
        bound += &format!(" released within {:.3} s", w.duration_ns as f64 / 1e9);
    }
    let title = format!("periodic workload of {tasks} tasks ({bound}), open loop");
    Ok(Some(PeriodicRun {
        sets: spec_sets,
        title,
    }))
}

/// What the simulated time of a periodic line was, and the request rate in it.
fn simulated_rate_line(f: &Figures) -> String {
    format!(
        "{}: {} requests in {:.3} simulated s: {:.0} requests per simulated s",
        f.mode,
        f.requests,
        f.simulated_s,
        f.requests as f64 / f.simulated_s
    )
}

/// The configurations of the reference lines (one per mode), of the block-level FTL lines
/// (one per FTL and mode) and of the map-cache lines, each checked against the memory
/// available. A periodic workload has the reference lines only.
fn bench_lines(
    a: &BenchArgs,
    modes: &[(&'static str, bool)],
    periodic: Option<&PeriodicRun>,
) -> Result<(Lines, Lines, Lines), SimError> {
    let file = a.config.as_deref();
    let mut reference = Vec::new();
    for &(name, functional) in modes {
        let sets = match periodic {
            Some(p) => periodic_sets(a, p, functional),
            None => scenario_sets(a, a.requests(), functional),
        };
        reference.push((name, checked(&a.device, file, sets, &a.sets)?));
    }
    if periodic.is_some() {
        return Ok((reference, Vec::new(), Vec::new()));
    }
    let mut block_lines = Vec::new();
    if a.block_ftl_requests() > 0 {
        for (ftl, device) in BLOCK_FTLS {
            for &(name, functional) in modes {
                let mut sets = scenario_sets(a, a.block_ftl_requests(), functional);
                sets.push(format!("ftl.name=\"{ftl}\""));
                sets.push("run.precondition_max_passes=0".into());
                block_lines.push((name, checked(device, None, sets, &[])?));
            }
        }
    }
    let mut map_lines = Vec::new();
    if a.map_cache_requests() > 0 {
        for ftl in MAP_CACHE_FTLS {
            for &(name, functional) in modes {
                let mut sets = scenario_sets(a, a.map_cache_requests(), functional);
                sets.push(format!("ftl.name=\"{ftl}\""));
                sets.push("run.precondition_max_passes=0".into());
                map_lines.push((name, checked(&a.device, file, sets, &a.sets)?));
            }
        }
    }
    Ok((reference, block_lines, map_lines))
}

/// A map-cache line; `pagemap_per_s` is the pagemap line's requests/s in the same mode.
fn map_cache_row(f: &Figures, pagemap_per_s: Option<f64>) -> String {
    let slower = pagemap_per_s.map_or("n/a".into(), |p| {
        format!("{:.2}", p / f.requests_per_s.max(1e-9))
    });
    format!(
        "{:<8} {:<11} {:>10.2} {:>8.2} {:>14.0} {:>14} {:>6} {:>11}",
        f.ftl,
        f.mode,
        f.precondition_s,
        f.run_s,
        f.requests_per_s,
        rss_text(f),
        wa_text(f),
        slower
    )
}

fn reference_row(f: &Figures) -> String {
    format!(
        "{:<11} {:>11} {:>10.2} {:>8.2} {:>14.0} {:>14} {:>10.1} {:>6} {:>9}",
        f.mode,
        f.requests,
        f.precondition_s,
        f.run_s,
        f.requests_per_s,
        rss_text(f),
        f.state_mib,
        wa_text(f),
        f.gc_victims
    )
}

fn block_row(f: &Figures) -> String {
    format!(
        "{:<6} {:<13} {:<11} {:>10.2} {:>8.2} {:>14.0} {:>14} {:>6} {:>9}",
        f.ftl,
        f.device,
        f.mode,
        f.precondition_s,
        f.run_s,
        f.requests_per_s,
        rss_text(f),
        wa_text(f),
        f.merges.map_or("n/a".into(), |m| m.to_string())
    )
}

fn rss_text(f: &Figures) -> String {
    f.peak_rss_mib.map_or("n/a".into(), |m| format!("{m:.1}"))
}

fn wa_text(f: &Figures) -> String {
    f.write_amplification
        .map_or("n/a".into(), |wa| format!("{wa:.2}"))
}

/// The bench's random writes: `requests` of 4 KiB at `--qd` after preconditioning.
fn scenario_sets(a: &BenchArgs, requests: u64, functional: bool) -> Vec<String> {
    vec![
        "workload.pattern=\"uniform\"".to_string(),
        "workload.read_fraction=0.0".into(),
        "workload.block_size=4096".into(),
        "workload.align_bytes=4096".into(),
        format!("workload.queue_depth={}", a.qd()),
        format!("workload.count={requests}"),
        format!("run.precondition={}", toml::Value::Float(a.precondition)),
        format!("run.functional_only={functional}"),
    ]
}

/// A periodic line: the workload as given, after the bench's preconditioning.
fn periodic_sets(a: &BenchArgs, p: &PeriodicRun, functional: bool) -> Vec<String> {
    let mut sets = vec![
        format!("run.precondition={}", toml::Value::Float(a.precondition)),
        format!("run.functional_only={functional}"),
    ];
    sets.extend(p.sets.iter().cloned());
    sets
}

/// The configuration of `device` (and `file`) with the scenario's and the user's settings, if
/// it fits in memory.
fn checked(
    device: &str,
    file: Option<&std::path::Path>,
    mut sets: Vec<String>,
    user_sets: &[String],
) -> Result<ExperimentConfig, SimError> {
    sets.extend(user_sets.iter().cloned());
    let config = ExperimentConfig::load(&ConfigSource {
        preset: Some(device),
        file,
        sets: &sets,
    })?;
    flashlab_sim::memory::check_available(&config)?;
    Ok(config)
}

fn measure(mode: &'static str, config: &ExperimentConfig) -> Result<Figures, SimError> {
    let config = config.clone();
    reset_peak_rss();
    let t0 = Instant::now();
    let mut sim = Simulation::new(&config)?;
    sim.precondition()?;
    let t1 = Instant::now();
    let source: Box<dyn flashlab_sim::workload::RequestSource> =
        if config.workload.pattern == Pattern::Periodic {
            flashlab_sim::workload_source(&config, &sim)?
        } else {
            Box::new(SyntheticSource::new(
                &config.workload,
                sim.logical_bytes(),
                config.run.seed,
            )?)
        };
    let describe = sim.run(source, &mut |_| {})?.describe();
    let run_s = t1.elapsed().as_secs_f64();
    let report = build_report(&sim, describe);
    Ok(Figures {
        ftl: report.ftl.clone(),
        device: report.preset.clone(),
        mode,
        requests: report.host.all.count,
        precondition_s: (t1 - t0).as_secs_f64(),
        run_s,
        requests_per_s: report.host.all.count as f64 / run_s.max(1e-9),
        peak_rss_mib: peak_rss_bytes().map(|b| b as f64 / (1 << 20) as f64),
        state_mib: report.device.state_bytes as f64 / (1 << 20) as f64,
        write_amplification: report.write_amplification,
        gc_victims: report.gc.gc_runs,
        merges: report.merges.as_ref().map(|m| m.total),
        simulated_s: report.elapsed_ns as f64 / 1e9,
    })
}

/// Resets the kernel's peak-RSS mark of this process (Linux >= 4.0; ignored elsewhere).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident set size of this process since start or the last reset.
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
