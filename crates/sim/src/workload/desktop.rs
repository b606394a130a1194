//! The desktop workload: a seeded model of the block I/O of a Windows PC "while installing
//! programs, surfing the Internet, editing documents, and so on", the trace the multi-threaded
//! FTL paper replays (multithreaded-ftl-ucos.txt, "Performance Evaluation": 282 GB read,
//! 371 GB written, compacted to its 4 GB board by removing the unused holes). That trace is not
//! public; this model is built to look like it, as a synthetic workload kind
//! (`--workload desktop`) and as a trace file (`flashlab trace generate desktop`).
//!
//! # The volume
//!
//! The model lays a file system out over a large sparse partition, like a real NTFS volume:
//! the `footprint` (the bytes the stream may ever touch) is cut into equal allocation groups
//! (a power of two from 1 MiB to 64 MiB, about 256 groups), placed in order over the
//! partition with random holes between them. Requests never cross a group (one that would is
//! split there, as a fragmented file is), so the stream touches at most `footprint` bytes,
//! however long it runs, and replaying it with `trace.address_map = "compact"` removes the
//! holes and fits it on a small device: the paper's method. Inside the footprint, in order:
//!
//! | region | share | what it models |
//! |---|---|---|
//! | system files | 18% | Windows and its libraries: read, never written |
//! | MFT | 2% | file-system metadata: 4 KiB records, hot, written at every file change |
//! | registry | 1% | the hives: 4 KiB reads and writes, hot |
//! | logs | 1% | `$LogFile`, event logs: appends of 4-64 KiB that wrap around |
//! | browser cache | 6% | a hot tenth (the cache index, history and cookie databases) rewritten in place, the rest a circular store of new entries |
//! | heap | 72% | files: programs, documents, downloads, temporary files |
//!
//! Files in the heap are allocated next-fit by a cursor over the free extents (so a file may
//! be fragmented into several extents, and the space of deleted files is reused); the heap
//! starts 55% full of pre-installed programs and documents with free gaps between them.
//! Whenever it would pass 85% full, random programs and downloads (more rarely documents)
//! are deleted until it is 75% full ("uninstalling"). Deletions only write metadata (no trim:
//! the data stays valid for the FTL until it is overwritten), so the FTL sees overwrites of
//! stale space and garbage-collection pressure, as on a real volume.
//!
//! # The activities
//!
//! The stream is a sequence of phases, each one activity chosen at random (weights below),
//! made of actions:
//!
//! - **installing a program** (8-30 files): per file, a slice of the installer package (a
//!   download, when there is one; about 60% of the file's size, as compressed) is read, then
//!   the file is written sequentially in requests of 64 KiB-1 MiB (one size per file, as a
//!   copy engine does), with an MFT record after each file, an NTFS log record every 8
//!   requests and some registry writes. File sizes: half small (4-64 KiB), half 64 KiB-16 MiB,
//!   log-uniform (many small files, most bytes in a few large ones).
//! - **browsing**: per page, 3-12 small writes (4-16 KiB, mostly 4-8 KiB) to the browser
//!   cache (45% rewrites of its hot tenth, the rest new entries), 2-8 small cache reads, page
//!   faults in system libraries, metadata and log writes; on 8% of the pages a plug-in or
//!   library of the browser is loaded, on 1% a file is downloaded (1-64 MiB written in
//!   64-256 KiB requests; later installs read it as their package).
//! - **editing a document** (10-60 edits): the editor's program files are loaded, the
//!   document (16 KiB-8 MiB) is read sequentially, then each edit writes 1-3 small blocks at
//!   random places of a temporary file and sometimes reads a small piece of the document;
//!   every 5-15 edits the document is saved by rewriting it whole, sequentially, either in
//!   place or (like Word) as a new file replacing the old one, which is deleted. A quarter of
//!   the sessions create a new document.
//! - **background**: reads of system files (64 KiB-2 MiB with page faults), programs starting
//!   (some of their files read whole), log appends, registry reads and writes, metadata
//!   flushes, and scans of files (indexer, antivirus).
//!
//! Loading a program file is a few page faults (small reads at random places of it) and a
//! sequential read from its start in 64-256 KiB requests (prefetcher, loader): that is where
//! most small reads and most read bytes of a desktop come from.
//!
//! # The mix
//!
//! Phases are chosen with weights 10 (install), 36 (browse), 22 (edit) and 34 (background),
//! leaned on by the running byte counts: when bytes written / bytes read strays from the
//! paper's 371 / 282 = 1.32 (Table 2), writing activities (install, browse) become less likely
//! and background reading more, or the other way round (weights times e^(-+8 d) and
//! e^(-+4 d), d = ln(ratio / 1.32)). Without it the ratio of one run would wander with its few
//! largest installs and downloads; with it every long run keeps the paper's ratio while each
//! phase stays what it is. Measured (`crates/sim/tests/desktop_workload.rs`, footprint 3 GiB):
//! bytes written / read 1.24-1.46 over 100,000 requests (30 seeds, median 1.31) and 1.28 over
//! a million; median request 8-12 KiB; 87% of the bytes in requests of 64 KiB or more; about
//! 40% of the requests start where the previous one ended (sequential). Requests are
//! multiples of 4 KiB at 4 KiB-aligned offsets, at most 1 MiB, reads and writes only (the
//! paper reports only reads and writes; MSR, SPC and DiskSim files have nothing else).
//!
//! # Time
//!
//! The model itself has no clock. [`ThinkTime`] gives inter-arrival times for an open loop: a
//! desktop's I/O comes in bursts (a program starting, a page loading) separated by the user's
//! think time. Each request starts a new burst with probability 1/64 (bursts of 64 requests on
//! average); inside a burst gaps are exponential with a twentieth of the mean gap; a new burst
//! comes after a log-normal idle gap (sigma 1.5: mostly under a few seconds, sometimes much
//! longer) whose mean makes the long-run rate exactly the one asked for.
//!
//! # Reproducibility
//!
//! One seed reproduces the stream exactly; the model has no global state, and the request
//! stream does not depend on the arrival process (it has its own random generator). The hot
//! path allocates nothing: requests wait in a small preallocated queue; memory is allocated
//! only when a file is created (its extent list, the free-space map).

