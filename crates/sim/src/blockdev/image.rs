//! The flash image: a served device's flash in one sparse file, so it survives the server.
//!
//! ```text
//! 0                superblock: magic, format version, then JSON (the full configuration as
//!                  TOML, the geometry it implies, the next data version, clean shutdown)
//! 64 KiB           block table: per block its erase count and a write-pointer hint (u32 each)
//! records_offset   page records: per page a CRC-32, the state byte (partial programs, data
//!                  programmed), the spare tag, the OOB entries (12 bytes per unit slot) and
//!                  the data version of every sector: what a power-up scan reads
//! data_offset      page data: `page_bytes` per page, at the page's physical address
//! ```
//!
//! An erased block is a hole (`fallocate(PUNCH_HOLE)`), so a 1 TiB device costs the disk its
//! written blocks take; a hole reads as zeros, which is an erased record (state 0). A record
//! whose CRC does not match (torn by a power cut in the middle of its write) reads as erased
//! and is counted. The block table's write pointer is only a hint of how far to read a
//! block's records (it is written with the records and never smaller than the pages the
//! records say are programmed, except for a record written after the last sync, which a power
//! cut may lose anyway).
//!
//! Durability: [`FlashImage::sync`] (`fdatasync`) makes everything written so far durable;
//! the served device calls it before it acknowledges a flush or a FUA write.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, ExperimentConfig};
use crate::nand::{BlockId, Layout, Nand, OobEntry, PageRecord, Ppn};
use crate::SimError;

const MAGIC: &[u8; 16] = b"FLASHLAB-IMAGE\0\0";
/// Version of the layout above; an image of another version is refused.
pub const IMAGE_FORMAT: u32 = 1;
const SUPERBLOCK_BYTES: u64 = 64 * 1024;
const RECORD_HEADER: usize = 12;

/// The superblock's JSON part.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Superblock {
    pub format: u32,
    /// flashlab's version that wrote it.
    pub written_by: String,
    /// The whole configuration (device, FTL and its settings) as TOML.
    pub config_toml: String,
    pub pages: u64,
    pub page_bytes: u32,
    pub units_per_page: u32,
    pub sectors_per_page: u32,
    pub record_bytes: u64,
    /// Data versions below this were handed out (a restarted server continues above it).
    pub next_version: u64,
    /// The server closed the image after a final sync.
    pub clean_shutdown: bool,
}

/// What reading back the page records found.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct RestoreStats {
    pub blocks_written: u64,
    pub pages_programmed: u64,
    /// Records whose CRC did not match (read as erased).
    pub torn_records: u64,
    pub max_version: u64,
}

/// An open flash image.
#[derive(Debug)]
pub struct FlashImage {
    file: File,
    path: PathBuf,
    layout: Layout,
    units_per_page: usize,
    sectors_per_page: usize,
    record_bytes: u64,
    records_offset: u64,
    data_offset: u64,
    scratch: Vec<u8>,
    /// Per block, one past the highest page with a record since its erase (the table's hint).
    hints: Vec<u32>,
    pub superblock: Superblock,
}

fn io_error(path: &Path, what: &str, e: std::io::Error) -> SimError {
    SimError::Input {
        location: path.display().to_string(),
        message: format!("{what}: {e}"),
    }
}

fn format_error(path: &Path, message: String) -> SimError {
    SimError::Input {
        location: path.display().to_string(),
        message,
    }
}

fn round_up(x: u64, to: u64) -> u64 {
    x.div_ceil(to) * to
}

impl FlashImage {
    /// Bytes of one page record.
    fn record_bytes(units_per_page: usize, sectors_per_page: usize) -> u64 {
        round_up(
            (RECORD_HEADER + units_per_page * 12 + sectors_per_page * 8) as u64,
            8,
        )
    }

