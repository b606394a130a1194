//! kast.txt section IV's sentences about Figs. 6-9, checked on the two stand-ins of the
//! Internet Explorer trace the figures are about (`web` and `hotcold`, [`CLAIMS_WORKLOADS`];
//! docs/kast.md, "Against the paper, sentence by sentence"), with the verdict rules of
//! [`crate::experiment::claims`]; and section II's worked example, computed exactly.
//!
//! Each seed's points on each stand-in give one run of every claim (a number per condition,
//! and the same number over the first and the second half of the measured window; the
//! stand-in is the run's phase); [`claims`] merges the runs. A claim about K values the sweep did not run (the quick run's K = 1, 4, 16 has no
//! K = 8 or 32) is "not measured at quick size", with what would measure it. Fig. 7's "never
//! above K" is by construction: the model refuses such a merge.

use super::{Half, KastPoint, KastStudy};
use crate::experiment::claims::{merge_runs, Condition, PaperClaim, Parameter};

/// The stand-ins of the trace the paper's figures are about (Internet Explorer, "many small
/// random access files"), each a set-up choice the paper leaves open: the browser-cache model
/// and uniformly random small pages with a hot set. A claim is judged on both (a phase each):
/// reproduced needs every seed of each.
pub const CLAIMS_WORKLOADS: [&str; 2] = ["web", "hotcold"];
/// The K values of the paper's figures (assumed: the text names K = 1, 8 and 16, and powers
/// of two up to the 32 log blocks; the axes are not in the text).
pub const PAPER_KS: [u32; 6] = [1, 2, 4, 8, 16, 32];
/// "Similar" merge counts: within this ratio of BAST's.
pub const SIMILAR: f64 = 0.25;
/// Fig. 8's K, and the paper's worst blocking times there (ms).
pub const FIG8_K: u32 = 16;
pub const PAPER_FAST_BLOCKING_MS: f64 = 548.0;
pub const PAPER_KAST_BLOCKING_MS: f64 = 232.0;
/// A worst blocking time matches the paper's within this ratio.
pub const BLOCKING_TOLERANCE: f64 = 0.25;
/// "Significantly high": FAST's worst associativity at least this many times KAST's.
pub const FAR_ABOVE: f64 = 2.0;
/// A "fall" over K may rise by at most this ratio from one K to the next.
pub const RISE: f64 = 1.02;
/// Fig. 8's figures (a worst case, and the blocking per merge) are judged on windows of at
/// least this many requests: a worst case grows with its window, and at 20,000 requests the
/// blocking per merge is not stationary (SAST's mean over KAST's is 1.12 over the first half
/// of seed 2's window and 0.94 over the second).
pub const FIG8_REQUESTS: u64 = 80_000;

const DOC: &str = "docs/kast.md, \"Against the paper, sentence by sentence\"";
const DOC_WHY: &str =
    "docs/kast.md, \"Why the browser-cache stand-in does not give the paper's order\"";

/// Which part of a point's window a figure is taken over.
#[derive(Clone, Copy)]
enum Over {
    Whole,
    Half(usize),
}

const HALVES: [Over; 2] = [Over::Half(0), Over::Half(1)];

type Metric = fn(&KastPoint, Over) -> f64;

fn half(p: &KastPoint, over: Over) -> Option<&Half> {
    match over {
        Over::Whole => None,
        Over::Half(i) => p.halves.get(i),
    }
}

fn merges(p: &KastPoint, over: Over) -> f64 {
    half(p, over).map_or(p.merges, |h| h.merges) as f64
}
fn seconds(p: &KastPoint, over: Over) -> f64 {
    half(p, over).map_or(p.total_io_ns, |h| h.total_io_ns) as f64 / 1e9
}
fn assoc(p: &KastPoint, over: Over) -> f64 {
    f64::from(half(p, over).map_or(p.associativity_max, |h| h.associativity_max))
}
fn worst_ms(p: &KastPoint, over: Over) -> f64 {
    half(p, over).map_or(p.blocking_max_ns, |h| h.blocking_max_ns) as f64 / 1e6
}
fn mean_ms(p: &KastPoint, over: Over) -> f64 {
    half(p, over).map_or(p.blocking_mean_ns, |h| h.blocking_mean_ns) / 1e6
}

