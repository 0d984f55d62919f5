//! Workloads: flow-size distributions and the generators that turn a workload
//! description into a list of flows, all drawn before the run starts so the same
//! seed gives the same flows whatever scheme the network runs.

pub mod cdf;
pub mod generate;

pub use cdf::Cdf;

use crate::engine::Time;
use crate::net::{HostId, VmId};
use crate::transport::udp::OnOff;

/// Something traffic starts or ends at, located on a host.
pub trait OnHost: Copy {
    /// The host it is on.
    fn host(&self) -> HostId;
}

impl OnHost for HostId {
    fn host(&self) -> HostId {
        *self
    }
}

/// A traffic endpoint: a host, or a VM on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrafficEnd {
    /// The host.
    pub host: HostId,
    /// The VM, if the traffic belongs to one.
    pub vm: Option<VmId>,
}

impl OnHost for TrafficEnd {
    fn host(&self) -> HostId {
        self.host
    }
}

/// How a flow moves its bytes.
#[derive(Clone, Debug, PartialEq)]
pub enum FlowKind {
    /// A TCP connection with the transport configuration at this index.
    Tcp {
        /// Index into the simulation's transport configurations.
        transport: u32,
    },
    /// A UDP source.
    Udp {
        /// Sending rate while on, in bit/s.
        rate_bps: u64,
        /// Wire size of each packet.
        packet_size: u32,
        /// On/off modulation (`None`: constant bit rate).
        onoff: Option<OnOff>,
    },
}

impl FlowKind {
    /// Whether it is a UDP source.
    #[inline]
    pub fn is_udp(&self) -> bool {
        matches!(self, FlowKind::Udp { .. })
    }
}

impl FlowSpec {
    /// The DSCP of a packet carrying byte `seq` (PIAS tags the first bytes).
    #[inline]
    pub fn dscp_at(&self, seq: u64) -> u8 {
        match self.pias {
            Some((threshold, dscp)) if seq < threshold => dscp,
            _ => self.dscp,
        }
    }
}

/// One flow to simulate.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    /// Sending host.
    pub src: HostId,
    /// Receiving host.
    pub dst: HostId,
    /// The VM that sends (its vswitch paces the data), if any.
    pub src_vm: Option<VmId>,
    /// The VM that receives (its vswitch paces the ACKs), if any.
    pub dst_vm: Option<VmId>,
    /// Bytes to send (`None`: until the run or `stop` ends it).
    pub size: Option<u64>,
    /// Start time.
    pub start: Time,
    /// Time the source stops offering new data.
    pub stop: Option<Time>,
    /// Tenant index.
    pub tenant: u32,
    /// Index of the scenario workload that made it.
    pub workload: u32,
    /// DSCP of its packets.
    pub dscp: u8,
    /// PIAS: the first `.0` bytes carry DSCP `.1` instead.
    pub pias: Option<(u64, u8)>,
    /// Transport.
    pub kind: FlowKind,
    /// Start when this gate opens instead of at `start` (a response waits for its
    /// request; a closed-loop client's next query for its last one).
    pub after: Option<u32>,
    /// The gate this flow counts toward once its last byte is delivered.
    pub signals: Option<u32>,
}

/// A gate of request–response exchanges: it opens once `waits` flows that signal
/// it have had their last byte delivered, and then starts the flows it `opens`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GateSpec {
    /// Flows whose full delivery opens it.
    pub waits: u32,
    /// Flows that start when it opens.
    pub opens: Vec<u32>,
    /// The query it completes when it opens, if any.
    pub ends: Option<u32>,
    /// The query that begins when it opens, if any.
    pub begins: Option<u32>,
    /// How long after it opens its flows start (a closed loop's dormant period).
    pub delay: Time,
    /// Its flows never start at or after this time.
    pub until: Option<Time>,
}

/// The gates and queries of request–response workloads, indexed by the ids that
/// flows' `after`/`signals` and gates' `ends`/`begins` hold.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Exchanges {
    /// Every gate.
    pub gates: Vec<GateSpec>,
    /// Every query.
    pub queries: Vec<QuerySpec>,
}

/// A query: a client's requests to `servers` servers, complete when every
/// response has arrived (with one server, a request–response exchange).
#[derive(Clone, Debug, PartialEq)]
pub struct QuerySpec {
    /// Index of the scenario workload that made it.
    pub workload: u32,
    /// Tenant index.
    pub tenant: u32,
    /// The client's host.
    pub client: HostId,
    /// How many servers it asks.
    pub servers: u32,
    /// When it begins, if fixed in advance (open loop, or a closed loop's first).
    pub start: Option<Time>,
}
