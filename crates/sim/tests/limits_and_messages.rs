//! Issue 25, classes 5, 8, 9 and 10 in the library: what a setting may allocate is bounded
//! (an open loop's backlog, a bounded-open loop's read-ahead, the time series), messages use
//! the user's words (choices, settings, ranges), and ambiguous or impossible combinations
//! are refused with the configuration instead of after preconditioning. Each table row
//! failed before its fix.

use flashlab_sim::ExperimentConfig;

/// The error of loading the default preset with `sets` (`accepted` when there is none).
fn config_error(sets: &[&str]) -> String {
    match ExperimentConfig::with_sets("default", sets) {
        Ok(_) => String::from("accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn configuration_messages_use_the_users_words() {
    let periodic = "workload.pattern=\"periodic\"";
    let duration = "workload.duration_ns=1000000";
    // (settings, words the message must hold, words it must not)
    let rows: &[(&[&str], &[&str], &[&str])] = &[
        (
            &["trace.replay=\"bogus\""],
            &["trace.replay = bogus: unknown choice (allowed: open | closed | bounded-open)"],
            &["variant"],
        ),
        (
            &["timing.die_queue_policy=\"lifo\""],
            &[
                "timing.die_queue_policy = lifo: unknown choice",
                "fifo | read-first | edf",
            ],
            &["variant", "`fifo`"],
        ),
        (
            &["ftl.gc_victim=\"oldest\""],
            &["ftl.gc_victim = oldest: unknown choice", "greedy"],
            &["variant"],
        ),
        (
            &["run.bogus=1"],
            &["run.bogus: unknown setting `bogus` (allowed: seed, precondition,"],
            &["field"],
        ),
        (
            &["bogus.x=1"],
            &["bogus: unknown section `bogus` (allowed: preset, geometry,"],
            &["field"],
        ),
        (
            &["ftl.bogus=1"],
            &["ftl.bogus: unknown setting `bogus` (allowed: name, over_provisioning,"],
            &["field"],
        ),
        // 2^32 in a 32-bit field: out of range, with the documented range.
        (
            &["workload.queue_depth=4294967296"],
            &["workload.queue_depth = 4294967296 is out of range (allowed: 1 ..= 1048576)"],
            &["whole number"],
        ),
        (
            &["ftl.name=\"mt-ftl\"", "ftl.tasks=4294967296"],
            &["ftl.tasks = 4294967296 is out of range (allowed: 1 ..= 63)"],
            &["whole number"],
        ),
        // A task's field: its value and its documented range, not `= ?` and 2^63.
        (
            &[
                periodic,
                duration,
                "workload.tasks=[{op=\"write\",pages=2.5,period_ns=1000000}]",
            ],
            &["workload.tasks[0].pages = 2.5: expected a whole number (allowed: 0 ..= 1048576)"],
            &["= ?", "9223372036854775807"],
        ),
        (
            &[
                periodic,
                duration,
                "workload.tasks=[{op=\"erase\",pages=1,period_ns=1000000}]",
            ],
            &["workload.tasks[0].op = erase: unknown choice (allowed: read | write)"],
            &["variant"],
        ),
        // Requests a 4 KiB-sector device cannot take: refused with the configuration.
        (
            &[
                "host.sector_bytes=4096",
                "workload.block_size=\"512-16k\"",
                "workload.align_bytes=512",
            ],
            &[
                "workload.align_bytes = 512",
                "host.sector_bytes = 4096",
                "inside a sector",
            ],
            &[],
        ),
        (
            &[
                "host.sector_bytes=4096",
                "workload.block_size=\"4k:50,6k:50\"",
            ],
            &[
                "workload.block_size",
                "6144 bytes",
                "host.sector_bytes = 4096",
            ],
            &[],
        ),
        (
            &["host.sector_bytes=4096", "workload.pattern=\"web\""],
            &["host.sector_bytes = 4096", "512-byte sectors"],
            &[],
        ),
    ];
    let mut failures = Vec::new();
    for (sets, mentions, never) in rows {
        let e = config_error(sets);
        let missing: Vec<_> = mentions.iter().filter(|m| !e.contains(*m)).collect();
        let present: Vec<_> = never.iter().filter(|m| e.contains(*m)).collect();
        if !missing.is_empty() || !present.is_empty() || e.contains('\n') {
            failures.push(format!(
                "{sets:?}\n  {e}\n  missing {missing:?}, should not say {present:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // A whole number written as a float in a task is that number; sizes that fit pass.
    ExperimentConfig::with_sets(
        "default",
        &[
            periodic,
            duration,
            "workload.tasks=[{op=\"write\",pages=2.0,period_ns=1000000}]",
        ],
    )
    .expect("pages = 2.0 is 2 pages");
    ExperimentConfig::with_sets(
        "default",
        &["host.sector_bytes=4096", "workload.block_size=\"4k-16k\""],
    )
    .expect("4 KiB multiples fit 4 KiB sectors");
}
