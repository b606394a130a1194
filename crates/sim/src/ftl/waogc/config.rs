//! Settings of WAO-GC and their checks against the device: the logical/physical ratio λ must
//! stay below part-ftl.txt eq. 12's bound for the device's block size P and the copies per
//! partial step c, or the one reserved block could not hold a collection's copies and writes.

use crate::config::{ConfigError, ExperimentConfig};
use crate::nand::OOB_ENTRY_BYTES;
use crate::settings;

settings! {
    /// WAO-GC, the partial-GC real-time FTL (`[ftl]` with `name = "wao-gc"`).
    pub struct WaoGcConfig in "ftl" {
        /// FTL name.
        name: String = "wao-gc".into(), unit "";
        /// λ: logical pages exported / physical pages (part-ftl.txt section V.A: 48.2% of the SSD holds data); must stay below eq. 12's bound (P - 1) c / ((c + 1) P).
        logical_ratio: f64 = 0.482, unit "fraction", range 0.01 ..= 0.99;
        /// c: valid-page copies one partial GC step may do after a host page write (part-ftl.txt section V.A: 2).
        copies_per_step: u32 = 2, unit "pages", range 1 ..= 65536;
        /// A copy of a page to a block of the same plane uses copyback (no bus transfer) instead of read + program.
        gc_copyback: bool = false, unit "";
        /// What a partial GC step blocks: "die", only later commands on its own die (the die queue orders them); "device", every host command issued after it on any die until the step's commands completed (one firmware request loop that runs the step, the blocking of part-ftl.txt VI.A's model).
        gc_step_scope: StepScope = StepScope::Die, unit "", choices "die | device";
        /// Firmware CPU time per host page read or written (the request loop's work for one page request of the request buffer), charged before the page's commands are issued; host pages wait for the FTL core first come, first served (0: none).
        cpu_page_ns: u64 = 0, unit "ns", range 0 ..= 1_000_000_000;
    }
}

/// What a partial GC step of WAO-GC holds up (`ftl.gc_step_scope`, docs/wao-gc.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepScope {
    /// The step's commands queue on its die like any others: commands on other dies go on.
    Die,
    /// Host commands issued after a step, on any die, start only once the step completed.
    Device,
}

/// Quantities derived from the settings and the device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizing {
    /// Pages exported to the host (mapping unit = flash page).
    pub logical_pages: u32,
    /// P, pages per block.
    pub pages_per_block: u32,
    /// Eq. 12's bound on λ for this P and c.
    pub ratio_bound: f64,
}

/// part-ftl.txt eq. 12: λ < (P - 1) c / ((c + 1) P), from n + v <= P with n = ceil(v / c) + 1
/// partial steps and v <= ceil(λ P) valid pages in a victim.
pub fn ratio_bound(pages_per_block: u32, copies_per_step: u32) -> f64 {
    let (p, c) = (f64::from(pages_per_block), f64::from(copies_per_step));
    (p - 1.0) * c / ((c + 1.0) * p)
}

/// The most valid pages a victim may hold so that its n = ceil(v / c) + 1 steps, each after a
/// host page write, and its v copies fit one block of P pages (n + v <= P, the integer form of
/// eq. 12).
pub fn max_victim_valid(pages_per_block: u32, copies_per_step: u32) -> u32 {
    (0..pages_per_block)
        .rev()
        .find(|&v| v + steps_for(v, copies_per_step) <= pages_per_block)
        .unwrap_or(0)
}

/// Whether λ keeps a victim of ceil(λ P) valid pages within one block: eq. 12 (strict, as
/// the paper states it) and its integer form, which is stricter for small blocks (eq. 12 drops
/// the ceilings: P = 8, c = 2 allows λ up to 0.583, where ceil(λ P) = 5 valid pages take 4 steps
/// and 5 + 4 > 8).
pub fn ratio_allowed(ratio: f64, pages_per_block: u32, copies_per_step: u32) -> bool {
    let victim = (ratio * f64::from(pages_per_block)).ceil();
    ratio < ratio_bound(pages_per_block, copies_per_step)
        && victim <= f64::from(max_victim_valid(pages_per_block, copies_per_step))
}

/// The largest λ (to 4 decimals, rounded down) [`ratio_allowed`] accepts.
pub fn largest_ratio(pages_per_block: u32, copies_per_step: u32) -> f64 {
    let p = f64::from(pages_per_block);
    let integer = f64::from(max_victim_valid(pages_per_block, copies_per_step)) / p;
    let mut r = (integer.min(ratio_bound(pages_per_block, copies_per_step)) * 1e4).floor() / 1e4;
    while r > 0.0 && !ratio_allowed(r, pages_per_block, copies_per_step) {
        r -= 1e-4;
    }
    (r.max(0.0) * 1e4).floor() / 1e4
}

/// Partial steps a collection of a victim with `valid` pages takes at `copies` per step: one per
/// `copies` pages copied, plus the erase (n = ceil(v / c) + 1).
pub fn steps_for(valid: u32, copies: u32) -> u32 {
    valid.div_ceil(copies) + 1
}

/// The smallest λ `ftl.logical_ratio` takes.
const MIN_LOGICAL_RATIO: f64 = 0.01;

/// The fewest pages per block with which some λ of at least [`MIN_LOGICAL_RATIO`] is allowed
/// at `copies` per step.
pub fn smallest_block_for_a_ratio(copies: u32) -> u32 {
    (2..=u32::MAX)
        .find(|&p| largest_ratio(p, copies) >= MIN_LOGICAL_RATIO)
        .expect("large blocks allow a ratio")
}

