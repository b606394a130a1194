//! `flashlab experiment part-admission`: each admission test of part-ftl.txt against periodic
//! runs across its boundary (experiment/part_admission.rs), written as table.txt, results.csv,
//! results.json and admission.svg (per scheme, the admitted region against the no-miss region).

use std::path::PathBuf;

use flashlab_sim::experiment::part_admission::{
    absurdities, csv, table, PartAdmissionResults, PartAdmissionStudy, FAMILIES, SCHEMES,
};
use plotters::prelude::*;

use super::part_cosmos::{seeds_arg, Seeds};
use super::{run_study, write_results, write_svg};
use crate::fail;

#[derive(clap::Args, Debug)]
pub struct PartAdmissionArgs {
    /// Output directory (table.txt, results.csv, results.json, admission.svg)
    #[arg(short, long, default_value = "part-admission-study")]
    out: PathBuf,
    /// The full run of `flashlab reproduce --full`: 64 blocks per plane, 20 s of releases, 4
    /// grid points per octave, seeds 1-5 unless --seeds is given (minutes of wall time)
    #[arg(long)]
    full: bool,
    /// Device preset: cosmos (the analysis times the model's chip sets) or cosmos-table-iv (the
    /// same device; the analysis takes Table IV's measured times)
    #[arg(short, long, default_value = "cosmos")]
    device: String,
    /// Blocks per plane of the reduced cosmos (default: 16, 64 with --full)
    #[arg(long, value_parser = clap::value_parser!(u32).range(8..=4096))]
    blocks_per_plane: Option<u32>,
    /// Release window of every run (default: 2s, 20s with --full)
    #[arg(long, value_parser = duration_arg)]
    duration: Option<u64>,
    /// Grid points per halving of the period (default: 2, 4 with --full)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=16))]
    points_per_octave: Option<u32>,
    /// Families, comma-separated (default: all): reads 4x3p, reads 4x12p, writes 4x12p,
    /// writes 4x3p, Table III mix
    #[arg(long, value_delimiter = ',')]
    families: Vec<String>,
    /// Die queue policy of every run: edf, fifo, read-first
    #[arg(long, default_value = "edf")]
    die_queue_policy: String,
    /// Seeds, comma-separated (default: 1,2,3; 1-5 with --full): every run once per seed;
    /// each claim is judged on every seed (a verdict other than "not measured" needs 3)
    #[arg(long, value_parser = seeds_arg)]
    seeds: Option<Seeds>,
    /// Extra setting for every run and for the analysis device (repeatable)
    #[arg(short, long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Do not show progress
    #[arg(long)]
    no_progress: bool,
}

fn duration_arg(text: &str) -> Result<u64, String> {
    match flashlab_sim::workload::parse_duration_ns(text)? {
        0 => Err("must be longer than 0".into()),
        ns => Ok(ns),
    }
}

pub fn part_admission(a: &PartAdmissionArgs) -> i32 {
    let base = if a.full {
        PartAdmissionStudy::full()
    } else {
        PartAdmissionStudy::default()
    };
    let study = PartAdmissionStudy {
        device: a.device.clone(),
        blocks_per_plane: a.blocks_per_plane.unwrap_or(base.blocks_per_plane),
        duration_ns: a.duration.unwrap_or(base.duration_ns),
        points_per_octave: a.points_per_octave.unwrap_or(base.points_per_octave),
        families: if a.families.is_empty() {
            base.families.clone()
        } else {
            a.families.iter().map(|f| f.trim().to_string()).collect()
        },
        die_queue_policy: a.die_queue_policy.clone(),
        seeds: a.seeds.as_ref().map_or(base.seeds.clone(), |s| s.0.clone()),
        sets: a.sets.clone(),
        ..base
    };
    // Bad settings are refused before the output directory is made.
    if let Err(e) = study.check() {
        return fail(&e);
    }
    let (results, output, text) =
        match run_study(&a.out, a.no_progress, |p| study.run(p), table, absurdities) {
            Ok(r) => r,
            Err(code) => return code,
        };
    let json = serde_json::to_value(&results).expect("results serialize");
    let code = write_results(
        &a.out,
        output,
        &json,
        [("results.csv", csv(&results)), ("table.txt", text)],
    );
    if code != 0 {
        return code;
    }
    let code = write_svg(&a.out.join("admission.svg"), |svg| plot(svg, &results));
    if code != 0 {
        return code;
    }
    eprintln!(
        "wrote {}/{{table.txt, results.csv, results.json, admission.svg}}",
        a.out.display()
    );
    0
}

