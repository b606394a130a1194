//! The web-browser workload: a seeded model of what kast.txt's "storage I/O trace extracted
//! running web browser which generates many small random access files" (Internet Explorer,
//! section IV; not public) is made of: the browser's disk cache (IE's Temporary Internet
//! Files) on a FAT32 volume ([`super::fatvol`]), as the file system sends it to the disk.
//!
//! - **The volume** is a FAT32 volume over the addressed range. Before the stream starts,
//!   other files (the system, programs, documents) hold `used_fraction` of its data area, in
//!   files of 4 KiB-4 MiB (log-uniform) with free gaps between them (a gap's mean is its file's
//!   size times (1 - used) / used: equal at the default 0.5); the stream never writes them. Cache files are allocated next-fit in the gaps, so one cache
//!   file is one or a few contiguous runs, and consecutive files sit next to each other.
//! - **Page views**: each fetches 5-40 objects (pages of the time held 40-50 objects, many of
//!   them already in the memory cache). An object is in the disk cache with probability
//!   `hit_fraction`: the browser reads its file (whole, in requests of at most 64 KiB); one hit
//!   in ten finds the object changed and replaces it (the old file deleted, a new one written).
//!   Otherwise (a miss) the object is downloaded and written to a new cache file.
//! - **Objects** are log-normal in size: median 8 KiB, sigma 1.3 (mean about 19 KiB), cut to
//!   512 B-512 KiB: mostly a few KiB (images, scripts, style sheets), a few hundred KiB at
//!   most (large images, flash objects), the heavy-tailed web object sizes measured in the
//!   2000s. A file takes whole 4 KiB clusters and is written sequentially when the browser
//!   closes it, in requests of at most 64 KiB (the cache manager's write size).
//! - **Eviction**: the cache holds at most `cache_fraction` of the volume (IE's default of the
//!   time was a few percent of the drive); when a new file would pass it, least recently used
//!   files are deleted until the cache is at 90% (IE's scavenger). Deletes write metadata only.
//! - **Hot metadata**: every file created or deleted dirties the FAT sectors of its cluster
//!   chain and its directory entry's sector (four 128-byte entries, long name included, to a
//!   sector); every object fetched (hit or miss) dirties two 4 KiB pages of the cache index
//!   (IE's `index.dat`, a memory-mapped file of 1/64 of the cache, 256 KiB-8 MiB, at the start
//!   of the volume's free space): its URL record's and its hash bucket's, at uniformly random
//!   places. At the end of each page view the dirty FAT and directory sectors and index pages
//!   are written, sorted, adjacent ones merged (the lazy writer's flush, about once a second,
//!   one page view).
//!
//! What makes it a browser and not uniformly random pages: small files written whole and in
//! order, next to each other; the same index pages and FAT and directory sectors rewritten
//! again and again; reads of files written earlier. Requests are at 512-byte sectors (FAT
//! and directory writes are one or a few sectors). One seed reproduces the stream.

use std::collections::{BTreeSet, VecDeque};

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, LogNormal};
use rand_pcg::Pcg64Mcg;

use super::fatvol::{FatVolume, FsRequest, CLUSTER_SECTORS};

/// Seed stream of the model (distinct from the synthetic generator's and the FTL's).
const MODEL_STREAM: u64 = 0x0b10_5e0c_ac4e;
/// Largest request: 64 KiB.
const CHUNK_SECTORS: u64 = 128;
/// Object sizes: log-normal, median 8 KiB, sigma 1.3, cut to 512 B ..= 512 KiB.
const OBJECT_MEDIAN_BYTES: f64 = 8192.0;
const OBJECT_SIGMA: f64 = 1.3;
const OBJECT_MIN_BYTES: u64 = 512;
const OBJECT_MAX_BYTES: u64 = 512 << 10;
/// Objects fetched per page view.
const OBJECTS_PER_VIEW: std::ops::RangeInclusive<u32> = 5..=40;
/// Share of cache hits that find the object changed (a new file replaces it).
const CHANGED_SHARE: f64 = 0.1;
/// Eviction brings the cache down to this share of its quota.
const EVICT_TO: f64 = 0.9;
/// Directory entries (with their long names) per 512-byte sector.
const DIR_ENTRIES_PER_SECTOR: usize = 4;
/// Index pages are 4 KiB.
const INDEX_PAGE_SECTORS: u64 = 8;
/// Pre-existing files: 4 KiB ..= 4 MiB, log-uniform.
const STATIC_FILE_CLUSTERS: (u64, u64) = (1, 1024);

