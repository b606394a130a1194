//! Result files, written as what their path names allows. Every output of the command line
//! (`--json`, `--timeseries-csv`, `trace stats --json`, `trace convert`, `trace generate
//! --out`, `bench --json`, the files of `experiment` and `reproduce`) is opened here:
//!
//! - A regular file, or no file yet: written whole or not at all. The data goes to a temporary
//!   file in the same folder and only a complete file is renamed into place: a full disk or a
//!   failed run leaves the previous file (or none), never a truncated one. A replaced file
//!   keeps its permissions.
//! - A symbolic link: followed to the file it names, which is replaced as above; the link
//!   stays a link (one that names a device or a pipe is written through, as below).
//! - Standard output (`-`, `/dev/stdout`, `/dev/fd/1`): written as it comes; the commands
//!   then print their tables to standard error ([`Output::is_stdout`]).
//! - Another descriptor of this process (`/dev/fd/N`, what `--json >(jq .)` gives): a
//!   duplicate of the descriptor, written as it comes.
//! - Anything else (a character device such as /dev/null or /dev/full, a named pipe, a socket,
//!   another process's descriptor): written through. It is opened for writing, never created,
//!   truncated or replaced, and only when the data is ready: opening a named pipe waits for its
//!   reader, and a check that opened and closed it would hand the reader an end of file
//!   before the data. Its permission is checked up front without opening it.
//!
//! An output path is checked before the work that produces it (a long run must not end in
//! "cannot write"), and every failed write, flush or rename is an [`OutputError`] naming the
//! path (exit code 74). [`refuse_clashes`] refuses an output that is one of the command's
//! inputs or another of its outputs (exit code 2).

mod clash;

pub use clash::{refuse_clashes, Named};

use std::fmt;
use std::fs::{self, File, Metadata, OpenOptions};
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

    fn io(path: &Path, error: &io::Error) -> Self {
        OutputError::new(path, io_message(error))
    }
}

/// An I/O error's words, without the " (os error N)" the standard library appends.
pub(crate) fn io_message(error: &io::Error) -> String {
    let text = error.to_string();
    match text.rfind(" (os error ") {
        Some(end) if text.ends_with(')') => text[..end].to_string(),
        _ => text,
    }
}

/// Whether `path` is `-`, the name of standard output (and of standard input for an input).
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The most symbolic links followed from an output path (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// What an output path names, its symbolic links followed.
#[derive(Debug)]
enum Destination {
    /// This process's standard output.
    Stdout,
    /// Another descriptor of this process.
    Descriptor(i32),
    /// A regular file (`existing`), or no file yet, at `path`: the path given, or the file
    /// its symbolic links lead to.
    File {
        path: PathBuf,
        existing: Option<Metadata>,
    },
    /// A folder: not an output.
    Directory,
    /// A device, a named pipe (`fifo`), a socket or another process's descriptor.
    Stream { fifo: bool },
}

impl Destination {
    fn of(path: &Path) -> io::Result<Destination> {
        if is_stdout(path) {
            return Ok(Destination::Stdout);
        }
        let mut current = path.to_path_buf();
        for _ in 0..MAX_LINKS {
            let meta = match fs::symlink_metadata(&current) {
                Ok(meta) => meta,
                // A new file, or one under a path that is not a folder (its folder check
                // says which part is a file).
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                    ) =>
                {
                    // `/dev/fd/N` of a descriptor that is not open is not a new file.
                    return Ok(descriptor_link(&current).unwrap_or(Destination::File {
                        path: current,
                        existing: None,
                    }));
                }
                Err(e) => return Err(e),
            };
            let kind = meta.file_type();
            if kind.is_symlink() {
                if let Some(descriptor) = descriptor_link(&current) {
                    return Ok(descriptor);
                }
                let target = fs::read_link(&current)?;
                // Relative to the link's folder (an absolute target replaces the path).
                current = match current.parent() {
                    Some(dir) => dir.join(target),
                    None => target,
                };
            } else if kind.is_file() {
                return Ok(Destination::File {
                    path: current,
                    existing: Some(meta),
                });
            } else if kind.is_dir() {
                return Ok(Destination::Directory);
            } else {
                return Ok(Destination::Stream {
                    fifo: is_fifo(&kind),
                });
            }
        }
        Err(io::Error::other("too many levels of symbolic links"))
    }
}

