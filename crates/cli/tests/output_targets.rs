//! What every output writer does with what is at its path (issue 25, classes 3 and 4), one
//! table per class.
//!
//! `output_targets`: each row is a kind of path (a device, standard output, a descriptor, a
//! named pipe, a symbolic link, a regular file, a read-only folder), tried with every writer:
//! `run --json`, `run --timeseries-csv`, `trace stats --json`, `trace convert` and `trace
//! generate --out`. Devices, pipes and descriptors are written through and never replaced; a
//! link stays a link; a regular file is replaced whole or kept; every failed write is exit code
//! 74 with the path and the reason.
//!
//! `outputs_that_are_inputs_or_each_other`: each row is an output that is an input (the trace,
//! the configuration, through another name, a hard or symbolic link, standard input) or another
//! output: refused with exit code 2 before any work, naming both, every file untouched.
//!
//! Run as root, the writers could replace the machine's own /dev/null, /dev/full or
//! /dev/stdout if a bug came back: the rows then use private equivalents made in the scratch
//! folder (the same device numbers, a link to /dev/stdout), which a bug can only replace
//! there. As another user, the real ones are used (that user cannot replace them).

mod common;

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{disksim_lines, path_str, scratch, small_run_args, strings, Outcome, BIN};

/// Requests of the input trace, and of the synthetic run.
const REQUESTS: u64 = 200;
/// Requests `trace generate` writes.
const GENERATED: u64 = 300;

/// The input files every writer reads: `in.trace`, and `bad.trace` whose last line is not a
/// request (the command fails after its output is prepared).
fn inputs(dir: &Path) {
    std::fs::write(dir.join("in.trace"), disksim_lines(REQUESTS)).expect("trace");
    std::fs::write(
        dir.join("bad.trace"),
        disksim_lines(REQUESTS) + "not a request\n",
    )
    .expect("bad trace");
}

/// One output writer of the command line.
struct Writer {
    name: &'static str,
    /// Its arguments writing to `out`, reading the inputs in `dir` (or its arguments failing
    /// after the output is prepared, when `failing`; `None` when it has no input to break).
    args: fn(dir: &Path, out: &str, failing: bool) -> Option<Vec<String>>,
    /// Why `bytes` is not its complete output.
    check: fn(bytes: &[u8]) -> Result<(), String>,
}

fn trace_in(dir: &Path, failing: bool) -> String {
    path_str(&dir.join(if failing { "bad.trace" } else { "in.trace" })).to_string()
}

const WRITERS: &[Writer] = &[
    Writer {
        name: "run --json",
        args: |dir, out, failing| {
            let trace = trace_in(dir, true);
            Some(match failing {
                true => small_run_args(&["--trace", &trace, "--json", out]),
                false => small_run_args(&["-w", "randwrite:count=200", "--json", out]),
            })
        },
        check: |bytes| {
            let doc: serde_json::Value =
                serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
            match doc["host"]["all"]["count"].as_u64() {
                Some(n) if n == REQUESTS => Ok(()),
                other => Err(format!("host.all.count {other:?}")),
            }
        },
    },
    Writer {
        name: "run --timeseries-csv",
        args: |dir, out, failing| {
            let trace = trace_in(dir, true);
            let series = ["--timeseries-interval", "1ms", "--timeseries-csv", out];
            let source = match failing {
                true => ["--trace", trace.as_str()],
                false => ["-w", "randwrite:count=200"],
            };
            Some(small_run_args(&[&source[..], &series[..]].concat()))
        },
        check: |bytes| {
            let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
            let mut lines = text.lines();
            if lines.next() != Some(flashlab_sim::stats::TIMESERIES_CSV_HEADER) {
                return Err("no CSV header first".into());
            }
            let rows: Vec<&str> = lines.collect();
            if rows.is_empty() || rows.iter().any(|l| l.split(',').count() != 9) {
                return Err(format!("{} rows, not all of 9 fields", rows.len()));
            }
            Ok(())
        },
    },
    Writer {
        name: "trace stats --json",
        args: |dir, out, failing| {
            Some(strings(&[
                "trace",
                "stats",
                &trace_in(dir, failing),
                "--no-progress",
                "--json",
                out,
            ]))
        },
        check: |bytes| {
            let doc: serde_json::Value =
                serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
            match doc["stats"]["requests"].as_u64() {
                Some(n) if n == REQUESTS => Ok(()),
                other => Err(format!("stats.requests {other:?}")),
            }
        },
    },
    Writer {
        name: "trace convert",
        args: |dir, out, failing| {
            Some(strings(&[
                "trace",
                "convert",
                &trace_in(dir, failing),
                out,
                "--to",
                "msr",
            ]))
        },
        check: |bytes| msr_lines(bytes, REQUESTS),
    },
    Writer {
        name: "trace generate --out",
        args: |_, out, failing| {
            (!failing).then(|| {
                strings(&[
                    "trace",
                    "generate",
                    "desktop",
                    "--requests",
                    "300",
                    "--out",
                    out,
                ])
            })
        },
        check: |bytes| msr_lines(bytes, GENERATED),
    },
];

