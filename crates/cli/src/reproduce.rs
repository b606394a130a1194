//! `flashlab reproduce`: every `flashlab experiment` study of the chosen papers, run into
//! DIR/<study>/ as the study writes it, then one self-contained DIR/report.html (html.rs):
//! per paper the set-up, our plots beside the paper's values, the table of claims read from
//! each study's results.json (`claims`, the shape of `experiment::claims::PaperClaim`), and
//! the documented deviations. docs/reproduce.md.

mod html;
mod plan;
pub mod verdicts;

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Deserialize;

use crate::output::Output;
use crate::{EXIT_INPUT, EXIT_IO};
use flashlab_sim::experiment::claims::Verdict;
pub use plan::{Paper, StudyPlan, PAPERS};
use verdicts::Record;

#[derive(clap::Args, Debug)]
pub struct ReproduceArgs {
    /// Papers to reproduce (default: all): multithreaded-ftl-ucos, nftl-lookup-pagecache,
    /// kast, fmmu, part-ftl, or `all`
    #[arg(value_name = "PAPER")]
    papers: Vec<String>,
    /// Reduced sizes (devices, requests, task sets): all papers in about ten minutes on one
    /// core; a claim a quick size cannot judge says "not measured at quick size"
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// The studies' full sizes (the default without --quick; docs/reproduce.md gives its time)
    #[arg(long)]
    full: bool,
    /// A previous run's DIR (or its verdicts.json) of the other size: the summary shows both
    /// columns and lists every claim whose verdicts disagree (exit code 1 if any does)
    #[arg(long, value_name = "DIR|FILE")]
    against: Option<PathBuf>,
    /// Output directory: one subdirectory per study and report.html
    #[arg(short, long)]
    out: PathBuf,
}

/// One claim as a study's results.json lists it (the shape of `experiment::claims::PaperClaim`,
/// read generically: a study without claims, or with fields missing, still gives a report).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ClaimRow {
    pub source: String,
    pub claim: String,
    pub paper: String,
    pub ours: String,
    /// A `Verdict` key: `reproduced`, `fitted`, `shape_only`, `unstable`, `differs`,
    /// `not_measured`, `by_construction`.
    pub verdict: String,
    pub holds_on: usize,
    pub why: String,
    pub parameters: Vec<ParameterRow>,
    pub conditions: Vec<ConditionRow>,
    pub runs: Vec<RunRow>,
    pub size: String,
    pub margin: String,
}

/// A claim's parameter and where its value comes from.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ParameterRow {
    pub name: String,
    pub value: String,
    pub provenance: ProvenanceRow,
}

/// `kind` is `stated` (with `source`), `assumed` (with `why`) or `fitted` (with `to`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ProvenanceRow {
    pub kind: String,
    pub source: String,
    pub why: String,
    pub to: String,
}

/// A condition of a claim: its figure against a bound, with the tolerance.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ConditionRow {
    pub figure: String,
    /// `at_least` or `at_most`.
    pub cmp: String,
    pub bound: f64,
    pub tolerance: String,
    pub values: Vec<f64>,
}

/// A run a claim was judged on.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct RunRow {
    pub seed: u64,
    pub phase: String,
}

impl ClaimRow {
    /// "unstable (2 of 3)", "shape only", ...
    pub fn verdict_label(&self) -> String {
        match Verdict::ALL.iter().find(|v| v.key() == self.verdict) {
            Some(Verdict::Unstable) => {
                format!("unstable ({} of {})", self.holds_on, self.runs.len())
            }
            Some(v) => v.label().to_string(),
            None => self.verdict.clone(),
        }
    }

    /// "seeds 1, 2, 3" (with the phases when there are any).
    pub fn seeds_text(&self) -> String {
        let mut seeds: Vec<u64> = self.runs.iter().map(|r| r.seed).collect();
        seeds.sort_unstable();
        seeds.dedup();
        let phases = self.runs.iter().filter(|r| !r.phase.is_empty()).count();
        let list: Vec<String> = seeds.iter().map(u64::to_string).collect();
        let mut text = match seeds.len() {
            0 => String::new(),
            1 => format!("seed {}", list[0]),
            _ => format!("seeds {}", list.join(", ")),
        };
        if phases > 0 {
            text += &format!(" ({} runs over phases)", self.runs.len());
        }
        text
    }
}

