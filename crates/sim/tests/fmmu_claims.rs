//! fmmu.txt section 5.3's statements about Fig. 11 and 12 (synthetic workloads), checked on
//! the study's quick device (fmmu-16ch with 32 pages x 32 blocks per plane, the map cache
//! scaled with the capacity; docs/fmmu.md lists every claim with the full study's figures).
//! One study run serves every test: sequential 64 KiB writes and reads and random 4 KiB
//! reads, each after a sequential fill and an idle pause, for the ideal (FMMU's caches at
//! zero FTL time), DFTL and CDFTL on 1 and 4 cores, and FMMU. Random writes need a steady
//! state (minutes) and are left to the study itself. Fig. 14's top point (FMMU at 32 x 8) has
//! a run of its own.

use std::sync::OnceLock;

use flashlab_sim::experiment::fmmu_study::{FmmuPoint, FmmuStudy};

fn points() -> &'static [FmmuPoint] {
    static POINTS: OnceLock<Vec<FmmuPoint>> = OnceLock::new();
    POINTS.get_or_init(|| {
        let study = FmmuStudy {
            parts: vec!["synthetic".into()],
            schemes: [
                "ideal", "dftl-1c", "dftl-4c", "cdftl-1c", "cdftl-4c", "fmmu",
            ]
            .map(String::from)
            .to_vec(),
            synthetic: ["seq-write-64k", "seq-read-64k", "rand-read-4k"]
                .map(String::from)
                .to_vec(),
            seeds: vec![1],
            // Before any GC: the closed forms below have none (the study itself warms the
            // sequential writes up past the spare space).
            seq_write_warmup: 0,
            ..FmmuStudy::quick()
        };
        study
            .run(&mut |_, _, _| {})
            .unwrap_or_else(|e| panic!("{e}"))
    })
}

fn point(scheme: &str, workload: &str) -> &'static FmmuPoint {
    points()
        .iter()
        .find(|p| p.scheme == scheme && p.workload == workload)
        .unwrap_or_else(|| panic!("no {scheme} {workload} point"))
}

/// The point's result in its unit (bytes/s for sequential, IOPS for random).
fn result(p: &FmmuPoint) -> f64 {
    if p.workload.starts_with("seq") {
        p.bytes_per_s
    } else {
        p.iops
    }
}

fn share_of_ideal(scheme: &str, workload: &str) -> f64 {
    result(point(scheme, workload)) / result(point("ideal", workload))
}

/// "The ideal performance is about 5.5GB/s, which is limited by NAND chip performance"
/// (sequential write); "about 9.2GB/s, which is limited by NAND bus bandwidth" (sequential
/// read); random read "limited by NAND bus bandwidth". Here: within reach of the closed
/// forms, with the named resource the busiest.
#[test]
fn the_ideal_is_bound_by_chips_for_writes_and_by_the_bus_for_reads() {
    let write = point("ideal", "seq-write-64k");
    assert!(
        write.bytes_per_s > 0.85 * write.closed_form.unwrap(),
        "{write:?}"
    );
    assert!(
        write.chips > 0.9 && write.chips > write.nand_bus,
        "{write:?}"
    );
    // The quick window's first half runs about 17% below its second (docs/fmmu.md: the study
    // calls this figure "not stationary" at quick size); the bus limit is what the second
    // half reaches.
    let read = point("ideal", "seq-read-64k");
    let (_, second) = read.halves.expect("a synthetic point has halves");
    assert!(second > 0.95 * read.closed_form.unwrap(), "{read:?}");
    assert!(read.nand_bus > 0.9, "{read:?}");
    let random = point("ideal", "rand-read-4k");
    assert!(
        random.iops > 0.6 * random.closed_form.unwrap(),
        "{random:?}"
    );
    assert!(random.nand_bus > random.chips, "{random:?}");
}

/// "FMMU shows the performance close to the ideal performance" (sequential write), "close to
/// ideal performance due to CTP and hardware-automation" (sequential read), "allows to
/// achieve the ideal performance, while the FTL utilization is only about 17%" (random read).
#[test]
fn fmmu_is_close_to_the_ideal() {
    assert!(share_of_ideal("fmmu", "seq-write-64k") > 0.85);
    assert!(share_of_ideal("fmmu", "seq-read-64k") > 0.9);
    assert!(share_of_ideal("fmmu", "rand-read-4k") > 0.9);
    let utilisation = point("fmmu", "rand-read-4k").map_unit;
    assert!(
        (0.05..0.35).contains(&utilisation),
        "map unit {utilisation}"
    );
}

