//! A CSV or whitespace format described on the command line:
//!
//! ```text
//! generic:time=1:ms,device=2,offset=3:sectors,size=4:sectors,op=5,sep=space
//! 0.25 0 2048 8 R
//! ```
//!
//! Columns are numbered from 1. `time`, `offset` and `size` need a unit: time in `s`, `ms`,
//! `us`, `100ns` (Windows filetime ticks) or `ns` (decimals are exact); offset and size in
//! `bytes`, `sectors` (512 B), `kib`, `4kib` or a number of bytes. `op` is a column or a
//! constant (`op=write`); its tokens are matched case-insensitively, by default `r|read|rs`,
//! `w|write|ws`, `d|discard|trim`, `f|flush|sync`, or as given (`read=1,write=0`). `time` may be
//! left out (all requests at time 0: replay closed loop), `device` too (one device).
//! `sep` is `comma` (default), `space` (runs of spaces and tabs), `tab` or `semicolon`;
//! `skip=N` ignores the first N non-blank lines (a header).

use super::{LineParser, TraceRecord};
use crate::host::Op;
use crate::trace::fields::{Fields, LineError};

pub const SAMPLE: &str = "0.25 0 2048 8 R";
pub const HELP: &str = "generic:time=COL:UNIT,offset=COL:UNIT,size=COL:UNIT,op=COL|read|write[,device=COL][,sep=comma|space|tab|semicolon][,skip=N][,read=TOK|TOK][,write=..][,trim=..][,flush=..]";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Separator {
    Byte(u8),
    Whitespace,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum OpSource {
    Column(usize),
    Constant(Op),
}

/// A parsed `generic:` description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenericSpec {
    sep: Separator,
    time: Option<(usize, u32)>,
    offset: (usize, u64),
    size: (usize, u64),
    op: OpSource,
    device: Option<usize>,
    skip: u64,
    tokens: [Vec<Vec<u8>>; 4],
}

fn default_tokens() -> [Vec<Vec<u8>>; 4] {
    let t = |list: &[&str]| {
        list.iter()
            .map(|s| s.as_bytes().to_vec())
            .collect::<Vec<_>>()
    };
    [
        t(&["r", "read", "rs"]),
        t(&["w", "write", "ws"]),
        t(&["d", "discard", "trim"]),
        t(&["f", "flush", "sync"]),
    ]
}

fn column(key: &str, value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(c) if (1..=super::super::fields::MAX_FIELDS).contains(&c) => Ok(c - 1),
        _ => Err(format!(
            "`{key}={value}`: expected a column number 1..={}",
            super::super::fields::MAX_FIELDS
        )),
    }
}

/// `COL:UNIT` split in two; the unit is required.
fn column_unit<'a>(key: &str, value: &'a str, units: &str) -> Result<(usize, &'a str), String> {
    let Some((col, unit)) = value.split_once(':') else {
        return Err(format!(
            "`{key}={value}` needs a unit, e.g. `{key}={value}:{}` (units: {units})",
            units.split(", ").next().unwrap_or("")
        ));
    };
    Ok((column(key, col)?, unit))
}

const TIME_UNITS: &str = "s, ms, us, 100ns, ns";
const SIZE_UNITS: &str = "bytes, sectors, kib, 4kib, or a number of bytes";

fn time_scale(key: &str, unit: &str) -> Result<u32, String> {
    Ok(match unit {
        "s" => 9,
        "ms" => 6,
        "us" => 3,
        "100ns" => 2,
        "ns" => 0,
        _ => {
            return Err(format!(
                "`{key}`: unknown time unit `{unit}` (units: {TIME_UNITS})"
            ))
        }
    })
}

fn size_unit(key: &str, unit: &str) -> Result<u64, String> {
    Ok(match unit {
        "b" | "bytes" => 1,
        "sector" | "sectors" => 512,
        "kib" => 1024,
        "4kib" => 4096,
        n => match n.parse::<u64>() {
            Ok(v) if v > 0 => v,
            _ => {
                return Err(format!(
                    "`{key}`: unknown size unit `{unit}` (units: {SIZE_UNITS})"
                ))
            }
        },
    })
}

impl GenericSpec {
    /// Bytes per unit of the offset column.
    pub fn offset_unit_bytes(&self) -> u64 {
        self.offset.1
    }

    /// Bytes per unit of the size column.
    pub fn size_unit_bytes(&self) -> u64 {
        self.size.1
    }

