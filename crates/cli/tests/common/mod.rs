//! Helpers shared by the command-line integration tests: run the built binary, capture what
//! it did, and read JSON documents.

#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_flashlab");

/// What one invocation of the binary did.
pub struct Outcome {
    pub args: Vec<String>,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    /// Everything about the invocation, for assertion messages.
    pub fn context(&self) -> String {
        format!(
            "flashlab {}\n  exit code: {:?}\n  stdout: {:?}\n  stderr: {:?}",
            self.args.join(" "),
            self.code,
            truncate(&self.stdout),
            truncate(&self.stderr)
        )
    }

    pub fn assert_success(&self) {
        assert_eq!(self.code, Some(0), "expected success\n{}", self.context());
        assert!(!self.stderr.contains("panicked"), "{}", self.context());
    }

    /// Standard output as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON: {e}\n{}", self.context()))
    }
}

pub fn truncate(s: &str) -> String {
    const MAX: usize = 3000;
    if s.len() <= MAX {
        s.to_string()
    } else {
        let mut end = MAX;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}... ({} bytes)", &s[..end], s.len())
    }
}

/// Runs the binary with `args` (stdin closed).
pub fn flashlab<S: AsRef<str>>(args: &[S]) -> Outcome {
    let args: Vec<String> = args.iter().map(|a| a.as_ref().to_string()).collect();
    let out = Command::new(BIN)
        .args(&args)
        .stdin(Stdio::null())
        .output()
        .expect("the flashlab binary runs");
    Outcome {
        args,
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A fresh, empty scratch directory for one test of this test file.
pub fn scratch(test: &str) -> PathBuf {
    let name = format!("{}-{test}", env!("CARGO_CRATE_NAME"));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temporary path")
}

pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}\n{}", path.display(), truncate(&text)))
}

/// The value at a dotted path of a JSON document.
pub fn at<'a>(v: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(v, |v, k| {
        v.get(k)
            .unwrap_or_else(|| panic!("document has no `{path}` (missing `{k}`)\n{v}"))
    })
}

/// Bad input: exit code 2, one line on stderr starting with "error: " and containing every
/// one of `mentions`, no panic, nothing on stdout.
pub fn assert_bad_input(r: &Outcome, mentions: &[&str]) {
    let ctx = r.context();
    assert!(!r.stderr.contains("panicked"), "panicked\n{ctx}");
    assert_eq!(r.code, Some(2), "exit code of bad input must be 2\n{ctx}");
    assert!(r.stdout.is_empty(), "bad input printed to stdout\n{ctx}");
    assert!(
        r.stderr.starts_with("error: "),
        "stderr must start with `error: `\n{ctx}"
    );
    assert_eq!(
        r.stderr.lines().count(),
        1,
        "stderr must be exactly one line\n{ctx}"
    );
    for m in mentions {
        assert!(r.stderr.contains(m), "error does not mention `{m}`\n{ctx}");
    }
}

/// `flashlab run` options of a small, fast device: 16 blocks per plane, 25%
/// over-provisioning, fresh, no progress line.
pub const SMALL_FRESH: &[&str] = &[
    "--set",
    "geometry.blocks_per_plane=16",
    "--set",
    "ftl.over_provisioning=0.25",
    "--precondition",
    "0",
    "--no-progress",
];

/// `flashlab run` on the small fresh device ([`SMALL_FRESH`]) with `extra`.
pub fn small_run_args(extra: &[&str]) -> Vec<String> {
    strings(&[&["run"], SMALL_FRESH, extra].concat())
}

/// The arguments as owned strings.
pub fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// A DiskSim trace (nanoseconds): `n` 4 KiB requests 1 ms apart, alternating writes and
/// reads over the first 256 KiB.
pub fn disksim_lines(n: u64) -> String {
    (0..n)
        .map(|i| format!("{} 0 {} 8 {}\n", i * 1_000_000, (i % 64) * 8, i % 2))
        .collect()
}

/// `data` compressed with gzip.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).expect("gzip");
    e.finish().expect("gzip")
}
