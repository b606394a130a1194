//! `flashlab serve`: any FTL as a real block device over NBD.
//!
//! One device thread owns the simulated SSD ([`flashlab_sim::blockdev::BlockDevice`]) and
//! answers the [`Job`]s the NBD connections hand it:
//! - `--clock fast`: a job arrives at the current simulated time, the simulation runs as fast
//!   as it can until something completes, the reply goes out at once;
//! - `--clock real`: simulated time follows the wall clock from the start; a job arrives at
//!   the simulated time of its last byte's receipt, the simulation runs only up to "now", so
//!   a reply leaves when its simulated completion time has come (a short spin before it makes
//!   the wait precise): a client measures the simulated SSD's latency, queueing included.
//!
//! The flash image (`--image`) is created when missing or empty; an existing image is
//! reopened: its configuration is the superblock's, and the FTL rebuilds its state by
//! scanning the flash as it would at power-up (refused, at start, by an FTL that cannot).

use std::collections::HashMap;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use flashlab_sim::blockdev::{BlockDevice, Command as DeviceCommand, Finished, OpenReport};
use flashlab_sim::config::{ConfigSource, ExperimentConfig};
use flashlab_sim::host::Op;
use flashlab_sim::stats::{build_report, render_table};
use flashlab_sim::trace::{TraceFormat, TraceRecord, TraceWriter};
use flashlab_sim::SimError;

use super::listen::{Listen, Server, ServerEvent};
use super::nbd::{Command as NbdCommand, ConnectionStats, Export, Job, NbdErrno, Reply};
use super::stats::LiveStats;

/// Largest read or write payload offered to clients.
const MAX_PAYLOAD: u32 = 32 << 20;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Clock {
    /// Simulated time runs as fast as the FTL does; replies go out at once.
    #[default]
    Fast,
    /// Simulated time follows the wall clock; each reply waits for its simulated completion.
    Real,
}

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The flash image: created when missing or empty, else reopened and recovered by the
    /// FTL's power-up scan (its configuration comes from the image)
    #[arg(long, value_name = "FILE")]
    pub image: PathBuf,
    /// Where to listen: unix:PATH or tcp:HOST:PORT
    #[arg(long, value_name = "ADDRESS")]
    pub listen: String,
    /// Device preset of a new image (see `flashlab presets`)
    #[arg(short, long, value_name = "PRESET")]
    pub device: Option<String>,
    /// TOML configuration of a new image, layered over the preset
    #[arg(short, long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Override one setting of a new image (repeatable)
    #[arg(short, long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// FTL of a new image (see `flashlab ftls`)
    #[arg(long, value_name = "NAME")]
    pub ftl: Option<String>,
    /// fast: as fast as the FTL runs; real: replies paced to simulated completion times
    #[arg(long, value_enum, default_value_t = Clock::Fast)]
    pub clock: Clock,
    /// Print live IOPS, latency percentiles, write amplification and GC every TIME (e.g. 1s)
    #[arg(long, value_name = "TIME")]
    pub stats_interval: Option<String>,
    /// Write the JSON report of everything served to FILE when the server stops
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Record every request served as a trace (fio iolog format) that `flashlab run --trace`
    /// replays
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// The export's name (clients may also ask for the default, empty name)
    #[arg(long, value_name = "NAME", default_value = "flashlab")]
    pub export_name: String,
}

