//! Each part's copy for a partition of a parallel run (`fork`) and its taking in of
//! what the partitions did (`absorb`): the run's view of the ports, hosts, flows and
//! records, each piece from the partition that owns it ([`Owners`]).

use super::owners::Owners;
use super::PartCtx;
use crate::net::HostId;
use crate::sim::cpu::CpuState;
use crate::sim::flow::Endpoint;
use crate::sim::parts::{Endpoints, Fabric, Hosts, Parallelism, Records, RunBudget};
use crate::sim::vm_results::VmRateCols;
use crate::sim::Counters;

/// What a sync brings up to date.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(in crate::sim) enum Need {
    /// What a sample reads: the ports if it samples them, the flows it samples, the
    /// VMs.
    Sample,
    /// What a controller reads besides: every port, the VM pairs' bytes.
    Control,
    /// All of it, for the results.
    All,
}

impl Fabric {
    /// A partition's copy, before its first event: the network and the packets its
    /// start left (none in transit), without SACK options in flight.
    pub(in crate::sim) fn fork(&self) -> Fabric {
        Fabric {
            net: self.net.clone(),
            node_kind: self.node_kind.clone(),
            pkts: self.pkts.clone(),
            evicted: Vec::new(),
            ack_routes: self.ack_routes.clone(),
            sacks: Default::default(),
            host_hook: self.host_hook,
            prefetch: self.prefetch,
            handoffs: Default::default(),
        }
    }

    /// Each port and its buffer pool from the partition that owns its node.
    pub(in crate::sim) fn absorb(&mut self, parts: &[&Fabric], owners: &Owners) {
        for i in 0..self.net.ports.len() {
            let theirs = &parts[owners.port(i)].net;
            let src = &theirs.ports[i];
            if let Some(pool) = src.pool() {
                let pool = pool as usize;
                self.net.pools[pool] = theirs.pools[pool];
            }
            self.net.ports[i].clone_from(src);
        }
    }

    /// The ports of partition `me`'s own nodes, in this copy.
    pub(in crate::sim) fn owned_ports<'a>(
        &'a self,
        owners: &'a Owners,
        me: usize,
    ) -> impl Iterator<Item = &'a crate::net::Port> {
        let ports = self.net.ports.iter().enumerate();
        ports
            .filter(move |&(i, _)| owners.port(i) == me)
            .map(|(_, p)| p)
    }
}

impl Endpoints {
    /// Partition `me`'s copy: every flow, of which it starts those it sends (the
    /// run, not a partition, knows when all are done).
    pub(in crate::sim) fn fork(&self, owners: &Owners, me: usize) -> Endpoints {
        let mut start_order = self.start_order.clone();
        start_order.retain(|&f| owners.sender(&self.flows[f as usize]) == me);
        Endpoints {
            flows: self.flows.clone(),
            tcp: self.tcp.clone(),
            seed: self.seed,
            start_order,
            next_start: 0,
            sender_out: Default::default(),
            receiver_out: Default::default(),
            finite_flows: u64::MAX,
            completed: 0,
            small_queues: self.small_queues,
            exchanges: self.exchanges.clone(),
            resume: Vec::new(),
        }
    }

    /// The flows completed in all partitions; the queries' begins and ends from their
    /// clients' partitions (`need` all); flow `f` for each of `flows` from its
    /// partitions: all of it (`need` all), or what a sample reads (the bytes
    /// delivered and the sender).
    pub(in crate::sim) fn absorb(
        &mut self,
        parts: &[&Endpoints],
        owners: &Owners,
        need: Need,
        flows: &[usize],
    ) {
        self.completed = parts.iter().map(|p| p.completed).sum();
        if need == Need::All {
            let theirs: Vec<_> = parts.iter().map(|p| &p.exchanges).collect();
            let client = |h: HostId| owners.host(h);
            self.exchanges.absorb(&theirs, &client);
        }
        for &f in flows {
            let fl = &mut self.flows[f];
            let snd_side = &parts[owners.sender(fl)].flows[f];
            let rcv_side = &parts[owners.receiver(fl)].flows[f];
            if need == Need::All {
                fl.clone_from(snd_side);
            } else {
                fl.ep.clone_from(&snd_side.ep);
            }
            fl.delivered = rcv_side.delivered;
            if let (Some(Endpoint::Tcp { rcv, .. }), Some(Endpoint::Tcp { rcv: theirs, .. })) =
                (fl.ep.as_deref_mut(), rcv_side.ep.as_deref())
            {
                rcv.clone_from(theirs);
            }
        }
    }
}

impl Hosts {
    /// A partition's copy: every host's vswitch as its start left it (the shapers'
    /// ids are the run's), of which the partition runs its own; no rows yet.
    pub(in crate::sim) fn fork(&self) -> Hosts {
        Hosts {
            vms: self.vms.clone(),
            vswitches: self.vswitches.clone(),
            tick: self.tick,
            tick_key: self.tick_key.clone(),
            pairs: self.pairs.clone(),
            shapers: self.shapers.clone(),
            touched_shapers: Vec::new(),
            control_out: Vec::new(),
            released: Vec::new(),
            vm_rates: VmRateCols::new(),
            cpu: self.cpu.as_ref().map(|c| Box::new(c.fork())),
        }
    }

