//! One bit per mapping entry, in 64-bit words, for the two-level cache's per-entry `changed`
//! and `pending` marks ([`super::twolevel_cache`]): a translation page's write takes its
//! marked entries by testing 16 words instead of 1,024 bytes, and a CMT block's flush moves
//! its marks a word at a time. The entries come out in ascending order, as the byte-per-entry
//! loops they replace gave them (same state, same write-backs).

use std::ops::Range;

#[derive(Debug, Clone)]
pub(super) struct EntryBits {
    words: Vec<u64>,
}

/// The bits of word `w` that fall in `range` (of entry numbers).
fn mask(w: usize, range: &Range<u32>) -> u64 {
    let (first, end) = (w as u64 * 64, w as u64 * 64 + 64);
    let lo = u64::from(range.start).max(first) - first;
    let hi = u64::from(range.end).min(end) - first;
    if hi <= lo {
        return 0;
    }
    let upper = if hi == 64 { u64::MAX } else { (1u64 << hi) - 1 };
    upper & !((1u64 << lo) - 1)
}

fn words_of(range: &Range<u32>) -> Range<usize> {
    if range.is_empty() {
        return 0..0;
    }
    (range.start / 64) as usize..(range.end as usize).div_ceil(64)
}

impl EntryBits {
    pub(super) fn new(entries: u32) -> Self {
        EntryBits {
            words: vec![0; (entries as usize).div_ceil(64)],
        }
    }

    pub(super) fn get(&self, i: u32) -> bool {
        self.words[(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    pub(super) fn set(&mut self, i: u32) {
        self.words[(i / 64) as usize] |= 1 << (i % 64);
    }

    /// Marks in `self` every entry of `range` marked in `from`, and clears them in `from`.
    pub(super) fn move_from(&mut self, from: &mut EntryBits, range: Range<u32>) {
        for w in words_of(&range) {
            let m = mask(w, &range);
            self.words[w] |= from.words[w] & m;
            from.words[w] &= !m;
        }
    }

    /// Clears the entries of `range` marked in `self` or (with `other`) in `other`, appending
    /// them to `out` in ascending order.
    pub(super) fn take_union(
        &mut self,
        mut other: Option<&mut EntryBits>,
        range: Range<u32>,
        out: &mut Vec<u32>,
    ) {
        for w in words_of(&range) {
            let m = mask(w, &range);
            let mut bits = self.words[w] & m;
            self.words[w] &= !m;
            if let Some(o) = other.as_deref_mut() {
                bits |= o.words[w] & m;
                o.words[w] &= !m;
            }
            while bits != 0 {
                out.push(w as u32 * 64 + bits.trailing_zeros());
                bits &= bits - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a byte per entry, on ranges that start and end inside and across words.
    #[test]
    fn the_bits_do_what_a_byte_per_entry_did() {
        let n = 300u32;
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let (mut a, mut b) = (EntryBits::new(n), EntryBits::new(n));
        let (mut ra, mut rb) = (vec![false; n as usize], vec![false; n as usize]);
        for _ in 0..2000 {
            let i = (next() % u64::from(n)) as u32;
            let (s, e) = {
                let x = (next() % u64::from(n + 1)) as u32;
                let y = (next() % u64::from(n + 1)) as u32;
                (x.min(y), x.max(y))
            };
            match next() % 4 {
                0 => {
                    a.set(i);
                    ra[i as usize] = true;
                }
                1 => {
                    b.set(i);
                    rb[i as usize] = true;
                }
                2 => {
                    b.move_from(&mut a, s..e);
                    for l in s..e {
                        if std::mem::take(&mut ra[l as usize]) {
                            rb[l as usize] = true;
                        }
                    }
                }
                _ => {
                    let both = next() % 2 == 0;
                    let mut got = Vec::new();
                    b.take_union(both.then_some(&mut a), s..e, &mut got);
                    let mut want = Vec::new();
                    for l in s..e {
                        let changed = both && std::mem::take(&mut ra[l as usize]);
                        if std::mem::take(&mut rb[l as usize]) || changed {
                            want.push(l);
                        }
                    }
                    assert_eq!(got, want, "{s}..{e} both {both}");
                }
            }
            for l in 0..n {
                assert_eq!(a.get(l), ra[l as usize]);
                assert_eq!(b.get(l), rb[l as usize]);
            }
        }
    }
}
