//! Block bookkeeping shared by the page-mapping FTLs: per-block state, free blocks per plane (used in
//! FIFO order, which spreads erases), closed blocks in per-plane buckets by valid-unit count
//! (greedy victim in O(buckets)), in closing order (FIFO victim) and scanned for cost-benefit.
//!
//! Translation blocks (the [`Stream::Map`] of demand-paged FTLs, holding mapping pages) are
//! kept apart: they have their own buckets, are never a data victim and have their own greedy
//! victim ([`Blocks::take_translation_victim`]), so mapping pages and host data never share a
//! block and each is collected by its own GC.
//!
//! Memory (docs/performance.md, "Memory"): a 20-byte record per block, a 4-byte free-queue
//! entry per block, and (units per block + 1) 4-byte bucket heads per plane; translation
//! buckets only for an FTL built [`Blocks::with_translation`], the close times only for the
//! policies that read them (FIFO, cost-benefit), the closed-order queues only for FIFO.

use std::collections::VecDeque;

use super::VictimPolicy;
use crate::flash::NIL;
use crate::nand::{BlockId, Layout};

/// Which open block a write goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Host,
    Gc,
    /// Translation pages (demand-paged mapping): blocks apart from data blocks.
    Map,
}

/// Life cycle of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockState {
    Free,
    /// Being filled by a stream's frontier, as plane `lane` of its program group.
    Open {
        stream: Stream,
        lane: u8,
    },
    /// Fully programmed, a GC candidate.
    Closed,
    /// Chosen by GC, being emptied.
    Victim,
}

/// 20 bytes: `state` takes 2 (the other states fill the niche of `Open`'s stream byte).
#[derive(Debug, Clone, Copy)]
struct BlockInfo {
    prev: u32,
    next: u32,
    /// Slot in `Blocks::heads` while closed: (kind x planes + plane) x (units per block + 1)
    /// + valid units, kind 1 for translation blocks.
    bucket: u32,
    /// Pages whose program completed (reads of later pages are served from the buffer); at
    /// most `geometry.pages_per_block` (<= 4096).
    durable_pages: u16,
    state: BlockState,
    /// Opened for [`Stream::Map`]: a translation block until erased.
    translation: bool,
}

/// Per-block state, free pools and victim structures.
#[derive(Debug)]
pub struct Blocks {
    layout: Layout,
    policy: VictimPolicy,
    units_per_block: u32,
    info: Vec<BlockInfo>,
    /// When each block was closed (units written then): only for FIFO and cost-benefit.
    closed_at: Vec<u64>,
    /// Whether `heads` has translation buckets ([`Blocks::with_translation`]).
    translation_buckets: bool,
    free: Vec<VecDeque<BlockId>>,
    heads: Vec<u32>,
    /// Closed data blocks of each plane in closing order: only for FIFO.
    closed_order: Vec<VecDeque<BlockId>>,
    closed_count: Vec<u32>,
    closed_translation: u32,
}

impl Blocks {
    /// Bookkeeping of data blocks only (an FTL that never opens [`Stream::Map`]).
    pub fn new(layout: Layout, units_per_page: u32, policy: VictimPolicy) -> Self {
        Self::build(layout, units_per_page, policy, false)
    }

    /// Bookkeeping of data and translation blocks (demand-paged mapping).
    pub fn with_translation(layout: Layout, units_per_page: u32, policy: VictimPolicy) -> Self {
        Self::build(layout, units_per_page, policy, true)
    }

    fn build(layout: Layout, units_per_page: u32, policy: VictimPolicy, translation: bool) -> Self {
        let units_per_block = layout.pages_per_block * units_per_page;
        let planes = layout.planes() as usize;
        let per_plane = layout.blocks_per_plane as usize;
        let mut free = vec![VecDeque::with_capacity(per_plane); planes];
        for b in 0..layout.blocks() {
            free[layout.plane_of(b) as usize].push_back(b);
        }
        let kinds = if translation { 2 } else { 1 };
        let blocks = layout.blocks() as usize;
        let reads_close_times = policy != VictimPolicy::Greedy;
        let fifo_capacity = if policy == VictimPolicy::Fifo {
            per_plane
        } else {
            0
        };
        Blocks {
            layout,
            policy,
            units_per_block,
            info: vec![
                BlockInfo {
                    state: BlockState::Free,
                    prev: NIL,
                    next: NIL,
                    bucket: 0,
                    durable_pages: 0,
                    translation: false,
                };
                blocks
            ],
            closed_at: vec![0; if reads_close_times { blocks } else { 0 }],
            translation_buckets: translation,
            free,
            // Data buckets of every plane, then translation buckets of every plane.
            heads: vec![NIL; kinds * planes * (units_per_block as usize + 1)],
            closed_order: (0..planes)
                .map(|_| VecDeque::with_capacity(fifo_capacity))
                .collect(),
            closed_count: vec![0; planes],
            closed_translation: 0,
        }
    }

