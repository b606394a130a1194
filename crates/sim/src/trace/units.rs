//! Plausibility of a trace's units: a trace whose offsets and sizes are in bytes but whose
//! format declares 512-byte sectors (common in public collections) reads as requests 512 times
//! too large, and one in sectors read as bytes as requests of a few bytes. Nothing is guessed
//! or changed: [`UnitCheck`] watches the records of a pass over the trace and, when they look
//! implausible for the declared units, explains why, says what was assumed and gives the
//! `generic:` format that would read the file the other way.
//!
//! The signs, each enough for a warning (chosen so that real traces in the declared units do
//! not show them; the values are the trace's own, before any placement on the device):
//! - sizes declared in sectors, every size a multiple of 4096 sectors (2 MiB) and the median
//!   request at least 1 MiB: byte sizes of 4 KiB multiples read as sectors;
//! - sizes and offsets declared in sectors, every one of both a multiple of 512 sectors
//!   (256 KiB) and the median request at least 1 MiB: sector-aligned byte values read as
//!   sectors. A real trace of nothing but large requests aligned to 256 KiB (pure streaming)
//!   shows this too: the warning says what it saw, so such a user can tell;
//! - offsets declared in sectors, every offset a multiple of 512 sectors (256 KiB) although the
//!   median request is smaller than that: sector-aligned byte offsets read as sectors;
//! - an offset beyond 256 TiB, more than any single disk of a trace;
//! - sizes and offsets declared in bytes, the median request smaller than a sector and most
//!   offsets not sector-aligned: sector numbers read as bytes.

use super::formats::{TimeUnit, TraceFormat, TraceRecord};
use crate::host::Op;

const SECTOR: u64 = 512;
/// Requests looked at before a sign counts (a handful of lines proves nothing).
const MIN_REQUESTS: u64 = 32;
/// Highest byte a single traced disk plausibly has.
const MAX_PLAUSIBLE_END_BYTES: u64 = 256 << 40;

/// The unit a format declares for a column, in bytes per unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Declared {
    offset: u64,
    size: u64,
}

fn declared(format: &TraceFormat) -> Declared {
    match format {
        TraceFormat::Disksim(_) | TraceFormat::Blkparse(_) => Declared {
            offset: SECTOR,
            size: SECTOR,
        },
        TraceFormat::Spc => Declared {
            offset: SECTOR,
            size: 1,
        },
        TraceFormat::Msr | TraceFormat::Fio => Declared { offset: 1, size: 1 },
        TraceFormat::Generic(spec) => Declared {
            offset: spec.offset_unit_bytes(),
            size: spec.size_unit_bytes(),
        },
    }
}

/// The `generic:` format reading the same file with offsets and sizes in bytes (`to_bytes`) or
/// in sectors; None where the format has no generic equivalent.
fn generic_alternative(format: &TraceFormat, to_bytes: bool) -> Option<String> {
    let unit = if to_bytes { "bytes" } else { "sectors" };
    Some(match format {
        TraceFormat::Disksim(time) => {
            let t = match time {
                TimeUnit::Milliseconds => "ms",
                TimeUnit::Nanoseconds => "ns",
            };
            format!("generic:time=1:{t},device=2,offset=3:{unit},size=4:{unit},op=5,read=1,write=0,sep=space")
        }
        TraceFormat::Spc => {
            format!("generic:device=1,offset=2:{unit},size=3:bytes,op=4,time=5:s")
        }
        TraceFormat::Msr => {
            format!("generic:time=1:100ns,device=3,op=4,offset=5:{unit},size=6:{unit}")
        }
        _ => return None,
    })
}

/// Watches records for signs of the wrong units.
#[derive(Debug, Clone)]
pub struct UnitCheck {
    declared: Declared,
    requests: u64,
    sizes_multiple_of_4096_units: bool,
    sizes_multiple_of_512_units: bool,
    offsets_multiple_of_512_units: bool,
    sizes_at_least_1_mib: u64,
    sizes_below_256_kib: u64,
    sizes_below_a_sector: u64,
    unaligned_offsets: u64,
    highest_end: u64,
}

impl UnitCheck {
    /// A check of records read in `format`.
    pub fn new(format: &TraceFormat) -> UnitCheck {
        UnitCheck {
            declared: declared(format),
            requests: 0,
            sizes_multiple_of_4096_units: true,
            sizes_multiple_of_512_units: true,
            offsets_multiple_of_512_units: true,
            sizes_at_least_1_mib: 0,
            sizes_below_256_kib: 0,
            sizes_below_a_sector: 0,
            unaligned_offsets: 0,
            highest_end: 0,
        }
    }

