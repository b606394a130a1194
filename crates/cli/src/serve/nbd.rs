//! The NBD (Network Block Device) protocol, server side: handshake, option haggling and the
//! transmission phase, over any byte stream; it knows nothing of the simulator. A connection
//! hands each valid request to a device as a [`Job`] on a `std::sync::mpsc::Sender<Job>`; the
//! device answers through the job's [`Reply`], from any thread, in any order.
//!
//! # Why hand-written
//!
//! The crates were checked (issue 30): `nbd` 0.3.1 is too thin (no fixed-newstyle options, no
//! block size constraints, one request at a time) and `tokio-nbd` is GPL-2.0 while flashlab is
//! MIT. The wire format is small and public domain
//! (<https://github.com/NetworkBlockDevice/nbd/blob/master/doc/proto.md>, "proto.md" below),
//! so it is written here and fuzzed (`crates/cli/tests/nbd_fuzz.rs`).
//!
//! # What is supported
//!
//! - Fixed newstyle handshake: the server offers `NBD_FLAG_FIXED_NEWSTYLE` and
//!   `NBD_FLAG_NO_ZEROES`; a client flag word with any other bit set ends the connection, as
//!   proto.md requires. A client that does not set `NBD_FLAG_C_FIXED_NEWSTYLE` is still served
//!   the fixed variant (proto.md allows it).
//! - Options: `NBD_OPT_EXPORT_NAME` (an unknown name ends the connection, the only answer
//!   proto.md allows), `NBD_OPT_ABORT` (acknowledged, then closed), `NBD_OPT_LIST` (one
//!   `NBD_REP_SERVER` with the name and description, then `NBD_REP_ACK`), `NBD_OPT_INFO` and
//!   `NBD_OPT_GO`: `NBD_INFO_EXPORT` (size and transmission flags) and `NBD_INFO_BLOCK_SIZE`
//!   (minimum, preferred, maximum payload) always, `NBD_INFO_NAME` and
//!   `NBD_INFO_DESCRIPTION` when asked. Block sizes are sent even to a client that did not ask
//!   (proto.md allows it; such a client's misaligned requests then get `EINVAL`). The empty
//!   name is the default export; any other name but the export's gets `NBD_REP_ERR_UNKNOWN`.
//!   A malformed option gets `NBD_REP_ERR_INVALID`; every other option (`NBD_OPT_STARTTLS`,
//!   `NBD_OPT_STRUCTURED_REPLY`, meta contexts, extended headers, unknown numbers) gets
//!   `NBD_REP_ERR_UNSUP`. Option data beyond [`MAX_OPTION_DATA`] bytes ends the connection
//!   (proto.md lets a server end a connection it judges a denial of service).
//! - Transmission flags: `HAS_FLAGS`, `SEND_FLUSH`, `SEND_FUA`, `SEND_TRIM`,
//!   `SEND_WRITE_ZEROES`, and `CAN_MULTI_CONN` when [`Export::multi_conn`] is set.
//! - Commands: `READ`, `WRITE`, `FLUSH`, `TRIM`, `WRITE_ZEROES` (with `NO_HOLE`), `DISC`;
//!   command flag `FUA` on any command (proto.md: "MUST accept ... even by ignoring"). Simple
//!   replies only.
//!
//! # Validation (before the device sees a request), in this order
//!
//! 1. Bad request magic: the stream cannot be resynchronised, the connection ends.
//! 2. A write whose length is over [`MAX_DISCARDED_PAYLOAD`] (64 MiB): the connection ends
//!    (its payload is not read); a shorter write that fails a check below has its payload
//!    read and discarded, so the stream stays in sync.
//! 3. Unknown command (`CACHE`, `BLOCK_STATUS`, `RESIZE`, others): `EINVAL`.
//! 4. A command flag other than `FUA` (and `NO_HOLE` on `WRITE_ZEROES`): `EINVAL`.
//! 5. `FLUSH` with a nonzero offset or length (proto.md: reserved, MUST be zero): `EINVAL`.
//! 6. Length 0: `EINVAL`.
//! 7. `READ` or `WRITE` longer than [`Export::block_max`], the maximum payload: `EINVAL`.
//!    `TRIM` and `WRITE_ZEROES` carry no payload and may be longer (up to 4 GiB - 1).
//! 8. Offset + length beyond the export (or overflowing 64 bits): `EINVAL` for `READ`,
//!    `ENOSPC` for `WRITE`, `TRIM`, `WRITE_ZEROES` (proto.md's error values section).
//! 9. Offset or length not a multiple of [`Export::block_min`]: `EINVAL`.
//!
//! # Concurrency
//!
//! One thread reads a connection's requests and hands them over without waiting for replies
//! (clients pipeline). Its replies are written, each whole, by one writer thread per
//! connection: [`Reply::ok`] queues the reply and returns at once, so the device never blocks
//! on a slow or vanished client, and one connection never stalls the others. The requests of
//! a connection that are read but whose replies are not yet written are bounded
//! ([`MAX_IN_FLIGHT_REQUESTS`], [`MAX_IN_FLIGHT_BYTES`]): past that the reader waits, which
//! pushes back on the client. A [`Reply`] dropped unanswered sends `EIO`, so a client is never
//! left waiting for a request the device lost.
//!
//! A connection ends on `NBD_CMD_DISC`, on end of stream, on a truncated message, on a
//! protocol violation or when replies cannot be written; then it stops reading, waits until
//! every request it handed over is answered (replies to a dead socket are counted and
//! dropped), closes, and returns its [`ConnectionStats`].
//!
//! # Not supported
//!
//! Oldstyle negotiation; TLS (`NBD_OPT_STARTTLS` gets `NBD_REP_ERR_UNSUP`, allowed in NOTLS
//! mode); structured replies, hence block status and meta contexts; extended headers;
//! `NBD_CMD_CACHE` and `NBD_CMD_RESIZE`; read-only exports; several exports per server.

