//! The event queue of the discrete-event engine: simulated time in ns, ties broken by the
//! order events were scheduled, so one seed reproduces a run exactly.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Something that happens at a simulated instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The cell operation running on a die finished.
    CellDone { die: u32 },
    /// The chunk on a channel bus finished its transfer.
    BusDone { channel: u32 },
    /// A host-link transfer of a sub-request (write data in, read data out) finished.
    LinkDone { sub: u32 },
    /// A host command finished crossing the link and enters the device.
    CommandIn { req: u32 },
    /// The completion message of a finished request finished crossing the link: the host sees
    /// the request complete.
    CompletionOut { req: u32 },
    /// An FTL CPU core finished its handler.
    CoreFree { core: u32 },
    /// The effects of an FTL handler (kept in `batch`) take effect.
    Commit { batch: u32 },
    /// A handler's CPU time ended: its map-unit work (kept in the engine's side table at
    /// `job`) joins its map-unit queue.
    MapUnitReady { job: u32 },
    /// The map unit finished a handler's work: its effects (kept in `batch`) take effect.
    MapUnitDone { batch: u32 },
    /// A wake-up the FTL asked for (its token is kept in the queue's side table, so events
    /// stay 8 bytes).
    Wakeup { slot: u32 },
    /// The next open-loop request arrives.
    Arrival,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    time: u64,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap, the earliest (time, seq) must come out first.
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// Min-queue of events ordered by (time, scheduling order).
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    wakeup_tokens: Vec<u64>,
    free_wakeups: Vec<u32>,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }
    /// Schedules `event` at absolute time `time_ns`.
    pub fn schedule(&mut self, time_ns: u64, event: Event) {
        self.seq += 1;
        self.heap.push(Entry {
            time: time_ns,
            seq: self.seq,
            event,
        });
    }
    /// Schedules a wake-up carrying `token`.
    pub fn schedule_wakeup(&mut self, time_ns: u64, token: u64) {
        let slot = match self.free_wakeups.pop() {
            Some(s) => {
                self.wakeup_tokens[s as usize] = token;
                s
            }
            None => {
                self.wakeup_tokens.push(token);
                (self.wakeup_tokens.len() - 1) as u32
            }
        };
        self.schedule(time_ns, Event::Wakeup { slot });
    }
    /// The token of a popped wake-up event (frees its slot).
    pub fn take_wakeup(&mut self, slot: u32) -> u64 {
        self.free_wakeups.push(slot);
        self.wakeup_tokens[slot as usize]
    }
    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }
    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|e| e.time)
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_stay_small() {
        assert_eq!(std::mem::size_of::<Event>(), 8);
        assert_eq!(std::mem::size_of::<Entry>(), 24);
    }

    #[test]
    fn wakeup_tokens_round_trip() {
        let mut q = EventQueue::new();
        q.schedule_wakeup(5, u64::MAX - 1);
        let Some((5, Event::Wakeup { slot })) = q.pop() else {
            panic!("wake-up expected")
        };
        assert_eq!(q.take_wakeup(slot), u64::MAX - 1);
    }

    #[test]
    fn earliest_first_and_ties_in_scheduling_order() {
        let mut q = EventQueue::new();
        q.schedule(20, Event::Arrival);
        q.schedule(10, Event::CellDone { die: 1 });
        q.schedule(10, Event::CellDone { die: 2 });
        assert_eq!(q.pop(), Some((10, Event::CellDone { die: 1 })));
        assert_eq!(q.pop(), Some((10, Event::CellDone { die: 2 })));
        assert_eq!(q.pop(), Some((20, Event::Arrival)));
        assert_eq!(q.pop(), None);
    }
}
