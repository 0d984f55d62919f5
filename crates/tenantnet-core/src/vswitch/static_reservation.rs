//! Static reservation: every VM capped at its guarantee all the time (the
//! Oktopus-style baseline of MBFQ §5 and Trinity §V). It keeps guarantees but is not
//! work-conserving: bandwidth a VM leaves unused is lost to the others.

use super::policy::{ColumnSpec, HostCtx, HostPolicy};
use super::shaper::ShaperId;
use crate::net::VmId;

/// The `static` policy.
#[derive(Clone, Debug, Default)]
pub struct StaticReservation;

impl StaticReservation {
    /// It records nothing of its own.
    pub const COLUMNS: &'static [ColumnSpec] = &[];

    /// The policy for a host.
    pub fn new(_: &(), _vms: &[VmId]) -> Self {
        StaticReservation
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
    }

    fn guarantee_changed(&mut self, ctx: &mut HostCtx, vm: VmId) {
        cap(ctx, vm);
    }
}