use std::collections::{BTreeMap, VecDeque};

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp, LogNormal};
use rand_pcg::Pcg64Mcg;

use crate::host::{Op, Request};

/// Granularity of the model: every offset and size is a multiple of it.
pub const CLUSTER_BYTES: u64 = 4096;
/// Largest request the model issues.
pub const MAX_REQUEST_BYTES: u64 = 1 << 20;
/// Smallest footprint the model can lay its regions out in.
pub const MIN_FOOTPRINT_BYTES: u64 = 32 << 20;
/// Share of the addressed range the synthetic `desktop` workload may touch (the rest is
/// holes, as on a real volume, and leaves the FTL room).
pub const WORKLOAD_FOOTPRINT_FRACTION: f64 = 0.6;

/// Seed stream of the model's random choices (distinct from the arrival process').
const MODEL_STREAM: u64 = 0xde5c_7009_0de1;
/// Seed stream of [`DesktopTrace`]'s arrival process.
const TIME_STREAM: u64 = 0x7111_cc71_7e00;

/// Aim for about this many allocation groups.
const TARGET_GROUPS: u64 = 256;
/// Allocation group bounds, in clusters (1 MiB, 64 MiB).
const GROUP_MIN: u64 = 256;
const GROUP_MAX: u64 = 16384;

/// Region shares of the footprint (the heap gets the rest).
const SYSTEM_SHARE: f64 = 0.18;
const MFT_SHARE: f64 = 0.02;
const REGISTRY_SHARE: f64 = 0.01;
const LOG_SHARE: f64 = 0.01;
const CACHE_SHARE: f64 = 0.06;
/// Share of the browser cache that is hot (index, history, cookies), at its start.
const CACHE_HOT_SHARE: f64 = 0.1;

/// Heap fill: initial, the level that triggers deletions, the level they bring it down to.
const HEAP_INITIAL_FILL: f64 = 0.55;
const HEAP_HIGH_WATER: f64 = 0.85;
const HEAP_LOW_WATER: f64 = 0.75;

/// Most page faults taken when a program file is loaded.
const PAGE_FAULTS_MAX: u64 = 12;

/// Phase weights: install, browse, edit, background.
const PHASE_WEIGHTS: [f64; 4] = [10.0, 36.0, 22.0, 32.0];
/// Bytes written / bytes read the phase choice steers toward (Table 2: 371 GB / 282 GB).
pub const TARGET_WRITE_READ_RATIO: f64 = 371.0 / 282.0;

/// Request sizes of small I/O, in clusters, with weights (4, 8, 12, 16 KiB).
const SMALL_SIZES: [(u64, u32); 4] = [(1, 50), (2, 30), (3, 8), (4, 12)];
/// Log append sizes (4, 8, 16, 64 KiB).
const LOG_SIZES: [(u64, u32); 4] = [(1, 50), (2, 20), (4, 15), (16, 15)];
/// Install write request sizes (64 KiB .. 1 MiB).
const INSTALL_CHUNKS: [(u64, u32); 5] = [(16, 30), (32, 20), (64, 20), (128, 15), (256, 15)];
/// Read request sizes of program and system files (64, 128, 256 KiB).
const READ_CHUNKS: [(u64, u32); 3] = [(16, 40), (32, 40), (64, 20)];
/// Document save and download request sizes (64, 128, 256 KiB).
const SAVE_CHUNKS: [(u64, u32); 3] = [(16, 50), (32, 30), (64, 20)];

/// One request of the model, in bytes of the partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DesktopRequest {
    pub op: Op,
    pub offset_bytes: u64,
    pub len_bytes: u64,
}

/// A span of compact clusters (the footprint's own numbering, before holes are added).
#[derive(Debug, Clone, Copy)]
struct Region {
    start: u64,
    len: u64,
}

/// A request in compact clusters.
#[derive(Debug, Clone, Copy)]
struct Pending {
    op: Op,
    start: u64,
    len: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileKind {
    Program,
    Document,
    Download,
    Temp,
}

#[derive(Debug)]
struct File {
    kind: FileKind,
    clusters: u64,
    /// (first compact cluster, clusters), in file order.
    extents: Vec<(u64, u64)>,
    /// Index in `Heap::live`.
    live_index: usize,
}

/// The heap region: files and free space.
#[derive(Debug)]
struct Heap {
    region: Region,
    /// Free extents: first cluster -> length.
    free: BTreeMap<u64, u64>,
    free_clusters: u64,
    /// Next-fit cursor.
    cursor: u64,
    files: Vec<Option<File>>,
    vacant: Vec<u32>,
    /// Ids of the files that exist.
    live: Vec<u32>,
}

impl Heap {
    fn new(region: Region) -> Heap {
        let mut free = BTreeMap::new();
        free.insert(region.start, region.len);
        Heap {
            region,
            free,
            free_clusters: region.len,
            cursor: region.start,
            files: Vec::new(),
            vacant: Vec::new(),
            live: Vec::new(),
        }
    }

    fn used(&self) -> u64 {
        self.region.len - self.free_clusters
    }

    fn file(&self, id: u32) -> &File {
        self.files[id as usize].as_ref().expect("live file")
    }