/// What an entry of a `/proc/PID/fd` folder names (`/dev/fd/N`, `/dev/stdout` and
/// `/proc/self/fd/N` lead there): a descriptor of this process, or another process's, which
/// is written through its path. `None` for any other path.
fn descriptor_link(link: &Path) -> Option<Destination> {
    let dir = match link.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let dir = fs::canonicalize(dir).ok()?;
    let fd: i32 = link.file_name()?.to_str()?.parse().ok()?;
    let parts: Vec<&str> = dir.iter().filter_map(|c| c.to_str()).collect();
    let pid = match parts.as_slice() {
        ["/", "proc", pid, "fd"] | ["/", "proc", pid, "task", _, "fd"] => *pid,
        _ => return None,
    };
    Some(if pid == std::process::id().to_string() {
        match fd {
            1 => Destination::Stdout,
            _ => Destination::Descriptor(fd),
        }
    } else {
        Destination::Stream { fifo: false }
    })
}

#[cfg(unix)]
fn is_fifo(kind: &fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    kind.is_fifo()
}

#[cfg(not(unix))]
fn is_fifo(_: &fs::FileType) -> bool {
    false
}

/// A duplicate of this process's descriptor `fd`, which must be open for writing.
#[cfg(unix)]
fn duplicate(fd: i32) -> io::Result<File> {
    use std::os::fd::{FromRawFd, OwnedFd};
    // SAFETY: F_GETFL reads a descriptor's flags; a closed descriptor gives EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::other(format!("descriptor {fd} is not open")));
    }
    if flags & libc::O_ACCMODE == libc::O_RDONLY {
        return Err(io::Error::other(format!(
            "descriptor {fd} is open for reading only"
        )));
    }
    // SAFETY: F_DUPFD_CLOEXEC makes a new descriptor (or fails); the original is untouched.
    let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if copy < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `copy` is a new open descriptor that nothing else owns.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(copy) }))
}

#[cfg(not(unix))]
fn duplicate(fd: i32) -> io::Result<File> {
    Err(io::Error::other(format!(
        "descriptor {fd}: descriptors are written on Unix only"
    )))
}

/// Whether this process may write `path`, asked without opening it.
#[cfg(unix)]
fn check_writable(path: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::other("the path holds a NUL byte"))?;
    // SAFETY: a valid NUL-terminated path; access only reads it.
    if unsafe { libc::access(c_path.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(unix))]
fn check_writable(_: &Path) -> io::Result<()> {
    Ok(())
}

/// A device or named pipe, opened for writing at the first write or at the commit.
struct Through {
    path: PathBuf,
    fifo: bool,
    file: Option<BufWriter<File>>,
}

impl Through {
    fn file(&mut self) -> io::Result<&mut BufWriter<File>> {
        if self.file.is_none() {
            let mut options = OpenOptions::new();
            options.write(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                // A terminal written to must not become the controlling one.
                options.custom_flags(libc::O_NOCTTY);
            }
            self.file = Some(BufWriter::new(options.open(&self.path)?));
        }
        Ok(self.file.as_mut().expect("opened above"))
    }
}

impl Drop for Through {
    /// A reader waiting on a named pipe never opened (the command failed before its output)
    /// gets an end of file instead of waiting for ever; without a reader there is none to
    /// release (the non-blocking open fails and is ignored).
    fn drop(&mut self) {
        #[cfg(unix)]
        if self.fifo && self.file.is_none() {
            use std::os::unix::fs::OpenOptionsExt;
            let _ = OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&self.path);
        }
    }
}

enum Target {
    Stdout(BufWriter<io::Stdout>),
    /// A temporary file renamed over `destination` (the file the path leads to) at the commit.
    Replace {
        file: BufWriter<NamedTempFile>,
        destination: PathBuf,
    },
    Descriptor(BufWriter<File>),
    Through(Through),
}

/// An output being written; [`Output::commit`] completes it.
pub struct Output {
    path: PathBuf,
    target: Target,
}

