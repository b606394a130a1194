//! Opening a trace file: plain, gzip or zstd (recognised by their magic bytes, not the file
//! name), read as byte lines with their line numbers, in constant memory.
//!
//! A trace is read more than once (format detection, the replay's survey, the replay), which
//! a pipe cannot do: [`TraceInput`] reads standard input (`-`), a named pipe or any other
//! input that is not a regular file once into a temporary file (zstd-compressed unless it
//! already is compressed) that the passes then read again. Messages keep naming the original.
//! A path `sample:NAME` is a sample trace built into flashlab ([`super::samples`]), read from
//! memory.
//! The temporary file has no name from the start (removed as soon as it is created, kept
//! through its open handle), so nothing is left behind however the process ends (Ctrl-C,
//! SIGTERM, a crash). While an uncompressed input is copied, it is checked to be text: a NUL
//! byte or a line longer than [`MAX_LINE_BYTES`] ends the copy with an error naming the line
//! (`--trace /dev/zero` is refused at once instead of filling the disk).
//!
//! Lines: a UTF-8 byte-order mark before the first line is skipped; a line longer than
//! [`MAX_LINE_BYTES`] is an error (memory stays bounded on a file without line breaks).
//! Gzip: consecutive members are one stream (as `gzip -d`); bytes after the last member are
//! ignored, silently when they are zeros (padding), else counted for a warning ("trailing
//! garbage ignored", as `gzip -d` says).

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

/// Error of an I/O operation on the input shown as `label`.
fn labeled_io_error(label: &str, e: &io::Error) -> SimError {
    SimError::Input {
        location: label.to_string(),
        message: e.to_string(),
    }
}

/// Name of standard input in messages.
pub const STDIN_LABEL: &str = "<stdin>";