/// Whether `bytes` are `n` MSR lines (7 fields each).
fn msr_lines(bytes: &[u8], n: u64) -> Result<(), String> {
    let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() as u64 != n || lines.iter().any(|l| l.split(',').count() != 7) {
        return Err(format!("{} lines, expected {n} MSR lines", lines.len()));
    }
    Ok(())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// How a command is started beyond its arguments.
#[derive(Default)]
struct Start {
    /// A descriptor to hand the child, and its number there (the write end of a pipe as 7).
    descriptor: Option<(OwnedFd, i32)>,
    /// Standard input from this file.
    stdin: Option<File>,
    /// A descriptor the child must not have open (whatever the test harness inherited).
    closed: Option<i32>,
    /// Run as the user `nobody` (so that permissions apply when the tests run as root).
    as_nobody: bool,
}

/// Runs the binary with `args`, started as `start` says.
fn run(args: &[String], start: Start) -> Outcome {
    let mut command = Command::new(BIN);
    command.args(args);
    command.stdin(match start.stdin {
        Some(file) => Stdio::from(file),
        None => Stdio::null(),
    });
    let handed = start
        .descriptor
        .as_ref()
        .map(|(fd, at)| (fd.as_raw_fd(), *at));
    let (as_nobody, closed) = (start.as_nobody, start.closed);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if let Some((fd, at)) = handed {
                // dup2 clears close-on-exec on the copy (and leaves it set when fd == at).
                if fd == at {
                    libc::fcntl(fd, libc::F_SETFD, 0);
                } else if libc::dup2(fd, at) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if let Some(fd) = closed {
                libc::close(fd);
            }
            if as_nobody
                && (libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(65534) != 0
                    || libc::setuid(65534) != 0)
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().expect("the flashlab binary runs");
    drop(start.descriptor);
    let stdout = read_in_background({
        let pipe = child.stdout.take().expect("stdout");
        move || Ok(File::from(OwnedFd::from(pipe)))
    });
    let stderr = read_in_background({
        let pipe = child.stderr.take().expect("stderr");
        move || Ok(File::from(OwnedFd::from(pipe)))
    });
    // A writer waiting for ever (on a named pipe with no reader left) fails its row.
    let started = std::time::Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code();
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let text = |r: &mpsc::Receiver<std::io::Result<Vec<u8>>>| {
        String::from_utf8_lossy(&received(r).unwrap_or_default()).into_owned()
    };
    Outcome {
        args: args.to_vec(),
        code,
        stdout: text(&stdout),
        stderr: text(&stderr),
    }
}

/// A pipe (read end, write end), both closed on exec.
fn pipe() -> (File, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: two new descriptors that nothing else owns.
    unsafe { (File::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

/// Opens a file with `open` and reads it to its end, in a thread; see [`received`].
fn read_in_background(
    open: impl FnOnce() -> std::io::Result<File> + Send + 'static,
) -> mpsc::Receiver<std::io::Result<Vec<u8>>> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let result = open().and_then(|mut f| {
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes).map(|_| bytes)
        });
        let _ = sender.send(result);
    });
    receiver
}

/// What a background reader got, waiting at most 10 s (a replaced pipe leaves its reader
/// waiting for ever).
fn received(receiver: &mpsc::Receiver<std::io::Result<Vec<u8>>>) -> Result<Vec<u8>, String> {
    match receiver.recv_timeout(Duration::from_secs(10)) {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(e)) => Err(format!("the reader failed: {e}")),
        Err(_) => Err("the reader got no end of file within 10 s".into()),
    }
}

fn mknod(path: &Path, major: u32, minor: u32) -> Result<(), String> {
    let c_path = std::ffi::CString::new(path_str(path)).expect("path");
    let dev = libc::makedev(major, minor);
    // SAFETY: a valid NUL-terminated path.
    match unsafe { libc::mknod(c_path.as_ptr(), libc::S_IFCHR | 0o666, dev) } {
        0 => Ok(()),
        _ => Err(format!(
            "cannot make a device node: {}",
            std::io::Error::last_os_error()
        )),
    }
}

