//! Nodes, hosts and switches, and the builder that wires them into a [`Network`].

use std::collections::BTreeMap;

use super::host_jitter::host_waits;
use super::host_nic::{AckPath, HostNic};
use super::routing::Routing;
use crate::engine::rng::Rng;
use crate::engine::wait::Wait;
use crate::engine::Time;
use crate::packet::ids::{HostId, NodeId, PortId, SwitchId};
use crate::switch::buffer::SharedPool;
use crate::switch::port::{Port, PortConfig};
use crate::switch::DscpMap;

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// An end host, with one NIC.
    Host(HostId),
    /// An output-queued switch.
    Switch(SwitchId),
}

/// A host or switch, with its stable name.
#[derive(Clone, Debug)]
pub struct Node {
    /// Stable name used in scenarios and results (`h3`, `pod0-edge1`, …).
    pub name: String,
    /// Host or switch, and its index among them.
    pub kind: NodeKind,
    /// The node's output ports, in the order its links were added.
    pub ports: Vec<PortId>,
}

/// An end host.
#[derive(Clone, Debug)]
pub struct Host {
    /// The host's node.
    pub node: NodeId,
    /// The NIC's output port (the host's only port).
    pub nic: PortId,
}

/// A switch.
#[derive(Clone, Debug)]
pub struct Switch {
    /// The switch's node.
    pub node: NodeId,
}

/// How every port of the fabric is configured.
#[derive(Clone, Debug)]
pub struct FabricConfig {
    /// Host NIC ports.
    pub host_port: PortConfig,
    /// Switch ports.
    pub switch_port: PortConfig,
    /// Every switch's DSCP → queue map.
    pub dscp_map: DscpMap,
    /// Size of each switch's shared pool when switch ports use dynamic thresholds
    /// (default: the port buffer times the switch's port count).
    pub pool_size: Option<u64>,
    /// How host NICs order packets (their queues are in `host_port`).
    pub host_nic: HostNic,
    /// The path ACKs take.
    pub ack_path: AckPath,
    /// The longest wait of a packet reaching a host for its stack, picoseconds
    /// (`network.host_jitter`; 0: none).
    pub host_jitter: Time,
    /// The longest wait of a packet a host sends for its NIC, picoseconds
    /// (`network.tx_jitter`; 0: none).
    pub tx_jitter: Time,
    /// How far each port's clock may be off its link's rate, parts per million
    /// (`network.clock_ppm`; 0: exact).
    pub clock_ppm: u32,
}

/// A built network: every node, port and the forwarding tables.
#[derive(Clone)]
pub struct Network {
    /// All nodes, indexed by `NodeId`.
    pub nodes: Vec<Node>,
    /// Hosts, indexed by `HostId`.
    pub hosts: Vec<Host>,
    /// Switches, indexed by `SwitchId`.
    pub switches: Vec<Switch>,
    /// Output ports, indexed by `PortId`.
    pub ports: Vec<Port>,
    /// The port at the other end of each port's link, by `PortId`.
    pub reverse: Vec<PortId>,
    /// Each link's two ports, in the order links were added: `[a→b, b→a]`.
    pub links: Vec<[PortId; 2]>,
    /// Index in `dscp_maps` of each port's DSCP → queue map, by `PortId`.
    port_map: Vec<u16>,
    /// The distinct DSCP → queue maps in use.
    dscp_maps: Vec<DscpMap>,
    /// Whether every port sends every DSCP to queue 0 (no lookup per packet).
    dscp_all_zero: bool,
    /// ECMP forwarding tables.
    pub routing: Routing,
    /// Shared buffer pools (switches whose ports use dynamic thresholds).
    pub pools: Vec<SharedPool>,
    /// Each host's receive timing, by `HostId` (`network.host_jitter`; empty: none).
    pub host_jitter: Vec<Wait>,
    /// Each host's transmit timing, by `HostId` (`network.tx_jitter`; empty: none).
    pub tx_jitter: Vec<Wait>,
    /// How host NICs order packets.
    pub host_nic: HostNic,
    /// The path ACKs take.
    pub ack_path: AckPath,
    by_name: BTreeMap<String, NodeId>,
}

/// Port `id`'s rate on a link of `rate_bps`: its clock off the link's rate by a draw
/// within ±`cfg.clock_ppm` parts per million from stream `clock_ppm/ID` of `seed`
/// (`network.clock_ppm`), or exactly the link's.
fn clock(cfg: &FabricConfig, rate_bps: u64, id: PortId, seed: u64) -> u64 {
    if cfg.clock_ppm == 0 {
        return rate_bps;
    }
    let u = Rng::stream(seed, &format!("clock_ppm/{}", id.0)).uniform() * 2.0 - 1.0;
    let off = (rate_bps as f64 * cfg.clock_ppm as f64 * 1e-6 * u).round() as i64;
    rate_bps.saturating_add_signed(off).max(1)
}

