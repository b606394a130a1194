//! `flashlab experiment`: a paper's study end to end, written as a table, CSV, JSON and SVG
//! plots into an output directory.

use std::path::{Path, PathBuf};

use flashlab_sim::experiment::claims::{claims_text, PaperClaim};
use flashlab_sim::experiment::mt_ftl::{Study, StudyMode, StudyOptions};
use flashlab_sim::experiment::part_schedulability::{
    Curve, ReadShare, SchedulabilityStudy, SeedRun, SCHEMES,
};
use flashlab_sim::stats::format_ns;
use indicatif::{ProgressBar, ProgressStyle};
use plotters::prelude::*;

use crate::output::Output;

mod part_admission;
mod part_cosmos;
use crate::{fail, write_json, EXIT_INPUT, EXIT_IO};

#[derive(clap::Subcommand, Debug)]
pub enum ExperimentCommand {
    /// multithreaded-ftl-ucos.txt Figs. 3 and 4: st-ftl against mt-ftl over queue depths, on
    /// mt-board and on parallel SSDs
    MtFtl(MtFtlArgs),
    /// nftl-lookup-pagecache.txt Tables 4-6: NFTL plain, with the lookup table and with the
    /// page cache at 50-400% of its RAM, on nftl-samsung and nftl-toshiba, 8 and 16 KiB blocks,
    /// under the file-system-benchmark stand-in at 94% and 23% utilisation
    Nftl(NftlArgs),
    /// kast.txt Figs. 6-9: BAST, FAST, SAST and KAST over K with 32 log blocks on kast-slc
    Kast(KastArgs),
    /// fmmu.txt Figs. 11-14 on fmmu-16ch: synthetic workloads after a full fill, traces at
    /// 512 outstanding, 4 KiB random reads from 1x1 to 32x8 on PCIe 3.0 x32, beside the
    /// closed forms of the ideal limits
    Fmmu(FmmuArgs),
    /// part-ftl.txt section VI.A, Figs. 5-7: acceptance ratio and weighted schedulability of
    /// random task sets under PaRT-FTL, RTGC and WAO-GC (GC likelihood 100/75/50%)
    PartSchedulability(PartSchedulabilityArgs),
    /// part-ftl.txt sections VI.B-C, Figs. 10-16: Table III's periodic tasks on cosmos under
    /// part-ftl, wao-gc and rtgc (deadline misses, response and page latencies, bandwidth over
    /// time) and WAO-GC's write bandwidth before and after GC starts
    PartCosmos(part_cosmos::PartCosmosArgs),
    /// issue 29: each admission test of part-ftl.txt (PaRT-FTL's eqs. 6-7, RTGC's, WAO-GC's
    /// worst case) against periodic runs on cosmos across its boundary: the admitted region
    /// against the region with no observed miss, per scheme
    PartAdmission(part_admission::PartAdmissionArgs),
}

#[derive(clap::Args, Debug)]
pub struct PartSchedulabilityArgs {
    /// Output directory (acceptance.csv, weighted_read_size.csv, weighted_write_size.csv and
    /// an SVG plot of each); without it the three CSV tables go to standard output
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Task sets per point (per utilisation, and per utilisation and size)
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    sets: u32,
    /// Seeds of the task-set generator and of WAO-GC's interference draws, comma-separated:
    /// every sweep runs once per seed and each claim is judged on every seed (a verdict other
    /// than "not measured" needs 3)
    #[arg(long, default_value = "1,2,3", value_parser = part_cosmos::seeds_arg)]
    seeds: part_cosmos::Seeds,
    /// How a task's utilisation splits between its reads and writes: `uniform` (a random
    /// share per task) or a fixed read share in [0, 1]
    #[arg(long, default_value = "uniform", value_parser = read_share_arg)]
    read_share: ReadShare,
    /// PaRT-FTL's λ, as section V.A states it (0.643); the column part_ftl_fitted always runs
    /// λ = 0.518, fitted to eq. 9's 7.3 MB/s (see docs/realtime-analysis.md)
    #[arg(long, default_value_t = flashlab_sim::realtime::device::PART_LOGICAL_RATIO)]
    part_logical_ratio: f64,
    /// Do not show progress
    #[arg(long)]
    no_progress: bool,
}

