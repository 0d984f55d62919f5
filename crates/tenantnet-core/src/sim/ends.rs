//! The endpoints' own steps: a flow's transport, its small queue's count, its
//! completion. Each works on the [`Endpoints`] alone and returns what happened (a
//! sender to resume, the last flow done); the loop (`sim/endpoints.rs`) acts on it.

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

    /// `bytes` of flow `f`'s data left its host (or were dropped there): whether
    /// its sender, waiting for its small queue, may now resume (its bytes are down
    /// to the limit: Linux's `tcp_wfree` waking a throttled socket).
    pub(super) fn release_small_queue(&mut self, f: FlowId, bytes: u64) -> bool {
        let full = self.packet_size(f);
        let sq = &mut self.flows[f.idx()].small_queue;
        sq.held -= bytes;
        if sq.waiting && sq.room() >= full {
            sq.waiting = false;
            return true;
        }
        false
    }

    /// Sized flow `f` has every byte acknowledged at `now`: whether it was the
    /// last of the run's sized flows.
    pub(super) fn complete(&mut self, f: FlowId, now: Time) -> bool {
        self.flows[f.idx()].end = Some(now);
        self.completed += 1;
        self.completed == self.finite_flows
    }
}
