//! Verification (verify runs): a shadow copy of the last data version written to every host
//! sector, updated when a write or trim completes, against which every read is checked; what
//! each read sub-request delivered, sector by sector; and what is durable, so a flush that
//! completes before data acknowledged ahead of it reached the flash is caught.
//!
//! Overlapping requests are ordered by the host interface, so when a read is served no write
//! to its sectors is in flight and the shadow holds exactly what the read must return.
//!
//! **Exactly once.** The engine opens a delivery record when it creates a read sub-request
//! ([`Shadow::begin_read`]); every [`Shadow::deliver`] for it must fall inside the
//! sub-request and must not repeat a sector; when the sub-request completes
//! ([`Shadow::end_read`]) every one of its sectors must have been delivered.
//!
//! **Durability.** A sector's data is durable once a program carrying its version (or a newer
//! one) completed on the flash. Programs report the (sector, version) pairs they carry when
//! the FTL issues them (read from the OOB entries' logical units and the page payload: unit
//! slot `i` holding logical unit `l` carries sectors `l * unit_sectors ..`) and are durable
//! when the flash scheduler completes them (at once in functional-only runs); the shadow keeps
//! the newest durable version of every sector. A flush must make durable every version
//! acknowledged before it arrived (NVMe's Flush semantics): when it arrives, the acknowledged
//! writes not yet durable are noted, and checked when it completes: that version or a newer
//! one must be on flash, even if a newer write replaced it meanwhile; data trimmed meanwhile
//! needs no durability (trims themselves are not tracked). Acknowledged writes are kept as
//! ranges until they are durable or overwritten, so the cost is a few array operations per
//! sector programmed.

use std::collections::HashMap;

use crate::flash::CmdId;
use crate::SimError;

/// What one read sub-request has delivered so far.
#[derive(Debug, Clone, Default)]
struct ReadDelivery {
    first: u64,
    sectors: u64,
    /// One bit per sector of the sub-request.
    delivered: Vec<u64>,
    count: u64,
    /// A read in flight (between begin_read and end_read).
    active: bool,
}

/// What is on flash, what was acknowledged and may not be, programs and flushes in flight.
#[derive(Debug, Clone, Default)]
struct Durability {
    /// Newest version per sector that a completed program carried.
    durable: Vec<u64>,
    /// Acknowledged writes (first sector, sectors, version) that may not be durable yet.
    acked: Vec<(u64, u64, u64)>,
    /// Length of `acked` after its last pruning (it is pruned when it doubles).
    acked_pruned_len: usize,
    /// (sector, version) pairs carried by each program in flight.
    programs: HashMap<CmdId, Vec<(u64, u64)>>,
    /// Emptied pair lists, reused.
    spare: Vec<Vec<(u64, u64)>>,
    /// Flushes in flight (by host request id): the (sector, version) pairs each needs durable.
    flushes: Vec<(u32, Vec<(u64, u64)>)>,
}

/// Last data version written per host sector (0: never written or trimmed), and the checks of
/// reads and flushes against it.
#[derive(Debug, Clone)]
pub struct Shadow {
    versions: Vec<u64>,
    trim_unit_sectors: u64,
    checked_sectors: u64,
    /// Delivery records of read sub-requests in flight, by sub-request id.
    reads: Vec<ReadDelivery>,
    durability: Durability,
    /// After power-loss recovery: one bit per sector whose content the shadow does not know
    /// yet (its first read adopts what it returns); empty otherwise.
    unknown: Vec<u64>,
}

fn verify_error(ftl: &str, message: String) -> SimError {
    SimError::Verify(format!("FTL `{ftl}` {message}"))
}

impl Shadow {
    /// A shadow of `sectors` host sectors; trims clear only whole aligned units of
    /// `trim_unit_sectors` (as the FTL does).
    pub fn new(sectors: u64, trim_unit_sectors: u64) -> Self {
        Shadow {
            versions: vec![0; sectors as usize],
            trim_unit_sectors: trim_unit_sectors.max(1),
            checked_sectors: 0,
            reads: Vec::new(),
            durability: Durability {
                durable: vec![0; sectors as usize],
                ..Durability::default()
            },
            unknown: Vec::new(),
        }
    }

    /// The shadow of a simulation recovered from a flash image (power-loss recovery): no
    /// sector's content is known. The first read of a sector adopts the version it returns
    /// (what survived is judged by the test that cut the power, which knows what was written
    /// and flushed); a write, or a trim of its whole unit, makes it known. From then on every
    /// read is checked as usual.
    pub fn recovered(sectors: u64, trim_unit_sectors: u64) -> Self {
        let mut shadow = Shadow::new(sectors, trim_unit_sectors);
        shadow.unknown = vec![u64::MAX; sectors.div_ceil(64) as usize];
        shadow
    }

