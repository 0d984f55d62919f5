//! The vswitch's PMD cores in the data path (`vswitch/c2qos`): a VM's packet waits
//! in its guest TX ring until its core polls it; a batch is one event, at whose end
//! its packets go on through the host policy to the NIC; under ingress policing
//! the batch's packets are metered right after the copy (one timestamp per batch,
//! as OVS reads the TSC once) and those out of profile are dropped, having cost
//! their copy; the C2TB manager refills the cycle buckets every `invl`; each host
//! tick records every VM's cycles and every core's use. With the NIC handler, a
//! monitor reads each host's NIC every T_mon and switches the host's policers on
//! or off (§VII). With `rx_path = "pmd"`, packets to a host's VMs wait in its NIC's
//! receive queue until the host's first core forwards them in a batch, and reach
//! their VMs when the batch is done.

use std::collections::VecDeque;

use super::cpu_records::{AtTick, NicCols, PmdCols, VmCpuCols};
use super::{Event, Sim};
use crate::engine::queue::Origin;
use crate::engine::to_secs;
use crate::net::{FlowId, PktId, VmId};
use crate::vswitch::c2qos::c2tb::C2tb;
use crate::vswitch::c2qos::hbs::Hbs;
use crate::vswitch::c2qos::nic_handler::NicMonitor;
use crate::vswitch::c2qos::pmd::{CoreId, Pmd, Sched, RX};
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

/// Per VM: what its packets cost beyond their size, and its policer.
#[derive(Clone, Debug)]
pub(super) struct VmCost {
    /// Π R_i.
    pub(super) factor: f64,
    /// Ingress policing's bucket, if the VM may be policed.
    pub(super) policer: Option<TokenBucket>,
    /// Whether the policer is on.
    pub(super) policing: bool,
    /// Packets policed so far, and at the last tick.
    pub(super) policed: u64,
    pub(super) policed_at_tick: u64,
}

/// The CPU model's state.
#[derive(Clone, Debug)]
pub struct CpuState {
    pub(super) p: CpuParams,
    pub(super) cores: Vec<Pmd>,
    pub(super) rings: Vec<Ring>,
    /// Each host's (by vswitch) first core, the one that polls its NIC's receive
    /// queue with `rx_path = "pmd"`.
    pub(super) first_core: Vec<u32>,
    /// Packets that found a receive queue full.
    pub(super) rx_dropped: u64,
    /// The buffer the next batch fills (swapped with a finished batch's, so
    /// batches allocate nothing).
    spare: Vec<(PktId, bool)>,
    pub(super) vm: Vec<VmCost>,
    /// Per workload: whether its packets miss the EMC (`None`: no workload's do,
    /// and packets are not looked up by workload).
    pub(super) multiple: Option<Vec<bool>>,
    /// Each core's counters at the last tick.
    pub(super) at_tick: Vec<AtTick>,
    /// The NIC handler's monitor of each host (by vswitch), if the handler is on.
    pub(super) monitors: Vec<NicMonitor>,
    pub(super) vm_cols: VmCpuCols,
    pub(super) pmd_cols: PmdCols,
    pub(super) nic_cols: NicCols,
}