    /// Each VM from the partition of its host; past a sample's needs, each VM pair's
    /// bytes sent from its source's partition and received from its destination's;
    /// for the results (`need` all), the `vm_rates` rows of every partition in the
    /// sequential run's order (by time, then host vswitch) and the CPU model's.
    pub(in crate::sim) fn absorb(&mut self, parts: &[&Hosts], owners: &Owners, need: Need) {
        for i in 0..self.vms.len() {
            let o = owners.vm(self, crate::net::VmId(i as u32));
            self.vms[i].clone_from(&parts[o].vms[i]);
        }
        if need == Need::Sample {
            return;
        }
        for i in 0..self.pairs.len() {
            let (src, dst) = (self.pairs[i].src, self.pairs[i].dst);
            if let Some(v) = src {
                self.pairs[i].tx_bytes = parts[owners.vm(self, v)].pairs[i].tx_bytes;
            }
            if let Some(v) = dst {
                self.pairs[i].rx_bytes = parts[owners.vm(self, v)].pairs[i].rx_bytes;
            }
        }
        if need != Need::All {
            return;
        }
        let rows: Vec<&VmRateCols> = parts.iter().map(|p| &p.vm_rates).collect();
        let vms = &self.vms;
        self.vm_rates = VmRateCols::merged(&rows, |vm| vms[vm as usize].vswitch);
        if let Some(cpu) = self.cpu.as_deref_mut() {
            let theirs: Vec<&CpuState> = (parts.iter())
                .map(|p| p.cpu.as_deref().expect("every partition has the CPU model"))
                .collect();
            cpu.absorb(&theirs, &owners.vswitches(), &self.vms);
        }
    }
}

impl Records {
    /// A partition's copy: its own counters, the run's recorder (which a partition
    /// only counts with, never samples).
    pub(in crate::sim) fn fork(&self) -> Records {
        Records {
            counters: Counters::default(),
            recorder: self.recorder.clone(),
            meta: self.meta.clone(),
            wall: 0.0,
            control_wall: 0.0,
            capture: self.capture.as_ref().map(|c| Box::new(c.empty_like())),
            flow_trace: self.flow_trace.as_ref().map(|t| Box::new(t.empty_like())),
        }
    }

    /// The partitions' counters summed and their recorders' counts taken in
    /// (`Recorder::absorb`; `order`: each partition's start order since the last
    /// call).
    pub(in crate::sim) fn absorb(
        &mut self,
        parts: &mut [&mut Records],
        owners: &Owners,
        order: &mut [Vec<(u128, u32)>],
    ) {
        let mut c = Counters::default();
        for p in parts.iter() {
            c.add(&p.counters);
        }
        self.counters = c;
        let mut recs: Vec<_> = parts.iter_mut().map(|p| &mut p.recorder).collect();
        let port_owner = |port: u32| owners.port(port as usize);
        self.recorder.absorb(&mut recs, &port_owner, order);
        if let Some(c) = self.capture.as_deref_mut() {
            let theirs = parts.iter_mut().filter_map(|p| p.capture.as_deref_mut());
            c.kept.absorb(theirs.map(|c| &mut c.kept));
        }
        if let Some(t) = self.flow_trace.as_deref_mut() {
            let theirs = parts.iter_mut().filter_map(|p| p.flow_trace.as_deref_mut());
            t.kept.absorb(theirs.map(|t| &mut t.kept));
        }
    }
}

impl RunBudget {
    /// A partition's copy: the run's end, seed, memory and grid; the run, not a
    /// partition, stops when every flow is done.
    pub(in crate::sim) fn fork(&self) -> RunBudget {
        RunBudget {
            end: self.end,
            stop_when_done: false,
            done: false,
            seed: self.seed,
            footprint: self.footprint.clone(),
            memory: self.memory,
            failure: None,
            grid: self.grid,
            drain: false,
        }
    }
}

impl Parallelism {
    /// What partition `me` holds: which one it is, the partition of each port's far
    /// end, its mailboxes and which host vswitches are its own.
    pub(in crate::sim) fn partition(owners: &Owners, me: usize) -> Parallelism {
        let vswitches = (0..owners.vswitch_count())
            .map(|k| owners.vswitch(k) == me)
            .collect();
        Parallelism {
            part: Some(Box::new(PartCtx {
                me: me as u16,
                peer: owners.peers().to_vec(),
                outbox: (0..owners.parts).map(|_| Vec::new()).collect(),
                shared: Vec::new(),
                vswitches,
                ghosts: Vec::new(),
                start_order: Vec::new(),
                gated: 0,
                last_complete: 0,
            })),
            wire_hook: true,
            ..Default::default()
        }
    }
}
