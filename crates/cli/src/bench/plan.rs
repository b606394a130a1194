//! What each section of `flashlab bench` measures: the configuration of every line, built and
//! checked (settings and memory) before anything is measured.

use std::path::{Path, PathBuf};

use flashlab_sim::config::{ConfigSource, ExperimentConfig};
use flashlab_sim::trace::samples;
use flashlab_sim::SimError;

use super::{BenchArgs, PeriodicRun, Section};

/// The block-level FTLs of issue 11, each on the device of its paper.
pub const BLOCK_FTLS: [(&str, &str); 5] = [
    ("nftl", "nftl-samsung"),
    ("bast", "kast-slc"),
    ("fast", "kast-slc"),
    ("sast", "kast-slc"),
    ("kast", "kast-slc"),
];

/// The map-cache FTLs of issue 12, after their pagemap baseline, on the reference device.
pub const MAP_CACHE_FTLS: [&str; 5] = ["pagemap", "dftl", "dftl-entry", "cdftl", "fmmu"];

/// The workload of an FTL line on its paper's device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaperWorkload {
    /// The bench's 4 KiB random writes at `--qd` (`--ftl-requests` of them).
    RandomWrites,
    /// [`TABLE_III`], the periodic task set of part-ftl.txt's Cosmos study, until
    /// `--ftl-requests` jobs.
    TableIii,
}

/// An FTL measured on the device of its paper's study, apart from the block-level and
/// map-cache lines.
pub struct PaperFtl {
    pub ftl: &'static str,
    pub device: &'static str,
    /// Settings of the study's device after the preset (smaller than the preset where the
    /// study itself shrinks it, so a line takes seconds).
    pub device_sets: &'static [&'static str],
    pub workload: PaperWorkload,
}

/// mt-board as the bench runs it: 512 blocks per plane (512 MiB of the board's 4 GB), so
/// preconditioning takes a second.
const MT_BOARD: &[&str] = &["geometry.blocks_per_plane=512"];
/// cosmos as `flashlab experiment part-cosmos` runs it: 64 blocks per plane (2 GiB raw), EDF
/// die queues.
const COSMOS_STUDY: &[&str] = &[
    "geometry.blocks_per_plane=64",
    "timing.die_queue_policy=\"edf\"",
];

/// Table III of part-ftl.txt (4 writers of 12 pages every 60 ms, 4 readers of 3 pages every
/// 15 ms), as `experiment::part_cosmos::TABLE_III`.
pub const TABLE_III: &str = "periodic:tasks=4xw12p@60ms+4xr3p@15ms";

/// The FTLs of the other studies: the RTOS FTLs of multithreaded-ftl-ucos.txt on `mt-board`,
/// the real-time FTLs of part-ftl.txt on `cosmos` with Table III's tasks.
pub const PAPER_FTLS: [PaperFtl; 5] = [
    PaperFtl {
        ftl: "mt-ftl",
        device: "mt-board",
        device_sets: MT_BOARD,
        workload: PaperWorkload::RandomWrites,
    },
    PaperFtl {
        ftl: "st-ftl",
        device: "mt-board",
        device_sets: MT_BOARD,
        workload: PaperWorkload::RandomWrites,
    },
    PaperFtl {
        ftl: "part-ftl",
        device: "cosmos",
        device_sets: COSMOS_STUDY,
        workload: PaperWorkload::TableIii,
    },
    PaperFtl {
        ftl: "wao-gc",
        device: "cosmos",
        device_sets: COSMOS_STUDY,
        workload: PaperWorkload::TableIii,
    },
    PaperFtl {
        ftl: "rtgc",
        device: "cosmos",
        device_sets: COSMOS_STUDY,
        workload: PaperWorkload::TableIii,
    },
];

/// Every FTL the `ftls` section measures, in its order (for the coverage test).
#[cfg(test)]
pub fn ftls_covered() -> Vec<&'static str> {
    let block = BLOCK_FTLS.iter().map(|(ftl, _)| *ftl);
    let paper = PAPER_FTLS.iter().map(|p| p.ftl);
    block.chain(MAP_CACHE_FTLS).chain(paper).collect()
}

/// The default sizes of the scaling section, GiB of raw flash.
pub const SCALING_GIB: [u32; 4] = [4, 16, 64, 256];

/// Blocks per die that an FTL with greedy per-die GC keeps out of use (an open host block, an
/// open GC block, the foreground free-block threshold): the spare that sets the write
/// amplification is the over-provisioning minus these. The scaling section keeps it equal on
/// every size (the 4 GiB device then gets 14%, as docs/performance.md found by trying).
const BLOCKS_PER_DIE_IN_USE: f64 = 3.0;

