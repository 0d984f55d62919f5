//! Guarantee partitioning of hose-model guarantees into VM-pair guarantees, the
//! part of ElasticSwitch that Trinity borrows (Trinity §III-C, T:L556-583, Eq. 1):
//! R_G(X→Y) = min(B_X^{X→Y}, B_Y^{X→Y}), where X's hypervisor divides X's
//! guarantee B_X among X's destinations and Y's divides B_Y among Y's sources; with
//! unbounded demand the division is equal, B_X / N (T:L573-578).
//!
//! Our reading (spec §5 #15 asks for the dynamic, max-min version; this is its
//! static case): the pairs are those the scenario's flows send data on, all of them
//! counted as active for the whole run, each VM's guarantee the one it starts with.
//! A pair with an explicit pipe keeps the pipe.

crate::kinds::named_kinds! {
    /// Where VM pairs' guarantees come from (`vswitch.pair_guarantees`).
    PairGuarantees {
        /// Only `[[tenants.pipes]]`: a pair without a pipe has no guarantee of its own.
        Pipes = "pipes",
        /// Pipes, and every other VM-to-VM pair the flows use gets Eq. 1's share of
        /// its two VMs' hose guarantees.
        Hose = "hose",
    }
}

/// Eq. 1 with equal division: the guarantee (bit/s) of each directed VM pair
/// `pairs[i] = (X, Y)`, given each VM's hose guarantee `hose(v)`; a pair listed
/// twice counts once.
pub fn hose_partition<V: Copy + Ord>(pairs: &[(V, V)], hose: impl Fn(V) -> u64) -> Vec<u64> {
    use std::collections::{BTreeMap, BTreeSet};
    let distinct: BTreeSet<(V, V)> = pairs.iter().copied().collect();
    let mut n_out: BTreeMap<V, u64> = BTreeMap::new();
    let mut n_in: BTreeMap<V, u64> = BTreeMap::new();
    for &(x, y) in &distinct {
        *n_out.entry(x).or_default() += 1;
        *n_in.entry(y).or_default() += 1;
    }
    pairs
        .iter()
        .map(|&(x, y)| (hose(x) / n_out[&x]).min(hose(y) / n_in[&y]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::hose_partition;

    #[test]
    fn each_end_divides_its_guarantee_and_the_pair_gets_the_smaller_share() {
        // X (300) sends to Y and Z; W (100) sends to Y; Y (200) receives from X and W,
        // Z (50) from X only
        let (x, y, z, w) = (0, 1, 2, 3);
        let b = |v: u32| [300, 200, 50, 100][v as usize];
        let g = hose_partition(&[(x, y), (x, z), (w, y), (x, y)], b);
        // X→Y: min(300/2, 200/2) = 100; X→Z: min(150, 50/1) = 50; W→Y: min(100, 100)
        assert_eq!(g, vec![100, 50, 100, 100]);
        // no VM's pairs add up to more than its guarantee, either way
        assert!(g[0] + g[1] <= 300 && g[0] + g[2] <= 200);
    }
}
