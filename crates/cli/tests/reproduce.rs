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
fn a_quick_part_ftl_run_writes_both_studies_and_a_self_contained_report() {
    let dir = scratch("reproduce-part-ftl");
    let r = flashlab(&["reproduce", "part-ftl", "--quick", "--out", path_str(&dir)]);
    r.assert_success();
    for line in [
        "[1/2] part-schedulability (quick)",
        "[2/2] part-cosmos (quick)",
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
        "report.html",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing: {}", r.context());
    }
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let svgs = ["part-schedulability", "part-cosmos"]
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
    assert_eq!(svgs, 7);
    assert_eq!(page.matches("<svg ").count(), svgs, "every plot inlined");
    // Self-contained: no script, no stylesheet or font or image fetched.
    for banned in ["<script", "<img", "http://", "https://", "@import", "url("] {
        let found = page.replace("http://www.w3.org/2000/svg", "");
        assert!(!found.contains(banned), "report contains `{banned}`");
    }
    assert!(page.contains("The paper's figures are not available as images"));
    assert!(page.contains("docs/part-cosmos.md"));
    // Every claim of both studies is a row with its verdict class; the summary counts them.
    let rows = ["reproduced", "shape_only", "differs"]
        .map(|v| page.matches(&format!("<tr class=\"{v}\">")).count());
    assert_eq!(rows.iter().sum::<usize>(), 10 + 12, "{rows:?}");
    assert!(rows[1] > 0 && rows[2] > 0, "{rows:?}");
    let summary = r.stdout.lines().last().unwrap();
    let counts = format!(
        "part-ftl {:>26} {:>10} {:>8} {:>8}",
        rows[0], rows[1], rows[2], 0
    );
    assert_eq!(summary, counts, "{}", r.stdout);
}
