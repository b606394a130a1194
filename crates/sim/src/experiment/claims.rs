//! A paper's claim checked against a study's results, and the one place its verdict is decided.
//!
//! A claim is one sentence the paper says about a figure or table (a number, a direction, an
//! order, a ratio). It carries its evidence: the parameters it ran with and where each comes
//! from (stated by the paper, assumed by us, or fitted to one of the paper's results), the
//! conditions its figure must meet (each a value against a bound, with the tolerance and its
//! reason), one value per run (seed and, where the paper leaves a set-up choice open, phase),
//! and the size it was judged at. [`PaperClaim::judge`] turns that evidence into a verdict with
//! the rules below; every study builds its claims with [`PaperClaim::judged`] (or declares one
//! [`PaperClaim::by_construction`] or [`PaperClaim::not_measured`]), one run at a time, and
//! [`merge_runs`] joins the runs' claims and judges them together.
//!
//! The rules (issue 26):
//! - *reproduced*: every condition holds on every run (at least [`MIN_RUNS`] seeds, or one exact
//!   computation), each with a margin beyond the run-to-run spread, no parameter fitted, and the
//!   figure stationary (its first and second half agree with the whole) where it is a rate. The
//!   spread is that of the seeds of one set-up: with several phases (set-up choices), the
//!   largest spread within a phase, not the difference a choice makes (issue 27);
//! - *fitted*: as reproduced, but a parameter was fitted to one of the paper's results;
//! - *shape only*: the level does not hold everywhere, the direction (the `shape` conditions)
//!   holds on every run beyond the spread;
//! - *unstable (k of n)*: holds on some runs only (per phase when there are several), or on
//!   all with a margin within the spread;
//! - *differs*: holds on no run; `why` names our deviation, or the paper's inconsistency;
//! - *not measured*: no value, fewer runs than a verdict needs, or a figure not stationary at
//!   the run's size (unless another condition fails on that run over its window and both
//!   halves, which decides the run); `why` says what would measure it;
//! - *by construction*: the model guarantees it (listed, not counted).

use serde::{Deserialize, Serialize};

/// Seeds a simulated claim needs for any verdict but "not measured".
pub const MIN_RUNS: usize = 3;

/// How our result compares with the paper's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Holds at the paper's stated parameters on every run, beyond the spread.
    Reproduced,
    /// Holds only with a parameter fitted to one of the paper's results.
    Fitted,
    /// The direction or order holds, the level does not.
    ShapeOnly,
    /// Holds on some runs only, or within the run-to-run spread.
    Unstable,
    /// Holds on no run; `why` says why.
    Differs,
    /// No figure to judge (or too few runs, or not stationary); `why` says what would measure it.
    NotMeasured,
    /// Guaranteed by the model: listed, not counted.
    ByConstruction,
}

impl Verdict {
    /// Every verdict, in table order.
    pub const ALL: [Verdict; 7] = [
        Verdict::Reproduced,
        Verdict::Fitted,
        Verdict::ShapeOnly,
        Verdict::Unstable,
        Verdict::Differs,
        Verdict::NotMeasured,
        Verdict::ByConstruction,
    ];

    /// Lower-case words for tables: "reproduced", "shape only", ...
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::Fitted => "fitted",
            Verdict::ShapeOnly => "shape only",
            Verdict::Unstable => "unstable",
            Verdict::Differs => "differs",
            Verdict::NotMeasured => "not measured",
            Verdict::ByConstruction => "by construction",
        }
    }

    /// The JSON name ("shape_only").
    pub fn key(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::Fitted => "fitted",
            Verdict::ShapeOnly => "shape_only",
            Verdict::Unstable => "unstable",
            Verdict::Differs => "differs",
            Verdict::NotMeasured => "not_measured",
            Verdict::ByConstruction => "by_construction",
        }
    }
}

/// Where a parameter's value comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Provenance {
    /// The paper states it; `source` says where ("Table IV").
    Stated { source: String },
    /// The paper is silent; `why` says why we chose it.
    Assumed { why: String },
    /// Chosen so that one of the paper's results comes out; `to` names that result.
    Fitted { to: String },
}

