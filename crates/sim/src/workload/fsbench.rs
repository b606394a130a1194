//! A file-system-benchmark-like stream standing in for the traces of nftl-lookup-pagecache.txt
//! section 4 (not public): the sector requests a FAT32-formatted USB flash disk sees while
//! Andrew, Postmark and IOzone run, as the paper's modified Linux kernel logged them.
//!
//! The volume is modelled, not the benchmarks' code ([`super::fatvol`]): a FAT (4 bytes per
//! 4 KiB cluster) and a root directory at the start of the space, then a data area whose
//! clusters are allocated next-fit. Every file change writes its data in 16 KiB requests, then the FAT sectors of its
//! cluster chain and its directory sector, one sector each: the small, hot metadata rewrites
//! that make NFTL fill replacement blocks and fold. Deleting a file rewrites FAT and directory
//! sectors only (no TRIM). Reads are rare, as the file system's cache absorbs most (Table 3:
//! 0.06-1.9% of requests).
//!
//! Phases, with the file sizes section 4.1 gives: format (FAT and directory written); Andrew
//! (create a source tree of 1-32 KiB files, copy it, read part of it, compile: objects half the
//! sources' size); Postmark (create files of 500 B - 9.77 KiB, 500 transactions each a read or
//! an append plus a create or a delete, delete all); Postmark long (files of 500 B - 3 MiB,
//! scaled to the volume); IOzone (files of 64 KiB and doubling while they fit: write, rewrite,
//! random record rewrites of a hot spot). `combo` runs them all and fills the volume to the
//! utilisation asked (the paper: 94%); `atopm` stops after Postmark (the paper: 23%).

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

pub use super::fatvol::FsRequest;
use super::fatvol::{FatVolume, CLUSTER_SECTORS};
use crate::host::Op;

/// Which benchmarks run (section 4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsTrace {
    /// format, Andrew, Postmark, Postmark long, IOzone.
    Combo,
    /// format, Andrew, Postmark.
    AtoPm,
}

impl FsTrace {
    /// The utilisation the paper reports for the trace (section 4.2: 94% and 23%).
    pub fn paper_utilisation(self) -> f64 {
        match self {
            FsTrace::Combo => 0.94,
            FsTrace::AtoPm => 0.23,
        }
    }
}

/// Data is written in 16 KiB requests.
const WRITE_CHUNK_SECTORS: u64 = 32;

struct Volume {
    rng: Pcg64Mcg,
    vol: FatVolume,
    files: Vec<Vec<u32>>,
}

/// The stream of `trace` on a volume of `space_sectors`, touching about `utilisation` of it.
pub fn generate(trace: FsTrace, space_sectors: u64, utilisation: f64, seed: u64) -> Vec<FsRequest> {
    let mut v = Volume {
        rng: Pcg64Mcg::seed_from_u64(seed),
        vol: FatVolume::new(space_sectors, utilisation, WRITE_CHUNK_SECTORS),
        files: Vec::new(),
    };
    let data_start = v.vol.data_start();
    v.vol.write(0, data_start);
    v.andrew();
    v.postmark(500, 10_000, 500);
    if trace == FsTrace::Combo {
        let limit = v.vol.capacity_clusters() as u64;
        let big = (limit * CLUSTER_SECTORS * 512 / 8).min(3 << 20);
        v.postmark(500, big, 200);
        v.iozone();
    }
    v.vol.out.into()
}