/// One seed's points of the claims' workload, by FTL and K.
struct Web<'p> {
    workload: &'static str,
    points: Vec<&'p KastPoint>,
    ks: Vec<u32>,
    /// Requests measured a run.
    requests: u64,
}

impl<'p> Web<'p> {
    fn of(points: &'p [KastPoint], seed: u64, workload: &'static str, requests: u64) -> Self {
        let points: Vec<&KastPoint> = points
            .iter()
            .filter(|p| p.workload == workload && p.seed == seed)
            .collect();
        let mut ks: Vec<u32> = points.iter().map(|p| p.k).collect();
        ks.sort_unstable();
        ks.dedup();
        Web {
            workload,
            points,
            ks,
            requests,
        }
    }

    fn at(&self, ftl: &str, k: u32) -> Option<&'p KastPoint> {
        self.points
            .iter()
            .copied()
            .find(|p| p.ftl == ftl && p.k == k)
    }

    /// `f(a at K) / f(b at K)` over `over`.
    fn ratio(&self, a: &str, b: &str, k: u32, f: Metric, over: Over) -> Option<f64> {
        Some(f(self.at(a, k)?, over) / f(self.at(b, k)?, over).max(1e-12))
    }

    /// The K values of the sweep at least `from` (and at most `to`).
    fn ks_in(&self, from: u32, to: u32) -> Vec<u32> {
        self.ks
            .iter()
            .copied()
            .filter(|&k| k >= from && k <= to)
            .collect()
    }

    /// The K values of `needs` the sweep lacks.
    fn missing(&self, needs: &[u32]) -> Vec<u32> {
        needs
            .iter()
            .copied()
            .filter(|k| !self.ks.contains(k))
            .collect()
    }
}

/// A figure over the whole window with its halves: the condition `make(value)` with halves.
fn with_halves(
    figure: impl Fn(Over) -> Option<f64>,
    make: impl Fn(f64) -> Condition,
) -> Option<Condition> {
    let whole = figure(Over::Whole)?;
    let (a, b) = (figure(HALVES[0])?, figure(HALVES[1])?);
    let c = make(whole);
    // The halves in the condition's own unit (a `within` condition's relative error).
    let unit = |v: f64| make(v).values[0];
    Some(c.with_halves(unit(a), unit(b)))
}

fn max_of(mut values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    values.try_fold(f64::NEG_INFINITY, |acc, v| Some(acc.max(v?)))
}

fn list(w: &Web, ftl: &str, ks: &[u32], f: Metric, digits: usize) -> String {
    let items: Vec<String> = ks
        .iter()
        .filter_map(|&k| {
            Some(format!(
                "{:.digits$} (K={k})",
                f(w.at(ftl, k)?, Over::Whole)
            ))
        })
        .collect();
    items.join(", ")
}

fn ks_text(ks: &[u32]) -> String {
    let v: Vec<String> = ks.iter().map(u32::to_string).collect();
    v.join(", ")
}

