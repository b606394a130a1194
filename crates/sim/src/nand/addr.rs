//! Flat physical addresses and the arithmetic between them.
//!
//! Dies are numbered channel-major (`die = (channel * chips + chip) * dies_per_chip + die`),
//! planes die-major, blocks plane-major, pages block-major. A mapping-unit address is
//! `ppn * units_per_page + slot`. All fit in `u32` (checked when the device is validated).

use crate::config::Geometry;

/// Global die index.
pub type DieId = u32;
/// Global block index.
pub type BlockId = u32;
/// Global physical page number.
pub type Ppn = u32;
/// Global physical mapping-unit slot (`ppn * units_per_page + slot`).
pub type UnitAddr = u32;

/// Division by a constant, a shift when the divisor is a power of two (it usually is: NAND
/// geometries are), so address arithmetic on the hot path avoids hardware division.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Divisor {
    d: u32,
    shift: u32,
    pow2: bool,
}

impl Divisor {
    pub fn new(d: u32) -> Self {
        assert!(d > 0, "division by zero");
        Divisor {
            d,
            shift: d.trailing_zeros(),
            pow2: d.is_power_of_two(),
        }
    }
    #[inline]
    pub fn quotient(self, x: u32) -> u32 {
        if self.pow2 {
            x >> self.shift
        } else {
            x / self.d
        }
    }
    #[inline]
    pub fn remainder(self, x: u32) -> u32 {
        if self.pow2 {
            x & (self.d - 1)
        } else {
            x % self.d
        }
    }
}

/// Address arithmetic for one geometry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    pub page_bytes: u32,
    pub oob_bytes: u32,
    per_block: Divisor,
    per_plane: Divisor,
    per_die: Divisor,
    per_channel: Divisor,
}

impl Layout {
    /// Layout of a (validated) geometry.
    pub fn new(g: &Geometry) -> Self {
        Layout {
            channels: g.channels,
            chips_per_channel: g.chips_per_channel,
            dies_per_chip: g.dies_per_chip,
            planes_per_die: g.planes_per_die,
            blocks_per_plane: g.blocks_per_plane,
            pages_per_block: g.pages_per_block,
            page_bytes: g.page_bytes,
            oob_bytes: g.oob_bytes,
            per_block: Divisor::new(g.pages_per_block),
            per_plane: Divisor::new(g.blocks_per_plane),
            per_die: Divisor::new(g.planes_per_die * g.blocks_per_plane),
            per_channel: Divisor::new(g.chips_per_channel * g.dies_per_chip),
        }
    }
    pub fn dies(&self) -> u32 {
        self.channels * self.chips_per_channel * self.dies_per_chip
    }
    pub fn dies_per_channel(&self) -> u32 {
        self.chips_per_channel * self.dies_per_chip
    }
    pub fn planes(&self) -> u32 {
        self.dies() * self.planes_per_die
    }
    pub fn blocks(&self) -> u32 {
        self.planes() * self.blocks_per_plane
    }
    pub fn blocks_per_die(&self) -> u32 {
        self.planes_per_die * self.blocks_per_plane
    }
    pub fn pages(&self) -> u32 {
        self.blocks() * self.pages_per_block
    }
    #[inline]
    pub fn block_of(&self, ppn: Ppn) -> BlockId {
        self.per_block.quotient(ppn)
    }
    #[inline]
    pub fn page_in_block(&self, ppn: Ppn) -> u32 {
        self.per_block.remainder(ppn)
    }
    pub fn ppn(&self, block: BlockId, page: u32) -> Ppn {
        block * self.pages_per_block + page
    }
    #[inline]
    pub fn plane_of(&self, block: BlockId) -> u32 {
        self.per_plane.quotient(block)
    }
    #[inline]
    pub fn die_of(&self, block: BlockId) -> DieId {
        self.per_die.quotient(block)
    }
    /// Block `index` (0-based, plane-major) of plane `plane_in_die` on `die`.
    pub fn block(&self, die: DieId, plane_in_die: u32, index: u32) -> BlockId {
        (die * self.planes_per_die + plane_in_die) * self.blocks_per_plane + index
    }
    pub fn plane_in_die(&self, block: BlockId) -> u32 {
        self.plane_of(block) % self.planes_per_die
    }
    #[inline]
    pub fn channel_of(&self, die: DieId) -> u32 {
        self.per_channel.quotient(die)
    }
    /// Position of a die among the dies of its channel (the bus arbiter's slot).
    #[inline]
    pub fn slot_on_channel(&self, die: DieId) -> u32 {
        self.per_channel.remainder(die)
    }
    pub fn die_at(&self, channel: u32, chip: u32, die_in_chip: u32) -> DieId {
        (channel * self.chips_per_channel + chip) * self.dies_per_chip + die_in_chip
    }
    /// The `k`-th die of the channel-first striping order (channel, then chip, then die), so
    /// consecutive writes land on different channels first.
    pub fn striped_die(&self, k: u32) -> DieId {
        let k = k % self.dies();
        let channel = k % self.channels;
        let rest = k / self.channels;
        let chip = rest % self.chips_per_channel;
        let die_in_chip = rest / self.chips_per_channel;
        self.die_at(channel, chip, die_in_chip)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        Layout::new(&Geometry {
            channels: 2,
            chips_per_channel: 3,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 5,
            pages_per_block: 7,
            page_bytes: 4096,
            oob_bytes: 64,
        })
    }

    #[test]
    fn divisor_matches_hardware_division() {
        for d in [1, 2, 3, 7, 64, 96, 256, 1000] {
            let div = Divisor::new(d);
            for x in [0, 1, 5, 63, 64, 65, 1023, 123_456_789, u32::MAX] {
                assert_eq!(
                    (div.quotient(x), div.remainder(x)),
                    (x / d, x % d),
                    "{x} / {d}"
                );
            }
        }
    }

    #[test]
    fn addresses_round_trip() {
        let l = layout();
        assert_eq!(l.dies(), 12);
        let b = l.block(7, 1, 3);
        assert_eq!(l.die_of(b), 7);
        assert_eq!(l.plane_in_die(b), 1);
        let p = l.ppn(b, 4);
        assert_eq!(l.block_of(p), b);
        assert_eq!(l.page_in_block(p), 4);
    }

    #[test]
    fn striping_visits_channels_first_and_every_die_once() {
        let l = layout();
        let order: Vec<u32> = (0..l.dies()).map(|k| l.striped_die(k)).collect();
        assert_eq!(l.channel_of(order[0]), 0);
        assert_eq!(l.channel_of(order[1]), 1);
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(sorted, (0..12).collect::<Vec<_>>());
    }
}
