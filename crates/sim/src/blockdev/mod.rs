//! A simulated SSD as a block device with real data: what `flashlab serve` puts behind NBD.
//!
//! The simulation keeps, per sector, only a *data version* (one per host write); this layer
//! keeps the bytes, where a real SSD does:
//! - a write's bytes are **staged** (the device's RAM) from its arrival until a program puts
//!   that sector's version (or a newer one) on the flash, or a trim drops it;
//! - every flash change the FTL issues is mirrored, in order, into the **flash image**
//!   ([`image`]): a program writes the page's data at its physical address with its OOB
//!   record; the data of each sector comes from the staged write, or for a GC copy from the
//!   newest copy of that logical unit on the flash (the image holds it: the copy's source is
//!   erased only later in the same order); an erase punches a hole;
//! - a read takes, sector by sector, the data version the FTL delivered and finds its bytes
//!   in the staged writes or at the newest flash copy of its logical unit. A version found
//!   nowhere (an FTL bug) fails the read with an I/O error, never returns other data.
//!
//! A flush (and a write with FUA, which is the write followed by a flush) is answered only
//! after the simulated FTL completed it and the image was synced: what was acknowledged
//! before it is then on the flash image. Metadata pages (translation pages, parity) keep
//! their OOB records; their data area is not materialised (zeros).

pub mod image;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use serde::Serialize;

use crate::config::ExperimentConfig;
use crate::engine::{Delivered, Served, Simulation};
use crate::host::{Op, Request};
use crate::nand::{FlashChange, FlashJournal, Ppn, OOB_FLAG_TRANSLATION};
use crate::SimError;
pub use image::{FlashImage, RestoreStats, Superblock};

#[derive(Debug, Clone, Serialize)]
pub struct TmpScan {
    pub pages_scanned: u64,
    pub simulated_ns: u64,
}
/// What reopening an image found and did: the page records read back, the FTL's scan, and
/// whether the server that wrote it had closed it cleanly.
#[derive(Debug, Clone, Serialize)]
pub struct OpenReport {
    pub restore: RestoreStats,
    pub scan: crate::ftl::mapping::RecoveryScan,
    pub clean_shutdown: bool,
}

/// A host command for the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Read {
        offset: u64,
        len: u64,
    },
    Write {
        offset: u64,
        data: Vec<u8>,
        fua: bool,
    },
    Trim {
        offset: u64,
        len: u64,
    },
    Flush,
}

/// A command the device finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    pub ticket: u64,
    pub op: Op,
    /// Simulated arrival and completion (a FUA write completes with its flush).
    pub arrival_ns: u64,
    pub completion_ns: u64,
    /// Read data, or nothing; an error the host must see as an I/O error.
    pub result: Result<Option<Vec<u8>>, String>,
}

/// The data layer's figures, for the report.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct DataCounters {
    pub pages_written: u64,
    pub spare_programs: u64,
    pub blocks_erased: u64,
    pub syncs: u64,
    /// Sectors a read needed whose data was found nowhere (must stay 0: an FTL or layer
    /// bug; the read fails with an I/O error).
    pub missing_sectors: u64,
    /// Sectors programmed whose bytes were no longer kept (a GC copy of data a host write or
    /// trim made stale meanwhile): written as zeros and marked, so a read of them fails.
    pub sectors_without_data: u64,
    /// Bytes held in staged writes now, and the most ever.
    pub staged_bytes: u64,
    pub staged_bytes_max: u64,
}

#[derive(Debug)]
struct Staged {
    first_sector: u64,
    data: Vec<u8>,
    /// Sectors not yet on the flash, superseded or trimmed.
    pending: u64,
}

/// The newest flash copy of a logical unit: its unit slot and sequence number.
#[derive(Debug, Clone, Copy, Default)]
struct NewestCopy {
    slot_plus_one: u32,
    seq: u64,
}

