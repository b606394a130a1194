//! Preconditioning: bring the device to the state a measurement should start from, quickly
//! (functional-only, no timing) and outside the measurement.
//!
//! A sequential fill of the first `fraction` of the logical space in 1 MiB writes, then random
//! overwrites of single mapping units over that range, in windows of a quarter of the filled
//! units. After at least one full pass, it stops as soon as the write amplification of a window
//! is within 1% of the previous window's (steady state), or when `max_passes` passes are done.
//! Then the device sits idle: the FTL's background work (garbage collection up to its
//! background watermark) runs to its end, still untimed and unmeasured, so the measurement
//! starts from the state a real device reaches after a pause, not with GC debt that the first
//! idle moment of the measured run would pay (a read-only replay then does no GC at all).
//!
//! Each write goes through the bulk path (`bulk.rs`): the engine's own admission, chopping,
//! FTL CPU queue and completion routing, so every FTL (mt-ftl's RTOS model, multi-core FTL
//! CPUs and map units included, whose time is zero in functional-only mode) gets the same
//! calls in the same order as through `submit` and `run_until_idle`, and verify runs check
//! it (the shadow map sees every write); only the host statistics, reset at the end, are not
//! kept. Where the bulk path cannot be shown equivalent (something in flight, effects parked
//! behind an in-order commit, a warm-up prefix running) a write takes the full host path;
//! [`Simulation::precondition_on_path`] forces the full path, for tests and measurements.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::Serialize;

use super::{Call, Simulation};
use crate::host::{Op, Request};
use crate::SimError;

/// Stream of the seed used for preconditioning overwrites.
const PRECONDITION_STREAM: u64 = 0x9e3c_0d17;
/// Relative change of window write amplification taken as steady state.
const STEADY_TOLERANCE: f64 = 0.01;

/// Progress of preconditioning, passed to the progress callback.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PreconditionProgress {
    /// Sequential fill: bytes written of the total.
    Fill { done_bytes: u64, total_bytes: u64 },
    /// Random overwrites: passes done (in multiples of the filled space), the pass budget, and
    /// the write amplification of the last window.
    Random {
        passes: f64,
        max_passes: f64,
        write_amplification: f64,
    },
}

/// How preconditioning's writes reach the FTL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreconditionPath {
    /// The bulk path (`engine/bulk.rs`) wherever it is equivalent to the full path.
    Bulk,
    /// Every write through the full host path (`submit`, `run_until_idle`).
    Full,
}

/// How many of preconditioning's writes took which path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PathCounts {
    pub bulk: u64,
    pub full: u64,
}

/// The chosen path and what took it.
struct Writes {
    path: PreconditionPath,
    counts: PathCounts,
}

/// What preconditioning did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PreconditionSummary {
    /// Fraction of the logical space filled.
    pub fraction: f64,
    /// Bytes written by the sequential fill.
    pub fill_bytes: u64,
    /// Random single-unit overwrites.
    pub random_writes: u64,
    /// Random overwrites as multiples of the filled units.
    pub random_passes: f64,
    /// Whether the window write amplification settled (false: stopped at the pass budget).
    pub steady: bool,
    /// Write amplification of the last random window (1.0 when there was none).
    pub write_amplification: f64,
    /// Victim blocks the FTL's background GC collected while the device sat idle at the end.
    pub idle_gc_victims: u64,
    /// Mapping units that background GC moved then.
    pub idle_gc_units_moved: u64,
}

impl Simulation {
    /// Preconditions to `run.precondition` of the logical space (see the module docs).
    pub fn precondition(&mut self) -> Result<PreconditionSummary, SimError> {
        self.precondition_with_progress(&mut |_| {})
    }

    /// [`Simulation::precondition`], reporting progress after every megabyte of the fill and
    /// every window of random overwrites.
    pub fn precondition_with_progress(
        &mut self,
        progress: &mut dyn FnMut(PreconditionProgress),
    ) -> Result<PreconditionSummary, SimError> {
        let (summary, _) = self.precondition_on_path(PreconditionPath::Bulk, progress)?;
        Ok(summary)
    }

    /// [`Simulation::precondition_with_progress`] on a chosen path (both leave the same
    /// state; [`PreconditionPath::Full`] is there to check that, and to measure the gain);
    /// also gives how many writes took which path.
    pub fn precondition_on_path(
        &mut self,
        path: PreconditionPath,
        progress: &mut dyn FnMut(PreconditionProgress),
    ) -> Result<(PreconditionSummary, PathCounts), SimError> {
        let fraction = self.cfg.run.precondition;
        let max_passes = self.cfg.run.precondition_max_passes;
        let mut writes = Writes {
            path,
            counts: PathCounts::default(),
        };
        let summary = self.precondition_to(&mut writes, fraction, max_passes, progress)?;
        self.precondition = Some(summary.clone());
        Ok((summary, writes.counts))
    }

