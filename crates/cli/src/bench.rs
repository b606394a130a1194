//! `flashlab bench`: simulator speed and memory, in sections (`--sections`, see
//! docs/performance.md for how to read each):
//!
//! - `reference`: 1 million 4 KiB random writes at queue depth 32 on the `default` preset
//!   (16 GiB: 8 channels x 4 chips x 2 dies x 2 planes, 8 KiB pages, 256 pages per block, 7%
//!   over-provisioning), preconditioned to 90%, so garbage collection runs all the time.
//!   Simulated host requests per wall second (measured phase only) and the process's peak
//!   resident memory, with full timing and functional-only (`--mode`).
//! - `ftls`: one line per registered FTL on its paper's device (a test checks every FTL of the
//!   registry has one): the block-level FTLs of issue 11 ([`plan::BLOCK_FTLS`]: NFTL on
//!   `nftl-samsung`, BAST, FAST, SAST and KAST on `kast-slc`; `--block-ftl-requests` random
//!   writes after a sequential fill only: their merges reach a steady rate within a few
//!   thousand writes, and a random pre-pass takes 7-10 s on `kast-slc` and changes nothing
//!   but the time); the map-cache FTLs of issue 12 ([`plan::MAP_CACHE_FTLS`]: DFTL with its
//!   default 64 KiB cache, Gupta et al.'s entry-level DFTL, CDFTL, FMMU) beside pagemap on the reference device
//!   (`--map-cache-requests`, with each line's time per request over pagemap's: issue 12 wants
//!   DFTL within 3x); the others ([`plan::PAPER_FTLS`], `--ftl-requests`): mt-ftl and st-ftl
//!   on `mt-board` (random writes), part-ftl, wao-gc and rtgc on `cosmos` as the part-cosmos
//!   study runs it (2 GiB, EDF die queues) under Table III's periodic tasks, preconditioned to
//!   steady state (small devices: a second).
//! - `rtos`: the mt-ftl study's firmware model: mt-ftl's 4 tasks on the simulated uC/OS-II of
//!   `mt-board`, its `desktop` workload closed loop at `--qd`, preconditioned to steady state,
//!   with context switches per request and the kernel's CPU share.
//! - `trace`: the sample traces built into flashlab (the MQSim excerpts of the repository's
//!   `traces/`, [`flashlab_sim::trace::samples`]), or every `*.trace` of `--trace-dir`,
//!   replayed closed loop at `--qd` on the reference device after a sequential fill; a
//!   `--trace-dir` that is missing or holds no trace is refused before anything is measured.
//! - `precondition`: preconditioning the reference device alone, by pagemap and each
//!   demand-paged FTL (`x pagemap`: pagemap's rate over the line's): mapping units written (fill,
//!   random overwrites, idle GC moves) per wall second. Every line's JSON has the same figures
//!   of its own preconditioning.
//! - `scaling` (only when named: minutes): the reference workload on `--scaling-gib` sizes
//!   (more or fewer blocks per plane, over-provisioning adjusted so write amplification stays
//!   comparable), with the cost per request over the 16 GiB line's and peak memory per GiB.
//!
//! Peak memory is reset before every line (Linux `clear_refs`). Lines that take longer than
//! 10 s say how far they are on standard error.
//!
//! With a periodic workload (`--workload periodic:...`, or `[[workload.tasks]]` in `--config`)
//! the reference lines run it instead of the random writes: its open-loop job arrivals, bounded
//! by its own `count` and `duration`, after the same preconditioning. There is no queue depth
//! to set and the other sections (random writes, traces) are not run, so `--requests`, `--qd`,
//! `--block-ftl-requests`, `--map-cache-requests` and the other sections are refused with it.
//! Requests per second stay simulated requests per wall second; each timed line adds the
//! simulated time and the request rate in it (the workload's offered rate when the device
//! keeps up).
//!
//! `--json FILE` writes one object per line (the table rows), each with its `section`.

mod measure;
mod plan;
mod table;

use std::path::PathBuf;

use flashlab_sim::config::{ConfigSource, ExperimentConfig};
use flashlab_sim::workload::Pattern;
use flashlab_sim::SimError;

