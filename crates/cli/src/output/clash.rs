//! Outputs that would destroy an input or another output: `run --trace t --json t`,
//! `run -c cfg.toml --json cfg.toml`, `trace stats t --json t`, `trace convert t t`, or
//! `run --json x --timeseries-csv x` (the JSON would replace the CSV). Every command gives its
//! inputs and outputs to [`refuse_clashes`] before any work runs.
//!
//! Two paths clash when they are the same regular file by device and inode, whatever the names,
//! hard links or symbolic links (an output's links are followed, as [`super::Output`] replaces
//! the file they lead to; an input `-` is the file standard input is redirected from, if any);
//! two outputs not yet there clash when they are the same path once canonical; two outputs
//! clash on standard output. Devices, pipes and descriptors are written through, never
//! replaced, so they clash with nothing: one terminal can be both the trace's standard input
//! and the JSON's output, and `--json /dev/null --timeseries-csv /dev/null` is fine.

use std::fs::{self, Metadata};
use std::path::{Path, PathBuf};

use flashlab_sim::SimError;

use super::{is_stdout, Destination};

/// A file a command reads or writes, and the option (or argument) that names it.
#[derive(Debug, Clone, Copy)]
pub struct Named<'a> {
    /// As the user wrote it: `--json`, `--trace`, `trace.path`, `FILE`.
    pub option: &'a str,
    pub path: &'a Path,
}

impl Named<'_> {
    fn describe(&self) -> String {
        if is_stdout(self.path) {
            format!("{} - (standard input, redirected from it)", self.option)
        } else {
            format!("{} {}", self.option, self.path.display())
        }
    }
}

/// What a path is, for telling whether writing one destroys another.
#[derive(Debug, PartialEq, Eq)]
enum Identity {
    StandardOutput,
    File {
        device: u64,
        inode: u64,
    },
    /// An output not there yet, by its canonical path.
    NewFile(PathBuf),
    /// A device, pipe or descriptor (written through), or a path that cannot be resolved
    /// (its own error comes when it is opened): clashes with nothing.
    Stream,
}

impl Identity {
    fn clashes(&self, other: &Identity) -> bool {
        *self != Identity::Stream && self == other
    }
}

#[cfg(unix)]
fn file_identity(meta: &Metadata) -> Identity {
    use std::os::unix::fs::MetadataExt;
    Identity::File {
        device: meta.dev(),
        inode: meta.ino(),
    }
}

#[cfg(not(unix))]
fn file_identity(_: &Metadata) -> Identity {
    Identity::Stream
}

/// An input: the regular file it is (`-`: the file standard input is redirected from).
fn input_identity(path: &Path) -> Identity {
    let meta = if is_stdout(path) {
        fs::metadata("/dev/stdin")
    } else {
        fs::metadata(path)
    };
    match meta {
        Ok(meta) if meta.is_file() => file_identity(&meta),
        _ => Identity::Stream,
    }
}

/// An output: what [`super::Output`] would write, its symbolic links followed.
fn output_identity(path: &Path) -> Identity {
    match Destination::of(path) {
        Ok(Destination::Stdout) => Identity::StandardOutput,
        Ok(Destination::File {
            existing: Some(meta),
            ..
        }) => file_identity(&meta),
        Ok(Destination::File {
            path,
            existing: None,
        }) => new_file_identity(&path),
        _ => Identity::Stream,
    }
}

fn new_file_identity(path: &Path) -> Identity {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match (fs::canonicalize(dir), path.file_name()) {
        (Ok(dir), Some(name)) => Identity::NewFile(dir.join(name)),
        _ => Identity::Stream,
    }
}

/// Refuses (exit code 2) an output that is one of the `inputs` or an earlier output, naming
/// both options; call it before any work runs.
pub fn refuse_clashes(inputs: &[Named], outputs: &[Named]) -> Result<(), SimError> {
    let inputs: Vec<(&Named, Identity)> =
        inputs.iter().map(|n| (n, input_identity(n.path))).collect();
    let outputs: Vec<(&Named, Identity)> = outputs
        .iter()
        .map(|n| (n, output_identity(n.path)))
        .collect();
    let another_name = |a: &Named, b: &Named| {
        if a.path == b.path || is_stdout(a.path) {
            ""
        } else {
            " (by another name)"
        }
    };
    for (i, (output, identity)) in outputs.iter().enumerate() {
        let location = format!("{} {}", output.option, output.path.display());
        if let Some((input, _)) = inputs.iter().find(|(_, id)| id.clashes(identity)) {
            return Err(SimError::Input {
                location,
                message: format!(
                    "the same file as the input {}{}: writing it would destroy the data being read; choose another output",
                    input.describe(),
                    another_name(input, output)
                ),
            });
        }
        if let Some((earlier, _)) = outputs[..i].iter().find(|(_, id)| id.clashes(identity)) {
            let message = if *identity == Identity::StandardOutput {
                format!(
                    "{} also writes to standard output: send one of them to a file",
                    earlier.option
                )
            } else {
                format!(
                    "the same file as the output {} {}{}: one would replace the other; give each output its own file",
                    earlier.option,
                    earlier.path.display(),
                    another_name(earlier, output)
                )
            };
            return Err(SimError::Input { location, message });
        }
    }
    Ok(())
}