/// Longest line read (bytes, without its line break): far above any real trace line, small
/// enough that a file without line breaks is refused before it costs memory.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Where a [`TraceInput`]'s bytes are.
#[derive(Debug, Clone)]
enum Stored {
    /// A regular file, read in place.
    File(PathBuf),
    /// A copy in an unnamed temporary file, shared by every reader (each reads it from the
    /// start at its own position).
    Spool(Arc<File>),
    /// A sample trace built into flashlab ([`super::samples`]), read from memory.
    Sample(&'static [u8]),
}

/// A trace input that can be opened as often as needed (see the module docs). Clones share
/// the temporary copy, which goes when the last one goes (it has no name on disk).
#[derive(Debug, Clone)]
pub struct TraceInput {
    label: String,
    stored: Stored,
    /// Compression of a spooled input as it came (the copy may be compressed by us).
    spooled_compression: Option<Compression>,
}

impl TraceInput {
    /// The input at `path` (`-`: standard input), copied once to a temporary file when it is
    /// not a regular file.
    pub fn new(path: &Path) -> Result<TraceInput, SimError> {
        if path.as_os_str() == "-" {
            return Self::spooled(STDIN_LABEL, &mut io::stdin().lock());
        }
        let label = path.display().to_string();
        if let Some(sample) = path.to_str().and_then(super::samples::lookup) {
            return Ok(TraceInput {
                label,
                stored: Stored::Sample(sample?.bytes),
                spooled_compression: None,
            });
        }
        let meta = std::fs::metadata(path).map_err(|e| labeled_io_error(&label, &e))?;
        if meta.is_file() {
            return Ok(TraceInput {
                label,
                stored: Stored::File(path.to_path_buf()),
                spooled_compression: None,
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

    /// Copies `source` to the end into an unnamed temporary file (compressed with zstd
    /// unless it already is compressed; an uncompressed one checked to be text on the way).
    fn spooled(label: &str, source: &mut dyn Read) -> Result<TraceInput, SimError> {
        let fail = |e: io::Error| match not_text_line(&e) {
            // Not text: the line it failed on, as a parse error would name it.
            Some((line, what)) => SimError::Input {
                location: format!("{label}:{line}"),
                message: format!("not a text trace: {what}"),
            },
            None => SimError::Input {
                location: label.to_string(),
                message: format!("cannot keep a copy of the input to read it more than once: {e}"),
            },
        };
        // Unnamed from the start: nothing to remove when the process is interrupted.
        let mut spool = tempfile::tempfile().map_err(fail)?;
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
            let file = io::BufWriter::with_capacity(BUFFER_BYTES, &mut spool);
            if compressed {
                let mut file = file;
                io::copy(&mut source, &mut file).map_err(fail)?;
                file.flush().map_err(fail)?;
            } else {
                let mut text = TextCheck::new(source);
                let mut encoder = zstd::stream::write::Encoder::new(file, 1).map_err(fail)?;
                io::copy(&mut text, &mut encoder).map_err(fail)?;
                encoder.finish().map_err(fail)?.flush().map_err(fail)?;
            }
        }
        Ok(TraceInput {
            label: label.to_string(),
            stored: Stored::Spool(Arc::new(spool)),
            spooled_compression: Some(compression),
        })
    }

    /// How messages name the input: its path, or `<stdin>`.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Whether the input was copied to a temporary file (it was not a regular file).
    pub fn is_spooled(&self) -> bool {
        matches!(self.stored, Stored::Spool(_))
    }

    /// Whether the input is a sample trace built into flashlab.
    pub fn is_sample(&self) -> bool {
        matches!(self.stored, Stored::Sample(_))
    }

    /// Compression of a spooled input as it came (`None` for a file read in place).
    pub fn spooled_compression(&self) -> Option<Compression> {
        self.spooled_compression
    }

    /// The input's lines from the start.
    pub fn lines(&self) -> Result<LineReader, SimError> {
        match &self.stored {
            Stored::File(path) => LineReader::open_as(path, &self.label),
            Stored::Spool(file) => {
                let io_error = |e: io::Error| labeled_io_error(&self.label, &e);
                let file_bytes = file.metadata().map_err(io_error)?.len();
                let raw = ReadAt {
                    file: file.clone(),
                    position: 0,
                };
                LineReader::from_raw(Box::new(raw), file_bytes).map_err(io_error)
            }
            Stored::Sample(bytes) => LineReader::from_raw(Box::new(*bytes), bytes.len() as u64)
                .map_err(|e| labeled_io_error(&self.label, &e)),
        }
    }
}

/// Checks text on its way to the spool: a NUL byte or a line longer than [`MAX_LINE_BYTES`]
/// is an error (`InvalidData`) naming the line, which [`TextCheck::error_line`] gives back.
struct TextCheck<R> {
    inner: R,
    /// Line being read (1-based) and its bytes so far.
    line: u64,
    line_bytes: usize,
}

/// Prefix of a [`TextCheck`] error's message, before the line number.
const NOT_TEXT_AT: &str = "not a text trace at line ";

/// The line a [`TextCheck`] error is about and what is wrong (None for other errors).
fn not_text_line(e: &io::Error) -> Option<(u64, String)> {
    let text = e.to_string();
    let (line, what) = text.strip_prefix(NOT_TEXT_AT)?.split_once(": ")?;
    Some((line.parse().ok()?, what.to_string()))
}

impl<R: Read> TextCheck<R> {
    fn new(inner: R) -> Self {
        TextCheck {
            inner,
            line: 1,
            line_bytes: 0,
        }
    }

    fn not_text(&self, what: &str) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{NOT_TEXT_AT}{}: {what}", self.line),
        )
    }
}

impl<R: Read> Read for TextCheck<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        for &byte in &buf[..n] {
            match byte {
                b'\n' => {
                    self.line += 1;
                    self.line_bytes = 0;
                }
                0 => return Err(self.not_text("a NUL byte (binary data, such as /dev/zero)")),
                _ => {
                    self.line_bytes += 1;
                    if self.line_bytes > MAX_LINE_BYTES {
                        return Err(self.not_text(&format!(
                            "more than {} MiB without a line break",
                            MAX_LINE_BYTES >> 20
                        )));
                    }
                }
            }
        }
        Ok(n)
    }
}

/// Reads a shared file from its own position (positioned reads: readers of one file do not
/// move each other).
struct ReadAt {
    file: Arc<File>,
    position: u64,
}

