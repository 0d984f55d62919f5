//! Periodic samples of throughput (per flow, tenant, link, queue and VM) and of
//! switch-port occupancy (per queue). A sample at time t reports the average rate
//! over (t − interval, t].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Flow;
use crate::engine::{to_secs, Time};
use crate::net::{FlowId, Network};
use crate::vswitch::Vm;

/// A throughput scope recorded in `throughput.parquet`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Each flow's goodput (bytes delivered in order to the receiver).
    Flow,
    /// Each tenant's summed goodput.
    Tenant,
    /// Each port's transmitted bytes (wire rate, headers and ACKs included).
    Link,
    /// Each queue's transmitted bytes, for switch ports with more than one queue.
    Queue,
    /// Each VM's transmitted bytes past its vswitch (wire rate, ACKs it sends included).
    Vm,
    /// Each tenant's transmitted bytes on each switch-to-switch port (wire rate, its
    /// flows' data and ACKs; not in the default list).
    TenantLink,
    /// Each VM's transmitted data packets past its vswitch (wire rate; the ACKs and
    /// control packets it sends left out): the traffic a hose-model guarantee
    /// covers. Not in the default list; `tenantnet compare` records it.
    VmData,
}

/// What to record.
#[derive(Clone, Debug)]
pub struct OutputParams {
    /// Sampling interval.
    pub interval: Time,
    /// Throughput scopes.
    pub scopes: Vec<Scope>,
    /// Sample switch ports.
    pub queues: bool,
    /// Sample host NIC queues too.
    pub host_queues: bool,
    /// The ports whose packets are captured (ids), and the most packets kept.
    pub capture: Option<(Vec<u32>, u64)>,
    /// Whether each flow is traced, and the most rows kept.
    pub trace: Option<(Vec<bool>, u64)>,
}

/// Scope codes stored in the throughput columns.
pub const SCOPE_NAMES: [&str; 7] = [
    "flow",
    "tenant",
    "link",
    "queue",
    "vm",
    "tenant_link",
    "vm_data",
];

/// The switch-to-switch ports: those whose node and peer are both switches.
pub fn fabric_ports(net: &Network) -> Vec<u32> {
    (0..net.ports.len() as u32)
        .filter(|&i| {
            let p = &net.ports[i as usize];
            net.is_switch(p.node()) && net.is_switch(p.peer())
        })
        .collect()
}

/// Each tenant's wire bytes sent on each fabric port (the `tenant_link` scope).
#[derive(Clone)]
pub struct TenantLinks {
    /// Row of each port (`u32::MAX`: not counted).
    slot: Vec<u32>,
    /// The counted ports, by row.
    ports: Vec<u32>,
    tenants: usize,
    /// Bytes by row × tenant.
    bytes: Vec<u64>,
    last: Vec<u64>,
}

impl TenantLinks {
    fn new(net: &Network, tenants: usize) -> Self {
        let ports = fabric_ports(net);
        let mut slot = vec![u32::MAX; net.ports.len()];
        for (r, &p) in ports.iter().enumerate() {
            slot[p as usize] = r as u32;
        }
        let n = ports.len() * tenants;
        TenantLinks {
            slot,
            ports,
            tenants,
            bytes: vec![0; n],
            last: vec![0; n],
        }
    }

    /// Tenant `tenant`'s packet of `size` bytes starts on port `port`.
    #[inline]
    pub fn count(&mut self, port: u32, tenant: u32, size: u32) {
        let r = self.slot[port as usize];
        if r != u32::MAX && (tenant as usize) < self.tenants {
            self.bytes[r as usize * self.tenants + tenant as usize] += size as u64;
        }
    }
}

/// Throughput samples, column by column.
#[derive(Default, Clone)]
pub struct ThroughputCols {
    /// Sample time, seconds.
    pub time: Vec<f64>,
    /// Index into `SCOPE_NAMES`.
    pub scope: Vec<u8>,
    /// Flow, tenant, port or VM index, or index into `Recorder::queue_ids`.
    pub id: Vec<u32>,
    /// Tenant index (`u32::MAX` for links).
    pub tenant: Vec<u32>,
    /// Rate over the interval, Gb/s.
    pub gbps: Vec<f64>,
}

/// Port occupancy samples, column by column.
#[derive(Default, Clone)]
pub struct QueueCols {
    /// Sample time, seconds.
    pub time: Vec<f64>,
    /// Port index.
    pub port: Vec<u32>,
    /// Queue index within the port (always 0 for a FIFO port).
    pub queue: Vec<u8>,
    /// Bytes held.
    pub bytes: Vec<u64>,
}

