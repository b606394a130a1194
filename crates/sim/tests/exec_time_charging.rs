//! How the demand-paged FTLs charge FTL time (fmmu.txt 4.1, Fig. 6 and 5.2; exec_time.rs),
//! pinned against hand-computed closed forms on one core of a timed run: a host read sends one
//! Lookup and a write one Update per CMT block the request touches (StartLPN, NumLPNs), each
//! costed by where it is served; command handling is per sub-request.

use flashlab_sim::config::ExperimentConfig;
use flashlab_sim::engine::Simulation;
use flashlab_sim::ftl::CpuActivity;
use flashlab_sim::host::{Op, Request};

const KIB: u64 = 1024;

fn sim(ftl: &str) -> Simulation {
    let name = format!("ftl.name=\"{ftl}\"");
    let cfg = ExperimentConfig::with_sets(
        "fmmu-16ch",
        &[
            name.as_str(),
            "cpu.cores=1",
            "geometry.blocks_per_plane=32",
            "geometry.pages_per_block=32",
            "run.precondition=0.0",
            "run.functional_only=false",
        ],
    )
    .unwrap();
    Simulation::new(&cfg).unwrap()
}

fn io(sim: &mut Simulation, op: Op, offset: u64, len: u64) {
    sim.submit(Request {
        arrival_ns: sim.now(),
        op,
        offset_bytes: offset,
        len_bytes: len,
        deadline_ns: 0,
        task: None,
    })
    .unwrap();
    sim.run_until_idle().unwrap();
}

/// FTL time of `activity` (cores, or FMMU's map unit) charged by one request.
fn charged(sim: &mut Simulation, activity: CpuActivity, op: Op, offset: u64, len: u64) -> u64 {
    let before = sim.cpu_activity_busy_ns(activity) + sim.map_unit_busy_ns();
    io(sim, op, offset, len);
    sim.cpu_activity_busy_ns(activity) + sim.map_unit_busy_ns() - before
}

#[test]
fn a_64k_read_costs_one_lookup_with_16_lpns() {
    // DFTL, 1 core: the block is loaded by a 4 KiB write first (a miss), then read whole.
    let mut s = sim("dftl");
    io(&mut s, Op::Write, 0, 4 * KIB);
    let lookup = charged(&mut s, CpuActivity::Lookup, Op::Read, 0, 64 * KIB);
    assert_eq!(lookup, 1500, "one CMT hit (Fig. 10(a), 1 core), not 16");
    // Command handling: one per 4 KiB sub-request issued (T_FTL_cmd 0.2 us).
    let other = charged(&mut s, CpuActivity::Other, Op::Read, 0, 64 * KIB);
    assert_eq!(other, 16 * 200);
    // A read spanning two CMT blocks (units 8..24) is two Lookups.
    io(&mut s, Op::Write, 16 * 4 * KIB, 4 * KIB);
    let two = charged(&mut s, CpuActivity::Lookup, Op::Read, 8 * 4 * KIB, 64 * KIB);
    assert_eq!(two, 2 * 1500);
}

#[test]
fn a_write_costs_one_update_and_no_lookup() {
    let mut s = sim("dftl");
    io(&mut s, Op::Write, 0, 4 * KIB);
    let lookup = charged(&mut s, CpuActivity::Lookup, Op::Write, 0, 64 * KIB);
    assert_eq!(lookup, 0, "a write sends no Lookup");
    let update = charged(&mut s, CpuActivity::Update, Op::Write, 0, 64 * KIB);
    assert_eq!(update, 1500, "one Update of 16 LPNs, served by the CMT");
    // A miss costs Fig. 10(b)'s DFTL miss, 3x its hit: a block never loaded (unit 4,096).
    let miss = charged(
        &mut s,
        CpuActivity::Update,
        Op::Write,
        4096 * 4 * KIB,
        4 * KIB,
    );
    assert_eq!(miss, 4500);
}

#[test]
fn cdftl_charges_the_cmt_hit_and_the_ctp_hit_apart() {
    let mut s = sim("cdftl");
    // First touch of translation page 0: a miss (Fig. 10(b): about a hit, 4 us).
    let miss = charged(&mut s, CpuActivity::Lookup, Op::Read, 0, 4 * KIB);
    assert_eq!(miss, 4000);
    // The same CMT block again: a CMT hit, DFTL's 1.5 us (the same 4-way CMT lookup).
    let hit = charged(&mut s, CpuActivity::Lookup, Op::Read, 4 * KIB, 4 * KIB);
    assert_eq!(hit, 1500);
    // Another CMT block of the same translation page: CMT miss, CTP hit, Fig. 10(a)'s 4 us.
    let ctp = charged(&mut s, CpuActivity::Lookup, Op::Read, 16 * 4 * KIB, 4 * KIB);
    assert_eq!(ctp, 4000);
}

#[test]
fn fmmu_charges_its_map_unit_once_per_request_and_block() {
    let mut s = sim("fmmu");
    io(&mut s, Op::Write, 0, 4 * KIB);
    let before = s.map_unit_busy_ns();
    io(&mut s, Op::Read, 0, 64 * KIB);
    assert_eq!(
        s.map_unit_busy_ns() - before,
        160,
        "one Lookup of 16 LPNs: 0.16 us"
    );
    assert_eq!(
        s.cpu_activity_busy_ns(CpuActivity::Lookup),
        0,
        "FMMU's map work is not on a core"
    );
}

#[test]
fn gupta_dftl_keeps_entry_level_lookups() {
    // dftl-entry: each entry is its own block, so a 64 KiB read of cached entries is 16.
    let mut s = sim("dftl-entry");
    io(&mut s, Op::Write, 0, 64 * KIB);
    let lookup = charged(&mut s, CpuActivity::Lookup, Op::Read, 0, 64 * KIB);
    assert_eq!(lookup, 16 * 1500);
}
