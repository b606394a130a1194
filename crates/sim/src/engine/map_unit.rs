//! The FTL's hardware map unit (FMMU, fmmu.txt section 4): one server beside the CPU cores
//! that runs the map-unit time of FTL handlers, one piece of work at a time, and its busy
//! time per queue.
//!
//! A handler's work is charged to three queues ([`MapQueue`]: host requests, GC requests,
//! responses of the flash); each non-empty part is one job. The arbiter the FTL names
//! ([`MapUnitArbiter`]) picks the next job:
//! - **FIFO**: in the order the handlers ran, a handler's parts together; the unit's time is
//!   reserved when the handler runs (no event of its own).
//! - **Weighted round robin** (fmmu.txt 4.6, Fig. 9): the current queue is served up to its
//!   weight of jobs in a row while it has any, then the next non-empty queue in turn (host
//!   requests, GC requests, responses); the unit never idles while work waits. Responses
//!   weigh more than requests in FMMU (one response releases every request waiting on its
//!   block). The FTL changes the host and GC request weights at run time
//!   ([`crate::ftl::FtlCtx::set_request_weights`]), FMMU by the GC victim's valid count
//!   ([`crate::ftl::twolevel::victim_request_weights`]).
//!
//! Queues are allocated once; serving a job allocates nothing once they have grown.

use std::collections::VecDeque;

use crate::ftl::{MapQueue, MapUnitArbiter, QueueWeights};

/// The map-unit work of one handler: the batch of effects it releases when done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Job {
    pub batch: u32,
    pub ns: u64,
    /// When the handler's CPU time ended (the job joined its queue).
    pub ready_ns: u64,
}

/// Work and waiting of one queue since the last reset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Handlers served.
    pub jobs: u64,
    /// Map-unit time they took.
    pub busy_ns: u64,
    /// Time they waited for the unit after their CPU time ended.
    pub wait_ns: u64,
}

/// Weighted round robin over the three queues: the current queue is served up to its weight
/// in a row while it has work, then the next non-empty queue in turn (host requests, GC
/// requests, responses). The jobs wait in it.
#[derive(Debug)]
struct Wrr {
    weights: [u32; 3],
    queues: [VecDeque<Job>; 3],
    current: usize,
    served: u32,
    running: bool,
}

impl Wrr {
    fn new(w: QueueWeights) -> Self {
        let mut weights = [0; 3];
        for q in MapQueue::ALL {
            weights[q as usize] = w.of(q).max(1);
        }
        Wrr {
            weights,
            queues: [VecDeque::new(), VecDeque::new(), VecDeque::new()],
            current: 0,
            served: 0,
            running: false,
        }
    }

    /// The queue whose front job goes next, or `None` if all are empty.
    fn pick(&mut self) -> Option<usize> {
        let c = self.current;
        if !self.queues[c].is_empty() && self.served < self.weights[c] {
            self.served += 1;
            return Some(c);
        }
        for step in 1..=3 {
            let q = (c + step) % 3;
            if !self.queues[q].is_empty() {
                self.current = q;
                self.served = 1;
                return Some(q);
            }
        }
        None
    }
}

/// The map unit of one simulation.
#[derive(Debug)]
pub(crate) struct MapUnit {
    round_robin: Option<Wrr>,
    /// FIFO: when the work reserved so far ends.
    free_at: u64,
    busy_ns: u64,
    stats: [QueueStats; 3],
}

impl MapUnit {
    pub fn new(arbiter: MapUnitArbiter) -> Self {
        MapUnit {
            round_robin: match arbiter {
                MapUnitArbiter::Fifo => None,
                MapUnitArbiter::WeightedRoundRobin(w) => Some(Wrr::new(w)),
            },
            free_at: 0,
            busy_ns: 0,
            stats: [QueueStats::default(); 3],
        }
    }

