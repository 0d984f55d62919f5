//! The simulation's events, packed into the 32-bit codes the event queue stores:
//! 5 bits of kind and 27 bits of id. One table (`events!` below) gives every kind
//! its code, so encoding and decoding cannot disagree, and a code of no kind
//! decodes to nothing rather than to another kind.
//!
//! The table's order is also the order of simultaneous events from one origin
//! (`crate::engine::queue`): a packet's release from its sender's small queue comes
//! before its arrival, as on a link without delay it must, and both before the
//! port's next transmission.

use crate::net::{FlowId, PktId, PortId};
use crate::vswitch::c2qos::pmd::CoreId;
use crate::vswitch::ShaperId;

/// Index of a fabric controller among the run's.
pub type ControllerId = u32;

const ID_BITS: u32 = 27;
const ID_MASK: u32 = (1 << ID_BITS) - 1;

/// Largest id an event can carry.
pub const MAX_ID: u32 = ID_MASK;

macro_rules! events {
    ($($(#[$doc:meta])* $code:literal => $v:ident $(($id:ident))?,)*) => {
        /// Something that happens at an instant.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Event {
            $($(#[$doc])* $v $(($id))?,)*
        }

        /// Every kind once (with id 0), in code order.
        #[cfg(test)]
        const ALL: &[Event] = &[$(Event::$v $((events!(@id $id 0)))?,)*];

        impl Event {
            /// The event's kind code.
            #[inline]
            fn kind(self) -> u32 {
                match self {
                    $(Event::$v { .. } => $code,)*
                }
            }

            /// Unpacks an event code; `None` for a code of no kind.
            #[inline]
            pub fn decode(code: u32) -> Option<Event> {
                #[allow(unused_variables)]
                let id = code & ID_MASK;
                Some(match code >> ID_BITS {
                    $($code => Event::$v $((events!(@id $id id)))?,)*
                    _ => return None,
                })
            }
        }
    };
    (@id ControllerId $x:tt) => { $x };
    (@id $t:ident $x:tt) => { $t($x) };
}

events! {
    /// A packet counted by its sender's small queue has left its host's NIC.
    0 => Sent(PktId),
    /// A packet reaches the node in its `at` field.
    1 => Arrive(PktId),
    /// A port finished serializing a packet and has more waiting.
    2 => TxDone(PortId),
    /// The next flows in start order begin.
    3 => FlowStart,
    /// A TCP sender's retransmission timer.
    4 => Rto(FlowId),
    /// A TCP receiver's delayed-ACK timer.
    5 => DelAck(FlowId),
    /// A UDP source sends its next packet or toggles on/off.
    6 => UdpTick(FlowId),
    /// A flow stops offering new data.
    7 => Stop(FlowId),
    /// Record throughput and queue samples.
    8 => Sample,
    /// A vswitch shaper is served: it may release its next packets.
    9 => ShaperTx(ShaperId),
    /// The periodic host tick: measurements and the host policies' tick.
    10 => HostTick,
    /// A fabric controller is woken.
    11 => Control(ControllerId),
    /// A PMD core finished a batch (the vswitch CPU model).
    12 => PmdDone(CoreId),
    /// The C2TB manager refills the cycle buckets.
    13 => C2tbTick,
    /// The NIC handler's monitor reads every host's NIC rate (C2QoS §VII).
    14 => NicMonitor,
    /// A flow whose gate opened with a delay begins.
    15 => Begin(FlowId),
    /// A packet a host sent reaches its NIC (`network.tx_jitter`).
    16 => Handoff(PktId),
}

impl Event {
    /// The id an event carries (0 for kinds without one).
    #[inline]
    fn id(self) -> u32 {
        match self {
            Event::Arrive(p) | Event::Sent(p) | Event::Handoff(p) => p.0,
            Event::TxDone(p) => p.0,
            Event::Rto(f)
            | Event::DelAck(f)
            | Event::UdpTick(f)
            | Event::Stop(f)
            | Event::Begin(f) => f.0,
            Event::ShaperTx(s) => s.0,
            Event::Control(c) => c,
            Event::PmdDone(c) => c.0,
            Event::FlowStart
            | Event::Sample
            | Event::HostTick
            | Event::C2tbTick
            | Event::NicMonitor => 0,
        }
    }

    /// Packs the event.
    #[inline]
    pub fn encode(self) -> u32 {
        let id = self.id();
        debug_assert!(id <= ID_MASK);
        (self.kind() << ID_BITS) | id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_and_no_other_code_decodes() {
        for &e in ALL {
            assert_eq!(Event::decode(e.encode()), Some(e));
        }
        for e in [
            Event::Arrive(PktId(MAX_ID)),
            Event::TxDone(PortId(7)),
            Event::ShaperTx(ShaperId(5)),
        ] {
            assert_eq!(Event::decode(e.encode()), Some(e));
        }
        let kinds = ALL.len() as u32;
        for k in kinds..(1 << (32 - ID_BITS)) {
            assert_eq!(Event::decode(k << ID_BITS), None, "kind {k}");
        }
    }
}
