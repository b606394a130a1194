//! Integration tests of `flashlab trace` (stats, convert, formats, bench) and of
//! `flashlab run --trace`, on the real MQSim traces of the repository's `traces/` (read only):
//! TPC-C (6,999 requests, 16 devices, about 136 ms, DiskSim ASCII with nanoseconds) and
//! WebSearch (24,783 requests, 6 devices, about 60 s).

mod common;

use std::path::{Path, PathBuf};

use common::{at, flashlab, path_str, scratch, Outcome};
use serde_json::Value;

fn traces() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces")
}

fn tpcc() -> String {
    real_trace("mqsim_tpcc-small.trace")
}

fn wsrch() -> String {
    real_trace("mqsim_wsrch-small.trace")
}

/// Path of a real trace; it must exist (the traces ship with the repository and CI).
fn real_trace(name: &str) -> String {
    let path = traces().join(name);
    assert!(
        path.is_file(),
        "{} is missing: the real traces must be present",
        path.display()
    );
    path.to_str().expect("UTF-8 trace path").to_string()
}

/// Bad input: exit code 2, no panic, nothing on stdout, an `error: ` line (after any
/// `note:` lines) mentioning every one of `mentions`.
fn assert_bad_input(r: &Outcome, mentions: &[&str]) {
    let ctx = r.context();
    assert!(!r.stderr.contains("panicked"), "panicked\n{ctx}");
    assert_eq!(r.code, Some(2), "exit code of bad input must be 2\n{ctx}");
    assert!(r.stdout.is_empty(), "bad input printed to stdout\n{ctx}");
    let error = r
        .stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("no `error: ` line\n{ctx}"));
    for m in mentions {
        assert!(error.contains(m), "error does not mention `{m}`\n{ctx}");
    }
}

/// Every format name `--trace-format` accepts and `trace formats` lists.
const FORMATS: &[&str] = &[
    "msr",
    "spc",
    "disksim-ms",
    "disksim-ns",
    "blkparse-q",
    "blkparse-d",
    "fio",
    "generic",
];

/// `flashlab run --trace FILE` with `extra` arguments.
fn run_trace(file: &str, extra: &[&str]) -> Outcome {
    let mut args = vec!["run", "--trace", file];
    args.extend_from_slice(extra);
    flashlab(&args)
}

fn u64_at(v: &Value, path: &str) -> u64 {
    at(v, path)
        .as_u64()
        .unwrap_or_else(|| panic!("`{path}` is not an unsigned integer: {}", at(v, path)))
}

/// `trace stats FILE --json - --quiet` (plus `extra`), which must succeed.
fn stats_json(file: &str, extra: &[&str]) -> Value {
    let mut args = vec!["trace", "stats", file, "--json", "-", "--quiet"];
    args.extend_from_slice(extra);
    let r = flashlab(&args);
    r.assert_success();
    r.json()
}

/// What a round trip through other formats must keep.
fn stats_fingerprint(doc: &Value) -> Vec<(String, Value)> {
    [
        "stats.requests",
        "stats.read",
        "stats.write",
        "stats.trim",
        "stats.flush",
        "stats.footprint_bytes",
        "stats.write_footprint_bytes",
        "stats.sequential_fraction",
        "stats.size_buckets",
        "stats.devices",
        "stats.duration_ns",
    ]
    .iter()
    .map(|p| (p.to_string(), at(doc, p).clone()))
    .collect()
}

/// The requests of a DiskSim ASCII file: (time, devno, sector, sectors, flags) per line.
fn disksim_records(path: &Path) -> Vec<[u64; 5]> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Vec<u64> = l
                .split_whitespace()
                .map(|f| f.parse().unwrap_or_else(|e| panic!("{l:?}: {e}")))
                .collect();
            v.try_into()
                .unwrap_or_else(|v| panic!("{l:?}: not 5 fields: {v:?}"))
        })
        .collect()
}

/// The first 10 lines of TPC-C with line 3's sector number replaced by `xyz`; returns the
/// file and the malformed line.
fn malformed_trace(dir: &Path) -> (PathBuf, String) {
    let text = std::fs::read_to_string(tpcc()).expect("read the TPC-C trace");
    let mut lines: Vec<String> = text.lines().take(10).map(str::to_string).collect();
    let mut fields: Vec<&str> = lines[2].split_whitespace().collect();
    fields[2] = "xyz";
    lines[2] = fields.join(" ");
    let path = dir.join("bad.trace");
    std::fs::write(&path, lines.join("\n") + "\n").expect("write the malformed trace");
    (path, lines[2].clone())
}

