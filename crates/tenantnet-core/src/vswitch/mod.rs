//! The host's virtual switch: tenants' VMs, the shapers (queue + token bucket) in
//! front of the NIC, each served the moment its bucket allows, and one
//! host policy per host that instantiates shapers, sets their rates and sees every
//! packet on its way out and in.
//!
//! * [`tenant_vm`]: a VM's identity, guarantee and measured bytes.
//! * [`shaper`], [`token_bucket`]: the datapath's shapers.
//! * [`policy`]: the host-policy interface and its registration.
//! * One file per policy: [`none`], [`static_reservation`], [`mbfq`] (its
//!   macroscheduler as pure functions, and the policy).

pub mod c2qos;
pub mod channels;
pub mod elasticswitch;
pub mod mbfq;
pub mod none;
pub mod partition;
pub mod policy;
pub mod shaper;
pub mod static_reservation;
pub mod tenant_vm;
pub mod token_bucket;
pub mod trinity;
pub mod two_colour;

pub use mbfq::{MbfqParams, MbfqSpec};
pub use policy::{
    HostPolicy, PairId, Policy, PolicyConfig, PolicyKind, PolicyTable, VmPair, NO_PAIR,
};
pub use shaper::{Offer, Shaper, ShaperId, Shapers};
pub use tenant_vm::{Vm, VmCpu};

use crate::net::{HostId, VmId};

/// One host's vswitch.
#[derive(Clone, Debug)]
pub struct HostVswitch {
    /// The host.
    pub host: HostId,
    /// Its policy and the policy's state.
    pub policy: Policy,
    /// C, the capacity shared among its VMs, bit/s.
    pub capacity_bps: u64,
    /// Its VMs.
    pub vms: Vec<VmId>,
    /// NIC bytes sent at the last tick.
    pub nic_at_tick: u64,
}

/// A VM's guarantee (and weight) changing during the run.
#[derive(Clone, Debug, PartialEq)]
pub struct VmChange {
    /// When.
    pub at: crate::engine::Time,
    /// Which VM.
    pub vm: VmId,
    /// The new guarantee, bit/s.
    pub guarantee_bps: u64,
    /// The new weight, if weights are explicit.
    pub weight: Option<f64>,
}

/// A pipe-model guarantee from one VM to another (`[[tenants.pipes]]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pipe {
    /// The sending VM.
    pub src: VmId,
    /// The receiving VM.
    pub dst: VmId,
    /// The guarantee, bit/s on the wire.
    pub guarantee_bps: u64,
}

/// The hosts' tick when the scenario sets none (nor a policy's period): MBFQ's T
/// (§4), 100 ms.
pub const DEFAULT_TICK: crate::engine::Time = 100_000_000_000;

/// Everything about VMs the builder hands the simulation.
#[derive(Clone, Debug, Default)]
pub struct VswitchParams {
    /// The VMs.
    pub vms: Vec<Vm>,
    /// The hosts that have VMs.
    pub hosts: Vec<HostVswitch>,
    /// Guarantee changes, in time order.
    pub changes: Vec<VmChange>,
    /// The period of every host's tick (measurements, the policies' tick, the
    /// `vm_rates` rows).
    pub tick: crate::engine::Time,
    /// The scenario key that set it (named when the tick makes a run too big).
    pub tick_key: String,
    /// Each VM shaper's queue, bytes.
    pub queue: u64,
    /// Each VM shaper's bucket depth, bytes.
    pub burst: u64,
    /// Pipe-model guarantees between VMs.
    pub pipes: Vec<Pipe>,
    /// Where VM pairs' guarantees come from (`vswitch.pair_guarantees`).
    pub pair_guarantees: partition::PairGuarantees,
    /// The hosts' PMD cores, if the vswitch costs CPU (`[vswitch.cpu]`).
    pub cpu: Option<c2qos::CpuSetup>,
}
