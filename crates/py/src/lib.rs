//! PyO3 bindings of flashlab: the `flashlab._native` extension module.
//!
//! Thin wrappers over `flashlab_sim` and `flashlab_cli`; the Python package `flashlab`
//! (`python/flashlab`) builds its public API on them. Simulations run with the GIL released,
//! so several runs can proceed in parallel from Python threads. A run or trace read started
//! from the main thread stays interruptible: at its progress points it takes the GIL briefly
//! (at most every [`SIGNAL_POLL`]) to run Python's signal handlers, and ends with the exception
//! a handler raised (`KeyboardInterrupt` for Ctrl-C). Signal handlers never reach a run in
//! another thread: a [`CancelFlag`] given to the run stops it from anywhere (a sweep sets its
//! flag on Ctrl-C, so the runs of its thread pool stop too).

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use flashlab_sim::config::{ConfigSource, PRESETS};
use flashlab_sim::trace::{
    FormatChoice, OrderOptions, Ordered, ReadOptions, TraceConfig, TraceReader,
};
use flashlab_sim::{ExperimentConfig, Progress, SimError, StopCheck};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    flashlab._native,
    ConfigError,
    PyValueError,
    "Invalid configuration or workload: the message names the field and what is allowed."
);
create_exception!(
    flashlab._native,
    SimulationError,
    PyRuntimeError,
    "A simulation failed for another reason than its input (a defect of an FTL or the simulator)."
);

fn config_error(e: flashlab_sim::ConfigError) -> PyErr {
    ConfigError::new_err(e.to_string())
}

fn sim_error(e: SimError) -> PyErr {
    if e.is_input_error() {
        ConfigError::new_err(e.to_string())
    } else {
        SimulationError::new_err(e.to_string())
    }
}

/// Longest wall time between two looks at pending signals during a run.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// A flag that stops the runs it is given (`run(..., cancel=flag)`) at their next progress
/// point, from any thread or from a signal handler; once set it stays set. Such a run raises
/// `KeyboardInterrupt`.
#[pyclass(module = "flashlab._native", frozen)]
struct CancelFlag {
    set: Arc<AtomicBool>,
}

#[pymethods]
impl CancelFlag {
    #[new]
    fn new() -> CancelFlag {
        CancelFlag {
            set: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Stops the runs given this flag (those running and those to come).
    fn set(&self) {
        self.set.store(true, Ordering::Relaxed);
    }

    /// Whether [`CancelFlag::set`] was called.
    fn is_set(&self) -> bool {
        self.set.load(Ordering::Relaxed)
    }
}

/// What stops a run: Python's signal handlers for a run started on the main thread (the only
/// thread they run on), and a [`CancelFlag`] if given; the exception a handler raised.
struct SignalWatch {
    check: Option<StopCheck>,
    raised: Arc<Mutex<Option<PyErr>>>,
}

impl SignalWatch {
    fn new(py: Python<'_>, cancel: Option<Arc<AtomicBool>>) -> PyResult<SignalWatch> {
        let raised = Arc::new(Mutex::new(None));
        let main_thread = on_main_thread(py)?;
        let check = (main_thread || cancel.is_some()).then(|| {
            let slot = Arc::clone(&raised);
            let last = Mutex::new(Instant::now());
            StopCheck::new(move || {
                if cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed)) {
                    return true;
                }
                if !main_thread {
                    return false;
                }
                let mut last = last.lock().unwrap_or_else(PoisonError::into_inner);
                if last.elapsed() < SIGNAL_POLL {
                    return false;
                }
                *last = Instant::now();
                match Python::attach(|py| py.check_signals()) {
                    Ok(()) => false,
                    Err(e) => {
                        *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(e);
                        true
                    }
                }
            })
        });
        Ok(SignalWatch { check, raised })
    }

    /// The check to give the simulation (none off the main thread without a cancel flag).
    fn stop_check(&self) -> Option<StopCheck> {
        self.check.clone()
    }

    /// The Python exception for `e`: for an interrupt, the one the signal handler raised,
    /// else (a cancel flag stopped it) `KeyboardInterrupt`.
    fn error(&self, e: SimError) -> PyErr {
        if !matches!(e, SimError::Interrupted) {
            return sim_error(e);
        }
        let raised = self
            .raised
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        raised.unwrap_or_else(|| PyKeyboardInterrupt::new_err("interrupted"))
    }
}

