//! The verdict rules, one case each, and the merge of runs.

use super::*;

/// A claim "share >= 0.65" over seeds 1, 2, 3 with these values.
fn share_claim(values: [f64; 3]) -> PaperClaim {
    let runs: Vec<Vec<PaperClaim>> = values
        .iter()
        .zip(1..)
        .map(|(&v, seed)| {
            vec![PaperClaim::judged(
                "Fig. 11(d)",
                "DFTL's random read approaches the ideal",
                ">= 65% of ideal",
                format!("{:.1}%", 100.0 * v),
                vec![Condition::at_least(
                    "share of ideal",
                    v,
                    0.65,
                    "the paper's 'approach'",
                )],
                "docs/fmmu.md",
            )
            .on_run(seed, "", "quick")]
        })
        .collect();
    merge_runs(runs).remove(0)
}

#[test]
fn holds_on_every_seed_beyond_the_spread_is_reproduced() {
    let c = share_claim([0.70, 0.71, 0.69]);
    assert_eq!(c.verdict, Verdict::Reproduced, "{c:?}");
    assert_eq!(c.holds_on, 3);
    assert!(c.why.is_empty());
    assert_eq!(c.runs.iter().map(|r| r.seed).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(c.ours, "seed 1: 70.0%; seed 2: 71.0%; seed 3: 69.0%");
    assert!(c.margin.starts_with("share of ideal: 0.04"), "{}", c.margin);
}

#[test]
fn one_seed_below_is_unstable_k_of_n() {
    let c = share_claim([0.70, 0.64, 0.69]);
    assert_eq!(c.verdict, Verdict::Unstable);
    assert_eq!(c.verdict_label(), "unstable (2 of 3)");
    assert!(
        c.why.starts_with("holds on 2 of 3 runs; docs/fmmu.md"),
        "{}",
        c.why
    );
}

#[test]
fn a_margin_within_the_spread_is_unstable() {
    let c = share_claim([0.66, 0.70, 0.74]);
    assert_eq!(c.verdict, Verdict::Unstable, "{c:?}");
    assert!(
        c.why.contains("margin within its run-to-run spread"),
        "{}",
        c.why
    );
}

#[test]
fn no_seed_holding_differs_and_a_robust_shape_makes_it_shape_only() {
    let c = share_claim([0.60, 0.61, 0.60]);
    assert_eq!(c.verdict, Verdict::Differs);
    assert_eq!(c.why, "docs/fmmu.md");
    let shaped = |v: f64, seed| {
        PaperClaim::judged(
            "Fig. 15",
            "GC drops the bandwidth by about half",
            "-52%",
            "x".into(),
            vec![Condition::within(
                "drop",
                v,
                0.52,
                0.15,
                "15% of the paper's level",
            )],
            "docs/part-ftl.md",
        )
        .with_shape(vec![Condition::at_least("drop", v, 0.0, "a drop")])
        .on_run(seed, "", "quick")
    };
    let c = merge_runs(vec![
        vec![shaped(0.30, 1)],
        vec![shaped(0.31, 2)],
        vec![shaped(0.30, 3)],
    ])
    .remove(0);
    assert_eq!(c.verdict, Verdict::ShapeOnly, "{c:?}");
    let c = merge_runs(vec![
        vec![shaped(0.50, 1)],
        vec![shaped(0.51, 2)],
        vec![shaped(0.50, 3)],
    ])
    .remove(0);
    assert_eq!(c.verdict, Verdict::Reproduced, "{c:?}");
    let c = merge_runs(vec![
        vec![shaped(-0.1, 1)],
        vec![shaped(-0.1, 2)],
        vec![shaped(-0.1, 3)],
    ])
    .remove(0);
    assert_eq!(c.verdict, Verdict::Differs, "{c:?}");
}

#[test]
fn fewer_than_three_seeds_is_not_measured_unless_exact() {
    let one = PaperClaim::judged(
        "eq. 10",
        "read bandwidth",
        "76.2 MiB/s",
        "76.2".into(),
        vec![Condition::within("MiB/s", 76.22, 76.2, 0.01, "rounding")],
        "",
    )
    .on_run(1, "", "one task set");
    assert_eq!(one.verdict, Verdict::NotMeasured);
    assert!(one.why.contains("needs 3 seeds"), "{}", one.why);
    let exact = one.clone().exact();
    assert_eq!(exact.verdict, Verdict::Reproduced, "{exact:?}");
}

#[test]
fn a_fitted_parameter_makes_it_fitted_never_reproduced() {
    let c = share_claim([0.70, 0.71, 0.69]).with_parameters(vec![
        Parameter::stated("pages per block", 256, "section 5"),
        Parameter::fitted("lambda", 0.518, "eq. 9's 7.3"),
    ]);
    assert_eq!(c.verdict, Verdict::Fitted);
    assert!(
        c.why.contains("lambda = 0.518 fitted to eq. 9's 7.3"),
        "{}",
        c.why
    );
    assert!(claims_text(&[c]).contains("fitted: lambda = 0.518 (fitted to eq. 9's 7.3)"));
}

#[test]
fn halves_on_another_side_of_the_bound_are_not_stationary() {
    let run = |seed, halves: (f64, f64)| {
        PaperClaim::judged(
            "Fig. 11(c)",
            "ideal random write",
            "283 KIOPS",
            "x".into(),
            vec![Condition::within("KIOPS", 283.0, 283.0, 0.15, "15%")
                .with_halves(halves.0 / 283.0 - 1.0, halves.1 / 283.0 - 1.0)],
            "",
        )
        .on_run(seed, "", "quick")
    };
    // Halves of the relative error: 0 and 0.02 keep the verdict; 0 and 0.5 flip it.
    let steady = merge_runs((1..=3).map(|s| vec![run(s, (283.0, 288.0))]).collect()).remove(0);
    assert_eq!(steady.verdict, Verdict::Reproduced, "{steady:?}");
    let transient = merge_runs((1..=3).map(|s| vec![run(s, (283.0, 424.5))]).collect()).remove(0);
    assert_eq!(transient.verdict, Verdict::NotMeasured);
    assert!(
        transient.why.starts_with("not stationary at this size"),
        "{}",
        transient.why
    );
}

#[test]
fn declared_verdicts_are_listed_and_not_counted_as_reproduced() {
    let b = PaperClaim::by_construction(
        "Fig. 7",
        "associativity never above K",
        "<= K",
        "the FTL refuses a (K+1)-th block",
    );
    assert_eq!(b.verdict, Verdict::ByConstruction);
    let n = PaperClaim::not_measured("Fig. 13", "trace runs", "x", "run with --traces");
    assert_eq!(n.verdict, Verdict::NotMeasured);
    assert_eq!(n.why, "run with --traces");
    let counts = verdict_counts(&[b, n, share_claim([0.7, 0.7, 0.7])]);
    assert_eq!(counts, [1, 0, 0, 0, 0, 1, 1]);
}

#[test]
fn rejudging_just_past_the_bound_flips_the_verdict() {
    let c = share_claim([0.70, 0.71, 0.69]);
    let past = c.rejudged_with(|cond| vec![cond.bound - 1e-9; 3]);
    assert_eq!(past.verdict, Verdict::Differs);
    let at = c.rejudged_with(|cond| vec![cond.bound; 3]);
    assert_eq!(at.verdict, Verdict::Reproduced);
}

#[test]
fn facts_and_relative_conditions_measure_what_they_say() {
    let w = Condition::within("GB/s", 5.0, 5.5, 0.15, "15%");
    assert!((w.values[0] - 0.0909).abs() < 1e-3);
    assert!(w.robust());
    assert!(!Condition::within("GB/s", 4.0, 5.5, 0.15, "15%").robust());
    assert!(Condition::fact("order", true).robust());
    assert!(!Condition::fact("order", false).robust());
    assert!(!Condition::at_least("x", f64::NAN, 0.0, "t").holds_on(0));
}

#[test]
fn verdicts_serialise_as_snake_case_and_label_in_words() {
    for v in Verdict::ALL {
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            format!("\"{}\"", v.key())
        );
    }
    assert_eq!(Verdict::ShapeOnly.label(), "shape only");
    assert_eq!(fmt_num(0.04000000001), "0.04000");
    assert_eq!(fmt_num(12.0), "12");
    assert_eq!(fmt_num(1234.5678), "1235");
}