    /// Parses the part after `generic:`.
    pub fn parse(text: &str) -> Result<GenericSpec, String> {
        let mut spec = GenericSpec {
            sep: Separator::Byte(b','),
            time: None,
            offset: (usize::MAX, 0),
            size: (usize::MAX, 0),
            op: OpSource::Column(usize::MAX),
            device: None,
            skip: 0,
            tokens: default_tokens(),
        };
        let mut given: Vec<(&str, &str)> = Vec::new();
        for item in text.split(',').filter(|s| !s.trim().is_empty()) {
            let Some((key, value)) = item.split_once('=') else {
                return Err(format!("`{item}`: expected key=value ({HELP})"));
            };
            let (key, value) = (key.trim(), value.trim());
            // A key given twice is ambiguous (the last would win silently).
            if let Some((_, first)) = given.iter().find(|(k, _)| *k == key) {
                return Err(format!(
                    "`{key}` is given twice (`{key}={first}` and `{key}={value}`): give it once"
                ));
            }
            given.push((key, value));
            match key {
                "time" => {
                    let (c, u) = column_unit(key, value, TIME_UNITS)?;
                    spec.time = Some((c, time_scale(key, u)?));
                }
                "offset" | "size" => {
                    let (c, u) = column_unit(key, value, SIZE_UNITS)?;
                    let v = (c, size_unit(key, u)?);
                    if key == "offset" {
                        spec.offset = v
                    } else {
                        spec.size = v
                    }
                }
                "op" => {
                    spec.op = match value.to_ascii_lowercase().as_str() {
                        "read" => OpSource::Constant(Op::Read),
                        "write" => OpSource::Constant(Op::Write),
                        "trim" => OpSource::Constant(Op::Trim),
                        _ => OpSource::Column(column(key, value)?),
                    }
                }
                "device" => spec.device = Some(column(key, value)?),
                "skip" => {
                    spec.skip = value
                        .parse()
                        .map_err(|_| format!("`skip={value}`: expected a number of lines"))?
                }
                "sep" => {
                    spec.sep = match value {
                        "comma" => Separator::Byte(b','),
                        "space" | "whitespace" => Separator::Whitespace,
                        "tab" => Separator::Byte(b'\t'),
                        "semicolon" => Separator::Byte(b';'),
                        _ => {
                            return Err(format!(
                                "`sep={value}`: expected comma, space, tab or semicolon"
                            ))
                        }
                    }
                }
                "read" | "write" | "trim" | "flush" => {
                    let i = ["read", "write", "trim", "flush"]
                        .iter()
                        .position(|k| *k == key)
                        .unwrap_or(0);
                    spec.tokens[i] = value
                        .split('|')
                        .map(|t| t.to_ascii_lowercase().into_bytes())
                        .collect();
                }
                _ => return Err(format!("unknown key `{key}` ({HELP})")),
            }
        }
        for (name, col) in [("offset", spec.offset.0), ("size", spec.size.0)] {
            if col == usize::MAX {
                return Err(format!("`{name}=COL:UNIT` is required ({HELP})"));
            }
        }
        if spec.op == OpSource::Column(usize::MAX) {
            return Err(format!(
                "`op=COL` (or a constant `op=write`) is required ({HELP})"
            ));
        }
        spec.check_tokens_distinct(&given)?;
        Ok(spec)
    }

    /// Refuses an operation token in two lists (`read=1|0,write=0`: is `0` a read or a
    /// write?), naming both lists, given or default.
    fn check_tokens_distinct(&self, given: &[(&str, &str)]) -> Result<(), String> {
        const NAMES: [&str; 4] = ["read", "write", "trim", "flush"];
        let list = |i: usize| {
            let shown = self.tokens[i]
                .iter()
                .map(|t| String::from_utf8_lossy(t).into_owned())
                .collect::<Vec<_>>()
                .join("|");
            let origin = if given.iter().any(|(k, _)| *k == NAMES[i]) {
                ""
            } else {
                "the default "
            };
            format!("{origin}{}={shown}", NAMES[i])
        };
        let pairs = (0..4).flat_map(|i| (i + 1..4).map(move |j| (i, j)));
        for (i, j) in pairs {
            if let Some(token) = self.tokens[i]
                .iter()
                .find(|t| self.tokens[j].iter().any(|u| u.eq_ignore_ascii_case(t)))
            {
                return Err(format!(
                    "the operation token `{}` is both a {} ({}) and a {} ({}): give each token one operation",
                    String::from_utf8_lossy(token),
                    NAMES[i],
                    list(i),
                    NAMES[j],
                    list(j)
                ));
            }
        }
        Ok(())
    }