    /// The version the shadow expects sector `s` to read, `None` while it does not know
    /// (after recovery, before the sector was read, written or trimmed) or outside the space.
    pub fn version(&self, s: u64) -> Option<u64> {
        if self.is_unknown(s) {
            return None;
        }
        self.versions.get(s as usize).copied()
    }

    fn is_unknown(&self, s: u64) -> bool {
        self.unknown
            .get((s / 64) as usize)
            .is_some_and(|w| w >> (s % 64) & 1 == 1)
    }

    fn make_known(&mut self, range: std::ops::Range<u64>) {
        if self.unknown.is_empty() {
            return;
        }
        for s in range {
            self.unknown[(s / 64) as usize] &= !(1 << (s % 64));
        }
    }

    /// Whether `version` of sector `s` still has to reach the flash: it is the last data
    /// written there (neither overwritten nor trimmed) and no program carried it yet.
    fn awaits_durability(&self, s: u64, version: u64) -> bool {
        self.versions[s as usize] == version && self.durability.durable[s as usize] < version
    }

    /// Drops acknowledged writes whose data is durable, overwritten or trimmed.
    fn prune_acked(&mut self) {
        let mut acked = std::mem::take(&mut self.durability.acked);
        acked.retain(|&(first, n, v)| (first..first + n).any(|s| self.awaits_durability(s, v)));
        self.durability.acked_pruned_len = acked.len();
        self.durability.acked = acked;
    }

    /// Records a completed (acknowledged) write of `version` to `[first, first + count)`.
    pub fn write(&mut self, first: u64, count: u64, version: u64) {
        self.make_known(first..first + count);
        self.versions[first as usize..(first + count) as usize].fill(version);
        self.durability.acked.push((first, count, version));
        if self.durability.acked.len() >= 2 * self.durability.acked_pruned_len.max(1024) {
            self.prune_acked();
        }
    }

    /// Records a completed trim: whole trim units inside the range read as never written (and
    /// need no durability).
    pub fn trim(&mut self, first: u64, count: u64) {
        let u = self.trim_unit_sectors;
        let start = first.div_ceil(u) * u;
        let end = (first + count) / u * u;
        if start < end {
            self.make_known(start..end);
            self.versions[start as usize..end as usize].fill(0);
            for (_, required) in &mut self.durability.flushes {
                required.retain(|(s, _)| !(start..end).contains(s));
            }
        }
    }

    /// Opens the delivery record of read sub-request `sub` over `[first, first + sectors)`.
    pub fn begin_read(&mut self, sub: u32, first: u64, sectors: u64) {
        let i = sub as usize;
        if self.reads.len() <= i {
            self.reads.resize_with(i + 1, ReadDelivery::default);
        }
        let r = &mut self.reads[i];
        r.first = first;
        r.sectors = sectors;
        r.count = 0;
        r.active = true;
        r.delivered.clear();
        r.delivered.resize(sectors.div_ceil(64) as usize, 0);
    }

    /// Checks data delivered to read sub-request `sub` for `[first, first + versions.len())`:
    /// the versions are the last written, the sectors belong to the sub-request, and none was
    /// delivered before.
    pub fn deliver(
        &mut self,
        sub: u32,
        first: u64,
        versions: &[u64],
        ftl: &str,
    ) -> Result<(), SimError> {
        self.check(first, versions, ftl)?;
        let r = self
            .reads
            .get_mut(sub as usize)
            .filter(|r| r.active)
            .ok_or_else(|| {
                verify_error(
                    ftl,
                    format!("delivered data for sub-request {sub}, which is not a read in flight"),
                )
            })?;
        let n = versions.len() as u64;
        if first < r.first || first + n > r.first + r.sectors {
            return Err(verify_error(
                ftl,
                format!(
                    "delivered sectors {first}..{} for a read of sectors {}..{}",
                    first + n,
                    r.first,
                    r.first + r.sectors
                ),
            ));
        }
        for s in first..first + n {
            let bit = s - r.first;
            let (word, mask) = ((bit / 64) as usize, 1u64 << (bit % 64));
            if r.delivered[word] & mask != 0 {
                return Err(verify_error(
                    ftl,
                    format!("delivered sector {s} twice for one read"),
                ));
            }
            r.delivered[word] |= mask;
        }
        r.count += n;
        Ok(())
    }

