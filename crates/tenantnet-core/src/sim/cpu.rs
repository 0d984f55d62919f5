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
use super::flow::Flow;
use super::parts::Endpoints;
use super::{Event, Sim};
use crate::engine::queue::Origin;
use crate::engine::{to_secs, Time};
use crate::net::{FlowId, Packet, PacketPool, PktId, VmId};
use crate::vswitch::c2qos::c2tb::C2tb;
use crate::vswitch::c2qos::hbs::Hbs;
use crate::vswitch::c2qos::nic_handler::NicMonitor;
use crate::vswitch::c2qos::pmd::{CoreId, Pmd, Sched, RX};
use crate::vswitch::c2qos::{CpuParams, CpuSetup, Flows, PolicerUnit};
use crate::vswitch::token_bucket::{TokenBucket, BITS_PER_BYTE};
use crate::vswitch::{HostVswitch, Vm, VmPair};

/// A core's batch: its packets, each with whether it may be dropped.
pub(super) type Batch = Vec<(PktId, bool)>;

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

    /// The room VM `v`'s ring has for a sender of `packet`-byte packets.
    #[inline]
    pub(super) fn ring_room(&self, v: VmId, packet: u64) -> u64 {
        let used = self.rings[v.idx()].q.len() as u64;
        (self.p.ring as u64).saturating_sub(used) * packet
    }

    /// Flow `f` of VM `v` waits for room in the ring.
    pub(super) fn ring_wait(&mut self, v: VmId, f: FlowId) {
        self.rings[v.idx()].waiting.push_back(f);
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

/// Where a packet handed to the CPU model went.
pub(super) enum CpuIn {
    /// Dropped: its ring or receive queue was full.
    Dropped,
    /// Into a ring or receive queue whose core is busy.
    Queued,
    /// Into a ring or receive queue whose core was idle: it is awake now and polls.
    Poll(usize),
}

/// A batch a core started (`CpuState::poll`).
pub(super) struct Polled {
    /// When it is done.
    pub end: Time,
    /// The host vswitch of its core.
    pub vswitch: usize,
    /// The packets its policer dropped, having cost their copy.
    pub policed: Vec<PktId>,
    /// The VM whose ring it copied from (its senders may have room now).
    pub ring: Option<VmId>,
}

impl CpuState {
    /// Starts the NIC handler's monitors (one per host vswitch of `hosts`, reading
    /// its NIC at `nic_bps`); when the C2TB manager and the monitor first run.
    pub(super) fn start(
        &mut self,
        hosts: usize,
        nic_bps: impl Fn(usize) -> u64,
    ) -> (Option<Time>, Option<Time>) {
        let c2tb = self.p.c2tb.as_ref().map(|t| t.interval);
        let Some(h) = self.p.nic_handler else {
            return (c2tb, None);
        };
        self.monitors = (0..hosts).map(|k| NicMonitor::new(h, nic_bps(k))).collect();
        (c2tb, Some(h.monitor))
    }

    /// The NIC handler's monitor (every T_mon) at `now`: reads the NIC of each host
    /// vswitch that runs here (`owns`; `nic_tx(k)`: the bytes it has sent) and
    /// switches its VMs' policers on (full) or off. When it next runs.
    pub(super) fn monitor(
        &mut self,
        now: Time,
        hosts: &[HostVswitch],
        nic_tx: impl Fn(usize) -> u64,
        owns: impl Fn(usize) -> bool,
    ) -> Option<Time> {
        for (k, hv) in hosts.iter().enumerate().filter(|&(k, _)| owns(k)) {
            let policed = hv.vms.iter().map(|v| self.vm[v.idx()].policed).sum();
            let m = &mut self.monitors[k];
            let (bps, changed) = m.observe(nic_tx(k), policed);
            let on = m.on;
            if changed {
                let from_start = self.p.policer.as_ref().is_some_and(|q| q.from_start);
                for v in &hv.vms {
                    let vc = &mut self.vm[v.idx()];
                    vc.policing = on || from_start;
                    if let Some(b) = vc.policer.as_mut() {
                        b.refill(now);
                    }
                }
            }
            let r = &mut self.nic_cols;
            r.time.push(to_secs(now));
            r.host.push(k as u32);
            r.gbps.push(bps / 1e9);
            r.policing.push(on as u64);
        }
        self.p.nic_handler.map(|h| now + h.monitor)
    }

    /// VM `v`'s packet `id` enters its guest TX ring at `now` (dropped if the ring
    /// is full and it may be; a TCP data packet is only sent when there was room).
    pub(super) fn ring_in(&mut self, now: Time, v: VmId, id: PktId, may_drop: bool) -> CpuIn {
        let ring = &mut self.rings[v.idx()];
        if may_drop && ring.q.len() >= self.p.ring as usize {
            return CpuIn::Dropped;
        }
        ring.q.push_back((id, may_drop));
        let core = ring.core as usize;
        self.wake_to_poll(core, now)
    }

    /// Packet `id` (`pkt`) reached its destination host at `now`: with
    /// `rx_path = "pmd"`, one for a VM (`pairs`, `vms`) joins the NIC's receive
    /// queue of the VM's host (dropped and counted if the queue is full); `None`:
    /// deliver it now.
    pub(super) fn rx_in(
        &mut self,
        now: Time,
        (id, pkt): (PktId, &Packet),
        pairs: &[VmPair],
        vms: &[Vm],
    ) -> Option<CpuIn> {
        let cap = self.p.rx_ring?;
        let v = pairs.get(pkt.pair as usize).and_then(|p| p.dst)?;
        let core = self.first_core[vms[v.idx()].vswitch as usize] as usize;
        let rxq = (self.cores[core].rxq.as_mut()).expect("a host's first core polls its NIC");
        if rxq.len() >= cap as usize {
            self.rx_dropped += 1;
            return Some(CpuIn::Dropped);
        }
        rxq.push_back(id);
        Some(self.wake_to_poll(core, now))
    }

    /// Core `c` has work: if it was idle it wakes at `now` and polls.
    fn wake_to_poll(&mut self, c: usize, now: Time) -> CpuIn {
        if self.cores[c].busy() {
            return CpuIn::Queued;
        }
        self.cores[c].wake(now, self.p.hz);
        CpuIn::Poll(c)
    }

    /// Core `c`, awake and idle, polls its VMs (and receive queue) in turn at `now`
    /// and starts the first batch it finds (or sleeps): its packets (`pkts`) cost
    /// c(s, single or multiple flows: `flows`) times their VM's factors (`pairs`
    /// name the VM a received packet is for), and a policed VM's packets out of
    /// profile are dropped after the copy.
    pub(super) fn poll(
        &mut self,
        c: usize,
        now: Time,
        pkts: &PacketPool,
        (flows, pairs): (&[Flow], &[VmPair]),
    ) -> Option<Polled> {
        let (rings, p) = (&self.rings, &self.p);
        let core = &mut self.cores[c];
        let slot = core.choose(p.empty_poll, |v| rings[v.idx()].q.len())?;
        if slot == RX {
            return Some(self.rx_batch(c, pkts, pairs));
        }
        let v = core.vms[slot];
        let n = self.rings[v.idx()].q.len().min(p.batch as usize);
        let mut cost = p.batch_overhead;
        let per_packet = p.policer.as_ref().map(|q| q.unit) == Some(PolicerUnit::Packets);
        // allocates only when the policer drops
        let mut policed = Vec::new();
        for _ in 0..n {
            let (id, d) = self.rings[v.idx()].q.pop_front().expect("n ≤ len");
            let pkt = &pkts[id];
            let size = pkt.size;
            let flows = match &self.multiple {
                Some(m) if m[flows[pkt.flow.idx()].spec.workload as usize] => Flows::Multiple,
                _ => Flows::Single,
            };
            let vc = &mut self.vm[v.idx()];
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
            self.cores[c].batch.push((id, d));
        }
        let served = self.cores[c].batch.len();
        let end = self.cores[c].start(slot, cost, served, p.hz);
        Some(Polled {
            end,
            vswitch: self.cores[c].host as usize,
            policed,
            ring: Some(v),
        })
    }

    /// Core `c` forwards a batch from its NIC's receive queue: each packet costs
    /// c(s, single) times its destination VM's factors.
    fn rx_batch(&mut self, c: usize, pkts: &PacketPool, pairs: &[VmPair]) -> Polled {
        let (p, core) = (&self.p, &mut self.cores[c]);
        let rxq = core.rxq.as_mut().expect("chosen: it polls a receive queue");
        let n = rxq.len().min(p.batch as usize);
        let mut cost = p.batch_overhead;
        for id in rxq.drain(..n) {
            let pkt = &pkts[id];
            let factor = (pairs[pkt.pair as usize].dst).map_or(1.0, |v| self.vm[v.idx()].factor);
            cost += p.costs.cycles(pkt.size, Flows::Single, factor);
            core.batch.push((id, false));
        }
        Polled {
            end: core.start(RX, cost, n, p.hz),
            vswitch: core.host as usize,
            policed: Vec::new(),
            ring: None,
        }
    }

    /// Core `c`'s batch is done: its packets (each with whether it may be dropped),
    /// and the VM they came from (`None`: from the NIC's receive queue, for the
    /// host's VMs). Hand the buffer back with [`done_with`](Self::done_with).
    pub(super) fn finish(&mut self, c: usize) -> Option<(Option<VmId>, Batch)> {
        let core = &mut self.cores[c];
        let slot = core.finish()?;
        let batch = std::mem::replace(&mut core.batch, std::mem::take(&mut self.spare));
        Some(((slot != RX).then(|| core.vms[slot]), batch))
    }

    /// A finished batch's buffer, for the next batch to fill.
    pub(super) fn done_with(&mut self, mut batch: Batch) {
        batch.clear();
        self.spare = batch;
    }

    /// The next of VM `v`'s senders waiting for ring room that a packet of now
    /// fits, no longer blocked.
    pub(super) fn next_ring_woken(&mut self, v: VmId, ends: &mut Endpoints) -> Option<FlowId> {
        let &f = self.rings[v.idx()].waiting.front()?;
        let need = ends.packet_size(f);
        if self.ring_room(v, need) < need {
            return None;
        }
        self.rings[v.idx()].waiting.pop_front();
        ends.flows[f.idx()].blocked = false;
        Some(f)
    }

    /// The C2TB manager (every `invl`): refills the buckets of every core of the
    /// host vswitches that run here (`owns`); the sleeping ones that may now serve
    /// a VM, to wake; when it next runs.
    pub(super) fn c2tb_tick(&mut self, owns: impl Fn(usize) -> bool) -> (Vec<usize>, Option<Time>) {
        let mut wake = Vec::new();
        let rings = &self.rings;
        for (c, core) in self.cores.iter_mut().enumerate() {
            if core.c2tb.is_some() && owns(core.host as usize) {
                core.refill(|v| rings[v.idx()].q.len());
                if !core.busy() {
                    wake.push(c);
                }
            }
        }
        (wake, self.p.c2tb.as_ref().map(|t| t.interval))
    }

    /// Core `c` wakes at `now`.
    pub(super) fn wake(&mut self, c: usize, now: Time) {
        self.cores[c].wake(now, self.p.hz);
    }
}

impl Sim {
    /// A packet handed to the CPU model went to `to`: dropped, or polled by a core
    /// that was idle.
    pub(super) fn cpu_took(&mut self, id: PktId, to: CpuIn) {
        match to {
            CpuIn::Dropped => {
                self.records.counters.dropped += 1;
                self.discard(id);
            }
            CpuIn::Poll(c) => self.pmd_poll(c),
            CpuIn::Queued => {}
        }
    }

    /// Core `c`, awake and idle, polls (`CpuState::poll`): its batch's end is
    /// scheduled, its policed packets dropped, and the senders of the VM whose ring
    /// it copied from resume while a packet fits.
    fn pmd_poll(&mut self, c: usize) {
        let Some(cpu) = self.hosts.cpu.as_mut() else {
            return;
        };
        let flows = (&self.ends.flows[..], &self.hosts.pairs[..]);
        let Some(p) = cpu.poll(c, self.now, &self.fabric.pkts, flows) else {
            return;
        };
        let by = self.fabric.origin(self.hosts.vswitches[p.vswitch].host);
        self.schedule(p.end, Event::PmdDone(CoreId(c as u32)), by);
        for id in p.policed {
            self.records.counters.dropped += 1;
            self.discard(id);
        }
        // the copy out of the guest freed the ring's slots
        let Some(v) = p.ring else {
            return;
        };
        while let Some(f) =
            (self.hosts.cpu.as_mut()).and_then(|c| c.next_ring_woken(v, &mut self.ends))
        {
            self.drive_sender(f, false, |snd, now, cfg, out| snd.resume(now, cfg, out));
        }
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
        let Some((vm, batch)) = cpu.finish(c) else {
            return;
        };
        match vm {
            None => {
                self.pmd_poll(c);
                for &(id, _) in &batch {
                    self.records.counters.delivered += 1;
                    self.deliver(id);
                }
            }
            Some(v) => {
                for &(id, may_drop) in &batch {
                    self.vswitch_egress(v, id, may_drop);
                }
            }
        }
        if let Some(cpu) = self.hosts.cpu.as_mut() {
            cpu.done_with(batch);
        }
        if vm.is_some() {
            self.pmd_poll(c);
        }
    }

    /// The CPU model's timers: the C2TB manager refills the cycle buckets and wakes
    /// the sleeping cores that may now serve a VM; the NIC handler's monitor reads
    /// each host's NIC. Each runs again after its interval.
    pub(super) fn on_cpu_timer(&mut self, e: Event) {
        let (now, end) = (self.now, self.budget.end);
        self.parallel.handled_for_all(now, e.encode());
        let Some(cpu) = self.hosts.cpu.as_mut() else {
            return;
        };
        let owns = |k| self.parallel.owns_vswitch(k);
        let next = if e == Event::NicMonitor {
            let (net, hosts) = (&self.fabric.net, &self.hosts.vswitches);
            let nic_tx = |k: usize| net.nic(hosts[k].host).tx_bytes();
            cpu.monitor(now, hosts, nic_tx, owns)
        } else {
            let (wake, invl) = cpu.c2tb_tick(owns);
            for c in wake {
                if let Some(cpu) = self.hosts.cpu.as_mut() {
                    cpu.wake(c, now);
                }
                self.pmd_poll(c);
            }
            invl.map(|iv| now + iv)
        };
        if let Some(t) = next.filter(|&t| t <= end) {
            self.schedule(t, e, Origin::GLOBAL);
        }
    }
}