    fn precondition_to(
        &mut self,
        writes: &mut Writes,
        fraction: f64,
        max_passes: f64,
        progress: &mut dyn FnMut(PreconditionProgress),
    ) -> Result<PreconditionSummary, SimError> {
        let mut summary = PreconditionSummary {
            fraction,
            write_amplification: 1.0,
            ..PreconditionSummary::default()
        };
        let unit = u64::from(self.ftl.trim_unit_bytes());
        let fill = ((self.logical_bytes() as f64 * fraction) as u64) / unit * unit;
        if fill == 0 {
            return Ok(summary);
        }
        let was_functional = self.functional;
        self.set_functional(true);
        self.sequential_fill(writes, fill, progress)?;
        summary.fill_bytes = fill;
        let units = fill / unit;
        let window = (units / 4).max(1024);
        let budget = (units as f64 * max_passes) as u64;
        let mut rng = Pcg64Mcg::seed_from_u64(self.cfg.run.seed ^ PRECONDITION_STREAM);
        let mut previous: Option<f64> = None;
        while summary.random_writes < budget {
            let n = window.min(budget - summary.random_writes);
            let wa = self.random_window(writes, &mut rng, units, unit, n)?;
            summary.random_writes += n;
            summary.write_amplification = wa;
            let passes = summary.random_writes as f64 / units as f64;
            progress(PreconditionProgress::Random {
                passes,
                max_passes,
                write_amplification: wa,
            });
            if passes >= 1.0 && previous.is_some_and(|p| (wa - p).abs() <= STEADY_TOLERANCE * wa) {
                summary.steady = true;
                break;
            }
            previous = Some(wa);
        }
        summary.random_passes = summary.random_writes as f64 / units as f64;
        let (victims, moved) = self.sit_idle()?;
        summary.idle_gc_victims = victims;
        summary.idle_gc_units_moved = moved;
        self.set_functional(was_functional);
        self.reset_measurements();
        Ok(summary)
    }

    fn sequential_fill(
        &mut self,
        writes: &mut Writes,
        fill: u64,
        progress: &mut dyn FnMut(PreconditionProgress),
    ) -> Result<(), SimError> {
        const CHUNK: u64 = 1 << 20;
        let mut at = 0;
        while at < fill {
            let len = CHUNK.min(fill - at);
            self.write_until_idle(writes, at, len)?;
            at += len;
            progress(PreconditionProgress::Fill {
                done_bytes: at,
                total_bytes: fill,
            });
        }
        Ok(())
    }

    /// Writes `len` bytes at `offset` and runs until the device is idle: through the bulk path
    /// where it applies and was chosen, else through the full host path.
    fn write_until_idle(
        &mut self,
        writes: &mut Writes,
        offset: u64,
        len: u64,
    ) -> Result<(), SimError> {
        if writes.path == PreconditionPath::Bulk && self.bulk_path_applies() {
            writes.counts.bulk += 1;
            let s = self.sector_bytes;
            return self.bulk_write(offset / s, len / s);
        }
        writes.counts.full += 1;
        self.submit(write(offset, len))?;
        self.run_until_idle()
    }

    /// Lets the FTL do its idle-time work (background GC to its watermark) until it has nothing
    /// left; returns the victims and units it collected.
    fn sit_idle(&mut self) -> Result<(u64, u64), SimError> {
        let before = self.ftl_counters.clone();
        self.push_call(Call::Idle)?;
        self.run_until_idle()?;
        Ok((
            self.ftl_counters.gc_background_runs - before.gc_background_runs,
            self.ftl_counters.gc_background_units_moved - before.gc_background_units_moved,
        ))
    }

    /// `n` random single-unit overwrites; returns the window's write amplification.
    fn random_window(
        &mut self,
        writes: &mut Writes,
        rng: &mut Pcg64Mcg,
        units: u64,
        unit: u64,
        n: u64,
    ) -> Result<f64, SimError> {
        let page_bytes = u64::from(self.nand.layout().page_bytes);
        let before = self.flash.counters().programmed_pages();
        for _ in 0..n {
            let u = rng.random_range(0..units);
            self.write_until_idle(writes, u * unit, unit)?;
        }
        let flash_bytes = (self.flash.counters().programmed_pages() - before) * page_bytes;
        Ok(flash_bytes as f64 / (n * unit) as f64)
    }
}

fn write(offset: u64, len: u64) -> Request {
    Request {
        arrival_ns: 0,
        op: Op::Write,
        offset_bytes: offset,
        len_bytes: len,
        deadline_ns: 0,
        task: None,
    }
}
