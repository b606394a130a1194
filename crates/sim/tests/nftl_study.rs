//! The NFTL study (`flashlab experiment nftl`) on the paper's 34 MiB flash, one seed, combo
//! cut to 5% (the quick study's size), with the claims of nftl-lookup-pagecache.txt asserted
//! on its outputs. (A smaller flash leaves AtoPM's Postmark no room for files, so its reads
//! would be format's 15 only: the host's page cache serves the rest, see workload/fsbench.rs.)

use flashlab_sim::experiment::nftl::{run_study, NftlRun, NftlStudy, NftlStudyConfig};

fn gain(a: f64, b: f64) -> f64 {
    (a - b) / a
}

fn get<'s>(s: &'s NftlStudy, device: &str, trace: &str, blk: u32, variant: &str) -> &'s NftlRun {
    s.find(device, trace, blk, variant)
        .unwrap_or_else(|| panic!("{device} {trace} {blk} {variant}"))
}

#[test]
fn the_study_shows_the_papers_directions() {
    let study = run_study(&NftlStudyConfig {
        flash_bytes: 34 << 20,
        seeds: vec![1],
        combo_scale: 0.05,
    })
    .unwrap();
    eprintln!("{}", study.tables());
    // The claims of a real run: no rule that cannot fail, no missing evidence.
    assert_eq!(
        flashlab_sim::experiment::claims::audit(&study.claims),
        Vec::<String>::new()
    );
    assert_eq!(study.claims.len(), 19);
    assert_eq!(study.runs.len(), 2 * 2 * 2 * 6);
    assert_eq!(study.csv().lines().count(), study.runs.len() + 1);
    for device in ["nftl-samsung", "nftl-toshiba"] {
        for trace in ["combo", "atopm"] {
            for blk in [8, 16] {
                let what = format!("{device} {trace} {blk} KiB");
                let plain = get(&study, device, trace, blk, "plain");
                let lookup = get(&study, device, trace, blk, "lookup");
                let cache = get(&study, device, trace, blk, "cache-100%");
                // Table 6: the lookup table removes most OOB reads (the paper: about 60%).
                let saved = 1.0 - lookup.oob_reads as f64 / plain.oob_reads as f64;
                assert!(
                    (0.45..0.8).contains(&saved),
                    "{what}: lookup saved {saved:.3}"
                );
                // Table 5: reads gain much more than writes; the page cache gains less.
                let read = gain(plain.read_us_per_sector, lookup.read_us_per_sector);
                let write = gain(plain.write_us_per_sector, lookup.write_us_per_sector);
                assert!(
                    read > 0.1 && write > 0.0 && read > 2.0 * write,
                    "{what}: read {read:.3} write {write:.3}"
                );
                let cache_read = gain(plain.read_us_per_sector, cache.read_us_per_sector);
                let cache_write = gain(plain.write_us_per_sector, cache.write_us_per_sector);
                assert!(
                    cache_read > 0.0 && cache_write < write,
                    "{what}: cache read {cache_read:.3} write {cache_write:.3}"
                );
                assert!(cache.oob_reads > lookup.oob_reads, "{what}");
                // The same stream on both chips: counts are device independent.
                assert_eq!(
                    plain.folds,
                    get(&study, "nftl-samsung", trace, blk, "plain").folds
                );
            }
            // The page cache's read gain grows with the block size (high utilisation, Table 5).
            if trace == "combo" {
                let g = |blk| {
                    gain(
                        get(&study, device, trace, blk, "plain").read_us_per_sector,
                        get(&study, device, trace, blk, "cache-100%").read_us_per_sector,
                    )
                };
                assert!(
                    g(16) > g(8),
                    "{device}: cache gain {:.3} (16K) vs {:.3} (8K)",
                    g(16),
                    g(8)
                );
            }
        }
        // Table 4: at high utilisation the flash reads far more than the file system asks,
        // and a much larger share of its operations are reads.
        for blk in [8, 16] {
            let p = get(&study, device, "combo", blk, "plain");
            assert!(p.flash_reads > 20 * p.fs_reads, "{device} {blk}: {p:?}");
            let fs_share = p.fs_reads as f64 / (p.fs_reads + p.fs_writes) as f64;
            let flash_share = p.flash_reads as f64 / (p.flash_reads + p.flash_writes) as f64;
            assert!(
                flash_share > 10.0 * fs_share,
                "{device} {blk}: {flash_share} vs {fs_share}"
            );
            assert!(p.gc_runs > 0 && p.folds > 0, "{device} {blk}");
        }
        // Low utilisation: no GC (Table 5: AtoPM GC = 0).
        assert_eq!(get(&study, device, "atopm", 8, "plain").gc_runs, 0);
    }
}
