//! Differential test harness shared by every FTL.
//!
//! **Every FTL must pass it.** A new FTL is added to the differential tests
//! (`crates/sim/tests/differential.rs`) by running [`run_steps`] on configurations whose
//! `ftl.name` selects it; nothing in this module knows about a particular FTL.
//!
//! What "passing" means, for any sequence of [`Step`]s and any queue depth, whether the steps
//! are submitted in batches of the queue depth or kept at that depth in a closed loop
//! ([`Options::continuous`], the only way a flush meets writes still buffered):
//! - the run is a verify run (`run.verify` is forced on): every sector a read returns is
//!   compared by the engine with a shadow copy of the last data version written to it (or
//!   "never written" after a trim of a whole trim unit); a stale or lost sector makes the
//!   engine fail with [`SimError::Verify`];
//! - every sector a read covers is handed to [`crate::ftl::FtlCtx::deliver`] exactly once
//!   (otherwise the check above would silently not happen): the engine fails a read
//!   sub-request that delivers a sector twice, outside its range, or completes with a sector
//!   never delivered, and the harness also compares the number of sectors checked with the
//!   number of sectors read;
//! - a flush completes only when every write acknowledged before it arrived is on flash: in
//!   simulated time, the programs carrying that data (or newer data of the same sectors)
//!   completed before the flush did (see [`crate::verify`]);
//! - every request completes ([`Simulation::run_until_idle`] leaves nothing outstanding);
//! - after every batch of requests, with nothing in flight, [`Simulation::check_invariants`]
//!   holds (NAND bookkeeping, and the FTL's own structures: for pagemap the L2P and reverse
//!   maps agree and the block counts add up);
//! - at the end, the whole logical space is read back (and so checked) once.
//!
//! Steps are given in host sectors (`host.sector_bytes`) and mapped into the device's logical
//! space, so one step list fits every geometry: the offset wraps modulo the logical size and
//! the length is clamped to what is left (at least one sector). [`random_steps`] generates
//! deterministic mixes; property-based tests build their own strategies over [`Step`].
//!
//! ```
//! use flashlab_sim::{config::ExperimentConfig, testing};
//! let config = ExperimentConfig::with_sets("default", &[
//!     "geometry.channels=1", "geometry.chips_per_channel=1", "geometry.blocks_per_plane=16",
//!     "geometry.pages_per_block=16", "ftl.over_provisioning=0.3", "run.precondition=0.0",
//! ]).unwrap();
//! let logical = testing::logical_sectors(&config).unwrap();
//! let steps = testing::random_steps(7, 2_000, logical);
//! let outcome = testing::run_steps(&config, &steps, 4).unwrap();
//! assert!(outcome.checked_sectors > 0);
//! ```

#[path = "testing_recovery.rs"]
pub mod recovery;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::config::ExperimentConfig;
use crate::flash::FlashCounters;
use crate::ftl::FtlCounters;
use crate::host::{Op, Request};
use crate::{SimError, Simulation};

/// One host operation of a test, in host sectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    Write { offset_sectors: u64, sectors: u64 },
    Read { offset_sectors: u64, sectors: u64 },
    Trim { offset_sectors: u64, sectors: u64 },
    Flush,
}

impl Step {
    fn range(&self) -> Option<(Op, u64, u64)> {
        match *self {
            Step::Write {
                offset_sectors,
                sectors,
            } => Some((Op::Write, offset_sectors, sectors)),
            Step::Read {
                offset_sectors,
                sectors,
            } => Some((Op::Read, offset_sectors, sectors)),
            Step::Trim {
                offset_sectors,
                sectors,
            } => Some((Op::Trim, offset_sectors, sectors)),
            Step::Flush => None,
        }
    }
}

/// How [`run_steps_with`] drives the simulation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Requests submitted together before running to idle (1: one at a time).
    pub queue_depth: usize,
    /// Map step addresses into the logical space (see the module docs). With `false` steps are
    /// submitted as given, and one outside the device is reported as an error.
    pub clamp: bool,
    /// Read the whole logical space back at the end.
    pub final_readback: bool,
    /// Writes carry this periodic task id and relative deadline in ns (the paths of
    /// real-time FTLs that act per task); `None`: no task, no deadline.
    pub write_task: Option<(u32, u64)>,
    /// Keep `queue_depth` requests outstanding, submitting the next step as soon as one
    /// completes (a closed loop), instead of submitting `queue_depth` steps at once and
    /// running to idle. Only this way does a flush arrive while writes acknowledged before it
    /// still wait in a write buffer, so that the flush rule is really tested; the invariants
    /// are checked after every [`CONTINUOUS_SEGMENT`] x `queue_depth` steps, with nothing in
    /// flight (or every `idle_every_steps`).
    pub continuous: bool,
    /// Steps between the idle points of a continuous run, where the invariants are checked
    /// (0: [`CONTINUOUS_SEGMENT`] x `queue_depth`). Each idle point drains the write buffers,
    /// so some races need long stretches without one (PaRT-FTL's early flush took 12,000
    /// steps of a hot mix: never within 512).
    pub idle_every_steps: usize,
}

