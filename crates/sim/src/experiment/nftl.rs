//! `flashlab experiment nftl`: nftl-lookup-pagecache.txt's study. NFTL plain, with the lookup
//! table, and with the page cache at 50, 100, 200 and 400% of the lookup table's RAM, on both
//! NFTL presets with 8 and 16 KiB blocks, under the file-system-benchmark stand-in
//! ([`crate::workload::fsbench`]) at high (combo, 94%) and low (AtoPM, 23%) utilisation. Each
//! stream is replayed one request at a time (the paper's trace-driven simulator), and the
//! figures are the paper's: Table 4 (file-system vs flash reads and writes), Table 5 (folds,
//! GC, average read and write time per sector, folds and GC charged to the write that caused
//! them), Table 6 (OOB reads avoided) and Figure 5 (read time against page-cache size).

use serde::Serialize;

use crate::config::ExperimentConfig;
use crate::experiment::claims::PaperClaim;
use crate::ftl::nftl::{lookup_table_bytes, Sizing, PAGE_CACHE_ENTRY_BYTES};
use crate::host::Request;
use crate::stats::{build_report, Report};
use crate::workload::fsbench::{generate, FsTrace};
use crate::{SimError, Simulation};

pub mod claims;

/// The study's size: the flash (the paper: 34 MB) and the seeds of the streams (every case
/// runs once per seed, a thread each; a claim needs 3 seeds for a verdict).
#[derive(Debug, Clone)]
pub struct NftlStudyConfig {
    pub flash_bytes: u64,
    pub seeds: Vec<u64>,
    /// Share of Table 3's Postmark-long and IOzone sectors combo writes (1.0: the paper's
    /// 4.35 million; the quick study runs less, see docs/nftl.md).
    pub combo_scale: f64,
}

impl Default for NftlStudyConfig {
    fn default() -> Self {
        NftlStudyConfig {
            flash_bytes: 34 << 20,
            seeds: vec![1, 2, 3],
            combo_scale: 1.0,
        }
    }
}

/// Page-cache sizes of Figure 5, in percent of the lookup table's RAM.
pub const CACHE_PERCENTS: [u32; 4] = [50, 100, 200, 400];

/// One run: a device, block size, trace and NFTL variant.
#[derive(Debug, Clone, Serialize)]
pub struct NftlRun {
    /// The seed of the file-system stream.
    pub seed: u64,
    pub device: String,
    pub trace: &'static str,
    pub utilisation: f64,
    pub block_kib: u32,
    /// `plain`, `lookup` or `cache-N%`.
    pub variant: String,
    pub fs_reads: u64,
    pub fs_writes: u64,
    pub flash_reads: u64,
    pub flash_writes: u64,
    pub oob_reads: u64,
    pub folds: u64,
    pub gc_runs: u64,
    pub write_us_per_sector: f64,
    pub read_us_per_sector: f64,
    pub ram_bytes: u64,
}

/// Every run of the study.
#[derive(Debug, Clone, Serialize)]
pub struct NftlStudy {
    pub flash_bytes: u64,
    pub combo_scale: f64,
    pub runs: Vec<NftlRun>,
    /// The paper's claims about Tables 4-6, Figure 5 and its RAM sizes against these runs.
    pub claims: Vec<PaperClaim>,
}

/// The report's time per sector (`host.{read,write}.latency_per_sector_ns`), in microseconds.
fn per_sector_us(op: &crate::stats::OpReport) -> f64 {
    op.latency_per_sector_ns.unwrap_or(0.0) / 1000.0
}

fn config(
    device: &str,
    block_kib: u32,
    flash_bytes: u64,
    extra: &[String],
) -> Result<ExperimentConfig, SimError> {
    let ppb = block_kib * 2;
    let blocks = (flash_bytes / (u64::from(block_kib) * 1024)).max(8);
    let mut sets = vec![
        "ftl.name=\"nftl\"".to_string(),
        format!("geometry.pages_per_block={ppb}"),
        format!("geometry.blocks_per_plane={blocks}"),
        // 3% spare blocks, at least the 2 NFTL needs (rounded up).
        format!(
            "ftl.over_provisioning={:.4}",
            (0.03f64).max(2.5 / blocks as f64)
        ),
        "run.precondition=0.0".to_string(),
    ];
    sets.extend_from_slice(extra);
    let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
    Ok(ExperimentConfig::with_sets(device, &refs)?)
}