/// `/dev/null` or `/dev/full` (`minor` 3 or 7), or a private node with the same numbers in
/// `dir` when running as root (see the module documentation).
fn memory_device(dir: &Path, name: &str, minor: u32) -> Result<PathBuf, String> {
    if !is_root() {
        return Ok(Path::new("/dev").join(name));
    }
    let node = dir.join(name);
    mknod(&node, 1, minor)?;
    Ok(node)
}

/// Whether `path` is still the character device 1:`minor`.
fn still_device(path: &Path, minor: u32) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    if meta.file_type().is_char_device() && meta.rdev() == libc::makedev(1, minor) {
        Ok(())
    } else {
        Err(format!(
            "{} is no longer the device 1:{minor}",
            path.display()
        ))
    }
}

fn expect_code(r: &Outcome, code: i32) -> Result<(), String> {
    match r.code {
        Some(c) if c == code => {}
        Some(c) => return Err(format!("exit code {c}, expected {code}")),
        None => return Err(format!("no exit within 60 s or a signal, expected {code}")),
    }
    if r.stderr.contains("panicked") {
        return Err("panicked".into());
    }
    Ok(())
}

/// Files of `dir` other than `keep`: temporary files left behind.
fn leftovers(dir: &Path, keep: &[&str]) -> Result<(), String> {
    let left: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect();
    match left.is_empty() {
        true => Ok(()),
        false => Err(format!("files left behind: {left:?}")),
    }
}

/// One kind of output path: sets it up in the empty folder `dir` (the inputs in `inputs`),
/// runs `writer` on it and says what went wrong.
type Row = fn(writer: &Writer, inputs: &Path, dir: &Path) -> Result<(), String>;

fn args_of(writer: &Writer, inputs: &Path, out: &str) -> Vec<String> {
    (writer.args)(inputs, out, false).expect("every writer has working arguments")
}

