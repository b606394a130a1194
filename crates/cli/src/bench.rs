//! `flashlab bench`: simulator speed and memory on the reference scenario: 1 million 4 KiB
//! random writes at queue depth 32 on the `default` preset (16 GiB: 8 channels x 4 chips x
//! 2 dies x 2 planes, 8 KiB pages, 256 pages per block, 7% over-provisioning), preconditioned
//! to 90%, so garbage collection runs all the time. Prints simulated host requests per wall
//! second (measured phase only) and the process's peak resident memory, with full timing and
//! functional-only. Peak memory is reset between modes (Linux `clear_refs`).

use std::time::Instant;

use flashlab_sim::config::{ConfigSource, ExperimentConfig};
use flashlab_sim::stats::build_report;
use flashlab_sim::workload::SyntheticSource;
use flashlab_sim::{SimError, Simulation};

use super::fail;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Measured 4 KiB random writes per mode (1000000, 1e6, 250k)
    #[arg(long, default_value = "1000000", value_parser = super::count_arg)]
    requests: u64,
    /// Fraction of the logical space preconditioned first
    #[arg(long, default_value_t = 0.9)]
    precondition: f64,
    /// Queue depth (also --queue-depth)
    #[arg(long, default_value_t = 32, visible_alias = "queue-depth")]
    qd: u32,
    /// Which modes to measure
    #[arg(long, value_enum, default_value_t = Mode::Both)]
    mode: Mode,
    /// Device preset (as `flashlab run --device`)
    #[arg(short, long, value_name = "PRESET", default_value = "default")]
    device: String,
    /// Extra settings (repeatable)
    #[arg(short, long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Write the figures as JSON to FILE (`-` for standard output)
    #[arg(long, value_name = "FILE")]
    json: Option<std::path::PathBuf>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Timed,
    Functional,
    Both,
}

/// Figures of one benchmark mode.
#[derive(Debug, Clone, serde::Serialize)]
struct Figures {
    mode: &'static str,
    requests: u64,
    precondition_s: f64,
    run_s: f64,
    requests_per_s: f64,
    peak_rss_mib: Option<f64>,
    state_mib: f64,
    write_amplification: Option<f64>,
    gc_victims: u64,
    simulated_s: f64,
}

pub fn bench_command(a: &BenchArgs) -> i32 {
    let modes: &[(&str, bool)] = match a.mode {
        Mode::Timed => &[("timed", false)],
        Mode::Functional => &[("functional", true)],
        Mode::Both => &[("timed", false), ("functional", true)],
    };
    // Check the output and the configuration of every mode before measuring anything.
    let json_out = match super::open_output(a.json.as_deref()) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let mut configs = Vec::new();
    for &(name, functional) in modes {
        let checked = bench_config(a, functional).and_then(|c| {
            flashlab_sim::memory::check_available(&c)?;
            Ok(c)
        });
        match checked {
            Ok(c) => configs.push((name, c)),
            Err(e) => return fail(&e),
        }
    }
    // With the JSON on standard output, the table goes to standard error.
    let json_on_stdout = json_out
        .as_ref()
        .is_some_and(super::output::Output::is_stdout);
    let say = |line: String| {
        if json_on_stdout {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    say(format!(
        "flashlab bench: {} x 4 KiB random writes, QD {}, device `{}`, preconditioned to {:.0}%",
        a.requests,
        a.qd,
        a.device,
        a.precondition * 100.0
    ));
    say(format!(
        "{:<11} {:>11} {:>10} {:>8} {:>14} {:>14} {:>10} {:>6} {:>9}",
        "mode",
        "requests",
        "precond s",
        "run s",
        "requests/s",
        "peak RSS MiB",
        "state MiB",
        "WA",
        "GC runs"
    ));
    let mut all = Vec::new();
    for (name, config) in &configs {
        match measure(name, config) {
            Ok(f) => {
                say(format!(
                    "{:<11} {:>11} {:>10.2} {:>8.2} {:>14.0} {:>14} {:>10.1} {:>6} {:>9}",
                    f.mode,
                    f.requests,
                    f.precondition_s,
                    f.run_s,
                    f.requests_per_s,
                    f.peak_rss_mib.map_or("n/a".into(), |m| format!("{m:.1}")),
                    f.state_mib,
                    f.write_amplification
                        .map_or("n/a".into(), |wa| format!("{wa:.2}")),
                    f.gc_victims
                ));
                all.push(f);
            }
            Err(e) => return fail(&e),
        }
    }
    match json_out {
        Some(out) => {
            super::write_json(out, &serde_json::to_value(&all).expect("figures serialize"))
        }
        None => 0,
    }
}

fn bench_config(a: &BenchArgs, functional: bool) -> Result<ExperimentConfig, SimError> {
    let mut sets = vec![
        "workload.pattern=\"uniform\"".to_string(),
        "workload.read_fraction=0.0".into(),
        "workload.block_size=4096".into(),
        "workload.align_bytes=4096".into(),
        format!("workload.queue_depth={}", a.qd),
        format!("workload.count={}", a.requests),
        format!("run.precondition={}", toml::Value::Float(a.precondition)),
        format!("run.functional_only={functional}"),
    ];
    sets.extend(a.sets.iter().cloned());
    Ok(ExperimentConfig::load(&ConfigSource {
        preset: Some(&a.device),
        file: None,
        sets: &sets,
    })?)
}

fn measure(mode: &'static str, config: &ExperimentConfig) -> Result<Figures, SimError> {
    let config = config.clone();
    reset_peak_rss();
    let t0 = Instant::now();
    let mut sim = Simulation::new(&config)?;
    sim.precondition()?;
    let t1 = Instant::now();
    let source = SyntheticSource::new(&config.workload, sim.logical_bytes(), config.run.seed)?;
    let describe = sim.run(Box::new(source), &mut |_| {})?.describe();
    let run_s = t1.elapsed().as_secs_f64();
    let report = build_report(&sim, describe);
    Ok(Figures {
        mode,
        requests: report.host.all.count,
        precondition_s: (t1 - t0).as_secs_f64(),
        run_s,
        requests_per_s: report.host.all.count as f64 / run_s.max(1e-9),
        peak_rss_mib: peak_rss_bytes().map(|b| b as f64 / (1 << 20) as f64),
        state_mib: report.device.state_bytes as f64 / (1 << 20) as f64,
        write_amplification: report.write_amplification,
        gc_victims: report.gc.gc_runs,
        simulated_s: report.elapsed_ns as f64 / 1e9,
    })
}

/// Resets the kernel's peak-RSS mark of this process (Linux >= 4.0; ignored elsewhere).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident set size of this process since start or the last reset.
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