/// One panel per scheme: per family (x) the periods run (y, log): green dots admitted without a
/// miss, hollow blue circles refused without a miss (the test's pessimism), red crosses a miss
/// on some seed (black when the test admitted it: unsafe); a black bar at the analysis
/// boundary T_a, a blue bar at the simulated boundary T_s.
fn plot(svg: &mut String, r: &PartAdmissionResults) -> Result<(), Box<dyn std::error::Error>> {
    let families: Vec<&str> = FAMILIES
        .iter()
        .map(|f| f.name)
        .filter(|n| r.study.families.iter().any(|x| x == n))
        .collect();
    let periods_ms: Vec<f64> = r
        .rows
        .iter()
        .map(|x| x.period_ns as f64 / 1e6)
        .chain(r.boundaries.iter().map(|b| b.analysis_period_ns / 1e6))
        .filter(|v| v.is_finite())
        .collect();
    let y_min = periods_ms.iter().copied().fold(f64::INFINITY, f64::min) * 0.8;
    let y_max = periods_ms.iter().copied().fold(0.0, f64::max) * 1.25;
    if periods_ms.is_empty() {
        return Ok(());
    }
    let root = SVGBackend::with_string(svg, (1200, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let (title, body) = root.split_vertically(50);
    let lines = [
        format!(
            "Admission test vs simulation on {} ({} blocks/plane, {} s of releases, seeds {:?})",
            r.study.device,
            r.study.blocks_per_plane,
            r.study.duration_ns as f64 / 1e9,
            r.study.seeds
        ),
        "green dot: admitted, no miss; blue circle: refused, no miss on any seed; red x: a seed \
         missed (black x: admitted and missed); black bar: analysis boundary T_a; blue bar: \
         simulated boundary T_s"
            .to_string(),
    ];
    for (k, line) in lines.iter().enumerate() {
        title.draw(&Text::new(
            line.clone(),
            (10, 6 + 22 * k as i32),
            ("sans-serif", if k == 0 { 17 } else { 13 }),
        ))?;
    }
    let panels = body.split_evenly((1, SCHEMES.len()));
    let n = families.len() as f64;
    for (panel, (scheme, ftl)) in panels.iter().zip(SCHEMES) {
        let mut chart = ChartBuilder::on(panel)
            .caption(format!("{} ({ftl})", scheme.name()), ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(70)
            .y_label_area_size(55)
            .build_cartesian_2d(-0.5..n - 0.5, (y_min..y_max).log_scale())?;
        let labels = families.clone();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(families.len())
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
                    labels[i as usize].to_string()
                } else {
                    String::new()
                }
            })
            .y_desc("period T (ms)")
            .draw()?;
        for (i, family) in families.iter().enumerate() {
            let x = i as f64;
            let rows: Vec<_> = r
                .rows
                .iter()
                .filter(|row| row.family == *family && row.scheme == scheme.name())
                .collect();
            let mut periods: Vec<u64> = rows.iter().map(|row| row.period_ns).collect();
            periods.sort_unstable();
            periods.dedup();
            for p in periods {
                let at: Vec<_> = rows.iter().filter(|row| row.period_ns == p).collect();
                let admitted = at.iter().any(|row| row.admitted);
                let missed = at.iter().any(|row| row.misses > 0);
                let y = p as f64 / 1e6;
                match (admitted, missed) {
                    (true, false) => {
                        chart.draw_series([Circle::new((x, y), 5, GREEN.filled())])?;
                    }
                    (false, false) => {
                        chart.draw_series([Circle::new((x, y), 5, BLUE.stroke_width(2))])?;
                    }
                    (adm, true) => {
                        let color = if adm { BLACK } else { RED };
                        chart.draw_series([Cross::new((x, y), 5, color.stroke_width(2))])?;
                    }
                }
            }
            if let Some(b) = r
                .boundaries
                .iter()
                .find(|b| b.family == *family && b.scheme == scheme.name())
            {
                let bar = |y: f64, color: RGBColor| {
                    PathElement::new(vec![(x - 0.35, y), (x + 0.35, y)], color.stroke_width(2))
                };
                if b.analysis_period_ns.is_finite() {
                    chart.draw_series([bar(b.analysis_period_ns / 1e6, BLACK)])?;
                }
                if let Some(s) = b.simulated_period_ns {
                    chart.draw_series([bar(s as f64 / 1e6, BLUE)])?;
                }
            }
        }
    }
    root.present()?;
    Ok(())
}
