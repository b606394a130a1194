//! The trace formats: one reader (and writer, for `trace convert`) per file, chosen by name or
//! detected from the first lines.

pub mod blkparse;
pub mod disksim;
pub mod fio;
pub mod generic;
pub mod msr;
pub mod spc;

use std::fmt;
use std::io::Write;

use serde::Serialize;

pub use blkparse::BlkEvent;
pub use disksim::TimeUnit;
pub use generic::GenericSpec;

use super::fields::LineError;
use crate::host::Op;

/// One request as a trace gives it, in the trace's own address space and clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TraceRecord {
    /// Timestamp in ns (origin as in the trace).
    pub time_ns: u64,
    /// Device (disk, ASU, file, `major << 20 | minor`).
    pub device: u32,
    pub op: Op,
    pub offset_bytes: u64,
    /// Length (0 for flushes).
    pub len_bytes: u64,
}

/// Reads one format, line by line.
pub trait LineParser: Send {
    /// Appends the requests of `line` (none for headers and skipped events, two for a
    /// pre-flushed write) to `out`. Blank and `#` lines never reach the parser.
    fn parse(&mut self, line: &[u8], out: &mut Vec<TraceRecord>) -> Result<(), LineError>;
}

/// `read` / `write` (any case).
pub(crate) fn op_from_token(token: &[u8]) -> Option<Op> {
    if token.eq_ignore_ascii_case(b"read") {
        Some(Op::Read)
    } else if token.eq_ignore_ascii_case(b"write") {
        Some(Op::Write)
    } else {
        None
    }
}

/// A fully determined trace format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceFormat {
    Msr,
    Spc,
    Disksim(TimeUnit),
    Blkparse(BlkEvent),
    Fio,
    Generic(Box<GenericSpec>),
}

/// What the user asked for: a format, or a family whose details are guessed and announced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatChoice {
    Auto,
    /// DiskSim with the time unit guessed from the values.
    Disksim,
    Exact(TraceFormat),
}

/// Format names accepted by `--trace-format`, with a one-line description.
pub const FORMAT_NAMES: &[(&str, &str)] = &[
    (
        "auto",
        "detect from the first lines (the default); the choice is announced",
    ),
    (
        "msr",
        "MSR Cambridge CSV: filetime,host,disk,Read|Write,offset B,size B,response",
    ),
    (
        "spc",
        "SPC/UMass CSV: ASU,LBA (512 B),size B,r|w,seconds (alias: umass)",
    ),
    (
        "disksim-ms",
        "DiskSim ASCII: time ms, devno, blkno, size (512 B sectors), flags (bit 0 = read)",
    ),
    (
        "disksim-ns",
        "DiskSim ASCII with integer nanoseconds (MQSim's traces)",
    ),
    (
        "disksim",
        "DiskSim ASCII, time unit guessed (decimals: ms, integers: ns) and announced",
    ),
    ("blkparse-q", "blkparse text, replaying queue (Q) events"),
    ("blkparse-d", "blkparse text, replaying dispatch (D) events"),
    ("blkparse", "blkparse text, Q events (announced)"),
    ("fio", "fio iolog version 2 or 3"),
    ("generic:...", generic::HELP),
];

impl FormatChoice {
    /// Parses a `--trace-format` value.
    pub fn parse(text: &str) -> Result<FormatChoice, String> {
        let text = text.trim();
        if let Some(spec) = text.strip_prefix("generic:") {
            let spec = GenericSpec::parse(spec).map_err(|e| format!("generic format: {e}"))?;
            return Ok(FormatChoice::Exact(TraceFormat::Generic(Box::new(spec))));
        }
        Ok(match text {
            "auto" | "" => FormatChoice::Auto,
            "disksim" => FormatChoice::Disksim,
            "blkparse" => FormatChoice::Exact(TraceFormat::Blkparse(BlkEvent::Queue)),
            _ => FormatChoice::Exact(TraceFormat::from_name(text).ok_or_else(|| {
                let names: Vec<&str> = FORMAT_NAMES.iter().map(|(n, _)| *n).collect();
                format!(
                    "unknown trace format `{text}` (known: {})",
                    names.join(", ")
                )
            })?),
        })
    }
}

