//! `flashlab trace`: statistics of a trace, conversion between formats, generation of a
//! synthetic trace (the desktop model), the list of formats with sample lines, the sample
//! traces built in (listed with their licence, or written out), and a reader-speed benchmark
//! on generated files.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use flashlab_sim::trace::formats::{blkparse, disksim, fio, generic, msr, spc};
use flashlab_sim::trace::samples;
use flashlab_sim::trace::{
    render_stats, stats_document, trace_stats, Compression, FormatChoice, OrderOptions, Ordered,
    ReadOptions, TraceFormat, TraceReader, TraceRecord, TraceWriter, FORMAT_NAMES,
};
use flashlab_sim::workload::{parse_number, parse_size, DesktopTrace};
use flashlab_sim::SimError;
use indicatif::{ProgressBar, ProgressStyle};

use super::output::{self, Output};
use super::{fail, write_json, EXIT_INPUT, EXIT_IO};

#[derive(clap::Subcommand, Debug)]
pub enum TraceCommand {
    /// Requests, operations, bytes, sizes, footprint, sequentiality, inter-arrival times
    Stats(StatsArgs),
    /// Convert a trace to another format (output compressed by its .gz or .zst extension)
    Convert(ConvertArgs),
    /// Generate a synthetic trace: `desktop`, a Windows PC installing programs, browsing,
    /// editing documents (see docs/traces.md)
    Generate(GenerateArgs),
    /// List the formats read, with a sample line each
    Formats,
    /// List the sample traces built into flashlab (MQSim excerpts) with their licence; replay
    /// one with `--trace sample:NAME`, or write them out with --extract DIR
    Samples(SamplesArgs),
    /// Measure reading speed (lines per second) of every reader on generated files
    Bench(BenchArgs),
}

#[derive(clap::Args, Debug)]
pub struct InputArgs {
    /// Trace file (plain, gzip or zstd; `-` for standard input; sample:tpcc or sample:wsrch for
    /// a sample built in, see `flashlab trace samples`)
    file: PathBuf,
    /// Format (default: detected; see `flashlab trace formats`); also --trace-format
    #[arg(
        short,
        long,
        value_name = "FORMAT",
        default_value = "auto",
        visible_alias = "trace-format"
    )]
    format: String,
    /// Only these devices, e.g. 0,3 (blkparse: 8:0)
    #[arg(long, value_name = "LIST")]
    devices: Option<String>,
    /// Count and skip malformed lines instead of stopping at the first
    #[arg(long)]
    skip_bad_lines: bool,
    /// Read at most this many requests (1000, 1e6, 250k)
    #[arg(long, value_name = "N", value_parser = super::count_arg)]
    max_requests: Option<u64>,
}

#[derive(clap::Args, Debug)]
pub struct StatsArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Requests held to put an unsorted trace in time order
    #[arg(long, default_value_t = 4096)]
    reorder_window: usize,
    /// Write the statistics as JSON to FILE (`-` for standard output)
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Do not print the table
    #[arg(short, long)]
    quiet: bool,
    /// Do not show progress
    #[arg(long)]
    no_progress: bool,
}

#[derive(clap::Args, Debug)]
pub struct ConvertArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Output file (`-` for standard output; .gz or .zst compress), or give it with --out
    #[arg(required_unless_present = "out")]
    output: Option<PathBuf>,
    /// Output file (as with `trace generate`)
    #[arg(long, value_name = "FILE", conflicts_with = "output")]
    out: Option<PathBuf>,
    /// Output format: msr, spc, disksim-ms, disksim-ns, blkparse-q, fio
    #[arg(long, value_name = "FORMAT")]
    to: String,
    /// Shift times so the first request is at 0
    #[arg(long)]
    rebase_time: bool,
}

