//! The host-policy interface: what a host's virtual switch does to its VMs'
//! packets. One implementation per scheme, one file each (`none`,
//! `static_reservation`, `mbfq`, …), dispatched statically through [`Policy`], as
//! smoltcp dispatches its congestion controllers.
//!
//! A policy sees four things, each a hook with a default that does nothing:
//! * **egress**, each packet a VM sends, with its VM pair: it may set the DSCP and
//!   ECT bits and chooses the [`Shaper`](super::shaper::Shaper) it waits in (by
//!   default the VM's own, which passes everything while its bucket is off);
//! * **ingress** at the receiving host, each packet arriving for a VM before its
//!   transport sees it: it may consume it (a control packet, feedback it measures)
//!   or hold it and hand it on later ([`HostCtx::release`], for resequencing);
//! * a periodic **tick** with the host's measurements ([`HostMeasure`]);
//! * a VM's guarantee changing (a controller's action).
//!
//! It acts through [`HostCtx`]: shaper rates, new shapers, control packets to other
//! hosts. Its own recorded columns (in `vm_rates`, one row per VM per tick) are
//! declared by [`PolicyKind::columns`] and filled by [`HostPolicy::record`].
//!
//! Adding a policy: a file with a struct implementing [`HostPolicy`] (and, if it
//! takes parameters, a [`PolicyTable`] for its `[vswitch.<name>]` table), plus its
//! line in the `for_each_policy!` registration below.

use super::shaper::{ShaperId, Shapers};
use super::tenant_vm::Vm;
use crate::engine::Time;
pub use crate::net::ids::{PairId, NO_PAIR};
use crate::net::{Packet, VmId};
pub use crate::packet::ControlPayload;

/// A directed VM pair and the bytes the datapath counted on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VmPair {
    /// The sending VM (`None`: a plain host).
    pub src: Option<VmId>,
    /// The receiving VM (`None`: a plain host).
    pub dst: Option<VmId>,
    /// Wire bytes the sending host's vswitch passed to its NIC on this pair.
    pub tx_bytes: u64,
    /// Wire bytes delivered on this pair at the receiving host.
    pub rx_bytes: u64,
    /// Whether the receiving host's policy sees this pair's packets on ingress
    /// (its VM's policy [uses ingress](HostPolicy::uses_ingress); set at the start).
    pub ingress: bool,
    /// The pair's pipe-model guarantee, bit/s, if the scenario gives one
    /// (`[[tenants.pipes]]`).
    pub guarantee_bps: Option<u64>,
    /// Whether its guarantee is re-partitioned as the run goes
    /// (`vswitch.pair_guarantees = "dynamic"`; never for a pipe).
    pub repartition: bool,
    /// The pair the other way (`dst` → `src`): every pair has one, the direction
    /// its flows' ACKs (and a policy's feedback) take.
    pub reverse: PairId,
}

/// A control packet a policy sends to the host of the other end of a pair (it
/// crosses the fabric like any packet and counts in packet conservation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControlMsg {
    /// The pair it travels on (from this host's VM to the other host's VM).
    pub pair: PairId,
    /// Size on the wire, bytes.
    pub size: u32,
    /// What it says.
    pub payload: ControlPayload,
}

/// Where a VM's packet goes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Egress {
    /// Into this shaper (it passes on at once while its bucket allows).
    Shaper(ShaperId),
    /// Dropped by the policy.
    Drop,
}

/// What the policy did with an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ingress {
    /// On to the transport.
    Deliver,
    /// Taken by the policy (consumed, or held to be released later).
    Consumed,
}

/// What a hook may read and change.
pub struct HostCtx<'a> {
    /// Now.
    pub now: Time,
    /// C, the capacity the host shares among its VMs, bit/s.
    pub capacity_bps: u64,
    /// The host's VMs.
    pub mine: &'a [VmId],
    /// Every VM of the run.
    pub vms: &'a [Vm],
    /// Every VM pair of the run.
    pub pairs: &'a [VmPair],
    /// Every shaper of the run.
    pub shapers: &'a mut Shapers,
    /// Control packets to send after the hook.
    pub control: &'a mut Vec<ControlMsg>,
    /// Held packets handed on to their transport after the hook.
    pub release: &'a mut Vec<Packet>,
}

/// What the datapath measured at a host over the tick's interval.
pub struct HostMeasure<'a> {
    /// The interval (the hosts' tick).
    pub interval: Time,
    /// Share of the NIC's rate it transmitted.
    pub nic_utilisation: f64,
    /// Each of the host's VMs' send rate (as `HostCtx::mine`), bit/s.
    pub sent_bps: &'a [f64],
    /// Each of the host's VMs' receive rate, bit/s.
    pub received_bps: &'a [f64],
}

