//! Every trace reader on hand-written samples (blank lines, comments, CRLF, huge offsets,
//! zero-length requests, unsorted times), on the real traces of the repository's `traces/`,
//! through gzip and zstd, and with malformed lines (file:line errors, or counted skips).

use std::io::Write;
use std::path::{Path, PathBuf};

use flashlab_sim::host::Op;
use flashlab_sim::trace::{
    FormatChoice, OrderOptions, Ordered, ReadOptions, StatsBuilder, TraceFormat, TraceReader,
    TraceRecord, TraceWriter,
};
use flashlab_sim::SimError;

fn traces_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces")
}

fn format(name: &str) -> TraceFormat {
    match FormatChoice::parse(name).unwrap() {
        FormatChoice::Exact(f) => f,
        other => panic!("{name} is not exact: {other:?}"),
    }
}

fn read_all(text: &str, fmt: &str) -> Result<Vec<TraceRecord>, SimError> {
    let mut r = TraceReader::from_bytes("sample", text.as_bytes().to_vec(), format(fmt), false);
    let mut out = Vec::new();
    while let Some(rec) = r.next_record()? {
        out.push(rec);
    }
    Ok(out)
}

fn rec(time_ns: u64, device: u32, op: Op, offset_bytes: u64, len_bytes: u64) -> TraceRecord {
    TraceRecord {
        time_ns,
        device,
        op,
        offset_bytes,
        len_bytes,
    }
}

/// A unique temporary file path.
fn temp_path(name: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("flashlab-test-{}-{n}-{name}", std::process::id()))
}

#[test]
fn msr_reads_filetime_bytes_and_header() {
    let text = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\r\n\
                128166372003061629,hm,1,Read,383623680,32768,1619\r\n\
                \r\n\
                # a comment\n\
                128166372016382155,hm,0,write,18446744073709543424,4096,10\n\
                128166372016382155,hm,2,Write,4096,0,10\n";
    let got = read_all(text, "msr").unwrap();
    assert_eq!(
        got,
        vec![
            rec(12_816_637_200_306_162_900, 1, Op::Read, 383_623_680, 32_768),
            rec(
                12_816_637_201_638_215_500,
                0,
                Op::Write,
                u64::MAX - 8191,
                4096
            ),
            rec(12_816_637_201_638_215_500, 2, Op::Write, 4096, 0),
        ]
    );
}

#[test]
fn spc_reads_sectors_seconds_and_extra_fields() {
    let text = "0,303567,3584,w,0.000000\n1,55590,3072,R,0.026214,extra,fields\n\n0,1,512,r,12.5\n";
    let got = read_all(text, "spc").unwrap();
    assert_eq!(
        got,
        vec![
            rec(0, 0, Op::Write, 303_567 * 512, 3584),
            rec(26_214_000, 1, Op::Read, 55_590 * 512, 3072),
            rec(12_500_000_000, 0, Op::Read, 512, 512),
        ]
    );
}

#[test]
fn disksim_reads_both_time_units() {
    let ms = read_all("0.028100 0 5049248 16 1\n  12 3 8 8 0  \n", "disksim-ms").unwrap();
    assert_eq!(
        ms,
        vec![
            rec(28_100, 0, Op::Read, 5_049_248 * 512, 8192),
            rec(12_000_000, 3, Op::Write, 4096, 4096),
        ]
    );
    let ns = read_all(
        "938513000 4 264719034 16 0\n938828000\t3\t197570570\t16\t3\n",
        "disksim-ns",
    )
    .unwrap();
    assert_eq!(
        ns,
        vec![
            rec(938_513_000, 4, Op::Write, 264_719_034 * 512, 8192),
            rec(938_828_000, 3, Op::Read, 197_570_570 * 512, 8192),
        ]
    );
    let err = read_all("0.5 0 8 8 1\n", "disksim-ns")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("sample:1") && err.contains("disksim-ms"),
        "{err}"
    );
}