/// One parameter a claim ran with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Parameter {
    pub name: String,
    pub value: String,
    pub provenance: Provenance,
}

impl Parameter {
    pub fn stated(name: &str, value: impl ToString, source: &str) -> Self {
        Self::with(
            name,
            value,
            Provenance::Stated {
                source: source.into(),
            },
        )
    }
    pub fn assumed(name: &str, value: impl ToString, why: &str) -> Self {
        Self::with(name, value, Provenance::Assumed { why: why.into() })
    }
    pub fn fitted(name: &str, value: impl ToString, to: &str) -> Self {
        Self::with(name, value, Provenance::Fitted { to: to.into() })
    }
    fn with(name: &str, value: impl ToString, provenance: Provenance) -> Self {
        Parameter {
            name: name.into(),
            value: value.to_string(),
            provenance,
        }
    }
}

/// Which side of its bound a figure must be on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cmp {
    AtLeast,
    AtMost,
}

/// One condition of a claim: a figure (one value per run) against a bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    /// The figure, with its unit: "DFTL's random reads / ideal's".
    pub figure: String,
    pub cmp: Cmp,
    pub bound: f64,
    /// Why this bound: the paper's words or our tolerance and its reason.
    pub tolerance: String,
    /// One value per run, in the claim's `runs` order.
    pub values: Vec<f64>,
    /// Per run, the figure over the first and the second half of its window (rates and worst
    /// cases: `None` for a figure that has no halves).
    #[serde(default)]
    pub halves: Vec<Option<(f64, f64)>>,
}

impl Condition {
    pub fn at_least(figure: &str, value: f64, bound: f64, tolerance: &str) -> Self {
        Self::new(figure, Cmp::AtLeast, value, bound, tolerance)
    }
    pub fn at_most(figure: &str, value: f64, bound: f64, tolerance: &str) -> Self {
        Self::new(figure, Cmp::AtMost, value, bound, tolerance)
    }
    /// `|value / target - 1| <= rel`: the figure is the relative error.
    pub fn within(figure: &str, value: f64, target: f64, rel: f64, tolerance: &str) -> Self {
        let err = if target == 0.0 {
            value.abs()
        } else {
            (value / target - 1.0).abs()
        };
        Self::new(
            &format!("|{figure} / {} - 1|", fmt_num(target)),
            Cmp::AtMost,
            err,
            rel,
            tolerance,
        )
    }
    /// A yes/no fact (an order among several values): 1 when it holds, 0 when not, against
    /// the bound 1 (no spread, no margin: prefer a numeric figure where there is one).
    pub fn fact(figure: &str, holds: bool) -> Self {
        Self::new(
            figure,
            Cmp::AtLeast,
            f64::from(u8::from(holds)),
            1.0,
            "must hold",
        )
    }
    fn new(figure: &str, cmp: Cmp, value: f64, bound: f64, tolerance: &str) -> Self {
        Condition {
            figure: figure.into(),
            cmp,
            bound,
            tolerance: tolerance.into(),
            values: vec![value],
            halves: vec![None],
        }
    }

    /// The figure over the two halves of the run's window (one run's condition).
    pub fn with_halves(mut self, first: f64, second: f64) -> Self {
        if let Some(h) = self.halves.last_mut() {
            *h = Some((first, second));
        }
        self
    }

    /// How far `value` is on the right side of the bound (negative: on the wrong side).
    pub fn margin_of(&self, value: f64) -> f64 {
        match self.cmp {
            Cmp::AtLeast => value - self.bound,
            Cmp::AtMost => self.bound - value,
        }
    }

    /// Whether the condition holds on run `i`.
    pub fn holds_on(&self, i: usize) -> bool {
        self.values
            .get(i)
            .is_some_and(|&v| !v.is_nan() && self.margin_of(v) >= 0.0)
    }

    /// The smallest margin over the runs.
    pub fn margin(&self) -> f64 {
        self.values
            .iter()
            .map(|&v| self.margin_of(v))
            .fold(f64::INFINITY, f64::min)
    }