/// The parameters every claim ran with (the study's, on `web`).
fn common_parameters(study: &KastStudy) -> Vec<Parameter> {
    vec![
        Parameter::stated("log blocks", study.log_blocks, "kast.txt section IV"),
        Parameter::stated(
            "NAND",
            "SLC, 64 pages a block; page read 25 us, program 200 us, erase 2 ms",
            "kast.txt section IV (preset kast-slc)",
        ),
        Parameter::stated("SAST's log block set", "N = K", "kast.txt section IV"),
        Parameter::assumed(
            "trace",
            "two stand-ins, each judged: `web:qd=1`, a browser's disk cache on a FAT32 \
             volume; `hotcold`, uniformly random 2-8 KiB requests, 90% of them on 1% of the \
             space",
            "stand-ins for the Internet Explorer trace (\"many small random access files\"), \
             which is not public (docs/kast.md, \"The study and how it compares with the \
             paper\"); neither fitted to the figures",
        ),
        Parameter::assumed(
            "page size, capacity, bus",
            "2 KiB pages, 1 GiB, 40 MB/s",
            "not in the paper (preset kast-slc's source)",
        ),
        Parameter::assumed(
            "requests a run",
            study.requests,
            "the trace's length is not stated; each figure is also taken over the window's \
             halves (stationarity)",
        ),
        Parameter::assumed(
            "preconditioning",
            "the whole device written once in order, then a warm-up before the window",
            "the paper does not say; a trace replayed on a used disk. No uniformly random \
             pass: it left cold random pages in the log blocks that made FAST's worst merges \
             (issue 27)",
        ),
        Parameter::assumed(
            "warm-up",
            format!(
                "at least {} requests, on until two chunks of {} merge at the same rate",
                fmt_count(study.warmup),
                fmt_count(study.warmup / 4)
            ),
            "requests of the same workload before the measured window, so that merges are \
             in steady state (the table's first line gives the lengths run)",
        ),
        Parameter::assumed(
            "K sweep",
            ks_text(&study.ks),
            "the text names K = 1, 8 and 16; the paper's sweep is taken as 1-32 (powers of 2)",
        ),
    ]
}

/// The size a claim was judged at, in words.
fn size_text(study: &KastStudy) -> String {
    let mut s = format!(
        "{} requests a run after a sequential fill and at least {} warm-up requests, K = {}",
        fmt_count(study.requests),
        fmt_count(study.warmup),
        ks_text(&study.ks)
    );
    if !study.sets.is_empty() {
        s += &format!(", {}", study.sets.join(" "));
    }
    s
}

/// 20000 as "20,000".
fn fmt_count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A claim under construction: its words and the K values it is about.
struct Claim {
    source: &'static str,
    claim: &'static str,
    paper: &'static str,
    /// The K values the claim is about (all must be in the sweep).
    needs: &'static [u32],
    /// The fewest measured requests a run the claim is judged on.
    min_requests: u64,
    deviation: &'static str,
}

impl Claim {
    /// Judged on `conditions` (None: a point is missing), or not measured.
    fn judged(
        &self,
        w: &Web,
        ours: impl FnOnce() -> String,
        conditions: Option<Vec<Condition>>,
        shape: Option<Vec<Condition>>,
    ) -> PaperClaim {
        if w.requests < self.min_requests {
            return PaperClaim::not_measured(
                self.source,
                self.claim,
                self.paper,
                format!(
                    "not measured at quick size: judged on windows of at least {} requests (a \
                     worst case grows with its window; the blocking per merge is not stationary \
                     at 20,000); `flashlab reproduce --full` (or `--requests {}`)",
                    fmt_count(self.min_requests),
                    self.min_requests
                ),
            );
        }
        let missing = w.missing(self.needs);
        if !missing.is_empty() {
            return PaperClaim::not_measured(
                self.source,
                self.claim,
                self.paper,
                format!(
                    "not measured at quick size: the claim is about K = {}, the sweep has no K = \
                     {}; `flashlab reproduce --full` (or `--ks {}`)",
                    ks_text(self.needs),
                    ks_text(&missing),
                    ks_text(&PAPER_KS)
                ),
            );
        }
        let Some(conditions) = conditions else {
            return PaperClaim::not_measured(
                self.source,
                self.claim,
                self.paper,
                format!(
                    "this run has no BAST, FAST, SAST and KAST points on `{0}` \
                     (`--workloads {0}`)",
                    w.workload
                ),
            );
        };
        let c = PaperClaim::judged(
            self.source,
            self.claim,
            self.paper,
            ours(),
            conditions,
            self.deviation,
        );
        match shape {
            Some(s) => c.with_shape(s),
            None => c,
        }
    }
}