#[test]
fn the_audit_names_missing_evidence_and_rules_that_cannot_fail() {
    let good = share_claim([0.70, 0.71, 0.69]).with_parameters(vec![Parameter::stated(
        "bs",
        "4 KiB",
        "section 5",
    )]);
    assert_eq!(audit(std::slice::from_ref(&good)), Vec::<String>::new());
    let mut bare = good.clone();
    bare.parameters.clear();
    bare.size.clear();
    let problems = audit(&[bare]);
    assert_eq!(problems.len(), 2, "{problems:?}");
    // A bound no figure can sit at: not a rule.
    let mut loose = good.clone();
    loose.conditions[0].bound = f64::NEG_INFINITY;
    let problems = audit(&[loose]);
    assert!(
        problems[0].ends_with("at its bounds it is differs"),
        "{problems:?}"
    );
}

#[test]
fn a_run_that_could_not_measure_keeps_its_reason_in_the_merged_claim() {
    let measured = |seed| {
        PaperClaim::judged(
            "Fig. 3",
            "gain at depth 256",
            "5.5%",
            "x".into(),
            vec![Condition::at_least("gain", 0.06, 0.0, "a gain")],
            "docs/mt-ftl.md",
        )
        .on_run(seed, "", "full")
    };
    let missing = PaperClaim::not_measured(
        "Fig. 3",
        "gain at depth 256",
        "5.5%",
        "seed 3 ran no depth 256",
    );
    let c = merge_runs(vec![vec![measured(1)], vec![measured(2)], vec![missing]]).remove(0);
    assert_eq!(c.verdict, Verdict::NotMeasured);
    assert_eq!(c.runs.len(), 2);
    assert!(
        c.why.contains("judged on 2 run(s)")
            && c.why
                .contains("a run not measured: seed 3 ran no depth 256"),
        "{}",
        c.why
    );
}