impl WaoGcConfig {
    /// Parses and checks the `[ftl]` table against the device.
    pub fn from_experiment(config: &ExperimentConfig) -> Result<(Self, Sizing), ConfigError> {
        let cfg: WaoGcConfig = crate::ftl::registry::parse_section(config)?;
        cfg.check_ranges()?;
        let sizing = cfg.sizing(config)?;
        Ok((cfg, sizing))
    }

    /// Why `logical_ratio` is refused for P = `p` and c = `c`: above eq. 12's bound, or, on
    /// blocks too small for any λ (no victim with even one valid page fits), that no ratio
    /// works at all and which block size would.
    fn ratio_error(&self, p: u32, c: u32) -> ConfigError {
        let bound = ratio_bound(p, c);
        let largest = largest_ratio(p, c);
        if largest < MIN_LOGICAL_RATIO {
            let fits = smallest_block_for_a_ratio(c);
            return ConfigError::invalid(
                "ftl.logical_ratio",
                self.logical_ratio,
                format!(
                    "no logical ratio works with P = {p} pages per block and c = {c} copies \
                     per step: a victim with even one valid page needs its copy, its \
                     {} partial steps and their host writes within the reserved block \
                     (part-ftl.txt eq. 12, integer form), so the one-partial-step guarantee \
                     cannot hold",
                    steps_for(1, c)
                ),
                format!(
                    "none at P = {p}; geometry.pages_per_block >= {fits} at c = {c} allows some"
                ),
            );
        }
        ConfigError::invalid(
            "ftl.logical_ratio",
            self.logical_ratio,
            format!(
                "above part-ftl.txt eq. 12's bound for P = {p} pages per block and c = {c} \
                 copies per step ((P - 1) c / ((c + 1) P) = {bound:.4}; a victim may hold at \
                 most {} valid pages so that its copies and the host writes of its \
                 collection fit the reserved block): the one-partial-step guarantee would \
                 not hold",
                max_victim_valid(p, c)
            ),
            format!(
                "{MIN_LOGICAL_RATIO} ..= {largest}, or a larger ftl.copies_per_step or \
                 geometry.pages_per_block"
            ),
        )
    }

    fn sizing(&self, config: &ExperimentConfig) -> Result<Sizing, ConfigError> {
        let g = &config.geometry;
        let p = g.pages_per_block;
        let c = self.copies_per_step;
        if !ratio_allowed(self.logical_ratio, p, c) {
            return Err(self.ratio_error(p, c));
        }
        if g.oob_bytes < OOB_ENTRY_BYTES {
            return Err(ConfigError::invalid(
                "geometry.oob_bytes",
                g.oob_bytes,
                format!("wao-gc stores a {OOB_ENTRY_BYTES}-byte OOB entry per page"),
                format!("{OOB_ENTRY_BYTES} ..= 16384"),
            ));
        }
        let blocks_per_die = g.planes_per_die * g.blocks_per_plane;
        if blocks_per_die < 3 {
            return Err(ConfigError::invalid(
                "geometry.blocks_per_plane",
                g.blocks_per_plane,
                "wao-gc needs on each die an open block, the reserved free block and a block of data",
                format!("{} ..= 1048576", 3u32.div_ceil(g.planes_per_die)),
            ));
        }
        let logical_pages =
            crate::ftl::mapping::logical_pages_of_ratio(g, self.logical_ratio, "wao-gc")?;
        Ok(Sizing {
            logical_pages,
            pages_per_block: p,
            ratio_bound: ratio_bound(p, c),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// part-ftl.txt section V.A: c = 2 and P = 256 give an upper bound of 66.4%, and the
    /// section VI.A configuration λ = 48.2% is 72.5% of it (truncated).
    #[test]
    fn eq12_bound_on_cosmos_is_66_4_percent() {
        let bound = ratio_bound(256, 2);
        assert!((bound - 510.0 / 768.0).abs() < 1e-12);
        assert_eq!((bound * 1000.0).round() / 10.0, 66.4);
        assert_eq!((0.482 / bound * 1000.0).floor() / 10.0, 72.5);
        // For P = 256 the integer form agrees: 170 valid pages + 86 steps = 256.
        assert_eq!(max_victim_valid(256, 2), 170);
        assert!(ratio_allowed(0.664, 256, 2) && !ratio_allowed(0.6641, 256, 2));
        assert_eq!(largest_ratio(256, 2), 0.664);
    }

    /// Every λ the check accepts keeps a victim of ceil(λ P) valid pages and its
    /// n = ceil(v / c) + 1 writes within one block (n + v <= P); eq. 12 alone does not for
    /// small blocks.
    #[test]
    fn an_accepted_ratio_fits_a_collection_in_one_block() {
        for p in [2u32, 3, 4, 8, 16, 32, 64, 128, 256, 512] {
            for c in 1..=8u32 {
                let largest = largest_ratio(p, c);
                for ratio in [largest, largest * 0.9, 0.482] {
                    if !ratio_allowed(ratio, p, c) {
                        continue;
                    }
                    let v = (ratio * f64::from(p)).ceil() as u32;
                    assert!(
                        v + steps_for(v, c) <= p,
                        "P {p} c {c} λ {ratio}: v {v} takes {} steps",
                        steps_for(v, c)
                    );
                }
                assert!(!ratio_allowed(largest + 2e-4, p, c) || largest == 0.0);
            }
        }
        // P = 8, c = 2: eq. 12 allows up to 0.5833, but 5 valid pages need 4 steps (9 > 8).
        assert!(0.58 < ratio_bound(8, 2));
        assert!(!ratio_allowed(0.58, 8, 2));
        assert_eq!(max_victim_valid(8, 2), 4);
        assert_eq!(largest_ratio(8, 2), 0.5);
    }
}
