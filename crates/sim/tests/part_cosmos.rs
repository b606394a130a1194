//! part-ftl.txt VI.B-C on the reduced `cosmos` (64 blocks per plane): Table III under
//! `part-ftl` and `wao-gc`, Fig. 16, and the paper's claims judged on seeds 1, 2, 3
//! (experiment/part_cosmos.rs, docs/part-cosmos.md).

use std::sync::OnceLock;

use flashlab_sim::experiment::claims::{audit, Provenance, Verdict};
use flashlab_sim::experiment::part_cosmos::{
    absurdities, table, PartCosmosResults, PartCosmosStudy,
};

/// The verdict of the claim starting with `start`.
fn verdict(r: &PartCosmosResults, start: &str) -> Verdict {
    claim(r, start).verdict
}

/// The default study (seeds 1, 2, 3), run once for every test of this file.
fn results() -> &'static PartCosmosResults {
    static RESULTS: OnceLock<PartCosmosResults> = OnceLock::new();
    RESULTS.get_or_init(|| {
        PartCosmosStudy::default()
            .run(&mut |_, _, _| {})
            .unwrap_or_else(|e| panic!("{e}"))
    })
}

fn claim<'a>(
    r: &'a PartCosmosResults,
    start: &str,
) -> &'a flashlab_sim::experiment::claims::PaperClaim {
    r.claims
        .iter()
        .find(|c| c.claim.starts_with(start))
        .unwrap_or_else(|| panic!("no claim `{start}`"))
}

