//! The FTL CPU: which waiting FTL handler call runs next and on which core, and the busy time
//! of each core and [`CpuActivity`] (the hardware map unit beside the cores is
//! `map_unit.rs`).
//!
//! Order of calls (documented in ARCHITECTURE.md, "FTL CPU"):
//! - two priority classes: flash completions and wake-ups (`Urgent`) run before new host
//!   sub-requests and idle calls (`Normal`) whenever a core frees, so a completion is not
//!   queued behind submissions that arrived before it; first come, first served within a
//!   class, or, for host sub-requests of an FTL that orders its request buffer by deadline
//!   ([`crate::ftl::Ftl::orders_host_calls_by_deadline`]), earliest deadline first (ties and
//!   calls without a deadline first come, first served);
//! - a call may be bound to one core ([`crate::ftl::Ftl::core_for`]): it waits for that core,
//!   while calls for other free cores (or for any core) go ahead, so there is no head-of-line
//!   blocking; an unbound call takes the lowest-numbered free core.
//!
//! Queues are allocated once per core; picking a call allocates nothing.

use std::collections::VecDeque;

use crate::ftl::CpuActivity;

/// Priority class of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Flash completions and wake-ups.
    Urgent = 0,
    /// Host sub-requests and idle calls.
    Normal = 1,
}

const CLASSES: [Class; 2] = [Class::Urgent, Class::Normal];

/// Queued calls of one class: ((order key, arrival order), call), sorted by the pair. The
/// order key is 0 for first come, first served, else the call's absolute deadline.
type Queue<C> = VecDeque<((u64, u64), C)>;

/// Cores and waiting calls of one simulated FTL CPU.
#[derive(Debug)]
pub(crate) struct FtlCpu<C> {
    busy: Vec<bool>,
    free: u32,
    /// Calls any core may run, per class.
    any: [Queue<C>; 2],
    /// Calls bound to one core, per core and class.
    bound: Vec<[Queue<C>; 2]>,
    /// Calls waiting in `bound`, per class (0: nothing to scan).
    bound_waiting: [usize; 2],
    next_seq: u64,
    core_busy_ns: Vec<u64>,
    activity_ns: [u64; 5],
}

impl<C: Copy> FtlCpu<C> {
    pub fn new(cores: u32) -> Self {
        let cores = cores.max(1) as usize;
        FtlCpu {
            busy: vec![false; cores],
            free: cores as u32,
            any: [VecDeque::new(), VecDeque::new()],
            bound: (0..cores)
                .map(|_| [VecDeque::new(), VecDeque::new()])
                .collect(),
            bound_waiting: [0; 2],
            next_seq: 0,
            core_busy_ns: vec![0; cores],
            activity_ns: [0; 5],
        }
    }

    pub fn cores(&self) -> u32 {
        self.busy.len() as u32
    }

    /// Queues `call`; `core` binds it to one core (checked by the caller to be in range).
    /// Calls run in `order_key` order, then in arrival order: 0 for first come, first served,
    /// a deadline for earliest deadline first.
    pub fn push(&mut self, call: C, class: Class, core: Option<u32>, order_key: u64) {
        self.next_seq += 1;
        let key = (order_key, self.next_seq);
        let queue = match core {
            None => &mut self.any[class as usize],
            Some(k) => {
                self.bound_waiting[class as usize] += 1;
                &mut self.bound[k as usize][class as usize]
            }
        };
        match queue.back() {
            Some(&(last, _)) if last > key => {
                let at = queue.partition_point(|&(k, _)| k < key);
                queue.insert(at, (key, call));
            }
            _ => queue.push_back((key, call)),
        }
    }

    #[cfg(test)]
    pub fn has_waiting(&self) -> bool {
        self.any.iter().any(|q| !q.is_empty()) || self.bound_waiting.iter().any(|&n| n > 0)
    }

    /// The next call that can run and the core it runs on; `ignore_cores` (functional-only
    /// runs) takes calls in class and arrival order whatever the cores' state.
    pub fn pop(&mut self, ignore_cores: bool) -> Option<(C, u32)> {
        if !ignore_cores && self.free == 0 {
            return None;
        }
        for class in CLASSES {
            if let Some(picked) = self.pop_class(class as usize, ignore_cores) {
                return Some(picked);
            }
        }
        None
    }

    /// The first call of `class` (by order key, then arrival) that has a free core.
    fn pop_class(&mut self, class: usize, ignore_cores: bool) -> Option<(C, u32)> {
        // ((order key, arrival), bound core or None)
        let mut best: Option<((u64, u64), Option<u32>)> =
            self.any[class].front().map(|e| (e.0, None));
        if self.bound_waiting[class] > 0 {
            for (k, queues) in self.bound.iter().enumerate() {
                if !ignore_cores && self.busy[k] {
                    continue;
                }
                if let Some(&(key, _)) = queues[class].front() {
                    if best.is_none_or(|(b, _)| key < b) {
                        best = Some((key, Some(k as u32)));
                    }
                }
            }
        }
        let (_, core) = best?;
        match core {
            Some(k) => {
                self.bound_waiting[class] -= 1;
                let (_, call) = self.bound[k as usize][class].pop_front()?;
                Some((call, k))
            }
            None => {
                let (_, call) = self.any[class].pop_front()?;
                let k = self.busy.iter().position(|b| !b).unwrap_or(0) as u32;
                Some((call, k))
            }
        }
    }