impl Output {
    /// Checks that `path` can be written and prepares it (see the module documentation):
    /// opens a temporary file next to a regular file, duplicates a descriptor, checks the
    /// permission of a device or pipe.
    pub fn create(path: &Path) -> Result<Output, OutputError> {
        let fail = |e: io::Error| OutputError::io(path, &e);
        let target = match Destination::of(path).map_err(fail)? {
            Destination::Stdout => Target::Stdout(BufWriter::new(io::stdout())),
            Destination::Descriptor(fd) => {
                Target::Descriptor(BufWriter::new(duplicate(fd).map_err(fail)?))
            }
            Destination::Directory => return Err(OutputError::new(path, "it is a directory")),
            Destination::Stream { fifo } => {
                check_writable(path).map_err(fail)?;
                Target::Through(Through {
                    path: path.to_path_buf(),
                    fifo,
                    file: None,
                })
            }
            Destination::File {
                path: destination,
                existing,
            } => replacement(path, destination, existing.as_ref())?,
        };
        Ok(Output {
            path: path.to_path_buf(),
            target,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this output is standard output (`-`, `/dev/stdout`, `/dev/fd/1`).
    pub fn is_stdout(&self) -> bool {
        matches!(self.target, Target::Stdout(_))
    }

    /// Completes the output: a file is flushed to disk and renamed into place, anything else
    /// flushed (a pipe or device written to nothing yet is opened first, so that its reader
    /// gets an empty output).
    pub fn commit(self) -> Result<(), OutputError> {
        let Output { path, target } = self;
        let fail = |e: io::Error| OutputError::io(&path, &e);
        match target {
            Target::Stdout(mut out) => out.flush().map_err(fail),
            Target::Descriptor(mut out) => out.flush().map_err(fail),
            Target::Through(mut through) => through.file().and_then(Write::flush).map_err(fail),
            Target::Replace { file, destination } => {
                let file = file.into_inner().map_err(|e| fail(e.into_error()))?;
                file.as_file().sync_all().map_err(fail)?;
                file.persist(&destination)
                    .map(drop)
                    .map_err(|e| fail(e.error))
            }
        }
    }

    /// Writes `bytes` as the whole output and commits it.
    pub fn write_whole(mut self, bytes: &[u8]) -> Result<(), OutputError> {
        self.write_all(bytes)
            .map_err(|e| OutputError::io(&self.path, &e))?;
        self.commit()
    }
}

/// The temporary file that replaces `destination` (the file `path` names), in its folder;
/// an existing file's permissions are kept.
fn replacement(
    path: &Path,
    destination: PathBuf,
    existing: Option<&Metadata>,
) -> Result<Target, OutputError> {
    let dir = match destination.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if let Some(why) = crate::io_messages::unusable_folder(dir) {
        let linked = if destination == path {
            String::new()
        } else {
            format!("it links to {}, and ", destination.display())
        };
        return Err(OutputError::new(path, format!("{linked}{why}")));
    }
    let name = destination.file_name().map_or_else(
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
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    // The error's kind only (its text names the temporary file), and where it happened.
    let file = builder.tempfile_in(dir).map_err(|e| {
        OutputError::new(
            path,
            format!(
                "{} (a complete output is renamed into place from a temporary file there)",
                crate::io_messages::cannot_create_in(dir, &e)
            ),
        )
    })?;
    if let Some(existing) = existing {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = existing.permissions().mode() & 0o777;
            file.as_file()
                .set_permissions(fs::Permissions::from_mode(mode))
                .map_err(|e| OutputError::io(path, &e))?;
        }
        #[cfg(not(unix))]
        let _ = existing;
    }
    Ok(Target::Replace {
        file: BufWriter::with_capacity(1 << 18, file),
        destination,
    })
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.target {
            Target::Stdout(w) => w.write(buf),
            Target::Replace { file, .. } => file.write(buf),
            Target::Descriptor(w) => w.write(buf),
            Target::Through(t) => t.file()?.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.target {
            Target::Stdout(w) => w.flush(),
            Target::Replace { file, .. } => file.flush(),
            Target::Descriptor(w) => w.flush(),
            Target::Through(t) => t.file()?.flush(),
        }
    }
}
