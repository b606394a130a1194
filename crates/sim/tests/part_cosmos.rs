//! part-ftl.txt VI.B-C on the reduced `cosmos` (64 blocks per plane): Table III under
//! `part-ftl` and `wao-gc`, Fig. 16, and the paper's claims (experiment/part_cosmos.rs,
//! docs/part-cosmos.md).

use flashlab_sim::experiment::part_cosmos::{
    absurdities, table, PartCosmosResults, PartCosmosStudy,
};

fn results() -> PartCosmosResults {
    PartCosmosStudy::default()
        .run(&mut |_, _, _| {})
        .unwrap_or_else(|e| panic!("{e}"))
}

fn claim<'a>(
    r: &'a PartCosmosResults,
    start: &str,
) -> &'a flashlab_sim::experiment::part_cosmos::Claim {
    r.claims
        .iter()
        .find(|c| c.claim.starts_with(start))
        .unwrap_or_else(|| panic!("no claim `{start}`"))
}

#[test]
fn table_iii_and_fig16_reproduce_the_papers_directions() {
    let r = results();
    let text = table(&r);
    println!("{text}");
    assert!(absurdities(&r).is_empty(), "{:?}", absurdities(&r));
    let part = &r.runs[0];
    let wao = &r.runs[1];
    assert_eq!(
        (part.ftl.as_str(), wao.ftl.as_str()),
        ("part-ftl", "wao-gc")
    );
    // Both FTLs collect during the measured window.
    for run in [part, wao] {
        assert!(
            run.gc_victims > 0 && run.gc_pages_moved > 0 && run.erases > 0,
            "{}",
            run.ftl
        );
        // 4 writers x ceil(10 s / 60 ms) jobs + 4 readers x ceil(10 s / 15 ms).
        assert_eq!(run.deadline_requests, 4 * 167 + 4 * 667, "{}", run.ftl);
        assert_eq!(run.tasks.len(), 8);
    }
    // PaRT-FTL misses no deadline; its reads never go to the write set.
    assert!(claim(&r, "PaRT-FTL misses no deadline").holds, "{text}");
    assert!(claim(&r, "PaRT-FTL page reads bounded").holds, "{text}");
    // Fig. 15: PaRT-FTL's max write latency below WAO-GC's (buffered vs programmed).
    assert!(claim(&r, "max write latency").holds, "{text}");
    assert!(part.write.max_ns * 10 < wao.write.max_ns, "{text}");
    // Fig. 16: the bandwidth falls once GC starts.
    assert!(claim(&r, "Fig. 16").holds, "{text}");
}
