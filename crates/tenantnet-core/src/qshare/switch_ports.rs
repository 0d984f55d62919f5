//! A binding as what each switch port is configured with (§5.3): the port's name,
//! its DSCP → queue map and its queues' weights. Deployment formats (SONiC's
//! config_db, rendered in Python) only write these out.
//!
//! Ports are named `Ethernet<4·i>` for the i-th link of a switch in link order (the
//! breakout numbering of 4-lane ports). Both ends of a switch-to-switch link get
//! the link's queues; a server's end is the hypervisor's software WFQ (§5.4), not a
//! switch port.

use std::collections::BTreeMap;

use super::binding::PortQueues;
use super::Datacenter;

/// One switch port's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchPort {
    /// The switch.
    pub switch: String,
    /// The port's name on it (`Ethernet0`, `Ethernet4`, …).
    pub port: String,
    /// The node at the other end of the link.
    pub peer: String,
    /// Queue of each DSCP value 0–63: a D-tenant's DSCP to its queue on this link,
    /// everything else to queue 0.
    pub dscp_to_queue: Vec<u8>,
    /// (queue, weight) of each queue the binding set up on the link.
    pub weights: Vec<(u32, u32)>,
}

/// Each switch port of the links in `ports`, in their order (upper end first), for
/// tenants with DSCP values `dscp`. An error names a link id that `dc` lacks.
pub fn switch_ports(
    dc: &Datacenter,
    ports: &[PortQueues],
    dscp: &BTreeMap<u32, u8>,
) -> Result<Vec<SwitchPort>, String> {
    let names = port_numbers(dc);
    let mut out = Vec::new();
    for pq in ports {
        let Some(l) = dc.links.get(pq.link as usize) else {
            return Err(format!("link {} does not exist", pq.link));
        };
        for (node, peer) in [(l.upper, l.lower), (l.lower, l.upper)] {
            let Some(&i) = names.get(&(node, pq.link)) else {
                continue; // a server's end
            };
            let mut map = vec![0u8; 64];
            for (q, tenants, _) in &pq.queues {
                for t in tenants {
                    match dscp.get(t) {
                        Some(&d) if d != 0 && (d as usize) < 64 => map[d as usize] = *q as u8,
                        _ => {}
                    }
                }
            }
            out.push(SwitchPort {
                switch: dc.names[node as usize].clone(),
                port: format!("Ethernet{}", 4 * i),
                peer: dc.names[peer as usize].clone(),
                dscp_to_queue: map,
                weights: pq.queues.iter().map(|(q, _, w)| (*q, *w)).collect(),
            });
        }
    }
    Ok(out)
}

/// (switch, link) → the link's number among the switch's links.
fn port_numbers(dc: &Datacenter) -> BTreeMap<(u32, u32), u32> {
    let mut count = vec![0u32; dc.names.len()];
    let mut names = BTreeMap::new();
    for (lid, l) in dc.links.iter().enumerate() {
        for node in [l.upper, l.lower] {
            if dc.server_of[node as usize] != u32::MAX {
                continue;
            }
            names.insert((node, lid as u32), count[node as usize]);
            count[node as usize] += 1;
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qshare::place::tests::fat_tree;

    #[test]
    fn each_switch_end_gets_the_link_queues_and_d_tenants_their_queue() {
        let dc = fat_tree(4, 1, 4);
        // a server's link (its ToR end only) and a switch-to-switch link (both ends)
        let server_link = dc
            .links
            .iter()
            .position(|l| dc.server_of[l.lower as usize] != u32::MAX)
            .unwrap() as u32;
        let fabric_link = dc
            .links
            .iter()
            .position(|l| dc.server_of[l.lower as usize] == u32::MAX)
            .unwrap() as u32;
        let queues = vec![(0, vec![1, 2], 3), (5, vec![7], 9)];
        let ports = [server_link, fabric_link].map(|link| PortQueues {
            link,
            queues: queues.clone(),
        });
        let dscp = BTreeMap::from([(1, 0), (2, 0), (7, 12)]);
        let out = switch_ports(&dc, &ports, &dscp).unwrap();
        assert_eq!(out.len(), 3);
        let l = &dc.links[fabric_link as usize];
        assert_eq!(out[1].switch, dc.names[l.upper as usize]);
        assert_eq!(out[2].peer, dc.names[l.upper as usize]);
        for p in &out {
            assert_eq!(p.weights, vec![(0, 3), (5, 9)]);
            assert_eq!(p.dscp_to_queue[12], 5);
            assert_eq!(p.dscp_to_queue.iter().filter(|&&q| q != 0).count(), 1);
            assert!(p.port.starts_with("Ethernet") && p.port[8..].parse::<u32>().unwrap() % 4 == 0);
        }
        let bad = [PortQueues {
            link: 10_000,
            queues,
        }];
        assert!(switch_ports(&dc, &bad, &dscp)
            .unwrap_err()
            .contains("10000"));
    }
}
