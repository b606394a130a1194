//! The simulator's few large arrays (NAND OOB entries and valid bits, the FTL's mapping table):
//! tens of MiB to GiB, read at random addresses, so on large devices most accesses also miss
//! the TLB. On Linux they ask the kernel for transparent huge pages (`madvise(MADV_HUGEPAGE)`,
//! which the default `madvise` mode of `/sys/kernel/mm/transparent_hugepage/enabled` honours)
//! before they are first written, so 2 MiB pages back them and a random access costs one cache
//! miss instead of a miss plus a page walk (docs/performance.md, "Scaling").
//!
//! Purely a hint: contents, results and the bytes counted are the same with or without it, and
//! a kernel that refuses the hint (or another system) just keeps 4 KiB pages.

/// Arrays below this size stay as they are (they fit in caches; a huge page would be mostly
/// empty).
const HUGE_PAGE_BYTES: usize = 2 << 20;

/// `n` copies of `value`, backed by huge pages where the system offers them.
pub fn filled<T: Copy>(n: usize, value: T) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    advise_huge_pages(&v);
    v.resize(n, value);
    v
}

#[cfg(target_os = "linux")]
fn advise_huge_pages<T>(v: &Vec<T>) {
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes < HUGE_PAGE_BYTES {
        return;
    }
    // The advice covers the whole 4 KiB pages inside the allocation (madvise needs a
    // page-aligned start); the kernel uses huge pages for the 2 MiB-aligned parts.
    let start = v.as_ptr() as usize;
    let aligned = start.next_multiple_of(4096);
    let len = (start + bytes).saturating_sub(aligned) / 4096 * 4096;
    if len == 0 {
        return;
    }
    // SAFETY: madvise only advises the kernel about pages of this process inside an
    // allocation the vector owns; it reads or writes no memory, and MADV_HUGEPAGE does not
    // change the contents. Its result is ignored on purpose: refusing is allowed.
    unsafe {
        libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_v: &Vec<T>) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_holds_the_value_and_the_length() {
        for n in [0, 1, 1000, (HUGE_PAGE_BYTES / 4) + 17] {
            let v = filled(n, 0xdead_beef_u32);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == 0xdead_beef));
        }
    }

    /// On Linux with transparent huge pages available, a large array is backed by some (the
    /// AnonHugePages of the mapping holding it, in /proc/self/smaps); skipped where THP is off.
    #[cfg(target_os = "linux")]
    #[test]
    fn large_arrays_get_huge_pages_where_offered() {
        let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        if !(mode.contains("[madvise]") || mode.contains("[always]")) {
            eprintln!("transparent huge pages off ({mode:?}): nothing to check");
            return;
        }
        let v = filled(64 << 20, 1u8);
        let huge_kib = huge_pages_kib_of(v.as_ptr() as usize + v.len() / 2);
        assert_eq!(v[12345], 1);
        assert!(
            huge_kib >= 2048,
            "64 MiB array: {huge_kib} KiB of huge pages"
        );
    }

    /// AnonHugePages (KiB) of the mapping of this process that contains `addr`.
    #[cfg(target_os = "linux")]
    fn huge_pages_kib_of(addr: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
        let mut inside = false;
        for line in smaps.lines() {
            let range = line
                .split_whitespace()
                .next()
                .and_then(|r| r.split_once('-'));
            if let Some((lo, hi)) = range {
                if let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                {
                    inside = (lo..hi).contains(&addr);
                    continue;
                }
            }
            if inside && line.starts_with("AnonHugePages:") {
                return line
                    .split_whitespace()
                    .nth(1)
                    .and_then(|k| k.parse().ok())
                    .unwrap_or(0);
            }
        }
        0
    }
}