/// Runs `flashlab serve`; the exit code.
pub fn serve_command(args: &ServeArgs) -> Result<i32, SimError> {
    let listen: Listen = args.listen.parse().map_err(|message| SimError::Input {
        location: "--listen".into(),
        message,
    })?;
    let stats_every = match &args.stats_interval {
        Some(text) => Some(Duration::from_nanos(
            flashlab_sim::workload::parse_duration_ns(text).map_err(|message| SimError::Input {
                location: "--stats-interval".into(),
                message,
            })?,
        )),
        None => None,
    };
    refuse_same_paths(args)?;
    let opened = Instant::now();
    let (device, recovery) = open_or_create(args)?;
    let open_wall = opened.elapsed();
    announce(&device, recovery.as_ref(), open_wall, &listen, args.clock);
    let export = export_of(&device, &args.export_name);
    let server = Server::bind(&listen).map_err(|e| SimError::Input {
        location: format!("--listen {listen}"),
        message: format!("cannot listen: {e}"),
    })?;
    let stop = Arc::new(AtomicBool::new(false));
    let _signals = StopSignals::install(&stop)?;
    let (tx, rx) = std::sync::mpsc::channel::<Job>();
    let mut recorder_file = match &args.record {
        Some(path) => Some(BufWriter::new(std::fs::File::create(path).map_err(
            |e| SimError::Input {
                location: path.display().to_string(),
                message: format!("cannot create the record: {e}"),
            },
        )?)),
        None => None,
    };
    let clock = args.clock;
    let log_conn = |event: &ServerEvent| match event {
        ServerEvent::Connected { id, peer } => eprintln!("connection {id} from {peer}"),
        ServerEvent::Ended(stats) => eprintln!("{stats}"),
        ServerEvent::AcceptFailed(e) => eprintln!("accept failed: {e}"),
    };
    let (device, connections, outcome) = std::thread::scope(|scope| {
        let server_stop = Arc::clone(&stop);
        let server = &server;
        let export = &export;
        let accept = scope.spawn(move || server.run_logged(export, tx, &server_stop, &log_conn));
        let mut recorder = recorder_file
            .as_mut()
            .map(|f| TraceWriter::new(TraceFormat::Fio, f as &mut dyn Write))
            .transpose()
            .map_err(|e| SimError::Input {
                location: "--record".into(),
                message: e.to_string(),
            });
        let mut device = device;
        let outcome = match recorder.as_mut() {
            Ok(recorder) => {
                let mut loop_ = DeviceLoop::new(&mut device, clock, stats_every, recorder.as_mut());
                loop_.run(&rx, &stop)
            }
            Err(e) => Err(SimError::Input {
                location: "--record".into(),
                message: e.to_string(),
            }),
        };
        // The connections end only after answering what is in flight: keep answering.
        stop.store(true, Ordering::SeqCst);
        let drain = {
            let mut loop_ = DeviceLoop::new(&mut device, clock, None, None);
            loop_.drain(&rx, || accept.is_finished())
        };
        let connections = accept.join().expect("the accept loop does not panic");
        (device, connections, outcome.and(drain))
    });
    let mut device = device;
    if let Some(f) = recorder_file.as_mut() {
        f.flush().map_err(|e| SimError::Input {
            location: "--record".into(),
            message: e.to_string(),
        })?;
    }
    device.close()?;
    let connections = connections.map_err(|e| SimError::Input {
        location: format!("--listen {listen}"),
        message: e.to_string(),
    })?;
    outcome?;
    report(args, &device, recovery.as_ref(), open_wall, &connections)?;
    Ok(if device.failure().is_some() { 1 } else { 0 })
}

fn refuse_same_paths(args: &ServeArgs) -> Result<(), SimError> {
    let same = |a: &Path, b: &Path| {
        a == b
            || (a
                .canonicalize()
                .ok()
                .is_some_and(|x| Some(x) == b.canonicalize().ok()))
    };
    for (name, path) in [("--json", &args.json), ("--record", &args.record)] {
        if let Some(p) = path {
            if same(p, &args.image) {
                return Err(SimError::Input {
                    location: name.into(),
                    message: format!("{} is the flash image", p.display()),
                });
            }
        }
    }
    Ok(())
}

/// Opens the image (recovering the FTL) or creates it with the configuration asked for.
fn open_or_create(args: &ServeArgs) -> Result<(BlockDevice, Option<OpenReport>), SimError> {
    let exists = std::fs::metadata(&args.image).is_ok_and(|m| m.len() > 0);
    if exists {
        let given: Vec<&str> = [
            ("--device", args.device.is_some()),
            ("--config", args.config.is_some()),
            ("--set", !args.sets.is_empty()),
            ("--ftl", args.ftl.is_some()),
        ]
        .iter()
        .filter(|(_, on)| *on)
        .map(|(n, _)| *n)
        .collect();
        if !given.is_empty() {
            return Err(SimError::Input {
                location: args.image.display().to_string(),
                message: format!(
                    "is an existing flash image, which holds its own configuration: drop {} (or give a new image path)",
                    given.join(", ")
                ),
            });
        }
        let (device, report) = BlockDevice::open(&args.image)?;
        return Ok((device, Some(report)));
    }
    let mut sets = args.sets.clone();
    if let Some(ftl) = &args.ftl {
        sets.insert(0, format!("ftl.name=\"{ftl}\""));
    }
    let mut config = ExperimentConfig::load(&ConfigSource {
        preset: args.device.as_deref(),
        file: args.config.as_deref(),
        sets: &sets,
    })?;
    power_safe_defaults(&mut config, args);
    // A device beyond the machine's memory is refused before it is allocated.
    let mut served = config.clone();
    served.run.payloads = true;
    flashlab_sim::memory::check_available(&served)?;
    Ok((BlockDevice::create(&config, &args.image)?, None))
}