const TARGET_ROWS: &[(&str, Row)] = &[
    (
        "/dev/null: written through, still the device",
        |w, inputs, dir| {
            let null = memory_device(dir, "null", 3)?;
            let r = run(&args_of(w, inputs, path_str(&null)), Start::default());
            expect_code(&r, 0).map_err(|e| format!("{e}\n{}", r.context()))?;
            still_device(&null, 3)?;
            still_device(Path::new("/dev/null"), 3)
        },
    ),
    (
        "/dev/full: exit 74 with the reason, still the device",
        |w, inputs, dir| {
            let full = memory_device(dir, "full", 7)?;
            let r = run(&args_of(w, inputs, path_str(&full)), Start::default());
            expect_code(&r, 74).map_err(|e| format!("{e}\n{}", r.context()))?;
            let message = format!(
                "error: cannot write {}: No space left on device\n",
                full.display()
            );
            if !r.stderr.ends_with(&message) {
                return Err(format!(
                    "stderr does not end with {message:?}\n{}",
                    r.context()
                ));
            }
            still_device(&full, 7)
        },
    ),
    (
        "/dev/stdout: the output alone on standard output",
        |w, inputs, dir| {
            let stdout = if is_root() {
                let link = dir.join("stdout");
                std::os::unix::fs::symlink("/dev/stdout", &link).map_err(|e| e.to_string())?;
                link
            } else {
                PathBuf::from("/dev/stdout")
            };
            let r = run(&args_of(w, inputs, path_str(&stdout)), Start::default());
            expect_code(&r, 0).map_err(|e| format!("{e}\n{}", r.context()))?;
            (w.check)(r.stdout.as_bytes()).map_err(|e| format!("stdout: {e}\n{}", r.context()))
        },
    ),
    (
        "/dev/fd/1: the output alone on standard output",
        |w, inputs, _| {
            let r = run(&args_of(w, inputs, "/dev/fd/1"), Start::default());
            expect_code(&r, 0).map_err(|e| format!("{e}\n{}", r.context()))?;
            (w.check)(r.stdout.as_bytes()).map_err(|e| format!("stdout: {e}\n{}", r.context()))
        },
    ),
    (
        "/dev/fd/7 on a pipe (as >(jq .)): the reader gets it all",
        |w, inputs, _| {
            let (read_end, write_end) = pipe();
            let got = read_in_background(move || Ok(read_end));
            let start = Start {
                descriptor: Some((write_end, 7)),
                ..Start::default()
            };
            let r = run(&args_of(w, inputs, "/dev/fd/7"), start);
            expect_code(&r, 0).map_err(|e| format!("{e}\n{}", r.context()))?;
            (w.check)(&received(&got)?).map_err(|e| format!("the pipe: {e}\n{}", r.context()))
        },
    ),
    (
        "/dev/fd/7 not open: exit 74 before the work",
        |w, inputs, _| {
            let start = Start {
                closed: Some(7),
                ..Start::default()
            };
            let r = run(&args_of(w, inputs, "/dev/fd/7"), start);
            expect_code(&r, 74).map_err(|e| format!("{e}\n{}", r.context()))?;
            if !r.stdout.is_empty() || !r.stderr.contains("/dev/fd/7: descriptor 7 is not open") {
                return Err(format!(
                    "not refused first, or not saying why\n{}",
                    r.context()
                ));
            }
            Ok(())
        },
    ),
    (
        "a named pipe with a reader: the reader gets it all, the pipe stays",
        |w, inputs, dir| {
            let fifo = dir.join("out.fifo");
            let c_path = std::ffi::CString::new(path_str(&fifo)).expect("path");
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
            let reader_path = fifo.clone();
            let got = read_in_background(move || File::open(reader_path));
            let r = run(&args_of(w, inputs, path_str(&fifo)), Start::default());
            expect_code(&r, 0).map_err(|e| format!("{e}\n{}", r.context()))?;
            let bytes = received(&got)?;
            (w.check)(&bytes).map_err(|e| format!("the reader: {e}\n{}", r.context()))?;
            let kind = std::fs::symlink_metadata(&fifo).map_err(|e| e.to_string())?;
            match kind.file_type().is_fifo() {
                true => Ok(()),
                false => Err("the named pipe was replaced".into()),
            }
        },
    ),
    (
        "a symbolic link to a file: the link stays, the file is written",
        |w, inputs, dir| {
            let target = dir.join("target.out");
            std::fs::write(&target, "old\n").map_err(|e| e.to_string())?;
            let link = dir.join("link.out");
            std::os::unix::fs::symlink("target.out", &link).map_err(|e| e.to_string())?;
            let r = run(&args_of(w, inputs, path_str(&link)), Start::default());
            expect_code(&r, 0).map_err(|e| format!("{e}\n{}", r.context()))?;
            match std::fs::read_link(&link) {
                Ok(t) if t == Path::new("target.out") => {}
                other => return Err(format!("the link is gone: {other:?}")),
            }
            let bytes = std::fs::read(&target).map_err(|e| e.to_string())?;
            (w.check)(&bytes).map_err(|e| format!("the target: {e}"))?;
            leftovers(dir, &["target.out", "link.out"])
        },
    ),
    (
        "a symbolic link to no file yet: the link stays, the file is made",
        |w, inputs, dir| {
            let link = dir.join("link.out");
            std::os::unix::fs::symlink(dir.join("new.out"), &link).map_err(|e| e.to_string())?;
            let r = run(&args_of(w, inputs, path_str(&link)), Start::default());
            expect_code(&r, 0).map_err(|e| format!("{e}\n{}", r.context()))?;
            if !std::fs::symlink_metadata(&link)
                .map_err(|e| e.to_string())?
                .is_symlink()
            {
                return Err("the link is gone".into());
            }
            let bytes = std::fs::read(dir.join("new.out")).map_err(|e| e.to_string())?;
            (w.check)(&bytes).map_err(|e| format!("the target: {e}"))?;
            leftovers(dir, &["new.out", "link.out"])
        },
    ),
    (
        "a regular file: replaced whole, its permissions kept",
        |w, inputs, dir| {
            let file = dir.join("out");
            std::fs::write(&file, "old\n").map_err(|e| e.to_string())?;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| e.to_string())?;
            let r = run(&args_of(w, inputs, path_str(&file)), Start::default());
            expect_code(&r, 0).map_err(|e| format!("{e}\n{}", r.context()))?;
            (w.check)(&std::fs::read(&file).map_err(|e| e.to_string())?)?;
            let mode = std::fs::metadata(&file).map_err(|e| e.to_string())?.mode() & 0o777;
            if mode != 0o600 {
                return Err(format!("mode {mode:o}, was 600"));
            }
            leftovers(dir, &["out"])
        },
    ),
    (
        "a regular file, the command failing: kept as it was",
        |w, inputs, dir| {
            let file = dir.join("out");
            let Some(args) = (w.args)(inputs, path_str(&file), true) else {
                return Ok(()); // no input to break: hostile_input's file-size limit covers it
            };
            std::fs::write(&file, "old\n").map_err(|e| e.to_string())?;
            let r = run(&args, Start::default());
            expect_code(&r, 2).map_err(|e| format!("{e}\n{}", r.context()))?;
            if std::fs::read(&file).map_err(|e| e.to_string())? != b"old\n" {
                return Err(format!("the previous file is not kept\n{}", r.context()));
            }
            leftovers(dir, &["out"])
        },
    ),
    (
        "a read-only folder: exit 74 before the work, naming the folder",
        |w, inputs, dir| {
            let folder = dir.join("read-only");
            std::fs::create_dir(&folder).map_err(|e| e.to_string())?;
            std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o555))
                .map_err(|e| e.to_string())?;
            let file = folder.join("out");
            // Root ignores permissions: the command runs as nobody then.
            let start = Start {
                as_nobody: is_root(),
                ..Start::default()
            };
            let r = run(&args_of(w, inputs, path_str(&file)), start);
            expect_code(&r, 74).map_err(|e| format!("{e}\n{}", r.context()))?;
            let message = format!(
                "error: cannot write {}: cannot create a file in {}: permission denied",
                file.display(),
                folder.display()
            );
            if !r.stdout.is_empty() || !r.stderr.starts_with(&message) {
                return Err(format!("expected {message:?} first\n{}", r.context()));
            }
            leftovers(&folder, &[])
        },
    ),
];