fn on_main_thread(py: Python<'_>) -> PyResult<bool> {
    let threading = py.import("threading")?;
    let current = threading.call_method0("current_thread")?;
    let main = threading.call_method0("main_thread")?;
    Ok(current.is(&main))
}

/// Progress line on stderr: `completed/expected requests (pct%)`.
fn show_progress(p: Progress) {
    let line = match p.expected {
        Some(total) if total > 0 => format!(
            "\rflashlab: {}/{} requests ({:.0}%)",
            p.completed,
            total,
            100.0 * p.completed as f64 / total as f64
        ),
        _ => format!("\rflashlab: {} requests", p.completed),
    };
    let mut err = std::io::stderr().lock();
    // Progress output is best effort: a closed stderr must not fail the run.
    let _ = err.write_all(line.as_bytes());
    let _ = err.flush();
}

/// Refuses overrides the run would silently ignore, as `flashlab run` does: workload settings
/// when a trace is replayed, trace settings without one (a configuration file may hold both
/// sections as a template).
fn refuse_unused_sets(sets: &[String], config: &ExperimentConfig) -> Result<(), SimError> {
    let keys = sets
        .iter()
        .map(|s| s.split_once('=').map_or(s.as_str(), |(k, _)| k).trim());
    let (prefix, message) = if config.trace.enabled() {
        (
            "workload.",
            format!(
                "the workload is not used when a trace (trace.path = {}) is replayed; the trace.* \
                 settings limit and pace a replay",
                config.trace.path
            ),
        )
    } else {
        (
            "trace.",
            "applies to a trace replay: give trace= (or set trace.path), or leave it out".into(),
        )
    };
    match keys.into_iter().find(|k| k.starts_with(prefix)) {
        Some(key) => Err(SimError::Input {
            location: format!("set {key}"),
            message,
        }),
        None => Ok(()),
    }
}

/// Runs one experiment and returns its report as JSON text (schema `flashlab.report/2`).
///
/// The configuration is layered like `flashlab run`: the preset (else the file's `preset`
/// key, else `default`), then the TOML file, then the `key.path=value` overrides in order.
/// Setting `cancel` stops the run (from any thread), as Ctrl-C does one on the main thread.
#[pyfunction]
#[pyo3(signature = (preset, config_path, sets, progress = false, cancel = None))]
fn run(
    py: Python<'_>,
    preset: Option<String>,
    config_path: Option<PathBuf>,
    sets: Vec<String>,
    progress: bool,
    cancel: Option<&Bound<'_, CancelFlag>>,
) -> PyResult<String> {
    let cancel = cancel.map(|flag| Arc::clone(&flag.get().set));
    let signals = SignalWatch::new(py, cancel)?;
    let stop = signals.stop_check();
    let report = py.detach(move || {
        let source = ConfigSource {
            preset: preset.as_deref(),
            file: config_path.as_deref(),
            sets: &sets,
        };
        let config = ExperimentConfig::load(&source)?;
        refuse_unused_sets(&sets, &config)?;
        // A device beyond the machine's memory is refused before it is allocated.
        flashlab_sim::memory::check_available(&config)?;
        let run = flashlab_sim::run_experiment_with_stop_check;
        let report = if progress {
            let result = run(&config, &mut show_progress, stop);
            eprintln!();
            result
        } else {
            run(&config, &mut |_| {}, stop)
        };
        report.map(|r| r.to_json().to_string())
    });
    report.map_err(|e| signals.error(e))
}

/// The resolved configuration of a run as JSON text: what `run` would simulate (the report's
/// `config`), layered as in `run`, without running it. Sweeps hash it to key their cache.
#[pyfunction]
fn resolve_config(
    preset: Option<String>,
    config_path: Option<PathBuf>,
    sets: Vec<String>,
) -> PyResult<String> {
    let source = ConfigSource {
        preset: preset.as_deref(),
        file: config_path.as_deref(),
        sets: &sets,
    };
    let resolved = ExperimentConfig::load(&source)
        .map_err(SimError::from)
        .and_then(|config| refuse_unused_sets(&sets, &config).map(|()| config));
    let config = resolved.map_err(sim_error)?;
    serde_json::to_string(&config)
        .map_err(|e| SimulationError::new_err(format!("configuration does not serialize: {e}")))
}