use std::io::{self, BufReader, ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// `NBDMAGIC`, the first 8 bytes the server sends.
pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
/// `IHAVEOPT`: second magic of the greeting, and the magic of every option request.
pub const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
/// Magic of the server's option replies.
pub const OPTION_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
/// Magic of a transmission request.
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
/// Magic of a simple reply.
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;

/// Handshake flag: fixed newstyle negotiation.
pub const FLAG_FIXED_NEWSTYLE: u16 = 1 << 0;
/// Handshake flag: the 124 zero bytes after `NBD_OPT_EXPORT_NAME` may be left out.
pub const FLAG_NO_ZEROES: u16 = 1 << 1;
/// Client flag: the client speaks fixed newstyle.
pub const FLAG_C_FIXED_NEWSTYLE: u32 = 1 << 0;
/// Client flag: leave the 124 zero bytes out.
pub const FLAG_C_NO_ZEROES: u32 = 1 << 1;

/// Transmission flags.
pub const FLAG_HAS_FLAGS: u16 = 1 << 0;
pub const FLAG_READ_ONLY: u16 = 1 << 1;
pub const FLAG_SEND_FLUSH: u16 = 1 << 2;
pub const FLAG_SEND_FUA: u16 = 1 << 3;
pub const FLAG_ROTATIONAL: u16 = 1 << 4;
pub const FLAG_SEND_TRIM: u16 = 1 << 5;
pub const FLAG_SEND_WRITE_ZEROES: u16 = 1 << 6;
pub const FLAG_SEND_DF: u16 = 1 << 7;
pub const FLAG_CAN_MULTI_CONN: u16 = 1 << 8;

/// Options.
pub const OPT_EXPORT_NAME: u32 = 1;
pub const OPT_ABORT: u32 = 2;
pub const OPT_LIST: u32 = 3;
pub const OPT_STARTTLS: u32 = 5;
pub const OPT_INFO: u32 = 6;
pub const OPT_GO: u32 = 7;
pub const OPT_STRUCTURED_REPLY: u32 = 8;

/// Option reply types.
pub const REP_ACK: u32 = 1;
pub const REP_SERVER: u32 = 2;
pub const REP_INFO: u32 = 3;
pub const REP_ERR_UNSUP: u32 = (1 << 31) + 1;
pub const REP_ERR_POLICY: u32 = (1 << 31) + 2;
pub const REP_ERR_INVALID: u32 = (1 << 31) + 3;
pub const REP_ERR_UNKNOWN: u32 = (1 << 31) + 6;

/// Information types of `NBD_OPT_INFO` and `NBD_OPT_GO`.
pub const INFO_EXPORT: u16 = 0;
pub const INFO_NAME: u16 = 1;
pub const INFO_DESCRIPTION: u16 = 2;
pub const INFO_BLOCK_SIZE: u16 = 3;

/// Commands.
pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_TRIM: u16 = 4;
pub const CMD_CACHE: u16 = 5;
pub const CMD_WRITE_ZEROES: u16 = 6;
pub const CMD_BLOCK_STATUS: u16 = 7;

/// Command flags.
pub const CMD_FLAG_FUA: u16 = 1 << 0;
pub const CMD_FLAG_NO_HOLE: u16 = 1 << 1;
pub const CMD_FLAG_DF: u16 = 1 << 2;
pub const CMD_FLAG_FAST_ZERO: u16 = 1 << 4;

/// Size of a request header on the wire.
pub const REQUEST_HEADER_BYTES: usize = 28;
/// Size of a simple reply header on the wire.
pub const SIMPLE_REPLY_HEADER_BYTES: usize = 16;
/// Option data longer than this ends the connection (the longest valid option here is an
/// `NBD_OPT_GO` with a 4096-byte name and a few info requests).
pub const MAX_OPTION_DATA: u32 = 64 * 1024;
/// A write longer than this ends the connection instead of having its payload read and
/// discarded; also the largest [`Export::block_max`] accepted.
pub const MAX_DISCARDED_PAYLOAD: u32 = 64 * 1024 * 1024;
/// Requests of one connection read but not yet replied to, at most.
pub const MAX_IN_FLIGHT_REQUESTS: u64 = 512;
/// Payload bytes (write data held, read data to send) of one connection's requests in flight,
/// at most (one request alone may exceed it).
pub const MAX_IN_FLIGHT_BYTES: u64 = 256 * 1024 * 1024;
/// Longest string proto.md allows (export names, descriptions).
pub const MAX_STRING_BYTES: usize = 4096;

/// The error values of proto.md's simple reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NbdErrno {
    /// `EPERM` (1): operation not permitted.
    Perm,
    /// `EIO` (5): input/output error.
    Io,
    /// `ENOMEM` (12): cannot allocate memory.
    NoMem,
    /// `EINVAL` (22): invalid argument.
    Inval,
    /// `ENOSPC` (28): no space left on device (also: beyond the end of the export).
    NoSpc,
    /// `EOVERFLOW` (75): value too large.
    Overflow,
    /// `ENOTSUP` (95): operation not supported.
    NotSup,
    /// `ESHUTDOWN` (108): the server is shutting down.
    Shutdown,
}

impl NbdErrno {
    /// The value on the wire.
    pub fn code(self) -> u32 {
        match self {
            NbdErrno::Perm => 1,
            NbdErrno::Io => 5,
            NbdErrno::NoMem => 12,
            NbdErrno::Inval => 22,
            NbdErrno::NoSpc => 28,
            NbdErrno::Overflow => 75,
            NbdErrno::NotSup => 95,
            NbdErrno::Shutdown => 108,
        }
    }

    /// The error of a wire value, if it is one of proto.md's.
    pub fn from_code(code: u32) -> Option<NbdErrno> {
        [
            NbdErrno::Perm,
            NbdErrno::Io,
            NbdErrno::NoMem,
            NbdErrno::Inval,
            NbdErrno::NoSpc,
            NbdErrno::Overflow,
            NbdErrno::NotSup,
            NbdErrno::Shutdown,
        ]
        .into_iter()
        .find(|e| e.code() == code)
    }
}

impl std::fmt::Display for NbdErrno {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self {
            NbdErrno::Perm => "EPERM",
            NbdErrno::Io => "EIO",
            NbdErrno::NoMem => "ENOMEM",
            NbdErrno::Inval => "EINVAL",
            NbdErrno::NoSpc => "ENOSPC",
            NbdErrno::Overflow => "EOVERFLOW",
            NbdErrno::NotSup => "ENOTSUP",
            NbdErrno::Shutdown => "ESHUTDOWN",
        };
        write!(f, "{name} ({})", self.code())
    }
}

/// The one export a server offers, and its block size constraints (`NBD_INFO_BLOCK_SIZE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    /// Name clients ask for (`""` is accepted too, as the default export).
    pub name: String,
    /// Shown by `NBD_OPT_LIST` and `NBD_INFO_DESCRIPTION`.
    pub description: String,
    /// Size in bytes; a multiple of `block_min`.
    pub size_bytes: u64,
    /// Minimum block size: offsets and lengths must be multiples of it (a power of two,
    /// 1 to 64 KiB).
    pub block_min: u32,
    /// Preferred block size (a power of two, at least `block_min` and 512).
    pub block_preferred: u32,
    /// Maximum payload of a `READ` or `WRITE` (a multiple of `block_min`, at most 64 MiB).
    pub block_max: u32,
    /// Advertise `NBD_FLAG_CAN_MULTI_CONN`: flushes and FUA are visible across connections.
    pub multi_conn: bool,
}

impl Export {
    /// Checks the constraints proto.md puts on an export; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        let string = |what: &str, s: &str| {
            if s.len() > MAX_STRING_BYTES {
                Err(format!(
                    "export {what} is {} bytes, proto.md allows at most {MAX_STRING_BYTES}",
                    s.len()
                ))
            } else if s.contains('\0') {
                Err(format!("export {what} contains a NUL character"))
            } else {
                Ok(())
            }
        };
        string("name", &self.name)?;
        string("description", &self.description)?;
        let min = self.block_min;
        if !min.is_power_of_two() || min > 65536 {
            return Err(format!(
                "block_min is {min}: it must be a power of two from 1 to 65536"
            ));
        }
        let preferred = self.block_preferred;
        if !preferred.is_power_of_two() || preferred < min.max(512) {
            return Err(format!(
                "block_preferred is {preferred}: it must be a power of two, at least 512 and at least block_min ({min})"
            ));
        }
        let max = self.block_max;
        if max < min || max % min != 0 || max > MAX_DISCARDED_PAYLOAD {
            return Err(format!(
                "block_max is {max}: it must be a multiple of block_min ({min}) from {min} to {MAX_DISCARDED_PAYLOAD}"
            ));
        }
        if self.size_bytes % u64::from(min) != 0 {
            return Err(format!(
                "size_bytes is {}: not a multiple of block_min ({min})",
                self.size_bytes
            ));
        }
        Ok(())
    }

    /// The transmission flags sent to clients.
    pub fn transmission_flags(&self) -> u16 {
        let mut flags = FLAG_HAS_FLAGS
            | FLAG_SEND_FLUSH
            | FLAG_SEND_FUA
            | FLAG_SEND_TRIM
            | FLAG_SEND_WRITE_ZEROES;
        if self.multi_conn {
            flags |= FLAG_CAN_MULTI_CONN;
        }
        flags
    }

    /// Whether a client asking for `name` gets this export.
    pub fn answers_to(&self, name: &[u8]) -> bool {
        name.is_empty() || name == self.name.as_bytes()
    }
}

