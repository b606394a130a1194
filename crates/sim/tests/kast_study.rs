//! kast.txt's claims as assertions on `flashlab experiment kast`'s output, on a small
//! `kast-slc` (512 blocks of 64 pages) so they run in seconds.

use flashlab_sim::experiment::kast::{table, KastPoint, KastStudy};

fn study(workload: &str, requests: u64, ks: Vec<u32>) -> Vec<KastPoint> {
    let s = KastStudy {
        ks,
        requests,
        workloads: vec![workload.into()],
        sets: vec!["geometry.blocks_per_plane=512".into()],
        seeds: vec![1],
        warmup: 0,
        ..KastStudy::default()
    };
    s.run(&mut |_, _, _| {}).unwrap_or_else(|e| panic!("{e}"))
}

fn point<'p>(points: &'p [KastPoint], ftl: &str, k: u32) -> &'p KastPoint {
    points.iter().find(|p| p.ftl == ftl && p.k == k).unwrap()
}

/// Fig. 7: FAST's worst merge associativity is far above KAST's, which never exceeds K; the
/// measured worst merge of KAST is within its bound N·K·C_copy + (K+1)·C_erase.
#[test]
fn fast_associativity_far_above_kast_bounded_by_k() {
    let points = study("web", 2000, vec![4]);
    let fast = point(&points, "fast", 4);
    let kast = point(&points, "kast", 4);
    assert!(kast.associativity_max <= 4, "{kast:?}");
    assert!(
        fast.associativity_max >= 3 * kast.associativity_max,
        "FAST {fast:?} against KAST {kast:?}"
    );
    assert!(
        kast.blocking_max_ns <= kast.predicted_worst_ns.unwrap(),
        "{kast:?}"
    );
    assert!(
        fast.blocking_max_ns > kast.blocking_max_ns,
        "{fast:?} {kast:?}"
    );
    let text = table(&points);
    assert!(text.contains("Fig. 6") && text.contains("Fig. 9"), "{text}");
    // The claims of a real run: no rule that cannot fail, no missing evidence.
    let claims = flashlab_sim::experiment::kast::claims(&KastStudy::default(), &points);
    assert_eq!(claims.len(), 16);
    assert_eq!(
        flashlab_sim::experiment::claims::audit(&claims),
        Vec::<String>::new()
    );
}

/// Fig. 6 on the purely random `hotcold` stand-in (uniform 2-8 KiB pages in a hot set), the
/// paper's order: "While FAST has a small number of block merges, BAST invokes a significant
/// large number", SAST's "larger than that of FAST", KAST's "smaller than that of FAST when
/// K >= 8" (docs/kast.md).
#[test]
fn random_pages_merge_counts_in_the_papers_order_for_k_8_and_16() {
    let points = study("hotcold", 3000, vec![8, 16]);
    for k in [8, 16] {
        let [bast, fast, sast, kast] =
            ["bast", "fast", "sast", "kast"].map(|f| point(&points, f, k).merges);
        let all = format!("K={k}: BAST {bast}, FAST {fast}, SAST {sast}, KAST {kast}");
        assert!(bast > fast && sast > fast, "{all}");
        assert!(kast < fast, "{all}");
    }
}

/// Figs. 6 and 9 on the browser-cache stand-in (`web`), the parts that hold (docs/kast.md):
/// for K = 8 and 16 KAST merges fewer log blocks than FAST and its total I/O time is below
/// FAST's; KAST's merges fall from K = 1 to 8. (SAST's do not: its fixed sets thrash more as
/// they grow, see docs/kast.md.)
#[test]
fn browser_cache_kast_merges_less_and_runs_faster_than_fast_for_k_8_and_16() {
    let points = study("web", 3000, vec![1, 8, 16]);
    let fast = point(&points, "fast", 8);
    for k in [8, 16] {
        let kast = point(&points, "kast", k);
        assert!(
            kast.merges < fast.merges,
            "K={k}: {kast:?} against {fast:?}"
        );
        assert!(
            kast.total_io_ns < fast.total_io_ns,
            "K={k}: {kast:?} against {fast:?}"
        );
    }
    let (k1, k8) = (point(&points, "kast", 1), point(&points, "kast", 8));
    assert!(k8.merges < k1.merges, "{k1:?} then {k8:?}");
}

/// Fig. 9 on the PC-applications stand-in (`desktop`, sequential and random): "KAST
/// outperforms both SAST and FAST when K >= 8" in total I/O time (it holds at every size and
/// seed tried: 2,000-5,000 requests, seeds 1 and 2; not on `web`, see docs/kast.md).
#[test]
fn pc_applications_kast_total_io_time_below_fast_and_sast_for_k_8_and_16() {
    let points = study("pc", 3000, vec![8, 16]);
    let fast = point(&points, "fast", 8);
    for k in [8, 16] {
        let (kast, sast) = (point(&points, "kast", k), point(&points, "sast", k));
        assert!(
            kast.total_io_ns < fast.total_io_ns && kast.total_io_ns < sast.total_io_ns,
            "K={k}: {kast:?} against {fast:?} and {sast:?}"
        );
    }
}

/// The study's set-up measures the FTLs, not the warm-up: on the claims' stand-ins at
/// the study's size (the 1 GiB `kast-slc`, 20,000 measured requests), doubling the warm-up
/// changes no point's merges or total I/O time by more than 10%, the tolerance of the claims
/// on them (K = 8 and 16, the K of the paper's statements; one seed). Measured: at most 5%.
/// Worst cases (the largest associativity, the worst blocking time) are extremes of a window
/// and are judged on 80,000-request windows only.
#[test]
fn doubling_the_warmup_changes_no_figure_beyond_its_tolerance() {
    let run = |warmup: u64| {
        let s = KastStudy {
            ks: vec![8, 16],
            warmup,
            workloads: vec!["web".into(), "hotcold".into()],
            seeds: vec![1],
            ..KastStudy::default()
        };
        s.run(&mut |_, _, _| {}).unwrap_or_else(|e| panic!("{e}"))
    };
    let (once, twice) = (run(20_000), run(40_000));
    assert!(once.iter().all(|p| p.warmup_steady), "{once:?}");
    for (a, b) in once.iter().zip(&twice) {
        let change = |x: f64, y: f64| (y - x).abs() / x;
        let merges = change(a.merges as f64, b.merges as f64);
        let time = change(a.total_io_ns as f64, b.total_io_ns as f64);
        assert!(
            merges <= 0.10 && time <= 0.10,
            "{} {} K={}: merges {} then {}, total I/O {} then {} ns",
            a.workload,
            a.ftl,
            a.k,
            a.merges,
            b.merges,
            a.total_io_ns,
            b.total_io_ns
        );
    }
}

/// Prints the whole sweep (`REQ=5000 WORKLOAD=web cargo test --release --test kast_study --
/// --ignored`).
#[test]
#[ignore]
fn print_study() {
    let points = study(
        &std::env::var("WORKLOAD").unwrap_or_else(|_| "web".into()),
        std::env::var("REQ").map_or(3000, |v| v.parse().unwrap()),
        vec![1, 2, 4, 8, 16, 32],
    );
    eprintln!("{}", table(&points));
    let _ = point(&points, "kast", 1);
}