    /// Allocates up to `need` clusters next-fit from the cursor (fragmenting when the free
    /// extent there is short); returns the new file's id. A full heap gives an empty file.
    fn allocate(&mut self, kind: FileKind, need: u64) -> u32 {
        let need = need.min(self.free_clusters);
        let mut extents = Vec::with_capacity(2);
        let mut got = 0;
        while got < need {
            // The free extent holding the cursor, else the next one, else the first.
            let containing = self
                .free
                .range(..=self.cursor)
                .next_back()
                .filter(|(&s, &l)| s + l > self.cursor)
                .or_else(|| self.free.range(self.cursor..).next())
                .or_else(|| self.free.iter().next())
                .map(|(&s, &l)| (s, l));
            let Some((s, l)) = containing else { break };
            let start = if (s..s + l).contains(&self.cursor) {
                self.cursor
            } else {
                s
            };
            let take = (s + l - start).min(need - got);
            self.free.remove(&s);
            if s < start {
                self.free.insert(s, start - s);
            }
            if start + take < s + l {
                self.free.insert(start + take, s + l - start - take);
            }
            self.free_clusters -= take;
            got += take;
            match extents.last_mut() {
                Some((es, el)) if *es + *el == start => *el += take,
                _ => extents.push((start, take)),
            }
            self.cursor = start + take;
        }
        let file = File {
            kind,
            clusters: got,
            extents,
            live_index: self.live.len(),
        };
        let id = match self.vacant.pop() {
            Some(id) => {
                self.files[id as usize] = Some(file);
                id
            }
            None => {
                self.files.push(Some(file));
                (self.files.len() - 1) as u32
            }
        };
        self.live.push(id);
        id
    }

    /// Deletes a file; its extents become free space (coalesced).
    fn delete(&mut self, id: u32) {
        let Some(file) = self.files[id as usize].take() else {
            return;
        };
        let i = file.live_index;
        self.live.swap_remove(i);
        if let Some(&moved) = self.live.get(i) {
            if let Some(f) = self.files[moved as usize].as_mut() {
                f.live_index = i;
            }
        }
        self.vacant.push(id);
        for (start, len) in file.extents {
            self.release(start, len);
        }
    }

    fn release(&mut self, mut start: u64, mut len: u64) {
        self.free_clusters += len;
        if let Some((&s, &l)) = self.free.range(..start).next_back() {
            if s + l == start {
                self.free.remove(&s);
                start = s;
                len += l;
            }
        }
        if let Some(l) = self.free.remove(&(start + len)) {
            len += l;
        }
        self.free.insert(start, len);
    }

    /// The compact cluster at `pos` of file `id`, and how many clusters follow it in the same
    /// extent.
    fn locate(&self, id: u32, mut pos: u64) -> (u64, u64) {
        for &(start, len) in &self.file(id).extents {
            if pos < len {
                return (start + pos, len - pos);
            }
            pos -= len;
        }
        // Past the end (or an empty file): its last cluster, or the heap's first.
        match self.file(id).extents.last() {
            Some(&(start, len)) => (start + len - 1, 1),
            None => (self.region.start, 1),
        }
    }
}

/// What a sequential transfer goes over.
#[derive(Debug, Clone, Copy)]
enum Target {
    File(u32),
    /// Contiguous compact clusters from this one.
    Span(u64),
}

/// A sequential read or write in fixed-size requests.
#[derive(Debug, Clone, Copy)]
struct Transfer {
    op: Op,
    target: Target,
    pos: u64,
    end: u64,
    chunk: u64,
    /// An NTFS log record after every this many requests (0: none).
    log_every: u32,
    issued: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Activity {
    Install,
    Browse,
    Edit,
    Background,
}

/// The desktop request generator (no clock; see [`ThinkTime`] and [`DesktopTrace`]).
#[derive(Debug)]
pub struct DesktopModel {
    rng: Pcg64Mcg,
    partition_bytes: u64,
    footprint_bytes: u64,
    /// Clusters per allocation group.
    group: u64,
    /// Partition slot (in groups) of each group.
    slots: Vec<u64>,
    system: Region,
    mft: Region,
    registry: Region,
    log: Region,
    log_cursor: u64,
    cache: Region,
    cache_cursor: u64,
    heap: Heap,
    pending: VecDeque<Pending>,
    transfers: VecDeque<Transfer>,
    activity: Activity,
    actions_left: u32,
    /// Install: the package being read (id, position).
    package: Option<(u32, u64)>,
    /// Edit: the document, its temporary file, edits since the last save, save period, stage.
    doc: Option<u32>,
    temp: Option<u32>,
    edits_since_save: u32,
    save_every: u32,
    stage: u32,
    /// Clusters read and written so far (for the phase choice).
    read_clusters: u64,
    written_clusters: u64,
}

/// `x` in `lo ..= hi`, log-uniform.
fn log_uniform(rng: &mut Pcg64Mcg, lo: u64, hi: u64) -> u64 {
    if hi <= lo {
        return lo;
    }
    let (a, b) = ((lo as f64).ln(), (hi as f64 + 1.0).ln());
    (rng.random_range(a..b).exp() as u64).clamp(lo, hi)
}

fn weighted(rng: &mut Pcg64Mcg, table: &[(u64, u32)]) -> u64 {
    let total: u32 = table.iter().map(|(_, w)| w).sum();
    let mut pick = rng.random_range(0..total);
    for &(v, w) in table {
        if pick < w {
            return v;
        }
        pick -= w;
    }
    table[table.len() - 1].0
}

/// A hot-skewed index in `0..n`: low indices are much more likely (density ~ x^-2/3).
fn skewed(rng: &mut Pcg64Mcg, n: u64) -> u64 {
    let u: f64 = rng.random();
    ((u * u * u * n as f64) as u64).min(n.saturating_sub(1))
}

impl DesktopModel {
    /// A model over a partition of `partition_bytes` that touches at most `footprint_bytes`
    /// of it (both rounded down to 4 KiB). Errors say what is wrong with the footprint.
    pub fn new(
        partition_bytes: u64,
        footprint_bytes: u64,
        seed: u64,
    ) -> Result<DesktopModel, String> {
        if footprint_bytes < MIN_FOOTPRINT_BYTES {
            return Err(format!(
                "a footprint of {footprint_bytes} bytes is too small for the desktop model (at least {MIN_FOOTPRINT_BYTES} bytes, 32 MiB)"
            ));
        }
        if footprint_bytes > partition_bytes {
            return Err(format!(
                "the footprint ({footprint_bytes} bytes) is larger than the partition ({partition_bytes} bytes)"
            ));
        }
        let mut rng = Pcg64Mcg::seed_from_u64(seed ^ MODEL_STREAM);
        let (partition, footprint) = (
            partition_bytes / CLUSTER_BYTES,
            footprint_bytes / CLUSTER_BYTES,
        );
        let group = (footprint / TARGET_GROUPS)
            .next_power_of_two()
            .clamp(GROUP_MIN, GROUP_MAX);
        let slots_total = partition / group;
        let footprint = footprint.min(slots_total * group);
        if footprint * CLUSTER_BYTES < MIN_FOOTPRINT_BYTES {
            return Err(format!(
                "the partition ({partition_bytes} bytes) holds only {} bytes in {}-byte allocation groups (at least {MIN_FOOTPRINT_BYTES} bytes needed)",
                footprint * CLUSTER_BYTES,
                group * CLUSTER_BYTES
            ));
        }
        let slots = place_groups(&mut rng, footprint.div_ceil(group), slots_total);

        // Regions, in compact clusters.
        let mut next = 0u64;
        let mut region = |share: f64| {
            let len = ((footprint as f64 * share) as u64).max(64);
            let r = Region { start: next, len };
            next += len;
            r
        };
        let system = region(SYSTEM_SHARE);
        let mft = region(MFT_SHARE);
        let registry = region(REGISTRY_SHARE);
        let log = region(LOG_SHARE);
        let cache = region(CACHE_SHARE);
        let heap = Heap::new(Region {
            start: next,
            len: footprint - next,
        });

        let mut model = DesktopModel {
            rng,
            partition_bytes: partition * CLUSTER_BYTES,
            footprint_bytes: footprint * CLUSTER_BYTES,
            group,
            slots,
            system,
            mft,
            registry,
            log,
            log_cursor: 0,
            cache,
            cache_cursor: 0,
            heap,
            pending: VecDeque::with_capacity(64),
            transfers: VecDeque::with_capacity(4),
            activity: Activity::Background,
            actions_left: 0,
            package: None,
            doc: None,
            temp: None,
            edits_since_save: 0,
            save_every: 10,
            stage: 0,
            read_clusters: 0,
            written_clusters: 0,
        };
        model.populate();
        Ok(model)
    }