/// What one study's run left: its exit code, wall time, claims and plots.
#[derive(Debug)]
pub struct StudyOutcome {
    pub plan: &'static StudyPlan,
    pub args: Vec<String>,
    pub exit_code: i32,
    pub seconds: f64,
    /// `None` when results.json has no `claims` list.
    pub claims: Option<Vec<ClaimRow>>,
    /// The settings as run (`study` or `options` of results.json), pretty JSON.
    pub settings: Option<String>,
    /// (file name, SVG text) of every plot the study wrote.
    pub plots: Vec<(String, String)>,
}

/// Verdict counts of a list of claims, in `Verdict::ALL` order (reproduced, fitted, shape
/// only, unstable, differs, not measured, by construction).
pub fn verdict_counts(claims: &[ClaimRow]) -> [usize; 7] {
    Verdict::ALL.map(|v| claims.iter().filter(|c| c.verdict == v.key()).count())
}

/// The papers named on the command line, in the order of [`PAPERS`], each once; an error
/// naming the unknown ones and the allowed names. Every name is checked before anything
/// runs; `all` (or no name) is every paper, and naming papers beside it adds nothing.
pub fn select_papers(names: &[String]) -> Result<Vec<&'static Paper>, String> {
    let unknown: Vec<&str> = names
        .iter()
        .filter(|n| n.as_str() != "all" && !PAPERS.iter().any(|p| p.name == n.as_str()))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        let known: Vec<&str> = PAPERS.iter().map(|p| p.name).collect();
        return Err(format!(
            "unknown paper{} {} (allowed: {}, all)",
            if unknown.len() > 1 { "s" } else { "" },
            unknown.join(", "),
            known.join(", ")
        ));
    }
    if names.is_empty() || names.iter().any(|n| n == "all") {
        return Ok(PAPERS.iter().collect());
    }
    Ok(PAPERS
        .iter()
        .filter(|p| names.iter().any(|n| n == p.name))
        .collect())
}

pub fn reproduce_command(a: &ReproduceArgs) -> i32 {
    let papers = match select_papers(&a.papers) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INPUT;
        }
    };
    let against = match a.against.as_deref().map(Record::read).transpose() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: --against: {e}");
            return EXIT_INPUT;
        }
    };
    // The directory and the report's path are checked before hours of runs.
    if let Err(e) = std::fs::create_dir_all(&a.out) {
        eprintln!("error: cannot create {}: {e}", a.out.display());
        return EXIT_IO;
    }
    let report_path = a.out.join("report.html");
    let report = match Output::create(&report_path) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_IO;
        }
    };
    let studies: Vec<&'static StudyPlan> = papers.iter().flat_map(|p| p.studies).collect();
    let started = Instant::now();
    let mut outcomes = Vec::new();
    for (i, plan) in studies.iter().enumerate() {
        eprintln!(
            "[{}/{}] {} ({}){}",
            i + 1,
            studies.len(),
            plan.name,
            if a.quick { "quick" } else { "full" },
            plan.expected(a.quick)
        );
        let outcome = run_study(plan, a.quick, &a.out);
        eprintln!(
            "[{}/{}] {}: {} in {:.1} s",
            i + 1,
            studies.len(),
            plan.name,
            if outcome.exit_code == 0 {
                "done".to_string()
            } else {
                format!("FAILED (exit code {})", outcome.exit_code)
            },
            outcome.seconds
        );
        outcomes.push(outcome);
    }
    let seconds = started.elapsed().as_secs_f64();
    let page = html::report(&papers, &outcomes, a.quick, seconds, against.as_ref());
    if let Err(e) = report.write_whole(page.as_bytes()) {
        eprintln!("error: {e}");
        return EXIT_IO;
    }
    let record = Record::of(&outcomes, a.quick, seconds);
    if let Err(e) = write_record(&a.out.join("verdicts.json"), &record) {
        eprintln!("error: {e}");
        return EXIT_IO;
    }
    print_summary(&papers, &outcomes, a.quick, against.as_ref());
    eprintln!("wrote {} ({seconds:.0} s)", report_path.display());
    let failed = outcomes.iter().map(|o| o.exit_code).find(|&c| c != 0);
    let disagree = against
        .as_ref()
        .is_some_and(|other| !verdicts::disagreements(&outcomes, a.quick, other).is_empty());
    failed.unwrap_or(i32::from(disagree))
}

