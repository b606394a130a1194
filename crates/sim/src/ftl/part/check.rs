//! Invariant checks of PaRT-FTL against the NAND state: the host map and the OOB agree, the
//! write buffer adds up, groups are in the state their blocks show, only the write way (and
//! the sealing group's parity way) has partly written blocks, and every stripe's parity is the
//! XOR of its members (a sealing group's: in RAM, and on flash as far as programmed).

use super::{GroupState, PartFtl, NONE};
use crate::nand::{Nand, OOB_FLAG_TRANSLATION};

impl PartFtl {
    pub(super) fn check(&self, nand: &Nand) -> Result<(), String> {
        self.map.check(nand, &self.layout, |lpn, unit| {
            Err(format!("L2P maps page {lpn} to unprogrammed page {unit}"))
        })?;
        self.check_buffer()?;
        for group in 0..self.groups {
            self.check_group(nand, group)?;
        }
        Ok(())
    }

    fn check_buffer(&self) -> Result<(), String> {
        let mut pending = 0;
        for (s, slot) in self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, slot)| slot.pending)
        {
            pending += 1;
            if self.buffered[slot.lpn as usize] != s as u32 {
                return Err(format!(
                    "pending slot {s} of page {} is not its buffered copy",
                    slot.lpn
                ));
            }
        }
        let buffered = self.buffered.iter().filter(|&&s| s != NONE).count();
        if buffered != pending || pending != self.pending_pages {
            return Err(format!(
                "{buffered} pages buffered, {pending} slots pending, {} counted pending",
                self.pending_pages
            ));
        }
        let in_flight = self.busy.iter().filter(|&&b| b).count();
        if in_flight == 0 && self.buffer_used != pending as u64 {
            return Err(format!(
                "buffer counts {} pages with {pending} pending and nothing in flight",
                self.buffer_used
            ));
        }
        if self.write_way >= self.parity_way() {
            return Err(format!("write way {} of {}", self.write_way, self.ways));
        }
        Ok(())
    }

    /// Pages written in each block of a group must match its state: free groups empty,
    /// closed ones full, the open one full on earlier ways, empty on later ones.
    fn check_group(&self, nand: &Nand, group: u32) -> Result<(), String> {
        let state = self.group_state[group as usize];
        let n = self.pages_per_block;
        for channel in 0..self.channels {
            for way in 0..self.ways {
                let block = self.block(self.die(channel, way), group);
                let written = nand.block(block).write_ptr;
                let ok = match state {
                    GroupState::Free => written == 0,
                    GroupState::Closed | GroupState::Victim => written == n,
                    GroupState::Sealing => way == self.parity_way() || written == n,
                    GroupState::Erasing => written == 0 || self.needs_erase[block as usize],
                    GroupState::Open if way < self.write_way => written == n,
                    GroupState::Open if way > self.write_way => written == 0,
                    GroupState::Open => true,
                };
                if !ok {
                    return Err(format!(
                        "group {group} ({state:?}, write way {}): block {block} on channel \
                         {channel} way {way} has {written} of {n} pages written",
                        self.write_way
                    ));
                }
            }
        }
        match state {
            GroupState::Closed | GroupState::Victim => self.check_parity(nand, group, None),
            GroupState::Sealing => self.check_parity(nand, group, Some(&self.sealing_parity)),
            GroupState::Open => self.check_running_parity(nand, group),
            GroupState::Erasing if self.group_valid_in(nand, group) != 0 => {
                Err(format!("erasing group {group} holds valid data"))
            }
            _ => Ok(()),
        }
    }

    /// XOR of a stripe's data pages on ways `0 .. ways_end`, into `acc`.
    fn xor_members(
        &self,
        nand: &Nand,
        group: u32,
        channel: u32,
        page: u32,
        ways_end: u32,
        acc: &mut [u64],
    ) {
        acc.fill(0);
        for way in 0..ways_end {
            let ppn = self
                .layout
                .ppn(self.block(self.die(channel, way), group), page);
            Self::xor_into(acc, nand.unit_data(ppn));
        }
    }

    /// Every parity page of a closed group is valid, flagged, and the XOR of its stripe; of
    /// a sealing group (`ram`: its parity kept in RAM), the pages programmed so far, and the
    /// RAM copy of every stripe.
    fn check_parity(&self, nand: &Nand, group: u32, ram: Option<&[u64]>) -> Result<(), String> {
        let mut acc = vec![0; self.spp];
        for channel in 0..self.channels {
            let parity_block = self.block(self.die(channel, self.parity_way()), group);
            for page in 0..self.pages_per_block {
                if let Some(ram) = ram.filter(|_| nand.has_payloads()) {
                    self.xor_members(nand, group, channel, page, self.parity_way(), &mut acc);
                    if acc[..] != ram[self.parity_range(channel, page)] {
                        return Err(format!(
                            "sealing group {group}: parity in RAM of page {page} on channel \
                             {channel} is not the XOR of its stripe"
                        ));
                    }
                }
                if ram.is_some() && page >= nand.block(parity_block).write_ptr {
                    continue;
                }
                let ppn = self.layout.ppn(parity_block, page);
                if !nand.is_valid(ppn) || nand.oob(ppn).flags() & OOB_FLAG_TRANSLATION == 0 {
                    return Err(format!(
                        "group {group}: parity page {page} on channel {channel} is not a live parity page"
                    ));
                }
                if !nand.has_payloads() {
                    continue;
                }
                self.xor_members(nand, group, channel, page, self.parity_way(), &mut acc);
                if acc != nand.unit_data(ppn) {
                    return Err(format!(
                        "group {group}: parity page {page} on channel {channel} is not the XOR of its stripe"
                    ));
                }
            }
        }
        Ok(())
    }

    /// The running parity of the open group is the XOR of the pages written so far.
    fn check_running_parity(&self, nand: &Nand, group: u32) -> Result<(), String> {
        if !nand.has_payloads() {
            return Ok(());
        }
        let mut acc = vec![0; self.spp];
        let ways_end = (self.write_way + 1).min(self.parity_way());
        for channel in 0..self.channels {
            for page in 0..self.pages_per_block {
                acc.fill(0);
                for way in 0..ways_end {
                    let ppn = self
                        .layout
                        .ppn(self.block(self.die(channel, way), group), page);
                    if nand.is_programmed(ppn) {
                        Self::xor_into(&mut acc, nand.unit_data(ppn));
                    }
                }
                if acc[..] != self.parity[self.parity_range(channel, page)] {
                    return Err(format!(
                        "open group {group}: running parity of page {page} on channel {channel} \
                         is not the XOR of the pages written"
                    ));
                }
            }
        }
        Ok(())
    }
}