    /// Whether jobs wait in queues for the arbiter ([`MapUnit::enqueue`]) rather than being
    /// reserved in handler order ([`MapUnit::reserve`]).
    pub fn is_arbitrated(&self) -> bool {
        self.round_robin.is_some()
    }

    fn account(&mut self, queue: MapQueue, ready_ns: u64, start_ns: u64, ns: u64) {
        self.busy_ns += ns;
        let s = &mut self.stats[queue as usize];
        s.jobs += 1;
        s.busy_ns += ns;
        s.wait_ns += start_ns - ready_ns;
    }

    /// FIFO: runs a handler's work (`parts`, ns per [`MapQueue`]) once `ready_ns` (the end of
    /// its CPU time) has come and the work given before has run; returns when it ends
    /// (`ready_ns` when there is none).
    pub fn reserve(&mut self, ready_ns: u64, parts: [u64; 3]) -> u64 {
        let ns: u64 = parts.iter().sum();
        if ns == 0 {
            return ready_ns;
        }
        let start = ready_ns.max(self.free_at);
        self.free_at = start + ns;
        for queue in MapQueue::ALL {
            if parts[queue as usize] > 0 {
                self.account(queue, ready_ns, start, parts[queue as usize]);
            }
        }
        self.free_at
    }

    /// Arbitrated: `job` waits in `queue` (call at its `ready_ns`).
    pub fn enqueue(&mut self, queue: MapQueue, job: Job) {
        if let Some(rr) = &mut self.round_robin {
            rr.queues[queue as usize].push_back(job);
        }
    }

    /// Arbitrated: if the unit is idle and work waits, the arbiter's pick starts at `now`:
    /// its batch and when it ends (then call [`MapUnit::finished`]).
    pub fn start_next(&mut self, now: u64) -> Option<(u32, u64)> {
        let rr = self.round_robin.as_mut()?;
        if rr.running {
            return None;
        }
        let slot = rr.pick()?;
        let job = rr.queues[slot].pop_front()?;
        rr.running = true;
        self.account(MapQueue::ALL[slot], job.ready_ns, now, job.ns);
        Some((job.batch, now + job.ns))
    }

    /// Arbitrated: the running job ended.
    pub fn finished(&mut self) {
        if let Some(rr) = &mut self.round_robin {
            rr.running = false;
        }
    }

    /// New weights of the host and GC request queues (at least 1 each); ignored by FIFO.
    pub fn set_request_weights(&mut self, host: u32, gc: u32) {
        if let Some(rr) = &mut self.round_robin {
            rr.weights[MapQueue::HostRequest as usize] = host.max(1);
            rr.weights[MapQueue::GcRequest as usize] = gc.max(1);
        }
    }

    pub fn busy_ns(&self) -> u64 {
        self.busy_ns
    }

    /// Work and waiting of `queue` since the last reset.
    pub fn queue_stats(&self, queue: MapQueue) -> QueueStats {
        self.stats[queue as usize]
    }

