//! Seeded random-number streams (xoshiro256**, seeded through SplitMix64).
//!
//! Each purpose (ECMP hashes, workload arrivals, flow sizes, …) draws from its own
//! stream derived from the scenario seed and the stream's name, so adding draws to
//! one purpose never shifts the numbers another purpose sees. The generator is
//! implemented here rather than taken from a crate so its output can never change
//! under us with a dependency upgrade.

/// One xoshiro256** stream.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a of a stream name, to derive independent streams from one seed.
fn name_hash(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl Rng {
    /// The stream called `name` of scenario seed `seed`.
    pub fn stream(seed: u64, name: &str) -> Self {
        let mut x = seed ^ name_hash(name).rotate_left(17);
        let s = [
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ];
        Rng { s }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n), without modulo bias (Lemire's method, "Fast random
    /// integer generation in an interval", 2019). `n > 0`. A draw is rejected when
    /// its low word is below 2^64 mod n, which is below n: the remainder, a 64-bit
    /// division, is computed only for a low word below n (as rarely as n / 2^64),
    /// and the draws taken are the same as when it was computed every time.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let mut m = (self.next_u64() as u128) * (n as u128);
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = (self.next_u64() as u128) * (n as u128);
            }
        }
        (m >> 64) as u64
    }

    /// Exponentially distributed with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        // 1 - uniform() is in (0, 1], so the logarithm is finite.
        -mean * (1.0 - self.uniform()).ln()
    }

    /// Shuffles `v` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a: Vec<u64> = (0..4).map(|_| Rng::stream(7, "x").next_u64()).collect();
        assert!(a.iter().all(|v| *v == a[0]));
        let mut x = Rng::stream(7, "x");
        let mut y = Rng::stream(7, "y");
        let mut z = Rng::stream(8, "x");
        let (vx, vy, vz) = (x.next_u64(), y.next_u64(), z.next_u64());
        assert_ne!(vx, vy);
        assert_ne!(vx, vz);
    }

    /// Lemire's rejection as first written, computing the remainder at every draw.
    fn below_reference(r: &mut Rng, n: u64) -> u64 {
        loop {
            let m = (r.next_u64() as u128) * (n as u128);
            if m as u64 >= n.wrapping_neg() % n {
                return (m >> 64) as u64;
            }
        }
    }

    /// Skipping the remainder where it cannot reject takes the same draws, where
    /// rejections are rare (small n) and where nearly half are rejected (n just
    /// above 2^63).
    #[test]
    fn below_takes_the_same_draws_as_the_reference() {
        for n in [
            1,
            2,
            6,
            1_000_000,
            1 << 40,
            (1 << 63) + 1,
            (1 << 63) + 12345,
            u64::MAX,
        ] {
            let (mut a, mut b) = (Rng::stream(n, "below"), Rng::stream(n, "below"));
            for _ in 0..10_000 {
                assert_eq!(a.below(n), below_reference(&mut b, n), "n = {n}");
            }
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn below_is_uniform() {
        let mut r = Rng::stream(1, "t");
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[r.below(6) as usize] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn exponential_mean() {
        let mut r = Rng::stream(3, "e");
        let n = 200_000;
        let m: f64 = (0..n).map(|_| r.exponential(2.0)).sum::<f64>() / n as f64;
        assert!((m - 2.0).abs() < 0.03, "{m}");
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut r = Rng::stream(5, "s");
        let mut v: Vec<u32> = (0..100).collect();
        r.shuffle(&mut v);
        let mut w = v.clone();
        w.sort();
        assert_eq!(w, (0..100).collect::<Vec<_>>());
        assert_ne!(v, w);
    }
}
