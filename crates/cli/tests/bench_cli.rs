//! Integration tests of `flashlab bench`: every section's lines in the JSON with their keys
//! and sane values, the tables, section selection, and clear errors for bad options. Every
//! line is tiny (a few hundred requests, small devices), so the file takes seconds.

mod common;

use std::path::{Path, PathBuf};

use common::{assert_bad_input, flashlab, path_str, read_json, scratch};
use serde_json::Value;

/// A small reference device: 4 GiB with 25% over-provisioning, preconditioned to 20%.
const SMALL: &[&str] = &[
    "--precondition",
    "0.2",
    "--set",
    "geometry.blocks_per_plane=16",
    "--set",
    "ftl.over_provisioning=0.25",
];

fn traces() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces")
}

fn text<'a>(m: &'a Value, key: &str) -> &'a str {
    m[key]
        .as_str()
        .unwrap_or_else(|| panic!("no text `{key}`: {m}"))
}

fn number(m: &Value, key: &str) -> f64 {
    m[key]
        .as_f64()
        .unwrap_or_else(|| panic!("no number `{key}`: {m}"))
}

#[test]
fn bench_bad_input() {
    assert_bad_input(
        &flashlab(&["bench", "--set", "geometry.channels=0"]),
        &["geometry.channels", "1 ..= 256"],
    );
    assert_bad_input(
        &flashlab(&["bench", "--sections", "reference,speed"]),
        &["--sections", "speed", "reference", "scaling"],
    );
    assert_bad_input(
        &flashlab(&["bench", "--sections", "scaling", "--scaling-gib", "4,0"]),
        &["--scaling-gib", "`0`", "whole GiB from 1"],
    );
    assert_bad_input(
        &flashlab(&["bench", "--sections", "scaling", "--scaling-gib", "4,x"]),
        &["--scaling-gib", "`x`"],
    );
    assert_bad_input(
        &flashlab(&["bench", "--scaling-gib", "4"]),
        &["--scaling-gib", "scaling section is not selected"],
    );
    assert_bad_input(
        &flashlab(&[
            "bench",
            "--sections",
            "scaling",
            "--scaling-gib",
            "3",
            "--set",
            "geometry.page_bytes=16384",
            "--set",
            "geometry.pages_per_block=1024",
        ]),
        &["--scaling-gib 3", "one block per plane (2048 MiB)"],
    );
    assert_bad_input(
        &flashlab(&["bench", "--ftl-requests", "lots"]),
        &["--ftl-requests", "lots"],
    );
}

