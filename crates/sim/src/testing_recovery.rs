//! Power-loss recovery harness shared by every FTL that supports recovery
//! ([`crate::ftl::Ftl::supports_recovery`]; `tests/recovery_every_ftl.rs` runs it on each).
//!
//! A run is a verify run (payloads on). The device is preconditioned (so GC is active from the
//! start) and flushed; then, for each [`Cut`], a generation of random steps
//! ([`super::random_steps`]: writes, reads, trims, flushes) is submitted in batches of the
//! queue depth, and the power is cut: the flash is cloned, every valid bit cleared
//! ([`Nand::clear_validity`]) and a new simulation recovered from it
//! ([`Simulation::recover`], whose rebuilt state must pass the invariant checks). The whole
//! logical space is read back, and every sector must read a version allowed by the model
//! below; then the next generation continues on the recovered simulation, verify still on
//! (its shadow adopted what the read-back returned), so a recovered FTL must also keep
//! serving reads and writes correctly, and the next cut checks that its sequence numbers
//! continued past the old ones. After the last cut the space is read back once more.
//!
//! **The model** (per sector): every version written to it, in order; the version it held
//! when the last completed flush arrived, its *floor* (a flush counts for the writes of the
//! batches before its own, which completed before it arrived; a flush that was still in
//! flight at the cut counts for nothing); and whether it was ever trimmed. After a cut the
//! sector must read its floor or a version written after it (writes after the last flush may
//! read old or new data, never anything else). A trimmed sector may also read 0 or any
//! version it ever held (any version of the preconditioning, which the model does not see per
//! sector): trims are not persistent (`ftl/mapping/recovery.rs`). After
//! recovery, what the sector read is its new floor.
//!
//! **Cut points.** [`Cut::Idle`]: after a batch ran to idle (background GC may have run in the
//! idle time). [`Cut::InFlight`]`(k)`: `k` requests of the last batch completed and the rest,
//! with their flash commands and any garbage collection, still in flight: the flash is what
//! the FTL issued (functional state), as the simulator models a cut mid-GC.

use crate::config::ExperimentConfig;
use crate::ftl::mapping::RecoveryScan;
use crate::host::{Op, Request};
use crate::nand::Nand;
use crate::Simulation;

use super::{random_steps, Step};

/// 256 KiB reads in flight at most during a read-back of the whole space.
const READ_BACK_QUEUE_DEPTH: u64 = 4;

/// Where a generation's power cut falls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// After the generation's last batch ran to idle.
    Idle,
    /// When this many requests of the generation's last batch completed (the rest in flight).
    InFlight(usize),
}

/// What a recovery run did.
#[derive(Debug, Clone)]
pub struct RecoveryOutcome {
    /// Each recovery's scan.
    pub scans: Vec<RecoveryScan>,
    /// Sectors read back and judged after the cuts.
    pub sectors_judged: u64,
    /// Of which read an older allowed version than the last written (lost with a buffer, or
    /// a trim undone).
    pub older_versions: u64,
    /// GC victims collected over the run (all generations).
    pub gc_runs: u64,
    /// Flash commands in flight at the in-flight cuts, summed.
    pub in_flight_at_cuts: usize,
    /// Host requests outstanding at the in-flight cuts, summed.
    pub requests_at_cuts: usize,
    /// The FTL's report right after each recovery (before any read), to see what state the
    /// scan rebuilt.
    pub reports_after_recovery: Vec<serde_json::Value>,
}

struct Model {
    history: Vec<Vec<u64>>,
    base: Vec<u64>,
    floor: Vec<usize>,
    trimmed: Vec<bool>,
    /// The newest version written before the harness started (preconditioning): a trimmed
    /// sector may bring back any version of then, which the model did not see.
    before_max: u64,
}

impl Model {
    fn from_sim(sim: &Simulation, sectors: u64) -> Self {
        let shadow = sim.shadow().expect("verify run");
        let base: Vec<u64> = (0..sectors)
            .map(|s| shadow.version(s).unwrap_or(0))
            .collect();
        Model {
            history: vec![Vec::new(); sectors as usize],
            base,
            floor: vec![0; sectors as usize],
            trimmed: vec![false; sectors as usize],
            before_max: sim.last_write_version(),
        }
    }

    fn snapshot(&self) -> Vec<usize> {
        self.history.iter().map(Vec::len).collect()
    }

    fn apply_flush(&mut self, snapshot: &[usize]) {
        for (s, &k) in snapshot.iter().enumerate() {
            if k > self.floor[s] {
                self.base[s] = self.history[s][k - 1];
                self.floor[s] = k;
            }
        }
    }

