//! The `flashlab` command line, as a library so the Python package can run it in-process
//! (`flashlab.cli:main` hands `sys.argv` to [`run`]).
//!
//! Exit codes: 0 success, 2 bad input (arguments, configuration, workload), 70 internal error
//! (an FTL broke a NAND rule, a data check failed), 74 output could not be written.

mod admit_cmd;
mod bench;
mod experiment_cmd;
mod help;
mod io_messages;
mod output;
mod reproduce;
pub mod serve;
mod trace_cmd;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use flashlab_sim::config::{preset, ConfigSource, ExperimentConfig, PRESETS};
use flashlab_sim::engine::PreconditionProgress;
use flashlab_sim::ftl::registry;
use flashlab_sim::stats::{build_report, render_table, write_timeseries_csv};
use flashlab_sim::workload::{parse_spec, RequestSource};
use flashlab_sim::{SimError, Simulation};
use indicatif::{ProgressBar, ProgressStyle};
use output::Output;

/// Exit code of bad input.
pub const EXIT_INPUT: i32 = 2;
/// Exit code of internal errors (a bug in an FTL or the simulator).
pub const EXIT_INTERNAL: i32 = 70;
/// Exit code when results cannot be written.
pub const EXIT_IO: i32 = 74;

#[derive(Parser, Debug)]
#[command(
    name = "flashlab",
    version,
    about = "flashlab: flash translation layers on a faithful NAND/SSD model",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run an experiment (no arguments: the default experiment)
    Run(RunArgs),
    /// List the device presets, or show one with its provenance and every value
    Presets {
        /// Preset to show
        name: Option<String>,
    },
    /// List the FTLs and their settings, or show one
    Ftls {
        /// FTL to show
        name: Option<String>,
    },
    /// Real-time admission: would this periodic task set meet its deadlines on this device
    /// under part-ftl, wao-gc or rtgc? Every test with its terms and the guaranteed bounds
    /// (part-ftl.txt eqs. 6-16); exit 0 admitted, 1 refused
    Admit(admit_cmd::AdmitArgs),
    /// Measure simulator speed and memory (simulated requests per wall second, peak RSS)
    Bench(bench::BenchArgs),
    /// Block traces: statistics, format conversion, the formats read, reader speed
    #[command(subcommand)]
    Trace(trace_cmd::TraceCommand),
    /// Reproduce a paper's study (many runs; table, CSV, JSON and plots)
    #[command(subcommand)]
    Experiment(experiment_cmd::ExperimentCommand),
    /// Run every study of the chosen papers and write one self-contained HTML report of
    /// set-ups, plots, claims with verdicts and deviations (docs/reproduce.md)
    Reproduce(reproduce::ReproduceArgs),
    /// Serve a simulated SSD as a block device over NBD (a real file system, fio, a VM on any
    /// FTL), with a persistent flash image and power-loss recovery
    Serve(serve::command::ServeArgs),
    /// Run a grid of experiments into CSV and Parquet: a command of the Python package's
    /// `flashlab` (pip install '.[analysis]'; docs/python.md), not of this binary
    Sweep {
        /// The arguments of `flashlab sweep` (`python -m flashlab sweep --help`)
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

#[derive(clap::Args, Debug, Default)]
struct RunArgs {
    /// Device preset (see `flashlab presets`)
    #[arg(short, long, value_name = "PRESET")]
    device: Option<String>,
    /// TOML configuration layered over the preset
    #[arg(short, long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Override one setting, e.g. --set timing.read_latency_ns=60000 (repeatable)
    #[arg(short, long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// FTL to run (see `flashlab ftls`)
    #[arg(long, value_name = "NAME")]
    ftl: Option<String>,
    /// Synthetic workload, e.g. randwrite:bs=4k,qd=32,count=1e6 (syntax below)
    #[arg(short, long, value_name = "SPEC")]
    workload: Option<String>,
    /// Replay a block trace instead of the synthetic workload (plain, .gz or .zst; `-` for
    /// standard input; sample:tpcc or sample:wsrch for a sample built in, see `flashlab trace
    /// samples`)
    #[arg(short, long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Format of --trace (default: detected; see `flashlab trace formats`); also --format
    #[arg(long, value_name = "FORMAT", visible_alias = "format")]
    trace_format: Option<String>,
    /// Count and skip malformed trace lines instead of stopping at the first
    #[arg(long)]
    skip_bad_lines: bool,
    /// Fraction of the logical space to precondition (0 = fresh device)
    #[arg(long, value_name = "FRACTION", allow_negative_numbers = true)]
    precondition: Option<f64>,
    /// Seed of every random choice
    #[arg(long)]
    seed: Option<u64>,
    /// Functional simulation only (no timing; fast)
    #[arg(long)]
    functional: bool,
    /// Check every read against the last data written, and the FTL invariants at the end
    #[arg(long)]
    verify: bool,
    /// Write the JSON report to FILE (`-` for standard output)
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Keep a time series of bandwidth, latency and deadline misses per interval of this
    /// much simulated time (e.g. 100ms; sets run.timeseries_interval_ns); at most 100,000
    /// intervals: on a longer run the interval doubles until they fit, with a warning
    #[arg(long, value_name = "TIME")]
    timeseries_interval: Option<String>,
    /// Write the time series as CSV to FILE (`-` for standard output); needs an interval
    /// (--timeseries-interval or run.timeseries_interval_ns)
    #[arg(long, value_name = "FILE")]
    timeseries_csv: Option<PathBuf>,
    /// Do not print the result table
    #[arg(short, long)]
    quiet: bool,
    /// Do not show progress
    #[arg(long)]
    no_progress: bool,
    /// Print the resolved configuration as TOML and exit
    #[arg(long)]
    print_config: bool,
}

/// Runs the command line `args` (program name first); returns the exit code.
pub fn run(args: Vec<String>) -> i32 {
    let command =
        Cli::command().mut_subcommand("run", |c| c.after_long_help(help::run_long_help()));
    let path = subcommand_path(&command, &args);
    let matches = match command.try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) => return usage_error(&e, &path),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    match cli.command {
        Command::Run(args) => run_command(&args),
        Command::Serve(args) => serve::command::serve_command(&args).unwrap_or_else(|e| fail(&e)),
        Command::Presets { name } => presets_command(name.as_deref()),
        Command::Ftls { name } => ftls_command(name.as_deref()),
        Command::Admit(args) => admit_cmd::admit_command(&args),
        Command::Bench(args) => bench::bench_command(&args),
        Command::Trace(command) => trace_cmd::trace_command(&command),
        Command::Experiment(command) => experiment_cmd::experiment_command(&command),
        Command::Reproduce(args) => reproduce::reproduce_command(&args),
        Command::Sweep { .. } => {
            // The Python console script handles `sweep` before it reaches this code.
            eprintln!(
                "error: `flashlab sweep` is part of the Python package: install it with \
                 pip install '.[analysis]' and run its `flashlab` command or \
                 `python -m flashlab sweep` (docs/python.md)"
            );
            EXIT_INPUT
        }
    }
}

