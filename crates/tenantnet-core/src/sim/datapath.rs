//! The vswitch in the data path: a VM's packet passes its host's policy (egress)
//! and a shaper on the way to the NIC; a packet arriving for a VM passes the
//! receiving host's policy (ingress) before its transport; blocked TCP senders are
//! woken when their shaper drains; every host with VMs ticks periodically, measures
//! its VMs and NIC and runs its policy's tick (`crate::vswitch`).

use super::flow::{Flow, LIVE_CHANNEL};
use super::{Event, Sim};
use crate::engine::queue::Origin;
use crate::engine::{to_secs, Time};
use crate::net::packet::flags;
use crate::net::{FlowId, HostId, Packet, PktId, VmId};
use crate::vswitch::partition::PairGuarantees;
use crate::vswitch::policy::ControlMsg;
use crate::vswitch::policy::{all_columns, Cell, ColumnSpec, HostCtx, HostMeasure, Ingress};
use crate::vswitch::{
    HostPolicy, Policy, Shaper, ShaperId, Shapers, VmPair, VswitchParams, NO_PAIR,
};
use crate::workload::FlowKind;

/// The per-VM rate record (`vm_rates`): one row per VM per tick.
#[derive(Default)]
pub struct VmRateCols {
    /// Tick time, seconds.
    pub time: Vec<f64>,
    /// VM index.
    pub vm: Vec<u32>,
    /// SR, the send rate over the last interval, bit/s.
    pub sr: Vec<f64>,
    /// The rate the VM's own shaper enforces from this tick (`None`: off).
    pub ar: Vec<Option<f64>>,
    /// The VM's guarantee at this tick, bit/s.
    pub guarantee: Vec<f64>,
    /// NIC utilisation of the VM's host over the last interval.
    pub nic_util: Vec<f64>,
    /// Every policy kind's own columns, in registration order.
    pub specs: Vec<ColumnSpec>,
    /// Index in `specs` of each kind's first column.
    pub first: Vec<usize>,
    /// Their values, one per column.
    pub extra: Vec<PolicyValues>,
}

/// The values of one policy column, typed as its [`ColumnSpec::other`].
#[derive(Clone, Debug)]
pub enum PolicyValues {
    /// Rates, bit/s.
    Rate(Vec<Option<f64>>),
    /// Counts.
    Count(Vec<u64>),
}

impl PolicyValues {
    fn new(kind: Cell) -> Self {
        match kind {
            Cell::Rate(_) => PolicyValues::Rate(Vec::new()),
            Cell::Count(_) => PolicyValues::Count(Vec::new()),
        }
    }

    /// Appends `c`. A cell of the other type (a policy's bug, caught in debug
    /// builds) records nothing useful: none or 0.
    pub(super) fn push(&mut self, c: Cell) {
        match (self, c) {
            (PolicyValues::Rate(v), Cell::Rate(r)) => v.push(r),
            (PolicyValues::Count(v), Cell::Count(n)) => v.push(n),
            (PolicyValues::Rate(v), Cell::Count(_)) => {
                debug_assert!(false, "a count in a rate column");
                v.push(None)
            }
            (PolicyValues::Count(v), Cell::Rate(_)) => {
                debug_assert!(false, "a rate in a count column");
                v.push(0)
            }
        }
    }
}

impl VmRateCols {
    /// An empty record with every policy kind's columns.
    pub fn new() -> Self {
        let (specs, first) = all_columns();
        VmRateCols {
            extra: specs.iter().map(|c| PolicyValues::new(c.other)).collect(),
            specs,
            first,
            ..Default::default()
        }
    }
}

/// A `vm_rates` row's policy cells: the policy's own `cells` in its columns `own`
/// (in order; cells beyond them are dropped rather than spilt into another policy's
/// columns), every other column its [`ColumnSpec::other`].
pub(super) fn row_cells<'a>(
    specs: &'a [ColumnSpec],
    own: std::ops::Range<usize>,
    cells: &'a [Cell],
) -> impl Iterator<Item = Cell> + 'a {
    specs.iter().enumerate().map(move |(c, spec)| {
        let mine = own.contains(&c).then(|| cells.get(c - own.start)).flatten();
        *mine.unwrap_or(&spec.other)
    })
}

