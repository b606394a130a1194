//! Host interface: requests, chopping into sub-requests, ordering of overlapping requests, and
//! the host link (bandwidth per direction plus per-command overhead).
//!
//! A request's life: arrival -> (waits while it overlaps an earlier unfinished request where
//! either writes or trims) -> command crosses the link -> writes: each sub-request's data
//! crosses the link, then goes to the FTL; reads: sub-requests go to the FTL, their data
//! crosses the link back -> completion. Latency runs from arrival to completion.

pub mod link;
mod order;

pub use link::Link;
pub use order::OverlapTracker;

use serde::{Deserialize, Serialize};

/// Host operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    /// Deallocate (TRIM / discard / NVMe DSM).
    Trim,
    /// Make every acknowledged write durable.
    Flush,
}

impl Op {
    pub const ALL: [Op; 4] = [Op::Read, Op::Write, Op::Trim, Op::Flush];
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
            Op::Flush => "flush",
        }
    }
    /// Whether the operation changes stored data (and so orders against overlapping requests).
    pub fn modifies(self) -> bool {
        matches!(self, Op::Write | Op::Trim)
    }
}

/// A host request as a workload or trace produces it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Arrival time (open loop); closed-loop sources may leave 0, the engine sets it.
    pub arrival_ns: u64,
    pub op: Op,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    /// Relative deadline (from arrival) for EDF scheduling and the report's deadline
    /// misses, 0 for none.
    pub deadline_ns: u64,
    /// The periodic task that released it (`None` for ordinary workloads and traces): the
    /// report gives latencies and deadline misses per task.
    pub task: Option<u32>,
}

impl Request {
    /// A request of `len_bytes` from `offset_bytes` arriving at time 0, without deadline or
    /// task: what a closed-loop caller submits (the engine sets the arrival).
    pub fn untimed(op: Op, offset_bytes: u64, len_bytes: u64) -> Request {
        Request {
            arrival_ns: 0,
            op,
            offset_bytes,
            len_bytes,
            deadline_ns: 0,
            task: None,
        }
    }
}

/// Index of a sub-request while it is in flight.
pub type SubId = u32;

/// The part of a host request an FTL handles at once: for reads and writes, the sectors of one
/// chop unit (see [`crate::ftl::Ftl::chop_bytes`]); a trim or flush comes whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubRequest {
    pub id: SubId,
    pub op: Op,
    /// First host sector (LBA).
    pub first_sector: u64,
    pub sectors: u64,
    /// Data version written (writes): unique per host write request, so reads can be checked.
    pub version: u64,
    /// Absolute deadline (`u64::MAX` for none).
    pub deadline_ns: u64,
    /// Position of its host request in arrival order (1, 2, ...): a request that waited for
    /// an earlier overlapping one reaches the FTL late, and an FTL that queues requests can
    /// still serve it in its arrival place.
    pub arrival_seq: u64,
    /// Arrival time of its host request.
    pub arrival_ns: u64,
    /// Sectors of its whole host request (a real-time FTL learns a task's pages per job).
    pub request_sectors: u64,
    /// First sector of its whole host request (a map cache charges one Lookup or Update per
    /// request and cache block, fmmu.txt Fig. 6).
    pub request_first_sector: u64,
    /// The periodic task that released its host request ([`Request::task`]).
    pub task: Option<u32>,
}

/// Splits `[first, first + count)` (in sectors) at multiples of `chop` sectors.
pub fn chop(first: u64, count: u64, chop: u64) -> impl Iterator<Item = (u64, u64)> {
    let end = first + count;
    let mut at = first;
    std::iter::from_fn(move || {
        if at >= end {
            return None;
        }
        let boundary = (at / chop + 1) * chop;
        let next = boundary.min(end);
        let piece = (at, next - at);
        at = next;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chop_splits_at_aligned_boundaries() {
        let parts: Vec<_> = chop(6, 20, 8).collect();
        assert_eq!(parts, vec![(6, 2), (8, 8), (16, 8), (24, 2)]);
        assert_eq!(chop(0, 8, 8).count(), 1);
        assert_eq!(chop(5, 0, 8).count(), 0);
    }
}
