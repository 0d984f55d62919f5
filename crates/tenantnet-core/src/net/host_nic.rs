//! The host's end of the wire: how a host NIC orders the packets its host sends
//! (`network.host_nic`) and which path a flow's ACKs take back
//! (`network.ack_path`). These are where simulators differ most from one another
//! and from real hosts (README, "Host NICs and the ACK path"):
//!
//! * [`HostNic::Fifo`]: one FIFO per NIC, so the ACKs a host sends for the flows
//!   it receives wait behind the data it sends itself. ns-3's default
//!   (`DropTailQueue` under a `PointToPointNetDevice`) behaves so.
//! * [`HostNic::Fq`]: per-flow round robin, as Linux's default qdiscs (fq, fq_codel)
//!   order packets: each flow end of the host has its own queue, served by DWRR
//!   with a quantum of two full-size packets (fq's `2 × MTU`). The NIC has
//!   [`FQ_QUEUES`] queues; a host's flow ends take them in flow order, wrapping
//!   round when a host has more (as flows share a hash bucket in fq_codel).
//! * [`HostNic::AckFirst`]: ACKs in strict priority over data, as htsim's host
//!   queue (`FairPriorityQueue`, with TCP ACKs at `PRIO_HI`) serves them.
//! * [`HostNic::Dscp`]: the switches' queues and scheduler (`network.queues`,
//!   `weights`, `scheduler`), a packet joining the queue its DSCP maps to by the
//!   NIC's own DSCP map: a hypervisor's software WFQ, which QShare configures per
//!   tenant on the edge links (Liu et al. §6, "software WFQ ... for D-tenants").
//!
//! [`AckPath::Symmetric`] sends each flow's ACKs back through the switches its
//! data crossed, port by port, as htsim's routes do (its reverse route is the same
//! path index); [`AckPath::Hashed`] lets ECMP hash the ACKs like any packet of the
//! reverse direction, as Linux hosts and ns-3 do.

use super::network::Network;
use crate::packet::ids::{HostId, NodeId, PortId};
use crate::switch::port::QueueConfig;
use crate::switch::sched::SchedulerKind;

crate::kinds::named_kinds! {
    /// How a host NIC orders the packets its host sends (`network.host_nic`).
    HostNic {
        /// One FIFO: a host's ACKs wait behind the data it sends.
        Fifo = "fifo",
        /// Per-flow round robin (Linux fq / fq_codel): each flow end of the host has its own queue.
        Fq = "fq",
        /// ACKs in strict priority over data (htsim's host queue).
        AckFirst = "ack_first",
        /// The switches' queues and scheduler, classified by DSCP (a hypervisor's software WFQ).
        Dscp = "dscp",
    }
}

/// Queues of a host NIC under [`HostNic::Fq`].
pub const FQ_QUEUES: usize = 32;

impl HostNic {
    /// The queues and scheduler of a host NIC, for full-size packets of `pkt` bytes,
    /// where the switch ports have `switch`'s.
    pub fn queues(self, pkt: u64, switch: &QueueConfig) -> QueueConfig {
        match self {
            HostNic::Dscp => switch.clone(),
            HostNic::Fifo => QueueConfig::fifo(),
            HostNic::Fq => QueueConfig {
                weights: vec![1; FQ_QUEUES],
                scheduler: SchedulerKind::Dwrr,
                quantum: 2 * pkt,
                strict: 0,
            },
            HostNic::AckFirst => QueueConfig {
                weights: vec![1, 1],
                scheduler: SchedulerKind::Strict,
                quantum: pkt,
                strict: 0,
            },
        }
    }
}

crate::kinds::named_kinds! {
    /// The path a flow's ACKs take (`network.ack_path`).
    AckPath {
        /// Hashed by ECMP like any packet of the reverse direction (Linux, ns-3).
        Hashed = "hashed",
        /// Back along the data's path, switch by switch (htsim).
        Symmetric = "symmetric",
    }
}

/// Each flow's NIC queue under [`HostNic::Fq`] at its sending end and at its
/// receiving end (where its ACKs leave): a host's flow ends take queues 0, 1, …
/// in flow order, modulo [`FQ_QUEUES`].
pub fn fq_queues(ends: impl Iterator<Item = (HostId, HostId)>, hosts: usize) -> Vec<[u8; 2]> {
    let mut next = vec![0usize; hosts];
    let mut take = |h: HostId| {
        let q = next[h.idx()] % FQ_QUEUES;
        next[h.idx()] += 1;
        q as u8
    };
    ends.map(|(src, dst)| {
        let s = take(src);
        [s, take(dst)]
    })
    .collect()
}

/// The ACK routes of every flow under [`AckPath::Symmetric`]: for each switch on a
/// flow's data path, the port back toward the switch (or host) the data came from.
#[derive(Clone)]
pub struct AckRoutes {
    /// (switch, port its ACKs leave by), each flow's in path order.
    hops: Vec<(NodeId, PortId)>,
    /// Flow f's hops are `hops[at[f]..at[f + 1]]`.
    at: Vec<u32>,
}

