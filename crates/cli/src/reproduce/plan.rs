//! What `flashlab reproduce` runs: each paper (named as in the papers' file names), its
//! `flashlab experiment` studies with their quick and full arguments, the set-up in words and
//! the doc sections that record the deviations.

/// A section of a doc (embedded at build time, so the report needs no checkout).
#[derive(Debug)]
pub struct DocSection {
    /// The doc's path in the repository, e.g. `docs/kast.md`.
    pub doc: &'static str,
    pub text: &'static str,
    /// The section's heading, without the `#`s.
    pub heading: &'static str,
}

/// One `flashlab experiment` study.
#[derive(Debug)]
pub struct StudyPlan {
    /// The `experiment` subcommand, also the output subdirectory.
    pub name: &'static str,
    /// Arguments of `--quick` (before `--out`).
    pub quick: &'static [&'static str],
    /// Arguments of the full run.
    pub full: &'static [&'static str],
    /// Devices, workloads and sizes, in words.
    pub setup: &'static str,
    /// Wall time of the quick run in a release build on one core (measured), for the
    /// progress lines.
    pub quick_s: u32,
    /// CPU time of the full run in a release build (measured, all seeds), for the progress
    /// lines of `--full`.
    pub full_cpu_s: u32,
    pub deviations: &'static [DocSection],
}

impl StudyPlan {
    /// ", about N s in a release build" for the quick run's progress line; the full run's
    /// CPU time for the full one.
    pub fn expected(&self, quick: bool) -> String {
        if quick {
            format!(", about {} s in a release build", self.quick_s)
        } else if self.full_cpu_s >= 120 {
            format!(
                ", about {} min of CPU in a release build",
                self.full_cpu_s / 60
            )
        } else {
            format!(", about {} s of CPU in a release build", self.full_cpu_s)
        }
    }
}

/// A paper and the studies that check it.
#[derive(Debug)]
pub struct Paper {
    /// The paper's file name without `.txt`, as the docs cite it (e.g. `fmmu` for fmmu.txt).
    pub name: &'static str,
    pub title: &'static str,
    pub studies: &'static [StudyPlan],
}

macro_rules! section {
    ($doc:literal, $heading:literal) => {
        DocSection {
            doc: concat!("docs/", $doc),
            text: include_str!(concat!("../../../../docs/", $doc)),
            heading: $heading,
        }
    };
}

