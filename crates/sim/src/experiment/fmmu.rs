//! Closed forms of the ideal (zero FTL time) throughput limits of fmmu.txt's figures on our
//! device model, so a simulated run can be checked against arithmetic and our numbers set
//! beside the paper's with the reason they differ.
//!
//! The model (ARCHITECTURE.md, "The die and bus model"): without cache operations a die is held
//! for a command's cell time and its bus transfer; a channel bus moves one transfer at a time at
//! `timing.bus_mb_per_s` (MB = 10^6 bytes); each host link direction moves data at
//! `host.link_mb_per_s`. A run's throughput is at most the smallest of three rates:
//!
//! - chips: `dies / (die time per operation)`,
//! - NAND bus: `channels x bus bytes/s / (bus bytes per operation)`,
//! - host link: `link bytes/s / (host bytes per operation)`.
//!
//! The paper's own limits (section 5.3) are the `PAPER_*` constants; docs/fmmu.md compares them.

use crate::config::ExperimentConfig;

/// fmmu.txt 5.3: ideal 64 KiB sequential write, bytes/s ("about 5.5GB/s").
pub const PAPER_SEQ_WRITE_BYTES_PER_S: f64 = 5.5e9;
/// fmmu.txt 5.3: ideal 64 KiB sequential read, bytes/s ("about 9.2GB/s").
pub const PAPER_SEQ_READ_BYTES_PER_S: f64 = 9.2e9;
/// fmmu.txt 5.3: ideal 4 KiB random write, IOPS ("about 283KIOPS").
pub const PAPER_RAND_WRITE_IOPS: f64 = 283e3;
/// fmmu.txt 5.3: ideal 4 KiB random read, IOPS ("about 1,165KIOPS").
pub const PAPER_RAND_READ_IOPS: f64 = 1.165e6;
/// fmmu.txt 5.4: FMMU at 32 ch x 8 way on PCIe 3.0 x32, IOPS ("about 4.3 MIOPS").
pub const PAPER_SCALING_32X8_IOPS: f64 = 4.3e6;
/// PCIe 3.0 x32 (Fig. 14): twice the x16 link of section 5.1, MB/s.
pub const PCIE3_X32_MB_PER_S: f64 = 31_520.0;

/// Which resource sets a limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bottleneck {
    Chips,
    NandBus,
    HostLink,
    Ftl,
}

/// A throughput limit (operations/s or bytes/s) with the rate of each resource.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Limit {
    pub chips: f64,
    pub nand_bus: f64,
    pub host_link: f64,
    /// `f64::INFINITY` when the FTL takes no time.
    pub ftl: f64,
}

impl Limit {
    /// The smallest rate.
    pub fn value(&self) -> f64 {
        self.chips
            .min(self.nand_bus)
            .min(self.host_link)
            .min(self.ftl)
    }

    /// The resource with the smallest rate.
    pub fn bottleneck(&self) -> Bottleneck {
        let v = self.value();
        if v == self.chips {
            Bottleneck::Chips
        } else if v == self.nand_bus {
            Bottleneck::NandBus
        } else if v == self.host_link {
            Bottleneck::HostLink
        } else {
            Bottleneck::Ftl
        }
    }

    /// The same limit with an FTL that serves `cores / ftl_ns_per_op` operations per second.
    pub fn with_ftl(self, ftl_ns_per_op: f64, cores: u32) -> Limit {
        Limit {
            ftl: f64::from(cores) * 1e9 / ftl_ns_per_op,
            ..self
        }
    }
}

/// The device quantities the closed forms use, in seconds and bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Device {
    pub channels: f64,
    pub dies: f64,
    pub page_bytes: f64,
    pub pages_per_block: f64,
    pub read_s: f64,
    pub program_s: f64,
    pub erase_s: f64,
    pub bus_bytes_per_s: f64,
    pub link_bytes_per_s: f64,
}

impl Device {
    /// From a configuration (its geometry, timing and host link).
    pub fn of(config: &ExperimentConfig) -> Device {
        let g = &config.geometry;
        let t = &config.timing;
        Device {
            channels: f64::from(g.channels),
            dies: f64::from(g.total_dies()),
            page_bytes: f64::from(g.page_bytes),
            pages_per_block: f64::from(g.pages_per_block),
            read_s: t.read_latency_ns as f64 * 1e-9,
            program_s: t.program_latency_ns as f64 * 1e-9,
            erase_s: t.erase_latency_ns as f64 * 1e-9,
            bus_bytes_per_s: t.bus_mb_per_s * 1e6,
            link_bytes_per_s: config.host.link_mb_per_s * 1e6,
        }
    }

    fn bus_s(&self, bytes: f64) -> f64 {
        bytes / self.bus_bytes_per_s
    }
}