    pub fn state(&self, b: BlockId) -> BlockState {
        self.info[b as usize].state
    }
    pub fn durable_pages(&self, b: BlockId) -> u32 {
        u32::from(self.info[b as usize].durable_pages)
    }
    pub fn add_durable_page(&mut self, b: BlockId) {
        self.info[b as usize].durable_pages += 1;
    }
    pub fn free_in_plane(&self, plane: u32) -> u32 {
        self.free[plane as usize].len() as u32
    }
    /// Free blocks of a die: the sum over its planes, or with `per_plane`, the fewest of a plane.
    pub fn free_in_die(&self, die: u32, per_plane: bool) -> u32 {
        let planes = self.planes_of(die);
        if per_plane {
            planes.map(|p| self.free_in_plane(p)).min().unwrap_or(0)
        } else {
            planes.map(|p| self.free_in_plane(p)).sum()
        }
    }
    pub fn planes_of(&self, die: u32) -> std::ops::Range<u32> {
        die * self.layout.planes_per_die..(die + 1) * self.layout.planes_per_die
    }
    /// Plane of `die` with the most free blocks (ties: lowest index).
    pub fn roomiest_plane(&self, die: u32) -> u32 {
        self.planes_of(die)
            .max_by_key(|&p| (self.free_in_plane(p), std::cmp::Reverse(p)))
            .expect("a die has planes")
    }

    /// Takes the oldest free block of `plane` and opens it for a stream.
    pub fn open(&mut self, plane: u32, stream: Stream, lane: u8) -> Option<BlockId> {
        assert!(
            stream != Stream::Map || self.translation_buckets,
            "a translation block needs Blocks::with_translation"
        );
        let b = self.free[plane as usize].pop_front()?;
        let i = &mut self.info[b as usize];
        i.state = BlockState::Open { stream, lane };
        i.durable_pages = 0;
        i.translation = stream == Stream::Map;
        Some(b)
    }

    /// Rebuilds the bookkeeping from the flash after a power cut (power-loss recovery): a
    /// block with nothing programmed is free (each plane's free blocks ordered by erase count,
    /// then index: the least worn is used first); every other block is closed with the valid
    /// units `nand` counts (the scan marked them), its programmed pages durable, and is a
    /// translation block where `translation(b)`. A partly written block is closed too (its
    /// free pages come back when GC collects it): the FTL opens fresh blocks for its writes.
    /// `now_units` is the close time cost-benefit and FIFO victims see.
    pub fn recover(
        &mut self,
        nand: &crate::nand::Nand,
        now_units: u64,
        translation: impl Fn(BlockId) -> bool,
    ) {
        let layout = self.layout;
        let policy = self.policy;
        let upp = self.units_per_block / layout.pages_per_block;
        *self = Self::build(layout, upp, policy, self.translation_buckets);
        for q in &mut self.free {
            q.clear();
        }
        let mut free: Vec<BlockId> = (0..layout.blocks())
            .filter(|&b| nand.block(b).write_ptr == 0)
            .collect();
        free.sort_by_key(|&b| (nand.block(b).erase_count, b));
        for b in free {
            self.free[layout.plane_of(b) as usize].push_back(b);
        }
        for b in 0..layout.blocks() {
            let meta = nand.block(b);
            if meta.write_ptr == 0 {
                continue;
            }
            let i = &mut self.info[b as usize];
            i.durable_pages = meta.write_ptr as u16;
            i.translation = self.translation_buckets && translation(b);
            self.close(b, meta.valid_units, now_units);
        }
    }

    /// Takes a closed block out of the victim structures and opens it for a stream at its
    /// write pointer (recovery adopting a partly written block as an FTL's open block).
    pub fn reopen(&mut self, b: BlockId, stream: Stream, lane: u8) {
        if self.info[b as usize].state != BlockState::Closed {
            return;
        }
        self.unlink(b);
        if self.info[b as usize].translation {
            self.closed_translation -= 1;
        } else {
            let plane = self.layout.plane_of(b) as usize;
            self.closed_count[plane] -= 1;
            if self.policy == VictimPolicy::Fifo {
                self.closed_order[plane].retain(|&x| x != b);
            }
        }
        self.info[b as usize].state = BlockState::Open { stream, lane };
    }

