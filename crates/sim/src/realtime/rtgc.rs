//! RTGC: real-time garbage collection after Chang, Kuo and Lo, "Real-time Garbage Collection
//! for Flash-memory Storage Systems of Real-time Embedded Systems", ACM TECS 3(4), 2004, as
//! part-ftl.txt uses it for comparison (section IV, Fig. 5).
//!
//! What we take from RTGC (as described by part-ftl.txt and the paper's abstract; the full
//! text was not reachable, see docs/realtime-analysis.md): every real-time task that writes
//! gets a real-time garbage collector, a periodic task that reclaims one block per job: it
//! copies the victim's valid pages and erases it (capacity), and its period is set so that the
//! free pages one reclamation guarantees (α, from over-provisioning) cover the pages the task
//! writes (the same ⌈·⌉/⌊·⌋ rule PaRT-FTL's eq. 5 uses). Tasks and collectors are scheduled
//! by EDF; flash operations are not preemptible, so the test adds blocking by the longest one
//! (an erase) over the shortest period: Σ (C^r/T^r + C^w/T^w + C^g/T^g) + t_e / min(T) ≤ 1.
//! Reads and writes share the chips: one test covers both.
//!
//! What we assume to put it on the 16-chip device of the comparison (RTGC models one chip):
//! requests use the whole device as eqs. 17 and 18 charge them (a write of w pages is striped,
//! ⌈w/|F|⌉·t_w; a read is r·t_r); a collector job reclaims one block on each of the |F_w| = |F|
//! chips in lockstep (the writes are striped the same way), so it takes
//! ⌈λP⌉·(t'_r + t_w) + t_e and frees |F|·α pages; λ = 0.482 (section V.A).

use super::part::gc_period_ns;
use super::utilisation::{Load, UtilisationTest};
use super::waogc::{read_service_ns, write_service_ns};
use super::{FlashParams, TaskSpec};

/// A collector job: the victim's valid pages copied and the block erased, on every chip of
/// the stripe at once.
pub fn gc_capacity_ns(dev: &FlashParams) -> f64 {
    dev.valid_pages_bound() * (dev.gc_read_ns + dev.write_ns) + dev.erase_ns
}

/// The collector of a writing task (None when it does not write): a job frees
/// |F_w|·α pages; the period follows the task's write rate.
pub fn gc_task(task: &TaskSpec, dev: &FlashParams) -> Option<Load> {
    task.writes().then(|| Load {
        capacity_ns: gc_capacity_ns(dev),
        period_ns: gc_period_ns(
            task.write_pages,
            task.write_period_ns,
            f64::from(dev.write_chips) * dev.reclaimed_pages_bound(),
        ),
    })
}

/// The EDF test with blocking over the tasks' reads, writes and collectors.
pub fn admission_test(tasks: &[TaskSpec], dev: &FlashParams) -> UtilisationTest {
    let mut loads = Vec::with_capacity(3 * tasks.len());
    for t in tasks {
        if t.reads() {
            let read = Load {
                capacity_ns: read_service_ns(t, dev),
                period_ns: t.read_period_ns,
            };
            loads.push(("read", read));
        }
        if t.writes() {
            let write = Load {
                capacity_ns: write_service_ns(t, dev),
                period_ns: t.write_period_ns,
            };
            loads.push(("write", write));
            loads.extend(gc_task(t, dev).map(|l| ("GC", l)));
        }
    }
    UtilisationTest::edf_with_blocking("flash", "RTGC", &loads, dev.erase_ns)
}

/// RTGC admits the set when its test holds.
pub fn admission(tasks: &[TaskSpec], dev: &FlashParams) -> Result<(), UtilisationTest> {
    let test = admission_test(tasks, dev);
    if test.passes() {
        Ok(())
    } else {
        Err(test)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::realtime::NS_PER_MS;

    fn ms(v: f64) -> f64 {
        v * NS_PER_MS
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    /// A small device: 2 chips, P = 8, λ = 0.5 (4 valid, α = 4), t_r = 1, t'_r = 1,
    /// t_w = 2, t_e = 5 ms.
    fn small() -> FlashParams {
        FlashParams {
            chips: 2,
            write_chips: 2,
            parallel_reads: 2,
            data_chips: 2,
            parity_chips: 0,
            pages_per_block: 8,
            read_ns: ms(1.0),
            gc_read_ns: ms(1.0),
            write_ns: ms(2.0),
            erase_ns: ms(5.0),
            logical_ratio: 0.5,
            ..FlashParams::waogc()
        }
        .validated()
        .unwrap()
    }

    #[test]
    fn collector_reclaims_a_block_per_chip_per_job() {
        let dev = small();
        // 4 copies of (1 + 2) ms plus the erase.
        assert!(close(gc_capacity_ns(&dev), ms(17.0)));
        // A job frees 2·4 = 8 pages: a task writing 3 pages needs one every ⌊8/3⌋ = 2
        // periods; 8 pages every period; 9 pages two per period.
        let period = |w| gc_task(&TaskSpec::writer(w, ms(100.0)).unwrap(), &dev).unwrap();
        assert!(close(period(3).period_ns, ms(200.0)));
        assert!(close(period(8).period_ns, ms(100.0)));
        assert!(close(period(9).period_ns, ms(50.0)));
        assert!(close(period(2).period_ns, ms(400.0)));
        assert_eq!(gc_task(&TaskSpec::reader(1, ms(10.0)).unwrap(), &dev), None);
    }

    #[test]
    fn one_test_over_reads_writes_collectors_and_an_erase() {
        let dev = small();
        // Task A reads 2 pages / 20 ms and writes 3 pages / 100 ms; task B reads 1 / 10 ms.
        let a = TaskSpec::new(2, ms(20.0), 3, ms(100.0)).unwrap();
        let b = TaskSpec::reader(1, ms(10.0)).unwrap();
        let t = admission_test(&[a, b], &dev);
        // read 2/20 + 1/10 = 0.2; write ⌈3/2⌉·2/100 = 0.04; GC 17/200 = 0.085;
        // blocking 5/10 = 0.5.
        assert!(close(t.term("read"), 0.2));
        assert!(close(t.term("write"), 0.04));
        assert!(close(t.term("GC"), 0.085));
        assert!(close(t.term("blocking"), 0.5));
        assert!(close(t.total(), 0.825) && admission(&[a, b], &dev).is_ok());
        let c = TaskSpec::reader(1, ms(5.5)).unwrap();
        let refused = admission(&[a, b, c], &dev).unwrap_err();
        assert!(refused.total() > 1.0, "{refused}");
    }
}
