//! PaRT-FTL's real-time analysis (part-ftl.txt sections III.B-III.E).
//!
//! Reads go to the read chips F_r and are charged a rebuild in the worst case (eq. 1); writes
//! go to the write chips F_w, striped over |F_w| chips (eq. 2); every writing task also has an
//! encoding task that writes the parity pages of its data (eq. 3) and a GC task that reclaims
//! the blocks its writes consume (eq. 5). Admission runs two SRP/EDF tests with blocking
//! (Baker): the read set (eq. 6, blocking by one page read) and the write set (eq. 7, blocking
//! by one erase). Eq. 8 bounds a read's latency; eqs. 9-11 give bandwidths.

use super::utilisation::{Load, UtilisationTest};
use super::{floor_exact, FlashParams, TaskSpec};

/// Eq. 1: C_i^r = r_i·(t_r + t_c^d), every read rebuilt in the worst case.
pub fn read_capacity_ns(task: &TaskSpec, dev: &FlashParams) -> f64 {
    f64::from(task.read_pages) * (dev.read_ns + dev.decode_ns)
}

/// Eq. 2: C_i^w = ⌈w_i / |F_w|⌉·t_w, the pages striped over the write chips.
pub fn write_capacity_ns(task: &TaskSpec, dev: &FlashParams) -> f64 {
    f64::from(task.write_pages.div_ceil(dev.write_chips)) * dev.write_ns
}

/// Eq. 3: the encoding task of a writing task: `m·P` parity pages computed and written
/// (⌈m·P / |F_w|⌉ stripes) every time the task has written `k·P` pages,
/// T_i^e = T_i^w·k·P / w_i. None when the task does not write.
pub fn encoding_task(task: &TaskSpec, dev: &FlashParams) -> Option<Load> {
    if !task.writes() {
        return None;
    }
    let parity_pages = dev.parity_chips * dev.pages_per_block;
    let capacity_ns = f64::from(parity_pages) * dev.encode_ns
        + f64::from(parity_pages.div_ceil(dev.write_chips)) * dev.write_ns;
    let data_pages = f64::from(dev.data_chips) * f64::from(dev.pages_per_block);
    Some(Load {
        capacity_ns,
        period_ns: task.write_period_ns * data_pages / f64::from(task.write_pages),
    })
}

/// Eq. 5, capacity: reclaiming one block on each of the k + m chips of a stripe, |F_w| of
/// them at a time: ⌈(k+m)/|F_w|⌉·(⌈λP⌉·(t'_r + t_w) + t_e).
pub fn gc_capacity_ns(dev: &FlashParams) -> f64 {
    let rounds = (dev.data_chips + dev.parity_chips).div_ceil(dev.write_chips);
    let block_ns = dev.valid_pages_bound() * (dev.gc_read_ns + dev.write_ns) + dev.erase_ns;
    f64::from(rounds) * block_ns
}

/// Eq. 5, period: a reclamation frees at least k·α data pages. More written per period
/// than that: ⌈w_i / kα⌉ reclamations per T_i^w (w_i = kα + 1 gives two); at most that:
/// one every ⌊kα / w_i⌋ periods (w_i = kα/2 gives 2·T_i^w).
pub fn gc_period_ns(write_pages: u32, write_period_ns: f64, reclaimed_pages: f64) -> f64 {
    let w = f64::from(write_pages);
    if w > reclaimed_pages {
        write_period_ns / (w / reclaimed_pages).ceil()
    } else {
        write_period_ns * floor_exact(reclaimed_pages / w)
    }
}

/// Eq. 5: the GC task of a writing task (None when it does not write).
pub fn gc_task(task: &TaskSpec, dev: &FlashParams) -> Option<Load> {
    task.writes().then(|| Load {
        capacity_ns: gc_capacity_ns(dev),
        period_ns: gc_period_ns(
            task.write_pages,
            task.write_period_ns,
            f64::from(dev.data_chips) * dev.reclaimed_pages_bound(),
        ),
    })
}

/// Eq. 6: the read set, Σ C_i^r / T_i^r plus blocking by one page read t_r / min(T^r).
pub fn read_test(tasks: &[TaskSpec], dev: &FlashParams) -> UtilisationTest {
    let loads: Vec<_> = tasks
        .iter()
        .filter(|t| t.reads())
        .map(|t| {
            let load = Load {
                capacity_ns: read_capacity_ns(t, dev),
                period_ns: t.read_period_ns,
            };
            ("read", load)
        })
        .collect();
    UtilisationTest::edf_with_blocking("read set", "eq. 6", &loads, dev.read_ns)
}

/// Eq. 7: the write set, Σ (C^w/T^w + C^e/T^e + C^g/T^g) plus blocking by one erase
/// t_e / min(T), the minimum over all write, encoding and GC periods.
pub fn write_test(tasks: &[TaskSpec], dev: &FlashParams) -> UtilisationTest {
    let mut loads = Vec::with_capacity(3 * tasks.len());
    for t in tasks.iter().filter(|t| t.writes()) {
        let write = Load {
            capacity_ns: write_capacity_ns(t, dev),
            period_ns: t.write_period_ns,
        };
        loads.push(("write", write));
        loads.extend(encoding_task(t, dev).map(|l| ("encoding", l)));
        loads.extend(gc_task(t, dev).map(|l| ("GC", l)));
    }
    UtilisationTest::edf_with_blocking("write set", "eq. 7", &loads, dev.erase_ns)
}