/// Hosts (each on exactly one link, to a switch) and switches, in node order.
fn hosts_and_switches(nodes: &[Node], ports: &[Port]) -> Result<(Vec<Host>, Vec<Switch>), String> {
    let mut hosts = Vec::new();
    let mut switches = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        match n.kind {
            NodeKind::Host(_) => {
                if n.ports.len() != 1 {
                    return Err(format!(
                        "host {} has {} links; a host must have exactly one",
                        crate::units::quoted(&n.name),
                        n.ports.len()
                    ));
                }
                let peer = ports[n.ports[0].idx()].peer();
                if matches!(nodes[peer.idx()].kind, NodeKind::Host(_)) {
                    return Err(format!(
                        "host {} is linked to another host",
                        crate::units::quoted(&n.name)
                    ));
                }
                hosts.push(Host {
                    node: NodeId(i as u32),
                    nic: n.ports[0],
                });
            }
            NodeKind::Switch(_) => switches.push(Switch {
                node: NodeId(i as u32),
            }),
        }
    }
    Ok((hosts, switches))
}

/// One shared pool per switch when the buffer policy draws on one, its ports
/// pointed at it.
fn shared_pools(
    cfg: &FabricConfig,
    nodes: &[Node],
    switches: &[Switch],
    ports: &mut [Port],
) -> Vec<SharedPool> {
    let Some(alpha) = cfg.switch_port.policy.pool_alpha() else {
        return Vec::new();
    };
    let mut pools = Vec::new();
    for sw in switches {
        let own = &nodes[sw.node.idx()].ports;
        let size = cfg
            .pool_size
            .unwrap_or(cfg.switch_port.buffer * own.len() as u64);
        for p in own {
            ports[p.idx()].core.pool = Some(pools.len() as u32);
        }
        pools.push(SharedPool {
            size,
            used: 0,
            alpha,
        });
    }
    pools
}

impl Network {
    /// The node called `name`.
    pub fn node_by_name(&self, name: &str) -> Option<NodeId> {
        self.by_name.get(name).copied()
    }

    /// The queue of port `port` that a packet with DSCP `dscp` joins.
    #[inline]
    pub fn classify(&self, port: PortId, dscp: u8) -> usize {
        if self.dscp_all_zero {
            return 0;
        }
        self.dscp_maps[self.port_map[port.idx()] as usize].queue(dscp)
    }

    /// Port `port`'s DSCP → queue map.
    pub fn dscp_map(&self, port: PortId) -> &DscpMap {
        &self.dscp_maps[self.port_map[port.idx()] as usize]
    }

    /// Replaces port `port`'s DSCP → queue map (maps are shared between ports
    /// that have the same one).
    pub fn set_dscp_map(&mut self, port: PortId, map: DscpMap) {
        let i = match self.dscp_maps.iter().position(|m| *m == map) {
            Some(i) => i,
            None => {
                self.dscp_maps.push(map);
                self.dscp_maps.len() - 1
            }
        };
        self.port_map[port.idx()] = i as u16;
        let zero = DscpMap::default();
        self.dscp_all_zero = self
            .port_map
            .iter()
            .all(|&m| self.dscp_maps[m as usize] == zero);
    }

    /// Whether node `n` is a switch.
    pub fn is_switch(&self, n: NodeId) -> bool {
        matches!(self.nodes[n.idx()].kind, NodeKind::Switch(_))
    }

    /// Host `h`'s NIC port.
    pub fn nic(&self, h: HostId) -> &Port {
        &self.ports[self.hosts[h.idx()].nic.idx()]
    }

    /// A host's name.
    pub fn host_name(&self, h: HostId) -> &str {
        &self.nodes[self.hosts[h.idx()].node.idx()].name
    }

    /// A port's name: `owner->peer`.
    pub fn port_name(&self, p: PortId) -> String {
        let port = &self.ports[p.idx()];
        format!(
            "{}->{}",
            self.nodes[port.node().idx()].name,
            self.nodes[port.peer().idx()].name
        )
    }

    /// The NIC rate of host `h`, in bit/s.
    pub fn host_rate(&self, h: HostId) -> u64 {
        self.ports[self.hosts[h.idx()].nic.idx()].rate_bps()
    }

    /// The ports a packet from host `src` to host `dst` with ECMP hash `hash` leaves
    /// through, in order: `src`'s NIC, then one port per switch on the way.
    pub fn path(&self, src: HostId, dst: HostId, hash: u32) -> Vec<PortId> {
        let mut out = vec![self.hosts[src.idx()].nic];
        while out.len() <= self.switches.len() {
            let at = self.ports[out[out.len() - 1].idx()].peer();
            match self.nodes[at.idx()].kind {
                NodeKind::Host(_) => break,
                NodeKind::Switch(s) => out.push(self.routing.next_port(s, dst, hash)),
            }
        }
        out
    }
}

