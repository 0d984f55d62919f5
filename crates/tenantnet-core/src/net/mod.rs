//! The network: packets, output ports (queue + link), hosts, switches, routing and
//! the topology builders.

pub mod host_nic;
pub mod ids;
pub mod network;
pub mod packet;
pub mod port;
pub mod routing;
pub mod topology;

pub use ids::{FlowId, HostId, NodeId, PktId, PortId, SwitchId, VmId};
pub use network::{FabricConfig, Network, NetworkBuilder, NodeKind};
pub use packet::{Packet, PacketPool};
pub use port::{EcnConfig, EcnMarkPoint, Port, PortConfig, QueueConfig};
