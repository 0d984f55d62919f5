//! The hosts' own steps: a policy with the context its hooks see, the VMs'
//! receive counts, a tick's measurements and rows. Each works on the [`Hosts`]
//! alone and returns what the loop needs; the loop (`Sim::with_host`,
//! `Sim::on_host_tick`) carries out what a hook asked for.

use super::datapath::row_cells;
use super::parts::Hosts;
use crate::engine::Time;
use crate::net::packet::flags;
use crate::net::{HostId, Packet, VmId};
use crate::vswitch::policy::{HostCtx, HostPolicy};
use crate::vswitch::two_colour::Colour;
use crate::vswitch::{Policy, ShaperId};

/// What host vswitch `k` measured over a tick: its VMs, each one's send and
/// receive rate (bit/s) and its NIC's utilisation.
pub(super) struct TickMeasure {
    /// The host's VMs, in the order of its rows.
    pub ids: Vec<VmId>,
    /// Each VM's send rate, bit/s.
    pub sent: Vec<f64>,
    /// Each VM's receive rate, bit/s.
    pub received: Vec<f64>,
    /// The share of its NIC's rate it transmitted.
    pub util: f64,
}

impl Hosts {
    /// Host vswitch `k`'s policy and the context its hooks see at `now`.
    #[inline]
    pub(super) fn policy_ctx(&mut self, k: usize, now: Time) -> (&mut Policy, HostCtx<'_>) {
        let hv = &mut self.vswitches[k];
        let ctx = HostCtx {
            now,
            capacity_bps: hv.capacity_bps,
            mine: &hv.vms,
            vms: &self.vms,
            pairs: &self.pairs,
            shapers: &mut self.shapers,
            control: &mut self.control_out,
            release: &mut self.released,
        };
        (&mut hv.policy, ctx)
    }

    /// Each VM's `rx_bytes` from its pairs' counts.
    pub(super) fn sum_vm_rx(&mut self) {
        for vm in self.vms.iter_mut() {
            vm.rx_bytes = 0;
        }
        for pr in &self.pairs {
            if let Some(v) = pr.dst {
                self.vms[v.idx()].rx_bytes += pr.rx_bytes;
            }
        }
    }

    /// Host `k`'s measurements over a tick of `secs` seconds whose NIC (at
    /// `nic_bps`) has transmitted `nic_tx` bytes in all; its NIC's baseline moves
    /// to now.
    pub(super) fn measure(
        &mut self,
        k: usize,
        nic_tx: u64,
        nic_bps: u64,
        secs: f64,
    ) -> TickMeasure {
        let hv = &mut self.vswitches[k];
        let util = (nic_tx - hv.nic_at_tick) as f64 * 8.0 / (nic_bps as f64 * secs);
        hv.nic_at_tick = nic_tx;
        let ids = hv.vms.clone();
        let rate = |now: u64, then: u64| (now - then) as f64 * 8.0 / secs;
        let vms = &self.vms;
        let sent = ids
            .iter()
            .map(|v| rate(vms[v.idx()].tx_bytes, vms[v.idx()].tx_at_tick))
            .collect();
        let received = ids
            .iter()
            .map(|v| rate(vms[v.idx()].rx_bytes, vms[v.idx()].rx_at_tick))
            .collect();
        TickMeasure {
            ids,
            sent,
            received,
            util,
        }
    }

    /// Host `k`'s rows of `vm_rates` at `now` (seconds); the VMs' measurement
    /// baselines move to now.
    pub(super) fn record(&mut self, k: usize, m: &TickMeasure, now: f64) {
        let policy = &self.vswitches[k].policy;
        let r = &mut self.vm_rates;
        let kind = policy.kind();
        let first = r.first[kind as usize];
        let own = first..first + kind.columns().len();
        let mut cells = Vec::new();
        for (i, &v) in m.ids.iter().enumerate() {
            let vm = &mut self.vms[v.idx()];
            vm.tx_at_tick = vm.tx_bytes;
            vm.rx_at_tick = vm.rx_bytes;
            r.time.push(now);
            r.vm.push(v.0);
            r.sr.push(m.sent[i]);
            r.ar.push(
                self.shapers[ShaperId::of_vm(v)]
                    .shaping_rate()
                    .map(|x| x as f64),
            );
            r.guarantee.push(vm.guarantee_bps as f64);
            r.nic_util.push(m.util);
            cells.clear();
            policy.record(i, &mut cells);
            debug_assert_eq!(
                cells.len(),
                own.len(),
                "{kind:?} recorded {} cells for its {} columns",
                cells.len(),
                own.len()
            );
            for (c, cell) in row_cells(&r.specs, own.clone(), &cells).enumerate() {
                r.extra[c].push(cell);
            }
        }
    }

    /// Packets waiting in the vswitches: in shapers and, with a CPU model, in the
    /// VMs' rings.
    pub(super) fn held(&self) -> u64 {
        self.shapers.held() + self.cpu.as_ref().map_or(0, |c| c.held())
    }

    /// VM `v`'s packet `p` leaves its vswitch: counted on its pair and its VM; the
    /// host whose NIC it goes to.
    #[inline]
    pub(super) fn count_to_nic(&mut self, v: VmId, p: &Packet) -> HostId {
        let size = p.size as u64;
        let data = !p.has(flags::ACK | flags::CONTROL) as u64;
        self.pairs[p.pair as usize].tx_bytes += size;
        let vm = &mut self.vms[v.idx()];
        vm.tx_bytes += size;
        vm.data_bytes += size * data;
        vm.host
    }

    /// The DSCP and red epoch two-colour shaper `s` gives a packet it releases in
    /// colour `c` (0 and 0 for a plain shaper).
    #[inline]
    pub(super) fn colour_marks(&self, s: ShaperId, c: Colour) -> (u8, u16) {
        self.shapers[s]
            .colours()
            .map_or((0, 0), |t| (t.dscp_of(c), t.epoch))
    }

    /// The wake-up shaper `s` now needs for its next departure, if it needs a new
    /// one (it is then the pending one).
    #[inline]
    pub(super) fn next_wake(&mut self, s: ShaperId, now: Time) -> Option<Time> {
        let sh = &mut self.shapers[s];
        // a shaper is served the moment its bucket allows (the vswitch's CPU, when
        // modelled, forwards the packet afterwards: `sim/cpu.rs`)
        let t = sh.next_departure()?.max(now);
        if sh.wake_at == Some(t) {
            return None;
        }
        sh.wake_at = Some(t);
        Some(t)
    }

    /// Shaper `s`'s wake-up at `now` fired: whether it is still the pending one
    /// (a rate change supersedes it); it is pending no more.
    #[inline]
    pub(super) fn woken(&mut self, s: ShaperId, now: Time) -> bool {
        let sh = &mut self.shapers[s];
        if sh.wake_at != Some(now) {
            return false;
        }
        sh.wake_at = None;
        true
    }

    /// Whether VM `v` exists, or the error naming it.
    pub(super) fn check_vm(&self, v: VmId) -> Result<(), String> {
        (v.idx() < self.vms.len())
            .then_some(())
            .ok_or_else(|| format!("there is no VM {}", v.idx()))
    }
}
