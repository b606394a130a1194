//! The entries GC moved while not cached, per die ([`GcUncached`]): written to their
//! translation pages when the die's victim is erased, or cached dirty when a host miss
//! installs one first.
//!
//! The lists are what they were (a `Vec<u32>` per die, pushed, searched and swap-removed in the
//! same order, so every write-back carries the same entries in the same order); a count per
//! logical unit of its occurrences in all lists lets an install skip the search of every
//! die's list when the unit is in none, which is nearly always (the search was a linear scan of
//! each die's list per install: a tenth of preconditioning's time on `fmmu-16ch`). One byte per
//! logical unit; a count reaching 255 sticks there and the unit is always searched.

use std::fmt;

/// Per die, the logical units GC moved while not cached (module doc).
pub(super) struct GcUncached {
    lists: Vec<Vec<u32>>,
    /// Occurrences of each unit in `lists` (255: at least that many, always searched).
    count: Vec<u8>,
}

const STICKY: u8 = u8::MAX;

impl GcUncached {
    pub(super) fn new(dies: u32, logical_units: u32) -> Self {
        GcUncached {
            lists: vec![Vec::new(); dies as usize],
            count: vec![0; logical_units as usize],
        }
    }

    /// Appends `lpn` to `die`'s list.
    pub(super) fn push(&mut self, die: u32, lpn: u32) {
        self.lists[die as usize].push(lpn);
        let c = &mut self.count[lpn as usize];
        if *c != STICKY {
            *c += 1;
        }
    }

    /// Whether `lpn` is in any die's list.
    pub(super) fn contains(&self, lpn: u32) -> bool {
        match self.count[lpn as usize] {
            0 => false,
            STICKY => self.lists.iter().any(|l| l.contains(&lpn)),
            _ => true,
        }
    }

    /// Removes the first occurrence of `lpn` from each die's list (swap-remove, as the lists
    /// always were); returns how many it removed.
    pub(super) fn remove_each(&mut self, lpn: u32) -> u32 {
        if self.count[lpn as usize] == 0 {
            return 0;
        }
        let mut removed = 0;
        for moved in &mut self.lists {
            if let Some(i) = moved.iter().position(|&l| l == lpn) {
                moved.swap_remove(i);
                removed += 1;
            }
        }
        self.uncount(lpn, removed);
        removed
    }

    /// Takes `die`'s list out (give the emptied vector back with [`Self::restore`]).
    pub(super) fn take(&mut self, die: u32) -> Vec<u32> {
        let list = std::mem::take(&mut self.lists[die as usize]);
        for &lpn in &list {
            self.uncount(lpn, 1);
        }
        list
    }

    /// Puts `die`'s (emptied) list back, keeping its capacity.
    pub(super) fn restore(&mut self, die: u32, mut list: Vec<u32>) {
        debug_assert!(self.lists[die as usize].is_empty());
        list.clear();
        self.lists[die as usize] = list;
    }

    fn uncount(&mut self, lpn: u32, n: u32) {
        let c = &mut self.count[lpn as usize];
        if *c != STICKY {
            *c -= n as u8;
        }
    }
}

/// The lists, as the digest has always written them.
impl fmt::Debug for GcUncached {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.lists.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_follow_the_lists_and_removal_takes_one_per_die() {
        let mut u = GcUncached::new(2, 8);
        u.push(0, 3);
        u.push(1, 3);
        u.push(0, 3);
        u.push(0, 5);
        assert!(u.contains(3) && u.contains(5) && !u.contains(4));
        assert_eq!(u.remove_each(3), 2, "one from each die");
        assert!(u.contains(3), "die 0 held it twice");
        assert_eq!(u.remove_each(4), 0);
        let list = u.take(0);
        assert_eq!(list.len(), 2);
        assert!(!u.contains(3) && !u.contains(5));
        u.restore(0, list);
        assert_eq!(format!("{u:?}"), "[[], []]");
    }

    #[test]
    fn a_sticky_count_still_finds_the_unit() {
        let mut u = GcUncached::new(1, 2);
        for _ in 0..300 {
            u.push(0, 1);
        }
        assert_eq!(u.remove_each(1), 1);
        assert!(u.contains(1));
        let list = u.take(0);
        assert_eq!(list.len(), 299);
        u.restore(0, list);
        assert!(!u.contains(1), "searched: in no list");
    }
}
