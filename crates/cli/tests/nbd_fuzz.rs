//! Fuzzing the NBD server's connection handling with proptest: random byte streams as the
//! whole client side, random option haggling, random bytes after a valid handshake, and
//! random well-framed requests checked against an independent model of proto.md's rules.
//! The server must never panic or hang (each case has a deadline), and must answer or end the
//! connection.

mod nbd_support;

use std::io::{Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::time::Duration;

use flashlab_cli::serve::nbd::*;
use nbd_support::{info_data, option, MemoryDevice};
use proptest::prelude::*;

const SIZE: u64 = 64 * 1024;
const DEADLINE: Duration = Duration::from_secs(20);

fn fuzz_export() -> Export {
    Export {
        name: "flash".into(),
        description: "fuzz".into(),
        size_bytes: SIZE,
        block_min: 512,
        block_preferred: 4096,
        block_max: 8192,
        multi_conn: false,
    }
}

/// Runs one connection with `input` as everything the client sends (then the client closes
/// its sending side); returns what the server sent and its statistics. Fails the case if the
/// server panics or does not finish within the deadline.
fn serve(input: Vec<u8>) -> Result<(Vec<u8>, ConnectionStats), TestCaseError> {
    let (server_side, mut client) = UnixStream::pair().unwrap();
    let (device, jobs) = MemoryDevice::start(SIZE as usize, Duration::ZERO);
    let (done_tx, done_rx) = mpsc::channel();
    let server = std::thread::spawn(move || {
        let stats = serve_connection(server_side, &fuzz_export(), &jobs, 1, "fuzz");
        drop(jobs);
        let _ = done_tx.send(stats);
    });
    let mut writer = client.try_clone().unwrap();
    let feeder = std::thread::spawn(move || {
        // The server may close early: the rest of the input is then refused, as it should.
        let _ = writer.write_all(&input);
        let _ = writer.shutdown(Shutdown::Write);
    });
    client.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut output = Vec::new();
    let read = client.read_to_end(&mut output);
    prop_assert!(
        read.is_ok(),
        "the server neither closed nor answered within {DEADLINE:?}: {read:?}"
    );
    let stats = done_rx.recv_timeout(DEADLINE);
    prop_assert!(stats.is_ok(), "the server panicked or hung: {stats:?}");
    server
        .join()
        .map_err(|_| TestCaseError::fail("server thread panicked"))?;
    let _ = feeder.join();
    device.join();
    Ok((output, stats.unwrap()))
}

/// The bytes of a client's valid handshake: flags, then `NBD_OPT_GO` for the default export.
fn handshake() -> Vec<u8> {
    let mut b = (FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES)
        .to_be_bytes()
        .to_vec();
    b.extend(option(OPT_GO, &info_data("", &[INFO_BLOCK_SIZE])));
    b
}

/// Skips the server's greeting and option replies up to the final `NBD_REP_ACK` of the GO.
fn after_handshake(out: &[u8]) -> &[u8] {
    let mut at = 18;
    loop {
        let kind = u32::from_be_bytes(out[at + 12..at + 16].try_into().unwrap());
        let len = u32::from_be_bytes(out[at + 16..at + 20].try_into().unwrap()) as usize;
        at += 20 + len;
        if kind == REP_ACK {
            return &out[at..];
        }
    }
}

/// One well-framed request of the structured fuzz.
#[derive(Debug, Clone)]
struct Req {
    kind: u16,
    flags: u16,
    offset: u64,
    len: u32,
}

fn req_strategy() -> impl Strategy<Value = Req> {
    let kind = prop_oneof![
        6 => Just(CMD_READ),
        6 => Just(CMD_WRITE),
        2 => Just(CMD_FLUSH),
        2 => Just(CMD_TRIM),
        2 => Just(CMD_WRITE_ZEROES),
        1 => Just(CMD_CACHE),
        1 => Just(CMD_BLOCK_STATUS),
        1 => any::<u16>(),
        1 => Just(CMD_DISC),
    ];
    let flags = prop_oneof![
        8 => Just(0u16),
        2 => Just(CMD_FLAG_FUA),
        1 => Just(CMD_FLAG_NO_HOLE),
        1 => Just(CMD_FLAG_DF),
        1 => any::<u16>(),
    ];
    let offset = prop_oneof![
        6 => (0..SIZE / 512).prop_map(|b| b * 512),
        1 => 0..SIZE + 4096,
        1 => Just(SIZE),
        1 => Just(SIZE - 512),
        1 => (0u64..4096).prop_map(|d| u64::MAX - d),
        1 => any::<u64>(),
    ];
    let len = prop_oneof![
        6 => (1u32..=16).prop_map(|b| b * 512),
        1 => Just(0u32),
        1 => 1u32..9000,
        1 => Just(65536u32),
        1 => Just(MAX_DISCARDED_PAYLOAD + 1),
        1 => Just(u32::MAX),
    ];
    (kind, flags, offset, len).prop_map(|(kind, flags, offset, len)| Req {
        kind,
        flags,
        offset,
        len,
    })
}

/// What proto.md (and this server's documented choices) say a request gets.
#[derive(Debug, PartialEq)]
enum Expect {
    /// A reply with this error (0: success).
    Reply(u32),
    /// The connection ends here (NBD_CMD_DISC, or a write too large to skip).
    End,
}

fn expect(r: &Req) -> Expect {
    let einval = Expect::Reply(22);
    if r.kind == CMD_DISC {
        return Expect::End;
    }
    if r.kind == CMD_WRITE && r.len > MAX_DISCARDED_PAYLOAD {
        return Expect::End;
    }
    let known = [CMD_READ, CMD_WRITE, CMD_FLUSH, CMD_TRIM, CMD_WRITE_ZEROES];
    if !known.contains(&r.kind) {
        return einval;
    }
    let allowed = if r.kind == CMD_WRITE_ZEROES { 3 } else { 1 };
    if r.flags & !allowed != 0 {
        return einval;
    }
    if r.kind == CMD_FLUSH {
        return if r.offset == 0 && r.len == 0 {
            Expect::Reply(0)
        } else {
            einval
        };
    }
    if r.len == 0 || (matches!(r.kind, CMD_READ | CMD_WRITE) && r.len > 8192) {
        return einval;
    }
    if u128::from(r.offset) + u128::from(r.len) > u128::from(SIZE) {
        return Expect::Reply(if r.kind == CMD_READ { 22 } else { 28 });
    }
    if r.offset % 512 != 0 || r.len % 512 != 0 {
        return einval;
    }
    Expect::Reply(0)
}

proptest! {
    // 200 cases a test; PROPTEST_CASES=N for a longer run.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(200),
        ..ProptestConfig::default()
    })]

    /// (a) Random bytes as the whole client side, from the start.
    #[test]
    fn random_bytes_from_the_start(input in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let (out, stats) = serve(input)?;
        prop_assert!(out.len() >= 18, "no greeting");
        prop_assert_eq!(&out[..8], &NBDMAGIC.to_be_bytes());
        prop_assert!(!stats.transmission || stats.requests < 100);
    }

    /// (a') Random option haggling: valid and invalid flags, option numbers, data of any
    /// shape (INFO/GO data well formed or not), lengths that lie.
    #[test]
    fn random_option_haggling(
        flags in prop_oneof![3 => Just(3u32), 1 => 0u32..4, 1 => any::<u32>()],
        options in proptest::collection::vec(
            (
                prop_oneof![2 => 0u32..13, 2 => 6u32..8, 1 => any::<u32>()],
                prop_oneof![
                    2 => proptest::collection::vec(any::<u8>(), 0..40),
                    2 => (prop_oneof![Just(""), Just("flash"), Just("x")],
                          proptest::collection::vec(any::<u16>(), 0..5))
                        .prop_map(|(n, i)| info_data(n, &i)),
                    // A name length that may or may not fit the data that follows.
                    2 => (prop_oneof![0u32..48, any::<u32>()],
                          proptest::collection::vec(any::<u8>(), 0..40))
                        .prop_map(|(l, rest)| [l.to_be_bytes().to_vec(), rest].concat()),
                ],
                prop_oneof![8 => Just(None), 1 => any::<u32>().prop_map(Some)],
            ),
            0..8,
        ),
        tail in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut input = flags.to_be_bytes().to_vec();
        for (opt, data, lie) in options {
            let mut o = option(opt, &data);
            if let Some(len) = lie {
                o[12..16].copy_from_slice(&len.to_be_bytes());
            }
            input.extend(o);
        }
        input.extend(tail);
        let (out, _) = serve(input)?;
        prop_assert_eq!(&out[..8], &NBDMAGIC.to_be_bytes());
    }

    /// (b) Random bytes after a valid handshake: transmission traffic that is mostly garbage.
    #[test]
    fn random_bytes_after_the_handshake(
        body in proptest::collection::vec(any::<u8>(), 0..4096),
        magic_first in any::<bool>(),
    ) {
        let mut input = handshake();
        let mut body = body;
        if magic_first && body.len() >= 4 {
            body[..4].copy_from_slice(&REQUEST_MAGIC.to_be_bytes());
        }
        input.extend(body);
        let (out, stats) = serve(input)?;
        prop_assert!(stats.transmission);
        // What came back is simple replies with proto.md error values, up to the first
        // success (a read's data follows it, of a length not known here).
        let mut rest = after_handshake(&out);
        while rest.len() >= 16 {
            prop_assert_eq!(&rest[..4], &SIMPLE_REPLY_MAGIC.to_be_bytes());
            let error = u32::from_be_bytes(rest[4..8].try_into().unwrap());
            if error == 0 {
                break;
            }
            prop_assert!(NbdErrno::from_code(error).is_some(), "error value {}", error);
            rest = &rest[16..];
        }
    }

    /// (b') Well-framed random requests: every request gets exactly the reply proto.md's rules
    /// give (checked by an independent model), reads return what the model holds, and the
    /// connection ends exactly where the model says.
    #[test]
    fn framed_requests_get_the_replies_the_rules_give(
        reqs in proptest::collection::vec(req_strategy(), 1..40),
    ) {
        let mut input = handshake();
        let mut model = vec![0u8; SIZE as usize];
        let mut expected = Vec::new();
        for (i, r) in reqs.iter().enumerate() {
            let handle = i as u64 + 1;
            let header = RequestHeader {
                magic: REQUEST_MAGIC,
                flags: r.flags,
                kind: r.kind,
                handle,
                offset: r.offset,
                len: r.len,
            };
            input.extend(header.encode());
            let e = expect(r);
            if e == Expect::End {
                break;
            }
            let fill = (handle % 251) as u8 + 1;
            if r.kind == CMD_WRITE {
                input.extend(std::iter::repeat_n(fill, r.len as usize));
            }
            let Expect::Reply(error) = e else { unreachable!() };
            let mut data = Vec::new();
            if error == 0 {
                let range = r.offset as usize..(r.offset + u64::from(r.len)) as usize;
                match r.kind {
                    CMD_READ => data = model[range].to_vec(),
                    CMD_WRITE => model[range].fill(fill),
                    CMD_TRIM | CMD_WRITE_ZEROES => model[range].fill(0),
                    _ => {}
                }
            }
            expected.push((handle, error, data));
        }
        let (out, stats) = serve(input)?;
        let mut rest = after_handshake(&out);
        let lens: std::collections::HashMap<u64, usize> =
            expected.iter().map(|(h, _, d)| (*h, d.len())).collect();
        let mut got = Vec::new();
        while rest.len() >= 16 {
            prop_assert_eq!(&rest[..4], &SIMPLE_REPLY_MAGIC.to_be_bytes());
            let error = u32::from_be_bytes(rest[4..8].try_into().unwrap());
            let handle = u64::from_be_bytes(rest[8..16].try_into().unwrap());
            let n = if error == 0 { lens.get(&handle).copied().unwrap_or(0) } else { 0 };
            prop_assert!(rest.len() >= 16 + n, "reply {handle} short of its {n} data bytes");
            got.push((handle, error, rest[16..16 + n].to_vec()));
            rest = &rest[16 + n..];
        }
        prop_assert!(rest.is_empty(), "{} stray bytes after the replies", rest.len());
        got.sort_by_key(|g| g.0);
        prop_assert_eq!(got, expected, "stats: {}", stats);
    }
}