impl CpuState {
    /// Cores for every host's VMs (VM k of a host on core k mod `cores`), each
    /// with C2TB buckets if it limits them.
    pub fn new(s: &CpuSetup, hosts: &[HostVswitch], vms: usize) -> Self {
        let p = s.params.clone();
        let mut cores = Vec::new();
        let mut rings = vec![Ring::default(); vms];
        let mut first_core = Vec::new();
        for (k, h) in hosts.iter().enumerate() {
            first_core.push(cores.len() as u32);
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
                    rxq: (c == 0 && p.rx_ring.is_some()).then(VecDeque::new),
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
            first_core,
            rx_dropped: 0,
            spare: Vec::new(),
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
        let cores: usize = (self.cores.iter())
            .map(|c| c.batch.len() + c.rxq.as_ref().map_or(0, VecDeque::len))
            .sum();
        (rings + cores) as u64
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
        if let Some(t) = self.hosts.cpu.as_ref().and_then(|c| c.p.c2tb.as_ref()) {
            if t.interval <= self.budget.end {
                self.schedule(t.interval, Event::C2tbTick, Origin::GLOBAL);
            }
        }
        let Some(h) = self.hosts.cpu.as_ref().and_then(|c| c.p.nic_handler) else {
            return;
        };
        let monitors = (self.hosts.vswitches.iter())
            .map(|v| {
                let nic = self.fabric.net.hosts[v.host.idx()].nic;
                NicMonitor::new(h, self.fabric.net.ports[nic.idx()].rate_bps())
            })
            .collect();
        if let Some(cpu) = self.hosts.cpu.as_mut() {
            cpu.monitors = monitors;
        }
        if h.monitor <= self.budget.end {
            self.schedule(h.monitor, Event::NicMonitor, Origin::GLOBAL);
        }
    }

    /// The NIC handler's monitor (every T_mon): reads each host's NIC and switches
    /// its VMs' policers on (full) or off.
    pub(super) fn on_nic_monitor(&mut self) {
        let now = self.now;
        let Some(cpu) = self.hosts.cpu.as_mut() else {
            return;
        };
        self.parallel
            .handled_for_all(now, Event::NicMonitor.encode());
        for (k, hv) in self.hosts.vswitches.iter().enumerate() {
            if !self.parallel.owns_vswitch(k) {
                continue;
            }
            let nic = self.fabric.net.hosts[hv.host.idx()].nic;
            let tx = self.fabric.net.ports[nic.idx()].tx_bytes();
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
            if now + h.monitor <= self.budget.end {
                self.schedule(now + h.monitor, Event::NicMonitor, Origin::GLOBAL);
            }
        }
    }

    /// VM `v`'s packet enters its guest TX ring (dropped and counted if the ring is
    /// full and it may be; a TCP data packet is only sent when there was room).
    pub(super) fn ring_in(&mut self, v: VmId, id: PktId, may_drop: bool) {
        let Some(cpu) = self.hosts.cpu.as_mut() else {
            return;
        };
        let ring = &mut cpu.rings[v.idx()];
        if may_drop && ring.q.len() >= cpu.p.ring as usize {
            self.hosts.vms[v.idx()].drops += 1;
            self.records.counters.dropped += 1;
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

    /// A packet reached its destination host: with `rx_path = "pmd"`, one for a VM
    /// joins the NIC's receive queue of the VM's host (dropped and counted if the
    /// queue is full) and `true` is returned; otherwise `false` (deliver it now).
    pub(super) fn rx_in(&mut self, id: PktId) -> bool {
        let Some(cpu) = self.hosts.cpu.as_mut() else {
            return false;
        };
        let Some(cap) = cpu.p.rx_ring else {
            return false;
        };
        let pair = self.fabric.pkts[id].pair;
        let Some(v) = self.hosts.pairs.get(pair as usize).and_then(|p| p.dst) else {
            return false;
        };
        let core = cpu.first_core[self.hosts.vms[v.idx()].vswitch as usize] as usize;
        let rxq = cpu.cores[core]
            .rxq
            .as_mut()
            .expect("a host's first core polls its NIC");
        if rxq.len() >= cap as usize {
            cpu.rx_dropped += 1;
            self.records.counters.dropped += 1;
            self.discard(id);
            return true;
        }
        rxq.push_back(id);
        if !cpu.cores[core].busy() {
            cpu.cores[core].wake(self.now, cpu.p.hz);
            self.pmd_poll(core);
        }
        true
    }

    /// The room VM `v`'s ring has for a sender of `packet`-byte packets.
    #[inline]
    pub(super) fn ring_room(&self, v: VmId, packet: u64) -> u64 {
        match &self.hosts.cpu {
            Some(cpu) => {
                let used = cpu.rings[v.idx()].q.len() as u64;
                (cpu.p.ring as u64).saturating_sub(used) * packet
            }
            None => u64::MAX,
        }
    }

    /// Flow `f` of VM `v` waits for room in the ring.
    pub(super) fn ring_wait(&mut self, v: VmId, f: FlowId) {
        if let Some(cpu) = self.hosts.cpu.as_mut() {
            self.ends.flows[f.idx()].blocked = true;
            cpu.rings[v.idx()].waiting.push_back(f);
        }
    }

    /// Core `c`, awake and idle, polls its VMs (and receive queue) in turn and
    /// starts the first batch it finds (or sleeps).
    fn pmd_poll(&mut self, c: usize) {
        let Some(cpu) = self.hosts.cpu.as_mut() else {
            return;
        };
        let (rings, p) = (&cpu.rings, &cpu.p);
        let core = &mut cpu.cores[c];
        let Some(slot) = core.choose(p.empty_poll, |v| rings[v.idx()].q.len()) else {
            return;
        };
        if slot == RX {
            self.rx_batch(c);
            return;
        }
        let v = core.vms[slot];
        let n = cpu.rings[v.idx()].q.len().min(p.batch as usize);
        let mut cost = p.batch_overhead;
        let now = self.now;
        let per_packet = p.policer.as_ref().map(|q| q.unit) == Some(PolicerUnit::Packets);
        // allocates only when the policer drops
        let mut policed = Vec::new();
        for _ in 0..n {
            let (id, d) = cpu.rings[v.idx()].q.pop_front().expect("n ≤ len");
            let pkt = &self.fabric.pkts[id];
            let size = pkt.size;
            let flows = match &cpu.multiple {
                Some(m) if m[self.ends.flows[pkt.flow.idx()].spec.workload as usize] => {
                    Flows::Multiple
                }
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
        let host = cpu.cores[c].host as usize;
        self.schedule(
            end,
            Event::PmdDone(CoreId(c as u32)),
            self.vswitch_origin(host),
        );
        for id in policed {
            self.records.counters.dropped += 1;
            self.discard(id);
        }
        // the copy out of the guest freed the ring's slots
        self.wake_ring(v);
    }

    /// Core `c` forwards a batch from its NIC's receive queue: each packet costs
    /// c(s, single) times its destination VM's factors.
    fn rx_batch(&mut self, c: usize) {
        let Some(cpu) = self.hosts.cpu.as_mut() else {
            return;
        };
        let (p, core) = (&cpu.p, &mut cpu.cores[c]);
        let rxq = core.rxq.as_mut().expect("chosen: it polls a receive queue");
        let n = rxq.len().min(p.batch as usize);
        let mut cost = p.batch_overhead;
        for id in rxq.drain(..n) {
            let pkt = &self.fabric.pkts[id];
            let factor =
                (self.hosts.pairs[pkt.pair as usize].dst).map_or(1.0, |v| cpu.vm[v.idx()].factor);
            cost += p.costs.cycles(pkt.size, Flows::Single, factor);
            core.batch.push((id, false));
        }
        let end = core.start(RX, cost, n, p.hz);
        let host = core.host as usize;
        self.schedule(
            end,
            Event::PmdDone(CoreId(c as u32)),
            self.vswitch_origin(host),
        );
    }

    /// Core `c`'s batch is done: its packets go on to the host policy and the NIC,
    /// and the core polls on. A receive-queue batch's packets reach their VMs
    /// after the core has polled on, so what they make the VMs send waits for the
    /// next poll (or wakes the core).
    pub(super) fn on_pmd_done(&mut self, c: CoreId) {
        let c = c.0 as usize;
        let Some(cpu) = self.hosts.cpu.as_mut() else {
            return;
        };
        let core = &mut cpu.cores[c];
        let Some(slot) = core.finish() else {
            return;
        };
        let mut batch = std::mem::replace(&mut core.batch, std::mem::take(&mut cpu.spare));
        if slot == RX {
            self.pmd_poll(c);
            for &(id, _) in &batch {
                self.records.counters.delivered += 1;
                self.deliver(id);
            }
        } else {
            let v = core.vms[slot];
            for &(id, may_drop) in &batch {
                self.vswitch_egress(v, id, may_drop);
            }
        }
        batch.clear();
        if let Some(cpu) = self.hosts.cpu.as_mut() {
            cpu.spare = batch;
        }
        if slot != RX {
            self.pmd_poll(c);
        }
    }

    /// Wakes VM `v`'s senders waiting for ring room, in order, while a packet fits.
    fn wake_ring(&mut self, v: VmId) {
        loop {
            let Some(cpu) = self.hosts.cpu.as_mut() else {
                return;
            };
            let Some(&f) = cpu.rings[v.idx()].waiting.front() else {
                return;
            };
            let need = self.ends.packet_size(f);
            if self.ring_room(v, need) < need {
                return;
            }
            if let Some(cpu) = self.hosts.cpu.as_mut() {
                cpu.rings[v.idx()].waiting.pop_front();
            }
            self.ends.flows[f.idx()].blocked = false;
            self.drive_sender(f, false, |snd, now, cfg, out| snd.resume(now, cfg, out));
        }
    }

    /// The C2TB manager (every `invl`): refills every core's buckets and wakes the
    /// sleeping cores that may now serve a VM.
    pub(super) fn on_c2tb_tick(&mut self) {
        let Some(cpu) = self.hosts.cpu.as_mut() else {
            return;
        };
        self.parallel
            .handled_for_all(self.now, Event::C2tbTick.encode());
        let mut wake = Vec::new();
        let rings = &cpu.rings;
        for (c, core) in cpu.cores.iter_mut().enumerate() {
            if core.c2tb.is_some() && self.parallel.owns_vswitch(core.host as usize) {
                core.refill(|v| rings[v.idx()].q.len());
                if !core.busy() {
                    wake.push(c);
                }
            }
        }
        let (now, hz) = (self.now, cpu.p.hz);
        for c in wake {
            if let Some(cpu) = self.hosts.cpu.as_mut() {
                cpu.cores[c].wake(now, hz);
            }
            self.pmd_poll(c);
        }
        let invl = self
            .hosts
            .cpu
            .as_ref()
            .and_then(|c| c.p.c2tb.as_ref())
            .map(|t| t.interval);
        if let Some(iv) = invl {
            if self.now + iv <= self.budget.end {
                self.schedule(self.now + iv, Event::C2tbTick, Origin::GLOBAL);
            }
        }
    }
}
