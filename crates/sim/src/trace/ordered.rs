//! The records a replay uses, in time order: device selection, zero-length requests dropped,
//! a bounded reorder window for traces that are not sorted by time, and the count and
//! duration limits. Times come out relative to the first request.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::Serialize;

use super::formats::TraceRecord;
use super::reader::TraceReader;
use crate::host::Op;
use crate::SimError;

/// What the selection and ordering did, for the report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OrderCounts {
    /// Requests of devices not selected.
    pub other_devices: u64,
    /// Reads, writes and trims of zero bytes (not replayed).
    pub zero_length: u64,
    /// Requests older than one already issued, beyond the reorder window: issued late.
    pub late: u64,
    /// Largest lateness of those.
    pub max_late_ns: u64,
}

/// A record keyed by (time, position in the file), so equal times keep file order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Keyed {
    time_ns: u64,
    seq: u64,
    record: TraceRecord,
}

impl Ord for Keyed {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.time_ns, self.seq).cmp(&(other.time_ns, other.seq))
    }
}

impl PartialOrd for Keyed {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Limits and selection of an [`Ordered`] stream.
#[derive(Debug, Clone, Default)]
pub struct OrderOptions {
    /// Devices kept (empty: all).
    pub devices: Vec<u32>,
    pub reorder_window: usize,
    /// 0: no limit.
    pub max_requests: u64,
    /// 0: no limit (trace time from the first request).
    pub max_duration_ns: u64,
}

/// Trace records in time order, relative to the first.
pub struct Ordered {
    reader: TraceReader,
    options: OrderOptions,
    window: BinaryHeap<Reverse<Keyed>>,
    seq: u64,
    eof: bool,
    origin_ns: Option<u64>,
    last_ns: u64,
    emitted: u64,
    done: bool,
    pub counts: OrderCounts,
}

impl Ordered {
    pub fn new(reader: TraceReader, options: OrderOptions) -> Ordered {
        let cap = options.reorder_window.max(1);
        Ordered {
            reader,
            options: OrderOptions {
                reorder_window: cap,
                ..options
            },
            window: BinaryHeap::with_capacity(cap + 1),
            seq: 0,
            eof: false,
            origin_ns: None,
            last_ns: 0,
            emitted: 0,
            done: false,
            counts: OrderCounts::default(),
        }
    }

    pub fn reader(&self) -> &TraceReader {
        &self.reader
    }

    /// Requests given out so far.
    pub fn emitted(&self) -> u64 {
        self.emitted
    }

    /// The next record with `time_ns` relative to the trace's first request.
    pub fn next_record(&mut self) -> Result<Option<TraceRecord>, SimError> {
        if self.done {
            return Ok(None);
        }
        self.fill()?;
        let Some(Reverse(next)) = self.window.pop() else {
            self.done = true;
            return Ok(None);
        };
        let origin = *self.origin_ns.get_or_insert(next.time_ns);
        let mut time = next.time_ns.max(origin);
        if time < self.last_ns {
            self.counts.late += 1;
            self.counts.max_late_ns = self.counts.max_late_ns.max(self.last_ns - time);
            time = self.last_ns;
        }
        self.last_ns = time;
        let relative = time - origin;
        let over_time =
            self.options.max_duration_ns > 0 && relative >= self.options.max_duration_ns;
        if over_time {
            self.done = true;
            return Ok(None);
        }
        self.emitted += 1;
        Ok(Some(TraceRecord {
            time_ns: relative,
            ..next.record
        }))
    }

    /// Tops the window up to its size (or the end of the file, or the request limit: the
    /// limit counts requests in file order, so nothing past it is read).
    fn fill(&mut self) -> Result<(), SimError> {
        let limit = self.options.max_requests;
        while !self.eof && self.window.len() < self.options.reorder_window {
            if limit > 0 && self.seq >= limit {
                self.eof = true;
                break;
            }
            let Some(record) = self.reader.next_record()? else {
                self.eof = true;
                break;
            };
            if !self.options.devices.is_empty() && !self.options.devices.contains(&record.device) {
                self.counts.other_devices += 1;
                continue;
            }
            if record.len_bytes == 0 && record.op != Op::Flush {
                self.counts.zero_length += 1;
                continue;
            }
            self.seq += 1;
            self.window.push(Reverse(Keyed {
                time_ns: record.time_ns,
                seq: self.seq,
                record,
            }));
        }
        Ok(())
    }
}