/// A read waiting for its completion, with what the FTL delivered.
#[derive(Debug, Default)]
struct PendingRead {
    first_sector: u64,
    sectors: u64,
    delivered: Vec<Delivered>,
}

/// A simulated SSD with its flash image.
pub struct BlockDevice {
    sim: Simulation,
    image: FlashImage,
    journal: FlashJournal,
    sector_bytes: u64,
    unit_sectors: u64,
    units_per_page: u32,
    staged: HashMap<u64, Staged>,
    /// (sector, version) of every staged or rescued sector still pending.
    staged_index: BTreeSet<(u64, u64)>,
    /// Sectors whose newest flash copy was erased before a copy of it was programmed (an FTL
    /// holding GC data in its RAM between the victim's erase and the copy's program).
    rescued: HashMap<(u64, u64), Vec<u8>>,
    /// Physical sectors (page * sectors per page + sector) programmed without their bytes.
    hollow: BTreeSet<u64>,
    newest: Vec<NewestCopy>,
    reads: HashMap<u64, PendingRead>,
    /// Flushes issued for completed FUA writes: flush ticket -> (write ticket, write arrival).
    fua: HashMap<u64, (u64, u64)>,
    /// FUA writes whose own completion is not answered (their flush's is).
    fua_writes: HashSet<u64>,
    /// Trims in flight: (first sector, sectors, newest data version written before it).
    trims: HashMap<u64, (u64, u64, u64)>,
    served: Vec<Served>,
    deliveries: Vec<Delivered>,
    page_buf: Vec<u8>,
    /// The stored data versions of page `versions_of` (a GC copy's source), read once per
    /// page being mirrored.
    versions_buf: Vec<u64>,
    versions_of: Option<Ppn>,
    /// Staged keys a trim drops (reused).
    keys_scratch: Vec<(u64, u64)>,
    counters: DataCounters,
    /// The image could not be written: every later command fails.
    failed: Option<String>,
}

impl BlockDevice {
    /// A new device for `config` (payloads are turned on) with a new image at `path`.
    pub fn create(config: &ExperimentConfig, path: &Path) -> Result<Self, SimError> {
        let mut config = config.clone();
        config.run.payloads = true;
        let sim = Simulation::new(&config)?;
        let image = FlashImage::create(path, &config, sim.nand())?;
        Self::with_parts(sim, image)
    }

    fn with_parts(mut sim: Simulation, image: FlashImage) -> Result<Self, SimError> {
        sim.start_serving()?;
        let nand = sim.nand();
        let layout = *nand.layout();
        let units_per_page = nand.units_per_page();
        let unit_sectors = u64::from(nand.sectors_per_page() / units_per_page);
        let sector_bytes = u64::from(sim.config().host.sector_bytes);
        let logical_units = sim.logical_bytes() / sector_bytes / unit_sectors.max(1) + 1;
        let mut device = BlockDevice {
            sim,
            image,
            journal: FlashJournal::default(),
            sector_bytes,
            unit_sectors: unit_sectors.max(1),
            units_per_page,
            staged: HashMap::new(),
            staged_index: BTreeSet::new(),
            rescued: HashMap::new(),
            hollow: BTreeSet::new(),
            newest: vec![NewestCopy::default(); logical_units as usize],
            reads: HashMap::new(),
            fua: HashMap::new(),
            fua_writes: HashSet::new(),
            trims: HashMap::new(),
            served: Vec::new(),
            deliveries: Vec::new(),
            page_buf: vec![0; layout.page_bytes as usize],
            versions_buf: Vec::new(),
            versions_of: None,
            keys_scratch: Vec::new(),
            counters: DataCounters::default(),
            failed: None,
        };
        device.index_flash();
        Ok(device)
    }