/// PaRT-FTL admits a task set when both eq. 6 and eq. 7 hold: the first failing test.
pub fn admission(tasks: &[TaskSpec], dev: &FlashParams) -> Result<(), UtilisationTest> {
    for test in [read_test(tasks, dev), write_test(tasks, dev)] {
        if !test.passes() {
            return Err(test);
        }
    }
    Ok(())
}

/// Eq. 8: the worst page-read latency, a rebuild: t_r + t_c^d.
pub fn read_latency_bound_ns(dev: &FlashParams) -> f64 {
    dev.read_ns + dev.decode_ns
}

/// Eq. 9: the worst-case write bandwidth in pages/s, k·B_r pages written per GC cycle over
/// (|F|/|F_w|)·[B_v·(t'_r + t_w) + t_e + B_r·t_w] with B_v = ⌈λP⌉ and B_r = α.
pub fn write_bandwidth_pages_per_s(dev: &FlashParams) -> f64 {
    let valid = dev.valid_pages_bound();
    let reclaimed = dev.reclaimed_pages_bound();
    let cycle_ns =
        valid * (dev.gc_read_ns + dev.write_ns) + dev.erase_ns + reclaimed * dev.write_ns;
    let rotations = f64::from(dev.chips) / f64::from(dev.write_chips);
    f64::from(dev.data_chips) * reclaimed / (rotations * cycle_ns) * 1e9
}

/// Eq. 10: the best read bandwidth in pages/s, f_r reads in parallel every t_r.
pub fn max_read_bandwidth_pages_per_s(dev: &FlashParams) -> f64 {
    f64::from(dev.parallel_reads) / dev.read_ns * 1e9
}