/// The spread that decides "beyond the spread" is that of the seeds of one set-up: two
/// phases far apart (a set-up choice that changes the figure) do not make a robust margin
/// unstable, and the runs holding are told per phase.
#[test]
fn the_spread_is_taken_within_each_phase() {
    let run = |seed: u64, phase: &str, value: f64| {
        PaperClaim::judged(
            "Fig. 1",
            "x above 1",
            "x > 1",
            format!("{value}"),
            vec![Condition::at_least("x", value, 1.0, "above")],
            "",
        )
        .on_run(seed, phase, "synthetic")
    };
    let runs = |b: [f64; 3]| {
        let mut all = Vec::new();
        for (i, &v) in [3.0, 3.1, 3.2].iter().enumerate() {
            all.push(vec![run(i as u64 + 1, "a", v)]);
        }
        for (i, &v) in b.iter().enumerate() {
            all.push(vec![run(i as u64 + 1, "b", v)]);
        }
        merge_runs(all)
    };
    // Phase b is far above a (margin 2, spread across phases 7.1, within each 0.2).
    let c = runs([9.0, 9.1, 9.2]);
    assert_eq!(c[0].verdict, Verdict::Reproduced, "{c:?}");
    assert!(c[0].margin.contains("spread 0.2"), "{}", c[0].margin);
    // Within phase b the seeds spread more than the margin: unstable.
    let c = runs([1.1, 6.0, 9.0]);
    assert_eq!(c[0].verdict, Verdict::Unstable, "{c:?}");
    // Phase b fails: unstable, with the runs holding per phase.
    let c = runs([0.5, 0.6, 0.7]);
    assert_eq!(c[0].verdict_label(), "unstable (3 of 6)");
    assert!(c[0].why.contains("(a: 3 of 3; b: 0 of 3)"), "{}", c[0].why);
}

/// A run that fails one condition over its window and both halves is decided: another
/// condition's halves crossing the bound on that run do not make the claim "not measured"
/// (they cannot change the run's outcome); on a run where every other condition holds, they
/// do.
#[test]
fn a_run_failing_steadily_is_decided_whatever_the_other_halves() {
    let run = |seed: u64, a: f64, b: (f64, f64)| {
        PaperClaim::judged(
            "Fig. 1",
            "x and y above 1",
            "x, y > 1",
            String::new(),
            vec![
                Condition::at_least("x", a, 1.0, "above").with_halves(a, a),
                Condition::at_least("y", 1.01, 1.0, "above").with_halves(b.0, b.1),
            ],
            "",
        )
        .on_run(seed, "", "synthetic")
    };
    // x fails steadily on every run: y's unsteady halves do not matter.
    let c = merge_runs((1..=3).map(|s| vec![run(s, 0.5, (1.03, 0.99))]).collect());
    assert_eq!(c[0].verdict, Verdict::Differs, "{c:?}");
    // x holds: y's halves on both sides of the bound make the claim not measured.
    let c = merge_runs((1..=3).map(|s| vec![run(s, 2.0, (1.03, 0.99))]).collect());
    assert_eq!(c[0].verdict, Verdict::NotMeasured, "{c:?}");
    assert!(c[0].why.starts_with("not stationary"), "{}", c[0].why);
}
