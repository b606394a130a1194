//! Ideal (zero FTL time) runs on `fmmu-16ch` against the closed forms of
//! `experiment::fmmu` (pagemap with no CPU cost stands in for the demand FTLs' `ideal`):
//! 64 KiB sequential read at the NAND-bus limit, 64 KiB sequential write at the chip limit
//! (single-plane: multi-plane does not fit pagemap's reserve in 16 blocks per plane at 15%
//! over-provisioning), 4 KiB random read at the bus limit. Blocks per plane stay the preset's
//! 16 but pages per block are cut to 32 to keep the sequential fill short; throughput limits
//! do not depend on capacity.

use flashlab_sim::experiment::fmmu::{rand_read, seq_read, seq_write, Bottleneck, Device};
use flashlab_sim::{run_experiment, ExperimentConfig, Report};

/// Runs `workload` after a sequential fill of `fill` of the logical space.
fn run(workload: &str, fill: &str) -> (Report, Device) {
    let fill = format!("run.precondition={fill}");
    let sets = [
        "geometry.pages_per_block=32",
        &fill,
        "run.precondition_max_passes=0",
    ];
    let mut config = ExperimentConfig::with_sets("fmmu-16ch", &sets).unwrap();
    config.workload = flashlab_sim::workload::parse_spec(workload).unwrap();
    config.validate().unwrap();
    let report = run_experiment(&config, &mut |_| {}).unwrap();
    (report, Device::of(&config))
}

fn within(measured: f64, closed: f64, tolerance: f64, what: &str) {
    let ratio = measured / closed;
    assert!(
        (1.0 - ratio).abs() <= tolerance,
        "{what}: measured {measured:.4e}, closed form {closed:.4e} (ratio {ratio:.4})"
    );
}

#[test]
fn sequential_read_is_nand_bus_limited() {
    let (r, d) = run("seqread:bs=64k,qd=512,count=4000", "1.0");
    let limit = seq_read(&d);
    assert_eq!(limit.bottleneck(), Bottleneck::NandBus);
    within(
        r.host.all.mb_per_s * 1e6,
        limit.value(),
        0.02,
        "64 KiB seq read",
    );
    assert!(r.utilisation.channels.mean > 0.97);
}

/// On a fresh device: overwrites of a full one add an erase per block (4 ms per 32 pages
/// here, 1% at the preset's 256 pages per block), which the closed form leaves out.
#[test]
fn sequential_write_is_chip_limited() {
    let (r, d) = run("seqwrite:bs=64k,qd=512,count=4000", "0");
    let limit = seq_write(&d, 1.0);
    assert_eq!(limit.bottleneck(), Bottleneck::Chips);
    within(
        r.host.all.mb_per_s * 1e6,
        limit.value(),
        0.02,
        "64 KiB seq write",
    );
    assert!(r.utilisation.dies.mean > 0.97);
}

/// Dies are picked at random, so some channels idle now and then: the run reaches about 94%
/// of the bus limit with 512 requests outstanding (4 per die); the test allows 10%.
#[test]
fn random_read_is_nand_bus_limited() {
    let (r, d) = run("randread:bs=4k,qd=512,count=20000", "1.0");
    let limit = rand_read(&d, 4096.0, 0.0, 0.0);
    assert_eq!(limit.bottleneck(), Bottleneck::NandBus);
    within(r.host.all.iops, limit.value(), 0.10, "4 KiB random read");
    assert!(r.host.all.iops <= limit.value() * 1.001);
}
