//! Device presets from the seed papers, each documented with the table it comes from.
//!
//! A preset describes hardware only: a complete [`DeviceConfig`]. Each FTL owns its settings
//! and defaults; a preset may add [`FtlSuggestion`]s, settings its paper fixes (e.g. the
//! over-provisioning of `fmmu-16ch`) or its device needs (a mapping unit no larger than its
//! pages), applied only when the run uses one of the FTLs they name and only to keys the user
//! did not set. Values a paper does not give are marked *assumed* in the preset's `source`
//! text; every field can be overridden with `--set` or a TOML file.

use super::{
    CpuConfig, DeviceConfig, Geometry, HostConfig, NandRules, ProgramOrder, QueuePolicy, Timing,
};

/// A named device with its provenance.
#[derive(Debug, Clone)]
pub struct Preset {
    /// Name accepted by `--device`.
    pub name: &'static str,
    /// One-line summary.
    pub summary: &'static str,
    /// Where each value comes from (paper, table, section) and what was assumed.
    pub source: &'static str,
    /// The device.
    pub device: DeviceConfig,
    /// FTL settings for this device, each applied only when its FTL is chosen.
    pub ftl_suggestions: &'static [FtlSuggestion],
    /// Operation times measured on the hardware per chip set, which the real-time analysis
    /// (`flashlab admit`, `run.admission`) uses instead of timing the device's model.
    pub measured_set_times: Option<MeasuredSetTimes>,
}

/// Times measured on a board "on every flash chip" of a set (part-ftl.txt Table II's
/// definitions, Table IV's values): a page read, write or block erase done at once on every
/// chip of the set. Used as measured only while the run's timing and dies are the preset's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeasuredSetTimes {
    /// A partitioned FTL's read set F_r: a page read on every read chip (t_r).
    pub read_set_read_ns: u64,
    /// Its write set F_w (one chip per channel): a page read on every write chip (t'_r).
    pub write_set_read_ns: u64,
    /// A page write on every write chip (t_w).
    pub write_set_write_ns: u64,
    /// A block erase on every write chip (t_e).
    pub write_set_erase_ns: u64,
    /// An unpartitioned FTL, every chip: a page read.
    pub all_chips_read_ns: u64,
    /// A page write on every chip.
    pub all_chips_write_ns: u64,
    /// A block erase on every chip.
    pub all_chips_erase_ns: u64,
}

/// `[ftl]` settings a preset suggests for some FTLs.
#[derive(Debug, Clone, Copy)]
pub struct FtlSuggestion {
    /// The FTLs (registry names) the settings apply to.
    pub ftls: &'static [&'static str],
    /// `(key, TOML value)` pairs for the `[ftl]` table.
    pub settings: &'static [(&'static str, &'static str)],
    /// Why: the paper's setting, or what the device needs.
    pub reason: &'static str,
}

/// The page-mapping FTLs, whose mapping unit must fit a page.
const PAGE_MAPPED: &[&str] = &["pagemap", "mt-ftl", "st-ftl", "dftl", "cdftl", "fmmu"];

impl Preset {
    /// The `(key, value)` settings this preset suggests for FTL `ftl`.
    pub fn settings_for<'p>(
        &'p self,
        ftl: &'p str,
    ) -> impl Iterator<Item = (&'static str, &'static str)> + 'p {
        self.ftl_suggestions
            .iter()
            .filter(move |s| s.ftls.contains(&ftl))
            .flat_map(|s| s.settings.iter().copied())
    }
}

/// Names of all presets, in the order `flashlab presets` lists them.
pub const PRESETS: &[&str] = &[
    "default",
    "cosmos",
    "cosmos-table-iv",
    "fmmu-16ch",
    "mt-board",
    "nftl-samsung",
    "nftl-toshiba",
    "kast-slc",
    "kast-mlc",
];

/// All preset names, comma separated (for error messages).
pub fn preset_names() -> String {
    PRESETS.join(", ")
}

