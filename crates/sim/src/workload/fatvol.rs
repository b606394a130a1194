//! A FAT32-like volume, the file model shared by the file-system-benchmark stream
//! ([`super::fsbench`]) and the web-browser cache ([`super::web`]): the sector requests a FAT
//! driver sends when files are created, written, rewritten and deleted.
//!
//! Layout, in 512-byte sectors: with [`FatVolume::new`], the FAT (4 bytes per 4 KiB cluster)
//! from sector 0, one copy, then a directory region of [`DIR_SECTORS`], then the data area
//! (the web-cache stand-in's volume). With [`FatVolume::fat32`], a FAT32 volume as `mkfs.vfat`
//! lays it out: a reserved region of [`RESERVED_SECTORS`] (boot sector, FSInfo, backup boot
//! sector), the FAT and its mirror copy (FAT32 keeps two FATs by default: every FAT sector
//! change is written to both), the root directory, the data area. Clusters are allocated next-fit
//! (a cursor that moves on and wraps, as FAT drivers do), so new files are laid out one after
//! the other in the free space wherever the cursor is. A file change writes its data (in
//! requests of at most `write_chunk_sectors`), then the FAT sectors of its cluster chain and
//! one directory sector; a delete writes FAT and directory sectors only (no TRIM). With
//! `deferred_metadata` the FAT and directory sectors are only marked dirty and written by
//! [`FatVolume::flush_metadata`], sorted and merged into runs (a lazy writer's periodic flush);
//! otherwise each is written at once.

use std::collections::{BTreeSet, VecDeque};

use crate::host::Op;

/// One request of a stream, in 512-byte sectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsRequest {
    pub op: Op,
    pub first_sector: u64,
    pub sectors: u64,
}

/// Sectors per 4 KiB cluster.
pub const CLUSTER_SECTORS: u64 = 8;
/// Sectors of the directory region.
pub const DIR_SECTORS: u64 = 32;
/// Reserved sectors before the first FAT of a FAT32 volume (`mkfs.vfat`'s default).
pub const RESERVED_SECTORS: u64 = 32;

/// The volume and the requests its changes produced, oldest first.
#[derive(Debug)]
pub struct FatVolume {
    pub out: VecDeque<FsRequest>,
    /// Data-area clusters in use.
    used: Vec<bool>,
    /// Free clusters below `limit`.
    free: usize,
    cursor: usize,
    data_start: u64,
    /// Clusters the volume may use (a utilisation below the whole data area).
    limit: usize,
    write_chunk_sectors: u64,
    deferred_metadata: bool,
    dirty: BTreeSet<u64>,
    /// First sector of the first FAT.
    fat_start: u64,
    /// Sectors of one FAT.
    fat_sectors: u64,
    /// FAT copies (1, or 2 with the mirror).
    fats: u64,
    /// Sectors written and read so far.
    pub written_sectors: u64,
    pub read_sectors: u64,
}

impl FatVolume {
    /// A volume over `space_sectors` whose files may use about `utilisation` of it.
    pub fn new(space_sectors: u64, utilisation: f64, write_chunk_sectors: u64) -> FatVolume {
        let top = (space_sectors as f64 * utilisation) as u64;
        Self::layout(space_sectors, top, write_chunk_sectors, 0, 1)
    }

    /// A FAT32 volume over `space_sectors` (reserved region, FAT and mirror, root directory)
    /// whose files stay below sector `top_sectors`.
    pub fn fat32(space_sectors: u64, top_sectors: u64, write_chunk_sectors: u64) -> FatVolume {
        Self::layout(
            space_sectors,
            top_sectors,
            write_chunk_sectors,
            RESERVED_SECTORS,
            2,
        )
    }

