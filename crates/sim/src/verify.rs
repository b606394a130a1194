//! Verification: a shadow copy of the last data version written to every host sector,
//! updated when a write or trim completes, against which every read is checked.
//!
//! Overlapping requests are ordered by the host interface, so when a read is served no write
//! to its sectors is in flight and the shadow holds exactly what the read must return.

use crate::SimError;

/// Last data version written per host sector (0: never written or trimmed).
#[derive(Debug, Clone)]
pub struct Shadow {
    versions: Vec<u64>,
    trim_unit_sectors: u64,
    checked_sectors: std::cell::Cell<u64>,
}

impl Shadow {
    /// A shadow of `sectors` host sectors; trims clear only whole aligned units of
    /// `trim_unit_sectors` (as the FTL does).
    pub fn new(sectors: u64, trim_unit_sectors: u64) -> Self {
        Shadow {
            versions: vec![0; sectors as usize],
            trim_unit_sectors: trim_unit_sectors.max(1),
            checked_sectors: std::cell::Cell::new(0),
        }
    }

    /// Records a completed write of `version` to `[first, first + count)`.
    pub fn write(&mut self, first: u64, count: u64, version: u64) {
        self.versions[first as usize..(first + count) as usize].fill(version);
    }

    /// Records a completed trim: whole trim units inside the range read as never written.
    pub fn trim(&mut self, first: u64, count: u64) {
        let u = self.trim_unit_sectors;
        let start = first.div_ceil(u) * u;
        let end = (first + count) / u * u;
        if start < end {
            self.versions[start as usize..end as usize].fill(0);
        }
    }

    /// Checks data delivered for `[first, first + versions.len())`.
    pub fn check(&self, first: u64, versions: &[u64], ftl: &str) -> Result<(), SimError> {
        let expected = &self.versions[first as usize..first as usize + versions.len()];
        if let Some(i) = (0..versions.len()).find(|&i| versions[i] != expected[i]) {
            return Err(SimError::Verify(format!(
                "FTL `{ftl}` returned data version {} for sector {}, but the last write there was version {}{}",
                versions[i],
                first + i as u64,
                expected[i],
                if expected[i] == 0 { " (never written or trimmed)" } else { "" }
            )));
        }
        self.checked_sectors
            .set(self.checked_sectors.get() + versions.len() as u64);
        Ok(())
    }

    /// Sectors checked so far.
    pub fn checked_sectors(&self) -> u64 {
        self.checked_sectors.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