/// Looks a preset up by name.
pub fn preset(name: &str) -> Option<Preset> {
    Some(match name {
        "default" => default_preset(),
        "cosmos" => cosmos(),
        "cosmos-table-iv" => cosmos_table_iv(),
        "fmmu-16ch" => fmmu_16ch(),
        "mt-board" => mt_board(),
        "nftl-samsung" => nftl(NftlChip::Samsung),
        "nftl-toshiba" => nftl(NftlChip::Toshiba),
        "kast-slc" => kast_slc(),
        "kast-mlc" => kast_mlc(),
        _ => return None,
    })
}

fn default_preset() -> Preset {
    Preset {
        name: "default",
        summary: "generic 16 GiB MLC SSD: 8 ch x 4 chips x 2 dies x 2 planes, 8 KiB pages, PCIe 3.0 x4",
        source: "Not from a paper: a small modern SSD, the device of the `flashlab bench` figures. \
                 8 channels x 4 chips x 2 dies x 2 planes x 64 blocks x 256 pages x 8 KiB = 16 GiB raw; \
                 tR 50 us, tPROG 600 us, tBERS 3 ms, ONFI bus 800 MB/s, PCIe 3.0 x4 (3,940 MB/s). \
                 Over-provisioning and the other FTL settings are each FTL's own defaults.",
        device: DeviceConfig::default(),
        ftl_suggestions: &[],
        measured_set_times: None,
    }
}

/// Cosmos OpenSSD, part-ftl.txt section VI.B and Tables I and IV.
fn cosmos() -> Preset {
    Preset {
        name: "cosmos",
        summary: "Cosmos OpenSSD board (PaRT-FTL): 4 ch x 4 ways, Micron MLC, 8 KiB pages, 2 KiB page buffer",
        source: "part-ftl.txt section VI.B and Fig. 9: one DIMM of 4 channels x 4 ways, one die and (usable) \
                 plane per chip, 256 pages of 8 KiB per block, 128 GB per DIMM (4096 blocks per chip), \
                 2 KiB page buffer (data crosses it in four chunks per page), round-robin way arbiter, \
                 PCIe host link (assumed 3,200 MB/s, Gen2 x8). Timing fitted to Table I's channel-striping \
                 rows (one operation per channel: read 0.375 ms, write 1.33 ms, erase 3.84 ms) with the \
                 way-interleaving rows as a check: effective channel rate through page buffer and BCH \
                 engine 32.768 MB/s (0.25 ms per 8 KiB page), tR 0.125 ms, tPROG 1.08 ms, tBERS 3.84 ms. \
                 Cache read/program on (the Micron part supports them), so four reads on one die overlap \
                 cell reads with transfers and way interleaving gains nothing, as Table I shows. \
                 OOB 600 bytes (4 x (60 ECC + 90 reserved)). OOB timings assumed equal to page timings.",
        device: DeviceConfig {
            geometry: Geometry {
                channels: 4,
                chips_per_channel: 4,
                dies_per_chip: 1,
                planes_per_die: 1,
                blocks_per_plane: 4096,
                pages_per_block: 256,
                page_bytes: 8192,
                oob_bytes: 600,
            },
            nand: NandRules::default(),
        timing: Timing {
                read_latency_ns: 125_000,
                program_latency_ns: 1_080_000,
                erase_latency_ns: 3_840_000,
                read_oob_latency_ns: 125_000,
                program_oob_latency_ns: 1_080_000,
                bus_mb_per_s: 32.768,
                page_buffer_bytes: 2048,
                cache_ops: true,
                die_queue_policy: QueuePolicy::Fifo,
            },
            host: HostConfig {
                link_mb_per_s: 3_200.0,
                command_overhead_ns: 0,
                command_bytes: 0,
                completion_bytes: 0,
                sector_bytes: 512,
                full_duplex: true,
                data_over_link: true,
            },
            cpu: CpuConfig { cores: 1 },
        },
        ftl_suggestions: &[],
        measured_set_times: None,
    }
}

