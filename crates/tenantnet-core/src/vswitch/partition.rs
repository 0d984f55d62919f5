//! Guarantee partitioning of hose-model guarantees into VM-pair guarantees, the
//! part of ElasticSwitch that Trinity borrows (Trinity §III-C, T:L556-583, Eq. 1):
//! R_G(X→Y) = min(B_X^{X→Y}, B_Y^{X→Y}), where X's hypervisor divides X's
//! guarantee B_X among X's destinations and Y's divides B_Y among Y's sources; with
//! unbounded demand the division is equal, B_X / N (T:L573-578).
//!
//! Two readings. `hose` is the static case: the pairs are those the scenario's
//! flows send data on, all of them counted as active for the whole run, each VM's
//! guarantee the one it starts with. `dynamic` starts there and re-partitions every
//! interval as ElasticSwitch's GP does (spec §2.3, §5 #15; `channels/gp.rs`): each
//! end divides its guarantee max-min ([`max_min`]) over its pairs active in the
//! last interval, with the other end's last offer as each pair's demand cap. A pair
//! with an explicit pipe keeps the pipe.

crate::kinds::named_kinds! {
    /// Where VM pairs' guarantees come from (`vswitch.pair_guarantees`).
    PairGuarantees {
        /// Only `[[tenants.pipes]]`: a pair without a pipe has no guarantee of its own.
        Pipes = "pipes",
        /// Pipes, and every other VM-to-VM pair the flows use gets Eq. 1's share of
        /// its two VMs' hose guarantees.
        Hose = "hose",
        /// As `hose` to start with, then re-partitioned every interval over the
        /// pairs active in it, max-min at each end with the other end's offer as the
        /// cap (ElasticSwitch's GP).
        Dynamic = "dynamic",
    }
}

/// Max-min (water-filling) division of `total` among demands capped at `caps`: a
/// demand below the level gets all of it, the others the level, as high as `total`
/// allows (integer units; what does not divide evenly is left over).
pub fn max_min(total: u64, caps: &[u64]) -> Vec<u64> {
    let mut order: Vec<usize> = (0..caps.len()).collect();
    order.sort_by_key(|&i| (caps[i], i));
    let mut out = vec![0; caps.len()];
    let (mut left, mut n) = (total, caps.len() as u64);
    for &i in &order {
        let got = caps[i].min(left / n);
        out[i] = got;
        left -= got;
        n -= 1;
    }
    out
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
    use super::{hose_partition, max_min};

    #[test]
    fn max_min_gives_capped_demands_their_cap_and_the_rest_the_level() {
        assert_eq!(max_min(300, &[u64::MAX; 3]), vec![100, 100, 100]);
        // 50 is below the level: the other two share 250
        assert_eq!(max_min(300, &[u64::MAX, 50, u64::MAX]), vec![125, 50, 125]);
        // every cap below the level: each gets its cap, the rest is unused
        assert_eq!(max_min(300, &[10, 20]), vec![10, 20]);
        assert_eq!(max_min(300, &[]), Vec::<u64>::new());
        let g = max_min(1000, &[400, 100, 900, 250]);
        assert_eq!(g, vec![325, 100, 325, 250]);
        assert_eq!(g.iter().sum::<u64>(), 1000);
    }

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
