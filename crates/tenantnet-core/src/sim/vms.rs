//! The hosts' VMs outside the data path: their pairs (with Eq. 1's guarantees)
//! and shapers built before the run, each flow's channel fixed at the start, a
//! tick's measurements and `vm_rates` rows, the packets the vswitches hold, and the
//! changes a controller asks of them (a VM's DSCP tag, its guarantee). Each works
//! on the [`Hosts`] alone and returns what the loop needs; the loop
//! (`Sim::on_host_tick`, `Sim::apply_here`) carries out what a hook asked for.

use super::cpu::CpuState;
use super::flow::{Flow, LIVE_CHANNEL};
use super::parts::Hosts;
use super::vm_results::row_cells;
use crate::control::TagScope;
use crate::net::{Network, VmId};
use crate::vswitch::partition::PairGuarantees;
use crate::vswitch::policy::HostPolicy;
use crate::vswitch::{Shaper, ShaperId, Shapers, VmPair, VswitchParams};

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

/// Each flow's VM pairs (both directions), and the table of distinct pairs with
/// the pipe guarantees of those that have one and, unless `vs.pair_guarantees` is
/// `pipes`, Eq. 1's share of the hose guarantees for every other VM-to-VM pair that
/// carries data (`vswitch/partition.rs`), marked for re-partitioning if `dynamic`.
fn index_pairs(flows: &mut [Flow], vs: &VswitchParams) -> Vec<VmPair> {
    let source = vs.pair_guarantees;
    let mut pairs: Vec<VmPair> = Vec::new();
    let mut index = std::collections::HashMap::new();
    let mut id = |src: Option<VmId>, dst: Option<VmId>| {
        *index.entry((src, dst)).or_insert_with(|| {
            pairs.push(VmPair {
                src,
                dst,
                ..Default::default()
            });
            pairs.len() as u32 - 1
        })
    };
    for f in flows.iter_mut() {
        let (s, d) = (f.spec.src_vm, f.spec.dst_vm);
        if s.is_some() || d.is_some() {
            f.pair = id(s, d);
            f.pair_rev = id(d, s);
        }
    }
    for f in flows.iter() {
        if f.spec.src_vm.is_some() || f.spec.dst_vm.is_some() {
            pairs[f.pair as usize].reverse = f.pair_rev;
            pairs[f.pair_rev as usize].reverse = f.pair;
        }
    }
    for pipe in &vs.pipes {
        if let Some(&i) = index.get(&(Some(pipe.src), Some(pipe.dst))) {
            pairs[i as usize].guarantee_bps = Some(pipe.guarantee_bps);
        }
    }
    if source != PairGuarantees::Pipes {
        // every VM-to-VM pair that carries a flow's data, and has no pipe
        let mut open: Vec<u32> = (flows.iter())
            .filter(|f| f.spec.src_vm.is_some() && f.spec.dst_vm.is_some())
            .map(|f| f.pair)
            .filter(|&i| pairs[i as usize].guarantee_bps.is_none())
            .collect();
        open.sort_unstable();
        open.dedup();
        let ends: Vec<(VmId, VmId)> = (open.iter())
            .filter_map(|&i| Some((pairs[i as usize].src?, pairs[i as usize].dst?)))
            .collect();
        let g = crate::vswitch::partition::hose_partition(&ends, |v| vs.vms[v.idx()].guarantee_bps);
        for (&i, g) in open.iter().zip(g) {
            pairs[i as usize].guarantee_bps = Some(g);
            pairs[i as usize].repartition = source == PairGuarantees::Dynamic;
        }
    }
    pairs
}

/// Every VM's own shaper, VM `v`'s as shaper `v`.
fn vm_shapers(p: &VswitchParams) -> Shapers {
    let mut shapers = Shapers::default();
    for (i, v) in p.vms.iter().enumerate() {
        let vm = VmId(i as u32);
        let s = shapers.add(Shaper::new(vm, v.guarantee_bps, p.queue, p.burst));
        debug_assert_eq!(s, ShaperId::of_vm(vm));
    }
    shapers
}