    /// Finds the newest copy of every logical unit on the flash (after a restore).
    fn index_flash(&mut self) {
        let nand = self.sim.nand();
        let units = nand.layout().pages() * self.units_per_page;
        for slot in 0..units {
            let entry = nand.oob(slot);
            if let Some(lpn) = entry.lpn() {
                if entry.flags() & OOB_FLAG_TRANSLATION != 0 {
                    continue;
                }
                note_newest(&mut self.newest, lpn, slot, entry.seq());
            }
        }
    }

    pub fn simulation(&self) -> &Simulation {
        &self.sim
    }
    pub fn simulation_mut(&mut self) -> &mut Simulation {
        &mut self.sim
    }
    pub fn image(&self) -> &FlashImage {
        &self.image
    }
    pub fn counters(&self) -> DataCounters {
        self.counters
    }
    /// Bytes exported to the host.
    pub fn size_bytes(&self) -> u64 {
        self.sim.logical_bytes()
    }
    pub fn sector_bytes(&self) -> u64 {
        self.sector_bytes
    }
    /// Why the device stopped serving, if it did.
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// Submits a command arriving now; returns its ticket (a FUA write finishes when the
    /// flush issued after its completion does).
    pub fn submit(&mut self, command: Command) -> Result<u64, SimError> {
        if let Some(why) = &self.failed {
            return Err(SimError::Input {
                location: self.image.path().display().to_string(),
                message: format!("the device failed earlier: {why}"),
            });
        }
        match command {
            Command::Read { offset, len } => {
                let t = self
                    .sim
                    .submit_served(Request::untimed(Op::Read, offset, len))?;
                self.reads.insert(
                    t.ticket,
                    PendingRead {
                        first_sector: offset / self.sector_bytes,
                        sectors: len / self.sector_bytes,
                        delivered: Vec::new(),
                    },
                );
                Ok(t.ticket)
            }
            Command::Write { offset, data, fua } => {
                let len = data.len() as u64;
                let t = self
                    .sim
                    .submit_served(Request::untimed(Op::Write, offset, len))?;
                self.stage(offset / self.sector_bytes, t.version, data);
                if fua {
                    self.fua_writes.insert(t.ticket);
                }
                Ok(t.ticket)
            }
            Command::Trim { offset, len } => {
                let newest_version = self.sim.next_data_version() - 1;
                let t = self
                    .sim
                    .submit_served(Request::untimed(Op::Trim, offset, len))?;
                let range = (offset / self.sector_bytes, len / self.sector_bytes);
                self.trims
                    .insert(t.ticket, (range.0, range.1, newest_version));
                Ok(t.ticket)
            }
            Command::Flush => Ok(self
                .sim
                .submit_served(Request::untimed(Op::Flush, 0, 0))?
                .ticket),
        }
    }

    fn stage(&mut self, first_sector: u64, version: u64, data: Vec<u8>) {
        let sectors = data.len() as u64 / self.sector_bytes;
        for s in first_sector..first_sector + sectors {
            self.staged_index.insert((s, version));
        }
        self.counters.staged_bytes += data.len() as u64;
        self.counters.staged_bytes_max = self
            .counters
            .staged_bytes_max
            .max(self.counters.staged_bytes);
        self.staged.insert(
            version,
            Staged {
                first_sector,
                data,
                pending: sectors,
            },
        );
    }

    /// Sector `sector`'s bytes of data `version`, if staged (or rescued).
    fn staged_bytes(&self, sector: u64, version: u64) -> Option<&[u8]> {
        if let Some(bytes) = self.rescued.get(&(sector, version)) {
            return Some(bytes);
        }
        let w = self.staged.get(&version)?;
        let i = sector.checked_sub(w.first_sector)?;
        let sb = self.sector_bytes as usize;
        w.data.get(i as usize * sb..(i as usize + 1) * sb)
    }

    /// Drops staged sectors `(sector, v)` with `v <= version` (on the flash or superseded).
    fn release(&mut self, sector: u64, version: u64) {
        // At most a few keys per sector: no list is made (this runs per sector programmed).
        while let Some(&key) = self
            .staged_index
            .range((sector, 0)..=(sector, version))
            .next()
        {
            self.staged_index.remove(&key);
            self.release_one(key);
        }
    }