pub const PAPERS: [Paper; 5] = [
    Paper {
        name: "multithreaded-ftl-ucos",
        title: "A multi-threaded FTL on uC/OS-II (multithreaded-ftl-ucos.txt)",
        studies: &[StudyPlan {
            name: "mt-ftl",
            quick: &[
                "--requests",
                "2000",
                "--queue-depths",
                "1,4,16,64",
                "--board-blocks-per-plane",
                "512",
                "--ssd",
                "cosmos",
                "--ssd-tasks",
                "4,16",
            ],
            // Full: the paper's board and depths, 5,000 requests a run and the SSDs with 16
            // tasks only (no claim judges 4 or 8): the study's defaults (20,000 requests, 4, 8
            // and 16 tasks) take about 40 minutes of CPU with three seeds. Both run the study's
            // default pacing, a closed loop at each queue depth, on the paper's board (fixed
            // task priorities, a NAND semaphore per chip) (docs/mt-ftl.md, "Pacing" and "The
            // claims table (computed)").
            full: &[
                "--requests",
                "5000",
                "--ssd",
                "cosmos,fmmu-16ch",
                "--ssd-tasks",
                "16",
            ],
            setup: "st-ftl against mt-ftl over queue depths on mt-board (Figs. 3, 4) and on \
                    parallel SSDs (cosmos, fmmu-16ch with 128 blocks per plane); the default \
                    workload of `flashlab experiment mt-ftl` in a closed loop at each queue \
                    depth, fixed uC/OS-II task priorities and a NAND semaphore per chip (the \
                    paper's board), seeds 1, 2, 3. Quick: 2,000 \
                    requests per run, queue depths 1-64, a 512-block-per-plane board, cosmos \
                    only, 4 and 16 tasks (only depth 1's equality is judged: the other claims \
                    need the paper's 4 GB board and depth 256). Full: 5,000 requests per run, \
                    queue depths 1-256, the 4 GB board, cosmos and fmmu-16ch with 16 tasks.",
            quick_s: 65,
            full_cpu_s: 700,
            deviations: &[section!("mt-ftl.md", "Results and deviations")],
        }],
    },
    Paper {
        name: "nftl-lookup-pagecache",
        title: "NFTL with a lookup table and a page cache (nftl-lookup-pagecache.txt)",
        studies: &[StudyPlan {
            name: "nftl",
            // The paper's 34 MiB, seeds 1-3 (a thread each). Full: combo with Table 3's 4.35
            // million sector writes; quick: Postmark long and IOzone at 5% of theirs (AtoPM is
            // whole in both).
            quick: &["--combo-scale", "0.05"],
            full: &[],
            setup: "NFTL plain, with the lookup table and with the page cache at 50-400% of its \
                    RAM (Tables 4-6) on nftl-samsung and nftl-toshiba, 8 and 16 KiB blocks, \
                    under the file-system-benchmark stand-in calibrated to Table 3 (combo below \
                    94.19% of the flash, AtoPM below 14.36%), replayed from format on a fresh \
                    34 MiB flash, seeds 1-3. Quick: combo's Postmark long and IOzone at 5% of \
                    Table 3's writes; full: all of them.",
            // Measured (release, 2 shared cores): quick 33 s wall, 33 s CPU; full 12 min 54 s
            // wall, 666 s CPU (`/usr/bin/time -v`).
            quick_s: 35,
            full_cpu_s: 666,
            deviations: &[
                section!(
                    "nftl.md",
                    "What it does (and the choices where the paper is silent)"
                ),
                section!(
                    "nftl.md",
                    "The file-system-benchmark stand-in (`workload/fsbench.rs`)"
                ),
            ],
        }],
    },
    Paper {
        name: "kast",
        title: "KAST: K-associative sector translation (kast.txt)",
        studies: &[StudyPlan {
            name: "kast",
            // A run's time is mostly the sequential fill of the 1 GiB device and the warm-up:
            // the whole K sweep at 20,000 requests measures every claim but Fig. 8's
            // (docs/kast.md).
            quick: &[],
            full: &["--requests", "80000"],
            setup: "BAST, FAST, SAST and KAST over K = 1-32 with 32 log blocks on kast-slc \
                    (Figs. 6-9), under two stand-ins of the Internet Explorer trace (a \
                    browser cache on FAT32; random small pages with a hot set), each judged, \
                    and a desktop stand-in of the PC trace, seeds 1-3, each run after a \
                    sequential fill and a warm-up until merges are steady (at least 20,000 \
                    requests). Quick: 20,000 measured requests a run; full: 80,000.",
            quick_s: 35,
            full_cpu_s: 90,
            deviations: &[
                section!(
                    "kast.md",
                    "Against the paper, sentence by sentence (kast.txt section IV)"
                ),
                section!(
                    "kast.md",
                    "Why the browser-cache stand-in does not give the paper's order"
                ),
            ],
        }],
    },
    Paper {
        name: "fmmu",
        title: "FMMU: a hardware-accelerated map cache (fmmu.txt)",
        studies: &[StudyPlan {
            name: "fmmu",
            quick: &["--quick"],
            full: &[],
            setup: "fmmu.txt Figs. 10-14 on fmmu-16ch: the execution-time model, synthetic \
                    workloads after a full fill, traces at 512 outstanding (the MQSim WebSearch \
                    and TPC-C excerpts built into flashlab: the paper's MSR and WebSearch \
                    traces are not public), 4 KiB random reads from 1x1 to 32x8; seeds 1, 2, 3, \
                    each point measured after a warm-up on its own workload (rates over the \
                    full-queue window, halves checked). Quick: 32 x 32 blocks of 32 pages a \
                    plane, 4,000 + 6,000 requests a point (16,000 warm-up sequential writes), \
                    three scaling points, no random writes (not measured at quick size); full: \
                    64 x 64 blocks of 64 pages (16 GiB), 10,000 + 40,000 requests, random \
                    writes 200,000 + 100,000 at steady GC, and CDFTL's 4-core random write \
                    at five flush-scan costs (3-40 ns a CMT block, seed 1).",
            quick_s: 75,
            full_cpu_s: 1400,
            deviations: &[
                section!("fmmu.md", "Set-up"),
                section!(
                    "fmmu.md",
                    "The paper's claims about Figs. 10-14, with our verdict"
                ),
            ],
        }],
    },
    Paper {
        name: "part-ftl",
        title: "PaRT-FTL: partitioned real-time NAND flash storage (part-ftl.txt)",
        studies: &[
            StudyPlan {
                name: "part-schedulability",
                quick: &["--sets", "100"],
                full: &[],
                setup: "Section VI.A (Figs. 5-7): acceptance ratio and weighted schedulability of \
                        random sets of 10 periodic tasks under PaRT-FTL (eqs. 6-7) at the stated \
                        lambda 0.643 and, marked fitted, at 0.518 (fitted to eq. 9's 7.3 MB/s), \
                        RTGC and WAO-GC at 100/75/50% GC likelihood, on task-set generator seeds \
                        1, 2, 3; plus the closed forms of eqs. 9-16, exactly. Quick: 100 task sets \
                        per point; full: the paper's 500.",
                quick_s: 1,
                full_cpu_s: 5,
                deviations: &[section!("realtime-analysis.md", "Claims")],
            },
            StudyPlan {
                name: "part-cosmos",
                quick: &[],
                full: &["--full"],
                setup: "Sections VI.B-C (Figs. 10-16): Table III's periodic tasks on cosmos under \
                        part-ftl, wao-gc (per-die and device-wide steps) and rtgc, 10 s of \
                        releases after preconditioning, and Fig. 16's WAO-GC write bandwidth from \
                        a fresh device; the board set-up adds the firmware's time per page (fitted \
                        to Fig. 16's 27 MB/s) and sweeps the readers' phase; seeds 1, 2, 3. \
                        Quick: 64 blocks per plane, Fig. 16 over 40 s (board 150 s); full: 512 \
                        blocks per plane (16 GiB raw), Fig. 16 over 320 s (board 1,200 s): the \
                        128 GiB DIMM takes about 5 CPU minutes a seed, and the figures judged \
                        depend on the size only through when GC starts (their halves are checked).",
                quick_s: 12,
                full_cpu_s: 89,
                deviations: &[
                    section!("part-cosmos.md", "Set-up"),
                    section!("part-cosmos.md", "Claims"),
                ],
            },
            StudyPlan {
                name: "part-admission",
                quick: &[],
                full: &["--full"],
                setup: "Issue 29: each admission test (PaRT-FTL's eqs. 6-7, RTGC's EDF test, \
                        WAO-GC's section VI.A worst case) on the analysis device of the run's \
                        configuration, against periodic runs of five task-set families (Table \
                        III's readers and writers, larger reads, smaller writes, Table III's mix) \
                        on cosmos under part-ftl, rtgc and wao-gc, preconditioned, EDF die \
                        queues, all tasks released at 0, the period swept on a geometric grid \
                        from one octave above the longest analysis boundary down past the first \
                        misses. Quick: 16 blocks per plane, 2 s of releases, 2 points per \
                        octave, seeds 1-3; full: 64 blocks per plane, 20 s, 4 points per octave, \
                        seeds 1-5.",
                // Measured (release, the shared two-core machine): quick 17.5 s wall, 15 s CPU;
                // full 571 s wall, 208 s CPU (`/usr/bin/time`).
                quick_s: 15,
                full_cpu_s: 210,
                deviations: &[
                    section!("part-admission.md", "Method"),
                    section!("part-admission.md", "Results"),
                ],
            },
        ],
    },
];