/// The real-time admission of a task set (`flashlab admit`) as JSON text: the verdict, every
/// test with its terms, the scheme's bounds and the analysis device. `tasks` is the periodic
/// workload's task syntax (`4xw12p@60ms+4xr3p@15ms`); the device is layered like `run`.
#[pyfunction]
fn admit(
    preset: Option<String>,
    config_path: Option<PathBuf>,
    sets: Vec<String>,
    ftl: String,
    tasks: String,
) -> PyResult<String> {
    let source = ConfigSource {
        preset: preset.as_deref(),
        file: config_path.as_deref(),
        sets: &sets,
    };
    let analysis = flashlab_sim::realtime::analysis::admit_config(&source, &ftl, &tasks)
        .and_then(|config| flashlab_sim::realtime::analyse(&config))
        .map_err(sim_error)?;
    serde_json::to_string(&analysis)
        .map_err(|e| SimulationError::new_err(format!("analysis does not serialize: {e}")))
}

/// Parses the compact workload syntax (`randwrite:bs=4k,qd=32,count=1e5`) into a dict of
/// every `[workload]` field.
#[pyfunction]
fn parse_workload(py: Python<'_>, spec: String) -> PyResult<Py<PyAny>> {
    let workload = flashlab_sim::workload::parse_spec(&spec).map_err(config_error)?;
    let text = serde_json::to_string(&workload)
        .map_err(|e| SimulationError::new_err(format!("workload does not serialize: {e}")))?;
    let value = py.import("json")?.call_method1("loads", (text,))?;
    Ok(value.unbind())
}

/// Statistics of a trace file, as JSON text of the same document as `flashlab trace stats
/// --json` (schema `flashlab.trace-stats/1`): file, format, compression, lines, bad_lines and
/// stats.
///
/// `format` is a `--trace-format` value (`auto` detects); `devices` a device list such as
/// `0,3` (empty: all); `max_requests` 0 reads them all; `reorder_window` requests are held to
/// put an unsorted trace in time order.
#[pyfunction]
#[pyo3(signature = (
    path,
    format = String::from("auto"),
    devices = String::new(),
    max_requests = 0,
    skip_bad_lines = false,
    reorder_window = 4096,
))]
fn trace_stats(
    py: Python<'_>,
    path: PathBuf,
    format: String,
    devices: String,
    max_requests: u64,
    skip_bad_lines: bool,
    reorder_window: usize,
) -> PyResult<String> {
    let signals = SignalWatch::new(py, None)?;
    let stop = signals.stop_check();
    py.detach(move || {
        let format = FormatChoice::parse(&format).map_err(|message| {
            sim_error(SimError::Input {
                location: "format".to_string(),
                message,
            })
        })?;
        let devices = TraceConfig {
            devices,
            ..Default::default()
        }
        .device_list()
        .map_err(config_error)?;
        let mut reader = TraceReader::open(
            &path,
            &ReadOptions {
                format,
                skip_bad_lines,
            },
        )
        .map_err(sim_error)?;
        reader.set_stop_check(stop);
        let mut stream = Ordered::new(
            reader,
            OrderOptions {
                devices,
                reorder_window,
                max_requests,
                max_duration_ns: 0,
            },
        );
        let stats = flashlab_sim::trace::trace_stats(&mut stream, &mut |_| {})
            .map_err(|e| signals.error(e))?;
        let file = path.display().to_string();
        Ok(flashlab_sim::trace::stats_document(&file, stream.reader(), &stats).to_string())
    })
}

/// Runs the `flashlab` command line with `argv` (program name first) and returns its exit
/// status. Output goes straight to the process's stdout and stderr.
#[pyfunction]
fn cli(py: Python<'_>, argv: Vec<String>) -> i32 {
    py.detach(move || {
        let code = flashlab_cli::run(argv);
        // No Rust runtime shutdown flushes these inside a Python process.
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        code
    })
}

/// Names of the device presets, in the order `flashlab presets` lists them.
#[pyfunction]
fn presets() -> Vec<&'static str> {
    PRESETS.to_vec()
}

/// Version of the flashlab bindings.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Native part of the `flashlab` package.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add("__version__", version())?;
    m.add_class::<CancelFlag>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_config, m)?)?;
    m.add_function(wrap_pyfunction!(parse_workload, m)?)?;
    m.add_function(wrap_pyfunction!(admit, m)?)?;
    m.add_function(wrap_pyfunction!(trace_stats, m)?)?;
    m.add_function(wrap_pyfunction!(cli, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
