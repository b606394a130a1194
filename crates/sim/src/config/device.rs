//! Device configuration: NAND geometry, NAND and bus timing, host link (bandwidth, command and
//! completion messages, whether data crosses it) and FTL CPU.

use serde::{Deserialize, Serialize};

use super::ConfigError;
use crate::settings;

settings! {
    /// Shape of the NAND array: channels x chips (ways) x dies x planes x blocks x pages.
    pub struct Geometry in "geometry" {
        /// Independent channels (buses) of the flash controller.
        channels: u32 = 8, unit "", range 1 ..= 256;
        /// Chips (ways) sharing each channel bus.
        chips_per_channel: u32 = 4, unit "", range 1 ..= 64;
        /// Dies per chip; each die runs one cell operation at a time.
        dies_per_chip: u32 = 2, unit "", range 1 ..= 16;
        /// Planes per die (multi-plane operations run one page per plane at once).
        planes_per_die: u32 = 2, unit "", range 1 ..= 16;
        /// Erase blocks per plane.
        blocks_per_plane: u32 = 64, unit "", range 1 ..= 1_048_576;
        /// Pages per erase block, programmed strictly in order.
        pages_per_block: u32 = 256, unit "", range 1 ..= 4096;
        /// Data bytes per page (a multiple of host.sector_bytes).
        page_bytes: u32 = 8192, unit "bytes", range 512 ..= 65536;
        /// Spare (out-of-band) bytes per page.
        oob_bytes: u32 = 448, unit "bytes", range 0 ..= 16384;
    }
}

/// Order in which a die picks its next command among those queued on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueuePolicy {
    /// First issued, first served.
    Fifo,
    /// Reads before programs and erases (never past an earlier command on the same block).
    ReadFirst,
    /// Earliest deadline first (never past an earlier command on the same block).
    Edf,
}

settings! {
    /// NAND cell and bus timing, and the per-die scheduling policy.
    pub struct Timing in "timing" {
        /// Cell read time tR (array to page register).
        read_latency_ns: u64 = 50_000, unit "ns", range 1 ..= 1_000_000_000;
        /// Cell program time tPROG (page register to array).
        program_latency_ns: u64 = 600_000, unit "ns", range 1 ..= 1_000_000_000;
        /// Block erase time tBERS.
        erase_latency_ns: u64 = 3_000_000, unit "ns", range 1 ..= 10_000_000_000;
        /// Cell time of an OOB-only (spare area) read.
        read_oob_latency_ns: u64 = 50_000, unit "ns", range 1 ..= 1_000_000_000;
        /// Cell time of an OOB-only (spare area) program.
        program_oob_latency_ns: u64 = 600_000, unit "ns", range 1 ..= 1_000_000_000;
        /// Channel bus bandwidth (MB = 10^6 bytes).
        bus_mb_per_s: f64 = 800.0, unit "MB/s", range 0.001 ..= 1_000_000.0;
        /// Bytes moved per bus grant (page-buffer chunk); 0 moves a whole transfer per grant.
        page_buffer_bytes: u32 = 0, unit "bytes", range 0 ..= 65536;
        /// Cache read/program: a die overlaps the next cell operation with the current data transfer.
        cache_ops: bool = false, unit "";
        /// Order of commands queued on a die.
        die_queue_policy: QueuePolicy = QueuePolicy::Fifo, unit "", choices "fifo | read-first | edf";
    }
}

settings! {
    /// Host interface: link bandwidth, the command and completion messages of a request, and
    /// whether data crosses the link.
    pub struct HostConfig in "host" {
        /// Link bandwidth in each direction (MB = 10^6 bytes).
        link_mb_per_s: f64 = 3_940.0, unit "MB/s", range 0.000001 ..= 1_000_000.0;
        /// Link time of one command (submission and completion protocol overhead), on top of that of host.command_bytes.
        command_overhead_ns: u64 = 0, unit "ns", range 0 ..= 1_000_000_000;
        /// Command message each request (read, write, trim, flush) sends down the link before the device sees it.
        command_bytes: u32 = 0, unit "bytes", range 0 ..= 65536;
        /// Status message sent up the link when a request finished; the host sees it complete once that crossed (0: none).
        completion_bytes: u32 = 0, unit "bytes", range 0 ..= 65536;
        /// Host sector (logical block) size.
        sector_bytes: u32 = 512, unit "bytes", choices "512 | 4096";
        /// Reads and writes use separate link directions (PCIe); false shares one (UART, SATA).
        full_duplex: bool = true, unit "";
        /// Read and write data cross the link; false: only command and completion messages do (data made and used on the device).
        data_over_link: bool = true, unit "";
    }
}

/// Order in which the pages of an erased block may be programmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProgramOrder {
    /// Page by page from page 0 (MLC and most large-block NAND).
    Sequential,
    /// Any free page, in any order (small-block SLC NAND).
    Any,
}

settings! {
    /// NAND programming rules of the chip's data sheet.
    pub struct NandRules in "nand" {
        /// Order in which the pages of an erased block may be programmed.
        program_order: ProgramOrder = ProgramOrder::Sequential, unit "", choices "sequential | any";
        /// NOP: partial programs one page accepts between erases, spare-area-only programs counted (the data-sheet "number of partial programs").
        partial_programs_per_page: u32 = 1, unit "programs", range 1 ..= 15;
    }
}

settings! {
    /// The embedded CPU that runs the FTL.
    pub struct CpuConfig in "cpu" {
        /// Cores running FTL handlers in parallel (their effects still commit in order).
        cores: u32 = 1, unit "", range 1 ..= 256;
    }
}

