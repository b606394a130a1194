//! fio I/O logs (`write_iolog` / `read_iolog`), versions 2 and 3:
//!
//! ```text
//! fio version 3 iolog
//! 878 /dev/nvme0n1 write 0 16384          (v3: microseconds since start, file, action, offset, length)
//! /dev/sdb read 4096 4096                 (v2: no timestamps; `FILE wait USEC` advances time)
//! ```
//!
//! Offsets and lengths are bytes. Actions: `read`, `write`, `trim`, `sync` and `datasync`
//! (flushes), `wait` (v2 only); `add`, `open` and `close` are file bookkeeping and skipped.
//! The device is the file's number in order of first appearance.

use std::collections::HashMap;
use std::io::Write;

use super::{LineParser, TraceRecord};
use crate::host::Op;
use crate::trace::fields::{Fields, LineError};

pub const SAMPLE: &str = "878 /dev/nvme0n1 write 0 16384";
const HEADER_V2: &[u8] = b"fio version 2 iolog";
const HEADER_V3: &[u8] = b"fio version 3 iolog";

#[derive(Debug, Default)]
pub struct FioParser {
    version: Option<u8>,
    /// Time of a v2 log: the sum of its waits.
    clock_ns: u64,
    files: HashMap<Vec<u8>, u32>,
}

impl FioParser {
    fn file_index(&mut self, name: &[u8]) -> u32 {
        let next = self.files.len() as u32;
        if let Some(&i) = self.files.get(name) {
            return i;
        }
        self.files.insert(name.to_vec(), next);
        next
    }
}

impl LineParser for FioParser {
    fn parse(&mut self, line: &[u8], out: &mut Vec<TraceRecord>) -> Result<(), LineError> {
        let Some(version) = self.version else {
            let header = crate::trace::fields::trim(line);
            self.version = match header {
                HEADER_V2 => Some(2),
                HEADER_V3 => Some(3),
                _ => {
                    return Err(LineError::new(
                        "expected the header `fio version 2 iolog` or `fio version 3 iolog` (version 1 logs are not supported)",
                    ))
                }
            };
            return Ok(());
        };
        let f = Fields::split_whitespace(line);
        let (time_ns, first) = if version == 3 {
            let us = f.u64(0, "timestamp", "microseconds since the start")?;
            let ns = us.checked_mul(1000).ok_or_else(|| {
                LineError::field(0, "timestamp", f.get(0), "a time below 2^64 ns")
            })?;
            (ns, 1)
        } else {
            (self.clock_ns, 0)
        };
        let fields = f.len() - first.min(f.len());
        if fields < 2 {
            return Err(LineError::field_count(
                f.len(),
                "`[timestamp] file action [offset length]`",
            ));
        }
        let action = f.get(first + 1);
        let op =
            match action {
                b"read" => Op::Read,
                b"write" => Op::Write,
                b"trim" => Op::Trim,
                b"sync" | b"datasync" => Op::Flush,
                b"add" | b"open" | b"close" => {
                    self.file_index(f.get(first));
                    return Ok(());
                }
                b"wait" if version == 2 => {
                    let us = f.u64(2, "delay", "microseconds to wait")?;
                    self.clock_ns = self.clock_ns.saturating_add(us.saturating_mul(1000));
                    return Ok(());
                }
                other => return Err(LineError::field(
                    first + 1,
                    "action",
                    other,
                    "read, write, trim, sync, datasync, add, open, close (or wait in version 2)",
                )),
            };
        let device = self.file_index(f.get(first));
        if op == Op::Flush {
            out.push(TraceRecord {
                time_ns,
                device,
                op,
                offset_bytes: 0,
                len_bytes: 0,
            });
            return Ok(());
        }
        if fields != 4 {
            return Err(LineError::field_count(
                f.len(),
                "an offset and a length after read, write or trim",
            ));
        }
        out.push(TraceRecord {
            time_ns,
            device,
            op,
            offset_bytes: f.u64(first + 2, "offset", "a byte offset")?,
            len_bytes: f.u64(first + 3, "length", "a length in bytes")?,
        });
        Ok(())
    }
}

/// Writes the v3 header.
pub fn write_header(out: &mut dyn Write) -> std::io::Result<()> {
    out.write_all(HEADER_V3)?;
    out.write_all(b"\n")
}

/// Writes `r` as a v3 line (file `dev<N>`; time to microseconds).
pub fn write(r: &TraceRecord, out: &mut dyn Write) -> std::io::Result<()> {
    let us = r.time_ns / 1000;
    match r.op {
        Op::Flush => writeln!(out, "{us} dev{} sync 0 0", r.device),
        op => writeln!(
            out,
            "{us} dev{} {} {} {}",
            r.device,
            op.name(),
            r.offset_bytes,
            r.len_bytes
        ),
    }
}