/// Random 4 KiB reads cost one Lookup each, so the software map caches are bound by the FTL
/// on one core and gain with cores: "DFTL and CDFTL approach the ideal performance by
/// reducing FTL execution time with 4-core".
#[test]
fn software_map_caches_are_ftl_bound_on_random_reads_and_gain_with_cores() {
    let workload = "rand-read-4k";
    for ftl in ["dftl", "cdftl"] {
        let one = point(&format!("{ftl}-1c"), workload);
        let four = point(&format!("{ftl}-4c"), workload);
        assert!(one.ftl_cpu > 0.95, "{one:?}");
        assert!(result(four) > 2.5 * result(one), "{one:?} {four:?}");
        assert!(result(four) < result(point("fmmu", workload)), "{four:?}");
        assert!(share_of_ideal(&format!("{ftl}-4c"), workload) > 0.6);
    }
}

/// A 64 KiB request is one Lookup or Update of 16 LPNs on one CMT block (fmmu.txt 4.1 and
/// Fig. 6), so CDFTL's sequential write is not bound by its cores and gains nothing from
/// more of them: the paper's "the sequential write performance increases as the number of
/// cores changes from one to four since FTL execution time acts as a bottleneck" needs more
/// FTL work per request than Fig. 10's text gives (docs/fmmu.md). Charged per 4 KiB unit, as
/// before issue 28, the same run is FTL-bound on one core.
#[test]
fn one_map_request_per_64k_request_leaves_cdftl_sequential_write_to_the_chips() {
    let one = point("cdftl-1c", "seq-write-64k");
    let four = point("cdftl-4c", "seq-write-64k");
    assert!(one.ftl_cpu < 0.5, "{one:?}");
    assert!(one.chips > 0.8, "{one:?}");
    assert!(
        (result(four) / result(one) - 1.0).abs() < 0.05,
        "{one:?} {four:?}"
    );
}

/// Sequential read: DFTL "has lower performance than CDFTL with 4-core. Because DTL
/// experiences reading the same translation page multiple times since it does not have a
/// CTP that exploits the spatial locality." Without a CTP or MSHRs, each 64 KiB read's block
/// reads its translation page. (The 1-core order the paper also states is not reproduced:
/// docs/fmmu.md.)
#[test]
fn dftl_rereads_translation_pages_in_sequential_reads() {
    let dftl = point("dftl-4c", "seq-read-64k");
    let cdftl = point("cdftl-4c", "seq-read-64k");
    assert!(dftl.bytes_per_s < cdftl.bytes_per_s, "{dftl:?} {cdftl:?}");
    assert!(
        dftl.translation_reads_per_op > 10.0 * cdftl.translation_reads_per_op,
        "{dftl:?} {cdftl:?}"
    );
}

/// Fig. 14 (5.4): "SSD with FMMU exhibits about 4.3 MIOPS performance under PCIe 3.0 x32 host
/// interface and 32-channel, 8-way NAND configuration. This performance is limited by the
/// 32-channel NAND bus bandwidth", for 4 KiB random reads "in map cache case". Here at 32 x 8
/// on the quick device with enough requests to fill the pipeline: the reads hit the map
/// cache, the bus is the busiest resource and the result is within reach of its closed form
/// (the full study: 4.33 MIOPS, 83%, as pagemap's 4.35).
#[test]
fn fmmu_at_32_channels_8_ways_is_bound_by_the_nand_bus() {
    let study = FmmuStudy {
        parts: vec!["scaling".into()],
        scaling: vec![(32, 8)],
        requests: 40_000,
        seeds: vec![1],
        ..FmmuStudy::quick()
    };
    let points = study.run(&mut |_, _, _| {}).unwrap();
    let p = &points[0];
    assert_eq!((p.scheme, p.channels, p.ways), ("fmmu", 32, 8));
    let share = p.iops / p.closed_form.unwrap();
    assert!(
        p.translation_reads_per_op < 0.01,
        "reads in map cache case: {p:?}"
    );
    assert!(
        share > 0.75,
        "{:.0}% of the bus limit: {p:?}",
        share * 100.0
    );
    assert!(
        p.nand_bus > p.chips && p.nand_bus > p.host_link && p.nand_bus > p.map_unit,
        "the bus is the bottleneck: {p:?}"
    );
    assert!(p.iops > 3.5e6, "{p:?}");
}