impl Volume {
    /// Creates a file of `bytes`; returns its index, or None when the volume is full.
    fn create(&mut self, bytes: u64) -> Option<usize> {
        let clusters = bytes.div_ceil(CLUSTER_SECTORS * 512).max(1) as usize;
        let chain = self.vol.allocate(clusters)?;
        self.vol.write_chain(&chain);
        let slot = self.files.len();
        self.vol.metadata(&chain, slot);
        self.files.push(chain);
        Some(slot)
    }
    fn delete(&mut self, file: usize) {
        let chain = std::mem::take(&mut self.files[file]);
        self.vol.release(&chain);
        self.vol.metadata(&chain, file);
    }
    fn read_file(&mut self, file: usize) {
        if let Some(&c) = self.files[file].first() {
            let sectors =
                (self.files[file].len() as u64 * CLUSTER_SECTORS).min(WRITE_CHUNK_SECTORS);
            let at = self.vol.cluster_sector(c);
            self.vol.push(Op::Read, at, sectors);
        }
    }
    fn rewrite(&mut self, file: usize) {
        let chain = self.files[file].clone();
        self.vol.write_chain(&chain);
        self.vol.metadata(&chain, file);
    }
    fn live(&mut self) -> Option<usize> {
        let live: Vec<usize> = (0..self.files.len())
            .filter(|&f| !self.files[f].is_empty())
            .collect();
        (!live.is_empty()).then(|| live[self.rng.random_range(0..live.len())])
    }
    fn andrew(&mut self) {
        let mut sources = Vec::new();
        for _ in 0..70 {
            let bytes = self.rng.random_range(1024..32 * 1024);
            if let Some(f) = self.create(bytes) {
                sources.push((f, bytes));
            }
        }
        for &(f, bytes) in &sources.clone() {
            if self.rng.random_bool(0.02) {
                self.read_file(f);
            }
            let _ = self.create(bytes);
        }
        for &(_, bytes) in &sources {
            let _ = self.create(bytes / 2);
        }
    }
    fn postmark(&mut self, min_bytes: u64, max_bytes: u64, files: usize) {
        let first = self.files.len();
        for _ in 0..files {
            let bytes = self.rng.random_range(min_bytes..=max_bytes);
            let _ = self.create(bytes);
        }
        for _ in 0..500 {
            let Some(f) = self.live() else { break };
            if self.rng.random_bool(0.02) {
                self.read_file(f);
            } else {
                // Append: the last cluster rewritten, FAT and directory updated.
                let chain = self.files[f].clone();
                if let Some(&last) = chain.last() {
                    let at = self.vol.cluster_sector(last);
                    self.vol.write(at, CLUSTER_SECTORS);
                    self.vol.metadata(&chain[chain.len() - 1..], f);
                }
            }
            if self.rng.random_bool(0.5) {
                let bytes = self.rng.random_range(min_bytes..=max_bytes);
                let _ = self.create(bytes);
            } else if let Some(g) = self.live() {
                self.delete(g);
            }
        }
        for f in first..self.files.len() {
            if !self.files[f].is_empty() {
                self.delete(f);
            }
        }
    }
    fn iozone(&mut self) {
        let mut bytes = 64 * 1024;
        while let Some(f) = self.create(bytes) {
            self.rewrite(f);
            self.read_file(f);
            // Record rewrites of a hot spot (the first 64 KiB of the file), random writes.
            let chain = self.files[f].clone();
            let hot = chain.len().min(16);
            for _ in 0..chain.len().min(64) {
                let c = chain[self.rng.random_range(0..hot)];
                let at = self.vol.cluster_sector(c);
                self.vol.write(at, CLUSTER_SECTORS);
            }
            bytes *= 2;
        }
        // Fill to the utilisation asked with the largest file that still fits, then rewrite it.
        let free = self.vol.free_clusters() as u64;
        if let Some(f) = self.create(free * CLUSTER_SECTORS * 512) {
            self.rewrite(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combo_fills_the_volume_to_the_utilisation_asked_and_atopm_stays_low() {
        let space = 8192;
        let highest = |reqs: &[FsRequest]| {
            reqs.iter()
                .map(|r| r.first_sector + r.sectors)
                .max()
                .unwrap()
        };
        let combo = generate(FsTrace::Combo, space, 0.94, 1);
        let top = highest(&combo) as f64 / space as f64;
        assert!((0.85..=0.95).contains(&top), "combo reaches {top}");
        let atopm = generate(FsTrace::AtoPm, space, 0.23, 1);
        let top = highest(&atopm) as f64 / space as f64;
        assert!(top <= 0.24, "atopm reaches {top}");
        for reqs in [&combo, &atopm] {
            let reads = reqs.iter().filter(|r| r.op == Op::Read).count() as f64;
            let share = reads / reqs.len() as f64;
            assert!(share > 0.0 && share < 0.03, "read share {share}");
        }
        assert_eq!(
            generate(FsTrace::Combo, space, 0.94, 1),
            combo,
            "one seed, one stream"
        );
    }
}