#[test]
fn blkparse_replays_the_chosen_action_with_flushes_and_discards() {
    let text = "  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]\n\
                  8,0    3        2     0.000001000   697  G   W 223490 + 8 [kjournald]\n\
                  8,0    3        3     0.000002000   697  D   W 223490 + 8 [kjournald]\n\
                  8,16   1        4     0.5           12   Q  RS 100 + 16 [cat]\n\
                  8,0    0        5     1.000000001   13   Q FWS 300 + 8 [jbd2]\n\
                  8,0    0        6     1.2           13   Q  FN [kworker]\n\
                  8,0    0        7     1.3           13   Q   D 4096 + 2048 [fstrim]\n\
                  8,0    0        8     1.4           13   m   N cfq697 insert_request\n\
                CPU0 (sda):\n Reads Queued:           1,        8KiB\n\
                Total (sda):\n";
    let q = read_all(text, "blkparse-q").unwrap();
    let dev8_0 = 8 << 20;
    let dev8_16 = (8 << 20) | 16;
    assert_eq!(
        q,
        vec![
            rec(0, dev8_0, Op::Write, 223_490 * 512, 4096),
            rec(500_000_000, dev8_16, Op::Read, 51_200, 8192),
            rec(1_000_000_001, dev8_0, Op::Flush, 0, 0),
            rec(1_000_000_001, dev8_0, Op::Write, 153_600, 4096),
            rec(1_200_000_000, dev8_0, Op::Flush, 0, 0),
            rec(1_300_000_000, dev8_0, Op::Trim, 4096 * 512, 2048 * 512),
        ]
    );
    let d = read_all(text, "blkparse-d").unwrap();
    assert_eq!(d, vec![rec(2_000, dev8_0, Op::Write, 223_490 * 512, 4096)]);
    let err = read_all("garbage line here\n", "blkparse-q")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("sample:1") && err.contains("major,minor"),
        "{err}"
    );
}

#[test]
fn fio_reads_version_2_and_3() {
    let v3 = "fio version 3 iolog\n2 /dev/nvme0n1 add\n872 /dev/nvme0n1 open\n878 /dev/nvme0n1 write 0 16384\n\
              900 /dev/sdb read 4096 4096\n901 /dev/nvme0n1 trim 8192 4096\n902 /dev/nvme0n1 sync 0 0\n10001677 /dev/nvme0n1 close\n";
    assert_eq!(
        read_all(v3, "fio").unwrap(),
        vec![
            rec(878_000, 0, Op::Write, 0, 16_384),
            rec(900_000, 1, Op::Read, 4096, 4096),
            rec(901_000, 0, Op::Trim, 8192, 4096),
            rec(902_000, 0, Op::Flush, 0, 0),
        ]
    );
    let v2 = "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 0 4096\n/dev/sdb wait 1500\n/dev/sdb write 4096 8192\n";
    assert_eq!(
        read_all(v2, "fio").unwrap(),
        vec![
            rec(0, 0, Op::Read, 0, 4096),
            rec(1_500_000, 0, Op::Write, 4096, 8192)
        ]
    );
    let err = read_all("/dev/sdb read 0 4096\n", "fio")
        .unwrap_err()
        .to_string();
    assert!(err.contains("fio version 2 iolog"), "{err}");
}

#[test]
fn generic_format_reads_described_columns_and_units() {
    let spec = "generic:time=1:ms,device=2,offset=3:sectors,size=4:kib,op=5,sep=space,skip=1,read=1,write=0";
    let text = "time dev lba size op\n0.25 0 2048 8 1\n3 7 1 4 0\n";
    assert_eq!(
        read_all(text, spec).unwrap(),
        vec![
            rec(250_000, 0, Op::Read, 1_048_576, 8192),
            rec(3_000_000, 7, Op::Write, 512, 4096)
        ]
    );
    let csv = "generic:offset=1:bytes,size=2:4kib,op=write";
    assert_eq!(
        read_all("4096,2\n", csv).unwrap(),
        vec![rec(0, 0, Op::Write, 4096, 8192)]
    );
    for (bad, needle) in [
        ("generic:time=1,offset=2:b,size=3:b,op=4", "needs a unit"),
        ("generic:offset=2:b,size=3:b", "op=COL"),
        (
            "generic:offset=2:parsecs,size=3:b,op=1",
            "unknown size unit",
        ),
        ("generic:offset=0:b,size=3:b,op=1", "column number"),
        ("generic:offset=1:b,size=2:b,op=3,colour=red", "unknown key"),
    ] {
        let err = FormatChoice::parse(bad).unwrap_err();
        assert!(err.contains(needle), "{bad}: {err}");
    }
}

#[test]
fn malformed_lines_name_file_line_text_and_expectation() {
    let text = "0,303567,3584,w,0.0\n0,303567,35x4,w,0.1\n";
    let err = read_all(text, "spc").unwrap_err();
    assert!(err.is_input_error());
    let msg = err.to_string();
    assert!(
        msg.starts_with("sample:2: field 3 (Size) \"35x4\": expected a size in bytes"),
        "{msg}"
    );
    assert!(msg.contains("0,303567,35x4,w,0.1"), "{msg}");
    // Too few fields, a bad operation, a negative time, an overflowing sector.
    for (text, fmt, needle) in [
        ("1 2 3\n", "disksim-ns", "3 fields: expected 5 fields"),
        ("0,1,512,x,0.5\n", "spc", "expected r or w"),
        ("0,1,512,r,-0.5\n", "spc", "non-negative"),
        ("0 0 99999999999999999 8 0\n", "disksim-ns", "below 2^55"),
        ("1,h,0,Read,0,2000000000000,0\n", "msr", "at most 1 TiB"),
    ] {
        let msg = read_all(text, fmt).unwrap_err().to_string();
        assert!(
            msg.contains("sample:1") && msg.contains(needle),
            "{fmt}: {msg}"
        );
    }
}

