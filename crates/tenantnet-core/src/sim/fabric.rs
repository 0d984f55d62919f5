//! The fabric's own steps: where a switch sends a packet, a port's admission and
//! its end of transmission, a packet freed. Each works on the [`Fabric`] alone and returns what
//! happened (the port's [`Admit`], the packet it started, its wake-up); the event
//! loop (`Sim::enqueue`, `Sim::tx_done`) schedules and counts.

use super::parts::Fabric;
use super::Flow;
use crate::engine::queue::Origin;
use crate::engine::Time;
use crate::net::host_nic::{fq_queues, AckPath, AckRoutes, HostNic};
use crate::net::packet::flags;
use crate::net::port::Admit;
use crate::net::{FlowId, HostId, Network, NodeId, NodeKind, Packet, PktId, PortId, SwitchId};
use crate::switch::DscpMap;
use crate::transport::sack::SackOption;

/// The ports' size in bytes above which each event prefetches the next events' ports
/// and packets (4 MiB: fat-trees from k = 20). Measured on a 2-vCPU AMD EPYC VM
/// (32 MiB of L3, BENCHMARKS.md "Large fat-trees"): on the k = 24 permutation the
/// hints take a further 12 % off; on k = 8, whose state stays in cache, they cost
/// 12 % (the next packet's route computed twice), and at k = 16 (1.9 MiB of ports)
/// they neither gain nor cost.
pub const PREFETCH_ABOVE: usize = 4 << 20;

impl Fabric {
    /// The fabric of `net` with no packet in flight; each flow of `flows` learns its
    /// NIC queues if host NICs keep a queue per flow end, and the ACKs' routes are
    /// recorded if ACKs retrace the data's path.
    pub(super) fn new(net: Network, flows: &mut [Flow]) -> Fabric {
        if net.host_nic == HostNic::Fq {
            let ends = flows.iter().map(|f| (f.spec.src, f.spec.dst));
            let queues = fq_queues(ends, net.hosts.len());
            for (f, q) in flows.iter_mut().zip(queues) {
                f.nic_q = q;
            }
        }
        let ack_routes = (net.ack_path == AckPath::Symmetric).then(|| {
            AckRoutes::build(&net, flows.iter().map(|f| (f.spec.src, f.spec.dst, f.hash)))
        });
        let prefetch = std::mem::size_of_val(net.ports.as_slice()) > PREFETCH_ABOVE;
        Fabric {
            prefetch,
            node_kind: net.nodes.iter().map(|n| n.kind).collect(),
            net,
            pkts: Default::default(),
            evicted: Vec::new(),
            ack_routes,
            sacks: Default::default(),
            host_hook: false,
            handoffs: Default::default(),
        }
    }

    /// Makes every host's handoff to its NIC an event (`sim/handoff.rs`): the same
    /// results, slower. For parallel runs and profiled cuts, which need every event,
    /// and for the tests, which compare handoffs made at once with them.
    pub fn hand_over_by_events(&mut self) {
        self.handoffs.on = false;
    }

    /// How many handoffs to a NIC were made at once so far (`sim/handoff.rs`).
    pub fn handoffs_made(&self) -> u64 {
        self.handoffs.made
    }

    /// When the peer of `port` takes a packet that reaches it at `arrive`: later if
    /// the peer is a host that takes packets later (`network.host_jitter`,
    /// `net::host_jitter`; the wait is drawn as the packet goes on the wire, in the
    /// order it arrives, for the link keeps its order), else at `arrive`.
    #[inline]
    pub(super) fn host_wait(&mut self, port: PortId, arrive: Time) -> Time {
        if self.net.host_jitter.is_empty() {
            return arrive;
        }
        let peer = self.net.ports[port.idx()].peer();
        match self.node_kind[peer.idx()] {
            NodeKind::Host(h) => self.net.host_jitter[h.idx()].deliver(arrive),
            NodeKind::Switch(_) => arrive,
        }
    }

    /// When host `h`'s NIC takes packet `id` that the host sends at `now`, if hosts
    /// hand packets to their NICs later (`network.tx_jitter`, `net::host_jitter`);
    /// the packet is then at the host's node until its NIC takes it.
    #[inline(always)]
    pub(super) fn tx_wait(&mut self, h: HostId, id: PktId, now: Time) -> Option<Time> {
        if self.net.tx_jitter.is_empty() {
            return None;
        }
        Some(self.tx_waited(h, id, now))
    }

    /// `tx_wait` where hosts wait (out of the path of runs where none does).
    #[inline(never)]
    fn tx_waited(&mut self, h: HostId, id: PktId, now: Time) -> Time {
        self.pkts[id].at = self.net.hosts[h.idx()].node;
        self.net.tx_jitter[h.idx()].deliver(now)
    }