    fn release_one(&mut self, (sector, version): (u64, u64)) {
        if let Some(bytes) = self.rescued.remove(&(sector, version)) {
            self.counters.staged_bytes -= bytes.len() as u64;
            return;
        }
        if let Some(w) = self.staged.get_mut(&version) {
            w.pending -= 1;
            if w.pending == 0 {
                let bytes = w.data.len() as u64;
                self.staged.remove(&version);
                self.counters.staged_bytes -= bytes;
            }
        }
    }

    /// Runs the simulation's events up to simulated time `t_ns` (a paced clock).
    pub fn run_until_time(&mut self, t_ns: u64) -> Result<(), SimError> {
        self.sim.run_until_time(t_ns)
    }

    /// Runs the events up to `t_ns` and lets time reach it: a command submitted next
    /// arrives then.
    pub fn advance_to(&mut self, t_ns: u64) -> Result<(), SimError> {
        self.sim.advance_to(t_ns)
    }

    /// Runs until a command finished or nothing is left (as fast as it runs).
    pub fn run_until_served(&mut self) -> Result<bool, SimError> {
        self.sim.run_until_served()
    }

    /// Mirrors the flash's changes into the image and appends what finished to `out`.
    pub fn collect(&mut self, out: &mut Vec<Finished>) -> Result<(), SimError> {
        self.sim.take_served(&mut self.served, &mut self.deliveries);
        for d in self.deliveries.drain(..) {
            if let Some(r) = self.reads.get_mut(&d.ticket) {
                r.delivered.push(d);
            }
        }
        if let Err(e) = self.mirror() {
            self.failed.get_or_insert_with(|| e.to_string());
        }
        if self.served.is_empty() {
            return Ok(());
        }
        let flushes = self.served.iter().any(|s| s.op == Op::Flush);
        if flushes && self.failed.is_none() {
            self.counters.syncs += 1;
            if let Err(e) = self.image.sync() {
                self.failed.get_or_insert_with(|| e.to_string());
            }
        }
        let served = std::mem::take(&mut self.served);
        for s in &served {
            if let Some(f) = self.finish(s) {
                out.push(f);
            }
        }
        self.served = served;
        self.served.clear();
        Ok(())
    }

    fn finish(&mut self, s: &Served) -> Option<Finished> {
        let mut finished = Finished {
            ticket: s.ticket,
            op: s.op,
            arrival_ns: s.arrival_ns,
            completion_ns: s.completion_ns,
            result: Ok(None),
        };
        match s.op {
            Op::Read => {
                let read = self.reads.remove(&s.ticket)?;
                finished.result = self.read_bytes(&read).map(Some);
            }
            Op::Trim => {
                if let Some((first, sectors, before)) = self.trims.remove(&s.ticket) {
                    self.drop_staged(first, sectors, before);
                }
            }
            // A FUA write is followed by a flush once it completed (a flush covers only the
            // writes completed before it arrived), and answered when that flush completes.
            Op::Write if self.fua_writes.remove(&s.ticket) => {
                match self.sim.submit_served(Request::untimed(Op::Flush, 0, 0)) {
                    Ok(f) => {
                        self.fua.insert(f.ticket, (s.ticket, s.arrival_ns));
                        return None;
                    }
                    Err(e) => finished.result = Err(e.to_string()),
                }
            }
            Op::Write => {}
            Op::Flush => {
                if let Some((write, write_arrival)) = self.fua.remove(&s.ticket) {
                    finished.ticket = write;
                    finished.op = Op::Write;
                    finished.arrival_ns = write_arrival;
                }
            }
        }
        if let (Some(why), true) = (&self.failed, finished.op != Op::Read) {
            finished.result = Err(why.clone());
        }
        Some(finished)
    }