/// The paper's claims against the study's points: one run per seed, merged.
pub fn claims(study: &KastStudy, points: &[KastPoint]) -> Vec<PaperClaim> {
    let mut seeds: Vec<u64> = points.iter().map(|p| p.seed).collect();
    seeds.sort_unstable();
    seeds.dedup();
    let size = size_text(study);
    let params = common_parameters(study);
    // The stand-ins run; with none of them, the first (its claims say what is missing).
    let mut workloads: Vec<&'static str> = CLAIMS_WORKLOADS
        .into_iter()
        .filter(|w| points.iter().any(|p| p.workload == *w))
        .collect();
    if workloads.is_empty() {
        workloads.push(CLAIMS_WORKLOADS[0]);
    }
    let mut runs: Vec<Vec<PaperClaim>> = Vec::new();
    for &seed in &seeds {
        for &workload in &workloads {
            let w = Web::of(points, seed, workload, study.requests);
            let run = seed_claims(&w).into_iter().map(|c| {
                let mut p = params.clone();
                if c.source == "Fig. 8" {
                    p.push(Parameter::stated("K", FIG8_K, "kast.txt Fig. 8"));
                }
                c.with_parameters(p).on_run(seed, workload, &size)
            });
            runs.push(run.collect());
        }
    }
    let mut out = merge_runs(runs);
    out.push(section_ii_example());
    out
}

/// Section II's worked example: "For the MLC NAND flash memory, where a block consists of
/// 128 pages, and the times for page read, page program and block erase are 50us, 650us and
/// 2ms, respectively, the worst-case time of a log block merge is about 6 seconds while the
/// best-case time is 2ms in the case of switch merge. So, the worst-case cost is 3,000 times
/// of the best-case cost." Computed with the paper's formula on the `kast-mlc` preset.
pub fn section_ii_example() -> PaperClaim {
    let (worst_ns, erase_ns, n) = match mlc_worst_merge() {
        Ok(v) => v,
        Err(e) => {
            return PaperClaim::not_measured(
                "Section II",
                SECTION_II_CLAIM,
                SECTION_II_PAPER,
                format!("the kast-mlc preset does not build: {e}"),
            )
        }
    };
    let worst_s = worst_ns as f64 / 1e9;
    let times = worst_ns as f64 / erase_ns as f64;
    let copies = u64::from(n) * u64::from(n);
    PaperClaim::judged(
        "Section II",
        SECTION_II_CLAIM,
        SECTION_II_PAPER,
        format!(
            "N^2·C_copy + (N+1)·C_erase = {copies} x 700 us + {} x 2 ms = {worst_s:.2} s, \
             {times:.0} times the 2 ms switch merge",
            n + 1
        ),
        vec![Condition::within(
            "worst merge (s)",
            worst_s,
            6.0,
            0.25,
            "\"about 6 seconds\": within 25%",
        )],
        &format!(
            "paper inconsistent: its own formula with its own numbers gives {copies} x \
             (50 + 650) us + {} x 2 ms = {worst_s:.2} s, {times:.0} times the best case, not \
             about 6 s and 3,000 times (which agree with each other: 6 s / 2 ms = 3,000; they \
             need C_copy of about 350 us)",
            n + 1
        ),
    )
    .with_parameters(vec![Parameter::stated(
        "NAND",
        "MLC, 128 pages a block; read 50 us, program 650 us, erase 2 ms",
        "kast.txt section II (preset kast-mlc)",
    )])
    .exact()
    .on_run(0, "", "closed form (exact)")
}

const SECTION_II_CLAIM: &str = "FAST's worst merge on MLC is about 6 s, 3,000 times the best";
const SECTION_II_PAPER: &str = "\"about 6 seconds while the best-case time is 2ms\"";

/// (worst merge, erase, N) on `kast-mlc`: section II's formula at k = N with the paper's
/// C_copy, a page read plus a page program.
fn mlc_worst_merge() -> Result<(u64, u64, u32), String> {
    let config =
        crate::config::ExperimentConfig::with_sets("kast-mlc", &[]).map_err(|e| e.to_string())?;
    let t = &config.timing;
    let n = config.geometry.pages_per_block;
    let copy = t.read_latency_ns + t.program_latency_ns;
    let worst = u64::from(n) * u64::from(n) * copy + u64::from(n + 1) * t.erase_latency_ns;
    Ok((worst, t.erase_latency_ns, n))
}