impl Hosts {
    /// The hosts' vswitches of `vs`, each flow of `flows` given its VM pairs and
    /// each VM its own shaper.
    pub(super) fn new(vs: VswitchParams, flows: &mut [Flow]) -> Hosts {
        let pairs = index_pairs(flows, &vs);
        let shapers = vm_shapers(&vs);
        let cpu = (vs.cpu.as_ref()).map(|s| Box::new(CpuState::new(s, &vs.hosts, vs.vms.len())));
        Hosts {
            vms: vs.vms,
            vswitches: vs.hosts,
            tick: vs.tick,
            tick_key: vs.tick_key,
            pairs,
            shapers,
            touched_shapers: Vec::new(),
            control_out: Vec::new(),
            released: Vec::new(),
            vm_rates: super::vm_results::VmRateCols::new(),
            cpu,
        }
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

    /// Whether VM `v` exists, or the error naming it.
    pub(super) fn check_vm(&self, v: VmId) -> Result<(), String> {
        (v.idx() < self.vms.len())
            .then_some(())
            .ok_or_else(|| format!("there is no VM {}", v.idx()))
    }

    /// Each flow from a VM learns its channel, once if its policy's are fixed; each
    /// pair learns whether its receiving policy looks at ingress.
    pub(super) fn fix_channels(&mut self, flows: &mut [Flow]) {
        for pr in self.pairs.iter_mut() {
            pr.ingress = pr.dst.is_some_and(|v| {
                let k = self.vms[v.idx()].vswitch as usize;
                self.vswitches[k].policy.uses_ingress()
            });
        }
        for flow in flows.iter_mut() {
            let Some(v) = flow.spec.src_vm else {
                continue;
            };
            let policy = &self.vswitches[self.vms[v.idx()].vswitch as usize].policy;
            flow.chan = if policy.fixed_channels() {
                policy.channel(v, flow.pair).0
            } else {
                LIVE_CHANNEL
            };
        }
    }

    /// Tags every packet of the VMs in `scope` with `dscp` (`None`: untagged), or
    /// why not (`net` names the hosts).
    pub(super) fn tag_dscp(
        &mut self,
        scope: TagScope,
        dscp: Option<u8>,
        net: &Network,
    ) -> Result<(), String> {
        if let Some(d) = dscp.filter(|&d| d > 63) {
            return Err(format!("DSCP {d}: expected 0 to 63"));
        }
        let hit = |v: &crate::vswitch::Vm| match scope {
            TagScope::Host(h) => v.host == h,
            TagScope::Tenant(t) => v.tenant == t,
        };
        let mut any = false;
        for v in self.vms.iter_mut().filter(|v| hit(v)) {
            v.dscp_tag = dscp;
            any = true;
        }
        any.then_some(()).ok_or_else(|| match scope {
            TagScope::Host(h) if h.idx() < net.hosts.len() => {
                format!("host {} has no VMs", net.host_name(h))
            }
            TagScope::Host(h) => format!("there is no host {}", h.0),
            TagScope::Tenant(t) => format!("tenant {t} has no VMs"),
        })
    }

    /// VM `vm`'s new guarantee (and weight, if given): its vswitch, whose policy is
    /// to learn of it, or why not.
    pub(super) fn set_guarantee(
        &mut self,
        vm: VmId,
        guarantee_bps: u64,
        weight: Option<f64>,
    ) -> Result<usize, String> {
        self.check_vm(vm)?;
        if guarantee_bps == 0 || weight.is_some_and(|w| !(w.is_finite() && w > 0.0)) {
            return Err("expected a positive guarantee and weight".into());
        }
        let v = &mut self.vms[vm.idx()];
        v.guarantee_bps = guarantee_bps;
        v.weight = weight.or(v.weight);
        Ok(v.vswitch as usize)
    }
}