/// A request the device must carry out; offsets and lengths are checked against the export
/// (in range, aligned, lengths nonzero, payloads within `block_max`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Read `len` bytes at `offset`; answer with [`Reply::ok`] and exactly `len` bytes.
    Read { offset: u64, len: u32 },
    /// Write `data` at `offset`.
    Write { offset: u64, data: Vec<u8> },
    /// Make every write already answered durable.
    Flush,
    /// The client no longer needs these bytes (contents afterwards are unspecified).
    Trim { offset: u64, len: u32 },
    /// Write zeroes; with `no_hole` the range must stay allocated (not be trimmed).
    WriteZeroes {
        offset: u64,
        len: u32,
        no_hole: bool,
    },
}

/// One request for the device: what to do, whether the client asked for forced unit access
/// (answer only once the data is durable), and where the answer goes.
#[derive(Debug)]
pub struct Job {
    pub command: Command,
    /// `NBD_CMD_FLAG_FUA`: reply only when this command's writes are durable (may be set on
    /// any command; on a read it may be ignored).
    pub fua: bool,
    /// The answer; dropping it unanswered sends `EIO`.
    pub reply: Reply,
    /// When the request's last byte was read from the socket (a real-time device paces its
    /// reply from here).
    pub received: Instant,
}

/// What the writer thread of a connection sends: one whole simple reply.
struct Outgoing {
    handle: u64,
    error: u32,
    data: Vec<u8>,
    /// Budget taken by the request (released once written).
    cost: u64,
    /// Bytes of a successful read reply (for the counters).
    read_bytes: u64,
    /// The device dropped the reply unanswered.
    unanswered: bool,
    /// The device answered wrongly (a read of the wrong length, data on a non-read).
    device_fault: bool,
}

/// The answer to one [`Job`]; answer it once with [`Reply::ok`] or [`Reply::error`], from any
/// thread. Answering never blocks on the client (the reply is queued for the connection's
/// writer thread).
#[derive(Debug)]
pub struct Reply {
    inner: Option<ReplyInner>,
}

#[derive(Debug)]
struct ReplyInner {
    tx: Sender<OutgoingBox>,
    handle: u64,
    connection: u64,
    /// `Some(len)` for a read: the data `ok` must be given.
    read_len: Option<u32>,
    cost: u64,
}

/// `Outgoing` behind a `Debug` implementation that does not print payloads.
struct OutgoingBox(Outgoing);

impl std::fmt::Debug for OutgoingBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "reply to {:#x}", self.0.handle)
    }
}

impl Reply {
    /// Success. For a [`Command::Read`], `read_data` must hold exactly the `len` bytes read;
    /// for any other command it must be empty. Anything else is a device bug: the client gets
    /// `EIO` instead (sending data of the wrong length would desynchronise the stream) and the
    /// connection counts a device fault.
    pub fn ok(mut self, read_data: &[u8]) {
        if let Some(inner) = self.inner.take() {
            let fits = match inner.read_len {
                Some(len) => read_data.len() == len as usize,
                None => read_data.is_empty(),
            };
            let data = if fits { read_data.to_vec() } else { Vec::new() };
            inner.send(fits, data);
        }
    }

    /// [`Reply::ok`] with the read data given by value (no copy).
    pub fn ok_data(mut self, read_data: Vec<u8>) {
        if let Some(inner) = self.inner.take() {
            let fits = match inner.read_len {
                Some(len) => read_data.len() == len as usize,
                None => read_data.is_empty(),
            };
            inner.send(fits, if fits { read_data } else { Vec::new() });
        }
    }

    /// Failure with `errno`.
    pub fn error(mut self, errno: NbdErrno) {
        if let Some(inner) = self.inner.take() {
            inner.send_error(errno.code(), false, false);
        }
    }

    /// The client's handle (cookie) of the request.
    pub fn handle(&self) -> u64 {
        self.inner.as_ref().map_or(0, |i| i.handle)
    }

    /// The id of the connection the request came on.
    pub fn connection(&self) -> u64 {
        self.inner.as_ref().map_or(0, |i| i.connection)
    }
}

impl ReplyInner {
    fn send(self, fits: bool, data: Vec<u8>) {
        if !fits {
            self.send_error(NbdErrno::Io.code(), false, true);
            return;
        }
        let read_bytes = data.len() as u64;
        let out = Outgoing {
            handle: self.handle,
            error: 0,
            data,
            cost: self.cost,
            read_bytes,
            unanswered: false,
            device_fault: false,
        };
        // A connection already gone drops its replies: nothing to do.
        let _ = self.tx.send(OutgoingBox(out));
    }

    fn send_error(self, error: u32, unanswered: bool, device_fault: bool) {
        let out = Outgoing {
            handle: self.handle,
            error,
            data: Vec::new(),
            cost: self.cost,
            read_bytes: 0,
            unanswered,
            device_fault,
        };
        let _ = self.tx.send(OutgoingBox(out));
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            inner.send_error(NbdErrno::Io.code(), true, false);
        }
    }
}

/// A transmission request header as read from the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestHeader {
    pub magic: u32,
    pub flags: u16,
    pub kind: u16,
    pub handle: u64,
    pub offset: u64,
    pub len: u32,
}

impl RequestHeader {
    /// Decodes the 28 bytes of a request header (big-endian).
    pub fn decode(b: &[u8; REQUEST_HEADER_BYTES]) -> RequestHeader {
        let u16_at = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
        let u32_at = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[i..i + 8]);
            u64::from_be_bytes(x)
        };
        RequestHeader {
            magic: u32_at(0),
            flags: u16_at(4),
            kind: u16_at(6),
            handle: u64_at(8),
            offset: u64_at(16),
            len: u32_at(24),
        }
    }

    /// Encodes the header (what a client sends).
    pub fn encode(&self) -> [u8; REQUEST_HEADER_BYTES] {
        let mut b = [0u8; REQUEST_HEADER_BYTES];
        b[0..4].copy_from_slice(&self.magic.to_be_bytes());
        b[4..6].copy_from_slice(&self.flags.to_be_bytes());
        b[6..8].copy_from_slice(&self.kind.to_be_bytes());
        b[8..16].copy_from_slice(&self.handle.to_be_bytes());
        b[16..24].copy_from_slice(&self.offset.to_be_bytes());
        b[24..28].copy_from_slice(&self.len.to_be_bytes());
        b
    }
}

/// Encodes a simple reply header.
pub fn encode_simple_reply(error: u32, handle: u64) -> [u8; SIMPLE_REPLY_HEADER_BYTES] {
    let mut b = [0u8; SIMPLE_REPLY_HEADER_BYTES];
    b[0..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    b[4..8].copy_from_slice(&error.to_be_bytes());
    b[8..16].copy_from_slice(&handle.to_be_bytes());
    b
}

/// Encodes an option reply (header and data).
pub fn encode_option_reply(option: u32, reply_type: u32, data: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(20 + data.len());
    b.extend_from_slice(&OPTION_REPLY_MAGIC.to_be_bytes());
    b.extend_from_slice(&option.to_be_bytes());
    b.extend_from_slice(&reply_type.to_be_bytes());
    b.extend_from_slice(&(data.len() as u32).to_be_bytes());
    b.extend_from_slice(data);
    b
}

/// A request that passed validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    Read {
        offset: u64,
        len: u32,
    },
    Write {
        offset: u64,
        len: u32,
    },
    Flush,
    Trim {
        offset: u64,
        len: u32,
    },
    WriteZeroes {
        offset: u64,
        len: u32,
        no_hole: bool,
    },
    Disconnect,
}