/// Every claim on one seed's points, in the paper's order.
fn seed_claims(w: &Web) -> Vec<PaperClaim> {
    let mut out = vec![bast_thrashes(w)];
    out.extend(similar_at_k1(w));
    out.push(merges_fall_with_k(w));
    out.push(below_from_8(
        w,
        &Claim {
            source: "Fig. 6",
            claim: "KAST merges less than FAST for K >= 8",
            paper: "\"smaller than that of FAST when K >= 8\"",
            needs: &[8, 16, 32],
            min_requests: 0,
            deviation: DOC,
        },
        &[("kast", "fast")],
        merges,
    ));
    out.push(most_k(
        w,
        &Claim {
            source: "Fig. 6",
            claim: "SAST merges more than FAST for most K",
            paper: "\"larger than that of FAST for most of K values\"",
            needs: &PAPER_KS,
            min_requests: 0,
            deviation: DOC_WHY,
        },
        merges,
    ));
    out.push(within_k());
    out.push(fast_far_above(w));
    out.push(below_from_8(
        w,
        &Claim {
            source: "Fig. 7 text",
            claim: "KAST merges less than BAST and SAST for K >= 8",
            paper: "\"KAST is superior to BAST and SAST for the number of block merges\"",
            needs: &[8, 16, 32],
            min_requests: 0,
            deviation: DOC_WHY,
        },
        &[("kast", "bast"), ("kast", "sast")],
        merges,
    ));
    out.extend(blocking(w));
    out.push(time_falls_with_k(w));
    out.push(most_k(
        w,
        &Claim {
            source: "Fig. 9",
            claim: "SAST slower than FAST on the Internet Explorer trace (most K)",
            paper: "\"SAST ... shows a worse result than FAST for the Internet explorer\"",
            needs: &PAPER_KS,
            min_requests: 0,
            deviation: DOC_WHY,
        },
        seconds,
    ));
    let p = "\"KAST outperforms both SAST and FAST when K >= 8\"";
    out.push(below_from_8(
        w,
        &Claim {
            source: "Fig. 9",
            claim: "KAST's total I/O time below FAST's for K >= 8",
            paper: p,
            needs: &[8, 16, 32],
            min_requests: 0,
            deviation: DOC,
        },
        &[("kast", "fast")],
        seconds,
    ));
    out.push(below_from_8(
        w,
        &Claim {
            source: "Fig. 9",
            claim: "KAST's total I/O time below SAST's for K >= 8",
            paper: p,
            needs: &[8, 16, 32],
            min_requests: 0,
            deviation: DOC_WHY,
        },
        &[("kast", "sast")],
        seconds,
    ));
    out
}

fn bast_thrashes(w: &Web) -> PaperClaim {
    let c = Claim {
        source: "Fig. 6",
        claim: "BAST merges more than FAST (log block thrashing)",
        paper: "FAST few merges, BAST \"a significant large number\"",
        needs: &[],
        min_requests: 0,
        deviation: DOC_WHY,
    };
    let k = w.ks.first().copied().unwrap_or(1);
    let cond = with_halves(
        |o| w.ratio("bast", "fast", k, merges, o),
        |v| {
            Condition::at_least(
                "BAST's merges / FAST's",
                v,
                1.0,
                "more than FAST (the paper's \"significant\" is not quantified: the least it says)",
            )
        },
    );
    let ours = || {
        format!(
            "BAST {} against FAST {}",
            w.at("bast", k).map_or(0, |p| p.merges),
            w.at("fast", k).map_or(0, |p| p.merges)
        )
    };
    c.judged(w, ours, cond.map(|c| vec![c]), None)
}

