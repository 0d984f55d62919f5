//! The records of a parallel run's partitions, each holding its own hosts' rows,
//! put back in the order the sequential run writes them.

/// The rows of every partition's record, given as each row's time and key (its
/// host vswitch), in the sequential run's order: by time, then key, then as the
/// partition wrote them (the rows of one time and key are one partition's).
pub(in crate::sim) fn order(parts: &[(&[f64], Vec<u32>)]) -> Vec<(usize, usize)> {
    let mut rows: Vec<(u64, u32, usize, usize)> = Vec::new();
    for (p, (times, keys)) in parts.iter().enumerate() {
        // times are non-negative: their bits sort as they do
        let keyed = (times.iter().zip(keys).enumerate()).map(|(i, (t, &k))| (t.to_bits(), k, p, i));
        rows.extend(keyed);
    }
    rows.sort_unstable();
    rows.into_iter().map(|(_, _, p, i)| (p, i)).collect()
}

/// [`order`] of the partitions' records `parts`, each row's time from `time` and its
/// key from `key`.
pub(in crate::sim) fn order_by<R>(
    parts: &[&R],
    time: impl Fn(&R) -> &[f64],
    key: impl Fn(&R) -> Vec<u32>,
) -> Vec<(usize, usize)> {
    let keyed: Vec<_> = parts.iter().map(|r| (time(r), key(r))).collect();
    order(&keyed)
}

/// Column `col` of the partitions' records `parts`, its rows in `order`.
pub(in crate::sim) fn gather<R, T: Clone>(
    parts: &[&R],
    order: &[(usize, usize)],
    col: impl Fn(&R) -> &Vec<T>,
) -> Vec<T> {
    order
        .iter()
        .map(|&(p, i)| col(parts[p])[i].clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_back_by_time_then_key_then_as_written() {
        // partition 0 holds host 2, partition 1 hosts 0 and 1 (two rows each)
        let t0 = [0.1, 0.1, 0.2, 0.2];
        let t1 = [0.1, 0.1, 0.1, 0.1, 0.2];
        let parts = [(&t0[..], vec![2, 2, 2, 2]), (&t1[..], vec![0, 0, 1, 1, 0])];
        let o = order(&parts);
        assert_eq!(
            o,
            [
                (1, 0),
                (1, 1),
                (1, 2),
                (1, 3),
                (0, 0),
                (0, 1),
                (1, 4),
                (0, 2),
                (0, 3)
            ]
        );
        let cols = [vec!["a", "b", "c", "d"], vec!["e", "f", "g", "h", "i"]];
        let refs: Vec<&Vec<&str>> = cols.iter().collect();
        assert_eq!(
            gather(&refs, &o, |c| c),
            ["e", "f", "g", "h", "a", "b", "i", "c", "d"]
        );
    }
}
