//! The analysis of a configured run: which scheme's test applies to its FTL, the
//! [`FlashParams`] of its device and FTL settings, and its periodic workload as task specs.
//!
//! Table II defines each time as "the time it takes to read (write, erase) a page on every
//! flash chip" of a set. On a preset with measured set times (`cosmos-table-iv`: Table IV)
//! those numbers are used verbatim; otherwise they are measured on the device's timing model:
//! the flash scheduler runs one operation on every die of the set at once, released together
//! on an idle device, and the time is when the last completes. The sets (choices where the
//! paper is silent, after Fig. 3):
//! - PaRT-FTL: F_w is one way, one die per channel; F_r every other die (f_r = k = |F| -
//!   channels, m = channels: a stripe's parity is on the write way's dies of Fig. 3).
//!   t_r is a page read on every die of F_r, t'_r one on every die of F_w, t_w and t_e a
//!   program and an erase on every die of F_w.
//! - WAO-GC and RTGC: every die reads and writes (|F_w| = f_r = k = |F|, m = 0); every time is
//!   the operation on every die.
//!
//! λ, c and the encode/decode times come from the FTL's settings (`ftl.data_ratio`,
//! `ftl.logical_ratio`, `ftl.copies_per_step`, `ftl.encode_ns`, `ftl.decode_ns`), so the
//! analysis always describes the FTL the run simulates.

use crate::config::{preset, ExperimentConfig, MeasuredSetTimes, Timing};
use crate::engine::events::EventQueue;
use crate::flash::{Cause, FlashOp, FlashScheduler, OpKind, NIL};
use crate::ftl::part::PartConfig;
use crate::ftl::rtgc::RtgcConfig;
use crate::ftl::waogc::WaoGcConfig;
use crate::nand::{DieId, Layout};
use crate::workload::{Pattern, TaskOp};
use crate::{ConfigError, SimError};

use super::{FlashParams, Scheme, TaskSpec};

/// The scheme whose admission test applies to the registry FTL `name`, if it has one.
pub fn scheme_of_ftl(name: &str) -> Option<Scheme> {
    match name {
        "part-ftl" => Some(Scheme::PartFtl),
        "wao-gc" => Some(Scheme::WaoGc),
        "rtgc" => Some(Scheme::Rtgc),
        _ => None,
    }
}

/// The registry names of the FTLs with an admission test.
pub const REALTIME_FTLS: &str = "part-ftl, wao-gc, rtgc";

/// The analysis's view of a configured device and FTL.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AnalysisDevice {
    pub scheme: Scheme,
    pub params: FlashParams,
    /// Where the times come from: a preset's measured table, or the timing model.
    pub source: String,
}

/// The analysis device of `config`'s device and FTL; an FTL without a test is an error
/// naming `ftl.name`.
pub fn analysis_device(config: &ExperimentConfig) -> Result<AnalysisDevice, SimError> {
    let name = config.ftl_name();
    let scheme = scheme_of_ftl(name).ok_or_else(|| {
        ConfigError::invalid(
            "ftl.name",
            name,
            "this FTL has no real-time admission test",
            REALTIME_FTLS,
        )
    })?;
    let shape = set_shape(config, scheme)?;
    let (times, source) = match measured_times(config) {
        Some(m) => (
            SetTimes::measured(&m, scheme),
            format!(
                "preset {}: measured set times (part-ftl.txt Table IV)",
                config.preset
            ),
        ),
        None => (
            SetTimes::modelled(config, scheme),
            "the timing model: one operation on every die of a set at once".to_string(),
        ),
    };
    let params = FlashParams {
        read_ns: times.read_ns,
        gc_read_ns: times.gc_read_ns,
        write_ns: times.write_ns,
        erase_ns: times.erase_ns,
        ..shape
    };
    let params = params.validated().map_err(|e| {
        ConfigError::invalid(
            "device",
            &config.preset,
            format!("the analysis device is invalid: {e}"),
            "a device with at least one die per set",
        )
    })?;
    Ok(AnalysisDevice {
        scheme,
        params,
        source,
    })
}