fn read_share_arg(text: &str) -> Result<ReadShare, String> {
    if text == "uniform" {
        return Ok(ReadShare::Uniform);
    }
    match text.parse::<f64>() {
        Ok(s) if (0.0..=1.0).contains(&s) => Ok(ReadShare::Fixed(s)),
        _ => Err(format!(
            "`{text}` is neither `uniform` nor a share in [0, 1]"
        )),
    }
}

#[derive(clap::Args, Debug)]
pub struct FmmuArgs {
    /// Output directory (table.txt, results.csv, results.json)
    #[arg(short, long, default_value = "fmmu-study")]
    out: PathBuf,
    /// Parts, comma separated: exec-time (the model's Fig. 10 table), synthetic, traces,
    /// scaling, scan-sweep (CDFTL's 4-core random write across flush-scan costs, first seed)
    /// [default: all; --quick: all but scan-sweep, whose random writes need steady GC]
    #[arg(long, value_delimiter = ',')]
    parts: Vec<String>,
    /// Schemes of the synthetic and traces parts, comma separated (default: all): ideal,
    /// dftl-1c, dftl-2c, dftl-4c, cdftl-1c, cdftl-2c, cdftl-4c, fmmu
    #[arg(long, value_delimiter = ',')]
    schemes: Vec<String>,
    /// Workloads of the synthetic part, comma separated (default: all): seq-write-64k,
    /// seq-read-64k, rand-write-4k, rand-read-4k
    #[arg(long, value_delimiter = ',')]
    synthetic: Vec<String>,
    /// Trace files of the traces part, comma separated [default: sample:wsrch,sample:tpcc,
    /// the MQSim excerpts built in (`flashlab trace samples`): the paper's MSR and WebSearch
    /// traces are not public]
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    traces: Vec<String>,
    /// CI sizes: 32 pages per block, a few thousand requests, three scaling points, no random
    /// writes unless --synthetic names them (their claims say "not measured at quick size")
    #[arg(long)]
    quick: bool,
    /// Seeds, comma separated: every point runs once per seed, and a claim needs 3 for a
    /// verdict
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    seeds: Vec<u64>,
    /// Do not show progress
    #[arg(long)]
    no_progress: bool,
}

#[derive(clap::Args, Debug)]
pub struct NftlArgs {
    /// Output directory (table.txt, results.csv, results.json)
    #[arg(short, long, default_value = "nftl-study")]
    out: PathBuf,
    /// Flash size in MiB (the paper: 34)
    #[arg(long, default_value_t = 34, value_parser = clap::value_parser!(u64).range(1..=4096))]
    flash_mib: u64,
    /// Seeds of the file-system streams, comma separated: every case runs once per seed (a
    /// thread each), and a claim needs 3 seeds for a verdict
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    seeds: Vec<u64>,
    /// Share of Table 3's Postmark-long and IOzone writes the combo trace runs (1: the
    /// paper's 4.35 million sector writes; the quick reproduction runs 0.1)
    #[arg(long, default_value_t = 1.0)]
    combo_scale: f64,
}

#[derive(clap::Args, Debug)]
pub struct KastArgs {
    /// Output directory (table.txt, results.csv, results.json)
    #[arg(short, long, default_value = "kast-study")]
    out: PathBuf,
    /// K values (SAST's set size N = K), comma separated
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16,32")]
    ks: Vec<u32>,
    /// Trace stand-ins, comma separated: web (browser cache), pc (desktop), hotcold (random pages)
    #[arg(long, value_delimiter = ',', default_value = "web,hotcold,pc")]
    workloads: Vec<String>,
    /// Requests measured per run (20000, 2e4, 20k)
    #[arg(long, default_value = "20000", value_parser = crate::count_arg)]
    requests: u64,
    /// Requests of the same workload run before the measured ones, not measured (steady state)
    #[arg(long, default_value = "20000", value_parser = crate::count_arg)]
    warmup: u64,
    /// Seeds, comma separated: every point runs once per seed (a thread each), and a claim
    /// needs 3 seeds for a verdict
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    seeds: Vec<u64>,
    /// Extra setting for every run (repeatable), e.g. --set geometry.blocks_per_plane=1024
    #[arg(short, long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Do not show progress
    #[arg(long)]
    no_progress: bool,
}

