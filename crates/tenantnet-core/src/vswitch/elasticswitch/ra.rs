//! The ElasticSwitch paper's rate allocation (RA), the `paper` profile, as a pure
//! step per pair and feedback.
//!
//! What the sources say (spec §2.3): each pair's limiter R never goes below its
//! guarantee B (from guarantee partitioning); it "probes the network by increasing
//! rates, detects congestion via packet losses or ECN, and then allocates the
//! spare bandwidth to VM pairs in max-min fashion following weighted TCP
//! algorithms" ([37] Seawall; QShare Q:L382-390); three conservative mechanisms
//! keep guarantees safe at the cost of utilisation (T:L400-403, Q:L2140-2198):
//! **headroom** (10 %, T:L401), **hold-increase** ("delaying the rate increase
//! after each congestion event") and **rate-caution** ("being less aggressive to
//! increase rates once the current rates are above the guarantees"); the aggressive
//! variant "immediately increases rates on each positive feedback" with all three
//! off (Q:L2183-2188).
//!
//! The ES paper's own equations and constants could not be retrieved (spec §5 #14),
//! so every rule below past those sentences is **our choice**, each a knob:
//! * congestion is the fraction β of a pair's packets that arrived ECN-marked in
//!   the receiver's interval (the switches mark; loss is not detected);
//! * on β > 0: R ← max(B, R·(1 − β/2)), DCTCP's cut as Trinity's Eq. 5 takes it;
//! * otherwise R grows by `increase`·B per interval, weighted by the guarantee as
//!   Seawall weights its flows; with rate-caution by `increase`·B·B/R, less the
//!   further R is above B;
//! * hold-increase: after a cut, no increase for `hold`·(100 Mb/s / B), longer
//!   for small guarantees ("inversely proportional to B" is recalled, unverified);
//! * headroom: R never exceeds (1 − headroom)·C.

use crate::engine::Time;

/// The paper RA's knobs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Knobs {
    /// Increase per congestion-free interval, as a share of B.
    pub increase: f64,
    /// The share of C kept free: R ≤ (1 − headroom)·C.
    pub headroom: f64,
    /// The hold after a cut of a pair guaranteed 100 Mb/s (0: no hold-increase).
    pub hold: Time,
    /// Whether increases shrink as B / R above the guarantee.
    pub caution: bool,
}

/// A pair's RA state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PairRa {
    /// R, bit/s.
    pub r: f64,
    /// No increase before this time (hold-increase).
    pub hold_until: Time,
}

/// The guarantee, bit/s, whose hold after a cut is `Knobs::hold`.
const HOLD_REFERENCE_BPS: f64 = 100e6;

/// One feedback for pair `s` guaranteed `b` bit/s, at `now`, with `beta` of its
/// packets marked, on a host of capacity `c` bit/s.
pub fn ra_step(s: PairRa, b: f64, beta: f64, now: Time, c: f64, k: &Knobs) -> PairRa {
    let ceiling = ((1.0 - k.headroom) * c).max(b);
    if beta > 0.0 {
        let hold = (k.hold as f64 * HOLD_REFERENCE_BPS / b.max(1.0)).min(1e15) as Time;
        return PairRa {
            r: (s.r * (1.0 - beta / 2.0)).max(b),
            hold_until: now.saturating_add(hold),
        };
    }
    if now < s.hold_until {
        return PairRa { r: s.r.max(b), ..s };
    }
    let mut step = k.increase * b;
    if k.caution && s.r > b {
        step *= b / s.r;
    }
    PairRa {
        r: (s.r.max(b) + step).min(ceiling),
        ..s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000_000;
    const K: Knobs = Knobs {
        increase: 0.1,
        headroom: 0.1,
        hold: 10 * MS,
        caution: true,
    };

    fn at(r: f64) -> PairRa {
        PairRa { r, hold_until: 0 }
    }

    #[test]
    fn a_cut_follows_the_marked_fraction_and_never_goes_below_the_guarantee() {
        let s = ra_step(at(400e6), 100e6, 0.5, 0, 1e9, &K);
        assert_eq!(s.r, 300e6);
        assert_eq!(ra_step(at(120e6), 100e6, 1.0, 0, 1e9, &K).r, 100e6);
        // the hold after a cut is 10 ms at 100 Mb/s, 40 ms at 25 Mb/s
        assert_eq!(s.hold_until, 10 * MS);
        assert_eq!(ra_step(at(50e6), 25e6, 0.2, 0, 1e9, &K).hold_until, 40 * MS);
    }

    #[test]
    fn increases_wait_out_the_hold_are_weighted_and_cautious_and_keep_headroom() {
        let held = PairRa {
            r: 300e6,
            hold_until: 10 * MS,
        };
        assert_eq!(ra_step(held, 100e6, 0.0, 5 * MS, 1e9, &K), held);
        // at the guarantee: + 10 % of B; at three times it: a third of that
        assert_eq!(ra_step(at(100e6), 100e6, 0.0, 0, 1e9, &K).r, 110e6);
        let r = ra_step(held, 100e6, 0.0, 10 * MS, 1e9, &K).r;
        assert!((r - (300e6 + 10e6 / 3.0)).abs() < 1.0, "{r}");
        // without rate-caution, the whole step; never past 90 % of C
        let bold = Knobs {
            caution: false,
            ..K
        };
        assert_eq!(ra_step(at(300e6), 100e6, 0.0, 0, 1e9, &bold).r, 310e6);
        assert_eq!(ra_step(at(895e6), 100e6, 0.0, 0, 1e9, &bold).r, 900e6);
    }
}
