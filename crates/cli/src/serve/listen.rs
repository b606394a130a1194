//! Where an NBD server listens ([`Listen`]: `unix:PATH` or `tcp:HOST:PORT`) and the
//! accepting server ([`Server`]): one thread per connection, each running
//! [`nbd::serve_connection`](super::nbd::serve_connection), until a stop flag is set.
//!
//! Choices: a Unix socket path that exists is removed only if it is a socket nobody listens
//! on (a stale one, connection refused); anything else there is an error naming it. The
//! server removes its socket file when dropped (if it is still the one it created). Replies
//! to a client that has not read for [`WRITE_TIMEOUT`] are given up (the connection ends),
//! so a stuck client holds only its own connection. On stop, the server stops accepting,
//! shuts down the reading side of every open connection (each then waits for its requests in
//! flight to be answered, writes the replies and closes), and returns every connection's
//! statistics.

use std::collections::HashMap;
use std::io::{self, ErrorKind};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::Mutex;
use std::time::Duration;

use super::nbd::{serve_connection, ConnectionEnd, ConnectionStats, Export, Job};

/// A reply not written within this time ends its connection.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(60);
/// How often the accept loop looks at the stop flag.
const POLL: Duration = Duration::from_millis(20);
/// Longest Unix socket path Linux accepts (`sun_path` is 108 bytes with its NUL).
const MAX_UNIX_PATH: usize = 107;

/// Where to listen: `unix:PATH` or `tcp:HOST:PORT` (HOST a name, an IPv4 address or a
/// bracketed IPv6 address; a name is resolved when parsed, its first address used).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    Unix(PathBuf),
    Tcp(SocketAddr),
}

impl FromStr for Listen {
    type Err = String;

    fn from_str(s: &str) -> Result<Listen, String> {
        let usage =
            "expected unix:PATH or tcp:HOST:PORT (e.g. unix:/tmp/flash.sock, tcp:127.0.0.1:10809)";
        if let Some(path) = s.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(format!("`{s}`: the socket path is empty; {usage}"));
            }
            if path.len() > MAX_UNIX_PATH {
                return Err(format!(
                    "`{s}`: the socket path is {} bytes, Unix sockets allow at most {MAX_UNIX_PATH}",
                    path.len()
                ));
            }
            return Ok(Listen::Unix(PathBuf::from(path)));
        }
        let Some(rest) = s.strip_prefix("tcp:") else {
            return Err(format!("`{s}`: {usage}"));
        };
        let Some((host, port)) = rest.rsplit_once(':') else {
            return Err(format!("`{s}`: no port; {usage}"));
        };
        let port: u16 = port
            .parse()
            .map_err(|_| format!("`{s}`: port `{port}` is not a number from 0 to 65535"))?;
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        if host.is_empty() {
            return Err(format!("`{s}`: no host; {usage}"));
        }
        if let Ok(ip) = host.parse::<std::net::IpAddr>() {
            return Ok(Listen::Tcp(SocketAddr::new(ip, port)));
        }
        let mut addresses = (host, port)
            .to_socket_addrs()
            .map_err(|e| format!("`{s}`: cannot resolve host `{host}`: {e}"))?;
        addresses
            .next()
            .map(Listen::Tcp)
            .ok_or_else(|| format!("`{s}`: host `{host}` has no address"))
    }
}

impl std::fmt::Display for Listen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Listen::Unix(p) => write!(f, "unix:{}", p.display()),
            Listen::Tcp(a) => write!(f, "tcp:{a}"),
        }
    }
}

impl Listen {
    /// The NBD URI clients (nbdinfo, nbdcopy, fio's nbd engine, qemu) connect with:
    /// `nbd+unix:///?socket=PATH` or `nbd://HOST:PORT/` (default export).
    pub fn nbd_uri(&self) -> String {
        match self {
            Listen::Unix(p) => {
                let path = p.to_string_lossy();
                let mut encoded = String::new();
                for b in path.bytes() {
                    if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
                        encoded.push(b as char);
                    } else {
                        encoded.push_str(&format!("%{b:02X}"));
                    }
                }
                format!("nbd+unix:///?socket={encoded}")
            }
            Listen::Tcp(a) => format!("nbd://{a}/"),
        }
    }
}