    /// The host whose node packet `id` is at.
    #[inline]
    pub(super) fn host_at(&self, id: PktId) -> HostId {
        match self.node_kind[self.pkts[id].at.idx()] {
            NodeKind::Host(h) => h,
            NodeKind::Switch(_) => unreachable!("a packet handed to a NIC is at its host"),
        }
    }

    /// The origin of what host `h` schedules: its NIC (`EventQueue`'s keys).
    #[inline]
    pub(super) fn origin(&self, h: HostId) -> Origin {
        Origin::port(self.net.hosts[h.idx()].nic.0)
    }

    /// When a packet that reaches the far end of `port` at `arrive` has left it.
    #[inline]
    pub(super) fn left_nic(&self, port: PortId, arrive: Time) -> Time {
        arrive - self.net.ports[port.idx()].core.delay
    }

    /// Whether every shared buffer pool's count of bytes in use equals what its
    /// ports hold at `now`.
    pub fn pools_consistent(&self, now: Time) -> bool {
        let mut held = vec![0u64; self.net.pools.len()];
        for p in &self.net.ports {
            if let Some(i) = p.pool() {
                held[i as usize] += p.occupancy(now);
            }
        }
        self.net.pools.iter().zip(held).all(|(p, h)| p.used == h)
    }

    /// Each flow's data path as port names, from the source's NIC to the last
    /// switch's port toward the destination: the ECMP choice its hash makes.
    pub fn flow_paths(&self, flows: &[Flow]) -> Vec<Vec<String>> {
        self.paths(flows, |f| self.net.path(f.spec.src, f.spec.dst, f.hash))
    }

    /// Each flow's ACK path as port names, from the destination's NIC to the last
    /// switch's port toward the source: the ECMP choice of its reverse hash.
    pub fn flow_ack_paths(&self, flows: &[Flow]) -> Vec<Vec<String>> {
        self.paths(flows, |f| self.net.path(f.spec.dst, f.spec.src, f.hash_rev))
    }

    fn paths(&self, flows: &[Flow], path: impl Fn(&Flow) -> Vec<PortId>) -> Vec<Vec<String>> {
        let name = |p| self.net.port_name(p);
        (flows.iter())
            .map(|f| path(f).into_iter().map(name).collect())
            .collect()
    }

    /// The output port and queue of packet `id` at switch `s` (node `node`): by
    /// ECMP on its hash, or for an ACK pinned to its flow's data path back along it;
    /// the queue by that port's DSCP map.
    #[inline]
    pub(super) fn route(&self, node: NodeId, s: SwitchId, id: PktId) -> (PortId, usize) {
        let p = &self.pkts[id];
        let port = if p.has(flags::PINNED) {
            self.pinned_port(node, s, id)
        } else {
            self.net.routing.next_port(s, p.dst, p.hash)
        };
        (port, self.net.classify(port, p.dscp))
    }

    /// The port a pinned ACK leaves switch `node` by: back along its flow's data path.
    #[cold]
    fn pinned_port(&self, node: NodeId, s: SwitchId, id: PktId) -> PortId {
        let p = &self.pkts[id];
        let routes = self.ack_routes.as_ref();
        routes
            .and_then(|r| r.next_port(p.flow.0, node))
            .unwrap_or_else(|| self.net.routing.next_port(s, p.dst, p.hash))
    }

    /// Hints the processor to load the port packet `id`, about to reach a switch,
    /// will be routed to (the packet itself was hinted an event or two before, and
    /// is routed again when it arrives; pinned ACKs and arrivals at hosts are left).
    #[inline(always)]
    pub(super) fn prefetch_route(&self, id: PktId) {
        let Some(p) = self.pkts.get(id) else { return };
        if let NodeKind::Switch(s) = self.node_kind[p.at.idx()] {
            if !p.has(flags::PINNED) {
                self.prefetch_port(self.net.routing.next_port(s, p.dst, p.hash));
            }
        }
    }

    /// Hints the processor to load `port`.
    #[inline(always)]
    pub(super) fn prefetch_port(&self, port: PortId) {
        if let Some(p) = self.net.ports.get(port.idx()) {
            crate::engine::prefetch::prefetch(p);
        }
    }

    /// Offers packet `id` to queue `queue` of `port` at `now`. Packets its buffer
    /// policy evicted to make room are left in `evicted` for the caller to free.
    #[inline]
    pub(super) fn offer(&mut self, now: Time, port: PortId, id: PktId, queue: usize) -> Admit {
        let p = &mut self.net.ports[port.idx()];
        let pool = p.pool().map(|i| &mut self.net.pools[i as usize]);
        p.enqueue(now, id, queue, &mut self.pkts, pool, &mut self.evicted)
    }