#[test]
fn skip_bad_lines_counts_and_keeps_going() {
    let text = "1 0 8 8 1\nnot a line\n2 0 16 8 0\n3 0 x 8 0\n";
    let mut r = TraceReader::from_bytes("t", text.as_bytes().to_vec(), format("disksim-ns"), true);
    let mut n = 0;
    while r.next_record().unwrap().is_some() {
        n += 1;
    }
    assert_eq!((n, r.bad_lines()), (2, 2));
    assert!(
        r.bad_examples()[0].starts_with("t:2:"),
        "{:?}",
        r.bad_examples()
    );
    assert!(
        r.bad_examples()[1].starts_with("t:4:"),
        "{:?}",
        r.bad_examples()
    );
}

#[test]
fn unsorted_traces_are_put_in_order_within_the_window() {
    let text = "30 0 0 8 0\n10 0 8 8 0\n20 0 16 8 0\n5 0 24 8 0\n";
    let reader = |window| {
        let r = TraceReader::from_bytes("u", text.as_bytes().to_vec(), format("disksim-ns"), false);
        let mut o = Ordered::new(
            r,
            OrderOptions {
                reorder_window: window,
                ..OrderOptions::default()
            },
        );
        let mut times = Vec::new();
        while let Some(r) = o.next_record().unwrap() {
            times.push((r.time_ns, r.offset_bytes / 512));
        }
        (times, o.counts.clone())
    };
    let (sorted, counts) = reader(8);
    assert_eq!(sorted, vec![(0, 24), (5, 8), (15, 16), (25, 0)]);
    assert_eq!(counts.late, 0);
    // A window of 2 cannot sort it: the straggler is issued late (never before a request
    // already issued), and counted.
    let (late, counts) = reader(2);
    assert_eq!(late, vec![(0, 8), (10, 16), (10, 24), (20, 0)]);
    assert_eq!(counts.late, 1);
    assert_eq!(counts.max_late_ns, 10);
}

#[test]
fn zero_length_requests_and_other_devices_are_dropped_and_counted() {
    let text = "1 0 0 0 0\n2 1 8 8 0\n3 0 16 8 1\n";
    let r = TraceReader::from_bytes("z", text.as_bytes().to_vec(), format("disksim-ns"), false);
    let mut o = Ordered::new(
        r,
        OrderOptions {
            devices: vec![0],
            reorder_window: 16,
            ..OrderOptions::default()
        },
    );
    let first = o.next_record().unwrap().unwrap();
    assert_eq!((first.time_ns, first.op), (0, Op::Read));
    assert!(o.next_record().unwrap().is_none());
    assert_eq!((o.counts.zero_length, o.counts.other_devices), (1, 1));
}

fn real_trace_stats(
    name: &str,
    fmt: FormatChoice,
) -> (flashlab_sim::trace::TraceStats, TraceFormat) {
    let reader = TraceReader::open(
        &traces_dir().join(name),
        &ReadOptions {
            format: fmt,
            skip_bad_lines: false,
        },
    )
    .unwrap();
    let detected = reader.format().clone();
    let mut o = Ordered::new(
        reader,
        OrderOptions {
            reorder_window: 4096,
            ..OrderOptions::default()
        },
    );
    let mut b = StatsBuilder::default();
    while let Some(r) = o.next_record().unwrap() {
        b.add(&r);
    }
    (b.finish(o.counts.clone()), detected)
}

