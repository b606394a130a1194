//! Issue 25 on the command line, classes 5, 7, 8, 9 and 10: settings that would allocate
//! without bound are refused or bounded with the figure; byte-unit traces too large for the
//! device and coarse timestamps are explained; usage errors and choices name what is missing
//! or allowed in the user's words; ambiguous input is refused; traces from pipes leave no
//! temporary copy behind, binary input is refused at once, a byte-order mark and bytes after
//! a gzip stream are read as other tools read them. One row per case; every row failed
//! before its fix.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{
    disksim_lines, flashlab, gzip, path_str, scratch, small_run_args, strings, Outcome, BIN,
};

fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("scratch file");
    path
}

/// One row: the arguments, the exit code expected, words the one `error: ` line (or, for a
/// success, standard error) must hold, words it must not.
struct Row {
    args: Vec<String>,
    code: i32,
    mentions: Vec<String>,
    never: Vec<String>,
}

fn row(args: Vec<String>, code: i32, mentions: &[&str], never: &[&str]) -> Row {
    Row {
        args,
        code,
        mentions: mentions.iter().map(|s| s.to_string()).collect(),
        never: never.iter().map(|s| s.to_string()).collect(),
    }
}

/// What is wrong with `r` as the answer `expected` describes (None: right).
fn problem(r: &Outcome, expected: &Row) -> Option<String> {
    if r.stderr.contains("panicked") {
        return Some("panicked".into());
    }
    if r.code != Some(expected.code) {
        return Some(format!(
            "exit code {:?}, expected {}",
            r.code, expected.code
        ));
    }
    let text = if expected.code == 0 {
        r.stderr.clone()
    } else {
        let errors: Vec<&str> = r
            .stderr
            .lines()
            .filter(|l| l.starts_with("error: "))
            .collect();
        let [error] = errors[..] else {
            return Some(format!("{} `error: ` lines, expected 1", errors.len()));
        };
        error.to_string()
    };
    if let Some(m) = expected
        .mentions
        .iter()
        .find(|m| !text.contains(m.as_str()))
    {
        return Some(format!("does not mention `{m}`"));
    }
    if let Some(m) = expected.never.iter().find(|m| text.contains(m.as_str())) {
        return Some(format!("says `{m}`"));
    }
    None
}