/// Sequential writes, bytes/s, programming `planes` pages per command (1 = single plane).
/// A die takes the data-in of `planes` pages and then one tPROG:
/// `chips = dies x planes x page / (planes x page / bus + tPROG)`.
/// Our model has no one-shot program (fmmu.txt 2.1: the pages of a word line in one tPROG).
pub fn seq_write(dev: &Device, planes: f64) -> Limit {
    let bytes = planes * dev.page_bytes;
    Limit {
        chips: dev.dies * bytes / (dev.bus_s(bytes) + dev.program_s),
        nand_bus: dev.channels * dev.bus_bytes_per_s,
        host_link: dev.link_bytes_per_s,
        ftl: f64::INFINITY,
    }
}

/// Sequential reads of whole pages, bytes/s: `chips = dies x page / (tR + page / bus)`.
pub fn seq_read(dev: &Device) -> Limit {
    Limit {
        chips: dev.dies * dev.page_bytes / (dev.read_s + dev.bus_s(dev.page_bytes)),
        nand_bus: dev.channels * dev.bus_bytes_per_s,
        host_link: dev.link_bytes_per_s,
        ftl: f64::INFINITY,
    }
}

/// Random reads of `unit` bytes, IOPS, each also loading `translation_reads` translation
/// reads (mean per host read: the map cache's miss ratio) of `translation_bytes` bus bytes.
/// Per host read a die spends `(1 + m) tR + (unit + m T) / bus` and a bus `(unit + m T) / bus`.
pub fn rand_read(dev: &Device, unit: f64, translation_reads: f64, translation_bytes: f64) -> Limit {
    let bus_bytes = unit + translation_reads * translation_bytes;
    let die_s = (1.0 + translation_reads) * dev.read_s + dev.bus_s(bus_bytes);
    Limit {
        chips: dev.dies / die_s,
        nand_bus: dev.channels * dev.bus_bytes_per_s / bus_bytes,
        host_link: dev.link_bytes_per_s / unit,
        ftl: f64::INFINITY,
    }
}

/// The flash work per host write of a run at steady state: pages programmed, reads (GC's),
/// bus bytes read, blocks erased (from a report's flash counters).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WriteWork {
    pub programs: f64,
    pub reads: f64,
    pub read_bus_bytes: f64,
    pub erases: f64,
}

impl WriteWork {
    /// The work of uniform random writes of `unit`-byte units at write amplification `wa`,
    /// single-plane programs, GC reading `units_per_gc_read` valid units per page read.
    pub fn from_write_amplification(
        dev: &Device,
        unit: f64,
        wa: f64,
        units_per_gc_read: f64,
    ) -> WriteWork {
        let units_per_page = dev.page_bytes / unit;
        let copies = wa - 1.0;
        WriteWork {
            programs: wa / units_per_page,
            reads: copies / units_per_gc_read,
            read_bus_bytes: copies * unit,
            erases: wa / (units_per_page * dev.pages_per_block),
        }
    }
}

/// Random writes, IOPS, with the flash work `work` per host write (single-plane programs):
/// a die spends `programs (page / bus + tPROG) + reads tR + read bytes / bus + erases tBERS`.
/// This is the die time the commands hold the die; a die also waits for its bus grant (see
/// docs/fmmu.md), so runs reach a share of it that falls as the bus gets busier.
pub fn rand_write(dev: &Device, unit: f64, work: &WriteWork) -> Limit {
    let program_bus_s = dev.bus_s(dev.page_bytes);
    let die_s = work.programs * (program_bus_s + dev.program_s)
        + work.reads * dev.read_s
        + dev.bus_s(work.read_bus_bytes)
        + work.erases * dev.erase_s;
    let bus_s = work.programs * program_bus_s + dev.bus_s(work.read_bus_bytes);
    Limit {
        chips: dev.dies / die_s,
        nand_bus: dev.channels / bus_s,
        host_link: dev.link_bytes_per_s / unit,
        ftl: f64::INFINITY,
    }
}

/// Write amplification of uniform random overwrites under FIFO victim selection (Desnoyers
/// 2012): `a / (a + W0(-a e^-a))`, `a = physical / logical`. Greedy does a little better.
pub fn fifo_write_amplification(over_provisioning: f64) -> f64 {
    let a = 1.0 / (1.0 - over_provisioning);
    a / (a + lambert_w::lambert_w0(-a * (-a).exp()))
}