/// The sampler.
#[derive(Clone)]
pub struct Recorder {
    p: OutputParams,
    last_t: Time,
    active: Vec<FlowId>,
    last_flow: Vec<u64>,
    /// Bytes delivered per tenant so far (updated by the data path).
    pub tenant_bytes: Vec<u64>,
    last_tenant: Vec<u64>,
    last_port: Vec<u64>,
    /// (port, queue) of every queue recorded in the `queue` scope.
    pub queue_ids: Vec<(u32, u8)>,
    last_queue: Vec<u64>,
    last_vm: Vec<u64>,
    last_vm_data: Vec<u64>,
    sampled_ports: Vec<u32>,
    /// Throughput samples.
    pub tp: ThroughputCols,
    /// Occupancy samples.
    pub q: QueueCols,
    /// Per-tenant bytes on fabric ports, if the `tenant_link` scope is recorded.
    pub tenant_links: Option<Box<TenantLinks>>,
}

impl Recorder {
    /// A recorder for `net`, `flows` flows, `tenants` tenants and `vms` VMs.
    pub fn new(p: OutputParams, net: &Network, flows: usize, tenants: usize, vms: usize) -> Self {
        let sampled_ports = if p.queues {
            (0..net.ports.len() as u32)
                .filter(|&i| {
                    let owner = net.ports[i as usize].node();
                    p.host_queues || net.is_switch(owner)
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut queue_ids = Vec::new();
        if p.scopes.contains(&Scope::Queue) {
            for (i, port) in net.ports.iter().enumerate() {
                if port.queue_count() > 1 {
                    queue_ids.extend((0..port.queue_count()).map(|q| (i as u32, q as u8)));
                }
            }
        }
        let count = |s: Scope| if p.scopes.contains(&s) { vms } else { 0 };
        let (vm_count, vm_data_count) = (count(Scope::Vm), count(Scope::VmData));
        Recorder {
            last_queue: vec![0; queue_ids.len()],
            queue_ids,
            last_t: 0,
            active: Vec::new(),
            last_flow: vec![0; flows],
            tenant_bytes: vec![0; tenants],
            last_tenant: vec![0; tenants],
            last_port: vec![0; net.ports.len()],
            last_vm: vec![0; vm_count],
            last_vm_data: vec![0; vm_data_count],
            sampled_ports,
            tp: ThroughputCols::default(),
            q: QueueCols::default(),
            tenant_links: (p.scopes.contains(&Scope::TenantLink))
                .then(|| Box::new(TenantLinks::new(net, tenants))),
            p,
        }
    }

    /// The sampling interval.
    pub fn interval(&self) -> Time {
        self.p.interval
    }

    /// Flow `f` started: sample it from now on.
    pub fn flow_started(&mut self, f: FlowId) {
        if self.p.scopes.contains(&Scope::Flow) {
            self.active.push(f);
        }
    }

    /// Whether a sample reads the flows that have started.
    pub(super) fn samples_flows(&self) -> bool {
        self.p.scopes.contains(&Scope::Flow)
    }

    /// Whether a sample reads the ports (link or queue throughput, occupancy).
    pub(super) fn samples_ports(&self) -> bool {
        self.p.scopes.contains(&Scope::Link)
            || !self.queue_ids.is_empty()
            || !self.sampled_ports.is_empty()
    }

    /// The flows a sample reads: those started and not yet over at the last sample,
    /// and those started since.
    pub(super) fn sampled_flows(&self) -> &[FlowId] {
        &self.active
    }

    /// Takes in what the partitions of a parallel run counted since the last call
    /// (`parts`, recorders that never sample): the tenants' bytes summed, each
    /// fabric port's per-tenant bytes from the partition that owns it
    /// (`port_owner`), and the flows they started, in the order of their `order`
    /// (each partition's, one per flow started: the sequential run's start order).
    pub(super) fn absorb(
        &mut self,
        parts: &mut [&mut Recorder],
        port_owner: &dyn Fn(u32) -> usize,
        order: &mut [Vec<(u128, u32)>],
    ) {
        for (i, b) in self.tenant_bytes.iter_mut().enumerate() {
            *b = parts.iter().map(|p| p.tenant_bytes[i]).sum();
        }
        if let Some(tl) = self.tenant_links.as_mut() {
            for (r, &port) in tl.ports.iter().enumerate() {
                let theirs = parts[port_owner(port)].tenant_links.as_ref();
                let from = theirs.expect("every partition records what the run does");
                let row = r * tl.tenants..(r + 1) * tl.tenants;
                tl.bytes[row.clone()].copy_from_slice(&from.bytes[row]);
            }
        }
        let mut started: Vec<((u128, u32), FlowId)> = Vec::new();
        for (p, o) in parts.iter_mut().zip(order.iter_mut()) {
            debug_assert_eq!(p.active.len(), o.len(), "an order per flow started");
            started.extend(o.drain(..).zip(p.active.drain(..)));
        }
        started.sort_unstable();
        self.active.extend(started.into_iter().map(|(_, f)| f));
    }

    fn push(&mut self, t: f64, scope: u8, id: u32, tenant: u32, gbps: f64) {
        self.tp.time.push(t);
        self.tp.scope.push(scope);
        self.tp.id.push(id);
        self.tp.tenant.push(tenant);
        self.tp.gbps.push(gbps);
    }

    /// Takes the samples for the interval ending at `now`.
    pub fn sample(&mut self, now: Time, net: &Network, flows: &[Flow], vms: &[Vm]) {
        let dt = to_secs(now - self.last_t);
        if dt <= 0.0 {
            return;
        }
        let t = to_secs(now);
        let to_gbps = |bytes: u64| bytes as f64 * 8.0 / dt / 1e9;
        if self.p.scopes.contains(&Scope::Flow) {
            let active = std::mem::take(&mut self.active);
            let mut keep = Vec::with_capacity(active.len());
            for f in active {
                let fl = &flows[f.idx()];
                let d = fl.delivered - self.last_flow[f.idx()];
                self.last_flow[f.idx()] = fl.delivered;
                self.push(t, 0, f.0, fl.spec.tenant, to_gbps(d));
                if !fl.over() {
                    keep.push(f);
                }
            }
            self.active = keep;
        }
        if self.p.scopes.contains(&Scope::Tenant) {
            for i in 0..self.tenant_bytes.len() {
                let d = self.tenant_bytes[i] - self.last_tenant[i];
                self.last_tenant[i] = self.tenant_bytes[i];
                self.push(t, 1, i as u32, i as u32, to_gbps(d));
            }
        }
        if self.p.scopes.contains(&Scope::Link) {
            for (i, port) in net.ports.iter().enumerate() {
                let d = port.tx_bytes() - self.last_port[i];
                self.last_port[i] = port.tx_bytes();
                self.push(t, 2, i as u32, u32::MAX, to_gbps(d));
            }
        }
        for k in 0..self.queue_ids.len() {
            let (port, q) = self.queue_ids[k];
            let tx = net.ports[port as usize].queue_tx_bytes(q as usize);
            let d = tx - self.last_queue[k];
            self.last_queue[k] = tx;
            self.push(t, 3, k as u32, u32::MAX, to_gbps(d));
        }
        vm_samples(&mut self.tp, (t, dt), 4, &mut self.last_vm, vms, |v| {
            v.tx_bytes
        });
        vm_samples(&mut self.tp, (t, dt), 6, &mut self.last_vm_data, vms, |v| {
            v.data_bytes
        });
        if let Some(tl) = self.tenant_links.as_mut() {
            for (r, &port) in tl.ports.iter().enumerate() {
                for k in 0..tl.tenants {
                    let i = r * tl.tenants + k;
                    let d = tl.bytes[i] - std::mem::replace(&mut tl.last[i], tl.bytes[i]);
                    self.tp.time.push(t);
                    self.tp.scope.push(5);
                    self.tp.id.push(port);
                    self.tp.tenant.push(k as u32);
                    self.tp.gbps.push(to_gbps(d));
                }
            }
        }
        for &i in &self.sampled_ports {
            let port = &net.ports[i as usize];
            for q in 0..port.queue_count() {
                self.q.time.push(t);
                self.q.port.push(i);
                self.q.queue.push(q as u8);
                self.q.bytes.push(port.queue_occupancy(q, now));
            }
        }
        self.last_t = now;
    }
}

/// One sample per VM of `last` (none when the scope is off: `last` is empty) in scope
/// `scope`: the rate of the counter `bytes` over the `dt` seconds ending at `t`.
fn vm_samples(
    tp: &mut ThroughputCols,
    (t, dt): (f64, f64),
    scope: u8,
    last: &mut [u64],
    vms: &[Vm],
    bytes: impl Fn(&Vm) -> u64,
) {
    for (k, (vm, seen)) in vms.iter().zip(last.iter_mut()).enumerate() {
        let now = bytes(vm);
        let d = now - std::mem::replace(seen, now);
        tp.time.push(t);
        tp.scope.push(scope);
        tp.id.push(k as u32);
        tp.tenant.push(vm.tenant);
        tp.gbps.push(d as f64 * 8.0 / dt / 1e9);
    }
}
