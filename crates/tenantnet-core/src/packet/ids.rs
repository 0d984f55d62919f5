//! Typed indices into the simulation's arenas. Each is a `u32` so events and packets
//! stay small, and the type keeps a host index from being used as a port index.

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);
        impl $name {
            /// The index as `usize`, for indexing the arena.
            #[inline]
            pub fn idx(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// A node (host or switch) in `Network::nodes`.
    NodeId
);
id_type!(
    /// A host in `Network::hosts`.
    HostId
);
id_type!(
    /// A switch in `Network::switches`.
    SwitchId
);
id_type!(
    /// An output port (queue plus outgoing link) in `Network::ports`.
    PortId
);
id_type!(
    /// A flow (one transport connection or UDP source) in the simulation's flow table.
    FlowId
);
id_type!(
    /// A packet slot in the `PacketPool`.
    PktId
);
id_type!(
    /// A virtual machine in the simulation's VM table (`crate::vswitch`).
    VmId
);

/// Index of a directed VM pair (sender VM → receiver VM) in the run's pair table
/// (`crate::vswitch::VmPair`); every packet from or to a VM carries its pair.
pub type PairId = u32;

/// The pair of packets that involve no VM.
pub const NO_PAIR: PairId = u32::MAX;