/// Prints help and version output whole, and a usage error as one line: clap's first line,
/// completed with what its following lines said (the missing arguments, the allowed values,
/// a suggestion), and the help of `command`, the one it is about.
fn usage_error(e: &clap::Error, command: &str) -> i32 {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
        }
        _ => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("error: bad arguments");
            let first = in_user_terms(&shorten_quoted(first));
            eprintln!("{first}{} (see `{command} --help`)", usage_detail(e));
        }
    }
    e.exit_code()
}

/// A usage error's line with long quoted values (a 300-digit number) shortened as every
/// message shortens them (`1e300`, or the start and the length).
fn shorten_quoted(line: &str) -> String {
    line.split('\'')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                flashlab_sim::config::settings::shown_value(part)
            } else {
                part.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("'")
}

/// A usage error's line with the standard library's number-parsing messages (an option
/// parsed as a plain integer or float) in a user's terms.
fn in_user_terms(line: &str) -> String {
    [
        ("invalid digit found in string", "expected a whole number"),
        (
            "cannot parse integer from empty string",
            "expected a whole number",
        ),
        (
            "number too large to fit in target type",
            "too large for this option",
        ),
        (
            "number too small to fit in target type",
            "too small for this option",
        ),
        (
            "invalid float literal",
            "expected a number such as 0.5 or 1e6",
        ),
        (
            "cannot parse float from empty string",
            "expected a number such as 0.5 or 1e6",
        ),
    ]
    .iter()
    .fold(line.to_string(), |line, (rust, user)| {
        line.replace(rust, user)
    })
}