enum Listener {
    Unix(UnixListener),
    Tcp(TcpListener),
}

/// A connection's stream, kept so the server can shut it down on stop.
enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Stream {
    fn shutdown(&self, how: Shutdown) {
        let _ = match self {
            Stream::Unix(s) => s.shutdown(how),
            Stream::Tcp(s) => s.shutdown(how),
        };
    }
}

/// What the server reports as it runs (see [`Server::run_logged`]).
#[derive(Debug)]
pub enum ServerEvent<'a> {
    /// A client connected.
    Connected { id: u64, peer: &'a str },
    /// A connection ended, with its statistics.
    Ended(&'a ConnectionStats),
    /// `accept` failed (e.g. out of file descriptors); the server keeps going.
    AcceptFailed(&'a io::Error),
}

/// A bound NBD server.
pub struct Server {
    listener: Listener,
    address: Listen,
    /// The socket file created, and its device and inode (removed on drop if unchanged).
    socket_file: Option<(PathBuf, u64, u64)>,
    next_id: AtomicU64,
}

impl Server {
    /// Binds `listen`. A TCP port 0 picks a free port ([`Server::local_address`] tells it).
    /// Errors name the address and what is wrong (in use, an existing file, permissions).
    pub fn bind(listen: &Listen) -> io::Result<Server> {
        let (listener, address, socket_file) = match listen {
            Listen::Unix(path) => {
                remove_stale_socket(path)?;
                let l = UnixListener::bind(path).map_err(|e| {
                    io::Error::new(e.kind(), format!("cannot listen on {listen}: {e}"))
                })?;
                let meta = std::fs::metadata(path)?;
                (
                    Listener::Unix(l),
                    listen.clone(),
                    Some((path.clone(), meta.dev(), meta.ino())),
                )
            }
            Listen::Tcp(addr) => {
                let l = TcpListener::bind(addr).map_err(|e| {
                    let why = if e.kind() == ErrorKind::AddrInUse {
                        "the address is in use (another server on this port?)".to_string()
                    } else {
                        e.to_string()
                    };
                    io::Error::new(e.kind(), format!("cannot listen on {listen}: {why}"))
                })?;
                let actual = l.local_addr()?;
                (Listener::Tcp(l), Listen::Tcp(actual), None)
            }
        };
        Ok(Server {
            listener,
            address,
            socket_file,
            next_id: AtomicU64::new(1),
        })
    }

    /// The address bound (with the actual port when port 0 was asked).
    pub fn local_address(&self) -> &Listen {
        &self.address
    }

    /// Serves `export` until `stop` is set, handing every valid request to `jobs`; returns
    /// the statistics of every connection, in the order they ended. See [`Server::run_logged`].
    pub fn run(
        &self,
        export: &Export,
        jobs: Sender<Job>,
        stop: &AtomicBool,
    ) -> io::Result<Vec<ConnectionStats>> {
        self.run_logged(export, jobs, stop, &|_| {})
    }

    /// [`Server::run`], calling `log` (from any connection's thread) when a connection starts
    /// and ends and when `accept` fails. Returns once `stop` is set and every connection has
    /// ended (each answers its requests in flight first, so the device must keep answering
    /// until this returns). An invalid export is an `InvalidInput` error before anything is
    /// accepted.
    pub fn run_logged(
        &self,
        export: &Export,
        jobs: Sender<Job>,
        stop: &AtomicBool,
        log: &(dyn Fn(&ServerEvent) + Sync),
    ) -> io::Result<Vec<ConnectionStats>> {
        export
            .validate()
            .map_err(|e| io::Error::new(ErrorKind::InvalidInput, format!("export: {e}")))?;
        match &self.listener {
            Listener::Unix(l) => l.set_nonblocking(true)?,
            Listener::Tcp(l) => l.set_nonblocking(true)?,
        }
        let open: Mutex<HashMap<u64, Stream>> = Mutex::new(HashMap::new());
        let (done_tx, done_rx) = mpsc::channel::<ConnectionStats>();
        std::thread::scope(|scope| {
            while !stop.load(Ordering::Acquire) {
                let accepted = match &self.listener {
                    Listener::Unix(l) => l.accept().and_then(|(s, _)| {
                        s.set_nonblocking(false)?;
                        s.set_write_timeout(Some(WRITE_TIMEOUT))?;
                        Ok((Stream::Unix(s), "unix socket".to_string()))
                    }),
                    Listener::Tcp(l) => l.accept().and_then(|(s, peer)| {
                        s.set_nonblocking(false)?;
                        s.set_nodelay(true)?;
                        s.set_write_timeout(Some(WRITE_TIMEOUT))?;
                        Ok((Stream::Tcp(s), peer.to_string()))
                    }),
                };
                let (stream, peer) = match accepted {
                    Ok(a) => a,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        std::thread::sleep(POLL);
                        continue;
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            ErrorKind::Interrupted | ErrorKind::ConnectionAborted
                        ) =>
                    {
                        continue
                    }
                    Err(e) => {
                        log(&ServerEvent::AcceptFailed(&e));
                        std::thread::sleep(POLL * 5);
                        continue;
                    }
                };
                let id = self.next_id.fetch_add(1, Ordering::Relaxed);
                let kept = match &stream {
                    Stream::Unix(s) => s.try_clone().map(Stream::Unix),
                    Stream::Tcp(s) => s.try_clone().map(Stream::Tcp),
                };
                match kept {
                    Ok(k) => {
                        open.lock().unwrap_or_else(|p| p.into_inner()).insert(id, k);
                    }
                    Err(e) => {
                        log(&ServerEvent::AcceptFailed(&e));
                        continue;
                    }
                }
                log(&ServerEvent::Connected { id, peer: &peer });
                let (jobs, done_tx, open) = (jobs.clone(), done_tx.clone(), &open);
                scope.spawn(move || {
                    let mut stats = match stream {
                        Stream::Unix(s) => serve_connection(s, export, &jobs, id, &peer),
                        Stream::Tcp(s) => serve_connection(s, export, &jobs, id, &peer),
                    };
                    open.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
                    if stop.load(Ordering::Acquire)
                        && matches!(stats.end, ConnectionEnd::Closed { .. })
                    {
                        stats.end = ConnectionEnd::Stopped;
                    }
                    log(&ServerEvent::Ended(&stats));
                    let _ = done_tx.send(stats);
                });
            }
            // Stopping: wake every reader; each connection finishes its requests in flight.
            for stream in open.lock().unwrap_or_else(|p| p.into_inner()).values() {
                stream.shutdown(Shutdown::Read);
            }
        });
        drop(done_tx);
        Ok(done_rx.iter().collect())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some((path, dev, ino)) = &self.socket_file {
            if let Ok(meta) = std::fs::symlink_metadata(path) {
                if meta.dev() == *dev && meta.ino() == *ino {
                    let _ = std::fs::remove_file(path);
                }
            }
        }
    }
}

/// Removes `path` if it is a Unix socket nobody listens on; refuses anything else there.
fn remove_stale_socket(path: &Path) -> io::Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(io::Error::new(
                e.kind(),
                format!("cannot listen on unix:{}: {e}", path.display()),
            ))
        }
    };
    if !meta.file_type().is_socket() {
        return Err(io::Error::new(
            ErrorKind::AlreadyExists,
            format!(
                "cannot listen on unix:{}: the path exists and is not a socket (not removed)",
                path.display()
            ),
        ));
    }
    match UnixStream::connect(path) {
        Ok(_) => Err(io::Error::new(
            ErrorKind::AddrInUse,
            format!(
                "cannot listen on unix:{}: another server is listening on this socket",
                path.display()
            ),
        )),
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
            std::fs::remove_file(path).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "cannot remove the stale socket {}: {e}",
                        path.display()
                    ),
                )
            })
        }
        Err(e) => Err(io::Error::new(
            e.kind(),
            format!(
                "cannot listen on unix:{}: a socket is there and connecting to it failed ({e}); not removed",
                path.display()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_parses_both_forms_and_explains_errors() {
        assert_eq!(
            "unix:/tmp/x.sock".parse::<Listen>(),
            Ok(Listen::Unix("/tmp/x.sock".into()))
        );
        assert_eq!(
            "tcp:127.0.0.1:10809".parse::<Listen>(),
            Ok(Listen::Tcp("127.0.0.1:10809".parse().unwrap()))
        );
        assert_eq!(
            "tcp:[::1]:99".parse::<Listen>(),
            Ok(Listen::Tcp("[::1]:99".parse().unwrap()))
        );
        let localhost = "tcp:localhost:10809".parse::<Listen>().unwrap();
        assert!(matches!(localhost, Listen::Tcp(a) if a.port() == 10809 && a.ip().is_loopback()));
        let err = |s: &str| s.parse::<Listen>().unwrap_err();
        assert!(err("unix:").contains("socket path is empty"));
        assert!(err("udp:1.2.3.4:5").contains("expected unix:PATH or tcp:HOST:PORT"));
        assert!(err("tcp:127.0.0.1").contains("no port"));
        assert!(err("tcp:127.0.0.1:70000").contains("port `70000`"));
        assert!(err("tcp::80").contains("no host"));
        assert!(err(&format!("unix:/{}", "a".repeat(200))).contains("at most 107"));
    }

    #[test]
    fn listen_displays_and_gives_nbd_uris() {
        let u = Listen::Unix("/tmp/a b.sock".into());
        assert_eq!(u.to_string(), "unix:/tmp/a b.sock");
        assert_eq!(u.nbd_uri(), "nbd+unix:///?socket=/tmp/a%20b.sock");
        let t = Listen::Tcp("127.0.0.1:10809".parse().unwrap());
        assert_eq!(t.to_string(), "tcp:127.0.0.1:10809");
        assert_eq!(t.nbd_uri(), "nbd://127.0.0.1:10809/");
    }

    #[test]
    fn bind_refuses_live_sockets_and_other_files_and_replaces_stale_sockets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listen = Listen::Unix(path.clone());
        let first = Server::bind(&listen).unwrap();
        let e = Server::bind(&listen).err().unwrap();
        assert_eq!(e.kind(), ErrorKind::AddrInUse);
        assert!(e.to_string().contains("another server is listening"), "{e}");
        // A stale socket (its listener gone, the file left) is replaced.
        let stale = UnixListener::bind(dir.path().join("stale.sock")).unwrap();
        drop(stale);
        assert!(dir.path().join("stale.sock").exists());
        let second = Server::bind(&Listen::Unix(dir.path().join("stale.sock"))).unwrap();
        drop(second);
        assert!(!dir.path().join("stale.sock").exists(), "removed on drop");
        // A regular file is never removed.
        let file = dir.path().join("data");
        std::fs::write(&file, b"keep").unwrap();
        let e = Server::bind(&Listen::Unix(file.clone())).err().unwrap();
        assert!(e.to_string().contains("not a socket"), "{e}");
        assert_eq!(std::fs::read(&file).unwrap(), b"keep");
        drop(first);
        assert!(!path.exists());
        // TCP: a port in use.
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap();
        let e = Server::bind(&Listen::Tcp(addr)).err().unwrap();
        assert!(e.to_string().contains("in use"), "{e}");
        let any = Server::bind(&Listen::Tcp("127.0.0.1:0".parse().unwrap())).unwrap();
        assert!(matches!(any.local_address(), Listen::Tcp(a) if a.port() != 0));
    }
}