/// A whole simulated SSD: geometry, NAND rules, timing, host link and FTL CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct DeviceConfig {
    pub geometry: Geometry,
    pub nand: NandRules,
    pub timing: Timing,
    pub host: HostConfig,
    pub cpu: CpuConfig,
}

impl DeviceConfig {
    /// Documentation of every device field, with the values of `self`.
    pub fn field_docs(&self) -> Vec<super::FieldDoc> {
        let mut docs = self.geometry.field_docs();
        docs.extend(self.nand.field_docs());
        docs.extend(self.timing.field_docs());
        docs.extend(self.host.field_docs());
        docs.extend(self.cpu.field_docs());
        docs
    }

    /// Checks ranges and the rules that tie fields together.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.geometry.check_ranges()?;
        self.nand.check_ranges()?;
        self.timing.check_ranges()?;
        self.host.check_ranges()?;
        self.cpu.check_ranges()?;
        let sector = self.host.sector_bytes;
        if sector != 512 && sector != 4096 {
            return Err(ConfigError::invalid(
                "host.sector_bytes",
                sector,
                "not a supported sector size",
                "512 | 4096",
            ));
        }
        let g = &self.geometry;
        if g.page_bytes % sector != 0 {
            return Err(ConfigError::invalid(
                "geometry.page_bytes",
                g.page_bytes,
                format!("must be a multiple of host.sector_bytes ({sector})"),
                format!("multiples of {sector} in 512 ..= 65536"),
            ));
        }
        let pages = g.total_pages();
        if pages > u64::from(u32::MAX) {
            return Err(ConfigError::invalid(
                "geometry.blocks_per_plane",
                g.blocks_per_plane,
                format!("the device would have {pages} pages; flashlab addresses at most 2^32 - 1"),
                "channels x chips x dies x planes x blocks x pages < 2^32",
            ));
        }
        Ok(())
    }
}

impl Geometry {
    /// Dies in the whole device.
    pub fn total_dies(&self) -> u32 {
        self.channels * self.chips_per_channel * self.dies_per_chip
    }
    /// Dies sharing one channel bus.
    pub fn dies_per_channel(&self) -> u32 {
        self.chips_per_channel * self.dies_per_chip
    }
    /// Planes in the whole device.
    pub fn total_planes(&self) -> u32 {
        self.total_dies() * self.planes_per_die
    }
    /// Blocks in the whole device.
    pub fn total_blocks(&self) -> u64 {
        u64::from(self.total_planes()) * u64::from(self.blocks_per_plane)
    }
    /// Pages in the whole device.
    pub fn total_pages(&self) -> u64 {
        self.total_blocks() * u64::from(self.pages_per_block)
    }
    /// Raw data capacity (page data areas only).
    pub fn raw_bytes(&self) -> u64 {
        self.total_pages() * u64::from(self.page_bytes)
    }
}

impl Timing {
    /// Bus time to move `bytes` over one channel.
    pub fn bus_ns(&self, bytes: u64) -> u64 {
        transfer_ns(bytes, self.bus_mb_per_s)
    }
}

impl HostConfig {
    /// Link time to move `bytes` in one direction.
    pub fn link_ns(&self, bytes: u64) -> u64 {
        transfer_ns(bytes, self.link_mb_per_s)
    }
}

/// Nanoseconds to move `bytes` at `mb_per_s` (MB = 10^6 bytes), rounded to the nearest ns.
pub fn transfer_ns(bytes: u64, mb_per_s: f64) -> u64 {
    ((bytes as f64) * 1_000.0 / mb_per_s).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfer_time_uses_decimal_megabytes() {
        // 8 KiB at 800 MB/s: 8192 B / 800e6 B/s = 10.24 us.
        assert_eq!(transfer_ns(8192, 800.0), 10_240);
    }

    #[test]
    fn out_of_range_names_the_field() {
        let mut d = DeviceConfig::default();
        d.geometry.channels = 0;
        let err = d.validate().unwrap_err().to_string();
        assert!(err.contains("geometry.channels"), "{err}");
        assert!(err.contains("1 ..= 256"), "{err}");
    }

    #[test]
    fn link_message_sizes_are_checked() {
        let mut d = DeviceConfig::default();
        d.host.command_bytes = 65_537;
        let err = d.validate().unwrap_err().to_string();
        assert!(err.contains("host.command_bytes"), "{err}");
        assert!(err.contains("0 ..= 65536"), "{err}");
        let mut d = DeviceConfig::default();
        d.host.completion_bytes = 1 << 20;
        let err = d.validate().unwrap_err().to_string();
        assert!(err.contains("host.completion_bytes"), "{err}");
    }

    #[test]
    fn nand_rules_are_checked_with_the_field_and_range_named() {
        let mut d = DeviceConfig::default();
        d.nand.partial_programs_per_page = 0;
        let err = d.validate().unwrap_err().to_string();
        assert!(err.contains("nand.partial_programs_per_page"), "{err}");
        assert!(err.contains("1 ..= 15"), "{err}");
        let err = crate::config::ExperimentConfig::with_sets(
            "default",
            &["nand.program_order=\"random\""],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("nand.program_order = random: unknown choice")
                && err.contains("(allowed: sequential | any)"),
            "{err}"
        );
    }

    #[test]
    fn page_must_hold_whole_sectors() {
        let mut d = DeviceConfig::default();
        d.host.sector_bytes = 4096;
        d.geometry.page_bytes = 2048;
        let err = d.validate().unwrap_err().to_string();
        assert!(err.contains("geometry.page_bytes"), "{err}");
    }
}
