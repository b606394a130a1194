//! Every registered FTL as a block device with real bytes (`blockdev`, what `flashlab serve`
//! exports): random writes of 1 to 16 sectors at any sector, reads, trims and flushes, up to
//! 16 in flight, twice the logical space written so GC moves data, every read compared
//! byte for byte with a shadow copy; the flash image is checked to be sparse and the staged
//! bytes to be released.

use std::collections::HashMap;

use flashlab_sim::blockdev::{BlockDevice, Command};
use flashlab_sim::host::Op;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

mod small_device;
use flashlab_sim::config::ExperimentConfig;
use small_device::{set_up, SET_UPS};

/// What the shadow knows of a sector: its bytes, or unknown after a trim.
type Shadow = Vec<Option<Vec<u8>>>;

/// `ftl`'s set-up, on a smaller device where the shared one is large.
fn config(ftl: &str, extra: &[&str]) -> ExperimentConfig {
    let (preset, mut sets) = set_up(ftl);
    // Smaller devices where the shared set-up is large (a test of seconds, not a minute).
    let smaller: &[&str] = match ftl {
        "part-ftl" => &["geometry.pages_per_block=8"],
        "dftl" | "dftl-entry" | "cdftl" | "fmmu" => {
            &["geometry.blocks_per_plane=32", "ftl.over_provisioning=0.3"]
        }
        _ => &[],
    };
    sets.extend(smaller.iter().chain(extra).map(|s| s.to_string()));
    let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
    ExperimentConfig::with_sets(preset, &sets).unwrap_or_else(|e| panic!("{ftl}: {e}"))
}