// ---------------------------------------------------------------------------------------------
// trace stats
// ---------------------------------------------------------------------------------------------

#[test]
fn stats_prints_a_table() {
    let file = tpcc();
    let r = flashlab(&["trace", "stats", &file]);
    r.assert_success();
    let out = &r.stdout;
    for expected in [
        "disksim-ns",
        "6999 lines",
        "requests",
        "6999",
        "136.489 ms",
        "reads",
        "4381",
        "62.6%",
        "writes",
        "2618",
        "footprint",
        "sequential",
        "inter-arrival",
        "devices         16",
        "device 15",
    ] {
        assert!(
            out.contains(expected),
            "table lacks `{expected}`\n{}",
            r.context()
        );
    }
    // The detected format is announced, with the other time unit's name.
    assert!(
        r.stderr.contains("note: trace format: disksim-ns") && r.stderr.contains("disksim-ms"),
        "{}",
        r.context()
    );
}

#[test]
fn stats_json_on_stdout() {
    let file = tpcc();
    let r = flashlab(&["trace", "stats", &file, "--json", "-"]);
    r.assert_success();
    // The table moves to stderr so stdout is JSON alone.
    assert!(r.stderr.contains("inter-arrival"), "{}", r.context());
    let doc = r.json();
    assert_eq!(at(&doc, "schema"), "flashlab.trace-stats/1");
    assert_eq!(at(&doc, "format"), "disksim-ns");
    assert_eq!(at(&doc, "compression"), "none");
    assert_eq!(u64_at(&doc, "lines"), 6999);
    assert_eq!(u64_at(&doc, "bad_lines"), 0);
    assert_eq!(u64_at(&doc, "stats.requests"), 6999);
    assert_eq!(u64_at(&doc, "stats.read.count"), 4381);
    assert_eq!(u64_at(&doc, "stats.write.count"), 2618);
    let fraction = at(&doc, "stats.read_fraction").as_f64().unwrap();
    assert!((fraction - 0.626).abs() < 0.001, "read fraction {fraction}");
    assert_eq!(u64_at(&doc, "stats.duration_ns"), 136_489_000);
    assert_eq!(at(&doc, "stats.devices").as_array().unwrap().len(), 16);
}

#[test]
fn stats_json_to_file_and_table_on_stdout() {
    let dir = scratch("stats-file");
    let out = dir.join("stats.json");
    let file = tpcc();
    let r = flashlab(&["trace", "stats", &file, "--json", path_str(&out)]);
    r.assert_success();
    assert!(r.stdout.contains("inter-arrival"), "{}", r.context());
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc, stats_json(&file, &[]));
}

#[test]
fn stats_of_websearch() {
    let doc = stats_json(&wsrch(), &[]);
    // The last line has no newline; it is a request all the same.
    assert_eq!(u64_at(&doc, "stats.requests"), 24_783);
    let devices: Vec<u64> = at(&doc, "stats.devices")
        .as_array()
        .unwrap()
        .iter()
        .map(|d| u64_at(d, "device"))
        .collect();
    assert_eq!(devices, vec![0, 1, 2, 3, 4, 5]);
    assert!(at(&doc, "stats.read_fraction").as_f64().unwrap() > 0.999);
    let duration = u64_at(&doc, "stats.duration_ns");
    assert!((59e9..61e9).contains(&(duration as f64)), "{duration}");
}

#[test]
fn stats_time_unit_is_the_users_choice() {
    let ns = stats_json(&tpcc(), &["--format", "disksim-ns"]);
    let ms = stats_json(&tpcc(), &["--format", "disksim-ms"]);
    assert_eq!(at(&ms, "format"), "disksim-ms");
    assert_eq!(
        u64_at(&ms, "stats.duration_ns"),
        u64_at(&ns, "stats.duration_ns") * 1_000_000
    );
    assert_eq!(at(&ms, "stats.read"), at(&ns, "stats.read"));
}

