//! The report as a readable text table.

use std::fmt::Write;

use super::report::{AdmissionReport, DeadlineReport, LatencyReport, OpReport, Report, TaskReport};
use crate::ftl::mapcache::{MapCacheLevel, MapCacheReport};
use crate::ftl::merge::MergeReport;

/// Formats nanoseconds with a unit that keeps three or four significant digits.
pub fn format_ns(ns: f64) -> String {
    match ns {
        n if n >= 1e9 => format!("{:.3} s", n / 1e9),
        n if n >= 1e6 => format!("{:.3} ms", n / 1e6),
        n if n >= 1e3 => format!("{:.2} us", n / 1e3),
        n => format!("{n:.0} ns"),
    }
}

fn op_row(out: &mut String, name: &str, r: &OpReport) {
    if r.count == 0 {
        return;
    }
    let l = &r.latency_ns;
    let _ = writeln!(
        out,
        "  {name:<6} {:>10} {:>11.0} {:>9.1} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        r.count,
        r.iops,
        r.mb_per_s,
        format_ns(l.mean),
        format_ns(l.p50 as f64),
        format_ns(l.p90 as f64),
        format_ns(l.p99 as f64),
        format_ns(l.p99_9 as f64),
        format_ns(l.p99_99 as f64),
        format_ns(l.max as f64),
    );
}

/// Renders the headline figures of a report.
pub fn render_table(r: &Report) -> String {
    let mut out = String::new();
    header(&mut out, r);
    host_rows(&mut out, r);
    sub_request_lines(&mut out, r);
    realtime_rows(&mut out, r);
    flash_rows(&mut out, r);
    footer(&mut out, r);
    out
}

fn header(out: &mut String, r: &Report) {
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    let _ = writeln!(
        out,
        "flashlab {} | device {} ({:.2} GiB raw, {:.2} GiB logical, {} dies on {} channels, state {:.1} MiB) | FTL {}",
        r.flashlab_version,
        r.preset,
        gib(r.device.raw_bytes),
        gib(r.device.logical_bytes),
        r.device.dies,
        r.device.channels,
        r.device.state_bytes as f64 / (1u64 << 20) as f64,
        r.ftl
    );
    if let Some(spec) = r.workload.get("spec").and_then(|s| s.as_str()) {
        let _ = writeln!(out, "workload {spec}");
    }
    if r.workload.get("kind").and_then(|k| k.as_str()) == Some("trace") {
        trace_lines(out, &r.workload);
    }
    if let Some(p) = &r.precondition {
        let _ = writeln!(
            out,
            "preconditioned {:.0}% of the logical space: {:.2} random passes, WA {:.2}{}; then idle: background GC collected {} victims",
            p.fraction * 100.0,
            p.random_passes,
            p.write_amplification,
            if p.steady { " (steady)" } else { "" },
            p.idle_gc_victims
        );
    }
    let _ = writeln!(out, "simulated time {}", format_ns(r.elapsed_ns as f64));
}

fn host_rows(out: &mut String, r: &Report) {
    let _ = writeln!(
        out,
        "\n  {:<6} {:>10} {:>11} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "op", "requests", "IOPS", "MB/s", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max"
    );
    op_row(out, "read", &r.host.read);
    op_row(out, "write", &r.host.write);
    op_row(out, "trim", &r.host.trim);
    op_row(out, "flush", &r.host.flush);
    op_row(out, "all", &r.host.all);
    per_sector_line(out, r);
    let wait = &r.host.host_wait_ns;
    if wait.max > 0 {
        let _ = writeln!(
            out,
            "  host-side wait (bounded-open; part of the latencies above): mean {}, p99 {}, max {}",
            format_ns(wait.mean),
            format_ns(wait.p99 as f64),
            format_ns(wait.max as f64)
        );
    }
}