/// Eq. 11: the worst read bandwidth in pages/s, every read rebuilt: 1 / (t_r + t_c^d).
pub fn min_read_bandwidth_pages_per_s(dev: &FlashParams) -> f64 {
    1e9 / read_latency_bound_ns(dev)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::realtime::NS_PER_MS;

    fn ms(v: f64) -> f64 {
        v * NS_PER_MS
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// A small device for hand computation: 4 chips, 2 writing, k = 3, m = 1, P = 8,
    /// λ = 0.5 (⌈λP⌉ = 4, α = 4, kα = 12), t_r = 1, t'_r = 0.5, t_w = 2, t_e = 5,
    /// t_c^e = 0.25, t_c^d = 0.5 ms.
    fn small() -> FlashParams {
        FlashParams {
            chips: 4,
            write_chips: 2,
            parallel_reads: 2,
            data_chips: 3,
            parity_chips: 1,
            pages_per_block: 8,
            page_bytes: 8192,
            read_ns: ms(1.0),
            gc_read_ns: ms(0.5),
            write_ns: ms(2.0),
            erase_ns: ms(5.0),
            encode_ns: ms(0.25),
            decode_ns: ms(0.5),
            logical_ratio: 0.5,
            copies_per_partial_step: 2,
        }
        .validated()
        .unwrap()
    }

    #[test]
    fn eq1_and_eq2_capacities() {
        let dev = small();
        let t = TaskSpec::new(3, ms(20.0), 5, ms(100.0)).unwrap();
        assert!(close(read_capacity_ns(&t, &dev), ms(4.5))); // 3·(1 + 0.5)
        assert!(close(write_capacity_ns(&t, &dev), ms(6.0))); // ⌈5/2⌉·2
        let even = TaskSpec::writer(4, ms(100.0)).unwrap();
        assert!(close(write_capacity_ns(&even, &dev), ms(4.0))); // ⌈4/2⌉·2
    }

    #[test]
    fn eq3_encoding_task() {
        let dev = small();
        let t = TaskSpec::writer(5, ms(100.0)).unwrap();
        let e = encoding_task(&t, &dev).unwrap();
        // m·P = 8 parity pages: 8·0.25 + ⌈8/2⌉·2 = 10 ms every T^w·kP/w = 100·24/5 ms.
        assert!(close(e.capacity_ns, ms(10.0)));
        assert!(close(e.period_ns, ms(480.0)));
        // w = kP: the encoding period is the write period.
        let full = TaskSpec::writer(24, ms(100.0)).unwrap();
        assert!(close(
            encoding_task(&full, &dev).unwrap().period_ns,
            ms(100.0)
        ));
        assert_eq!(
            encoding_task(&TaskSpec::reader(1, 1e6).unwrap(), &dev),
            None
        );
    }

    #[test]
    fn eq5_gc_capacity() {
        // ⌈(k+m)/|F_w|⌉ = 2 rounds of ⌈λP⌉·(t'_r + t_w) + t_e = 4·2.5 + 5 ms.
        assert!(close(gc_capacity_ns(&small()), ms(30.0)));
    }

    #[test]
    fn eq5_gc_period_rounds_to_whole_blocks() {
        let dev = small();
        let period = |w: u32| gc_task(&TaskSpec::writer(w, ms(100.0)).unwrap(), &dev).unwrap();
        // w = kα: a block every write period.
        assert!(close(period(12).period_ns, ms(100.0)));
        // w just above kα: two blocks per period, T^g = T^w / 2.
        assert!(close(period(13).period_ns, ms(50.0)));
        assert!(close(period(25).period_ns, ms(100.0 / 3.0)));
        // Half of kα: a block every 2·T^w; more than half: every T^w (the floor).
        assert!(close(period(6).period_ns, ms(200.0)));
        assert!(close(period(7).period_ns, ms(100.0)));
        assert!(close(period(1).period_ns, ms(1200.0)));
    }

    #[test]
    fn eq6_read_set_with_blocking_by_one_read() {
        let dev = small();
        let a = TaskSpec::reader(3, ms(20.0)).unwrap();
        let b = TaskSpec::new(1, ms(10.0), 5, ms(100.0)).unwrap();
        let t = read_test(&[a, b], &dev);
        // 4.5/20 + 1.5/10 = 0.375, blocking t_r / min T^r = 1/10.
        assert!(close(t.term("read"), 0.375));
        assert!(close(t.term("blocking"), 0.1));
        assert!(close(t.total(), 0.475));
    }

    #[test]
    fn eq7_write_set_with_blocking_by_one_erase() {
        let dev = small();
        let t = TaskSpec::new(1, ms(1.0), 5, ms(100.0)).unwrap();
        let w = write_test(&[t], &dev);
        // write 6/100, encoding 10/480, GC 30/200 (⌊12/5⌋ = 2 periods), blocking 5/100: the
        // read period (1 ms) does not count.
        assert!(close(w.term("write"), 0.06));
        assert!(close(w.term("encoding"), 10.0 / 480.0));
        assert!(close(w.term("GC"), 0.15));
        assert!(close(w.term("blocking"), 0.05));
        // A GC period shorter than the write period sets the blocking: w = 25, T^g = T^w/3.
        let heavy = TaskSpec::writer(25, ms(300.0)).unwrap();
        assert!(close(
            write_test(&[heavy], &dev).term("blocking"),
            5.0 / 100.0
        ));
    }

    #[test]
    fn admission_needs_both_tests() {
        let dev = small();
        let reads_too_much = TaskSpec::reader(10, ms(10.0)).unwrap();
        assert_eq!(
            admission(&[reads_too_much], &dev).unwrap_err().name,
            "read set"
        );
        let writes_too_much = TaskSpec::writer(12, ms(20.0)).unwrap();
        assert_eq!(
            admission(&[writes_too_much], &dev).unwrap_err().name,
            "write set"
        );
        assert!(admission(&[TaskSpec::new(1, ms(10.0), 1, ms(100.0)).unwrap()], &dev).is_ok());
    }

    #[test]
    fn eq8_and_eq11_charge_a_rebuild() {
        let dev = small();
        assert!(close(read_latency_bound_ns(&dev), ms(1.5)));
        assert!(close(min_read_bandwidth_pages_per_s(&dev), 1000.0 / 1.5));
    }

    #[test]
    fn eq10_is_76_mib_per_s() {
        let dev = FlashParams::part_ftl();
        let mib = dev.mib_per_s(max_read_bandwidth_pages_per_s(&dev));
        // 12 pages / 1.23 ms · 8 KiB = 76.2 MiB/s ("76 MB/s").
        assert!((mib - 76.2).abs() < 0.05, "{mib}");
    }

    #[test]
    fn eq9_gives_7_3_mb_per_s_only_with_b_v_of_lambda_0_518() {
        // The paper: 7.3 MB/s with k = 12, |F_w| = 4 and Table IV (t'_r = 0.375, t_w = 1.33,
        // t_e = 3.84 ms). λ = 0.643 gives 5.25 MiB/s; the candidates are in the docs.
        let stated = FlashParams::part_ftl();
        let mib = stated.mib_per_s(write_bandwidth_pages_per_s(&stated));
        assert!((mib - 5.25).abs() < 0.01, "λ = 0.643: {mib}");
        let evaluated = FlashParams::part_ftl_as_evaluated();
        let mib = evaluated.mib_per_s(write_bandwidth_pages_per_s(&evaluated));
        assert!((mib - 7.3).abs() < 0.05, "λ = 0.518: {mib}");
        // By hand: 12·123 pages / (4·[133·1.705 + 3.84 + 123·1.33] ms).
        let by_hand = 12.0 * 123.0 / (4.0 * (133.0 * 1.705 + 3.84 + 123.0 * 1.33)) * 1e3;
        assert!((write_bandwidth_pages_per_s(&evaluated) - by_hand).abs() < 1e-6);
    }
}
