//! The sample traces built into flashlab: the two MQSim excerpts of the repository's `traces/`
//! folder (TPC-C and WebSearch, DiskSim ASCII with nanoseconds), with their licence.
//!
//! They are embedded at build time (about 860 KB), so everything that needs real traces works
//! without a checkout: `flashlab bench`'s trace section and the fmmu study replay them when no
//! other traces are given, and a user names one as a trace path, `sample:tpcc` or
//! `sample:wsrch` ([`SAMPLE_PREFIX`]), wherever a trace file is read (`--trace`, `trace.path`,
//! `flashlab trace stats`, Python's `trace=`). `flashlab trace samples` lists them with the
//! licence and writes them out (`--extract DIR`). A file whose name starts with `sample:` is
//! still read as a file when written with a directory, e.g. `./sample:tpcc`.
//!
//! The repository's files are the originals: never edit them (traces/README.md). A test checks
//! that these bytes are those files.

use crate::SimError;

/// A trace path starting with this names a built-in sample: `sample:NAME`.
pub const SAMPLE_PREFIX: &str = "sample:";

/// File name of the licence the samples are distributed under (MQSim's, MIT-style).
pub const LICENSE_FILE_NAME: &str = "LICENSE_mqsim.txt";

/// The licence of the samples, which goes with every copy of them.
pub const LICENSE: &str = include_str!("../../../../traces/LICENSE_mqsim.txt");

/// One built-in sample trace.
#[derive(Debug)]
pub struct SampleTrace {
    /// The name after [`SAMPLE_PREFIX`], e.g. `tpcc`.
    pub name: &'static str,
    /// The file name in the repository's `traces/` folder (and when extracted).
    pub file_name: &'static str,
    /// What it is, in one line.
    pub summary: &'static str,
    /// Requests in it (lines).
    pub requests: u64,
    /// The file's bytes.
    pub bytes: &'static [u8],
}

impl SampleTrace {
    /// How a trace path names it: `sample:NAME`.
    pub fn reference(&self) -> String {
        format!("{SAMPLE_PREFIX}{}", self.name)
    }
}

/// The built-in samples, in file-name order (the order of a directory of them).
pub const SAMPLES: [SampleTrace; 2] = [
    SampleTrace {
        name: "tpcc",
        file_name: "mqsim_tpcc-small.trace",
        summary: "TPC-C (OLTP) excerpt: 16 disks, about 136 ms, 63% reads",
        requests: 6_999,
        bytes: include_bytes!("../../../../traces/mqsim_tpcc-small.trace"),
    },
    SampleTrace {
        name: "wsrch",
        file_name: "mqsim_wsrch-small.trace",
        summary: "WebSearch excerpt: 6 disks, about 60 s, 99.98% reads",
        requests: 24_783,
        bytes: include_bytes!("../../../../traces/mqsim_wsrch-small.trace"),
    },
];

/// The names a `sample:` path may take, for messages: `sample:tpcc, sample:wsrch`.
pub fn sample_references() -> String {
    let names: Vec<String> = SAMPLES.iter().map(SampleTrace::reference).collect();
    names.join(", ")
}

/// The sample a trace path names: `None` when it does not start with [`SAMPLE_PREFIX`] (a
/// file), an error naming the samples when it does but names none of them.
pub fn lookup(path: &str) -> Option<Result<&'static SampleTrace, SimError>> {
    let name = path.strip_prefix(SAMPLE_PREFIX)?;
    Some(
        SAMPLES
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| SimError::Input {
                location: path.to_string(),
                message: format!(
                    "no such sample trace (built in: {}; a file whose name starts with `{SAMPLE_PREFIX}` is read as ./{path})",
                    sample_references()
                ),
            }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_found_by_name_and_others_are_refused() {
        assert_eq!(
            lookup("sample:tpcc").unwrap().unwrap().file_name,
            "mqsim_tpcc-small.trace"
        );
        assert_eq!(lookup("sample:wsrch").unwrap().unwrap().name, "wsrch");
        assert!(lookup("tpcc").is_none());
        assert!(lookup("./sample:tpcc").is_none());
        let e = lookup("sample:msr").unwrap().unwrap_err().to_string();
        assert!(
            e.starts_with("sample:msr: no such sample trace")
                && e.contains("sample:tpcc, sample:wsrch")
                && e.contains("./sample:msr"),
            "{e}"
        );
    }

    /// The request counts the listing shows are the files' lines.
    #[test]
    fn request_counts_are_the_line_counts() {
        for s in &SAMPLES {
            let text = std::str::from_utf8(s.bytes).unwrap();
            assert_eq!(text.lines().count() as u64, s.requests, "{}", s.name);
        }
        assert!(LICENSE.contains("SAFARI Research Group"));
    }
}