    /// Largest minus smallest value over the runs.
    pub fn spread(&self) -> f64 {
        let max = self
            .values
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let min = self.values.iter().copied().fold(f64::INFINITY, f64::min);
        if self.values.is_empty() {
            0.0
        } else {
            max - min
        }
    }

    /// Holds on every run with a margin beyond the spread (or exactly, with no spread).
    pub fn robust(&self) -> bool {
        self.robust_within(&vec![0; self.values.len()])
    }

    /// Largest minus smallest value among the runs of one group (`group[i]`: run i's set-up,
    /// its phase), the largest over the groups: the run-to-run spread of one set-up, not the
    /// difference that a set-up choice makes.
    pub fn spread_within(&self, group: &[usize]) -> f64 {
        let mut spread: f64 = 0.0;
        for g in group
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>()
        {
            let values = self
                .values
                .iter()
                .zip(group)
                .filter(|&(_, &h)| h == g)
                .map(|(&v, _)| v);
            let (min, max) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
            if min <= max {
                spread = spread.max(max - min);
            }
        }
        spread
    }

    /// [`Condition::robust`] with the spread taken within each group of runs.
    pub fn robust_within(&self, group: &[usize]) -> bool {
        let all = (0..self.values.len()).all(|i| self.holds_on(i));
        let spread = if group.len() == self.values.len() {
            self.spread_within(group)
        } else {
            self.spread()
        };
        all && !self.values.is_empty() && (spread == 0.0 || self.margin() > spread)
    }

    /// Whether run `i`'s halves fall on other sides of the bound than its whole window.
    fn unsteady_on(&self, i: usize) -> bool {
        let Some(Some((a, b))) = self.halves.get(i) else {
            return false;
        };
        let whole = self.holds_on(i);
        (self.margin_of(*a) >= 0.0) != whole || (self.margin_of(*b) >= 0.0) != whole
    }

    /// Whether run `i` fails this condition over its window and over each half (or has no
    /// halves): a failure no window length would undo.
    fn fails_steadily_on(&self, i: usize) -> bool {
        !self.holds_on(i) && !self.unsteady_on(i)
    }
}

/// One run a claim was judged on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    pub seed: u64,
    /// The free set-up choice this run took (a phase, an offset), empty when none.
    #[serde(default)]
    pub phase: String,
}

/// What a claim is about and how it was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Simulated: needs [`MIN_RUNS`] seeds.
    Simulated,
    /// Computed exactly (a formula, an analysis): one run suffices.
    Exact,
    /// Guaranteed by the model.
    Construction,
    /// No figure.
    Unmeasured,
}

/// One claim of a paper against our result, with its evidence and verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaperClaim {
    /// Where the paper says it: "Fig. 15", "Table 5", "eq. 9", "section VI.C".
    pub source: String,
    /// The claim in a few words.
    pub claim: String,
    /// The paper's value or statement.
    pub paper: String,
    /// Our value (per run when the runs differ).
    pub ours: String,
    pub verdict: Verdict,
    /// Holds on this many of the runs (all conditions).
    pub holds_on: usize,
    /// Why the verdict (empty only when reproduced): the rule's reason, then the study's.
    pub why: String,
    /// The study's reason when the claim does not hold: our deviation and where it is
    /// documented, or "paper inconsistent: ..." with the arithmetic.
    pub deviation: String,
    pub parameters: Vec<Parameter>,
    /// The level: every condition must hold.
    pub conditions: Vec<Condition>,
    /// The direction or order alone (for "shape only"); empty when the claim has none.
    pub shape: Vec<Condition>,
    pub runs: Vec<Run>,
    /// The sizes judged at: "quick: 5,000 requests a run".
    pub size: String,
    pub basis: Basis,
    /// The smallest margin of the level's conditions, each in its figure's unit, in words.
    pub margin: String,
}