/// Latency per host sector of reads and writes (nftl-lookup-pagecache.txt Table 5's metric).
fn per_sector_line(out: &mut String, r: &Report) {
    let parts: Vec<String> = [("read", &r.host.read), ("write", &r.host.write)]
        .into_iter()
        .filter(|(_, op)| op.count > 0)
        .filter_map(|(name, op)| {
            op.latency_per_sector_ns
                .map(|ns| format!("{name} {}", format_ns(ns)))
        })
        .collect();
    if parts.is_empty() {
        return;
    }
    let sector = r.config["host"]["sector_bytes"].as_u64().unwrap_or(512);
    let _ = writeln!(
        out,
        "  time per {sector} B sector (latencies / sectors moved): {}",
        parts.join(", ")
    );
}

/// `count` and latencies of one kind of (sub-)request, or None when there were none.
fn latency_part(name: &str, l: &LatencyReport) -> Option<String> {
    (l.count > 0).then(|| {
        let ns = &l.latency_ns;
        format!(
            "{name} {} mean {}, p99 {}, max {}",
            l.count,
            format_ns(ns.mean),
            format_ns(ns.p99 as f64),
            format_ns(ns.max as f64)
        )
    })
}

/// Sub-request latencies in the FTL (from hand-over to the FTL's completion).
fn sub_request_lines(out: &mut String, r: &Report) {
    let s = &r.host.sub_requests;
    let parts: Vec<String> = [("read", &s.read), ("write", &s.write)]
        .into_iter()
        .filter_map(|(name, l)| latency_part(name, l))
        .collect();
    if !parts.is_empty() {
        let _ = writeln!(out, "  sub-requests in the FTL: {}", parts.join("; "));
    }
}