/// The model's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WebParams {
    /// The cache quota, as a share of the volume.
    pub cache_fraction: f64,
    /// Share of the data area other files hold before the stream starts.
    pub used_fraction: f64,
    /// Share of the objects fetched that are in the disk cache.
    pub hit_fraction: f64,
}

/// A cache entry: its clusters and its directory slot.
#[derive(Debug)]
struct Entry {
    chain: Vec<u32>,
    slot: usize,
}

/// The browser-cache request generator (no clock: pacing is the synthetic source's).
#[derive(Debug)]
pub struct WebModel {
    rng: Pcg64Mcg,
    vol: FatVolume,
    sizes: LogNormal<f64>,
    params: WebParams,
    /// Least recently used first.
    lru: VecDeque<Entry>,
    cache_clusters: usize,
    quota_clusters: usize,
    /// Directory slots of deleted entries, reused lowest first.
    free_slots: BTreeSet<usize>,
    next_slot: usize,
    index_first_sector: u64,
    index_pages: u64,
    dirty_index: BTreeSet<u64>,
}

impl WebModel {
    /// A browser cache on a FAT32 volume of `space_sectors` 512-byte sectors. Errors say why
    /// the volume is too small.
    pub fn new(space_sectors: u64, params: WebParams, seed: u64) -> Result<WebModel, String> {
        let mut vol = FatVolume::new(space_sectors, 1.0, CHUNK_SECTORS);
        vol.defer_metadata();
        let volume_clusters = space_sectors / CLUSTER_SECTORS;
        let quota_clusters = (volume_clusters as f64 * params.cache_fraction) as usize;
        if quota_clusters < 256 {
            return Err(format!(
                "a cache of {quota_clusters} 4 KiB clusters ({} of a {space_sectors}-sector volume) is too small (at least 256 clusters, 1 MiB)",
                params.cache_fraction
            ));
        }
        let mut rng = Pcg64Mcg::seed_from_u64(seed ^ MODEL_STREAM);
        occupy_static_files(&mut vol, &mut rng, params.used_fraction);
        let index_clusters = (quota_clusters / 64).clamp(64, 2048);
        if vol.free_clusters() < index_clusters + quota_clusters {
            return Err(format!(
                "the volume's free space ({} clusters after other files take {}) does not hold the cache index and the cache ({} clusters)",
                vol.free_clusters(),
                params.used_fraction,
                index_clusters + quota_clusters
            ));
        }
        let index = vol.allocate(index_clusters).expect("checked free space");
        let index_first_sector = vol.cluster_sector(index[0]);
        // A fragmented index file: its pages are taken from its first run only.
        let index_run = index.windows(2).take_while(|w| w[1] == w[0] + 1).count() + 1;
        Ok(WebModel {
            rng,
            vol,
            sizes: LogNormal::new(OBJECT_MEDIAN_BYTES.ln(), OBJECT_SIGMA).expect("valid"),
            params,
            lru: VecDeque::new(),
            cache_clusters: 0,
            quota_clusters,
            free_slots: BTreeSet::new(),
            next_slot: 0,
            index_first_sector,
            index_pages: (index_run as u64 * CLUSTER_SECTORS / INDEX_PAGE_SECTORS).max(1),
            dirty_index: BTreeSet::new(),
        })
    }

    /// The next request.
    pub fn next_request(&mut self) -> FsRequest {
        loop {
            if let Some(r) = self.vol.out.pop_front() {
                return r;
            }
            self.page_view();
        }
    }

    fn page_view(&mut self) {
        for _ in 0..self.rng.random_range(OBJECTS_PER_VIEW) {
            self.fetch_object();
        }
        self.vol.flush_metadata();
        for page in std::mem::take(&mut self.dirty_index) {
            let at = self.index_first_sector + page * INDEX_PAGE_SECTORS;
            self.vol.write(at, INDEX_PAGE_SECTORS);
        }
    }

