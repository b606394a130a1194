//! Result files written whole or not at all. An output path is checked before the work that
//! produces it (a long run must not end in "cannot write"), the data goes to a temporary file
//! in the same directory, and only a complete file is renamed into place: a full disk or a
//! failed run leaves the previous file (or none), never a truncated one. `-` is standard
//! output, written as it comes.

use std::fmt;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

/// An output that could not be prepared or written.
#[derive(Debug)]
pub struct OutputError {
    path: PathBuf,
    message: String,
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot write {}: {}", self.path.display(), self.message)
    }
}

impl OutputError {
    fn new(path: &Path, message: impl ToString) -> Self {
        OutputError {
            path: path.to_path_buf(),
            message: message.to_string(),
        }
    }
}

enum Target {
    Stdout(BufWriter<io::Stdout>),
    File(BufWriter<NamedTempFile>),
}

/// A file (or standard output) being written; [`Output::commit`] puts it in place.
pub struct Output {
    path: PathBuf,
    target: Target,
}

/// Whether `path` means standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

impl Output {
    /// Checks that `path` can be written and opens a temporary file next to it.
    pub fn create(path: &Path) -> Result<Output, OutputError> {
        if is_stdout(path) {
            return Ok(Output {
                path: path.to_path_buf(),
                target: Target::Stdout(BufWriter::new(io::stdout())),
            });
        }
        if path.is_dir() {
            return Err(OutputError::new(path, "it is a directory"));
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if let Some(why) = crate::io_messages::unusable_folder(dir) {
            return Err(OutputError::new(path, why));
        }
        let name = path.file_name().map_or_else(
            || String::from("output"),
            |n| n.to_string_lossy().into_owned(),
        );
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".partial");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // As a plain create would (the umask applies), not the temporary file's 0600.
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        // Not the error's text: it names the temporary file.
        let file = builder
            .tempfile_in(dir)
            .map_err(|e| OutputError::new(path, crate::io_messages::cannot_create_in(dir, &e)))?;
        Ok(Output {
            path: path.to_path_buf(),
            target: Target::File(BufWriter::with_capacity(1 << 18, file)),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn is_stdout(&self) -> bool {
        matches!(self.target, Target::Stdout(_))
    }

    /// Flushes the data to disk and renames the file into place (or flushes standard output).
    pub fn commit(self) -> Result<(), OutputError> {
        let path = self.path;
        match self.target {
            Target::Stdout(mut out) => out.flush().map_err(|e| OutputError::new(&path, e)),
            Target::File(out) => {
                let file = out
                    .into_inner()
                    .map_err(|e| OutputError::new(&path, e.error()))?;
                file.as_file()
                    .sync_all()
                    .map_err(|e| OutputError::new(&path, e))?;
                file.persist(&path)
                    .map(|_| ())
                    .map_err(|e| OutputError::new(&path, e.error))
            }
        }
    }

    /// Writes `bytes` as the whole output and commits it.
    pub fn write_whole(mut self, bytes: &[u8]) -> Result<(), OutputError> {
        self.write_all(bytes)
            .map_err(|e| OutputError::new(&self.path, e))?;
        self.commit()
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.target {
            Target::Stdout(w) => w.write(buf),
            Target::File(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.target {
            Target::Stdout(w) => w.flush(),
            Target::File(w) => w.flush(),
        }
    }
}

/// Refuses an output that is the input file itself (same device and inode, whatever the
/// names, links or symlinks): writing it would destroy what is being read.
pub fn refuse_overwriting_input(input: &Path, output: &Path) -> Result<(), OutputError> {
    if is_stdout(output) {
        return Ok(());
    }
    let input_meta = if is_stdout(input) {
        std::fs::metadata("/dev/stdin")
    } else {
        std::fs::metadata(input)
    };
    let (Ok(a), Ok(b)) = (input_meta, std::fs::metadata(output)) else {
        return Ok(());
    };
    if same_file(&a, &b) {
        return Err(OutputError::new(
            output,
            format!(
                "it is the input file {} (writing it would destroy the data being read); choose another output",
                input.display()
            ),
        ));
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    false
}