    pub fn skip_lines(&self) -> u64 {
        self.skip
    }

    fn op_of(&self, token: &[u8]) -> Option<Op> {
        (0..4)
            .find(|&i| self.tokens[i].iter().any(|t| t.eq_ignore_ascii_case(token)))
            .map(|i| Op::ALL[i])
    }
}

#[derive(Debug)]
pub struct GenericParser {
    spec: GenericSpec,
    skipped: u64,
}

impl GenericParser {
    pub fn new(spec: GenericSpec) -> Self {
        GenericParser { spec, skipped: 0 }
    }
}

impl LineParser for GenericParser {
    fn parse(&mut self, line: &[u8], out: &mut Vec<TraceRecord>) -> Result<(), LineError> {
        if self.skipped < self.spec.skip {
            self.skipped += 1;
            return Ok(());
        }
        let s = &self.spec;
        let f = match s.sep {
            Separator::Byte(b) => Fields::split_on(line, b),
            Separator::Whitespace => Fields::split_whitespace(line),
        };
        let needed = [
            Some(s.offset.0),
            Some(s.size.0),
            s.time.map(|t| t.0),
            s.device,
            match s.op {
                OpSource::Column(c) => Some(c),
                OpSource::Constant(_) => None,
            },
        ];
        let max_col = needed.iter().flatten().max().copied().unwrap_or(0);
        if f.len() <= max_col {
            return Err(LineError::field_count(
                f.len(),
                &format!("at least {} fields", max_col + 1),
            ));
        }
        let time_ns = match s.time {
            Some((c, scale)) => f.decimal_ns(c, "time", scale)?,
            None => 0,
        };
        let op = match s.op {
            OpSource::Constant(op) => op,
            OpSource::Column(c) => s.op_of(f.get(c)).ok_or_else(|| {
                LineError::field(
                    c,
                    "op",
                    f.get(c),
                    "an operation token (see the format's read=/write=/trim=/flush= lists)",
                )
            })?,
        };
        let scaled = |(c, unit): (usize, u64), name: &str| -> Result<u64, LineError> {
            f.u64(c, name, "an unsigned integer")?
                .checked_mul(unit)
                .ok_or_else(|| LineError::field(c, name, f.get(c), "a value below 2^64 bytes"))
        };
        let device = match s.device {
            Some(c) => u32::try_from(f.u64(c, "device", "a device number")?)
                .map_err(|_| LineError::field(c, "device", f.get(c), "a number below 2^32"))?,
            None => 0,
        };
        let (offset_bytes, len_bytes) = if op == Op::Flush {
            (0, 0)
        } else {
            (scaled(s.offset, "offset")?, scaled(s.size, "size")?)
        };
        out.push(TraceRecord {
            time_ns,
            device,
            op,
            offset_bytes,
            len_bytes,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_twice_is_refused_naming_it() {
        let e = GenericSpec::parse("offset=1:b,size=2:b,op=3,size=4:b").unwrap_err();
        assert!(e.contains("`size` is given twice"), "{e}");
        assert!(e.contains("size=2:b") && e.contains("size=4:b"), "{e}");
        let e = GenericSpec::parse("offset=1:b,size=2:b,op=3,read=r,read=1").unwrap_err();
        assert!(e.contains("`read` is given twice"), "{e}");
    }

    #[test]
    fn a_token_of_two_operations_is_refused_naming_both_lists() {
        let e = GenericSpec::parse("offset=1:b,size=2:b,op=3,read=1|0,write=0").unwrap_err();
        assert!(e.contains("token `0` is both a read (read=1|0)"), "{e}");
        assert!(e.contains("and a write (write=0)"), "{e}");
        // Against a default list too, case-insensitively.
        let e = GenericSpec::parse("offset=1:b,size=2:b,op=3,write=W|R").unwrap_err();
        assert!(e.contains("the default read=r|read|rs"), "{e}");
        // Distinct lists pass.
        assert!(GenericSpec::parse("offset=1:b,size=2:b,op=3,read=1,write=0").is_ok());
    }
}
