//! Tail drop over a completely shared port buffer (BarberQ's "best effort"): a
//! packet is dropped only when the port is full.

use super::{Arrival, BufferParams, BufferRule};
use crate::switch::queues::QueueStore;

/// The `tail_drop` policy.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TailDrop;

impl BufferRule for TailDrop {
    #[inline(always)]
    fn admit<Q: QueueStore>(&self, a: Arrival<'_, Q>) -> bool {
        a.qs.total(a.now) + a.size as u64 <= a.buffer
    }

    fn configure(_: &BufferParams) -> Result<Self, (&'static str, String)> {
        Ok(TailDrop)
    }
}
