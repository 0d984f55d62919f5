//! A binary min-heap of packed 128-bit event keys, the building block of
//! [`super::queue::EventQueue`].
//!
//! Measured on the permutation benchmark (BENCHMARKS.md), this heap had the fewest
//! branch mispredictions of the variants tried (std's `BinaryHeap` of tuples, a
//! 4-ary heap, Floyd's bottom-up deletion, a radix heap). The event queue keeps it
//! small by holding only the events of one short time bucket in it.

/// A min-heap of keys.
pub struct KeyHeap {
    /// Heap-ordered keys followed by one `u128::MAX` sentinel, so that a node's
    /// right child can always be read and the smaller child chosen without a branch.
    heap: Vec<u128>,
}

impl Default for KeyHeap {
    fn default() -> Self {
        KeyHeap {
            heap: vec![u128::MAX],
        }
    }
}

impl KeyHeap {
    /// Keys held.
    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len() - 1
    }

    /// Whether no key is held.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.len() == 1
    }

    /// The smallest key.
    #[inline]
    pub fn peek(&self) -> Option<u128> {
        (!self.is_empty()).then(|| self.heap[0])
    }

    /// The keys, in no particular order.
    pub fn keys(&self) -> &[u128] {
        &self.heap[..self.len()]
    }

    /// Adds a key.
    #[inline]
    pub fn push(&mut self, k: u128) {
        let mut i = self.len();
        self.heap.push(u128::MAX); // new sentinel; slot i is the hole
        while i > 0 {
            let p = (i - 1) / 2;
            let pk = self.heap[p];
            if pk <= k {
                break;
            }
            self.heap[i] = pk;
            i = p;
        }
        self.heap[i] = k;
    }

    /// Removes the smallest key; the heap must not be empty.
    #[inline]
    pub fn pop_min(&mut self) -> u128 {
        debug_assert!(!self.is_empty());
        let top = self.heap[0];
        // the last key fills the hole left at the root; the old sentinel slot goes
        self.heap.pop();
        let n = self.heap.len() - 1;
        let last = self.heap[n];
        self.heap[n] = u128::MAX;
        if n > 0 {
            self.sift_down(0, last, n);
        }
        top
    }

    /// Puts `k` into the hole at `i` of a heap of `n` keys (sentinel at `n`),
    /// moving smaller children up.
    #[inline]
    fn sift_down(&mut self, mut i: usize, k: u128, n: usize) {
        let h = self.heap.as_mut_slice();
        debug_assert_eq!(h.len(), n + 1);
        loop {
            let c = 2 * i + 1;
            if c >= n {
                break;
            }
            // SAFETY: h.len() == n + 1 and c < n, so c and c + 1 (a key or the
            // sentinel) are in bounds, m is one of them, and i < c.
            let (m, mk) = unsafe {
                let m = c + (*h.get_unchecked(c + 1) < *h.get_unchecked(c)) as usize;
                (m, *h.get_unchecked(m))
            };
            if mk >= k {
                break;
            }
            // SAFETY: i < c < n.
            unsafe { *h.get_unchecked_mut(i) = mk };
            i = m;
        }
        h[i] = k;
    }

    /// Replaces the (empty) heap's storage by `keys`, heap-ordered in place, and
    /// leaves `keys` empty with the old storage's capacity.
    pub fn take_from(&mut self, keys: &mut Vec<u128>) {
        debug_assert!(self.is_empty());
        std::mem::swap(&mut self.heap, keys);
        keys.clear();
        let n = self.heap.len();
        self.heap.push(u128::MAX);
        for i in (0..n / 2).rev() {
            let k = self.heap[i];
            self.sift_down(i, k, n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Rng;

    #[test]
    fn pops_sorted_after_pushes_and_after_taking_a_vector() {
        let mut rng = Rng::stream(3, "heap");
        for n in [0usize, 1, 2, 3, 7, 64, 1000] {
            let keys: Vec<u128> = (0..n).map(|_| rng.below(500) as u128).collect();
            let mut expect = keys.clone();
            expect.sort();
            let mut h = KeyHeap::default();
            keys.iter().for_each(|&k| h.push(k));
            assert_eq!(h.len(), n);
            let got: Vec<u128> = std::iter::from_fn(|| h.peek().map(|_| h.pop_min())).collect();
            assert_eq!(got, expect);
            let mut v = keys.clone();
            let mut h = KeyHeap::default();
            h.take_from(&mut v);
            assert!(v.is_empty());
            assert_eq!(h.len(), n);
            let got: Vec<u128> = std::iter::from_fn(|| h.peek().map(|_| h.pop_min())).collect();
            assert_eq!(got, expect);
        }
    }
}
