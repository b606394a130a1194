//! Helpers of the NBD tests: an in-memory device that consumes the server's jobs, a server
//! running on a temporary Unix socket, a minimal hand-written NBD client for raw requests, and
//! the check that a client tool is installed.

#![allow(dead_code)] // each test file uses its own subset

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use flashlab_cli::serve::listen::{Listen, Server};
use flashlab_cli::serve::nbd::*;

/// A device keeping the export's bytes in memory, answering jobs in arrival order on one
/// thread (as the simulator's device thread will), optionally after a delay per job.
pub struct MemoryDevice {
    pub data: Arc<Mutex<Vec<u8>>>,
    pub jobs_done: Arc<AtomicU64>,
    pub flushes: Arc<AtomicU64>,
    pub fua: Arc<AtomicU64>,
    handle: Option<JoinHandle<()>>,
}

impl MemoryDevice {
    /// Starts the device thread; the sender is what the server hands jobs to.
    pub fn start(size: usize, delay: Duration) -> (MemoryDevice, Sender<Job>) {
        let (tx, rx) = mpsc::channel::<Job>();
        let data = Arc::new(Mutex::new(vec![0u8; size]));
        let jobs_done = Arc::new(AtomicU64::new(0));
        let flushes = Arc::new(AtomicU64::new(0));
        let fua = Arc::new(AtomicU64::new(0));
        let (d, j, f, u) = (
            data.clone(),
            jobs_done.clone(),
            flushes.clone(),
            fua.clone(),
        );
        let handle = std::thread::spawn(move || {
            for job in rx {
                if !delay.is_zero() {
                    std::thread::sleep(delay);
                }
                if job.fua {
                    u.fetch_add(1, Ordering::Relaxed);
                }
                let mut mem = d.lock().unwrap();
                match job.command {
                    Command::Read { offset, len } => {
                        let at = offset as usize;
                        let out = mem[at..at + len as usize].to_vec();
                        drop(mem);
                        job.reply.ok_data(out);
                    }
                    Command::Write { offset, data } => {
                        let at = offset as usize;
                        mem[at..at + data.len()].copy_from_slice(&data);
                        drop(mem);
                        job.reply.ok(&[]);
                    }
                    Command::Flush => {
                        f.fetch_add(1, Ordering::Relaxed);
                        drop(mem);
                        job.reply.ok(&[]);
                    }
                    Command::Trim { offset, len } | Command::WriteZeroes { offset, len, .. } => {
                        let at = offset as usize;
                        mem[at..at + len as usize].fill(0);
                        drop(mem);
                        job.reply.ok(&[]);
                    }
                }
                j.fetch_add(1, Ordering::Relaxed);
            }
        });
        (
            MemoryDevice {
                data,
                jobs_done,
                flushes,
                fua,
                handle: Some(handle),
            },
            tx,
        )
    }

    /// Waits for the device thread (it ends when every job sender is gone).
    pub fn join(mut self) {
        if let Some(h) = self.handle.take() {
            h.join().expect("device thread panicked");
        }
    }
}

pub fn export(size: u64) -> Export {
    Export {
        name: "flash".into(),
        description: "flashlab test export".into(),
        size_bytes: size,
        block_min: 512,
        block_preferred: 4096,
        block_max: 1 << 20,
        multi_conn: true,
    }
}

/// A server on a Unix socket in a temporary directory, with a memory device behind it.
pub struct Running {
    pub listen: Listen,
    pub socket: PathBuf,
    pub stop: Arc<AtomicBool>,
    pub device: MemoryDevice,
    pub export: Export,
    server: Option<JoinHandle<std::io::Result<Vec<ConnectionStats>>>>,
    _dir: tempfile::TempDir,
}

