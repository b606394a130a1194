//! `flashlab admit`: the paper's `open()` asked from the command line. Would this periodic
//! task set meet its deadlines on this device under this real-time FTL? Prints the verdict,
//! every test with its terms, and the scheme's guaranteed bounds (part-ftl.txt eqs. 6-16);
//! `--json` gives the same as a document. Exit 0 admitted, 1 refused, 2 bad input.

use std::path::PathBuf;

use flashlab_sim::config::ConfigSource;
use flashlab_sim::realtime::analysis::{admit_config, analyse};

use crate::{fail, open_output, write_json};

/// Exit status of a refused task set (not an error: the answer is no).
pub const EXIT_REFUSED: i32 = 1;

#[derive(clap::Args, Debug)]
pub struct AdmitArgs {
    /// Device preset; cosmos-table-iv takes part-ftl.txt Table IV's measured times, any
    /// other preset times its own model (see `flashlab presets`)
    #[arg(short, long, value_name = "PRESET", default_value = "cosmos-table-iv")]
    device: String,
    /// TOML configuration layered over the preset
    #[arg(short, long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Real-time FTL whose test applies: part-ftl (eqs. 6-7), wao-gc (section VI.A's
    /// worst case) or rtgc (its EDF test with collectors)
    #[arg(long, value_name = "NAME")]
    ftl: String,
    /// The task set in the periodic workload's syntax, e.g. 4xw12p@60ms+4xr3p@15ms (N x
    /// read/write P pages every PERIOD; `flashlab run --help` has the full syntax)
    #[arg(long, value_name = "SPEC")]
    tasks: String,
    /// Override one setting, e.g. --set ftl.data_ratio=0.518 or --set ftl.decode_ns=1200000
    /// (repeatable)
    #[arg(short, long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Write the analysis as JSON to FILE (`-` or no FILE: standard output, instead of the
    /// text)
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    json: Option<PathBuf>,
}

/// Runs `flashlab admit`; the exit code.
pub fn admit_command(a: &AdmitArgs) -> i32 {
    let source = ConfigSource {
        preset: Some(&a.device),
        file: a.config.as_deref(),
        sets: &a.sets,
    };
    let analysis = match admit_config(&source, &a.ftl, &a.tasks).and_then(|c| analyse(&c)) {
        Ok(analysis) => analysis,
        Err(e) => return fail(&e),
    };
    // An unwritable --json is refused before anything is printed.
    let out = match open_output(a.json.as_deref()) {
        Ok(out) => out,
        Err(code) => return code,
    };
    let to_stdout = a.json.as_deref().is_some_and(|p| p.as_os_str() == "-");
    if !to_stdout {
        println!("device {}, FTL {}", a.device, a.ftl);
        println!("{analysis}");
    }
    if let Some(out) = out {
        let value = serde_json::to_value(&analysis).expect("the analysis serializes");
        let code = write_json(out, &value);
        if code != 0 {
            return code;
        }
    }
    if analysis.admitted {
        0
    } else {
        EXIT_REFUSED
    }
}
