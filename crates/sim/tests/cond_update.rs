//! GC of the demand-paged core with CondUpdate (fmmu.txt 4.1): a victim's valid unit is read,
//! copied, and its map entry updated only once the copy's program completed, and only if the
//! entry still names the old slot. Scenario on one die of 8-page blocks, one 4 KiB unit per
//! page, 20 ms programs: units 0..64 written in order (block 0 of the host holds units 0..8),
//! units 0..7 trimmed, so background GC takes that block (one valid unit, 7) when the host
//! goes idle; its copy of unit 7 is read at once and programmed for 20 ms.

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use flashlab_sim::config::ExperimentConfig;
use flashlab_sim::ftl::demand::DemandFtl;
use flashlab_sim::ftl::mapcache::MapCacheReport;
use flashlab_sim::ftl::{CallTarget, Ftl, FtlCtx};
use flashlab_sim::host::SubRequest;
use flashlab_sim::nand::Nand;
use flashlab_sim::trace::TraceSource;
use flashlab_sim::{SimError, Simulation};

const PROGRAM_NS: u64 = 20_000_000;
/// When the trim of units 0..7 arrives (the fill's programs are done long before).
const TRIM_NS: u64 = 2_000_000_000;
/// A host write of unit 7 arriving while its GC copy is being programmed.
const RACE_NS: u64 = TRIM_NS + PROGRAM_NS / 2;
/// A read of unit 7 once everything settled.
const READ_NS: u64 = 3_000_000_000;

/// One blkparse queue event: `rwbs` W, R or D (discard), `sectors` of 512 bytes.
fn event(time_ns: u64, rwbs: &str, first_sector: u64, sectors: u64) -> String {
    let (s, ns) = (time_ns / 1_000_000_000, time_ns % 1_000_000_000);
    format!("8,0 0 1 {s}.{ns:09} 1 Q {rwbs} {first_sector} + {sectors} [t]\n")
}

/// The scenario's trace: the fill, the trim, then (with `race`) the overwrite of unit 7, and
/// the read of unit 7.
fn trace(race: bool) -> tempfile::NamedTempFile {
    let mut text = String::new();
    for unit in 0..64 {
        text += &event(1_000 * unit, "W", unit * 8, 8);
    }
    text += &event(TRIM_NS, "D", 0, 7 * 8);
    if race {
        text += &event(RACE_NS, "W", 7 * 8, 8);
    }
    text += &event(READ_NS, "R", 7 * 8, 8);
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(text.as_bytes()).unwrap();
    file
}

fn config(trace: &tempfile::NamedTempFile) -> ExperimentConfig {
    let path = format!("trace.path={:?}", trace.path().to_str().unwrap());
    ExperimentConfig::with_sets(
        "default",
        &[
            "ftl.name=\"dftl\"",
            "geometry.channels=1",
            "geometry.chips_per_channel=1",
            "geometry.dies_per_chip=1",
            "geometry.planes_per_die=1",
            "geometry.blocks_per_plane=32",
            "geometry.pages_per_block=8",
            "geometry.page_bytes=4096",
            "ftl.over_provisioning=0.3",
            // The whole map fits: every lookup hits, no translation read in the way.
            "ftl.cmt_bytes=65536",
            // Background GC whenever the host is idle.
            "ftl.gc_background_free_blocks=64",
            "timing.program_latency_ns=20000000",
            "run.precondition=0.0",
            "run.verify=true",
            "trace.format=\"blkparse-q\"",
            "trace.address_map=\"none\"",
            path.as_str(),
        ],
    )
    .unwrap()
}

/// What the probe saw: (simulated time, block) of every erase.
type Erases = Rc<RefCell<Vec<(u64, u32)>>>;

/// Delegates to the FTL under test and notes, after each of its calls, which blocks it erased.
struct EraseProbe {
    inner: DemandFtl,
    erase_counts: Vec<u32>,
    erases: Erases,
}

impl EraseProbe {
    fn note(&mut self, ctx: &FtlCtx<'_>) {
        for (b, count) in self.erase_counts.iter_mut().enumerate() {
            let now = ctx.nand().block(b as u32).erase_count;
            if now != *count {
                *count = now;
                self.erases.borrow_mut().push((ctx.now(), b as u32));
            }
        }
    }
}