impl Running {
    pub fn start(export: Export, delay: Duration) -> Running {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("nbd.sock");
        let listen = Listen::Unix(socket.clone());
        let server = Server::bind(&listen).unwrap();
        let (device, jobs) = MemoryDevice::start(export.size_bytes as usize, delay);
        let stop = Arc::new(AtomicBool::new(false));
        let (s, e) = (stop.clone(), export.clone());
        let handle = std::thread::spawn(move || server.run(&e, jobs, &s));
        Running {
            listen,
            socket,
            stop,
            device,
            export,
            server: Some(handle),
            _dir: dir,
        }
    }

    pub fn uri(&self) -> String {
        self.listen.nbd_uri()
    }

    pub fn snapshot(&self) -> Vec<u8> {
        self.device.data.lock().unwrap().clone()
    }

    /// Stops the server; the statistics of every connection it served.
    pub fn stop(mut self) -> Vec<ConnectionStats> {
        self.stop.store(true, Ordering::Release);
        let stats = self
            .server
            .take()
            .unwrap()
            .join()
            .expect("server thread panicked")
            .expect("server run failed");
        let device = std::mem::replace(
            &mut self.device,
            MemoryDevice {
                data: Arc::default(),
                jobs_done: Arc::default(),
                flushes: Arc::default(),
                fua: Arc::default(),
                handle: None,
            },
        );
        device.join();
        stats
    }
}

/// Whether client `tool` (from Debian package `package`) can be run. Missing: a failure naming
/// the package, or with FLASHLAB_SKIP_CLIENT_TESTS=1 a note and `false`.
pub fn have_tool(tool: &str, package: &str) -> bool {
    let found = std::process::Command::new("/bin/sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if found {
        return true;
    }
    if std::env::var("FLASHLAB_SKIP_CLIENT_TESTS").as_deref() == Ok("1") {
        eprintln!("skipped: `{tool}` is not installed (FLASHLAB_SKIP_CLIENT_TESTS=1)");
        return false;
    }
    panic!(
        "`{tool}` is not installed: install the Debian package `{package}` \
         (apt-get install {package}), or set FLASHLAB_SKIP_CLIENT_TESTS=1 to skip this test"
    );
}

/// A minimal NBD client speaking raw bytes, to send what real clients never send.
pub struct RawClient {
    pub stream: UnixStream,
    pub size: u64,
    pub flags: u16,
}

/// A simple reply as read back.
#[derive(Debug, PartialEq, Eq)]
pub struct RawReply {
    pub error: u32,
    pub handle: u64,
    pub data: Vec<u8>,
}

pub fn read_u16(s: &mut impl Read) -> u16 {
    let mut b = [0; 2];
    s.read_exact(&mut b).unwrap();
    u16::from_be_bytes(b)
}
pub fn read_u32(s: &mut impl Read) -> u32 {
    let mut b = [0; 4];
    s.read_exact(&mut b).unwrap();
    u32::from_be_bytes(b)
}
pub fn read_u64(s: &mut impl Read) -> u64 {
    let mut b = [0; 8];
    s.read_exact(&mut b).unwrap();
    u64::from_be_bytes(b)
}

/// An option request's bytes.
pub fn option(option: u32, data: &[u8]) -> Vec<u8> {
    let mut b = IHAVEOPT.to_be_bytes().to_vec();
    b.extend_from_slice(&option.to_be_bytes());
    b.extend_from_slice(&(data.len() as u32).to_be_bytes());
    b.extend_from_slice(data);
    b
}

/// `NBD_OPT_GO` / `NBD_OPT_INFO` data for `name` asking for `infos`.
pub fn info_data(name: &str, infos: &[u16]) -> Vec<u8> {
    let mut d = (name.len() as u32).to_be_bytes().to_vec();
    d.extend_from_slice(name.as_bytes());
    d.extend_from_slice(&(infos.len() as u16).to_be_bytes());
    for i in infos {
        d.extend_from_slice(&i.to_be_bytes());
    }
    d
}