/// The Cosmos board with part-ftl.txt Table IV's measured times for the real-time analysis.
fn cosmos_table_iv() -> Preset {
    Preset {
        name: "cosmos-table-iv",
        summary: "Cosmos OpenSSD (as `cosmos`) with Table IV's measured set times for the real-time analysis",
        source: "part-ftl.txt Table IV: the device of `cosmos` (simulated identically), and for `flashlab admit` \
                 and `run.admission` the times the paper measured instead of the model's: PaRT-FTL's F_w \
                 (one way, four channels striped) t'_r 0.375 ms, t_w 1.33 ms, t_e 3.84 ms; its F_r t_r 1.23 ms \
                 (Table I's 4-way reads, section V.A: other dies of the way busy); WAO-GC's (and RTGC's) \
                 all 16 chips t_r 1.23 ms, t_w 1.87 ms, t_e 3.84 ms (Table I's 4-way rows). Used while \
                 the run keeps this preset's timing and dies; otherwise the model's times are used and \
                 the analysis says so.",
        measured_set_times: Some(MeasuredSetTimes {
            read_set_read_ns: 1_230_000,
            write_set_read_ns: 375_000,
            write_set_write_ns: 1_330_000,
            write_set_erase_ns: 3_840_000,
            all_chips_read_ns: 1_230_000,
            all_chips_write_ns: 1_870_000,
            all_chips_erase_ns: 3_840_000,
        }),
        ..cosmos()
    }
}

/// FMMU evaluation SSD, fmmu.txt Table 1 (V2) and section 5.1.
fn fmmu_16ch() -> Preset {
    Preset {
        name: "fmmu-16ch",
        summary: "FMMU evaluation SSD: 16 ch x 8 ways x 2 planes, 16 KiB pages, 3D MLC V2, PCIe 3.0 x16",
        source: "fmmu.txt Table 1 (V2 2-bit 3D NAND: 16 KiB pages + 1.5 KiB OOB, 4 MiB + 384 KiB blocks \
                 = 256 pages, tR 35 us, tPROG 390 us, tBERS 4 ms, 667 MB/s transfer) and section 5.1 \
                 (16 GB capacity, 16 channels x 8 ways, two planes per chip, 15% of the capacity \
                 over-provisioned, NVMe over PCIe 3.0 x16 = 15.76 GB/s). 16 GiB raw over 256 planes gives \
                 16 blocks per plane. One die per chip (assumed).",
        device: DeviceConfig {
            geometry: Geometry {
                channels: 16,
                chips_per_channel: 8,
                dies_per_chip: 1,
                planes_per_die: 2,
                blocks_per_plane: 16,
                pages_per_block: 256,
                page_bytes: 16384,
                oob_bytes: 1536,
            },
            nand: NandRules::default(),
        timing: Timing {
                read_latency_ns: 35_000,
                program_latency_ns: 390_000,
                erase_latency_ns: 4_000_000,
                read_oob_latency_ns: 35_000,
                program_oob_latency_ns: 390_000,
                bus_mb_per_s: 667.0,
                page_buffer_bytes: 0,
                cache_ops: false,
                die_queue_policy: QueuePolicy::Fifo,
            },
            host: HostConfig {
                link_mb_per_s: 15_760.0,
                command_overhead_ns: 0,
                command_bytes: 0,
                completion_bytes: 0,
                sector_bytes: 512,
                full_duplex: true,
                data_over_link: true,
            },
            cpu: CpuConfig { cores: 1 },
        },
        ftl_suggestions: &[FtlSuggestion {
            ftls: PAGE_MAPPED,
            settings: &[("over_provisioning", "0.15")],
            reason: "fmmu.txt section 5.1: 15% over-provisioning",
        }],
        measured_set_times: None,
    }
}