#[derive(clap::Args, Debug)]
pub struct GenerateArgs {
    /// What to generate: desktop
    kind: String,
    /// Requests to generate (100000, 1e6, 250k)
    #[arg(long, value_name = "N", default_value = "100000")]
    requests: String,
    /// Size of the partition the files are laid out over, with holes (256GiB, 1t, bytes)
    #[arg(long, value_name = "BYTES", default_value = "256GiB")]
    partition_bytes: String,
    /// Most bytes the trace touches (compaction on replay fits it into a device this large)
    #[arg(long, value_name = "BYTES", default_value = "3GiB")]
    footprint_bytes: String,
    /// Seed: one seed gives the same trace
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Mean arrival rate of the open-loop times, requests per second (bursts and idle gaps)
    #[arg(long, value_name = "IOPS", default_value = "100")]
    rate: String,
    /// Output file (`-` for standard output; .gz or .zst compress)
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Output format: msr, spc, disksim-ms, disksim-ns, blkparse-q, fio (as `trace convert
    /// --to`; --format is the old spelling)
    #[arg(long, value_name = "FORMAT", default_value = "msr", alias = "format")]
    to: String,
}

#[derive(clap::Args, Debug)]
pub struct SamplesArgs {
    /// Write the sample traces and their licence (LICENSE_mqsim.txt) into DIR, made if
    /// missing; files already there are left alone if identical, refused if not
    #[arg(long, value_name = "DIR")]
    extract: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Lines per generated file (1e7, 250k)
    #[arg(long, default_value = "10000000", value_parser = super::count_arg)]
    lines: u64,
    /// Folder for the generated files (deleted after use)
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

pub fn trace_command(command: &TraceCommand) -> i32 {
    match command {
        TraceCommand::Stats(a) => stats_command(a),
        TraceCommand::Convert(a) => convert_command(a),
        TraceCommand::Generate(a) => generate_command(a),
        TraceCommand::Formats => formats_command(),
        TraceCommand::Samples(a) => samples_command(a),
        TraceCommand::Bench(a) => bench_command(a),
    }
}

fn input_error(field: &str, message: String) -> SimError {
    SimError::Input {
        location: field.to_string(),
        message,
    }
}

/// Tells a user at a terminal that the trace is expected on standard input.
pub(crate) fn announce_stdin(path: &Path) {
    if path.as_os_str() == "-" && std::io::stdin().is_terminal() {
        eprintln!("reading the trace from standard input (end it with Ctrl-D)...");
    }
}

fn open_reader(a: &InputArgs) -> Result<TraceReader, SimError> {
    let format = FormatChoice::parse(&a.format).map_err(|e| input_error("--format", e))?;
    announce_stdin(&a.file);
    let reader = TraceReader::open(
        &a.file,
        &ReadOptions {
            format,
            skip_bad_lines: a.skip_bad_lines,
        },
    )?;
    for note in reader.notes() {
        eprintln!("note: {note}");
    }
    Ok(reader)
}

fn device_list(a: &InputArgs) -> Result<Vec<u32>, SimError> {
    let config = flashlab_sim::trace::TraceConfig {
        devices: a.devices.clone().unwrap_or_default(),
        ..Default::default()
    };
    Ok(config.device_list()?)
}

/// Warns of skipped malformed lines and of ignored bytes after a gzip stream.
fn warn_bad_lines(reader: &TraceReader) {
    if reader.bad_lines() > 0 {
        eprintln!(
            "warning: skipped {} malformed lines; the first: {}",
            reader.bad_lines(),
            reader.bad_examples().join(" | ")
        );
    }
    if let Some(warning) = reader.trailing_bytes_warning() {
        eprintln!("warning: {warning}");
    }
}

/// A progress bar over the bytes of the file, on a terminal.
fn file_bar(reader: &TraceReader) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(reader.file_progress().1);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {msg} [{elapsed} < {eta}]")
            .expect("valid template"),
    );
    Some(bar)
}