    /// `port`'s transmission ended at `now`: the packet it started next, if any, with
    /// its arrival at the peer, and the port's next wake-up, if it needs one.
    #[inline]
    pub(super) fn tx_done(
        &mut self,
        now: Time,
        port: PortId,
    ) -> (Option<(PktId, Time)>, Option<Time>) {
        let p = &mut self.net.ports[port.idx()];
        let pool = p.pool().map(|i| &mut self.net.pools[i as usize]);
        p.tx_done(now, &mut self.pkts, pool)
    }

    /// Frees packet `id`, which goes no further (dropped or evicted), and its SACK
    /// option: the flow and bytes to return to its sender's small queue, if they
    /// still count there (`small_queues`: any flow has one).
    pub(super) fn discard(&mut self, id: PktId, small_queues: bool) -> Option<(FlowId, u64)> {
        let p = &self.pkts[id];
        if p.len > 0 && p.has(flags::ACK) {
            self.sacks.take(p.len);
        }
        let counted = (small_queues && p.has(flags::TSQ)).then_some((p.flow, p.size as u64));
        self.pkts.free(id);
        counted
    }

    /// Packet `id` leaves for another partition: the packet and its SACK option to
    /// mail, and whether it stays here as a ghost (its sender's small queue still
    /// counts it, until it has left the NIC); if not, it is freed here.
    pub(super) fn send_away(&mut self, id: PktId) -> (Packet, Option<SackOption>, bool) {
        let mut pkt = self.pkts[id];
        let sack = if pkt.has(flags::ACK) {
            self.sacks.take(pkt.len)
        } else {
            None
        };
        let ghost = pkt.has(flags::TSQ);
        if ghost {
            pkt.flags &= !flags::TSQ;
        } else {
            self.pkts.free(id);
        }
        (pkt, sack, ghost)
    }

    /// Packet `id`, counted by its sender's small queue, has left its host's NIC:
    /// it counts no more; the flow and bytes to return.
    pub(super) fn left_host(&mut self, id: PktId) -> (FlowId, u64) {
        let p = &mut self.pkts[id];
        debug_assert!(p.has(flags::TSQ));
        p.flags &= !flags::TSQ;
        (p.flow, p.size as u64)
    }

    /// The NIC of host `host` and the queue of it that packet `id` joins, as
    /// `network.host_nic` says (a queue per flow end reads the flow's, from `flows`).
    #[inline]
    pub(super) fn nic_of(&self, host: HostId, id: PktId, flows: &[Flow]) -> (PortId, usize) {
        let nic = self.net.hosts[host.idx()].nic;
        let queue = match self.net.host_nic {
            HostNic::Fifo => 0,
            HostNic::Dscp => self.net.classify(nic, self.pkts[id].dscp),
            HostNic::AckFirst => !self.pkts[id].has(flags::ACK) as usize,
            HostNic::Fq => {
                let p = &self.pkts[id];
                match p.has(flags::CONTROL) {
                    true => 0,
                    false => flows[p.flow.idx()].nic_q[p.has(flags::ACK) as usize] as usize,
                }
            }
        };
        (nic, queue)
    }

    /// A port whose queues are classified by DSCP (a switch port, or a host NIC
    /// under `network.host_nic = "dscp"`), or why `port` is not one.
    fn dscp_port(&self, port: PortId) -> Result<&crate::net::port::Port, String> {
        let p = self
            .net
            .ports
            .get(port.idx())
            .ok_or_else(|| format!("there is no port {}", port.0))?;
        match self.net.nodes[p.node().idx()].kind {
            NodeKind::Host(_) if self.net.host_nic != HostNic::Dscp => Err(format!(
                "port {} is a host's NIC whose queues are not classified by DSCP \
                 (network.host_nic = \"{}\"; \"dscp\" gives host NICs the switches' queues)",
                self.net.port_name(port),
                self.net.host_nic.name()
            )),
            _ => Ok(p),
        }
    }

    /// New weights for `port`'s queues (`packet`: the packet size they are checked
    /// against), a port classified by DSCP only.
    pub(super) fn set_weights(
        &mut self,
        port: PortId,
        weights: &[u32],
        packet: u64,
    ) -> Result<(), String> {
        self.dscp_port(port)?;
        self.net.ports[port.idx()].set_weights(weights, packet)
    }

    /// A new DSCP -> queue map for `port`, a port classified by DSCP whose queues
    /// the map names.
    pub(super) fn set_dscp_map(&mut self, port: PortId, map: DscpMap) -> Result<(), String> {
        let queues = self.dscp_port(port)?.queue_count();
        if let Some((d, q)) = map.pairs().find(|&(_, q)| q >= queues) {
            return Err(format!(
                "DSCP {d} -> queue {q}: expected a queue from 0 to {}",
                queues - 1
            ));
        }
        self.net.set_dscp_map(port, map);
        Ok(())
    }
}
