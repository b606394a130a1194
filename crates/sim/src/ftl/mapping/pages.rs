//! The host side of the FTLs that map whole pages without a write buffer (`wao-gc`, `rtgc`):
//! a page-chopped sub-request's logical page and sector range, the data versions a page write
//! programs (merged with the old copy for a partial write), reads delivered from the page's
//! data, and trims of whole pages.

use super::{Blocks, MapTable};
use crate::flash::CmdId;
use crate::ftl::{FtlCtx, Issue};
use crate::host::SubRequest;
use crate::nand::{Nand, Ppn};
use crate::SimError;

/// Page-granularity host data path (buffers reused across requests).
#[derive(Debug, Clone)]
pub struct PageData {
    sectors_per_page: u64,
    page_bytes: u32,
    /// Data versions of the page a host write programs, or a read delivers.
    host_data: Vec<u64>,
    zeros: Vec<u64>,
}

impl PageData {
    pub fn new(sectors_per_page: u32, page_bytes: u32) -> Self {
        PageData {
            sectors_per_page: u64::from(sectors_per_page),
            page_bytes,
            host_data: vec![0; sectors_per_page as usize],
            zeros: vec![0; sectors_per_page as usize],
        }
    }

    /// The logical page of a (page-chopped) sub-request and its sector range in the page.
    pub fn piece(&self, sub: &SubRequest) -> (u32, usize, usize) {
        let lpn = sub.first_sector / self.sectors_per_page;
        let s0 = (sub.first_sector % self.sectors_per_page) as usize;
        (lpn as u32, s0, s0 + sub.sectors as usize)
    }

    /// Pages a request of `sectors` sectors fills (at least 1).
    pub fn pages_of(&self, sectors: u64) -> u64 {
        sectors.div_ceil(self.sectors_per_page).max(1)
    }

    /// Whether sectors `s0 .. s1` are the whole page.
    pub fn is_full(&self, s0: usize, s1: usize) -> bool {
        s0 == 0 && s1 == self.sectors_per_page as usize
    }

    /// The data versions of a host page write: sectors `written` get `version`, the others
    /// come from the page's old copy `old` (a partial write), or are never written (0).
    pub fn merge_host_data(
        &mut self,
        nand: &Nand,
        old: Option<Ppn>,
        written: std::ops::Range<usize>,
        version: u64,
    ) {
        match old {
            Some(old) => self.host_data.copy_from_slice(nand.unit_data(old)),
            None => self.host_data.fill(0),
        }
        self.host_data[written].fill(version);
    }

    /// The data versions [`PageData::merge_host_data`] made.
    pub fn host_data(&self) -> &[u64] {
        &self.host_data
    }

    /// Serves a read sub-request: delivers the page's data (zeros when unmapped) and reads the
    /// page with the request's deadline, after `after`.
    pub fn read(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        map: &MapTable,
        sub: &SubRequest,
        after: &[CmdId],
    ) -> Result<(), SimError> {
        let (lpn, s0, s1) = self.piece(sub);
        let first = u64::from(lpn) * self.sectors_per_page + s0 as u64;
        match map.get(lpn) {
            None => ctx.deliver(sub.id, first, &self.zeros[s0..s1])?,
            Some(ppn) => {
                if ctx.payloads() {
                    let data = &ctx.nand().unit_data(ppn)[s0..s1];
                    self.host_data[..s1 - s0].copy_from_slice(data);
                    ctx.deliver(sub.id, first, &self.host_data[..s1 - s0])?;
                }
                let issue = Issue::host(sub.id).deadline(sub.deadline_ns).after(after);
                ctx.read(&[ppn], self.page_bytes, issue)?;
            }
        }
        ctx.complete(sub.id);
        Ok(())
    }

    /// Serves a trim: unmaps the whole pages it covers.
    pub fn trim(
        &self,
        ctx: &mut FtlCtx<'_>,
        map: &mut MapTable,
        blocks: &mut Blocks,
        sub: &SubRequest,
    ) -> Result<(), SimError> {
        let spp = self.sectors_per_page;
        let first = sub.first_sector.div_ceil(spp);
        let end = ((sub.first_sector + sub.sectors) / spp).min(u64::from(map.len()));
        for lpn in first..end {
            if let Some(old) = map.take(lpn as u32) {
                map.invalidate_programmed(ctx, blocks, old)?;
            }
        }
        ctx.complete(sub.id);
        Ok(())
    }
}