/// Deadline misses, the per-task table and the time series' size.
fn realtime_rows(out: &mut String, r: &Report) {
    if let Some(d) = &r.deadlines {
        deadline_line(out, d);
    }
    if let Some(a) = &r.admission {
        admission_line(out, a);
    }
    if !r.tasks.is_empty() {
        task_rows(out, r);
    }
    if let Some(t) = &r.timeseries {
        let coarsened = if t.coarsened() {
            format!(
                ", coarsened from the {} asked for to keep at most {}",
                format_ns(t.requested_interval_ns as f64),
                crate::stats::MAX_INTERVALS
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  time series: {} intervals of {}{coarsened} (JSON `timeseries`, or --timeseries-csv)",
            t.intervals.len(),
            format_ns(t.interval_ns as f64)
        );
    }
}

fn deadline_line(out: &mut String, d: &DeadlineReport) {
    let _ = writeln!(
        out,
        "  deadlines: {} of {} requests missed ({:.3}%), worst lateness {}",
        d.misses,
        d.requests,
        d.miss_ratio * 100.0,
        format_ns(d.worst_lateness_ns as f64)
    );
}

/// The admission test's verdict beside the run's misses.
fn admission_line(out: &mut String, a: &AdmissionReport) {
    let why = match (&a.refusal, &a.not_analysable) {
        (Some(r), _) => format!(": {r}"),
        (None, Some(n)) => format!(": {n}"),
        _ => String::new(),
    };
    let scheme = a.analysis.as_ref().map_or("", |x| x.scheme);
    let _ = writeln!(
        out,
        "  admission ({scheme} test, run.admission = {}): {}{why}",
        serde_json::to_value(a.mode)
            .map_or(String::new(), |v| v.as_str().unwrap_or("").to_string()),
        a.outcome
    );
}

/// One row per task and operation: requests, latency and deadline misses.
fn task_rows(out: &mut String, r: &Report) {
    let _ = writeln!(
        out,
        "
  {:<5} {:<6} {:>9} {:>10} {:>10} {:>10} {:>10} {:>8} {:>10}",
        "task", "op", "requests", "mean", "p50", "p99", "max", "misses", "lateness"
    );
    let misses = |task: u32| {
        r.deadlines
            .as_ref()
            .and_then(|d| d.tasks.iter().find(|t| t.task == task))
            .map_or((String::from("-"), String::from("-")), |t| {
                (t.misses.to_string(), format_ns(t.worst_lateness_ns as f64))
            })
    };
    for t in &r.tasks {
        let (missed, lateness) = misses(t.task);
        for (name, l) in task_ops(t) {
            let ns = &l.latency_ns;
            let _ = writeln!(
                out,
                "  {:<5} {name:<6} {:>9} {:>10} {:>10} {:>10} {:>10} {missed:>8} {lateness:>10}",
                t.task,
                l.count,
                format_ns(ns.mean),
                format_ns(ns.p50 as f64),
                format_ns(ns.p99 as f64),
                format_ns(ns.max as f64),
            );
        }
    }
}

/// The operations a task issued.
fn task_ops(t: &TaskReport) -> impl Iterator<Item = (&'static str, &LatencyReport)> {
    [
        ("read", &t.read),
        ("write", &t.write),
        ("trim", &t.trim),
        ("flush", &t.flush),
    ]
    .into_iter()
    .filter(|(_, l)| l.count > 0)
}

/// Formats a byte count with a binary unit.
fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

fn write_amplification_line(r: &Report) -> String {
    match r.write_amplification {
        Some(wa) => format!("write amplification {wa:.3}"),
        None => format!(
            "write amplification n/a: the host wrote {} in the measured window, less than one \
             page per die ({}); the flash work is below",
            format_bytes(r.host.write.bytes),
            format_bytes(r.write_amplification_min_host_bytes)
        ),
    }
}

fn flash_rows(out: &mut String, r: &Report) {
    let _ = writeln!(out, "\n  {}", write_amplification_line(r));
    let _ = writeln!(
        out,
        "  {:<12} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "flash ops", "host", "gc", "mapping", "merge", "total"
    );
    for (name, c) in [
        ("reads", &r.flash.reads),
        ("programs", &r.flash.programs),
        ("erases", &r.flash.erases),
        ("oob reads", &r.flash.oob_reads),
        ("oob programs", &r.flash.oob_programs),
        ("copybacks", &r.flash.copybacks),
    ] {
        if c.total > 0 {
            let _ = writeln!(
                out,
                "  {name:<12} {:>12} {:>12} {:>12} {:>12} {:>12}",
                c.host, c.gc, c.mapping, c.merge, c.total
            );
        }
    }
    let g = &r.gc;
    let _ = writeln!(
        out,
        "  GC: {} victims ({} foreground, {} background), {} units moved ({} foreground, {} background)",
        g.gc_runs,
        g.gc_foreground_runs,
        g.gc_background_runs,
        g.gc_units_moved,
        g.gc_foreground_units_moved,
        g.gc_background_units_moved
    );
    if let Some(m) = &r.merges {
        merges_lines(out, m);
    }
    if let Some(m) = &r.map_cache {
        map_cache_lines(out, m);
    }
}

/// The map cache of a demand-paged FTL: hit ratio per level, translation traffic, flushes.
fn map_cache_lines(out: &mut String, m: &MapCacheReport) {
    let level = |name: &str, l: &MapCacheLevel| {
        format!(
            "{name} {:.1}% hits of {} lookups ({} of {} entries cached)",
            l.hit_ratio * 100.0,
            l.lookups,
            l.occupied_entries,
            l.capacity_entries
        )
    };
    let ctp = m
        .ctp
        .as_ref()
        .map_or(String::new(), |c| format!("; {}", level("CTP", c)));
    let _ = writeln!(out, "  map cache: {}{ctp}", level("CMT", &m.cmt));
    let _ = writeln!(
        out,
        "  map cache: {} translation reads ({} misses coalesced, {} merge reads), {} writes; \
         {} flushes ({:.1} entries each); {} requests blocked",
        m.translation_reads,
        m.misses_coalesced,
        m.merge_reads,
        m.translation_writes,
        m.flushes,
        m.entries_per_flush,
        m.blocked_requests
    );
}

/// The merges of a block-mapped or log-block FTL: kinds, associativity, blocking time.
fn merges_lines(out: &mut String, m: &MergeReport) {
    let _ = writeln!(
        out,
        "  merges: {} ({} switch, {} partial, {} full, {} fold), {} pages copied, {} erases",
        m.total, m.switch, m.partial, m.full, m.fold, m.pages_copied, m.erases
    );
    if m.total == 0 {
        return;
    }
    let predicted = m.predicted_worst_blocking_ns.map_or(String::new(), |ns| {
        format!(" (predicted worst {})", format_ns(ns as f64))
    });
    let _ = writeln!(
        out,
        "  merge associativity: mean {:.2}, max {}; blocking time: mean {}, p99 {}, max {}{}",
        m.associativity.mean,
        m.associativity.max,
        format_ns(m.blocking_ns.mean),
        format_ns(m.blocking_ns.p99 as f64),
        format_ns(m.blocking_ns.max as f64),
        predicted
    );
    if let Some(u) = m.log_buffer {
        let _ = writeln!(
            out,
            "  log buffer: {} of {} log blocks merged, {} unused; oldest log block {} host \
             page writes (merged), {} (still allocated)",
            u.log_blocks_merged,
            u.log_blocks,
            u.log_blocks_unused,
            u.oldest_merged_age_page_writes,
            u.oldest_unmerged_age_page_writes
        );
    }
}

/// The FTL CPU's busy share: the engine's FTL cores, or for an FTL that runs as tasks on a
/// simulated RTOS (mt-ftl, st-ftl: `ftl_details.rtos`) the RTOS CPU's, task work and context
/// switches plus polling (the engine's cores then carry none of its time).
fn ftl_cpu(r: &Report) -> String {
    let rtos = &r.ftl_details["rtos"];
    match (
        rtos["cpu_utilisation"].as_f64(),
        rtos["polling_share"].as_f64(),
    ) {
        (Some(work), Some(polling)) if rtos["measured_ns"].as_u64().unwrap_or(0) > 0 => {
            format!(
                "FTL CPU (RTOS) {:.1}% ({:.1}% tasks and switches, {:.1}% polling)",
                (work + polling) * 100.0,
                work * 100.0,
                polling * 100.0
            )
        }
        _ => format!("FTL CPU {:.1}%", r.utilisation.cpu * 100.0),
    }
}

fn footer(out: &mut String, r: &Report) {
    let u = &r.utilisation;
    let _ = writeln!(
        out,
        "  utilisation: dies {:.1}% (min {:.1}%, max {:.1}%), channels {:.1}%, {}, host link in {:.1}% / out {:.1}%",
        u.dies.mean * 100.0,
        u.dies.min * 100.0,
        u.dies.max * 100.0,
        u.channels.mean * 100.0,
        ftl_cpu(r),
        u.host_link_down * 100.0,
        u.host_link_up * 100.0
    );
    let _ = writeln!(
        out,
        "  erase counts: min {}, mean {:.2}, max {}",
        r.wear.erase_count_min, r.wear.erase_count_mean, r.wear.erase_count_max
    );
    if let Some(n) = r.verified_sectors {
        let _ = writeln!(
            out,
            "  verified: {n} sectors read back matched the last data written"
        );
    }
}

/// What a trace replay did: file, format, pacing, address placement.
fn trace_lines(out: &mut String, w: &serde_json::Value) {
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    let text = |v: &serde_json::Value| v.as_str().unwrap_or("?").to_string();
    let num = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    let replay = &w["replay"];
    let mut pacing = if replay["mode"] == "closed" {
        format!("closed loop at QD {}", num(&replay["queue_depth"]))
    } else {
        format!(
            "open loop at the trace's timestamps x{}",
            replay["speedup"].as_f64().unwrap_or(1.0)
        )
    };
    if replay["mode"] == "bounded-open" {
        let qd = num(&replay["queue_depth"]);
        pacing.push_str(&format!(", at most {qd} in the device (bounded-open)"));
    }
    let summary = &w["summary"];
    let _ = writeln!(
        out,
        "trace {} ({}), {} requests, {pacing}",
        text(&w["name"]),
        text(&w["format"]),
        num(&summary["requests"]),
    );
    let a = &summary["address"];
    let mut placement = format!("  addresses: {}", text(&a["mode"]));
    if a["mode"] == "compact" {
        placement.push_str(&format!(
            ", {:.3} GiB of holes removed from a {:.3} GiB span, {:.3} GiB used",
            gib(num(&a["removed_bytes"])),
            gib(num(&a["trace_span_bytes"])),
            gib(num(&a["mapped_bytes"]))
        ));
    }
    let warmup = num(&summary["warmup_requests"]);
    if warmup > 0 {
        placement.push_str(&format!(
            "; first {warmup} requests are warm-up (not counted)"
        ));
    }
    let _ = writeln!(out, "{placement}");
}