/// The uC/OS-II board of multithreaded-ftl-ucos.txt, Table 1.
fn mt_board() -> Preset {
    Preset {
        name: "mt-board",
        summary: "uC/OS-II NAND board (multi-threaded FTL): 2 chips, 4 KiB pages, UART carrying request descriptors",
        source: "multithreaded-ftl-ucos.txt Table 1: STM32F103 MCU (one core), 4 GB NAND on two chips, \
                 4 KiB pages, 512 KiB blocks (128 pages), read 60 us, write 800 us, erase 1.5 ms; host \
                 over a UART, the I/O requests of the trace sent through it to the board (section \
                 Performance Evaluation). Assumed: both chips on one 8-bit bus at 10 MB/s, 128-byte OOB, \
                 UART at 115,200 baud 8N1 (11,520 bytes/s each way, full duplex). The UART carries request \
                 descriptors, not data: Table 2's trace moves 653 GB (282 GB read, 371 GB written), and \
                 371 GB alone would take 373 days down a UART at 11,520 bytes/s, so the board makes the \
                 data it writes and drops the data it reads (host.data_over_link = false). Each request \
                 sends an assumed 16-byte descriptor down (opcode, LBA, length, tag, checksum: 1.39 ms) \
                 and gets an 8-byte status back (tag, status, checksum: 0.69 ms); the response time \
                 includes both.",
        device: DeviceConfig {
            geometry: Geometry {
                channels: 1,
                chips_per_channel: 2,
                dies_per_chip: 1,
                planes_per_die: 1,
                blocks_per_plane: 4096,
                pages_per_block: 128,
                page_bytes: 4096,
                oob_bytes: 128,
            },
            nand: NandRules::default(),
        timing: Timing {
                read_latency_ns: 60_000,
                program_latency_ns: 800_000,
                erase_latency_ns: 1_500_000,
                read_oob_latency_ns: 60_000,
                program_oob_latency_ns: 800_000,
                bus_mb_per_s: 10.0,
                page_buffer_bytes: 0,
                cache_ops: false,
                die_queue_policy: QueuePolicy::Fifo,
            },
            host: HostConfig {
                link_mb_per_s: 0.011_52,
                command_overhead_ns: 0,
                command_bytes: 16,
                completion_bytes: 8,
                sector_bytes: 512,
                full_duplex: true,
                data_over_link: false,
            },
            cpu: CpuConfig { cores: 1 },
        },
        ftl_suggestions: &[],
        measured_set_times: None,
    }
}

enum NftlChip {
    Samsung,
    Toshiba,
}