    fn offsets(layout: &Layout, record_bytes: u64) -> (u64, u64) {
        let table_end = SUPERBLOCK_BYTES + u64::from(layout.blocks()) * 8;
        let records = round_up(table_end, 4096);
        let data = round_up(records + u64::from(layout.pages()) * record_bytes, 4096);
        (records, data)
    }

    /// Creates a new image for `config`'s device at `path` (which must not exist or be
    /// empty: an image is never overwritten by accident).
    pub fn create(path: &Path, config: &ExperimentConfig, nand: &Nand) -> Result<Self, SimError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| io_error(path, "cannot create the flash image", e))?;
        let len = file
            .metadata()
            .map_err(|e| io_error(path, "cannot stat the flash image", e))?
            .len();
        if len != 0 {
            return Err(format_error(
                path,
                format!("is not empty ({len} bytes): refusing to overwrite it as a new image"),
            ));
        }
        let layout = *nand.layout();
        let upp = nand.units_per_page() as usize;
        let spp = nand.sectors_per_page() as usize;
        let record_bytes = Self::record_bytes(upp, spp);
        let (_, data_offset) = Self::offsets(&layout, record_bytes);
        let toml = toml::to_string(&config.to_table()).map_err(|e| {
            format_error(path, format!("cannot write the configuration as TOML: {e}"))
        })?;
        let superblock = Superblock {
            format: IMAGE_FORMAT,
            written_by: env!("CARGO_PKG_VERSION").to_string(),
            config_toml: toml,
            pages: u64::from(layout.pages()),
            page_bytes: layout.page_bytes,
            units_per_page: upp as u32,
            sectors_per_page: spp as u32,
            record_bytes,
            next_version: 1,
            clean_shutdown: false,
        };
        let total = data_offset + u64::from(layout.pages()) * u64::from(layout.page_bytes);
        file.set_len(total)
            .map_err(|e| io_error(path, "cannot size the (sparse) flash image", e))?;
        let mut image = Self::assemble(file, path, layout, superblock);
        image.write_superblock()?;
        image.sync()?;
        Ok(image)
    }

    /// Opens an existing image: reads and checks its superblock and the configuration it
    /// holds.
    pub fn open(path: &Path) -> Result<(Self, ExperimentConfig), SimError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| io_error(path, "cannot open the flash image", e))?;
        let mut head = vec![0; SUPERBLOCK_BYTES as usize];
        let n = file
            .read_at(&mut head, 0)
            .map_err(|e| io_error(path, "cannot read the superblock", e))?;
        if n < 28 || &head[..16] != MAGIC {
            return Err(format_error(
                path,
                "is not a flashlab flash image (no superblock magic)".into(),
            ));
        }
        let format = u32::from_le_bytes(head[16..20].try_into().expect("4 bytes"));
        if format != IMAGE_FORMAT {
            return Err(format_error(
                path,
                format!("has image format {format}; this flashlab reads format {IMAGE_FORMAT}"),
            ));
        }
        let json_len = u32::from_le_bytes(head[20..24].try_into().expect("4 bytes")) as usize;
        let crc = u32::from_le_bytes(head[24..28].try_into().expect("4 bytes"));
        let json = head.get(28..28 + json_len).ok_or_else(|| {
            format_error(
                path,
                format!("superblock length {json_len} is out of range"),
            )
        })?;
        if crc32fast::hash(json) != crc {
            return Err(format_error(
                path,
                "superblock checksum mismatch (damaged image)".into(),
            ));
        }
        let superblock: Superblock = serde_json::from_slice(json)
            .map_err(|e| format_error(path, format!("superblock: {e}")))?;
        let table: toml::Table = toml::from_str(&superblock.config_toml)
            .map_err(|e| format_error(path, format!("superblock configuration: {e}")))?;
        let config = ExperimentConfig::from_full_table(table).map_err(|e: ConfigError| {
            format_error(path, format!("superblock configuration: {e}"))
        })?;
        let layout = Layout::new(&config.geometry);
        let (upp, spp) = (
            superblock.units_per_page as usize,
            superblock.sectors_per_page as usize,
        );
        let record_bytes = Self::record_bytes(upp, spp);
        if record_bytes != superblock.record_bytes
            || superblock.pages != u64::from(layout.pages())
            || superblock.page_bytes != layout.page_bytes
        {
            return Err(format_error(
                path,
                "superblock geometry does not match its configuration (damaged image)".into(),
            ));
        }
        Ok((Self::assemble(file, path, layout, superblock), config))
    }

    /// The open image of `file`, laid out for `layout` and the superblock's record size.
    fn assemble(file: File, path: &Path, layout: Layout, superblock: Superblock) -> Self {
        let (records_offset, data_offset) = Self::offsets(&layout, superblock.record_bytes);
        FlashImage {
            file,
            path: path.to_path_buf(),
            layout,
            units_per_page: superblock.units_per_page as usize,
            sectors_per_page: superblock.sectors_per_page as usize,
            record_bytes: superblock.record_bytes,
            records_offset,
            data_offset,
            scratch: Vec::new(),
            hints: vec![0; layout.blocks() as usize],
            superblock,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the superblock (in place; the JSON must fit its 64 KiB).
    pub fn write_superblock(&mut self) -> Result<(), SimError> {
        let json = serde_json::to_vec(&self.superblock).expect("superblock serializes");
        if json.len() + 28 > SUPERBLOCK_BYTES as usize {
            return Err(format_error(
                &self.path,
                format!(
                    "configuration too large for the superblock ({} bytes)",
                    json.len()
                ),
            ));
        }
        let mut head = Vec::with_capacity(28 + json.len());
        head.extend_from_slice(MAGIC);
        head.extend_from_slice(&IMAGE_FORMAT.to_le_bytes());
        head.extend_from_slice(&(json.len() as u32).to_le_bytes());
        head.extend_from_slice(&crc32fast::hash(&json).to_le_bytes());
        head.extend_from_slice(&json);
        self.write_at(&head, 0, "the superblock")
    }

    fn write_at(&self, bytes: &[u8], offset: u64, what: &str) -> Result<(), SimError> {
        self.file
            .write_all_at(bytes, offset)
            .map_err(|e| io_error(&self.path, &format!("cannot write {what}"), e))
    }

    /// Makes everything written so far durable.
    pub fn sync(&mut self) -> Result<(), SimError> {
        self.file
            .sync_data()
            .map_err(|e| io_error(&self.path, "cannot sync the flash image", e))
    }

    fn record_offset(&self, ppn: Ppn) -> u64 {
        self.records_offset + u64::from(ppn) * self.record_bytes
    }

    /// Byte offset of page `ppn`'s data.
    pub fn data_offset(&self, ppn: Ppn) -> u64 {
        self.data_offset + u64::from(ppn) * u64::from(self.layout.page_bytes)
    }

    /// Writes page `ppn`'s record and, when given, its data (`page_bytes`).
    pub fn write_page(
        &mut self,
        ppn: Ppn,
        record: &PageRecord<'_>,
        data: Option<&[u8]>,
    ) -> Result<(), SimError> {
        if let Some(data) = data {
            self.write_at(data, self.data_offset(ppn), "page data")?;
        }
        let mut buf = std::mem::take(&mut self.scratch);
        encode_record(record, self.record_bytes as usize, &mut buf);
        let result = self.write_at(&buf, self.record_offset(ppn), "a page record");
        self.scratch = buf;
        result?;
        let block = self.layout.block_of(ppn);
        let page = self.layout.page_in_block(ppn) + 1;
        if page <= self.hints[block as usize] {
            return Ok(());
        }
        self.hints[block as usize] = page;
        self.write_at(
            &page.to_le_bytes(),
            SUPERBLOCK_BYTES + u64::from(block) * 8 + 4,
            "the block table",
        )
    }

    /// Erases a block: its records and data become a hole, its erase count is stored.
    pub fn erase_block(&mut self, block: BlockId, erase_count: u32) -> Result<(), SimError> {
        let ppb = u64::from(self.layout.pages_per_block);
        let first = u64::from(self.layout.ppn(block, 0));
        self.hints[block as usize] = 0;
        let mut entry = [0u8; 8];
        entry[..4].copy_from_slice(&erase_count.to_le_bytes());
        self.write_at(
            &entry,
            SUPERBLOCK_BYTES + u64::from(block) * 8,
            "the block table",
        )?;
        let records = (
            self.records_offset + first * self.record_bytes,
            ppb * self.record_bytes,
        );
        let data = (
            self.data_offset + first * u64::from(self.layout.page_bytes),
            ppb * u64::from(self.layout.page_bytes),
        );
        for (offset, len) in [records, data] {
            self.punch(offset, len)?;
        }
        Ok(())
    }

    /// Frees `[offset, offset + len)` (reads as zeros after). Where the file system cannot
    /// punch holes, writes zeros.
    fn punch(&self, offset: u64, len: u64) -> Result<(), SimError> {
        use nix::fcntl::{fallocate, FallocateFlags};
        let flags = FallocateFlags::FALLOC_FL_PUNCH_HOLE | FallocateFlags::FALLOC_FL_KEEP_SIZE;
        match fallocate(&self.file, flags, offset as i64, len as i64) {
            Ok(()) => Ok(()),
            Err(nix::errno::Errno::EOPNOTSUPP) => {
                let zeros = vec![0u8; len.min(1 << 20) as usize];
                let mut at = 0;
                while at < len {
                    let n = (len - at).min(zeros.len() as u64) as usize;
                    self.write_at(&zeros[..n], offset + at, "an erased block")?;
                    at += n as u64;
                }
                Ok(())
            }
            Err(e) => Err(io_error(
                &self.path,
                "cannot erase a block (punch a hole)",
                e.into(),
            )),
        }
    }

    /// Reads `out.len()` bytes of page data from byte `offset` of page `ppn`.
    pub fn read_data(&self, ppn: Ppn, offset: u32, out: &mut [u8]) -> Result<(), SimError> {
        self.file
            .read_exact_at(out, self.data_offset(ppn) + u64::from(offset))
            .map_err(|e| io_error(&self.path, "cannot read page data", e))
    }

    /// Page `ppn`'s stored data versions (zeros for an erased or torn record).
    pub fn read_versions(&mut self, ppn: Ppn, out: &mut Vec<u64>) -> Result<(), SimError> {
        let mut entries = Vec::new();
        self.read_record(ppn, &mut entries, out).map(|_| ())
    }

    /// Page `ppn`'s stored OOB entries and data versions; false (and empty entries, zero
    /// versions) for an erased or torn record.
    pub fn read_record(
        &mut self,
        ppn: Ppn,
        entries: &mut Vec<OobEntry>,
        versions: &mut Vec<u64>,
    ) -> Result<bool, SimError> {
        let mut buf = std::mem::take(&mut self.scratch);
        buf.resize(self.record_bytes as usize, 0);
        let result = self
            .file
            .read_exact_at(&mut buf, self.record_offset(ppn))
            .map_err(|e| io_error(&self.path, "cannot read a page record", e));
        entries.clear();
        versions.clear();
        let intact = result.is_ok() && buf[4] != 0 && record_intact(&buf);
        if intact {
            entries.resize(self.units_per_page, OobEntry::EMPTY);
            decode_entries(&buf, entries);
            let at = RECORD_HEADER + self.units_per_page * 12;
            versions.extend(
                buf[at..at + self.sectors_per_page * 8]
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))),
            );
        } else {
            versions.resize(self.sectors_per_page, 0);
        }
        self.scratch = buf;
        result.map(|()| intact)
    }

    /// Pages of `block` that may hold records (one past the highest written since its erase).
    pub fn written_pages(&self, block: BlockId) -> u32 {
        self.hints[block as usize]
    }

    /// Puts every programmed page and every erase count back into `nand` (a fresh device of
    /// the same geometry, payloads on), as a power-up scan finds them.
    pub fn restore(&mut self, nand: &mut Nand) -> Result<RestoreStats, SimError> {
        let blocks = self.layout.blocks();
        let mut table = vec![0u8; blocks as usize * 8];
        self.file
            .read_exact_at(&mut table, SUPERBLOCK_BYTES)
            .map_err(|e| io_error(&self.path, "cannot read the block table", e))?;
        let ppb = self.layout.pages_per_block;
        let rb = self.record_bytes as usize;
        let mut buf = vec![0u8; ppb as usize * rb];
        let mut entries = vec![OobEntry::EMPTY; self.units_per_page];
        let mut versions = vec![0u64; self.sectors_per_page];
        let mut stats = RestoreStats::default();
        for block in 0..blocks {
            let at = block as usize * 8;
            let erase_count = u32::from_le_bytes(table[at..at + 4].try_into().expect("4"));
            let hint = u32::from_le_bytes(table[at + 4..at + 8].try_into().expect("4"));
            nand.restore_erase_count(block, erase_count);
            let pages = hint.min(ppb) as usize;
            self.hints[block as usize] = pages as u32;
            if pages == 0 {
                continue;
            }
            stats.blocks_written += 1;
            let first = self.layout.ppn(block, 0);
            self.file
                .read_exact_at(&mut buf[..pages * rb], self.record_offset(first))
                .map_err(|e| io_error(&self.path, "cannot read page records", e))?;
            for page in 0..pages {
                let rec = &buf[page * rb..(page + 1) * rb];
                if rec[4] == 0 {
                    continue;
                }
                if !record_intact(rec) {
                    stats.torn_records += 1;
                    continue;
                }
                let tag = u32::from_le_bytes(rec[8..12].try_into().expect("4"));
                decode_entries(rec, &mut entries);
                let v_at = RECORD_HEADER + self.units_per_page * 12;
                for (i, v) in versions.iter_mut().enumerate() {
                    let o = v_at + i * 8;
                    *v = u64::from_le_bytes(rec[o..o + 8].try_into().expect("8"));
                    stats.max_version = stats.max_version.max(*v);
                }
                nand.restore_page(first + page as u32, rec[4], tag, &entries, &versions)
                    .map_err(|e| {
                        format_error(&self.path, format!("block {block} page {page}: {e}"))
                    })?;
                stats.pages_programmed += 1;
            }
        }
        Ok(stats)
    }
}