#[derive(clap::Args, Debug)]
pub struct MtFtlArgs {
    /// Output directory (table.txt, results.csv, results.json, *.svg)
    #[arg(short, long, default_value = "mt-ftl-study")]
    out: PathBuf,
    /// Workload (--workload syntax; its qd is replaced by each queue depth, its pacing by
    /// --mode and, in bounded-open mode, its rate by --rate)
    #[arg(short, long, default_value = flashlab_sim::experiment::mt_ftl::DEFAULT_WORKLOAD)]
    workload: String,
    /// Pacing: closed (qd requests outstanding) or bounded-open (arrivals at --rate, at most qd
    /// in the device, the rest wait host-side; response time from arrival)
    #[arg(long, default_value = flashlab_sim::experiment::mt_ftl::DEFAULT_MODE.name())]
    mode: StudyMode,
    /// Mean arrival rate of bounded-open mode, requests/s (the workload's arrival process)
    #[arg(long, default_value_t = flashlab_sim::experiment::mt_ftl::DEFAULT_RATE_IOPS)]
    rate: f64,
    /// Queue depths, comma separated
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,2,4,8,16,32,64,128,256"
    )]
    queue_depths: Vec<u32>,
    /// Requests measured per run (20000, 2e4, 20k)
    #[arg(long, default_value = "20000", value_parser = crate::count_arg)]
    requests: u64,
    /// Blocks per plane of mt-board (default: the preset's 4096, 4 GB)
    #[arg(long)]
    board_blocks_per_plane: Option<u32>,
    /// Parallel SSD presets, comma separated (empty: board only)
    #[arg(long, value_delimiter = ',', default_value = "cosmos,fmmu-16ch")]
    ssd: Vec<String>,
    /// Blocks per plane of the SSDs (capacity scaled down; parallelism and timing kept)
    #[arg(long, default_value_t = 128)]
    ssd_blocks_per_plane: u32,
    /// Fraction of the SSDs' logical space preconditioned (the board: all)
    #[arg(long, default_value_t = 0.5)]
    ssd_precondition: f64,
    /// mt-ftl task counts on the SSDs
    #[arg(long, value_delimiter = ',', default_value = "4,8,16")]
    ssd_tasks: Vec<u32>,
    /// Seeds, comma separated: every point runs once per seed and the claims are judged over
    /// them (a verdict needs 3); the plots show the first seed's points
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    seeds: Vec<u64>,
    /// Extra setting for every run (repeatable), e.g. --set ftl.cpu_request_ns=5000
    #[arg(short, long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Do not show progress
    #[arg(long)]
    no_progress: bool,
}

pub fn experiment_command(command: &ExperimentCommand) -> i32 {
    match command {
        ExperimentCommand::MtFtl(a) => mt_ftl(a),
        ExperimentCommand::Nftl(a) => nftl(a),
        ExperimentCommand::Kast(a) => kast(a),
        ExperimentCommand::Fmmu(a) => fmmu(a),
        ExperimentCommand::PartSchedulability(a) => part_schedulability(a),
        ExperimentCommand::PartCosmos(a) => part_cosmos::part_cosmos(a),
        ExperimentCommand::PartAdmission(a) => part_admission::part_admission(a),
    }
}