fn run(ftl: &str, seed: u64) {
    let cfg = config(ftl, &[]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flash.img");
    let mut dev = BlockDevice::create(&cfg, &path).unwrap_or_else(|e| panic!("{ftl}: {e}"));
    let sb = dev.sector_bytes();
    let sectors = dev.size_bytes() / sb;
    let mut shadow: Shadow = vec![Some(vec![0; sb as usize]); sectors as usize];
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let mut expected: HashMap<u64, (u64, Shadow)> = HashMap::new();
    let mut finished = Vec::new();
    let mut written = 0u64;
    let target = 2 * dev.size_bytes();
    let mut in_flight = 0usize;
    let mut reads_checked = 0u64;
    while written < target || in_flight > 0 {
        while written < target && in_flight < 16 {
            let len = rng.random_range(1..=16u64).min(sectors);
            let first = rng.random_range(0..=sectors - len);
            let pick = rng.random_range(0..100);
            let command = if pick < 55 {
                let data: Vec<u8> = (0..len * sb).map(|_| rng.random()).collect();
                for (i, s) in (first..first + len).enumerate() {
                    let at = i * sb as usize;
                    shadow[s as usize] = Some(data[at..at + sb as usize].to_vec());
                }
                written += len * sb;
                Command::Write {
                    offset: first * sb,
                    data,
                    fua: pick < 5,
                }
            } else if pick < 90 {
                Command::Read {
                    offset: first * sb,
                    len: len * sb,
                }
            } else if pick < 97 {
                for s in first..first + len {
                    shadow[s as usize] = None;
                }
                Command::Trim {
                    offset: first * sb,
                    len: len * sb,
                }
            } else {
                Command::Flush
            };
            let is_read = matches!(command, Command::Read { .. });
            let ticket = dev.submit(command).unwrap_or_else(|e| panic!("{ftl}: {e}"));
            if is_read {
                let want = shadow[first as usize..(first + len) as usize].to_vec();
                expected.insert(ticket, (first, want));
            }
            in_flight += 1;
        }
        dev.run_until_served()
            .unwrap_or_else(|e| panic!("{ftl}: {e}"));
        finished.clear();
        dev.collect(&mut finished).unwrap();
        for f in &finished {
            in_flight -= 1;
            let data = f
                .result
                .as_ref()
                .unwrap_or_else(|e| panic!("{ftl}: ticket {} failed: {e}", f.ticket));
            if f.op != Op::Read {
                continue;
            }
            let (first, want) = expected.remove(&f.ticket).expect("a read we sent");
            let got = data.as_ref().expect("read data");
            for (i, w) in want.iter().enumerate() {
                if let Some(w) = w {
                    let at = i * sb as usize;
                    assert!(
                        &got[at..at + sb as usize] == w.as_slice(),
                        "{ftl} seed {seed}: sector {} read back other bytes",
                        first + i as u64
                    );
                }
            }
            reads_checked += 1;
        }
    }
    let sim = dev.simulation();
    sim.check_invariants()
        .unwrap_or_else(|e| panic!("{ftl}: {e}"));
    let c = dev.counters();
    assert_eq!(c.missing_sectors, 0, "{ftl}: sectors found nowhere");
    assert!(c.blocks_erased > 0, "{ftl}: no GC happened ({c:?})");
    assert!(reads_checked > 50, "{ftl}: only {reads_checked} reads");
    // Sparse: the disk the image takes is at most what the flash holds written, not its
    // apparent size.
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(&path).unwrap();
    assert!(
        meta.blocks() * 512 < meta.len(),
        "{ftl}: image not sparse ({} of {} bytes allocated)",
        meta.blocks() * 512,
        meta.len()
    );
}

#[test]
fn every_ftl_serves_real_bytes() {
    for &(ftl, ..) in SET_UPS {
        let started = std::time::Instant::now();
        run(ftl, 1);
        eprintln!("{ftl}: {:.1} s", started.elapsed().as_secs_f64());
    }
}

/// Every recoverable FTL reopened from its image three times, as after a kill: random writes
/// (the logical space written about once per generation, so GC runs), a flush, the device
/// dropped without closing, reopened (the FTL's recovery), and every sector read back byte
/// for byte; then reopened at once, reading back the flash's pages as they were: what
/// recovery wrote (the demand-paged FTLs rewrite their translation pages) reached the image.
#[test]
fn every_recoverable_ftl_reopens_its_image_with_every_flushed_byte() {
    for &ftl in flashlab_sim::ftl::registry::RECOVERABLE {
        // pagemap keeps moved units safe with this (what `flashlab serve` sets).
        let safe_gc: &[&str] = if ftl == "pagemap" {
            &["ftl.gc_program_before_erase=true"]
        } else {
            &[]
        };
        let cfg = config(ftl, safe_gc);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("flash.img");
        let mut dev = BlockDevice::create(&cfg, &path).unwrap_or_else(|e| panic!("{ftl}: {e}"));
        let sb = dev.sector_bytes();
        let sectors = dev.size_bytes() / sb;
        let mut shadow = vec![vec![0u8; sb as usize]; sectors as usize];
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        for generation in 0..3 {
            let mut written = 0;
            while written < dev.size_bytes() {
                for _ in 0..16 {
                    let len = rng.random_range(1..=16u64).min(sectors);
                    let first = rng.random_range(0..=sectors - len);
                    let data: Vec<u8> = (0..len * sb).map(|_| rng.random()).collect();
                    for (i, s) in (first..first + len).enumerate() {
                        let at = i * sb as usize;
                        shadow[s as usize] = data[at..at + sb as usize].to_vec();
                    }
                    written += len * sb;
                    let write = Command::Write {
                        offset: first * sb,
                        data,
                        fua: false,
                    };
                    dev.submit(write).unwrap_or_else(|e| panic!("{ftl}: {e}"));
                }
                serve_all(&mut dev, ftl, 16);
            }
            dev.submit(Command::Flush).unwrap();
            serve_all(&mut dev, ftl, 1);
            drop(dev);
            let (reopened, report) = BlockDevice::open(&path)
                .unwrap_or_else(|e| panic!("{ftl} reopening {generation}: {e}"));
            dev = reopened;
            assert!(report.scan.units_recovered > 0, "{ftl}: {:?}", report.scan);
            let chunk = 64.min(sectors);
            for first in (0..sectors).step_by(chunk as usize) {
                let len = chunk.min(sectors - first);
                let read = Command::Read {
                    offset: first * sb,
                    len: len * sb,
                };
                dev.submit(read).unwrap();
                let got = serve_all(&mut dev, ftl, 1)
                    .pop()
                    .flatten()
                    .expect("read data");
                for i in 0..len as usize {
                    let at = i * sb as usize;
                    assert!(
                        got[at..at + sb as usize] == shadow[first as usize + i][..],
                        "{ftl} after reopening {generation}: sector {} read back other bytes",
                        first + i as u64
                    );
                }
            }
            // The image holds what the flash holds (recovery's writes included): reopened at
            // once, it reads back the same pages programmed (data or spare area only) and
            // blocks written.
            let nand = dev.simulation().nand();
            let layout = *nand.layout();
            let pages = (0..layout.pages())
                .filter(|&p| nand.partial_programs(p) > 0)
                .count() as u64;
            let blocks = nand.blocks().iter().filter(|b| b.write_ptr > 0).count() as u64;
            drop(dev);
            let (reopened, report) = BlockDevice::open(&path).unwrap();
            dev = reopened;
            assert_eq!(
                (
                    report.restore.pages_programmed,
                    report.restore.blocks_written
                ),
                (pages, blocks),
                "{ftl} after reopening {generation}: the image is not the flash"
            );
        }
    }
}

/// Serves the `count` commands submitted; returns their data (reads') in completion order.
fn serve_all(dev: &mut BlockDevice, ftl: &str, count: usize) -> Vec<Option<Vec<u8>>> {
    let mut finished = Vec::new();
    while finished.len() < count {
        dev.run_until_served()
            .unwrap_or_else(|e| panic!("{ftl}: {e}"));
        dev.collect(&mut finished).unwrap();
    }
    finished
        .into_iter()
        .map(|f| {
            let data = f
                .result
                .unwrap_or_else(|e| panic!("{ftl}: ticket {} failed: {e}", f.ticket));
            data.map(|d| d.to_vec())
        })
        .collect()
}