/// The counts and FTL settings (times are filled in after).
fn set_shape(config: &ExperimentConfig, scheme: Scheme) -> Result<FlashParams, SimError> {
    let g = &config.geometry;
    let dies = g.total_dies();
    let channels = g.channels;
    let base = FlashParams {
        chips: dies,
        write_chips: dies,
        parallel_reads: dies,
        data_chips: dies,
        parity_chips: 0,
        pages_per_block: g.pages_per_block,
        page_bytes: g.page_bytes,
        ..FlashParams::waogc()
    };
    Ok(match scheme {
        Scheme::PartFtl => {
            let (cfg, _) = PartConfig::from_experiment(config)?;
            FlashParams {
                write_chips: channels,
                parallel_reads: dies - channels,
                data_chips: dies - channels,
                parity_chips: channels,
                logical_ratio: cfg.data_ratio,
                encode_ns: cfg.encode_ns as f64,
                decode_ns: cfg.decode_ns as f64,
                ..base
            }
        }
        Scheme::WaoGc => {
            let (cfg, _) = WaoGcConfig::from_experiment(config)?;
            FlashParams {
                logical_ratio: cfg.logical_ratio,
                copies_per_partial_step: cfg.copies_per_step,
                ..base
            }
        }
        Scheme::Rtgc => {
            let (cfg, _) = RtgcConfig::from_experiment(config)?;
            FlashParams {
                logical_ratio: cfg.logical_ratio,
                ..base
            }
        }
    })
}

/// The preset's measured set times, when the configured device is still the preset's
/// (same operation times and the same dies, pages and page size; the number of blocks and
/// the die queue policy may differ).
fn measured_times(config: &ExperimentConfig) -> Option<MeasuredSetTimes> {
    let p = preset(&config.preset)?;
    let measured = p.measured_set_times?;
    let (g, pg) = (&config.geometry, &p.device.geometry);
    let same_geometry = g.channels == pg.channels
        && g.chips_per_channel == pg.chips_per_channel
        && g.dies_per_chip == pg.dies_per_chip
        && g.pages_per_block == pg.pages_per_block
        && g.page_bytes == pg.page_bytes;
    // The queue policy orders commands; it changes no operation's time on an idle set.
    let same_times = Timing {
        die_queue_policy: p.device.timing.die_queue_policy,
        ..config.timing.clone()
    } == p.device.timing;
    (same_geometry && same_times).then_some(measured)
}

/// t_r, t'_r, t_w, t_e of one scheme.
struct SetTimes {
    read_ns: f64,
    gc_read_ns: f64,
    write_ns: f64,
    erase_ns: f64,
}

impl SetTimes {
    fn measured(m: &MeasuredSetTimes, scheme: Scheme) -> Self {
        let ns = |v: u64| v as f64;
        match scheme {
            Scheme::PartFtl => SetTimes {
                read_ns: ns(m.read_set_read_ns),
                gc_read_ns: ns(m.write_set_read_ns),
                write_ns: ns(m.write_set_write_ns),
                erase_ns: ns(m.write_set_erase_ns),
            },
            Scheme::WaoGc | Scheme::Rtgc => SetTimes {
                read_ns: ns(m.all_chips_read_ns),
                gc_read_ns: ns(m.all_chips_read_ns),
                write_ns: ns(m.all_chips_write_ns),
                erase_ns: ns(m.all_chips_erase_ns),
            },
        }
    }

    fn modelled(config: &ExperimentConfig, scheme: Scheme) -> Self {
        let layout = Layout::new(&config.geometry);
        let g = &config.geometry;
        let all: Vec<DieId> = (0..g.total_dies()).collect();
        let write_way: Vec<DieId> = (0..g.channels).map(|c| layout.die_at(c, 0, 0)).collect();
        let read_set: Vec<DieId> = all
            .iter()
            .copied()
            .filter(|d| !write_way.contains(d))
            .collect();
        let time = |kind, dies: &[DieId]| {
            every_die_ns(&layout, &config.timing, g.page_bytes, kind, dies) as f64
        };
        match scheme {
            Scheme::PartFtl => SetTimes {
                read_ns: time(OpKind::Read, &read_set),
                gc_read_ns: time(OpKind::Read, &write_way),
                write_ns: time(OpKind::Program, &write_way),
                erase_ns: time(OpKind::Erase, &write_way),
            },
            Scheme::WaoGc | Scheme::Rtgc => {
                let read = time(OpKind::Read, &all);
                SetTimes {
                    read_ns: read,
                    gc_read_ns: read,
                    write_ns: time(OpKind::Program, &all),
                    erase_ns: time(OpKind::Erase, &all),
                }
            }
        }
    }
}