    /// Whether a block (open, closed or victim) is a translation block.
    pub fn is_translation(&self, b: BlockId) -> bool {
        self.info[b as usize].translation
    }

    /// Closed translation blocks (all planes).
    pub fn closed_translation(&self) -> u32 {
        self.closed_translation
    }

    /// Takes the closed translation block with the fewest valid units (greedy), if any.
    pub fn take_translation_victim(&mut self) -> Option<BlockId> {
        if self.closed_translation == 0 {
            return None;
        }
        let upb1 = self.units_per_block as usize + 1;
        let base = self.layout.planes() as usize * upb1;
        let mut best: Option<(usize, BlockId)> = None;
        for p in 0..self.layout.planes() as usize {
            let limit = best.map_or(upb1 - 1, |(v, _)| v);
            for v in 0..=limit {
                let head = self.heads[base + p * upb1 + v];
                if head != NIL {
                    if best.is_none_or(|(bv, _)| v < bv) {
                        best = Some((v, head));
                    }
                    break;
                }
            }
        }
        let (_, victim) = best?;
        self.unlink(victim);
        self.closed_translation -= 1;
        self.info[victim as usize].state = BlockState::Victim;
        Some(victim)
    }

    /// A fully programmed block becomes a GC candidate with `valid` units.
    pub fn close(&mut self, b: BlockId, valid: u32, now_units: u64) {
        self.info[b as usize].state = BlockState::Closed;
        if let Some(at) = self.closed_at.get_mut(b as usize) {
            *at = now_units;
        }
        self.link(b, valid);
        if self.info[b as usize].translation {
            self.closed_translation += 1;
            return;
        }
        let plane = self.layout.plane_of(b) as usize;
        if self.policy == VictimPolicy::Fifo {
            self.closed_order[plane].push_back(b);
        }
        self.closed_count[plane] += 1;
    }

    /// Closed blocks of a plane.
    pub fn closed_in_plane(&self, plane: u32) -> u32 {
        self.closed_count[plane as usize]
    }

    /// A closed block lost a valid unit (now has `valid`).
    pub fn on_invalidate(&mut self, b: BlockId, valid: u32) {
        if self.info[b as usize].state == BlockState::Closed {
            self.unlink(b);
            self.link(b, valid);
        }
    }

    /// Chooses and removes the victim among the closed blocks of `planes`.
    pub fn take_victim(
        &mut self,
        planes: impl Iterator<Item = u32>,
        now_units: u64,
    ) -> Option<BlockId> {
        let victim = match self.policy {
            VictimPolicy::Greedy => self.greedy(planes),
            VictimPolicy::Fifo => self.oldest(planes),
            VictimPolicy::CostBenefit => self.cost_benefit(planes, now_units),
        }?;
        self.unlink(victim);
        let plane = self.layout.plane_of(victim) as usize;
        self.closed_count[plane] -= 1;
        self.info[victim as usize].state = BlockState::Victim;
        Some(victim)
    }

    /// The fewest valid units of a closed block of `planes` (whether GC there can reclaim
    /// anything), without choosing it.
    pub fn fewest_valid(&self, planes: impl Iterator<Item = u32>) -> Option<u32> {
        let best = self.greedy(planes)?;
        let upb1 = self.units_per_block + 1;
        Some(self.info[best as usize].bucket % upb1)
    }

    /// An erased victim returns to its plane's free pool.
    pub fn release(&mut self, b: BlockId) {
        self.info[b as usize].state = BlockState::Free;
        self.info[b as usize].durable_pages = 0;
        self.info[b as usize].translation = false;
        self.free[self.layout.plane_of(b) as usize].push_back(b);
    }

    fn greedy(&self, planes: impl Iterator<Item = u32>) -> Option<BlockId> {
        let mut best: Option<(u32, BlockId)> = None;
        for p in planes {
            let base = p as usize * (self.units_per_block as usize + 1);
            let limit = best.map_or(self.units_per_block, |(v, _)| v);
            for v in 0..=limit {
                let head = self.heads[base + v as usize];
                if head != NIL {
                    if best.is_none_or(|(bv, _)| v < bv) {
                        best = Some((v, head));
                    }
                    break;
                }
            }
        }
        best.map(|(_, b)| b)
    }

