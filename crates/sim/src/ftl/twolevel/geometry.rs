//! Sizes of the two caches and the address arithmetic between map entries, CMT blocks and
//! translation pages (fmmu.txt section 4.2, Figs. 6-8).
//!
//! - A map entry (DPPN) is 4 bytes. A translation page holds `entries_per_tpage` consecutive
//!   entries; DLPN `l` belongs to TVPN `l / entries_per_tpage`.
//! - A CMT block holds `entries_per_cmt_block` consecutive entries (Fig. 6: a 64-byte block;
//!   we count its 64 bytes as 16 DPPNs and keep the header bits in the tag array, so that a
//!   power-of-two run never straddles two translation pages; Fig. 8 does the same with 2 DPPNs
//!   per block and 4 per page). CMT block number = `l / entries_per_cmt_block`.
//! - A CTP block is one translation page (Fig. 7); its block number is the TVPN.
//! - Each cache has `bytes / (block bytes x ways)` sets.
//!
//! The paper's device (16 GB, 4 KiB mapping units: 4 Mi entries = 16 MiB of map) has 64 KiB of
//! CMT and 1,024 KiB of CTP (5.1), i.e. 1/256 and 1/16 of its map. [`TwoLevelGeometry::scaled`]
//! keeps those fractions for a smaller map (never less than one set of each), so that a small
//! preset misses as often as the paper's device rather than holding its whole map.

/// Bytes of one map entry (a DPPN).
pub const ENTRY_BYTES: u32 = 4;

/// The CMT and CTP shapes (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TwoLevelGeometry {
    pub entries_per_tpage: u32,
    pub entries_per_cmt_block: u32,
    pub cmt_sets: u32,
    pub cmt_ways: u32,
    pub ctp_sets: u32,
    pub ctp_ways: u32,
}

impl TwoLevelGeometry {
    /// Shapes from byte sizes. `tpage_bytes` and `cmt_block_bytes` must be powers of two with
    /// `ENTRY_BYTES <= cmt_block_bytes <= tpage_bytes`; each cache must hold at least one set.
    pub fn new(
        tpage_bytes: u32,
        cmt_block_bytes: u32,
        cmt_bytes: u64,
        cmt_ways: u32,
        ctp_bytes: u64,
        ctp_ways: u32,
    ) -> Result<Self, String> {
        if !tpage_bytes.is_power_of_two() || !cmt_block_bytes.is_power_of_two() {
            return Err(format!(
                "translation page ({tpage_bytes} bytes) and CMT block ({cmt_block_bytes} bytes) sizes must be powers of two"
            ));
        }
        if !(ENTRY_BYTES..=tpage_bytes).contains(&cmt_block_bytes) {
            return Err(format!(
                "a CMT block of {cmt_block_bytes} bytes must hold 4 bytes (one entry) to {tpage_bytes} bytes (a translation page)"
            ));
        }
        let sets = |bytes: u64, block: u32, ways: u32, name: &str| {
            let set_bytes = u64::from(block) * u64::from(ways.max(1));
            match bytes / set_bytes {
                0 => Err(format!(
                    "{name} of {bytes} bytes holds no set of {ways} ways of {block}-byte blocks (at least {set_bytes} bytes)"
                )),
                n => Ok(n.min(u64::from(u32::MAX)) as u32),
            }
        };
        if cmt_ways == 0 || ctp_ways == 0 {
            return Err("CMT and CTP need at least 1 way".into());
        }
        Ok(TwoLevelGeometry {
            entries_per_tpage: tpage_bytes / ENTRY_BYTES,
            entries_per_cmt_block: cmt_block_bytes / ENTRY_BYTES,
            cmt_sets: sets(cmt_bytes, cmt_block_bytes, cmt_ways, "the CMT")?,
            cmt_ways,
            ctp_sets: sets(ctp_bytes, tpage_bytes, ctp_ways, "the CTP")?,
            ctp_ways,
        })
    }

