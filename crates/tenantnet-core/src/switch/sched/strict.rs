//! Strict priority: the lowest-numbered non-empty queue always sends first; lower
//! priorities get only what higher ones leave.

/// The highest-priority (lowest-numbered) queue among those set in `nonempty`.
#[inline]
pub fn select(nonempty: u64) -> Option<usize> {
    (nonempty != 0).then(|| nonempty.trailing_zeros() as usize)
}

#[cfg(test)]
mod tests {
    #[test]
    fn lowest_index_first() {
        assert_eq!(super::select(0b1010), Some(1));
        assert_eq!(super::select(0), None);
    }
}
