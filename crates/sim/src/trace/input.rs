//! Opening a trace file: plain, gzip or zstd (recognised by their magic bytes, not the file
//! name), read as byte lines with their line numbers, in constant memory.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
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
    SimError::Input {
        location: path.display().to_string(),
        message: e.to_string(),
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
        let mut file = File::open(path).map_err(|e| io_error(path, &e))?;
        let file_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
        let mut magic = [0u8; 4];
        let got = read_fully(&mut file, &mut magic).map_err(|e| io_error(path, &e))?;
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
                let decoder =
                    zstd::stream::read::Decoder::new(raw).map_err(|e| io_error(path, &e))?;
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

fn read_fully(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
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
