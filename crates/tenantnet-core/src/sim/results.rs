//! What a run produces: column tables (flows, throughput, queues, links) and a
//! summary. The Python layer turns the tables into pandas DataFrames and Parquet
//! files; nothing here depends on wall-clock time except `Summary::wall_s`.

use serde::Serialize;

use super::flow::{Endpoint, Flow};
use super::recorder::SCOPE_NAMES;
use super::view::RunView;
use super::Sim;
use crate::engine::{to_secs, Time};
pub use crate::table::{Column, Table};
use crate::workload::FlowKind;

/// Per-workload facts for the summary.
#[derive(Clone, Debug, Serialize)]
pub struct WorkloadInfo {
    /// The workload's kind.
    pub kind: String,
    /// Its tenant.
    pub tenant: String,
    /// Flows it generated.
    pub flows: u64,
    /// Offered load as a fraction of source capacity (Poisson workloads).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offered_load: Option<f64>,
    /// Length of the arrival window in seconds (Poisson workloads).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_s: Option<f64>,
}

/// Names and descriptions carried through the run into the results.
#[derive(Clone, Debug, Default)]
pub struct RunMeta {
    /// Scenario name.
    pub name: String,
    /// One-line description of the topology.
    pub topology: String,
    /// Tenant names, by tenant index.
    pub tenants: Vec<String>,
    /// Workload facts, by workload index.
    pub workloads: Vec<WorkloadInfo>,
}

/// `summary.json`.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// tenantnet version that ran the scenario.
    pub tenantnet_version: String,
    /// Scenario name.
    pub scenario: String,
    /// Seed.
    pub seed: u64,
    /// Topology description.
    pub topology: String,
    /// Hosts, switches and links (full-duplex) in the topology.
    pub hosts: usize,
    /// Switches.
    pub switches: usize,
    /// Links (each is two ports).
    pub links: usize,
    /// Simulated time covered, seconds.
    pub simulated_s: f64,
    /// Wall-clock time spent simulating, seconds.
    pub wall_s: f64,
    /// Of that, the time spent in fabric controllers (deciding and applying what
    /// they decided), seconds; absent without a controller.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_wall_s: Option<f64>,
    /// Events processed.
    pub events: u64,
    /// Packets hosts sent (data and ACKs).
    pub packets_sent: u64,
    /// Data packets hosts sent.
    pub data_packets_sent: u64,
    /// Packets delivered to their destination host.
    pub packets_delivered: u64,
    /// Packets dropped (buffer full, refused by the buffer policy, or a full VM queue).
    pub packets_dropped: u64,
    /// Of those, packets dropped at full vswitch VM queues (UDP only; TCP waits).
    pub vm_queue_drops: u64,
    /// Packets evicted from switch buffers to make room for others (BarberQ).
    pub packets_evicted: u64,
    /// Packets still in the network at the end.
    pub packets_in_flight: u64,
    /// Whether sent = delivered + dropped + evicted + in flight, with in-flight packets counted
    /// independently (held by ports plus travelling on links).
    pub conservation_ok: bool,
    /// Whether every shared buffer pool's byte count equals what its ports hold.
    pub buffer_accounting_ok: bool,
    /// CE marks applied.
    pub ecn_marks: u64,
    /// Flows.
    pub flows: usize,
    /// Flows with a size that completed.
    pub flows_completed: u64,
    /// Flows with a size.
    pub flows_finite: u64,
    /// Per-workload facts.
    pub workloads: Vec<WorkloadInfo>,
    /// What the hosts' virtual switches did (absent without VMs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vswitch: Option<VswitchSummary>,
    /// The vswitch CPU model's totals (absent without it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuSummary>,
    /// The packet capture (absent without `[output] capture`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture: Option<super::kept::KeptSummary>,
    /// The flow trace (absent without `[output] trace_flows` or `trace_fraction`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow_trace: Option<super::kept::KeptSummary>,
}

/// How often the hosts' policies acted, over the whole run: whether a scheme's
/// host mechanism engaged at all.
#[derive(Clone, Debug, Serialize)]
pub struct VswitchSummary {
    /// VMs' packets that waited in a shaper because its token bucket (or a Trinity
    /// channel's green and red buckets) did not let them pass at once.
    pub packets_shaped: u64,
    /// Control packets the policies sent (Trinity's and ElasticSwitch's feedback).
    pub control_packets: u64,
}