fn part_schedulability(a: &PartSchedulabilityArgs) -> i32 {
    let mut study = SchedulabilityStudy::paper(a.sets, &a.seeds.0);
    study.read_share = a.read_share;
    study.part_device.logical_ratio = a.part_logical_ratio;
    if let Err(e) = study.part_device.validated() {
        eprintln!("error: --part-logical-ratio: {e}");
        return EXIT_INPUT;
    }
    if let Some(dir) = &a.out {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("error: cannot create {}: {e}", dir.display());
            return EXIT_IO;
        }
    }
    let results = with_progress(a.no_progress, |p| study.run(p));
    let seeds: Vec<String> = study.seeds.iter().map(u64::to_string).collect();
    let mean_of = format!("mean of seeds {}", seeds.join(", "));
    type Pick = fn(&SeedRun) -> &Curve;
    let figures: [(&str, &Curve, Pick, String, &str, &str); 3] = [
        (
            "acceptance",
            &results.acceptance,
            |r| &r.acceptance,
            format!("Acceptance ratio vs utilisation (Fig. 5), {mean_of}"),
            "total utilisation",
            "acceptance ratio",
        ),
        (
            "weighted_read_size",
            &results.weighted_read_size,
            |r| &r.weighted_read_size,
            format!("Weighted schedulability vs read size (Fig. 6), {mean_of}"),
            "read size (pages)",
            "weighted schedulability",
        ),
        (
            "weighted_write_size",
            &results.weighted_write_size,
            |r| &r.weighted_write_size,
            format!("Weighted schedulability vs write size (Fig. 7), {mean_of}"),
            "write size (pages)",
            "weighted schedulability",
        ),
    ];
    let Some(dir) = &a.out else {
        let tables: Vec<String> = figures.iter().map(|f| results.csv(f.2)).collect();
        print!("{}", tables.join("\n"));
        return 0;
    };
    for (name, curve, pick, title, x_desc, y_desc) in figures {
        let code = write_file(
            &dir.join(format!("{name}.csv")),
            results.csv(pick).as_bytes(),
        );
        if code != 0 {
            return code;
        }
        let code = write_svg(&dir.join(format!("{name}.svg")), |svg| {
            plot_curve(svg, curve, &title, x_desc, y_desc)
        });
        if code != 0 {
            return code;
        }
    }
    // The curves and claims at the top level, beside the study's settings.
    let mut json = serde_json::to_value(&results).expect("results serialize");
    json["study"] = serde_json::to_value(&study).expect("study serializes");
    let output = match Output::create(&dir.join("results.json")) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_IO;
        }
    };
    let code = write_json(output, &json);
    if code != 0 {
        return code;
    }
    print!("claims\n{}", claims_text(&results.claims));
    eprintln!(
        "wrote {}/{{acceptance, weighted_read_size, weighted_write_size}}.{{csv, svg}} and \
         results.json",
        dir.display()
    );
    0
}

/// One line per scheme of a schedulability curve (ratios in [0, 1]), as SVG text.
fn plot_curve(
    svg: &mut String,
    curve: &Curve,
    title: &str,
    x_desc: &str,
    y_desc: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let xs: Vec<f64> = curve.points.iter().map(|p| p.0).collect();
    let x_min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let x_max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let x_range = if x_max > x_min {
        x_min..x_max
    } else {
        x_min - 1.0..x_min + 1.0
    };
    let root = SVGBackend::with_string(svg, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x_range, 0.0..1.05)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .draw()?;
    let labels = [
        "PaRT-FTL",
        "RTGC",
        "WAO-GC 100",
        "WAO-GC 75",
        "WAO-GC 50",
        "PaRT-FTL, lambda 0.518 (fitted to eq. 9)",
    ];
    for (i, (scheme, label)) in SCHEMES.iter().zip(labels).enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let line: Vec<(f64, f64)> = xs.iter().copied().zip(curve.series(scheme)).collect();
        draw_marked_line(&mut chart, line, color, label)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    root.present()?;
    Ok(())
}