#[test]
fn stats_device_selection_and_limit() {
    let some = stats_json(&tpcc(), &["--devices", "0,3"]);
    let all = stats_json(&tpcc(), &[]);
    let per_device = |d: u64| {
        at(&all, "stats.devices")
            .as_array()
            .unwrap()
            .iter()
            .find(|x| u64_at(x, "device") == d)
            .map(|x| u64_at(x, "requests"))
            .unwrap()
    };
    let kept = u64_at(&some, "stats.requests");
    assert_eq!(kept, per_device(0) + per_device(3));
    assert_eq!(u64_at(&some, "stats.skipped.other_devices"), 6999 - kept);
    let limited = stats_json(&tpcc(), &["--max-requests", "100"]);
    assert_eq!(u64_at(&limited, "stats.requests"), 100);
}

// ---------------------------------------------------------------------------------------------
// trace formats
// ---------------------------------------------------------------------------------------------

#[test]
fn formats_lists_every_format() {
    let r = flashlab(&["trace", "formats"]);
    r.assert_success();
    for name in FORMATS {
        assert!(
            r.stdout
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{name} "))
                    || l.trim_start().starts_with(&format!("{name}:"))),
            "no line for `{name}`\n{}",
            r.context()
        );
    }
    assert!(r.stdout.contains("Sample lines"), "{}", r.context());
}

// ---------------------------------------------------------------------------------------------
// trace convert
// ---------------------------------------------------------------------------------------------

#[test]
fn convert_round_trip_through_msr() {
    let dir = scratch("round-trip");
    let (msr, back) = (dir.join("tpcc.csv"), dir.join("tpcc-back.trace"));
    let file = tpcc();
    let r = flashlab(&["trace", "convert", &file, path_str(&msr), "--to", "msr"]);
    r.assert_success();
    assert!(
        r.stderr.contains("converted 6999 requests"),
        "{}",
        r.context()
    );
    let r = flashlab(&[
        "trace",
        "convert",
        path_str(&msr),
        path_str(&back),
        "--to",
        "disksim-ns",
    ]);
    r.assert_success();
    assert!(
        r.stderr.contains("(msr)"),
        "detected as msr\n{}",
        r.context()
    );

    let original = stats_json(&file, &[]);
    let as_msr = stats_json(path_str(&msr), &[]);
    let round = stats_json(path_str(&back), &[]);
    assert_eq!(at(&as_msr, "format"), "msr");
    assert_eq!(at(&round, "format"), "disksim-ns");
    assert_eq!(stats_fingerprint(&as_msr), stats_fingerprint(&original));
    assert_eq!(stats_fingerprint(&round), stats_fingerprint(&original));

    // Request by request: same times, devices, offsets, lengths and operations.
    let before = disksim_records(&traces().join("mqsim_tpcc-small.trace"));
    let after = disksim_records(&back);
    assert_eq!(before.len(), 6999);
    assert_eq!(before, after);
}

#[test]
fn convert_to_compressed_outputs_reads_back() {
    let dir = scratch("compressed");
    let file = tpcc();
    let original = stats_json(&file, &[]);
    for (name, to, compression, magic) in [
        ("tpcc.csv.gz", "msr", "gzip", &[0x1f, 0x8b][..]),
        (
            "tpcc.trace.zst",
            "disksim-ns",
            "zstd",
            &[0x28, 0xb5, 0x2f, 0xfd][..],
        ),
        ("tpcc-ms.trace.gz", "disksim-ms", "gzip", &[0x1f, 0x8b][..]),
    ] {
        let out = dir.join(name);
        let r = flashlab(&["trace", "convert", &file, path_str(&out), "--to", to]);
        r.assert_success();
        let bytes = std::fs::read(&out).unwrap();
        assert!(bytes.starts_with(magic), "{name} is not {compression}");
        let doc = stats_json(path_str(&out), &[]);
        assert_eq!(at(&doc, "compression"), compression, "{name}");
        assert_eq!(at(&doc, "format"), to, "{name}: detected format");
        assert_eq!(u64_at(&doc, "lines"), 6999, "{name}");
        assert_eq!(
            stats_fingerprint(&doc),
            stats_fingerprint(&original),
            "{name}"
        );
    }
}

#[test]
fn convert_to_an_unknown_format() {
    let dir = scratch("convert-unknown");
    let out = dir.join("x");
    let file = tpcc();
    let r = flashlab(&["trace", "convert", &file, path_str(&out), "--to", "nope"]);
    assert_bad_input(&r, &["nope", "msr", "disksim-ns"]);
}