fn write_record(path: &Path, record: &Record) -> Result<(), String> {
    let json = serde_json::to_string_pretty(record).map_err(|e| e.to_string())?;
    Output::create(path)
        .and_then(|o| o.write_whole(json.as_bytes()))
        .map_err(|e| e.to_string())
}

/// Column headers of the verdict counts, in `Verdict::ALL` order.
pub const COUNT_HEADERS: [&str; 7] = [
    "reproduced",
    "fitted",
    "shape only",
    "unstable",
    "differs",
    "not measured",
    "by constr.",
];

/// Verdict counts per paper on standard output ("quick/full" pairs with `--against`), then
/// every claim whose verdicts disagree between the two runs.
fn print_summary(
    papers: &[&Paper],
    outcomes: &[StudyOutcome],
    quick: bool,
    other: Option<&Record>,
) {
    if let Some(o) = other {
        println!(
            "verdicts as {}/{} (this run {}, the other {} from {})",
            if quick { "quick" } else { "full" },
            o.mode,
            if quick { "quick" } else { "full" },
            o.mode,
            o.flashlab
        );
    }
    let header: Vec<String> = COUNT_HEADERS.iter().map(|h| format!("{h:>13}")).collect();
    println!("{:<24}{} {:>8}", "paper", header.join(""), "failed");
    for paper in papers {
        let mine: Vec<&StudyOutcome> = outcomes
            .iter()
            .filter(|o| paper.studies.iter().any(|s| s.name == o.plan.name))
            .collect();
        let claims: Vec<ClaimRow> = mine
            .iter()
            .flat_map(|o| o.claims.clone().unwrap_or_default())
            .collect();
        let counts = verdict_counts(&claims);
        let theirs = other.map(|r| other_counts(r, paper));
        let cells: Vec<String> = (0..7)
            .map(|i| match &theirs {
                Some(t) => format!("{:>13}", format!("{}/{}", counts[i], t[i])),
                None => format!("{:>13}", counts[i]),
            })
            .collect();
        let failed = mine.iter().filter(|o| o.exit_code != 0).count();
        println!("{:<24}{} {failed:>8}", paper.name, cells.join(""));
    }
    if let Some(other) = other {
        let lines = verdicts::disagreements(outcomes, quick, other);
        if lines.is_empty() {
            println!(
                "every claim agrees with the {} run (or is not measured at quick size)",
                other.mode
            );
        } else {
            println!(
                "{} claim(s) disagree with the {} run:",
                lines.len(),
                other.mode
            );
            for l in lines {
                println!("  {l}");
            }
        }
    }
}

/// `paper`'s verdict counts in another run's record.
pub fn other_counts(record: &Record, paper: &Paper) -> [usize; 7] {
    let rows: Vec<ClaimRow> = paper
        .studies
        .iter()
        .filter_map(|s| record.studies.get(s.name))
        .flat_map(|s| &s.claims)
        .map(|c| ClaimRow {
            verdict: c.verdict.clone(),
            ..ClaimRow::default()
        })
        .collect();
    verdict_counts(&rows)
}

/// Runs one study through the `experiment` command into `out/<study>` and reads what it wrote.
fn run_study(plan: &'static StudyPlan, quick: bool, out: &Path) -> StudyOutcome {
    let dir = out.join(plan.name);
    let mut args: Vec<String> = ["flashlab", "experiment", plan.name]
        .iter()
        .chain(if quick { plan.quick } else { plan.full })
        .map(|s| s.to_string())
        .collect();
    args.push("--out".into());
    args.push(dir.display().to_string());
    let started = Instant::now();
    let exit_code = crate::run(args.clone());
    let seconds = started.elapsed().as_secs_f64();
    let json = read_results(&dir.join("results.json"));
    StudyOutcome {
        plan,
        args: args[1..].to_vec(),
        exit_code,
        seconds,
        claims: json.as_ref().and_then(claims_of),
        settings: json.as_ref().and_then(settings_of),
        plots: read_plots(&dir),
    }
}

