//! The vswitch's PMD cores in the data path (`vswitch/c2qos`): a VM's packet waits
//! in its guest TX ring until its core polls it; a batch is one event, at whose end
//! its packets go on through the host policy to the NIC; under ingress policing
//! the batch's packets are metered right after the copy (one timestamp per batch,
//! as OVS reads the TSC once) and those out of profile are dropped, having cost
//! their copy; the C2TB manager refills the cycle buckets every `invl`; each host
//! tick records every VM's cycles and every core's use. With the NIC handler, a
//! monitor reads each host's NIC every T_mon and switches the host's policers on
//! or off (§VII).

use std::collections::VecDeque;

use super::results::{Column, Table};
use super::{Event, Sim};
use crate::engine::{to_secs, Time};
use crate::net::{FlowId, PktId, VmId};
use crate::vswitch::c2qos::c2tb::C2tb;
use crate::vswitch::c2qos::hbs::Hbs;
use crate::vswitch::c2qos::nic_handler::NicMonitor;
use crate::vswitch::c2qos::pmd::{CoreId, Pmd, Sched};
use crate::vswitch::c2qos::{CpuParams, CpuSetup, Flows, PolicerUnit};
use crate::vswitch::token_bucket::{TokenBucket, BITS_PER_BYTE};
use crate::vswitch::HostVswitch;

/// A VM's guest TX ring.
#[derive(Clone, Debug, Default)]
pub struct Ring {
    /// Its packets, and whether each may be dropped (not a TCP data packet).
    q: VecDeque<(PktId, bool)>,
    /// TCP senders waiting for room, in the order they stopped.
    waiting: VecDeque<FlowId>,
    /// The core that polls it, and its slot there.
    core: u32,
    slot: u32,
}

/// Per host tick, per VM: `vm_cpu` rows.
#[derive(Clone, Debug, Default)]
struct VmCpuCols {
    time: Vec<f64>,
    vm: Vec<u32>,
    cycles: Vec<u64>,
    share: Vec<f64>,
    packets: Vec<u64>,
    policed: Vec<u64>,
    tokens: Vec<Option<f64>>,
    class: Vec<Option<u64>>,
}

/// Per host tick, per core: `pmd` rows.
#[derive(Clone, Debug, Default)]
struct PmdCols {
    time: Vec<f64>,
    host: Vec<u32>,
    core: Vec<u64>,
    busy: Vec<f64>,
    poll: Vec<f64>,
    idle: Vec<f64>,
}

/// A core's counters at the last tick.
#[derive(Clone, Debug, Default)]
struct AtTick {
    used: u64,
    poll: u64,
    idle: u64,
    vm_cycles: Vec<u64>,
    vm_packets: Vec<u64>,
}

/// Per NIC monitor reading: `nic_monitor` rows.
#[derive(Clone, Debug, Default)]
struct NicCols {
    time: Vec<f64>,
    host: Vec<u32>,
    gbps: Vec<f64>,
    policing: Vec<u64>,
}

/// Per VM: what its packets cost beyond their size, and its policer.
#[derive(Clone, Debug)]
struct VmCost {
    /// Π R_i.
    factor: f64,
    /// Ingress policing's bucket, if the VM may be policed.
    policer: Option<TokenBucket>,
    /// Whether the policer is on.
    policing: bool,
    /// Packets policed so far, and at the last tick.
    policed: u64,
    policed_at_tick: u64,
}

/// The CPU model's state.
#[derive(Clone, Debug)]
pub struct CpuState {
    p: CpuParams,
    cores: Vec<Pmd>,
    rings: Vec<Ring>,
    vm: Vec<VmCost>,
    /// Per workload: whether its packets miss the EMC (`None`: no workload's do,
    /// and packets are not looked up by workload).
    multiple: Option<Vec<bool>>,
    /// Each core's counters at the last tick.
    at_tick: Vec<AtTick>,
    /// The NIC handler's monitor of each host (by vswitch), if the handler is on.
    monitors: Vec<NicMonitor>,
    vm_cols: VmCpuCols,
    pmd_cols: PmdCols,
    nic_cols: NicCols,
}