/// A value of a policy's recorded column.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell {
    /// A rate in bit/s, or none (recorded in Gb/s).
    Rate(Option<f64>),
    /// A count.
    Count(u64),
}

/// One of a policy's recorded columns in `vm_rates`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColumnSpec {
    /// The column's name.
    pub name: &'static str,
    /// Its value in rows of hosts that run another policy.
    pub other: Cell,
}

/// A host policy. Every hook has a default that does nothing.
pub trait HostPolicy {
    /// The start of the run.
    fn start(&mut self, _ctx: &mut HostCtx) {}

    /// A packet VM `src` sends on `pair`: where it goes. It may change the
    /// packet's `dscp` and `flags::ECT`.
    #[inline]
    fn egress(&mut self, _pkt: &mut Packet, src: VmId, _pair: PairId) -> Egress {
        Egress::Shaper(ShaperId::of_vm(src))
    }

    /// The shaper whose room a sender of VM `src` on `pair` waits for.
    #[inline]
    fn channel(&self, src: VmId, _pair: PairId) -> ShaperId {
        ShaperId::of_vm(src)
    }

    /// Whether [`channel`](Self::channel) gives the same shaper for a VM and pair
    /// all through the run: the datapath then asks once per flow, at the start, and
    /// keeps the answer on the flow (no lookup per sender call).
    #[inline]
    fn fixed_channels(&self) -> bool {
        true
    }

    /// Whether [`ingress`](Self::ingress) does anything: the datapath calls it
    /// only for policies that say so (most act at the sender only).
    #[inline]
    fn uses_ingress(&self) -> bool {
        false
    }

    /// A packet for VM `dst` arrived, before its transport sees it (`tcp`: its flow
    /// is TCP).
    #[inline]
    fn ingress(&mut self, _ctx: &mut HostCtx, _pkt: &Packet, _dst: VmId, _tcp: bool) -> Ingress {
        Ingress::Deliver
    }

    /// VM `vm`'s guarantee (or weight) changed.
    fn guarantee_changed(&mut self, _ctx: &mut HostCtx, _vm: VmId) {}

    /// The periodic tick, with what the host measured since the last.
    fn tick(&mut self, _ctx: &mut HostCtx, _m: &HostMeasure) {}

    /// This policy's recorded cells for the host's `i`-th VM, one per column of
    /// its kind's [`PolicyKind::columns`].
    fn record(&self, _i: usize, _out: &mut Vec<Cell>) {}
}

/// A policy's own table of parameters in the scenario (`[vswitch.<name>]`): what
/// the user writes, every key optional, resolved into the policy's parameters.
pub trait PolicyTable: Default {
    /// The parameters the policy is built with.
    type Params: Clone + std::fmt::Debug + PartialEq;

    /// The table with every key at its default (shown in the scenario schema).
    fn defaults() -> Self;