impl Ftl for EraseProbe {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn logical_bytes(&self) -> u64 {
        self.inner.logical_bytes()
    }
    fn chop_bytes(&self) -> u32 {
        self.inner.chop_bytes()
    }
    fn trim_unit_bytes(&self) -> u32 {
        self.inner.trim_unit_bytes()
    }
    fn units_per_page(&self) -> u32 {
        self.inner.units_per_page()
    }
    fn submit(&mut self, ctx: &mut FtlCtx<'_>, sub: &SubRequest) -> Result<(), SimError> {
        let r = self.inner.submit(ctx, sub);
        self.note(ctx);
        r
    }
    fn flash_done(&mut self, ctx: &mut FtlCtx<'_>, token: u64) -> Result<(), SimError> {
        let r = self.inner.flash_done(ctx, token);
        self.note(ctx);
        r
    }
    fn wakeup(&mut self, ctx: &mut FtlCtx<'_>, token: u64) -> Result<(), SimError> {
        let r = self.inner.wakeup(ctx, token);
        self.note(ctx);
        r
    }
    fn idle(&mut self, ctx: &mut FtlCtx<'_>) -> Result<(), SimError> {
        let r = self.inner.idle(ctx);
        self.note(ctx);
        r
    }
    fn check_invariants(&self, nand: &Nand) -> Result<(), String> {
        self.inner.check_invariants(nand)
    }
    fn reset_counters(&mut self, now_ns: u64) {
        self.inner.reset_counters(now_ns)
    }
    fn report(&self) -> serde_json::Value {
        self.inner.report()
    }
    fn state_bytes(&self) -> u64 {
        self.inner.state_bytes()
    }
    fn map_cache(&self) -> Option<MapCacheReport> {
        self.inner.map_cache()
    }
    fn core_for(&self, call: CallTarget<'_>, cores: u32) -> Option<u32> {
        self.inner.core_for(call, cores)
    }
}

struct Outcome {
    map_cache: MapCacheReport,
    erases: Vec<(u64, u32)>,
    gc_victims: u64,
}

/// Replays the scenario (every read checked against the last data written: a stale or lost
/// unit fails the run) and checks the invariants at the end.
fn replay(race: bool) -> Outcome {
    let file = trace(race);
    let cfg = config(&file);
    let inner = DemandFtl::dftl(&cfg).unwrap();
    let erases = Erases::default();
    let blocks = cfg.geometry.blocks_per_plane;
    let probe = EraseProbe {
        inner,
        erase_counts: vec![0; blocks as usize],
        erases: erases.clone(),
    };
    let mut sim = Simulation::with_ftl(&cfg, Box::new(probe)).unwrap();
    let source = TraceSource::new(&cfg.trace, sim.logical_bytes(), 512).unwrap();
    sim.run(Box::new(source), &mut |_| {})
        .unwrap_or_else(|e| panic!("race {race}: {e}"));
    sim.check_invariants().unwrap();
    let shadow = sim.shadow().expect("a verify run");
    assert_eq!(
        shadow.checked_sectors(),
        8,
        "the read of unit 7 was checked"
    );
    let erases = erases.borrow().clone();
    Outcome {
        map_cache: sim.ftl().map_cache().expect("dftl has a map cache"),
        erases,
        gc_victims: sim.ftl_counters().gc_background_runs,
    }
}

/// The host overwrites unit 7 while its GC copy is being programmed: the copy's CondUpdate
/// finds the entry moved and is dropped (one lost update, for the one unit), and the read of
/// unit 7 returns the host's data (checked by the verify run).
#[test]
fn a_host_write_during_the_copy_wins_and_the_cond_update_is_lost() {
    let o = replay(true);
    assert_eq!(o.gc_victims, 1, "one background victim");
    assert_eq!(o.map_cache.cond_updates_lost, 1, "{:?}", o.map_cache);
    // Without the race the copy's update applies.
    let o = replay(false);
    assert_eq!(o.gc_victims, 1, "one background victim");
    assert_eq!(o.map_cache.cond_updates_lost, 0, "{:?}", o.map_cache);
}

/// The victim is erased only once its copy is durable and its entry updated: not before the
/// copy's 20 ms program completed (the read takes about 60 us), and unit 7 reads back intact.
#[test]
fn the_victim_is_erased_after_its_copy_is_durable() {
    for race in [false, true] {
        let o = replay(race);
        let after_trim: Vec<_> = o.erases.iter().filter(|e| e.0 >= TRIM_NS).collect();
        assert_eq!(after_trim.len(), 1, "race {race}: erases {:?}", o.erases);
        let (at, block) = *after_trim[0];
        assert!(
            at >= TRIM_NS + PROGRAM_NS,
            "race {race}: victim {block} erased {} us after the trim, before its copy's \
             program completed ({} us)",
            (at - TRIM_NS) / 1000,
            PROGRAM_NS / 1000
        );
    }
}
