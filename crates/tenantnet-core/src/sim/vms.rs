//! The vswitch in the data path: packets from VMs pass their microscheduler on the
//! way to the NIC, blocked TCP senders are woken when their queue drains, and every
//! host with VMs runs a periodic tick that measures each VM's send rate and, under
//! MBFQ, runs the macroscheduler (`crate::vswitch`).

use super::endpoints::transport_of;
use super::flow::Endpoint;
use super::{Event, Sim};
use crate::engine::{to_secs, Time};
use crate::net::{FlowId, HostId, PktId, VmId};
use crate::transport::tcp_sender::SenderOut;
use crate::vswitch::mbfq::{self, Decision, VmInput};
use crate::vswitch::{Offer, Policy};

/// The per-VM rate record (`vm_rates`): one row per VM per tick.
#[derive(Default)]
pub struct VmRateCols {
    /// Tick time, seconds.
    pub time: Vec<f64>,
    /// VM index.
    pub vm: Vec<u32>,
    /// SR, the send rate over the last interval, bit/s.
    pub sr: Vec<f64>,
    /// AR, the rate the microscheduler enforces from this tick (`None`: off).
    pub ar: Vec<Option<f64>>,
    /// TR, MBFQ's target rate (`None` for other policies or while off).
    pub tr: Vec<Option<f64>>,
    /// RU, MBFQ's ramp-up stage.
    pub ru: Vec<u64>,
    /// The VM's guarantee at this tick, bit/s.
    pub guarantee: Vec<f64>,
    /// NIC utilisation of the VM's host over the last interval.
    pub nic_util: Vec<f64>,
}

impl Sim {
    /// A host puts a packet on the wire, through VM `vm`'s microscheduler if the
    /// packet comes from a VM. `may_drop`: the sender does not respect the VM
    /// queue's room (UDP).
    #[inline]
    pub(super) fn send_from(&mut self, h: HostId, vm: Option<VmId>, id: PktId, may_drop: bool) {
        self.counters.sent += 1;
        if let Some(v) = vm {
            let size = self.pkts[id].size;
            match self.vms[v.idx()].offer(self.now, id, size, may_drop) {
                Offer::Pass => {}
                Offer::Queued => {
                    self.vm_schedule(v);
                    return;
                }
                Offer::Dropped => {
                    self.counters.dropped += 1;
                    self.pkts.free(id);
                    return;
                }
            }
        }
        let nic = self.net.hosts[h.idx()].nic;
        self.enqueue(nic, id, 0);
    }

    /// A sender-call buffer with the room flow `f`'s VM has for it.
    pub(super) fn sender_out(&mut self, f: FlowId) -> SenderOut {
        let mut out = std::mem::take(&mut self.sout);
        out.room = match self.flows[f.idx()].spec.src_vm {
            Some(v) => self.vms[v.idx()].room(),
            None => u64::MAX,
        };
        out.blocked = false;
        out
    }

    /// After a sender call: a sender that ran out of room waits in its VM's list.
    pub(super) fn note_blocked(&mut self, f: FlowId, out: &SenderOut) {
        let flow = &mut self.flows[f.idx()];
        if out.blocked && !flow.blocked {
            if let Some(v) = flow.spec.src_vm {
                flow.blocked = true;
                self.vms[v.idx()].block(f);
            }
        }
    }

    /// Makes sure a wake-up is pending for VM `v`'s next departure.
    fn vm_schedule(&mut self, v: VmId) {
        let vm = &mut self.vms[v.idx()];
        if let Some(t) = vm.next_departure() {
            let t = t.max(self.now);
            if vm.wake_at != Some(t) {
                vm.wake_at = Some(t);
                self.schedule(t, Event::VmTx(v));
            }
        }
    }

    /// A VM wake-up: sends what its bucket allows, then wakes blocked senders.
    pub(super) fn on_vm_tx(&mut self, v: VmId) {
        if self.vms[v.idx()].wake_at != Some(self.now) {
            return; // superseded by a rate change
        }
        self.vms[v.idx()].wake_at = None;
        self.vm_drain(v);
    }

    /// Passes every packet VM `v` may send now to the NIC and wakes its senders.
    fn vm_drain(&mut self, v: VmId) {
        let nic = self.net.hosts[self.vms[v.idx()].host.idx()].nic;
        while let Some(id) = self.vms[v.idx()].pop_ready(self.now) {
            self.enqueue(nic, id, 0);
        }
        self.vm_schedule(v);
        self.wake_blocked(v);
    }

    /// Wakes VM `v`'s blocked TCP senders, longest-waiting first, while its queue has
    /// room for a full packet of the next one.
    fn wake_blocked(&mut self, v: VmId) {
        let now = self.now;
        for _ in 0..self.vms[v.idx()].blocked() {
            let Some(f) = self.vms[v.idx()].first_blocked() else {
                break;
            };
            let t = transport_of(&self.flows[f.idx()].spec.kind);
            if self.vms[v.idx()].room() < self.tcp[t].packet_size() {
                break;
            }
            self.vms[v.idx()].pop_blocked();
            self.flows[f.idx()].blocked = false;
            let mut out = self.sender_out(f);
            if let Endpoint::Tcp { snd, .. } = &mut self.flows[f.idx()].ep {
                snd.resume(now, &self.tcp[t], &mut out);
            }
            self.emit_segments(f, &mut out);
            self.note_blocked(f, &out);
            self.sout = out;
        }
    }