/// The PMD cores' cycles over the whole run, all hosts.
#[derive(Clone, Debug, Serialize)]
pub struct CpuSummary {
    /// PMD cores.
    pub cores: usize,
    /// Cycles spent forwarding batches (the NIC's receive queue's included).
    pub cycles_forwarding: u64,
    /// Of those, cycles spent forwarding packets to the VMs (`rx_path = "pmd"`).
    pub cycles_rx: u64,
    /// Packets forwarded to the VMs (`rx_path = "pmd"`).
    pub packets_rx: u64,
    /// Packets that found a NIC receive queue full (`rx_path = "pmd"`).
    pub packets_rx_dropped: u64,
    /// Cycles spent on polls that found a ring empty.
    pub cycles_empty_polls: u64,
    /// Cycles asleep with nothing to poll.
    pub cycles_idle: u64,
    /// The cores' clocks: cycles since the start up to the end of each one's
    /// current work.
    pub cycles_clock: u64,
    /// Packets ingress policing dropped.
    pub packets_policed: u64,
    /// C2TB manager calls (summed over VMs) that found a VM with packets waiting
    /// and no cycle tokens: how often its CPU bucket throttled it (absent without
    /// C2TB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub c2tb_throttled: Option<u64>,
    /// Whether forwarding + empty polls + idle = the clock, core by core.
    pub cycle_conservation_ok: bool,
}

/// Everything a run produces.
#[derive(Clone, Debug)]
pub struct Results {
    /// The summary.
    pub summary: Summary,
    /// `flows`, `throughput`, `queues`, `links`, `queue_stats`, `vms`, `vm_rates`.
    pub tables: Vec<Table>,
}

fn labels_of<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    names.map(str::to_string).collect()
}

impl Sim {
    /// The results of the run up to now. The run may go on afterwards, and later
    /// results cover all of it.
    pub fn results(&mut self) -> Results {
        if let Some(par) = self.parallel.par.take() {
            par.sync_into(self);
            self.parallel.par = Some(par);
        }
        let now = self.now;
        for p in &mut self.fabric.net.ports {
            let pool = p.pool().map(|i| &mut self.fabric.net.pools[i as usize]);
            p.finish(now, pool);
        }
        if let Some(c) = self.records.capture.as_deref_mut() {
            c.kept.finish();
        }
        if let Some(t) = self.records.flow_trace.as_deref_mut() {
            t.kept.finish();
        }
        let (live, counted) = RunView::of(self).in_flight_check();
        let c = self.records.counters;
        let summary = Summary {
            tenantnet_version: crate::VERSION.to_string(),
            scenario: self.records.meta.name.clone(),
            seed: self.budget.seed,
            topology: self.records.meta.topology.clone(),
            hosts: self.fabric.net.hosts.len(),
            switches: self.fabric.net.switches.len(),
            links: self.fabric.net.ports.len() / 2,
            simulated_s: to_secs(now),
            wall_s: self.records.wall,
            control_wall_s: (!self.control.is_empty()).then_some(self.records.control_wall),
            events: RunView::of(self).events_processed(),
            packets_sent: c.sent,
            data_packets_sent: c.data_sent,
            packets_delivered: c.delivered,
            packets_dropped: c.dropped,
            vm_queue_drops: self.hosts.vms.iter().map(|v| v.drops).sum(),
            packets_evicted: c.evicted,
            packets_in_flight: live,
            conservation_ok: live == counted
                && c.sent == c.delivered + c.dropped + c.evicted + live,
            buffer_accounting_ok: self.fabric.pools_consistent(now),
            ecn_marks: self.fabric.net.ports.iter().map(|p| p.stats().marks).sum(),
            flows: self.ends.flows.len(),
            flows_completed: self.ends.completed,
            flows_finite: self.ends.finite_flows,
            workloads: self.records.meta.workloads.clone(),
            vswitch: (!self.hosts.vms.is_empty()).then_some(VswitchSummary {
                packets_shaped: c.shaped,
                control_packets: c.control_sent,
            }),
            cpu: RunView::of(self).cpu_summary(),
            capture: (self.records.capture.as_deref()).map(|c| c.kept.summary()),
            flow_trace: (self.records.flow_trace.as_deref()).map(|t| t.kept.summary()),
        };
        let view = RunView::of(self);
        let mut tables = vec![
            view.flows_table(),
            view.throughput_table(),
            view.queues_table(),
            view.links_table(),
            view.queue_stats_table(),
            view.vms_table(),
            view.vm_rates_table(),
            view.queries_table(),
        ];
        tables.extend(view.cpu_tables());
        if let Some(c) = self.records.capture.as_deref() {
            tables.push(view.capture_table(c));
        }
        if let Some(t) = self.records.flow_trace.as_deref() {
            tables.push(view.flow_trace_table(t));
        }
        tables.extend(self.control.tables(&self.fabric.net));
        Results { summary, tables }
    }
}