    /// The parameters, or the key (within the table) that is wrong and what it
    /// expected.
    fn resolve(&self) -> Result<Self::Params, (&'static str, String)>;

    /// The key of the policy's own period, if it has one (`"interval"`): the hosts'
    /// tick follows it when the scenario sets no `vswitch.interval`.
    const PERIOD_KEY: Option<&'static str> = None;

    /// The period the table sets explicitly, if any.
    fn period(&self) -> Option<Time> {
        None
    }

    /// The period the policy runs at (set or default): it must be a whole multiple
    /// of the hosts' tick.
    fn run_period(_p: &Self::Params) -> Option<Time> {
        None
    }
}

/// The host policies, one line each: `Variant(Type) = "name"`, or with its own
/// table of parameters `Variant(Type) = "name", field: Table` (`[vswitch.field]`,
/// a [`PolicyTable`]). Every list of policies (the kinds, the configurations, the
/// dispatch enum here; the scenario's `[vswitch]` table) is generated from this
/// one list through the macro named by `$then`.
macro_rules! for_each_policy {
    ($then:ident) => {
        $then! {
            /// No enforcement: VMs share the NIC as their transports do.
            None($crate::vswitch::none::NoEnforcement) = "none";
            /// Static reservation: each VM capped at its guarantee (not work-conserving).
            Static($crate::vswitch::static_reservation::StaticReservation) = "static", static_: $crate::vswitch::static_reservation::StaticSpec;
            /// MBFQ: a macroscheduler resets each VM's token bucket every interval.
            Mbfq($crate::vswitch::mbfq::Mbfq) = "mbfq", mbfq: $crate::vswitch::mbfq::MbfqSpec;
            /// Trinity: green/red channels per VM pair, ECN-driven red rate control.
            Trinity($crate::vswitch::trinity::Trinity) = "trinity", trinity: $crate::vswitch::trinity::TrinitySpec;
            /// ElasticSwitch: a rate limiter per VM pair, above its guarantee while uncongested.
            ElasticSwitch($crate::vswitch::elasticswitch::ElasticSwitch) = "elasticswitch", elasticswitch: $crate::vswitch::elasticswitch::EsSpec;
        }
    };
}
pub(crate) use for_each_policy;

/// The parameters type of a policy: its table's, or `()` without a table.
macro_rules! params_of {
    () => {
        ()
    };
    ($table:ty) => {
        <$table as PolicyTable>::Params
    };
}

/// Generates [`PolicyKind`], [`PolicyConfig`] and [`Policy`] from the registration.
macro_rules! policies {
    ($($(#[$doc:meta])* $v:ident($t:ty) = $name:literal $(, $field:ident: $table:ty)?;)*) => {
        $crate::kinds::named_kinds! {
            /// A host policy's kind, as scenarios and results name it.
            PolicyKind { $($(#[$doc])* $v = $name,)* }
        }

        impl PolicyKind {
            /// The columns each kind records, in this order in `vm_rates`.
            pub fn columns(self) -> &'static [ColumnSpec] {
                match self { $(PolicyKind::$v => <$t>::COLUMNS,)* }
            }
        }

        /// A policy and its parameters, as the scenario gives them.
        #[derive(Clone, Debug, PartialEq)]
        pub enum PolicyConfig {
            $($(#[$doc])* $v(params_of!($($table)?)),)*
        }

        impl PolicyConfig {
            /// Its kind.
            pub fn kind(&self) -> PolicyKind {
                match self { $(PolicyConfig::$v(_) => PolicyKind::$v,)* }
            }

            /// The policy for a host with `vms`.
            pub fn build(&self, vms: &[VmId]) -> Policy {
                match self { $(PolicyConfig::$v(c) => Policy::$v(<$t>::new(c, vms)),)* }
            }
        }

        /// One host's policy and its state.
        #[derive(Clone, Debug)]
        pub enum Policy {
            $($(#[$doc])* $v($t),)*
        }

        impl Policy {
            /// Its kind.
            pub fn kind(&self) -> PolicyKind {
                match self { $(Policy::$v(_) => PolicyKind::$v,)* }
            }
        }

        impl HostPolicy for Policy {
            fn start(&mut self, ctx: &mut HostCtx) {
                match self { $(Policy::$v(p) => p.start(ctx),)* }
            }
            #[inline]
            fn egress(&mut self, pkt: &mut Packet, src: VmId, pair: PairId) -> Egress {
                match self { $(Policy::$v(p) => p.egress(pkt, src, pair),)* }
            }
            #[inline]
            fn channel(&self, src: VmId, pair: PairId) -> ShaperId {
                match self { $(Policy::$v(p) => p.channel(src, pair),)* }
            }
            #[inline]
            fn fixed_channels(&self) -> bool {
                match self { $(Policy::$v(p) => p.fixed_channels(),)* }
            }
            #[inline]
            fn uses_ingress(&self) -> bool {
                match self { $(Policy::$v(p) => p.uses_ingress(),)* }
            }
            #[inline]
            fn ingress(&mut self, ctx: &mut HostCtx, pkt: &Packet, dst: VmId, tcp: bool) -> Ingress {
                match self { $(Policy::$v(p) => p.ingress(ctx, pkt, dst, tcp),)* }
            }
            fn guarantee_changed(&mut self, ctx: &mut HostCtx, vm: VmId) {
                match self { $(Policy::$v(p) => p.guarantee_changed(ctx, vm),)* }
            }
            fn tick(&mut self, ctx: &mut HostCtx, m: &HostMeasure) {
                match self { $(Policy::$v(p) => p.tick(ctx, m),)* }
            }
            fn record(&self, i: usize, out: &mut Vec<Cell>) {
                match self { $(Policy::$v(p) => p.record(i, out),)* }
            }
        }
    };
}

for_each_policy!(policies);

/// Every kind's recorded columns, in order, with the offset of each kind's first.
pub fn all_columns() -> (Vec<ColumnSpec>, Vec<usize>) {
    let mut cols = Vec::new();
    let mut first = Vec::new();
    for k in PolicyKind::ALL {
        first.push(cols.len());
        cols.extend_from_slice(k.columns());
    }
    (cols, first)
}