    /// Sets VM `v`'s microscheduler (`None`: off) and releases what it now allows.
    fn vm_set_rate(&mut self, v: VmId, rate_bps: Option<u64>) {
        let now = self.now;
        self.vms[v.idx()].set_shaping(now, rate_bps);
        self.vm_drain(v);
    }

    /// Applies the guarantee changes due now.
    pub(super) fn on_vm_change(&mut self) {
        while let Some(c) = self.vm_changes.get(self.next_change) {
            if c.at > self.now {
                self.schedule(c.at, Event::VmChange);
                return;
            }
            let c = c.clone();
            self.next_change += 1;
            let vm = &mut self.vms[c.vm.idx()];
            vm.guarantee_bps = c.guarantee_bps;
            vm.weight = c.weight.or(vm.weight);
            let host = vm.host;
            if self.vhost_policy(host) == Policy::Static {
                self.vm_set_rate(c.vm, Some(c.guarantee_bps));
            }
        }
    }

    /// The enforcement policy of host `h`'s vswitch (`None` for a host without VMs).
    pub(super) fn vhost_policy(&self, h: HostId) -> Policy {
        match self.vhost_of.get(h.idx()) {
            Some(&k) if k != u32::MAX => self.vhosts[k as usize].policy,
            _ => Policy::None,
        }
    }

    /// The start of the run: static reservation caps every VM from time 0.
    pub(super) fn start_vswitches(&mut self) {
        for k in 0..self.vhosts.len() {
            if self.vhosts[k].policy == Policy::Static {
                for v in self.vhosts[k].vms.clone() {
                    let g = self.vms[v.idx()].guarantee_bps;
                    self.vms[v.idx()].set_shaping(0, Some(g));
                }
            }
        }
        if let Some(c) = self.vm_changes.first() {
            self.schedule(c.at, Event::VmChange);
        }
        let t = self.mbfq.interval;
        if !self.vhosts.is_empty() && t <= self.end {
            self.schedule(t, Event::VmTick);
        }
    }

    /// Every T: each host measures its VMs and NIC over the interval just ended;
    /// MBFQ hosts run the macroscheduler on what they measured.
    pub(super) fn on_vm_tick(&mut self) {
        let now = self.now;
        let t = self.mbfq.interval;
        let secs = to_secs(t);
        for k in 0..self.vhosts.len() {
            let hv = &self.vhosts[k];
            let nic = &self.net.ports[self.net.hosts[hv.host.idx()].nic.idx()];
            let nic_tx = nic.tx_bytes();
            let util = (nic_tx - hv.nic_at_tick) as f64 * 8.0 / (nic.rate_bps() as f64 * secs);
            let (policy, c) = (hv.policy, hv.capacity_bps as f64);
            let ids = hv.vms.clone();
            self.vhosts[k].nic_at_tick = nic_tx;
            let inputs: Vec<VmInput> = ids
                .iter()
                .map(|v| {
                    let vm = &self.vms[v.idx()];
                    let mg = vm.guarantee_bps as f64;
                    VmInput {
                        sr: (vm.tx_bytes - vm.tx_at_tick) as f64 * 8.0 / secs,
                        mg,
                        w: vm.weight.unwrap_or(mg / c),
                    }
                })
                .collect();
            if policy == Policy::Mbfq {
                let mut states: Vec<_> = ids.iter().map(|v| self.vms[v.idx()].ctl).collect();
                let decision = mbfq::run(&self.mbfq, c, util, &mut states, &inputs);
                for (i, &v) in ids.iter().enumerate() {
                    self.vms[v.idx()].ctl = states[i];
                    let (rate, tr) = match &decision {
                        Decision::Inactive => (None, None),
                        Decision::Rates { ar, tr } => {
                            (Some(ar[i].round().max(1.0) as u64), Some(tr[i]))
                        }
                    };
                    self.vms[v.idx()].target_bps = tr;
                    self.vm_set_rate(v, rate);
                }
            }
            for (i, &v) in ids.iter().enumerate() {
                let vm = &mut self.vms[v.idx()];
                vm.tx_at_tick = vm.tx_bytes;
                let r = &mut self.vm_rates;
                r.time.push(to_secs(now));
                r.vm.push(v.0);
                r.sr.push(inputs[i].sr);
                r.ar.push(vm.shaping_rate().map(|x| x as f64));
                r.tr.push(vm.target_bps.filter(|_| policy == Policy::Mbfq));
                r.ru.push(vm.ctl.ru as u64);
                r.guarantee.push(inputs[i].mg);
                r.nic_util.push(util);
            }
        }
        self.check_memory("vswitch.mbfq.interval");
        let next: Time = now + t;
        if next <= self.end {
            self.schedule(next, Event::VmTick);
        }
    }

    /// Packets waiting in vswitch queues.
    pub(super) fn vm_held(&self) -> u64 {
        self.vms.iter().map(|v| v.held()).sum()
    }
}