/// Settings a served device needs to keep flushed data through a power cut, where the user
/// left them unset: pagemap's GC programs the GC page holding a victim's moved units before it
/// erases the victim (`ftl.gc_program_before_erase`, off by default for the papers' set-ups,
/// where nothing is ever cut).
fn power_safe_defaults(config: &mut ExperimentConfig, args: &ServeArgs) {
    const KEY: &str = "gc_program_before_erase";
    let in_file = args
        .config
        .as_ref()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .is_some_and(|text| text.contains(KEY));
    let in_sets = args.sets.iter().any(|s| s.contains(KEY));
    if config.ftl_name() == "pagemap" && !in_file && !in_sets {
        config.ftl.insert(KEY.into(), toml::Value::Boolean(true));
        eprintln!("note: pagemap served with ftl.{KEY}=true (power-loss safe GC; --set ftl.{KEY}=false to turn it off)");
    }
}

fn export_of(device: &BlockDevice, name: &str) -> Export {
    let sector = device.sector_bytes() as u32;
    let page = device.simulation().nand().layout().page_bytes;
    let size = device.size_bytes() / u64::from(sector) * u64::from(sector);
    let cfg = device.simulation().config();
    Export {
        name: name.to_string(),
        description: format!("flashlab {} on {}", cfg.ftl_name(), cfg.preset),
        size_bytes: size,
        block_min: sector,
        block_preferred: page.max(4096).max(sector).next_power_of_two(),
        block_max: MAX_PAYLOAD / sector * sector,
        multi_conn: true,
    }
}

fn announce(
    device: &BlockDevice,
    recovery: Option<&OpenReport>,
    wall: Duration,
    listen: &Listen,
    clock: Clock,
) {
    let sim = device.simulation();
    let cfg = sim.config();
    eprintln!(
        "flashlab serve: {} on {} ({} MiB exported, {}-byte sectors), image {}, clock {}",
        cfg.ftl_name(),
        cfg.preset,
        device.size_bytes() >> 20,
        device.sector_bytes(),
        device.image().path().display(),
        match clock {
            Clock::Fast => "fast",
            Clock::Real => "real",
        }
    );
    match recovery {
        Some(r) => eprintln!(
            "recovered: {} pages read back ({} torn), FTL scan of {} pages{}: {:.3} ms simulated, {:.3} s wall{}",
            r.restore.pages_programmed,
            r.restore.torn_records,
            r.scan.pages_scanned,
            recovery_writes(&r.scan),
            r.scan.simulated_ns as f64 / 1e6,
            wall.as_secs_f64(),
            if r.clean_shutdown { "" } else { " (after an unclean shutdown)" }
        ),
        None if !sim.ftl().supports_recovery() => eprintln!(
            "note: {} does not support power-loss recovery: this image cannot be served again once the server stops",
            cfg.ftl_name()
        ),
        None => {}
    }
    eprintln!("listening on {listen} (NBD URI {})", listen.nbd_uri());
}

/// Sets `stop` on SIGINT and SIGTERM until dropped (the server then stops gracefully; a
/// process that called `flashlab serve` from Python gets its handlers back).
struct StopSignals(Vec<signal_hook::SigId>);

impl StopSignals {
    fn install(stop: &Arc<AtomicBool>) -> Result<Self, SimError> {
        let mut ids = Vec::new();
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            let id = signal_hook::flag::register(signal, Arc::clone(stop)).map_err(|e| {
                SimError::Input {
                    location: "serve".into(),
                    message: format!("cannot install the signal handler: {e}"),
                }
            })?;
            ids.push(id);
        }
        Ok(StopSignals(ids))
    }
}