struct LinkSpec {
    a: NodeId,
    b: NodeId,
    rate_bps: u64,
    delay: Time,
}

/// Collects nodes and links, then builds the [`Network`].
#[derive(Default)]
pub struct NetworkBuilder {
    nodes: Vec<(String, bool)>,
    links: Vec<LinkSpec>,
}

impl NetworkBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a host; hosts are numbered in the order they are added.
    pub fn host(&mut self, name: impl Into<String>) -> NodeId {
        self.nodes.push((name.into(), true));
        NodeId(self.nodes.len() as u32 - 1)
    }

    /// Adds a switch.
    pub fn switch(&mut self, name: impl Into<String>) -> NodeId {
        self.nodes.push((name.into(), false));
        NodeId(self.nodes.len() as u32 - 1)
    }

    /// The nodes added so far: (name, is a host), by `NodeId`.
    pub fn nodes(&self) -> impl Iterator<Item = (&str, bool)> {
        self.nodes.iter().map(|(n, h)| (n.as_str(), *h))
    }

    /// The links added so far: (a, b, rate in bit/s).
    pub fn links(&self) -> impl Iterator<Item = (NodeId, NodeId, u64)> + '_ {
        self.links.iter().map(|l| (l.a, l.b, l.rate_bps))
    }

    /// Adds a full-duplex link: one port at each end, each with `rate_bps` and `delay`.
    pub fn link(&mut self, a: NodeId, b: NodeId, rate_bps: u64, delay: Time) {
        self.links.push(LinkSpec {
            a,
            b,
            rate_bps,
            delay,
        });
    }

    /// Builds the network with every port configured by `cfg`; `seed` (the run's)
    /// seeds the per-switch ECMP hash salts, the ports' clocks and the hosts' waits.
    pub fn build(self, cfg: &FabricConfig, seed: u64) -> Result<Network, String> {
        let (mut nodes, by_name) = self.numbered_nodes()?;
        let mut ports = Vec::with_capacity(self.links.len() * 2);
        let mut reverse = Vec::with_capacity(self.links.len() * 2);
        let mut links = Vec::with_capacity(self.links.len());
        for l in &self.links {
            let (ab, ba) = (PortId(ports.len() as u32), PortId(ports.len() as u32 + 1));
            for (from, to, id) in [(l.a, l.b, ab), (l.b, l.a, ba)] {
                let pc = match nodes[from.idx()].kind {
                    NodeKind::Host(_) => &cfg.host_port,
                    NodeKind::Switch(_) => &cfg.switch_port,
                };
                nodes[from.idx()].ports.push(id);
                let port = Port::new(from, to, l.rate_bps, l.delay, pc);
                ports.push(port.clocked(clock(cfg, l.rate_bps, id, seed)));
            }
            reverse.extend([ba, ab]);
            links.push([ab, ba]);
        }
        let (hosts, switches) = hosts_and_switches(&nodes, &ports)?;
        let pools = shared_pools(cfg, &nodes, &switches, &mut ports);
        let routing = Routing::build(&nodes, &hosts, &switches, &ports, &reverse, seed)?;
        let host_jitter = host_waits("host_jitter", cfg.host_jitter, hosts.len(), seed);
        let tx_jitter = host_waits("tx_jitter", cfg.tx_jitter, hosts.len(), seed);
        Ok(Network {
            nodes,
            hosts,
            switches,
            port_map: vec![0; ports.len()],
            dscp_all_zero: cfg.dscp_map == DscpMap::default(),
            dscp_maps: vec![cfg.dscp_map.clone()],
            ports,
            reverse,
            links,
            routing,
            pools,
            host_nic: cfg.host_nic,
            ack_path: cfg.ack_path,
            host_jitter,
            tx_jitter,
            by_name,
        })
    }

    /// The nodes, hosts and switches numbered in order, and their names.
    fn numbered_nodes(&self) -> Result<(Vec<Node>, BTreeMap<String, NodeId>), String> {
        let mut nodes = Vec::with_capacity(self.nodes.len());
        let (mut hosts_n, mut switches_n) = (0u32, 0u32);
        let mut by_name = BTreeMap::new();
        for (i, (name, is_host)) in self.nodes.iter().enumerate() {
            let kind = if *is_host {
                hosts_n += 1;
                NodeKind::Host(HostId(hosts_n - 1))
            } else {
                switches_n += 1;
                NodeKind::Switch(SwitchId(switches_n - 1))
            };
            if by_name.insert(name.clone(), NodeId(i as u32)).is_some() {
                return Err(format!(
                    "two nodes are named {}",
                    crate::units::quoted(name)
                ));
            }
            nodes.push(Node {
                name: name.clone(),
                kind,
                ports: Vec::new(),
            });
        }
        Ok((nodes, by_name))
    }
}
