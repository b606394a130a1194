//! Power-loss recovery shared by the FTLs that support it ([`crate::ftl::Ftl::recover`]): the
//! account of the scan an FTL makes at power-up ([`RecoveryScan`]: reads per die, and the
//! scan's simulated time from the device timing), and the scan of page-mapped FTLs
//! ([`newest_copies`]: the newest copy of every logical unit by OOB sequence number).
//!
//! **What a power cut leaves.** The flash holds what was programmed (OOB entries, payloads,
//! spare tags, write pointers, erase counts); no unit slot is valid (real flash has no valid
//! bits: [`Nand::clear_validity`]). The FTL's RAM is gone: its map, block lists, write buffer
//! and any data in it. Recovery rebuilds the state from the flash alone and marks the copies
//! it keeps with [`Nand::mark_valid`]; the rebuilt state must pass the FTL's invariant checks.
//!
//! **Trims are not persistent.** No FTL here records a trim on flash, so a unit trimmed
//! before the cut comes back after it with the newest copy the flash still holds (possibly
//! older than the one trimmed, when GC erased that one), or stays unmapped when none is left.
//! NBD and NVMe leave trimmed data unspecified, so this is allowed; data written and flushed
//! after a trim always wins (newer sequence number).
//!
//! **The scan's time model.** A scan reads the spare area (OOB) of pages (cell time
//! `timing.read_oob_latency_ns`, `geometry.oob_bytes` over the bus) and, where an FTL needs
//! more than the OOB, whole pages (`timing.read_latency_ns`, `geometry.page_bytes`). Per die,
//! its cell time is the sum of its reads' cell times and its bus time the sum of its transfers
//! (bytes x 1000 / `timing.bus_mb_per_s` ns); a die is held for its transfers (no cache
//! reads), so it needs cell + bus time. Dies work in parallel; the dies of a channel share its
//! bus, which moves their transfers one at a time. The scan takes, over all channels, the
//! longest of each channel's bus time and its slowest die's cell + bus time: the time of a
//! scan that keeps every die and bus busy (a lower bound of a real firmware's scan, which
//! also spends CPU time; FTL CPU time is not counted). An FTL that writes during recovery
//! (the demand-paged FTLs rewrite their translation pages) adds its programs (cell time
//! `timing.program_latency_ns`, a page over the bus) and erases (`timing.erase_latency_ns`) to
//! its dies' times the same way.

use serde::Serialize;

use crate::config::Timing;
use crate::nand::{BlockId, Layout, Nand, Ppn, UnitAddr, OOB_FLAG_TRANSLATION};
use crate::SimError;

use super::UNMAPPED;

/// Reads made by one die during a scan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DieReads {
    pub oob_reads: u64,
    pub page_reads: u64,
    /// Pages programmed during recovery (an FTL rewriting its metadata).
    pub page_programs: u64,
    /// Blocks erased during recovery.
    pub block_erases: u64,
}

/// What an FTL's power-up scan did, and how long it takes on the device (see the module docs
/// for the time model). Serialised into the report of a recovered run.
#[derive(Debug, Clone, Serialize)]
pub struct RecoveryScan {
    /// The FTL that scanned.
    pub ftl: String,
    /// Distinct pages whose spare area or data the scan read.
    pub pages_scanned: u64,
    /// Spare-area (OOB) reads.
    pub oob_reads: u64,
    /// Whole-page reads.
    pub page_reads: u64,
    /// Pages programmed during recovery (the demand-paged FTLs' rewritten translation pages).
    pub page_programs: u64,
    /// Blocks erased during recovery (the demand-paged FTLs' stale translation blocks).
    pub block_erases: u64,
    /// Mapping units (or pages) whose newest copy was found and marked valid.
    pub units_recovered: u64,
    /// Blocks found erased.
    pub blocks_free: u64,
    /// Blocks found partly written (what each FTL does with them: its module docs).
    pub blocks_open: u64,
    /// Blocks found fully written.
    pub blocks_closed: u64,
    /// The highest OOB sequence number found (the FTL numbers its next writes past it).
    pub max_sequence: u64,
    /// The scan's simulated time (module docs).
    pub simulated_ns: u64,
    #[serde(skip)]
    per_die: Vec<DieReads>,
    #[serde(skip)]
    layout: Layout,
    #[serde(skip)]
    timing: Timing,
}

