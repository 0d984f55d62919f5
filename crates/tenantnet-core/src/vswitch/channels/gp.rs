//! ElasticSwitch's guarantee partitioning (GP), dynamic: every interval each
//! end of a VM pair offers it a share of its VM's hose guarantee, and the pair's
//! guarantee is the smaller offer (Eq. 1 of Trinity, T:L556-583; ES patent
//! US 9,794,185 claim 1; spec §2.3).
//!
//! Our reading of what the sources leave open (spec §5 #15; the ES paper's own
//! GP period and demand estimate could not be checked):
//! * the period is the channels' interval (5 ms);
//! * a pair is active at its sender if it sent or held packets in the last
//!   interval, at its receiver if a packet of it arrived in the last interval;
//! * each end divides its VM's guarantee, less the pipes it has, max-min
//!   ([`max_min`]) over its active pairs, each capped at the other end's last
//!   offer (uncapped before one arrives), so a pair the other end holds back
//!   leaves its share to the VM's other pairs;
//! * a sender forwards its offers in a control packet on each active pair, a
//!   receiver returns its own in the feedback;
//! * the pair's guarantee at the sender is its own offer, at most the receiver's;
//!   an inactive pair's is what a newcomer would be offered, B / (active + 1),
//!   capped the same way, so that a pair starting to send does not wait a period
//!   with none and does not start with a stale large one.

use super::{Channels, Rx, Tx};
use crate::net::VmId;
use crate::vswitch::partition::max_min;
use crate::vswitch::policy::{ControlMsg, ControlPayload, HostCtx, PairId};

/// One end's division of `b` among its pairs `ends` (active?, the other end's
/// offer): each pair's allocation, max-min over the active ones with the other
/// end's offers as caps (a newcomer's share, b / (active + 1), to an idle one), and
/// this end's offer to it, what it would get were it not capped by the other end.
/// Offering the allocation instead would lock both ends at the first one's cap:
/// each would cap the other at what it was itself offered.
fn offers(b: u64, ends: &[(bool, u64)]) -> Vec<(u64, u64)> {
    let caps: Vec<u64> = ends.iter().filter(|e| e.0).map(|e| e.1).collect();
    let alloc = max_min(b, &caps);
    let uncapped = |k: usize| {
        if alloc[k] < caps[k] {
            return alloc[k];
        }
        let mut c = caps.clone();
        c[k] = u64::MAX;
        max_min(b, &c)[k]
    };
    let newcomer = b / (caps.len() as u64 + 1);
    let mut k = 0;
    (ends.iter())
        .map(|&(on, cap)| {
            if !on {
                return (newcomer.min(cap), newcomer);
            }
            k += 1;
            (alloc[k - 1], uncapped(k - 1))
        })
        .collect()
}

/// VM `v`'s guarantee less the pipes among `fixed`, bit/s.
fn left_of(ctx: &HostCtx, v: VmId, fixed: impl Iterator<Item = u64>) -> u64 {
    ctx.vms[v.idx()].guarantee_bps.saturating_sub(fixed.sum())
}

/// Pair `pair`'s guarantee, bit/s.
fn guarantee(ctx: &HostCtx, pair: PairId) -> u64 {
    ctx.pairs[pair as usize].guarantee_bps.unwrap_or(0)
}

impl<S> Channels<S> {
    /// One GP step at the end of an interval: the receivers' offers (sent back in
    /// the next feedback), then the senders' (forwarded now) and the new
    /// guarantees of the sending channels.
    pub(super) fn partition(&mut self, ctx: &mut HostCtx) {
        if !self.dynamic {
            return;
        }
        let dynamic = |pair: PairId| ctx.pairs[pair as usize].repartition;
        for &y in ctx.mine {
            let into_y = |r: &&mut Rx| ctx.pairs[r.pair as usize].dst == Some(y);
            let (mine, pipes): (Vec<&mut Rx>, Vec<&mut Rx>) = self
                .rx
                .iter_mut()
                .filter(into_y)
                .partition(|r| dynamic(r.pair));
            let b = left_of(ctx, y, pipes.iter().map(|r| guarantee(ctx, r.pair)));
            let ends: Vec<(bool, u64)> = mine.iter().map(|r| (r.quiet == 0, r.offer_fwd)).collect();
            for (r, (_, offer)) in mine.into_iter().zip(offers(b, &ends)) {
                r.offer = offer;
            }
        }
        for &x in ctx.mine {
            let from_x = |(_, t): &(usize, &mut Tx<S>)| t.src == x;
            let (mine, pipes): (Vec<(usize, &mut Tx<S>)>, Vec<_>) =
                (self.tx.iter_mut().enumerate().filter(from_x)).partition(|t| dynamic(t.1.pair));
            let b = left_of(ctx, x, pipes.iter().map(|t| t.1.g));
            let ends: Vec<(bool, u64)> =
                mine.iter().map(|t| (t.1.active, t.1.offer_back)).collect();
            for ((i, t), (g, offer)) in mine.into_iter().zip(offers(b, &ends)) {
                if t.active {
                    ctx.control.push(ControlMsg {
                        pair: t.pair,
                        size: self.cfg.feedback_size,
                        payload: ControlPayload::Offer { offer },
                    });
                }
                if g != t.g {
                    t.g = g;
                    self.regranted.push(i);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::offers;

    #[test]
    fn active_pairs_share_max_min_and_an_idle_one_is_offered_a_newcomers_share() {
        const NONE: u64 = u64::MAX;
        // 300 over two active pairs, one capped at 50 by its other end: 250 and 50;
        // an idle pair would get 300 / 3. The capped pair is offered what it would
        // get uncapped, 150.
        assert_eq!(
            offers(300, &[(true, NONE), (false, NONE), (true, 50)]),
            vec![(250, 250), (100, 100), (50, 150)]
        );
        // an idle pair's allocation is capped by its other end's offer as well
        assert_eq!(offers(300, &[(false, 40)]), vec![(40, 300)]);
        assert_eq!(offers(300, &[(true, NONE)]), vec![(300, 300)]);
    }

    #[test]
    fn two_ends_that_cap_each_other_climb_to_the_full_share() {
        // both ends of a pair offered 225 last period (the pair's other half went
        // idle): each still offers its whole 450, so the next period allocates 450
        let (alloc, offer) = offers(450, &[(true, 225), (false, 225)])[0];
        assert_eq!((alloc, offer), (225, 450));
        assert_eq!(offers(450, &[(true, offer), (false, 225)])[0].0, 450);
    }
}