    /// The paper's sizes (64 KiB CMT of 64-byte blocks, 1,024 KiB CTP of 4 KiB pages, both
    /// `ways`-way) scaled to a map of `entries` entries (module doc).
    pub fn scaled(entries: u64, ways: u32) -> Self {
        let map_bytes = entries * u64::from(ENTRY_BYTES);
        let (tpage, block) = (4096u32, 64u32);
        let at_least = |bytes: u64, unit: u32| bytes.max(u64::from(unit) * u64::from(ways));
        let cmt = at_least((map_bytes / 256).min(64 << 10), block);
        let ctp = at_least((map_bytes / 16).min(1024 << 10), tpage);
        Self::new(tpage, block, cmt, ways, ctp, ways).expect("the paper's shapes are valid")
    }

    /// TVPN of DLPN `lpn`.
    pub fn tvpn(&self, lpn: u32) -> u32 {
        lpn / self.entries_per_tpage
    }
    /// CMT block number of DLPN `lpn`.
    pub fn cmt_block(&self, lpn: u32) -> u32 {
        lpn / self.entries_per_cmt_block
    }
    /// TVPN of CMT block `block`.
    pub fn tvpn_of_block(&self, block: u32) -> u32 {
        block / self.cmt_blocks_per_tpage()
    }
    pub fn cmt_blocks_per_tpage(&self) -> u32 {
        self.entries_per_tpage / self.entries_per_cmt_block
    }
    pub fn cmt_slots(&self) -> u32 {
        self.cmt_sets * self.cmt_ways
    }
    pub fn ctp_slots(&self) -> u32 {
        self.ctp_sets * self.ctp_ways
    }
}