impl PaperClaim {
    /// A claim judged on conditions, for one run (`merge_runs` joins the runs). `deviation`
    /// says why, should it not hold (a "docs/..." reference, or "paper inconsistent: ...").
    pub fn judged(
        source: &str,
        claim: &str,
        paper: &str,
        ours: String,
        conditions: Vec<Condition>,
        deviation: &str,
    ) -> Self {
        let mut c = Self::bare(source, claim, paper, ours, Basis::Simulated);
        c.conditions = conditions;
        c.deviation = deviation.into();
        c.runs = vec![Run {
            seed: 0,
            phase: String::new(),
        }];
        c.judge();
        c
    }

    /// A claim our model guarantees (listed, not counted); `why` says what guarantees it.
    pub fn by_construction(source: &str, claim: &str, paper: &str, why: &str) -> Self {
        let mut c = Self::bare(
            source,
            claim,
            paper,
            "holds by construction".into(),
            Basis::Construction,
        );
        c.deviation = why.into();
        c.judge();
        c
    }

    /// A claim the run has no figure for; `what_would` says what would measure it.
    pub fn not_measured(
        source: &str,
        claim: &str,
        paper: &str,
        what_would: impl Into<String>,
    ) -> Self {
        let mut c = Self::bare(
            source,
            claim,
            paper,
            "not measured".into(),
            Basis::Unmeasured,
        );
        c.deviation = what_would.into();
        c.judge();
        c
    }

    fn bare(source: &str, claim: &str, paper: &str, ours: String, basis: Basis) -> Self {
        PaperClaim {
            source: source.into(),
            claim: claim.into(),
            paper: paper.into(),
            ours,
            verdict: Verdict::NotMeasured,
            holds_on: 0,
            why: String::new(),
            deviation: String::new(),
            parameters: Vec::new(),
            conditions: Vec::new(),
            shape: Vec::new(),
            runs: Vec::new(),
            size: String::new(),
            basis,
            margin: String::new(),
        }
    }

    /// The direction or order that makes the claim "shape only" when the level fails.
    pub fn with_shape(mut self, shape: Vec<Condition>) -> Self {
        self.shape = shape;
        self.judge();
        self
    }

    pub fn with_parameters(mut self, parameters: Vec<Parameter>) -> Self {
        self.parameters = parameters;
        self.judge();
        self
    }

    /// Computed exactly (an analysis, a formula): one run is enough.
    pub fn exact(mut self) -> Self {
        self.basis = Basis::Exact;
        self.judge();
        self
    }

    /// The run (seed, phase) this claim's values come from, and the size it ran at.
    pub fn on_run(mut self, seed: u64, phase: &str, size: &str) -> Self {
        self.runs = match self.basis {
            Basis::Simulated | Basis::Exact => vec![Run {
                seed,
                phase: phase.into(),
            }],
            _ => Vec::new(),
        };
        self.size = size.into();
        self.judge();
        self
    }

    /// Whether a parameter was fitted to one of the paper's results.
    pub fn is_fitted(&self) -> bool {
        self.parameters
            .iter()
            .any(|p| matches!(p.provenance, Provenance::Fitted { .. }))
    }

    /// Runs on which every level condition holds.
    fn runs_holding(&self) -> usize {
        (0..self.runs.len())
            .filter(|&i| self.conditions.iter().all(|c| c.holds_on(i)))
            .count()
    }

    /// Decides `verdict`, `holds_on`, `why` and `margin` from the evidence (the rules of the
    /// module doc). Call after changing the evidence.
    pub fn judge(&mut self) {
        let n = self.runs.len();
        self.holds_on = self.runs_holding();
        self.margin = self.margin_text();
        let (verdict, why) = self.rule(n);
        self.verdict = verdict;
        self.why = match (verdict, self.deviation.is_empty()) {
            (Verdict::Reproduced, _) => String::new(),
            (_, true) => why,
            (_, false) if why.is_empty() => self.deviation.clone(),
            (_, false) => format!("{why}; {}", self.deviation),
        };
    }