/// Validates a request header against the export (the order of the checks is in the module
/// documentation). Does not look at the magic.
pub fn validate(req: &RequestHeader, export: &Export) -> Result<Checked, NbdErrno> {
    let allowed_flags = match req.kind {
        CMD_READ | CMD_WRITE | CMD_FLUSH | CMD_TRIM => CMD_FLAG_FUA,
        CMD_WRITE_ZEROES => CMD_FLAG_FUA | CMD_FLAG_NO_HOLE,
        CMD_DISC => return Ok(Checked::Disconnect),
        _ => return Err(NbdErrno::Inval),
    };
    if req.flags & !allowed_flags != 0 {
        return Err(NbdErrno::Inval);
    }
    if req.kind == CMD_FLUSH {
        return if req.offset == 0 && req.len == 0 {
            Ok(Checked::Flush)
        } else {
            Err(NbdErrno::Inval)
        };
    }
    let (offset, len) = (req.offset, req.len);
    if len == 0 {
        return Err(NbdErrno::Inval);
    }
    let has_payload = matches!(req.kind, CMD_READ | CMD_WRITE);
    if has_payload && len > export.block_max {
        return Err(NbdErrno::Inval);
    }
    let beyond = offset
        .checked_add(u64::from(len))
        .is_none_or(|end| end > export.size_bytes);
    if beyond {
        return Err(if req.kind == CMD_READ {
            NbdErrno::Inval
        } else {
            NbdErrno::NoSpc
        });
    }
    let min = u64::from(export.block_min);
    if offset % min != 0 || u64::from(len) % min != 0 {
        return Err(NbdErrno::Inval);
    }
    Ok(match req.kind {
        CMD_READ => Checked::Read { offset, len },
        CMD_WRITE => Checked::Write { offset, len },
        CMD_TRIM => Checked::Trim { offset, len },
        _ => Checked::WriteZeroes {
            offset,
            len,
            no_hole: req.flags & CMD_FLAG_NO_HOLE != 0,
        },
    })
}

/// An `NBD_OPT_INFO` / `NBD_OPT_GO` request's data: the export name and the information
/// types asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfoRequest {
    pub name: Vec<u8>,
    pub requests: Vec<u16>,
}

/// Parses `NBD_OPT_INFO` / `NBD_OPT_GO` data: 32-bit name length, name, 16-bit count, that
/// many 16-bit information types, and nothing more. The error says what is wrong.
pub fn parse_info_request(data: &[u8]) -> Result<InfoRequest, String> {
    let total = data.len();
    if total < 6 {
        return Err(format!(
            "option data is {total} bytes, at least 6 needed (name length, count)"
        ));
    }
    let name_len = u32::from_be_bytes([data[0], data[1], data[2], data[3]]) as usize;
    if name_len > MAX_STRING_BYTES {
        return Err(format!(
            "export name length {name_len} is over the limit of {MAX_STRING_BYTES}"
        ));
    }
    if total < 4 + name_len + 2 {
        return Err(format!(
            "export name length {name_len} does not fit in {total} bytes of option data"
        ));
    }
    let name = data[4..4 + name_len].to_vec();
    let at = 4 + name_len;
    let count = usize::from(u16::from_be_bytes([data[at], data[at + 1]]));
    let rest = &data[at + 2..];
    if rest.len() != 2 * count {
        return Err(format!(
            "{count} information requests need {} bytes, the option has {}",
            2 * count,
            rest.len()
        ));
    }
    let requests = rest
        .chunks_exact(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]))
        .collect();
    Ok(InfoRequest { name, requests })
}

/// The `NBD_REP_INFO` replies (and final `NBD_REP_ACK`) that answer an `NBD_OPT_INFO` or
/// `NBD_OPT_GO` for `export`.
pub fn encode_info_replies(option: u32, export: &Export, asked: &[u16]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut info = Vec::new();
    info.extend_from_slice(&INFO_EXPORT.to_be_bytes());
    info.extend_from_slice(&export.size_bytes.to_be_bytes());
    info.extend_from_slice(&export.transmission_flags().to_be_bytes());
    out.extend(encode_option_reply(option, REP_INFO, &info));
    let mut seen = Vec::new();
    for &kind in asked {
        if seen.contains(&kind) {
            continue;
        }
        seen.push(kind);
        let text = match kind {
            INFO_NAME => &export.name,
            INFO_DESCRIPTION => &export.description,
            _ => continue,
        };
        let mut info = kind.to_be_bytes().to_vec();
        info.extend_from_slice(text.as_bytes());
        out.extend(encode_option_reply(option, REP_INFO, &info));
    }
    let mut info = INFO_BLOCK_SIZE.to_be_bytes().to_vec();
    info.extend_from_slice(&export.block_min.to_be_bytes());
    info.extend_from_slice(&export.block_preferred.to_be_bytes());
    info.extend_from_slice(&export.block_max.to_be_bytes());
    out.extend(encode_option_reply(option, REP_INFO, &info));
    out.extend(encode_option_reply(option, REP_ACK, &[]));
    out
}

/// How a connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectionEnd {
    /// The client sent `NBD_CMD_DISC`.
    Disconnect,
    /// The client sent `NBD_OPT_ABORT` during option haggling.
    Abort,
    /// The client closed the stream between messages (during the handshake or transmission).
    Closed { in_handshake: bool },
    /// The stream ended inside a message.
    Truncated(String),
    /// The client broke the protocol (bad magic, unknown client flags, oversized data).
    Protocol(String),
    /// `NBD_OPT_EXPORT_NAME` named an export that does not exist.
    UnknownExport(String),
    /// Reading failed.
    ReadFailed(String),
    /// Writing a reply failed (the client went away or stopped reading).
    WriteFailed(String),
    /// The device stopped taking jobs (its receiver is gone).
    DeviceGone,
    /// The server was stopping.
    Stopped,
    /// The export fails [`Export::validate`]: nothing was served.
    InvalidExport(String),
}

impl std::fmt::Display for ConnectionEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectionEnd::Disconnect => write!(f, "client disconnected (NBD_CMD_DISC)"),
            ConnectionEnd::Abort => write!(f, "client aborted the handshake (NBD_OPT_ABORT)"),
            ConnectionEnd::Closed { in_handshake: true } => {
                write!(f, "client closed the connection during the handshake")
            }
            ConnectionEnd::Closed {
                in_handshake: false,
            } => {
                write!(f, "client closed the connection without NBD_CMD_DISC")
            }
            ConnectionEnd::Truncated(m) => write!(f, "truncated message: {m}"),
            ConnectionEnd::Protocol(m) => write!(f, "protocol violation: {m}"),
            ConnectionEnd::UnknownExport(m) => write!(f, "unknown export {m:?}"),
            ConnectionEnd::ReadFailed(m) => write!(f, "reading from the client failed: {m}"),
            ConnectionEnd::WriteFailed(m) => write!(f, "writing to the client failed: {m}"),
            ConnectionEnd::DeviceGone => write!(f, "the device stopped taking requests"),
            ConnectionEnd::Stopped => write!(f, "server stopping"),
            ConnectionEnd::InvalidExport(m) => write!(f, "invalid export: {m}"),
        }
    }
}

/// What one connection did, returned when it ends (for the server's log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionStats {
    /// The connection id given to [`serve_connection`] (also [`Reply::connection`]).
    pub id: u64,
    /// The peer, as given to [`serve_connection`].
    pub peer: String,
    /// Whether the handshake completed (transmission started).
    pub transmission: bool,
    /// Transmission requests received (`NBD_CMD_DISC` not counted).
    pub requests: u64,
    /// Requests handed to the device, by kind.
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub trims: u64,
    pub write_zeroes: u64,
    /// Bytes sent to the client by successful reads.
    pub bytes_read: u64,
    /// Bytes of write payload handed to the device.
    pub bytes_written: u64,
    /// Error replies (validation, device errors, unanswered jobs).
    pub errors: u64,
    /// Requests answered with an error by validation, without reaching the device.
    pub rejected: u64,
    /// Jobs the device dropped without answering (the client got `EIO`).
    pub unanswered: u64,
    /// Answers with data of the wrong length (the client got `EIO`).
    pub device_faults: u64,
    /// Replies not delivered because the client was gone.
    pub replies_lost: u64,
    pub end: ConnectionEnd,
    pub duration: Duration,
}