use super::fail;
use measure::Figures;
use plan::GroupKind;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Sections to run, comma separated: reference, ftls, rtos, trace, precondition, scaling
    /// [default: reference,ftls,rtos,trace,precondition; scaling takes minutes (a 256 GiB
    /// device), so it runs only when named]
    #[arg(long, value_delimiter = ',', value_name = "LIST", value_parser = section_arg)]
    sections: Option<Vec<Section>>,
    /// Measured 4 KiB random writes per mode of the reference lines, and of each scaling line
    /// (1000000, 1e6, 250k) [default: 1000000]
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
    /// Device preset (as `flashlab run --device`) of the reference, map-cache, trace,
    /// precondition and scaling lines
    #[arg(short, long, value_name = "PRESET", default_value = "default")]
    device: String,
    /// Extra settings (repeatable) for the lines on --device
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
    /// Measured requests of each line of mt-ftl, st-ftl, part-ftl, wao-gc and rtgc on their
    /// papers' devices and of the rtos lines (0: no such lines); they take --qd, --precondition
    /// and --mode [default: 100000]
    #[arg(long, value_parser = super::count_arg)]
    ftl_requests: Option<u64>,
    /// Directory of the traces the trace section replays (every *.trace file in it)
    /// [default: the sample traces built into flashlab, see `flashlab trace samples`]
    #[arg(long, value_name = "DIR")]
    trace_dir: Option<PathBuf>,
    /// Raw device sizes of the scaling section in GiB, comma separated [default: 4,16,64,256]
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = gib_arg)]
    scaling_gib: Option<Vec<u32>>,
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
    fn ftl_requests(&self) -> u64 {
        self.ftl_requests.unwrap_or(100_000)
    }
    /// What the trace section replays, for its title: `--trace-dir`, or the samples.
    fn traces_title(&self) -> String {
        match &self.trace_dir {
            Some(dir) => dir.display().to_string(),
            None => "the sample traces built in".into(),
        }
    }
    fn scaling_gib(&self) -> Vec<u32> {
        self.scaling_gib
            .clone()
            .unwrap_or_else(|| plan::SCALING_GIB.to_vec())
    }
}

/// A device size in whole GiB, at least 1.
fn gib_arg(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(gib) if (1..=65_536).contains(&gib) => Ok(gib),
        _ => Err(format!(
            "`{text}`: expected a size in whole GiB from 1 to 65536, e.g. 4,16,64,256"
        )),
    }
}

/// A section named on the command line.
fn section_arg(text: &str) -> Result<Section, String> {
    Section::ALL
        .into_iter()
        .find(|s| s.name() == text.trim())
        .ok_or_else(|| {
            format!("`{text}`: expected reference, ftls, rtos, trace, precondition or scaling")
        })
}

/// A part of the bench.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    Reference,
    Ftls,
    Rtos,
    Trace,
    Precondition,
    Scaling,
}

impl Section {
    const ALL: [Section; 6] = [
        Section::Reference,
        Section::Ftls,
        Section::Rtos,
        Section::Trace,
        Section::Precondition,
        Section::Scaling,
    ];

    /// The default selection: everything but scaling.
    const DEFAULT: [Section; 5] = [
        Section::Reference,
        Section::Ftls,
        Section::Rtos,
        Section::Trace,
        Section::Precondition,
    ];

    /// The name on the command line and in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Section::Reference => "reference",
            Section::Ftls => "ftls",
            Section::Rtos => "rtos",
            Section::Trace => "trace",
            Section::Precondition => "precondition",
            Section::Scaling => "scaling",
        }
    }
}

/// A periodic workload the reference lines run instead of the random writes.
struct PeriodicRun {
    /// Its settings (from `--workload`; empty when it comes from `--config` or `--set`).
    sets: Vec<String>,
    /// One line saying what it is.
    title: String,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Timed,
    Functional,
    Both,
}

