//! The simulation's events, packed into the 32-bit codes the event queue stores:
//! 5 bits of kind and 27 bits of id.

use crate::net::{FlowId, PktId, PortId, VmId};

/// Something that happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A packet reaches the node in its `at` field.
    Arrive(PktId),
    /// A port finished serializing a packet and has more waiting.
    TxDone(PortId),
    /// The next flows in start order begin.
    FlowStart,
    /// A TCP sender's retransmission timer.
    Rto(FlowId),
    /// A TCP receiver's delayed-ACK timer.
    DelAck(FlowId),
    /// A UDP source sends its next packet or toggles on/off.
    UdpTick(FlowId),
    /// A flow stops offering new data.
    Stop(FlowId),
    /// Record throughput and queue samples.
    Sample,
    /// A VM's microscheduler may release its next packet.
    VmTx(VmId),
    /// The periodic vswitch tick: measurement and MBFQ's macroscheduler.
    VmTick,
    /// The next VM guarantee changes are due.
    VmChange,
}

const ID_BITS: u32 = 27;
const ID_MASK: u32 = (1 << ID_BITS) - 1;

/// Largest id an event can carry.
pub const MAX_ID: u32 = ID_MASK;

impl Event {
    /// Packs the event.
    #[inline]
    pub fn encode(self) -> u32 {
        let (k, id) = match self {
            Event::Arrive(p) => (0, p.0),
            Event::TxDone(p) => (1, p.0),
            Event::FlowStart => (2, 0),
            Event::Rto(f) => (3, f.0),
            Event::DelAck(f) => (4, f.0),
            Event::UdpTick(f) => (5, f.0),
            Event::Stop(f) => (6, f.0),
            Event::Sample => (7, 0),
            Event::VmTx(v) => (8, v.0),
            Event::VmTick => (9, 0),
            Event::VmChange => (10, 0),
        };
        debug_assert!(id <= ID_MASK);
        (k << ID_BITS) | id
    }

    /// Unpacks an event code.
    #[inline]
    pub fn decode(code: u32) -> Event {
        let id = code & ID_MASK;
        match code >> ID_BITS {
            0 => Event::Arrive(PktId(id)),
            1 => Event::TxDone(PortId(id)),
            2 => Event::FlowStart,
            3 => Event::Rto(FlowId(id)),
            4 => Event::DelAck(FlowId(id)),
            5 => Event::UdpTick(FlowId(id)),
            6 => Event::Stop(FlowId(id)),
            7 => Event::Sample,
            8 => Event::VmTx(VmId(id)),
            9 => Event::VmTick,
            _ => Event::VmChange,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for e in [
            Event::Arrive(PktId(MAX_ID)),
            Event::TxDone(PortId(7)),
            Event::FlowStart,
            Event::Rto(FlowId(1)),
            Event::DelAck(FlowId(2)),
            Event::UdpTick(FlowId(3)),
            Event::Stop(FlowId(4)),
            Event::Sample,
            Event::VmTx(VmId(5)),
            Event::VmTick,
            Event::VmChange,
        ] {
            assert_eq!(Event::decode(e.encode()), e);
        }
    }
}