impl RecoveryScan {
    /// An empty account of a scan of `layout` with the device's `timing`.
    pub fn new(ftl: &str, layout: Layout, timing: Timing) -> Self {
        RecoveryScan {
            ftl: ftl.to_string(),
            pages_scanned: 0,
            oob_reads: 0,
            page_reads: 0,
            page_programs: 0,
            block_erases: 0,
            units_recovered: 0,
            blocks_free: 0,
            blocks_open: 0,
            blocks_closed: 0,
            max_sequence: 0,
            simulated_ns: 0,
            per_die: vec![DieReads::default(); layout.dies() as usize],
            layout,
            timing,
        }
    }

    /// Reads made by each die.
    pub fn per_die(&self) -> &[DieReads] {
        &self.per_die
    }

    /// Counts a spare-area read of page `ppn`.
    pub fn count_oob_read(&mut self, ppn: Ppn) {
        let die = self.layout.die_of(self.layout.block_of(ppn));
        self.per_die[die as usize].oob_reads += 1;
        self.oob_reads += 1;
        self.pages_scanned += 1;
    }

    /// Counts a whole-page read of `ppn` (data and spare area); `also_oob`: the page's spare
    /// area was read before in this scan (the page is not counted twice as scanned).
    pub fn count_page_read(&mut self, ppn: Ppn, also_oob: bool) {
        let die = self.layout.die_of(self.layout.block_of(ppn));
        self.per_die[die as usize].page_reads += 1;
        self.page_reads += 1;
        if !also_oob {
            self.pages_scanned += 1;
        }
    }

    /// Counts a program of page `ppn` made during recovery.
    pub fn count_program(&mut self, ppn: Ppn) {
        let die = self.layout.die_of(self.layout.block_of(ppn));
        self.per_die[die as usize].page_programs += 1;
        self.page_programs += 1;
    }

    /// Counts an erase of `block` made during recovery.
    pub fn count_erase(&mut self, block: BlockId) {
        let die = self.layout.die_of(block);
        self.per_die[die as usize].block_erases += 1;
        self.block_erases += 1;
    }

    /// Scans a block's spare areas the way a firmware finds its written pages: with
    /// sequential program order page by page until the first erased page (every page of a
    /// full block), with any-order chips every page. Calls `page` with each page whose data
    /// area is programmed, and returns how many there are.
    pub fn scan_block(&mut self, nand: &Nand, block: BlockId, mut page: impl FnMut(Ppn)) -> u32 {
        let ppb = self.layout.pages_per_block;
        let to_read = match nand.program_order() {
            crate::config::ProgramOrder::Sequential => (nand.block(block).write_ptr + 1).min(ppb),
            crate::config::ProgramOrder::Any => ppb,
        };
        let mut programmed = 0;
        for i in 0..to_read {
            let ppn = self.layout.ppn(block, i);
            self.count_oob_read(ppn);
            if nand.is_programmed(ppn) {
                programmed += 1;
                page(ppn);
            }
        }
        programmed
    }

    /// Counts the blocks of `nand` by what the scan found: erased, partly or fully written.
    pub fn count_blocks(&mut self, nand: &Nand) {
        let ppb = self.layout.pages_per_block;
        for meta in nand.blocks() {
            match meta.write_ptr {
                0 => self.blocks_free += 1,
                w if w < ppb => self.blocks_open += 1,
                _ => self.blocks_closed += 1,
            }
        }
    }

    /// Computes [`RecoveryScan::simulated_ns`] from the reads counted (module docs).
    pub fn finish(&mut self) {
        let t = &self.timing;
        let bus_ns = |bytes: u64| (bytes as f64 * 1e3 / t.bus_mb_per_s).ceil() as u64;
        let mut channel_bus = vec![0u64; self.layout.channels as usize];
        let mut longest = 0u64;
        for (die, r) in self.per_die.iter().enumerate() {
            let cell = r.oob_reads * t.read_oob_latency_ns
                + r.page_reads * t.read_latency_ns
                + r.page_programs * t.program_latency_ns
                + r.block_erases * t.erase_latency_ns;
            let bus = bus_ns(
                r.oob_reads * u64::from(self.layout.oob_bytes)
                    + (r.page_reads + r.page_programs) * u64::from(self.layout.page_bytes),
            );
            channel_bus[self.layout.channel_of(die as u32) as usize] += bus;
            longest = longest.max(cell + bus);
        }
        self.simulated_ns = longest.max(channel_bus.into_iter().max().unwrap_or(0));
    }
}

/// Where the newest copy of every logical unit is, as a page-mapped FTL's scan finds it.
#[derive(Debug, Clone)]
pub struct NewestCopies {
    /// Per logical unit, its newest copy's unit slot ([`UNMAPPED`] if none).
    pub slot: Vec<UnitAddr>,
    /// Per logical unit, that copy's sequence number.
    pub seq: Vec<u64>,
    /// The highest sequence number of any OOB entry (translation entries included).
    pub max_seq: u64,
}