/// One `kind` operation on the first block of each of `dies`, all released at 0 on an idle
/// device: when the last completes (0 for no dies).
pub fn every_die_ns(
    layout: &Layout,
    timing: &Timing,
    page_bytes: u32,
    kind: OpKind,
    dies: &[DieId],
) -> u64 {
    let mut scheduler = FlashScheduler::new(*layout, timing.clone(), false);
    let mut queue = EventQueue::new();
    let bytes = if kind == OpKind::Erase { 0 } else { page_bytes };
    let ids: Vec<_> = dies
        .iter()
        .enumerate()
        .map(|(i, &die)| {
            let op = FlashOp::single(kind, die, layout.block(die, 0, 0), bytes, Cause::Host);
            scheduler.submit(op, &[], i as u64, NIL)
        })
        .collect();
    for id in ids {
        scheduler.release(id, 0, &mut queue);
    }
    let mut last = 0;
    let mut done = Vec::new();
    while let Some((t, event)) = queue.pop() {
        scheduler.on_event(event, t, &mut queue);
        scheduler.drain_completions(&mut done);
        if !done.is_empty() {
            last = t;
            done.clear();
        }
    }
    last
}

/// The periodic workload of `config` as the analysis's tasks, one per task (a `count = N`
/// entry gives N): a reader or a writer of its request size in device pages, rounded up, with
/// its period. Errors when the run is not a periodic workload, or a task's deadline is not its
/// period (the paper's tests assume implicit deadlines).
pub fn workload_tasks(config: &ExperimentConfig) -> Result<Vec<TaskSpec>, SimError> {
    let w = &config.workload;
    if !config.trace.path.is_empty() || w.pattern != Pattern::Periodic {
        return Err(ConfigError::invalid(
            "workload",
            if config.trace.path.is_empty() {
                w.pattern.name()
            } else {
                "trace"
            },
            "the admission tests apply to periodic task sets only",
            "--workload periodic:tasks=... (e.g. 4xw12p@60ms+4xr3p@15ms)",
        )
        .into());
    }
    let page_bytes = u64::from(config.geometry.page_bytes);
    let mut tasks = Vec::new();
    for (i, t) in w.tasks.iter().enumerate() {
        if t.deadline_resolved_ns() != t.period_ns {
            return Err(ConfigError::invalid(
                format!("workload.tasks[{i}].deadline_ns"),
                t.deadline_ns,
                "the paper's admission tests assume each deadline is its period",
                "0 (the period) or the period",
            )
            .into());
        }
        let pages = t.request_bytes(page_bytes).div_ceil(page_bytes);
        let pages = u32::try_from(pages).map_err(|_| {
            ConfigError::invalid(
                format!("workload.tasks[{i}].pages"),
                pages,
                "too many pages for the analysis",
                "at most 4,294,967,295 pages",
            )
        })?;
        let period = t.period_ns as f64;
        let spec = match t.op {
            TaskOp::Read => TaskSpec::reader(pages, period),
            TaskOp::Write => TaskSpec::writer(pages, period),
        }
        .map_err(|e| {
            ConfigError::invalid(
                format!("workload.tasks[{i}]"),
                pages,
                e.to_string(),
                "a task of at least one page and a positive period",
            )
        })?;
        tasks.extend(std::iter::repeat_n(spec, t.count as usize));
    }
    Ok(tasks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigSource;
    use crate::realtime::NS_PER_MS;

    fn config(device: &str, sets: &[&str]) -> ExperimentConfig {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        ExperimentConfig::load(&ConfigSource {
            preset: Some(device),
            file: None,
            sets: &sets,
        })
        .unwrap()
    }

    fn ftl(name: &str) -> String {
        format!("ftl.name=\"{name}\"")
    }

    #[test]
    fn table_iv_preset_gives_the_papers_columns_verbatim() {
        let part = analysis_device(&config("cosmos-table-iv", &[&ftl("part-ftl")])).unwrap();
        assert_eq!(part.scheme, Scheme::PartFtl);
        assert_eq!(part.params, FlashParams::part_ftl());
        assert!(part.source.contains("Table IV"), "{}", part.source);
        for name in ["wao-gc", "rtgc"] {
            let d = analysis_device(&config("cosmos-table-iv", &[&ftl(name)])).unwrap();
            assert_eq!(d.params, FlashParams::waogc(), "{name}");
        }
    }

    #[test]
    fn ftl_settings_reach_the_analysis() {
        let d = analysis_device(&config(
            "cosmos-table-iv",
            &[
                &ftl("part-ftl"),
                "ftl.data_ratio=0.518",
                "ftl.decode_ns=1200000",
            ],
        ))
        .unwrap();
        assert_eq!(d.params.logical_ratio, 0.518);
        assert_eq!(d.params.decode_ns, 1.2 * NS_PER_MS);
        let w = analysis_device(&config(
            "cosmos",
            &[&ftl("wao-gc"), "ftl.copies_per_step=3"],
        ))
        .unwrap();
        assert_eq!(w.params.copies_per_partial_step, 3);
    }

    #[test]
    fn the_model_times_every_die_of_each_set() {
        // cosmos: 0.25 ms per 8 KiB page on a channel, tR 0.125 ms, tPROG 1.08 ms, tBERS
        // 3.84 ms, cache operations on.
        let part = analysis_device(&config("cosmos", &[&ftl("part-ftl")])).unwrap();
        assert!(part.source.contains("timing model"), "{}", part.source);
        let p = part.params;
        assert_eq!((p.chips, p.write_chips, p.parallel_reads), (16, 4, 12));
        assert_eq!((p.data_chips, p.parity_chips), (12, 4));
        // F_w, one die per channel: Table I's channel rows, by the preset's construction.
        assert_eq!(p.gc_read_ns, 0.375 * NS_PER_MS);
        assert_eq!(p.write_ns, 1.33 * NS_PER_MS);
        assert_eq!(p.erase_ns, 3.84 * NS_PER_MS);
        // F_r, three dies per channel: the cell reads overlap, the three transfers do not.
        assert_eq!(p.read_ns, (0.125 + 3.0 * 0.25) * NS_PER_MS);
        let wao = analysis_device(&config("cosmos", &[&ftl("wao-gc")]))
            .unwrap()
            .params;
        assert_eq!(wao.read_ns, (0.125 + 4.0 * 0.25) * NS_PER_MS);
        assert_eq!(wao.erase_ns, 3.84 * NS_PER_MS);
        assert!(wao.write_ns > p.write_ns, "four ways share a channel's bus");
    }

    #[test]
    fn a_changed_timing_leaves_the_measured_table() {
        let c = config(
            "cosmos-table-iv",
            &[&ftl("part-ftl"), "timing.read_latency_ns=200000"],
        );
        let d = analysis_device(&c).unwrap();
        assert!(d.source.contains("timing model"), "{}", d.source);
        assert_eq!(d.params.gc_read_ns, 0.45 * NS_PER_MS);
        // The number of blocks and the die queue policy do not change the times.
        let c = config(
            "cosmos-table-iv",
            &[
                &ftl("part-ftl"),
                "geometry.blocks_per_plane=64",
                "timing.die_queue_policy=\"edf\"",
            ],
        );
        assert_eq!(analysis_device(&c).unwrap().params, FlashParams::part_ftl());
    }

    #[test]
    fn an_ftl_without_a_test_is_named() {
        let e = analysis_device(&config("cosmos", &[&ftl("pagemap")])).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("ftl.name") && text.contains("part-ftl, wao-gc, rtgc"),
            "{text}"
        );
    }

    #[test]
    fn periodic_tasks_become_the_analysis_tasks() {
        let mut c = config("cosmos", &[&ftl("part-ftl")]);
        c.workload = crate::workload::parse_spec("periodic:tasks=4xw12p@60ms+4xr3p@15ms").unwrap();
        let tasks = workload_tasks(&c).unwrap();
        assert_eq!(tasks.len(), 8);
        assert_eq!(tasks[0], TaskSpec::writer(12, 60.0 * NS_PER_MS).unwrap());
        assert_eq!(tasks[7], TaskSpec::reader(3, 15.0 * NS_PER_MS).unwrap());
        // A size in bytes is rounded up to device pages (8 KiB).
        c.workload.tasks[1].pages = 0;
        c.workload.tasks[1].bytes = 8192 + 512;
        assert_eq!(workload_tasks(&c).unwrap()[4].read_pages, 2);
        // Constrained deadlines are outside the paper's tests.
        c.workload.tasks[0].deadline_ns = 30_000_000;
        let e = workload_tasks(&c).unwrap_err().to_string();
        assert!(e.contains("workload.tasks[0].deadline_ns"), "{e}");
        c.workload = crate::workload::parse_spec("randrw").unwrap();
        let e = workload_tasks(&c).unwrap_err().to_string();
        assert!(e.contains("periodic task sets only"), "{e}");
    }
}