impl CpuState {
    /// Cores for every host's VMs (VM k of a host on core k mod `cores`), each
    /// with C2TB buckets if it limits them.
    pub fn new(s: &CpuSetup, hosts: &[HostVswitch], vms: usize) -> Self {
        let p = s.params.clone();
        let mut cores = Vec::new();
        let mut rings = vec![Ring::default(); vms];
        for (k, h) in hosts.iter().enumerate() {
            for c in 0..p.cores as usize {
                let mine: Vec<VmId> = h
                    .vms
                    .iter()
                    .copied()
                    .skip(c)
                    .step_by(p.cores as usize)
                    .collect();
                for (slot, v) in mine.iter().enumerate() {
                    rings[v.idx()].core = cores.len() as u32;
                    rings[v.idx()].slot = slot as u32;
                }
                let c2tb = p.c2tb.as_ref().map(|t| {
                    let b: Vec<(u64, u64)> = mine
                        .iter()
                        .map(|v| (s.c_alloc[v.idx()], s.weights[v.idx()]))
                        .collect();
                    C2tb::new(t.mode, t.redistribution, t.depth, t.interval, p.hz, &b)
                });
                let sched = match p.hbs {
                    Some(demote) => {
                        let classes: Vec<u8> = mine.iter().map(|v| s.priority[v.idx()]).collect();
                        Sched::Hbs(Hbs::new(&classes, demote))
                    }
                    None => Sched::default(),
                };
                cores.push(Pmd {
                    host: k as u32,
                    vm_cycles: vec![0; mine.len()],
                    vm_packets: vec![0; mine.len()],
                    vms: mine,
                    sched,
                    c2tb,
                    ..Default::default()
                });
            }
        }
        let at_tick = cores
            .iter()
            .map(|c| AtTick {
                vm_cycles: vec![0; c.vms.len()],
                vm_packets: vec![0; c.vms.len()],
                ..Default::default()
            })
            .collect();
        let vm = (0..vms)
            .map(|i| VmCost {
                factor: s.factor[i],
                policer: p.policer.as_ref().map(|q| {
                    let (rate, burst) = s.policer[i];
                    match q.unit {
                        PolicerUnit::Bytes => TokenBucket::new(rate, burst, BITS_PER_BYTE),
                        PolicerUnit::Packets => TokenBucket::new(rate, burst, 1),
                    }
                }),
                policing: p.policer.as_ref().is_some_and(|q| q.from_start),
                policed: 0,
                policed_at_tick: 0,
            })
            .collect();
        CpuState {
            p,
            cores,
            rings,
            vm,
            multiple: s.multiple.contains(&true).then(|| s.multiple.clone()),
            at_tick,
            monitors: Vec::new(),
            vm_cols: VmCpuCols::default(),
            pmd_cols: PmdCols::default(),
            nic_cols: NicCols::default(),
        }
    }

    /// Packets waiting in rings and in batches in progress.
    pub fn held(&self) -> u64 {
        let rings: usize = self.rings.iter().map(|r| r.q.len()).sum();
        let batches: usize = self.cores.iter().map(|c| c.batch.len()).sum();
        (rings + batches) as u64
    }

    /// Whether every core's cycles are accounted for.
    pub fn conserved(&self) -> bool {
        self.cores.iter().all(Pmd::conserved)
    }
}

impl Sim {
    /// The C2TB manager's first call, if C2TB is on, and the NIC monitor's, if the
    /// NIC handler is.
    pub(super) fn start_cpu(&mut self) {
        if let Some(t) = self.cpu.as_ref().and_then(|c| c.p.c2tb.as_ref()) {
            if t.interval <= self.end {
                self.schedule(t.interval, Event::C2tbTick);
            }
        }
        let Some(h) = self.cpu.as_ref().and_then(|c| c.p.nic_handler) else {
            return;
        };
        let monitors = (self.vhosts.iter())
            .map(|v| {
                let nic = self.net.hosts[v.host.idx()].nic;
                NicMonitor::new(h, self.net.ports[nic.idx()].rate_bps())
            })
            .collect();
        if let Some(cpu) = self.cpu.as_mut() {
            cpu.monitors = monitors;
        }
        if h.monitor <= self.end {
            self.schedule(h.monitor, Event::NicMonitor);
        }
    }