    fn oldest(&mut self, planes: impl Iterator<Item = u32>) -> Option<BlockId> {
        let mut best: Option<(u64, u32)> = None;
        for p in planes {
            let q = &mut self.closed_order[p as usize];
            while let Some(&b) = q.front() {
                if self.info[b as usize].state == BlockState::Closed {
                    break;
                }
                q.pop_front();
            }
            if let Some(&b) = q.front() {
                let t = self.closed_at[b as usize];
                if best.is_none_or(|(bt, _)| t < bt) {
                    best = Some((t, p));
                }
            }
        }
        let (_, plane) = best?;
        self.closed_order[plane as usize].pop_front()
    }

    fn cost_benefit(&self, planes: impl Iterator<Item = u32>, now_units: u64) -> Option<BlockId> {
        let upb = self.units_per_block;
        let mut best: Option<(f64, BlockId)> = None;
        for p in planes {
            let base = p as usize * (upb as usize + 1);
            for v in 0..=upb {
                let mut b = self.heads[base + v as usize];
                while b != NIL {
                    let u = f64::from(v) / f64::from(upb);
                    let age = (now_units - self.closed_at[b as usize] + 1) as f64;
                    let score = if v == 0 {
                        f64::INFINITY
                    } else {
                        (1.0 - u) / (2.0 * u) * age
                    };
                    if best.is_none_or(|(s, _)| score > s) {
                        best = Some((score, b));
                    }
                    b = self.info[b as usize].next;
                }
            }
        }
        best.map(|(_, b)| b)
    }

    fn link(&mut self, b: BlockId, valid: u32) {
        let plane = self.layout.plane_of(b) as usize;
        let class = if self.info[b as usize].translation {
            self.layout.planes() as usize
        } else {
            0
        };
        let slot = (class + plane) * (self.units_per_block as usize + 1) + valid as usize;
        let head = self.heads[slot];
        let i = &mut self.info[b as usize];
        i.bucket = slot as u32;
        i.prev = NIL;
        i.next = head;
        if head != NIL {
            self.info[head as usize].prev = b;
        }
        self.heads[slot] = b;
    }

    fn unlink(&mut self, b: BlockId) {
        let BlockInfo {
            prev, next, bucket, ..
        } = self.info[b as usize];
        if prev != NIL {
            self.info[prev as usize].next = next;
        } else {
            self.heads[bucket as usize] = next;
        }
        if next != NIL {
            self.info[next as usize].prev = prev;
        }
    }

    /// Checks that bucket membership matches the valid counts and every block is accounted
    /// for exactly once; `valid` gives a block's valid units.
    pub fn check(&self, valid: impl Fn(BlockId) -> u32) -> Result<(), String> {
        self.check_with_victims(valid, |_| false)
    }

    /// [`Blocks::check`] for an FTL whose GC spans handlers: a block in state `Victim` is
    /// accepted (in no bucket) while `collecting(block)` says its collection is under way.
    pub fn check_with_victims(
        &self,
        valid: impl Fn(BlockId) -> u32,
        collecting: impl Fn(BlockId) -> bool,
    ) -> Result<(), String> {
        let upb = self.units_per_block as usize + 1;
        let mut seen = vec![false; self.info.len()];
        for (slot, &head) in self.heads.iter().enumerate() {
            let mut b = head;
            while b != NIL {
                if seen[b as usize] {
                    return Err(format!("block {b} linked twice"));
                }
                seen[b as usize] = true;
                let planes = self.layout.planes() as usize;
                let (plane, v) = ((slot / upb) % planes, (slot % upb) as u32);
                if (slot / upb >= planes) != self.info[b as usize].translation {
                    return Err(format!("block {b} in the buckets of the other block kind"));
                }
                if self.info[b as usize].state != BlockState::Closed {
                    return Err(format!("block {b} in a victim bucket but not closed"));
                }
                if self.layout.plane_of(b) as usize != plane || valid(b) != v {
                    return Err(format!(
                        "block {b} in bucket (plane {plane}, {v} valid) but has {} valid",
                        valid(b)
                    ));
                }
                b = self.info[b as usize].next;
            }
        }
        for (plane, q) in self.free.iter().enumerate() {
            for &b in q {
                if seen[b as usize] || self.info[b as usize].state != BlockState::Free {
                    return Err(format!("free block {b} of plane {plane} is also in use"));
                }
                seen[b as usize] = true;
            }
        }
        for (b, i) in self.info.iter().enumerate() {
            let ok = match i.state {
                BlockState::Open { .. } => !seen[b],
                BlockState::Victim => !seen[b] && collecting(b as BlockId),
                _ => seen[b],
            };
            if !ok {
                return Err(format!(
                    "block {b} in state {:?} is not accounted for once",
                    i.state
                ));
            }
        }
        Ok(())
    }

