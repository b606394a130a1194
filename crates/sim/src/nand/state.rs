//! Functional NAND state and its rules.

use thiserror::Error;

use super::{BlockId, Divisor, Layout, Ppn, UnitAddr};
use crate::config::{NandRules, ProgramOrder};

/// Bytes of OOB one mapping-unit slot needs (logical unit, sequence number, flags).
pub const OOB_ENTRY_BYTES: u32 = 12;

/// OOB flag of a slot holding FTL metadata, not host data: a translation page of a
/// demand-paged map (DFTL-style FTLs; its logical unit is then a translation page number,
/// TVPN) or a parity page (PaRT-FTL; its logical unit is the stripe group). The NAND model treats
/// it as reserved: erasing a block with a live translation page is [`NandError`]
/// (`EraseLiveTranslation`), and the host mapping checks skip such slots.
pub const OOB_FLAG_TRANSLATION: u8 = 0x80;

/// Largest sequence number an OOB entry holds (48 bits).
const SEQ_MAX: u64 = (1 << 48) - 1;

/// Out-of-band record of one mapping-unit slot: which logical unit it holds, the sequence
/// number of the host write that produced the data (copied along by GC, so the newest copy of
/// a unit can be found after power loss), and FTL flags. All zero means "no data".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct OobEntry {
    lpn_plus_one: u32,
    seq_lo: u32,
    seq_hi: u16,
    flags: u8,
    _reserved: u8,
}

impl OobEntry {
    /// Entry for logical unit `lpn` written with sequence number `seq` (< 2^48).
    pub fn new(lpn: u32, seq: u64, flags: u8) -> Self {
        debug_assert!(lpn < u32::MAX && seq <= SEQ_MAX);
        OobEntry {
            lpn_plus_one: lpn + 1,
            seq_lo: seq as u32,
            seq_hi: (seq >> 32) as u16,
            flags,
            _reserved: 0,
        }
    }
    /// An empty slot (padding).
    pub const EMPTY: OobEntry = OobEntry {
        lpn_plus_one: 0,
        seq_lo: 0,
        seq_hi: 0,
        flags: 0,
        _reserved: 0,
    };
    /// The logical unit held, if any.
    pub fn lpn(&self) -> Option<u32> {
        self.lpn_plus_one.checked_sub(1)
    }
    pub fn seq(&self) -> u64 {
        u64::from(self.seq_lo) | (u64::from(self.seq_hi) << 32)
    }
    pub fn flags(&self) -> u8 {
        self.flags
    }
    pub fn is_empty(&self) -> bool {
        self.lpn_plus_one == 0
    }
    /// The entry as the 12 bytes a spare area stores (little-endian).
    pub fn to_bytes(&self) -> [u8; 12] {
        let mut b = [0; 12];
        b[0..4].copy_from_slice(&self.lpn_plus_one.to_le_bytes());
        b[4..8].copy_from_slice(&self.seq_lo.to_le_bytes());
        b[8..10].copy_from_slice(&self.seq_hi.to_le_bytes());
        b[10] = self.flags;
        b
    }
    /// The entry [`OobEntry::to_bytes`] stored.
    pub fn from_bytes(b: &[u8; 12]) -> Self {
        OobEntry {
            lpn_plus_one: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            seq_lo: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            seq_hi: u16::from_le_bytes([b[8], b[9]]),
            flags: b[10],
            _reserved: 0,
        }
    }
}

/// Per-page state byte: partial programs since the last erase (low bits) and whether the data
/// area has been programmed.
const PAGE_PROGRAMS_MASK: u8 = 0x0f;
const PAGE_DATA: u8 = 0x10;

/// What a spare-area (OOB) read returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spare {
    /// The page has not been programmed since its block was erased (all ones on a real chip).
    Erased,
    /// The spare area holds these entries' page: its first unit slot's OOB entry and the
    /// FTL's spare tag (a word written with [`Nand::program_spare`], 0 when none).
    Programmed { entry: OobEntry, tag: u32 },
}

/// Per-block bookkeeping.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockMeta {
    /// One past the highest page programmed (data or spare) since the last erase; pages at or
    /// above it are free (erased). With sequential program order, pages below it are
    /// programmed.
    pub write_ptr: u32,
    pub erase_count: u32,
    /// Valid mapping-unit slots in the block.
    pub valid_units: u32,
}

