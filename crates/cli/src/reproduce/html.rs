//! The report page: one HTML file with its CSS inline and the studies' SVG plots inlined, no
//! script, font or request outside it. maud escapes every text; the plots are our own SVG
//! (plotters) and go in as markup.

use maud::{html, Markup, PreEscaped, DOCTYPE};

use super::plan::DocSection;
use super::verdicts::{agreement, Agreement, Record};
use super::{other_counts, verdict_counts, ClaimRow, Paper, StudyOutcome, COUNT_HEADERS};
use flashlab_sim::experiment::claims::Verdict;

/// Characters of a doc section shown in the report (the rest is in the doc).
const EXCERPT_CHARS: usize = 1_500;

const CSS: &str = "
body { font-family: sans-serif; max-width: 1400px; margin: 1em auto; padding: 0 1em;
       color: #222; line-height: 1.4; }
h1 { border-bottom: 2px solid #444; }
h2 { margin-top: 2em; border-bottom: 1px solid #aaa; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.5em; vertical-align: top; text-align: left; }
th { background: #eee; }
td.num { text-align: right; }
.reproduced { background: #e3f5e1; }
.fitted { background: #e6eefb; }
.shape_only { background: #fff5d6; }
.unstable { background: #fde9d4; }
.differs { background: #fbe3e3; }
.not_measured, .by_construction { background: #f0f0f0; }
.disagree { outline: 2px solid #a00; }
td ul { margin: 0; padding-left: 1.1em; }
.prov-fitted { color: #1a4fa0; font-weight: bold; }
.prov-assumed { color: #805000; }
.figures { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
.figure { flex: 1 1 560px; max-width: 820px; border: 1px solid #ddd; padding: 0.5em; }
.figure svg { max-width: 100%; height: auto; }
.paper-values { flex: 1 1 360px; border: 1px dashed #999; padding: 0.5em; background: #fafafa; }
pre { white-space: pre-wrap; background: #f6f6f6; padding: 0.5em; font-size: 0.9em; }
.note { color: #555; font-style: italic; }
.failed { color: #a00; font-weight: bold; }
";

/// The whole page.
pub fn report(
    papers: &[&Paper],
    outcomes: &[StudyOutcome],
    quick: bool,
    seconds: f64,
    other: Option<&Record>,
) -> String {
    let mode = if quick { "quick" } else { "full" };
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                // No favicon request: the report is viewed from a file, offline.
                link rel="icon" href="data:,";
                title { "flashlab reproduce (" (mode) ")" }
                style { (PreEscaped(CSS)) }
            }
            body {
                h1 { "flashlab reproduce" }
                p {
                    "flashlab " (env!("CARGO_PKG_VERSION")) ", " strong { (mode) } " sizes, "
                    (outcomes.len()) " studies in " (format!("{seconds:.0}")) " s. "
                    "Every study wrote its usual outputs (table.txt, CSV, results.json, SVG) "
                    "into its own subdirectory next to this file."
                }
                (rules())
                (summary(papers, outcomes, other))
                @for paper in papers {
                    (paper_section(paper, outcomes, other))
                }
            }
        }
    };
    page.into_string()
}

fn outcomes_of<'a>(paper: &Paper, outcomes: &'a [StudyOutcome]) -> Vec<&'a StudyOutcome> {
    outcomes
        .iter()
        .filter(|o| paper.studies.iter().any(|s| s.name == o.plan.name))
        .collect()
}

/// The verdict rules in a few words, above the summary.
fn rules() -> Markup {
    html! {
        details {
            summary { "How a verdict is decided (crates/sim/src/experiment/claims.rs)" }
            ul {
                li { b { "reproduced" } ": every condition holds on every run (at least 3 seeds, \
                     or one exact computation), each with a margin beyond the run-to-run spread, \
                     at the paper's stated parameters, the figure stationary" }
                li { b { "fitted" } ": as reproduced, but a parameter was fitted to one of the \
                     paper's results (named); never counted as reproduced" }
                li { b { "shape only" } ": the direction or order holds on every run, the level does not" }
                li { b { "unstable (k of n)" } ": holds on some runs only, or within the spread" }
                li { b { "differs" } ": holds on no run; why names our deviation or the paper's inconsistency" }
                li { b { "not measured" } ": no figure, too few runs, or not stationary at this size; why says what would measure it" }
                li { b { "by construction" } ": our model guarantees it; listed, not counted" }
            }
        }
    }
}

fn summary(papers: &[&Paper], outcomes: &[StudyOutcome], other: Option<&Record>) -> Markup {
    html! {
        @if let Some(o) = other {
            p { "Each count is this run's / the " (o.mode) " run's (" (o.flashlab) ", "
                (format!("{:.0}", o.seconds)) " s)." }
        }
        table {
            tr {
                th { "paper" } th { "studies" }
                @for (h, v) in COUNT_HEADERS.iter().zip(Verdict::ALL) { th class=(v.key()) { (h) } }
                th { "studies without claims" } th { "failed" }
            }
            @for paper in papers {
                @let mine = outcomes_of(paper, outcomes);
                @let claims: Vec<ClaimRow> = mine.iter().flat_map(|o| o.claims.clone().unwrap_or_default()).collect();
                @let counts = verdict_counts(&claims);
                @let theirs = other.map(|r| other_counts(r, paper));
                tr {
                    td { a href=(format!("#{}", paper.name)) { (paper.name) } }
                    td { (mine.iter().map(|o| o.plan.name).collect::<Vec<_>>().join(", ")) }
                    @for (i, v) in Verdict::ALL.iter().enumerate() {
                        td.num class=(v.key()) {
                            (counts[i])
                            @if let Some(t) = theirs { " / " (t[i]) }
                        }
                    }
                    td.num { (mine.iter().filter(|o| o.claims.is_none()).count()) }
                    td.num { (mine.iter().filter(|o| o.exit_code != 0).count()) }
                }
            }
        }
    }
}

fn paper_section(paper: &Paper, outcomes: &[StudyOutcome], other: Option<&Record>) -> Markup {
    html! {
        h2 id=(paper.name) { (paper.title) }
        @for o in outcomes_of(paper, outcomes) {
            (study_section(o, other))
        }
    }
}

fn study_section(o: &StudyOutcome, other: Option<&Record>) -> Markup {
    html! {
        h3 { "Study " code { (o.plan.name) } }
        @if o.exit_code != 0 {
            p.failed {
                "The study failed (exit code " (o.exit_code) "); its error is in the command's "
                "standard error. What it wrote before is shown."
            }
        }
        h4 { "Set-up" }
        p { (o.plan.setup) }
        p { "Ran as " code { (o.args.join(" ")) } " in " (format!("{:.1}", o.seconds)) " s." }
        @if let Some(settings) = &o.settings {
            details {
                summary { "Settings as run (results.json)" }
                pre { (settings) }
            }
        }
        h4 { "Figures: ours beside the paper's" }
        div.figures {
            @for (name, svg) in &o.plots {
                div.figure {
                    (PreEscaped(svg_markup(svg)))
                    div { "Ours: " code { (name) } }
                }
            }
            @if o.plots.is_empty() {
                p.note { "This study writes no plots: its tables are in table.txt and results.csv." }
            }
            div.paper-values {
                strong { "The paper's figures" }
                p.note {
                    "The paper's figures are not available as images; these are the paper's "
                    "values as its claims state them (the table below sets ours beside them)."
                }
                @match &o.claims {
                    Some(claims) => ul {
                        @for c in claims {
                            li { b { (c.source) } ": " (c.paper) " (" (c.claim) ")" }
                        }
                    },
                    None => p.note { "No claims computed by this study." },
                }
            }
        }
        h4 { "Claims" }
        (claims_table(o.claims.as_deref(), other.map(|r| (r, o.plan.name))))
        h4 { "Deviations" }
        (deviations(o.plan.deviations))
    }
}

/// The SVG text without an XML prolog, ready to go inline.
fn svg_markup(svg: &str) -> &str {
    let start = svg.find("<svg").unwrap_or(0);
    &svg[start..]
}

/// The claims of a study, each with its evidence; with `other` (a run of the other size and
/// this study's name) a column of its verdicts, disagreements outlined.
fn claims_table(claims: Option<&[ClaimRow]>, other: Option<(&Record, &str)>) -> Markup {
    let Some(claims) = claims else {
        return html! { p.note { "No claims computed by this study." } };
    };
    html! {
        table {
            tr {
                th { "source" } th { "claim" } th { "paper" } th { "ours" } th { "verdict" }
                @if let Some((r, _)) = other { th { "verdict, " (r.mode) " run" } }
                th { "why" } th { "parameters" } th { "tolerance and margin" } th { "judged on" }
            }
            @for c in claims {
                tr class=(format!("claim {}", c.verdict)) {
                    td { (c.source) } td { (c.claim) } td { (c.paper) } td { (c.ours) }
                    td { (c.verdict_label()) }
                    @if let Some((r, study)) = other { (other_verdict(r, study, c)) }
                    td { (c.why) }
                    td { (parameters(c)) }
                    td { (tolerances(c)) }
                    td { (c.seeds_text()) @if !c.size.is_empty() { "; " (c.size) } }
                }
            }
        }
    }
}

fn other_verdict(record: &Record, study: &str, c: &ClaimRow) -> Markup {
    let theirs = record.verdict_of(study, c).map(|v| v.verdict.clone());
    let (q, f) = if record.mode == "full" {
        (Some(c.verdict.as_str()), theirs.as_deref())
    } else {
        (theirs.as_deref(), Some(c.verdict.as_str()))
    };
    let class = match agreement(q, f) {
        Agreement::Same | Agreement::NotMeasuredAtQuick => "",
        Agreement::Disagree | Agreement::Missing => "disagree",
    };
    let label = theirs.map_or("(no such claim)".to_string(), |v| {
        Verdict::ALL
            .iter()
            .find(|x| x.key() == v)
            .map_or(v.clone(), |x| x.label().to_string())
    });
    html! { td class=(class) { (label) } }
}

fn parameters(c: &ClaimRow) -> Markup {
    html! {
        ul {
            @for p in &c.parameters {
                @let (class, whence) = match p.provenance.kind.as_str() {
                    "stated" => ("prov-stated", format!("stated, {}", p.provenance.source)),
                    "fitted" => ("prov-fitted", format!("FITTED to {}", p.provenance.to)),
                    _ => ("prov-assumed", format!("assumed: {}", p.provenance.why)),
                };
                li class=(class) { (p.name) " = " (p.value) " (" (whence) ")" }
            }
        }
    }
}

fn tolerances(c: &ClaimRow) -> Markup {
    html! {
        ul {
            @for t in &c.conditions {
                li {
                    (t.figure) (if t.cmp == "at_most" { " \u{2264} " } else { " \u{2265} " })
                    (format!("{}", t.bound)) ": " (t.tolerance)
                }
            }
        }
        @if !c.margin.is_empty() { "margin: " (c.margin) }
    }
}

fn deviations(sections: &[DocSection]) -> Markup {
    html! {
        ul {
            @for s in sections {
                li {
                    code { (s.doc) } ", section \u{201c}" (s.heading) "\u{201d}"
                    @if let Some(text) = section_text(s.text, s.heading) {
                        details {
                            summary { "Excerpt" }
                            pre { (excerpt(text)) }
                        }
                    }
                }
            }
        }
    }
}

/// The body of the markdown section titled `heading` (up to the next heading of the same or
/// a higher level).
pub fn section_text<'a>(doc: &'a str, heading: &str) -> Option<&'a str> {
    let mut offset = 0;
    let mut start = None;
    let mut level = 0;
    for line in doc.split_inclusive('\n') {
        let hashes = line.bytes().take_while(|&b| b == b'#').count();
        let is_heading = hashes > 0 && line[hashes..].starts_with(' ');
        match start {
            None if is_heading && line[hashes..].trim() == heading => {
                start = Some(offset + line.len());
                level = hashes;
            }
            Some(s) if is_heading && hashes <= level => return Some(doc[s..offset].trim()),
            _ => {}
        }
        offset += line.len();
    }
    start.map(|s| doc[s..].trim())
}

/// The start of a section, cut at a paragraph end after at most [`EXCERPT_CHARS`].
fn excerpt(text: &str) -> String {
    if text.len() <= EXCERPT_CHARS {
        return text.to_string();
    }
    let mut cut = EXCERPT_CHARS;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &text[..cut];
    let end = head.rfind("\n\n").filter(|&i| i > 200).unwrap_or(cut);
    format!("{}\n[...] (the rest is in the doc)", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::super::PAPERS;
    use super::*;

    #[test]
    fn every_deviation_section_exists_in_its_doc() {
        for study in PAPERS.iter().flat_map(|p| p.studies) {
            for s in study.deviations {
                let text = section_text(s.text, s.heading)
                    .unwrap_or_else(|| panic!("{}: no section `{}`", s.doc, s.heading));
                assert!(
                    text.len() > 100,
                    "{}: `{}` is nearly empty",
                    s.doc,
                    s.heading
                );
            }
        }
    }

    #[test]
    fn a_section_ends_at_the_next_heading_of_its_level() {
        let doc = "# T\n## A\na1\n### A.1\na2\n## B\nb\n";
        assert_eq!(section_text(doc, "A"), Some("a1\n### A.1\na2"));
        assert_eq!(section_text(doc, "A.1"), Some("a2"));
        assert_eq!(section_text(doc, "B"), Some("b"));
        assert_eq!(section_text(doc, "C"), None);
    }

    #[test]
    fn text_is_escaped_and_svg_goes_inline() {
        let claims = vec![ClaimRow {
            claim: "<script>alert(1)</script> & more".into(),
            verdict: "shape_only".into(),
            ..ClaimRow::default()
        }];
        let page = claims_table(Some(&claims), None).into_string();
        assert!(
            page.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; more"),
            "{page}"
        );
        assert!(page.contains("<tr class=\"claim shape_only\">") && page.contains("shape only"));
        assert_eq!(
            svg_markup("<?xml version=\"1.0\"?>\n<svg a=\"1\"/>"),
            "<svg a=\"1\"/>"
        );
        let none = claims_table(None, None).into_string();
        assert!(none.contains("No claims computed by this study."), "{none}");
    }
}
