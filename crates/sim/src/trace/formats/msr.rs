//! MSR Cambridge block traces (SNIA IOTTA), CSV, one request per line:
//!
//! ```text
//! Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
//! 128166372003061629,hm,1,Read,383623680,32768,1619
//! ```
//!
//! Timestamp: Windows filetime (100 ns units since 1601); Offset and Size: bytes; Type:
//! `Read` or `Write`; ResponseTime (100 ns units) is the traced disk's and is not used. The
//! device is DiskNumber. A header line naming the columns is skipped.

use std::io::Write;

use super::{op_from_token, LineParser, TraceRecord};
use crate::host::Op;
use crate::trace::fields::{Fields, LineError};

pub const SAMPLE: &str = "128166372003061629,hm,1,Read,383623680,32768,1619";
const EXPECTED: &str =
    "7 comma-separated fields: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime";

#[derive(Debug, Default)]
pub struct MsrParser;

impl LineParser for MsrParser {
    fn parse(&mut self, line: &[u8], out: &mut Vec<TraceRecord>) -> Result<(), LineError> {
        let f = Fields::split_on(line, b',');
        if f.len() != 7 {
            return Err(LineError::field_count(f.len(), EXPECTED));
        }
        if f.get(0).eq_ignore_ascii_case(b"Timestamp") {
            return Ok(());
        }
        let ticks = f.u64(
            0,
            "Timestamp",
            "Windows filetime, an integer of 100 ns units",
        )?;
        let device = f.u64(2, "DiskNumber", "a disk number")?;
        let op = match op_from_token(f.get(3)) {
            Some(op @ (Op::Read | Op::Write)) => op,
            _ => return Err(LineError::field(3, "Type", f.get(3), "Read or Write")),
        };
        let offset = f.u64(4, "Offset", "a byte offset")?;
        let len = f.u64(5, "Size", "a size in bytes")?;
        out.push(TraceRecord {
            time_ns: ticks.checked_mul(100).ok_or_else(|| {
                LineError::field(0, "Timestamp", f.get(0), "a filetime below 2^64 ns")
            })?,
            device: u32::try_from(device).map_err(|_| {
                LineError::field(2, "DiskNumber", f.get(2), "a disk number below 2^32")
            })?,
            op,
            offset_bytes: offset,
            len_bytes: len,
        });
        Ok(())
    }
}

/// Writes `r` as an MSR line (host name `flashlab`, response time 0; time to 100 ns units).
pub fn write(r: &TraceRecord, out: &mut dyn Write) -> std::io::Result<()> {
    let kind = match r.op {
        Op::Read => "Read",
        Op::Write => "Write",
        _ => return Ok(()),
    };
    writeln!(
        out,
        "{},flashlab,{},{kind},{},{},0",
        r.time_ns / 100,
        r.device,
        r.offset_bytes,
        r.len_bytes
    )
}