    /// The partition the offsets are in (rounded down to 4 KiB).
    pub fn partition_bytes(&self) -> u64 {
        self.partition_bytes
    }

    /// The bytes the stream may touch (at most the footprint asked for).
    pub fn footprint_bytes(&self) -> u64 {
        self.footprint_bytes
    }

    /// Pre-installed programs and existing documents, with free gaps between them.
    fn populate(&mut self) {
        let target = (self.heap.region.len as f64 * HEAP_INITIAL_FILL) as u64;
        while self.heap.used() < target {
            let kind = if self.rng.random_bool(0.85) {
                FileKind::Program
            } else {
                FileKind::Document
            };
            let size = self.file_size(kind).min(target - self.heap.used()).max(1);
            self.heap.allocate(kind, size);
            if self.rng.random_bool(0.3) {
                // Leave a hole of free space behind the file.
                let gap = log_uniform(&mut self.rng, 1, 256);
                self.heap.cursor += gap;
                if self.heap.cursor >= self.heap.region.start + self.heap.region.len {
                    self.heap.cursor = self.heap.region.start;
                }
            }
        }
        self.heap.cursor = self.heap.region.start;
    }

    /// Size of a new file of `kind`, in clusters.
    fn file_size(&mut self, kind: FileKind) -> u64 {
        let heap = self.heap.region.len;
        match kind {
            FileKind::Program => {
                if self.rng.random_bool(0.5) {
                    log_uniform(&mut self.rng, 1, 16)
                } else {
                    log_uniform(&mut self.rng, 16, (heap / 32).clamp(16, 4096))
                }
            }
            FileKind::Document => log_uniform(&mut self.rng, 4, (heap / 64).clamp(4, 2048)),
            FileKind::Download => log_uniform(&mut self.rng, 256, (heap / 16).clamp(256, 16384)),
            FileKind::Temp => log_uniform(&mut self.rng, 4, (heap / 128).clamp(4, 512)),
        }
    }

    /// The next request.
    pub fn next_request(&mut self) -> DesktopRequest {
        loop {
            if let Some(p) = self.pending.pop_front() {
                return self.emit(p);
            }
            self.step();
        }
    }

    /// Places a compact request on the partition, splitting it at an allocation group's end.
    fn emit(&mut self, p: Pending) -> DesktopRequest {
        let within = p.start % self.group;
        let len = p.len.min(self.group - within);
        if len < p.len {
            self.pending.push_front(Pending {
                op: p.op,
                start: p.start + len,
                len: p.len - len,
            });
        }
        let slot = self.slots[(p.start / self.group) as usize];
        if p.op == Op::Read {
            self.read_clusters += len;
        } else {
            self.written_clusters += len;
        }
        DesktopRequest {
            op: p.op,
            offset_bytes: (slot * self.group + within) * CLUSTER_BYTES,
            len_bytes: len * CLUSTER_BYTES,
        }
    }

    fn push(&mut self, op: Op, start: u64, len: u64) {
        self.pending.push_back(Pending { op, start, len });
    }

