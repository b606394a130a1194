//! The repository carries everything its tests, benchmarks, studies and docs use: no file in it
//! may point at the folder beside the checkout that only the development machines have (the
//! "shared" folder of traces and papers, by a relative or an absolute path), which a user's
//! clone does not have (issue 25: the README's test command failed on a fresh clone). The
//! traces are in the repository's `traces/` and built into flashlab (`trace::samples`).
//!
//! Scans every file git tracks or would track (not ignored; outside a git checkout, every file
//! under the repository root but build output and caches), text files only.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// The files to scan: git's tracked and untracked-but-not-ignored files, or a walk of the
/// tree when git cannot list them.
fn repository_files(root: &Path) -> Vec<PathBuf> {
    let listed = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root)
        .output();
    match listed {
        Ok(out) if out.status.success() && !out.stdout.is_empty() => out
            .stdout
            .split(|&b| b == 0)
            .filter(|name| !name.is_empty())
            .map(|name| root.join(String::from_utf8_lossy(name).as_ref()))
            .collect(),
        _ => {
            let mut files = Vec::new();
            walk(root, &mut files);
            files
        }
    }
}

/// Build output, caches and environments: not part of the repository.
const NOT_SOURCE: &[&str] = &[
    ".git",
    "target",
    ".venv",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
    ".mypy_cache",
];

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !NOT_SOURCE.contains(&name.as_str()) && !name.starts_with("target-") {
                walk(&path, files);
            }
        } else {
            files.push(path);
        }
    }
}

/// Where `text` refers to the shared folder beside the checkout: a relative path up into it,
/// its absolute path on the development machines, or its name then `traces` or `papers` a few
/// separators later (a path built piece by piece, as a Python test's `parents[2] / ...` did).
/// The patterns are assembled at run time so that this file does not match itself.
fn outside_references(text: &str) -> Vec<(usize, String)> {
    let shared = "shared";
    let relative = format!("../{shared}");
    let absolute = format!("/work/{shared}");
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut hit = line.contains(&relative) || line.contains(&absolute);
        for (at, _) in line.match_indices(shared) {
            let rest = &line[at + shared.len()..];
            let word = rest.trim_start_matches(|c: char| !c.is_alphanumeric());
            let gap = rest.len() - word.len();
            if (1..=6).contains(&gap) && (word.starts_with("traces") || word.starts_with("papers"))
            {
                hit = true;
            }
        }
        if hit {
            found.push((i + 1, line.trim().to_string()));
        }
    }
    found
}

#[test]
fn nothing_refers_to_a_folder_beside_the_checkout() {
    let root = repository_root();
    let files = repository_files(&root);
    assert!(
        files.iter().any(|f| f.ends_with("traces/README.md")),
        "the scan did not see the repository's files (root {})",
        root.display()
    );
    let mut offenders = Vec::new();
    for file in &files {
        let Ok(bytes) = std::fs::read(file) else {
            continue; // deleted in the work tree but still tracked
        };
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue; // binary (images)
        };
        for (line, what) in outside_references(text) {
            let name = file.strip_prefix(&root).unwrap_or(file);
            offenders.push(format!("{}:{line}: {what}", name.display()));
        }
    }
    assert!(
        offenders.is_empty(),
        "files refer to a folder outside the repository, which a clone does not have (use the \
         repository's traces/ or the built-in samples, sample:tpcc and sample:wsrch):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_patterns_find_every_spelling_seen() {
    let shared = "shared";
    let (t, p) = ("traces", "papers");
    for line in [
        format!("--trace ../{shared}/{t}/mqsim_tpcc-small.trace"),
        format!(".join(\"../../../{shared}/{t}\")"),
        format!("the papers (/work/{shared}/{p})"),
        format!("TRACES = Path(__file__).resolve().parents[2] / \"{shared}\" / \"{t}\""),
        format!("a folder ../{shared} beside the checkout"),
    ] {
        assert_eq!(outside_references(&line).len(), 1, "missed: {line}");
    }
    for line in [
        "a shared bus",
        "ftl.separate_gc_stream=false: a shared-gc-stream",
        "trace.device_spaces=shared",
        "traces/mqsim_tpcc-small.trace",
        "wasm-bindgen-shared",
    ] {
        assert!(outside_references(line).is_empty(), "false hit: {line}");
    }
}
