//! The part-admission study's claims, judged by [`crate::experiment::claims`]: per scheme, the
//! guarantee of its admission test, "no admitted set misses a deadline", on every seed (each
//! seed one run; the sets of every family are that run's evidence). The pessimism of each test
//! (T_a / T_s) is a measurement the paper gives no figure for: it is in the results'
//! `boundaries` and the table, not a claim.

use super::{PartAdmissionResults, PartAdmissionStudy, Row, SCHEMES};
use crate::experiment::claims::{fmt_num, merge_runs, Condition, PaperClaim, Parameter};
use crate::realtime::Scheme;

/// Where the claims that do not come out are explained.
pub const DOC: &str = "docs/part-admission.md, Results";

/// Where each scheme's guarantee is stated, the claim, and the paper's words.
fn claim_text(scheme: Scheme) -> (&'static str, &'static str, &'static str) {
    match scheme {
        Scheme::PartFtl => (
            "section VI.B.1, eqs. 6-7",
            "PaRT-FTL: no task set its admission test (eqs. 6-7) admits misses a deadline",
            "\"The task set passes PaRT-FTL's admission control, so no deadlines are missed\"",
        ),
        Scheme::Rtgc => (
            "section IV, Fig. 5 (RTGC's test)",
            "RTGC: no task set its admission test admits misses a deadline",
            "RTGC's test (EDF with a collector per writer and blocking by an erase) admits only \
             schedulable sets",
        ),
        Scheme::WaoGc => (
            "section VI.A (WAO-GC's worst case)",
            "WAO-GC: no task set the worst-case blocking test admits misses a deadline",
            "a request is blocked by at most one partial GC step of every other task; a set \
             whose requests fit their periods so is schedulable",
        ),
    }
}

/// The size in words.
pub(super) fn size_text(s: &PartAdmissionStudy) -> String {
    format!(
        "{} with {} blocks per plane, {} s of releases a run, {} grid points per octave, \
         families: {}",
        s.device,
        s.blocks_per_plane,
        fmt_num(s.duration_ns as f64 / 1e9),
        s.points_per_octave,
        s.families.join(", ")
    )
}

fn parameters(r: &PartAdmissionResults, scheme: Scheme) -> Vec<Parameter> {
    let s = &r.study;
    let dev = r
        .devices
        .iter()
        .find(|d| d.scheme == scheme.name())
        .map_or(String::new(), |d| {
            format!(
                "t_r {} ms, t'_r {} ms, t_w {} ms, t_e {} ms, lambda {} ({})",
                fmt_num(d.params.read_ns / 1e6),
                fmt_num(d.params.gc_read_ns / 1e6),
                fmt_num(d.params.write_ns / 1e6),
                fmt_num(d.params.erase_ns / 1e6),
                fmt_num(d.params.logical_ratio),
                d.source
            )
        });
    vec![
        Parameter::stated(
            "device",
            format!("{} (4 ch x 4 ways, 8 KiB pages)", s.device),
            "Fig. 9, Table I",
        ),
        Parameter::stated(
            "Table III's tasks",
            "4 x 12-page writes / 60 ms, 4 x 3-page reads / 15 ms",
            "Table III",
        ),
        Parameter::assumed(
            "families and periods",
            format!(
                "{}; {} points per octave from one octave above the longest analysis boundary",
                s.families.join(", "),
                s.points_per_octave
            ),
            "the paper tries Table III only; the sweep crosses every test's boundary",
        ),
        Parameter::assumed(
            "analysis device",
            dev,
            "the test on the device the run simulates (realtime::derive)",
        ),
        Parameter::assumed(
            "die queues",
            &s.die_queue_policy,
            "the paper schedules by EDF (section III.C); as part-cosmos",
        ),
        Parameter::assumed(
            "release",
            "all tasks at 0, random page-aligned offsets, deadline = period",
            "the synchronous release a utilisation test must cover",
        ),
        Parameter::assumed(
            "blocks per plane",
            s.blocks_per_plane,
            "preconditioned to steady state: GC runs at any size",
        ),
    ]
}

/// One claim per scheme, per seed, merged.
pub fn claims(r: &PartAdmissionResults) -> Vec<PaperClaim> {
    let size = size_text(&r.study);
    let runs = r
        .study
        .seeds
        .iter()
        .map(|&seed| {
            SCHEMES
                .iter()
                .map(|&(scheme, _)| {
                    let admitted: Vec<&Row> = r
                        .rows
                        .iter()
                        .filter(|x| x.scheme == scheme.name() && x.seed == seed && x.admitted)
                        .collect();
                    seed_claim(r, scheme, seed, &admitted, &size)
                })
                .collect()
        })
        .collect();
    merge_runs(runs)
}

/// The claim of `scheme` on one seed from its admitted runs.
pub(super) fn seed_claim(
    r: &PartAdmissionResults,
    scheme: Scheme,
    seed: u64,
    admitted: &[&Row],
    size: &str,
) -> PaperClaim {
    let (source, claim, paper) = claim_text(scheme);
    if admitted.is_empty() {
        return PaperClaim::not_measured(
            source,
            claim,
            paper,
            "no set the test admits was run: a grid starting above the analysis boundary would",
        );
    }
    let misses: u64 = admitted.iter().map(|x| x.misses).sum();
    let worst = admitted.iter().map(|x| x.worst_ratio).fold(0.0, f64::max);
    let ours = format!(
        "{} admitted runs, {misses} misses, worst response {} of the deadline",
        admitted.len(),
        fmt_num(worst)
    );
    PaperClaim::judged(
        source,
        claim,
        paper,
        ours,
        vec![
            Condition::at_most(
                "deadline misses of the admitted sets",
                misses as f64,
                0.0,
                "the guarantee: none",
            ),
            Condition::at_most(
                "worst response / deadline over the admitted sets",
                worst,
                1.0,
                "every job completes by its deadline",
            ),
        ],
        &format!("an admitted set missed: the test is not safe on the simulated device ({DOC})"),
    )
    .with_parameters(parameters(r, scheme))
    .on_run(seed, "", size)
}
