//! `flashlab reproduce`: every `flashlab experiment` study of the chosen papers, run into
//! DIR/<study>/ as the study writes it, then one self-contained DIR/report.html (html.rs):
//! per paper the set-up, our plots beside the paper's values, the table of claims read from
//! each study's results.json (`claims`, the shape of `experiment::claims::PaperClaim`), and
//! the documented deviations. docs/reproduce.md.

mod html;
mod plan;

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Deserialize;

use crate::output::Output;
use crate::{EXIT_INPUT, EXIT_IO};
pub use plan::{Paper, StudyPlan, PAPERS};

#[derive(clap::Args, Debug)]
pub struct ReproduceArgs {
    /// Papers to reproduce (default: all): multithreaded-ftl-ucos, nftl-lookup-pagecache,
    /// kast, fmmu, part-ftl, or `all`
    #[arg(value_name = "PAPER")]
    papers: Vec<String>,
    /// Reduced sizes (devices, requests, task sets): all papers in under ten minutes on one
    /// core; the report says which sizes ran
    #[arg(long)]
    quick: bool,
    /// Output directory: one subdirectory per study and report.html
    #[arg(short, long)]
    out: PathBuf,
}

/// One claim as a study's results.json lists it (read generically: a study without claims,
/// or with fields missing, still gives a report).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ClaimRow {
    pub source: String,
    pub claim: String,
    pub paper: String,
    pub ours: String,
    /// `reproduced`, `shape_only` or `differs`.
    pub verdict: String,
    pub why: String,
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

/// Verdict counts of a list of claims: reproduced, shape only, differs.
pub fn verdict_counts(claims: &[ClaimRow]) -> [usize; 3] {
    let count = |v: &str| claims.iter().filter(|c| c.verdict == v).count();
    [count("reproduced"), count("shape_only"), count("differs")]
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
    let page = html::report(&papers, &outcomes, a.quick, started.elapsed().as_secs_f64());
    if let Err(e) = report.write_whole(page.as_bytes()) {
        eprintln!("error: {e}");
        return EXIT_IO;
    }
    print_summary(&papers, &outcomes);
    eprintln!(
        "wrote {} ({:.0} s)",
        report_path.display(),
        started.elapsed().as_secs_f64()
    );
    outcomes
        .iter()
        .map(|o| o.exit_code)
        .find(|&c| c != 0)
        .unwrap_or(0)
}

/// Verdict counts per paper on standard output.
fn print_summary(papers: &[&Paper], outcomes: &[StudyOutcome]) {
    println!(
        "{:<24} {:>10} {:>10} {:>8} {:>8}",
        "paper", "reproduced", "shape only", "differs", "failed"
    );
    for paper in papers {
        let mine: Vec<&StudyOutcome> = outcomes
            .iter()
            .filter(|o| paper.studies.iter().any(|s| s.name == o.plan.name))
            .collect();
        let claims: Vec<ClaimRow> = mine
            .iter()
            .flat_map(|o| o.claims.clone().unwrap_or_default())
            .collect();
        let [r, s, d] = verdict_counts(&claims);
        let failed = mine.iter().filter(|o| o.exit_code != 0).count();
        println!("{:<24} {r:>10} {s:>10} {d:>8} {failed:>8}", paper.name);
    }
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
        assert_eq!(verdict_counts(&rows), [1, 1, 0]);
        assert!(claims_of(&serde_json::json!({ "points": [] })).is_none());
        assert!(claims_of(&serde_json::json!({ "claims": [] })).is_none());
        let nested = serde_json::json!({ "results": { "claims": [{ "verdict": "differs" }] } });
        assert_eq!(verdict_counts(&claims_of(&nested).unwrap()), [0, 0, 1]);
    }
}