fn run_one(
    cfg: &ExperimentConfig,
    trace: FsTrace,
    flash_bytes: u64,
    combo_scale: f64,
    seed: u64,
) -> Result<Report, SimError> {
    let mut sim = Simulation::new(cfg)?;
    let space = sim.logical_bytes() / 512;
    // The files stay below the paper's sector range, as a share of the flash (not of the
    // logical space): combo 65,588 and AtoPM 10,000 of 69,632 sectors.
    let top = ((flash_bytes / 512) as f64 * trace.top_share()) as u64;
    for r in generate(trace, space, top, combo_scale, seed) {
        sim.submit(Request {
            arrival_ns: 0,
            op: r.op,
            offset_bytes: r.first_sector * 512,
            len_bytes: r.sectors * 512,
            deadline_ns: 0,
            task: None,
        })?;
        sim.run_until_idle()?;
    }
    Ok(build_report(&sim, serde_json::json!({ "kind": "fsbench" })))
}

/// Runs the whole study: per seed (a thread each), 8 device x block x trace cases, 6
/// variants each; runs in seed order.
pub fn run_study(study: &NftlStudyConfig) -> Result<NftlStudy, SimError> {
    let per_seed: Vec<Result<Vec<NftlRun>, SimError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = study
            .seeds
            .iter()
            .map(|&seed| scope.spawn(move || run_seed(study.flash_bytes, study.combo_scale, seed)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a seed's thread panicked"))
            .collect()
    });
    let mut runs = Vec::new();
    for r in per_seed {
        runs.extend(r?);
    }
    let mut result = NftlStudy {
        flash_bytes: study.flash_bytes,
        combo_scale: study.combo_scale,
        runs,
        claims: Vec::new(),
    };
    result.claims = claims::claims(&result);
    Ok(result)
}

fn run_seed(flash_bytes: u64, combo_scale: f64, seed: u64) -> Result<Vec<NftlRun>, SimError> {
    let mut runs = Vec::new();
    for device in ["nftl-samsung", "nftl-toshiba"] {
        for (trace, name, util) in [
            (FsTrace::Combo, "combo", FsTrace::Combo.top_share()),
            (FsTrace::AtoPm, "atopm", FsTrace::AtoPm.top_share()),
        ] {
            for block_kib in [8, 16] {
                let base = config(device, block_kib, flash_bytes, &[])?;
                let (_, sizing) = crate::ftl::nftl::NftlConfig::from_experiment(&base)?;
                let lookup = lookup_table_bytes(&sizing);
                let mut variants: Vec<(String, Vec<String>)> = vec![
                    ("plain".into(), vec![]),
                    ("lookup".into(), vec!["ftl.lookup_table=true".into()]),
                ];
                for pct in CACHE_PERCENTS {
                    let entries = lookup * u64::from(pct) / 100 / PAGE_CACHE_ENTRY_BYTES;
                    variants.push((
                        format!("cache-{pct}%"),
                        vec![format!("ftl.page_cache_entries={entries}")],
                    ));
                }
                for (variant, extra) in variants {
                    let cfg = config(device, block_kib, flash_bytes, &extra)?;
                    let r = run_one(&cfg, trace, flash_bytes, combo_scale, seed)?;
                    let mut run = row(device, name, util, block_kib, variant, &r, &sizing);
                    run.seed = seed;
                    runs.push(run);
                }
            }
        }
    }
    Ok(runs)
}

fn row(
    device: &str,
    trace: &'static str,
    utilisation: f64,
    block_kib: u32,
    variant: String,
    r: &Report,
    _s: &Sizing,
) -> NftlRun {
    let c = &r.ftl_details["counters"];
    let count = |k: &str| c[k].as_u64().unwrap_or(0);
    NftlRun {
        seed: 0,
        device: device.into(),
        trace,
        utilisation,
        block_kib,
        variant,
        fs_reads: count("host_page_reads"),
        fs_writes: count("host_page_writes"),
        flash_reads: r.flash.reads.total,
        flash_writes: r.flash.programs.total,
        oob_reads: r.flash.oob_reads.total,
        folds: count("folds"),
        gc_runs: count("gc_runs"),
        write_us_per_sector: per_sector_us(&r.host.write),
        read_us_per_sector: per_sector_us(&r.host.read),
        ram_bytes: r.ftl_details["ram"]["total_bytes"].as_u64().unwrap_or(0),
    }
}

impl NftlStudy {
    /// The first seed's (the tables show its runs).
    pub fn first_seed(&self) -> u64 {
        self.runs.first().map_or(0, |r| r.seed)
    }

    /// The run of a case and variant on the first seed.
    pub fn find(
        &self,
        device: &str,
        trace: &str,
        block_kib: u32,
        variant: &str,
    ) -> Option<&NftlRun> {
        self.find_seed(self.first_seed(), device, trace, block_kib, variant)
    }

    /// The run of a case and variant on `seed`.
    pub fn find_seed(
        &self,
        seed: u64,
        device: &str,
        trace: &str,
        block_kib: u32,
        variant: &str,
    ) -> Option<&NftlRun> {
        self.runs.iter().find(|r| {
            r.seed == seed
                && r.device == device
                && r.trace == trace
                && r.block_kib == block_kib
                && r.variant == variant
        })
    }