// ---------------------------------------------------------------------------------------------
// Malformed traces
// ---------------------------------------------------------------------------------------------

#[test]
fn malformed_line_names_file_line_and_text() {
    let dir = scratch("malformed");
    let (bad, line) = malformed_trace(&dir);
    let location = format!("{}:3:", bad.display());
    for format in ["auto", "disksim-ns"] {
        let r = flashlab(&["trace", "stats", path_str(&bad), "--format", format]);
        assert_bad_input(&r, &[&location, &line, "blkno"]);
    }
}

#[test]
fn skip_bad_lines_warns_with_the_count() {
    let dir = scratch("skip-bad");
    let (bad, line) = malformed_trace(&dir);
    let r = flashlab(&[
        "trace",
        "stats",
        path_str(&bad),
        "--skip-bad-lines",
        "--json",
        "-",
        "--quiet",
    ]);
    r.assert_success();
    let warning = r
        .stderr
        .lines()
        .find(|l| l.starts_with("warning: "))
        .unwrap_or_else(|| panic!("no warning\n{}", r.context()));
    assert!(warning.contains("skipped 1 malformed"), "{}", r.context());
    assert!(warning.contains(&line), "{}", r.context());
    let doc = r.json();
    assert_eq!(u64_at(&doc, "bad_lines"), 1);
    assert_eq!(u64_at(&doc, "stats.requests"), 9);
}

// ---------------------------------------------------------------------------------------------
// run --trace
// ---------------------------------------------------------------------------------------------

#[test]
fn run_replays_the_trace() {
    let file = tpcc();
    let r = run_trace(&file, &["--precondition", "0", "--json", "-"]);
    r.assert_success();
    let report = r.json();
    assert_eq!(at(&report, "workload.kind"), "trace");
    assert_eq!(at(&report, "workload.name"), "mqsim_tpcc-small.trace");
    assert_eq!(at(&report, "workload.format"), "disksim-ns");
    assert_eq!(at(&report, "workload.replay.mode"), "open");
    assert_eq!(u64_at(&report, "workload.summary.requests"), 6999);
    assert_eq!(u64_at(&report, "workload.summary.reads"), 4381);
    assert_eq!(u64_at(&report, "workload.summary.writes"), 2618);
    assert_eq!(u64_at(&report, "workload.summary.bad_lines"), 0);
    assert_eq!(
        u64_at(&report, "workload.summary.trace_duration_ns"),
        136_489_000
    );
    assert_eq!(at(&report, "workload.summary.address.mode"), "compact");
    assert_eq!(u64_at(&report, "host.all.count"), 6999);
    assert!(
        r.stderr.contains("note: trace format: disksim-ns"),
        "{}",
        r.context()
    );
}

#[test]
fn run_closed_loop_with_warmup() {
    let file = tpcc();
    let r = run_trace(
        &file,
        &[
            "--trace-format",
            "disksim-ns",
            "--precondition",
            "0",
            "--set",
            "trace.replay=\"closed\"",
            "--set",
            "trace.queue_depth=16",
            "--set",
            "trace.warmup_requests=1000",
            "--json",
            "-",
            "--quiet",
        ],
    );
    r.assert_success();
    let report = r.json();
    assert_eq!(at(&report, "workload.replay.mode"), "closed");
    assert_eq!(u64_at(&report, "workload.replay.queue_depth"), 16);
    assert_eq!(u64_at(&report, "workload.summary.warmup_requests"), 1000);
    assert_eq!(u64_at(&report, "host.all.count"), 5999);
}

#[test]
fn run_skips_bad_lines_with_a_warning() {
    let dir = scratch("run-skip-bad");
    let (bad, _) = malformed_trace(&dir);
    let r = run_trace(
        path_str(&bad),
        &[
            "--skip-bad-lines",
            "--precondition",
            "0",
            "--json",
            "-",
            "--quiet",
        ],
    );
    r.assert_success();
    assert!(
        r.stderr.contains("warning: skipped 1 malformed"),
        "{}",
        r.context()
    );
    let report = r.json();
    assert_eq!(u64_at(&report, "workload.summary.bad_lines"), 1);
    assert_eq!(u64_at(&report, "host.all.count"), 9);
    assert_eq!(
        at(&report, "workload.warnings").as_array().unwrap().len(),
        1
    );
}

