//! Opening a trace file: plain, gzip or zstd (recognised by their magic bytes, not the file
//! name), read as byte lines with their line numbers, in constant memory.
//!
//! A trace is read more than once (format detection, the replay's survey, the replay), which
//! a pipe cannot do: [`TraceInput`] reads standard input (`-`), a named pipe or any other
//! input that is not a regular file once into a temporary file (zstd-compressed unless it
//! already is compressed) that the passes then re-open. Messages keep naming the original.
//! A path `sample:NAME` is a sample trace built into flashlab ([`super::samples`]), read from
//! memory.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::SimError;

/// Read-ahead of the (decompressed) line stream.
const BUFFER_BYTES: usize = 1 << 18;
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// Compression of a trace file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }

    /// Compression chosen by a file name's extension (for writing).
    pub fn from_extension(path: &Path) -> Compression {
        match path.extension().and_then(|e| e.to_str()) {
            Some("gz") => Compression::Gzip,
            Some("zst") | Some("zstd") => Compression::Zstd,
            _ => Compression::None,
        }
    }
}

/// Error of an I/O operation on `path`, as user input error.
pub(crate) fn io_error(path: &Path, e: &io::Error) -> SimError {
    labeled_io_error(&path.display().to_string(), e)
}

/// Error of an I/O operation on the input shown as `label`.
fn labeled_io_error(label: &str, e: &io::Error) -> SimError {
    SimError::Input {
        location: label.to_string(),
        message: e.to_string(),
    }
}

/// Name of standard input in messages.
pub const STDIN_LABEL: &str = "<stdin>";

/// A trace input that can be opened as often as needed (see the module docs). Clones share
/// the temporary copy, which is deleted when the last one goes.
#[derive(Debug, Clone)]
pub struct TraceInput {
    label: String,
    source: Source,
}

/// Where a [`TraceInput`]'s bytes are.
#[derive(Debug, Clone)]
enum Source {
    /// A regular file, read in place.
    File(PathBuf),
    /// A copy of input that can be read only once, with its compression as it came (the copy
    /// may be compressed by us).
    Spooled {
        copy: Arc<tempfile::NamedTempFile>,
        compression: Compression,
    },
    /// A sample trace built into flashlab.
    Sample(&'static [u8]),
}

impl TraceInput {
    /// The input at `path` (`-`: standard input; `sample:NAME`: a built-in sample), copied
    /// once to a temporary file when it is not a regular file.
    pub fn new(path: &Path) -> Result<TraceInput, SimError> {
        if path.as_os_str() == "-" {
            return Self::spooled(STDIN_LABEL, &mut io::stdin().lock());
        }
        let label = path.display().to_string();
        if let Some(sample) = path.to_str().and_then(super::samples::lookup) {
            return Ok(TraceInput {
                label,
                source: Source::Sample(sample?.bytes),
            });
        }
        let meta = std::fs::metadata(path).map_err(|e| labeled_io_error(&label, &e))?;
        if meta.is_file() {
            return Ok(TraceInput {
                label,
                source: Source::File(path.to_path_buf()),
            });
        }
        if meta.is_dir() {
            return Err(SimError::Input {
                location: label,
                message: "is a directory, not a trace file".into(),
            });
        }
        let mut source = File::open(path).map_err(|e| labeled_io_error(&label, &e))?;
        Self::spooled(&label, &mut source)
    }

    /// Copies `source` to the end into a temporary file (compressed with zstd unless it
    /// already is compressed).
    fn spooled(label: &str, source: &mut dyn Read) -> Result<TraceInput, SimError> {
        let fail = |e: io::Error| SimError::Input {
            location: label.to_string(),
            message: format!("cannot keep a copy of the input to read it more than once: {e}"),
        };
        let mut spool = tempfile::Builder::new()
            .prefix("flashlab-trace-")
            .tempfile()
            .map_err(fail)?;
        let mut magic = [0u8; 4];
        let got = read_fully(source, &mut magic).map_err(fail)?;
        let head = &magic[..got];
        let compression = if head.starts_with(&GZIP_MAGIC) {
            Compression::Gzip
        } else if head == ZSTD_MAGIC {
            Compression::Zstd
        } else {
            Compression::None
        };
        let compressed = compression != Compression::None;
        let mut source = io::Cursor::new(head.to_vec()).chain(source);
        {
            let file = io::BufWriter::with_capacity(BUFFER_BYTES, spool.as_file_mut());
            if compressed {
                let mut file = file;
                io::copy(&mut source, &mut file).map_err(fail)?;
                file.flush().map_err(fail)?;
            } else {
                let mut encoder = zstd::stream::write::Encoder::new(file, 1).map_err(fail)?;
                io::copy(&mut source, &mut encoder).map_err(fail)?;
                encoder.finish().map_err(fail)?.flush().map_err(fail)?;
            }
        }
        Ok(TraceInput {
            label: label.to_string(),
            source: Source::Spooled {
                copy: Arc::new(spool),
                compression,
            },
        })
    }

    /// How messages name the input: its path, or `<stdin>`.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Whether the input was copied to a temporary file (it was not a regular file).
    pub fn is_spooled(&self) -> bool {
        matches!(self.source, Source::Spooled { .. })
    }

    /// Whether the input is a sample trace built into flashlab.
    pub fn is_sample(&self) -> bool {
        matches!(self.source, Source::Sample(_))
    }

