//! The FTL execution-time model of the demand-paged map caches: how long each map-cache
//! operation keeps an FTL core busy, from fmmu.txt section 5.2 (Fig. 10, 400 MHz Cortex-R4).
//!
//! Values the text states (4-way set-associative caches): map-cache hit DFTL 1.5 us on one
//! core and 0.4 us on four, CDFTL 4 us and 1 us, FMMU 0.16 us (hardware); a miss costs about
//! a hit, except DFTL's, about 3x its hit (the victim search of second chance); command
//! handling outside the map cache (T_FTL_cmd) about 0.2 us; a flush scans every block of the
//! CMT (no structure finds a translation page's dirty blocks), so it grows with the number of
//! cache blocks; FMMU's flush follows next links and stays under 10 us.
//!
//! How a request is charged (fmmu.txt 4.1 and Fig. 6): a host read sends one Lookup and a host
//! write one Update, each carrying StartLPN and NumLPNs, so one request costs one map-cache
//! operation per CMT block it touches, not one per 4 KiB unit: consecutive sub-requests of one
//! host request on the same CMT block (DFTL's entry-level option: the same entry) are one
//! operation, charged when the first of them is looked up. A write is one Update: the lookup
//! that finds (or loads) its entry *is* the Update, and placing the data charges nothing more.
//! GC's CondUpdate and TRIM's updates cost one operation per entry they change.
//!
//! Which Fig. 10 time an operation costs, by where it is served:
//! - **first-level hit** (the entry in the CMT): DFTL's CMT hit, 1.5 us on 1 core, 0.4 us
//!   on 4. The text gives no CMT-hit time for CDFTL, whose Fig. 10(a) case is "cache miss in
//!   CMT, but hit occurs in CTP"; its CMT is the same 4-way set-associative table DFTL looks
//!   up, so a CDFTL CMT hit costs DFTL's hit (the extra 2.5 us is the victim search and the
//!   CTP lookup the text names, which a CMT hit does not do);
//! - **CMT miss + CTP hit** (two-level only): Fig. 10(a)'s CDFTL 4 us / 1 us;
//! - **miss** (a translation page read): Fig. 10(b); "map cache miss and map cache hit show
//!   similar results", except DFTL's, "about three times slower than cache hit": CDFTL 4 us
//!   / 1 us, DFTL 4.5 us / 1.2 us;
//! - FMMU: 0.16 us whatever the case, on its hardware map unit, not a core.
//!
//! Choices where the paper is silent (documented, tested):
//! - A Fig. 10 N-core value is the time per request of the whole N-core FTL. With the map
//!   split statically across cores, each handler runs on one core and costs N x that value:
//!   DFTL 1.5 us (1 core) and 1.6 us (4 cores) per handler, the difference being the
//!   synchronisation overhead the paper names; 2 cores (not in the text) interpolate the
//!   per-handler cost linearly between 1 and 4 cores.
//! - **Flush scan** (DFTL and CDFTL: "all dirty blocks of the CMT must be tested"): one flush
//!   costs the scheme's first-level time (find the TVPN, build the page) plus
//!   `ftl.flush_scan_ns_per_block` per CMT block scanned. The paper gives no figure (Fig.
//!   10(c)'s values are not in its text); the default, 10 ns, is our estimate of a tight
//!   Cortex-R4 loop at 400 MHz: about four cycles per block (load the block's tag word,
//!   compare its TVPN and dirty bit, branch, advance). It is not scaled with cores (a scan is
//!   one core's loop). The fmmu study sweeps it (`fmmu_study::SCAN_SWEEP_NS`), since CDFTL's
//!   random write depends on it.
//! - Command handling (T_FTL_cmd, 0.2 us on 1 core) is charged per sub-request issued to the
//!   flash and scales with cores as a hit.
//! - FMMU's flush follows next links: one operation per dirty block followed, at most 10 us.
//! - `ideal`: every time zero (fmmu.txt 5.3: "the FTL execution time is set to zero").

/// Map-cache scheme whose Fig. 10 times apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// One entry-level CMT in software.
    Dftl,
    /// CMT + CTP in software (flush by scanning the CMT).
    Cdftl,
    /// CMT + CTP in hardware (next links, MSHRs).
    Fmmu,
}

/// Ways of the caches Fig. 10's stated values were measured with.
pub const FIG10_WAYS: u32 = 4;

/// The flush-scan cost per CMT block when `ftl.flush_scan_ns_per_block` is not set (module doc:
/// about four Cortex-R4 cycles at 400 MHz; an estimate, not a figure of the paper).
pub const DEFAULT_FLUSH_SCAN_NS_PER_BLOCK: u64 = 10;

/// Time per operation, in nanoseconds, of one handler on one core (or on the map unit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct ExecTime {
    /// A Lookup or Update served by the first-level cache (the CMT).
    pub lookup_hit_ns: u64,
    /// A Lookup or Update that missed the CMT and hit the CTP (two-level caches).
    pub second_level_hit_ns: u64,
    /// A Lookup or Update that needs a translation page read.
    pub lookup_miss_ns: u64,
    /// One entry changed by GC's CondUpdate or by a TRIM.
    pub update_ns: u64,
    pub flush_base_ns: u64,
    pub flush_per_block_ns: u64,
    /// Flush cost cap (FMMU's "within 10 us"); `u64::MAX` for the software schemes.
    pub flush_max_ns: u64,
    /// Command handling outside the map cache (T_FTL_cmd).
    pub command_ns: u64,
    /// Charged on the hardware map unit (`charge_map_unit`) instead of a core.
    pub on_map_unit: bool,
}

