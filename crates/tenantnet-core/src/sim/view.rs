//! A run seen from outside its loop: the parts borrowed read-only at the run's time.
//! The run's tables are built from it (`sim/results.rs`, `sim/vm_results.rs`,
//! `sim/cpu_records.rs`, `sim/queries.rs`), and so are the queries a caller asks
//! while the run goes (its time, its counters, its events, its packets in flight):
//! they read the state, never the loop. In a parallel run, the counts come from the
//! partitions.

use super::parts::{Endpoints, Fabric, Hosts, Parallelism, Records};
use super::{Counters, Event, Sim};
use crate::engine::queue::EventQueue;
use crate::engine::Time;

/// The parts of a run, borrowed at time `now`.
pub struct RunView<'a> {
    /// The run's time.
    pub now: Time,
    /// The fabric.
    pub fabric: &'a Fabric,
    /// The hosts.
    pub hosts: &'a Hosts,
    /// The endpoints.
    pub ends: &'a Endpoints,
    /// The records.
    pub records: &'a Records,
    events: &'a EventQueue,
    parallel: &'a Parallelism,
}

impl<'a> RunView<'a> {
    /// The parts of `sim`, now.
    pub fn of(sim: &'a Sim) -> Self {
        RunView {
            now: sim.now,
            fabric: &sim.fabric,
            hosts: &sim.hosts,
            ends: &sim.ends,
            records: &sim.records,
            events: &sim.events,
            parallel: &sim.parallel,
        }
    }

    /// Packet counters so far, and ECN marks applied so far.
    pub fn counters(&self) -> (Counters, u64) {
        if let Some(par) = &self.parallel.par {
            return par.counters();
        }
        let marks = self.fabric.net.ports.iter().map(|p| p.stats().marks);
        (self.records.counters, marks.sum())
    }

    /// Events processed so far (in a parallel run, as the sequential run counts them).
    pub fn events_processed(&self) -> u64 {
        let par = self.parallel.par.as_ref();
        self.events.processed() + par.map_or(0, |p| p.events())
    }

    /// Packets alive now, and the same number counted independently: those waiting
    /// in ports and vswitch queues plus those on the wire or links (pending
    /// arrivals). Equal unless a packet leaked.
    pub fn in_flight_check(&self) -> (u64, u64) {
        if let Some(par) = &self.parallel.par {
            return par.in_flight();
        }
        let ports = self.fabric.net.ports.iter();
        let held = ports.map(|p| p.held_packets()).sum::<u64>() + self.hosts.held();
        let on_links = self
            .events
            .codes()
            .filter(|&c| matches!(Event::decode(c), Some(Event::Arrive(_) | Event::Handoff(_))))
            .count() as u64;
        (self.fabric.pkts.live(), held + on_links)
    }
}