fn fmmu(a: &FmmuArgs) -> i32 {
    use flashlab_sim::experiment::fmmu_study::{csv, exec_time_table, table, FmmuStudy, PARTS};
    if let Some(bad) = a.parts.iter().find(|p| !PARTS.contains(&p.as_str())) {
        eprintln!(
            "error: --parts: `{bad}` is not a part (allowed: {})",
            PARTS.join(", ")
        );
        return EXIT_INPUT;
    }
    let base = if a.quick {
        FmmuStudy::quick()
    } else {
        FmmuStudy::full()
    };
    let traces = if a.traces.is_empty() {
        base.traces.clone()
    } else {
        a.traces.clone()
    };
    let synthetic = if a.synthetic.is_empty() {
        base.synthetic.clone()
    } else {
        a.synthetic.clone()
    };
    let parts = if a.parts.is_empty() {
        base.parts.clone()
    } else {
        a.parts.clone()
    };
    let study = FmmuStudy {
        parts,
        schemes: a.schemes.clone(),
        synthetic,
        traces,
        seeds: a.seeds.clone(),
        ..base
    };
    // Bad scheme or workload names, missing traces and traces the study would write over
    // are refused before the output directory is made.
    if let Err(e) = study
        .selected_schemes()
        .and_then(|_| study.check_traces())
        .and_then(|_| refuse_writing_traces(&a.traces, &a.out))
    {
        return fail(&e);
    }
    let results = match open_results(&a.out) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let points = match with_progress(a.no_progress, |p| study.run(p)) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let mut text = String::new();
    if study.parts.iter().any(|p| p == "exec-time") {
        text.push_str("FTL execution time (fmmu.txt Fig. 10, as charged)\n");
        text.push_str(&exec_time_table());
        text.push('\n');
    }
    if !points.is_empty() {
        text.push_str(&table(&points));
    }
    let claims = flashlab_sim::experiment::fmmu_study::claims(&study, &points);
    text.push_str(&claims_table(&claims));
    print!("{text}");
    let json = serde_json::json!({ "study": study, "points": points, "claims": claims });
    write_results(
        &a.out,
        results,
        &json,
        [("results.csv", csv(&points)), ("table.txt", text)],
    )
}

/// Refuses `--traces` files that are among the files the fmmu study writes in `dir`.
fn refuse_writing_traces(traces: &[String], dir: &Path) -> Result<(), flashlab_sim::SimError> {
    use crate::output::{refuse_clashes, Named};
    let inputs: Vec<Named> = traces
        .iter()
        .map(|t| Named {
            option: "--traces",
            path: Path::new(t),
        })
        .collect();
    let files: Vec<PathBuf> = ["results.json", "results.csv", "table.txt"]
        .iter()
        .map(|name| dir.join(name))
        .collect();
    let outputs: Vec<Named> = files
        .iter()
        .map(|path| Named {
            option: "--out",
            path,
        })
        .collect();
    refuse_clashes(&inputs, &outputs)
}

fn kast(a: &KastArgs) -> i32 {
    use flashlab_sim::experiment::kast::{csv, table, KastStudy};
    let study = KastStudy {
        ks: a.ks.clone(),
        workloads: a.workloads.clone(),
        requests: a.requests,
        warmup: a.warmup,
        seeds: a.seeds.clone(),
        sets: a.sets.clone(),
        ..KastStudy::default()
    };
    let results = match open_results(&a.out) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let points = match with_progress(a.no_progress, |p| study.run(p)) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let claims = flashlab_sim::experiment::kast::claims(&study, &points);
    let text = table(&points) + &claims_table(&claims);
    print!("{text}");
    let json = serde_json::json!({ "study": study, "points": points, "claims": claims });
    write_results(
        &a.out,
        results,
        &json,
        [("results.csv", csv(&points)), ("table.txt", text)],
    )
}

fn nftl(a: &NftlArgs) -> i32 {
    use flashlab_sim::experiment::nftl::{run_study, NftlStudyConfig};
    let results = match open_results(&a.out) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let study = match run_study(&NftlStudyConfig {
        flash_bytes: a.flash_mib << 20,
        seeds: a.seeds.clone(),
        combo_scale: a.combo_scale,
    }) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let table = study.tables() + &claims_table(&study.claims);
    print!("{table}");
    let json = serde_json::to_value(&study).expect("study serializes");
    write_results(
        &a.out,
        results,
        &json,
        [("results.csv", study.csv()), ("table.txt", table)],
    )
}