impl AckRoutes {
    /// The routes of flows whose data goes from `src` to `dst` with ECMP hash
    /// `hash`, in flow order.
    pub fn build(net: &Network, flows: impl Iterator<Item = (HostId, HostId, u32)>) -> Self {
        let mut r = AckRoutes {
            hops: Vec::new(),
            at: vec![0],
        };
        for (src, dst, hash) in flows {
            let path = net.path(src, dst, hash);
            // the data left switch node(p[i]) by p[i] and entered it by p[i - 1]
            for w in path.windows(2) {
                r.hops
                    .push((net.ports[w[1].idx()].node(), net.reverse[w[0].idx()]));
            }
            r.at.push(r.hops.len() as u32);
        }
        r
    }

    /// The port flow `flow`'s ACKs leave switch `node` by (`None` if `node` is not
    /// on its path, which the simulator never asks).
    #[inline]
    pub fn next_port(&self, flow: u32, node: NodeId) -> Option<PortId> {
        let f = flow as usize;
        let hops = &self.hops[self.at[f] as usize..self.at[f + 1] as usize];
        hops.iter().find(|h| h.0 == node).map(|h| h.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::port::{EcnConfig, PortConfig};
    use crate::net::topology::FatTree;
    use crate::net::{FabricConfig, NodeKind};
    use crate::units::{Rate, TimeSpan};

    #[test]
    fn fq_gives_a_hosts_flow_ends_their_own_queues_in_flow_order() {
        let ends = [(0, 1), (1, 0), (0, 2), (2, 0)].map(|(a, b)| (HostId(a), HostId(b)));
        let q = fq_queues(ends.into_iter(), 3);
        assert_eq!(q, vec![[0, 0], [1, 1], [2, 0], [1, 3]]);
        let many = fq_queues((0..40).map(|_| (HostId(0), HostId(1))), 2);
        assert_eq!(many[31], [31, 31]);
        assert_eq!(many[32], [0, 0], "wraps round after {FQ_QUEUES} ends");
    }

    #[test]
    fn ack_first_sends_a_waiting_ack_before_waiting_data() {
        use crate::net::packet::{flags, Packet, PacketPool};
        let cfg = PortConfig {
            queues: HostNic::AckFirst.queues(9000, &QueueConfig::fifo()),
            ..PortConfig::fifo(1 << 20, EcnConfig::default())
        };
        let mut port = crate::net::Port::new(NodeId(0), NodeId(1), 10_000_000_000, 1000, &cfg);
        let mut pool = PacketPool::default();
        let mut ids = Vec::new();
        for (size, f) in [(9000, 0), (9000, 0), (9000, 0), (64, flags::ACK)] {
            let id = pool.alloc(Packet {
                size,
                flags: f,
                ..Default::default()
            });
            // the queue the simulator picks: ACKs 0, data 1
            let q = (f & flags::ACK == 0) as usize;
            port.enqueue(0, id, q, &mut pool, None, &mut Vec::new());
            ids.push(id);
        }
        let mut order = Vec::new();
        let mut t = 7_200_000; // the first data packet, sent at once, ends
        loop {
            let (started, next) = port.tx_done(t, &mut pool, None);
            order.extend(started.map(|(id, _)| id));
            match next {
                Some(n) => t = n,
                None => break,
            }
        }
        assert_eq!(order, vec![ids[3], ids[1], ids[2]]);
    }

    #[test]
    fn symmetric_acks_retrace_the_data_path_in_a_fat_tree() {
        let t = FatTree {
            k: 4,
            link_rate: Rate(10_000_000_000),
            fabric_rate: None,
            link_delay: TimeSpan(1_000_000),
            oversubscription: 1,
        };
        let b = t.build().unwrap().0;
        let cfg = FabricConfig {
            host_port: PortConfig::fifo(1 << 20, EcnConfig::default()),
            switch_port: PortConfig::fifo(1 << 20, EcnConfig::default()),
            dscp_map: Default::default(),
            pool_size: None,
            host_nic: HostNic::Fifo,
            host_jitter: 0,
            tx_jitter: 0,
            clock_ppm: 0,
            ack_path: AckPath::Symmetric,
        };
        let net = b.build(&cfg, 7).unwrap();
        let flows: Vec<_> = (0..16u32)
            .map(|i| {
                (
                    HostId(i),
                    HostId((i * 7 + 3) % 16),
                    0x9e37_79b9u32.wrapping_mul(i + 1),
                )
            })
            .filter(|f| f.0 != f.1)
            .collect();
        let routes = AckRoutes::build(&net, flows.iter().copied());
        for (i, &(src, dst, hash)) in flows.iter().enumerate() {
            let fwd = net.path(src, dst, hash);
            // walk the ACK from dst's NIC, hop by hop, through `next_port`
            let mut ack = vec![net.hosts[dst.idx()].nic];
            loop {
                let at = net.ports[ack[ack.len() - 1].idx()].peer();
                match net.nodes[at.idx()].kind {
                    NodeKind::Host(h) => {
                        assert_eq!(h, src);
                        break;
                    }
                    NodeKind::Switch(_) => ack.push(routes.next_port(i as u32, at).unwrap()),
                }
            }
            let back: Vec<_> = fwd.iter().rev().map(|p| net.reverse[p.idx()]).collect();
            assert_eq!(ack, back, "flow {i}");
        }
    }
}