    fn rule(&self, n: usize) -> (Verdict, String) {
        match self.basis {
            Basis::Construction => return (Verdict::ByConstruction, String::new()),
            Basis::Unmeasured => return (Verdict::NotMeasured, String::new()),
            _ if self.conditions.is_empty() || n == 0 => {
                return (Verdict::NotMeasured, "no figure".into())
            }
            Basis::Simulated if n < MIN_RUNS => {
                return (
                    Verdict::NotMeasured,
                    format!("judged on {n} run(s); a verdict needs {MIN_RUNS} seeds"),
                )
            }
            _ => {}
        }
        // A run decided by a condition that fails steadily fails whatever its other
        // conditions' halves do: their stationarity cannot change its outcome.
        let decided = |i: usize| self.conditions.iter().any(|c| c.fails_steadily_on(i));
        if let Some((c, i)) = self.conditions.iter().find_map(|c| {
            (0..c.values.len())
                .find(|&i| c.unsteady_on(i) && !decided(i))
                .map(|i| (c, i))
        }) {
            let (a, b) = c.halves[i].unwrap_or_default();
            return (
                Verdict::NotMeasured,
                format!(
                    "not stationary at this size: {} is {} over the first half of run {} and {} over the second (bound {})",
                    c.figure,
                    fmt_num(a),
                    i + 1,
                    fmt_num(b),
                    fmt_num(c.bound)
                ),
            );
        }
        let k = self.holds_on;
        let group = self.phase_groups();
        let robust = |c: &Condition| c.robust_within(&group);
        if k == n && self.conditions.iter().all(robust) {
            return if self.is_fitted() {
                (
                    Verdict::Fitted,
                    format!("holds with {}", self.fitted_names()),
                )
            } else {
                (Verdict::Reproduced, String::new())
            };
        }
        let level = if k == n {
            let c = self.conditions.iter().find(|c| !robust(c));
            format!(
                "holds on {n} of {n} runs, but {} has a margin within its run-to-run spread",
                c.map_or("a figure", |c| c.figure.as_str())
            )
        } else {
            format!("holds on {k} of {n} runs{}", self.holds_per_phase())
        };
        if !self.shape.is_empty() && self.shape.iter().all(robust) {
            return (
                Verdict::ShapeOnly,
                format!("the direction holds; the level {level}"),
            );
        }
        if k > 0 {
            return (Verdict::Unstable, level);
        }
        (Verdict::Differs, String::new())
    }

    /// Each run's phase as a group index (runs of one phase share it).
    fn phase_groups(&self) -> Vec<usize> {
        let mut phases: Vec<&str> = Vec::new();
        self.runs
            .iter()
            .map(|r| match phases.iter().position(|&p| p == r.phase) {
                Some(i) => i,
                None => {
                    phases.push(&r.phase);
                    phases.len() - 1
                }
            })
            .collect()
    }

    /// " (web: 0 of 3; hotcold: 3 of 3)" when the runs have several phases, else "".
    fn holds_per_phase(&self) -> String {
        let group = self.phase_groups();
        let phases = group.iter().max().map_or(0, |&g| g + 1);
        if phases < 2 {
            return String::new();
        }
        let parts: Vec<String> = (0..phases)
            .map(|g| {
                let runs: Vec<usize> = (0..self.runs.len()).filter(|&i| group[i] == g).collect();
                let holding = runs
                    .iter()
                    .filter(|&&i| self.conditions.iter().all(|c| c.holds_on(i)))
                    .count();
                let name = &self.runs[runs[0]].phase;
                format!("{name}: {holding} of {}", runs.len())
            })
            .collect();
        format!(" ({})", parts.join("; "))
    }

    fn fitted_names(&self) -> String {
        let names: Vec<String> = self
            .parameters
            .iter()
            .filter_map(|p| match &p.provenance {
                Provenance::Fitted { to } => {
                    Some(format!("{} = {} fitted to {to}", p.name, p.value))
                }
                _ => None,
            })
            .collect();
        names.join(", ")
    }

    fn margin_text(&self) -> String {
        let parts: Vec<String> = self
            .conditions
            .iter()
            .map(|c| {
                format!(
                    "{}: {} (spread {})",
                    c.figure,
                    fmt_num(c.margin()),
                    fmt_num(c.spread_within(&self.phase_groups()))
                )
            })
            .collect();
        parts.join("; ")
    }