    /// Bytes [`Blocks::new`] (or with `translation`, [`Blocks::with_translation`]) would
    /// allocate: what [`Blocks::state_bytes`] then reports.
    pub fn estimate_bytes(
        layout: &Layout,
        units_per_page: u32,
        policy: VictimPolicy,
        translation: bool,
    ) -> u64 {
        let blocks = u64::from(layout.blocks());
        let kinds = if translation { 2 } else { 1 };
        let heads = kinds
            * u64::from(layout.planes())
            * (u64::from(layout.pages_per_block * units_per_page) + 1);
        let close_times = if policy == VictimPolicy::Greedy { 0 } else { 8 };
        let closed_order = if policy == VictimPolicy::Fifo { 4 } else { 0 };
        let per_block = std::mem::size_of::<BlockInfo>() as u64 + 4 + close_times + closed_order;
        blocks * per_block + heads * 4
    }

    /// Bytes held: records, close times, bucket heads and the queues' capacity.
    pub fn state_bytes(&self) -> u64 {
        let queued: usize = (self.free.iter().chain(&self.closed_order))
            .map(VecDeque::capacity)
            .sum();
        (self.info.len() * std::mem::size_of::<BlockInfo>()
            + self.closed_at.len() * 8
            + self.heads.len() * 4
            + queued * 4) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Geometry;

    fn one_plane(blocks: u32) -> Layout {
        Layout::new(&Geometry {
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 1,
            blocks_per_plane: blocks,
            pages_per_block: 4,
            ..Geometry::default()
        })
    }

    /// The estimate is what is allocated, for each policy, with and without translation
    /// buckets; only an FTL with translation blocks pays for their buckets.
    #[test]
    fn the_estimate_is_the_state_held() {
        let layout = one_plane(8);
        for policy in [
            VictimPolicy::Greedy,
            VictimPolicy::CostBenefit,
            VictimPolicy::Fifo,
        ] {
            let data = Blocks::new(layout, 2, policy);
            let both = Blocks::with_translation(layout, 2, policy);
            assert_eq!(
                data.state_bytes(),
                Blocks::estimate_bytes(&layout, 2, policy, false)
            );
            assert_eq!(
                both.state_bytes(),
                Blocks::estimate_bytes(&layout, 2, policy, true)
            );
            // One plane of 4 pages x 2 units: 9 more 4-byte heads.
            assert_eq!(both.state_bytes() - data.state_bytes(), 9 * 4);
        }
        assert_eq!(std::mem::size_of::<BlockInfo>(), 20);
    }

    #[test]
    #[should_panic(expected = "Blocks::with_translation")]
    fn a_translation_block_needs_translation_buckets() {
        Blocks::new(one_plane(4), 1, VictimPolicy::Greedy).open(0, Stream::Map, 0);
    }

    #[test]
    fn translation_blocks_are_apart_from_data_victims() {
        let mut blocks = Blocks::with_translation(one_plane(4), 1, VictimPolicy::Greedy);
        let data = blocks.open(0, Stream::Host, 0).unwrap();
        let map = blocks.open(0, Stream::Map, 0).unwrap();
        assert!(blocks.is_translation(map) && !blocks.is_translation(data));
        // The translation block is emptier, yet only the data block is a data victim.
        blocks.close(data, 3, 0);
        blocks.close(map, 0, 0);
        assert_eq!(blocks.closed_in_plane(0), 1);
        assert_eq!(blocks.closed_translation(), 1);
        blocks.check(|b| if b == data { 3 } else { 0 }).unwrap();
        assert_eq!(blocks.fewest_valid(0..1), Some(3));
        assert_eq!(blocks.take_victim(0..1, 1), Some(data));
        assert_eq!(blocks.take_victim(0..1, 1), None);
        assert_eq!(blocks.take_translation_victim(), Some(map));
        assert_eq!(blocks.take_translation_victim(), None);
        blocks.release(map);
        assert!(!blocks.is_translation(map));
    }
}