impl std::fmt::Display for ConnectionStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "connection {} ({}): {} requests ({} reads, {} writes, {} flushes, {} trims, {} write-zeroes), {} bytes read, {} bytes written, {} errors ({} rejected, {} unanswered), {} replies lost, {:.3} s; {}",
            self.id,
            self.peer,
            self.requests,
            self.reads,
            self.writes,
            self.flushes,
            self.trims,
            self.write_zeroes,
            self.bytes_read,
            self.bytes_written,
            self.errors,
            self.rejected,
            self.unanswered,
            self.replies_lost,
            self.duration.as_secs_f64(),
            self.end
        )
    }
}

/// A connected byte stream a connection can be served on: split into a reading and a
/// writing half, and shut down (to wake a blocked reader when the writer fails).
pub trait NbdStream: Read + Write + Send + Sized + 'static {
    /// A second handle on the same stream (for the writer thread).
    fn try_clone_stream(&self) -> io::Result<Self>;
    /// Shuts down one or both directions.
    fn shutdown_stream(&self, how: Shutdown) -> io::Result<()>;
}

impl NbdStream for UnixStream {
    fn try_clone_stream(&self) -> io::Result<Self> {
        self.try_clone()
    }
    fn shutdown_stream(&self, how: Shutdown) -> io::Result<()> {
        self.shutdown(how)
    }
}

impl NbdStream for TcpStream {
    fn try_clone_stream(&self) -> io::Result<Self> {
        self.try_clone()
    }
    fn shutdown_stream(&self, how: Shutdown) -> io::Result<()> {
        self.shutdown(how)
    }
}

/// Counters shared by a connection's reader, writer and replies.
#[derive(Default)]
struct Counters {
    requests: AtomicU64,
    reads: AtomicU64,
    writes: AtomicU64,
    flushes: AtomicU64,
    trims: AtomicU64,
    write_zeroes: AtomicU64,
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
    errors: AtomicU64,
    rejected: AtomicU64,
    unanswered: AtomicU64,
    device_faults: AtomicU64,
    replies_lost: AtomicU64,
}

fn bump(c: &AtomicU64, by: u64) {
    c.fetch_add(by, Ordering::Relaxed);
}

/// The in-flight budget of a connection: requests read whose replies are not yet written.
#[derive(Default)]
struct Budget {
    state: Mutex<(u64, u64)>,
    changed: Condvar,
}

impl Budget {
    /// Waits until a request of `cost` bytes fits (or `dead` is set), then takes it.
    fn acquire(&self, cost: u64, dead: &AtomicBool) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while s.0 > 0
            && (s.0 >= MAX_IN_FLIGHT_REQUESTS || s.1 + cost > MAX_IN_FLIGHT_BYTES)
            && !dead.load(Ordering::Acquire)
        {
            s = self
                .changed
                .wait_timeout(s, Duration::from_millis(200))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        s.0 += 1;
        s.1 += cost;
    }

    fn release(&self, cost: u64) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.0 = s.0.saturating_sub(1);
        s.1 = s.1.saturating_sub(cost);
        self.changed.notify_all();
    }
}

/// Serves one connection: handshake, then transmission until the client disconnects or
/// breaks the protocol; returns when every request handed to the device has been answered
/// and the stream is shut down. `id` is the connection's number (reported by
/// [`Reply::connection`]), `peer` its description for the log. Never panics on client input.
pub fn serve_connection<S: NbdStream>(
    stream: S,
    export: &Export,
    jobs: &Sender<Job>,
    id: u64,
    peer: &str,
) -> ConnectionStats {
    let started = Instant::now();
    let counters = Counters::default();
    let mut transmission = false;
    let end = match export.validate() {
        Err(e) => ConnectionEnd::InvalidExport(e),
        Ok(()) => match stream.try_clone_stream() {
            Err(e) => ConnectionEnd::ReadFailed(format!("cannot split the stream: {e}")),
            Ok(mut write_half) => {
                let mut reader = BufReader::with_capacity(256 * 1024, stream);
                match handshake(&mut reader, &mut write_half, export) {
                    Err(end) => end,
                    Ok(()) => {
                        transmission = true;
                        transmit(reader, write_half, export, jobs, id, &counters)
                    }
                }
            }
        },
    };
    let c = |a: &AtomicU64| a.load(Ordering::Relaxed);
    ConnectionStats {
        id,
        peer: peer.to_string(),
        transmission,
        requests: c(&counters.requests),
        reads: c(&counters.reads),
        writes: c(&counters.writes),
        flushes: c(&counters.flushes),
        trims: c(&counters.trims),
        write_zeroes: c(&counters.write_zeroes),
        bytes_read: c(&counters.bytes_read),
        bytes_written: c(&counters.bytes_written),
        errors: c(&counters.errors),
        rejected: c(&counters.rejected),
        unanswered: c(&counters.unanswered),
        device_faults: c(&counters.device_faults),
        replies_lost: c(&counters.replies_lost),
        end,
        duration: started.elapsed(),
    }
}

/// Reads exactly `buf.len()` bytes. `Ok(false)`: the stream ended before the first byte.
/// A stream ending later is `Truncated` (naming `what`); other failures `ReadFailed`.
fn read_message(r: &mut impl Read, buf: &mut [u8], what: &str) -> Result<bool, ConnectionEnd> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => {
                return Err(ConnectionEnd::Truncated(format!(
                    "{what}: the stream ended after {got} of {} bytes",
                    buf.len()
                )))
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(ConnectionEnd::ReadFailed(format!("{what}: {e}"))),
        }
    }
    Ok(true)
}

/// Like [`read_message`], but the stream ending before the first byte is also truncation.
fn read_rest(r: &mut impl Read, buf: &mut [u8], what: &str) -> Result<(), ConnectionEnd> {
    if buf.is_empty() || read_message(r, buf, what)? {
        Ok(())
    } else {
        Err(ConnectionEnd::Truncated(format!(
            "{what}: the stream ended before its {} bytes",
            buf.len()
        )))
    }
}

/// Reads and drops `len` bytes.
fn discard(r: &mut impl Read, len: u64, what: &str) -> Result<(), ConnectionEnd> {
    let mut scratch = [0u8; 64 * 1024];
    let mut left = len;
    while left > 0 {
        let n = left.min(scratch.len() as u64) as usize;
        read_rest(r, &mut scratch[..n], what)?;
        left -= n as u64;
    }
    Ok(())
}

fn send(w: &mut impl Write, bytes: &[u8]) -> Result<(), ConnectionEnd> {
    w.write_all(bytes)
        .and_then(|()| w.flush())
        .map_err(|e| ConnectionEnd::WriteFailed(e.to_string()))
}

