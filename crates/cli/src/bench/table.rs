//! The tables `flashlab bench` prints: one title and column header per group of lines, one
//! row per line.

use super::measure::Figures;
use super::plan::GroupKind;
use super::BenchArgs;

/// The title (with a blank line before all but the first table) and the column header.
pub fn header(kind: GroupKind, a: &BenchArgs, first: bool, periodic_title: Option<&str>) -> String {
    let gap = if first { "" } else { "\n" };
    let p = a.precondition * 100.0;
    let (q, device) = (a.qd(), &a.device);
    let title = match kind {
        GroupKind::Reference => match periodic_title {
            Some(t) => format!("flashlab bench: {t}, device `{device}`, preconditioned to {p:.0}%"),
            None => format!(
                "flashlab bench: {} x 4 KiB random writes, QD {q}, device `{device}`, preconditioned to {p:.0}%",
                a.requests()
            ),
        },
        GroupKind::BlockFtls => format!(
            "block-level FTLs: {} x 4 KiB random writes each, QD {q}, after a sequential fill of {p:.0}%",
            a.block_ftl_requests()
        ),
        GroupKind::MapCacheFtls => format!(
            "map-cache FTLs on `{device}`: {} x 4 KiB random writes each, QD {q}, after a sequential fill of {p:.0}%",
            a.map_cache_requests()
        ),
        GroupKind::PaperFtls => format!(
            "FTLs on their papers' devices: {} requests each (4 KiB random writes at QD {q}, or Table III's periodic jobs), preconditioned to {p:.0}%",
            a.ftl_requests()
        ),
        GroupKind::Rtos => format!(
            "mt-ftl RTOS path: 4 FTL tasks on the simulated uC/OS-II of `mt-board`, {} desktop-workload requests closed loop at QD {q}, preconditioned to {p:.0}%",
            a.ftl_requests()
        ),
        GroupKind::Trace => format!(
            "trace replay ({}): closed loop at QD {q} on `{device}`, after a sequential fill of {p:.0}%",
            a.traces_title()
        ),
        GroupKind::Precondition => format!(
            "preconditioning `{device}` to {p:.0}% (sequential fill, random overwrites to steady state, idle GC), in mapping units; x pagemap = pagemap's units/s over the line's"
        ),
        GroupKind::Scaling => format!(
            "scaling: {} x 4 KiB random writes, QD {q}, on `{device}` with as many blocks per plane as each size needs, preconditioned to {p:.0}%; x cost = wall time per request over the base size's (16 GiB, else the first)",
            a.requests()
        ),
    };
    let columns = match kind {
        GroupKind::Reference => format!(
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
        ),
        GroupKind::BlockFtls => format!(
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
        ),
        GroupKind::MapCacheFtls => format!(
            "{:<8} {:<11} {:>10} {:>8} {:>14} {:>14} {:>6} {:>11}",
            "ftl", "mode", "precond s", "run s", "requests/s", "peak RSS MiB", "WA", "x pagemap"
        ),
        GroupKind::PaperFtls => format!(
            "{:<9} {:<9} {:<21} {:<11} {:>10} {:>8} {:>14} {:>14} {:>6} {:>9}",
            "ftl",
            "device",
            "workload",
            "mode",
            "precond s",
            "run s",
            "requests/s",
            "peak RSS MiB",
            "WA",
            "GC runs"
        ),
        GroupKind::Rtos => format!(
            "{:<11} {:>10} {:>8} {:>14} {:>14} {:>11} {:>9} {:>6}",
            "mode",
            "precond s",
            "run s",
            "requests/s",
            "peak RSS MiB",
            "switches/r",
            "CPU busy",
            "WA"
        ),
        GroupKind::Trace => format!(
            "{:<24} {:<11} {:>9} {:>10} {:>8} {:>14} {:>14} {:>12}",
            "trace",
            "mode",
            "requests",
            "precond s",
            "run s",
            "requests/s",
            "peak RSS MiB",
            "simulated s"
        ),
        GroupKind::Precondition => format!(
            "{:<8} {:>12} {:>12} {:>10} {:>8} {:>9} {:>14} {:>9} {:>14} {:>6}",
            "ftl",
            "fill units",
            "random",
            "idle GC",
            "fill s",
            "random s",
            "units/s",
            "x pagemap",
            "peak RSS MiB",
            "WA"
        ),
        GroupKind::Scaling => format!(
            "{:>5} {:>7} {:>7} {:<11} {:>10} {:>8} {:>14} {:>7} {:>14} {:>8} {:>6}",
            "GiB",
            "blocks",
            "OP",
            "mode",
            "precond s",
            "run s",
            "requests/s",
            "x cost",
            "peak RSS MiB",
            "MiB/GiB",
            "WA"
        ),
    };
    format!("{gap}{title}\n{columns}")
}