/// Steps (in queue depths) between the idle points of a continuous run, by default.
pub const CONTINUOUS_SEGMENT: usize = 8;

impl Options {
    /// Clamped addresses and a final read-back, at `queue_depth`, in batches.
    pub fn new(queue_depth: usize) -> Self {
        Options {
            queue_depth,
            clamp: true,
            final_readback: true,
            write_task: None,
            continuous: false,
            idle_every_steps: 0,
        }
    }

    /// [`Options::new`] with `queue_depth` requests kept outstanding (see
    /// [`Options::continuous`]).
    pub fn continuous(queue_depth: usize) -> Self {
        Options {
            continuous: true,
            ..Options::new(queue_depth)
        }
    }
}

/// What a passing run did (for tests to assert that the interesting paths ran).
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Steps submitted (without the final read-back).
    pub steps: usize,
    /// Batches run to idle, each followed by an invariant check (read-back included).
    pub batches: usize,
    pub logical_sectors: u64,
    pub sector_bytes: u64,
    /// Sectors written, read (read-back included) and trimmed by the host.
    pub sectors_written: u64,
    pub sectors_read: u64,
    pub sectors_trimmed: u64,
    /// Sectors whose read data the engine checked against the shadow copy.
    pub checked_sectors: u64,
    /// GC counters of the steps (preconditioning excluded).
    pub gc: FtlCounters,
    /// Flash operations of the steps (preconditioning excluded).
    pub flash: FlashCounters,
    /// The FTL's own report figures at the end.
    pub ftl_report: serde_json::Value,
    /// Merges of the steps (block-mapped and log-block FTLs; preconditioning excluded).
    pub merges: Option<crate::ftl::merge::MergeReport>,
    /// The map cache's figures of the steps (demand-paged FTLs; preconditioning excluded).
    pub map_cache: Option<crate::ftl::mapcache::MapCacheReport>,
    /// Simulated time at the end.
    pub simulated_ns: u64,
}

/// A request of `sectors` 512-byte sectors from `first_sector`, arriving at time 0, without
/// deadline (for tests that submit requests by hand).
pub fn sector_request(op: Op, first_sector: u64, sectors: u64) -> Request {
    Request::untimed(op, first_sector * 512, sectors * 512)
}

/// Logical size, in host sectors, of the device a configuration describes.
pub fn logical_sectors(config: &ExperimentConfig) -> Result<u64, String> {
    let sim = Simulation::new(config).map_err(|e| format!("cannot build the simulation: {e}"))?;
    Ok(sim.logical_bytes() / u64::from(config.host.sector_bytes))
}

/// Runs `steps` with up to `queue_depth` requests outstanding, checking everything listed in
/// the module docs; the error names the step (or batch of steps) where a check failed.
pub fn run_steps(
    config: &ExperimentConfig,
    steps: &[Step],
    queue_depth: usize,
) -> Result<Outcome, String> {
    run_steps_with(config, steps, &Options::new(queue_depth))
}

/// [`run_steps`] with explicit [`Options`].
pub fn run_steps_with(
    config: &ExperimentConfig,
    steps: &[Step],
    options: &Options,
) -> Result<Outcome, String> {
    let mut config = config.clone();
    config.run.verify = true;
    let ftl = config.ftl_name().to_string();
    let mut sim = Simulation::new(&config)
        .map_err(|e| format!("FTL `{ftl}`: cannot build the simulation: {e}"))?;
    if config.run.precondition > 0.0 {
        sim.precondition()
            .map_err(|e| format!("FTL `{ftl}`: preconditioning failed: {e}"))?;
        sim.check_invariants()
            .map_err(|e| format!("FTL `{ftl}`: invariant broken after preconditioning: {e}"))?;
    }
    let mut driver = Driver {
        sector_bytes: u64::from(config.host.sector_bytes),
        logical_sectors: sim.logical_bytes() / u64::from(config.host.sector_bytes),
        checked_before: checked(&sim),
        completed_before: sim.host_stats().completed(),
        sim,
        ftl,
        options: options.clone(),
        batches: 0,
        submitted: 0,
        sectors_written: 0,
        sectors_read: 0,
        sectors_trimmed: 0,
    };
    let qd = options.queue_depth.max(1);
    let segment = match (options.continuous, options.idle_every_steps) {
        (false, _) => qd,
        (true, 0) => CONTINUOUS_SEGMENT * qd,
        (true, steps) => steps,
    };
    for (batch_no, chunk) in steps.chunks(segment).enumerate() {
        let first = batch_no * segment;
        driver.run_batch("step", first, chunk.iter().copied())?;
    }
    if options.final_readback {
        let chunk = (256 * 1024 / driver.sector_bytes).max(1);
        let logical = driver.logical_sectors;
        let reads: Vec<Step> = (0..logical.div_ceil(chunk))
            .map(|i| Step::Read {
                offset_sectors: i * chunk,
                sectors: chunk.min(logical - i * chunk),
            })
            .collect();
        for (batch_no, batch) in reads.chunks(qd).enumerate() {
            driver
                .run_batch("read-back request", batch_no * qd, batch.iter().copied())
                .map_err(|e| format!("final read-back after all {} steps: {e}", steps.len()))?;
        }
    }
    driver.finish(steps.len())
}

