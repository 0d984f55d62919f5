//! The hose model's reservation on a link (§4.2): removing a link from a tenant's
//! TR splits its VMs in two; the link must carry the smaller of the two sides'
//! summed guarantees. For a homogeneous tenant (every VM guaranteed B) with m VMs
//! on one side and N − m on the other this is B · min(m, N − m).

/// A tenant's hose: the guarantee of each of its VMs, largest first.
#[derive(Clone, Debug, PartialEq)]
pub struct Hose {
    /// Per-VM guarantees, bit/s, in decreasing order.
    pub b: Vec<u64>,
    prefix: Vec<u64>,
}

impl Hose {
    /// A homogeneous hose: `n` VMs guaranteed `b` each.
    pub fn homogeneous(n: u32, b: u64) -> Self {
        Hose::new(vec![b; n as usize])
    }

    /// A hose with the given per-VM guarantees (any order).
    pub fn new(mut b: Vec<u64>) -> Self {
        b.sort_unstable_by(|x, y| y.cmp(x));
        let mut prefix = Vec::with_capacity(b.len() + 1);
        prefix.push(0);
        for x in &b {
            prefix.push(prefix.last().unwrap() + x);
        }
        Hose { b, prefix }
    }

    /// Number of VMs.
    pub fn n(&self) -> u32 {
        self.b.len() as u32
    }

    /// Summed guarantees (the payment factor's N·B for a homogeneous tenant).
    pub fn total(&self) -> u64 {
        *self.prefix.last().unwrap()
    }

    /// The largest per-VM guarantee.
    pub fn max(&self) -> u64 {
        self.b.first().copied().unwrap_or(0)
    }

    /// The smallest per-VM guarantee: the least a link carries when the tenant has
    /// VMs on both sides of it.
    pub fn min(&self) -> u64 {
        self.b.last().copied().unwrap_or(0)
    }

    /// Summed guarantees of VMs `from..to` in placement order.
    pub fn sum(&self, from: u32, to: u32) -> u64 {
        self.prefix[to as usize] - self.prefix[from as usize]
    }

    /// What a link must carry when VMs summing to `below` are on one side of it.
    pub fn cut(&self, below: u64) -> u64 {
        below.min(self.total().saturating_sub(below))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homogeneous_cut_is_b_min_m_n_minus_m() {
        let h = Hose::homogeneous(10, 50_000_000);
        for m in 0..=10u32 {
            assert_eq!(h.cut(h.sum(0, m)), 50_000_000 * m.min(10 - m) as u64);
        }
    }

    #[test]
    fn heterogeneous_cut_is_the_smaller_side() {
        let h = Hose::new(vec![100, 300, 10]);
        assert_eq!(h.b, vec![300, 100, 10]);
        assert_eq!(h.cut(300), 110);
        assert_eq!(h.cut(10), 10);
        assert_eq!(h.total(), 410);
    }
}