    fn fetch_object(&mut self) {
        for _ in 0..2 {
            let page = self.rng.random_range(0..self.index_pages);
            self.dirty_index.insert(page);
        }
        if !self.lru.is_empty() && self.rng.random_bool(self.params.hit_fraction) {
            // Recently used objects are more likely to be fetched again.
            let n = self.lru.len();
            let u: f64 = self.rng.random();
            let from_newest = ((u * u * n as f64) as usize).min(n - 1);
            let entry = self.lru.remove(n - 1 - from_newest).expect("in range");
            if self.rng.random_bool(CHANGED_SHARE) {
                self.delete(entry);
                self.create_object();
            } else {
                self.vol.read_chain(&entry.chain);
                self.lru.push_back(entry);
            }
        } else {
            self.create_object();
        }
    }

    fn object_clusters(&mut self) -> usize {
        let bytes =
            (self.sizes.sample(&mut self.rng) as u64).clamp(OBJECT_MIN_BYTES, OBJECT_MAX_BYTES);
        bytes.div_ceil(CLUSTER_SECTORS * 512) as usize
    }

    fn create_object(&mut self) {
        let clusters = self.object_clusters();
        if self.cache_clusters + clusters > self.quota_clusters {
            let target = (self.quota_clusters as f64 * EVICT_TO) as usize;
            while self.cache_clusters + clusters > target {
                let Some(old) = self.lru.pop_front() else {
                    break;
                };
                self.delete(old);
            }
        }
        let Some(chain) = self.vol.allocate(clusters) else {
            return;
        };
        let slot = self.free_slots.pop_first().unwrap_or_else(|| {
            self.next_slot += 1;
            self.next_slot - 1
        });
        self.vol.write_chain(&chain);
        self.vol.metadata(&chain, slot / DIR_ENTRIES_PER_SECTOR);
        self.cache_clusters += chain.len();
        self.lru.push_back(Entry { chain, slot });
    }

    fn delete(&mut self, entry: Entry) {
        self.vol.release(&entry.chain);
        self.vol
            .metadata(&entry.chain, entry.slot / DIR_ENTRIES_PER_SECTOR);
        self.cache_clusters -= entry.chain.len();
        self.free_slots.insert(entry.slot);
    }
}

/// Other files fill `fraction` of the data area: runs of 4 KiB-4 MiB (log-uniform) with free
/// gaps of the same mean size times (1 - fraction) / fraction between them.
fn occupy_static_files(vol: &mut FatVolume, rng: &mut Pcg64Mcg, fraction: f64) {
    if fraction <= 0.0 {
        return;
    }
    let clusters = vol.capacity_clusters();
    let (lo, hi) = STATIC_FILE_CLUSTERS;
    let mut at = 0usize;
    while at < clusters {
        let (a, b) = ((lo as f64).ln(), (hi as f64 + 1.0).ln());
        let len = (rng.random_range(a..b).exp() as usize).clamp(lo as usize, hi as usize);
        let gap_mean = len as f64 * (1.0 - fraction) / fraction;
        let gap = rng.random_range(0.0..=2.0 * gap_mean).round() as usize;
        vol.occupy(at, len);
        at += len + gap;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARAMS: WebParams = WebParams {
        cache_fraction: 0.03,
        used_fraction: 0.5,
        hit_fraction: 0.4,
    };

    #[test]
    fn too_small_a_cache_is_refused() {
        // 16 MiB: a 3% cache is 122 clusters.
        let Err(e) = WebModel::new(16 * 2048, PARAMS, 1) else {
            panic!("a 122-cluster cache accepted")
        };
        assert!(e.contains("too small"), "{e}");
        let full = WebParams {
            used_fraction: 0.99,
            ..PARAMS
        };
        let Err(e) = WebModel::new(256 * 2048, full, 1) else {
            panic!("a cache with no free space accepted")
        };
        assert!(e.contains("free space"), "{e}");
    }

    #[test]
    fn one_seed_one_stream() {
        let take = |seed| {
            let mut m = WebModel::new(1 << 21, PARAMS, seed).unwrap();
            (0..2000).map(|_| m.next_request()).collect::<Vec<_>>()
        };
        assert_eq!(take(3), take(3));
        assert_ne!(take(3), take(4));
    }
}