    fn allowed(&self, s: usize, v: u64) -> bool {
        v == self.base[s]
            || self.history[s][self.floor[s]..].contains(&v)
            || (self.trimmed[s] && (v <= self.before_max || self.history[s].contains(&v)))
    }

    /// After recovery: what the sector read is its floor.
    fn recovered(&mut self, s: usize, v: u64) {
        self.base[s] = v;
        self.floor[s] = self.history[s].len();
    }
}

struct Run {
    config: ExperimentConfig,
    sim: Simulation,
    model: Model,
    logical: u64,
    sector_bytes: u64,
    ftl: String,
    outcome: RecoveryOutcome,
}

/// Runs `cuts.len()` generations of `steps` random steps (seeded by `seed`) at `queue_depth`
/// on `config` (verify forced on), each ended by a power cut and a recovery, checking what
/// the module docs list. The error names the generation and what failed.
pub fn run_cuts(
    config: &ExperimentConfig,
    seed: u64,
    steps: usize,
    queue_depth: usize,
    cuts: &[Cut],
) -> Result<RecoveryOutcome, String> {
    let mut config = config.clone();
    config.run.verify = true;
    let ftl = config.ftl_name().to_string();
    let mut sim = Simulation::new(&config).map_err(|e| format!("FTL `{ftl}`: {e}"))?;
    if config.run.precondition > 0.0 {
        sim.precondition()
            .map_err(|e| format!("FTL `{ftl}`: preconditioning: {e}"))?;
    }
    let sector_bytes = u64::from(config.host.sector_bytes);
    let logical = sim.logical_bytes() / sector_bytes;
    sim.submit(Request::untimed(Op::Flush, 0, 0))
        .and_then(|()| sim.run_until_idle())
        .map_err(|e| format!("FTL `{ftl}`: flush after preconditioning: {e}"))?;
    let model = Model::from_sim(&sim, logical);
    let mut run = Run {
        config,
        sim,
        model,
        logical,
        sector_bytes,
        ftl,
        outcome: RecoveryOutcome {
            scans: Vec::new(),
            sectors_judged: 0,
            older_versions: 0,
            gc_runs: 0,
            in_flight_at_cuts: 0,
            requests_at_cuts: 0,
            reports_after_recovery: Vec::new(),
        },
    };
    for (generation, &cut) in cuts.iter().enumerate() {
        let list = random_steps(seed ^ (generation as u64) << 32, steps, logical);
        run.generation(generation, &list, queue_depth.max(1), cut)
            .map_err(|e| format!("FTL `{}`: generation {generation} ({cut:?}): {e}", run.ftl))?;
    }
    run.read_back("final read-back")
        .map_err(|e| format!("FTL `{}`: {e}", run.ftl))?;
    run.outcome.gc_runs += run.sim.ftl_counters().gc_runs;
    Ok(run.outcome)
}

impl Run {
    fn request(&self, step: Step) -> Request {
        let (op, offset, sectors) = match step {
            Step::Flush => (Op::Flush, 0, 0),
            Step::Write {
                offset_sectors,
                sectors,
            } => (Op::Write, offset_sectors, sectors),
            Step::Read {
                offset_sectors,
                sectors,
            } => (Op::Read, offset_sectors, sectors),
            Step::Trim {
                offset_sectors,
                sectors,
            } => (Op::Trim, offset_sectors, sectors),
        };
        let offset = offset % self.logical;
        let sectors = if op == Op::Flush {
            0
        } else {
            sectors.clamp(1, self.logical - offset)
        };
        Request {
            arrival_ns: 0,
            op,
            offset_bytes: offset * self.sector_bytes,
            len_bytes: sectors * self.sector_bytes,
            deadline_ns: 0,
            task: None,
        }
    }

    /// Submits a step and records it in the model.
    fn submit(&mut self, step: Step) -> Result<Op, String> {
        let r = self.request(step);
        self.sim.submit(r).map_err(|e| format!("{step:?}: {e}"))?;
        let first = r.offset_bytes / self.sector_bytes;
        let range = first as usize..(first + r.len_bytes / self.sector_bytes) as usize;
        match r.op {
            Op::Write => {
                let v = self.sim.last_write_version();
                for s in range {
                    self.model.history[s].push(v);
                }
            }
            Op::Trim => self.model.trimmed[range].fill(true),
            Op::Read | Op::Flush => {}
        }
        Ok(r.op)
    }

