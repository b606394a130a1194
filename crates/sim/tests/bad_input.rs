//! Bad user input gives an error that names the field and what is allowed, never a panic.
//! (Exit codes of the command line are tested with the CLI.)

use std::panic::{catch_unwind, AssertUnwindSafe};

use flashlab_sim::workload::{parse_spec, SyntheticSource};
use flashlab_sim::{ConfigError, ExperimentConfig, SimError, Simulation};

/// Runs `f`, failing the test with a clear message if it panics.
fn no_panic<T>(what: &str, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|_| panic!("{what}: panicked instead of returning an error"))
}

/// The error of loading the default preset with `sets`.
fn config_error(sets: &[&str]) -> String {
    let what = format!("--set {sets:?}");
    let err = no_panic(&what, || ExperimentConfig::with_sets("default", sets))
        .map(|_| ())
        .expect_err(&what);
    err.to_string()
}

fn workload_error(spec: &str) -> String {
    no_panic(spec, || parse_spec(spec))
        .map(|_| ())
        .expect_err(spec)
        .to_string()
}

/// Asserts that `msg` is one line containing every one of `parts`.
fn assert_mentions(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(
            msg.contains(p),
            "error message does not mention `{p}`:\n{msg}"
        );
    }
    assert!(!msg.contains('\n'), "error message is not one line:\n{msg}");
}

/// The `lo ..= hi` after "allowed: " in a message, as numbers.
fn allowed_range(msg: &str) -> Option<(f64, f64)> {
    let rest = &msg[msg.find("allowed: ")? + "allowed: ".len()..];
    let (lo, rest) = rest.split_once(" ..= ")?;
    let hi: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    Some((lo.trim().parse().ok()?, hi.parse().ok()?))
}

#[test]
fn zero_channels() {
    let msg = config_error(&["geometry.channels=0"]);
    assert_mentions(&msg, &["geometry.channels", "0", "1 ..= 256"]);
}

#[test]
fn negative_bus_bandwidth() {
    let msg = config_error(&["timing.bus_mb_per_s=-1"]);
    assert_mentions(&msg, &["timing.bus_mb_per_s", "-1", "0.001 ..= 1000000"]);
}

#[test]
fn wrongly_typed_value() {
    let msg = config_error(&["geometry.channels=many"]);
    assert_mentions(&msg, &["geometry.channels"]);
}

#[test]
fn unknown_config_key() {
    let msg = config_error(&["ftl.bogus=1"]);
    assert_mentions(&msg, &["ftl.bogus", "over_provisioning"]);
}

#[test]
fn broken_config_built_in_code_is_rejected_by_the_simulation() {
    let mut cfg = ExperimentConfig::default();
    cfg.geometry.channels = 0;
    let err = no_panic("Simulation::new", || Simulation::new(&cfg).err()).expect("an error");
    assert!(err.is_input_error(), "{err:?}");
    assert!(
        matches!(err, SimError::Config(ConfigError::OutOfRange { .. })),
        "{err:?}"
    );
    assert_mentions(&err.to_string(), &["geometry.channels", "1 ..= 256"]);
}

#[test]
fn unknown_preset() {
    let err = no_panic("preset", || ExperimentConfig::with_sets("nope", &[]))
        .expect_err("unknown preset");
    assert!(matches!(err, ConfigError::Unknown { .. }), "{err:?}");
    assert_mentions(
        &err.to_string(),
        &["preset", "`nope`", "default", "cosmos", "kast-mlc"],
    );
}

#[test]
fn unknown_ftl() {
    for set in ["ftl.name=\"nope\"", "ftl.name=nope"] {
        let msg = config_error(&[set]);
        // The `[ftl] name` field is named as "FTL", with the FTLs that exist.
        assert_mentions(&msg, &["FTL", "`nope`", "pagemap"]);
    }
}

#[test]
fn unknown_workload_key() {
    let msg = workload_error("randwrite:bogus=1");
    assert_mentions(&msg, &["workload key", "`bogus`", "bs", "qd", "count"]);
    let msg = workload_error("randscribble:bs=4k");
    assert_mentions(&msg, &["workload kind", "`randscribble`", "randwrite"]);
}