fn mt_ftl(a: &MtFtlArgs) -> i32 {
    let options = StudyOptions {
        workload: a.workload.clone(),
        mode: a.mode,
        rate_iops: a.rate,
        queue_depths: a.queue_depths.clone(),
        requests: a.requests,
        board_blocks_per_plane: a.board_blocks_per_plane,
        ssd_presets: a.ssd.iter().filter(|s| !s.is_empty()).cloned().collect(),
        ssd_blocks_per_plane: a.ssd_blocks_per_plane,
        ssd_tasks: a.ssd_tasks.clone(),
        ssd_precondition: a.ssd_precondition,
        seeds: a.seeds.clone(),
        sets: a.sets.clone(),
        ..StudyOptions::default()
    };
    let results = match open_results(&a.out) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let study = match with_progress(a.no_progress, |p| options.run(p)) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let table = render_table(&study);
    print!("{table}");
    write_outputs(&a.out, results, &study, &table)
}

/// Creates the output directory and opens its `results.json`, so that an unwritable
/// directory is found before the study runs; the exit code on failure.
fn open_results(dir: &Path) -> Result<Output, i32> {
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("error: cannot create {}: {e}", dir.display());
        return Err(EXIT_IO);
    }
    Output::create(&dir.join("results.json")).map_err(|e| {
        eprintln!("error: {e}");
        EXIT_IO
    })
}

/// What a study command shares once its settings are checked: opens `out`'s `results.json`
/// (an unwritable directory is found before the runs), runs the study with progress, prints
/// its table and warns of implausible results; the results, the open JSON output and the
/// table, or the exit code of the failure.
fn run_study<R>(
    out: &Path,
    no_progress: bool,
    run: impl FnOnce(&mut dyn FnMut(usize, usize, &str)) -> Result<R, flashlab_sim::SimError>,
    table: impl FnOnce(&R) -> String,
    absurdities: impl FnOnce(&R) -> Vec<String>,
) -> Result<(R, Output, String), i32> {
    let output = open_results(out)?;
    let results = with_progress(no_progress, run).map_err(|e| fail(&e))?;
    let text = table(&results);
    print!("{text}");
    for problem in absurdities(&results) {
        eprintln!("warning: implausible result: {problem}");
    }
    Ok((results, output, text))
}

/// Runs `study` with a progress bar on a terminal (unless `hidden`), cleared at the end.
fn with_progress<T>(
    hidden: bool,
    study: impl FnOnce(&mut dyn FnMut(usize, usize, &str)) -> T,
) -> T {
    let bar = progress_bar().filter(|_| !hidden);
    let result = study(&mut |done, total, what| {
        if let Some(bar) = &bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            bar.set_message(what.to_string());
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    result
}

/// Writes `json` to `results` and each named text file in `dir`; the first failure's exit code.
fn write_results<const N: usize>(
    dir: &Path,
    results: Output,
    json: &serde_json::Value,
    texts: [(&str, String); N],
) -> i32 {
    let code = write_json(results, json);
    if code != 0 {
        return code;
    }
    for (name, text) in texts {
        let code = write_file(&dir.join(name), text.as_bytes());
        if code != 0 {
            return code;
        }
    }
    0
}

fn progress_bar() -> Option<ProgressBar> {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::new(1);
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} runs  {elapsed}  {msg}")
                .expect("valid template"),
        );
        bar
    })
}

/// One plotted series: a line with a dot at each point, under `label` in the legend.
fn draw_marked_line<CT>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, CT>,
    line: Vec<(f64, f64)>,
    color: RGBAColor,
    label: impl Into<String>,
) -> Result<(), Box<dyn std::error::Error>>
where
    CT: CoordTranslate<From = (f64, f64)>,
{
    chart
        .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    chart.draw_series(
        line.iter()
            .map(|&(a, b)| Circle::new((a, b), 3, color.filled())),
    )?;
    Ok(())
}

