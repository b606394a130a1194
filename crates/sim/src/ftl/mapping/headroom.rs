//! Whether garbage collection can always free a block, checked when a configuration is built
//! (a run that ends in "garbage collection cannot free a block" is a configuration that
//! should have been refused). Two limits, found by sweeping pages per block x
//! over-provisioning x FTL (`tests/gc_headroom.rs`; figures in `docs/gc-headroom.md`):
//!
//! - **Die balance** (pagemap): host pages go to the dies in turn, but overwrites invalidate
//!   data wherever it lies, so a die's share of the valid data wanders around its mean, by a
//!   standard deviation of about sqrt(share x (1 - 1/dies) / 2) units (measured: 0.42 x the
//!   share's variance bound). GC frees space only on its own die, so each die's spare units
//!   must cover the blocks it keeps open or reserved plus [`BALANCE_DEVIATIONS`] standard
//!   deviations. This only matters for small blocks on small devices; one die needs none.
//! - **Padded GC pages** (mt-ftl, st-ftl): GC programs the units a victim still holds and
//!   pads the last page of each victim, so with pages of several mapping units a victim gains
//!   its invalid units less up to a page. Greedy victims hold about twice the average share of
//!   invalid units (over-provisioning x units per block), which must exceed the padding
//!   (units per page - 1) by [`PADDING_MARGIN`].

use crate::config::{ConfigError, Geometry};

/// Standard deviations of a die's share of the data its spare units must cover.
pub const BALANCE_DEVIATIONS: f64 = 4.0;
/// Ratio of over-provisioning x units per block to the units a padded GC page wastes.
pub const PADDING_MARGIN: f64 = 2.0;
/// Largest over-provisioning the FTLs accept.
const MAX_OP: f64 = 0.95;

/// The smallest over-provisioning (to 4 decimals) for which `enough` holds, if any up to
/// 0.95 (`enough` is monotone).
fn smallest_op(enough: impl Fn(f64) -> bool) -> Option<f64> {
    if !enough(MAX_OP) {
        return None;
    }
    let (mut lo, mut hi) = (0.0_f64, MAX_OP);
    while hi - lo > 1e-5 {
        let mid = (lo + hi) / 2.0;
        if enough(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some((hi * 1e4).ceil() / 1e4)
}

/// Units of a die: (blocks, units per block, units).
fn die_units(g: &Geometry, units_per_page: u32) -> (f64, f64, f64) {
    let blocks = f64::from(g.planes_per_die * g.blocks_per_plane);
    let per_block = f64::from(g.pages_per_block * units_per_page);
    (blocks, per_block, blocks * per_block)
}

/// Whether `over_provisioning` gives each die enough spare units for `reserved_blocks`
/// blocks plus the wander of its share (always, on one die).
pub fn balanced(g: &Geometry, units_per_page: u32, reserved_blocks: f64, op: f64) -> bool {
    let dies = f64::from(g.total_dies());
    let (_, per_block, units) = die_units(g, units_per_page);
    op * units
        >= reserved_blocks * per_block + BALANCE_DEVIATIONS * deviation(g, units_per_page, op)
        || dies <= 1.0
}

/// Standard deviation of a die's share of the valid units (0 on one die).
fn deviation(g: &Geometry, units_per_page: u32, op: f64) -> f64 {
    let dies = f64::from(g.total_dies());
    let (_, _, units) = die_units(g, units_per_page);
    ((1.0 - op) * units * (1.0 - 1.0 / dies) / 2.0).sqrt()
}

/// The smallest over-provisioning that keeps the dies balanced (see [`check_die_balance`]);
/// `None` when none up to 0.95 does.
pub fn balance_min_op(g: &Geometry, units_per_page: u32, reserved_blocks: f64) -> Option<f64> {
    smallest_op(|op| balanced(g, units_per_page, reserved_blocks, op))
}

/// Checks that each die's spare units cover `reserved_blocks` blocks plus the wander of its
/// share of the data (see the module docs); `ftl` names the FTL in the message.
pub fn check_die_balance(
    g: &Geometry,
    units_per_page: u32,
    over_provisioning: f64,
    reserved_blocks: f64,
    ftl: &str,
) -> Result<(), ConfigError> {
    let op = over_provisioning;
    if balanced(g, units_per_page, reserved_blocks, op) {
        return Ok(());
    }
    let (_, per_block, units) = die_units(g, units_per_page);
    let wander = deviation(g, units_per_page, op);
    let why = format!(
        "writes spread over {} dies, and a die's share of the data wanders by about {wander:.0} \
         units of {per_block} per block; {ftl} collects garbage on each die alone, so a die \
         needs {reserved_blocks} open or reserved blocks plus {BALANCE_DEVIATIONS} times that \
         ({:.0} units) of spare, and has {:.0}",
        g.total_dies(),
        reserved_blocks * per_block + BALANCE_DEVIATIONS * wander,
        op * units
    );
    Err(match balance_min_op(g, units_per_page, reserved_blocks) {
        Some(min) => ConfigError::invalid(
            "ftl.over_provisioning",
            op,
            why,
            format!(
                "{min} ..= {MAX_OP}, or more geometry.pages_per_block or geometry.blocks_per_plane"
            ),
        ),
        None => ConfigError::invalid(
            "geometry.pages_per_block",
            g.pages_per_block,
            why,
            "more pages per block or geometry.blocks_per_plane",
        ),
    })
}

/// Checks that GC gains space despite padding the last page of each victim (see the module
/// docs); `ftl` names the FTL in the message.
pub fn check_padded_gc_pages(
    g: &Geometry,
    units_per_page: u32,
    over_provisioning: f64,
    ftl: &str,
) -> Result<(), ConfigError> {
    if units_per_page <= 1 {
        return Ok(());
    }
    let (_, per_block, _) = die_units(g, units_per_page);
    let padding = f64::from(units_per_page - 1);
    let enough = |op: f64| op * per_block >= PADDING_MARGIN * padding;
    let op = over_provisioning;
    if enough(op) {
        return Ok(());
    }
    let why = format!(
        "{ftl}'s GC pads the last page of each victim (up to {padding} of its {units_per_page} \
         mapping units), so a victim must hold more invalid units than that: with {} pages per \
         block it needs ftl.over_provisioning x {per_block} units per block >= {}",
        g.pages_per_block,
        PADDING_MARGIN * padding
    );
    let pages_needed = (PADDING_MARGIN * padding / (MAX_OP * f64::from(units_per_page))).ceil();
    Err(match smallest_op(enough) {
        Some(min) => ConfigError::invalid(
            "ftl.over_provisioning",
            op,
            why,
            format!(
                "{min} ..= {MAX_OP}, or more geometry.pages_per_block, or \
                 ftl.mapping_unit_bytes = geometry.page_bytes (one unit per page)"
            ),
        ),
        None => ConfigError::invalid(
            "geometry.pages_per_block",
            g.pages_per_block,
            why,
            format!(
                "{} ..= 4096, or ftl.mapping_unit_bytes = geometry.page_bytes",
                pages_needed.max(2.0)
            ),
        ),
    })
}
