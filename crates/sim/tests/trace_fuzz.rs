//! Fuzzing the trace readers (a short run in CI; raise PROPTEST_CASES for a long one):
//! arbitrary bytes never panic and either read or fail with `file:line`; mutated real lines
//! that still read give exactly what an independent reading of the same text gives (no silent
//! mis-parse: no truncated numbers, no ignored junk).

use std::path::Path;

use flashlab_sim::host::Op;
use flashlab_sim::trace::{
    FormatChoice, OrderOptions, Ordered, StatsBuilder, TraceFormat, TraceReader, TraceRecord,
    TraceWriter, MAX_REQUEST_BYTES,
};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

const FORMATS: [&str; 9] = [
    "msr",
    "spc",
    "disksim-ms",
    "disksim-ns",
    "blkparse-q",
    "blkparse-d",
    "fio",
    "generic:time=1:us,device=2,offset=3:sectors,size=4:bytes,op=5,sep=space",
    "generic:offset=1:4kib,size=2:kib,op=3,sep=semicolon,skip=1",
];

fn format(name: &str) -> TraceFormat {
    match FormatChoice::parse(name).unwrap() {
        FormatChoice::Exact(f) => f,
        other => panic!("{other:?}"),
    }
}

/// Reads all of `bytes`; checks every record is sane and every error names `fuzz:LINE`.
fn read_checked(bytes: &[u8], fmt: &str, skip_bad_lines: bool) {
    let reader = TraceReader::from_bytes("fuzz", bytes.to_vec(), format(fmt), skip_bad_lines);
    let mut ordered = Ordered::new(
        reader,
        OrderOptions {
            reorder_window: 8,
            ..OrderOptions::default()
        },
    );
    let mut stats = StatsBuilder::default();
    loop {
        match ordered.next_record() {
            Ok(Some(r)) => {
                assert!(r.len_bytes <= MAX_REQUEST_BYTES);
                assert!(r.offset_bytes.checked_add(r.len_bytes).is_some());
                stats.add(&r);
            }
            Ok(None) => break,
            Err(e) => {
                // Skipping bad lines cannot skip a broken compressed stream (the reader detects
                // gzip and zstd by their first bytes, in memory as in a file).
                let compressed = bytes.starts_with(&[0x1f, 0x8b])
                    || bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]);
                assert!(!skip_bad_lines || compressed, "skipping reader failed: {e}");
                assert!(e.is_input_error());
                assert!(e.to_string().starts_with("fuzz:"), "{e}");
                return;
            }
        }
    }
    let _ = stats.finish(ordered.counts.clone());
}

/// Lines of the real TPC-C trace, and the same requests as MSR lines.
fn real_lines() -> (Vec<String>, Vec<String>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces/mqsim_tpcc-small.trace");
    let text = std::fs::read_to_string(path).unwrap();
    let disksim: Vec<String> = text.lines().take(300).map(str::to_string).collect();
    let mut msr = Vec::new();
    let mut out = Vec::new();
    let mut writer = TraceWriter::new(TraceFormat::Msr, &mut out).unwrap();
    let mut reader = TraceReader::from_bytes("t", text.into_bytes(), format("disksim-ns"), false);
    for _ in 0..300 {
        let r = reader.next_record().unwrap().unwrap();
        writer.write(&r).unwrap();
    }
    drop(writer);
    msr.extend(String::from_utf8(out).unwrap().lines().map(str::to_string));
    (disksim, msr)
}

/// Independent reading of a DiskSim-ns line (std's parsers, no shared code).
fn oracle_disksim(line: &str) -> Option<TraceRecord> {
    let t: Vec<&str> = line.split_ascii_whitespace().collect();
    if t.len() != 5 {
        return None;
    }
    let n: Vec<u64> = t
        .iter()
        .map(|s| s.parse::<u64>().ok())
        .collect::<Option<_>>()?;
    Some(TraceRecord {
        time_ns: n[0],
        device: u32::try_from(n[1]).ok()?,
        op: if n[4] & 1 == 1 { Op::Read } else { Op::Write },
        offset_bytes: n[2].checked_mul(512)?,
        len_bytes: n[3].checked_mul(512)?,
    })
}

