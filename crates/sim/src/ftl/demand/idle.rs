//! Idle-time write-back of the map cache: once the host has been idle for
//! `ftl.idle_write_back_ns` (10 ms by default), every dirty entry is written back, batched per
//! translation page as the policy's own flushes are (DFTL: one eviction batch per page;
//! CDFTL and FMMU: CMT flushes into their pages, then the dirty CTP pages). A cache left full
//! of dirty entries (a sequential fill, a write burst) would otherwise make the next misses
//! wait for write-backs; firmware cleans it while nothing else runs. The timer is re-armed
//! while background GC runs (its moves dirty cached entries), background GC runs again after
//! the write-back (translation blocks it opened count against the die's free blocks), and
//! the timer is dropped when a host request arrives first. Preconditioning ends by sitting idle, so measurements start from a clean
//! cache, the state after a pause.

use super::{token, DemandFtl, TAG_IDLE, TAG_SHIFT};
use crate::ftl::FtlCtx;
use crate::SimError;

impl DemandFtl {
    /// Host idle: arms the write-back timer for this idle period (once).
    pub(super) fn arm_idle_write_back(&mut self, ctx: &mut FtlCtx<'_>) {
        let after = self.cfg.idle_write_back_ns;
        if after == 0 || self.idle_armed_at == Some(self.host_submits) {
            return;
        }
        self.idle_armed_at = Some(self.host_submits);
        ctx.wake_at(
            ctx.now().saturating_add(after),
            token(TAG_IDLE, self.host_submits & ((1 << TAG_SHIFT) - 1)),
        );
    }

    /// The timer of the idle period that began after `submits` host sub-requests fired:
    /// writes every dirty entry back, unless the host came back meanwhile.
    pub(super) fn idle_timer(
        &mut self,
        ctx: &mut FtlCtx<'_>,
        submits: u64,
    ) -> Result<(), SimError> {
        let current = self.host_submits & ((1 << TAG_SHIFT) - 1);
        if submits != current || ctx.host_outstanding() > 0 {
            return Ok(());
        }
        if self.background.iter().any(|&running| running) {
            self.idle_armed_at = None;
            self.arm_idle_write_back(ctx);
            return Ok(());
        }
        loop {
            let mut out = std::mem::take(&mut self.write_backs);
            let (dirty, blocks) = self.cache.clean_step(&mut out);
            let batches = out.len() as u64;
            self.flushed(ctx, blocks, out)?;
            self.stats.idle_write_backs += batches;
            if !dirty {
                break;
            }
        }
        // Translation blocks the write-backs opened may take a die below its background GC
        // watermark: collect now, and clean again after (GC moves dirty cached entries).
        for die in 0..self.layout.dies() {
            self.background_collect(ctx, die)?;
        }
        if self.background.iter().any(|&running| running) {
            self.idle_armed_at = None;
            self.arm_idle_write_back(ctx);
        }
        Ok(())
    }
}