/// Small-block NAND of nftl-lookup-pagecache.txt Table 1.
fn nftl(chip: NftlChip) -> Preset {
    // Table 1's page and OOB read times include the transfer of the 512 (16) bytes over an
    // 8-bit bus at 50 ns per byte (20 MB/s): 25.6 us (0.8 us). The cell times below are the
    // table's totals minus those transfers, so a simulated read costs exactly the table value.
    let (name, summary, read_cell_ns, oob_cell_ns) = match chip {
        NftlChip::Samsung => (
            "nftl-samsung",
            "Samsung 16 MB small-block NAND (NFTL paper): 512 B pages, 32 per block",
            10_400,
            9_200,
        ),
        NftlChip::Toshiba => (
            "nftl-toshiba",
            "Toshiba 16 MB small-block NAND (NFTL paper): 512 B pages, 32 per block",
            26_400,
            25_200,
        ),
    };
    Preset {
        name,
        summary,
        source: "nftl-lookup-pagecache.txt Table 1: 16 MB, 16 KiB blocks of 32 pages of 512 B + 16 B OOB; \
                 read page 36 us (Samsung) / 52 us (Toshiba), read OOB 10 / 26 us, write page and write \
                 OOB 200 us, erase 2 ms. Table times include the data transfer over an 8-bit bus at \
                 20 MB/s (50 ns cycle, assumed), so cell times are the table values minus the transfer \
                 (512 B: 25.6 us, 16 B: 0.8 us). Host: USB 2.0 flash disk (assumed 60 MB/s). NAND rules: pages \
                 of a block programmed in any order, 3 partial programs per page (1 main-array program and \
                 2 spare-area programs: the data sheet of Samsung's sister part K9F1208U0M, same 528-byte \
                 page generation, says \"1 for main array and 2 for spare array\" and \"any random order in \
                 a block\"; assumed the same for the K9F2808U0B/C and the Toshiba TC58DVM72A1, whose data \
                 sheets were not found).",
        device: DeviceConfig {
            geometry: Geometry {
                channels: 1,
                chips_per_channel: 1,
                dies_per_chip: 1,
                planes_per_die: 1,
                blocks_per_plane: 1024,
                pages_per_block: 32,
                page_bytes: 512,
                oob_bytes: 16,
            },
            nand: NandRules {
                program_order: ProgramOrder::Any,
                partial_programs_per_page: 3,
            },
            timing: Timing {
                read_latency_ns: read_cell_ns,
                program_latency_ns: 174_400,
                erase_latency_ns: 2_000_000,
                read_oob_latency_ns: oob_cell_ns,
                program_oob_latency_ns: 199_200,
                bus_mb_per_s: 20.0,
                page_buffer_bytes: 0,
                cache_ops: false,
                die_queue_policy: QueuePolicy::Fifo,
            },
            host: HostConfig {
                link_mb_per_s: 60.0,
                command_overhead_ns: 0,
                command_bytes: 0,
                completion_bytes: 0,
                sector_bytes: 512,
                full_duplex: false,
                data_over_link: true,
            },
            cpu: CpuConfig { cores: 1 },
        },
        ftl_suggestions: &[FtlSuggestion {
            ftls: PAGE_MAPPED,
            settings: &[("mapping_unit_bytes", "512")],
            reason: "a mapping unit no larger than the 512 B page",
        }],
        measured_set_times: None,
    }
}

fn small_chip(
    blocks: u32,
    pages_per_block: u32,
    page_bytes: u32,
    oob_bytes: u32,
    times_ns: (u64, u64, u64),
) -> DeviceConfig {
    let (read, program, erase) = times_ns;
    DeviceConfig {
        geometry: Geometry {
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 1,
            blocks_per_plane: blocks,
            pages_per_block,
            page_bytes,
            oob_bytes,
        },
        nand: NandRules::default(),
        timing: Timing {
            read_latency_ns: read,
            program_latency_ns: program,
            erase_latency_ns: erase,
            read_oob_latency_ns: read,
            program_oob_latency_ns: program,
            bus_mb_per_s: 40.0,
            page_buffer_bytes: 0,
            cache_ops: false,
            die_queue_policy: QueuePolicy::Fifo,
        },
        host: HostConfig {
            link_mb_per_s: 300.0,
            command_overhead_ns: 0,
            command_bytes: 0,
            completion_bytes: 0,
            sector_bytes: 512,
            full_duplex: false,
            data_over_link: true,
        },
        cpu: CpuConfig { cores: 1 },
    }
}

/// SLC NAND of kast.txt section IV.
fn kast_slc() -> Preset {
    Preset {
        name: "kast-slc",
        summary: "SLC NAND of the KAST experiments: 64 pages per block, 25/200/2000 us",
        source: "kast.txt section IV: SLC NAND, 64 pages per block, page read 25 us, program 200 us, \
                 block erase 2 ms. Assumed: 2 KiB pages with 64 B OOB (large-block SLC of the time), \
                 1 GiB on one chip, 40 MB/s bus, SATA-like 300 MB/s host link.",
        device: small_chip(8192, 64, 2048, 64, (25_000, 200_000, 2_000_000)),
        ftl_suggestions: &[FtlSuggestion {
            ftls: PAGE_MAPPED,
            settings: &[("mapping_unit_bytes", "2048")],
            reason: "a mapping unit no larger than the 2 KiB page",
        }],
        measured_set_times: None,
    }
}

