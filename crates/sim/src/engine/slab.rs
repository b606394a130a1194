//! A slab: values in a vector, reused through a free list, addressed by `u32` index. Keeps
//! in-flight requests and sub-requests without allocating per operation.

#[derive(Debug, Clone)]
pub struct Slab<T> {
    items: Vec<T>,
    free: Vec<u32>,
    live: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            items: Vec::new(),
            free: Vec::new(),
            live: 0,
        }
    }
}

impl<T> Slab<T> {
    pub fn insert(&mut self, value: T) -> u32 {
        self.live += 1;
        match self.free.pop() {
            Some(i) => {
                self.items[i as usize] = value;
                i
            }
            None => {
                self.items.push(value);
                (self.items.len() - 1) as u32
            }
        }
    }
    /// Frees a slot (its value stays until reused).
    pub fn remove(&mut self, idx: u32) {
        self.live -= 1;
        self.free.push(idx);
    }
    pub fn get(&self, idx: u32) -> &T {
        &self.items[idx as usize]
    }
    pub fn get_mut(&mut self, idx: u32) -> &mut T {
        &mut self.items[idx as usize]
    }
    /// Live values.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.live
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_freed_slots() {
        let mut s = Slab::default();
        let a = s.insert(1);
        let b = s.insert(2);
        s.remove(a);
        let c = s.insert(3);
        assert_eq!(c, a);
        assert_eq!((*s.get(b), *s.get(c), s.len()), (2, 3, 2));
    }
}