impl TraceFormat {
    /// A format by its exact name (`msr`, `disksim-ns`, ...; not `generic`).
    pub fn from_name(name: &str) -> Option<TraceFormat> {
        Some(match name {
            "msr" => TraceFormat::Msr,
            "spc" | "umass" => TraceFormat::Spc,
            "disksim-ms" => TraceFormat::Disksim(TimeUnit::Milliseconds),
            "disksim-ns" => TraceFormat::Disksim(TimeUnit::Nanoseconds),
            "blkparse-q" => TraceFormat::Blkparse(BlkEvent::Queue),
            "blkparse-d" => TraceFormat::Blkparse(BlkEvent::Dispatch),
            "fio" => TraceFormat::Fio,
            _ => return None,
        })
    }

    /// The name `from_name` accepts (`generic` for described formats).
    pub fn name(&self) -> &'static str {
        match self {
            TraceFormat::Msr => "msr",
            TraceFormat::Spc => "spc",
            TraceFormat::Disksim(TimeUnit::Milliseconds) => "disksim-ms",
            TraceFormat::Disksim(TimeUnit::Nanoseconds) => "disksim-ns",
            TraceFormat::Blkparse(BlkEvent::Queue) => "blkparse-q",
            TraceFormat::Blkparse(BlkEvent::Dispatch) => "blkparse-d",
            TraceFormat::Fio => "fio",
            TraceFormat::Generic(_) => "generic",
        }
    }

    /// A fresh parser for this format.
    pub fn parser(&self) -> Box<dyn LineParser> {
        match self {
            TraceFormat::Msr => Box::new(msr::MsrParser),
            TraceFormat::Spc => Box::new(spc::SpcParser),
            TraceFormat::Disksim(unit) => Box::new(disksim::DisksimParser { unit: *unit }),
            TraceFormat::Blkparse(event) => Box::new(blkparse::BlkparseParser::new(*event)),
            TraceFormat::Fio => Box::new(fio::FioParser::default()),
            TraceFormat::Generic(spec) => Box::new(generic::GenericParser::new((**spec).clone())),
        }
    }

    /// Candidates tried by auto-detection, most specific first.
    pub fn detection_order() -> [TraceFormat; 6] {
        [
            TraceFormat::Fio,
            TraceFormat::Msr,
            TraceFormat::Spc,
            TraceFormat::Blkparse(BlkEvent::Queue),
            TraceFormat::Disksim(TimeUnit::Nanoseconds),
            TraceFormat::Disksim(TimeUnit::Milliseconds),
        ]
    }

    /// Formats `trace convert` can write.
    pub fn writable(&self) -> bool {
        !matches!(
            self,
            TraceFormat::Generic(_) | TraceFormat::Blkparse(BlkEvent::Dispatch)
        )
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Writes records in one format (for `trace convert`).
pub struct TraceWriter<'a> {
    format: TraceFormat,
    out: &'a mut dyn Write,
    written: u64,
}

impl<'a> TraceWriter<'a> {
    /// A writer; writes the format's header, if any.
    pub fn new(format: TraceFormat, out: &'a mut dyn Write) -> std::io::Result<TraceWriter<'a>> {
        if !format.writable() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("flashlab cannot write the {format} format (writable: msr, spc, disksim-ms, disksim-ns, blkparse-q, fio)"),
            ));
        }
        if format == TraceFormat::Fio {
            fio::write_header(out)?;
        }
        Ok(TraceWriter {
            format,
            out,
            written: 0,
        })
    }

    /// Writes one record. Formats without trims or flushes (MSR, SPC, DiskSim) drop them and
    /// return false.
    pub fn write(&mut self, r: &TraceRecord) -> std::io::Result<bool> {
        let supported = match self.format {
            TraceFormat::Msr | TraceFormat::Spc | TraceFormat::Disksim(_) => {
                matches!(r.op, Op::Read | Op::Write)
            }
            _ => true,
        };
        if !supported {
            return Ok(false);
        }
        self.written += 1;
        match &self.format {
            TraceFormat::Msr => msr::write(r, self.out)?,
            TraceFormat::Spc => spc::write(r, self.out)?,
            TraceFormat::Disksim(unit) => disksim::write(r, *unit, self.out)?,
            TraceFormat::Blkparse(_) => blkparse::write(r, self.written, self.out)?,
            TraceFormat::Fio => fio::write(r, self.out)?,
            TraceFormat::Generic(_) => unreachable!("generic formats are not writable"),
        }
        Ok(true)
    }
}