/// The reference and ftls sections: the reference lines, then a line per registered FTL on
/// its paper's device (block-level, map-cache with pagemap's baseline, the others), in order.
#[test]
fn bench_writes_json_figures() {
    let dir = scratch("bench");
    let file = dir.join("bench.json");
    let r = flashlab(
        &[
            &[
                "bench",
                "--sections",
                "reference,ftls",
                "--requests",
                "2000",
                "--block-ftl-requests",
                "1500",
                "--map-cache-requests",
                "1000",
                "--ftl-requests",
                "300",
                "--json",
                path_str(&file),
            ],
            SMALL,
        ]
        .concat(),
    );
    r.assert_success();
    let figures = read_json(&file);
    let lines = figures.as_array().expect("an array of lines");
    let names: Vec<(&str, &str, &str, &str)> = lines
        .iter()
        .map(|m| {
            let t = |k| text(m, k);
            (t("section"), t("ftl"), t("device"), t("mode"))
        })
        .collect();
    let mut expected = Vec::new();
    let mut both = |section, ftl, device| {
        expected.push((section, ftl, device, "timed"));
        expected.push((section, ftl, device, "functional"));
    };
    both("reference", "pagemap", "default");
    for (ftl, device) in [
        ("nftl", "nftl-samsung"),
        ("bast", "kast-slc"),
        ("fast", "kast-slc"),
        ("sast", "kast-slc"),
        ("kast", "kast-slc"),
    ] {
        both("ftls", ftl, device);
    }
    for ftl in ["pagemap", "dftl", "dftl-entry", "cdftl", "fmmu"] {
        both("ftls", ftl, "default");
    }
    for (ftl, device) in [
        ("mt-ftl", "mt-board"),
        ("st-ftl", "mt-board"),
        ("part-ftl", "cosmos"),
        ("wao-gc", "cosmos"),
        ("rtgc", "cosmos"),
    ] {
        both("ftls", ftl, device);
    }
    assert_eq!(names, expected);
    // Every registered FTL has a line of the ftls section.
    for entry in flashlab_sim::ftl::registry::entries() {
        assert!(
            names.iter().any(|n| n.0 == "ftls" && n.1 == entry.name),
            "no bench line for {}",
            entry.name
        );
    }
    for (i, m) in lines.iter().enumerate() {
        let requests = match i {
            0..=1 => 2000,
            2..=11 => 1500,
            12..=21 => 1000,
            _ => 300,
        };
        assert_eq!(m["requests"], requests, "{m}");
        assert!(number(m, "requests_per_s") > 0.0, "{m}");
        assert!(number(m, "state_mib") > 0.0, "{m}");
        assert!(number(m, "write_amplification") > 0.0, "{m}");
        assert!(m["precondition"]["fill_units"].as_u64().unwrap() > 0, "{m}");
        if (2..12).contains(&i) {
            assert!(m["merges"].as_u64().unwrap() > 0, "no merge measured: {m}");
        } else {
            assert!(m["merges"].is_null(), "{} does not merge: {m}", m["ftl"]);
        }
    }
    assert!(number(&lines[0], "simulated_s") > 0.0);
    let paper = &lines[22..];
    for m in paper {
        let workload = text(m, "workload");
        let periodic = ["part-ftl", "wao-gc", "rtgc"].contains(&text(m, "ftl"));
        assert_eq!(workload == "Table III", periodic, "{m}");
    }
    // mt-ftl runs its firmware on the simulated kernel: it switches tasks.
    assert!(paper[0]["rtos"]["context_switches"].as_u64().unwrap() > 0);
    assert!(
        r.stdout.contains("x pagemap") && r.stdout.contains("\ndftl "),
        "{}",
        r.stdout
    );
    for ftl in ["nftl", "bast", "fast", "sast", "kast", "mt-ftl", "rtgc"] {
        assert!(
            r.stdout.contains(&format!("\n{ftl} ")),
            "no {ftl} line:\n{}",
            r.stdout
        );
    }
    assert!(!r.stdout.contains("trace replay"), "{}", r.stdout);
}

#[test]
fn bench_without_block_ftl_lines() {
    let r = flashlab(
        &[
            &[
                "bench",
                "--sections",
                "reference,ftls",
                "--requests",
                "500",
                "--mode",
                "functional",
                "--block-ftl-requests",
                "0",
                "--map-cache-requests",
                "0",
                "--ftl-requests",
                "0",
                "--json",
                "-",
            ],
            SMALL,
        ]
        .concat(),
    );
    r.assert_success();
    let lines: Value = serde_json::from_str(&r.stdout).expect("JSON on stdout");
    assert_eq!(lines.as_array().map(Vec::len), Some(1), "{lines}");
    assert!(!r.stderr.contains("block-level FTLs"), "{}", r.stderr);
    assert!(!r.stderr.contains("map-cache FTLs"), "{}", r.stderr);
    assert!(!r.stderr.contains("papers' devices"), "{}", r.stderr);
}

