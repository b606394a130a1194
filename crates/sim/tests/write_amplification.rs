//! Write amplification of uniform random single-page overwrites at steady state against the
//! closed form for FIFO victim selection (Desnoyers, "Analytic models of SSD write
//! performance", 2012; Hu et al. 2009):
//!
//! A = a / (a + W0(-a e^-a)),  a = physical pages / logical pages = 1 / (1 - over_provisioning)
//!
//! with W0 the principal branch of the Lambert W function. The device has one die and one plane
//! with 2048 blocks, so the blocks pagemap keeps out of circulation (the open host and GC
//! blocks and a one-block free reserve, about 0.15% of the device) barely change a. The model
//! meets the closed form within 0.7%; the test allows 1%.
//!
//! Greedy has no closed form, but theory orders it: with finitely many pages per block, the
//! block with the fewest valid pages beats the oldest one, which is what FIFO takes (in the
//! fluid limit of infinitely many pages per block both pick the same block and coincide), and
//! the advantage grows with utilisation (Bux and Iliadis 2010; Van Houdt 2013). With 64 pages
//! per block the model gives greedy 2%, 3% and 7% below FIFO at 0.7, 0.8 and 0.9.

use flashlab_sim::{run_experiment, ExperimentConfig, Report};

const BLOCKS: u32 = 2048;
const PAGES_PER_BLOCK: u32 = 64;
/// Measured random overwrites, in multiples of the logical space.
const MEASURED_PASSES: u64 = 4;

fn theory(logical_over_physical: f64) -> f64 {
    let a = 1.0 / logical_over_physical;
    a / (a + lambert_w::lambert_w0(-a * (-a).exp()))
}

/// Steady-state write amplification of 4 KiB uniform random overwrites with `policy`.
fn measure(policy: &str, logical_over_physical: f64) -> Report {
    let logical_pages =
        (f64::from(BLOCKS * PAGES_PER_BLOCK) * logical_over_physical).floor() as u64;
    let sets = [
        "geometry.channels=1".to_string(),
        "geometry.chips_per_channel=1".into(),
        "geometry.dies_per_chip=1".into(),
        "geometry.planes_per_die=1".into(),
        format!("geometry.blocks_per_plane={BLOCKS}"),
        format!("geometry.pages_per_block={PAGES_PER_BLOCK}"),
        "geometry.page_bytes=4096".into(),
        "ftl.mapping_unit_bytes=4096".into(),
        format!("ftl.over_provisioning={}", 1.0 - logical_over_physical),
        format!("ftl.gc_victim=\"{policy}\""),
        "ftl.gc_foreground_free_blocks=1".into(),
        "ftl.gc_background_free_blocks=1".into(),
        "run.functional_only=true".into(),
        "run.precondition=1.0".into(),
        "run.precondition_max_passes=10".into(),
        "workload.pattern=\"uniform\"".into(),
        "workload.read_fraction=0.0".into(),
        "workload.block_size=4096".into(),
        "workload.align_bytes=4096".into(),
        "workload.queue_depth=1".into(),
        format!("workload.count={}", MEASURED_PASSES * logical_pages),
    ];
    let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
    let config = ExperimentConfig::with_sets("default", &sets).unwrap();
    let t = std::time::Instant::now();
    let report = run_experiment(&config, &mut |_| {}).unwrap();
    let pre = report.precondition.as_ref().expect("preconditioned");
    let wa = report
        .write_amplification
        .expect("the measured window wrote enough");
    eprintln!(
        "{policy:>6} logical/physical {logical_over_physical}: WA {:.4} (theory for FIFO {:.4}, ratio {:.4}); \
         precondition {:.2} passes, steady {}, last window WA {:.4}; {} GC runs; {:?}; {}",
        wa,
        theory(logical_over_physical),
        wa / theory(logical_over_physical),
        pre.random_passes,
        pre.steady,
        pre.write_amplification,
        report.gc.gc_runs,
        t.elapsed(),
        report.ftl_details["spare_blocks_per_die"],
    );
    assert_eq!(report.device.logical_bytes, logical_pages * 4096);
    assert_eq!(report.host.write.count, MEASURED_PASSES * logical_pages);
    assert!(
        pre.steady,
        "preconditioning did not reach steady state: {pre:?}"
    );
    assert!(report.gc.gc_runs > 0, "no GC in the measured window");
    report
}

/// Measured steady-state write amplification of `policy`.
fn wa(policy: &str, logical_over_physical: f64) -> f64 {
    measure(policy, logical_over_physical)
        .write_amplification
        .expect("the measured window wrote enough")
}

fn fifo_matches_theory(logical_over_physical: f64) {
    let measured = wa("fifo", logical_over_physical);
    let expected = theory(logical_over_physical);
    let error = measured / expected - 1.0;
    assert!(
        error.abs() <= 0.01,
        "FIFO WA {measured:.4} vs closed form {expected:.4} at logical/physical {logical_over_physical}: \
         {:+.2}% (allowed: 1%)",
        100.0 * error
    );
}

/// Greedy's write amplification below FIFO's, as a fraction of FIFO's.
fn greedy_advantage(logical_over_physical: f64) -> f64 {
    let fifo = wa("fifo", logical_over_physical);
    let greedy = wa("greedy", logical_over_physical);
    eprintln!("logical/physical {logical_over_physical}: FIFO {fifo:.4}, greedy {greedy:.4}");
    1.0 - greedy / fifo
}

#[test]
fn closed_form_values() {
    // Values of the closed form quoted in the literature (Desnoyers 2012, Table 2 style):
    // a = 1/0.9 gives about 5.18, a = 1.25 about 2.69, a = 1/0.7 about 1.88.
    assert!((theory(0.9) - 5.18).abs() < 0.01, "{}", theory(0.9));
    assert!((theory(0.8) - 2.69).abs() < 0.01, "{}", theory(0.8));
    assert!((theory(0.7) - 1.876).abs() < 0.01, "{}", theory(0.7));
}

#[test]
fn fifo_wa_matches_lambert_w_at_0_7() {
    fifo_matches_theory(0.7);
}

#[test]
fn fifo_wa_matches_lambert_w_at_0_8() {
    fifo_matches_theory(0.8);
}

#[test]
fn fifo_wa_matches_lambert_w_at_0_9() {
    fifo_matches_theory(0.9);
}

#[test]
fn greedy_beats_fifo_more_as_utilisation_grows() {
    let gaps: Vec<f64> = [0.7, 0.8, 0.9].map(greedy_advantage).to_vec();
    for (lop, gap) in [0.7, 0.8, 0.9].iter().zip(&gaps) {
        assert!(
            *gap >= 0.01,
            "greedy only {:.2}% below FIFO at logical/physical {lop}: the policies should differ",
            100.0 * gap
        );
    }
    assert!(
        gaps[0] < gaps[1] && gaps[1] < gaps[2],
        "greedy's advantage over FIFO should grow with utilisation: {gaps:?} at 0.7, 0.8, 0.9"
    );
}