/// The fixed newstyle handshake; `Ok` once transmission starts.
fn handshake(r: &mut impl Read, w: &mut impl Write, export: &Export) -> Result<(), ConnectionEnd> {
    let mut greeting = Vec::with_capacity(18);
    greeting.extend_from_slice(&NBDMAGIC.to_be_bytes());
    greeting.extend_from_slice(&IHAVEOPT.to_be_bytes());
    greeting.extend_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    send(w, &greeting)?;
    let closed = ConnectionEnd::Closed { in_handshake: true };
    let mut flags = [0u8; 4];
    if !read_message(r, &mut flags, "client flags")? {
        return Err(closed);
    }
    let client_flags = u32::from_be_bytes(flags);
    let known = FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES;
    if client_flags & !known != 0 {
        return Err(ConnectionEnd::Protocol(format!(
            "client flags {client_flags:#x} set bits this server did not offer"
        )));
    }
    let no_zeroes = client_flags & FLAG_C_NO_ZEROES != 0;
    loop {
        let mut header = [0u8; 16];
        if !read_message(r, &mut header, "option header")? {
            return Err(closed);
        }
        let magic = u64::from_be_bytes(header[0..8].try_into().expect("8 bytes"));
        let option = u32::from_be_bytes(header[8..12].try_into().expect("4 bytes"));
        let len = u32::from_be_bytes(header[12..16].try_into().expect("4 bytes"));
        if magic != IHAVEOPT {
            return Err(ConnectionEnd::Protocol(format!(
                "option magic is {magic:#018x}, not IHAVEOPT"
            )));
        }
        if len > MAX_OPTION_DATA {
            return Err(ConnectionEnd::Protocol(format!(
                "option {option} has {len} bytes of data, over the limit of {MAX_OPTION_DATA}"
            )));
        }
        let mut data = vec![0u8; len as usize];
        read_rest(r, &mut data, &format!("data of option {option}"))?;
        let error =
            |kind: u32, message: &str| encode_option_reply(option, kind, message.as_bytes());
        match option {
            OPT_EXPORT_NAME => {
                if !export.answers_to(&data) {
                    return Err(ConnectionEnd::UnknownExport(
                        String::from_utf8_lossy(&data).into_owned(),
                    ));
                }
                let mut reply = Vec::with_capacity(134);
                reply.extend_from_slice(&export.size_bytes.to_be_bytes());
                reply.extend_from_slice(&export.transmission_flags().to_be_bytes());
                if !no_zeroes {
                    reply.extend_from_slice(&[0u8; 124]);
                }
                send(w, &reply)?;
                return Ok(());
            }
            OPT_ABORT => {
                // The client may close without reading the acknowledgement.
                let _ = send(w, &encode_option_reply(option, REP_ACK, &[]));
                return Err(ConnectionEnd::Abort);
            }
            OPT_LIST if len != 0 => {
                send(w, &error(REP_ERR_INVALID, "NBD_OPT_LIST takes no data"))?;
            }
            OPT_LIST => {
                let mut server = (export.name.len() as u32).to_be_bytes().to_vec();
                server.extend_from_slice(export.name.as_bytes());
                server.extend_from_slice(export.description.as_bytes());
                let mut reply = encode_option_reply(option, REP_SERVER, &server);
                reply.extend(encode_option_reply(option, REP_ACK, &[]));
                send(w, &reply)?;
            }
            OPT_INFO | OPT_GO => match parse_info_request(&data) {
                Err(message) => send(w, &error(REP_ERR_INVALID, &message))?,
                Ok(request) if !export.answers_to(&request.name) => {
                    let message = format!(
                        "no export named {:?} (this server has {:?})",
                        String::from_utf8_lossy(&request.name),
                        export.name
                    );
                    send(w, &error(REP_ERR_UNKNOWN, &message))?;
                }
                Ok(request) => {
                    send(w, &encode_info_replies(option, export, &request.requests))?;
                    if option == OPT_GO {
                        return Ok(());
                    }
                }
            },
            _ => {
                let message = format!("option {option} is not supported by this server");
                send(w, &error(REP_ERR_UNSUP, &message))?;
            }
        }
    }
}

/// The transmission phase; returns how it ended, once every reply is written or dropped.
fn transmit<S: NbdStream>(
    mut reader: BufReader<S>,
    write_half: S,
    export: &Export,
    jobs: &Sender<Job>,
    id: u64,
    counters: &Counters,
) -> ConnectionEnd {
    let (tx, rx) = mpsc::channel::<OutgoingBox>();
    let budget = Budget::default();
    let dead = AtomicBool::new(false);
    let write_error: Mutex<Option<String>> = Mutex::new(None);
    let shutter = match write_half.try_clone_stream() {
        Ok(s) => s,
        Err(e) => return ConnectionEnd::ReadFailed(format!("cannot split the stream: {e}")),
    };
    std::thread::scope(|scope| {
        let (budget_ref, dead_ref, error_ref) = (&budget, &dead, &write_error);
        let writer = scope.spawn(move || {
            write_replies(
                rx, write_half, shutter, counters, budget_ref, dead_ref, error_ref,
            );
        });
        let mut end = read_requests(&mut reader, export, jobs, id, counters, &tx, &budget, &dead);
        drop(tx);
        // The writer ends when every reply (each holds a sender) is answered or dropped.
        let _ = writer.join();
        if let Some(message) = write_error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            if !matches!(end, ConnectionEnd::Disconnect | ConnectionEnd::Protocol(_)) {
                end = ConnectionEnd::WriteFailed(message);
            }
        }
        let _ = reader.get_ref().shutdown_stream(Shutdown::Both);
        end
    })
}

/// The reader half of the transmission phase: reads, validates and hands over requests.
#[allow(clippy::too_many_arguments)]
fn read_requests<R: Read>(
    reader: &mut R,
    export: &Export,
    jobs: &Sender<Job>,
    id: u64,
    counters: &Counters,
    tx: &Sender<OutgoingBox>,
    budget: &Budget,
    dead: &AtomicBool,
) -> ConnectionEnd {
    let reject = |handle: u64, errno: NbdErrno| {
        bump(&counters.rejected, 1);
        let _ = tx.send(OutgoingBox(Outgoing {
            handle,
            error: errno.code(),
            data: Vec::new(),
            cost: 0,
            read_bytes: 0,
            unanswered: false,
            device_fault: false,
        }));
    };
    loop {
        if dead.load(Ordering::Acquire) {
            return ConnectionEnd::WriteFailed(String::new());
        }
        let mut raw = [0u8; REQUEST_HEADER_BYTES];
        match read_message(reader, &mut raw, "request header") {
            Ok(true) => {}
            Ok(false) => {
                return ConnectionEnd::Closed {
                    in_handshake: false,
                }
            }
            Err(end) => return end,
        }
        let req = RequestHeader::decode(&raw);
        if req.magic != REQUEST_MAGIC {
            return ConnectionEnd::Protocol(format!(
                "request magic is {:#010x}, not {REQUEST_MAGIC:#010x}",
                req.magic
            ));
        }
        if req.kind == CMD_DISC {
            return ConnectionEnd::Disconnect;
        }
        bump(&counters.requests, 1);
        let checked = validate(&req, export);
        if req.kind == CMD_WRITE && req.len > MAX_DISCARDED_PAYLOAD {
            return ConnectionEnd::Protocol(format!(
                "write of {} bytes (handle {:#x}) is over {MAX_DISCARDED_PAYLOAD} bytes: not read",
                req.len, req.handle
            ));
        }
        let cost = match checked {
            Ok(Checked::Read { len, .. } | Checked::Write { len, .. }) => u64::from(len),
            _ => 0,
        };
        budget.acquire(cost, dead);
        let command = match checked {
            Err(errno) => {
                if req.kind == CMD_WRITE {
                    let what = format!("payload of rejected write {:#x}", req.handle);
                    if let Err(end) = discard(reader, u64::from(req.len), &what) {
                        budget.release(0);
                        return end;
                    }
                }
                reject(req.handle, errno);
                continue;
            }
            Ok(Checked::Disconnect) => return ConnectionEnd::Disconnect,
            Ok(Checked::Read { offset, len }) => {
                bump(&counters.reads, 1);
                Command::Read { offset, len }
            }
            Ok(Checked::Write { offset, len }) => {
                let mut data = vec![0u8; len as usize];
                let what = format!("payload of write {:#x}", req.handle);
                if let Err(end) = read_rest(reader, &mut data, &what) {
                    budget.release(cost);
                    return end;
                }
                bump(&counters.writes, 1);
                bump(&counters.bytes_written, u64::from(len));
                Command::Write { offset, data }
            }
            Ok(Checked::Flush) => {
                bump(&counters.flushes, 1);
                Command::Flush
            }
            Ok(Checked::Trim { offset, len }) => {
                bump(&counters.trims, 1);
                Command::Trim { offset, len }
            }
            Ok(Checked::WriteZeroes {
                offset,
                len,
                no_hole,
            }) => {
                bump(&counters.write_zeroes, 1);
                Command::WriteZeroes {
                    offset,
                    len,
                    no_hole,
                }
            }
        };
        let read_len = match command {
            Command::Read { len, .. } => Some(len),
            _ => None,
        };
        let job = Job {
            command,
            fua: req.flags & CMD_FLAG_FUA != 0,
            reply: Reply {
                inner: Some(ReplyInner {
                    tx: tx.clone(),
                    handle: req.handle,
                    connection: id,
                    read_len,
                    cost,
                }),
            },
            received: Instant::now(),
        };
        if let Err(mpsc::SendError(job)) = jobs.send(job) {
            job.reply.error(NbdErrno::Shutdown);
            return ConnectionEnd::DeviceGone;
        }
    }
}