fn stats_command(a: &StatsArgs) -> i32 {
    if let Some(json) = &a.json {
        if let Err(e) = refuse_overwriting_input(&a.input, "--json", json) {
            return fail(&e);
        }
    }
    let json_out = match super::open_output(a.json.as_deref()) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let result = (|| {
        let reader = open_reader(&a.input)?;
        let bar = file_bar(&reader).filter(|_| !a.no_progress);
        let mut stream = Ordered::new(
            reader,
            OrderOptions {
                devices: device_list(&a.input)?,
                reorder_window: a.reorder_window,
                max_requests: a.input.max_requests.unwrap_or(0),
                max_duration_ns: 0,
            },
        );
        let stats = trace_stats(&mut stream, &mut |s| {
            if let Some(bar) = &bar {
                bar.set_position(s.reader().file_progress().0);
                bar.set_message(format!("{} requests", s.emitted()));
            }
        })?;
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        warn_bad_lines(stream.reader());
        Ok::<_, SimError>((stats, stream))
    })();
    let (stats, stream) = match result {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let reader = stream.reader();
    for warning in &stats.unit_warnings {
        eprintln!("warning: {warning}");
    }
    let to_stdout = json_out.as_ref().is_some_and(Output::is_stdout);
    if !a.quiet {
        let header = format!(
            "{} ({}, {} compression, {} lines)\n",
            reader.label(),
            reader.format(),
            reader.compression().name(),
            reader.lines_read()
        );
        let text = header + &render_stats(&stats);
        if to_stdout {
            eprint!("{text}");
        } else {
            print!("{text}");
        }
    }
    match json_out {
        Some(out) => write_json(out, &stats_document(reader.label(), reader, &stats)),
        None => 0,
    }
}

/// An output stream, compressed as the file name's extension says; [`Encoded::finish`]
/// writes the compressed stream's end (an error there must not go unnoticed).
enum Encoded<'a> {
    Plain(&'a mut Output),
    Gzip(flate2::write::GzEncoder<&'a mut Output>),
    Zstd(zstd::stream::write::Encoder<'static, &'a mut Output>),
}

impl<'a> Encoded<'a> {
    fn new(out: &'a mut Output) -> std::io::Result<Self> {
        if out.is_stdout() {
            return Ok(Encoded::Plain(out));
        }
        Ok(match Compression::from_extension(out.path()) {
            Compression::None => Encoded::Plain(out),
            Compression::Gzip => Encoded::Gzip(flate2::write::GzEncoder::new(
                out,
                flate2::Compression::default(),
            )),
            Compression::Zstd => Encoded::Zstd(zstd::stream::write::Encoder::new(out, 3)?),
        })
    }

    fn finish(self) -> std::io::Result<()> {
        match self {
            Encoded::Plain(out) => out.flush(),
            Encoded::Gzip(e) => e.finish()?.flush(),
            Encoded::Zstd(e) => e.finish()?.flush(),
        }
    }
}

impl Write for Encoded<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Encoded::Plain(w) => w.write(buf),
            Encoded::Gzip(w) => w.write(buf),
            Encoded::Zstd(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Encoded::Plain(w) => w.flush(),
            Encoded::Gzip(w) => w.flush(),
            Encoded::Zstd(w) => w.flush(),
        }
    }
}

/// Refuses an output (`option` names it) that is the trace being read.
fn refuse_overwriting_input(input: &InputArgs, option: &str, path: &Path) -> Result<(), SimError> {
    output::refuse_clashes(
        &[output::Named {
            option: "FILE",
            path: &input.file,
        }],
        &[output::Named { option, path }],
    )
}

/// Opens `path` for a trace output; prints the error.
fn open_trace_output(path: &Path) -> Result<Output, i32> {
    Output::create(path).map_err(|e| {
        eprintln!("error: {e}");
        EXIT_IO
    })
}

/// Writes `records` in `format` to `out` (compressed as its name says) and puts it in place.
fn write_records(
    out: &mut Output,
    format: TraceFormat,
    records: &mut dyn FnMut(&mut TraceWriter) -> Result<(), RecordsError>,
) -> Result<(), RecordsError> {
    let mut encoded = Encoded::new(out).map_err(RecordsError::Io)?;
    let mut writer = TraceWriter::new(format, &mut encoded).map_err(RecordsError::Io)?;
    records(&mut writer)?;
    drop(writer);
    encoded.finish().map_err(RecordsError::Io)
}