/// Whether a record's CRC matches (an all-zero record, a hole, is erased and intact).
fn record_intact(rec: &[u8]) -> bool {
    let crc = u32::from_le_bytes(rec[0..4].try_into().expect("4 bytes"));
    crc32fast::hash(&rec[4..]) == crc
}

fn decode_entries(rec: &[u8], entries: &mut [OobEntry]) {
    for (i, e) in entries.iter_mut().enumerate() {
        let o = RECORD_HEADER + i * 12;
        *e = OobEntry::from_bytes(rec[o..o + 12].try_into().expect("12 bytes"));
    }
}

fn encode_record(record: &PageRecord<'_>, record_bytes: usize, buf: &mut Vec<u8>) {
    buf.clear();
    buf.resize(record_bytes, 0);
    buf[4] = record.state;
    buf[8..12].copy_from_slice(&record.tag.to_le_bytes());
    for (i, e) in record.entries.iter().enumerate() {
        let o = RECORD_HEADER + i * 12;
        buf[o..o + 12].copy_from_slice(&e.to_bytes());
    }
    let v_at = RECORD_HEADER + record.entries.len() * 12;
    for (i, v) in record.versions.iter().enumerate() {
        let o = v_at + i * 8;
        buf[o..o + 8].copy_from_slice(&v.to_le_bytes());
    }
    let crc = crc32fast::hash(&buf[4..]);
    buf[0..4].copy_from_slice(&crc.to_le_bytes());
}