/// The row of a line; `pagemap_per_s` is the pagemap line's requests/s in the same mode (the
/// map-cache table's baseline).
pub fn row(kind: GroupKind, f: &Figures, pagemap_per_s: Option<f64>) -> String {
    match kind {
        GroupKind::Reference => format!(
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
        ),
        GroupKind::BlockFtls => format!(
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
        ),
        GroupKind::MapCacheFtls => {
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
        GroupKind::PaperFtls => format!(
            "{:<9} {:<9} {:<21} {:<11} {:>10.2} {:>8.2} {:>14.0} {:>14} {:>6} {:>9}",
            f.ftl,
            f.device,
            f.workload.as_deref().unwrap_or(""),
            f.mode,
            f.precondition_s,
            f.run_s,
            f.requests_per_s,
            rss_text(f),
            wa_text(f),
            f.gc_victims
        ),
        GroupKind::Rtos => {
            let (switches, busy) = f.rtos.as_ref().map_or(("n/a".into(), "n/a".into()), |r| {
                (
                    format!("{:.1}", r.context_switches_per_request),
                    r.cpu_utilisation
                        .map_or("n/a".into(), |u| format!("{:.0}%", u * 100.0)),
                )
            });
            format!(
                "{:<11} {:>10.2} {:>8.2} {:>14.0} {:>14} {:>11} {:>9} {:>6}",
                f.mode,
                f.precondition_s,
                f.run_s,
                f.requests_per_s,
                rss_text(f),
                switches,
                busy,
                wa_text(f)
            )
        }
        GroupKind::Trace => format!(
            "{:<24} {:<11} {:>9} {:>10.2} {:>8.3} {:>14.0} {:>14} {:>12.4}",
            f.workload.as_deref().unwrap_or(""),
            f.mode,
            f.requests,
            f.precondition_s,
            f.run_s,
            f.requests_per_s,
            rss_text(f),
            f.simulated_s
        ),
        GroupKind::Precondition => {
            let p = &f.precondition;
            format!(
                "{:<8} {:>12} {:>12} {:>10} {:>8.2} {:>9.2} {:>14.0} {:>9} {:>14} {:>6.2}",
                f.ftl,
                p.fill_units,
                p.random_writes,
                p.idle_gc_units_moved,
                p.fill_s,
                p.random_s,
                p.units_per_s,
                p.x_pagemap.map_or("n/a".into(), |x| format!("{x:.2}")),
                rss_text(f),
                p.write_amplification
            )
        }
        GroupKind::Scaling => scaling_row(f),
    }
}

fn scaling_row(f: &Figures) -> String {
    let Some(s) = &f.scaling else {
        return String::new();
    };
    let op = s
        .size
        .over_provisioning
        .map_or("n/a".into(), |op| format!("{:.1}%", op * 100.0));
    let ratio = s
        .cost_per_request_ratio
        .map_or("n/a".into(), |r| format!("{r:.2}"));
    let per_gib = s
        .peak_rss_mib_per_gib
        .map_or("n/a".into(), |m| format!("{m:.2}"));
    format!(
        "{:>5} {:>7} {:>7} {:<11} {:>10.2} {:>8.2} {:>14.0} {:>7} {:>14} {:>8} {:>6}",
        s.size.device_gib,
        s.size.blocks_per_plane,
        op,
        f.mode,
        f.precondition_s,
        f.run_s,
        f.requests_per_s,
        ratio,
        rss_text(f),
        per_gib,
        wa_text(f)
    )
}

/// What the simulated time of a periodic line was, and the request rate in it.
pub fn simulated_rate_line(f: &Figures) -> String {
    format!(
        "{}: {} requests in {:.3} simulated s: {:.0} requests per simulated s",
        f.mode,
        f.requests,
        f.simulated_s,
        f.requests as f64 / f.simulated_s
    )
}

fn rss_text(f: &Figures) -> String {
    f.peak_rss_mib.map_or("n/a".into(), |m| format!("{m:.1}"))
}

fn wa_text(f: &Figures) -> String {
    f.write_amplification
        .map_or("n/a".into(), |wa| format!("{wa:.2}"))
}