fn similar_at_k1(w: &Web) -> Vec<PaperClaim> {
    [
        ("sast", "SAST merges similar to BAST's at K = 1"),
        ("kast", "KAST merges similar to BAST's at K = 1"),
    ]
    .iter()
    .map(|&(ftl, claim)| {
        let c = Claim {
            source: "Fig. 6",
            claim,
            paper: "similar to BAST when K = 1",
            needs: &[1],
            min_requests: 0,
            deviation: DOC,
        };
        let figure = format!("{}'s merges / BAST's at K = 1", ftl.to_uppercase());
        let cond = with_halves(
            |o| w.ratio(ftl, "bast", 1, merges, o),
            |v| {
                Condition::within(
                    &figure,
                    v,
                    1.0,
                    SIMILAR,
                    "\"similar\": within 25% of BAST's (assumed; the paper gives no number)",
                )
            },
        );
        let ours = || {
            let (x, b) = (w.at(ftl, 1), w.at("bast", 1));
            let (x, b) = (x.map_or(0, |p| p.merges), b.map_or(0, |p| p.merges));
            format!(
                "{x} against {b} ({:+.0}%)",
                100.0 * (x as f64 / (b as f64).max(1.0) - 1.0)
            )
        };
        c.judged(w, ours, cond.map(|c| vec![c]), None)
    })
    .collect()
}

/// `ftl`'s `f` at the sweep's largest K over its smallest.
fn end_over_start(w: &Web, ftl: &str, f: Metric, o: Over) -> Option<f64> {
    let (first, last) = (*w.ks.first()?, *w.ks.last()?);
    if first == last {
        return None;
    }
    Some(f(w.at(ftl, last)?, o) / f(w.at(ftl, first)?, o).max(1e-12))
}

fn merges_fall_with_k(w: &Web) -> PaperClaim {
    let c = Claim {
        source: "Fig. 6",
        claim: "SAST's and KAST's merges fall as K grows",
        paper: "\"as K increases, the values are decreased\"",
        needs: &[1, 32],
        min_requests: 0,
        deviation: DOC,
    };
    let conds: Option<Vec<Condition>> = ["sast", "kast"]
        .iter()
        .map(|&ftl| {
            let figure = format!("{}'s merges at K = 32 / at K = 1", ftl.to_uppercase());
            with_halves(
                |o| end_over_start(w, ftl, merges, o),
                |v| Condition::at_most(&figure, v, 1.0, "fewer at the largest K than at K = 1"),
            )
        })
        .collect();
    let ours = || {
        format!(
            "SAST {}; KAST {}",
            list(w, "sast", &w.ks, merges, 0),
            list(w, "kast", &w.ks, merges, 0)
        )
    };
    c.judged(w, ours, conds, None)
}

/// For each pair (a, b), `a`'s `f` below `b`'s at every K >= 8: the largest ratio at most 1.
fn below_from_8(w: &Web, c: &Claim, pairs: &[(&str, &str)], f: Metric) -> PaperClaim {
    let ks = w.ks_in(8, u32::MAX);
    let conds: Option<Vec<Condition>> = pairs
        .iter()
        .map(|&(a, b)| {
            let figure = format!(
                "largest {} / {} over K >= 8",
                a.to_uppercase(),
                b.to_uppercase()
            );
            with_halves(
                |o| {
                    if ks.is_empty() {
                        return None;
                    }
                    max_of(ks.iter().map(|&k| w.ratio(a, b, k, f, o)))
                },
                |v| {
                    Condition::at_most(&figure, v, 1.0, "below at every K >= 8 (the paper's words)")
                },
            )
        })
        .collect();
    let ours = || {
        let parts: Vec<String> = pairs
            .iter()
            .map(|&(a, b)| {
                let items: Vec<String> = ks
                    .iter()
                    .filter_map(|&k| {
                        let (x, y) = (f(w.at(a, k)?, Over::Whole), f(w.at(b, k)?, Over::Whole));
                        Some(format!("{} vs {} (K={k})", number(x), number(y)))
                    })
                    .collect();
                format!(
                    "{} vs {}: {}",
                    a.to_uppercase(),
                    b.to_uppercase(),
                    items.join(", ")
                )
            })
            .collect();
        parts.join("; ")
    };
    c.judged(w, ours, conds, None)
}