#[test]
fn real_mqsim_traces_are_detected_and_read_whole() {
    let (tpcc, fmt) = real_trace_stats("mqsim_tpcc-small.trace", FormatChoice::Auto);
    assert_eq!(fmt, format("disksim-ns"));
    assert_eq!(tpcc.requests, 6999);
    assert!(
        (tpcc.read_fraction - 0.63).abs() < 0.01,
        "{}",
        tpcc.read_fraction
    );
    assert_eq!(tpcc.devices.len(), 16);
    assert_eq!(tpcc.devices.iter().map(|d| d.device).max(), Some(15));
    assert!(
        (130e6..140e6).contains(&(tpcc.duration_ns as f64)),
        "{}",
        tpcc.duration_ns
    );
    assert_eq!(tpcc.skipped.late, 0);
    // Sizes and gaps are exact where the trace's are round (8 KiB requests, us gaps).
    assert_eq!((tpcc.size_bytes.p50, tpcc.size_bytes.max), (8192, 61_440));
    assert_eq!(tpcc.interarrival_ns.max, 315_000);
    assert_eq!(
        tpcc.read.bytes + tpcc.write.bytes,
        (tpcc.size_bytes.mean * 6999.0).round() as u64
    );

    let (wsrch, fmt) = real_trace_stats("mqsim_wsrch-small.trace", FormatChoice::Auto);
    assert_eq!(fmt, format("disksim-ns"));
    assert!(
        (24_782..=24_783).contains(&wsrch.requests),
        "{}",
        wsrch.requests
    );
    assert!(wsrch.read_fraction > 0.999);
    assert_eq!(wsrch.devices.len(), 6);
    assert!(
        (59e9..61e9).contains(&(wsrch.duration_ns as f64)),
        "{}",
        wsrch.duration_ns
    );

    // Said to be milliseconds, the same file lasts a million times longer: the unit matters,
    // which is why the guess is announced.
    let (as_ms, _) = real_trace_stats(
        "mqsim_tpcc-small.trace",
        FormatChoice::parse("disksim-ms").unwrap(),
    );
    assert_eq!(as_ms.duration_ns, tpcc.duration_ns * 1_000_000);
}

#[test]
fn detection_announces_its_guess_and_refuses_unknown_text() {
    let path = temp_path("unknown.txt");
    std::fs::write(&path, "hello world\nthis is not a trace\n").unwrap();
    let err = TraceReader::open(&path, &ReadOptions::default())
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("cannot tell the trace format") && err.contains("hello world"),
        "{err}"
    );
    let r = TraceReader::open(
        &traces_dir().join("mqsim_tpcc-small.trace"),
        &ReadOptions::default(),
    )
    .unwrap();
    assert!(
        r.notes()[0].contains("disksim-ns") && r.notes()[0].contains("disksim-ms"),
        "{:?}",
        r.notes()
    );
    std::fs::remove_file(path).ok();
}

/// Records in every format and back: what a format can hold survives exactly.
#[test]
fn written_traces_read_back_identically_and_are_detected() {
    let records = vec![
        rec(1_000_000_000, 0, Op::Read, 4096, 8192),
        rec(1_000_123_000, 3, Op::Write, 1 << 40, 65_536),
        rec(2_000_000_000, 3, Op::Read, 512, 512),
    ];
    for name in [
        "msr",
        "spc",
        "disksim-ms",
        "disksim-ns",
        "blkparse-q",
        "fio",
    ] {
        let mut text = Vec::new();
        let mut w = TraceWriter::new(format(name), &mut text).unwrap();
        for r in &records {
            assert!(w.write(r).unwrap());
        }
        drop(w);
        let back = read_all(std::str::from_utf8(&text).unwrap(), name).unwrap();
        let expect: Vec<TraceRecord> = records
            .iter()
            .map(|r| TraceRecord {
                // fio numbers files in order of appearance.
                device: if name == "fio" {
                    u32::from(r.device == 3)
                } else {
                    r.device
                },
                ..*r
            })
            .collect();
        assert_eq!(back, expect, "{name}");
        let path = temp_path(&format!("roundtrip.{name}"));
        std::fs::write(&path, &text).unwrap();
        let detected = TraceReader::open(&path, &ReadOptions::default()).unwrap();
        assert_eq!(detected.format().name(), name, "detection of {name}");
        std::fs::remove_file(path).ok();
    }
}

#[test]
fn gzip_and_zstd_files_read_like_the_plain_file() {
    let plain = std::fs::read(traces_dir().join("mqsim_tpcc-small.trace")).unwrap();
    let gz_path = temp_path("tpcc.trace.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&plain).unwrap();
    std::fs::write(&gz_path, gz.finish().unwrap()).unwrap();
    let zst_path = temp_path("tpcc.trace.zst");
    std::fs::write(&zst_path, zstd::encode_all(&plain[..], 3).unwrap()).unwrap();
    let read = |path: &Path| {
        let mut r = TraceReader::open(path, &ReadOptions::default()).unwrap();
        let mut v = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            v.push(rec);
        }
        (v, r.compression().name())
    };
    let (base, c) = read(&traces_dir().join("mqsim_tpcc-small.trace"));
    assert_eq!(c, "none");
    assert_eq!(read(&gz_path), (base.clone(), "gzip"));
    assert_eq!(read(&zst_path), (base, "zstd"));
    std::fs::remove_file(gz_path).ok();
    std::fs::remove_file(zst_path).ok();
}

#[test]
fn a_missing_file_is_an_input_error_naming_it() {
    let err = TraceReader::open(Path::new("/nonexistent/x.trace"), &ReadOptions::default())
        .err()
        .unwrap();
    assert!(err.is_input_error());
    assert!(err.to_string().contains("/nonexistent/x.trace"), "{err}");
}