    /// Queues at least one request.
    fn step(&mut self) {
        if self.transfers.is_empty() {
            self.act();
        }
        if let Some(t) = self.transfers.front_mut() {
            let mut t = *t;
            self.advance(&mut t);
            if t.pos >= t.end {
                self.transfers.pop_front();
            } else {
                self.transfers[0] = t;
            }
        }
        if self.pending.is_empty() {
            // Actions always queue something; this keeps the stream going regardless.
            self.registry_io(Op::Read);
        }
    }

    /// Issues the next request of a transfer.
    fn advance(&mut self, t: &mut Transfer) {
        let (start, room) = match t.target {
            Target::File(id) => self.heap.locate(id, t.pos),
            Target::Span(first) => (first + t.pos, t.end - t.pos),
        };
        let len = t.chunk.min(room).min(t.end - t.pos);
        self.push(t.op, start, len);
        t.pos += len;
        t.issued += 1;
        if t.log_every > 0 && t.issued % t.log_every == 0 {
            self.log_append(1);
        }
    }

    fn transfer(&mut self, op: Op, target: Target, len: u64, chunk: u64, log_every: u32) {
        if len == 0 {
            return;
        }
        self.transfers.push_back(Transfer {
            op,
            target,
            pos: 0,
            end: len,
            chunk: chunk.clamp(1, MAX_REQUEST_BYTES / CLUSTER_BYTES),
            log_every,
            issued: 0,
        });
    }

    /// Runs the next action of the current phase, starting a new phase when it is over.
    fn act(&mut self) {
        if self.actions_left == 0 {
            if self.activity == Activity::Edit && self.edits_since_save > 0 {
                self.save();
                return;
            }
            self.end_phase();
            self.start_phase();
        }
        self.actions_left -= 1;
        match self.activity {
            Activity::Install => self.install_file(),
            Activity::Browse => self.browse_page(),
            Activity::Edit => self.edit(),
            Activity::Background => self.background(),
        }
    }

    fn end_phase(&mut self) {
        if let Some(temp) = self.temp.take() {
            self.delete(temp);
        }
        self.doc = None;
        if let Some((package, _)) = self.package.take() {
            if self.rng.random_bool(0.5) {
                // The user deletes the installer.
                self.delete(package);
            }
        }
    }

    fn start_phase(&mut self) {
        // Lean toward reading or writing activities when the running ratio strays.
        let d = if self.read_clusters > 0 && self.written_clusters > 0 {
            let ratio = self.written_clusters as f64 / self.read_clusters as f64;
            (ratio / TARGET_WRITE_READ_RATIO).ln().clamp(-1.0, 1.0)
        } else {
            0.0
        };
        let tilt = [(-8.0 * d).exp(), (-4.0 * d).exp(), 1.0, (8.0 * d).exp()];
        let weights: [f64; 4] = std::array::from_fn(|i| PHASE_WEIGHTS[i] * tilt[i]);
        let mut pick = self.rng.random_range(0.0..weights.iter().sum::<f64>());
        let mut i = 0;
        while i < 3 && pick >= weights[i] {
            pick -= weights[i];
            i += 1;
        }
        self.activity = [
            Activity::Install,
            Activity::Browse,
            Activity::Edit,
            Activity::Background,
        ][i];
        self.stage = 0;
        match self.activity {
            Activity::Install => {
                self.actions_left = self.rng.random_range(8..=30);
                self.package = self
                    .random_file(|k| k == FileKind::Download)
                    .filter(|_| self.rng.random_bool(0.8))
                    .map(|id| (id, 0));
                for _ in 0..self.rng.random_range(2..=8) {
                    self.registry_io(Op::Write);
                }
            }
            Activity::Browse => self.actions_left = self.rng.random_range(5..=40),
            Activity::Edit => {
                // Two stages (launch, open) before the edits.
                self.actions_left = self.rng.random_range(10..=60) + 2;
                self.save_every = self.rng.random_range(5..=15);
                self.edits_since_save = 0;
                let existing = self.random_file(|k| k == FileKind::Document);
                self.doc = match existing {
                    Some(id) if self.rng.random_bool(0.75) => Some(id),
                    _ => {
                        let size = self.file_size(FileKind::Document);
                        Some(self.create(FileKind::Document, size))
                    }
                };
                let size = self.file_size(FileKind::Temp);
                self.temp = Some(self.create(FileKind::Temp, size));
            }
            Activity::Background => self.actions_left = self.rng.random_range(5..=30),
        }
    }

    /// A random live file whose kind passes `keep` (a few tries), not one in use.
    fn random_file(&mut self, keep: impl Fn(FileKind) -> bool) -> Option<u32> {
        if self.heap.live.is_empty() {
            return None;
        }
        for _ in 0..32 {
            let id = self.heap.live[self.rng.random_range(0..self.heap.live.len())];
            if keep(self.heap.file(id).kind) && !self.in_use(id) {
                return Some(id);
            }
        }
        None
    }

    fn in_use(&self, id: u32) -> bool {
        self.doc == Some(id) || self.temp == Some(id) || self.package.map(|p| p.0) == Some(id)
    }

    /// Creates a file (deleting others first when the heap would be too full) and writes its
    /// MFT record.
    fn create(&mut self, kind: FileKind, size: u64) -> u32 {
        let heap = self.heap.region.len;
        let high = (heap as f64 * HEAP_HIGH_WATER) as u64;
        let low = (heap as f64 * HEAP_LOW_WATER) as u64;
        if self.heap.used() + size > high {
            while self.heap.used() + size > low {
                let picked = self.random_file(|k| k != FileKind::Temp).or_else(|| {
                    // Rare: no candidate found at random; take the first deletable file.
                    let live = &self.heap.live;
                    live.iter().copied().find(|&id| !self.in_use(id))
                });
                let Some(id) = picked else { break };
                if self.heap.file(id).kind == FileKind::Document && self.rng.random_bool(0.7) {
                    // Documents are kept more often than programs and downloads.
                    if let Some(other) = self.random_file(|k| k != FileKind::Document) {
                        self.delete(other);
                        continue;
                    }
                }
                self.delete(id);
            }
        }
        let id = self.heap.allocate(kind, size.min(self.heap.free_clusters));
        self.mft_write();
        id
    }

