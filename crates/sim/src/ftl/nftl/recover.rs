//! Power-loss recovery of NFTL from its block headers and the sector numbers in the spare
//! areas (see the module docs of `nftl` and `ftl/mapping/recovery.rs`).

use super::{Nftl, NIL};
use crate::ftl::mapping::recovery::image_error;
use crate::ftl::mapping::RecoveryScan;
use crate::nand::{Nand, Spare};
use crate::SimError;

impl Nftl {
    pub(super) fn rebuild(
        &mut self,
        nand: &mut Nand,
        scan: &mut RecoveryScan,
    ) -> Result<(), SimError> {
        let layout = self.layout;
        let blocks = layout.blocks() as usize;
        let ppb = self.ppb;
        let vbs = self.sizing.virtual_blocks;
        // Per block: the virtual block its sectors belong to, and the replacement block its
        // page-0 header names.
        let mut vb_of = vec![NIL; blocks];
        let mut header = vec![NIL; blocks];
        let mut max_seq = 0;
        for b in 0..layout.blocks() {
            let mut sectors = Vec::new();
            scan.scan_block(nand, b, |ppn| {
                if let Some(lpn) = nand.oob(ppn).lpn() {
                    sectors.push(lpn);
                    max_seq = max_seq.max(nand.oob(ppn).seq());
                }
            });
            if let Ok(Spare::Programmed { tag, .. }) = nand.spare(layout.ppn(b, 0)) {
                header[b as usize] = tag.checked_sub(1).unwrap_or(NIL);
            }
            let Some(&first) = sectors.first() else {
                continue;
            };
            let vb = first / ppb;
            if vb >= vbs || sectors.iter().any(|&l| l / ppb != vb) {
                return Err(image_error(format!(
                    "nftl: block {b} holds sectors {:?}: not one virtual block of the {vbs} \
                     this configuration exports",
                    (sectors.iter().min(), sectors.iter().max())
                )));
            }
            vb_of[b as usize] = vb;
        }
        // A block whose header names a replacement is that virtual block's primary (even
        // with no sector of its own yet); the replacement belongs to it.
        for b in 0..blocks {
            let r = header[b];
            if r == NIL {
                continue;
            }
            let vb = vb_of.get(r as usize).copied().unwrap_or(NIL);
            if vb == NIL || (vb_of[b] != NIL && vb_of[b] != vb) {
                return Err(image_error(format!(
                    "nftl: the header of block {b} names block {r} as its replacement, which \
                     holds no sector of the same virtual block"
                )));
            }
            vb_of[b] = vb;
            self.assign(vb, b as u32, r)?;
        }
        for (b, &vb) in vb_of.iter().enumerate() {
            if vb == NIL || self.primary[vb as usize] == b as u32 {
                continue;
            }
            if self.replacement[vb as usize] == b as u32 {
                continue;
            }
            if self.primary[vb as usize] != NIL {
                return Err(image_error(format!(
                    "nftl: virtual block {vb} has two primary blocks ({} and {b}) and no \
                     header naming one a replacement",
                    self.primary[vb as usize]
                )));
            }
            self.primary[vb as usize] = b as u32;
        }
        for vb in 0..vbs {
            let r = self.replacement[vb as usize];
            if r != NIL {
                self.rep_next[vb as usize] = nand.block(r).write_ptr as u8;
            }
            let p = self.primary[vb as usize];
            for off in 0..ppb {
                let lpn = vb * ppb + off;
                if p != NIL {
                    let ppn = layout.ppn(p, off);
                    let own = nand.is_programmed(ppn) && nand.oob(ppn).lpn() == Some(lpn);
                    self.set_written(lpn, own);
                }
                if let Some(ppn) = self.current_copy(nand, vb, off) {
                    nand.mark_valid(ppn).map_err(|source| SimError::Nand {
                        ftl: "nftl",
                        source,
                    })?;
                    scan.units_recovered += 1;
                }
            }
        }
        let mut free: Vec<u32> = (0..layout.blocks())
            .filter(|&b| nand.block(b).write_ptr == 0)
            .collect();
        free.sort_by_key(|&b| (nand.block(b).erase_count, b));
        self.free = free.into();
        scan.count_blocks(nand);
        scan.max_sequence = scan.max_sequence.max(max_seq);
        self.seq = max_seq;
        Ok(())
    }

    /// Virtual block `vb` has primary `p` and replacement `r`.
    fn assign(&mut self, vb: u32, p: u32, r: u32) -> Result<(), SimError> {
        let i = vb as usize;
        if (self.primary[i] != NIL && self.primary[i] != p)
            || (self.replacement[i] != NIL && self.replacement[i] != r)
        {
            return Err(image_error(format!(
                "nftl: virtual block {vb} has two headers (primary {} or {p})",
                self.primary[i]
            )));
        }
        self.primary[i] = p;
        self.replacement[i] = r;
        Ok(())
    }
}
