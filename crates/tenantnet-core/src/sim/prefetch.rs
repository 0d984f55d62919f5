//! Prefetching on large fabrics: before an event is handled, the processor is asked
//! to start loading what the next events read ([`crate::engine::prefetch`]), where
//! the ports outgrow the caches (`Fabric::prefetch`, set by the fabric's size).
//! The events are read here, in the loop's layer; the fabric only loads its ports
//! and packets.

use super::parts::Fabric;
use super::Event;
use crate::engine::queue::EventQueue;

/// Hints the processor to load what the next event reads first (a transmission's
/// end: its port; a packet reaching a switch: the port it is routed to) and the
/// packets of the events likely soon after it (the top's children in the current
/// bucket's heap). Out of line, so that runs without the hints pay only the test of
/// the flag.
#[inline(never)]
pub(super) fn near(events: &EventQueue, fabric: &Fabric) {
    let mut near = events.peek_near();
    match near.next().and_then(Event::decode) {
        Some(Event::Arrive(id)) => fabric.prefetch_route(id),
        Some(Event::TxDone(port)) => fabric.prefetch_port(port),
        _ => {}
    }
    for soon in near {
        if let Some(Event::Arrive(id)) = Event::decode(soon) {
            fabric.pkts.prefetch(id);
        }
    }
}