/// One option reply: (option, reply type, data).
pub fn read_option_reply(s: &mut impl Read) -> (u32, u32, Vec<u8>) {
    assert_eq!(read_u64(s), OPTION_REPLY_MAGIC, "option reply magic");
    let opt = read_u32(s);
    let kind = read_u32(s);
    let len = read_u32(s) as usize;
    let mut data = vec![0; len];
    s.read_exact(&mut data).unwrap();
    (opt, kind, data)
}

/// Reads the greeting and sends the client flags (fixed newstyle, no zeroes).
pub fn greet(s: &mut UnixStream) {
    assert_eq!(read_u64(s), NBDMAGIC);
    assert_eq!(read_u64(s), IHAVEOPT);
    let flags = read_u16(s);
    assert_eq!(flags, FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES);
    s.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes())
        .unwrap();
}

impl RawClient {
    /// Connects and enters transmission with `NBD_OPT_GO`.
    pub fn connect(socket: &std::path::Path) -> RawClient {
        Self::over(UnixStream::connect(socket).unwrap())
    }

    /// Handshake over an already connected stream.
    pub fn over(mut stream: UnixStream) -> RawClient {
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        greet(&mut stream);
        stream
            .write_all(&option(OPT_GO, &info_data("", &[INFO_BLOCK_SIZE])))
            .unwrap();
        let (mut size, mut flags) = (0, 0);
        loop {
            let (opt, kind, data) = read_option_reply(&mut stream);
            assert_eq!(opt, OPT_GO);
            if kind == REP_ACK {
                break;
            }
            assert_eq!(kind, REP_INFO, "GO failed: {kind:#x} {data:?}");
            if u16::from_be_bytes([data[0], data[1]]) == INFO_EXPORT {
                size = u64::from_be_bytes(data[2..10].try_into().unwrap());
                flags = u16::from_be_bytes([data[10], data[11]]);
            }
        }
        RawClient {
            stream,
            size,
            flags,
        }
    }

    /// Sends one request (and its payload, if any).
    pub fn send(
        &mut self,
        kind: u16,
        flags: u16,
        handle: u64,
        offset: u64,
        len: u32,
        payload: &[u8],
    ) {
        let h = RequestHeader {
            magic: REQUEST_MAGIC,
            flags,
            kind,
            handle,
            offset,
            len,
        };
        let mut b = h.encode().to_vec();
        b.extend_from_slice(payload);
        self.stream.write_all(&b).unwrap();
    }

    /// Reads one simple reply; `data_len(handle)` tells how many data bytes follow a
    /// successful reply to that handle.
    pub fn reply(&mut self, data_len: impl Fn(u64) -> usize) -> RawReply {
        assert_eq!(read_u32(&mut self.stream), SIMPLE_REPLY_MAGIC);
        let error = read_u32(&mut self.stream);
        let handle = read_u64(&mut self.stream);
        let mut data = Vec::new();
        if error == 0 {
            data = vec![0; data_len(handle)];
            self.stream.read_exact(&mut data).unwrap();
        }
        RawReply {
            error,
            handle,
            data,
        }
    }

    /// Sends a request and reads its reply (nothing else in flight).
    pub fn call(
        &mut self,
        kind: u16,
        flags: u16,
        offset: u64,
        len: u32,
        payload: &[u8],
    ) -> RawReply {
        self.send(kind, flags, 99, offset, len, payload);
        let n = if kind == CMD_READ { len as usize } else { 0 };
        let r = self.reply(|_| n);
        assert_eq!(r.handle, 99);
        r
    }

    /// Sends `NBD_CMD_DISC` and checks the server closes the stream.
    pub fn disconnect(mut self) {
        self.send(CMD_DISC, 0, 0, 0, 0, &[]);
        let mut rest = Vec::new();
        let _ = self.stream.read_to_end(&mut rest);
        assert!(rest.is_empty(), "bytes after NBD_CMD_DISC: {rest:?}");
    }
}