/// Draws a plot as SVG text and writes it to `path` (nothing when the drawing is empty: no
/// data to plot); the exit code.
fn write_svg(
    path: &Path,
    draw: impl FnOnce(&mut String) -> Result<(), Box<dyn std::error::Error>>,
) -> i32 {
    let mut svg = String::new();
    if let Err(e) = draw(&mut svg) {
        eprintln!("error: cannot write {}: {e}", path.display());
        return EXIT_IO;
    }
    if svg.is_empty() {
        return 0;
    }
    write_file(path, svg.as_bytes())
}

/// Writes `bytes` whole to `path` (or leaves it as it was); the exit code.
fn write_file(path: &Path, bytes: &[u8]) -> i32 {
    match Output::create(path).and_then(|o| o.write_whole(bytes)) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_IO
        }
    }
}

fn write_outputs(dir: &Path, results: Output, study: &Study, table: &str) -> i32 {
    let json = serde_json::to_value(study).expect("study serializes");
    let texts = [
        ("results.csv", study.csv()),
        ("table.txt", table.to_string()),
    ];
    let code = write_results(dir, results, &json, texts);
    if code != 0 {
        return code;
    }
    let mode = format!("{}, seed {}", study.options.mode.name(), study.first_seed());
    let board_titles = [
        format!("mt-board: average response time (Fig. 3), {mode}"),
        format!("mt-board: worst response time (Fig. 4), {mode}"),
    ];
    let mut plots = vec![
        (
            "board-mean.svg",
            board_titles[0].as_str(),
            Metric::Mean,
            "mt-board",
        ),
        (
            "board-worst.svg",
            board_titles[1].as_str(),
            Metric::Max,
            "mt-board",
        ),
    ];
    let devices: Vec<String> = study.options.ssd_presets.clone();
    let titles: Vec<String> = devices
        .iter()
        .map(|d| format!("{d}-sized SSD: average response time, {mode}"))
        .collect();
    let files: Vec<String> = devices.iter().map(|d| format!("{d}-mean.svg")).collect();
    for i in 0..devices.len() {
        plots.push((&files[i], &titles[i], Metric::Mean, &devices[i]));
    }
    for (file, title, metric, device) in plots {
        let code = write_svg(&dir.join(file), |svg| {
            plot(svg, study, device, title, metric)
        });
        if code != 0 {
            return code;
        }
    }
    eprintln!(
        "wrote {}/{{table.txt, results.csv, results.json, *.svg}}",
        dir.display()
    );
    0
}

/// The table: one row per device, FTL and queue depth, with mt-ftl's gain over st-ftl.
fn render_table(study: &Study) -> String {
    let mut out = String::new();
    let o = &study.options;
    out.push_str(&format!(
        "mode {} ({}); workload {}; {} requests a run (every response time below is over a \
         run of this length)\n",
        o.mode.name(),
        o.mode.describe(o.rate_iops),
        o.workload,
        o.requests
    ));
    out.push_str(&format!(
        "{:>4} {:<10} {:<7} {:>5} {:>5} {:>12} {:>12} {:>12} {:>12} {:>8} {:>8} {:>9} {:>10} {:>10}\n",
        "seed",
        "device",
        "ftl",
        "tasks",
        "qd",
        "mean",
        "p99",
        "max",
        "host wait",
        "gain",
        "worst",
        "cpu busy",
        "meta wait",
        "nand wait"
    ));
    for p in &study.points {
        let gain = study
            .gain_on(p.seed, &p.device, p.tasks, p.queue_depth)
            .filter(|_| p.ftl == "mt-ftl");
        let (g, w) = gain.map_or((String::from("-"), String::from("-")), |g| {
            (
                format!("{:+.1}%", 100.0 * g.mean_gain),
                format!("{:+.1}%", 100.0 * g.worst_change),
            )
        });
        out.push_str(&format!(
            "{:>4} {:<10} {:<7} {:>5} {:>5} {:>12} {:>12} {:>12} {:>12} {:>8} {:>8} {:>8.1}% {:>10} {:>10}\n",
            p.seed,
            p.device,
            p.ftl,
            p.tasks,
            p.queue_depth,
            format_ns(p.mean_ns),
            format_ns(p.p99_ns as f64),
            format_ns(p.max_ns as f64),
            format_ns(p.host_wait_mean_ns),
            g,
            w,
            100.0 * p.cpu_utilisation,
            format_ns(p.sem_wait_ns.metadata as f64 / p.requests.max(1) as f64),
            format_ns(p.sem_wait_ns.nand as f64 / p.requests.max(1) as f64),
        ));
    }
    out.push_str(
        "mean, p99, max: response time from arrival; host wait: mean time before the device took \
         the request (part of the response time); gain: 1 - mean(mt-ftl)/mean(st-ftl); worst: \
         max(mt-ftl)/max(st-ftl) - 1; \
         meta wait, nand wait: metadata- and NAND-semaphore wait per request (GC holds the \
         metadata semaphore)\n",
    );
    for device in
        std::iter::once("mt-board").chain(study.options.ssd_presets.iter().map(String::as_str))
    {
        if let Some(best) = study
            .gains
            .iter()
            .filter(|g| g.device == device && g.seed == study.first_seed())
            .max_by(|a, b| a.mean_gain.total_cmp(&b.mean_gain))
        {
            out.push_str(&format!(
                "{device}: best mt-ftl gain {:+.1}% ({:.2}x) with {} tasks at queue depth {} \
                 (seed {})\n",
                100.0 * best.mean_gain,
                best.speedup,
                best.tasks,
                best.queue_depth,
                best.seed
            ));
        }
    }
    out.push_str(&claims_table(&study.claims));
    out
}

