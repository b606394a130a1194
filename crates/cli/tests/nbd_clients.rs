//! The NBD server against real clients (nbdinfo, qemu-img, qemu-io, nbdcopy, fio's nbd
//! engine) and against raw bad requests, with an in-memory device behind it. A missing client
//! fails its test naming the Debian package to install, unless FLASHLAB_SKIP_CLIENT_TESTS=1.

mod nbd_support;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::Command as Process;
use std::time::Duration;

use flashlab_cli::serve::nbd::*;
use nbd_support::*;
use rand::{RngCore, SeedableRng};

const MIB: u64 = 1 << 20;

fn run(program: &str, args: &[&str]) -> (bool, String) {
    let out = Process::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    let text = format!(
        "{program} {}\nexit: {:?}\nstdout:\n{}\nstderr:\n{}",
        args.join(" "),
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut v = vec![0u8; n];
    rand_pcg::Pcg64::seed_from_u64(seed).fill_bytes(&mut v);
    v
}

#[test]
fn nbdinfo_sees_the_export_its_block_sizes_and_flags() {
    if !have_tool("nbdinfo", "libnbd-bin") {
        return;
    }
    let s = Running::start(export(8 * MIB), Duration::ZERO);
    let (ok, out) = run("nbdinfo", &["--json", &s.uri()]);
    assert!(ok, "{out}");
    let json_start = out.find('{').unwrap();
    let json_end = out.rfind('}').unwrap();
    let v: serde_json::Value = serde_json::from_str(&out[json_start..=json_end]).expect(&out);
    let e = &v["exports"][0];
    assert_eq!(e["export-size"], 8 * MIB, "{out}");
    assert_eq!(e["export-name"], "flash", "{out}");
    assert_eq!(e["description"], "flashlab test export", "{out}");
    assert_eq!(e["block_size_minimum"], 512, "{out}");
    assert_eq!(e["block_size_preferred"], 4096, "{out}");
    assert_eq!(e["block_size_maximum"], MIB, "{out}");
    for (key, want) in [
        ("can_flush", true),
        ("can_fua", true),
        ("can_trim", true),
        ("can_zero", true),
        ("can_multi_conn", true),
        ("is_read_only", false),
        ("can_df", false),
        ("can_cache", false),
    ] {
        assert_eq!(e[key], want, "{key}: {out}");
    }
    // --list uses NBD_OPT_LIST, then NBD_OPT_INFO per export.
    let (ok, out) = run("nbdinfo", &["--list", "--json", &s.uri()]);
    assert!(ok, "{out}");
    assert!(out.contains("\"export-name\": \"flash\""), "{out}");
    // A wrong export name is refused (NBD_REP_ERR_UNKNOWN).
    let wrong = s.uri().replace("nbd+unix:///", "nbd+unix:///nosuch");
    let (ok, out) = run("nbdinfo", &[&wrong]);
    assert!(!ok, "{out}");
    assert!(out.contains("unknown") || out.contains("nosuch"), "{out}");
    let stats = s.stop();
    assert!(stats.len() >= 3, "{stats:?}");
}

#[test]
fn qemu_img_info_and_qemu_io_write_and_verify_patterns() {
    if !have_tool("qemu-img", "qemu-utils") || !have_tool("qemu-io", "qemu-utils") {
        return;
    }
    let s = Running::start(export(16 * MIB), Duration::ZERO);
    let (ok, out) = run("qemu-img", &["info", "--output=json", &s.uri()]);
    assert!(ok, "{out}");
    assert!(
        out.contains(&format!("\"virtual-size\": {}", 16 * MIB)),
        "{out}"
    );
    let uri = s.uri();
    let (ok, out) = run(
        "qemu-io",
        &[
            "-f",
            "raw",
            &uri,
            "-c",
            "write -P 0xab 0 64k",
            "-c",
            "write -P 0x5c 1M 1M",
            "-c",
            "write -z 4M 256k",
            "-c",
            "write -P 0x11 15M 1M",
            "-c",
            "flush",
            "-c",
            "discard 8M 1M",
            "-c",
            "write -f -P 0x77 12M 4k",
        ],
    );
    assert!(ok && !out.contains("failed"), "{out}");
    let (ok, out) = run(
        "qemu-io",
        &[
            "-f",
            "raw",
            &uri,
            "-c",
            "read -P 0xab 0 64k",
            "-c",
            "read -P 0x5c 1M 1M",
            "-c",
            "read -P 0 4M 256k",
            "-c",
            "read -P 0x11 15M 1M",
            "-c",
            "read -P 0x77 12M 4k",
        ],
    );
    assert!(ok && !out.contains("Pattern verification failed"), "{out}");
    // The device holds exactly what qemu-io wrote.
    let mem = s.snapshot();
    assert!(mem[..64 << 10].iter().all(|&b| b == 0xab));
    assert!(mem[MIB as usize..2 * MIB as usize]
        .iter()
        .all(|&b| b == 0x5c));
    // A mismatching pattern is noticed (the check above can fail).
    let (_, out) = run("qemu-io", &["-f", "raw", &uri, "-c", "read -P 0xac 0 4k"]);
    assert!(out.contains("Pattern verification failed"), "{out}");
    // `write -f` reached the device as a write with FUA.
    assert!(s.device.fua.load(std::sync::atomic::Ordering::Relaxed) >= 1);
    let stats = s.stop();
    let total_errors: u64 = stats.iter().map(|c| c.errors).sum();
    assert_eq!(total_errors, 0, "{stats:#?}");
    assert!(stats.iter().any(|c| c.flushes > 0), "{stats:#?}");
}

#[test]
fn nbdcopy_uploads_and_downloads_a_random_file_intact() {
    if !have_tool("nbdcopy", "libnbd-bin") {
        return;
    }
    let size = 8 * MIB;
    let s = Running::start(export(size), Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.img");
    let output = dir.path().join("out.img");
    let data = random_bytes(size as usize, 30);
    std::fs::write(&input, &data).unwrap();
    let (ok, out) = run("nbdcopy", &["--flush", input.to_str().unwrap(), &s.uri()]);
    assert!(ok, "{out}");
    assert!(
        s.snapshot() == data,
        "the device does not hold the uploaded file"
    );
    std::fs::write(&output, b"").unwrap();
    let (ok, out) = run("nbdcopy", &[&s.uri(), output.to_str().unwrap()]);
    assert!(ok, "{out}");
    assert!(
        std::fs::read(&output).unwrap() == data,
        "downloaded file differs"
    );
    let stats = s.stop();
    // nbdcopy opens several connections (multi-conn is advertised).
    assert!(stats.len() >= 3, "{stats:#?}");
    assert!(stats.iter().all(|c| c.errors == 0), "{stats:#?}");
    let written: u64 = stats.iter().map(|c| c.bytes_written).sum();
    let read: u64 = stats.iter().map(|c| c.bytes_read).sum();
    assert!(written >= size && read >= size, "{stats:#?}");
}

#[test]
fn fio_nbd_engine_verifies_random_and_sequential_writes_at_queue_depths_1_8_32() {
    if !have_tool("fio", "fio") {
        return;
    }
    let s = Running::start(export(16 * MIB), Duration::ZERO);
    let jobs = [
        (1, "randwrite"),
        (8, "randwrite"),
        (32, "randwrite"),
        (1, "write"),
        (8, "write"),
        (32, "write"),
    ];
    for (depth, rw) in jobs {
        let (ok, out) = run(
            "fio",
            &[
                "--name=nbd",
                "--ioengine=nbd",
                &format!("--uri={}", s.uri()),
                &format!("--rw={rw}"),
                "--bs=4k",
                "--size=8m",
                &format!("--iodepth={depth}"),
                "--verify=crc32c",
                "--do_verify=1",
                "--verify_fatal=1",
                // No verify state file left in the working directory.
                "--verify_state_save=0",
                "--randrepeat=0",
                &format!("--randseed={depth}"),
            ],
        );
        assert!(ok, "{out}");
        assert!(!out.contains("verify: bad"), "{out}");
        assert!(out.contains("err= 0"), "{out}");
    }
    let stats = s.stop();
    assert!(stats.iter().all(|c| c.errors == 0), "{stats:#?}");
    let writes: u64 = stats.iter().map(|c| c.writes).sum();
    assert!(writes >= 6 * 2048, "{stats:#?}");
}

/// Two connections pipelining interleaved writes and reads on disjoint halves; each sees its
/// own data, and the server reports both.
#[test]
fn two_concurrent_connections_pipeline_independently() {
    let size = 4 * MIB;
    let s = Running::start(export(size), Duration::ZERO);
    let half = size / 2;
    let workers: Vec<_> = (0..2u64)
        .map(|k| {
            let socket = s.socket.clone();
            std::thread::spawn(move || {
                let mut c = RawClient::connect(&socket);
                let base = k * half;
                let blocks = 256u64;
                let data = random_bytes((blocks * 4096) as usize, 100 + k);
                // Send every write at once (pipelined), then every read.
                for i in 0..blocks {
                    let chunk = &data[(i * 4096) as usize..((i + 1) * 4096) as usize];
                    c.send(CMD_WRITE, 0, i, base + i * 4096, 4096, chunk);
                }
                let mut acked = vec![false; blocks as usize];
                for _ in 0..blocks {
                    let r = c.reply(|_| 0);
                    assert_eq!(r.error, 0);
                    acked[r.handle as usize] = true;
                }
                assert!(acked.iter().all(|&a| a));
                for i in 0..blocks {
                    c.send(CMD_READ, 0, 1000 + i, base + i * 4096, 4096, &[]);
                }
                for _ in 0..blocks {
                    let r = c.reply(|_| 4096);
                    assert_eq!(r.error, 0);
                    let i = (r.handle - 1000) as usize;
                    assert!(r.data == data[i * 4096..(i + 1) * 4096], "block {i}");
                }
                c.disconnect();
                data
            })
        })
        .collect();
    let datas: Vec<Vec<u8>> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    let mem = s.snapshot();
    assert!(mem[..datas[0].len()] == datas[0][..]);
    assert!(mem[half as usize..half as usize + datas[1].len()] == datas[1][..]);
    let stats = s.stop();
    assert_eq!(stats.len(), 2);
    for c in &stats {
        assert_eq!(c.end, ConnectionEnd::Disconnect, "{c}");
        assert_eq!(
            (c.requests, c.reads, c.writes, c.errors),
            (512, 256, 256, 0),
            "{c}"
        );
        assert_eq!(
            (c.bytes_read, c.bytes_written),
            (256 * 4096, 256 * 4096),
            "{c}"
        );
    }
    assert_ne!(stats[0].id, stats[1].id);
}

/// Every bad request gets proto.md's error, the connection keeps serving, and a write's
/// payload is consumed even when the write is refused.
#[test]
fn bad_requests_get_nbd_errors_and_the_connection_stays_in_sync() {
    let size = MIB;
    let s = Running::start(export(size), Duration::ZERO);
    let mut c = RawClient::connect(&s.socket);
    assert_eq!(c.size, size);
    let page = vec![0x3cu8; 4096];
    let einval = NbdErrno::Inval.code();
    let enospc = NbdErrno::NoSpc.code();
    // (what, command, flags, offset, length, payload, error expected)
    type Case = (&'static str, u16, u16, u64, u32, Vec<u8>, u32);
    let cases: Vec<Case> = vec![
        (
            "read beyond the end",
            CMD_READ,
            0,
            size - 512,
            1024,
            vec![],
            einval,
        ),
        (
            "write beyond the end",
            CMD_WRITE,
            0,
            size - 512,
            1024,
            vec![1; 1024],
            enospc,
        ),
        (
            "write at an offset overflowing 64 bits",
            CMD_WRITE,
            0,
            u64::MAX - 511,
            1024,
            vec![1; 1024],
            enospc,
        ),
        (
            "trim beyond the end",
            CMD_TRIM,
            0,
            size,
            512,
            vec![],
            enospc,
        ),
        (
            "write zeroes beyond the end",
            CMD_WRITE_ZEROES,
            0,
            size - 512,
            4096,
            vec![],
            enospc,
        ),
        (
            "misaligned read offset",
            CMD_READ,
            0,
            100,
            512,
            vec![],
            einval,
        ),
        (
            "misaligned write length",
            CMD_WRITE,
            0,
            0,
            700,
            vec![2; 700],
            einval,
        ),
        (
            "read over block_max",
            CMD_READ,
            0,
            0,
            2 << 20,
            vec![],
            einval,
        ),
        (
            "write over block_max (payload consumed)",
            CMD_WRITE,
            0,
            0,
            2 << 20,
            vec![9; 2 << 20],
            einval,
        ),
        ("zero-length read", CMD_READ, 0, 0, 0, vec![], einval),
        ("NBD_CMD_CACHE", CMD_CACHE, 0, 0, 512, vec![], einval),
        (
            "NBD_CMD_BLOCK_STATUS",
            CMD_BLOCK_STATUS,
            0,
            0,
            512,
            vec![],
            einval,
        ),
        ("unknown command 42", 42, 0, 0, 512, vec![], einval),
        (
            "unknown flag on a read",
            CMD_READ,
            1 << 9,
            0,
            512,
            vec![],
            einval,
        ),
        (
            "NO_HOLE on a write",
            CMD_WRITE,
            CMD_FLAG_NO_HOLE,
            0,
            512,
            vec![3; 512],
            einval,
        ),
        ("flush with a length", CMD_FLUSH, 0, 0, 512, vec![], einval),
    ];
    for (what, kind, flags, offset, len, payload, want) in &cases {
        let r = c.call(*kind, *flags, *offset, *len, payload);
        assert_eq!(r.error, *want, "{what}");
        // Still in sync: a good write and read right after.
        let w = c.call(CMD_WRITE, CMD_FLAG_FUA, 8192, 4096, &page);
        assert_eq!(w.error, 0, "write after {what}");
        let r = c.call(CMD_READ, 0, 8192, 4096, &[]);
        assert_eq!((r.error, &r.data), (0, &page), "read after {what}");
    }
    // Refused writes changed nothing.
    let mem = s.snapshot();
    assert!(mem[..8192].iter().all(|&b| b == 0));
    assert!(mem[size as usize - 4096..].iter().all(|&b| b == 0));
    c.disconnect();
    let stats = s.stop();
    assert_eq!(stats.len(), 1);
    let st = &stats[0];
    let n = cases.len() as u64;
    assert_eq!((st.rejected, st.errors), (n, n), "{st}");
    assert_eq!(st.requests, 3 * n, "{st}");
    assert_eq!((st.writes, st.reads), (n, n), "{st}");
}

/// A connection that sends a truncated request, vanishes mid-write or breaks the protocol ends
/// alone: a second connection opened before it keeps working, and nothing of the torn write
/// reaches the device.
#[test]
fn truncated_and_torn_requests_end_only_their_connection() {
    let size = MIB;
    let s = Running::start(export(size), Duration::ZERO);
    let mut good = RawClient::connect(&s.socket);
    let page = vec![0x42u8; 4096];
    // Half a request header, then gone.
    let mut bad = RawClient::connect(&s.socket);
    let header = RequestHeader {
        magic: REQUEST_MAGIC,
        flags: 0,
        kind: CMD_READ,
        handle: 1,
        offset: 0,
        len: 512,
    }
    .encode();
    bad.stream.write_all(&header[..13]).unwrap();
    drop(bad);
    assert_eq!(good.call(CMD_WRITE, 0, 0, 4096, &page).error, 0);
    // A write header and half its payload, then gone.
    let mut torn = RawClient::connect(&s.socket);
    let h = RequestHeader {
        magic: REQUEST_MAGIC,
        flags: 0,
        kind: CMD_WRITE,
        handle: 2,
        offset: 65536,
        len: 8192,
    };
    torn.stream.write_all(&h.encode()).unwrap();
    torn.stream.write_all(&[0xee; 4096]).unwrap();
    drop(torn);
    assert_eq!(good.call(CMD_READ, 0, 0, 4096, &[]).data, page);
    // Bad request magic: the stream cannot be resynchronised, the connection ends.
    let mut garbage = RawClient::connect(&s.socket);
    garbage.stream.write_all(&[0x55; 28]).unwrap();
    let mut rest = Vec::new();
    garbage.stream.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
    // A write too large to skip (over 64 MiB) ends the connection unread.
    let mut huge = RawClient::connect(&s.socket);
    huge.send(CMD_WRITE, 0, 3, 0, MAX_DISCARDED_PAYLOAD + 512, &[]);
    let mut rest = Vec::new();
    huge.stream.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
    // Unknown client flags during the handshake end that connection.
    let mut flags = UnixStream::connect(&s.socket).unwrap();
    let mut greeting = [0u8; 18];
    flags.read_exact(&mut greeting).unwrap();
    flags.write_all(&0x8000_0001u32.to_be_bytes()).unwrap();
    let mut rest = Vec::new();
    flags.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
    assert_eq!(good.call(CMD_READ, 0, 0, 4096, &[]).data, page);
    // The torn write never reached the device.
    assert!(s.snapshot()[65536..65536 + 8192].iter().all(|&b| b == 0));
    good.disconnect();
    let stats = s.stop();
    let ends: Vec<String> = stats.iter().map(|c| c.end.to_string()).collect();
    let has = |needle: &str| ends.iter().any(|e| e.contains(needle));
    assert!(
        has("request header: the stream ended after 13 of 28 bytes"),
        "{ends:#?}"
    );
    assert!(
        has("payload of write 0x2: the stream ended after 4096 of 8192"),
        "{ends:#?}"
    );
    assert!(has("request magic is 0x55555555"), "{ends:#?}");
    assert!(has("over 67108864 bytes"), "{ends:#?}");
    assert!(has("client flags 0x80000001"), "{ends:#?}");
    assert!(has("NBD_CMD_DISC"), "{ends:#?}");
    assert_eq!(stats.len(), 6, "{ends:#?}");
}

/// Option haggling: unsupported options are refused with NBD_REP_ERR_UNSUP and haggling goes
/// on; an unknown export gets NBD_REP_ERR_UNKNOWN; LIST, INFO, then GO with the real name.
#[test]
fn option_haggling_refuses_what_it_does_not_support_and_goes_on() {
    let s = Running::start(export(MIB), Duration::ZERO);
    let mut st = UnixStream::connect(&s.socket).unwrap();
    greet(&mut st);
    for opt in [OPT_STRUCTURED_REPLY, OPT_STARTTLS, 10, 11, 4, 77] {
        st.write_all(&option(opt, b"")).unwrap();
        let (o, kind, _) = read_option_reply(&mut st);
        assert_eq!((o, kind), (opt, REP_ERR_UNSUP), "option {opt}");
    }
    st.write_all(&option(OPT_GO, &info_data("other", &[])))
        .unwrap();
    let (_, kind, msg) = read_option_reply(&mut st);
    assert_eq!(kind, REP_ERR_UNKNOWN);
    assert!(String::from_utf8_lossy(&msg).contains("other"));
    st.write_all(&option(OPT_GO, &[0, 0, 0, 9, b'x'])).unwrap();
    assert_eq!(read_option_reply(&mut st).1, REP_ERR_INVALID);
    st.write_all(&option(OPT_LIST, b"junk")).unwrap();
    assert_eq!(read_option_reply(&mut st).1, REP_ERR_INVALID);
    st.write_all(&option(OPT_LIST, b"")).unwrap();
    let (_, kind, data) = read_option_reply(&mut st);
    assert_eq!(kind, REP_SERVER);
    assert_eq!(&data[..4], &5u32.to_be_bytes());
    assert_eq!(&data[4..9], b"flash");
    assert_eq!(&data[9..], b"flashlab test export");
    assert_eq!(read_option_reply(&mut st).1, REP_ACK);
    st.write_all(&option(OPT_INFO, &info_data("flash", &[INFO_DESCRIPTION])))
        .unwrap();
    let mut infos = Vec::new();
    loop {
        let (_, kind, data) = read_option_reply(&mut st);
        if kind == REP_ACK {
            break;
        }
        infos.push(u16::from_be_bytes([data[0], data[1]]));
    }
    assert_eq!(infos, vec![INFO_EXPORT, INFO_DESCRIPTION, INFO_BLOCK_SIZE]);
    // NBD_OPT_EXPORT_NAME with the name; no zeroes were negotiated: 10 bytes exactly.
    st.write_all(&option(OPT_EXPORT_NAME, b"flash")).unwrap();
    assert_eq!(read_u64(&mut st), MIB);
    let flags = read_u16(&mut st);
    assert_eq!(flags & FLAG_SEND_FUA, FLAG_SEND_FUA);
    let mut c = RawClient {
        stream: st,
        size: MIB,
        flags,
    };
    assert_eq!(c.call(CMD_READ, 0, 0, 512, &[]).data, vec![0; 512]);
    c.disconnect();
    // NBD_OPT_EXPORT_NAME with an unknown name: the connection ends (no error possible).
    let mut st = UnixStream::connect(&s.socket).unwrap();
    greet(&mut st);
    st.write_all(&option(OPT_EXPORT_NAME, b"nosuch")).unwrap();
    let mut rest = Vec::new();
    st.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
    // NBD_OPT_ABORT is acknowledged.
    let mut st = UnixStream::connect(&s.socket).unwrap();
    greet(&mut st);
    st.write_all(&option(OPT_ABORT, b"")).unwrap();
    assert_eq!(read_option_reply(&mut st).1, REP_ACK);
    let stats = s.stop();
    let ends: Vec<&ConnectionEnd> = stats.iter().map(|c| &c.end).collect();
    assert!(
        ends.contains(&&ConnectionEnd::UnknownExport("nosuch".into())),
        "{ends:?}"
    );
    assert!(ends.contains(&&ConnectionEnd::Abort), "{ends:?}");
}

/// NBD_CMD_DISC right after pipelined requests: every reply still arrives before the close.
#[test]
fn disconnect_waits_for_every_request_in_flight() {
    let s = Running::start(export(MIB), Duration::from_millis(20));
    let mut c = RawClient::connect(&s.socket);
    for i in 0..10 {
        c.send(CMD_READ, 0, i, i * 4096, 4096, &[]);
    }
    c.send(CMD_DISC, 0, 0, 0, 0, &[]);
    let mut handles: Vec<u64> = (0..10).map(|_| c.reply(|_| 4096).handle).collect();
    handles.sort();
    assert_eq!(handles, (0..10).collect::<Vec<_>>());
    let mut rest = Vec::new();
    c.stream.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
    let stats = s.stop();
    assert_eq!(stats[0].end, ConnectionEnd::Disconnect);
    assert_eq!(stats[0].reads, 10);
}

/// Stopping the server ends open connections after their requests in flight are answered,
/// and removes the socket file.
#[test]
fn stopping_the_server_answers_requests_in_flight_then_closes() {
    let s = Running::start(export(MIB), Duration::from_millis(30));
    let mut c = RawClient::connect(&s.socket);
    for i in 0..5 {
        c.send(CMD_WRITE, 0, i, i * 4096, 4096, &[7; 4096]);
    }
    // Let the server read them, then stop it while the device is still working.
    std::thread::sleep(Duration::from_millis(50));
    let socket = s.socket.clone();
    let stopper = std::thread::spawn(move || s.stop());
    let replies: Vec<u32> = (0..5).map(|_| c.reply(|_| 0).error).collect();
    assert_eq!(replies, vec![0; 5]);
    let mut rest = Vec::new();
    c.stream.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
    let stats = stopper.join().unwrap();
    assert_eq!(stats[0].end, ConnectionEnd::Stopped);
    assert_eq!(stats[0].writes, 5);
    assert!(!socket.exists(), "socket file left behind");
}

/// A client that vanishes with requests in flight: the device still gets and answers them
/// (the replies are counted as lost), and another connection is served meanwhile.
#[test]
fn a_client_vanishing_with_requests_in_flight_harms_nobody() {
    let s = Running::start(export(MIB), Duration::from_millis(20));
    let mut gone = RawClient::connect(&s.socket);
    for i in 0..5 {
        gone.send(CMD_WRITE, 0, i, i * 4096, 4096, &[0x61; 4096]);
    }
    std::thread::sleep(Duration::from_millis(10));
    drop(gone);
    let mut good = RawClient::connect(&s.socket);
    assert_eq!(good.call(CMD_WRITE, 0, 65536, 4096, &[1; 4096]).error, 0);
    good.disconnect();
    let done = std::time::Instant::now();
    while s
        .device
        .jobs_done
        .load(std::sync::atomic::Ordering::Relaxed)
        < 6
    {
        assert!(
            done.elapsed() < Duration::from_secs(10),
            "jobs of the vanished client lost"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // Writes handed over before the client vanished were carried out.
    assert!(s.snapshot()[..5 * 4096].iter().all(|&b| b == 0x61));
    let stats = s.stop();
    let vanished = stats
        .iter()
        .find(|c| c.writes == 5)
        .expect("the vanished connection");
    assert_eq!(
        (vanished.replies_lost, vanished.errors),
        (5, 0),
        "{vanished}"
    );
    assert!(
        matches!(
            vanished.end,
            ConnectionEnd::Closed {
                in_handshake: false
            } | ConnectionEnd::WriteFailed(_)
        ),
        "{vanished}"
    );
}

/// A client that pipelines large reads and never reads its replies stalls only itself: the
/// device keeps answering, and another connection is served promptly.
#[test]
fn a_client_that_stops_reading_stalls_only_itself() {
    let s = Running::start(export(4 * MIB), Duration::ZERO);
    let mut stuck = RawClient::connect(&s.socket);
    for i in 0..64 {
        stuck.send(CMD_READ, 0, i, 0, MIB as u32, &[]);
    }
    // The stuck client's replies fill its socket; the device must not be blocked by them.
    let started = std::time::Instant::now();
    let mut good = RawClient::connect(&s.socket);
    for i in 0..50u64 {
        assert_eq!(good.call(CMD_WRITE, 0, i * 4096, 4096, &[2; 4096]).error, 0);
        assert_eq!(
            good.call(CMD_READ, 0, i * 4096, 4096, &[]).data,
            vec![2; 4096]
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the other connection was slowed: {:?}",
        started.elapsed()
    );
    good.disconnect();
    drop(stuck);
    let stats = s.stop();
    assert_eq!(stats.len(), 2);
}

/// Over TCP (port 0: a free port): qemu-io writes and verifies, nbdinfo reads the size; the
/// connections' peers are TCP addresses.
#[test]
fn tcp_listening_serves_real_clients() {
    if !have_tool("qemu-io", "qemu-utils") || !have_tool("nbdinfo", "libnbd-bin") {
        return;
    }
    use flashlab_cli::serve::listen::{Listen, Server};
    let server = Server::bind(&"tcp:127.0.0.1:0".parse::<Listen>().unwrap()).unwrap();
    let uri = server.local_address().nbd_uri();
    assert!(uri.starts_with("nbd://127.0.0.1:"), "{uri}");
    let e = export(4 * MIB);
    let (device, jobs) = MemoryDevice::start(e.size_bytes as usize, Duration::ZERO);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (st, ex) = (stop.clone(), e.clone());
    let running = std::thread::spawn(move || server.run(&ex, jobs, &st));
    let (ok, out) = run(
        "qemu-io",
        &[
            "-f",
            "raw",
            &uri,
            "-c",
            "write -P 0x9d 512k 128k",
            "-c",
            "read -P 0x9d 512k 128k",
        ],
    );
    assert!(ok && !out.contains("Pattern verification failed"), "{out}");
    let (ok, out) = run("nbdinfo", &["--size", &uri]);
    assert!(ok, "{out}");
    assert!(out.contains(&(4 * MIB).to_string()), "{out}");
    stop.store(true, std::sync::atomic::Ordering::Release);
    let stats = running.join().unwrap().unwrap();
    device.join();
    assert_eq!(stats.len(), 2);
    assert!(
        stats.iter().all(|c| c.peer.starts_with("127.0.0.1:")),
        "{stats:#?}"
    );
}

/// An old-fashioned client: fixed newstyle without NO_ZEROES, then NBD_OPT_EXPORT_NAME with
/// the default name: size, flags and the 124 zero bytes, then transmission.
#[test]
fn export_name_without_no_zeroes_gets_the_124_zero_bytes() {
    let s = Running::start(export(MIB), Duration::ZERO);
    let mut st = UnixStream::connect(&s.socket).unwrap();
    let mut greeting = [0u8; 18];
    st.read_exact(&mut greeting).unwrap();
    st.write_all(&FLAG_C_FIXED_NEWSTYLE.to_be_bytes()).unwrap();
    st.write_all(&option(OPT_EXPORT_NAME, b"")).unwrap();
    assert_eq!(read_u64(&mut st), MIB);
    let flags = read_u16(&mut st);
    assert_eq!(
        flags,
        FLAG_HAS_FLAGS
            | FLAG_SEND_FLUSH
            | FLAG_SEND_FUA
            | FLAG_SEND_TRIM
            | FLAG_SEND_WRITE_ZEROES
            | FLAG_CAN_MULTI_CONN
    );
    let mut zeroes = [1u8; 124];
    st.read_exact(&mut zeroes).unwrap();
    assert_eq!(zeroes, [0u8; 124]);
    let mut c = RawClient {
        stream: st,
        size: MIB,
        flags,
    };
    assert_eq!(c.call(CMD_WRITE, 0, 512, 512, &[5; 512]).error, 0);
    assert_eq!(c.call(CMD_READ, 0, 512, 512, &[]).data, vec![5; 512]);
    c.disconnect();
    s.stop();
}