fn read_results(path: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// The `claims` list of a results.json (top level, or under `results`).
pub fn claims_of(json: &serde_json::Value) -> Option<Vec<ClaimRow>> {
    let list = json
        .get("claims")
        .or_else(|| json.get("results").and_then(|r| r.get("claims")))?;
    let rows: Vec<ClaimRow> = serde_json::from_value(list.clone()).ok()?;
    (!rows.is_empty()).then_some(rows)
}

/// The study's settings as run, without its (long) lists of points.
fn settings_of(json: &serde_json::Value) -> Option<String> {
    let mut settings = json
        .get("study")
        .or_else(|| json.get("options"))
        .filter(|s| s.is_object())?
        .clone();
    if let Some(map) = settings.as_object_mut() {
        map.retain(|_, v| v.as_array().is_none_or(|a| a.len() <= 40));
    }
    serde_json::to_string_pretty(&settings).ok()
}

/// Every `*.svg` of `dir`, by name.
fn read_plots(dir: &Path) -> Vec<(String, String)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut plots: Vec<(String, String)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "svg"))
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            Some((name, std::fs::read_to_string(&p).ok()?))
        })
        .collect();
    plots.sort();
    plots
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn papers_are_selected_in_order_and_unknown_names_listed() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let picked = select_papers(&names(&["part-ftl", "kast"])).unwrap();
        assert_eq!(
            picked.iter().map(|p| p.name).collect::<Vec<_>>(),
            ["kast", "part-ftl"]
        );
        assert_eq!(select_papers(&names(&["all"])).unwrap().len(), 5);
        assert_eq!(select_papers(&[]).unwrap().len(), 5);
        let e = select_papers(&names(&["kast", "ftl2", "bast"])).unwrap_err();
        assert!(e.starts_with("unknown papers ftl2, bast (allowed: "), "{e}");
        assert!(
            e.contains("multithreaded-ftl-ucos") && e.ends_with(", all)"),
            "{e}"
        );
        // Every name is checked, `all` or not; `all` beside names is every paper, once each.
        let e = select_papers(&names(&["all", "bogus"])).unwrap_err();
        assert!(e.starts_with("unknown paper bogus (allowed: "), "{e}");
        assert_eq!(select_papers(&names(&["all", "kast"])).unwrap().len(), 5);
        assert_eq!(select_papers(&names(&["kast", "kast"])).unwrap().len(), 1);
    }

    #[test]
    fn every_study_of_the_experiment_command_belongs_to_one_paper() {
        let mut studies: Vec<&str> = PAPERS
            .iter()
            .flat_map(|p| p.studies.iter().map(|s| s.name))
            .collect();
        studies.sort();
        assert_eq!(
            studies,
            [
                "fmmu",
                "kast",
                "mt-ftl",
                "nftl",
                "part-admission",
                "part-cosmos",
                "part-schedulability"
            ]
        );
    }

    #[test]
    fn claims_are_read_generically_and_missing_ones_are_none() {
        let json = serde_json::json!({ "claims": [
            { "source": "Fig. 5", "claim": "c", "paper": "p", "ours": "o",
              "verdict": "shape_only", "why": "w" },
            { "claim": "only a claim", "verdict": "reproduced" }
        ]});
        let rows = claims_of(&json).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].source, "");
        assert_eq!(verdict_counts(&rows), [1, 0, 1, 0, 0, 0, 0]);
        assert!(claims_of(&serde_json::json!({ "points": [] })).is_none());
        assert!(claims_of(&serde_json::json!({ "claims": [] })).is_none());
        let nested = serde_json::json!({ "results": { "claims": [{ "verdict": "differs" }] } });
        assert_eq!(
            verdict_counts(&claims_of(&nested).unwrap()),
            [0, 0, 0, 0, 1, 0, 0]
        );
    }
}
