//! WAO-GC (Zhang et al., RTAS'15) as part-ftl.txt section IV summarises it, and section VI.A's
//! schedulability test for it.
//!
//! A victim holds at most v ≤ ⌈λP⌉ valid pages; a partial GC step (c page copies, or the
//! erase) follows a page write, and n = ⌈v/c⌉ + 1 steps must fit with v in one free block:
//! n + v ≤ P, which bounds λ (eq. 12). A request waits at most one partial step
//! max(t_e, c·(t_r + t_w)) (eqs. 13-16).
//!
//! WAO-GC has no admission control. Section VI.A: "each flash operation could potentially be
//! blocked by a partial garbage collection step from a different task. In the worst case, a
//! task will be blocked by all the other tasks. [...] we used a uniform probability to
//! determine the interference from other tasks", with a likelihood (100/75/50%) that a write
//! triggers a partial step. Our concrete test ([`interference_test`]): for every request of
//! every task, the number of other writing tasks that interfere is drawn uniformly from
//! 0..=n-1 (n-1 other writers); each of them, and the request's own write, triggers a partial
//! step with the GC likelihood; the response time is the request's own service (eq. 17's
//! ⌈w/|F|⌉·t_w for writes, eq. 18's r·t_r for reads) plus the triggered steps; the set is
//! schedulable when every response fits in its period (the deadline). [`worst_case_test`] is
//! the deterministic bound: all other writers and the own write trigger a step.

use rand::Rng;

use super::{FlashParams, TaskSpec};

/// Eq. 12: the largest λ (exclusive) that lets a victim's valid pages and the n steps' page
/// writes fit in one block: λ < (P-1)·c / ((c+1)·P).
pub fn max_logical_ratio(pages_per_block: u32, copies_per_step: u32) -> f64 {
    let p = f64::from(pages_per_block);
    let c = f64::from(copies_per_step);
    (p - 1.0) * c / ((c + 1.0) * p)
}

/// One partial GC step: the erase or c page copies, whichever is longer.
pub fn partial_step_ns(dev: &FlashParams) -> f64 {
    let copies = f64::from(dev.copies_per_partial_step) * (dev.gc_read_ns + dev.write_ns);
    dev.erase_ns.max(copies)
}

/// Eq. 13: the worst page-write latency, t_w + max(t_e, c·(t_r + t_w)).
pub fn write_latency_bound_ns(dev: &FlashParams) -> f64 {
    dev.write_ns + partial_step_ns(dev)
}

/// Eq. 14: the worst page-read latency, t_r + t_w + max(t_e, c·(t_r + t_w)).
pub fn read_latency_bound_ns(dev: &FlashParams) -> f64 {
    dev.read_ns + write_latency_bound_ns(dev)
}

/// Eq. 15: write bandwidth in pages/s, |F| writes every eq. 13.
pub fn write_bandwidth_pages_per_s(dev: &FlashParams) -> f64 {
    f64::from(dev.chips) / write_latency_bound_ns(dev) * 1e9
}

/// Eq. 16: read bandwidth in pages/s, f_r reads every eq. 14.
pub fn read_bandwidth_pages_per_s(dev: &FlashParams) -> f64 {
    f64::from(dev.parallel_reads) / read_latency_bound_ns(dev) * 1e9
}

/// A request of a task set that misses its deadline.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Miss {
    /// Index of the task in the set.
    pub task: usize,
    /// "read" or "write".
    pub request: &'static str,
    pub response_ns: f64,
    pub deadline_ns: f64,
    /// Partial GC steps that delayed it.
    pub steps: u32,
}

/// A write's own service (eq. 17's capacity): its pages striped over all |F| chips.
pub fn write_service_ns(task: &TaskSpec, dev: &FlashParams) -> f64 {
    f64::from(task.write_pages.div_ceil(dev.chips)) * dev.write_ns
}

/// A read's own service (eq. 18's capacity): r page reads one after the other.
pub fn read_service_ns(task: &TaskSpec, dev: &FlashParams) -> f64 {
    f64::from(task.read_pages) * dev.read_ns
}

/// Section VI.A's test with GC likelihood `gc_likelihood` in [0, 1] (see the module docs):
/// the first request that misses its deadline, or Ok.
pub fn interference_test(
    tasks: &[TaskSpec],
    dev: &FlashParams,
    gc_likelihood: f64,
    rng: &mut impl Rng,
) -> Result<(), Miss> {
    check_requests(tasks, dev, |others, own_write| {
        let interferers = rng.random_range(0..=others);
        let mut steps = 0;
        for _ in 0..interferers + u32::from(own_write) {
            if rng.random::<f64>() < gc_likelihood {
                steps += 1;
            }
        }
        steps
    })
}