pub fn bench_command(a: &BenchArgs) -> i32 {
    let modes: &[(&str, bool)] = match a.mode {
        Mode::Timed => &[("timed", false)],
        Mode::Functional => &[("functional", true)],
        Mode::Both => &[("timed", false), ("functional", true)],
    };
    // Check the output and the configuration of every line before measuring anything.
    if let Err(e) = refuse_clashes(a) {
        return fail(&e);
    }
    let json_out = match super::open_output(a.json.as_deref()) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let periodic = match periodic_workload(a) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let groups = match sections(a, periodic.is_some())
        .and_then(|s| plan::groups(a, &s, modes, periodic.as_ref()))
    {
        Ok(groups) => groups,
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
    let periodic_title = periodic.as_ref().map(|p| p.title.as_str());
    let mut all = Vec::new();
    for (i, group) in groups.iter().enumerate() {
        say(table::header(group.kind, a, i == 0, periodic_title));
        let figures = match measure_group(group, &say) {
            Ok(f) => f,
            Err(e) => return fail(&e),
        };
        if periodic.is_some() {
            for f in figures.iter().filter(|f| f.simulated_s > 0.0) {
                say(table::simulated_rate_line(f));
            }
        }
        all.extend(
            figures
                .iter()
                .map(|f| serde_json::to_value(f).expect("figures serialize")),
        );
    }
    match json_out {
        Some(out) => super::write_json(out, &serde_json::Value::Array(all)),
        None => 0,
    }
}

/// Refuses a `--json` that is the `--config` file or a trace the trace section replays.
fn refuse_clashes(a: &BenchArgs) -> Result<(), SimError> {
    use super::output::{refuse_clashes, Named};
    let Some(json) = &a.json else {
        return Ok(());
    };
    let traces = if a
        .sections
        .as_ref()
        .is_none_or(|s| s.contains(&Section::Trace))
    {
        plan::trace_dir_files(a)
    } else {
        Vec::new()
    };
    let inputs: Vec<Named> = a
        .config
        .iter()
        .map(|path| Named {
            option: "--config",
            path,
        })
        .chain(traces.iter().map(|path| Named {
            option: "--trace-dir",
            path,
        }))
        .collect();
    refuse_clashes(
        &inputs,
        &[Named {
            option: "--json",
            path: json,
        }],
    )
}

/// Measures a group's lines, printing each row when measured (the scaling rows, which
/// compare with each other, once all are).
fn measure_group(group: &plan::Group, say: &dyn Fn(String)) -> Result<Vec<Figures>, SimError> {
    let mut figures: Vec<Figures> = Vec::new();
    for line in &group.lines {
        let mut f = measure::measure(line)?;
        if group.kind == GroupKind::Scaling {
            eprintln!(
                "bench: {} done: {:.0} requests/s",
                line.label, f.requests_per_s
            );
        } else {
            let pagemap = figures
                .iter()
                .find(|b| b.ftl == "pagemap" && b.mode == f.mode);
            let pagemap = if group.kind == GroupKind::Precondition {
                // Units written per second: how many times slower than pagemap's.
                f.precondition.x_pagemap = pagemap
                    .map(|b| b.precondition.units_per_s / f.precondition.units_per_s.max(1e-9));
                None
            } else {
                pagemap.map(|b| b.requests_per_s)
            };
            say(table::row(group.kind, &f, pagemap));
        }
        figures.push(f);
    }
    if group.kind == GroupKind::Scaling {
        measure::relate_scaling(&mut figures);
        for f in &figures {
            say(table::row(group.kind, f, None));
        }
    }
    Ok(figures)
}

/// The sections to run: `--sections`, or the default; a periodic workload has the reference
/// lines only, `--scaling-gib` needs the scaling section and `--trace-dir` the trace section.
fn sections(a: &BenchArgs, periodic: bool) -> Result<Vec<Section>, SimError> {
    let chosen = a.sections.clone();
    if a.scaling_gib.is_some()
        && !chosen
            .as_ref()
            .is_some_and(|s| s.contains(&Section::Scaling))
    {
        return Err(SimError::Input {
            location: "--scaling-gib".into(),
            message: "the scaling section is not selected (add scaling to --sections, e.g. --sections scaling)".into(),
        });
    }
    if a.trace_dir.is_some() {
        let trace_runs = match &chosen {
            Some(s) => s.contains(&Section::Trace),
            None => !periodic,
        };
        if !trace_runs {
            let message = if periodic {
                "does not apply to a periodic workload: it runs the reference lines only"
            } else {
                "the trace section is not selected (add trace to --sections, e.g. --sections trace)"
            };
            return Err(SimError::Input {
                location: "--trace-dir".into(),
                message: message.into(),
            });
        }
    }
    if periodic {
        if let Some(other) = chosen.iter().flatten().find(|s| **s != Section::Reference) {
            return Err(SimError::Input {
                location: format!("--sections {}", other.name()),
                message: "a periodic workload runs the reference lines only (allowed: --sections reference)".into(),
            });
        }
        return Ok(vec![Section::Reference]);
    }
    Ok(chosen.unwrap_or_else(|| Section::DEFAULT.to_vec()))
}

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
                "bench replays its sample traces (or those of --trace-dir) in its trace section, not {}: give a periodic workload or none (`flashlab run --trace` replays one)",
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
        ("--ftl-requests", a.ftl_requests.is_some()),
        ("--scaling-gib", a.scaling_gib.is_some()),
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