    fn layout(
        space_sectors: u64,
        top_sectors: u64,
        write_chunk_sectors: u64,
        fat_start: u64,
        fats: u64,
    ) -> FatVolume {
        let clusters = space_sectors / CLUSTER_SECTORS;
        let fat_sectors = (clusters * 4).div_ceil(512);
        let data_start = fat_start + fats * fat_sectors + DIR_SECTORS;
        let data_clusters = (space_sectors.saturating_sub(data_start) / CLUSTER_SECTORS) as usize;
        let limit = ((top_sectors as f64 - data_start as f64) / CLUSTER_SECTORS as f64)
            .clamp(1.0, data_clusters.max(1) as f64) as usize;
        FatVolume {
            fat_start,
            fat_sectors,
            fats,
            written_sectors: 0,
            read_sectors: 0,
            out: VecDeque::new(),
            used: vec![false; data_clusters.max(1)],
            free: limit,
            cursor: 0,
            data_start,
            limit,
            write_chunk_sectors: write_chunk_sectors.max(1),
            deferred_metadata: false,
            dirty: BTreeSet::new(),
        }
    }

    /// FAT and directory sectors are written by [`Self::flush_metadata`] only.
    pub fn defer_metadata(&mut self) {
        self.deferred_metadata = true;
    }

    /// Sectors before the data area (FAT and directory).
    pub fn data_start(&self) -> u64 {
        self.data_start
    }

    /// First sector of the first FAT.
    pub fn fat_start(&self) -> u64 {
        self.fat_start
    }

    /// Sectors of one FAT copy.
    pub fn fat_sectors_per_copy(&self) -> u64 {
        self.fat_sectors
    }

    /// Clusters files may use.
    pub fn capacity_clusters(&self) -> usize {
        self.limit
    }

    pub fn free_clusters(&self) -> usize {
        self.free
    }

    pub fn push(&mut self, op: Op, first_sector: u64, sectors: u64) {
        match op {
            Op::Write => self.written_sectors += sectors,
            Op::Read => self.read_sectors += sectors,
            _ => {}
        }
        self.out.push_back(FsRequest {
            op,
            first_sector,
            sectors,
        });
    }

    /// Writes `sectors` from `first` in requests of at most the write chunk.
    pub fn write(&mut self, first: u64, sectors: u64) {
        self.transfer(Op::Write, first, sectors);
    }

    fn transfer(&mut self, op: Op, first: u64, sectors: u64) {
        let mut at = first;
        while at < first + sectors {
            let n = self.write_chunk_sectors.min(first + sectors - at);
            self.push(op, at, n);
            at += n;
        }
    }

    pub fn cluster_sector(&self, c: u32) -> u64 {
        self.data_start + u64::from(c) * CLUSTER_SECTORS
    }

    /// Metadata of a file change: the FAT sectors of its chain (in every FAT copy) and one
    /// directory sector (`dir_slot` modulo the directory region).
    pub fn metadata(&mut self, chain: &[u32], dir_slot: usize) {
        let mut last = u64::MAX;
        for &c in chain {
            let fat = u64::from(c) * 4 / 512;
            if fat != last {
                for copy in 0..self.fats {
                    self.metadata_sector(self.fat_start + copy * self.fat_sectors + fat);
                }
                last = fat;
            }
        }
        let dir = self.data_start - DIR_SECTORS + (dir_slot as u64 % DIR_SECTORS);
        self.metadata_sector(dir);
    }

    fn metadata_sector(&mut self, sector: u64) {
        if self.deferred_metadata {
            self.dirty.insert(sector);
        } else {
            self.push(Op::Write, sector, 1);
        }
    }

    /// Writes the dirty FAT and directory sectors, in order, adjacent ones in one request.
    pub fn flush_metadata(&mut self) {
        let dirty = std::mem::take(&mut self.dirty);
        let mut run: Option<(u64, u64)> = None;
        for s in dirty {
            run = match run {
                Some((first, n)) if first + n == s && n < self.write_chunk_sectors => {
                    Some((first, n + 1))
                }
                Some((first, n)) => {
                    self.push(Op::Write, first, n);
                    Some((s, 1))
                }
                None => Some((s, 1)),
            };
        }
        if let Some((first, n)) = run {
            self.push(Op::Write, first, n);
        }
    }