    /// The same claim with each level condition's values replaced by `f(condition)`, re-judged:
    /// what the verdict would be had the runs measured that (the tests' "just past the bound").
    pub fn rejudged_with(&self, f: impl Fn(&Condition) -> Vec<f64>) -> PaperClaim {
        let mut c = self.clone();
        for cond in &mut c.conditions {
            cond.values = f(cond);
            cond.halves = vec![None; cond.values.len()];
        }
        c.judge();
        c
    }

    /// A label with the share for unstable claims: "unstable (2 of 3)".
    pub fn verdict_label(&self) -> String {
        match self.verdict {
            Verdict::Unstable => format!("unstable ({} of {})", self.holds_on, self.runs.len()),
            v => v.label().to_string(),
        }
    }
}

/// What a reviewer would reject in a list of claims, one line per problem (empty: none):
/// a judged claim without parameters, size or a
/// tolerance; and a claim whose rule cannot fail: pushing any one condition just past its
/// bound (the others exactly at theirs, no spread) must leave it neither reproduced nor
/// fitted, and every condition exactly at its bound must make it reproduced or fitted.
pub fn audit(claims: &[PaperClaim]) -> Vec<String> {
    let mut problems = Vec::new();
    for c in claims {
        let name = format!("{}: {}", c.source, c.claim);
        if !matches!(c.basis, Basis::Simulated | Basis::Exact) {
            continue;
        }
        if c.parameters.is_empty() {
            problems.push(format!("{name}: no parameters"));
        }
        if c.size.is_empty() {
            problems.push(format!("{name}: no size"));
        }
        if let Some(t) = c.conditions.iter().find(|t| t.tolerance.is_empty()) {
            problems.push(format!("{name}: {} has no tolerance", t.figure));
        }
        problems.extend(flip_problem(c).map(|p| format!("{name}: {p}")));
    }
    problems
}

fn flip_problem(c: &PaperClaim) -> Option<String> {
    let n = c.runs.len().max(MIN_RUNS);
    let mut base = c.clone();
    base.runs = (1..=n as u64)
        .map(|seed| Run {
            seed,
            phase: String::new(),
        })
        .collect();
    base.shape.clear();
    let at = base.rejudged_with(|t| vec![t.bound; n]);
    if !matches!(at.verdict, Verdict::Reproduced | Verdict::Fitted) {
        return Some(format!("at its bounds it is {}", at.verdict_label()));
    }
    for (j, t) in c.conditions.iter().enumerate() {
        let past = base.rejudged_with(|u| {
            let v = if u.figure == t.figure && u.bound == t.bound {
                just_past(u)
            } else {
                u.bound
            };
            vec![v; n]
        });
        if matches!(past.verdict, Verdict::Reproduced | Verdict::Fitted) {
            return Some(format!("condition {} ({}) cannot fail", j + 1, t.figure));
        }
    }
    None
}

/// A value just on the wrong side of `t`'s bound.
fn just_past(t: &Condition) -> f64 {
    let eps = (t.bound.abs() * 1e-6).max(1e-9);
    match t.cmp {
        Cmp::AtLeast => t.bound - eps,
        Cmp::AtMost => t.bound + eps,
    }
}

/// Joins the claims of several runs (each a study's `claims` for one seed or phase, in the
/// same order) into one claim each, values per run, and judges them. A claim missing from a
/// run (a study that skipped it) is kept from the runs that have it; `ours` lists each run's
/// value when they differ.
pub fn merge_runs(runs: Vec<Vec<PaperClaim>>) -> Vec<PaperClaim> {
    let mut merged: Vec<PaperClaim> = Vec::new();
    let mut ours: Vec<Vec<(String, String)>> = Vec::new();
    for claims in runs {
        for c in claims {
            let label = c.runs.first().map(run_label).unwrap_or_default();
            match merged
                .iter()
                .position(|m| m.source == c.source && m.claim == c.claim)
            {
                Some(i) => {
                    ours[i].push((label, c.ours.clone()));
                    absorb(&mut merged[i], c);
                }
                None => {
                    ours.push(vec![(label, c.ours.clone())]);
                    merged.push(c);
                }
            }
        }
    }
    for (c, shown) in merged.iter_mut().zip(ours) {
        c.ours = ours_text(&shown);
        c.judge();
    }
    merged
}