#[test]
fn run_malformed_trace_is_bad_input() {
    let dir = scratch("run-malformed");
    let (bad, line) = malformed_trace(&dir);
    let location = format!("{}:3:", bad.display());
    let r = run_trace(path_str(&bad), &["--precondition", "0"]);
    assert_bad_input(&r, &[&location, &line]);
}

#[test]
fn run_trace_that_does_not_fit() {
    let file = tpcc();
    let r = run_trace(
        &file,
        &["--precondition", "0", "--set", "trace.address_map=\"none\""],
    );
    assert_bad_input(&r, &[]);
    assert!(
        r.stderr.contains("compact") || r.stderr.contains("wrap"),
        "{}",
        r.context()
    );
}

#[test]
fn run_unknown_trace_format() {
    let file = tpcc();
    let r = run_trace(&file, &["--trace-format", "nope", "--precondition", "0"]);
    assert_bad_input(&r, &[&["nope"][..], FORMATS].concat());
}

#[test]
fn run_missing_trace_file() {
    let dir = scratch("run-missing");
    let missing = dir.join("nosuch.trace");
    let r = run_trace(path_str(&missing), &["--precondition", "0"]);
    assert_bad_input(&r, &["nosuch.trace"]);
}

// ---------------------------------------------------------------------------------------------
// trace bench
// ---------------------------------------------------------------------------------------------

#[test]
fn bench_measures_every_reader() {
    let dir = scratch("bench");
    let r = flashlab(&[
        "trace",
        "bench",
        "--lines",
        "20000",
        "--dir",
        path_str(&dir),
    ]);
    r.assert_success();
    assert!(r.stdout.contains("lines/s"), "{}", r.context());
    for reader in ["msr", "disksim-ns", "spc", "fio", "generic"] {
        let row = r
            .stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(reader))
            .unwrap_or_else(|| panic!("no row for {reader}\n{}", r.context()));
        // reader, file MB, lines/s, MB/s, seconds
        let fields: Vec<&str> = row.split_whitespace().collect();
        let rate: f64 = fields[fields.len() - 3]
            .parse()
            .unwrap_or_else(|e| panic!("{reader}: lines/s {:?}: {e}\n{}", fields, r.context()));
        assert!(rate > 0.0, "{row}");
    }
    // The generated files are deleted.
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(left.is_empty(), "bench left files behind: {left:?}");
}

// ---------------------------------------------------------------------------------------------
// trace generate
// ---------------------------------------------------------------------------------------------

/// `trace generate desktop` with `extra` arguments, writing `out`; must succeed.
fn generate_desktop(out: &Path, extra: &[&str]) -> Outcome {
    let mut args = vec!["trace", "generate", "desktop", "--out", path_str(out)];
    args.extend_from_slice(extra);
    let r = flashlab(&args);
    r.assert_success();
    r
}