/// The worst case of section VI.A: every other writing task, and the request's own write,
/// delays it by a partial step.
pub fn worst_case_test(tasks: &[TaskSpec], dev: &FlashParams) -> Result<(), Miss> {
    check_requests(tasks, dev, |others, own_write| {
        others + u32::from(own_write)
    })
}

/// Every request of every task with its worst response under [`worst_case_test`]'s blocking
/// (all other writers and the own write delay it by a partial step), in task order; a
/// response above its deadline is a miss.
pub fn worst_case_responses(tasks: &[TaskSpec], dev: &FlashParams) -> Vec<Miss> {
    let mut all = Vec::new();
    let writers = tasks.iter().filter(|t| t.writes()).count() as u32;
    let step_ns = partial_step_ns(dev);
    for (i, t) in tasks.iter().enumerate() {
        let others = writers - u32::from(t.writes());
        for (present, request, service_ns, deadline_ns) in requests_of(t, dev) {
            if present {
                let steps = others + u32::from(request == "write");
                all.push(Miss {
                    task: i,
                    request,
                    response_ns: service_ns + f64::from(steps) * step_ns,
                    deadline_ns,
                    steps,
                });
            }
        }
    }
    all
}

/// A task's (present, "read"/"write", own service, deadline) of each kind of request.
fn requests_of(t: &TaskSpec, dev: &FlashParams) -> [(bool, &'static str, f64, f64); 2] {
    [
        (t.reads(), "read", read_service_ns(t, dev), t.read_period_ns),
        (
            t.writes(),
            "write",
            write_service_ns(t, dev),
            t.write_period_ns,
        ),
    ]
}

/// Every read and write request of every task against its period, delayed by
/// `steps(other writers, own write)` partial steps.
fn check_requests(
    tasks: &[TaskSpec],
    dev: &FlashParams,
    mut steps: impl FnMut(u32, bool) -> u32,
) -> Result<(), Miss> {
    let writers = tasks.iter().filter(|t| t.writes()).count() as u32;
    let step_ns = partial_step_ns(dev);
    for (i, t) in tasks.iter().enumerate() {
        let others = writers - u32::from(t.writes());
        for (present, request, service_ns, deadline_ns) in requests_of(t, dev) {
            if !present {
                continue;
            }
            let n = steps(others, request == "write");
            let response_ns = service_ns + f64::from(n) * step_ns;
            if response_ns > deadline_ns {
                return Err(Miss {
                    task: i,
                    request,
                    response_ns,
                    deadline_ns,
                    steps: n,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::realtime::NS_PER_MS;
    use rand::SeedableRng;

    #[test]
    fn eq12_gives_66_4_percent_for_two_copies_and_256_pages() {
        let bound = max_logical_ratio(256, 2);
        assert!((bound - 0.664).abs() < 5e-4, "{bound}");
        assert_eq!(bound, 255.0 * 2.0 / (3.0 * 256.0));
        // Section VI.A: λ = 48.2% is 72.5% of it.
        assert!((0.482 / bound - 0.725).abs() < 1e-3);
    }

    #[test]
    fn eq12_keeps_victim_and_steps_in_one_block() {
        // n + v <= P with n = ⌈v/c⌉ + 1 and v = ⌈λP⌉ just below the bound.
        for (p, c) in [(256u32, 2u32), (64, 1), (128, 3)] {
            let v = (max_logical_ratio(p, c) * f64::from(p) - 1e-9).floor() as u32;
            assert!(v.div_ceil(c) + 1 + v <= p, "P={p} c={c} v={v}");
        }
    }

    #[test]
    fn eqs_13_to_16_with_table_iv() {
        let dev = FlashParams::waogc();
        // A step is c(t_r + t_w) = 2·3.10 ms = 6.20 ms > t_e = 3.84 ms.
        assert!((partial_step_ns(&dev) / NS_PER_MS - 6.2).abs() < 1e-9);
        assert!((write_latency_bound_ns(&dev) / NS_PER_MS - 8.07).abs() < 1e-9);
        assert!((read_latency_bound_ns(&dev) / NS_PER_MS - 9.30).abs() < 1e-9);
        let write = dev.mib_per_s(write_bandwidth_pages_per_s(&dev));
        let read = dev.mib_per_s(read_bandwidth_pages_per_s(&dev));
        assert!((write - 15.5).abs() < 0.05, "eq. 15: {write}");
        assert!((read - 13.4).abs() < 0.05, "eq. 16: {read}");
    }

    #[test]
    fn the_erase_is_the_step_when_copies_are_shorter() {
        let dev = FlashParams {
            copies_per_partial_step: 1,
            ..FlashParams::waogc()
        };
        assert_eq!(partial_step_ns(&dev), dev.erase_ns);
    }

    fn ms(v: f64) -> f64 {
        v * NS_PER_MS
    }

    #[test]
    fn worst_case_counts_every_other_writer_and_the_own_write() {
        let dev = FlashParams::waogc();
        // Three writers of 3 pages: a write waits 1.87 + 3·6.2 = 20.47 ms, a read of task 0
        // (not a writer) 1.23 + 3·6.2 = 19.83 ms.
        let reader = TaskSpec::new(1, ms(19.9), 0, 0.0).unwrap();
        let writer = TaskSpec::writer(3, ms(20.5)).unwrap();
        let set = [reader, writer, writer, writer];
        assert_eq!(worst_case_test(&set, &dev), Ok(()));
        let tight = TaskSpec::new(1, ms(19.8), 0, 0.0).unwrap();
        let miss = worst_case_test(&[tight, writer, writer, writer], &dev).unwrap_err();
        assert_eq!((miss.task, miss.request, miss.steps), (0, "read", 3));
        assert!((miss.response_ns - ms(19.83)).abs() < 1.0);
        let slow = TaskSpec::writer(3, ms(20.4)).unwrap();
        let miss = worst_case_test(&[reader, slow, writer, writer], &dev).unwrap_err();
        assert_eq!((miss.task, miss.request, miss.steps), (1, "write", 3));
    }

    #[test]
    fn table_iii_reads_can_miss_under_waogc_as_fig_13b_shows() {
        // Section VI.B: "some read requests using WAO-GC miss deadlines". A 3-page read
        // behind the four writers' steps: 3·1.23 + 4·6.2 = 28.5 ms > 15 ms; the writes fit:
        // 1.87 + 4·6.2 = 26.7 ms < 60 ms.
        let dev = FlashParams::waogc();
        let mut set = vec![TaskSpec::writer(12, ms(60.0)).unwrap(); 4];
        assert_eq!(worst_case_test(&set, &dev), Ok(()));
        set.push(TaskSpec::reader(3, ms(15.0)).unwrap());
        let miss = worst_case_test(&set, &dev).unwrap_err();
        assert_eq!((miss.task, miss.request, miss.steps), (4, "read", 4));
        assert!((miss.response_ns - ms(28.49)).abs() < 1.0, "{miss:?}");
    }

    #[test]
    fn interference_draws_at_most_the_worst_case_and_none_without_gc() {
        let dev = FlashParams::waogc();
        // Three writers: at most 2 others + the own write = 3 steps, 20.47 ms.
        let writer = TaskSpec::writer(3, ms(20.5)).unwrap();
        let set = [writer; 3];
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        for _ in 0..200 {
            assert_eq!(interference_test(&set, &dev, 1.0, &mut rng), Ok(()));
        }
        // A period shorter than one step: only a GC-free run meets it.
        let short = TaskSpec::writer(3, ms(5.0)).unwrap();
        assert_eq!(interference_test(&[short; 4], &dev, 0.0, &mut rng), Ok(()));
        assert!(interference_test(&[short; 4], &dev, 1.0, &mut rng).is_err());
    }

    #[test]
    fn interference_is_uniform_over_the_other_writers() {
        // Two writers with a deadline that tolerates exactly one step: the own write always
        // triggers one at 100%, the other writer interferes half the time.
        let dev = FlashParams::waogc();
        let w = TaskSpec::writer(3, ms(1.87 + 6.2 + 1.0)).unwrap();
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let runs = 4000;
        let ok = (0..runs)
            .filter(|_| interference_test(&[w, w], &dev, 1.0, &mut rng).is_ok())
            .count();
        // Both requests pass with probability 1/2 · 1/2.
        let share = ok as f64 / f64::from(runs);
        assert!((share - 0.25).abs() < 0.03, "{share}");
    }
}