    /// The NIC handler's monitor (every T_mon): reads each host's NIC and switches
    /// its VMs' policers on (full) or off.
    pub(super) fn on_nic_monitor(&mut self) {
        let now = self.now;
        let Some(cpu) = self.cpu.as_mut() else {
            return;
        };
        for (k, hv) in self.vhosts.iter().enumerate() {
            let nic = self.net.hosts[hv.host.idx()].nic;
            let tx = self.net.ports[nic.idx()].tx_bytes();
            let policed = hv.vms.iter().map(|v| cpu.vm[v.idx()].policed).sum();
            let m = &mut cpu.monitors[k];
            let (bps, changed) = m.observe(tx, policed);
            let on = m.on;
            if changed {
                let from_start = cpu.p.policer.as_ref().is_some_and(|q| q.from_start);
                for v in &hv.vms {
                    let vc = &mut cpu.vm[v.idx()];
                    vc.policing = on || from_start;
                    if let Some(b) = vc.policer.as_mut() {
                        b.refill(now);
                    }
                }
            }
            let r = &mut cpu.nic_cols;
            r.time.push(to_secs(now));
            r.host.push(k as u32);
            r.gbps.push(bps / 1e9);
            r.policing.push(on as u64);
        }
        if let Some(h) = cpu.p.nic_handler {
            if now + h.monitor <= self.end {
                self.schedule(now + h.monitor, Event::NicMonitor);
            }
        }
    }

    /// VM `v`'s packet enters its guest TX ring (dropped and counted if the ring is
    /// full and it may be; a TCP data packet is only sent when there was room).
    pub(super) fn ring_in(&mut self, v: VmId, id: PktId, may_drop: bool) {
        let Some(cpu) = self.cpu.as_mut() else {
            return;
        };
        let ring = &mut cpu.rings[v.idx()];
        if may_drop && ring.q.len() >= cpu.p.ring as usize {
            self.vms[v.idx()].drops += 1;
            self.counters.dropped += 1;
            self.discard(id);
            return;
        }
        ring.q.push_back((id, may_drop));
        let core = ring.core as usize;
        if !cpu.cores[core].busy() {
            cpu.cores[core].wake(self.now, cpu.p.hz);
            self.pmd_poll(core);
        }
    }

    /// The room VM `v`'s ring has for a sender of `packet`-byte packets.
    #[inline]
    pub(super) fn ring_room(&self, v: VmId, packet: u64) -> u64 {
        match &self.cpu {
            Some(cpu) => {
                let used = cpu.rings[v.idx()].q.len() as u64;
                (cpu.p.ring as u64).saturating_sub(used) * packet
            }
            None => u64::MAX,
        }
    }

    /// Flow `f` of VM `v` waits for room in the ring.
    pub(super) fn ring_wait(&mut self, v: VmId, f: FlowId) {
        if let Some(cpu) = self.cpu.as_mut() {
            self.flows[f.idx()].blocked = true;
            cpu.rings[v.idx()].waiting.push_back(f);
        }
    }

    /// Core `c`, awake and idle, polls its VMs in turn and starts the first batch it
    /// finds (or sleeps).
    fn pmd_poll(&mut self, c: usize) {
        let Some(cpu) = self.cpu.as_mut() else {
            return;
        };
        let (rings, p) = (&cpu.rings, &cpu.p);
        let core = &mut cpu.cores[c];
        let Some(slot) = core.choose(p.empty_poll, |v| rings[v.idx()].q.len()) else {
            return;
        };
        let v = core.vms[slot];
        let n = cpu.rings[v.idx()].q.len().min(p.batch as usize);
        let mut cost = p.batch_overhead;
        let now = self.now;
        let per_packet = p.policer.as_ref().map(|q| q.unit) == Some(PolicerUnit::Packets);
        // allocates only when the policer drops
        let mut policed = Vec::new();
        for _ in 0..n {
            let (id, d) = cpu.rings[v.idx()].q.pop_front().expect("n ≤ len");
            let pkt = &self.pkts[id];
            let size = pkt.size;
            let flows = match &cpu.multiple {
                Some(m) if m[self.flows[pkt.flow.idx()].spec.workload as usize] => Flows::Multiple,
                _ => Flows::Single,
            };
            let vc = &mut cpu.vm[v.idx()];
            if let Some(b) = vc.policer.as_mut().filter(|_| vc.policing) {
                let tokens = if per_packet { 1 } else { size as u64 };
                if !b.police(now, tokens) {
                    // dropped after the copy: it cost its ingress cycles only
                    cost += (p.costs.ingress(size) * vc.factor).round() as u64;
                    vc.policed += 1;
                    policed.push(id);
                    continue;
                }
            }
            cost += p.costs.cycles(size, flows, vc.factor);
            cpu.cores[c].batch.push((id, d));
        }
        let served = cpu.cores[c].batch.len();
        let end = cpu.cores[c].start(slot, cost, served, p.hz);
        self.schedule(end, Event::PmdDone(CoreId(c as u32)));
        for id in policed {
            self.counters.dropped += 1;
            self.discard(id);
        }
        // the copy out of the guest freed the ring's slots
        self.wake_ring(v);
    }