/// What clap puts on the lines after its first: the arguments missing, the values allowed,
/// the likely intended spelling.
fn usage_detail(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let strings = |kind: ContextKind| match e.get(kind) {
        Some(ContextValue::Strings(list)) => list.clone(),
        Some(ContextValue::String(one)) => vec![one.clone()],
        _ => Vec::new(),
    };
    let quoted = |list: Vec<String>| {
        list.iter()
            .map(|s| format!("`{s}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match e.kind() {
        ErrorKind::MissingRequiredArgument => {
            format!(" {}", strings(ContextKind::InvalidArg).join(", "))
        }
        ErrorKind::InvalidValue => {
            let allowed = strings(ContextKind::ValidValue);
            if allowed.is_empty() {
                String::new()
            } else {
                format!(" (allowed: {})", allowed.join(", "))
            }
        }
        ErrorKind::UnknownArgument | ErrorKind::InvalidSubcommand => {
            let suggested: Vec<String> = [
                ContextKind::SuggestedArg,
                ContextKind::SuggestedSubcommand,
                ContextKind::SuggestedValue,
            ]
            .into_iter()
            .flat_map(strings)
            .collect();
            if suggested.is_empty() {
                String::new()
            } else {
                format!("; did you mean {}?", quoted(suggested))
            }
        }
        _ => String::new(),
    }
}

/// The command the arguments name (`flashlab trace convert`): the program, then the
/// leading arguments that are subcommands.
fn subcommand_path(command: &clap::Command, args: &[String]) -> String {
    let mut words = vec![String::from("flashlab")];
    let mut at = command;
    for arg in args.iter().skip(1) {
        match at.find_subcommand(arg) {
            Some(sub) => {
                words.push(sub.get_name().to_string());
                at = sub;
            }
            None => break,
        }
    }
    words.join(" ")
}

pub(crate) fn fail(err: &SimError) -> i32 {
    eprintln!("error: {err}");
    if err.is_input_error() {
        EXIT_INPUT
    } else {
        EXIT_INTERNAL
    }
}

/// The `--set` list that the shortcut options stand for.
fn shortcut_sets(a: &RunArgs) -> Result<Vec<String>, SimError> {
    let mut sets = Vec::new();
    if let Some(ftl) = &a.ftl {
        sets.push(format!("ftl.name={}", toml_string(ftl)));
    }
    if let Some(spec) = &a.workload {
        sets.extend(workload_sets(spec)?);
    }
    if let Some(path) = &a.trace {
        sets.push(format!(
            "trace.path={}",
            toml_string(&path.to_string_lossy())
        ));
    }
    if let Some(format) = &a.trace_format {
        sets.push(format!("trace.format={}", toml_string(format)));
    }
    if a.skip_bad_lines {
        sets.push("trace.skip_bad_lines=true".into());
    }
    if let Some(p) = a.precondition {
        sets.push(format!("run.precondition={}", toml::Value::Float(p)));
    }
    if let Some(s) = a.seed {
        sets.push(format!("run.seed={s}"));
    }
    if a.functional {
        sets.push("run.functional_only=true".into());
    }
    if a.verify {
        sets.push("run.verify=true".into());
    }
    if let Some(time) = &a.timeseries_interval {
        let ns =
            flashlab_sim::workload::parse_duration_ns(time).map_err(|message| SimError::Input {
                location: "--timeseries-interval".into(),
                message,
            })?;
        sets.push(format!("run.timeseries_interval_ns={ns}"));
    }
    sets.extend(a.sets.iter().cloned());
    Ok(sets)
}

/// The `--set` list of a `--workload` spec: every field of the checked workload.
pub(crate) fn workload_sets(spec: &str) -> Result<Vec<String>, SimError> {
    let w = parse_spec(spec)?;
    // Every checked workload fits TOML (integers below 2^63); a failure is a bug.
    let table = toml::Table::try_from(&w).map_err(|e| SimError::Input {
        location: format!("--workload {spec}"),
        message: format!("cannot be written as settings: {e}"),
    })?;
    Ok(table
        .into_iter()
        .map(|(k, v)| format!("workload.{k}={v}"))
        .collect())
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn load_config(a: &RunArgs) -> Result<ExperimentConfig, SimError> {
    let sets = shortcut_sets(a)?;
    let config = ExperimentConfig::load(&ConfigSource {
        preset: a.device.as_deref(),
        file: a.config.as_deref(),
        sets: &sets,
    })?;
    refuse_unused(a, &config)?;
    refuse_run_clashes(a, &config)?;
    if a.timeseries_csv.is_some() && config.run.timeseries_interval_ns == 0 {
        return Err(SimError::Input {
            location: "--timeseries-csv".into(),
            message: "the run keeps no time series: give its interval with --timeseries-interval TIME (e.g. 100ms) or --set run.timeseries_interval_ns=NS".into(),
        });
    }
    Ok(config)
}

/// Refuses outputs that are the trace, the configuration file or each other.
fn refuse_run_clashes(a: &RunArgs, config: &ExperimentConfig) -> Result<(), SimError> {
    let trace = std::path::Path::new(&config.trace.path);
    let mut inputs = Vec::new();
    if config.trace.enabled() {
        let option = if a.trace.is_some() {
            "--trace"
        } else {
            "trace.path"
        };
        inputs.push(output::Named {
            option,
            path: trace,
        });
    }
    if let Some(path) = &a.config {
        inputs.push(output::Named {
            option: "--config",
            path,
        });
    }
    let outputs: Vec<output::Named> =
        [("--json", &a.json), ("--timeseries-csv", &a.timeseries_csv)]
            .into_iter()
            .filter_map(|(option, path)| path.as_deref().map(|path| output::Named { option, path }))
            .collect();
    output::refuse_clashes(&inputs, &outputs)
}

/// Refuses options and `--set` keys the run would silently ignore: workload settings when a
/// trace is replayed, trace settings without a trace. (A `--config` file may hold both
/// sections as a template.)
fn refuse_unused(a: &RunArgs, config: &ExperimentConfig) -> Result<(), SimError> {
    let unused = |option: &str, message: String| {
        Err(SimError::Input {
            location: option.to_string(),
            message,
        })
    };
    let set_keys = a
        .sets
        .iter()
        .map(|s| s.split_once('=').map_or(s.as_str(), |(k, _)| k).trim());
    if config.trace.enabled() {
        let trace = &config.trace.path;
        if a.workload.is_some() {
            return unused(
                "--workload",
                format!("a trace (trace.path = {trace}) replaces the synthetic workload: give --trace or --workload, not both"),
            );
        }
        if let Some(key) = set_keys.clone().find(|k| k.starts_with("workload.")) {
            return unused(
                &format!("--set {key}"),
                format!("the workload is not used when a trace (trace.path = {trace}) is replayed; the trace.* settings limit and pace a replay (`flashlab run --help`)"),
            );
        }
        return Ok(());
    }
    for (given, option) in [
        (a.trace_format.is_some(), "--trace-format"),
        (a.skip_bad_lines, "--skip-bad-lines"),
    ] {
        if given {
            return unused(
                option,
                "applies to a trace replay: add --trace FILE (or leave it out)".into(),
            );
        }
    }
    if let Some(key) = set_keys.clone().find(|k| k.starts_with("trace.")) {
        return unused(
            &format!("--set {key}"),
            "applies to a trace replay: add --trace FILE (or --set trace.path=FILE), or leave it out".into(),
        );
    }
    Ok(())
}

fn run_command(a: &RunArgs) -> i32 {
    let config = match load_config(a) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    if a.print_config {
        print!(
            "{}",
            toml::to_string(&config).expect("configuration serializes")
        );
        return 0;
    }
    // A device beyond the machine's memory is refused before it is allocated.
    if let Err(e) = flashlab_sim::memory::check_available(&config) {
        return fail(&e.into());
    }
    // The output is checked (and opened) before a possibly long run.
    let json_out = match open_output(a.json.as_deref()) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let csv_out = match open_output(a.timeseries_csv.as_deref()) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let show_progress = !a.no_progress && std::io::stderr().is_terminal();
    let (report, wall) = match simulate(&config, show_progress) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    if let Some(warning) = report
        .timeseries
        .as_ref()
        .and_then(|t| t.coarsened_warning())
    {
        eprintln!("warning: {warning}");
    }
    // With an output on standard output, the table goes to standard error.
    let output_on_stdout = [&json_out, &csv_out]
        .into_iter()
        .any(|o| o.as_ref().is_some_and(Output::is_stdout));
    if !a.quiet {
        let table = render_table(&report);
        let footer = format!(
            "  wall time: preconditioning {:.2} s{}, measured run {:.2} s ({:.0} simulated requests per second)\n",
            wall.precondition.as_secs_f64(),
            wall.precondition_rate
                .map(|r| format!(" ({})", units_per_second(r)))
                .unwrap_or_default(),
            wall.run.as_secs_f64(),
            report.host.all.count as f64 / wall.run.as_secs_f64().max(1e-9)
        );
        if output_on_stdout {
            eprint!("{table}{footer}");
        } else {
            print!("{table}{footer}");
        }
    }
    if let (Some(out), Some(series)) = (csv_out, &report.timeseries) {
        let mut text = Vec::new();
        write_timeseries_csv(series, &mut text).expect("writing to memory succeeds");
        if let Err(e) = out.write_whole(&text) {
            eprintln!("error: {e}");
            return EXIT_IO;
        }
    }
    match json_out {
        Some(out) => write_json(out, &report.to_json()),
        None => 0,
    }
}

/// Opens an optional output file (checked now, written later); the exit code on failure.
pub(crate) fn open_output(path: Option<&std::path::Path>) -> Result<Option<Output>, i32> {
    path.map(Output::create).transpose().map_err(|e| {
        eprintln!("error: {e}");
        EXIT_IO
    })
}

/// Writes `value` as pretty JSON to `out` and puts it in place; the exit code.
pub(crate) fn write_json(out: Output, value: &serde_json::Value) -> i32 {
    let text = serde_json::to_string_pretty(value).expect("JSON values serialize") + "\n";
    match out.write_whole(text.as_bytes()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_IO
        }
    }
}

/// Wall-clock time of the phases of a run.
struct WallTime {
    precondition: Duration,
    /// Mapping units preconditioning wrote per second (fill and random overwrites).
    precondition_rate: Option<f64>,
    run: Duration,
}

/// Builds, preconditions and runs the experiment, with a progress display on a terminal.
fn simulate(
    config: &ExperimentConfig,
    show_progress: bool,
) -> Result<(flashlab_sim::Report, WallTime), SimError> {
    let started = Instant::now();
    let mut sim = Simulation::new(config)?;
    let mut precondition_rate = None;
    if config.run.precondition > 0.0 {
        let bar = show_progress.then(|| precondition_bar(config, sim.logical_bytes()));
        let mut rate = UnitRate::new(sim.ftl().trim_unit_bytes());
        let summary = sim.precondition_with_progress(&mut |p| {
            if let Some(bar) = &bar {
                show_precondition(bar, p, rate.of(p));
            }
        })?;
        let units = summary.fill_bytes / rate.unit_bytes + summary.random_writes;
        let per_second = rate.per_second(units);
        precondition_rate = Some(per_second);
        if let Some(bar) = bar {
            bar.finish_with_message(format!(
                "preconditioned: {:.2} random passes, WA {:.2}{}, {}",
                summary.random_passes,
                summary.write_amplification,
                if summary.steady { " (steady)" } else { "" },
                units_per_second(per_second)
            ));
        }
    }
    let preconditioned = Instant::now();
    let (source, warned) = make_source(config, &sim)?;
    let bar = show_progress.then(|| {
        let bar = ProgressBar::new(source.expected_requests().unwrap_or(0));
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:40} {pos}/{len} requests, {msg} [{elapsed} < {eta}]",
            )
            .expect("valid template"),
        );
        bar
    });
    let source = sim.run(source, &mut |p| {
        if let Some(bar) = &bar {
            bar.set_position(p.completed);
            bar.set_message(format!("{:.3} s simulated", p.simulated_ns as f64 / 1e9));
        }
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let describe = source.describe();
    for warning in messages(&describe, "warnings") {
        if !warned.contains(&warning) {
            eprintln!("warning: {warning}");
        }
    }
    flashlab_sim::check_measured(&sim, &describe)?;
    if config.run.verify {
        sim.check_invariants().map_err(|message| SimError::Ftl {
            ftl: sim.ftl().name(),
            message: format!("invariant broken at the end of the run: {message}"),
        })?;
    }
    let wall = WallTime {
        precondition: preconditioned - started,
        precondition_rate,
        run: preconditioned.elapsed(),
    };
    Ok((build_report(&sim, describe), wall))
}

/// The strings of the array `key` of a source description.
fn messages(describe: &serde_json::Value, key: &str) -> Vec<String> {
    describe
        .get(key)
        .and_then(|n| n.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|n| n.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The trace or synthetic workload of `config`; a trace's detected format is announced, and
/// what looks wrong with it (implausible units) is printed before the run. Gives the warnings
/// printed, so they are not repeated after the run.
fn make_source(
    config: &ExperimentConfig,
    sim: &Simulation,
) -> Result<(Box<dyn RequestSource>, Vec<String>), SimError> {
    if config.trace.enabled() {
        trace_cmd::announce_stdin(std::path::Path::new(&config.trace.path));
    }
    if config.trace.enabled() && std::io::stderr().is_terminal() {
        eprintln!(
            "reading {} to count its requests and place its addresses...",
            config.trace.path
        );
    }
    let source = flashlab_sim::workload_source(config, sim)?;
    let describe = source.describe();
    for note in messages(&describe, "notes") {
        eprintln!("note: {note}");
    }
    let warnings = messages(&describe, "warnings");
    for warning in &warnings {
        eprintln!("warning: {warning}");
    }
    Ok((source, warnings))
}

fn precondition_bar(config: &ExperimentConfig, logical_bytes: u64) -> ProgressBar {
    let bar = ProgressBar::new(1000);
    bar.set_style(
        ProgressStyle::with_template("{prefix} {bar:40} {msg} [{elapsed}]")
            .expect("valid template"),
    );
    bar.set_prefix(format!(
        "preconditioning {:.0}% of {:.2} GiB",
        config.run.precondition * 100.0,
        logical_bytes as f64 / (1u64 << 30) as f64
    ));
    bar
}

/// Mapping units preconditioning has written, from its progress, and their rate in wall
/// time (shown to the user only, never put in a report).
struct UnitRate {
    unit_bytes: u64,
    fill_units: u64,
    started: Instant,
}

impl UnitRate {
    fn new(unit_bytes: u32) -> Self {
        UnitRate {
            unit_bytes: u64::from(unit_bytes).max(1),
            fill_units: 0,
            started: Instant::now(),
        }
    }

    /// Units written per second up to the progress point `p`.
    fn of(&mut self, p: PreconditionProgress) -> f64 {
        let units = match p {
            PreconditionProgress::Fill {
                done_bytes,
                total_bytes,
            } => {
                self.fill_units = total_bytes / self.unit_bytes;
                done_bytes / self.unit_bytes
            }
            PreconditionProgress::Random { passes, .. } => {
                self.fill_units + (passes * self.fill_units as f64) as u64
            }
        };
        self.per_second(units)
    }

    fn per_second(&self, units: u64) -> f64 {
        units as f64 / self.started.elapsed().as_secs_f64().max(1e-9)
    }
}

fn units_per_second(rate: f64) -> String {
    format!("{:.2} M units written per second", rate / 1e6)
}

/// The fill is the first half of the bar, the random overwrites (up to the pass budget) the
/// second half; `rate` is units written per second so far.
fn show_precondition(bar: &ProgressBar, p: PreconditionProgress, rate: f64) {
    let rate = units_per_second(rate);
    match p {
        PreconditionProgress::Fill {
            done_bytes,
            total_bytes,
        } => {
            bar.set_position(500 * done_bytes / total_bytes.max(1));
            bar.set_message(format!("sequential fill, {rate}"));
        }
        PreconditionProgress::Random {
            passes,
            max_passes,
            write_amplification,
        } => {
            bar.set_position(500 + (500.0 * passes / max_passes.max(1e-9)).min(500.0) as u64);
            bar.set_message(format!(
                "random overwrites: {passes:.2} passes, WA {write_amplification:.2}, {rate}"
            ));
        }
    }
}

fn presets_command(name: Option<&str>) -> i32 {
    let Some(name) = name else {
        for n in PRESETS {
            let p = preset(n).expect("listed presets exist");
            println!("{:<14} {}", p.name, p.summary);
        }
        println!(
            "\nShow one with `flashlab presets NAME`; use one with `flashlab run --device NAME`."
        );
        return 0;
    };
    let Some(p) = preset(name) else {
        eprintln!(
            "error: unknown preset `{name}` (known: {})",
            flashlab_sim::config::preset_names()
        );
        return EXIT_INPUT;
    };
    println!("{}: {}\n", p.name, p.summary);
    println!("{}\n", help::wrap(p.source, 96));
    for d in p.device.field_docs() {
        println!("  {:<34} {:>14} {:<6} {}", d.path, d.value, d.unit, d.doc);
    }
    for s in p.ftl_suggestions {
        for (k, v) in s.settings {
            println!(
                "  {:<34} {:>14}        with {}: {}",
                format!("ftl.{k}"),
                v,
                s.ftls.join(", "),
                s.reason
            );
        }
    }
    0
}

fn ftls_command(name: Option<&str>) -> i32 {
    let entries = registry::entries()
        .iter()
        .filter(|e| name.is_none_or(|n| n == e.name));
    let mut shown = 0;
    for e in entries {
        println!(
            "{:<10} {}",
            e.name,
            help::wrap(e.summary, 86).replace('\n', "\n           ")
        );
        for d in help::ftl_docs(e) {
            println!("    {:<34} {:>10} {:<6} {}", d.path, d.value, d.unit, d.doc);
        }
        shown += 1;
    }
    if shown == 0 {
        eprintln!(
            "error: unknown FTL `{}` (known: {})",
            name.unwrap_or_default(),
            registry::names()
        );
        return EXIT_INPUT;
    }
    0
}

/// Parses a count given on the command line: 1000, 1e6, 250k.
pub(crate) fn count_arg(text: &str) -> Result<u64, String> {
    flashlab_sim::workload::parse_count(text)
}