/// Runs every row and reports every one that went wrong.
fn assert_rows(rows: &[Row]) {
    let failures: Vec<String> = rows
        .iter()
        .filter_map(|expected| {
            let r = flashlab(&expected.args);
            problem(&r, expected).map(|p| format!("{p}\n{}", r.context()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} rows mishandled:\n\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n\n")
    );
}

#[test]
fn settings_that_would_allocate_without_bound_are_refused_or_bounded() {
    assert_rows(&[
        // The example: 10^12 requests/s stayed at time 0 and grew past 2.4 GB.
        row(
            small_run_args(&["-w", "randwrite:rate=1e12,duration=1ms,count=0"]),
            2,
            &["workload.rate_iops", "1000000000", "out of range"],
            &[],
        ),
        // 1 ns intervals: coarsened to at most 100,000 intervals, with a warning.
        row(
            small_run_args(&[
                "-w",
                "randwrite:count=20000",
                "--timeseries-interval",
                "1ns",
            ]),
            0,
            &[
                "warning: the time series has intervals of",
                "not the 1 ns asked for",
                "at most 100000 intervals",
            ],
            &[],
        ),
    ]);
}

#[test]
fn byte_unit_traces_and_coarse_timestamps_are_explained() {
    let dir = scratch("units-and-time");
    // Offsets and sizes in bytes (4 KiB), read as sectors: 2 MiB requests over 6 GiB,
    // more than the small device even compacted.
    let bytes: String = (0..3000u64)
        .map(|i| format!("{} 0 {} 4096 {}\n", i * 1000, i * 7 * 4096, i % 2))
        .collect();
    let bytes = write_file(&dir, "bytes.trace", bytes.as_bytes());
    // A clock of 1 s: 300 requests per timestamp.
    let coarse: String = (0..3000u64)
        .map(|i| format!("{} 0 {} 8 {}\n", (1 + i / 300) * 1000, (i % 512) * 8, i % 2))
        .collect();
    let coarse = write_file(&dir, "coarse.trace", coarse.as_bytes());
    let trace = |path: &PathBuf, format: &str, extra: &[&str]| {
        let mut args = vec!["--trace", path_str(path), "--trace-format", format, "-q"];
        args.extend_from_slice(extra);
        small_run_args(&args)
    };
    assert_rows(&[
        row(
            trace(&bytes, "disksim-ns", &[]),
            2,
            &[
                "bytes.trace",
                "even compacted",
                "look like bytes",
                "--trace-format 'generic:time=1:ns,device=2,offset=3:bytes,size=4:bytes",
                "if they are sectors, use trace.address_map=wrap",
            ],
            &[],
        ),
        row(
            trace(&coarse, "disksim-ms", &[]),
            0,
            &[
                "warning: 99.7% of the 2999 gaps between consecutive requests are zero",
                "every timestamp is a multiple of 1 s",
                "trace.replay=closed",
                "trace.replay=bounded-open",
            ],
            &[],
        ),
        // Replayed closed loop, the timestamps do not matter: no warning.
        row(
            trace(&coarse, "disksim-ms", &["--set", "trace.replay=\"closed\""]),
            0,
            &[],
            &["gaps"],
        ),
    ]);
}

#[test]
fn usage_errors_and_choices_say_what_is_missing_or_allowed() {
    let dir = scratch("messages");
    let trace = write_file(&dir, "t.trace", disksim_lines(100).as_bytes());
    let trace = path_str(&trace);
    let not_a_folder = format!("{trace}/r.json");
    let out = dir.join("out.csv");
    let digits = format!("1{}", "0".repeat(300));
    let pages = |value: &str| {
        let toml = format!(
            "[workload]\npattern = \"periodic\"\nduration_ns = 1000000\n\n[[workload.tasks]]\nop = \"write\"\npages = {value}\nperiod_ns = 1000000\n"
        );
        let file = write_file(&dir, &format!("pages-{value}.toml"), toml.as_bytes());
        small_run_args(&["-q", "--config", path_str(&file)])
    };
    assert_rows(&[
        row(
            strings(&["reproduce", "kast"]),
            2,
            &[
                "required arguments were not provided: --out <OUT>",
                "flashlab reproduce --help",
            ],
            &[],
        ),
        row(
            strings(&["trace", "convert", trace, path_str(&out)]),
            2,
            &[
                "not provided: --to <FORMAT>",
                "flashlab trace convert --help",
            ],
            &[],
        ),
        row(
            strings(&["trace", "stats"]),
            2,
            &["not provided: <FILE>"],
            &[],
        ),
        row(
            strings(&["bench", "--mode", "bogus"]),
            2,
            &["'bogus'", "(allowed: timed, functional, both)"],
            &[],
        ),
        row(
            strings(&["run", "--seed", "x"]),
            2,
            &["--seed", "expected a whole number"],
            &["invalid digit"],
        ),
        row(
            strings(&["run", "--seed", &digits]),
            2,
            &["'1e300'", "too large"],
            &["0000000000"],
        ),
        row(
            small_run_args(&["--trace", trace, "--set", "trace.replay=\"bogus\""]),
            2,
            &["trace.replay = bogus: unknown choice (allowed: open | closed | bounded-open)"],
            &["variant"],
        ),
        row(
            small_run_args(&["--set", "run.bogus=1"]),
            2,
            &["run.bogus: unknown setting `bogus` (allowed: seed,"],
            &["unknown field"],
        ),
        row(
            small_run_args(&["--set", "workload.queue_depth=4294967296"]),
            2,
            &["workload.queue_depth = 4294967296 is out of range (allowed: 1 ..= 1048576)"],
            &["whole number"],
        ),
        row(
            pages("2.5"),
            2,
            &["workload.tasks[0].pages = 2.5", "(allowed: 0 ..= 1048576)"],
            &["= ?", "9223372036854775807"],
        ),
        row(pages("2.0"), 0, &[], &[]),
        row(
            small_run_args(&["-q", "--json", &not_a_folder]),
            74,
            &["is a file, not a folder"],
            &["does not exist"],
        ),
        row(
            small_run_args(&["-q", "--json", "/proc/version"]),
            74,
            &["/proc"],
            &["entity not found"],
        ),
    ]);
}

#[test]
fn ambiguous_input_is_refused_before_anything_runs() {
    let dir = scratch("ambiguous");
    let csv = write_file(&dir, "t.csv", b"0,4096,1\n4096,4096,0\n");
    let generic =
        |spec: &str| small_run_args(&["-q", "--trace", path_str(&csv), "--trace-format", spec]);
    let out = dir.join("repro");
    assert_rows(&[
        row(
            generic("generic:offset=1:bytes,size=2:bytes,op=3,size=2:sectors"),
            2,
            &["`size` is given twice", "size=2:bytes", "size=2:sectors"],
            &[],
        ),
        row(
            generic("generic:offset=1:bytes,size=2:bytes,op=3,read=1|0,write=0"),
            2,
            &["token `0` is both a read (read=1|0) and a write (write=0)"],
            &[],
        ),
        row(
            small_run_args(&[
                "-w",
                "periodic:tasks=w1p@1ms/offset=1ms/offset=2ms,duration=10ms",
            ]),
            2,
            &["/offset=1ms", "/offset=2ms", "give it once"],
            &[],
        ),
        row(
            strings(&[
                "reproduce",
                "--quick",
                "--out",
                path_str(&out),
                "all",
                "bogus",
            ]),
            2,
            &["unknown paper bogus", "allowed:"],
            &[],
        ),
    ]);
    assert!(
        !out.exists(),
        "a refused reproduce created its output folder"
    );
}

#[test]
fn smaller_trace_and_report_problems() {
    let dir = scratch("smaller");
    let text = disksim_lines(100);
    let mut bom = b"\xef\xbb\xbf".to_vec();
    bom.extend_from_slice(text.as_bytes());
    let bom = write_file(&dir, "bom.trace", &bom);
    let mut gz = gzip(text.as_bytes());
    gz.extend_from_slice(&[0u8; 512]);
    let padded = write_file(&dir, "padded.trace.gz", &gz);
    gz.extend_from_slice(b"junk\n");
    let garbage = write_file(&dir, "garbage.trace.gz", &gz);
    let stats = |path: &PathBuf| strings(&["trace", "stats", path_str(path), "-q"]);
    assert_rows(&[
        row(stats(&bom), 0, &[], &["error"]),
        row(stats(&padded), 0, &[], &["warning", "error"]),
        row(
            stats(&garbage),
            0,
            &[
                "warning: ",
                "517 bytes after the end of the gzip data were ignored",
            ],
            &[],
        ),
        // Refused at the configuration check, before preconditioning.
        row(
            strings(&[
                "run",
                "--set",
                "geometry.blocks_per_plane=16",
                "--set",
                "host.sector_bytes=4096",
                "-w",
                "zipf:bs=512-16k,align=512,count=100",
                "--no-progress",
            ]),
            2,
            &["workload.align_bytes = 512", "host.sector_bytes = 4096"],
            &["request #"],
        ),
    ]);
}

#[test]
fn an_ftl_running_on_the_rtos_shows_the_rtos_cpu() {
    // mt-ftl's CPU is the RTOS's: its busy share, not the engine's idle cores.
    let r = flashlab(&[
        "run",
        "-d",
        "mt-board",
        "--ftl",
        "mt-ftl",
        "-w",
        "randwrite:count=500",
        "--precondition",
        "0",
        "--no-progress",
    ]);
    r.assert_success();
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("utilisation:"))
        .unwrap_or_else(|| panic!("no utilisation line\n{}", r.context()));
    assert!(line.contains("FTL CPU (RTOS) "), "{line}");
    assert!(line.contains("% polling)"), "{line}");
    assert!(!line.contains("FTL CPU 0.0%"), "{line}");
}

#[test]
fn binary_input_is_refused_at_once() {
    let tmp = scratch("dev-zero");
    let mut child = Command::new(BIN)
        .args(["trace", "stats", "/dev/zero"])
        .env("TMPDIR", &tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the flashlab binary runs");
    // Before, it copied /dev/zero until the disk was full: stopped after 20 s.
    let start = Instant::now();
    while child.try_wait().expect("status").is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still copying /dev/zero after {:?}", start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("it ended");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("/dev/zero:1: not a text trace: a NUL byte"),
        "{stderr}"
    );
}

/// Starts `trace stats -` with its temporary files in `tmp`, feeds it part of a trace through
/// a pipe that stays open, waits until it is copying, sends `signal` and waits for it.
fn interrupted_while_spooling(tmp: &Path, signal: i32) -> std::process::ExitStatus {
    let mut child = Command::new(BIN)
        .args(["trace", "stats", "-", "--format", "disksim-ns", "-q"])
        .env("TMPDIR", tmp)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the flashlab binary runs");
    let mut input = child.stdin.take().expect("stdin");
    input
        .write_all(disksim_lines(20_000).as_bytes())
        .expect("the copy reads its input");
    // The copy is under way (its input open, not ended).
    std::thread::sleep(Duration::from_millis(500));
    let pid = i32::try_from(child.id()).expect("pid");
    // SAFETY: a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    let status = child.wait().expect("it ends");
    drop(input);
    status
}

#[test]
fn an_interrupted_copy_of_standard_input_leaves_nothing_behind() {
    for (name, signal) in [("sigterm", libc::SIGTERM), ("sigint", libc::SIGINT)] {
        let tmp = scratch(&format!("spool-{name}"));
        let status = interrupted_while_spooling(&tmp, signal);
        assert!(!status.success(), "{name}: it was stopped");
        let left: Vec<String> = std::fs::read_dir(&tmp)
            .expect("scratch directory")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        assert!(left.is_empty(), "{name}: left behind {left:?}");
    }
}