    /// Core `c`'s batch is done: its packets go on to the host policy and the NIC,
    /// and the core polls on.
    pub(super) fn on_pmd_done(&mut self, c: CoreId) {
        let c = c.0 as usize;
        let Some(cpu) = self.cpu.as_mut() else {
            return;
        };
        let core = &mut cpu.cores[c];
        let Some(slot) = core.finish() else {
            return;
        };
        let v = core.vms[slot];
        let mut batch = std::mem::take(&mut core.batch);
        for &(id, may_drop) in &batch {
            self.vswitch_egress(v, id, may_drop);
        }
        batch.clear();
        if let Some(cpu) = self.cpu.as_mut() {
            cpu.cores[c].batch = batch;
        }
        self.pmd_poll(c);
    }

    /// Wakes VM `v`'s senders waiting for ring room, in order, while a packet fits.
    fn wake_ring(&mut self, v: VmId) {
        loop {
            let Some(cpu) = self.cpu.as_mut() else {
                return;
            };
            let Some(&f) = cpu.rings[v.idx()].waiting.front() else {
                return;
            };
            let need = self.tcp[self.transport(f)].packet_size();
            if self.ring_room(v, need) < need {
                return;
            }
            if let Some(cpu) = self.cpu.as_mut() {
                cpu.rings[v.idx()].waiting.pop_front();
            }
            self.flows[f.idx()].blocked = false;
            self.drive_sender(f, false, |snd, now, cfg, out| snd.resume(now, cfg, out));
        }
    }

    /// The C2TB manager (every `invl`): refills every core's buckets and wakes the
    /// sleeping cores that may now serve a VM.
    pub(super) fn on_c2tb_tick(&mut self) {
        let Some(cpu) = self.cpu.as_mut() else {
            return;
        };
        let mut wake = Vec::new();
        let rings = &cpu.rings;
        for (c, core) in cpu.cores.iter_mut().enumerate() {
            if core.c2tb.is_some() {
                core.refill(|v| rings[v.idx()].q.len());
                if !core.busy() {
                    wake.push(c);
                }
            }
        }
        let (now, hz) = (self.now, cpu.p.hz);
        for c in wake {
            if let Some(cpu) = self.cpu.as_mut() {
                cpu.cores[c].wake(now, hz);
            }
            self.pmd_poll(c);
        }
        let invl = self
            .cpu
            .as_ref()
            .and_then(|c| c.p.c2tb.as_ref())
            .map(|t| t.interval);
        if let Some(iv) = invl {
            if self.now + iv <= self.end {
                self.schedule(self.now + iv, Event::C2tbTick);
            }
        }
    }