/// Fig. 10 per-request hit time (ns) on 1 and 4 cores.
fn fig10_hit_ns(scheme: Scheme) -> (f64, f64) {
    match scheme {
        Scheme::Dftl => (1500.0, 400.0),
        Scheme::Cdftl => (4000.0, 1000.0),
        Scheme::Fmmu => (160.0, 160.0),
    }
}

/// Per-handler cost on a core of an FTL with `cores` cores, of an operation whose Fig. 10
/// per-request time is `one` on 1 core and `four` on 4 (see the module doc).
fn per_handler_ns(one: f64, four: f64, cores: u32) -> f64 {
    let (at1, at4) = (one, 4.0 * four);
    match cores {
        0 | 1 => at1,
        c if c >= 4 => at4,
        c => at1 + (at4 - at1) * f64::from(c - 1) / 3.0,
    }
}

impl ExecTime {
    /// Every time zero.
    pub fn ideal() -> Self {
        ExecTime::default()
    }

    /// Fig. 10's times for `scheme` on `cores` FTL cores (more than 4 cores: the 4-core cost),
    /// with a flush scan of `scan_ns_per_block` per CMT block (DFTL and CDFTL).
    pub fn fig10(scheme: Scheme, cores: u32, scan_ns_per_block: u64) -> Self {
        let (one, four) = fig10_hit_ns(scheme);
        if scheme == Scheme::Fmmu {
            return ExecTime {
                lookup_hit_ns: 160,
                second_level_hit_ns: 160,
                lookup_miss_ns: 160,
                update_ns: 160,
                flush_base_ns: 160,
                flush_per_block_ns: 160,
                flush_max_ns: 10_000,
                command_ns: 0,
                on_map_unit: true,
            };
        }
        let hit = per_handler_ns(one, four, cores);
        let scale = hit / one;
        let (dftl_one, dftl_four) = fig10_hit_ns(Scheme::Dftl);
        let cmt_hit = per_handler_ns(dftl_one, dftl_four, cores);
        let miss = if scheme == Scheme::Dftl {
            3.0 * hit
        } else {
            hit
        };
        let ns = |x: f64| x.round() as u64;
        ExecTime {
            lookup_hit_ns: ns(cmt_hit),
            second_level_hit_ns: ns(hit),
            lookup_miss_ns: ns(miss),
            update_ns: ns(hit),
            flush_base_ns: ns(hit),
            flush_per_block_ns: scan_ns_per_block,
            flush_max_ns: u64::MAX,
            command_ns: ns(200.0 * scale),
            on_map_unit: false,
        }
    }

    /// Cost of one flush that scanned (or, for FMMU, followed) `blocks` cache blocks.
    pub fn flush_ns(&self, blocks: u64) -> u64 {
        self.flush_per_block_ns
            .saturating_mul(blocks)
            .saturating_add(self.flush_base_ns)
            .min(self.flush_max_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCAN: u64 = DEFAULT_FLUSH_SCAN_NS_PER_BLOCK;

    #[test]
    fn dftl_times_match_fig10_text() {
        let one = ExecTime::fig10(Scheme::Dftl, 1, SCAN);
        assert_eq!(one.lookup_hit_ns, 1500);
        assert_eq!(one.lookup_miss_ns, 4500);
        assert_eq!(one.command_ns, 200);
        // Four cores: 1.6 us per handler, 0.4 us per request of the whole FTL.
        let four = ExecTime::fig10(Scheme::Dftl, 4, SCAN);
        assert_eq!(four.lookup_hit_ns, 1600);
        assert_eq!(four.lookup_hit_ns / 4, 400);
        // Two cores: between the two.
        let two = ExecTime::fig10(Scheme::Dftl, 2, SCAN);
        assert_eq!(two.lookup_hit_ns, 1533);
    }

    #[test]
    fn cdftl_and_fmmu_times_match_fig10_text() {
        let cdftl = ExecTime::fig10(Scheme::Cdftl, 4, SCAN);
        assert_eq!(cdftl.second_level_hit_ns / 4, 1000);
        assert_eq!(cdftl.lookup_miss_ns, cdftl.second_level_hit_ns);
        let one = ExecTime::fig10(Scheme::Cdftl, 1, SCAN);
        // Fig. 10(a)'s 4 us is a CMT miss that hits in the CTP; a CMT hit is DFTL's hit.
        assert_eq!(one.second_level_hit_ns, 4000);
        assert_eq!(one.lookup_hit_ns, 1500);
        let fmmu = ExecTime::fig10(Scheme::Fmmu, 1, SCAN);
        assert!(fmmu.on_map_unit);
        assert_eq!(fmmu.lookup_hit_ns, 160);
        assert_eq!(fmmu.second_level_hit_ns, 160);
        assert!(fmmu.flush_ns(100_000) <= 10_000);
    }

    #[test]
    fn flush_scan_costs_the_setting_per_block_whatever_the_cores() {
        let dftl = ExecTime::fig10(Scheme::Dftl, 1, 10);
        assert_eq!(dftl.flush_ns(0), 1500);
        assert_eq!(dftl.flush_ns(17_408), 1500 + 174_080);
        let four = ExecTime::fig10(Scheme::Cdftl, 4, 25);
        assert_eq!(four.flush_ns(1024), 4000 + 25 * 1024);
    }

    #[test]
    fn ideal_is_all_zero() {
        let ideal = ExecTime::ideal();
        assert_eq!(ideal.flush_ns(1_000_000), 0);
        assert_eq!(ideal.lookup_miss_ns + ideal.command_ns + ideal.update_ns, 0);
        assert_eq!(ideal.second_level_hit_ns, 0);
    }
}