impl Read for ReadAt {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(&*self.file, buf, self.position)?;
        #[cfg(windows)]
        let n = std::os::windows::fs::FileExt::seek_read(&*self.file, buf, self.position)?;
        self.position += n as u64;
        Ok(n)
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

/// A gzip stream of one or more members (as `gzip -d` reads it): after the last member,
/// zeros (padding) are skipped silently and other bytes are skipped and counted
/// (`ignored`), where a plain multi-member decoder would fail on them.
struct GzipMembers<R: BufRead> {
    state: GzipState<R>,
    ignored: Arc<AtomicU64>,
}

enum GzipState<R: BufRead> {
    Member(Box<flate2::bufread::GzDecoder<R>>),
    Between(R),
    Done,
}

impl<R: BufRead> GzipMembers<R> {
    fn new(inner: R, ignored: Arc<AtomicU64>) -> Self {
        GzipMembers {
            state: GzipState::Between(inner),
            ignored,
        }
    }
}

impl<R: BufRead> Read for GzipMembers<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match std::mem::replace(&mut self.state, GzipState::Done) {
                GzipState::Member(mut member) => {
                    let n = member.read(buf)?;
                    if n > 0 || buf.is_empty() {
                        self.state = GzipState::Member(member);
                        return Ok(n);
                    }
                    self.state = GzipState::Between(member.into_inner());
                }
                GzipState::Between(mut inner) => {
                    let head = inner.fill_buf()?;
                    if head.is_empty() {
                        return Ok(0);
                    }
                    if head[0] == GZIP_MAGIC[0] {
                        // A member's header (a bad one is reported by the decoder).
                        self.state =
                            GzipState::Member(Box::new(flate2::bufread::GzDecoder::new(inner)));
                        continue;
                    }
                    // Trailing bytes after the last member: skipped to the end, and
                    // counted unless they are all zeros (padding).
                    let (mut total, mut nonzero) = (0u64, false);
                    loop {
                        let rest = inner.fill_buf()?;
                        if rest.is_empty() {
                            break;
                        }
                        nonzero |= rest.iter().any(|&b| b != 0);
                        let len = rest.len();
                        total += len as u64;
                        inner.consume(len);
                    }
                    if nonzero {
                        self.ignored.fetch_add(total, Ordering::Relaxed);
                    }
                    return Ok(0);
                }
                GzipState::Done => return Ok(0),
            }
        }
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
    /// Bytes after the last gzip member that were not padding (ignored).
    ignored_trailing: Arc<AtomicU64>,
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

    /// Lines of `raw`, `file_bytes` long, decompressed as its first bytes say.
    fn from_raw(mut raw: Box<dyn Read + Send>, file_bytes: u64) -> io::Result<LineReader> {
        let mut magic = [0u8; 4];
        let got = read_fully(&mut raw, &mut magic)?;
        let compression = if got >= 2 && magic[..2] == GZIP_MAGIC {
            Compression::Gzip
        } else if got == 4 && magic == ZSTD_MAGIC {
            Compression::Zstd
        } else {
            Compression::None
        };
        let consumed = Arc::new(AtomicU64::new(0));
        let ignored_trailing = Arc::new(AtomicU64::new(0));
        let raw = Counting {
            inner: io::Cursor::new(magic[..got].to_vec()).chain(raw),
            count: consumed.clone(),
        };
        let reader: Box<dyn BufRead + Send> = match compression {
            Compression::None => Box::new(BufReader::with_capacity(BUFFER_BYTES, raw)),
            Compression::Gzip => Box::new(BufReader::with_capacity(
                BUFFER_BYTES,
                GzipMembers::new(BufReader::new(raw), ignored_trailing.clone()),
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
            ignored_trailing,
        })
    }

    /// A reader over lines held in memory (tests, benchmarks).
    pub fn from_bytes(bytes: Vec<u8>) -> LineReader {
        let file_bytes = bytes.len() as u64;
        Self::from_raw(Box::new(io::Cursor::new(bytes)), file_bytes)
            .expect("reading memory does not fail")
    }

    /// The next line without its terminator and its number (1-based), `None` at the end.
    /// A byte-order mark before the first line is skipped; a line longer than
    /// [`MAX_LINE_BYTES`] is an error (`InvalidData`). An error is about line
    /// [`LineReader::line_no`] + 1.
    pub fn next_line(&mut self) -> io::Result<Option<(u64, &[u8])>> {
        self.line.clear();
        let read = read_line_bounded(&mut self.reader, &mut self.line, MAX_LINE_BYTES + 2)?;
        if read == 0 {
            return Ok(None);
        }
        let mut end = self.line.len();
        if end > 0 && self.line[end - 1] == b'\n' {
            end -= 1;
        }
        if end > 0 && self.line[end - 1] == b'\r' {
            end -= 1;
        }
        // Errors are about line `line_no + 1`, the one being read.
        if end > MAX_LINE_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "longer than {} MiB without a line break: not a text trace",
                    MAX_LINE_BYTES >> 20
                ),
            ));
        }
        self.line_no += 1;
        let start = if self.line_no == 1 && self.line[..end].starts_with(UTF8_BOM) {
            UTF8_BOM.len()
        } else {
            0
        };
        Ok(Some((self.line_no, &self.line[start..end])))
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

    /// Bytes after the last gzip member that were skipped and were not zero padding (so far).
    pub fn ignored_trailing_bytes(&self) -> u64 {
        self.ignored_trailing.load(Ordering::Relaxed)
    }
}

/// `BufRead::read_until(b'\n')` that stops once `line` holds more than `max` bytes (what
/// follows is left unread): memory stays bounded on input without line breaks. The bytes
/// read.
fn read_line_bounded(
    reader: &mut dyn BufRead,
    line: &mut Vec<u8>,
    max: usize,
) -> io::Result<usize> {
    let mut read = 0;
    loop {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let (done, used) = match memchr::memchr(b'\n', available) {
            Some(at) => {
                line.extend_from_slice(&available[..=at]);
                (true, at + 1)
            }
            None => {
                line.extend_from_slice(available);
                (available.is_empty(), available.len())
            }
        };
        reader.consume(used);
        read += used;
        if done || line.len() > max {
            return Ok(read);
        }
    }
}

