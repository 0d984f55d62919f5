//! Static reservation: every VM capped at its guarantee all the time (the
//! Oktopus-style baseline of MBFQ §5), and every VM pair with a pipe guarantee
//! (`[[tenants.pipes]]`) in a shaper of its own capped at that guarantee (Trinity
//! §V's static baseline: "a per-pair limiter at G"). It keeps guarantees but is not
//! work-conserving: bandwidth a VM or pair leaves unused is lost to the others.

use super::policy::{ColumnSpec, Egress, HostCtx, HostPolicy, PairId};
use super::shaper::ShaperId;
use crate::net::{Packet, VmId};

/// The `static` policy.
#[derive(Clone, Debug, Default)]
pub struct StaticReservation {
    /// The shaper of each of this host's pairs that has a pipe guarantee, sorted by
    /// pair.
    pipes: Vec<(PairId, ShaperId)>,
}

impl StaticReservation {
    /// It records nothing of its own.
    pub const COLUMNS: &'static [ColumnSpec] = &[];

    /// The policy for a host.
    pub fn new(_: &(), _vms: &[VmId]) -> Self {
        StaticReservation::default()
    }

    /// The shaper a packet of VM `src` on `pair` waits in.
    #[inline]
    fn shaper(&self, src: VmId, pair: PairId) -> ShaperId {
        match self.pipes.binary_search_by_key(&pair, |e| e.0) {
            Ok(i) => self.pipes[i].1,
            Err(_) => ShaperId::of_vm(src),
        }
    }
}

/// Caps VM `v`'s own shaper at its guarantee.
fn cap(ctx: &mut HostCtx, v: VmId) {
    let g = ctx.vms[v.idx()].guarantee_bps;
    ctx.shapers.set_rate(ctx.now, ShaperId::of_vm(v), Some(g));
}

impl HostPolicy for StaticReservation {
    fn start(&mut self, ctx: &mut HostCtx) {
        let mine = ctx.mine;
        for &v in mine {
            cap(ctx, v);
        }
        for (i, pr) in ctx.pairs.iter().enumerate() {
            let (Some(src), Some(g)) = (pr.src, pr.guarantee_bps) else {
                continue;
            };
            if mine.contains(&src) {
                let s = ctx.shapers.add(ctx.shapers[ShaperId::of_vm(src)].sibling());
                ctx.shapers.set_rate(ctx.now, s, Some(g));
                self.pipes.push((i as PairId, s));
            }
        }
    }

    #[inline]
    fn egress(&mut self, _pkt: &mut Packet, src: VmId, pair: PairId) -> Egress {
        Egress::Shaper(self.shaper(src, pair))
    }

    #[inline]
    fn channel(&self, src: VmId, pair: PairId) -> ShaperId {
        self.shaper(src, pair)
    }

    fn guarantee_changed(&mut self, ctx: &mut HostCtx, vm: VmId) {
        cap(ctx, vm);
    }
}