    /// Core `core` runs a handler of `cpu_by_activity` (ns per [`CpuActivity`]) from now:
    /// marks it busy when the time is not zero (the caller frees it with
    /// [`FtlCpu::free_core`] when the time has run).
    pub fn occupy(&mut self, core: u32, cpu_by_activity: &[u64; 5]) -> u64 {
        let cpu_ns: u64 = cpu_by_activity.iter().sum();
        if cpu_ns > 0 {
            let k = core as usize;
            debug_assert!(!self.busy[k], "core {k} runs one handler at a time");
            self.busy[k] = true;
            self.free -= 1;
            self.core_busy_ns[k] += cpu_ns;
            for (total, ns) in self.activity_ns.iter_mut().zip(cpu_by_activity) {
                *total += ns;
            }
        }
        cpu_ns
    }

    pub fn free_core(&mut self, core: u32) {
        let k = core as usize;
        debug_assert!(self.busy[k]);
        self.busy[k] = false;
        self.free += 1;
    }

    /// CPU time charged on each core since the last reset.
    pub fn core_busy_ns(&self) -> &[u64] {
        &self.core_busy_ns
    }

    /// CPU time charged to `activity` since the last reset (all cores).
    pub fn activity_busy_ns(&self, activity: CpuActivity) -> u64 {
        self.activity_ns[activity as usize]
    }

    /// Time of all cores together since the last reset.
    pub fn busy_ns(&self) -> u64 {
        self.activity_ns.iter().sum()
    }

    /// Clears the busy times (at the start of a measurement).
    pub fn reset_counters(&mut self) {
        self.core_busy_ns.iter_mut().for_each(|b| *b = 0);
        self.activity_ns = [0; 5];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu_with(cores: u32) -> FtlCpu<&'static str> {
        FtlCpu::new(cores)
    }

    #[test]
    fn urgent_calls_go_before_earlier_normal_ones() {
        let mut cpu = cpu_with(1);
        cpu.push("submit 1", Class::Normal, None, 0);
        cpu.push("submit 2", Class::Normal, None, 0);
        cpu.push("flash done", Class::Urgent, None, 0);
        assert_eq!(cpu.pop(false), Some(("flash done", 0)));
        assert_eq!(cpu.pop(false), Some(("submit 1", 0)));
        assert_eq!(cpu.pop(false), Some(("submit 2", 0)));
        assert_eq!(cpu.pop(false), None);
    }

    #[test]
    fn deadline_keys_order_calls_earliest_first_and_ties_by_arrival() {
        let mut cpu = cpu_with(1);
        cpu.push("write, due 60", Class::Normal, None, 60);
        cpu.push("read, due 15", Class::Normal, None, 15);
        cpu.push("write, due 60 again", Class::Normal, None, 60);
        cpu.push("idle", Class::Normal, None, u64::MAX);
        cpu.push("read, due 15 again", Class::Normal, None, 15);
        cpu.push("bound read, due 10", Class::Normal, Some(0), 10);
        cpu.push("flash done", Class::Urgent, None, 0);
        let order: Vec<_> = std::iter::from_fn(|| cpu.pop(true).map(|(c, _)| c)).collect();
        assert_eq!(
            order,
            [
                "flash done",
                "bound read, due 10",
                "read, due 15",
                "read, due 15 again",
                "write, due 60",
                "write, due 60 again",
                "idle"
            ]
        );
    }

    #[test]
    fn a_bound_call_waits_for_its_core_without_blocking_others() {
        let mut cpu = cpu_with(2);
        cpu.push("for core 0", Class::Normal, Some(0), 0);
        cpu.push("for core 0 again", Class::Normal, Some(0), 0);
        cpu.push("for core 1", Class::Normal, Some(1), 0);
        cpu.push("any", Class::Normal, None, 0);
        let (call, core) = cpu.pop(false).unwrap();
        assert_eq!((call, core), ("for core 0", 0));
        cpu.occupy(core, &[5, 0, 0, 0, 0]);
        // Core 0 is busy: its second call waits, core 1's call and the unbound one go ahead.
        assert_eq!(cpu.pop(false), Some(("for core 1", 1)));
        cpu.occupy(1, &[5, 0, 0, 0, 0]);
        assert_eq!(cpu.pop(false), None, "both cores busy");
        cpu.free_core(1);
        assert_eq!(cpu.pop(false), Some(("any", 1)));
        assert_eq!(cpu.pop(false), None, "core 0's call waits for core 0");
        cpu.free_core(0);
        assert_eq!(cpu.pop(false), Some(("for core 0 again", 0)));
        assert!(!cpu.has_waiting());
    }

    #[test]
    fn busy_time_is_split_by_core_and_activity() {
        let mut cpu = cpu_with(2);
        cpu.occupy(1, &[100, 20, 0, 0, 3]);
        cpu.occupy(0, &[0, 0, 7, 0, 0]);
        assert_eq!(cpu.core_busy_ns(), &[7, 123]);
        assert_eq!(cpu.activity_busy_ns(CpuActivity::Lookup), 100);
        assert_eq!(cpu.activity_busy_ns(CpuActivity::Flush), 7);
        assert_eq!(cpu.activity_busy_ns(CpuActivity::Other), 3);
        assert_eq!(cpu.busy_ns(), 130);
        assert_eq!(cpu.occupy(0, &[0; 5]), 0);
    }
}
