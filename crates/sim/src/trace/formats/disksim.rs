//! DiskSim ASCII traces, whitespace-separated:
//!
//! ```text
//! time devno blkno size flags
//! 0.028100 0 5049248 16 1        (classic DiskSim: time in milliseconds, decimal)
//! 938513000 4 264719034 16 0     (MQSim's flavour: time in integer nanoseconds)
//! ```
//!
//! blkno and size are 512-byte sectors; flags bit 0 set means read, clear means write. The
//! time unit cannot be told from one line, so the user picks `disksim-ms` or `disksim-ns`; with
//! plain `disksim` (or auto-detection) decimal points mean milliseconds and integers
//! nanoseconds, and the guess is announced.

use std::io::Write;

use super::{LineParser, TraceRecord};
use crate::host::Op;
use crate::trace::fields::{Fields, LineError};

pub const SAMPLE_MS: &str = "0.028100 0 5049248 16 1";
pub const SAMPLE_NS: &str = "938513000 4 264719034 16 0";
const EXPECTED: &str = "5 fields: time devno blkno size flags";

/// Time unit of a DiskSim trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Milliseconds,
    Nanoseconds,
}

#[derive(Debug)]
pub struct DisksimParser {
    pub unit: TimeUnit,
}

impl LineParser for DisksimParser {
    fn parse(&mut self, line: &[u8], out: &mut Vec<TraceRecord>) -> Result<(), LineError> {
        let f = Fields::split_whitespace(line);
        if f.len() != 5 {
            return Err(LineError::field_count(f.len(), EXPECTED));
        }
        let time_ns = match self.unit {
            TimeUnit::Milliseconds => f.decimal_ns(0, "time", 6)?,
            TimeUnit::Nanoseconds => f.u64(
                0,
                "time",
                "integer nanoseconds (a decimal point suggests milliseconds: use format disksim-ms)",
            )?,
        };
        let device = f.u64(1, "devno", "a device number")?;
        let sector = f.u64(2, "blkno", "a 512-byte sector number")?;
        let sectors = f.u64(3, "size", "a size in 512-byte sectors")?;
        let flags = f.u64(4, "flags", "integer flags (bit 0: read)")?;
        let too_big =
            |i: usize, name: &str| LineError::field(i, name, f.get(i), "a value below 2^55");
        out.push(TraceRecord {
            time_ns,
            device: u32::try_from(device).map_err(|_| too_big(1, "devno"))?,
            op: if flags & 1 == 1 { Op::Read } else { Op::Write },
            offset_bytes: sector.checked_mul(512).ok_or_else(|| too_big(2, "blkno"))?,
            len_bytes: sectors.checked_mul(512).ok_or_else(|| too_big(3, "size"))?,
        });
        Ok(())
    }
}

/// Writes `r` as a DiskSim line in `unit` (sectors rounded: offset down, end up).
pub fn write(r: &TraceRecord, unit: TimeUnit, out: &mut dyn Write) -> std::io::Result<()> {
    let flags = match r.op {
        Op::Read => 1,
        Op::Write => 0,
        _ => return Ok(()),
    };
    let first = r.offset_bytes / 512;
    let end = (r.offset_bytes + r.len_bytes).div_ceil(512);
    match unit {
        TimeUnit::Milliseconds => writeln!(
            out,
            "{}.{:06} {} {first} {} {flags}",
            r.time_ns / 1_000_000,
            r.time_ns % 1_000_000,
            r.device,
            end - first
        ),
        TimeUnit::Nanoseconds => {
            writeln!(
                out,
                "{} {} {first} {} {flags}",
                r.time_ns,
                r.device,
                end - first
            )
        }
    }
}
