//! The demand-paged core's whole functional state as text ([`crate::ftl::Ftl::write_state`]),
//! for tests that reach one state two ways (preconditioning's fast data structures against the
//! state pinned before them, the bulk path against the full host path) and compare digests.
//!
//! What it covers, field by field: the host map (every entry), the block manager (per-block
//! state, durable pages, free queues, victim buckets: its `Debug`), the data frontiers (open
//! block, page, assembled OOB entries and data, GC sources), the write buffer and the queues of
//! waiting, blocked and stalled writes, program records and their completion order, flushes
//! waiting, the GTD, the per-translation-page copy of the entries last written to flash, the
//! translation frontier and open translation blocks, translation reads in flight and their
//! waiters, GC victims, reads and copy pages in flight, the entries GC moved while not cached
//! (per die, in order), the idle write-back timer, every counter, and the map cache
//! ([`super::cache::MapCachePolicy::write_state`]: what it holds, dirty bits, replacement
//! state, flush lists and counters, written by meaning rather than by representation, so a
//! faster structure holding the same state writes the same text). Scratch buffers that are
//! empty between handler calls are left out. The NAND state (OOB entries, valid bits, block
//! records) is the engine's; tests hash it from [`crate::nand::Nand`]'s accessors.

use std::fmt::{self, Write};

use super::DemandFtl;

impl DemandFtl {
    pub(super) fn write_digest(&self, out: &mut dyn Write) -> fmt::Result {
        writeln!(
            out,
            "{} {:?} {:?} {:?}",
            self.name, self.sizing, self.layout, self.upp
        )?;
        for lpn in 0..self.map.len() {
            write!(out, "{:?},", self.map.get(lpn))?;
        }
        writeln!(out)?;
        writeln!(out, "blocks {:?}", self.blocks)?;
        writeln!(out, "frontiers {:?}", self.frontiers)?;
        writeln!(
            out,
            "cursor {} written {} buffer {} waiting {:?}",
            self.cursor, self.units_written, self.buffer_used, self.waiting
        )?;
        writeln!(
            out,
            "records {:?} free {:?} done {:?} base {} flushes {:?} background {:?}",
            self.records,
            self.free_records,
            self.program_done,
            self.program_base,
            self.flushes,
            self.background
        )?;
        writeln!(out, "data {:?} {:?}", self.host_data, self.gc_data)?;
        writeln!(out, "gtd {:?}", self.gtd)?;
        writeln!(out, "flash copy {:?}", self.flash_copy)?;
        writeln!(
            out,
            "loading {:?} {:?} {:?}",
            self.loading.lists, self.loading.slab, self.loading.free
        )?;
        writeln!(
            out,
            "blocked {:?} retrying {} map frontier {:?} open {:?} turn {} seq {} in gc {}",
            self.blocked,
            self.retrying,
            self.map_frontier,
            self.map_open,
            self.map_die_turn,
            self.translation_seq,
            self.in_translation_gc
        )?;
        writeln!(
            out,
            "submits {} idle {:?} victims {:?}",
            self.host_submits, self.idle_armed_at, self.victims
        )?;
        writeln!(
            out,
            "gc reads {:?} free {:?} copy pages {:?} free {:?}",
            self.gc_reads, self.free_gc_reads, self.copy_pages, self.free_copy_pages
        )?;
        writeln!(
            out,
            "stalled {:?} spare {} placing {} gc uncached {:?} fruitless {:?}",
            self.stalled,
            self.stalled_spare.len(),
            self.placing_stalled,
            self.gc_uncached,
            self.fruitless_victims
        )?;
        writeln!(out, "stats {:?}", self.stats)?;
        writeln!(out, "exec {:?}", self.exec)?;
        self.cache.write_state(out)
    }
}