    /// Looks at one record (flushes and empty requests carry no units).
    pub fn add(&mut self, r: &TraceRecord) {
        if r.op == Op::Flush || r.len_bytes == 0 {
            return;
        }
        let d = self.declared;
        self.requests += 1;
        self.sizes_multiple_of_4096_units &= r.len_bytes % (4096 * d.size) == 0;
        self.sizes_multiple_of_512_units &= r.len_bytes % (512 * d.size) == 0;
        self.offsets_multiple_of_512_units &= r.offset_bytes % (512 * d.offset) == 0;
        self.sizes_at_least_1_mib += u64::from(r.len_bytes >= 1 << 20);
        self.sizes_below_256_kib += u64::from(r.len_bytes < 256 << 10);
        self.sizes_below_a_sector += u64::from(r.len_bytes < SECTOR);
        self.unaligned_offsets += u64::from(r.offset_bytes % SECTOR != 0);
        self.highest_end = self
            .highest_end
            .max(r.offset_bytes.saturating_add(r.len_bytes));
    }

    /// Why the sector-declared columns look like bytes, if they do.
    fn bytes_read_as_sectors(&self) -> Vec<String> {
        let d = self.declared;
        let half = self.requests.div_ceil(2);
        let mut signs = Vec::new();
        let large = self.sizes_at_least_1_mib >= half;
        let both_sectors = d.size == SECTOR && d.offset == SECTOR;
        if d.size == SECTOR && large && self.sizes_multiple_of_4096_units {
            signs.push(
                "every request size is a multiple of 4096 sectors (2 MiB) and the median request is 1 MiB or more"
                    .to_string(),
            );
        } else if both_sectors
            && large
            && self.sizes_multiple_of_512_units
            && self.offsets_multiple_of_512_units
        {
            signs.push(
                "every offset and every size is a multiple of 512 sectors (256 KiB) and the median request is 1 MiB or more"
                    .to_string(),
            );
        }
        if d.offset == SECTOR
            && self.offsets_multiple_of_512_units
            && self.sizes_below_256_kib > half
        {
            signs.push(
                "every offset is a multiple of 512 sectors (256 KiB) although most requests are smaller"
                    .to_string(),
            );
        }
        if d.offset == SECTOR && self.highest_end > MAX_PLAUSIBLE_END_BYTES {
            signs.push(format!(
                "offsets reach {:.1} TiB, beyond any single disk",
                self.highest_end as f64 / (1u64 << 40) as f64
            ));
        }
        signs
    }

    /// Why the byte-declared columns look like sectors, if they do.
    fn sectors_read_as_bytes(&self) -> Vec<String> {
        let d = self.declared;
        let half = self.requests.div_ceil(2);
        if d.size == 1 && self.sizes_below_a_sector >= half && self.unaligned_offsets >= half {
            vec!["the median request is smaller than a 512-byte sector and most offsets are not multiples of 512 bytes".to_string()]
        } else {
            Vec::new()
        }
    }

    /// Why the trace read as `format` looks like bytes read as sectors (requests 512 times
    /// too large, what a trace too large for the device may really be), if it does.
    pub fn bytes_read_as_sectors_warning(&self, format: &TraceFormat) -> Option<String> {
        if self.requests < MIN_REQUESTS {
            return None;
        }
        let signs = self.bytes_read_as_sectors();
        (!signs.is_empty()).then(|| explain(format, &signs, true))
    }

    /// Warnings for the records seen, for a trace read as `format` (empty when plausible).
    pub fn warnings(&self, format: &TraceFormat) -> Vec<String> {
        if self.requests < MIN_REQUESTS {
            return Vec::new();
        }
        let mut warnings = Vec::new();
        warnings.extend(self.bytes_read_as_sectors_warning(format));
        let as_sectors = self.sectors_read_as_bytes();
        if !as_sectors.is_empty() {
            warnings.push(explain(format, &as_sectors, false));
        }
        warnings
    }
}

