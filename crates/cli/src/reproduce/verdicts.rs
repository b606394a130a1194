//! The verdicts of one `reproduce` run as a small record (DIR/verdicts.json: the mode, each
//! study's time and each claim's verdict), and the comparison of two runs claim by claim:
//! `--against` a quick run's or a full run's record shows both columns and lists every claim
//! whose verdicts disagree. A quick verdict "not measured" beside any full verdict agrees (the
//! quick size says it cannot judge); anything else must be equal.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{ClaimRow, StudyOutcome};
use flashlab_sim::experiment::claims::Verdict;

/// One claim's verdict in the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimVerdict {
    pub source: String,
    pub claim: String,
    pub verdict: String,
    #[serde(default)]
    pub holds_on: usize,
    #[serde(default)]
    pub runs: usize,
}

/// One study's part of the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyVerdicts {
    pub seconds: f64,
    pub exit_code: i32,
    pub claims: Vec<ClaimVerdict>,
}

/// DIR/verdicts.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// "quick" or "full".
    pub mode: String,
    pub flashlab: String,
    pub seconds: f64,
    /// By study name.
    pub studies: BTreeMap<String, StudyVerdicts>,
}

impl Record {
    pub fn of(outcomes: &[StudyOutcome], quick: bool, seconds: f64) -> Self {
        let studies = outcomes
            .iter()
            .map(|o| {
                let claims = o
                    .claims
                    .iter()
                    .flatten()
                    .map(|c| ClaimVerdict {
                        source: c.source.clone(),
                        claim: c.claim.clone(),
                        verdict: c.verdict.clone(),
                        holds_on: c.holds_on,
                        runs: c.runs.len(),
                    })
                    .collect();
                let study = StudyVerdicts {
                    seconds: o.seconds,
                    exit_code: o.exit_code,
                    claims,
                };
                (o.plan.name.to_string(), study)
            })
            .collect();
        Record {
            mode: if quick { "quick" } else { "full" }.into(),
            flashlab: env!("CARGO_PKG_VERSION").into(),
            seconds,
            studies,
        }
    }

    /// Reads a record from a file, or from `verdicts.json` in a directory.
    pub fn read(path: &Path) -> Result<Self, String> {
        let file = if path.is_dir() {
            path.join("verdicts.json")
        } else {
            path.to_path_buf()
        };
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}:{}: not a flashlab reproduce verdicts record: {e}",
                file.display(),
                e.line()
            )
        })
    }

    /// The verdict of `claim` of `study`, if the record has it.
    pub fn verdict_of(&self, study: &str, c: &ClaimRow) -> Option<&ClaimVerdict> {
        self.studies
            .get(study)?
            .claims
            .iter()
            .find(|v| v.source == c.source && v.claim == c.claim)
    }
}

/// How a claim's verdicts in two runs compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agreement {
    Same,
    /// The quick run could not judge it.
    NotMeasuredAtQuick,
    Disagree,
    /// One of the runs has no such claim.
    Missing,
}

/// Compares a claim's verdict in the quick run with the full run's.
pub fn agreement(quick: Option<&str>, full: Option<&str>) -> Agreement {
    match (quick, full) {
        (Some(q), Some(f)) if q == f => Agreement::Same,
        (Some(q), Some(_)) if q == Verdict::NotMeasured.key() => Agreement::NotMeasuredAtQuick,
        (Some(_), Some(_)) => Agreement::Disagree,
        _ => Agreement::Missing,
    }
}

/// Lines naming every claim whose verdicts disagree (or that one run lacks) between this run
/// (`outcomes`, quick or not) and `other`.
pub fn disagreements(outcomes: &[StudyOutcome], quick: bool, other: &Record) -> Vec<String> {
    let mut lines = Vec::new();
    for o in outcomes {
        for c in o.claims.iter().flatten() {
            let theirs = other.verdict_of(o.plan.name, c).map(|v| v.verdict.as_str());
            let (q, f) = if quick {
                (Some(c.verdict.as_str()), theirs)
            } else {
                (theirs, Some(c.verdict.as_str()))
            };
            let what = match agreement(q, f) {
                Agreement::Same | Agreement::NotMeasuredAtQuick => continue,
                Agreement::Disagree => format!(
                    "quick {}, full {}",
                    q.unwrap_or_default(),
                    f.unwrap_or_default()
                ),
                Agreement::Missing => format!(
                    "only in the {} run",
                    if theirs.is_none() { "this" } else { "other" }
                ),
            };
            lines.push(format!("{} {}: {}: {what}", o.plan.name, c.source, c.claim));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_measured_at_quick_size_agrees_and_anything_else_must_match() {
        assert_eq!(agreement(Some("differs"), Some("differs")), Agreement::Same);
        assert_eq!(
            agreement(Some("not_measured"), Some("reproduced")),
            Agreement::NotMeasuredAtQuick
        );
        assert_eq!(
            agreement(Some("reproduced"), Some("differs")),
            Agreement::Disagree
        );
        assert_eq!(
            agreement(Some("reproduced"), Some("not_measured")),
            Agreement::Disagree,
            "a full run that cannot judge what the quick one did is a disagreement"
        );
        assert_eq!(agreement(None, Some("differs")), Agreement::Missing);
    }

    #[test]
    fn a_record_reads_from_its_directory_and_names_a_bad_file() {
        let dir = std::env::temp_dir().join(format!("flashlab-verdicts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let record = Record {
            mode: "full".into(),
            flashlab: "0".into(),
            seconds: 1.0,
            studies: BTreeMap::new(),
        };
        std::fs::write(
            dir.join("verdicts.json"),
            serde_json::to_string(&record).unwrap(),
        )
        .unwrap();
        assert_eq!(Record::read(&dir).unwrap(), record);
        std::fs::write(dir.join("bad.json"), "{\n\"mode\": 3}").unwrap();
        let e = Record::read(&dir.join("bad.json")).unwrap_err();
        assert!(
            e.contains("bad.json:2: not a flashlab reproduce verdicts record"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