/// Independent reading of an MSR line.
fn oracle_msr(line: &str) -> Option<TraceRecord> {
    let t: Vec<&str> = line
        .split(',')
        .map(|s| s.trim_matches([' ', '\t']))
        .collect();
    if t.len() != 7 {
        return None;
    }
    let op = match t[3].to_ascii_lowercase().as_str() {
        "read" => Op::Read,
        "write" => Op::Write,
        _ => return None,
    };
    Some(TraceRecord {
        time_ns: t[0].parse::<u64>().ok()?.checked_mul(100)?,
        device: t[2].parse().ok()?,
        op,
        offset_bytes: t[4].parse().ok()?,
        len_bytes: t[5].parse().ok()?,
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    Replace(usize, u8),
    Insert(usize, u8),
    Delete(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let byte = prop_oneof![
        4 => prop::sample::select(b"0123456789 ,.-+eE\t\r#xRrWw".to_vec()),
        1 => any::<u8>(),
    ];
    prop_oneof![
        (any::<usize>(), byte.clone()).prop_map(|(i, b)| Mutation::Replace(i, b)),
        (any::<usize>(), byte).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Delete),
    ]
}

fn mutate(line: &str, mutations: &[Mutation]) -> Vec<u8> {
    let mut b = line.as_bytes().to_vec();
    for m in mutations {
        let n = b.len().max(1);
        match *m {
            Mutation::Replace(i, v) if !b.is_empty() => b[i % n] = v,
            Mutation::Insert(i, v) => b.insert(i % (b.len() + 1), v),
            Mutation::Delete(i) if !b.is_empty() => {
                b.remove(i % n);
            }
            _ => {}
        }
    }
    b
}

/// Checks a mutated line against the oracle: read means read as the oracle reads it.
fn check_mutated(bytes: &[u8], fmt: &str, oracle: fn(&str) -> Option<TraceRecord>) {
    if bytes.contains(&b'\n') || bytes.contains(&b'#') {
        return;
    }
    let mut r = TraceReader::from_bytes("m", bytes.to_vec(), format(fmt), false);
    match r.next_record() {
        Ok(Some(rec)) => {
            // Free-text fields (an MSR host name) may hold any bytes.
            let text = String::from_utf8_lossy(bytes);
            let text = text.strip_suffix('\r').unwrap_or(&text);
            assert_eq!(oracle(text), Some(rec), "{text:?}");
        }
        Ok(None) => assert!(
            bytes.iter().all(|b| b.is_ascii_whitespace()),
            "{bytes:?} read as nothing"
        ),
        Err(e) => assert!(e.to_string().starts_with("m:1:"), "{e}"),
    }
}

proptest! {
    // Failure seeds are kept next to this file and committed with the fix (ARCHITECTURE.md,
    // Testing); the number of cases follows PROPTEST_CASES (CI runs 20,000).
    #![proptest_config(ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600), f in 0..FORMATS.len()) {
        read_checked(&bytes, FORMATS[f], false);
        read_checked(&bytes, FORMATS[f], true);
    }

    #[test]
    fn arbitrary_text_lines_never_panic(
        lines in prop::collection::vec("[0-9 ,.+RWrwQDFN#:\\[\\]a-z-]{0,60}", 0..20),
        f in 0..FORMATS.len(),
    ) {
        let text = lines.join("\n");
        read_checked(text.as_bytes(), FORMATS[f], false);
        read_checked(text.as_bytes(), FORMATS[f], true);
    }

    #[test]
    fn mutated_real_lines_read_exactly_or_fail_with_location(
        pick in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let (disksim, msr) = real_lines();
        let line = pick.get(&disksim);
        check_mutated(&mutate(line, &mutations), "disksim-ns", oracle_disksim);
        let line = pick.get(&msr);
        check_mutated(&mutate(line, &mutations), "msr", oracle_msr);
    }
}