    fn generation(
        &mut self,
        generation: usize,
        steps: &[Step],
        qd: usize,
        cut: Cut,
    ) -> Result<(), String> {
        let batches: Vec<&[Step]> = steps.chunks(qd).collect();
        for (i, batch) in batches.iter().enumerate() {
            let last = i + 1 == batches.len();
            // Every write of the batches before this one completed: a flush in this batch
            // covers them.
            let snapshot = self.model.snapshot();
            let completed_before = self.sim.host_stats().completed();
            let mut flushed = false;
            for &step in batch.iter() {
                flushed |= self.submit(step)? == Op::Flush;
            }
            match cut {
                Cut::InFlight(k) if last => {
                    self.sim
                        .run_until_completed(completed_before + k as u64)
                        .map_err(|e| format!("batch {i}: {e}"))?;
                    self.outcome.in_flight_at_cuts += self.sim.flash().in_flight();
                    self.outcome.requests_at_cuts += self.sim.outstanding();
                }
                _ => {
                    self.sim
                        .run_until_idle()
                        .map_err(|e| format!("batch {i}: {e}"))?;
                    self.sim
                        .check_invariants()
                        .map_err(|e| format!("batch {i}: invariant broken: {e}"))?;
                    if flushed {
                        self.model.apply_flush(&snapshot);
                    }
                }
            }
        }
        self.cut_and_recover(generation)
    }

    fn cut_and_recover(&mut self, generation: usize) -> Result<(), String> {
        self.outcome.gc_runs += self.sim.ftl_counters().gc_runs;
        let mut nand: Nand = self.sim.nand().clone();
        nand.clear_validity();
        let image_max = nand.max_payload_version();
        let (sim, scan) = Simulation::recover(&self.config, nand)
            .map_err(|e| format!("recovery after cut {generation}: {e}"))?;
        // Data versions name writes: a recovered device must number its writes past every
        // version on flash, or a new write could not be told from an old one.
        let newest = image_max;
        if sim.last_write_version() < newest {
            return Err(format!(
                "the recovered simulation numbers its next write {}, but version {newest} \
                 exists already",
                sim.last_write_version() + 1
            ));
        }
        self.outcome.reports_after_recovery.push(sim.ftl().report());
        self.sim = sim;
        self.outcome.scans.push(scan);
        self.read_back("read-back after the cut")?;
        let shadow = self.sim.shadow().expect("verify run");
        let mut bad = Vec::new();
        for s in 0..self.logical {
            let v = shadow
                .version(s)
                .ok_or_else(|| format!("sector {s} was not read back after the cut"))?;
            let i = s as usize;
            if !self.model.allowed(i, v) {
                bad.push((s, v));
            } else if self.model.history[i].last().is_some_and(|&l| l != v) {
                self.outcome.older_versions += 1;
            }
            self.outcome.sectors_judged += 1;
        }
        if let Some(&(s, v)) = bad.first() {
            let i = s as usize;
            return Err(format!(
                "after the cut {} sectors read data the model does not allow; first: sector \
                 {s} read version {v}, but its floor (last flushed) is {} and later writes \
                 were {:?} (trimmed: {})",
                bad.len(),
                self.model.base[i],
                &self.model.history[i][self.model.floor[i]..],
                self.model.trimmed[i]
            ));
        }
        for s in 0..self.logical as usize {
            let v = shadow.version(s as u64).unwrap_or(0);
            self.model.recovered(s, v);
        }
        Ok(())
    }

    /// Reads the whole logical space (verify checks what it knows and adopts the rest).
    /// Reads the whole logical space back (every sector judged as it is delivered), in
    /// 256 KiB reads at most [`READ_BACK_QUEUE_DEPTH`] at a time, as a host would. (All at
    /// once, cdftl and fmmu took minutes: with a map-cache set blocked they retry every
    /// waiting sub-request after each flash completion, quadratic in the queue.)
    fn read_back(&mut self, what: &str) -> Result<(), String> {
        let chunk = (256 * 1024 / self.sector_bytes).max(1);
        let mut first = 0;
        let mut submitted = 0;
        while first < self.logical {
            let n = chunk.min(self.logical - first);
            self.sim
                .submit(Request::untimed(
                    Op::Read,
                    first * self.sector_bytes,
                    n * self.sector_bytes,
                ))
                .map_err(|e| format!("{what}: {e}"))?;
            first += n;
            submitted += 1;
            if submitted % READ_BACK_QUEUE_DEPTH == 0 {
                self.sim
                    .run_until_idle()
                    .map_err(|e| format!("{what}: {e}"))?;
            }
        }
        self.sim
            .run_until_idle()
            .map_err(|e| format!("{what}: {e}"))?;
        self.sim
            .check_invariants()
            .map_err(|e| format!("{what}: invariant broken: {e}"))
    }
}
