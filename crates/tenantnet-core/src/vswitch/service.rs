//! The per-host service step of the vswitch datapath: when a shaper has a packet
//! that may leave, the host's service decides when it is served. Today's only
//! service, [`Service::Eager`], serves each shaper the instant its bucket allows,
//! independently of the others (a vswitch with unlimited CPU). A CPU model (C2QoS's
//! poll-mode cores serving rings in batches) replaces this decision: it wakes per
//! host, picks which shaper to poll next and charges the cycles it costs.

use crate::engine::Time;

/// How a host's vswitch serves its shapers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Service {
    /// Every shaper sends the moment its bucket allows: no CPU, no order among
    /// shapers.
    #[default]
    Eager,
}

impl Service {
    /// When a shaper whose head packet may leave at `ready` is served (never
    /// before `now`).
    #[inline]
    pub fn serve_at(self, now: Time, ready: Time) -> Time {
        match self {
            Service::Eager => ready.max(now),
        }
    }
}