#[test]
fn zero_block_size_in_config() {
    let msg = config_error(&["workload.block_size=0"]);
    assert_mentions(&msg, &["workload.block_size", "zero", "512 ..= 1 GiB"]);
}

#[test]
fn zero_block_size_in_spec() {
    for spec in ["randwrite:bs=0", "randwrite:bs=0k"] {
        let msg = workload_error(spec);
        assert_mentions(&msg, &["workload.block_size", "zero", "512 ..= 1 GiB"]);
    }
}

#[test]
fn negative_block_size_in_spec() {
    let msg = workload_error("randwrite:bs=-4k");
    // Must name the field, the value given and the allowed sizes.
    assert_mentions(&msg, &["workload.block_size", "-4k", "512 ..= 1 GiB"]);
}

#[test]
fn negative_block_size_in_config() {
    let msg = config_error(&["workload.block_size=-4096"]);
    assert_mentions(&msg, &["workload.block_size", "-4096", "512 ..= 1 GiB"]);
}

#[test]
fn request_larger_than_the_device() {
    let sets = ["geometry.channels=1", "geometry.chips_per_channel=1"];
    let cfg = ExperimentConfig::with_sets("default", &sets).unwrap();
    let w = parse_spec("randwrite:bs=1g").unwrap();
    let logical = no_panic("Simulation::new", || Simulation::new(&cfg))
        .unwrap()
        .logical_bytes();
    let err = no_panic("SyntheticSource::new", || {
        SyntheticSource::new(&w, logical, 1)
    })
    .expect_err("too large");
    assert_mentions(
        &err.to_string(),
        &["workload.block_size", "do not fit", "sizes up to"],
    );
}

#[test]
fn over_provisioning_too_small_for_the_device() {
    let msg = config_error(&["ftl.over_provisioning=0.01"]);
    assert_mentions(
        &msg,
        &["ftl.over_provisioning", "0.01", "too small", "..= 0.95"],
    );
    let (lo, hi) = allowed_range(&msg).unwrap_or_else(|| panic!("no allowed range in: {msg}"));
    assert!(lo > 0.01 && lo <= hi, "{msg}");
    // The lower bound it names is accepted.
    let ok = format!("ftl.over_provisioning={lo}");
    ExperimentConfig::with_sets("default", &[&ok]).unwrap_or_else(|e| panic!("{ok}: {e}"));
}

#[test]
fn device_too_small_for_any_over_provisioning() {
    // 2 blocks per plane x 2 planes: pagemap needs 4 spare blocks per die for its open blocks
    // and reserve, which no over-provisioning of at most 0.95 can give.
    let msg = config_error(&["geometry.blocks_per_plane=2"]);
    assert_mentions(
        &msg,
        &[
            "ftl.over_provisioning",
            "too small",
            "geometry.blocks_per_plane",
        ],
    );
    let (lo, hi) = allowed_range(&msg).unwrap_or_else(|| panic!("no allowed range in: {msg}"));
    assert!(
        lo <= hi,
        "the allowed range named is empty ({lo} ..= {hi}): {msg}"
    );
}

#[test]
fn bad_values_never_panic_the_simulation() {
    // Values that pass their own range checks but not together: each is an error.
    for sets in [
        &["host.sector_bytes=4096", "geometry.page_bytes=2048"][..],
        &["ftl.mapping_unit_bytes=3000"][..],
        &[
            "ftl.gc_foreground_free_blocks=8",
            "ftl.gc_background_free_blocks=2",
        ][..],
        &["ftl.write_buffer_bytes=4096"][..],
        &["geometry.oob_bytes=0"][..],
        &["workload.count=0"][..],
        &["workload.align_bytes=1000"][..],
        &["ftl.over_provisioning=0.96"][..],
    ] {
        let msg = config_error(sets);
        let field = sets[sets.len() - 1].split('=').next().unwrap();
        assert!(
            msg.contains("allowed") || msg.contains(field),
            "{sets:?}: {msg}"
        );
        assert!(!msg.contains('\n'), "{sets:?}: not one line: {msg}");
    }
}