    /// A trim of `sectors` from `first` completed: the staged data of its whole trim units
    /// written before it (versions up to `before`) is needed no more.
    fn drop_staged(&mut self, first: u64, sectors: u64, before: u64) {
        // Only whole aligned trim units are deallocated (the rest keeps its data).
        let unit = u64::from(self.sim.ftl().trim_unit_bytes()) / self.sector_bytes;
        let unit = unit.max(1);
        let (start, end) = (first.div_ceil(unit) * unit, (first + sectors) / unit * unit);
        if start >= end {
            return;
        }
        let mut keys = std::mem::take(&mut self.keys_scratch);
        keys.clear();
        keys.extend(
            self.staged_index
                .range((start, 0)..(end, 0))
                .filter(|&&(_, v)| v <= before),
        );
        for &key in &keys {
            self.staged_index.remove(&key);
            self.release_one(key);
        }
        self.keys_scratch = keys;
    }

    /// The bytes of a finished read, from what the FTL delivered.
    fn read_bytes(&mut self, read: &PendingRead) -> Result<Vec<u8>, String> {
        let sb = self.sector_bytes as usize;
        let mut out = vec![0u8; read.sectors as usize * sb];
        for d in &read.delivered {
            for sector in d.first_sector..d.first_sector + d.sectors {
                let Some(at) = sector.checked_sub(read.first_sector) else {
                    continue;
                };
                let dst = &mut out[at as usize * sb..(at as usize + 1) * sb];
                if d.version == 0 {
                    continue;
                }
                if !self.sector_data(sector, d.version, dst)? {
                    self.counters.missing_sectors += 1;
                    return Err(format!(
                        "the FTL delivered data version {} for sector {sector}, which is neither staged nor on the flash",
                        d.version
                    ));
                }
            }
        }
        Ok(out)
    }

    /// Copies sector `sector`'s bytes of data `version` into `dst` from the staged writes or
    /// the newest flash copy of its logical unit (the image is current: read after
    /// mirroring). False when found nowhere.
    fn sector_data(&mut self, sector: u64, version: u64, dst: &mut [u8]) -> Result<bool, String> {
        if let Some(bytes) = self.staged_bytes(sector, version) {
            dst.copy_from_slice(bytes);
            return Ok(true);
        }
        let lpn = sector / self.unit_sectors;
        let Some(copy) = self.newest.get(lpn as usize).copied() else {
            return Ok(false);
        };
        if copy.slot_plus_one == 0 {
            return Ok(false);
        }
        let slot = copy.slot_plus_one - 1;
        let within = sector % self.unit_sectors;
        let stored = self
            .sim
            .nand()
            .unit_data(slot)
            .get(within as usize)
            .copied();
        if stored != Some(version) {
            return Ok(false);
        }
        let (ppn, offset) = self.sector_place(slot, within);
        let physical = u64::from(ppn) * u64::from(self.sectors_per_page())
            + u64::from(offset) / self.sector_bytes;
        if self.hollow.contains(&physical) {
            return Ok(false);
        }
        self.image
            .read_data(ppn, offset, dst)
            .map_err(|e| e.to_string())?;
        Ok(true)
    }

    fn sectors_per_page(&self) -> u32 {
        self.units_per_page * self.unit_sectors as u32
    }

    /// Page and byte offset in it of sector `within` of unit slot `slot`.
    fn sector_place(&self, slot: u32, within: u64) -> (Ppn, u32) {
        let ppn = slot / self.units_per_page;
        let in_page = u64::from(slot % self.units_per_page) * self.unit_sectors + within;
        (ppn, (in_page * self.sector_bytes) as u32)
    }

    /// Writes the journaled flash changes into the image, in order.
    fn mirror(&mut self) -> Result<(), SimError> {
        if self.failed.is_some() {
            return Ok(());
        }
        let mut journal = std::mem::take(&mut self.journal);
        self.sim.take_flash_journal(&mut journal);
        let result = journal
            .changes
            .iter()
            .try_for_each(|&change| self.mirror_change(&journal, change));
        self.journal = journal;
        result
    }