    fn delete(&mut self, id: u32) {
        self.heap.delete(id);
        self.mft_write();
    }

    fn mft_write(&mut self) {
        let at = self.mft.start + skewed(&mut self.rng, self.mft.len);
        self.push(Op::Write, at, 1);
    }

    fn registry_io(&mut self, op: Op) {
        let at = self.registry.start + skewed(&mut self.rng, self.registry.len);
        self.push(op, at, 1);
    }

    fn log_append(&mut self, max_index: usize) {
        let len = weighted(&mut self.rng, &LOG_SIZES[..=max_index.min(3)]);
        if self.log_cursor + len > self.log.len {
            self.log_cursor = 0;
        }
        self.push(Op::Write, self.log.start + self.log_cursor, len);
        self.log_cursor += len;
    }

    fn small(&mut self) -> u64 {
        weighted(&mut self.rng, &SMALL_SIZES)
    }

    /// A random program file is loaded: page faults (small reads at random places of it),
    /// then up to `max` clusters read from its start (the prefetcher, a loader).
    fn read_program(&mut self, max: u64) {
        if let Some(id) = self.random_file(|k| k == FileKind::Program) {
            let clusters = self.heap.file(id).clusters;
            let faults = (clusters / 16).clamp(1, PAGE_FAULTS_MAX);
            for _ in 0..self.rng.random_range(1..=faults) {
                let len = self.small().min(clusters);
                let pos = self.rng.random_range(0..=clusters - len);
                let (start, room) = self.heap.locate(id, pos);
                self.push(Op::Read, start, len.min(room));
            }
            let len = clusters.min(max);
            let chunk = weighted(&mut self.rng, &READ_CHUNKS);
            self.transfer(Op::Read, Target::File(id), len, chunk, 0);
        }
    }

    /// Page faults in system libraries: small reads, most of them in a hot part.
    fn system_faults(&mut self, n: u32) {
        for _ in 0..n {
            let len = self.small();
            let at = skewed(&mut self.rng, self.system.len - len);
            self.push(Op::Read, self.system.start + at, len);
        }
    }

    fn install_file(&mut self) {
        let kind = FileKind::Program;
        let size = self.file_size(kind);
        if let Some((package, pos)) = self.package {
            let total = self.heap.file(package).clusters;
            let slice = (size * 3 / 5).max(1).min(total.saturating_sub(pos));
            if slice > 0 {
                let chunk = weighted(&mut self.rng, &READ_CHUNKS);
                self.transfers.push_back(Transfer {
                    op: Op::Read,
                    target: Target::File(package),
                    pos,
                    end: pos + slice,
                    chunk,
                    log_every: 0,
                    issued: 0,
                });
                self.package = Some((package, pos + slice));
            }
        }
        let id = self.create(kind, size);
        let clusters = self.heap.file(id).clusters;
        let chunk = weighted(&mut self.rng, &INSTALL_CHUNKS);
        self.transfer(Op::Write, Target::File(id), clusters, chunk, 8);
        if self.rng.random_bool(0.3) {
            self.registry_io(Op::Write);
        }
    }

    fn browse_page(&mut self) {
        let hot = ((self.cache.len as f64 * CACHE_HOT_SHARE) as u64).max(16);
        for _ in 0..self.rng.random_range(3..=12) {
            let len = self.small();
            if self.rng.random_bool(0.45) {
                let at = self.cache.start + skewed(&mut self.rng, hot - len);
                self.push(Op::Write, at, len);
            } else {
                if self.cache_cursor + len > self.cache.len - hot {
                    self.cache_cursor = 0;
                }
                self.push(Op::Write, self.cache.start + hot + self.cache_cursor, len);
                self.cache_cursor += len;
            }
        }
        for _ in 0..self.rng.random_range(2..=8) {
            let len = self.small();
            let at = if self.rng.random_bool(0.5) {
                skewed(&mut self.rng, hot - len)
            } else {
                self.rng.random_range(0..self.cache.len - len)
            };
            self.push(Op::Read, self.cache.start + at, len);
        }
        let faults = self.rng.random_range(0..=3);
        self.system_faults(faults);
        if self.rng.random_bool(0.5) {
            self.mft_write();
        }
        if self.rng.random_bool(0.2) {
            self.log_append(1);
        }
        let r: f64 = self.rng.random();
        if r < 0.08 {
            let max = log_uniform(&mut self.rng, 64, 1024);
            self.read_program(max);
        } else if r < 0.09 {
            let size = self.file_size(FileKind::Download);
            let id = self.create(FileKind::Download, size);
            let clusters = self.heap.file(id).clusters;
            let chunk = weighted(&mut self.rng, &SAVE_CHUNKS);
            self.transfer(Op::Write, Target::File(id), clusters, chunk, 0);
        }
    }

    fn edit(&mut self) {
        let (Some(doc), Some(temp)) = (self.doc, self.temp) else {
            self.background();
            return;
        };
        match self.stage {
            0 => {
                // Launch the editor.
                self.stage = 1;
                for _ in 0..self.rng.random_range(1..=4) {
                    let max = log_uniform(&mut self.rng, 16, 2048);
                    self.read_program(max);
                }
                self.registry_io(Op::Read);
            }
            1 => {
                // Open the document.
                self.stage = 2;
                let clusters = self.heap.file(doc).clusters;
                self.transfer(Op::Read, Target::File(doc), clusters, 16, 0);
            }
            _ => {
                let temp_len = self.heap.file(temp).clusters;
                for _ in 0..self.rng.random_range(1..=3) {
                    let len = self.small().min(temp_len);
                    let pos = self.rng.random_range(0..=temp_len - len);
                    let (start, room) = self.heap.locate(temp, pos);
                    self.push(Op::Write, start, len.min(room));
                }
                if self.rng.random_bool(0.3) {
                    let doc_len = self.heap.file(doc).clusters;
                    let len = self.small().min(doc_len);
                    let pos = self.rng.random_range(0..=doc_len - len);
                    let (start, room) = self.heap.locate(doc, pos);
                    self.push(Op::Read, start, len.min(room));
                }
                if self.rng.random_bool(0.1) {
                    self.registry_io(Op::Write);
                }
                self.edits_since_save += 1;
                if self.edits_since_save >= self.save_every {
                    self.save();
                }
            }
        }
    }