    /// The rows of `vm_cpu` and `pmd` for the interval `iv` that ends now.
    pub(super) fn record_cpu(&mut self, iv: Time) {
        let now = self.now;
        let Some(cpu) = self.cpu.as_mut() else {
            return;
        };
        let (hz, t) = (cpu.p.hz, to_secs(now));
        let span = (iv as u128 * hz as u128 / crate::units::PS_PER_SEC as u128).max(1) as f64;
        for (c, core) in cpu.cores.iter_mut().enumerate() {
            if !core.busy() {
                core.wake(now, hz);
            }
            let last = &mut cpu.at_tick[c];
            for (slot, v) in core.vms.iter().enumerate() {
                let cyc = core.vm_cycles[slot] - last.vm_cycles[slot];
                let r = &mut cpu.vm_cols;
                r.time.push(t);
                r.vm.push(v.0);
                r.cycles.push(cyc);
                r.share.push(cyc as f64 / span);
                r.packets
                    .push(core.vm_packets[slot] - last.vm_packets[slot]);
                let vc = &mut cpu.vm[v.idx()];
                r.policed.push(vc.policed - vc.policed_at_tick);
                vc.policed_at_tick = vc.policed;
                r.tokens
                    .push(core.c2tb.as_ref().map(|b| b.buckets[slot].tokens as f64));
                r.class.push(match &core.sched {
                    Sched::Hbs(h) => Some(h.class_of(slot) as u64),
                    Sched::RoundRobin { .. } => None,
                });
            }
            let used = core.used();
            let r = &mut cpu.pmd_cols;
            r.time.push(t);
            r.host.push(core.host);
            r.core.push(c as u64);
            r.busy.push((used - last.used) as f64 / span);
            r.poll.push((core.poll - last.poll) as f64 / span);
            r.idle.push((core.idle - last.idle) as f64 / span);
            *last = AtTick {
                used,
                poll: core.poll,
                idle: core.idle,
                vm_cycles: core.vm_cycles.clone(),
                vm_packets: core.vm_packets.clone(),
            };
        }
    }

    /// The `vm_cpu` and `pmd` tables, when the CPU model is on.
    pub(super) fn cpu_tables(&self) -> Vec<Table> {
        let Some(cpu) = self.cpu.as_ref() else {
            return Vec::new();
        };
        let (r, q) = (&cpu.vm_cols, &cpu.pmd_cols);
        let hosts = self.host_labels();
        let labels: Vec<String> = (self.vhosts.iter())
            .map(|h| hosts[h.host.idx()].clone())
            .collect();
        let n = &cpu.nic_cols;
        let nic = (!cpu.monitors.is_empty()).then(|| Table {
            name: "nic_monitor",
            columns: vec![
                ("time_s", Column::F64(n.time.clone())),
                ("host", Column::strings(labels.clone(), n.host.clone())),
                ("nic_gbps", Column::F64(n.gbps.clone())),
                ("policing", Column::U64(n.policing.clone())),
            ],
        });
        let mut tables = vec![
            Table {
                name: "vm_cpu",
                columns: vec![
                    ("time_s", Column::F64(r.time.clone())),
                    ("vm", Column::strings(self.vm_labels(), r.vm.clone())),
                    ("cycles", Column::U64(r.cycles.clone())),
                    ("cpu_share", Column::F64(r.share.clone())),
                    ("packets", Column::U64(r.packets.clone())),
                    ("policed", Column::U64(r.policed.clone())),
                    ("tokens", Column::OptF64(r.tokens.clone())),
                    ("class", Column::OptU64(r.class.clone())),
                ],
            },
            Table {
                name: "pmd",
                columns: vec![
                    ("time_s", Column::F64(q.time.clone())),
                    ("host", Column::strings(labels, q.host.clone())),
                    ("core", Column::U64(q.core.clone())),
                    ("busy", Column::F64(q.busy.clone())),
                    ("poll", Column::F64(q.poll.clone())),
                    ("idle", Column::F64(q.idle.clone())),
                ],
            },
        ];
        tables.extend(nic);
        tables
    }

    /// The CPU model's totals for the summary.
    pub(super) fn cpu_summary(&self) -> Option<super::results::CpuSummary> {
        let cpu = self.cpu.as_ref()?;
        let sum = |f: &dyn Fn(&Pmd) -> u64| cpu.cores.iter().map(f).sum::<u64>();
        Some(super::results::CpuSummary {
            cores: cpu.cores.len(),
            cycles_forwarding: sum(&|c| c.used()),
            cycles_empty_polls: sum(&|c| c.poll),
            cycles_idle: sum(&|c| c.idle),
            cycles_clock: sum(&|c| c.clock),
            packets_policed: cpu.vm.iter().map(|v| v.policed).sum(),
            cycle_conservation_ok: cpu.conserved(),
        })
    }
}