/// Why writing a trace stopped: the output, or the input being read.
enum RecordsError {
    Io(std::io::Error),
    Input(SimError),
}

impl ConvertArgs {
    /// The output file, given as the second argument or with --out, and how it was given.
    fn output_path(&self) -> Result<(&'static str, &Path), SimError> {
        match (&self.output, &self.out) {
            (Some(path), _) => Ok(("OUTPUT", path)),
            (None, Some(path)) => Ok(("--out", path)),
            (None, None) => Err(input_error("trace convert", "give the output file".into())),
        }
    }
}

fn convert_command(a: &ConvertArgs) -> i32 {
    let Some(to) = TraceFormat::from_name(&a.to).filter(TraceFormat::writable) else {
        eprintln!(
            "error: --to {}: expected one of msr, spc, disksim-ms, disksim-ns, blkparse-q, fio",
            a.to
        );
        return EXIT_INPUT;
    };
    let output_path = match a
        .output_path()
        .and_then(|(option, path)| refuse_overwriting_input(&a.input, option, path).map(|()| path))
    {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let mut out = match open_trace_output(output_path) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let mut reader = match open_reader(&a.input) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let devices = match device_list(&a.input) {
        Ok(d) => d,
        Err(e) => return fail(&e),
    };
    let (mut written, mut dropped) = (0u64, 0u64);
    let result = write_records(&mut out, to, &mut |writer| {
        let mut read = 0u64;
        let mut origin = None;
        let limit = a.input.max_requests.unwrap_or(u64::MAX);
        while let Some(record) = reader.next_record().map_err(RecordsError::Input)? {
            if !devices.is_empty() && !devices.contains(&record.device) {
                continue;
            }
            if read == limit {
                break;
            }
            read += 1;
            let origin = *origin.get_or_insert(record.time_ns);
            let record = TraceRecord {
                time_ns: if a.rebase_time {
                    record.time_ns.saturating_sub(origin)
                } else {
                    record.time_ns
                },
                ..record
            };
            match writer.write(&record).map_err(RecordsError::Io)? {
                true => written += 1,
                false => dropped += 1,
            }
        }
        Ok(())
    });
    let committed = match result {
        Ok(()) => out.commit(),
        Err(RecordsError::Input(e)) => return fail(&e),
        Err(RecordsError::Io(e)) => {
            eprintln!(
                "error: cannot write {}: {}",
                output_path.display(),
                output::io_message(&e)
            );
            return EXIT_IO;
        }
    };
    if let Err(e) = committed {
        eprintln!("error: {e}");
        return EXIT_IO;
    }
    warn_bad_lines(&reader);
    if dropped > 0 {
        eprintln!(
            "warning: {dropped} trims/flushes dropped: the {} format has none",
            a.to
        );
    }
    eprintln!(
        "converted {written} requests from {} ({}) to {}",
        reader.label(),
        reader.format(),
        a.to
    );
    0
}

/// The settings of `trace generate`, checked: (requests, partition, footprint, rate, format).
fn generate_settings(a: &GenerateArgs) -> Result<(u64, u64, u64, f64, TraceFormat), SimError> {
    if a.kind != "desktop" {
        return Err(input_error(
            "trace generate",
            format!("unknown kind `{}` (known: desktop)", a.kind),
        ));
    }
    let requests = parse_number(&a.requests)
        .ok()
        .filter(|n| n.fract() == 0.0 && *n >= 1.0 && *n <= u64::MAX as f64)
        .ok_or_else(|| {
            input_error(
                "--requests",
                format!(
                    "`{}`: expected a whole number of requests >= 1, such as 100000, 1e6 or 250k",
                    a.requests
                ),
            )
        })? as u64;
    let bytes = |flag: &str, text: &str| {
        parse_size(text).map_err(|e| {
            input_error(
                flag,
                format!("{e}; expected a size such as 256GiB, 3g or 1073741824"),
            )
        })
    };
    let partition = bytes("--partition-bytes", &a.partition_bytes)?;
    let footprint = bytes("--footprint-bytes", &a.footprint_bytes)?;
    let rate = parse_number(&a.rate)
        .ok()
        .filter(|r| *r > 0.0)
        .ok_or_else(|| {
            input_error(
                "--rate",
                format!(
                    "`{}`: expected a positive number of requests per second",
                    a.rate
                ),
            )
        })?;
    let format = TraceFormat::from_name(&a.to)
        .filter(TraceFormat::writable)
        .ok_or_else(|| {
            input_error(
                "--to (--format)",
                format!(
                    "`{}`: expected one of msr, spc, disksim-ms, disksim-ns, blkparse-q, fio",
                    a.to
                ),
            )
        })?;
    Ok((requests, partition, footprint, rate, format))
}

fn generate_command(a: &GenerateArgs) -> i32 {
    let (requests, partition, footprint, rate, format) = match generate_settings(a) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let mut trace = match DesktopTrace::new(partition, footprint, rate, a.seed) {
        Ok(t) => t,
        Err(message) => return fail(&input_error("--footprint-bytes", message)),
    };
    let mut out = match open_trace_output(&a.out) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let (mut read_bytes, mut written_bytes, mut last_ns) = (0u64, 0u64, 0u64);
    let result = write_records(&mut out, format.clone(), &mut |writer| {
        for _ in 0..requests {
            let r = trace.next_request();
            match r.op {
                flashlab_sim::host::Op::Read => read_bytes += r.len_bytes,
                _ => written_bytes += r.len_bytes,
            }
            last_ns = r.arrival_ns;
            let record = TraceRecord {
                time_ns: r.arrival_ns,
                device: 0,
                op: r.op,
                offset_bytes: r.offset_bytes,
                len_bytes: r.len_bytes,
            };
            writer.write(&record).map_err(RecordsError::Io)?;
        }
        Ok(())
    });
    let committed = match result {
        Ok(()) => out.commit().map_err(|e| e.to_string()),
        Err(RecordsError::Io(e)) => Err(format!(
            "cannot write {}: {}",
            a.out.display(),
            output::io_message(&e)
        )),
        Err(RecordsError::Input(e)) => return fail(&e),
    };
    if let Err(message) = committed {
        eprintln!("error: {message}");
        return EXIT_IO;
    }
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    eprintln!(
        "generated {requests} desktop requests ({}, seed {}) to {}: {:.2} GiB read, {:.2} GiB written (written/read {:.2}), {:.1} s of arrivals; partition {:.2} GiB, footprint at most {:.2} GiB",
        format.name(),
        a.seed,
        a.out.display(),
        gib(read_bytes),
        gib(written_bytes),
        written_bytes as f64 / read_bytes.max(1) as f64,
        last_ns as f64 / 1e9,
        gib(trace.model().partition_bytes()),
        gib(trace.model().footprint_bytes()),
    );
    0
}

fn formats_command() -> i32 {
    println!("Trace formats (--trace-format / --format); compression (gzip, zstd) is detected.\n");
    for (name, about) in FORMAT_NAMES {
        println!(
            "  {name:<12} {}",
            super::help::wrap(about, 84).replace('\n', "\n               ")
        );
    }
    println!("\nSample lines:");
    let samples = [
        ("msr", msr::SAMPLE),
        ("spc", spc::SAMPLE),
        ("disksim-ms", disksim::SAMPLE_MS),
        ("disksim-ns", disksim::SAMPLE_NS),
        ("blkparse", blkparse::SAMPLE),
        ("fio", fio::SAMPLE),
        ("generic", generic::SAMPLE),
    ];
    for (name, line) in samples {
        println!("  {name:<12} {line}");
    }
    println!(
        "\nUnits: msr filetime (100 ns) and bytes; spc seconds, 512 B sectors (LBA) and bytes (size);\n\
         disksim ms or ns, 512 B sectors; blkparse seconds, 512 B sectors; fio v3 microseconds, bytes.\n\
         Blank lines and lines starting with # are skipped; \\r\\n endings are accepted."
    );
    0
}

fn samples_command(a: &SamplesArgs) -> i32 {
    match &a.extract {
        Some(dir) => extract_samples(dir),
        None => {
            print!("{}", samples_listing());
            0
        }
    }
}

/// The list of the built-in samples, how to use them, where they come from and their licence.
fn samples_listing() -> String {
    let mut out = String::from(
        "Sample traces built into flashlab (the repository's traces/ folder): MQSim excerpts,\n\
         DiskSim ASCII with nanosecond times (format disksim-ns, detected).\n\n",
    );
    for s in &samples::SAMPLES {
        out += &format!(
            "  {:<14} {:<25} {:>6} requests  {}\n",
            s.reference(),
            s.file_name,
            s.requests,
            s.summary
        );
    }
    out += &format!(
        "\nUse one wherever a trace file is read:\n\
         \x20 flashlab run --trace sample:tpcc --set trace.replay=closed --set trace.queue_depth=64\n\
         \x20 flashlab trace stats sample:wsrch\n\
         \x20 flashlab trace samples --extract DIR   # the files and their licence\n\
         `flashlab bench` (trace section) and `flashlab experiment fmmu` (traces part) replay them\n\
         unless given other traces.\n\n\
         Origin: the MQSim simulator (github.com/CMU-SAFARI/MQSim, folder traces/), most likely\n\
         excerpts of the SNIA/UMass TPC-C and WebSearch traces. Their licence ({}):\n\n{}",
        samples::LICENSE_FILE_NAME,
        samples::LICENSE
    );
    out
}

/// Writes the samples and their licence into `dir`; a file already there is kept when it is
/// identical and refused when it is not (nothing is ever replaced).
fn extract_samples(dir: &Path) -> i32 {
    let fail = |path: &Path, message: String| {
        eprintln!("error: cannot write {}: {message}", path.display());
        EXIT_IO
    };
    if let Err(e) = std::fs::create_dir_all(dir) {
        return fail(dir, e.to_string());
    }
    let files = samples::SAMPLES
        .iter()
        .map(|s| (s.file_name, s.bytes))
        .chain([(samples::LICENSE_FILE_NAME, samples::LICENSE.as_bytes())]);
    // Every file is checked before any is written: a refusal leaves the directory as it was.
    let mut to_write = Vec::new();
    for (name, bytes) in files {
        let path = dir.join(name);
        match std::fs::read(&path) {
            Ok(there) if there == bytes => {
                eprintln!("{} is already there (identical)", path.display());
            }
            Ok(_) => {
                return fail(
                    &path,
                    format!("it exists and is not the built-in {name}; remove it or choose another directory"),
                )
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => to_write.push((path, bytes)),
            Err(e) => return fail(&path, e.to_string()),
        }
    }
    for (path, bytes) in to_write {
        if let Err(e) = write_new_file(&path, bytes) {
            return fail(&path, e.to_string());
        }
        println!("{}", path.display());
    }
    0
}

/// Writes `bytes` to a new file at `path` (never an existing one); a failed write leaves no
/// partial file.
fn write_new_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    if written.is_err() {
        let _ = std::fs::remove_file(path);
    }
    written
}

/// Generated requests: mixed sizes and offsets over 1 TiB, a few devices, increasing times.
fn generated(i: u64, rng: &mut rand_pcg::Pcg64Mcg) -> TraceRecord {
    use rand::Rng;
    let op = if rng.random_bool(0.6) {
        flashlab_sim::host::Op::Read
    } else {
        flashlab_sim::host::Op::Write
    };
    TraceRecord {
        time_ns: i * 1_234_567 + rng.random_range(0..1000) * 1000,
        device: rng.random_range(0..4),
        op,
        offset_bytes: rng.random_range(0..(1u64 << 28)) * 4096,
        len_bytes: 4096 << rng.random_range(0..5),
    }
}

fn bench_command(a: &BenchArgs) -> i32 {
    let dir = a.dir.clone().unwrap_or_else(std::env::temp_dir);
    let cases: Vec<(&str, TraceFormat, FormatChoice, &str)> = vec![
        ("msr", TraceFormat::Msr, FormatChoice::Exact(TraceFormat::Msr), "csv"),
        ("msr (gzip)", TraceFormat::Msr, FormatChoice::Exact(TraceFormat::Msr), "csv.gz"),
        ("spc", TraceFormat::Spc, FormatChoice::Exact(TraceFormat::Spc), "spc"),
        ("disksim-ms", TraceFormat::from_name("disksim-ms").expect("known"), FormatChoice::parse("disksim-ms").expect("known"), "ms.trace"),
        ("disksim-ns", TraceFormat::from_name("disksim-ns").expect("known"), FormatChoice::parse("disksim-ns").expect("known"), "ns.trace"),
        ("blkparse-q", TraceFormat::from_name("blkparse-q").expect("known"), FormatChoice::parse("blkparse-q").expect("known"), "blkparse"),
        ("fio", TraceFormat::Fio, FormatChoice::Exact(TraceFormat::Fio), "iolog"),
        (
            "generic",
            TraceFormat::from_name("disksim-ns").expect("known"),
            FormatChoice::parse("generic:time=1:ns,device=2,offset=3:sectors,size=4:sectors,op=5,read=1,write=0,sep=space").expect("valid"),
            "generic",
        ),
    ];
    println!(
        "flashlab trace bench: {} lines per file, in {}",
        a.lines,
        dir.display()
    );
    println!(
        "{:<12} {:>10} {:>14} {:>10} {:>8}",
        "reader", "file MB", "lines/s", "MB/s", "seconds"
    );
    for (name, write_as, read_as, ext) in cases {
        let path = dir.join(format!("flashlab-bench-{}.{ext}", std::process::id()));
        let result = bench_one(&path, a.lines, write_as, read_as);
        let _ = std::fs::remove_file(&path);
        match result {
            Ok((bytes, lines, secs)) => println!(
                "{name:<12} {:>10.1} {:>14.0} {:>10.1} {secs:>8.2}",
                bytes as f64 / 1e6,
                lines as f64 / secs,
                bytes as f64 / 1e6 / secs
            ),
            Err(e) => return fail(&e),
        }
    }
    0
}

/// Writes `lines` generated requests to `path`, then times reading them back.
fn bench_one(
    path: &Path,
    lines: u64,
    write_as: TraceFormat,
    read_as: FormatChoice,
) -> Result<(u64, u64, f64), SimError> {
    use rand::SeedableRng;
    let io = |e: std::io::Error| input_error(&path.display().to_string(), e.to_string());
    {
        let mut out = Output::create(path).map_err(|e| input_error("--dir", e.to_string()))?;
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let written = write_records(&mut out, write_as, &mut |writer| {
            for i in 0..lines {
                writer
                    .write(&generated(i, &mut rng))
                    .map_err(RecordsError::Io)?;
            }
            Ok(())
        });
        match written {
            Ok(()) => out
                .commit()
                .map_err(|e| input_error("--dir", e.to_string()))?,
            Err(RecordsError::Io(e)) => return Err(io(e)),
            Err(RecordsError::Input(e)) => return Err(e),
        }
    }
    let bytes = std::fs::metadata(path).map_err(io)?.len();
    let started = Instant::now();
    let mut reader = TraceReader::open(
        path,
        &ReadOptions {
            format: read_as,
            skip_bad_lines: false,
        },
    )?;
    let mut count = 0u64;
    while reader.next_record()?.is_some() {
        count += 1;
    }
    let secs = started.elapsed().as_secs_f64();
    if count != lines {
        return Err(input_error(
            &path.display().to_string(),
            format!("read {count} requests back, wrote {lines}"),
        ));
    }
    Ok((bytes, reader.lines_read(), secs))
}