    /// Compression of a spooled input as it came (`None` for a file read in place).
    pub fn spooled_compression(&self) -> Option<Compression> {
        match self.source {
            Source::Spooled { compression, .. } => Some(compression),
            _ => None,
        }
    }

    /// The input's lines from the start.
    pub fn lines(&self) -> Result<LineReader, SimError> {
        match &self.source {
            Source::File(path) => LineReader::open_as(path, &self.label),
            Source::Spooled { copy, .. } => LineReader::open_as(copy.path(), &self.label),
            Source::Sample(bytes) => LineReader::from_raw(Box::new(*bytes), bytes.len() as u64)
                .map_err(|e| labeled_io_error(&self.label, &e)),
        }
    }
}

/// Counts the bytes read from the underlying (compressed) file, for progress displays.
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Lines of a trace file, decompressed, with `\n` or `\r\n` endings removed.
pub struct LineReader {
    reader: Box<dyn BufRead + Send>,
    line: Vec<u8>,
    line_no: u64,
    compression: Compression,
    file_bytes: u64,
    consumed: Arc<AtomicU64>,
}

impl LineReader {
    /// Opens `path`, detecting compression from its first bytes.
    pub fn open(path: &Path) -> Result<LineReader, SimError> {
        Self::open_as(path, &path.display().to_string())
    }

    /// Opens `path`, naming it `label` in errors.
    fn open_as(path: &Path, label: &str) -> Result<LineReader, SimError> {
        let io_error = |e: io::Error| labeled_io_error(label, &e);
        let file = File::open(path).map_err(io_error)?;
        let file_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
        Self::from_raw(Box::new(file), file_bytes).map_err(io_error)
    }

    /// Lines of the (plain, gzip or zstd) bytes `file` of `file_bytes` bytes, compression
    /// detected from its first bytes.
    fn from_raw(mut file: Box<dyn Read + Send>, file_bytes: u64) -> io::Result<LineReader> {
        let mut magic = [0u8; 4];
        let got = read_fully(&mut file, &mut magic)?;
        let compression = if got >= 2 && magic[..2] == GZIP_MAGIC {
            Compression::Gzip
        } else if got == 4 && magic == ZSTD_MAGIC {
            Compression::Zstd
        } else {
            Compression::None
        };
        let consumed = Arc::new(AtomicU64::new(0));
        let raw = Counting {
            inner: io::Cursor::new(magic[..got].to_vec()).chain(file),
            count: consumed.clone(),
        };
        let reader: Box<dyn BufRead + Send> = match compression {
            Compression::None => Box::new(BufReader::with_capacity(BUFFER_BYTES, raw)),
            Compression::Gzip => Box::new(BufReader::with_capacity(
                BUFFER_BYTES,
                flate2::read::MultiGzDecoder::new(BufReader::new(raw)),
            )),
            Compression::Zstd => {
                let decoder = zstd::stream::read::Decoder::new(raw)?;
                Box::new(BufReader::with_capacity(BUFFER_BYTES, decoder))
            }
        };
        Ok(LineReader {
            reader,
            line: Vec::with_capacity(256),
            line_no: 0,
            compression,
            file_bytes,
            consumed,
        })
    }

    /// A reader over lines held in memory (tests, benchmarks).
    pub fn from_bytes(bytes: Vec<u8>) -> LineReader {
        let consumed = Arc::new(AtomicU64::new(0));
        let file_bytes = bytes.len() as u64;
        let raw = Counting {
            inner: io::Cursor::new(bytes),
            count: consumed.clone(),
        };
        LineReader {
            reader: Box::new(BufReader::with_capacity(BUFFER_BYTES, raw)),
            line: Vec::with_capacity(256),
            line_no: 0,
            compression: Compression::None,
            file_bytes,
            consumed,
        }
    }

    /// The next line without its terminator and its number (1-based), `None` at the end.
    pub fn next_line(&mut self) -> io::Result<Option<(u64, &[u8])>> {
        self.line.clear();
        if self.reader.read_until(b'\n', &mut self.line)? == 0 {
            return Ok(None);
        }
        self.line_no += 1;
        let mut end = self.line.len();
        if end > 0 && self.line[end - 1] == b'\n' {
            end -= 1;
        }
        if end > 0 && self.line[end - 1] == b'\r' {
            end -= 1;
        }
        Ok(Some((self.line_no, &self.line[..end])))
    }

    /// Number of the line last returned (1-based).
    pub fn line_no(&self) -> u64 {
        self.line_no
    }

    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Size of the file on disk and how much of it has been read (compressed bytes).
    pub fn file_progress(&self) -> (u64, u64) {
        (self.consumed.load(Ordering::Relaxed), self.file_bytes)
    }
}

fn read_fully(file: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_both_line_endings_and_counts_lines() {
        let mut r = LineReader::from_bytes(b"a,b\r\nc\n\nlast".to_vec());
        assert_eq!(r.next_line().unwrap(), Some((1, &b"a,b"[..])));
        assert_eq!(r.next_line().unwrap(), Some((2, &b"c"[..])));
        assert_eq!(r.next_line().unwrap(), Some((3, &b""[..])));
        assert_eq!(r.next_line().unwrap(), Some((4, &b"last"[..])));
        assert_eq!(r.line_no(), 4);
        assert_eq!(r.next_line().unwrap(), None);
    }
}