/// Each flow's VM pairs (both directions), and the table of distinct pairs with
/// the pipe guarantees of those that have one and, unless `vs.pair_guarantees` is
/// `pipes`, Eq. 1's share of the hose guarantees for every other VM-to-VM pair that
/// carries data (`vswitch/partition.rs`), marked for re-partitioning if `dynamic`.
pub(super) fn index_pairs(flows: &mut [Flow], vs: &VswitchParams) -> Vec<VmPair> {
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
pub(super) fn vm_shapers(p: &VswitchParams) -> Shapers {
    let mut shapers = Shapers::default();
    for (i, v) in p.vms.iter().enumerate() {
        let vm = VmId(i as u32);
        let s = shapers.add(Shaper::new(vm, v.guarantee_bps, p.queue, p.burst));
        debug_assert_eq!(s, ShaperId::of_vm(vm));
    }
    shapers
}

impl Sim {
    /// Runs `hook` on host vswitch `k`'s policy with its context, then carries out
    /// what it asked for.
    pub(super) fn with_host<R>(
        &mut self,
        k: usize,
        hook: impl FnOnce(&mut Policy, &mut HostCtx) -> R,
    ) -> R {
        let (policy, mut ctx) = self.hosts.policy_ctx(k, self.now);
        let r = hook(policy, &mut ctx);
        self.after_hook();
        r
    }

    /// Releases what re-rated shapers now allow, sends the policies' control
    /// packets and hands held packets on.
    #[inline]
    pub(super) fn after_hook(&mut self) {
        if self.hosts.shapers.any_touched() {
            let mut touched = std::mem::take(&mut self.hosts.touched_shapers);
            self.hosts.shapers.take_touched(&mut touched);
            for &s in &touched {
                self.shaper_drain(s);
            }
            self.hosts.touched_shapers = touched;
        }
        while let Some(c) = self.hosts.control_out.pop() {
            self.send_control(c);
        }
        if !self.hosts.released.is_empty() {
            // in the order the policy released them (resequencing depends on it)
            let mut released = std::mem::take(&mut self.hosts.released);
            for p in released.drain(..) {
                self.hand_to_transport(p);
            }
            self.hosts.released = released;
        }
    }

    /// A host puts a packet on the wire, through VM `vm`'s vswitch if the packet
    /// comes from a VM. `may_drop`: the sender does not respect the shaper's room
    /// (UDP).
    #[inline]
    pub(super) fn send_from(&mut self, h: HostId, vm: Option<VmId>, id: PktId, may_drop: bool) {
        self.records.counters.sent += 1;
        match vm {
            Some(v) => self.egress(v, id, may_drop),
            None => {
                let nic = self.fabric.net.hosts[h.idx()].nic;
                self.enqueue(nic, id, self.nic_queue(nic, id));
            }
        }
    }

    /// A packet reached its destination host: counted on its VM pair, through the
    /// receiving VM's policy (if that policy looks at ingress), then to its
    /// transport.
    #[inline]
    pub(super) fn deliver(&mut self, id: PktId) {
        let p = self.fabric.pkts[id];
        self.fabric.pkts.free(id);
        if p.pair != NO_PAIR {
            let pr = &mut self.hosts.pairs[p.pair as usize];
            pr.rx_bytes += p.size as u64;
            if pr.ingress && self.ingress(&p) == Ingress::Consumed {
                return;
            }
        }
        self.hand_to_transport(p);
    }

    /// The receiving VM's policy sees packet `p`.
    fn ingress(&mut self, p: &Packet) -> Ingress {
        let Some(v) = self.hosts.pairs[p.pair as usize].dst else {
            return Ingress::Deliver;
        };
        let k = self.hosts.vms[v.idx()].vswitch as usize;
        let tcp = !p.has(flags::CONTROL)
            && matches!(
                self.ends.flows[p.flow.idx()].spec.kind,
                FlowKind::Tcp { .. }
            );
        self.with_host(k, |pol, ctx| pol.ingress(ctx, p, v, tcp))
    }

    /// A control packet from pair `pair`'s sending VM to its receiving VM's host
    /// (policies send them through `HostCtx::control`).
    pub fn send_control(&mut self, c: ControlMsg) {
        let ControlMsg { pair, size, .. } = c;
        let Some(&VmPair { src, dst, .. }) = self.hosts.pairs.get(pair as usize) else {
            debug_assert!(false, "no pair {pair}");
            return;
        };
        let (Some(s), Some(d)) = (src, dst) else {
            debug_assert!(false, "control packets travel between VMs");
            return;
        };
        let host = self.hosts.vms[s.idx()].host;
        let p = Packet {
            dst: self.hosts.vms[d.idx()].host,
            size,
            hash: crate::net::routing::mix32(pair ^ 0x6a09_e667),
            pair,
            ..Packet::control(c.payload)
        };
        let id = self.alloc_packet(p);
        self.records.counters.control_sent += 1;
        self.send_from(host, Some(s), id, true);
    }

    /// Each flow from a VM learns its channel, once if its policy's are fixed; each
    /// pair learns whether its receiving policy looks at ingress.
    fn fix_channels(&mut self) {
        for pr in self.hosts.pairs.iter_mut() {
            pr.ingress = pr.dst.is_some_and(|v| {
                let k = self.hosts.vms[v.idx()].vswitch as usize;
                self.hosts.vswitches[k].policy.uses_ingress()
            });
        }
        for flow in self.ends.flows.iter_mut() {
            let Some(v) = flow.spec.src_vm else {
                continue;
            };
            let policy = &self.hosts.vswitches[self.hosts.vms[v.idx()].vswitch as usize].policy;
            flow.chan = if policy.fixed_channels() {
                policy.channel(v, flow.pair).0
            } else {
                LIVE_CHANNEL
            };
        }
    }

    /// A sender with a small-queue limit stopped for lack of room: it waits for
    /// whichever of its small queue and its shaper is short of a full packet.
    #[cold]
    pub(super) fn block_small_queue(&mut self, f: FlowId) {
        let full = self.ends.packet_size(f);
        let sq = &mut self.ends.flows[f.idx()].small_queue;
        if sq.room() < full {
            sq.waiting = true;
        }
        if self.shaper_room(f) < full {
            self.block_sender(f);
        }
    }

    /// A packet its sender's small queue counts has left the host's NIC: its bytes
    /// count no more.
    pub(super) fn on_sent(&mut self, id: PktId) {
        let (flow, size) = self.fabric.left_host(id);
        self.ends.release_small_queue(flow, size);
        if self.parallel.part.is_some() {
            self.forget_ghost(id);
        }
    }

    /// Frees a packet that goes no further (dropped or evicted); its bytes go back
    /// to its sender's small queue if they still count there.
    pub(super) fn discard(&mut self, id: PktId) {
        if let Some((flow, size)) = self.fabric.discard(id, self.ends.small_queues) {
            self.ends.release_small_queue(flow, size);
        }
    }

    /// Resumes the senders their small queues woke in the event just handled, in
    /// the order they woke (and any these wake in turn).
    #[cold]
    pub(super) fn resume_senders(&mut self) {
        let mut i = 0;
        while let Some(&f) = self.ends.resume.get(i) {
            self.drive_sender(f, false, |snd, now, cfg, out| snd.resume(now, cfg, out));
            i += 1;
        }
        self.ends.resume.clear();
    }

    /// The start of the run: every policy's start hook, the controllers' first
    /// wakes and the first tick.
    pub(super) fn start_vswitches(&mut self) {
        for k in 0..self.hosts.vswitches.len() {
            self.with_host(k, |p, ctx| p.start(ctx));
        }
        self.fix_channels();
        self.start_controllers();
        let t = self.hosts.tick;
        if !self.hosts.vswitches.is_empty() && t <= self.budget.end {
            self.schedule(t, Event::HostTick, Origin::GLOBAL);
        }
    }

    /// Every tick: each host measures its VMs and NIC over the interval just ended,
    /// its policy ticks on what it measured, and each VM's row is recorded. In a
    /// partition of a parallel run, its own hosts do (each host's tick reads and
    /// changes its own vswitch only).
    pub(super) fn on_host_tick(&mut self) {
        self.parallel
            .handled_for_all(self.now, Event::HostTick.encode());
        self.hosts.sum_vm_rx();
        let t = self.hosts.tick;
        let (secs, now) = (to_secs(t), to_secs(self.now));
        for k in 0..self.hosts.vswitches.len() {
            if !self.owns_vswitch(k) {
                continue;
            }
            let host = self.hosts.vswitches[k].host;
            let nic = &self.fabric.net.ports[self.fabric.net.hosts[host.idx()].nic.idx()];
            let m = self.hosts.measure(k, nic.tx_bytes(), nic.rate_bps(), secs);
            let hm = HostMeasure {
                interval: t,
                nic_utilisation: m.util,
                sent_bps: &m.sent,
                received_bps: &m.received,
            };
            self.with_host(k, |p, ctx| p.tick(ctx, &hm));
            self.hosts.record(k, &m, now);
        }
        if self.hosts.cpu.is_some() {
            self.record_cpu(t);
        }
        let key = std::mem::take(&mut self.hosts.tick_key);
        self.check_memory(&key);
        self.hosts.tick_key = key;
        let next: Time = self.now + t;
        if next <= self.budget.end {
            self.schedule(next, Event::HostTick, Origin::GLOBAL);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn a_policys_extra_cells_never_spill_into_another_policys_columns() {
        use super::{row_cells, Cell, ColumnSpec};
        let spec = |name, other| ColumnSpec { name, other };
        let specs = [
            spec("a", Cell::Rate(None)),
            spec("b", Cell::Count(0)),
            spec("c", Cell::Rate(None)),
        ];
        // the policy owning column 1 recorded two cells: the second is dropped
        let cells = [Cell::Count(7), Cell::Rate(Some(5.0))];
        let row: Vec<Cell> = row_cells(&specs, 1..2, &cells).collect();
        assert_eq!(
            row,
            vec![Cell::Rate(None), Cell::Count(7), Cell::Rate(None)]
        );
        // one that recorded too few leaves its other columns at their defaults
        let row: Vec<Cell> = row_cells(&specs, 0..2, &cells[..1]).collect();
        assert_eq!(row, vec![Cell::Count(7), Cell::Count(0), Cell::Rate(None)]);
    }

    use super::super::flow::{LIVE_CHANNEL, NO_CHANNEL};
    use super::{flags, FlowId, Packet, Sim};
    // Up the layers, in a test only: a run with VMs and channels is built from a
    // scenario file, without repeating the builder here.
    use crate::scenario::{load, Format, LoadOptions};

    /// `examples/vswitch-mbfq.toml` cut to 300 ms.
    fn vm_sim() -> Sim {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/vswitch-mbfq.toml"
        );
        let text = std::fs::read_to_string(path)
            .unwrap()
            .replace("duration = \"3s\"", "duration = \"300ms\"");
        let opts = LoadOptions::default();
        load(
            &text,
            "vswitch-mbfq.toml",
            Path::new("."),
            Format::Toml,
            &opts,
        )
        .unwrap()
    }

    #[test]
    fn a_sender_its_small_queue_wakes_resumes_after_the_event_not_inside_it() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/qshare-two-queues.toml"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let opts = LoadOptions::default();
        let mut s = load(&text, "q.toml", Path::new("."), Format::Toml, &opts).unwrap();
        s.run_until(crate::engine::from_secs(0.01));
        let f = FlowId(0);
        let full = s.ends.packet_size(f);
        let sq = &mut s.ends.flows[f.idx()].small_queue;
        assert!(sq.on());
        // the sender waits with its whole limit held; a packet of it is dropped
        (sq.waiting, sq.held) = (true, sq.limit);
        let p = Packet {
            flow: f,
            size: full as u32,
            flags: flags::TSQ,
            ..Default::default()
        };
        let id = s.alloc_packet(p);
        let sent = s.records.counters.data_sent;
        s.discard(id);
        let sq = &s.ends.flows[f.idx()].small_queue;
        assert_eq!((sq.waiting, sq.held), (false, sq.limit - full));
        assert_eq!(s.ends.resume, [f], "woken, to resume after the event");
        assert_eq!(
            s.records.counters.data_sent, sent,
            "not driven inside the drop"
        );
        s.resume_senders();
        assert!(s.ends.resume.is_empty());
    }

    #[test]
    fn asking_the_policy_for_every_channel_gives_what_the_flows_kept() {
        let (mut kept, mut live) = (vm_sim(), vm_sim());
        let mut n = 0;
        for f in live.ends.flows.iter_mut().filter(|f| f.chan != NO_CHANNEL) {
            f.chan = LIVE_CHANNEL;
            n += 1;
        }
        assert!(n > 0, "the scenario has flows from VMs");
        kept.run();
        live.run();
        let outcome = |s: &Sim| {
            let f: Vec<_> = s.ends.flows.iter().map(|f| (f.delivered, f.end)).collect();
            (f, s.records.counters.sent, s.records.counters.dropped)
        };
        assert_eq!(outcome(&kept), outcome(&live));
        assert!(kept.ends.flows.iter().filter(|f| f.delivered > 0).count() >= 2);
    }
}
