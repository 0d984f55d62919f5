//! What the QShare controller records: every interval's U-factor, score, binding
//! and DSCP per tenant (`qshare_tenants`), and every port configuration it pushed
//! (`qshare_queues`: a row per queue).

use super::qshare::Member;
use crate::engine::{to_secs, Time};
use crate::net::{Network, PortId};
use crate::qshare::binding::{Binding, PortQueues};
use crate::qshare::Placer;
use crate::table::{Column, Table};

/// The controller's rows so far.
pub(super) struct Records {
    /// Tenant names, in member order (as the tenant rows code them).
    members: Vec<String>,
    /// Tenant names, by placer id (as the queue rows list them).
    names: std::collections::BTreeMap<u32, String>,
    /// Placer link names.
    links: Vec<String>,
    t_time: Vec<f64>,
    t_tenant: Vec<u32>,
    t_u: Vec<f64>,
    t_score: Vec<f64>,
    t_dedicated: Vec<u64>,
    t_dscp: Vec<u64>,
    q_time: Vec<f64>,
    q_link: Vec<u32>,
    q_port: Vec<PortId>,
    q_queue: Vec<u64>,
    q_weight: Vec<u64>,
    q_tenants: Vec<String>,
    /// Each port's queues as last recorded.
    shown: std::collections::BTreeMap<PortId, Vec<(u32, Vec<u32>, u32)>>,
}

impl Records {
    pub(super) fn new(members: &[Member], placer: &Placer) -> Self {
        Records {
            members: members.iter().map(|m| m.name.clone()).collect(),
            names: members.iter().map(|m| (m.id, m.name.clone())).collect(),
            links: (0..placer.dc.links.len() as u32)
                .map(|l| placer.dc.link_name(l))
                .collect(),
            t_time: Vec::new(),
            t_tenant: Vec::new(),
            t_u: Vec::new(),
            t_score: Vec::new(),
            t_dedicated: Vec::new(),
            t_dscp: Vec::new(),
            q_time: Vec::new(),
            q_link: Vec::new(),
            q_port: Vec::new(),
            q_queue: Vec::new(),
            q_weight: Vec::new(),
            q_tenants: Vec::new(),
            shown: std::collections::BTreeMap::new(),
        }
    }

    /// The binding `b` at `now` (a decision, an arrival or a departure): a row per
    /// member present, with its (U-factor, score) at the last decision in `us`.
    pub(super) fn tenants(
        &mut self,
        now: Time,
        members: &[Member],
        us: &[(f64, f64)],
        b: &Binding,
    ) {
        for (i, (m, &(u, s))) in members.iter().zip(us).enumerate() {
            let Some(&dscp) = b.dscp.get(&m.id) else {
                continue; // not present
            };
            self.t_time.push(to_secs(now));
            self.t_tenant.push(i as u32);
            self.t_u.push(u);
            self.t_score.push(s);
            self.t_dedicated.push(b.dedicated.contains(&m.id) as u64);
            self.t_dscp.push(dscp as u64);
        }
    }

    /// Port `port` of link `pq.link` configured as `pq` at `at`: rows only if its
    /// queues' weights or tenants differ from those last recorded (a tenant can take
    /// another's queue with no weight or map changing).
    pub(super) fn port(&mut self, at: Time, pq: &PortQueues, port: PortId) {
        if self.shown.get(&port) == Some(&pq.queues) {
            return;
        }
        self.shown.insert(port, pq.queues.clone());
        for (q, ts, w) in &pq.queues {
            self.q_time.push(to_secs(at));
            self.q_link.push(pq.link);
            self.q_port.push(port);
            self.q_queue.push(*q as u64);
            self.q_weight.push(*w as u64);
            let names: Vec<&str> = ts.iter().map(|t| self.names[t].as_str()).collect();
            self.q_tenants.push(names.join(" "));
        }
    }

    /// `qshare_tenants` and `qshare_queues`.
    pub(super) fn tables(&self, net: &Network) -> Vec<Table> {
        let mut ports: Vec<PortId> = self.q_port.clone();
        ports.sort();
        ports.dedup();
        let port_code = |p: &PortId| ports.binary_search(p).unwrap() as u32;
        let mut sets: Vec<String> = self.q_tenants.clone();
        sets.sort();
        sets.dedup();
        let set_code = |s: &String| sets.binary_search(s).unwrap() as u32;
        vec![
            Table {
                name: "qshare_tenants",
                columns: vec![
                    ("time_s", Column::F64(self.t_time.clone())),
                    (
                        "tenant",
                        Column::strings(self.members.clone(), self.t_tenant.clone()),
                    ),
                    ("u_factor", Column::F64(self.t_u.clone())),
                    ("score", Column::F64(self.t_score.clone())),
                    ("dedicated", Column::U64(self.t_dedicated.clone())),
                    ("dscp", Column::U64(self.t_dscp.clone())),
                ],
            },
            Table {
                name: "qshare_queues",
                columns: vec![
                    ("time_s", Column::F64(self.q_time.clone())),
                    (
                        "link",
                        Column::strings(self.links.clone(), self.q_link.clone()),
                    ),
                    (
                        "port",
                        Column::strings(
                            ports.iter().map(|&p| net.port_name(p)).collect(),
                            self.q_port.iter().map(port_code).collect(),
                        ),
                    ),
                    ("queue", Column::U64(self.q_queue.clone())),
                    ("weight", Column::U64(self.q_weight.clone())),
                    (
                        "tenants",
                        Column::strings(
                            sets.clone(),
                            self.q_tenants.iter().map(set_code).collect(),
                        ),
                    ),
                ],
            },
        ]
    }
}