    fn mirror_change(
        &mut self,
        journal: &FlashJournal,
        change: FlashChange,
    ) -> Result<(), SimError> {
        // The image changes now: versions read before may be stale.
        self.versions_of = None;
        match change {
            FlashChange::Erase { block, erase_count } => {
                self.counters.blocks_erased += 1;
                self.rescue(block)?;
                let spp = u64::from(self.sectors_per_page());
                let first = u64::from(self.sim.nand().layout().ppn(block, 0)) * spp;
                let end = first + u64::from(self.sim.nand().layout().pages_per_block) * spp;
                let gone: Vec<u64> = self.hollow.range(first..end).copied().collect();
                for at in gone {
                    self.hollow.remove(&at);
                }
                self.image.erase_block(block, erase_count)
            }
            FlashChange::Page {
                ppn,
                record,
                spare_only: true,
                ..
            } => {
                self.counters.spare_programs += 1;
                self.image.write_page(ppn, &journal.record(record), None)
            }
            FlashChange::Page {
                ppn,
                record,
                copied_from,
                ..
            } => {
                let rec = journal.record(record);
                let mut page = std::mem::take(&mut self.page_buf);
                let result = self.assemble_page(ppn, &rec, copied_from, &mut page);
                let result = result.and_then(|()| self.image.write_page(ppn, &rec, Some(&page)));
                self.page_buf = page;
                result?;
                self.counters.pages_written += 1;
                self.after_program(ppn, &rec);
                Ok(())
            }
        }
    }

    /// Before `block` is erased: keeps the bytes of every unit in it that is still its
    /// logical unit's newest flash copy (see `rescued`).
    fn rescue(&mut self, block: crate::nand::BlockId) -> Result<(), SimError> {
        let layout = *self.sim.nand().layout();
        let first = layout.ppn(block, 0);
        let (mut entries, mut versions) = (Vec::new(), Vec::new());
        let us = self.unit_sectors as usize;
        let sb = self.sector_bytes as usize;
        for ppn in first..first + self.image.written_pages(block) {
            if !self.image.read_record(ppn, &mut entries, &mut versions)? {
                continue;
            }
            for (i, entry) in entries.iter().enumerate() {
                let unit = ppn * self.units_per_page + i as u32;
                let Some(lpn) = entry.lpn() else { continue };
                let Some(copy) = self.newest.get_mut(lpn as usize) else {
                    continue;
                };
                if copy.slot_plus_one != unit + 1 {
                    continue;
                }
                *copy = NewestCopy::default();
                for within in 0..us {
                    let version = versions[i * us + within];
                    if version == 0 {
                        continue;
                    }
                    let sector = u64::from(lpn) * self.unit_sectors + within as u64;
                    let mut bytes = vec![0; sb];
                    let offset = ((i * us + within) * sb) as u32;
                    self.image.read_data(ppn, offset, &mut bytes)?;
                    self.counters.staged_bytes += sb as u64;
                    self.staged_index.insert((sector, version));
                    self.rescued.insert((sector, version), bytes);
                }
            }
        }
        Ok(())
    }