struct Driver {
    sim: Simulation,
    ftl: String,
    options: Options,
    sector_bytes: u64,
    logical_sectors: u64,
    checked_before: u64,
    completed_before: u64,
    batches: usize,
    submitted: u64,
    sectors_written: u64,
    sectors_read: u64,
    sectors_trimmed: u64,
}

fn checked(sim: &Simulation) -> u64 {
    sim.shadow().map_or(0, |s| s.checked_sectors())
}

impl Driver {
    /// Converts a step into a request (clamped into the logical space when asked).
    fn request(&self, step: Step) -> Request {
        let (op, offset, sectors) = match step.range() {
            None => (Op::Flush, 0, 0),
            Some((op, offset, sectors)) if self.options.clamp => {
                let offset = offset % self.logical_sectors;
                (op, offset, sectors.clamp(1, self.logical_sectors - offset))
            }
            Some(range) => range,
        };
        let (task, deadline_ns) = match self.options.write_task {
            Some((task, deadline)) if op == Op::Write => (Some(task), deadline),
            _ => (None, 0),
        };
        Request {
            arrival_ns: 0,
            op,
            offset_bytes: offset.saturating_mul(self.sector_bytes),
            len_bytes: sectors.saturating_mul(self.sector_bytes),
            deadline_ns,
            task,
        }
    }

    fn run_batch(
        &mut self,
        kind: &str,
        first: usize,
        steps: impl Iterator<Item = Step>,
    ) -> Result<(), String> {
        let ftl = self.ftl.clone();
        let mut last = first;
        let qd = self.options.queue_depth.max(1) as u64;
        for (i, step) in steps.enumerate() {
            last = first + i;
            if self.options.continuous {
                // At most `qd` outstanding once this one is in.
                let done = (self.submitted + 1).saturating_sub(qd);
                self.sim
                    .run_until_completed(self.completed_before + done)
                    .map_err(|e| format!("FTL `{ftl}`: before {kind} {last}: {}", describe(&e)))?;
            }
            let r = self.request(step);
            self.sim
                .submit(r)
                .map_err(|e| format!("FTL `{ftl}`: {kind} {last} ({step:?}): {}", describe(&e)))?;
            self.submitted += 1;
            let sectors = r.len_bytes / self.sector_bytes;
            match r.op {
                Op::Write => self.sectors_written += sectors,
                Op::Read => self.sectors_read += sectors,
                Op::Trim => self.sectors_trimmed += sectors,
                Op::Flush => {}
            }
        }
        let at = if last == first {
            format!("{kind} {first}")
        } else {
            format!("{kind}s {first}..={last}")
        };
        self.sim
            .run_until_idle()
            .map_err(|e| format!("FTL `{ftl}`: {at}: {}", describe(&e)))?;
        self.batches += 1;
        let completed = self.sim.host_stats().completed() - self.completed_before;
        if self.sim.outstanding() > 0 || completed != self.submitted {
            return Err(format!(
                "FTL `{ftl}`: {at}: the simulation went idle with {} requests outstanding \
                 ({completed} of {} completed): a sub-request was never completed",
                self.sim.outstanding(),
                self.submitted
            ));
        }
        self.sim
            .check_invariants()
            .map_err(|e| format!("FTL `{ftl}`: {at}: invariant broken: {e}"))?;
        let checked_now = checked(&self.sim) - self.checked_before;
        if checked_now != self.sectors_read {
            return Err(format!(
                "FTL `{ftl}`: {at}: {checked_now} sectors were checked for {} sectors read: \
                 an FTL must deliver every sector it reads exactly once",
                self.sectors_read
            ));
        }
        Ok(())
    }