#[test]
fn output_targets() {
    let dir = scratch("targets");
    // Readable by `nobody` (the read-only folder row, as root).
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let input_dir = dir.join("inputs");
    std::fs::create_dir(&input_dir).expect("inputs folder");
    inputs(&input_dir);
    let mut failures = Vec::new();
    for (r, (row, check)) in TARGET_ROWS.iter().enumerate() {
        for (w, writer) in WRITERS.iter().enumerate() {
            let case = dir.join(format!("{r}-{w}"));
            std::fs::create_dir(&case).expect("case folder");
            if let Err(e) = check(writer, &input_dir, &case) {
                failures.push(format!("{row} / {}: {e}", writer.name));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n\n{}",
        failures.len(),
        TARGET_ROWS.len() * WRITERS.len(),
        failures.join("\n\n")
    );
}

/// Every entry of `dir` (recursively): its name, and its link target or contents.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir).expect("scratch folder") {
        let path = entry.expect("entry").path();
        let meta = std::fs::symlink_metadata(&path).expect("metadata");
        if meta.is_symlink() {
            let target = std::fs::read_link(&path).expect("link");
            entries.push((path, format!("-> {}", target.display()).into_bytes()));
        } else if meta.is_dir() {
            entries.extend(snapshot(&path));
        } else {
            entries.push((path.clone(), std::fs::read(&path).expect("file")));
        }
    }
    entries.sort();
    entries
}

/// An output that is an input or another output: the arguments (words; `@` starts a path in
/// the scratch folder), the words the error must hold, and the file given as standard input.
struct Clash {
    args: &'static str,
    mentions: &'static [&'static str],
    stdin: Option<&'static str>,
}