impl RunView<'_> {
    pub(super) fn host_labels(&self) -> Vec<String> {
        labels_of(
            self.fabric
                .net
                .hosts
                .iter()
                .map(|h| self.fabric.net.nodes[h.node.idx()].name.as_str()),
        )
    }

    fn flows_table(&self) -> Table {
        let mut columns = self.flow_spec_columns();
        columns.extend(self.flow_outcome_columns());
        Table {
            name: "flows",
            columns,
        }
    }

    /// What each flow was asked to do: who, how much, when.
    fn flow_spec_columns(&self) -> Vec<(&'static str, Column)> {
        let fl = &self.ends.flows;
        let secs = |t: u64| to_secs(t);
        let hosts =
            |f: fn(&Flow) -> u32| Column::strings(self.host_labels(), fl.iter().map(f).collect());
        vec![
            ("flow_id", Column::U64((0..fl.len() as u64).collect())),
            (
                "tenant",
                Column::strings(
                    self.records.meta.tenants.clone(),
                    fl.iter().map(|f| f.spec.tenant).collect(),
                ),
            ),
            ("src", hosts(|f| f.spec.src.0)),
            ("dst", hosts(|f| f.spec.dst.0)),
            (
                "size_bytes",
                Column::OptU64(fl.iter().map(|f| f.spec.size).collect()),
            ),
            (
                "start_s",
                // NaN: a flow behind a gate that never opened
                Column::F64(
                    fl.iter()
                        .map(|f| match f.spec.start {
                            Time::MAX => f64::NAN,
                            t => secs(t),
                        })
                        .collect(),
                ),
            ),
            (
                "stop_s",
                Column::OptF64(fl.iter().map(|f| f.spec.stop.map(secs)).collect()),
            ),
        ]
    }

    /// How each flow fared: completion against the ideal, losses, bytes, transport.
    fn flow_outcome_columns(&self) -> Vec<(&'static str, Column)> {
        let fl = &self.ends.flows;
        let secs = |t: u64| to_secs(t);
        let stats = |f: &Flow| match f.ep.as_deref() {
            Some(Endpoint::Tcp { snd, .. }) => (snd.stats.retransmits, snd.stats.timeouts),
            Some(Endpoint::Udp { .. }) | None => (0, 0),
        };
        let ideal = self.ideal_fcts();
        vec![
            (
                "end_s",
                Column::OptF64(fl.iter().map(|f| f.end.map(secs)).collect()),
            ),
            (
                "fct_s",
                Column::OptF64(
                    fl.iter()
                        .map(|f| f.end.map(|e| secs(e - f.spec.start)))
                        .collect(),
                ),
            ),
            ("ideal_fct_s", Column::OptF64(ideal.clone())),
            (
                "slowdown",
                Column::OptF64(
                    fl.iter()
                        .zip(&ideal)
                        .map(|(f, i)| Some(secs(f.end? - f.spec.start) / (*i)?))
                        .collect(),
                ),
            ),
            (
                "retransmits",
                Column::U64(fl.iter().map(|f| stats(f).0).collect()),
            ),
            (
                "timeouts",
                Column::U64(fl.iter().map(|f| stats(f).1).collect()),
            ),
            (
                "bytes_delivered",
                Column::U64(fl.iter().map(|f| f.delivered).collect()),
            ),
            (
                "protocol",
                Column::strings(
                    vec!["tcp".into(), "dctcp".into(), "udp".into()],
                    fl.iter()
                        .map(|f| self.protocol_code(&f.spec.kind))
                        .collect(),
                ),
            ),
            (
                "workload",
                Column::U64(fl.iter().map(|f| f.spec.workload as u64).collect()),
            ),
        ]
    }

    /// 0 TCP, 1 DCTCP, 2 UDP.
    fn protocol_code(&self, k: &FlowKind) -> u32 {
        match k {
            FlowKind::Tcp { transport } => {
                (self.ends.tcp[*transport as usize].cc
                    == crate::transport::CongestionControl::Dctcp) as u32
            }
            FlowKind::Udp { .. } => 2,
        }
    }

    /// Each sized TCP flow's ideal completion time on its own paths.
    fn ideal_fcts(&self) -> Vec<Option<f64>> {
        self.ends
            .flows
            .iter()
            .map(|f| match (&f.spec.kind, f.spec.size) {
                (FlowKind::Tcp { transport }, Some(size)) => {
                    let fwd = self.fabric.net.path(f.spec.src, f.spec.dst, f.hash);
                    let rev = self.fabric.net.path(f.spec.dst, f.spec.src, f.hash_rev);
                    let cfg = &self.ends.tcp[*transport as usize];
                    Some(super::ideal::ideal_fct(
                        &self.fabric.net,
                        &fwd,
                        &rev,
                        size,
                        cfg,
                    ))
                }
                _ => None,
            })
            .collect()
    }

    fn throughput_table(&self) -> Table {
        let tp = &self.records.recorder.tp;
        let nf = self.ends.flows.len();
        let nt = self.records.meta.tenants.len();
        let np = self.fabric.net.ports.len();
        // one label space: flows, then tenants, then ports, then queues, then VMs
        let mut id_labels: Vec<String> = (0..nf).map(|i| i.to_string()).collect();
        id_labels.extend(self.records.meta.tenants.iter().cloned());
        id_labels.extend((0..np).map(|p| self.fabric.net.port_name(crate::net::PortId(p as u32))));
        id_labels.extend(
            self.records.recorder.queue_ids.iter().map(|&(p, q)| {
                format!("{}:q{q}", self.fabric.net.port_name(crate::net::PortId(p)))
            }),
        );
        let nq = self.records.recorder.queue_ids.len();
        id_labels.extend(self.hosts.vms.iter().map(|v| v.name.clone()));
        let ids = tp
            .scope
            .iter()
            .zip(&tp.id)
            .map(|(&s, &i)| match s {
                0 => i,
                1 => nf as u32 + i,
                2 | 5 => (nf + nt) as u32 + i,
                3 => (nf + nt + np) as u32 + i,
                _ => (nf + nt + np + nq) as u32 + i,
            })
            .collect();
        let mut tenant_labels = self.records.meta.tenants.clone();
        tenant_labels.push(String::new());
        let tenants = tp
            .tenant
            .iter()
            .map(|&t| if t == u32::MAX { nt as u32 } else { t })
            .collect();
        let columns = vec![
            ("time_s", Column::F64(tp.time.clone())),
            (
                "scope",
                Column::strings(
                    labels_of(SCOPE_NAMES.into_iter()),
                    tp.scope.iter().map(|&s| s as u32).collect(),
                ),
            ),
            ("id", Column::strings(id_labels, ids)),
            ("tenant", Column::strings(tenant_labels, tenants)),
            ("gbps", Column::F64(tp.gbps.clone())),
        ];
        Table {
            name: "throughput",
            columns,
        }
    }

    pub(super) fn node_labels(&self) -> Vec<String> {
        labels_of(self.fabric.net.nodes.iter().map(|n| n.name.as_str()))
    }

    /// The index of each port among its node's ports.
    fn port_index(&self) -> Vec<u64> {
        let mut idx = vec![0u64; self.fabric.net.ports.len()];
        for n in &self.fabric.net.nodes {
            for (i, p) in n.ports.iter().enumerate() {
                idx[p.idx()] = i as u64;
            }
        }
        idx
    }

    fn queues_table(&self) -> Table {
        let q = &self.records.recorder.q;
        let pidx = self.port_index();
        let ports = &self.fabric.net.ports;
        let columns = vec![
            ("time_s", Column::F64(q.time.clone())),
            (
                "switch",
                Column::strings(
                    self.node_labels(),
                    q.port.iter().map(|&p| ports[p as usize].node().0).collect(),
                ),
            ),
            (
                "port",
                Column::U64(q.port.iter().map(|&p| pidx[p as usize]).collect()),
            ),
            (
                "queue",
                Column::U64(q.queue.iter().map(|&x| x as u64).collect()),
            ),
            ("bytes", Column::U64(q.bytes.clone())),
            (
                "peer",
                Column::strings(
                    self.node_labels(),
                    q.port.iter().map(|&p| ports[p as usize].peer().0).collect(),
                ),
            ),
        ];
        Table {
            name: "queues",
            columns,
        }
    }

    fn links_table(&self) -> Table {
        let ports = &self.fabric.net.ports;
        let pidx = self.port_index();
        let span = self.now.max(1) as f64;
        let col_u =
            |f: &dyn Fn(&crate::net::Port) -> u64| Column::U64(ports.iter().map(f).collect());
        let columns = vec![
            (
                "node",
                Column::strings(
                    self.node_labels(),
                    ports.iter().map(|p| p.node().0).collect(),
                ),
            ),
            ("port", Column::U64(pidx)),
            (
                "peer",
                Column::strings(
                    self.node_labels(),
                    ports.iter().map(|p| p.peer().0).collect(),
                ),
            ),
            (
                "rate_gbps",
                Column::F64(ports.iter().map(|p| p.rate_bps() as f64 / 1e9).collect()),
            ),
            ("tx_bytes", col_u(&|p| p.stats().tx_bytes)),
            ("tx_packets", col_u(&|p| p.stats().tx_pkts)),
            ("drops", col_u(&|p| p.stats().drops)),
            ("evictions", col_u(&|p| p.stats().evictions)),
            ("ecn_marks", col_u(&|p| p.stats().marks)),
            (
                "mean_queue_bytes",
                Column::F64(ports.iter().map(|p| p.stats().area as f64 / span).collect()),
            ),
            ("max_queue_bytes", col_u(&|p| p.stats().max_bytes)),
            (
                "utilization",
                Column::F64(
                    ports
                        .iter()
                        .map(|p| {
                            p.stats().tx_bytes as f64 * 8.0
                                / (p.rate_bps() as f64 * to_secs(self.now).max(1e-30))
                        })
                        .collect(),
                ),
            ),
        ];
        Table {
            name: "links",
            columns,
        }
    }

    /// Per-queue totals of every switch port.
    fn queue_stats_table(&self) -> Table {
        use crate::switch::queues::QueueStats;
        let pidx = self.port_index();
        let span = self.now.max(1) as f64;
        let mut rows: Vec<(usize, usize, QueueStats, u32)> = Vec::new();
        for (i, p) in self.fabric.net.ports.iter().enumerate() {
            if matches!(
                self.fabric.net.nodes[p.node().idx()].kind,
                crate::net::NodeKind::Switch(_)
            ) {
                for q in 0..p.queue_count() {
                    rows.push((i, q, p.queue_stats(q), p.weights()[q]));
                }
            }
        }
        let ports = &self.fabric.net.ports;
        let u =
            |f: &dyn Fn(&QueueStats) -> u64| Column::U64(rows.iter().map(|r| f(&r.2)).collect());
        let columns = vec![
            (
                "node",
                Column::strings(
                    self.node_labels(),
                    rows.iter().map(|r| ports[r.0].node().0).collect(),
                ),
            ),
            (
                "port",
                Column::U64(rows.iter().map(|r| pidx[r.0]).collect()),
            ),
            (
                "peer",
                Column::strings(
                    self.node_labels(),
                    rows.iter().map(|r| ports[r.0].peer().0).collect(),
                ),
            ),
            (
                "queue",
                Column::U64(rows.iter().map(|r| r.1 as u64).collect()),
            ),
            (
                "weight",
                Column::U64(rows.iter().map(|r| r.3 as u64).collect()),
            ),
            ("tx_bytes", u(&|s| s.tx_bytes)),
            ("tx_packets", u(&|s| s.tx_pkts)),
            ("drops", u(&|s| s.drops)),
            ("evictions", u(&|s| s.evictions)),
            ("ecn_marks", u(&|s| s.marks)),
            (
                "mean_bytes",
                Column::F64(rows.iter().map(|r| r.2.area as f64 / span).collect()),
            ),
            ("max_bytes", u(&|s| s.max_bytes)),
        ];
        Table {
            name: "queue_stats",
            columns,
        }
    }
}