    /// Marks `clusters` clusters from `first` in use without writing anything (files that
    /// were there before the stream starts).
    pub fn occupy(&mut self, first: usize, clusters: usize) {
        let end = (first + clusters).min(self.limit);
        for c in first.min(end)..end {
            if !self.used[c] {
                self.used[c] = true;
                self.free -= 1;
            }
        }
    }

    /// Allocates `clusters` next-fit from the cursor; None when fewer are free.
    pub fn allocate(&mut self, clusters: usize) -> Option<Vec<u32>> {
        if self.free < clusters {
            return None;
        }
        let mut chain = Vec::with_capacity(clusters);
        while chain.len() < clusters {
            let c = self.cursor;
            self.cursor = (self.cursor + 1) % self.limit;
            if !self.used[c] {
                self.used[c] = true;
                chain.push(c as u32);
            }
        }
        self.free -= clusters;
        Some(chain)
    }

    /// Frees the clusters of a chain (no request: the caller writes the metadata).
    pub fn release(&mut self, chain: &[u32]) {
        for &c in chain {
            if std::mem::replace(&mut self.used[c as usize], false) {
                self.free += 1;
            }
        }
    }

    /// Writes the clusters of a chain, coalescing contiguous runs into requests.
    pub fn write_chain(&mut self, chain: &[u32]) {
        self.chain_runs(Op::Write, chain);
    }

    /// Reads the clusters of a chain, coalescing contiguous runs into requests.
    pub fn read_chain(&mut self, chain: &[u32]) {
        self.chain_runs(Op::Read, chain);
    }

    fn chain_runs(&mut self, op: Op, chain: &[u32]) {
        let mut i = 0;
        while i < chain.len() {
            let mut j = i + 1;
            while j < chain.len() && chain[j] == chain[j - 1] + 1 {
                j += 1;
            }
            let first = self.cluster_sector(chain[i]);
            self.transfer(op, first, (j - i) as u64 * CLUSTER_SECTORS);
            i = j;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocates_next_fit_and_reuses_freed_clusters_after_wrapping() {
        let mut v = FatVolume::new(8 * 1000, 1.0, 32);
        let cap = v.capacity_clusters();
        let a = v.allocate(3).unwrap();
        let b = v.allocate(2).unwrap();
        assert_eq!((a.clone(), b), (vec![0, 1, 2], vec![3, 4]));
        v.release(&a);
        assert_eq!(v.free_clusters(), cap - 2);
        // Next fit: on after b, the freed clusters only once the cursor wraps.
        let c = v.allocate(cap - 5).unwrap();
        assert_eq!(c[0], 5);
        assert_eq!(v.allocate(3).unwrap(), vec![0, 1, 2]);
        assert!(v.allocate(1).is_none());
    }

    #[test]
    fn deferred_metadata_is_written_once_per_sector_in_runs() {
        let mut v = FatVolume::new(8 * 1000, 1.0, 32);
        v.defer_metadata();
        let chain = v.allocate(200).unwrap();
        v.metadata(&chain, 0);
        v.metadata(&chain[..1], 0);
        assert!(v.out.is_empty());
        v.flush_metadata();
        let reqs: Vec<FsRequest> = v.out.drain(..).collect();
        // FAT sectors 0 and 1 (128 clusters a sector) in one request, the directory's first.
        let dir = v.data_start() - DIR_SECTORS;
        assert_eq!(
            reqs,
            vec![
                FsRequest {
                    op: Op::Write,
                    first_sector: 0,
                    sectors: 2
                },
                FsRequest {
                    op: Op::Write,
                    first_sector: dir,
                    sectors: 1
                },
            ]
        );
    }
}