    /// Tables 4, 5 and 6 as text, of the first seed's runs (results.csv has every seed's).
    pub fn tables(&self) -> String {
        let mut t = String::new();
        let seed = self.first_seed();
        let first = |r: &&NftlRun| r.seed == seed;
        t.push_str(&format!(
            "Table 4: trace characteristics (NFTL, Samsung; seed {seed})\n"
        ));
        t.push_str(
            "trace   blk  fs reads  fs writes  fs read%  flash reads  flash writes  flash read%\n",
        );
        for r in self
            .runs
            .iter()
            .filter(first)
            .filter(|r| r.variant == "plain" && r.device == "nftl-samsung")
        {
            let pct = |a: u64, b: u64| 100.0 * a as f64 / (a + b).max(1) as f64;
            t.push_str(&format!(
                "{:<7} {:>2}K {:>9} {:>10} {:>9.2} {:>12} {:>13} {:>12.1}\n",
                r.trace,
                r.block_kib,
                r.fs_reads,
                r.fs_writes,
                pct(r.fs_reads, r.fs_writes),
                r.flash_reads,
                r.flash_writes,
                pct(r.flash_reads, r.flash_writes)
            ));
        }
        t.push_str("\nTable 5: average read/write time per sector (us), gains over NFTL (cache at 100% of the lookup table)\n");
        t.push_str("device        trace  util blk  folds   GC  write  read | lookup write gain%  read gain% | cache write gain%  read gain%\n");
        for p in self
            .runs
            .iter()
            .filter(first)
            .filter(|r| r.variant == "plain")
        {
            let (Some(l), Some(c)) = (
                self.find(&p.device, p.trace, p.block_kib, "lookup"),
                self.find(&p.device, p.trace, p.block_kib, "cache-100%"),
            ) else {
                continue;
            };
            let gain = |a: f64, b: f64| if a > 0.0 { 100.0 * (a - b) / a } else { 0.0 };
            t.push_str(&format!(
                "{:<13} {:<6} {:>3.0}% {:>2}K {:>6} {:>4} {:>6.1} {:>5.1} | {:>6.1} {:>5.2} {:>6.1} {:>5.2} | {:>6.1} {:>5.2} {:>6.1} {:>5.2}\n",
                p.device, p.trace, p.utilisation * 100.0, p.block_kib, p.folds, p.gc_runs,
                p.write_us_per_sector, p.read_us_per_sector,
                l.write_us_per_sector, gain(p.write_us_per_sector, l.write_us_per_sector),
                l.read_us_per_sector, gain(p.read_us_per_sector, l.read_us_per_sector),
                c.write_us_per_sector, gain(p.write_us_per_sector, c.write_us_per_sector),
                c.read_us_per_sector, gain(p.read_us_per_sector, c.read_us_per_sector),
            ));
        }
        t.push_str("\nTable 6: OOB reads (device independent; Samsung runs)\n");
        t.push_str("trace   blk  NFTL     lookup   gain%   cache-100%  gain%\n");
        for p in self
            .runs
            .iter()
            .filter(first)
            .filter(|r| r.variant == "plain" && r.device == "nftl-samsung")
        {
            let (Some(l), Some(c)) = (
                self.find(&p.device, p.trace, p.block_kib, "lookup"),
                self.find(&p.device, p.trace, p.block_kib, "cache-100%"),
            ) else {
                continue;
            };
            let gain = |b: u64| 100.0 * (1.0 - b as f64 / p.oob_reads.max(1) as f64);
            t.push_str(&format!(
                "{:<7} {:>2}K {:>8} {:>8} {:>6.2} {:>10} {:>6.2}\n",
                p.trace,
                p.block_kib,
                p.oob_reads,
                l.oob_reads,
                gain(l.oob_reads),
                c.oob_reads,
                gain(c.oob_reads)
            ));
        }
        t
    }

    /// Every run as CSV.
    pub fn csv(&self) -> String {
        let mut s = String::from("seed,device,trace,utilisation,block_kib,variant,fs_reads,fs_writes,flash_reads,flash_writes,oob_reads,folds,gc_runs,write_us_per_sector,read_us_per_sector,ram_bytes\n");
        for r in &self.runs {
            s.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3},{:.3},{}\n",
                r.seed,
                r.device,
                r.trace,
                r.utilisation,
                r.block_kib,
                r.variant,
                r.fs_reads,
                r.fs_writes,
                r.flash_reads,
                r.flash_writes,
                r.oob_reads,
                r.folds,
                r.gc_runs,
                r.write_us_per_sector,
                r.read_us_per_sector,
                r.ram_bytes
            ));
        }
        s
    }
}
