//! Hostile and careless input (issue 10, part 6) and one spelling per concept (part 3), one
//! table per class. Every bad-input row must give exit code 2, one `error: ` line naming the
//! field or option, no panic, no Rust type name, a value shortened when huge, and an allowed
//! range that does not contain the value refused. Each test reports every failing row.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{
    disksim_lines, flashlab, gzip, path_str, scratch, small_run_args, strings, Outcome, BIN,
};

fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("scratch file");
    path
}

/// Names Rust types where a user expects words.
fn rust_type_name(line: &str) -> Option<&'static str> {
    let words: Vec<&str> = line
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .collect();
    [
        "u8", "u16", "u32", "u64", "usize", "i32", "i64", "f32", "f64", "struct",
    ]
    .into_iter()
    .find(|t| words.contains(t))
}

/// A number of a message, exactly for whole numbers (2^63 - 1 and 2^63 differ).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
enum Number {
    Whole(i128),
    Real(f64),
}

fn number(text: &str) -> Option<Number> {
    text.parse()
        .map(Number::Whole)
        .or_else(|_| text.parse().map(Number::Real))
        .ok()
}

fn within(v: Number, lo: Number, hi: Number) -> bool {
    let real = |n: Number| match n {
        Number::Whole(i) => i as f64,
        Number::Real(f) => f,
    };
    match (v, lo, hi) {
        (Number::Whole(v), Number::Whole(lo), Number::Whole(hi)) => v >= lo && v <= hi,
        _ => real(v) >= real(lo) && real(v) <= real(hi),
    }
}

/// The value and the `lo ..= hi` range of a message `FIELD = VALUE...(allowed: LO ..= HI`
/// about a value out of range (not one of the wrong kind, such as 1.5 for a whole number).
fn value_and_range(line: &str) -> Option<(Number, Number, Number)> {
    if line.contains("whole number") {
        return None;
    }
    let after_eq = &line[line.find(" = ")? + 3..];
    let value = number(
        after_eq
            .split(|c: char| c == ':' || c.is_whitespace())
            .next()?,
    )?;
    let rest = &line[line.find("(allowed: ")? + "(allowed: ".len()..];
    let (lo, rest) = rest.split_once(" ..= ")?;
    let hi: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == 'e' || *c == '-')
        .collect();
    Some((value, number(lo.trim())?, number(&hi)?))
}

/// What is wrong with `r` as the answer to bad input mentioning `mentions` (None: right).
fn bad_input_problem(r: &Outcome, mentions: &[&str]) -> Option<String> {
    if r.stderr.contains("panicked") {
        return Some("panicked".into());
    }
    if r.code != Some(2) {
        return Some(format!("exit code {:?}, expected 2", r.code));
    }
    if !r.stdout.is_empty() {
        return Some("printed to stdout".into());
    }
    let errors: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    let [error] = errors[..] else {
        return Some(format!("{} `error: ` lines, expected 1", errors.len()));
    };
    if let Some(m) = mentions.iter().find(|m| !error.contains(*m)) {
        return Some(format!("error does not mention `{m}`"));
    }
    if let Some(t) = rust_type_name(error) {
        return Some(format!("error names the Rust type `{t}`"));
    }
    if error.len() > 600 {
        return Some(format!("error is {} characters long", error.len()));
    }
    if let Some((v, lo, hi)) = value_and_range(error) {
        if within(v, lo, hi) {
            return Some(format!(
                "refuses {v:?} but says the allowed range is {lo:?} ..= {hi:?}"
            ));
        }
    }
    None
}

