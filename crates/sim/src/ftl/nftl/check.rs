//! NFTL's invariants against the NAND state: the block map, replacement blocks and headers,
//! the page-status bitmap and the page cache agree with what the flash holds. Pages that are
//! not live data are skipped by their OOB: a header-only spare (flag [`FLAG_HEADER`], no
//! sector) and stale copies (not valid).

use super::{Nftl, FLAG_HEADER, NIL};
use crate::nand::{Nand, Spare};

impl Nftl {
    pub(super) fn check(&self, nand: &Nand) -> Result<(), String> {
        let mut owner = vec![NIL; self.sizing.physical_blocks as usize];
        for &b in &self.free {
            if nand.block(b).write_ptr != 0 {
                return Err(format!("free block {b} is not erased"));
            }
            owner[b as usize] = u32::MAX - 1;
        }
        for vb in 0..self.sizing.virtual_blocks {
            self.check_virtual_block(nand, vb, &mut owner)?;
        }
        if let Some(b) = owner.iter().position(|&o| o == NIL) {
            return Err(format!("block {b} is neither free nor mapped"));
        }
        for (lpn, ppn) in self.cache.entries() {
            let (vb, off) = (lpn / self.ppb, lpn % self.ppb);
            if self.current_copy(nand, vb, off) != Some(ppn) || !nand.is_valid(ppn) {
                return Err(format!("page cache sends sector {lpn} to stale page {ppn}"));
            }
        }
        Ok(())
    }

    fn check_virtual_block(&self, nand: &Nand, vb: u32, owner: &mut [u32]) -> Result<(), String> {
        let (p, r) = (self.primary[vb as usize], self.replacement[vb as usize]);
        for b in [p, r] {
            if b != NIL {
                if owner[b as usize] != NIL {
                    return Err(format!("block {b} of virtual block {vb} is used twice"));
                }
                owner[b as usize] = vb;
            }
        }
        if p == NIL {
            if r != NIL {
                return Err(format!(
                    "virtual block {vb} has a replacement but no primary"
                ));
            }
            return Ok(());
        }
        // The header in page 0's spare names the replacement block.
        let tag = match nand
            .spare(self.layout.ppn(p, 0))
            .map_err(|e| e.to_string())?
        {
            Spare::Programmed { tag, entry } => {
                if tag != 0 && entry.flags() & FLAG_HEADER == 0 {
                    return Err(format!("primary {p}: header without its flag"));
                }
                tag
            }
            Spare::Erased => 0,
        };
        let expected = if r == NIL { 0 } else { r + 1 };
        if tag != expected {
            return Err(format!(
                "virtual block {vb}: header of primary {p} says {tag}, replacement is {r}"
            ));
        }
        let mut valid = 0;
        for off in 0..self.ppb {
            let lpn = vb * self.ppb + off;
            let primary_page = self.layout.ppn(p, off);
            let in_primary = nand.is_programmed(primary_page);
            if in_primary && nand.oob(primary_page).lpn() != Some(lpn) {
                return Err(format!("primary {p} page {off} holds another sector"));
            }
            if in_primary != self.is_written(lpn) {
                return Err(format!(
                    "page-status bitmap of sector {lpn} is {}",
                    self.is_written(lpn)
                ));
            }
            if let Some(ppn) = self.current_copy(nand, vb, off) {
                if !nand.is_valid(ppn) {
                    return Err(format!(
                        "current copy of sector {lpn} (page {ppn}) is not valid"
                    ));
                }
                valid += 1;
            }
        }
        if r != NIL {
            for page in 0..self.ppb {
                let ppn = self.layout.ppn(r, page);
                let programmed = nand.is_programmed(ppn);
                if programmed != (page < u32::from(self.rep_next[vb as usize])) {
                    return Err(format!(
                        "replacement {r} page {page} disagrees with the free-page pointer"
                    ));
                }
                if programmed && nand.oob(ppn).lpn().map(|l| l / self.ppb) != Some(vb) {
                    return Err(format!(
                        "replacement {r} page {page} holds a sector of another virtual block"
                    ));
                }
            }
        }
        let held = nand.block(p).valid_units
            + if r == NIL {
                0
            } else {
                nand.block(r).valid_units
            };
        if held != valid {
            return Err(format!(
                "virtual block {vb}: {held} valid pages, {valid} current copies (a stale copy left valid)"
            ));
        }
        Ok(())
    }
}
