//! [`TraceReader`]: a trace file as a stream of [`TraceRecord`]s, with format detection,
//! errors that name `file:line`, the offending text and what was expected, and an option to
//! count and skip malformed lines instead.

use std::path::Path;

use super::fields::{is_blank_or_comment, quote, LineError};
use super::formats::{FormatChoice, LineParser, TraceFormat, TraceRecord};
use super::input::{Compression, LineReader, TraceInput};
use crate::stop::{StopCheck, StopPoll};
use crate::SimError;

/// Lines looked at to detect a format.
const SNIFF_LINES: usize = 64;
/// Malformed lines quoted in the warning of a `skip_bad_lines` read.
const QUOTED_BAD_LINES: usize = 3;

/// How to read a trace.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    pub format: FormatChoice,
    /// Count and skip malformed lines instead of stopping at the first.
    pub skip_bad_lines: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            format: FormatChoice::Auto,
            skip_bad_lines: false,
        }
    }
}

/// A trace file read record by record.
pub struct TraceReader {
    lines: LineReader,
    parser: Box<dyn LineParser>,
    format: TraceFormat,
    label: String,
    pending: Vec<TraceRecord>,
    next: usize,
    skip_bad_lines: bool,
    bad_lines: u64,
    bad_examples: Vec<String>,
    notes: Vec<String>,
    /// Asked every so many lines whether to stop (see [`crate::stop`]).
    stop: StopPoll,
    /// The input being read (keeps a temporary copy alive).
    input: Option<TraceInput>,
}

impl TraceReader {
    /// Opens `path` (plain, gzip or zstd; `-` is standard input) in the chosen or detected
    /// format. Input that is not a regular file is read once into a temporary copy.
    pub fn open(path: &Path, options: &ReadOptions) -> Result<TraceReader, SimError> {
        Self::open_input(&TraceInput::new(path)?, options)
    }

    /// Opens `input` in the chosen or detected format.
    pub fn open_input(input: &TraceInput, options: &ReadOptions) -> Result<TraceReader, SimError> {
        let label = input.label().to_string();
        let (format, notes) = match &options.format {
            FormatChoice::Exact(f) => (f.clone(), Vec::new()),
            choice => detect(&mut input.lines()?, choice, &label)?,
        };
        let mut reader =
            Self::with_lines(input.lines()?, format, label, options.skip_bad_lines, notes);
        reader.input = Some(input.clone());
        Ok(reader)
    }

    /// A reader over in-memory text in a known format (tests, benchmarks).
    pub fn from_bytes(
        label: &str,
        bytes: Vec<u8>,
        format: TraceFormat,
        skip_bad_lines: bool,
    ) -> Self {
        Self::with_lines(
            LineReader::from_bytes(bytes),
            format,
            label.to_string(),
            skip_bad_lines,
            Vec::new(),
        )
    }

    fn with_lines(
        lines: LineReader,
        format: TraceFormat,
        label: String,
        skip_bad_lines: bool,
        notes: Vec<String>,
    ) -> Self {
        TraceReader {
            lines,
            parser: format.parser(),
            format,
            label,
            pending: Vec::with_capacity(4),
            next: 0,
            skip_bad_lines,
            bad_lines: 0,
            bad_examples: Vec::new(),
            notes,
            stop: StopPoll::default(),
            input: None,
        }
    }

    /// From now on, asks `check` every [`crate::stop`] progress point (a fixed number of
    /// lines) whether to stop; when it says so, reading ends with [`SimError::Interrupted`].
    pub fn set_stop_check(&mut self, check: Option<StopCheck>) {
        self.stop.set(check);
    }

    /// The next request, `None` at the end of the trace.
    pub fn next_record(&mut self) -> Result<Option<TraceRecord>, SimError> {
        loop {
            if self.next < self.pending.len() {
                self.next += 1;
                return Ok(Some(self.pending[self.next - 1]));
            }
            self.stop.point()?;
            self.pending.clear();
            self.next = 0;
            let (line_no, line) = match self.lines.next_line() {
                Ok(Some(numbered)) => numbered,
                Ok(None) => return Ok(None),
                Err(e) => return Err(line_error(&self.label, self.lines.line_no() + 1, &e)),
            };
            if is_blank_or_comment(line) {
                continue;
            }
            let parsed = self
                .parser
                .parse(line, &mut self.pending)
                .and_then(|()| check_records(&self.pending));
            if let Err(e) = parsed {
                let err = SimError::Input {
                    location: format!("{}:{line_no}", self.label),
                    message: format!("{} ({} line {})", e.message, self.format, quote(line, 120)),
                };
                self.pending.clear();
                if !self.skip_bad_lines {
                    return Err(err);
                }
                self.bad_lines += 1;
                if self.bad_examples.len() < QUOTED_BAD_LINES {
                    self.bad_examples.push(err.to_string());
                }
            }
        }
    }

    /// How messages name the trace: its path, or `<stdin>`.
    pub fn label(&self) -> &str {
        &self.label
    }