#[test]
fn generate_desktop_has_the_papers_ratio_and_replays_compacted_on_the_mt_board() {
    let dir = scratch("generate-desktop");
    let file = dir.join("desktop.csv");
    let settings = [
        "--requests",
        "1e5",
        "--partition-bytes",
        "256GiB",
        "--footprint-bytes",
        "3GiB",
        "--seed",
        "7",
    ];
    let r = generate_desktop(&file, &settings);
    assert!(
        r.stderr.contains("generated 100000 desktop requests"),
        "{}",
        r.context()
    );
    let doc = stats_json(path_str(&file), &[]);
    assert_eq!(at(&doc, "format"), "msr");
    assert_eq!(u64_at(&doc, "stats.requests"), 100_000);
    // multithreaded-ftl-ucos.txt Table 2: 371 GB written / 282 GB read = 1.32.
    let ratio = u64_at(&doc, "stats.write.bytes") as f64 / u64_at(&doc, "stats.read.bytes") as f64;
    assert!((1.15..=1.5).contains(&ratio), "written/read {ratio}");
    assert!(u64_at(&doc, "stats.size_bytes.p50") <= 16 << 10);
    let sequential = at(&doc, "stats.sequential_fraction").as_f64().unwrap();
    assert!((0.2..=0.7).contains(&sequential), "sequential {sequential}");
    // At most the footprint is touched, spread with holes over the partition.
    assert!(u64_at(&doc, "stats.footprint_bytes") <= 3 << 30);
    let device = &at(&doc, "stats.devices").as_array().unwrap()[0];
    assert!(u64_at(device, "highest_byte") > 64 << 30, "{device}");
    assert!(u64_at(&doc, "stats.duration_ns") > 0);

    // One seed, one trace; another seed, another trace.
    let again = dir.join("again.csv");
    generate_desktop(&again, &settings);
    assert_eq!(
        std::fs::read(&file).unwrap(),
        std::fs::read(&again).unwrap()
    );
    let other = dir.join("other.csv");
    generate_desktop(&other, &[&settings[..6], &["--seed", "8"]].concat());
    assert_ne!(
        std::fs::read(&file).unwrap(),
        std::fs::read(&other).unwrap()
    );

    // Replayed on the 4 GB board: the holes are removed (compaction, the default). Open loop
    // at the trace's times (the UART link cannot keep up: a short prefix), then closed loop at
    // a queue depth, as the paper replays it.
    for (replay, requests) in [("open", 2000), ("closed", 10_000)] {
        let r = run_trace(
            path_str(&file),
            &[
                "--device",
                "mt-board",
                "--precondition",
                "0",
                "--set",
                &format!("trace.max_requests={requests}"),
                "--set",
                &format!("trace.replay=\"{replay}\""),
                "--set",
                "trace.queue_depth=8",
                "--json",
                "-",
                "--quiet",
            ],
        );
        r.assert_success();
        let report = r.json();
        assert_eq!(at(&report, "workload.format"), "msr");
        assert_eq!(at(&report, "workload.replay.mode"), replay);
        assert_eq!(u64_at(&report, "host.all.count"), requests);
        assert_eq!(at(&report, "workload.summary.address.mode"), "compact");
        let removed = u64_at(&report, "workload.summary.address.removed_bytes");
        let mapped = u64_at(&report, "workload.summary.address.mapped_bytes");
        assert!(
            removed > 32 * mapped,
            "{replay}: removed {removed}, mapped {mapped}"
        );
    }
}

#[test]
fn generate_compressed_and_other_formats() {
    let dir = scratch("generate-formats");
    let small = [
        "--requests",
        "2000",
        "--footprint-bytes",
        "256MiB",
        "--seed",
        "3",
    ];
    let plain = dir.join("d.trace");
    generate_desktop(&plain, &[&small[..], &["--format", "disksim-ns"]].concat());
    let reference = stats_json(path_str(&plain), &[]);
    assert_eq!(at(&reference, "format"), "disksim-ns");
    for (name, format) in [
        ("d.csv.gz", "msr"),
        ("d.iolog.zst", "fio"),
        ("d.spc", "spc"),
    ] {
        let out = dir.join(name);
        generate_desktop(&out, &[&small[..], &["--format", format]].concat());
        let doc = stats_json(path_str(&out), &[]);
        assert_eq!(at(&doc, "format"), format, "{name}");
        for field in [
            "stats.requests",
            "stats.read",
            "stats.write",
            "stats.footprint_bytes",
        ] {
            assert_eq!(at(&doc, field), at(&reference, field), "{name}: {field}");
        }
    }
}

#[test]
fn generate_refuses_bad_settings() {
    let dir = scratch("generate-bad");
    let out = dir.join("x.csv");
    let out = path_str(&out);
    let cases: [(&[&str], &[&str]); 6] = [
        (
            &["trace", "generate", "laptop", "--out", out],
            &["laptop", "desktop"],
        ),
        (
            &[
                "trace",
                "generate",
                "desktop",
                "--out",
                out,
                "--footprint-bytes",
                "1TiB",
                "--partition-bytes",
                "1GiB",
            ],
            &["--footprint-bytes", "larger than the partition"],
        ),
        (
            &[
                "trace",
                "generate",
                "desktop",
                "--out",
                out,
                "--footprint-bytes",
                "1MiB",
            ],
            &["--footprint-bytes", "too small"],
        ),
        (
            &[
                "trace",
                "generate",
                "desktop",
                "--out",
                out,
                "--partition-bytes",
                "12x",
            ],
            &["--partition-bytes", "12x"],
        ),
        (
            &[
                "trace",
                "generate",
                "desktop",
                "--out",
                out,
                "--requests",
                "1.5",
            ],
            &["--requests", "1.5"],
        ),
        (
            &[
                "trace",
                "generate",
                "desktop",
                "--out",
                out,
                "--format",
                "blkparse-d",
            ],
            &["--format", "blkparse-d", "msr"],
        ),
    ];
    for (args, mentions) in cases {
        let r = flashlab(args);
        assert_bad_input(&r, mentions);
    }
    assert!(!dir.join("x.csv").exists(), "nothing written on bad input");
}