    /// The data of a page being programmed: each host sector's bytes of its version.
    fn assemble_page(
        &mut self,
        ppn: Ppn,
        rec: &crate::nand::PageRecord<'_>,
        copied_from: Option<Ppn>,
        page: &mut [u8],
    ) -> Result<(), SimError> {
        if let Some(src) = copied_from {
            return self.image.read_data(src, 0, page);
        }
        page.fill(0);
        let us = self.unit_sectors as usize;
        let sb = self.sector_bytes as usize;
        for (slot, entry) in rec.entries.iter().enumerate() {
            let Some(lpn) = entry.lpn() else { continue };
            if entry.flags() & OOB_FLAG_TRANSLATION != 0 {
                continue;
            }
            for within in 0..us {
                let version = rec.versions.get(slot * us + within).copied().unwrap_or(0);
                if version == 0 {
                    continue;
                }
                let sector = u64::from(lpn) * self.unit_sectors + within as u64;
                let at = (slot * us + within) * sb;
                let dst = &mut page[at..at + sb];
                if !self.flash_or_staged(sector, version, dst)? {
                    // Stale or trimmed data the FTL still copies (a GC copy overtaken by a
                    // host write or trim): no bytes are kept for it. A read that ever gets
                    // this copy fails instead of returning zeros.
                    self.counters.sectors_without_data += 1;
                    let physical = u64::from(ppn) * u64::from(self.sectors_per_page())
                        + (slot * us + within) as u64;
                    self.hollow.insert(physical);
                }
            }
        }
        Ok(())
    }

    /// Like [`BlockDevice::sector_data`], but while mirroring: the image, not the simulated
    /// flash (which may be ahead), says what the newest copy holds.
    fn flash_or_staged(
        &mut self,
        sector: u64,
        version: u64,
        dst: &mut [u8],
    ) -> Result<bool, SimError> {
        if let Some(bytes) = self.staged_bytes(sector, version) {
            dst.copy_from_slice(bytes);
            return Ok(true);
        }
        let lpn = sector / self.unit_sectors;
        let copy = self.newest.get(lpn as usize).copied().unwrap_or_default();
        if copy.slot_plus_one == 0 {
            return Ok(false);
        }
        let slot = copy.slot_plus_one - 1;
        let within = sector % self.unit_sectors;
        let (ppn, offset) = self.sector_place(slot, within);
        if self.versions_of != Some(ppn) {
            self.image.read_versions(ppn, &mut self.versions_buf)?;
            self.versions_of = Some(ppn);
        }
        let in_page = (slot % self.units_per_page) as u64 * self.unit_sectors + within;
        let found = self.versions_buf.get(in_page as usize) == Some(&version);
        if found {
            self.image.read_data(ppn, offset, dst)?;
        }
        Ok(found)
    }

    /// A programmed page's units become their logical units' newest copies (by sequence
    /// number) and release the staged sectors now on the flash.
    fn after_program(&mut self, ppn: Ppn, rec: &crate::nand::PageRecord<'_>) {
        let us = self.unit_sectors as usize;
        for (slot, entry) in rec.entries.iter().enumerate() {
            let Some(lpn) = entry.lpn() else { continue };
            if entry.flags() & OOB_FLAG_TRANSLATION != 0 {
                continue;
            }
            let unit = ppn * self.units_per_page + slot as u32;
            note_newest(&mut self.newest, lpn, unit, entry.seq());
            for within in 0..us {
                let version = rec.versions.get(slot * us + within).copied().unwrap_or(0);
                if version != 0 {
                    self.release(u64::from(lpn) * self.unit_sectors + within as u64, version);
                }
            }
        }
    }

    /// Reopens an existing image: its flash is read back as a power-up scan finds it and
    /// the FTL rebuilds its state from it ([`Simulation::recover`]); the rebuilt state must
    /// pass the FTL's invariant checks. Refused for an FTL without recovery.
    pub fn open(path: &Path) -> Result<(Self, OpenReport), SimError> {
        let (mut image, mut config) = FlashImage::open(path)?;
        config.run.payloads = true;
        let ftl = crate::ftl::registry::build(&config)?;
        if !ftl.supports_recovery() {
            return Err(SimError::RecoveryUnsupported { ftl: ftl.name() });
        }
        let layout = crate::nand::Layout::new(&config.geometry);
        let mut nand =
            crate::nand::Nand::new(layout, ftl.units_per_page(), config.host.sector_bytes, true)
                .with_rules(&config.nand);
        drop(ftl);
        let restore = image.restore(&mut nand)?;
        // What recovery writes (the demand-paged FTLs rewrite their translation pages) reaches
        // the image with the first mirror.
        nand.start_journal();
        let clean_shutdown = image.superblock.clean_shutdown;
        let (sim, scan) = Simulation::recover(&config, nand)?;
        sim.check_invariants().map_err(|message| SimError::Ftl {
            ftl: sim.ftl().name(),
            message: format!(
                "state recovered from {} fails its checks: {message}",
                path.display()
            ),
        })?;
        image.superblock.clean_shutdown = false;
        image.write_superblock()?;
        image.sync()?;
        let device = Self::with_parts(sim, image)?;
        Ok((
            device,
            OpenReport {
                restore,
                scan,
                clean_shutdown,
            },
        ))
    }