/// The rtos, trace, precondition and scaling sections, timed only, on tiny runs.
#[test]
fn bench_sections_carry_their_figures() {
    let r = flashlab(
        &[
            &[
                "bench",
                "--sections",
                "rtos,trace,precondition,scaling",
                "--mode",
                "timed",
                "--requests",
                "400",
                "--ftl-requests",
                "200",
                "--scaling-gib",
                "1,2",
                "--trace-dir",
                path_str(&traces()),
                "--json",
                "-",
            ],
            SMALL,
        ]
        .concat(),
    );
    r.assert_success();
    let lines: Value = serde_json::from_str(&r.stdout).expect("JSON on stdout");
    let lines = lines.as_array().expect("an array of lines");
    let sections: Vec<&str> = lines.iter().map(|m| text(m, "section")).collect();
    assert_eq!(
        sections,
        [
            "rtos",
            "trace",
            "trace",
            "precondition",
            "precondition",
            "precondition",
            "precondition",
            "precondition",
            "scaling",
            "scaling"
        ]
    );
    let (rtos, traces, pre, scaling) = (&lines[0], &lines[1..3], &lines[3], &lines[8..]);
    // Pagemap, then each demand-paged FTL with its rate against pagemap's.
    let ftls: Vec<&str> = lines[3..8].iter().map(|m| text(m, "ftl")).collect();
    assert_eq!(ftls, ["pagemap", "dftl", "dftl-entry", "cdftl", "fmmu"]);
    assert!(pre["precondition"].get("x_pagemap").is_none(), "{pre}");
    for m in &lines[4..8] {
        let x = number(&m["precondition"], "x_pagemap");
        let want =
            number(&pre["precondition"], "units_per_s") / number(&m["precondition"], "units_per_s");
        assert!((x / want - 1.0).abs() < 1e-9, "{m}");
    }

    assert_eq!(
        (text(rtos, "ftl"), text(rtos, "device")),
        ("mt-ftl", "mt-board")
    );
    assert_eq!(rtos["requests"], 200, "{rtos}");
    assert!(text(rtos, "workload").starts_with("desktop:"), "{rtos}");
    let switches = number(&rtos["rtos"], "context_switches_per_request");
    assert!((1.0..1000.0).contains(&switches), "{rtos}");
    let busy = number(&rtos["rtos"], "cpu_utilisation");
    assert!(busy > 0.0 && busy <= 1.0, "{rtos}");

    // The MQSim traces, every request replayed.
    let names: Vec<(&str, u64)> = traces
        .iter()
        .map(|m| (text(m, "workload"), m["requests"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        names,
        [
            ("mqsim_tpcc-small.trace", 6999),
            ("mqsim_wsrch-small.trace", 24783)
        ]
    );
    for m in traces {
        assert!(number(m, "requests_per_s") > 0.0, "{m}");
        assert!(number(m, "simulated_s") > 0.0, "{m}");
    }
    // Closed loop: the 60 s of WebSearch arrivals take a fraction of a second of device time.
    assert!(number(&traces[1], "simulated_s") < 1.0, "{}", traces[1]);

    // Preconditioning alone: 20% of the logical units filled, random overwrites, no requests.
    let p = &pre["precondition"];
    let logical_units = (16.0 * 8.0 * 4.0 * 2.0 * 2.0 * 512.0 * 0.75) as u64;
    let fill = p["fill_units"].as_u64().unwrap();
    assert!(fill.abs_diff(logical_units / 5) <= 256, "{pre}");
    let total =
        fill + p["random_writes"].as_u64().unwrap() + p["idle_gc_units_moved"].as_u64().unwrap();
    assert_eq!(p["units_written"], total, "{pre}");
    assert!(p["random_writes"].as_u64().unwrap() >= fill, "{pre}");
    let per_s = number(p, "units_per_s");
    let expected_per_s = total as f64 / number(pre, "precondition_s");
    assert!((per_s / expected_per_s - 1.0).abs() < 1e-9, "{pre}");
    assert_eq!(pre["requests"], 0, "{pre}");

    // Scaling: 1 and 2 GiB, the cost per request against the first, memory per GiB.
    for (m, gib, blocks) in [(&scaling[0], 1, 4), (&scaling[1], 2, 8)] {
        let s = &m["scaling"];
        assert_eq!(
            (s["device_gib"].as_u64(), s["blocks_per_plane"].as_u64()),
            (Some(gib), Some(blocks)),
            "{m}"
        );
        assert_eq!(s["ratio_base_gib"], 1, "{m}");
        assert_eq!(m["requests"], 400, "{m}");
        let rss = number(m, "peak_rss_mib");
        assert!(
            (number(s, "peak_rss_mib_per_gib") - rss / gib as f64).abs() < 1e-9,
            "{m}"
        );
        assert!(
            (number(s, "state_mib_per_gib") * gib as f64 - number(m, "state_mib")).abs() < 1e-9
        );
    }
    assert_eq!(
        number(&scaling[0]["scaling"], "cost_per_request_ratio"),
        1.0
    );
    let ratio = number(&scaling[1]["scaling"], "cost_per_request_ratio");
    let expected = number(&scaling[0], "requests_per_s") / number(&scaling[1], "requests_per_s");
    assert!((ratio / expected - 1.0).abs() < 1e-9, "{ratio} {expected}");
    // The device state doubles with the size (per GiB within 5%).
    let state = |m: &Value| number(&m["scaling"], "state_mib_per_gib");
    assert!((state(&scaling[1]) / state(&scaling[0]) - 1.0).abs() < 0.05);
    // Over-provisioning keeps the spare beyond 3 blocks per die in use.
    let op = |m: &Value| number(&m["scaling"], "over_provisioning");
    assert!((op(&scaling[0]) - op(&scaling[1]) - (3.0 / 8.0 - 3.0 / 16.0)).abs() < 1e-3);
    for title in [
        "mt-ftl RTOS path",
        "trace replay",
        "preconditioning `default`",
        "scaling:",
    ] {
        assert!(r.stderr.contains(title), "no `{title}`:\n{}", r.stderr);
    }
}

/// A periodic workload replaces the random writes of the reference lines: its open-loop jobs
/// until its count, from `--workload` or `[[workload.tasks]]` in `--config`, with the
/// simulated request rate; the random-write options are refused with it.
#[test]
fn bench_runs_a_periodic_workload() {
    let small = [
        "--precondition",
        "0.2",
        "--set",
        "geometry.blocks_per_plane=16",
        "--set",
        "ftl.over_provisioning=0.25",
        "--json",
        "-",
    ];
    let dir = scratch("bench-periodic");
    let file = dir.join("tasks.toml");
    std::fs::write(
        &file,
        "[workload]\npattern = \"periodic\"\ncount = 40\n[[workload.tasks]]\nop = \"write\"\npages = 2\nperiod_ns = 1_000_000\ncount = 2\n[[workload.tasks]]\nop = \"read\"\npages = 1\nperiod_ns = 500_000\n",
    )
    .unwrap();
    let spec = flashlab(
        &[
            &[
                "bench",
                "--workload",
                "periodic:tasks=2xw2p@1ms+r1p@500us,count=40",
            ],
            &small[..],
        ]
        .concat(),
    );
    let toml = flashlab(&[&["bench", "--config", path_str(&file)], &small[..]].concat());
    for r in [&spec, &toml] {
        r.assert_success();
        let lines: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON on stdout");
        let lines = lines.as_array().expect("an array of lines");
        assert_eq!(lines.len(), 2, "timed and functional only: {lines:?}");
        for m in lines {
            assert_eq!(m["requests"], 40, "{m}");
            // 40 jobs, 4 per ms: the last released at 9.5 ms, done within 1.5 ms.
            let simulated_s = m["simulated_s"].as_f64().unwrap();
            assert!((0.0095..0.011).contains(&simulated_s), "{m}");
        }
        assert!(
            r.stderr.contains("periodic workload of 3 tasks")
                && r.stderr.contains("timed: 40 requests in 0.01")
                && !r.stderr.contains("random writes")
                && !r.stderr.contains("map-cache FTLs"),
            "{}",
            r.stderr
        );
    }
    assert_bad_input(
        &flashlab(&["bench", "--workload", "periodic:tasks=w1p@1ms", "--qd", "4"]),
        &["--qd", "periodic"],
    );
    assert_bad_input(
        &flashlab(&[
            "bench",
            "--workload",
            "periodic:tasks=w1p@1ms",
            "--sections",
            "reference,trace",
        ]),
        &[
            "--sections trace",
            "periodic workload runs the reference lines only",
        ],
    );
    assert_bad_input(
        &flashlab(&["bench", "--workload", "randread:count=5"]),
        &["--workload", "periodic"],
    );
    assert_bad_input(
        &flashlab(&["bench", "--set", "trace.path=\"t.csv\""]),
        &[
            "trace.path",
            "bench replays its sample traces (or those of --trace-dir)",
        ],
    );
}