/// The TPC-C trace with its sector columns rewritten in bytes (as several public collections
/// ship DiskSim-like traces), still claiming to be DiskSim.
fn tpcc_in_bytes(dir: &Path) -> String {
    let text = std::fs::read_to_string(tpcc()).expect("the TPC-C trace reads");
    let mut out = String::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let sector: u64 = f[2].parse().unwrap();
        let sectors: u64 = f[3].parse().unwrap();
        out.push_str(&format!(
            "{} {} {} {} {}\n",
            f[0],
            f[1],
            sector * 512,
            sectors * 512,
            f[4]
        ));
    }
    let path = dir.join("tpcc-bytes.trace");
    std::fs::write(&path, out).unwrap();
    path_str(&path).to_string()
}

/// The `--trace-format` a units warning suggests.
fn suggested_format(stderr: &str) -> String {
    let warning = stderr
        .lines()
        .find(|l| l.starts_with("warning: offsets and sizes look like bytes"))
        .unwrap_or_else(|| panic!("no units warning in {stderr}"));
    let start = warning.find("--trace-format '").expect("a suggestion") + 16;
    let len = warning[start..].find('\'').expect("a closing quote");
    warning[start..start + len].to_string()
}

#[test]
fn byte_columns_in_a_sector_format_are_announced_with_the_format_that_reads_them() {
    let dir = scratch("byte_columns");
    let bytes = tpcc_in_bytes(&dir);
    let r = flashlab(&["trace", "stats", &bytes, "--json", "-", "--quiet"]);
    r.assert_success();
    let stats = r.json();
    let warnings = at(&stats, "stats.unit_warnings").as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        r.stderr.contains("they were read as 512-byte sectors"),
        "{}",
        r.stderr
    );
    // Nothing is guessed: the statistics are the declared reading (512x too large).
    let original = stats_json(&tpcc(), &[]);
    assert_eq!(
        u64_at(&stats, "stats.read.bytes"),
        512 * u64_at(&original, "stats.read.bytes")
    );
    // The suggested format reads the file as the original trace.
    let format = suggested_format(&r.stderr);
    let fixed = flashlab(&[
        "trace", "stats", &bytes, "--format", &format, "--json", "-", "--quiet",
    ]);
    fixed.assert_success();
    let fixed_stats = fixed.json();
    assert_eq!(
        at(&fixed_stats, "stats.unit_warnings"),
        &Value::Array(vec![])
    );
    for key in [
        "requests",
        "read.bytes",
        "write.bytes",
        "footprint_bytes",
        "duration_ns",
    ] {
        let key = format!("stats.{key}");
        assert_eq!(at(&fixed_stats, &key), at(&original, &key), "{key}");
    }
    // `run --trace` says it before the run, and the report keeps it.
    let run = run_trace(
        &bytes,
        &[
            "--precondition",
            "0",
            "--quiet",
            "--json",
            "-",
            "--set",
            "trace.address_map=\"wrap\"",
        ],
    );
    run.assert_success();
    assert_eq!(suggested_format(&run.stderr), format);
    assert_eq!(
        run.stderr.matches("look like bytes").count(),
        1,
        "once: {}",
        run.stderr
    );
    let warnings = at(&run.json(), "workload.warnings")
        .as_array()
        .unwrap()
        .clone();
    assert!(
        warnings[0].as_str().unwrap().contains("look like bytes"),
        "{warnings:?}"
    );
}

#[test]
fn real_traces_raise_no_units_warning() {
    for trace in [tpcc(), wsrch()] {
        let stats = stats_json(&trace, &[]);
        assert_eq!(
            at(&stats, "stats.unit_warnings"),
            &Value::Array(vec![]),
            "{trace}"
        );
    }
}
