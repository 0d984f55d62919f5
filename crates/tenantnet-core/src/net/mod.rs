//! The network: hosts and switches joined by links, each link's sending end a
//! [`Port`] (`crate::switch::port`), the host NICs' queues, routing and the topology
//! builders. Packets and the ids every element indexes by are one layer down
//! (`crate::packet`), re-exported here under their usual names.

pub mod host_jitter;
pub mod host_nic;
pub mod network;
pub mod partition;
pub mod routing;
pub mod topology;

pub use crate::packet::ids;
pub use crate::packet::ids::{FlowId, HostId, NodeId, PktId, PortId, SwitchId, VmId};
pub use crate::packet::{self as packet, Packet, PacketPool};
pub use crate::switch::port::{
    self as port, EcnConfig, EcnMarkPoint, Port, PortConfig, QueueConfig,
};
pub use network::{FabricConfig, Network, NetworkBuilder, NodeKind};