/// The writer thread: writes each reply whole, in the order answered; after a failed write
/// it keeps draining (and counting lost) replies until every sender is gone.
fn write_replies<S: NbdStream>(
    rx: Receiver<OutgoingBox>,
    stream: S,
    shutter: S,
    counters: &Counters,
    budget: &Budget,
    dead: &AtomicBool,
    write_error: &Mutex<Option<String>>,
) {
    let mut out = io::BufWriter::with_capacity(256 * 1024, stream);
    let mut failed = false;
    // Replies buffered since the last successful flush (delivered only once flushed), and
    // the read bytes they carry.
    let (mut pending, mut pending_bytes) = (0u64, 0u64);
    let fail = |e: io::Error, failed: &mut bool, pending: &mut u64| {
        bump(&counters.replies_lost, std::mem::take(pending));
        if !*failed {
            *failed = true;
            *write_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
            dead.store(true, Ordering::Release);
            // Wake the reader if it is blocked on the socket.
            let _ = shutter.shutdown_stream(Shutdown::Both);
        }
    };
    let flush = |out: &mut io::BufWriter<S>,
                 failed: &mut bool,
                 pending: &mut u64,
                 pending_bytes: &mut u64| {
        if *failed {
            return;
        }
        match out.flush() {
            Ok(()) => {
                bump(&counters.bytes_read, std::mem::take(pending_bytes));
                *pending = 0;
            }
            Err(e) => fail(e, failed, pending),
        }
    };
    while let Ok(first) = rx.recv() {
        let mut next = Some(first);
        while let Some(OutgoingBox(msg)) = next {
            if msg.error != 0 {
                bump(&counters.errors, 1);
            }
            if msg.unanswered {
                bump(&counters.unanswered, 1);
            }
            if msg.device_fault {
                bump(&counters.device_faults, 1);
            }
            if failed {
                bump(&counters.replies_lost, 1);
            } else {
                let header = encode_simple_reply(msg.error, msg.handle);
                pending += 1;
                pending_bytes += msg.read_bytes;
                let result = out
                    .write_all(&header)
                    .and_then(|()| out.write_all(&msg.data));
                if let Err(e) = result {
                    fail(e, &mut failed, &mut pending);
                }
            }
            budget.release(msg.cost);
            next = rx.try_recv().ok();
        }
        flush(&mut out, &mut failed, &mut pending, &mut pending_bytes);
    }
    flush(&mut out, &mut failed, &mut pending, &mut pending_bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn export() -> Export {
        Export {
            name: "flash".into(),
            description: "a test export".into(),
            size_bytes: 1 << 20,
            block_min: 512,
            block_preferred: 4096,
            block_max: 64 * 1024,
            multi_conn: true,
        }
    }

    fn req(kind: u16, flags: u16, offset: u64, len: u32) -> RequestHeader {
        RequestHeader {
            magic: REQUEST_MAGIC,
            flags,
            kind,
            handle: 7,
            offset,
            len,
        }
    }

    #[test]
    fn request_header_round_trips_big_endian() {
        let r = RequestHeader {
            magic: REQUEST_MAGIC,
            flags: 0x0102,
            kind: 0x0304,
            handle: 0x0506_0708_090a_0b0c,
            offset: 0x1122_3344_5566_7788,
            len: 0x99aa_bbcc,
        };
        let b = r.encode();
        assert_eq!(&b[0..4], &[0x25, 0x60, 0x95, 0x13]);
        assert_eq!(&b[4..8], &[1, 2, 3, 4]);
        assert_eq!(&b[24..28], &[0x99, 0xaa, 0xbb, 0xcc]);
        assert_eq!(RequestHeader::decode(&b), r);
    }

    #[test]
    fn simple_and_option_replies_have_the_wire_layout() {
        let s = encode_simple_reply(22, 0xdead_beef);
        assert_eq!(&s[0..4], &[0x67, 0x44, 0x66, 0x98]);
        assert_eq!(&s[4..8], &[0, 0, 0, 22]);
        assert_eq!(&s[8..16], &0xdead_beef_u64.to_be_bytes());
        let o = encode_option_reply(OPT_GO, REP_ERR_UNKNOWN, b"xy");
        assert_eq!(o.len(), 22);
        assert_eq!(&o[0..8], &[0, 3, 0xe8, 0x89, 0x04, 0x55, 0x65, 0xa9]);
        assert_eq!(&o[8..12], &7u32.to_be_bytes());
        assert_eq!(&o[12..16], &0x8000_0006u32.to_be_bytes());
        assert_eq!(&o[16..20], &2u32.to_be_bytes());
        assert_eq!(&o[20..], b"xy");
    }

    #[test]
    fn info_replies_carry_export_block_sizes_and_asked_strings() {
        let e = export();
        let bytes = encode_info_replies(OPT_GO, &e, &[INFO_NAME, INFO_NAME, 99]);
        // Walk the replies.
        let mut at = 0;
        let mut seen = Vec::new();
        while at < bytes.len() {
            let kind = u32::from_be_bytes(bytes[at + 12..at + 16].try_into().unwrap());
            let len = u32::from_be_bytes(bytes[at + 16..at + 20].try_into().unwrap()) as usize;
            let data = &bytes[at + 20..at + 20 + len];
            if kind == REP_INFO {
                let info = u16::from_be_bytes([data[0], data[1]]);
                match info {
                    INFO_EXPORT => {
                        assert_eq!(data.len(), 12);
                        assert_eq!(u64::from_be_bytes(data[2..10].try_into().unwrap()), 1 << 20);
                        let flags = u16::from_be_bytes([data[10], data[11]]);
                        assert_eq!(flags, 0x1 | 0x4 | 0x8 | 0x20 | 0x40 | 0x100);
                    }
                    INFO_BLOCK_SIZE => {
                        assert_eq!(data.len(), 14);
                        let at = |i: usize| u32::from_be_bytes(data[i..i + 4].try_into().unwrap());
                        assert_eq!((at(2), at(6), at(10)), (512, 4096, 65536));
                    }
                    INFO_NAME => assert_eq!(&data[2..], b"flash"),
                    other => panic!("unexpected info {other}"),
                }
                seen.push(info);
            } else {
                assert_eq!(kind, REP_ACK);
                assert_eq!(at + 20, bytes.len(), "ACK comes last");
            }
            at += 20 + len;
        }
        assert_eq!(seen, vec![INFO_EXPORT, INFO_NAME, INFO_BLOCK_SIZE]);
    }

    #[test]
    fn info_request_parsing_checks_every_length() {
        let mut d = 5u32.to_be_bytes().to_vec();
        d.extend_from_slice(b"flash");
        d.extend_from_slice(&2u16.to_be_bytes());
        d.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
        d.extend_from_slice(&INFO_NAME.to_be_bytes());
        let ok = parse_info_request(&d).unwrap();
        assert_eq!(ok.name, b"flash");
        assert_eq!(ok.requests, vec![INFO_BLOCK_SIZE, INFO_NAME]);
        // One byte short, one byte long, a name longer than the data, a huge name length.
        assert!(parse_info_request(&d[..d.len() - 1]).is_err());
        let mut long = d.clone();
        long.push(0);
        assert!(parse_info_request(&long).is_err());
        let mut liar = 200u32.to_be_bytes().to_vec();
        liar.extend_from_slice(&[0; 10]);
        assert!(parse_info_request(&liar)
            .unwrap_err()
            .contains("does not fit"));
        let huge = u32::MAX.to_be_bytes().to_vec();
        assert!(parse_info_request(&[huge, vec![0, 0]].concat())
            .unwrap_err()
            .contains("over the limit"));
        assert!(parse_info_request(&[0, 0, 0]).is_err());
        assert_eq!(
            parse_info_request(&[0, 0, 0, 0, 0, 0]).unwrap(),
            InfoRequest {
                name: vec![],
                requests: vec![]
            }
        );
    }

    #[test]
    fn validation_answers_each_bad_request_with_the_documented_error() {
        let e = export();
        let size = e.size_bytes;
        use NbdErrno::*;
        let cases: Vec<(RequestHeader, Result<Checked, NbdErrno>)> = vec![
            (
                req(CMD_READ, 0, 0, 4096),
                Ok(Checked::Read {
                    offset: 0,
                    len: 4096,
                }),
            ),
            (
                req(CMD_WRITE, CMD_FLAG_FUA, size - 512, 512),
                Ok(Checked::Write {
                    offset: size - 512,
                    len: 512,
                }),
            ),
            (req(CMD_READ, 0, size - 512, 1024), Err(Inval)),
            (req(CMD_WRITE, 0, size - 512, 1024), Err(NoSpc)),
            (req(CMD_TRIM, 0, size, 512), Err(NoSpc)),
            (req(CMD_WRITE_ZEROES, 0, u64::MAX - 511, 1024), Err(NoSpc)),
            (req(CMD_READ, 0, u64::MAX, 512), Err(Inval)),
            (req(CMD_READ, 0, 100, 512), Err(Inval)),
            (req(CMD_WRITE, 0, 0, 100), Err(Inval)),
            (req(CMD_READ, 0, 0, 0), Err(Inval)),
            (req(CMD_TRIM, 0, 0, 0), Err(Inval)),
            (req(CMD_READ, 0, 0, 128 * 1024), Err(Inval)),
            (req(CMD_WRITE, 0, 0, 128 * 1024), Err(Inval)),
            // Trim and write-zeroes carry no payload: block_max does not bind them.
            (
                req(CMD_TRIM, 0, 0, 128 * 1024),
                Ok(Checked::Trim {
                    offset: 0,
                    len: 128 * 1024,
                }),
            ),
            (
                req(CMD_WRITE_ZEROES, CMD_FLAG_NO_HOLE | CMD_FLAG_FUA, 512, 1024),
                Ok(Checked::WriteZeroes {
                    offset: 512,
                    len: 1024,
                    no_hole: true,
                }),
            ),
            (req(CMD_WRITE, CMD_FLAG_NO_HOLE, 0, 512), Err(Inval)),
            (req(CMD_READ, CMD_FLAG_DF, 0, 512), Err(Inval)),
            (
                req(CMD_WRITE_ZEROES, CMD_FLAG_FAST_ZERO, 0, 512),
                Err(Inval),
            ),
            (req(CMD_READ, 0x8000, 0, 512), Err(Inval)),
            (req(CMD_FLUSH, 0, 0, 0), Ok(Checked::Flush)),
            (req(CMD_FLUSH, CMD_FLAG_FUA, 0, 0), Ok(Checked::Flush)),
            (req(CMD_FLUSH, 0, 512, 0), Err(Inval)),
            (req(CMD_FLUSH, 0, 0, 512), Err(Inval)),
            (req(CMD_CACHE, 0, 0, 512), Err(Inval)),
            (req(CMD_BLOCK_STATUS, 0, 0, 512), Err(Inval)),
            (req(999, 0, 0, 512), Err(Inval)),
            (req(CMD_DISC, 0, 0, 0), Ok(Checked::Disconnect)),
        ];
        for (r, want) in cases {
            assert_eq!(validate(&r, &e), want, "{r:?}");
        }
    }

    #[test]
    fn export_validation_names_the_bad_field() {
        let ok = export();
        assert_eq!(ok.validate(), Ok(()));
        let bad = |f: &dyn Fn(&mut Export)| {
            let mut e = export();
            f(&mut e);
            e.validate().unwrap_err()
        };
        assert!(bad(&|e| e.block_min = 3).contains("block_min"));
        assert!(bad(&|e| e.block_min = 1 << 17).contains("block_min"));
        assert!(bad(&|e| e.block_preferred = 256).contains("block_preferred"));
        assert!(bad(&|e| e.block_max = 1000).contains("block_max"));
        assert!(bad(&|e| e.block_max = 128 << 20).contains("block_max"));
        assert!(bad(&|e| e.size_bytes = 1000).contains("size_bytes"));
        assert!(bad(&|e| e.name = "a\0b".into()).contains("NUL"));
        assert!(bad(&|e| e.description = "x".repeat(5000)).contains("description"));
    }

    #[test]
    fn errno_values_are_proto_md_values() {
        let all = [
            (NbdErrno::Perm, 1),
            (NbdErrno::Io, 5),
            (NbdErrno::NoMem, 12),
            (NbdErrno::Inval, 22),
            (NbdErrno::NoSpc, 28),
            (NbdErrno::Overflow, 75),
            (NbdErrno::NotSup, 95),
            (NbdErrno::Shutdown, 108),
        ];
        for (e, code) in all {
            assert_eq!(e.code(), code);
            assert_eq!(NbdErrno::from_code(code), Some(e));
        }
        assert_eq!(NbdErrno::from_code(0), None);
    }

    /// A reply dropped unanswered, or answered with data of the wrong length, reaches the
    /// client as EIO; the right answer as success with its data.
    #[test]
    fn replies_are_checked_and_dropped_replies_send_eio() {
        let (tx, rx) = mpsc::channel();
        let make = |handle, read_len| Reply {
            inner: Some(ReplyInner {
                tx: tx.clone(),
                handle,
                connection: 3,
                read_len,
                cost: 0,
            }),
        };
        let r = make(1, Some(4));
        assert_eq!((r.handle(), r.connection()), (1, 3));
        r.ok(b"abcd");
        make(2, Some(4)).ok(b"abc");
        make(3, None).ok(b"x");
        drop(make(4, None));
        make(5, None).error(NbdErrno::NoSpc);
        make(6, None).ok_data(Vec::new());
        drop(tx);
        let got: Vec<(u64, u32, Vec<u8>, bool)> = rx
            .iter()
            .map(|OutgoingBox(o)| (o.handle, o.error, o.data, o.unanswered))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, 0, b"abcd".to_vec(), false),
                (2, 5, vec![], false),
                (3, 5, vec![], false),
                (4, 5, vec![], true),
                (5, 28, vec![], false),
                (6, 0, vec![], false),
            ]
        );
    }
}