/// A count as an integer, a time with two decimals.
fn number(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// SAST above FAST in `f` at most K values: the count of K values with SAST above FAST, at
/// least one more than half the sweep.
fn most_k(w: &Web, c: &Claim, f: Metric) -> PaperClaim {
    let n = w.ks.len();
    let most = (n / 2 + 1) as f64;
    let count = |o: Over| -> Option<f64> {
        let mut above = 0;
        for &k in &w.ks {
            if f(w.at("sast", k)?, o) > f(w.at("fast", k)?, o) {
                above += 1;
            }
        }
        Some(f64::from(above))
    };
    let figure = format!("K values (of {n}) with SAST above FAST");
    let cond = with_halves(count, |v| {
        Condition::at_least(&figure, v, most, "more than half the K values (\"most\")")
    });
    let ours = || {
        format!(
            "SAST above FAST at {} of {n} K values (FAST {})",
            count(Over::Whole).unwrap_or(0.0),
            number(w.at("fast", w.ks[0]).map_or(0.0, |p| f(p, Over::Whole)))
        )
    };
    c.judged(w, ours, cond.map(|c| vec![c]), None)
}

/// Fig. 7's guarantee: the model refuses a merge above K.
fn within_k() -> PaperClaim {
    PaperClaim::by_construction(
        "Fig. 7",
        "SAST's and KAST's associativity never above K",
        "\"guarantee the maximum association value is smaller than K\"",
        "the log-block core refuses a full merge whose associativity exceeds the FTL's bound \
         (SAST: its K data blocks a set, `ftl.set_data_blocks`; KAST: `ftl.max_associativity`) \
         and fails the run (`Core::merge_full`, crates/sim/src/ftl/logblock/core.rs); KAST's \
         invariants check k(L) <= K of every log block after every batch. A run that completes \
         is within K, so the figure cannot show otherwise",
    )
}

fn fast_far_above(w: &Web) -> PaperClaim {
    let c = Claim {
        source: "Fig. 7",
        claim: "FAST's associativity far above KAST's (at least 2x at each K <= 16)",
        paper: "\"the maximum association value of FAST is significantly high\"",
        needs: &[FIG8_K],
        min_requests: 0,
        deviation: DOC,
    };
    // FAST does not depend on K: the smallest ratio over K <= 16 is FAST's over KAST's
    // largest there (at most 16, by construction).
    let ks = w.ks_in(1, FIG8_K);
    let cond = with_halves(
        |o| {
            let fast = assoc(w.at("fast", *ks.first()?)?, o);
            let kast = max_of(ks.iter().map(|&k| Some(assoc(w.at("kast", k)?, o))))?;
            Some(fast / kast.max(1.0))
        },
        |v| {
            Condition::at_least(
                "FAST's worst associativity / KAST's largest over K <= 16",
                v,
                FAR_ABOVE,
                "\"significantly high\": at least twice (assumed; the paper gives no number)",
            )
        },
    );
    let ours = || {
        format!(
            "FAST {} against KAST {}",
            ks.first()
                .and_then(|&k| w.at("fast", k))
                .map_or(0, |p| p.associativity_max),
            list(w, "kast", &ks, assoc, 0)
        )
    };
    c.judged(w, ours, cond.map(|c| vec![c]), None)
}

fn blocking(w: &Web) -> [PaperClaim; 2] {
    let k = FIG8_K;
    let c = Claim {
        source: "Fig. 8",
        claim: "worst merge blocking time at K = 16, FAST against KAST",
        paper: "FAST 548 ms, KAST 232 ms",
        needs: &[FIG8_K],
        min_requests: FIG8_REQUESTS,
        deviation: "our merges reach a lower associativity than the paper's: its 548 ms is k = 33 \
                    by section II's formula (C_copy = 225 us), ours FAST's worst k is 5-6 on web \
                    and 11-13 on hotcold, and KAST's stays at k = 2 on web (docs/kast.md)",
    };
    let tol = "within 25% of the paper's (assumed: a stand-in trace)";
    let level = (|| {
        let fast = with_halves(
            |o| Some(worst_ms(w.at("fast", k)?, o)),
            |v| {
                Condition::within(
                    "FAST's worst blocking (ms)",
                    v,
                    PAPER_FAST_BLOCKING_MS,
                    BLOCKING_TOLERANCE,
                    tol,
                )
            },
        )?;
        let kast = with_halves(
            |o| Some(worst_ms(w.at("kast", k)?, o)),
            |v| {
                Condition::within(
                    "KAST's worst blocking (ms)",
                    v,
                    PAPER_KAST_BLOCKING_MS,
                    BLOCKING_TOLERANCE,
                    tol,
                )
            },
        )?;
        Some(vec![fast, kast])
    })();
    let shape = with_halves(
        |o| w.ratio("fast", "kast", k, worst_ms, o),
        |v| {
            Condition::at_least(
                "FAST's worst blocking / KAST's",
                v,
                1.0,
                "FAST above KAST (the paper: 2.4x)",
            )
        },
    );
    let ours = || {
        let ms = |f: &str| w.at(f, k).map_or(0.0, |p| worst_ms(p, Over::Whole));
        format!("FAST {:.1} ms, KAST {:.1} ms", ms("fast"), ms("kast"))
    };
    let fig8 = c.judged(w, ours, level, shape.map(|s| vec![s]));
    let c = Claim {
        source: "Fig. 8",
        claim: "SAST's blocking times generally smaller than KAST's (K = 16)",
        paper: "\"the blocking times of SAST are generally smaller than those of KAST\"",
        needs: &[FIG8_K],
        min_requests: FIG8_REQUESTS,
        deviation: DOC,
    };
    let cond = with_halves(
        |o| w.ratio("sast", "kast", k, mean_ms, o),
        |v| {
            Condition::at_most(
                "SAST's mean blocking per merge / KAST's at K = 16",
                v,
                1.0,
                "\"generally smaller\": smaller on average over the merges (Fig. 8 plots every merge)",
            )
        },
    );
    let ours = || {
        let ms = |f: &str, m: Metric| w.at(f, k).map_or(0.0, |p| m(p, Over::Whole));
        format!(
            "mean SAST {:.1} ms, KAST {:.1} ms (worst {:.1}, {:.1} ms)",
            ms("sast", mean_ms),
            ms("kast", mean_ms),
            ms("sast", worst_ms),
            ms("kast", worst_ms)
        )
    };
    let sast = c.judged(w, ours, cond.map(|c| vec![c]), None);
    [fig8, sast]
}

fn time_falls_with_k(w: &Web) -> PaperClaim {
    let c = Claim {
        source: "Fig. 9",
        claim: "SAST's and KAST's total I/O time fall as K grows",
        paper: "\"the execution times of SAST and [KAST] decrease as the value of K increases\"",
        needs: &PAPER_KS,
        min_requests: 0,
        deviation: DOC,
    };
    let mut level = Vec::new();
    let mut shape = Vec::new();
    for ftl in ["sast", "kast"] {
        let name = ftl.to_uppercase();
        let steps = with_halves(
            |o| {
                let t: Option<Vec<f64>> =
                    w.ks.iter()
                        .map(|&k| Some(seconds(w.at(ftl, k)?, o)))
                        .collect();
                let t = t?;
                if t.len() < 2 {
                    return None;
                }
                max_of(t.windows(2).map(|p| Some(p[1] / p[0])))
            },
            |v| {
                Condition::at_most(
                    &format!("{name}'s largest rise from one K to the next"),
                    v,
                    RISE,
                    "a steady fall: no rise above 2% (the run-to-run noise of a total)",
                )
            },
        );
        let ends = with_halves(
            |o| end_over_start(w, ftl, seconds, o),
            |v| {
                Condition::at_most(
                    &format!("{name}'s time at K = 32 / at K = 1"),
                    v,
                    1.0,
                    "lower at the largest K than at K = 1",
                )
            },
        );
        level.push(steps);
        level.push(ends.clone());
        shape.push(ends);
    }
    let level: Option<Vec<Condition>> = level.into_iter().collect();
    let shape: Option<Vec<Condition>> = shape.into_iter().collect();
    let ours = || {
        format!(
            "SAST {}; KAST {} s",
            list(w, "sast", &w.ks, seconds, 2),
            list(w, "kast", &w.ks, seconds, 2)
        )
    };
    c.judged(w, ours, level, shape)
}

#[cfg(test)]
mod tests;