#[test]
fn table_iii_and_fig16_reproduce_the_papers_directions() {
    let r = results();
    let text = table(r);
    println!("{text}");
    assert!(absurdities(r).is_empty(), "{:?}", absurdities(r));
    assert_eq!(
        r.seeds.iter().map(|s| s.seed).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    let problems = audit(&r.claims);
    assert!(problems.is_empty(), "{problems:#?}");
    let part = &r.first().runs[0];
    let wao = &r.first().runs[1];
    assert_eq!(
        (part.ftl.as_str(), wao.ftl.as_str()),
        ("part-ftl", "wao-gc")
    );
    // Both FTLs collect during the measured window.
    for run in [part, wao] {
        assert!(
            run.gc_victims > 0 && run.gc_pages_moved > 0 && run.erases > 0,
            "{}",
            run.ftl
        );
        // 4 writers x ceil(10 s / 60 ms) jobs + 4 readers x ceil(10 s / 15 ms).
        assert_eq!(run.deadline_requests, 4 * 167 + 4 * 667, "{}", run.ftl);
        assert_eq!(run.tasks.len(), 8);
    }
    // PaRT-FTL misses no deadline; its reads never go to the write set.
    assert_eq!(
        verdict(r, "PaRT-FTL misses no deadline"),
        Verdict::Reproduced,
        "{text}"
    );
    // Eq. 8 bounds a page read's service, not its latency from the request buffer: the 12 read
    // pages released together queue (5.0 ms at worst; 4.4 ms with the readers alone).
    assert_eq!(
        verdict(r, "PaRT-FTL's worst page read within eq. 8"),
        Verdict::Differs,
        "{text}"
    );
    assert!(part.page_read.max_ns > 4_000_000, "{text}");
    // VI.C's reason for Fig. 15: the writers (programs, erases, GC) add less to PaRT-FTL's
    // worst read than to WAO-GC's (over the same readers alone).
    assert_eq!(
        verdict(r, "Reads are not blocked"),
        Verdict::Reproduced,
        "{text}"
    );
    assert_eq!(r.first().readers_alone.len(), 2);
    for alone in &r.first().readers_alone {
        assert_eq!(alone.deadline_requests, 4 * 667, "{}", alone.ftl);
    }
    // Fig. 15: PaRT-FTL's max write latency below WAO-GC's (buffered vs programmed).
    assert_eq!(
        verdict(r, "max write latency"),
        Verdict::ShapeOnly,
        "{text}"
    );
    assert!(part.write.max_ns * 10 < wao.write.max_ns, "{text}");
    // Until on flash it is the other way round, though within the writers' deadline: an
    // acknowledged page waits for the pages with earlier deadlines and the victim's copies
    // (parity is an EDF job they preempt; docs/part-cosmos.md, "What a write latency
    // means"), and the table says so.
    let to_flash = part.ftl_counters["write_to_flash_ns_max"].as_u64().unwrap();
    assert!(
        to_flash > 2 * wao.write.max_ns && to_flash <= 60_000_000,
        "{text}"
    );
    assert!(
        text.contains("part-ftl: acknowledged pages reached flash after"),
        "{text}"
    );
    // Fig. 16: the bandwidth falls once GC starts (to 38-42%): the direction holds. The level
    // does not: 121 MB/s before GC against the paper's 27 on every run and both halves, which
    // decides each run whatever the level after GC does (seed 3's halves straddle its
    // tolerance): shape only, as in the full run.
    let fig16 = claim(r, "Fig. 16: WAO-GC write bandwidth drops");
    assert_eq!(fig16.verdict, Verdict::ShapeOnly, "{text}");
    assert!(fig16.shape.iter().all(|c| c.robust()), "{fig16:?}");
}

#[test]
fn the_admission_line_and_the_claims_not_reproduced_are_as_documented() {
    // docs/part-cosmos.md: Table III fails eq. 6 with Table IV's t_r = 1.23 ms (and eq. 7 with
    // lambda 0.643), passes both with lambda 0.518 and the simulated device's rebuild time.
    let r = results();
    let verdicts: Vec<(&str, bool)> = r.admission.iter().map(|a| (a.scheme, a.passes)).collect();
    // One claim per parameter set, never OR-ed: the stated one differs, the paper contradicting
    // itself; the fitted ones are fitted (or differ), never reproduced.
    let stated = claim(
        r,
        "Table III passes PaRT-FTL's admission (eqs. 6-7), Table IV",
    );
    assert_eq!(stated.verdict, Verdict::Differs);
    assert!(
        stated.why.starts_with(
            "paper inconsistent: eq. 6 fails Table III with Table IV's t_r: t_r/min T^r"
        ) && stated.why.contains("= 1.066 > 1"),
        "{}",
        stated.why
    );
    assert_eq!(
        verdict(
            r,
            "Table III passes PaRT-FTL's admission (eqs. 6-7), lambda fitted to"
        ),
        Verdict::Differs
    );
    assert_eq!(
        verdict(
            r,
            "Table III passes PaRT-FTL's admission (eqs. 6-7), lambda fitted and"
        ),
        Verdict::Fitted
    );
    assert_eq!(
        verdicts,
        [
            ("PaRT-FTL", false),
            ("PaRT-FTL", false),
            ("PaRT-FTL", true),
            ("WAO-GC", false),
            ("RTGC", false)
        ]
    );
    let read_u = |i: usize| r.admission[i].read_utilisation.unwrap();
    assert!((read_u(0) - 1.066).abs() < 0.001 && (read_u(2) - 0.975).abs() < 0.001);
    // WAO-GC misses no read deadline on the model (the paper's Fig. 13b does): a read waits
    // for at most a program and one partial step on its die.
    let wao = &r.first().runs[1];
    assert_eq!(wao.read_deadline_misses, 0, "{}", table(r));
    assert_eq!(
        verdict(r, "WAO-GC misses some read deadlines"),
        Verdict::Differs
    );
    // Fig. 15's read claim: equal maxima (bus queueing of the 12 pages released together).
    assert_eq!(verdict(r, "max read latency"), Verdict::Differs);
    // With partial steps that hold the whole device (one firmware request loop), WAO-GC
    // misses read deadlines and both of Fig. 15's ratios fall far below 1 (far below the
    // paper's 35% and 20% too: the serialised steps saturate the device).
    let device = &r.first().runs[2];
    assert_eq!(device.ftl, "wao-gc/device");
    assert!(
        device.read_deadline_misses > 100 && device.read.max_ns > 100_000_000,
        "{}",
        table(r)
    );
    assert_eq!(
        verdict(r, "Device-wide steps: WAO-GC misses"),
        Verdict::ShapeOnly
    );
    assert_eq!(
        verdict(r, "Device-wide steps: max read"),
        Verdict::ShapeOnly
    );
    assert!(r.first().runs[0].read.max_ns * 10 < device.read.max_ns);
    // RTGC's test refuses Table III (its reads alone charge 4 x 3 x 1.23 / 15 = 0.984: a read
    // of r pages costs r t_r, eq. 18), yet the run misses no deadline: the collectors (one job
    // per writer in the 10 s, p_G = 10.56 s) reclaim a block on all 16 dies.
    let rtgc = &r.first().runs[3];
    assert_eq!(rtgc.ftl, "rtgc");
    assert_eq!(
        rtgc.read_deadline_misses + rtgc.write_deadline_misses,
        0,
        "{}",
        table(r)
    );
    assert!(rtgc.gc_victims >= 64, "{}", table(r));
    assert!(
        r.admission[4].detail.contains("RTGC"),
        "{}",
        r.admission[4].detail
    );
}

#[test]
fn fig16_collects_nothing_before_the_trigger() {
    // 15 s at 121 MB/s write 1.8 GB, below the 2.11 GB at which the first die opens its
    // reserved block; the default 40 s run starts collecting in its 18th second.
    let study = PartCosmosStudy {
        fig16_duration_ns: 15_000_000_000,
        ..PartCosmosStudy::default()
    };
    let config = study.fig16_config().unwrap_or_else(|e| panic!("{e}"));
    let report =
        flashlab_sim::run_experiment(&config, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.gc.gc_runs, 0);
    assert!(
        report.host.write.bytes > 1_700_000_000,
        "{}",
        report.host.write.bytes
    );
    let f = &results().first().fig16;
    assert_eq!(f.gc_start_interval, Some(17));
    assert!(f.gc_victims > 100);
    assert!(
        f.write_mb_per_s[..17].iter().all(|&v| v > 115.0),
        "{:?}",
        f.write_mb_per_s
    );
}

#[test]
fn the_board_set_up_depends_on_the_fitted_firmware_time_and_the_reader_phase() {
    // docs/part-cosmos.md, "The board's firmware": 303 us of firmware time per host page on
    // the preset's one FTL core, fitted to Fig. 16's 27 MB/s; WAO-GC's request buffer first
    // come first served, PaRT-FTL's earliest deadline first. Every board claim carries the
    // fitted parameter and is judged on every seed and reader phase (3 x 8 runs).
    let r = results();
    let text = table(r);
    let board = r.first().board.as_ref().expect("board runs");
    assert_eq!(
        r.study.table_iii_config("wao-gc").unwrap().cpu.cores,
        1,
        "one FTL core"
    );
    for c in r.claims.iter().filter(|c| c.claim.starts_with("Board:")) {
        assert!(
            c.parameters
                .iter()
                .any(|p| p.name.starts_with("ftl.cpu_page_ns")
                    && matches!(p.provenance, Provenance::Fitted { .. })),
            "{c:?}"
        );
        assert_ne!(c.verdict, Verdict::Reproduced, "{c:?}");
    }
    // The calibration: 27.02 MB/s before GC, "fitted".
    let before = board.fig16.before_mb_per_s;
    assert!((26.8..27.3).contains(&before), "{before}");
    assert_eq!(
        verdict(r, "Board: Fig. 16, WAO-GC writes 27 MB/s"),
        Verdict::Fitted
    );
    let run = |ftl: &str| r.first().runs.iter().find(|x| x.ftl == ftl).unwrap();
    let (part, wao) = (run("part-ftl/board"), run("wao-gc/board"));
    // Fig. 13b: readers released 1 ms after the writers wait for the writers' 48 pages of
    // firmware time: 567 of 2668 read jobs miss, worst read 19.0 ms; only at phases 1-4 ms,
    // and "some" (at most a tenth) only at 3-4 ms: unstable, 6 of 24 runs.
    assert!(
        (400..800).contains(&wao.read_deadline_misses) && wao.read.max_ns > 15_000_000,
        "{text}"
    );
    let misses = claim(r, "Board: WAO-GC misses some read deadlines");
    assert_eq!(misses.verdict, Verdict::Unstable, "{text}");
    assert_eq!((misses.holds_on, misses.runs.len()), (6, 24));
    let missing: Vec<u64> = board
        .phases
        .iter()
        .filter(|x| x.ftl == "wao-gc" && x.read_deadline_misses > 0)
        .map(|x| x.reader_offset_ns / 1_000_000)
        .collect();
    assert_eq!(missing, [1, 2, 3, 4], "{text}");
    // PaRT-FTL misses none at any phase: fitted (it rests on the fitted firmware time).
    assert_eq!(
        verdict(r, "Board: PaRT-FTL misses no deadline"),
        Verdict::Fitted,
        "{text}"
    );
    assert_eq!(part.deadline_misses, 0, "{text}");
    // Fig. 15's read ratio: 30.7% at 1 ms (paper 35%), 66% at phase 0: half the runs.
    let read_ratio = part.page_read.max_ns as f64 / wao.page_read.max_ns as f64;
    assert!((0.25..0.40).contains(&read_ratio), "{read_ratio} {text}");
    // On this quick device the board's worst-latency ratios are not judged (they depend on
    // the device's size; the full run's 512 blocks per plane judge them).
    let reads = claim(r, "Board: max page read latency");
    assert_eq!(reads.verdict, Verdict::NotMeasured, "{text}");
    assert!(
        reads.why.contains("not measured at quick size"),
        "{}",
        reads.why
    );
    // Not reproduced: the write ratio (135%: PaRT-FTL's write pages pay the same firmware
    // time, after its reads; judged on the full device) and Fig. 16's drop (the firmware, not
    // the dies, sets the pace before and after GC starts).
    assert_eq!(
        verdict(r, "Board: max page write latency"),
        Verdict::NotMeasured,
        "{text}"
    );
    assert!(part.page_write.max_ns > wao.page_write.max_ns, "{text}");
    assert_eq!(
        verdict(r, "Board: Fig. 16, WAO-GC's bandwidth drops"),
        Verdict::Differs,
        "{text}"
    );
    assert!(board.fig16.gc_start_interval.is_some() && board.fig16.gc_victims > 100);
    assert!(board.fig16.after_mb_per_s > 0.95 * before, "{text}");
}

/// Issue 29: the board's firmware time derived from Table I (39 us per command at most, far
/// from the 303 us Fig. 16 needs) predicts neither Fig. 16's level nor Fig. 13b's misses;
/// the fitted board's Fig. 13b misses stay on a fresh device with no GC, so they come from
/// the firmware's first-come-first-served buffer, not from WAO-GC's collection.
#[test]
fn the_board_from_table_i_and_where_fig13bs_misses_come_from() {
    let r = results();
    let text = table(r);
    let board = r.first().board.as_ref().expect("board runs");
    assert_eq!(board.derived_cpu_page_ns, 39_000);
    assert!(board.table_i.fig16_page_ns > 3.0 * board.table_i.firmware_cap_ns);
    // Fresh device: no collection at all, and WAO-GC still misses at the same phases, about
    // as many (503 against 567 at 1 ms on seed 1).
    let at = |rows: &[flashlab_sim::experiment::part_cosmos::PhaseRow], ms: u64| {
        rows.iter()
            .find(|x| x.ftl == "wao-gc" && x.reader_offset_ns == ms * 1_000_000)
            .cloned()
            .unwrap()
    };
    for s in &r.seeds {
        let b = s.board.as_ref().unwrap();
        assert!(b.fresh_phases.iter().all(|x| x.gc_victims == 0), "{text}");
        let (fresh, with_gc) = (at(&b.fresh_phases, 1), at(&b.phases, 1));
        assert!(with_gc.gc_victims > 0, "{text}");
        assert!(
            fresh.read_deadline_misses > 400
                && fresh.read_deadline_misses * 10 > with_gc.read_deadline_misses * 8,
            "{text}"
        );
        // And GC alone, without the firmware time, misses nothing.
        let wao = s.runs.iter().find(|x| x.ftl == "wao-gc").unwrap();
        assert_eq!(wao.read_deadline_misses, 0, "{text}");
    }
    let attribution = claim(r, "Board: WAO-GC's read misses come from its GC");
    assert_eq!(attribution.verdict, Verdict::Differs, "{text}");
    // The derived board: no claim fitted; Fig. 16's level fails (121 MB/s, the flash's
    // pace), its drop holds (shape only); Fig. 13b's misses do not appear (differs).
    for c in r
        .claims
        .iter()
        .filter(|c| c.claim.starts_with("Board from Table I"))
    {
        assert!(!c.is_fitted(), "{c:?}");
    }
    assert!(board.derived_fig16.before_mb_per_s > 100.0, "{text}");
    assert_eq!(
        verdict(r, "Board from Table I: Fig. 16"),
        Verdict::ShapeOnly,
        "{text}"
    );
    assert_eq!(
        verdict(r, "Board from Table I: WAO-GC misses some read deadlines"),
        Verdict::Differs,
        "{text}"
    );
    assert!(board
        .derived_phases
        .iter()
        .all(|x| x.read_deadline_misses == 0));
    assert_eq!(
        verdict(r, "Board from Table I: PaRT-FTL misses no deadline"),
        Verdict::Reproduced,
        "{text}"
    );
}