/// The UTF-8 byte-order mark some editors put at the start of a text file.
const UTF8_BOM: &[u8] = &[0xef, 0xbb, 0xbf];

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

    fn gzip(text: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(text).unwrap();
        e.finish().unwrap()
    }

    fn all_lines(mut r: LineReader) -> io::Result<Vec<String>> {
        let mut lines = Vec::new();
        while let Some((_, line)) = r.next_line()? {
            lines.push(String::from_utf8_lossy(line).into_owned());
        }
        Ok(lines)
    }

    #[test]
    fn a_byte_order_mark_before_the_first_line_is_skipped() {
        let r = LineReader::from_bytes(b"\xef\xbb\xbf0 0 0 8 1\n\xef\xbb\xbfx\n".to_vec());
        // Only the first line's mark is one; a later one is the line's own text.
        assert_eq!(all_lines(r).unwrap(), ["0 0 0 8 1", "\u{feff}x"]);
    }

    #[test]
    fn a_line_without_end_is_refused_in_bounded_memory() {
        let mut text = b"first\n".to_vec();
        text.resize(text.len() + MAX_LINE_BYTES + 10, b'x');
        let mut r = LineReader::from_bytes(text);
        assert_eq!(r.next_line().unwrap(), Some((1, &b"first"[..])));
        let e = r.next_line().unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("without a line break"), "{e}");
        assert_eq!(r.line_no() + 1, 2, "the error is about line 2");
        // A line of exactly the limit is read.
        let mut text = vec![b'y'; MAX_LINE_BYTES];
        text.extend_from_slice(b"\r\n");
        assert_eq!(
            all_lines(LineReader::from_bytes(text)).unwrap()[0].len(),
            MAX_LINE_BYTES
        );
    }

    #[test]
    fn gzip_members_padding_and_trailing_garbage_read_as_gzip_does() {
        let mut two = gzip(b"a\nb\n");
        two.extend(gzip(b"c\n"));
        let r = LineReader::from_bytes(two.clone());
        assert_eq!(r.compression(), Compression::Gzip);
        assert_eq!(all_lines(r).unwrap(), ["a", "b", "c"]);
        // Zero padding (a tape block): ignored silently.
        let mut padded = two.clone();
        padded.extend([0u8; 700]);
        let mut r = LineReader::from_bytes(padded);
        while r.next_line().unwrap().is_some() {}
        assert_eq!((r.line_no(), r.ignored_trailing_bytes()), (3, 0));
        // Other bytes: ignored and counted for a warning.
        let mut garbage = two;
        garbage.extend(b"\0\0junk\n");
        let mut r = LineReader::from_bytes(garbage);
        while r.next_line().unwrap().is_some() {}
        assert_eq!((r.line_no(), r.ignored_trailing_bytes()), (3, 7));
    }

    #[test]
    fn spooled_copies_have_no_name_and_are_read_independently() {
        let text = b"1 0 0 8 1\n2 0 8 8 0\n".to_vec();
        let input = TraceInput::spooled("<test>", &mut io::Cursor::new(text)).unwrap();
        assert!(input.is_spooled());
        assert_eq!(input.spooled_compression(), Some(Compression::None));
        // Two readers at once, each from the start.
        let mut a = input.lines().unwrap();
        let mut b = input.lines().unwrap();
        assert_eq!(a.next_line().unwrap(), Some((1, &b"1 0 0 8 1"[..])));
        assert_eq!(b.next_line().unwrap(), Some((1, &b"1 0 0 8 1"[..])));
        assert_eq!(a.next_line().unwrap(), Some((2, &b"2 0 8 8 0"[..])));
        // The copy has no name: only the open handle keeps it.
        let Stored::Spool(file) = &input.stored else {
            panic!("spooled")
        };
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let link = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).unwrap();
            let name = link.to_string_lossy();
            assert!(
                name.ends_with("(deleted)") || name.starts_with("/memfd") || !link.exists(),
                "the spool has a name: {name}"
            );
        }
        let _ = file;
    }

    #[test]
    fn binary_input_is_refused_while_it_is_copied() {
        let mut zeros = io::Read::take(io::repeat(0), 1 << 40);
        let e = TraceInput::spooled("/dev/zero", &mut zeros)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("/dev/zero:1: not a text trace: a NUL byte"),
            "{e}"
        );
        let mut text = b"0 0 0 8 1\n".to_vec();
        text.extend(std::iter::repeat_n(b'7', MAX_LINE_BYTES + 1));
        let e = TraceInput::spooled("<stdin>", &mut io::Cursor::new(text))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("<stdin>:2: "), "{e}");
        assert!(e.contains("without a line break"), "{e}");
    }
}