    /// Writes the document whole: in place, or as a new file replacing the old one.
    fn save(&mut self) {
        self.edits_since_save = 0;
        let Some(doc) = self.doc else { return };
        let old = self.heap.file(doc).clusters;
        let chunk = weighted(&mut self.rng, &SAVE_CHUNKS);
        if self.rng.random_bool(0.5) {
            self.transfer(Op::Write, Target::File(doc), old, chunk, 0);
            self.mft_write();
        } else {
            let grown = (old as f64 * self.rng.random_range(0.95..1.2)).ceil() as u64;
            let new = self.create(FileKind::Document, grown);
            let clusters = self.heap.file(new).clusters;
            self.transfer(Op::Write, Target::File(new), clusters, chunk, 0);
            self.doc = Some(new);
            self.delete(doc);
        }
        self.log_append(1);
    }

    fn background(&mut self) {
        let r: f64 = self.rng.random();
        if r < 0.34 {
            // System files.
            let len = log_uniform(&mut self.rng, 16, 512).min(self.system.len);
            let start = self.rng.random_range(0..=self.system.len - len) & !15;
            let chunk = weighted(&mut self.rng, &READ_CHUNKS);
            let faults = self.rng.random_range(1..=6);
            self.system_faults(faults);
            self.transfer(
                Op::Read,
                Target::Span(self.system.start + start),
                len,
                chunk,
                0,
            );
        } else if r < 0.44 {
            // A program starts: some of its files are read whole.
            for _ in 0..self.rng.random_range(1..=3) {
                self.read_program(4096);
            }
            self.registry_io(Op::Read);
        } else if r < 0.66 {
            for _ in 0..self.rng.random_range(1..=3) {
                self.log_append(3);
            }
        } else if r < 0.82 {
            for _ in 0..self.rng.random_range(1..=4) {
                self.registry_io(Op::Read);
            }
            for _ in 0..self.rng.random_range(0..=2) {
                self.registry_io(Op::Write);
            }
        } else if r < 0.92 {
            // A scan (indexer, antivirus) reads a file.
            if let Some(id) = self.random_file(|_| true) {
                let len = self.heap.file(id).clusters.min(1024);
                self.transfer(Op::Read, Target::File(id), len, 16, 0);
            }
        } else {
            for _ in 0..self.rng.random_range(1..=4) {
                self.mft_write();
            }
            self.log_append(1);
        }
    }
}

/// Places `groups` allocation groups in order over `slots` slots, with random holes between
/// them; returns each group's slot.
fn place_groups(rng: &mut Pcg64Mcg, groups: u64, slots: u64) -> Vec<u64> {
    let holes = slots - groups;
    let exp = Exp::new(1.0).expect("valid rate");
    let weights: Vec<f64> = (0..=groups).map(|_| exp.sample(rng)).collect();
    let sum: f64 = weights.iter().sum::<f64>().max(f64::MIN_POSITIVE);
    let mut slot = 0u64;
    let mut used_holes = 0u64;
    let mut out = Vec::with_capacity(groups as usize);
    for w in &weights[..groups as usize] {
        let gap = ((holes as f64 * w / sum) as u64).min(holes - used_holes);
        used_holes += gap;
        slot += gap;
        out.push(slot);
        slot += 1;
    }
    out
}

/// Inter-arrival times of a desktop: bursts and idle (think) gaps, at a given mean rate.
#[derive(Debug, Clone)]
pub struct ThinkTime {
    burst_gap: Exp<f64>,
    idle_gap: LogNormal<f64>,
    new_burst: f64,
}

/// Mean requests per burst.
const BURST_MEAN_REQUESTS: f64 = 64.0;
/// In-burst gaps: this share of the mean gap.
const BURST_GAP_SHARE: f64 = 0.05;
/// Spread of the idle gaps (log-normal sigma).
const IDLE_SIGMA: f64 = 1.5;

impl ThinkTime {
    /// A process whose long-run mean inter-arrival time is `mean_gap_ns` (> 0).
    pub fn new(mean_gap_ns: f64) -> ThinkTime {
        let mean = mean_gap_ns.max(1e-9);
        let p = 1.0 / BURST_MEAN_REQUESTS;
        let burst_mean = mean * BURST_GAP_SHARE;
        let idle_mean = (mean - (1.0 - p) * burst_mean) / p;
        let mu = idle_mean.ln() - IDLE_SIGMA * IDLE_SIGMA / 2.0;
        ThinkTime {
            burst_gap: Exp::new(1.0 / burst_mean).expect("positive rate"),
            idle_gap: LogNormal::new(mu, IDLE_SIGMA).expect("valid log-normal"),
            new_burst: p,
        }
    }