    pub fn format(&self) -> &TraceFormat {
        &self.format
    }

    /// What was guessed (format, units), to tell the user.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Malformed lines skipped (with `skip_bad_lines`).
    pub fn bad_lines(&self) -> u64 {
        self.bad_lines
    }

    /// The first few skipped lines' errors.
    pub fn bad_examples(&self) -> &[String] {
        &self.bad_examples
    }

    /// Lines read so far.
    pub fn lines_read(&self) -> u64 {
        self.lines.line_no()
    }

    /// Compression of the input as it came.
    pub fn compression(&self) -> Compression {
        self.input
            .as_ref()
            .and_then(TraceInput::spooled_compression)
            .unwrap_or_else(|| self.lines.compression())
    }

    /// Bytes of the file read so far, and its size.
    pub fn file_progress(&self) -> (u64, u64) {
        self.lines.file_progress()
    }

    /// A warning about bytes after the end of a gzip stream that were not zero padding and
    /// were ignored (as `gzip -d` ignores them), if any were (so far).
    pub fn trailing_bytes_warning(&self) -> Option<String> {
        let ignored = self.lines.ignored_trailing_bytes();
        (ignored > 0).then(|| {
            format!(
                "{}: {ignored} bytes after the end of the gzip data were ignored (trailing garbage, as gzip -d ignores it)",
                self.label
            )
        })
    }
}

/// An error reading line `line_no` of the input `label` (decompression, a line without end).
fn line_error(label: &str, line_no: u64, e: &std::io::Error) -> SimError {
    SimError::Input {
        location: format!("{label}:{line_no}"),
        message: e.to_string(),
    }
}

/// Rejects sizes no real request has (a unit mistake) and ranges past 2^64 bytes.
fn check_records(records: &[TraceRecord]) -> Result<(), LineError> {
    for r in records {
        if r.len_bytes > super::MAX_REQUEST_BYTES {
            return Err(LineError::new(format!(
                "a request of {} bytes: expected at most 1 TiB (is the size unit right?)",
                r.len_bytes
            )));
        }
        if r.offset_bytes.checked_add(r.len_bytes).is_none() {
            return Err(LineError::new(format!(
                "offset {} + size {} bytes: expected a range below 2^64 bytes",
                r.offset_bytes, r.len_bytes
            )));
        }
    }
    Ok(())
}

/// Picks the format that reads the most of the first lines (ties: most specific first).
fn detect(
    lines: &mut LineReader,
    choice: &FormatChoice,
    label: &str,
) -> Result<(TraceFormat, Vec<String>), SimError> {
    let mut sample: Vec<Vec<u8>> = Vec::new();
    while sample.len() < SNIFF_LINES {
        match lines.next_line() {
            Ok(Some((_, line))) if !is_blank_or_comment(line) => sample.push(line.to_vec()),
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) => return Err(line_error(label, lines.line_no() + 1, &e)),
        }
    }
    let candidates: Vec<TraceFormat> = match choice {
        FormatChoice::Disksim => TraceFormat::detection_order()
            .into_iter()
            .filter(|f| matches!(f, TraceFormat::Disksim(_)))
            .collect(),
        _ => TraceFormat::detection_order().to_vec(),
    };
    let mut best: Option<(usize, TraceFormat)> = None;
    for format in candidates {
        let read = lines_read_by(&format, &sample);
        if read > 0 && best.as_ref().is_none_or(|(n, _)| read > *n) {
            best = Some((read, format));
        }
    }
    let Some((read, format)) = best.filter(|(n, _)| *n * 5 >= sample.len() * 4) else {
        let first = sample
            .first()
            .map(|l| quote(l, 120))
            .unwrap_or_else(|| "(no data lines)".into());
        return Err(SimError::Input {
            location: label.to_string(),
            message: format!(
                "cannot tell the trace format from the first lines (first: {first}); give it with --trace-format (see `flashlab trace formats`)"
            ),
        });
    };
    let mut note = format!(
        "trace format: {format} (detected from the first {} lines, {read} readable)",
        sample.len()
    );
    if let TraceFormat::Disksim(unit) = format {
        note.push_str(match unit {
            super::formats::TimeUnit::Nanoseconds => {
                "; integer timestamps taken as nanoseconds (MQSim's flavour): if they are milliseconds, use --trace-format disksim-ms"
            }
            super::formats::TimeUnit::Milliseconds => {
                "; decimal timestamps taken as milliseconds (classic DiskSim): if they are nanoseconds, use --trace-format disksim-ns"
            }
        });
    }
    Ok((format, vec![note]))
}

/// How many of `sample` lines `format` reads without error, 0 if none yields a request.
fn lines_read_by(format: &TraceFormat, sample: &[Vec<u8>]) -> usize {
    let mut parser = format.parser();
    let mut out = Vec::new();
    let mut ok = 0;
    for line in sample {
        let result: Result<(), LineError> = parser.parse(line, &mut out);
        if result.is_ok() {
            ok += 1;
        }
    }
    if out.is_empty() {
        0
    } else {
        ok
    }
}
