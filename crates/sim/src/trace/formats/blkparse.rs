//! `blkparse` text output (Linux blktrace), default format, whitespace-separated:
//!
//! ```text
//!   8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]
//! dev    cpu  sequence  time (s)         pid  action rwbs sector + sectors [process]
//! ```
//!
//! Only one action is replayed, chosen by the user: `Q` (queued: what the application asked)
//! or `D` (dispatched to the driver: after merging and splitting). RWBS: `R` read, `W` write,
//! `D` discard (trim), `F` flush; a leading `F` is a pre-flush, replayed as a flush before the
//! request; `N` alone carries no data and is skipped unless pre-flushed. Sectors are 512
//! bytes; time is seconds with nanosecond digits. Other actions, and the per-CPU summary
//! blkparse prints at the end, are skipped. The device is `major,minor`, numbered
//! `major << 20 | minor` as the kernel's `MKDEV`.

use std::io::Write;

use super::{LineParser, TraceRecord};
use crate::host::Op;
use crate::trace::fields::{Fields, LineError};

pub const SAMPLE: &str = "  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]";
const EXPECTED: &str =
    "`major,minor cpu sequence seconds pid action rwbs [sector + count] [process]`";

/// The blktrace action replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlkEvent {
    Queue,
    Dispatch,
}

impl BlkEvent {
    fn letter(self) -> &'static [u8] {
        match self {
            BlkEvent::Queue => b"Q",
            BlkEvent::Dispatch => b"D",
        }
    }
}

#[derive(Debug)]
pub struct BlkparseParser {
    pub event: BlkEvent,
    in_summary: bool,
}

impl BlkparseParser {
    pub fn new(event: BlkEvent) -> Self {
        BlkparseParser {
            event,
            in_summary: false,
        }
    }
}

/// `major,minor` as `major << 20 | minor`.
pub fn parse_device(token: &[u8]) -> Option<u32> {
    let comma = memchr::memchr(b',', token)?;
    let major = crate::trace::fields::parse_u64(&token[..comma])?;
    let minor = crate::trace::fields::parse_u64(&token[comma + 1..])?;
    (major < 4096 && minor < (1 << 20)).then_some(((major as u32) << 20) | minor as u32)
}

/// Operation of an RWBS string, and whether it asks for a pre-flush.
fn parse_rwbs(rwbs: &[u8]) -> Option<(Option<Op>, bool)> {
    let (preflush, rest) = match rwbs {
        [b'F', next, ..] if b"WRDFN".contains(next) => (true, &rwbs[1..]),
        _ => (false, rwbs),
    };
    let op = match rest.first()? {
        b'R' => Some(Op::Read),
        b'W' => Some(Op::Write),
        b'D' => Some(Op::Trim),
        b'F' => Some(Op::Flush),
        b'N' => None,
        _ => return None,
    };
    Some((op, preflush))
}

impl LineParser for BlkparseParser {
    fn parse(&mut self, line: &[u8], out: &mut Vec<TraceRecord>) -> Result<(), LineError> {
        let f = Fields::split_whitespace(line);
        let Some(device) = parse_device(f.get(0)) else {
            if f.get(0).starts_with(b"CPU") || f.get(0) == b"Total" {
                self.in_summary = true;
            }
            if self.in_summary {
                return Ok(());
            }
            return Err(LineError::field(
                0,
                "device",
                f.get(0),
                &format!("major,minor in {EXPECTED}"),
            ));
        };
        if f.get(5) != self.event.letter() {
            return Ok(());
        }
        if f.len() < 7 {
            return Err(LineError::field_count(f.len(), EXPECTED));
        }
        let time_ns = f.decimal_ns(3, "time", 9)?;
        let Some((op, preflush)) = parse_rwbs(f.get(6)) else {
            return Err(LineError::field(
                6,
                "rwbs",
                f.get(6),
                "an RWBS string such as R, WS, FWS, D, FN",
            ));
        };
        let has_payload = f.len() >= 10 && f.get(8) == b"+";
        let (sector, count) = if has_payload {
            (
                f.u64(7, "sector", "a 512-byte sector number")?,
                f.u64(9, "count", "a number of 512-byte sectors")?,
            )
        } else {
            (0, 0)
        };
        let flush = TraceRecord {
            time_ns,
            device,
            op: Op::Flush,
            offset_bytes: 0,
            len_bytes: 0,
        };
        match op {
            Some(Op::Flush) => out.push(flush),
            None if preflush => out.push(flush),
            None => {}
            Some(op) => {
                if !has_payload {
                    return Err(LineError::field(
                        7,
                        "sector",
                        f.get(7),
                        "`sector + count` after a read, write or discard",
                    ));
                }
                if preflush {
                    out.push(flush);
                }
                let too_big = |i| LineError::field(i, "sector", f.get(i), "a value below 2^55");
                out.push(TraceRecord {
                    time_ns,
                    device,
                    op,
                    offset_bytes: sector.checked_mul(512).ok_or_else(|| too_big(7))?,
                    len_bytes: count.checked_mul(512).ok_or_else(|| too_big(9))?,
                });
            }
        }
        Ok(())
    }
}

/// Writes `r` as a blkparse `Q` line (sequence numbers from `seq`; process `flashlab`).
pub fn write(r: &TraceRecord, seq: u64, out: &mut dyn Write) -> std::io::Result<()> {
    let (major, minor) = (r.device >> 20, r.device & ((1 << 20) - 1));
    let secs = format!(
        "{}.{:09}",
        r.time_ns / 1_000_000_000,
        r.time_ns % 1_000_000_000
    );
    let rwbs = match r.op {
        Op::Read => "R",
        Op::Write => "W",
        Op::Trim => "D",
        Op::Flush => {
            return writeln!(
                out,
                "{major:>3},{minor:<3} 0 {seq:>8} {secs:>14}     0  Q  FN [flashlab]"
            );
        }
    };
    let first = r.offset_bytes / 512;
    let end = (r.offset_bytes + r.len_bytes).div_ceil(512);
    writeln!(
        out,
        "{major:>3},{minor:<3} 0 {seq:>8} {secs:>14}     0  Q {rwbs:>3} {first} + {} [flashlab]",
        end - first
    )
}