const fn clash(args: &'static str, mentions: &'static [&'static str]) -> Clash {
    Clash {
        args,
        mentions,
        stdin: None,
    }
}

/// A synthetic run with a time series, for the rows of two outputs.
macro_rules! series_run {
    ($outputs:literal) => {
        concat!(
            "run -w randwrite:count=200 --timeseries-interval 1ms ",
            $outputs
        )
    };
}

#[rustfmt::skip]
const CLASHES: &[Clash] = &[
    clash("run --trace @t.trace --json @t.trace", &["--json @", "the input --trace @"]),
    clash("run --trace @t.trace --timeseries-interval 1ms --timeseries-csv @t.trace",
          &["--timeseries-csv @", "the input --trace @"]),
    clash("run --set trace.path=\"@t.trace\" --json @t.trace", &["--json @", "the input trace.path @"]),
    clash("run --trace @t.trace --json @hard.trace", &["--json @", "--trace @", "by another name"]),
    clash("run --trace @link.trace --json @t.trace", &["--json @", "--trace @", "by another name"]),
    clash("run --trace @t.trace --json @link.trace", &["--json @", "--trace @", "by another name"]),
    clash("run -c @cfg.toml --json @cfg.toml", &["--json @", "the input --config @"]),
    clash(series_run!("-c @cfg.toml --timeseries-csv @cfg.toml"),
          &["--timeseries-csv @", "the input --config @"]),
    clash("trace stats @t.trace --json @t.trace", &["--json @", "the input FILE @"]),
    clash("trace stats @t.trace --json @link.trace", &["--json @", "the input FILE @", "by another name"]),
    Clash {
        args: "trace stats - --json @t.trace",
        mentions: &["--json @", "the input FILE - (standard input"],
        stdin: Some("t.trace"),
    },
    clash("trace convert @t.trace @t.trace --to msr", &["OUTPUT @", "the input FILE @"]),
    clash("trace convert @t.trace @hard.trace --to msr", &["OUTPUT @", "the input FILE @", "by another name"]),
    clash("trace convert @t.trace --out @link.trace --to msr", &["--out @", "the input FILE @"]),
    clash("bench --config @cfg.toml --json @cfg.toml --sections reference --requests 100 --precondition 0 --mode functional",
          &["--json @", "the input --config @"]),
    clash("experiment fmmu --quick --parts traces --schemes ideal --traces @study/results.json --out @study",
          &["--out @", "the input --traces @"]),
    clash(series_run!("--json @new.out --timeseries-csv @new.out"), &["--timeseries-csv @", "the output --json @"]),
    clash(series_run!("--json @new.out --timeseries-csv @study/../new.out"),
          &["--timeseries-csv @", "the output --json @", "by another name"]),
    clash(series_run!("--json @out.json --timeseries-csv @out.json"), &["--timeseries-csv @", "the output --json @"]),
    clash(series_run!("--json @out.json --timeseries-csv @out-link.json"),
          &["--timeseries-csv @", "the output --json @", "by another name"]),
    clash(series_run!("--json - --timeseries-csv /dev/fd/1"),
          &["--timeseries-csv /dev/fd/1", "--json also writes to standard output"]),
];

#[test]
fn outputs_that_are_inputs_or_each_other() {
    let dir = scratch("clashes");
    std::fs::write(dir.join("t.trace"), disksim_lines(REQUESTS)).expect("trace");
    std::fs::hard_link(dir.join("t.trace"), dir.join("hard.trace")).expect("hard link");
    std::os::unix::fs::symlink("t.trace", dir.join("link.trace")).expect("symlink");
    std::fs::write(
        dir.join("cfg.toml"),
        "[geometry]\nblocks_per_plane = 16\n\n[ftl]\nover_provisioning = 0.25\n",
    )
    .expect("configuration");
    std::fs::write(dir.join("out.json"), "old\n").expect("old output");
    std::os::unix::fs::symlink("out.json", dir.join("out-link.json")).expect("symlink");
    std::fs::create_dir(dir.join("study")).expect("study folder");
    std::fs::write(dir.join("study/results.json"), disksim_lines(REQUESTS)).expect("trace");
    let prefix = format!("{}/", path_str(&dir));
    let mut failures = Vec::new();
    for row in CLASHES {
        let words: Vec<String> = row
            .args
            .split_whitespace()
            .map(|a| a.replace('@', &prefix))
            .collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let args = match words.split_first() {
            Some((&"run", rest)) => small_run_args(rest),
            _ => strings(&words),
        };
        let start = Start {
            stdin: row
                .stdin
                .map(|name| File::open(dir.join(name)).expect("standard input")),
            ..Start::default()
        };
        let before = snapshot(&dir);
        let r = run(&args, start);
        let mut problems = Vec::new();
        if r.code != Some(2) {
            problems.push(format!("exit code {:?}, expected 2", r.code));
        }
        if !r.stdout.is_empty() {
            problems.push("output on stdout: the work ran".into());
        }
        if !r.stderr.starts_with("error: ") || r.stderr.lines().count() != 1 {
            problems.push("stderr is not one `error: ` line".into());
        }
        for m in row.mentions {
            let m = m.replace('@', &prefix);
            if !r.stderr.contains(&m) {
                problems.push(format!("the error does not say `{m}`"));
            }
        }
        let after = snapshot(&dir);
        if after != before {
            let changed: Vec<String> = after
                .iter()
                .filter(|e| !before.contains(e))
                .map(|(p, _)| p.display().to_string())
                .collect();
            problems.push(format!("files changed or made: {changed:?}"));
        }
        if !problems.is_empty() {
            failures.push(format!("{}\n{}", problems.join("; "), r.context()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows failed:\n\n{}",
        failures.len(),
        CLASHES.len(),
        failures.join("\n\n")
    );
}