impl Drop for StopSignals {
    fn drop(&mut self) {
        for id in self.0.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// The device thread's state: the device, the replies owed, the clock.
struct DeviceLoop<'a, 'w> {
    device: &'a mut BlockDevice,
    clock: Clock,
    owed: HashMap<u64, Reply>,
    finished: Vec<Finished>,
    started: Instant,
    sim_start_ns: u64,
    stats: Option<LiveStats>,
    recorder: Option<&'a mut TraceWriter<'w>>,
}

impl<'a, 'w> DeviceLoop<'a, 'w> {
    fn new(
        device: &'a mut BlockDevice,
        clock: Clock,
        stats_every: Option<Duration>,
        recorder: Option<&'a mut TraceWriter<'w>>,
    ) -> Self {
        let sim_start_ns = device.simulation().now();
        let stats = stats_every.map(|every| LiveStats::new(every, device));
        DeviceLoop {
            device,
            clock,
            owed: HashMap::new(),
            finished: Vec::new(),
            started: Instant::now(),
            sim_start_ns,
            stats,
            recorder,
        }
    }

    /// Simulated time of wall instant `at` (`--clock real`).
    fn sim_time(&self, at: Instant) -> u64 {
        self.sim_start_ns + at.saturating_duration_since(self.started).as_nanos() as u64
    }

    /// Serves jobs until `stop` is set or the connections' sender is gone.
    fn run(&mut self, jobs: &Receiver<Job>, stop: &AtomicBool) -> Result<(), SimError> {
        if self.clock == Clock::Real {
            // Wake-ups on time rather than grouped up to 50 us late (the default slack).
            let _ = nix::sys::prctl::set_timerslack(1);
        }
        while !stop.load(Ordering::Relaxed) {
            if !self.serve_once(jobs)? {
                break;
            }
            if let Some(stats) = &mut self.stats {
                stats.maybe_print(self.device);
            }
        }
        Ok(())
    }

    /// After stop: answers every job still coming until the connections have ended.
    fn drain(&mut self, jobs: &Receiver<Job>, ended: impl Fn() -> bool) -> Result<(), SimError> {
        loop {
            let open = self.serve_once(jobs)?;
            if (ended() || !open) && self.owed.is_empty() {
                // Jobs queued before the last connection ended.
                while let Ok(job) = jobs.try_recv() {
                    self.take(job)?;
                }
                if self.owed.is_empty() {
                    return Ok(());
                }
            }
        }
    }

    /// One round: takes the jobs that arrived, advances the simulation, answers what
    /// finished. False when no connection can send more.
    fn serve_once(&mut self, jobs: &Receiver<Job>) -> Result<bool, SimError> {
        let open = self.take_jobs(jobs)?;
        match self.clock {
            Clock::Fast => {
                if !self.owed.is_empty() {
                    self.device.run_until_served()?;
                }
            }
            Clock::Real => {
                let now = self.sim_time(Instant::now());
                self.device.run_until_time(now)?;
            }
        }
        self.answer()?;
        Ok(open)
    }

    /// Takes the waiting jobs; waits for one (or, paced, until the next event) when idle.
    fn take_jobs(&mut self, jobs: &Receiver<Job>) -> Result<bool, SimError> {
        let wait = self.idle_wait();
        let first = match wait {
            None => jobs.try_recv().map_err(|e| e == TryRecvError::Disconnected),
            Some(d) if d.is_zero() => jobs.try_recv().map_err(|e| e == TryRecvError::Disconnected),
            Some(d) => jobs
                .recv_timeout(d)
                .map_err(|e| e == RecvTimeoutError::Disconnected),
        };
        match first {
            Ok(job) => self.take(job)?,
            Err(true) => return Ok(false),
            Err(false) => return Ok(true),
        }
        loop {
            match jobs.try_recv() {
                Ok(job) => self.take(job)?,
                Err(TryRecvError::Empty) => return Ok(true),
                Err(TryRecvError::Disconnected) => return Ok(false),
            }
        }
    }

    /// How long to block for a job: fast clock, not while requests are in flight; paced,
    /// until the next simulated event is due (spinning its last 40 us).
    fn idle_wait(&self) -> Option<Duration> {
        const IDLE: Duration = Duration::from_millis(100);
        // A sleep ends up to tens of microseconds late even with no timer slack: the last
        // stretch before an event is spun.
        const SPIN: Duration = Duration::from_micros(40);
        match self.clock {
            Clock::Fast if self.owed.is_empty() => Some(IDLE),
            Clock::Fast => None,
            Clock::Real => {
                let Some(next) = self.device.simulation().next_event_ns() else {
                    return Some(IDLE);
                };
                let now = self.sim_time(Instant::now());
                let ahead = Duration::from_nanos(next.saturating_sub(now));
                Some(ahead.saturating_sub(SPIN).min(IDLE))
            }
        }
    }

    fn take(&mut self, job: Job) -> Result<(), SimError> {
        if self.clock == Clock::Real {
            // Arrives when its last byte came (not before the last event the simulation ran).
            let at = self.sim_time(job.received);
            if at > self.device.simulation().now() {
                self.device.advance_to(at)?;
            }
        }
        let Job {
            command,
            fua,
            reply,
            ..
        } = job;
        let command = match command {
            NbdCommand::Read { offset, len } => DeviceCommand::Read {
                offset,
                len: u64::from(len),
            },
            NbdCommand::Write { offset, data } => DeviceCommand::Write { offset, data, fua },
            NbdCommand::WriteZeroes { offset, len, .. } => DeviceCommand::Write {
                offset,
                data: vec![0; len as usize],
                fua,
            },
            NbdCommand::Trim { offset, len } => DeviceCommand::Trim {
                offset,
                len: u64::from(len),
            },
            NbdCommand::Flush => DeviceCommand::Flush,
        };
        let record = self
            .recorder
            .is_some()
            .then(|| record_of(&command, self.device.simulation().now()));
        match self.device.submit(command) {
            Ok(ticket) => {
                self.owed.insert(ticket, reply);
                if let (Some(r), Some(rec)) = (self.recorder.as_deref_mut(), record) {
                    r.write(&rec).map_err(|e| SimError::Input {
                        location: "--record".into(),
                        message: e.to_string(),
                    })?;
                }
            }
            Err(e) if e.is_input_error() => {
                eprintln!("request refused: {e}");
                reply.error(NbdErrno::Inval);
            }
            Err(e) => return Err(e),
        }
        Ok(())
    }

    /// Answers every finished command.
    fn answer(&mut self) -> Result<(), SimError> {
        self.finished.clear();
        self.device.collect(&mut self.finished)?;
        for f in self.finished.drain(..) {
            if let Some(stats) = &mut self.stats {
                stats.record(&f);
            }
            let Some(reply) = self.owed.remove(&f.ticket) else {
                continue;
            };
            match f.result {
                Ok(Some(data)) => reply.ok_data(data),
                Ok(None) => reply.ok(&[]),
                Err(why) => {
                    eprintln!("I/O error on {} (ticket {}): {why}", f.op.name(), f.ticket);
                    reply.error(NbdErrno::Io);
                }
            }
        }
        Ok(())
    }
}

fn record_of(command: &DeviceCommand, now_ns: u64) -> TraceRecord {
    let (op, offset_bytes, len_bytes) = match command {
        DeviceCommand::Read { offset, len } => (Op::Read, *offset, *len),
        DeviceCommand::Write { offset, data, .. } => (Op::Write, *offset, data.len() as u64),
        DeviceCommand::Trim { offset, len } => (Op::Trim, *offset, *len),
        DeviceCommand::Flush => (Op::Flush, 0, 0),
    };
    TraceRecord {
        time_ns: now_ns,
        device: 0,
        op,
        offset_bytes,
        len_bytes,
    }
}

/// The report of everything served: the run report, the connections, the image and its
/// recovery.
fn report(
    args: &ServeArgs,
    device: &BlockDevice,
    recovery: Option<&OpenReport>,
    open_wall: Duration,
    connections: &[ConnectionStats],
) -> Result<(), SimError> {
    let sim = device.simulation();
    let serve = serde_json::json!({
        "kind": "served",
        "clock": match args.clock { Clock::Fast => "fast", Clock::Real => "real" },
        "image": device.image().path().display().to_string(),
        "connections": connections.len(),
        "data": device.counters(),
        "recovery": recovery.map(|r| serde_json::json!({
            "restore": r.restore,
            "scan": r.scan,
            "clean_shutdown": r.clean_shutdown,
            "wall_s": open_wall.as_secs_f64(),
        })),
    });
    let report = build_report(sim, serve);
    if std::io::stderr().is_terminal() || args.json.is_none() {
        eprintln!("{}", render_table(&report));
    }
    if let Some(path) = &args.json {
        let out = crate::output::Output::create(path).map_err(|e| SimError::Input {
            location: "--json".into(),
            message: e.to_string(),
        })?;
        let text = serde_json::to_string_pretty(&report.to_json()).expect("report serializes");
        out.write_whole(text.as_bytes())
            .map_err(|e| SimError::Input {
                location: "--json".into(),
                message: e.to_string(),
            })?;
    }
    Ok(())
}

/// What a recovery wrote, for its start line ("" when nothing: most FTLs only read).
fn recovery_writes(scan: &flashlab_sim::ftl::mapping::RecoveryScan) -> String {
    if scan.page_programs == 0 && scan.block_erases == 0 {
        return String::new();
    }
    format!(
        " and {} pages programmed, {} blocks erased",
        scan.page_programs, scan.block_erases
    )
}
