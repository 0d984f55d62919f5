//! DSCP → queue classification, one map per switch (commodity switches' "DSCP to
//! traffic class" table). The default sends every DSCP to queue 0.

/// Number of DSCP values.
pub const DSCPS: usize = 64;

/// A switch's DSCP → queue table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DscpMap([u8; DSCPS]);

impl Default for DscpMap {
    fn default() -> Self {
        DscpMap([0; DSCPS])
    }
}

impl DscpMap {
    /// Every DSCP d below `queues` to queue d, the rest to queue 0.
    pub fn identity(queues: usize) -> Self {
        let mut m = [0u8; DSCPS];
        for (d, q) in m.iter_mut().enumerate().take(queues) {
            *q = d as u8;
        }
        DscpMap(m)
    }

    /// Every (DSCP, queue) of the map.
    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.0.iter().enumerate().map(|(d, &q)| (d, q as usize))
    }

    /// A map from (dscp, queue) pairs, or why a DSCP is out of range; unlisted
    /// DSCPs go to queue 0.
    pub fn try_from_pairs(pairs: &[(u32, u32)]) -> Result<Self, String> {
        let mut m = [0u8; DSCPS];
        for &(d, q) in pairs {
            if d as usize >= DSCPS || q > u8::MAX as u32 {
                return Err(format!("DSCP {d} -> queue {q}: expected DSCP 0 to 63"));
            }
            m[d as usize] = q as u8;
        }
        Ok(DscpMap(m))
    }

    /// A map from (dscp, queue) pairs; unlisted DSCPs go to queue 0.
    pub fn from_pairs(pairs: &[(u8, u8)]) -> Self {
        let mut m = [0u8; DSCPS];
        for &(d, q) in pairs {
            m[d as usize & (DSCPS - 1)] = q;
        }
        DscpMap(m)
    }

    /// The queue of a packet with DSCP `dscp`.
    #[inline]
    pub fn queue(&self, dscp: u8) -> usize {
        self.0[dscp as usize & (DSCPS - 1)] as usize
    }

    /// The largest queue index the map uses.
    pub fn max_queue(&self) -> usize {
        self.0.iter().copied().max().unwrap_or(0) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps() {
        assert_eq!(DscpMap::default().queue(46), 0);
        let id = DscpMap::identity(8);
        assert_eq!((id.queue(3), id.queue(9)), (3, 0));
        let m = DscpMap::from_pairs(&[(46, 7), (10, 2)]);
        assert_eq!((m.queue(46), m.queue(10), m.queue(0)), (7, 2, 0));
        assert_eq!(m.max_queue(), 7);
    }
}
