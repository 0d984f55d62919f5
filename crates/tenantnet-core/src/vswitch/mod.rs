//! The host's virtual switch: tenants' VMs, a per-VM egress queue with a
//! token-bucket microscheduler in front of the NIC, and the enforcement policy
//! that sets the buckets' rates.
//!
//! * [`vm`]: one VM's queue, bucket and backpressure.
//! * [`token_bucket`]: the microscheduler.
//! * [`mbfq`]: MBFQ's macroscheduler (HotMiddlebox 2016), as pure functions.
//!
//! Policies ([`Policy`]), one per host:
//! * `None`: no microscheduler; VMs share the NIC as their transports do.
//! * `Static`: every VM capped at its guarantee all the time (Oktopus-style static
//!   reservation; not work-conserving).
//! * `Mbfq`: every T the macroscheduler measures each VM's send rate and sets the
//!   buckets (or switches them off while the NIC is under 80 % utilised).

pub mod mbfq;
pub mod token_bucket;
pub mod vm;

pub use mbfq::MbfqParams;
pub use vm::{Offer, Vm};

use crate::net::{HostId, VmId};

/// How a host's vswitch limits its VMs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Policy {
    /// No enforcement.
    #[default]
    None,
    /// Each VM capped at its guarantee.
    Static,
    /// MBFQ.
    Mbfq,
}

impl Policy {
    /// Every policy, in the order of their codes in results.
    pub const ALL: [Policy; 3] = [Policy::None, Policy::Static, Policy::Mbfq];

    /// The name used in scenarios and results.
    pub fn name(self) -> &'static str {
        match self {
            Policy::None => "none",
            Policy::Static => "static",
            Policy::Mbfq => "mbfq",
        }
    }
}

/// One host's vswitch.
#[derive(Clone, Debug)]
pub struct HostVswitch {
    /// The host.
    pub host: HostId,
    /// Its policy.
    pub policy: Policy,
    /// C, the capacity shared among its VMs, bit/s.
    pub capacity_bps: u64,
    /// Its VMs.
    pub vms: Vec<VmId>,
    /// NIC bytes sent at the last macroscheduler run.
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

/// Everything about VMs the builder hands the simulation.
#[derive(Clone, Debug, Default)]
pub struct VswitchParams {
    /// The VMs.
    pub vms: Vec<Vm>,
    /// The hosts that have VMs.
    pub hosts: Vec<HostVswitch>,
    /// Guarantee changes, in time order.
    pub changes: Vec<VmChange>,
    /// MBFQ constants; `interval` is also the period of the per-VM rate record.
    pub mbfq: MbfqParams,
}