    pub fn reset_counters(&mut self) {
        self.busy_ns = 0;
        self.stats = [QueueStats::default(); 3];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(batch: u32) -> Job {
        Job {
            batch,
            ns: 10,
            ready_ns: 0,
        }
    }

    fn weights(host_request: u32, gc_request: u32, response: u32) -> MapUnitArbiter {
        MapUnitArbiter::WeightedRoundRobin(QueueWeights {
            host_request,
            gc_request,
            response,
        })
    }

    /// Serves every waiting job back to back from `now`; the batches in service order.
    fn drain(unit: &mut MapUnit, mut now: u64) -> Vec<u32> {
        let mut order = Vec::new();
        while let Some((batch, end)) = unit.start_next(now) {
            assert_eq!(unit.start_next(end), None, "one job at a time");
            order.push(batch);
            unit.finished();
            now = end;
        }
        order
    }

    #[test]
    fn fifo_serves_in_handler_order() {
        let mut unit = MapUnit::new(MapUnitArbiter::Fifo);
        assert!(!unit.is_arbitrated());
        assert_eq!(unit.reserve(0, [1000, 0, 0]), 1000);
        assert_eq!(unit.reserve(0, [0, 0, 1000]), 2000);
        assert_eq!(
            unit.reserve(5000, [0, 600, 400]),
            6000,
            "parts run together"
        );
        assert_eq!(unit.reserve(5500, [0; 3]), 5500);
        assert_eq!(unit.busy_ns(), 3000);
        let response = unit.queue_stats(MapQueue::Response);
        assert_eq!(
            (response.jobs, response.busy_ns, response.wait_ns),
            (2, 1400, 1000)
        );
        assert_eq!(unit.queue_stats(MapQueue::GcRequest).busy_ns, 600);
    }

    /// Keeps `pending` queues non-empty and serves `n` jobs: jobs served per queue.
    fn serve(unit: &mut MapUnit, n: usize, pending: [bool; 3]) -> [u32; 3] {
        let mut got = [0; 3];
        for k in 0..n as u32 {
            for q in MapQueue::ALL {
                if pending[q as usize] {
                    unit.enqueue(q, job(q as u32 * 1000 + k));
                }
            }
            let (batch, _) = unit.start_next(0).expect("work waits");
            unit.finished();
            got[(batch / 1000) as usize] += 1;
        }
        got
    }

    #[test]
    fn busy_queues_are_served_in_proportion_to_their_weights() {
        // host 2, GC 2, responses 6 per round of 10.
        let mut unit = MapUnit::new(weights(2, 2, 6));
        assert_eq!(serve(&mut unit, 100, [true; 3]), [20, 20, 60]);
        // Only one queue with work gets everything.
        let mut unit = MapUnit::new(weights(2, 2, 6));
        assert_eq!(serve(&mut unit, 7, [false, true, false]), [0, 7, 0]);
    }

    #[test]
    fn a_visit_serves_up_to_the_weight_in_a_row() {
        let mut unit = MapUnit::new(weights(2, 1, 3));
        for b in 0..5 {
            unit.enqueue(MapQueue::HostRequest, job(100 + b));
            unit.enqueue(MapQueue::GcRequest, job(200 + b));
            unit.enqueue(MapQueue::Response, job(300 + b));
        }
        let order = drain(&mut unit, 0);
        assert_eq!(
            order,
            [
                100, 101, 200, 300, 301, 302, // host 2, GC 1, responses 3
                102, 103, 201, 303, 304, // responses run out
                104, 202, 203, 204, // host runs out, then GC alone
            ]
        );
        let host = unit.queue_stats(MapQueue::HostRequest);
        assert_eq!((host.jobs, host.busy_ns), (5, 50));
    }

    #[test]
    fn empty_queues_are_skipped_and_the_unit_idles_only_when_all_are_empty() {
        let mut unit = MapUnit::new(weights(1, 1, 4));
        assert_eq!(unit.start_next(0), None);
        unit.enqueue(MapQueue::GcRequest, job(7));
        assert_eq!(unit.start_next(0), Some((7, 10)));
        assert_eq!(unit.start_next(0), None, "one job at a time");
        unit.finished();
        assert_eq!(unit.start_next(10), None);
        unit.enqueue(MapQueue::HostRequest, job(8));
        assert_eq!(unit.start_next(25), Some((8, 35)));
        assert_eq!(
            unit.queue_stats(MapQueue::HostRequest).wait_ns,
            25,
            "waited from ready_ns 0"
        );
    }

    #[test]
    fn new_request_weights_take_effect() {
        let mut unit = MapUnit::new(weights(4, 4, 1));
        unit.set_request_weights(2, 6);
        assert_eq!(serve(&mut unit, 80, [true, true, false]), [20, 60, 0]);
        unit.set_request_weights(0, 0);
        assert_eq!(
            serve(&mut unit, 10, [true, true, false]),
            [5, 5, 0],
            "a weight of 0 counts as 1"
        );
    }
}
