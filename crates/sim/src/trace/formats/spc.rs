//! SPC / UMass trace repository format (Financial, WebSearch), CSV:
//!
//! ```text
//! ASU,LBA,Size,Opcode,Timestamp[,optional fields]
//! 0,303567,3584,w,0.000000
//! ```
//!
//! ASU: application-specific unit (the device); LBA: 512-byte sectors; Size: bytes; Opcode:
//! `r`/`R` or `w`/`W`; Timestamp: seconds (decimal), converted exactly. Extra fields allowed
//! by the specification are ignored. A header line naming the columns is skipped.

use std::io::Write;

use super::{LineParser, TraceRecord};
use crate::host::Op;
use crate::trace::fields::{Fields, LineError};

pub const SAMPLE: &str = "0,303567,3584,w,0.026214";
const EXPECTED: &str = "at least 5 comma-separated fields: ASU,LBA,Size,Opcode,Timestamp";

#[derive(Debug, Default)]
pub struct SpcParser;

impl LineParser for SpcParser {
    fn parse(&mut self, line: &[u8], out: &mut Vec<TraceRecord>) -> Result<(), LineError> {
        let f = Fields::split_on(line, b',');
        if f.len() < 5 {
            return Err(LineError::field_count(f.len(), EXPECTED));
        }
        if f.get(0).eq_ignore_ascii_case(b"ASU") {
            return Ok(());
        }
        let asu = f.u64(0, "ASU", "an application-specific unit number")?;
        let lba = f.u64(1, "LBA", "a 512-byte sector number")?;
        let len = f.u64(2, "Size", "a size in bytes")?;
        let op = match f.get(3) {
            b"r" | b"R" => Op::Read,
            b"w" | b"W" => Op::Write,
            other => return Err(LineError::field(3, "Opcode", other, "r or w")),
        };
        let time_ns = f.decimal_ns(4, "Timestamp", 9)?;
        out.push(TraceRecord {
            time_ns,
            device: u32::try_from(asu)
                .map_err(|_| LineError::field(0, "ASU", f.get(0), "a number below 2^32"))?,
            op,
            offset_bytes: lba
                .checked_mul(512)
                .ok_or_else(|| LineError::field(1, "LBA", f.get(1), "a sector below 2^55"))?,
            len_bytes: len,
        });
        Ok(())
    }
}

/// Writes `r` as an SPC line (offset in 512-byte sectors, rounded down; seconds with 9 digits).
pub fn write(r: &TraceRecord, out: &mut dyn Write) -> std::io::Result<()> {
    let op = match r.op {
        Op::Read => 'r',
        Op::Write => 'w',
        _ => return Ok(()),
    };
    writeln!(
        out,
        "{},{},{},{op},{}.{:09}",
        r.device,
        r.offset_bytes / 512,
        r.len_bytes,
        r.time_ns / 1_000_000_000,
        r.time_ns % 1_000_000_000
    )
}