    /// Closes the delivery record of read sub-request `sub`: every sector must have been
    /// delivered.
    pub fn end_read(&mut self, sub: u32, ftl: &str) -> Result<(), SimError> {
        let Some(r) = self.reads.get_mut(sub as usize).filter(|r| r.active) else {
            return Ok(());
        };
        let result = if r.count == r.sectors {
            Ok(())
        } else {
            let missing = (0..r.sectors)
                .find(|&b| r.delivered[(b / 64) as usize] & (1 << (b % 64)) == 0)
                .map_or(r.first, |b| r.first + b);
            Err(verify_error(
                ftl,
                format!(
                    "completed a read of sectors {}..{} without delivering sector {missing} ({} of {} delivered)",
                    r.first,
                    r.first + r.sectors,
                    r.count,
                    r.sectors
                ),
            ))
        };
        r.active = false;
        result
    }

    /// Checks data read for `[first, first + versions.len())` against the last data written.
    pub fn check(&mut self, first: u64, versions: &[u64], ftl: &str) -> Result<(), SimError> {
        if first as usize + versions.len() > self.versions.len() {
            return Err(verify_error(
                ftl,
                format!("delivered sectors from {first}, beyond the logical space"),
            ));
        }
        if !self.unknown.is_empty() {
            for (i, &v) in versions.iter().enumerate() {
                let s = first + i as u64;
                if self.is_unknown(s) {
                    self.versions[s as usize] = v;
                    self.make_known(s..s + 1);
                }
            }
        }
        let expected = &self.versions[first as usize..first as usize + versions.len()];
        if let Some(i) = (0..versions.len()).find(|&i| versions[i] != expected[i]) {
            return Err(verify_error(
                ftl,
                format!(
                    "returned data version {} for sector {}, but the last write there was version {}{}",
                    versions[i],
                    first + i as u64,
                    expected[i],
                    if expected[i] == 0 { " (never written or trimmed)" } else { "" }
                ),
            ));
        }
        self.checked_sectors += versions.len() as u64;
        Ok(())
    }

    /// Sectors checked so far.
    pub fn checked_sectors(&self) -> u64 {
        self.checked_sectors
    }

    /// A program carrying `pairs` of (sector, version) was issued as command `cmd` (durable
    /// when [`Shadow::program_completed`] is called for it).
    pub fn program_issued(&mut self, cmd: CmdId, pairs: impl Iterator<Item = (u64, u64)>) {
        let mut list = self.durability.spare.pop().unwrap_or_default();
        list.clear();
        list.extend(pairs);
        self.durability.programs.insert(cmd, list);
    }

    /// The program `cmd` completed: what it carries is durable.
    pub fn program_completed(&mut self, cmd: CmdId) {
        if let Some(list) = self.durability.programs.remove(&cmd) {
            self.made_durable(list.iter().copied());
            self.durability.spare.push(list);
        }
    }

    /// `pairs` of (sector, version) are on flash.
    pub fn made_durable(&mut self, pairs: impl Iterator<Item = (u64, u64)>) {
        let durable = &mut self.durability.durable;
        for (s, v) in pairs {
            if let Some(d) = durable.get_mut(s as usize) {
                *d = (*d).max(v);
            }
        }
    }

    /// Flush request `req` arrived: everything acknowledged so far must be durable when it
    /// completes.
    pub fn flush_arrived(&mut self, req: u32) {
        self.prune_acked();
        let required: Vec<(u64, u64)> = self
            .durability
            .acked
            .iter()
            .flat_map(|&(first, n, v)| (first..first + n).map(move |s| (s, v)))
            .filter(|&(s, v)| self.awaits_durability(s, v))
            .collect();
        self.durability.flushes.push((req, required));
    }