    /// The next gap in ns.
    pub fn gap_ns<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        let gap = if rng.random_bool(self.new_burst) {
            self.idle_gap.sample(rng)
        } else {
            self.burst_gap.sample(rng)
        };
        gap.round().min(1e15) as u64
    }
}

/// A desktop trace: the model's requests with open-loop arrival times (the first at 0).
#[derive(Debug)]
pub struct DesktopTrace {
    model: DesktopModel,
    think: ThinkTime,
    rng: Pcg64Mcg,
    next_ns: u64,
}

impl DesktopTrace {
    /// Requests over `partition_bytes` touching at most `footprint_bytes`, arriving at
    /// `rate_iops` requests per second on average.
    pub fn new(
        partition_bytes: u64,
        footprint_bytes: u64,
        rate_iops: f64,
        seed: u64,
    ) -> Result<DesktopTrace, String> {
        if !(rate_iops.is_finite() && rate_iops > 0.0) {
            return Err(format!(
                "rate {rate_iops}: must be a positive number of requests per second"
            ));
        }
        Ok(DesktopTrace {
            model: DesktopModel::new(partition_bytes, footprint_bytes, seed)?,
            think: ThinkTime::new(1e9 / rate_iops),
            rng: Pcg64Mcg::seed_from_u64(seed ^ TIME_STREAM),
            next_ns: 0,
        })
    }

    pub fn model(&self) -> &DesktopModel {
        &self.model
    }

    /// The next request (with no deadline).
    pub fn next_request(&mut self) -> Request {
        let r = self.model.next_request();
        let arrival_ns = self.next_ns;
        self.next_ns = arrival_ns.saturating_add(self.think.gap_ns(&mut self.rng));
        Request {
            arrival_ns,
            op: r.op,
            offset_bytes: r.offset_bytes,
            len_bytes: r.len_bytes,
            deadline_ns: 0,
            task: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn requests(partition: u64, footprint: u64, seed: u64, n: usize) -> Vec<DesktopRequest> {
        let mut m = DesktopModel::new(partition, footprint, seed).unwrap();
        (0..n).map(|_| m.next_request()).collect()
    }

    #[test]
    fn heap_allocates_next_fit_and_coalesces_on_delete() {
        let mut h = Heap::new(Region {
            start: 100,
            len: 1000,
        });
        let a = h.allocate(FileKind::Program, 300);
        let b = h.allocate(FileKind::Program, 300);
        assert_eq!(h.file(a).extents, vec![(100, 300)]);
        assert_eq!(h.file(b).extents, vec![(400, 300)]);
        h.delete(a);
        // Next fit: continues after b, then wraps into a's space.
        let c = h.allocate(FileKind::Document, 600);
        assert_eq!(h.file(c).extents, vec![(700, 400), (100, 200)]);
        assert_eq!(h.free_clusters, 100);
        h.delete(b);
        h.delete(c);
        assert_eq!(h.free.len(), 1, "{:?}", h.free);
        assert_eq!(h.free_clusters, 1000);
        assert!(h.live.is_empty());
    }

    #[test]
    fn groups_are_in_order_inside_the_partition() {
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        for (groups, slots) in [(10, 10), (1, 1000), (192, 16384), (5, 6)] {
            let s = place_groups(&mut rng, groups, slots);
            assert_eq!(s.len() as u64, groups);
            assert!(s.windows(2).all(|w| w[0] < w[1]), "{s:?}");
            assert!(*s.last().unwrap() < slots);
        }
    }

    #[test]
    fn too_small_or_too_large_footprints_are_refused() {
        let e = DesktopModel::new(GIB, 1 << 20, 1).unwrap_err();
        assert!(e.contains("too small"), "{e}");
        let e = DesktopModel::new(GIB, 2 * GIB, 1).unwrap_err();
        assert!(e.contains("larger than the partition"), "{e}");
        assert!(DesktopModel::new(MIN_FOOTPRINT_BYTES, MIN_FOOTPRINT_BYTES, 1).is_ok());
    }

    #[test]
    fn requests_are_aligned_bounded_and_in_the_partition() {
        let partition = 64 * GIB + 12345;
        for r in requests(partition, GIB, 9, 50_000) {
            assert!(r.offset_bytes % CLUSTER_BYTES == 0, "{r:?}");
            assert!(r.len_bytes % CLUSTER_BYTES == 0 && r.len_bytes > 0, "{r:?}");
            assert!(r.len_bytes <= MAX_REQUEST_BYTES, "{r:?}");
            assert!(r.offset_bytes + r.len_bytes <= partition, "{r:?}");
            assert!(matches!(r.op, Op::Read | Op::Write), "{r:?}");
        }
    }

    #[test]
    fn think_time_keeps_the_mean_rate_in_bursts() {
        let t = ThinkTime::new(10e6);
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        let gaps: Vec<u64> = (0..1_000_000).map(|_| t.gap_ns(&mut rng)).collect();
        let mean = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64;
        assert!((9e6..11e6).contains(&mean), "mean gap {mean}");
        // Bursts: most gaps are far below the mean, a few are much longer.
        let short = gaps.iter().filter(|&&g| g < 2_000_000).count();
        let long = gaps.iter().filter(|&&g| g > 100_000_000).count();
        assert!(short > 900_000, "{short}");
        assert!((5_000..20_000).contains(&long), "{long}");
    }

    #[test]
    fn trace_times_start_at_zero_and_increase() {
        let mut t = DesktopTrace::new(16 * GIB, GIB, 100.0, 4).unwrap();
        let times: Vec<u64> = (0..1000).map(|_| t.next_request().arrival_ns).collect();
        assert_eq!(times[0], 0);
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        assert!(DesktopTrace::new(16 * GIB, GIB, 0.0, 4).is_err());
    }

    #[test]
    fn the_request_stream_does_not_depend_on_the_rate() {
        let mut a = DesktopTrace::new(16 * GIB, GIB, 100.0, 4).unwrap();
        let mut b = DesktopTrace::new(16 * GIB, GIB, 5000.0, 4).unwrap();
        for _ in 0..1000 {
            let (x, y) = (a.next_request(), b.next_request());
            assert_eq!(
                (x.op, x.offset_bytes, x.len_bytes),
                (y.op, y.offset_bytes, y.len_bytes)
            );
        }
    }
}