    fn finish(self, steps: usize) -> Result<Outcome, String> {
        Ok(Outcome {
            steps,
            batches: self.batches,
            logical_sectors: self.logical_sectors,
            sector_bytes: self.sector_bytes,
            sectors_written: self.sectors_written,
            sectors_read: self.sectors_read,
            sectors_trimmed: self.sectors_trimmed,
            checked_sectors: checked(&self.sim) - self.checked_before,
            gc: self.sim.ftl_counters().clone(),
            flash: self.sim.flash().counters().clone(),
            ftl_report: self.sim.ftl().report(),
            merges: self
                .sim
                .ftl()
                .merge_profile()
                .map(|profile| self.sim.merge_stats().report(profile)),
            map_cache: self.sim.ftl().map_cache(),
            simulated_ns: self.sim.now(),
        })
    }
}

fn describe(e: &SimError) -> String {
    match e {
        SimError::Verify(m) => format!("STALE OR LOST DATA: {m}"),
        other => other.to_string(),
    }
}

/// A deterministic random mix of `n` steps over `logical_sectors` host sectors (a hint: the
/// harness wraps addresses into the device anyway):
/// - writes (45%): half small (1..=16 sectors at any sector offset: sub-mapping-unit,
///   unaligned, read-modify-write), a third multi-page (17..=160 sectors), the rest 8 or 16
///   sectors aligned to 8; 70% of writes go to a hot range of 1/32 of the space (at least 64
///   sectors), so the same data is overwritten again and again and GC has to move the rest;
/// - reads (35%, 1..=64 sectors, 60% in the hot range);
/// - trims (15%, 1..=64 sectors, half in the hot range);
/// - flushes (5%).
pub fn random_steps(seed: u64, n: usize, logical_sectors: u64) -> Vec<Step> {
    let logical = logical_sectors.max(1);
    let hot = (logical / 32).max(64).min(logical);
    let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0x7e57_da7a);
    let offset = |rng: &mut Pcg64Mcg, hot_p: f64| {
        if rng.random_bool(hot_p) {
            rng.random_range(0..hot)
        } else {
            rng.random_range(0..logical)
        }
    };
    (0..n)
        .map(|_| {
            let kind = rng.random_range(0..100);
            match kind {
                0..45 => {
                    let size = rng.random_range(0..6);
                    let offset_sectors = offset(&mut rng, 0.7);
                    let sectors = match size {
                        0..3 => rng.random_range(1..=16),
                        3..5 => rng.random_range(17..=160),
                        _ => 8 * rng.random_range(1..=2),
                    };
                    let offset_sectors = if size == 5 {
                        offset_sectors / 8 * 8
                    } else {
                        offset_sectors
                    };
                    Step::Write {
                        offset_sectors,
                        sectors,
                    }
                }
                45..80 => Step::Read {
                    offset_sectors: offset(&mut rng, 0.6),
                    sectors: rng.random_range(1..=64),
                },
                80..95 => Step::Trim {
                    offset_sectors: offset(&mut rng, 0.5),
                    sectors: rng.random_range(1..=64),
                },
                _ => Step::Flush,
            }
        })
        .collect()
}

/// `n` steps drawn from a synthetic workload given in the command line's compact syntax
/// (`KIND:KEY=VALUE,...`, e.g. `zipf:theta=1.1,read=0.3,trim=0.15,flush=37,bs=512-16k`) over
/// `logical_sectors` host sectors of `sector_bytes`: the same generator `flashlab run` uses,
/// so a hostile run found on the command line becomes a differential test. Only the
/// request stream is taken (pacing keys are ignored: the harness sets the queue depth).
pub fn workload_steps(
    spec: &str,
    seed: u64,
    n: usize,
    logical_sectors: u64,
    sector_bytes: u64,
) -> Result<Vec<Step>, String> {
    use crate::workload::{parse_spec, RequestSource, SyntheticSource};
    let w = parse_spec(spec).map_err(|e| format!("{spec}: {e}"))?;
    let mut source = SyntheticSource::new(&w, logical_sectors * sector_bytes, seed)
        .map_err(|e| format!("{spec}: {e}"))?;
    let mut steps = Vec::with_capacity(n);
    while steps.len() < n {
        let Some(r) = source.next_request(0).map_err(|e| format!("{spec}: {e}"))? else {
            break;
        };
        let (offset_sectors, sectors) = (r.offset_bytes / sector_bytes, r.len_bytes / sector_bytes);
        steps.push(match r.op {
            Op::Write => Step::Write {
                offset_sectors,
                sectors,
            },
            Op::Read => Step::Read {
                offset_sectors,
                sectors,
            },
            Op::Trim => Step::Trim {
                offset_sectors,
                sectors,
            },
            Op::Flush => Step::Flush,
        });
    }
    Ok(steps)
}
