//! Which partition owns each piece of a parallel run's state, decided here and
//! nowhere else: a node is its cut's (`net::partition`); a port is its node's, a host
//! its node's; a host vswitch (with its VMs, their shapers, pairs sent from them and
//! its CPU cores) is its host's; a flow's sender is its source's and its receiver its
//! destination's. Forks (`merge::fork`), syncs (`merge::sync`) and a partition's own
//! checks (`PartCtx`) ask it.

use crate::net::partition::Cut;
use crate::net::{HostId, Network, VmId};
use crate::sim::parts::Hosts;
use crate::sim::Flow;

/// Each node's, port's, host's and host vswitch's partition.
pub(in crate::sim) struct Owners {
    /// How many partitions there are.
    pub parts: usize,
    /// Each port's (its node's), by `PortId`.
    port: Vec<u16>,
    /// Each port's far end's, by `PortId`.
    peer: Vec<u16>,
    /// Each host's (its node's), by `HostId`.
    host: Vec<u16>,
    /// Each host vswitch's (its host's), by its index.
    vswitch: Vec<u16>,
}

impl Owners {
    /// The owners `cut` gives `net`'s nodes and `hosts`' vswitches.
    pub fn new(cut: &Cut, net: &Network, hosts: &Hosts) -> Self {
        let node = &cut.of_node;
        let host: Vec<u16> = (net.hosts.iter()).map(|h| node[h.node.idx()]).collect();
        Owners {
            parts: cut.parts,
            port: (net.ports.iter()).map(|p| node[p.node().idx()]).collect(),
            peer: (net.ports.iter()).map(|p| node[p.peer().idx()]).collect(),
            vswitch: (hosts.vswitches.iter())
                .map(|hv| host[hv.host.idx()])
                .collect(),
            host,
        }
    }

    /// Port `p`'s partition (its node's).
    pub fn port(&self, p: usize) -> usize {
        self.port[p] as usize
    }

    /// The partition of each port's far end, by `PortId`.
    pub fn peers(&self) -> &[u16] {
        &self.peer
    }

    /// Host `h`'s partition.
    pub fn host(&self, h: HostId) -> usize {
        self.host[h.idx()] as usize
    }

    /// Host vswitch `k`'s partition (its host's).
    pub fn vswitch(&self, k: usize) -> usize {
        self.vswitch[k] as usize
    }

    /// How many host vswitches there are.
    pub fn vswitch_count(&self) -> usize {
        self.vswitch.len()
    }

    /// The partition of each host vswitch, by its index.
    pub fn vswitches(&self) -> Vec<usize> {
        self.vswitch.iter().map(|&p| p as usize).collect()
    }

    /// VM `v`'s partition (its vswitch's), of `hosts`' VMs.
    pub fn vm(&self, hosts: &Hosts, v: VmId) -> usize {
        self.vswitch(hosts.vms[v.idx()].vswitch as usize)
    }

    /// The partition of flow `f`'s sender (its source's).
    pub fn sender(&self, f: &Flow) -> usize {
        self.host(f.spec.src)
    }

    /// The partition of flow `f`'s receiver (its destination's).
    pub fn receiver(&self, f: &Flow) -> usize {
        self.host(f.spec.dst)
    }
}
