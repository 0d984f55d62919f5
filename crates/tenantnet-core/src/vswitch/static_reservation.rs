//! Static reservation: every VM capped at its guarantee all the time (the
//! Oktopus-style baseline of MBFQ §5), and every VM pair with a pipe guarantee
//! (`[[tenants.pipes]]`) in a shaper of its own capped at that guarantee (Trinity
//! §V's static baseline: "a per-pair limiter at G"). It keeps guarantees but is not
//! work-conserving: bandwidth a VM or pair leaves unused is lost to the others.
//!
//! `[vswitch.static] cap` (ours; 1 by default, the baseline's own) sets every cap
//! to that multiple of the guarantee: a cap above the guarantee lends a VM part of
//! the NIC's spare, with no sharing among VMs beyond their transports'.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::policy::{ColumnSpec, Egress, HostCtx, HostPolicy, PairId, PolicyTable};
use super::shaper::ShaperId;
use crate::net::{Packet, VmId};

/// Static reservation's table, `[vswitch.static]`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StaticSpec {
    /// Every VM's (and pipe's) cap as a multiple of its guarantee [1.0].
    pub cap: Option<f64>,
}

/// The `static` policy's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct StaticParams {
    /// The caps' multiple of the guarantees.
    pub cap: f64,
}

impl Default for StaticParams {
    fn default() -> Self {
        StaticParams { cap: 1.0 }
    }
}

impl PolicyTable for StaticSpec {
    type Params = StaticParams;

    fn defaults() -> Self {
        StaticSpec {
            cap: Some(StaticParams::default().cap),
        }
    }

    fn resolve(&self) -> Result<StaticParams, (&'static str, String)> {
        let cap = self.cap.unwrap_or(StaticParams::default().cap);
        if !(cap.is_finite() && cap > 0.0 && cap <= 1000.0) {
            return Err((
                "cap",
                "expected a multiple of the guarantee in (0, 1000]".into(),
            ));
        }
        Ok(StaticParams { cap })
    }
}

/// The `static` policy.
#[derive(Clone, Debug)]
pub struct StaticReservation {
    /// The shaper of each of this host's pairs that has a pipe guarantee, sorted by
    /// pair.
    pipes: Vec<(PairId, ShaperId)>,
    /// The caps' multiple of the guarantees.
    cap: f64,
}

impl StaticReservation {
    /// It records nothing of its own.
    pub const COLUMNS: &'static [ColumnSpec] = &[];

    /// The policy for a host.
    pub fn new(p: &StaticParams, _vms: &[VmId]) -> Self {
        StaticReservation {
            pipes: Vec::new(),
            cap: p.cap,
        }
    }

    /// `g` times the cap (exactly `g` at the default cap of 1: rates are far
    /// below 2^53).
    fn capped(&self, g: u64) -> u64 {
        (g as f64 * self.cap).round() as u64
    }

    /// The shaper a packet of VM `src` on `pair` waits in.
    #[inline]
    fn shaper(&self, src: VmId, pair: PairId) -> ShaperId {
        match self.pipes.binary_search_by_key(&pair, |e| e.0) {
            Ok(i) => self.pipes[i].1,
            Err(_) => ShaperId::of_vm(src),
        }
    }

    /// Caps VM `v`'s own shaper at its guarantee (times the cap).
    fn cap_vm(&self, ctx: &mut HostCtx, v: VmId) {
        let g = self.capped(ctx.vms[v.idx()].guarantee_bps);
        ctx.shapers.set_rate(ctx.now, ShaperId::of_vm(v), Some(g));
    }
}

impl HostPolicy for StaticReservation {
    fn start(&mut self, ctx: &mut HostCtx) {
        let mine = ctx.mine;
        for &v in mine {
            self.cap_vm(ctx, v);
        }
        for (i, pr) in ctx.pairs.iter().enumerate() {
            let (Some(src), Some(g)) = (pr.src, pr.guarantee_bps) else {
                continue;
            };
            if mine.contains(&src) {
                let s = ctx.shapers.add(ctx.shapers[ShaperId::of_vm(src)].sibling());
                ctx.shapers.set_rate(ctx.now, s, Some(self.capped(g)));
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
        self.cap_vm(ctx, vm);
    }
}
