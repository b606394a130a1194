//! A paper's claim checked against a study's results: the shared shape every experiment's
//! `claims` list takes, so `flashlab reproduce` can put them in one table per paper.
//!
//! A claim is one sentence the paper says about a figure or table (a number, a direction, an
//! order, a ratio), the paper's value, ours, and a verdict. "Shape only" is for a claim whose
//! direction or order holds while its level differs (e.g. a drop of 38% where the paper has
//! 52%); "differs" always says why (a deviation documented in the study's docs).

use serde::Serialize;

/// How our result compares with the paper's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The paper's value, direction or order comes out (within the stated tolerance).
    Reproduced,
    /// The direction or order holds, the level does not.
    ShapeOnly,
    /// The result disagrees with the paper; `why` says why.
    Differs,
}

impl Verdict {
    /// Lower-case words for tables: "reproduced", "shape only", "differs".
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::ShapeOnly => "shape only",
            Verdict::Differs => "differs",
        }
    }

    /// `Reproduced` when `holds`, else `Differs`.
    pub fn from_holds(holds: bool) -> Self {
        if holds {
            Verdict::Reproduced
        } else {
            Verdict::Differs
        }
    }
}

/// One claim of a paper against our result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PaperClaim {
    /// Where the paper says it: "Fig. 15", "Table 5", "eq. 9", "section VI.C".
    pub source: String,
    /// The claim in a few words.
    pub claim: String,
    /// The paper's value or statement.
    pub paper: String,
    /// Our value.
    pub ours: String,
    pub verdict: Verdict,
    /// Why the verdict (required unless reproduced): the deviation and where it is documented.
    pub why: String,
}

impl PaperClaim {
    /// A claim with its verdict; `why` may be empty only when reproduced.
    pub fn new(
        source: impl Into<String>,
        claim: impl Into<String>,
        paper: impl Into<String>,
        ours: impl Into<String>,
        verdict: Verdict,
        why: impl Into<String>,
    ) -> Self {
        let claim = PaperClaim {
            source: source.into(),
            claim: claim.into(),
            paper: paper.into(),
            ours: ours.into(),
            verdict,
            why: why.into(),
        };
        debug_assert!(
            claim.verdict == Verdict::Reproduced || !claim.why.is_empty(),
            "a claim that is not reproduced says why: {}",
            claim.claim
        );
        claim
    }

    /// A claim the run has no figure for: "not measured", which differs, saying `why`.
    pub fn not_measured(source: &str, claim: &str, paper: &str, why: impl Into<String>) -> Self {
        PaperClaim::new(source, claim, paper, "not measured", Verdict::Differs, why)
    }

    /// A claim that holds or not (reproduced or differs). When it does not, `why` says why;
    /// a `why` that points to the docs ("docs/...") reads "does not hold on this run (docs/...)".
    pub fn holds(
        source: &str,
        claim: &str,
        paper: &str,
        ours: String,
        ok: bool,
        why: &str,
    ) -> Self {
        let why = match (ok, why.starts_with("docs/")) {
            (true, _) => String::new(),
            (false, true) => format!("does not hold on this run ({why})"),
            (false, false) => why.to_string(),
        };
        PaperClaim::new(source, claim, paper, ours, Verdict::from_holds(ok), why)
    }
}

/// The claims as text, one line each (verdict, claim, paper, ours) and a `why:` line under
/// those not reproduced.
pub fn claims_text(claims: &[PaperClaim]) -> String {
    let mut out = String::new();
    for c in claims {
        out += &format!(
            "{:<10} {}: {} | paper: {} | ours: {}\n",
            c.verdict.label(),
            c.source,
            c.claim,
            c.paper,
            c.ours
        );
        if !c.why.is_empty() {
            out += &format!("{:<10} why: {}\n", "", c.why);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_serialise_as_snake_case_and_label_in_words() {
        let json = serde_json::to_string(&Verdict::ShapeOnly).unwrap();
        assert_eq!(json, "\"shape_only\"");
        assert_eq!(Verdict::ShapeOnly.label(), "shape only");
        assert_eq!(Verdict::from_holds(true), Verdict::Reproduced);
        assert_eq!(Verdict::from_holds(false), Verdict::Differs);
    }
}
