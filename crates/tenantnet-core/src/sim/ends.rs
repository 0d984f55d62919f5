//! The endpoints' own steps: a flow's transport, its small queue's count, its
//! completion. Each works on the [`Endpoints`] alone and returns or leaves what
//! happened (the last flow done, senders to resume); the loop acts on it.

use super::endpoints::transport_of;
use super::parts::Endpoints;
use crate::engine::Time;
use crate::net::FlowId;
use crate::transport::TcpConfig;

impl Endpoints {
    /// Flow `f`'s TCP configuration (a UDP flow's is the first's, unused).
    #[inline]
    pub(super) fn tcp_of(&self, f: FlowId) -> &TcpConfig {
        &self.tcp[transport_of(&self.flows[f.idx()].spec.kind)]
    }

    /// The wire size of flow `f`'s full-sized data packet.
    #[inline]
    pub(super) fn packet_size(&self, f: FlowId) -> u64 {
        self.tcp_of(f).packet_size()
    }

    /// `bytes` of flow `f`'s data left its host (or were dropped there). A sender
    /// waiting for its small queue whose bytes are now down to the limit joins
    /// [`resume`](Endpoints::resume): Linux's `tcp_wfree` queueing a throttled
    /// socket for the TSQ tasklet, which runs after the completion or drop that
    /// freed the bytes.
    pub(super) fn release_small_queue(&mut self, f: FlowId, bytes: u64) {
        let full = self.packet_size(f);
        let sq = &mut self.flows[f.idx()].small_queue;
        sq.held -= bytes;
        if sq.waiting && sq.room() >= full {
            sq.waiting = false;
            self.resume.push(f);
        }
    }

    /// Sized flow `f` has every byte acknowledged at `now`: whether it was the
    /// last of the run's sized flows.
    pub(super) fn complete(&mut self, f: FlowId, now: Time) -> bool {
        self.flows[f.idx()].end = Some(now);
        self.completed += 1;
        self.completed == self.finite_flows
    }
}