/// The miss ratio of a map cache of `cached_entries` under uniform random requests over
/// `logical_units` (each entry is equally likely to be the one asked for).
pub fn uniform_miss_ratio(cached_entries: f64, logical_units: f64) -> f64 {
    (1.0 - cached_entries / logical_units).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmmu_16ch() -> Device {
        Device::of(&ExperimentConfig::with_sets("fmmu-16ch", &[]).unwrap())
    }

    fn with_geometry(channels: u32, ways: u32, link_mb_per_s: f64) -> Device {
        let sets = [
            format!("geometry.channels={channels}"),
            format!("geometry.chips_per_channel={ways}"),
            format!("host.link_mb_per_s={link_mb_per_s}"),
        ];
        let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
        Device::of(&ExperimentConfig::with_sets("fmmu-16ch", &sets).unwrap())
    }

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn sequential_limits_on_fmmu_16ch() {
        let d = fmmu_16ch();
        let w = seq_write(&d, 1.0);
        assert_eq!(w.bottleneck(), Bottleneck::Chips);
        // 128 dies x 16384 B / (24.56 us + 390 us)
        assert!(close(w.value(), 5.0586e9, 1e-3), "{}", w.value());
        let r = seq_read(&d);
        assert_eq!(r.bottleneck(), Bottleneck::NandBus);
        assert!(close(r.value(), 16.0 * 667e6, 1e-9));
    }

    #[test]
    fn random_read_with_translation_reads_is_about_the_papers() {
        let d = fmmu_16ch();
        let data_only = rand_read(&d, 4096.0, 0.0, 0.0);
        assert_eq!(data_only.bottleneck(), Bottleneck::NandBus);
        assert!(close(data_only.value(), 16.0 * 667e6 / 4096.0, 1e-9));
        // 1,088 KiB of 4-byte entries over 13.6 GiB of 4 KiB units: 93.9% miss.
        let logical = 16.0 * 1024.0 * 1024.0 * 1024.0 * 0.85 / 4096.0;
        let miss = uniform_miss_ratio(1088.0 * 1024.0 / 4.0, logical);
        assert!(close(miss, 0.9219, 1e-3), "{miss}");
        let demand = rand_read(&d, 4096.0, miss, 4096.0);
        assert_eq!(demand.bottleneck(), Bottleneck::NandBus);
        assert!(close(
            demand.value(),
            data_only.value() / (1.0 + miss),
            1e-9
        ));
        assert!(close(demand.value(), PAPER_RAND_READ_IOPS, 0.2));
    }

    #[test]
    fn fig_2_ftl_of_1us_becomes_the_bottleneck_at_8x8_on_hits_and_16x8_on_misses() {
        let pcie3_x16 = 15_760.0;
        let hit = |c, w| rand_read(&with_geometry(c, w, pcie3_x16), 4096.0, 0.0, 0.0);
        let miss = |c, w| rand_read(&with_geometry(c, w, pcie3_x16), 4096.0, 1.0, 4096.0);
        assert_eq!(hit(8, 8).with_ftl(1000.0, 1).bottleneck(), Bottleneck::Ftl);
        assert_ne!(hit(8, 4).with_ftl(1000.0, 1).bottleneck(), Bottleneck::Ftl);
        assert_eq!(
            miss(16, 8).with_ftl(1000.0, 1).bottleneck(),
            Bottleneck::Ftl
        );
        assert_ne!(miss(8, 8).with_ftl(1000.0, 1).bottleneck(), Bottleneck::Ftl);
    }

    #[test]
    fn fig_14_32x8_on_pcie3_x32_is_nand_bus_limited() {
        let d = with_geometry(32, 8, PCIE3_X32_MB_PER_S);
        let l = rand_read(&d, 4096.0, 0.0, 0.0);
        assert_eq!(l.bottleneck(), Bottleneck::NandBus);
        assert!(close(l.value(), 32.0 * 667e6 / 4096.0, 1e-9));
        assert!(close(l.value(), PAPER_SCALING_32X8_IOPS, 0.25));
        let one = rand_read(&with_geometry(1, 1, PCIE3_X32_MB_PER_S), 4096.0, 0.0, 0.0);
        assert_eq!(one.bottleneck(), Bottleneck::Chips);
    }

    #[test]
    fn random_write_work_from_write_amplification() {
        let d = fmmu_16ch();
        let none = WriteWork::from_write_amplification(&d, 4096.0, 1.0, 1.0);
        let l = rand_write(&d, 4096.0, &none);
        assert_eq!(l.bottleneck(), Bottleneck::Chips);
        // Without GC: 4 units per page program, erases per 1024 units written.
        let no_erase = seq_write(&d, 1.0).chips / 4096.0;
        assert!(l.chips < no_erase && l.chips > 0.95 * no_erase);
        let gc = rand_write(
            &d,
            4096.0,
            &WriteWork::from_write_amplification(&d, 4096.0, 4.65, 3.2),
        );
        assert!(gc.chips < l.chips / 4.0);
        assert!(close(fifo_write_amplification(0.15), 3.6, 0.1));
    }
}
