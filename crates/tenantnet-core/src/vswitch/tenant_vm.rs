//! A tenant's VM as its host's virtual switch knows it: identity, hose-model
//! guarantee and weight, and the bytes the datapath measured it send and receive.
//! Its egress queue is a [`Shaper`](super::shaper::Shaper); what limits it is its
//! host's policy.

use crate::net::HostId;

/// One VM.
#[derive(Clone, Debug)]
pub struct Vm {
    /// Name, unique in the scenario.
    pub name: String,
    /// Tenant index.
    pub tenant: u32,
    /// The host it runs on.
    pub host: HostId,
    /// Index of its host's vswitch among the hosts that have VMs.
    pub vswitch: u32,
    /// MG, the minimum bandwidth guarantee (the hose model's per-VM B), bit/s.
    pub guarantee_bps: u64,
    /// Weight among the VMs of its host; `None`: MG / C (MBFQ Table 1).
    pub weight: Option<f64>,
    /// Wire bytes the VM has sent past the vswitch to its NIC.
    pub tx_bytes: u64,
    /// Of those, the wire bytes of its data packets (its ACKs and its policy's
    /// control packets left out): what a hose-model guarantee covers.
    pub data_bytes: u64,
    /// `tx_bytes` at the last host tick.
    pub tx_at_tick: u64,
    /// Wire bytes delivered to the VM, as of the last host tick (the datapath counts
    /// per pair and sums at each tick: no per-packet branch on the receiver).
    pub rx_bytes: u64,
    /// `rx_bytes` at the last host tick.
    pub rx_at_tick: u64,
    /// Packets dropped at a full shaper queue.
    pub drops: u64,
    /// The DSCP a controller tags its packets with (`None`: their own).
    pub dscp_tag: Option<u8>,
    /// What the vswitch's CPU model needs of it (C2QoS).
    pub cpu: VmCpu,
}

/// A VM's settings for the vswitch's CPU model (C2QoS).
#[derive(Clone, Debug, Default)]
pub struct VmCpu {
    /// C_alloc given explicitly, cycles/s (`None`: from the model).
    pub cycles: Option<u64>,
    /// HBS class, 1–8 (`None`: 8).
    pub priority: Option<u8>,
    /// Its memory on another NUMA node than the vswitch's.
    pub remote: bool,
    /// Its SLA preference, packet size (bytes) and flows (`None`: the host's
    /// default).
    pub preference: Option<(u32, crate::vswitch::c2qos::Flows)>,
}

impl Vm {
    /// A VM that has sent nothing yet.
    pub fn new(name: String, tenant: u32, host: HostId, guarantee_bps: u64) -> Self {
        Vm {
            name,
            tenant,
            host,
            vswitch: u32::MAX,
            guarantee_bps,
            weight: None,
            tx_bytes: 0,
            data_bytes: 0,
            tx_at_tick: 0,
            rx_bytes: 0,
            rx_at_tick: 0,
            drops: 0,
            dscp_tag: None,
            cpu: VmCpu::default(),
        }
    }
}