/// One warning: the signs, what was assumed, and how to read the trace the other way.
fn explain(format: &TraceFormat, signs: &[String], to_bytes: bool) -> String {
    let (declared, other) = if to_bytes {
        ("512-byte sectors", "bytes")
    } else {
        ("bytes", "512-byte sectors")
    };
    let fix = match (generic_alternative(format, to_bytes), format) {
        (Some(spec), _) => format!("if they are {other}, read the trace with --trace-format '{spec}'"),
        (None, TraceFormat::Generic(_)) => format!(
            "if they are {other}, change the units of offset= and size= in the generic: format to {}",
            if to_bytes { "bytes" } else { "sectors" }
        ),
        (None, _) => format!(
            "if they are {other}, describe the file with a generic: format (see `flashlab trace formats`)"
        ),
    };
    format!(
        "offsets and sizes look like {other}, not the {declared} the {} format declares: {}; they were read as {declared}; {fix}",
        format.name(),
        signs.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::formats::FormatChoice;

    fn record(offset_bytes: u64, len_bytes: u64) -> TraceRecord {
        TraceRecord {
            time_ns: 0,
            device: 0,
            op: Op::Read,
            offset_bytes,
            len_bytes,
        }
    }

    fn check(format: &TraceFormat, records: impl Iterator<Item = TraceRecord>) -> Vec<String> {
        let mut c = UnitCheck::new(format);
        records.for_each(|r| c.add(&r));
        c.warnings(format)
    }

    const NS: TraceFormat = TraceFormat::Disksim(TimeUnit::Nanoseconds);

    #[test]
    fn byte_columns_read_as_sectors_are_announced() {
        // 4 KiB requests at 4 KiB-aligned byte offsets, read as sectors (x512).
        let w = check(
            &NS,
            (0..100).map(|i| record(i * 7 * 4096 * 512, 4096 * 512)),
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("multiple of 4096 sectors"), "{}", w[0]);
        assert!(
            w[0].contains("generic:time=1:ns,device=2,offset=3:bytes,size=4:bytes"),
            "{}",
            w[0]
        );
        assert!(w[0].contains("were read as 512-byte sectors"), "{}", w[0]);
    }

    #[test]
    fn real_sector_traces_pass() {
        // 4 KiB and 8 KiB requests at sector offsets (multiples of 8 sectors).
        let w = check(
            &NS,
            (0..1000).map(|i| record(i * 8 * 512 * 13, 4096 << (i % 2))),
        );
        assert!(w.is_empty(), "{w:?}");
        // Sequential 128 KiB streaming.
        let w = check(&NS, (0..1000).map(|i| record(i << 17, 1 << 17)));
        assert!(w.is_empty(), "{w:?}");
        // Large requests, not all 256 KiB-aligned.
        let w = check(
            &NS,
            (0..1000).map(|i| record(i * (3 << 19) + 4096, 3 << 19)),
        );
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn sector_aligned_byte_columns_read_as_sectors_are_announced() {
        // Requests of 1 to 16 sectors at sector offsets, written in bytes: every value is a
        // multiple of 512 "sectors", the sizes not of 4096.
        let w = check(
            &NS,
            (0..100).map(|i| record(i * 7 * 512 * 512, (1 + i % 16) * 512 * 512)),
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("every offset and every size is a multiple of 512 sectors"),
            "{}",
            w[0]
        );
    }

    #[test]
    fn sector_aligned_byte_offsets_with_small_requests_are_announced() {
        // SPC: LBA column holding byte offsets (multiples of 512 "sectors"), 4 KiB sizes.
        let w = check(
            &TraceFormat::Spc,
            (0..100).map(|i| record(i * 3 * 512 * 512, 4096)),
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("every offset is a multiple of 512 sectors"),
            "{}",
            w[0]
        );
        assert!(w[0].contains("offset=2:bytes"), "{}", w[0]);
    }

    #[test]
    fn offsets_beyond_any_disk_are_announced() {
        let w = check(
            &NS,
            (0..100).map(|i| record((300 << 40) + i * 4096 * 3 + 512, 4096)),
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("beyond any single disk"), "{}", w[0]);
    }

    #[test]
    fn sector_columns_read_as_bytes_are_announced() {
        let w = check(&TraceFormat::Msr, (0..100).map(|i| record(i * 13 + 1, 8)));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("look like 512-byte sectors"), "{}", w[0]);
        assert!(w[0].contains("offset=5:sectors,size=6:sectors"), "{}", w[0]);
        let fine = check(&TraceFormat::Msr, (0..100).map(|i| record(i * 4096, 4096)));
        assert!(fine.is_empty(), "{fine:?}");
    }

    #[test]
    fn a_few_requests_prove_nothing() {
        let w = check(
            &NS,
            (0..MIN_REQUESTS - 1).map(|i| record(i << 30, 4096 * 512)),
        );
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn generic_formats_are_checked_in_their_declared_units() {
        let spec = "generic:time=1:ns,offset=2:sectors,size=3:sectors,op=4";
        let FormatChoice::Exact(format) = FormatChoice::parse(spec).unwrap() else {
            panic!("a generic format is exact")
        };
        let w = check(
            &format,
            (0..100).map(|i| record(i * 4096 * 512, 4096 * 512)),
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("change the units of offset= and size="),
            "{}",
            w[0]
        );
    }
}