/// One line to measure.
pub struct Line {
    pub section: Section,
    pub mode: &'static str,
    pub config: ExperimentConfig,
    /// What the progress messages call it.
    pub label: String,
    /// The trace file of a trace line, the workload of an FTL line.
    pub what: Option<String>,
    /// Stop after preconditioning (the precondition section).
    pub precondition_only: bool,
    pub scaling: Option<ScalingSize>,
}

/// A device size of the scaling section.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct ScalingSize {
    pub device_gib: u32,
    pub blocks_per_plane: u32,
    /// `ftl.over_provisioning` of the line (None: the FTL has no such setting).
    pub over_provisioning: Option<f64>,
}

/// The lines of one table: a section, or a part of the `ftls` section.
pub struct Group {
    pub kind: GroupKind,
    pub lines: Vec<Line>,
}

/// Which table a group prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupKind {
    Reference,
    BlockFtls,
    MapCacheFtls,
    PaperFtls,
    Rtos,
    Trace,
    Precondition,
    Scaling,
}

/// The lines of every selected section, in output order.
pub fn groups(
    a: &BenchArgs,
    sections: &[Section],
    modes: &[(&'static str, bool)],
    periodic: Option<&PeriodicRun>,
) -> Result<Vec<Group>, SimError> {
    let mut groups = Vec::new();
    let has = |s: Section| sections.contains(&s);
    let group = |kind, lines| Group { kind, lines };
    if has(Section::Reference) {
        groups.push(group(
            GroupKind::Reference,
            reference_lines(a, modes, periodic)?,
        ));
    }
    if has(Section::Ftls) {
        groups.push(group(GroupKind::BlockFtls, block_lines(a, modes)?));
        groups.push(group(GroupKind::MapCacheFtls, map_cache_lines(a, modes)?));
        groups.push(group(GroupKind::PaperFtls, paper_lines(a, modes)?));
    }
    if has(Section::Rtos) {
        groups.push(group(GroupKind::Rtos, rtos_lines(a, modes)?));
    }
    if has(Section::Trace) {
        groups.push(group(GroupKind::Trace, trace_lines(a, modes)?));
    }
    if has(Section::Precondition) {
        groups.push(group(GroupKind::Precondition, precondition_lines(a)?));
    }
    if has(Section::Scaling) {
        groups.push(group(GroupKind::Scaling, scaling_lines(a, modes)?));
    }
    groups.retain(|g| !g.lines.is_empty());
    Ok(groups)
}

fn line(section: Section, mode: &'static str, config: ExperimentConfig, label: String) -> Line {
    Line {
        section,
        mode,
        config,
        label,
        what: None,
        precondition_only: false,
        scaling: None,
    }
}

fn reference_lines(
    a: &BenchArgs,
    modes: &[(&'static str, bool)],
    periodic: Option<&PeriodicRun>,
) -> Result<Vec<Line>, SimError> {
    let mut lines = Vec::new();
    for &(mode, functional) in modes {
        let sets = match periodic {
            Some(p) => periodic_sets(a, p, functional),
            None => scenario_sets(a, a.requests(), functional),
        };
        let config = checked(&a.device, a.config.as_deref(), sets, &a.sets)?;
        lines.push(line(
            Section::Reference,
            mode,
            config,
            format!("reference {mode}"),
        ));
    }
    Ok(lines)
}

fn block_lines(a: &BenchArgs, modes: &[(&'static str, bool)]) -> Result<Vec<Line>, SimError> {
    let mut lines = Vec::new();
    if a.block_ftl_requests() == 0 {
        return Ok(lines);
    }
    for (ftl, device) in BLOCK_FTLS {
        for &(mode, functional) in modes {
            let mut sets = scenario_sets(a, a.block_ftl_requests(), functional);
            sets.push(format!("ftl.name=\"{ftl}\""));
            sets.push("run.precondition_max_passes=0".into());
            let config = checked(device, None, sets, &[])?;
            lines.push(line(Section::Ftls, mode, config, format!("{ftl} {mode}")));
        }
    }
    Ok(lines)
}

fn map_cache_lines(a: &BenchArgs, modes: &[(&'static str, bool)]) -> Result<Vec<Line>, SimError> {
    let mut lines = Vec::new();
    if a.map_cache_requests() == 0 {
        return Ok(lines);
    }
    for ftl in MAP_CACHE_FTLS {
        for &(mode, functional) in modes {
            let mut sets = scenario_sets(a, a.map_cache_requests(), functional);
            sets.push(format!("ftl.name=\"{ftl}\""));
            sets.push("run.precondition_max_passes=0".into());
            let config = checked(&a.device, a.config.as_deref(), sets, &a.sets)?;
            lines.push(line(Section::Ftls, mode, config, format!("{ftl} {mode}")));
        }
    }
    Ok(lines)
}

/// The FTLs of the other studies on their devices, preconditioned to steady state (their
/// devices are small: a second at most), so their GC runs in the measured requests.
fn paper_lines(a: &BenchArgs, modes: &[(&'static str, bool)]) -> Result<Vec<Line>, SimError> {
    let mut lines = Vec::new();
    if a.ftl_requests() == 0 {
        return Ok(lines);
    }
    for p in &PAPER_FTLS {
        for &(mode, functional) in modes {
            let (mut sets, what) = match p.workload {
                PaperWorkload::RandomWrites => (
                    scenario_sets(a, a.ftl_requests(), functional),
                    format!("randwrite:bs=4k,qd={}", a.qd()),
                ),
                PaperWorkload::TableIii => {
                    let spec = format!("{TABLE_III},count={}", a.ftl_requests());
                    let mut sets = super::super::workload_sets(&spec)?;
                    sets.extend(base_sets(a, functional));
                    (sets, "Table III".into())
                }
            };
            sets.push(format!("ftl.name=\"{}\"", p.ftl));
            sets.extend(p.device_sets.iter().map(|s| s.to_string()));
            let config = checked(p.device, None, sets, &[])?;
            let mut l = line(Section::Ftls, mode, config, format!("{} {mode}", p.ftl));
            l.what = Some(what);
            lines.push(l);
        }
    }
    Ok(lines)
}

/// The mt-ftl study's firmware model: mt-ftl's four tasks on the simulated uC/OS-II of
/// `mt-board`, the study's `desktop` workload closed loop at `--qd` (the study's `closed`
/// mode), preconditioned to steady state as the study does.
fn rtos_lines(a: &BenchArgs, modes: &[(&'static str, bool)]) -> Result<Vec<Line>, SimError> {
    let mut lines = Vec::new();
    if a.ftl_requests() == 0 {
        return Ok(lines);
    }
    let spec = format!(
        "desktop:qd={},pacing=closed,count={}",
        a.qd(),
        a.ftl_requests()
    );
    for &(mode, functional) in modes {
        let mut sets = super::super::workload_sets(&spec)?;
        sets.extend(base_sets(a, functional));
        sets.push("ftl.name=\"mt-ftl\"".into());
        sets.push("ftl.tasks=4".into());
        sets.extend(MT_BOARD.iter().map(|s| s.to_string()));
        let config = checked("mt-board", None, sets, &[])?;
        let mut l = line(Section::Rtos, mode, config, format!("rtos {mode}"));
        l.what = Some(spec.clone());
        lines.push(l);
    }
    Ok(lines)
}

/// A trace the trace section replays: its file name (what the table and the JSON call it)
/// and the path the replay reads (`sample:NAME` for a built-in sample).
struct BenchTrace {
    name: String,
    path: String,
}

/// The traces of the trace section: every `*.trace` file of `--trace-dir` (sorted), or the
/// sample traces built in. A `--trace-dir` that cannot be read or holds no trace is refused:
/// the user asked for its traces.
fn bench_traces(a: &BenchArgs) -> Result<Vec<BenchTrace>, SimError> {
    let Some(dir) = &a.trace_dir else {
        return Ok(samples::SAMPLES
            .iter()
            .map(|s| BenchTrace {
                name: s.file_name.to_string(),
                path: s.reference(),
            })
            .collect());
    };
    let refuse = |message: String| {
        SimError::Input {
        location: format!("--trace-dir {}", dir.display()),
        message: format!(
            "{message} (without --trace-dir the trace section replays the sample traces built in: {})",
            samples::sample_references()
        ),
    }
    };
    let entries = std::fs::read_dir(dir).map_err(|e| refuse(format!("cannot list it: {e}")))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "trace") && p.is_file())
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(refuse("holds no *.trace file".into()));
    }
    Ok(files
        .into_iter()
        .map(|file| BenchTrace {
            name: file.file_name().map_or_else(
                || file.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            path: file.display().to_string(),
        })
        .collect())
}

/// The files of `--trace-dir` the trace section would replay (none without it, or when it
/// cannot be read: [`bench_traces`] refuses that), for the output clash check.
pub(super) fn trace_dir_files(a: &BenchArgs) -> Vec<PathBuf> {
    match (&a.trace_dir, bench_traces(a)) {
        (Some(_), Ok(traces)) => traces.into_iter().map(|t| PathBuf::from(t.path)).collect(),
        _ => Vec::new(),
    }
}

/// Every trace of [`bench_traces`] replayed closed loop at `--qd` on the reference device
/// after a sequential fill.
fn trace_lines(a: &BenchArgs, modes: &[(&'static str, bool)]) -> Result<Vec<Line>, SimError> {
    let mut lines = Vec::new();
    for trace in bench_traces(a)? {
        for &(mode, functional) in modes {
            let mut sets = base_sets(a, functional);
            sets.push(format!(
                "trace.path={}",
                toml::Value::String(trace.path.clone())
            ));
            sets.push("trace.replay=\"closed\"".into());
            sets.push(format!("trace.queue_depth={}", a.qd()));
            sets.push("run.precondition_max_passes=0".into());
            let config = checked(&a.device, a.config.as_deref(), sets, &a.sets)?;
            let mut l = line(
                Section::Trace,
                mode,
                config,
                format!("{} {mode}", trace.name),
            );
            l.what = Some(trace.name.clone());
            lines.push(l);
        }
    }
    Ok(lines)
}

/// Preconditioning of the reference device alone (it is functional), by pagemap and by each
/// demand-paged FTL ([`MAP_CACHE_FTLS`], pagemap first: the baseline of `x pagemap`), or by
/// the FTL a `--config` or `--set ftl.name` names (one line).
fn precondition_lines(a: &BenchArgs) -> Result<Vec<Line>, SimError> {
    let named = a.config.is_some() || a.sets.iter().any(|s| s.starts_with("ftl.name"));
    let ftls: &[&str] = if named { &[""] } else { &MAP_CACHE_FTLS };
    let mut lines = Vec::new();
    for &ftl in ftls {
        let mut sets = scenario_sets(a, a.requests(), true);
        if !ftl.is_empty() {
            sets.push(format!("ftl.name=\"{ftl}\""));
        }
        let config = checked(&a.device, a.config.as_deref(), sets, &a.sets)?;
        let label = match ftl {
            "" => "preconditioning".into(),
            f => format!("preconditioning {f}"),
        };
        let mut l = line(Section::Precondition, "functional", config, label);
        l.precondition_only = true;
        lines.push(l);
    }
    Ok(lines)
}

/// The reference workload on each `--scaling-gib` size: the reference device with more or
/// fewer blocks per plane, its over-provisioning set so the spare beyond the blocks in use
/// is the same share as on the reference device (comparable write amplification).
fn scaling_lines(a: &BenchArgs, modes: &[(&'static str, bool)]) -> Result<Vec<Line>, SimError> {
    let base = checked(
        &a.device,
        a.config.as_deref(),
        scenario_sets(a, a.requests(), false),
        &a.sets,
    )?;
    let mut lines = Vec::new();
    for &gib in &a.scaling_gib() {
        let size = scaling_size(&base, gib)?;
        for &(mode, functional) in modes {
            let mut sets = scenario_sets(a, a.requests(), functional);
            sets.extend(a.sets.iter().cloned());
            sets.push(format!(
                "geometry.blocks_per_plane={}",
                size.blocks_per_plane
            ));
            if let Some(op) = size.over_provisioning {
                sets.push(format!("ftl.over_provisioning={}", toml::Value::Float(op)));
            }
            let config = checked(&a.device, a.config.as_deref(), sets, &[])?;
            let mut l = line(Section::Scaling, mode, config, format!("{gib} GiB {mode}"));
            l.scaling = Some(size);
            lines.push(l);
        }
    }
    Ok(lines)
}

/// The blocks per plane and over-provisioning of a `gib` GiB version of `base`.
fn scaling_size(base: &ExperimentConfig, gib: u32) -> Result<ScalingSize, SimError> {
    let g = &base.geometry;
    let planes_per_die = u64::from(g.planes_per_die);
    let plane_rows = u64::from(g.channels * g.chips_per_channel * g.dies_per_chip) * planes_per_die;
    let row_bytes = plane_rows * u64::from(g.pages_per_block) * u64::from(g.page_bytes);
    let bytes = u64::from(gib) << 30;
    let bad = |message: String| SimError::Input {
        location: format!("--scaling-gib {gib}"),
        message,
    };
    if bytes % row_bytes != 0 {
        return Err(bad(format!(
            "the device grows in steps of one block per plane ({} MiB): give a size in GiB that is a multiple of it",
            row_bytes >> 20
        )));
    }
    let blocks =
        u32::try_from(bytes / row_bytes).map_err(|_| bad("too many blocks per plane".into()))?;
    let resolved = flashlab_sim::ftl::registry::resolve(base)?;
    let over_provisioning = match resolved.get("over_provisioning").and_then(|v| v.as_float()) {
        Some(op) => {
            let in_use = |b: u32| BLOCKS_PER_DIE_IN_USE / (planes_per_die as f64 * f64::from(b));
            let op = op - in_use(g.blocks_per_plane) + in_use(blocks);
            if !(0.0..=0.95).contains(&op) {
                return Err(bad(format!(
                    "too small: the over-provisioning that keeps the write amplification of the reference device would be {op:.2} (allowed: 0 ..= 0.95)"
                )));
            }
            Some((op * 1e4).round() / 1e4)
        }
        None => None,
    };
    Ok(ScalingSize {
        device_gib: gib,
        blocks_per_plane: blocks,
        over_provisioning,
    })
}

/// Settings every line shares: the preconditioned fraction and the mode.
fn base_sets(a: &BenchArgs, functional: bool) -> Vec<String> {
    vec![
        format!("run.precondition={}", toml::Value::Float(a.precondition)),
        format!("run.functional_only={functional}"),
    ]
}

/// The bench's random writes: `requests` of 4 KiB at `--qd` after preconditioning.
fn scenario_sets(a: &BenchArgs, requests: u64, functional: bool) -> Vec<String> {
    let mut sets = vec![
        "workload.pattern=\"uniform\"".to_string(),
        "workload.read_fraction=0.0".into(),
        "workload.block_size=4096".into(),
        "workload.align_bytes=4096".into(),
        format!("workload.queue_depth={}", a.qd()),
        format!("workload.count={requests}"),
    ];
    sets.extend(base_sets(a, functional));
    sets
}

/// A periodic line: the workload as given, after the bench's preconditioning.
fn periodic_sets(a: &BenchArgs, p: &PeriodicRun, functional: bool) -> Vec<String> {
    let mut sets = base_sets(a, functional);
    sets.extend(p.sets.iter().cloned());
    sets
}

/// The configuration of `device` (and `file`) with the scenario's and the user's settings, if
/// it fits in memory.
fn checked(
    device: &str,
    file: Option<&Path>,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every registered FTL has a line in the `ftls` section, and no FTL has two.
    #[test]
    fn every_registered_ftl_has_a_bench_line() {
        let mut covered = ftls_covered();
        let mut registered: Vec<&str> = flashlab_sim::ftl::registry::entries()
            .iter()
            .map(|e| e.name)
            .collect();
        covered.sort_unstable();
        registered.sort_unstable();
        assert_eq!(covered, registered);
    }

    /// The scaling sizes of the reference device: one block per plane is 256 MiB, and the
    /// over-provisioning keeps the spare beyond the blocks in use (4 GiB: the 14% found by
    /// trying, docs/performance.md).
    #[test]
    fn scaling_sizes_of_the_reference_device() {
        let base = ExperimentConfig::with_sets("default", &[]).unwrap();
        let size = |gib| scaling_size(&base, gib).unwrap();
        assert_eq!(size(16).blocks_per_plane, 64);
        assert_eq!(size(16).over_provisioning, Some(0.07));
        assert_eq!(size(256).blocks_per_plane, 1024);
        assert_eq!(size(4).blocks_per_plane, 16);
        assert_eq!(size(4).over_provisioning, Some(0.1403));
        let spare = |gib| {
            let s = size(gib);
            s.over_provisioning.unwrap() - 3.0 / (2.0 * f64::from(s.blocks_per_plane))
        };
        for gib in [4, 64, 256] {
            assert!((spare(gib) - spare(16)).abs() < 1e-4, "{gib} GiB");
        }
        let coarse = ["geometry.pages_per_block=1024", "geometry.page_bytes=16384"];
        let coarse = ExperimentConfig::with_sets("default", &coarse).unwrap();
        let err = scaling_size(&coarse, 3).unwrap_err().to_string();
        assert!(
            err.contains("--scaling-gib 3") && err.contains("2048 MiB"),
            "{err}"
        );
    }
}