/// An FTL broke a NAND rule (or addressed outside the device). Always a bug in the FTL.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NandError {
    #[error("page {page} of block {block} programmed out of order (next programmable page is {write_ptr}; pages must be programmed in order after an erase)")]
    OutOfOrder {
        block: BlockId,
        page: u32,
        write_ptr: u32,
    },
    #[error("block {block} is full: page {page} programmed without an erase")]
    ProgramWithoutErase { block: BlockId, page: u32 },
    #[error("read of unwritten page {page} of block {block}")]
    ReadUnwritten { block: BlockId, page: u32 },
    #[error("erase of block {block} destroys {valid} valid units")]
    EraseValid { block: BlockId, valid: u32 },
    #[error("erase of block {block} destroys live translation page {page} (unit slot {unit} flagged as translation is still valid)")]
    EraseLiveTranslation {
        block: BlockId,
        page: u32,
        unit: UnitAddr,
    },
    #[error("unit slot {unit} invalidated but it holds no valid data")]
    InvalidateInvalid { unit: UnitAddr },
    #[error("recovery marks unit slot {unit} valid, but {reason}")]
    MarkValid {
        unit: UnitAddr,
        reason: &'static str,
    },
    #[error("copyback from block {src_block} to block {dst_block} crosses planes")]
    CopybackCrossPlane {
        src_block: BlockId,
        dst_block: BlockId,
    },
    #[error("{what} {value} is outside the device (limit {limit})")]
    OutOfRange {
        what: &'static str,
        value: u64,
        limit: u64,
    },
    #[error("sequence number {0} exceeds the 48 bits an OOB entry holds")]
    SeqOverflow(u64),
    #[error("program supplies {got} OOB entries, a page holds {expected}")]
    EntryCount { got: usize, expected: u32 },
    #[error("page {page} of block {block} programmed a {nth}th time since its erase; the chip accepts {nop} partial programs per page (nand.partial_programs_per_page, spare-area programs counted)")]
    PartialProgramLimit {
        block: BlockId,
        page: u32,
        nth: u32,
        nop: u32,
    },
    #[error("data area of page {page} of block {block} programmed twice without an erase")]
    DataProgrammedTwice { block: BlockId, page: u32 },
    #[error("spare tag of page {page} of block {block} written twice without an erase")]
    SpareTagTwice { block: BlockId, page: u32 },
}

/// Functional state of every page, block and OOB entry.
#[derive(Debug, Clone)]
pub struct Nand {
    layout: Layout,
    units_per_page: u32,
    per_page: Divisor,
    sectors_per_page: u32,
    blocks: Vec<BlockMeta>,
    /// Per page: partial programs since erase and the data-programmed bit. Absent while every
    /// page was programmed once, in order (a sequential chip without spare-only programs): the
    /// write pointers say it all, at no memory cost. Made at the first spare-only program, or
    /// at once for any-order chips.
    pages: Option<Vec<u8>>,
    /// Per page, the spare tag word ([`Nand::program_spare`]); allocated at first use.
    spare_tags: Option<Vec<u32>>,
    order: ProgramOrder,
    nop: u32,
    pub(super) oob: Vec<OobEntry>,
    valid: Vec<u64>,
    pub(super) payload: Option<Vec<u64>>,
    /// Changes recorded for a mirror of the flash ([`super::journal`]), when on.
    pub(super) journal: Option<Box<super::journal::FlashJournal>>,
}

impl Nand {
    /// A fresh (all erased) device whose pages hold `units_per_page` mapping units, with
    /// optional per-sector data versions.
    pub fn new(layout: Layout, units_per_page: u32, sector_bytes: u32, payloads: bool) -> Self {
        let units = layout.pages() as usize * units_per_page as usize;
        let sectors_per_page = layout.page_bytes / sector_bytes;
        Nand {
            layout,
            units_per_page,
            per_page: Divisor::new(units_per_page),
            sectors_per_page,
            blocks: vec![BlockMeta::default(); layout.blocks() as usize],
            pages: None,
            spare_tags: None,
            order: ProgramOrder::Sequential,
            nop: 1,
            oob: crate::large_array::filled(units, OobEntry::EMPTY),
            valid: crate::large_array::filled(units.div_ceil(64), 0),
            payload: payloads.then(|| vec![0; layout.pages() as usize * sectors_per_page as usize]),
            journal: None,
        }
    }

    /// Applies the chip's programming rules (program order and partial programs per page).
    pub fn with_rules(mut self, rules: &NandRules) -> Self {
        self.order = rules.program_order;
        self.nop = rules.partial_programs_per_page;
        if self.order == ProgramOrder::Any {
            self.page_states();
        }
        self
    }

    /// The per-page states, made from the write pointers at first use.
    fn page_states(&mut self) -> &mut Vec<u8> {
        if self.pages.is_none() {
            let ppb = self.layout.pages_per_block;
            let mut pages = vec![0; self.layout.pages() as usize];
            for (b, meta) in self.blocks.iter().enumerate() {
                let first = b * ppb as usize;
                pages[first..first + meta.write_ptr as usize].fill(PAGE_DATA | 1);
            }
            self.pages = Some(pages);
        }
        self.pages.as_mut().expect("just made")
    }