    /// Flush request `req` completed: fails if data acknowledged before it is not durable
    /// (unless a trim of it completed meanwhile: the model does not track whether a trim is
    /// durable, so an FTL may drop trimmed data it had not programmed yet).
    pub fn flush_completed(&mut self, req: u32, ftl: &str) -> Result<(), SimError> {
        let flushes = &mut self.durability.flushes;
        let Some(i) = flushes.iter().position(|(r, _)| *r == req) else {
            return Ok(());
        };
        let (_, required) = flushes.swap_remove(i);
        let durable = &self.durability.durable;
        let lost: Vec<&(u64, u64)> = required
            .iter()
            .filter(|&&(s, v)| durable[s as usize] < v)
            .collect();
        match lost.first() {
            None => Ok(()),
            Some((s, v)) => Err(verify_error(
                ftl,
                format!(
                    "completed a flush while {} sectors acknowledged before it were not on flash yet (first: sector {s}, version {v}): a flush must wait for their programs",
                    lost.len()
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recovered_shadow_adopts_first_reads_then_checks() {
        let mut s = Shadow::recovered(128, 8);
        assert_eq!(s.version(3), None);
        s.check(0, &[4, 4, 7], "t").unwrap();
        assert_eq!(s.version(2), Some(7));
        assert!(s.check(2, &[8], "t").is_err(), "a known sector is checked");
        s.write(64, 8, 9);
        s.trim(72, 8);
        assert_eq!(
            (s.version(64), s.version(72), s.version(80)),
            (Some(9), Some(0), None)
        );
        assert!(s.check(72, &[1], "t").is_err());
        assert!(Shadow::new(8, 8).version(0) == Some(0));
    }

    #[test]
    fn detects_stale_data_and_honours_trim_units() {
        let mut s = Shadow::new(64, 8);
        s.write(0, 16, 5);
        s.check(0, &[5; 16], "t").unwrap();
        assert!(s.check(3, &[5, 4], "t").is_err());
        s.trim(4, 12); // only sectors 8..16 form a whole unit
        s.check(0, &[5; 8], "t").unwrap();
        s.check(8, &[0; 8], "t").unwrap();
        assert_eq!(s.checked_sectors(), 32);
    }

    #[test]
    fn every_sector_of_a_read_is_delivered_exactly_once() {
        let mut s = Shadow::new(256, 8);
        s.begin_read(3, 10, 100);
        s.deliver(3, 10, &[0; 60], "t").unwrap();
        s.deliver(3, 70, &[0; 40], "t").unwrap();
        s.end_read(3, "t").unwrap();
        // Totals match (100 sectors), but sector 11 twice and sector 109 never.
        s.begin_read(3, 10, 100);
        s.deliver(3, 10, &[0; 2], "t").unwrap();
        let twice = s.deliver(3, 11, &[0; 98], "t").unwrap_err().to_string();
        assert!(twice.contains("sector 11 twice"), "{twice}");
        s.begin_read(4, 10, 100);
        s.deliver(4, 10, &[0; 99], "t").unwrap();
        let missing = s.end_read(4, "t").unwrap_err().to_string();
        assert!(
            missing.contains("without delivering sector 109"),
            "{missing}"
        );
        s.begin_read(5, 10, 4);
        let outside = s.deliver(5, 12, &[0; 4], "t").unwrap_err().to_string();
        assert!(
            outside.contains("for a read of sectors 10..14"),
            "{outside}"
        );
    }

    #[test]
    fn a_flush_needs_what_was_acknowledged_before_it_on_flash() {
        let mut s = Shadow::new(64, 8);
        s.write(0, 8, 1);
        s.flush_arrived(7);
        s.write(8, 8, 2); // after the flush arrived: not its business
        let early = s.flush_completed(7, "t").unwrap_err().to_string();
        assert!(
            early.contains("8 sectors acknowledged before it"),
            "{early}"
        );
        s.flush_arrived(8);
        s.made_durable((0..8).map(|x| (x, 1)));
        assert!(
            s.flush_completed(8, "t").is_err(),
            "sectors 8..16 are not durable"
        );
        s.flush_arrived(9);
        s.made_durable((8..16).map(|x| (x, 2)));
        s.flush_completed(9, "t").unwrap();
    }

    #[test]
    fn programs_completed_before_the_ack_and_newer_versions_count() {
        let mut s = Shadow::new(64, 8);
        // Write-through: the program completes before the write is acknowledged.
        s.made_durable((0..8).map(|x| (x, 1)));
        s.write(0, 8, 1);
        // A newer version on flash covers an older acknowledged one.
        s.write(8, 8, 2);
        s.made_durable((8..16).map(|x| (x, 3)));
        // Trimmed data needs no durability.
        s.write(16, 8, 4);
        s.trim(16, 8);
        s.flush_arrived(1);
        s.flush_completed(1, "t").unwrap();
        // A program issued, then completed.
        s.write(24, 8, 5);
        s.flush_arrived(2);
        let cmd = CmdId::DONE;
        s.program_issued(cmd, (24..32).map(|x| (x, 5)));
        s.program_completed(cmd);
        s.flush_completed(2, "t").unwrap();
        // Trimmed while the flush is in flight, then written again: no longer required.
        s.write(32, 8, 6);
        s.flush_arrived(3);
        s.trim(32, 8);
        s.write(32, 8, 7);
        s.flush_completed(3, "t").unwrap();
        // Overwritten while the flush is in flight: the old version (or a newer) is required.
        s.write(40, 8, 8);
        s.flush_arrived(4);
        s.write(40, 8, 9);
        assert!(
            s.flush_completed(4, "t").is_err(),
            "version 8 never reached the flash"
        );
    }
}