/// The paper's claims as text: verdict, source, claim, the paper's value and ours, and why
/// when not reproduced (the verdicts are computed from the study's results).
fn claims_table(claims: &[PaperClaim]) -> String {
    format!(
        "\nclaims (verdicts computed from these results)\n{}",
        claims_text(claims)
    )
}

#[derive(Clone, Copy)]
enum Metric {
    Mean,
    Max,
}

/// Response time against queue depth (log2 axis), one line per FTL and task count, as SVG
/// text into `svg` (nothing when the device has no points): the first seed's points.
fn plot(
    svg: &mut String,
    study: &Study,
    device: &str,
    title: &str,
    metric: Metric,
) -> Result<(), Box<dyn std::error::Error>> {
    let seed = study.first_seed();
    let points: Vec<_> = study
        .points
        .iter()
        .filter(|p| p.device == device && p.seed == seed)
        .collect();
    if points.is_empty() {
        return Ok(());
    }
    let value = |p: &flashlab_sim::experiment::mt_ftl::Point| match metric {
        Metric::Mean => p.mean_ns / 1e9,
        Metric::Max => p.max_ns as f64 / 1e9,
    };
    let x = |qd: u32| f64::from(qd).log2();
    let x_max = points.iter().map(|p| x(p.queue_depth)).fold(0.0, f64::max);
    let y_max = points.iter().map(|p| value(p)).fold(0.0, f64::max) * 1.1;
    let root = SVGBackend::with_string(svg, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..x_max.max(1.0), 0.0..y_max.max(1e-9))?;
    chart
        .configure_mesh()
        .x_desc("queue depth")
        .y_desc("response time (s)")
        .x_label_formatter(&|v| format!("{}", 2f64.powf(*v).round()))
        .draw()?;
    let mut series: Vec<(String, u32)> = points.iter().map(|p| (p.ftl.clone(), p.tasks)).collect();
    series.dedup();
    series.sort();
    series.dedup();
    for (i, (ftl, tasks)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let line: Vec<(f64, f64)> = points
            .iter()
            .filter(|p| &p.ftl == ftl && p.tasks == *tasks)
            .map(|p| (x(p.queue_depth), value(p)))
            .collect();
        let label = if ftl == "st-ftl" {
            ftl.clone()
        } else {
            format!("{ftl} ({tasks} tasks)")
        };
        draw_marked_line(&mut chart, line, color, label)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    root.present()?;
    Ok(())
}