    /// State byte of a page (from the write pointer while there are no per-page states).
    #[inline]
    fn page_state(&self, ppn: Ppn) -> u8 {
        match &self.pages {
            Some(p) => p[ppn as usize],
            None => {
                let block = self.layout.block_of(ppn);
                if self.layout.page_in_block(ppn) < self.blocks[block as usize].write_ptr {
                    PAGE_DATA | 1
                } else {
                    0
                }
            }
        }
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    pub fn program_order(&self) -> ProgramOrder {
        self.order
    }
    pub fn units_per_page(&self) -> u32 {
        self.units_per_page
    }
    pub fn sectors_per_page(&self) -> u32 {
        self.sectors_per_page
    }
    pub fn has_payloads(&self) -> bool {
        self.payload.is_some()
    }
    pub fn block(&self, block: BlockId) -> &BlockMeta {
        &self.blocks[block as usize]
    }
    pub fn blocks(&self) -> &[BlockMeta] {
        &self.blocks
    }
    pub fn unit_addr(&self, ppn: Ppn, slot: u32) -> UnitAddr {
        ppn * self.units_per_page + slot
    }
    #[inline]
    pub fn ppn_of_unit(&self, unit: UnitAddr) -> Ppn {
        self.per_page.quotient(unit)
    }
    pub fn oob(&self, unit: UnitAddr) -> &OobEntry {
        &self.oob[unit as usize]
    }
    #[inline]
    pub fn is_valid(&self, unit: UnitAddr) -> bool {
        self.valid[(unit / 64) as usize] >> (unit % 64) & 1 == 1
    }
    /// Whether the data area of page `ppn` has been programmed since its block's last erase.
    #[inline]
    pub fn is_programmed(&self, ppn: Ppn) -> bool {
        self.page_state(ppn) & PAGE_DATA != 0
    }

    /// Partial programs (data or spare) page `ppn` has taken since its block's last erase.
    pub fn partial_programs(&self, ppn: Ppn) -> u32 {
        u32::from(self.page_state(ppn) & PAGE_PROGRAMS_MASK)
    }

    /// The spare area of page `ppn` as a spare-only read returns it: erased, or its first
    /// slot's OOB entry and spare tag.
    pub fn spare(&self, ppn: Ppn) -> Result<Spare, NandError> {
        self.check_ppn(ppn)?;
        if self.page_state(ppn) & PAGE_PROGRAMS_MASK == 0 {
            return Ok(Spare::Erased);
        }
        Ok(Spare::Programmed {
            entry: self.oob[(ppn * self.units_per_page) as usize],
            tag: self.spare_tags.as_ref().map_or(0, |t| t[ppn as usize]),
        })
    }

    /// Checks that page `ppn` may take one more program (of its data area when `data`) under
    /// the chip's rules, and records it: order within the block, data at most once, at most
    /// `nop` partial programs.
    fn take_program(&mut self, ppn: Ppn, data: bool) -> Result<(), NandError> {
        let block = self.layout.block_of(ppn);
        let page = self.layout.page_in_block(ppn);
        let state = self.page_state(ppn);
        let meta = &mut self.blocks[block as usize];
        let touched = state & PAGE_PROGRAMS_MASK != 0;
        if self.order == ProgramOrder::Sequential {
            // In order: the next free page, or the page last programmed (a further partial
            // program of it).
            let at_pointer = page == meta.write_ptr;
            let last = touched && page + 1 == meta.write_ptr;
            if !at_pointer && !last {
                if meta.write_ptr >= self.layout.pages_per_block {
                    return Err(NandError::ProgramWithoutErase { block, page });
                }
                return Err(NandError::OutOfOrder {
                    block,
                    page,
                    write_ptr: meta.write_ptr,
                });
            }
        }
        if data && state & PAGE_DATA != 0 {
            return Err(NandError::DataProgrammedTwice { block, page });
        }
        let nth = u32::from(state & PAGE_PROGRAMS_MASK) + 1;
        if nth > self.nop {
            return Err(NandError::PartialProgramLimit {
                block,
                page,
                nth,
                nop: self.nop,
            });
        }
        meta.write_ptr = meta.write_ptr.max(page + 1);
        let new_state =
            (state & !PAGE_PROGRAMS_MASK) | nth as u8 | if data { PAGE_DATA } else { 0 };
        let compact = self.pages.is_none() && data && nth == 1;
        if !compact {
            self.page_states()[ppn as usize] = new_state;
        }
        Ok(())
    }

    /// Programs page `ppn` with one OOB entry per unit slot (empty entries are padding) and,
    /// when payloads are on, `sectors_per_page` data versions (`None` writes zeros). Entries
    /// holding a logical unit become valid.
    pub fn program(
        &mut self,
        ppn: Ppn,
        entries: &[OobEntry],
        data: Option<&[u64]>,
    ) -> Result<(), NandError> {
        self.check_ppn(ppn)?;
        if entries.len() != self.units_per_page as usize {
            return Err(NandError::EntryCount {
                got: entries.len(),
                expected: self.units_per_page,
            });
        }
        let block = self.layout.block_of(ppn);
        self.take_program(ppn, true)?;
        let base = ppn * self.units_per_page;
        for (i, e) in entries.iter().enumerate() {
            let unit = base + i as u32;
            // Flags set by an earlier spare-only program stay set (bits only go 1 -> 0).
            let earlier_flags = self.oob[unit as usize].flags;
            self.oob[unit as usize] = *e;
            self.oob[unit as usize].flags |= earlier_flags;
            if !e.is_empty() {
                self.set_valid(unit, true);
                self.blocks[block as usize].valid_units += 1;
            }
        }
        if let Some(store) = &mut self.payload {
            let spp = self.sectors_per_page as usize;
            let dst = &mut store[ppn as usize * spp..(ppn as usize + 1) * spp];
            match data {
                Some(d) => dst.copy_from_slice(&d[..spp]),
                None => dst.fill(0),
            }
        }
        self.journal_page(ppn, None, false);
        Ok(())
    }

    /// Reads page `ppn` (OOB entries are always available; data versions when payloads are on).
    pub fn check_readable(&self, ppn: Ppn) -> Result<(), NandError> {
        self.check_ppn(ppn)?;
        if !self.is_programmed(ppn) {
            return Err(NandError::ReadUnwritten {
                block: self.layout.block_of(ppn),
                page: self.layout.page_in_block(ppn),
            });
        }
        Ok(())
    }

    /// Data versions of the sectors of one unit slot (empty when payloads are off).
    pub fn unit_data(&self, unit: UnitAddr) -> &[u64] {
        match &self.payload {
            Some(store) => {
                let spu = (self.sectors_per_page / self.units_per_page) as usize;
                let start = unit as usize * spu;
                &store[start..start + spu]
            }
            None => &[],
        }
    }

    /// Marks a valid unit slot invalid (its logical unit was rewritten, trimmed or moved).
    pub fn invalidate(&mut self, unit: UnitAddr) -> Result<(), NandError> {
        if unit as usize >= self.oob.len() {
            return Err(self.unit_out_of_range(unit));
        }
        if !self.is_valid(unit) {
            return Err(NandError::InvalidateInvalid { unit });
        }
        self.set_valid(unit, false);
        let block = self.layout.block_of(self.ppn_of_unit(unit));
        self.blocks[block as usize].valid_units -= 1;
        Ok(())
    }

    /// The first valid unit slot of a block flagged [`OOB_FLAG_TRANSLATION`], if any.
    fn live_translation_unit(&self, block: BlockId) -> Option<UnitAddr> {
        if self.blocks[block as usize].valid_units == 0 {
            return None;
        }
        let first = self.layout.ppn(block, 0) * self.units_per_page;
        let written = self.blocks[block as usize].write_ptr * self.units_per_page;
        (first..first + written)
            .find(|&u| self.is_valid(u) && self.oob(u).flags() & OOB_FLAG_TRANSLATION != 0)
    }

    /// Erases a block: every page becomes free. Erasing valid data is an error
    /// ([`NandError::EraseLiveTranslation`] when a valid slot is a translation page's).
    pub fn erase(&mut self, block: BlockId) -> Result<(), NandError> {
        if block >= self.layout.blocks() {
            return Err(NandError::OutOfRange {
                what: "block",
                value: block.into(),
                limit: self.layout.blocks().into(),
            });
        }
        if let Some(unit) = self.live_translation_unit(block) {
            return Err(NandError::EraseLiveTranslation {
                block,
                page: self.layout.page_in_block(self.ppn_of_unit(unit)),
                unit,
            });
        }
        let meta = &mut self.blocks[block as usize];
        if meta.valid_units > 0 {
            return Err(NandError::EraseValid {
                block,
                valid: meta.valid_units,
            });
        }
        let written = meta.write_ptr;
        meta.write_ptr = 0;
        meta.erase_count += 1;
        let first = self.layout.ppn(block, 0);
        let units = (first * self.units_per_page) as usize
            ..((first + written) * self.units_per_page) as usize;
        self.oob[units].fill(OobEntry::EMPTY);
        let pages = first as usize..(first + written) as usize;
        if let Some(states) = &mut self.pages {
            states[pages.clone()].fill(0);
        }
        if let Some(tags) = &mut self.spare_tags {
            tags[pages].fill(0);
        }
        self.journal_erase(block);
        Ok(())
    }

    /// Copies a page to a free page of the same plane without leaving the die (copyback).
    /// The valid units' OOB entries, the data and the valid bits are copied; the FTL
    /// invalidates the source units.
    pub fn copyback(&mut self, src: Ppn, dst: Ppn) -> Result<(), NandError> {
        self.check_readable(src)?;
        self.check_ppn(dst)?;
        let (sb, db) = (self.layout.block_of(src), self.layout.block_of(dst));
        if self.layout.plane_of(sb) != self.layout.plane_of(db) {
            return Err(NandError::CopybackCrossPlane {
                src_block: sb,
                dst_block: db,
            });
        }
        self.take_program(dst, true)?;
        for slot in 0..self.units_per_page {
            let (from, to) = (
                src * self.units_per_page + slot,
                dst * self.units_per_page + slot,
            );
            if self.is_valid(from) {
                self.oob[to as usize] = self.oob[from as usize];
                self.set_valid(to, true);
                self.blocks[db as usize].valid_units += 1;
            }
        }
        if let Some(store) = &mut self.payload {
            let spp = self.sectors_per_page as usize;
            store.copy_within(
                src as usize * spp..(src as usize + 1) * spp,
                dst as usize * spp,
            );
        }
        self.journal_page(dst, Some(src), false);
        Ok(())
    }

    /// A spare-area-only partial program of page `ppn`, programmed or free: sets `flags` in
    /// its OOB entries and, when `tag` is not 0, writes its spare tag (once per erase). It
    /// counts against the partial programs the page accepts and, with sequential program
    /// order, must respect the order like a data program.
    pub fn program_spare(&mut self, ppn: Ppn, flags: u8, tag: u32) -> Result<(), NandError> {
        self.check_ppn(ppn)?;
        let (block, page) = (self.layout.block_of(ppn), self.layout.page_in_block(ppn));
        if tag != 0
            && self
                .spare_tags
                .as_ref()
                .is_some_and(|t| t[ppn as usize] != 0)
        {
            return Err(NandError::SpareTagTwice { block, page });
        }
        self.take_program(ppn, false)?;
        let base = (ppn * self.units_per_page) as usize;
        for e in &mut self.oob[base..base + self.units_per_page as usize] {
            e.flags |= flags;
        }
        if tag != 0 {
            let pages = self.layout.pages() as usize;
            self.spare_tags.get_or_insert_with(|| vec![0; pages])[ppn as usize] = tag;
        }
        self.journal_page(ppn, None, true);
        Ok(())
    }

    /// Checks a sequence number fits an OOB entry.
    pub fn check_seq(seq: u64) -> Result<(), NandError> {
        if seq > SEQ_MAX {
            return Err(NandError::SeqOverflow(seq));
        }
        Ok(())
    }

    /// Minimum, mean and maximum erase count over all blocks.
    pub fn erase_count_summary(&self) -> (u32, f64, u32) {
        let mut min = u32::MAX;
        let mut max = 0;
        let mut sum = 0u64;
        for b in &self.blocks {
            min = min.min(b.erase_count);
            max = max.max(b.erase_count);
            sum += u64::from(b.erase_count);
        }
        (min, sum as f64 / self.blocks.len() as f64, max)
    }

    /// Checks the bookkeeping adds up: per-block valid counts equal the valid bits, no valid
    /// or non-empty slot lies beyond a block's write pointer.
    pub fn check_consistency(&self) -> Result<(), String> {
        let upb = self.layout.pages_per_block * self.units_per_page;
        for (b, meta) in self.blocks.iter().enumerate() {
            let first = b as u32 * upb;
            let written = meta.write_ptr * self.units_per_page;
            let mut valid = 0;
            for u in first..first + upb {
                if self.is_valid(u) {
                    if u - first >= written || !self.is_programmed(self.ppn_of_unit(u)) {
                        return Err(format!(
                            "block {b}: unit slot {u} valid beyond write pointer {}",
                            meta.write_ptr
                        ));
                    }
                    if self.oob[u as usize].is_empty() {
                        return Err(format!(
                            "block {b}: unit slot {u} valid without an OOB entry"
                        ));
                    }
                    valid += 1;
                }
                let data = self.is_programmed(self.ppn_of_unit(u));
                if !data && self.oob[u as usize].lpn().is_some() {
                    return Err(format!(
                        "block {b}: unit slot {u} of a page without data names a logical unit"
                    ));
                }
                if u - first >= written && !self.oob[u as usize].is_empty() {
                    return Err(format!("block {b}: free unit slot {u} has an OOB entry"));
                }
            }
            if valid != meta.valid_units {
                return Err(format!(
                    "block {b}: valid count {} but {valid} valid unit slots",
                    meta.valid_units
                ));
            }
        }
        Ok(())
    }

    /// Bytes [`Nand::new`] would allocate for this device, without allocating them (what
    /// [`Nand::state_bytes`] then reports).
    pub fn estimate_bytes(
        layout: &Layout,
        units_per_page: u32,
        sector_bytes: u32,
        payloads: bool,
        any_order: bool,
    ) -> u64 {
        let pages = u64::from(layout.pages());
        let units = pages * u64::from(units_per_page);
        let payload = if payloads {
            pages * u64::from(layout.page_bytes / sector_bytes) * 8
        } else {
            0
        };
        u64::from(layout.blocks()) * std::mem::size_of::<BlockMeta>() as u64
            + if any_order { pages } else { 0 }
            + units * std::mem::size_of::<OobEntry>() as u64
            + units.div_ceil(64) * 8
            + payload
    }

    /// Approximate bytes of state held (for memory reports).
    pub fn state_bytes(&self) -> u64 {
        (self.blocks.len() * std::mem::size_of::<BlockMeta>()
            + self.pages.as_ref().map_or(0, Vec::len)
            + self.spare_tags.as_ref().map_or(0, |t| t.len() * 4)
            + self.oob.len() * std::mem::size_of::<OobEntry>()
            + self.valid.len() * 8
            + self.payload.as_ref().map_or(0, |p| p.len() * 8)) as u64
    }

    fn set_valid(&mut self, unit: UnitAddr, on: bool) {
        let word = &mut self.valid[(unit / 64) as usize];
        let bit = 1u64 << (unit % 64);
        if on {
            *word |= bit;
        } else {
            *word &= !bit;
        }
    }

    fn check_ppn(&self, ppn: Ppn) -> Result<(), NandError> {
        if ppn >= self.layout.pages() {
            return Err(NandError::OutOfRange {
                what: "page",
                value: ppn.into(),
                limit: self.layout.pages().into(),
            });
        }
        Ok(())
    }

    fn unit_out_of_range(&self, unit: UnitAddr) -> NandError {
        NandError::OutOfRange {
            what: "unit slot",
            value: unit.into(),
            limit: self.oob.len() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Geometry;

    fn nand(payloads: bool) -> Nand {
        let g = Geometry {
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 2,
            blocks_per_plane: 2,
            pages_per_block: 4,
            page_bytes: 8192,
            oob_bytes: 64,
        };
        Nand::new(Layout::new(&g), 2, 512, payloads)
    }

    fn entries(a: u32, b: u32) -> [OobEntry; 2] {
        [OobEntry::new(a, 1, 0), OobEntry::new(b, 2, 0)]
    }

    #[test]
    fn oob_entry_is_twelve_bytes_and_round_trips() {
        assert_eq!(std::mem::size_of::<OobEntry>(), OOB_ENTRY_BYTES as usize);
        let e = OobEntry::new(7, (1 << 40) + 5, 3);
        assert_eq!((e.lpn(), e.seq(), e.flags()), (Some(7), (1 << 40) + 5, 3));
        assert_eq!(OobEntry::EMPTY.lpn(), None);
    }

    #[test]
    fn pages_program_in_order_only() {
        let mut n = nand(false);
        assert!(matches!(
            n.program(1, &entries(0, 1), None),
            Err(NandError::OutOfOrder { .. })
        ));
        n.program(0, &entries(0, 1), None).unwrap();
        n.program(1, &entries(2, 3), None).unwrap();
        assert_eq!(n.block(0).valid_units, 4);
        n.check_consistency().unwrap();
    }

    #[test]
    fn full_block_needs_erase_and_erase_needs_no_valid_data() {
        let mut n = nand(false);
        for p in 0..4 {
            n.program(p, &entries(p * 2, p * 2 + 1), None).unwrap();
        }
        // Block 0 is full: the next page number belongs to block 1, so reprogram page 0.
        assert!(matches!(
            n.program(0, &entries(9, 9), None),
            Err(NandError::ProgramWithoutErase { .. })
        ));
        assert!(matches!(
            n.erase(0),
            Err(NandError::EraseValid { valid: 8, .. })
        ));
        for u in 0..8 {
            n.invalidate(u).unwrap();
        }
        assert!(matches!(
            n.invalidate(0),
            Err(NandError::InvalidateInvalid { .. })
        ));
        n.erase(0).unwrap();
        assert_eq!(n.block(0).erase_count, 1);
        n.program(0, &entries(1, 2), None).unwrap();
        n.check_consistency().unwrap();
    }

    #[test]
    fn erase_of_a_live_translation_page_names_it() {
        let mut n = nand(false);
        n.program(0, &entries(1, 2), None).unwrap();
        let translation = [
            OobEntry::new(7, 1, OOB_FLAG_TRANSLATION),
            OobEntry::new(8, 1, OOB_FLAG_TRANSLATION),
        ];
        n.program(1, &translation, None).unwrap();
        for u in 0..2 {
            n.invalidate(u).unwrap();
        }
        assert_eq!(
            n.erase(0),
            Err(NandError::EraseLiveTranslation {
                block: 0,
                page: 1,
                unit: 2
            })
        );
        n.invalidate(2).unwrap();
        n.invalidate(3).unwrap();
        n.erase(0).unwrap();
    }

    #[test]
    fn reads_of_free_pages_are_errors() {
        let n = nand(false);
        assert!(matches!(
            n.check_readable(0),
            Err(NandError::ReadUnwritten { .. })
        ));
    }

    #[test]
    fn payload_follows_copyback_within_a_plane_only() {
        let mut n = nand(true);
        let data: Vec<u64> = (1..=16).collect();
        n.program(0, &entries(0, 1), Some(&data)).unwrap();
        assert_eq!(n.unit_data(1), &data[8..16]);
        // Block 1 is in plane 0 as well (2 blocks per plane); block 2 is in plane 1.
        n.copyback(0, 4).unwrap();
        assert_eq!(n.unit_data(n.unit_addr(4, 0)), &data[..8]);
        assert!(matches!(
            n.copyback(0, 8),
            Err(NandError::CopybackCrossPlane { .. })
        ));
    }
}

#[cfg(test)]
mod rules_tests {
    use super::*;
    use crate::config::Geometry;

    /// One plane of 2 blocks of 8 pages of 512 B, one unit per page.
    fn chip(order: ProgramOrder, nop: u32) -> Nand {
        let g = Geometry {
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 1,
            blocks_per_plane: 2,
            pages_per_block: 8,
            page_bytes: 512,
            oob_bytes: 16,
        };
        Nand::new(Layout::new(&g), 1, 512, false).with_rules(&NandRules {
            program_order: order,
            partial_programs_per_page: nop,
        })
    }

    fn entry(lpn: u32) -> [OobEntry; 1] {
        [OobEntry::new(lpn, 1, 0)]
    }

    #[test]
    fn any_order_chips_program_free_pages_out_of_order_sequential_ones_do_not() {
        let mut any = chip(ProgramOrder::Any, 1);
        any.program(5, &entry(5), None).unwrap();
        any.program(1, &entry(1), None).unwrap();
        assert!(any.is_programmed(5) && any.is_programmed(1) && !any.is_programmed(2));
        assert_eq!(any.block(0).write_ptr, 6);
        any.check_consistency().unwrap();
        assert!(matches!(
            any.check_readable(2),
            Err(NandError::ReadUnwritten { .. })
        ));
        let mut seq = chip(ProgramOrder::Sequential, 1);
        assert!(matches!(
            seq.program(5, &entry(5), None),
            Err(NandError::OutOfOrder { write_ptr: 0, .. })
        ));
    }

    #[test]
    fn a_page_takes_its_data_once_and_at_most_nop_partial_programs() {
        let mut n = chip(ProgramOrder::Any, 3);
        n.program_spare(0, 0x4, 77).unwrap();
        n.program(0, &entry(0), None).unwrap();
        assert!(matches!(
            n.program(0, &entry(9), None),
            Err(NandError::DataProgrammedTwice { page: 0, .. })
        ));
        n.program_spare(0, 0x8, 0).unwrap();
        assert_eq!(n.partial_programs(0), 3);
        let err = n.program_spare(0, 0x1, 0).unwrap_err();
        assert!(
            matches!(err, NandError::PartialProgramLimit { nth: 4, nop: 3, .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("nand.partial_programs_per_page"));
        // Flags of the spare programs survive the data program, the tag is once per erase.
        assert_eq!(n.oob(0).flags(), 0xc);
        assert!(matches!(
            n.program_spare(1, 0, 5)
                .and_then(|_| n.program_spare(1, 0, 6)),
            Err(NandError::SpareTagTwice { .. })
        ));
        // NOP 1: a header in the spare area uses the page's only program.
        let mut one = chip(ProgramOrder::Any, 1);
        one.program_spare(0, 0, 3).unwrap();
        assert!(matches!(
            one.program(0, &entry(0), None),
            Err(NandError::PartialProgramLimit { nth: 2, nop: 1, .. })
        ));
    }

    #[test]
    fn spare_of_an_erased_page_reads_erased_and_a_spare_only_program_leaves_data_free() {
        let mut n = chip(ProgramOrder::Any, 2);
        assert_eq!(n.spare(3).unwrap(), Spare::Erased);
        n.program_spare(3, 0x2, 42).unwrap();
        let Spare::Programmed { entry: e, tag } = n.spare(3).unwrap() else {
            panic!("spare-programmed page reads erased");
        };
        assert_eq!((e.lpn(), e.flags(), tag), (None, 0x2, 42));
        assert!(
            !n.is_programmed(3),
            "a spare-only program leaves the data area free"
        );
        n.check_consistency().unwrap();
        n.program(3, &entry(3), None).unwrap();
        assert!(n.is_programmed(3));
        n.invalidate(3).unwrap();
        n.erase(0).unwrap();
        assert_eq!(n.spare(3).unwrap(), Spare::Erased);
        assert_eq!(n.partial_programs(3), 0);
        // After the erase the page takes a tag and data again.
        n.program_spare(3, 0, 43).unwrap();
        n.program(3, &entry(3), None).unwrap();
    }

    #[test]
    fn sequential_chips_allow_a_spare_program_then_data_at_the_pointer_only() {
        let mut n = chip(ProgramOrder::Sequential, 2);
        n.program_spare(0, 0, 1).unwrap();
        // The spare-programmed page is the last one touched: its data may follow.
        n.program(0, &entry(0), None).unwrap();
        n.program(1, &entry(1), None).unwrap();
        assert!(matches!(
            n.program_spare(0, 1, 0),
            Err(NandError::OutOfOrder { write_ptr: 2, .. })
        ));
    }
}

// Flash image: page records as a power-up scan reads them, and their restore.
impl Nand {
    /// The state byte of page `ppn`: partial programs since the erase (low 4 bits) and 0x10
    /// when its data area is programmed; 0 for an erased page.
    pub fn page_state_byte(&self, ppn: Ppn) -> u8 {
        self.page_state(ppn)
    }

    /// The spare tag word of page `ppn` (0 when none).
    pub fn spare_tag(&self, ppn: Ppn) -> u32 {
        self.spare_tags.as_ref().map_or(0, |t| t[ppn as usize])
    }

    /// Page `ppn` as the flash holds it.
    pub fn page_record(&self, ppn: Ppn) -> super::journal::PageRecord<'_> {
        let upp = self.units_per_page as usize;
        let spp = self.sectors_per_page as usize;
        let p = ppn as usize;
        super::journal::PageRecord {
            state: self.page_state(ppn),
            tag: self.spare_tag(ppn),
            entries: &self.oob[p * upp..(p + 1) * upp],
            versions: self
                .payload
                .as_ref()
                .map_or(&[][..], |store| &store[p * spp..(p + 1) * spp]),
        }
    }

    /// Puts back page `ppn` of a flash image as a scan found it (`state` as
    /// [`Nand::page_state_byte`] gives it; non-zero): its OOB entries, spare tag and data
    /// versions, no unit valid (validity is the FTL's to rebuild). Pages of a block are
    /// restored in order after its erase count; the write pointer follows them.
    pub fn restore_page(
        &mut self,
        ppn: Ppn,
        state: u8,
        tag: u32,
        entries: &[OobEntry],
        versions: &[u64],
    ) -> Result<(), NandError> {
        self.check_ppn(ppn)?;
        if entries.len() != self.units_per_page as usize {
            return Err(NandError::EntryCount {
                got: entries.len(),
                expected: self.units_per_page,
            });
        }
        let block = self.layout.block_of(ppn);
        let page = self.layout.page_in_block(ppn);
        let compact = self.pages.is_none()
            && state == (PAGE_DATA | 1)
            && page == self.blocks[block as usize].write_ptr;
        if !compact {
            self.page_states()[ppn as usize] = state;
        }
        let meta = &mut self.blocks[block as usize];
        meta.write_ptr = meta.write_ptr.max(page + 1);
        let base = (ppn * self.units_per_page) as usize;
        self.oob[base..base + entries.len()].copy_from_slice(entries);
        if tag != 0 {
            let pages = self.layout.pages() as usize;
            self.spare_tags.get_or_insert_with(|| vec![0; pages])[ppn as usize] = tag;
        }
        if let Some(store) = &mut self.payload {
            let spp = self.sectors_per_page as usize;
            let dst = &mut store[ppn as usize * spp..(ppn as usize + 1) * spp];
            if versions.len() == spp {
                dst.copy_from_slice(versions);
            } else {
                dst.fill(0);
            }
        }
        Ok(())
    }

    /// Sets a block's erase count (a flash image's wear, restored at power-up).
    pub fn restore_erase_count(&mut self, block: BlockId, erase_count: u32) {
        if let Some(meta) = self.blocks.get_mut(block as usize) {
            meta.erase_count = erase_count;
        }
    }
}

// Power-loss recovery
impl Nand {
    /// What a power cut leaves of the bookkeeping: real flash has no valid bits, so every
    /// valid bit and every block's valid count is cleared. Everything the chips hold (OOB
    /// entries, payload versions, spare tags, page states, write pointers, erase counts) is
    /// kept. An FTL rebuilding its state then marks the copies it keeps with
    /// [`Nand::mark_valid`].
    pub fn clear_validity(&mut self) {
        self.valid.fill(0);
        for b in &mut self.blocks {
            b.valid_units = 0;
        }
    }

    /// Recovery's only way to set validity: marks unit slot `unit` valid (the copy an FTL's
    /// scan decided is the current one). An error if the slot is outside the device, its page
    /// holds no data, its OOB entry names no logical unit, or it is valid already.
    pub fn mark_valid(&mut self, unit: UnitAddr) -> Result<(), NandError> {
        if unit as usize >= self.oob.len() {
            return Err(self.unit_out_of_range(unit));
        }
        let reason = if !self.is_programmed(self.ppn_of_unit(unit)) {
            Some("its page holds no data")
        } else if self.oob[unit as usize].is_empty() {
            Some("its OOB entry names no logical unit")
        } else if self.is_valid(unit) {
            Some("it is valid already")
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(NandError::MarkValid { unit, reason });
        }
        self.set_valid(unit, true);
        let block = self.layout.block_of(self.ppn_of_unit(unit));
        self.blocks[block as usize].valid_units += 1;
        Ok(())
    }

    /// The newest data version any page holds (0 without payloads): a recovered simulation
    /// numbers its next writes past it.
    pub fn max_payload_version(&self) -> u64 {
        self.payload
            .as_ref()
            .map_or(0, |p| p.iter().copied().max().unwrap_or(0))
    }

    /// Whether any unit slot is valid (a freshly cut image has none).
    pub fn any_valid(&self) -> bool {
        self.valid.iter().any(|&w| w != 0)
    }
}

#[cfg(test)]
mod recovery_tests {
    use super::*;
    use crate::config::Geometry;

    #[test]
    fn a_power_cut_clears_validity_only_and_recovery_marks_it_back() {
        let g = Geometry {
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 1,
            blocks_per_plane: 2,
            pages_per_block: 4,
            page_bytes: 8192,
            oob_bytes: 64,
        };
        let mut n = Nand::new(Layout::new(&g), 2, 512, true);
        n.program(
            0,
            &[OobEntry::new(3, 7, 0), OobEntry::EMPTY],
            Some(&[9; 16]),
        )
        .unwrap();
        n.program(1, &[OobEntry::new(4, 8, 0), OobEntry::new(5, 9, 0)], None)
            .unwrap();
        n.invalidate(2).unwrap();
        let before = n.clone();
        n.clear_validity();
        assert!(!n.any_valid());
        assert_eq!(n.block(0).valid_units, 0);
        assert_eq!(n.block(0).write_ptr, 2);
        assert_eq!(n.oob(2), before.oob(2));
        assert_eq!(n.unit_data(0), &[9; 8]);
        assert_eq!(n.max_payload_version(), 9);
        n.mark_valid(0).unwrap();
        n.mark_valid(3).unwrap();
        assert_eq!(n.block(0).valid_units, 2);
        n.check_consistency().unwrap();
        let twice = n.mark_valid(0).unwrap_err().to_string();
        assert!(twice.contains("valid already"), "{twice}");
        let padding = n.mark_valid(1).unwrap_err().to_string();
        assert!(padding.contains("names no logical unit"), "{padding}");
        let free = n.mark_valid(4).unwrap_err().to_string();
        assert!(free.contains("holds no data"), "{free}");
        assert!(matches!(
            n.mark_valid(1 << 20),
            Err(NandError::OutOfRange { .. })
        ));
    }
}
