//! A scheme built on channels, and the host policy it makes: Trinity's rate
//! control (§III-D) and ElasticSwitch's rate allocation each implement
//! [`ChannelScheme`] over a host's [`Channels`]; [`OnChannels`] is the
//! [`HostPolicy`] both run as. The hooks every channel scheme shares (a pair's
//! packets to its channel, fixed from the start; feedback words on ingress to the
//! scheme) live here once.

use super::{ChannelCfg, Channels, Heard};
use crate::net::{Packet, VmId};
use crate::vswitch::policy::{
    Cell, ColumnSpec, Egress, HostCtx, HostMeasure, HostPolicy, Ingress, PairId,
};
use crate::vswitch::ShaperId;

/// A scheme's rate control over a host's channels: what Trinity and
/// ElasticSwitch each add to the channels they share.
pub trait ChannelScheme: Sized {
    /// Its parameters (its `[vswitch.<name>]` table, resolved).
    type Params;
    /// A sending channel's rate-control state.
    type State: Clone + std::fmt::Debug;
    /// Its columns in `vm_rates`.
    const COLUMNS: &'static [ColumnSpec];

    /// The scheme for a host, and how its channels measure and report.
    fn new(p: &Self::Params) -> (Self, ChannelCfg);

    /// The start of the run: opens the host's channels ([`Channels::open`]).
    fn start(&mut self, ch: &mut Channels<Self::State>, ctx: &mut HostCtx);

    /// A feedback word for sending channel `i` arrived.
    fn on_feedback(
        &mut self,
        ch: &mut Channels<Self::State>,
        ctx: &mut HostCtx,
        i: usize,
        word: u64,
    );

    /// The hosts' periodic tick.
    fn tick(&mut self, ch: &mut Channels<Self::State>, ctx: &mut HostCtx, m: &HostMeasure);

    /// Its recorded cells for the host's `i`-th VM, one per column.
    fn record(&self, ch: &Channels<Self::State>, i: usize, out: &mut Vec<Cell>);
}

/// The host policy of a channel scheme: the scheme beside its host's channels.
#[derive(Clone, Debug)]
pub struct OnChannels<S: ChannelScheme> {
    scheme: S,
    ch: Channels<S::State>,
}

impl<S: ChannelScheme> OnChannels<S> {
    /// Its columns in `vm_rates`: the scheme's.
    pub const COLUMNS: &'static [ColumnSpec] = S::COLUMNS;

    /// The policy for a host.
    pub fn new(p: &S::Params, _vms: &[VmId]) -> Self {
        let (scheme, cfg) = S::new(p);
        OnChannels {
            scheme,
            ch: Channels::new(cfg),
        }
    }
}

impl<S: ChannelScheme> HostPolicy for OnChannels<S> {
    fn start(&mut self, ctx: &mut HostCtx) {
        self.scheme.start(&mut self.ch, ctx);
    }

    #[inline]
    fn egress(&mut self, pkt: &mut Packet, src: VmId, pair: PairId) -> Egress {
        self.ch.egress(pkt, src, pair)
    }

    /// A pair's channel, made at the start and kept (channels are fixed: the
    /// trait's default).
    #[inline]
    fn channel(&self, src: VmId, pair: PairId) -> ShaperId {
        self.ch.channel(src, pair)
    }

    #[inline]
    fn uses_ingress(&self) -> bool {
        true
    }

    fn ingress(&mut self, ctx: &mut HostCtx, pkt: &Packet, _dst: VmId, tcp: bool) -> Ingress {
        match self.ch.ingress(ctx, pkt, tcp) {
            Heard::Feedback(i, word) => {
                self.scheme.on_feedback(&mut self.ch, ctx, i, word);
                Ingress::Consumed
            }
            Heard::Packet(what) => what,
        }
    }

    fn tick(&mut self, ctx: &mut HostCtx, m: &HostMeasure) {
        self.scheme.tick(&mut self.ch, ctx, m);
    }

    fn record(&self, i: usize, out: &mut Vec<Cell>) {
        self.scheme.record(&self.ch, i, out);
    }
}