/// Runs every row; each must be refused as bad input mentioning its words.
fn assert_all_refused(rows: &[(Vec<String>, Vec<&str>)]) {
    let mut failures = Vec::new();
    for (args, mentions) in rows {
        let r = flashlab(args);
        if let Some(problem) = bad_input_problem(&r, mentions) {
            failures.push(format!("{problem}\n{}", r.context()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows mishandled:\n\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n\n")
    );
}

fn row(args: Vec<String>, mentions: &[&'static str]) -> (Vec<String>, Vec<&'static str>) {
    (args, mentions.to_vec())
}

#[test]
fn workload_values_too_large_to_write_are_refused_without_a_panic() {
    assert_all_refused(&[
        row(
            small_run_args(&["-w", "randwrite:count=100,duration=1e10s"]),
            &["workload.duration_ns", "1e10s"],
        ),
        row(
            small_run_args(&["-w", "randwrite:count=1e19"]),
            &["workload.count", "1e19"],
        ),
        row(
            small_run_args(&["-w", "randwrite:count=100,flush=1e19"]),
            &["workload.flush_every", "1e19"],
        ),
        row(
            small_run_args(&["-w", "randwrite:count=100,deadline=1e10s"]),
            &["workload.deadline_ns", "1e10s"],
        ),
        row(
            small_run_args(&["--set", "workload.count=18446744073709551615"]),
            &["workload.count", "18446744073709551615", "whole number"],
        ),
        row(
            small_run_args(&["--set", "run.seed=9223372036854775808"]),
            &["run.seed", "9223372036854775808"],
        ),
    ]);
}

#[test]
fn simulated_time_overflow_is_refused() {
    let dir = scratch("time-overflow");
    // 0 and almost 2^64 ns: relative times beyond the simulated clock.
    let huge = write_file(
        &dir,
        "huge.trace",
        "0 0 0 8 1\n18446744073709551000 0 8 8 1\n",
    );
    // 5000 s of trace time, replayed a million times slower: 5e18 ns.
    let long = write_file(&dir, "long.trace", "0 0 0 8 1\n5000000000000 0 8 8 1\n");
    assert_all_refused(&[
        row(
            small_run_args(&["-w", "randwrite:count=100,rate=1e-9"]),
            &["workload.rate_iops", "1e-9"],
        ),
        row(
            small_run_args(&["-w", "randwrite:count=1e6,rate=0.0001"]),
            &["workload.rate_iops"],
        ),
        row(
            small_run_args(&["--trace", path_str(&huge), "--trace-format", "disksim-ns"]),
            &["huge.trace", "simulated clock"],
        ),
        row(
            small_run_args(&[
                "--trace",
                path_str(&long),
                "--trace-format",
                "disksim-ns",
                "--set",
                "trace.speedup=0.000001",
            ]),
            &["long.trace", "trace.speedup", "simulated clock"],
        ),
    ]);
}

#[test]
fn tiny_blocks_are_refused_with_the_setting_to_change_not_an_internal_error() {
    let sets = |ftl: &str, ppb: &str, op: &str| {
        small_run_args(&[
            "--ftl",
            ftl,
            "--set",
            &format!("geometry.pages_per_block={ppb}"),
            "--set",
            &format!("ftl.over_provisioning={op}"),
            "--set",
            "geometry.blocks_per_plane=64",
            "-w",
            "randwrite:count=100",
        ])
    };
    assert_all_refused(&[
        // Issue examples: ended in exit 70 ("garbage collection cannot free a block").
        row(
            sets("pagemap", "1", "0.1"),
            &["ftl.over_provisioning", "dies"],
        ),
        row(
            sets("pagemap", "4", "0.05"),
            &["ftl.over_provisioning", "dies"],
        ),
        row(sets("mt-ftl", "1", "0.1"), &["geometry.pages_per_block"]),
        row(
            sets("st-ftl", "2", "0.1"),
            &["ftl.over_provisioning", "pads"],
        ),
    ]);
}

/// Memory the machine has available (Linux `MemAvailable`).
fn memory_available() -> u64 {
    let info = std::fs::read_to_string("/proc/meminfo").expect("/proc/meminfo");
    let line = info
        .lines()
        .find(|l| l.starts_with("MemAvailable:"))
        .expect("MemAvailable");
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

#[test]
fn a_device_beyond_the_memory_is_refused_before_it_is_allocated() {
    // Blocks per plane for about twice the memory available (the `default` device needs
    // about 1 MiB per block per plane), within the 2^32 pages flashlab addresses.
    let blocks = (2 * memory_available() / (1 << 20)).clamp(32_767, 262_143);
    let blocks = format!("geometry.blocks_per_plane={blocks}");
    assert_all_refused(&[
        row(
            strings(&["run", "-q", "--no-progress", "--set", &blocks]),
            &["memory", "GiB", "run.max_memory_bytes"],
        ),
        row(
            small_run_args(&["--set", "run.max_memory_bytes=1000000"]),
            &["run.max_memory_bytes", "memory", "GiB"],
        ),
    ]);
    // The run header shows the state size.
    let r = flashlab(&small_run_args(&["-w", "randwrite:count=100"]));
    r.assert_success();
    assert!(r.stdout.contains("MiB) | FTL"), "{}", r.context());
    assert!(r.stdout.contains(", state "), "{}", r.context());
}

#[test]
fn settings_that_would_be_ignored_are_refused() {
    let dir = scratch("ignored");
    let trace = write_file(&dir, "t.trace", &disksim_lines(50));
    let trace = path_str(&trace);
    let numeric_preset = write_file(&dir, "p.toml", "preset = 5\n");
    let unknown_preset = write_file(&dir, "q.toml", "preset = \"cosmso\"\n");
    assert_all_refused(&[
        row(
            small_run_args(&["--set", "preset=cosmos"]),
            &["--device cosmos"],
        ),
        row(
            small_run_args(&["--config", path_str(&numeric_preset)]),
            &["p.toml:1", "preset", "cosmos"],
        ),
        row(
            small_run_args(&["--config", path_str(&unknown_preset)]),
            &["q.toml:1", "cosmso", "cosmos"],
        ),
        row(
            small_run_args(&["--trace", trace, "-w", "randwrite:count=10"]),
            &["--workload", "--trace"],
        ),
        row(
            small_run_args(&["--trace-format", "msr"]),
            &["--trace-format", "--trace FILE"],
        ),
        row(
            small_run_args(&["--skip-bad-lines"]),
            &["--skip-bad-lines", "--trace FILE"],
        ),
        row(
            small_run_args(&["--set", "trace.max_requests=10"]),
            &["trace.max_requests", "--trace FILE"],
        ),
        row(
            small_run_args(&["--trace", trace, "--set", "workload.count=10"]),
            &["workload.count", "trace"],
        ),
        row(
            small_run_args(&["-w", "randwrite:qd=8,rate=1000,count=10"]),
            &["workload.queue_depth", "rate"],
        ),
        row(
            small_run_args(&["-w", "randwrite:arrival=fixed,count=10"]),
            &["workload.arrival", "rate"],
        ),
        row(
            small_run_args(&["-w", "randwrite:theta=1.2,count=10"]),
            &["workload.zipf_theta", "zipf"],
        ),
        row(
            small_run_args(&["-w", ":count=10"]),
            &["--workload", "kind", "randwrite"],
        ),
    ]);
}

#[test]
fn runs_that_measured_nothing_are_an_error() {
    let dir = scratch("measured-nothing");
    let empty = write_file(&dir, "empty.trace", "");
    let short = write_file(&dir, "short.trace", &disksim_lines(20));
    assert_all_refused(&[
        row(
            small_run_args(&["--trace", path_str(&empty), "--trace-format", "msr"]),
            &["empty.trace", "nothing was measured", "no request"],
        ),
        row(
            small_run_args(&[
                "--trace",
                path_str(&short),
                "--set",
                "trace.warmup_requests=20",
            ]),
            &[
                "nothing was measured",
                "warm-up",
                "trace.warmup_requests = 20",
            ],
        ),
        row(
            small_run_args(&["--trace", path_str(&short), "--set", "trace.warmup_ns=1e15"]),
            &["nothing was measured", "warm-up"],
        ),
    ]);
}

#[test]
fn messages_name_the_field_the_value_as_given_and_the_allowed_range() {
    let digits = format!("1{}", "0".repeat(300));
    let read = format!("randwrite:read={digits}");
    let over = format!("workload.read_fraction={digits}");
    assert_all_refused(&[
        row(
            small_run_args(&["--set", "workload.count=-1"]),
            &["workload.count", "-1", "whole number"],
        ),
        row(
            small_run_args(&["--set", "geometry.channels=1.5"]),
            &["geometry.channels", "1.5", "1 ..= 256"],
        ),
        row(
            small_run_args(&["--set", "geometry.channels=many"]),
            &["geometry.channels", "many", "1 ..= 256"],
        ),
        row(
            small_run_args(&["--set", "timing.bus_mb_per_s=fast"]),
            &["timing.bus_mb_per_s", "fast", "number"],
        ),
        row(
            small_run_args(&["--set", "run.functional_only=yes"]),
            &["run.functional_only", "yes", "true | false"],
        ),
        row(
            small_run_args(&["--set", "geometry=3"]),
            &["geometry", "3", "section"],
        ),
        row(
            small_run_args(&["--ftl", "mt-ftl", "--set", "ftl.tasks=x"]),
            &["ftl.tasks", "x", "1 ..= 63"],
        ),
        row(
            small_run_args(&["-w", "randwrite:align=1t"]),
            &["workload.align_bytes", "1t"],
        ),
        row(
            small_run_args(&["-w", "randwrite:count=100,bs"]),
            &["`bs`", "KEY=VALUE"],
        ),
        row(
            small_run_args(&["-w", "randwrite:duration=-1s"]),
            &["workload.duration_ns", "-1s", "negative"],
        ),
        row(
            small_run_args(&["-w", "randwrite:align=-4k"]),
            &["workload.align_bytes", "-4k", "negative"],
        ),
        row(
            small_run_args(&["-w", "randwrite:qd=1e12"]),
            &["workload.queue_depth = 1e12", "1 ..= 1048576"],
        ),
        row(
            small_run_args(&["-w", &read]),
            &["workload.read_fraction", "1e300"],
        ),
        row(
            small_run_args(&["--set", &over]),
            &["workload.read_fraction", "1e300"],
        ),
        row(
            small_run_args(&["-w", "randwrite:read=0.5,read_fraction=0.3"]),
            &["read_fraction", "already given"],
        ),
        // A device so small that no over-provisioning leaves a logical unit.
        row(
            small_run_args(&[
                "--set",
                "geometry.channels=1",
                "--set",
                "geometry.chips_per_channel=1",
                "--set",
                "geometry.dies_per_chip=1",
                "--set",
                "geometry.planes_per_die=1",
                "--set",
                "geometry.blocks_per_plane=4",
                "--set",
                "geometry.pages_per_block=1",
                "--set",
                "geometry.page_bytes=4096",
                "--set",
                "ftl.over_provisioning=0.95",
            ]),
            &["ftl.over_provisioning", "logical"],
        ),
    ]);
    // Whole numbers written as floats are whole numbers.
    flashlab(&small_run_args(&[
        "--set",
        "workload.count=1e2",
        "--set",
        "geometry.channels=4.0",
        "-q",
    ]))
    .assert_success();
}

/// Bytes of a file, or empty when it is gone.
fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_default()
}

#[test]
fn trace_convert_refuses_to_overwrite_its_input() {
    let dir = scratch("convert-onto-input");
    let plain = write_file(&dir, "a.trace", &disksim_lines(100));
    let original = bytes(&plain);
    let gz = dir.join("a.trace.gz");
    assert!(Command::new("sh")
        .arg("-c")
        .arg(format!("gzip -c {} > {}", path_str(&plain), path_str(&gz)))
        .status()
        .expect("gzip")
        .success());
    let gz_original = bytes(&gz);
    std::os::unix::fs::symlink(&plain, dir.join("link.trace")).expect("symlink");
    std::fs::hard_link(&plain, dir.join("hard.trace")).expect("hard link");
    let mut failures = Vec::new();
    for (input, output, guarded) in [
        ("a.trace", "a.trace", &plain),
        ("a.trace", "link.trace", &plain),
        ("link.trace", "a.trace", &plain),
        ("a.trace", "hard.trace", &plain),
        ("a.trace.gz", "a.trace.gz", &gz),
    ] {
        let before = bytes(guarded);
        let r = flashlab(&[
            "trace",
            "convert",
            path_str(&dir.join(input)),
            path_str(&dir.join(output)),
            "--to",
            "msr",
        ]);
        // Bad usage (exit code 2, before reading), naming both: output_targets.rs has the
        // other commands' rows.
        if r.code != Some(2) || !r.stderr.contains("the input FILE") || bytes(guarded) != before {
            failures.push(format!(
                "{input} -> {output}: exit {:?}, input {} bytes before, {} after\n{}",
                r.code,
                before.len(),
                bytes(guarded).len(),
                r.context()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(bytes(&plain), original);
    assert_eq!(bytes(&gz), gz_original);
}

/// Runs the binary with a file-size limit (writes beyond it fail with EFBIG): a full disk.
fn flashlab_with_file_limit(args: &[&str], limit_bytes: u64) -> Outcome {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(BIN);
    command.args(args).stdin(Stdio::null());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: limit_bytes,
                rlim_max: limit_bytes,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = command.output().expect("the flashlab binary runs");
    Outcome {
        args: args.iter().map(|s| s.to_string()).collect(),
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Files of `dir` other than `keep`: temporary files left behind.
fn leftovers(dir: &Path, keep: &[&str]) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("scratch directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect()
}

#[test]
fn outputs_are_never_left_half_written() {
    let dir = scratch("half-written");
    let trace = write_file(&dir, "in.trace", &disksim_lines(5000));
    let old = b"previous contents\n".to_vec();
    let keep = ["in.trace", "out.csv", "out.json", "desktop.csv"];
    let mut failures = Vec::new();
    for (name, args) in [
        (
            "out.csv",
            vec![
                "trace",
                "convert",
                path_str(&trace),
                path_str(&dir.join("out.csv")),
                "--to",
                "msr",
            ],
        ),
        (
            "out.json",
            vec![
                "trace",
                "stats",
                path_str(&trace),
                "-q",
                "--json",
                path_str(&dir.join("out.json")),
            ],
        ),
        (
            "desktop.csv",
            vec![
                "trace",
                "generate",
                "desktop",
                "--requests",
                "5000",
                "--out",
                path_str(&dir.join("desktop.csv")),
            ],
        ),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, &old).expect("old output");
        // The input is below the limit; the output crosses it.
        let r = flashlab_with_file_limit(&args, 1000);
        if r.code != Some(74) || bytes(&path) != old {
            failures.push(format!(
                "{name}: exit {:?}, {} bytes left (the old file had {})\n{}",
                r.code,
                bytes(&path).len(),
                old.len(),
                r.context()
            ));
        }
    }
    let left = leftovers(&dir, &keep);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(left.is_empty(), "temporary files left behind: {left:?}");
}

#[test]
fn run_checks_its_output_before_simulating() {
    let dir = scratch("output-first");
    let missing = dir.join("no-such-folder").join("r.json");
    // Long enough that simulating first would print the table.
    let r = flashlab(&small_run_args(&[
        "-w",
        "randwrite:count=2000",
        "--json",
        path_str(&missing),
    ]));
    assert_eq!(r.code, Some(74), "{}", r.context());
    assert!(r.stdout.is_empty(), "simulated first:\n{}", r.context());
    assert!(r.stderr.contains("no-such-folder"), "{}", r.context());
    let r = flashlab(&small_run_args(&["--json", path_str(&dir)]));
    assert_eq!(r.code, Some(74), "{}", r.context());
    assert!(r.stdout.is_empty(), "simulated first:\n{}", r.context());
}

/// Runs the binary with `stdin` as its standard input.
fn flashlab_fed(args: &[&str], stdin: &[u8]) -> Outcome {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the flashlab binary runs");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // The child may stop reading early on an error.
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("flashlab finishes");
    writer.join().expect("writer");
    Outcome {
        args: args.iter().map(|s| s.to_string()).collect(),
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn traces_from_standard_input_and_named_pipes_are_read_once() {
    let text = disksim_lines(3000);
    let stats = |r: &Outcome| -> u64 {
        let doc: serde_json::Value =
            serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}\n{}", r.context()));
        doc["stats"]["requests"]
            .as_u64()
            .unwrap_or_else(|| panic!("no stats.requests\n{}", r.context()))
    };
    // Plain and gzip on standard input, with the format detected (read twice).
    for data in [text.as_bytes().to_vec(), gzip(text.as_bytes())] {
        let r = flashlab_fed(&["trace", "stats", "-", "-q", "--json", "-"], &data);
        r.assert_success();
        assert_eq!(stats(&r), 3000, "{}", r.context());
    }
    // A replay surveys, then replays: both passes see every request.
    let dir = scratch("pipes");
    let json = dir.join("run.json");
    let args = small_run_args(&["--trace", "-", "-q", "--json", path_str(&json)]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = flashlab_fed(&args, &gzip(text.as_bytes()));
    r.assert_success();
    let report = common::read_json(&json);
    assert_eq!(report["host"]["all"]["count"], 3000, "{}", r.context());
    // Errors name standard input and the line.
    let r = flashlab_fed(
        &["trace", "stats", "-", "--format", "disksim-ns"],
        b"0 0 0 8 1\nbad line\n",
    );
    assert!(
        r.code == Some(2) && r.stderr.contains("<stdin>:2"),
        "{}",
        r.context()
    );
    // A named pipe.
    let fifo = dir.join("trace.fifo");
    let c_path = std::ffi::CString::new(path_str(&fifo)).expect("path");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let writer = {
        let fifo = fifo.clone();
        let text = text.clone();
        std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(&fifo)
                .expect("open the pipe");
            let _ = f.write_all(text.as_bytes());
        })
    };
    let r = flashlab(&["trace", "stats", path_str(&fifo), "-q", "--json", "-"]);
    writer.join().expect("writer");
    r.assert_success();
    assert_eq!(stats(&r), 3000, "{}", r.context());
}

#[test]
fn one_spelling_per_concept_with_the_old_ones_kept() {
    let dir = scratch("spellings");
    let trace = write_file(&dir, "t.trace", &disksim_lines(100));
    let trace = path_str(&trace);
    let out = |name: &str| path_str(&dir.join(name)).to_string();
    let ok: Vec<Vec<String>> = vec![
        strings(&[
            "trace",
            "stats",
            trace,
            "--trace-format",
            "disksim-ns",
            "-q",
        ]),
        strings(&["trace", "stats", trace, "--format", "disksim-ns", "-q"]),
        strings(&["trace", "stats", trace, "--max-requests", "1e1", "-q"]),
        strings(&["trace", "stats", trace, "--no-progress", "-q"]),
        strings(&[
            "trace",
            "convert",
            trace,
            "--trace-format",
            "disksim-ns",
            &out("a.csv"),
            "--to",
            "msr",
        ]),
        strings(&[
            "trace",
            "convert",
            trace,
            "--out",
            &out("b.csv"),
            "--to",
            "msr",
        ]),
        strings(&[
            "trace",
            "generate",
            "desktop",
            "--requests",
            "100",
            "--to",
            "spc",
            "--out",
            &out("c.spc"),
        ]),
        strings(&[
            "trace",
            "generate",
            "desktop",
            "--requests",
            "100",
            "--format",
            "spc",
            "--out",
            &out("d.spc"),
        ]),
        small_run_args(&["--trace", trace, "--format", "disksim-ns", "-q"]),
        small_run_args(&["--trace", trace, "--trace-format", "disksim-ns", "-q"]),
        strings(&[
            "bench",
            "-d",
            "default",
            "--queue-depth",
            "4",
            "--requests",
            "1e3",
            "--precondition",
            "0",
            "--mode",
            "functional",
            "--set",
            "geometry.blocks_per_plane=16",
            "--set",
            "ftl.over_provisioning=0.25",
            "--block-ftl-requests",
            "2k",
        ]),
    ];
    let mut failures = Vec::new();
    for args in &ok {
        let r = flashlab(args);
        if r.code != Some(0) {
            failures.push(r.context());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // Each FTL's listing shows its own name and defaults.
    let r = flashlab(&["ftls"]);
    r.assert_success();
    for ftl in ["pagemap", "mt-ftl", "st-ftl"] {
        let block: String = r
            .stdout
            .split("\n")
            .skip_while(|l| !l.starts_with(ftl))
            .skip(1)
            .take_while(|l| l.starts_with(' '))
            .collect::<Vec<_>>()
            .join("\n");
        let name_line = block
            .lines()
            .find(|l| l.trim_start().starts_with("ftl.name"))
            .unwrap_or_else(|| panic!("{ftl}: no ftl.name line\n{}", r.stdout));
        assert!(
            name_line.split_whitespace().nth(1) == Some(ftl),
            "{ftl} lists {name_line}"
        );
    }
    let r = flashlab(&["ftls", "st-ftl"]);
    r.assert_success();
    assert!(
        r.stdout
            .lines()
            .any(|l| l.split_whitespace().take(2).eq(["ftl.tasks", "1"])),
        "{}",
        r.stdout
    );
}