/// The error of an image that does not fit the FTL configured to read it.
pub fn image_error(message: String) -> SimError {
    SimError::Input {
        location: "flash image".into(),
        message,
    }
}

/// Scans the OOB of every programmed page (data blocks and translation blocks alike) and
/// keeps, per logical unit below `logical_units`, the copy with the highest sequence number
/// among slots not flagged [`OOB_FLAG_TRANSLATION`]; copies with equal numbers are GC copies
/// of the same data: the first found is kept, unless a later one is `preferred` and the kept
/// one is not (an FTL that knows where its GC copies go, e.g. WAO-GC's open reserved block,
/// keeps the copy, so its collection continues where it stopped). An entry naming a unit outside the logical
/// space means the image was written with another configuration: an error.
pub fn newest_copies(
    nand: &Nand,
    scan: &mut RecoveryScan,
    logical_units: u32,
    preferred: impl Fn(UnitAddr) -> bool,
) -> Result<NewestCopies, SimError> {
    let upp = nand.units_per_page();
    let mut found = NewestCopies {
        slot: vec![UNMAPPED; logical_units as usize],
        seq: vec![0; logical_units as usize],
        max_seq: 0,
    };
    let mut bad: Option<(UnitAddr, u32)> = None;
    for block in 0..nand.layout().blocks() {
        scan.scan_block(nand, block, |ppn| {
            for s in 0..upp {
                let unit = ppn * upp + s;
                let e = nand.oob(unit);
                let Some(lpn) = e.lpn() else { continue };
                found.max_seq = found.max_seq.max(e.seq());
                if e.flags() & OOB_FLAG_TRANSLATION != 0 {
                    continue;
                }
                let Some(best) = found.slot.get_mut(lpn as usize) else {
                    bad.get_or_insert((unit, lpn));
                    continue;
                };
                let seq = found.seq[lpn as usize];
                let newer = *best == UNMAPPED
                    || e.seq() > seq
                    || (e.seq() == seq && preferred(unit) && !preferred(*best));
                if newer {
                    *best = unit;
                    found.seq[lpn as usize] = e.seq();
                }
            }
        });
    }
    if let Some((unit, lpn)) = bad {
        return Err(image_error(format!(
            "unit slot {unit} holds logical unit {lpn}, outside the {logical_units} units this \
             configuration exports (was the image written with other settings?)"
        )));
    }
    scan.max_sequence = scan.max_sequence.max(found.max_seq);
    Ok(found)
}

/// Marks every found copy valid in `nand`; returns how many.
pub fn mark_newest_valid(
    nand: &mut Nand,
    found: &NewestCopies,
    ftl: &'static str,
) -> Result<u64, SimError> {
    let mut n = 0;
    for &unit in found.slot.iter().filter(|&&u| u != UNMAPPED) {
        nand.mark_valid(unit)
            .map_err(|source| SimError::Nand { ftl, source })?;
        n += 1;
    }
    Ok(n)
}

/// The scan every page-mapped FTL makes (pagemap, mt-ftl, wao-gc, rtgc): the newest copy of
/// each of `logical_units` units (`preferred` breaks a tie of equal sequence numbers, a GC
/// copy and its source), marked valid and entered in `map`; the blocks counted and `blocks`
/// rebuilt, host units numbered past the newest. Returns that highest sequence number (the
/// FTL numbers its next writes past it).
pub fn recover_page_map(
    nand: &mut Nand,
    scan: &mut RecoveryScan,
    logical_units: u32,
    preferred: impl Fn(&Nand, UnitAddr) -> bool,
    map: &mut super::MapTable,
    blocks: &mut super::Blocks,
    ftl: &'static str,
) -> Result<u64, SimError> {
    let found = {
        let nand: &Nand = nand;
        newest_copies(nand, scan, logical_units, |unit| preferred(nand, unit))?
    };
    scan.units_recovered = mark_newest_valid(nand, &found, ftl)?;
    for (lpn, &unit) in found.slot.iter().enumerate() {
        if unit != UNMAPPED {
            map.set(lpn as u32, unit);
        }
    }
    scan.count_blocks(nand);
    blocks.recover(nand, found.max_seq, |_| false);
    Ok(found.max_seq)
}

/// Whether `unit` lies in a partly written block (a die's open GC block at the cut: its copy
/// of a unit wins the tie with the victim's, which carries the same sequence number).
pub fn in_partly_written_block(nand: &Nand, unit: UnitAddr) -> bool {
    let layout = nand.layout();
    let written = nand
        .block(layout.block_of(nand.ppn_of_unit(unit)))
        .write_ptr;
    (1..layout.pages_per_block).contains(&written)
}
