//! `flashlab reproduce`: the report of a quick run of part-ftl.txt's two studies, and the
//! errors (unknown papers listed, an output directory that cannot be written) found before
//! anything runs. The browser test is tests/test_reproduce.py.

mod common;

use common::{flashlab, path_str, scratch};

#[test]
fn unknown_papers_are_listed_with_the_allowed_names() {
    let dir = scratch("reproduce-unknown").join("out");
    let r = flashlab(&[
        "reproduce",
        "kast",
        "nosuch",
        "ftl9",
        "--out",
        path_str(&dir),
    ]);
    assert_eq!(r.code, Some(2), "{}", r.context());
    assert_eq!(
        r.stderr,
        "error: unknown papers nosuch, ftl9 (allowed: multithreaded-ftl-ucos, \
         nftl-lookup-pagecache, kast, fmmu, part-ftl, all)\n"
    );
    assert!(!dir.exists(), "nothing is written for bad input");
}

#[test]
fn an_output_directory_that_cannot_be_made_is_refused_before_any_run() {
    let dir = scratch("reproduce-file");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let r = flashlab(&["reproduce", "part-ftl", "--quick", "--out", path_str(&file)]);
    assert_eq!(r.code, Some(74), "{}", r.context());
    assert!(
        r.stderr.starts_with("error: cannot create "),
        "{}",
        r.context()
    );
    assert!(!r.stderr.contains("[1/2]"), "no study ran: {}", r.context());
    let missing = flashlab(&["reproduce", "part-ftl"]);
    assert_eq!(
        missing.code,
        Some(2),
        "--out is required: {}",
        missing.context()
    );
}

#[test]
fn a_quick_part_ftl_run_writes_its_studies_and_a_self_contained_report() {
    let dir = scratch("reproduce-part-ftl");
    let r = flashlab(&["reproduce", "part-ftl", "--quick", "--out", path_str(&dir)]);
    r.assert_success();
    for line in [
        "[1/3] part-schedulability (quick)",
        "[2/3] part-cosmos (quick)",
        "[3/3] part-admission (quick)",
    ] {
        assert!(
            r.stderr.contains(line),
            "progress lacks `{line}`: {}",
            r.context()
        );
    }
    for f in [
        "part-schedulability/results.json",
        "part-cosmos/results.json",
        "part-admission/results.json",
        "report.html",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing: {}", r.context());
    }
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let svgs = ["part-schedulability", "part-cosmos", "part-admission"]
        .iter()
        .flat_map(|s| std::fs::read_dir(dir.join(s)).unwrap())
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "svg")
        })
        .count();
    assert_eq!(svgs, 8);
    assert_eq!(page.matches("<svg ").count(), svgs, "every plot inlined");
    // Self-contained: no script, no stylesheet or font or image fetched.
    for banned in ["<script", "<img", "http://", "https://", "@import", "url("] {
        let found = page.replace("http://www.w3.org/2000/svg", "");
        assert!(!found.contains(banned), "report contains `{banned}`");
    }
    assert!(page.contains("The paper's figures are not available as images"));
    assert!(page.contains("docs/part-cosmos.md"));
    // Every claim of both studies is a row with its verdict class; the summary counts them.
    let claims: usize = ["part-schedulability", "part-cosmos", "part-admission"]
        .iter()
        .map(|s| {
            let text = std::fs::read_to_string(dir.join(s).join("results.json")).unwrap();
            let json: serde_json::Value = serde_json::from_str(&text).unwrap();
            json["claims"].as_array().map_or(0, Vec::len)
        })
        .sum();
    let keys = [
        "reproduced",
        "fitted",
        "shape_only",
        "unstable",
        "differs",
        "not_measured",
        "by_construction",
    ];
    let rows = keys.map(|v| page.matches(&format!("<tr class=\"claim {v}\">")).count());
    assert!(claims > 0);
    assert_eq!(rows.iter().sum::<usize>(), claims, "{rows:?}");
    let summary = r
        .stdout
        .lines()
        .rfind(|l| l.starts_with("part-ftl "))
        .unwrap();
    let cells: Vec<String> = rows.iter().map(|n| format!("{n:>13}")).collect();
    assert_eq!(
        summary,
        format!("{:<24}{} {:>8}", "part-ftl", cells.join(""), 0),
        "{}",
        r.stdout
    );
    // The record of the run, and a second run compared against it: every claim agrees.
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("verdicts.json")).unwrap()).unwrap();
    assert_eq!(record["mode"], "quick");
    let again = scratch("reproduce-part-ftl-again");
    let r = flashlab(&[
        "reproduce",
        "part-ftl",
        "--quick",
        "--out",
        path_str(&again),
        "--against",
        path_str(&dir),
    ]);
    r.assert_success();
    assert!(
        r.stdout.contains("every claim agrees with the quick run"),
        "{}",
        r.stdout
    );
    // One verdict changed in the record: the run names that claim and exits 1.
    let mut changed = record.clone();
    let first = &mut changed["studies"]["part-cosmos"]["claims"][0];
    let name = first["claim"].as_str().unwrap().to_string();
    let flipped = if first["verdict"] == "differs" {
        "reproduced"
    } else {
        "differs"
    };
    first["verdict"] = flipped.into();
    changed["mode"] = "full".into();
    let file = again.join("full-verdicts.json");
    std::fs::write(&file, changed.to_string()).unwrap();
    let r = flashlab(&[
        "reproduce",
        "part-ftl",
        "--quick",
        "--out",
        path_str(&again),
        "--against",
        path_str(&file),
    ]);
    assert_eq!(r.code, Some(1), "{}", r.context());
    assert!(
        r.stdout.contains("1 claim(s) disagree with the full run:"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("part-cosmos ") && r.stdout.contains(&format!("{name}: quick ")),
        "{}",
        r.stdout
    );
    let page = std::fs::read_to_string(again.join("report.html")).unwrap();
    assert!(
        page.contains("<td class=\"disagree\">"),
        "the report outlines it"
    );
}

#[test]
fn a_bad_against_record_is_refused_before_any_run() {
    let dir = scratch("reproduce-against");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("verdicts.json");
    std::fs::write(&bad, "[1, 2]").unwrap();
    let r = flashlab(&[
        "reproduce",
        "part-ftl",
        "--quick",
        "--out",
        path_str(&dir.join("out")),
        "--against",
        path_str(&dir),
    ]);
    assert_eq!(r.code, Some(2), "{}", r.context());
    assert!(
        r.stderr.starts_with("error: --against: ")
            && r.stderr
                .contains("verdicts.json:1: not a flashlab reproduce verdicts record"),
        "{}",
        r.context()
    );
    assert!(!dir.join("out").exists());
    let both = flashlab(&["reproduce", "--quick", "--full", "--out", path_str(&dir)]);
    assert_eq!(both.code, Some(2), "{}", both.context());
}