/// CDFTL's flush search (fmmu.txt 5.2: no structure links a translation page's dirty blocks,
/// so every CMT block is tested): appends the dirty slots of `tvpn` to `out` and returns the
/// number of blocks examined (all of them: the cost grows with the number of CMT blocks, and
/// falls as blocks grow). The simulator finds the same slots faster when the page's blocks
/// take fewer tag compares than the CMT has slots (a lookup of each, in slot order).
pub fn scan_dirty_blocks(
    cmt: &super::SetAssoc,
    geometry: &TwoLevelGeometry,
    tvpn: u32,
    out: &mut Vec<u32>,
) -> u32 {
    if cmt.dirty() == 0 {
        // Every block tested, none dirty (a shortcut of the simulator, not of the cost).
        return cmt.slots();
    }
    let per_page = geometry.cmt_blocks_per_tpage();
    let start = out.len();
    if u64::from(per_page) * u64::from(cmt.ways()) < u64::from(cmt.slots()) {
        let first = tvpn * per_page;
        cmt.dirty_slots_of_keys(first, per_page, out);
        out[start..].sort_unstable();
    } else {
        for slot in 0..cmt.slots() {
            if cmt.is_dirty(slot) && cmt.key(slot).map(|b| geometry.tvpn_of_block(b)) == Some(tvpn)
            {
                out.push(slot);
            }
        }
    }
    cmt.slots()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftl::twolevel::SetAssoc;

    #[test]
    fn the_papers_shapes() {
        let g = TwoLevelGeometry::new(4096, 64, 64 << 10, 4, 1024 << 10, 4).unwrap();
        assert_eq!((g.entries_per_tpage, g.entries_per_cmt_block), (1024, 16));
        assert_eq!((g.cmt_sets, g.ctp_sets), (256, 64));
        assert_eq!((g.cmt_slots(), g.ctp_slots()), (1024, 256));
        // 16 GB of 4 KiB units: the scaled shapes are the paper's.
        assert_eq!(TwoLevelGeometry::scaled(4 << 20, 4), g);
    }

    #[test]
    fn a_small_map_keeps_the_papers_fractions() {
        // 64 MiB of 4 KiB units = 16 Ki entries = 64 KiB of map: CMT 256 B, CTP 4 KiB ->
        // raised to one set of 4 ways each.
        let g = TwoLevelGeometry::scaled(16 << 10, 4);
        assert_eq!(
            (g.cmt_sets, g.cmt_ways, g.ctp_sets, g.ctp_ways),
            (1, 4, 1, 4)
        );
        // 1 GiB: 256 Ki entries = 1 MiB of map: CMT 4 KiB (64 blocks), CTP 64 KiB (16 pages).
        let g = TwoLevelGeometry::scaled(256 << 10, 4);
        assert_eq!((g.cmt_slots(), g.ctp_slots()), (64, 16));
    }

    #[test]
    fn addresses_follow_fig_8() {
        // Fig. 8: 4 DPPNs per translation page, 2 per CMT block: DLPN 10 is in TVPN 2.
        let g = TwoLevelGeometry::new(16, 8, 64, 2, 64, 2).unwrap();
        assert_eq!(g.tvpn(10), 2);
        assert_eq!(g.cmt_block(10), 5);
        assert_eq!(g.tvpn_of_block(5), 2);
        assert_eq!(g.cmt_blocks_per_tpage(), 2);
        // The paper's shapes: 64 CMT blocks of 16 entries per translation page.
        let g = TwoLevelGeometry::scaled(4 << 20, 4);
        assert_eq!(g.cmt_block(5000), 312);
        assert_eq!(g.tvpn_of_block(312), 4);
        assert_eq!(g.tvpn(5000), 4);
    }

    #[test]
    fn bad_shapes_are_refused_with_the_sizes() {
        let e = TwoLevelGeometry::new(4096, 48, 64 << 10, 4, 1 << 20, 4).unwrap_err();
        assert!(e.contains("48 bytes"), "{e}");
        let e = TwoLevelGeometry::new(4096, 64, 128, 4, 1 << 20, 4).unwrap_err();
        assert!(e.contains("at least 256 bytes"), "{e}");
    }

    #[test]
    fn the_cdftl_scan_finds_exactly_one_tvpns_dirty_blocks_and_examines_all() {
        let g = TwoLevelGeometry::new(16, 8, 64, 2, 64, 2).unwrap();
        let mut cmt = SetAssoc::new(g.cmt_sets, g.cmt_ways);
        // Blocks 4 and 5 are TVPN 2, block 6 TVPN 3; 4 and 6 dirty, 5 clean.
        for b in [4, 5, 6] {
            let s = cmt.allocate(b).unwrap().slot;
            cmt.fill(s);
            if b != 5 {
                cmt.mark_dirty(s);
            }
        }
        let mut out = Vec::new();
        assert_eq!(scan_dirty_blocks(&cmt, &g, 2, &mut out), 8);
        assert_eq!(out, vec![cmt.peek(4).unwrap()]);
    }

    /// With few blocks per page the scan looks each of the page's blocks up instead of
    /// testing every slot: the same slots, in slot order, and the same count examined.
    #[test]
    fn the_page_lookup_finds_what_testing_every_slot_finds() {
        // 16-entry pages, 4-entry CMT blocks (4 per page), 64 CMT slots in 4-way sets.
        let g = TwoLevelGeometry::new(64, 16, 1024, 4, 256, 4).unwrap();
        let mut cmt = SetAssoc::new(g.cmt_sets, g.cmt_ways);
        for i in 0..300u32 {
            let block = i * 37 % 101;
            if cmt.peek(block).is_some() {
                continue;
            }
            if let Ok(a) = cmt.allocate(block) {
                cmt.fill(a.slot);
                if block % 3 == 0 {
                    cmt.mark_dirty(a.slot);
                }
            }
        }
        let mut found = 0;
        for tvpn in 0..26 {
            let every: Vec<u32> = (0..cmt.slots())
                .filter(|&s| {
                    cmt.is_dirty(s) && cmt.key(s).map(|b| g.tvpn_of_block(b)) == Some(tvpn)
                })
                .collect();
            let mut out = vec![999];
            assert_eq!(scan_dirty_blocks(&cmt, &g, tvpn, &mut out), 64);
            assert_eq!(out[1..], every[..], "page {tvpn}");
            found += every.len();
        }
        assert!(found > 5, "{found} dirty blocks");
    }
}