fn absorb(into: &mut PaperClaim, c: PaperClaim) {
    if c.basis != into.basis || c.conditions.len() != into.conditions.len() {
        // A run that could not measure what another did keeps the other's evidence, and its
        // reason joins the claim's (the merged claim, judged on fewer runs, says why).
        let (mut measured, unmeasured) = if into.basis == Basis::Unmeasured {
            (
                c,
                std::mem::replace(
                    into,
                    PaperClaim::bare("", "", "", String::new(), Basis::Unmeasured),
                ),
            )
        } else {
            (
                std::mem::replace(
                    into,
                    PaperClaim::bare("", "", "", String::new(), Basis::Unmeasured),
                ),
                c,
            )
        };
        if unmeasured.basis == Basis::Unmeasured && measured.basis != Basis::Unmeasured {
            let note = format!("a run not measured: {}", unmeasured.deviation);
            if !measured.deviation.contains(&note) {
                measured.deviation = if measured.deviation.is_empty() {
                    note
                } else {
                    format!("{}; {note}", measured.deviation)
                };
            }
        }
        *into = measured;
        return;
    }
    into.runs.extend(c.runs);
    for (a, b) in into.conditions.iter_mut().zip(c.conditions) {
        a.values.extend(b.values);
        a.halves.extend(b.halves);
    }
    for (a, b) in into.shape.iter_mut().zip(c.shape) {
        a.values.extend(b.values);
        a.halves.extend(b.halves);
    }
}

fn run_label(r: &Run) -> String {
    if r.phase.is_empty() {
        format!("seed {}", r.seed)
    } else {
        format!("seed {}, {}", r.seed, r.phase)
    }
}

fn ours_text(shown: &[(String, String)]) -> String {
    let first = &shown[0].1;
    if shown.iter().all(|(_, o)| o == first) {
        return first.clone();
    }
    let parts: Vec<String> = shown.iter().map(|(l, o)| format!("{l}: {o}")).collect();
    parts.join("; ")
}

/// A number for messages: integers plainly, others to 4 significant digits.
pub fn fmt_num(x: f64) -> String {
    if x.is_infinite() || x.is_nan() {
        return format!("{x}");
    }
    if x == x.round() && x.abs() < 1e15 {
        return format!("{x:.0}");
    }
    let digits = (3 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{x:.digits$}")
}

/// Counts per verdict, in [`Verdict::ALL`] order.
pub fn verdict_counts(claims: &[PaperClaim]) -> [usize; 7] {
    let mut counts = [0; 7];
    for c in claims {
        let i = Verdict::ALL
            .iter()
            .position(|v| *v == c.verdict)
            .unwrap_or(0);
        counts[i] += 1;
    }
    counts
}

/// The claims as text, one line each (verdict, claim, paper, ours) and `why:`, `margin:` and
/// `params:` lines under it.
pub fn claims_text(claims: &[PaperClaim]) -> String {
    let mut out = String::new();
    for c in claims {
        out += &format!(
            "{:<15} {}: {} | paper: {} | ours: {}\n",
            c.verdict_label(),
            c.source,
            c.claim,
            c.paper,
            c.ours
        );
        if !c.why.is_empty() {
            out += &format!("{:<15} why: {}\n", "", c.why);
        }
        if !c.margin.is_empty() {
            out += &format!("{:<15} margin: {}\n", "", c.margin);
        }
        let fitted: Vec<String> = c
            .parameters
            .iter()
            .filter_map(|p| match &p.provenance {
                Provenance::Fitted { to } => {
                    Some(format!("{} = {} (fitted to {to})", p.name, p.value))
                }
                _ => None,
            })
            .collect();
        if !fitted.is_empty() {
            out += &format!("{:<15} fitted: {}\n", "", fitted.join(", "));
        }
    }
    out
}

#[cfg(test)]
mod tests;
