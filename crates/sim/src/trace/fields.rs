//! Byte-level field splitting and exact number parsing shared by the trace readers: no
//! allocation, no UTF-8 validation, no floating point for decimal times (so a timestamp of
//! `0.551706` seconds is exactly 551 706 000 ns).

use std::fmt;

/// Why a line could not be read, with what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    pub message: String,
}

impl LineError {
    pub fn new(message: impl Into<String>) -> LineError {
        LineError {
            message: message.into(),
        }
    }

    /// `field N (name) "value": expected ...`.
    pub fn field(index: usize, name: &str, value: &[u8], expected: &str) -> LineError {
        LineError::new(format!(
            "field {} ({name}) {}: expected {expected}",
            index + 1,
            quote(value, 40)
        ))
    }

    /// Wrong number of fields.
    pub fn field_count(found: usize, expected: &str) -> LineError {
        LineError::new(format!("{found} fields: expected {expected}"))
    }
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// `bytes` as a quoted, escaped string of at most `max` characters.
pub fn quote(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out: String = text.chars().take(max).collect();
    if text.chars().count() > max {
        out.push_str("...");
    }
    format!("{out:?}")
}

/// Most fields any reader looks at; further fields are counted but not kept.
pub const MAX_FIELDS: usize = 16;

/// Fields of one line (borrowed), at most [`MAX_FIELDS`] kept, all counted.
pub struct Fields<'a> {
    items: [&'a [u8]; MAX_FIELDS],
    count: usize,
}

impl<'a> Fields<'a> {
    /// Splits on `sep`, trimming spaces and tabs around each field.
    pub fn split_on(line: &'a [u8], sep: u8) -> Fields<'a> {
        let mut f = Fields {
            items: [&[]; MAX_FIELDS],
            count: 0,
        };
        let mut start = 0;
        for at in memchr::memchr_iter(sep, line) {
            f.push(trim(&line[start..at]));
            start = at + 1;
        }
        f.push(trim(&line[start..]));
        f
    }

    /// Splits on runs of spaces and tabs.
    pub fn split_whitespace(line: &'a [u8]) -> Fields<'a> {
        let mut f = Fields {
            items: [&[]; MAX_FIELDS],
            count: 0,
        };
        let mut i = 0;
        let n = line.len();
        while i < n {
            while i < n && is_blank(line[i]) {
                i += 1;
            }
            if i == n {
                break;
            }
            let start = i;
            while i < n && !is_blank(line[i]) {
                i += 1;
            }
            f.push(&line[start..i]);
        }
        f
    }

    fn push(&mut self, field: &'a [u8]) {
        if self.count < MAX_FIELDS {
            self.items[self.count] = field;
        }
        self.count += 1;
    }

    /// Number of fields on the line.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Field `i` (0-based), empty when absent.
    pub fn get(&self, i: usize) -> &'a [u8] {
        if i < self.count.min(MAX_FIELDS) {
            self.items[i]
        } else {
            &[]
        }
    }

    /// Field `i` as an unsigned integer.
    pub fn u64(&self, i: usize, name: &str, expected: &str) -> Result<u64, LineError> {
        let v = self.get(i);
        parse_u64(v).ok_or_else(|| LineError::field(i, name, v, expected))
    }

    /// Field `i` as a decimal number of `10^scale` ns units, converted exactly to ns.
    pub fn decimal_ns(&self, i: usize, name: &str, scale: u32) -> Result<u64, LineError> {
        let v = self.get(i);
        parse_decimal_ns(v, scale).map_err(|why| LineError::field(i, name, v, why))
    }
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// `bytes` without leading and trailing spaces and tabs.
pub fn trim(bytes: &[u8]) -> &[u8] {
    let mut s = 0;
    let mut e = bytes.len();
    while s < e && is_blank(bytes[s]) {
        s += 1;
    }
    while e > s && is_blank(bytes[e - 1]) {
        e -= 1;
    }
    &bytes[s..e]
}

/// Whether the line holds nothing to read: blank, or a `#` comment.
pub fn is_blank_or_comment(line: &[u8]) -> bool {
    match line.iter().position(|&b| !b.is_ascii_whitespace()) {
        None => true,
        Some(i) => line[i] == b'#',
    }
}

/// A decimal unsigned integer (digits only, no sign), `None` when malformed or above `u64::MAX`.
pub fn parse_u64(bytes: &[u8]) -> Option<u64> {
    if bytes.is_empty() || bytes.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in bytes {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// A non-negative decimal (`12`, `12.5`, `.5`, `1.5e-3`) in units of `10^scale` ns, converted
/// to ns exactly for plain decimals (rounded to the nearest ns beyond `scale` fraction
/// digits) and through `f64` for exponent notation.
pub fn parse_decimal_ns(bytes: &[u8], scale: u32) -> Result<u64, &'static str> {
    const WHAT: &str = "a non-negative decimal number";
    if bytes.iter().any(|&b| b == b'e' || b == b'E') {
        return parse_exponent_ns(bytes, scale);
    }
    let (int_part, frac_part) = match memchr::memchr(b'.', bytes) {
        Some(dot) => (&bytes[..dot], &bytes[dot + 1..]),
        None => (bytes, &bytes[..0]),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(WHAT);
    }
    let whole = if int_part.is_empty() {
        0
    } else {
        parse_u64(int_part).ok_or(WHAT)?
    };
    let unit = 10u64.pow(scale);
    let mut ns = whole.checked_mul(unit).ok_or("a time below 2^64 ns")?;
    let mut place = unit;
    let mut round_up = false;
    for (i, &b) in frac_part.iter().enumerate() {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(WHAT);
        }
        if place > 1 {
            place /= 10;
            ns += u64::from(d) * place;
        } else if i == scale as usize {
            round_up = d >= 5;
        }
    }
    if round_up {
        ns = ns.checked_add(1).ok_or("a time below 2^64 ns")?;
    }
    Ok(ns)
}

fn parse_exponent_ns(bytes: &[u8], scale: u32) -> Result<u64, &'static str> {
    const WHAT: &str = "a non-negative decimal number";
    let text = std::str::from_utf8(bytes).map_err(|_| WHAT)?;
    if text.starts_with('-') || text.starts_with('+') {
        return Err(WHAT);
    }
    let value: f64 = text.parse().map_err(|_| WHAT)?;
    let ns = (value * 10f64.powi(scale as i32)).round();
    if !ns.is_finite() || !(0.0..1.8e19).contains(&ns) {
        return Err("a time below 2^64 ns");
    }
    Ok(ns as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_convert_exactly() {
        assert_eq!(parse_decimal_ns(b"0.551706", 9), Ok(551_706_000));
        assert_eq!(parse_decimal_ns(b"12", 6), Ok(12_000_000));
        assert_eq!(parse_decimal_ns(b".5", 6), Ok(500_000));
        assert_eq!(parse_decimal_ns(b"3.", 3), Ok(3_000));
        assert_eq!(parse_decimal_ns(b"1.0000004", 6), Ok(1_000_000));
        assert_eq!(parse_decimal_ns(b"1.0000005", 6), Ok(1_000_001));
        assert_eq!(parse_decimal_ns(b"1.5e-3", 9), Ok(1_500_000));
        assert_eq!(parse_decimal_ns(b"7", 0), Ok(7));
        for bad in [
            &b""[..],
            b".",
            b"-1",
            b"1.2.3",
            b"1,5",
            b"abc",
            b"1e400",
            b"-1e3",
        ] {
            assert!(parse_decimal_ns(bad, 6).is_err(), "{bad:?}");
        }
        assert!(parse_decimal_ns(b"99999999999999999999", 9).is_err());
    }

    #[test]
    fn integers_reject_signs_overflow_and_junk() {
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"+1"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"1 "), None);
    }

    #[test]
    fn splitting_trims_and_counts_every_field() {
        let f = Fields::split_on(b" a , b,,c ", b',');
        assert_eq!(f.len(), 4);
        assert_eq!(
            (f.get(0), f.get(2), f.get(3)),
            (&b"a"[..], &b""[..], &b"c"[..])
        );
        let w = Fields::split_whitespace(b"  1\t2   3 ");
        assert_eq!(w.len(), 3);
        assert_eq!(w.get(2), b"3");
        assert_eq!(w.get(7), b"");
        let many = Fields::split_on(&[b','; 40], b',');
        assert_eq!(many.len(), 41);
        assert_eq!(many.get(30), b"");
    }
}