/// MLC NAND of kast.txt section II.
fn kast_mlc() -> Preset {
    Preset {
        name: "kast-mlc",
        summary: "MLC NAND of the KAST merge-cost example: 128 pages per block, 50/650/2000 us",
        source: "kast.txt section II: MLC NAND, 128 pages per block, page read 50 us, program 650 us, \
                 block erase 2 ms (the worst-case FAST merge of about 6 s). Assumed: 4 KiB pages with \
                 128 B OOB, 2 GiB on one chip, 40 MB/s bus, SATA-like 300 MB/s host link.",
        device: small_chip(4096, 128, 4096, 128, (50_000, 650_000, 2_000_000)),
        ftl_suggestions: &[],
        measured_set_times: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_preset_exists_and_validates() {
        for name in PRESETS {
            let p = preset(name).unwrap_or_else(|| panic!("missing preset {name}"));
            assert_eq!(p.name, *name);
            p.device
                .validate()
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert!(preset("nope").is_none());
    }

    #[test]
    fn fmmu_preset_matches_paper_capacity() {
        let p = preset("fmmu-16ch").unwrap();
        assert_eq!(p.device.geometry.raw_bytes(), 16 << 30);
        assert_eq!(p.device.geometry.total_dies(), 128);
    }

    #[test]
    fn cosmos_channel_rows_of_table_i_are_reproduced_by_construction() {
        let t = preset("cosmos").unwrap().device.timing;
        let page = t.bus_ns(8192);
        assert_eq!(t.read_latency_ns + page, 375_000);
        assert_eq!(page + t.program_latency_ns, 1_330_000);
        assert_eq!(t.erase_latency_ns, 3_840_000);
    }

    #[test]
    fn mt_board_uart_carries_descriptors_only() {
        let h = preset("mt-board").unwrap().device.host;
        // 115,200 baud 8N1: 10 bits per byte.
        assert!((h.link_mb_per_s * 1e6 - 115_200.0 / 10.0).abs() < 1e-6);
        assert!(h.full_duplex);
        assert!(!h.data_over_link);
        assert_eq!((h.command_bytes, h.completion_bytes), (16, 8));
        // 16 bytes down in 1.39 ms, 8 bytes up in 0.69 ms, as the source text says.
        assert_eq!(h.link_ns(16), 1_388_889);
        assert_eq!(h.link_ns(8), 694_444);
    }

    #[test]
    fn other_presets_keep_data_on_the_link_and_no_messages() {
        for name in PRESETS.iter().filter(|n| **n != "mt-board") {
            let h = preset(name).unwrap().device.host;
            assert!(h.data_over_link, "{name}");
            assert_eq!((h.command_bytes, h.completion_bytes), (0, 0), "{name}");
        }
    }

    #[test]
    fn only_the_small_block_nftl_chips_program_pages_in_any_order() {
        for name in PRESETS {
            let nand = preset(name).unwrap().device.nand;
            if name.starts_with("nftl-") {
                assert_eq!(nand.program_order, ProgramOrder::Any, "{name}");
                assert_eq!(nand.partial_programs_per_page, 3, "{name}");
            } else {
                assert_eq!(nand, NandRules::default(), "{name}");
                assert_eq!(nand.program_order, ProgramOrder::Sequential, "{name}");
            }
        }
    }

    #[test]
    fn nftl_read_totals_match_table_1() {
        for (name, read_us, oob_us) in [("nftl-samsung", 36.0, 10.0), ("nftl-toshiba", 52.0, 26.0)]
        {
            let d = preset(name).unwrap().device;
            let t = &d.timing;
            let read = (t.read_latency_ns + t.bus_ns(512)) as f64 / 1000.0;
            let oob = (t.read_oob_latency_ns + t.bus_ns(16)) as f64 / 1000.0;
            assert!((read - read_us).abs() < 0.05, "{name} read {read}");
            assert!((oob - oob_us).abs() < 0.05, "{name} oob {oob}");
            let write = (t.program_latency_ns + t.bus_ns(512)) as f64 / 1000.0;
            assert!((write - 200.0).abs() < 0.05, "{name} write {write}");
        }
    }
}