    /// Syncs the image and marks it cleanly closed (the next start still scans it).
    pub fn close(&mut self) -> Result<(), SimError> {
        self.mirror()?;
        self.image.superblock.next_version = self.sim.next_data_version();
        self.image.superblock.clean_shutdown = self.failed.is_none();
        self.image.write_superblock()?;
        self.image.sync()
    }
}

fn note_newest(newest: &mut [NewestCopy], lpn: u32, slot: u32, seq: u64) {
    if let Some(n) = newest.get_mut(lpn as usize) {
        if n.slot_plus_one == 0 || seq >= n.seq {
            *n = NewestCopy {
                slot_plus_one: slot + 1,
                seq,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(dir: &Path) -> BlockDevice {
        let cfg = ExperimentConfig::with_sets(
            "default",
            &[
                "geometry.channels=2",
                "geometry.chips_per_channel=1",
                "geometry.dies_per_chip=1",
                "geometry.blocks_per_plane=16",
                "geometry.pages_per_block=16",
                "ftl.over_provisioning=0.3",
            ],
        )
        .unwrap();
        BlockDevice::create(&cfg, &dir.join("flash.img")).unwrap()
    }

    fn run(dev: &mut BlockDevice, command: Command) -> Finished {
        let ticket = dev.submit(command).unwrap();
        let mut out = Vec::new();
        loop {
            dev.run_until_served().unwrap();
            dev.collect(&mut out).unwrap();
            if let Some(at) = out.iter().position(|f| f.ticket == ticket) {
                return out.swap_remove(at);
            }
        }
    }

    #[test]
    fn flushed_bytes_come_from_the_image_and_a_hollow_copy_fails_the_read() {
        let dir = tempfile::tempdir().unwrap();
        let mut dev = device(dir.path());
        let data: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 3) as u8).collect();
        let offset = 64 * 1024;
        run(
            &mut dev,
            Command::Write {
                offset,
                data: data.clone(),
                fua: true,
            },
        );
        assert_eq!(
            dev.counters().staged_bytes,
            0,
            "the FUA write is on flash: {:?}",
            dev.counters()
        );
        let read = |dev: &mut BlockDevice| {
            run(
                dev,
                Command::Read {
                    offset,
                    len: data.len() as u64,
                },
            )
            .result
        };
        assert_eq!(read(&mut dev), Ok(Some(data.clone())));
        // The copy read from the image, marked as programmed without its bytes: the read
        // fails instead of returning the zeros written there.
        let lpn = offset / dev.sector_bytes() / dev.unit_sectors;
        let slot = dev.newest[lpn as usize].slot_plus_one - 1;
        let (ppn, at) = dev.sector_place(slot, 0);
        let physical = u64::from(ppn) * u64::from(dev.sectors_per_page()) + u64::from(at) / 512;
        dev.hollow.insert(physical);
        let failed = read(&mut dev);
        assert!(
            failed
                .as_ref()
                .is_err_and(|e| e.contains("neither staged nor on the flash")),
            "{failed:?}"
        );
        assert_eq!(dev.counters().missing_sectors, 1);
    }
}
