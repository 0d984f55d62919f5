//! A PMD core: its clock in cycles and its poll loop.
//!
//! OVS-DPDK's PMD thread polls every receive queue it owns in a fixed order, each
//! poll taking up to a batch of packets, forwarding them, then turning to the next
//! queue (C2QoS §II-C, footnote 1; OVS `pmd_thread_main`): every VM gets the same
//! number of polls whatever its packets cost, so a VM's CPU share follows its
//! batches' cost (§VI-A). A poll that finds a ring empty costs `empty_poll` cycles.
//! Under C2TB a VM without tokens is skipped at no cost (§VI-A, "skipping ports with
//! negative tokens") and every poll's cycles, empty or not, come out of its bucket.
//! Under HBS the core polls by priority class instead (`hbs.rs`).
//!
//! With `rx_path = "pmd"` the first core of each host also polls the NIC's receive
//! queue: first in the round robin's list (OVS polls the NIC's rxq like any other
//! port), above every class under HBS (spec `c2qos.md` §4.3, class 0); it has no
//! C2TB bucket and is never demoted (choice A11).
//!
//! Time: the core's clock counts cycles since time 0; cycle c ends at ⌈c·10^12/F⌉
//! ps, and a core that slept resumes at cycle ⌊t·F/10^12⌋, so no rounding drifts. A
//! core with nothing to poll sleeps until a packet or the C2TB manager wakes it (a
//! real PMD spins; those empty polls are not simulated, spec `c2qos.md` §5.4).

use std::collections::VecDeque;

use super::c2tb::C2tb;
use super::hbs::Hbs;
use crate::engine::Time;
use crate::net::{PktId, VmId};
use crate::units::PS_PER_SEC;

/// Index of a PMD core in the run (hosts' cores in turn).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CoreId(pub u32);

/// The slot of the NIC's receive queue (`rx_path = "pmd"`), beside the VMs' slots.
pub const RX: usize = usize::MAX;

/// When cycle `c` of a core at `hz` ends.
#[inline]
pub fn time_of(c: u64, hz: u64) -> Time {
    (c as u128 * PS_PER_SEC as u128).div_ceil(hz as u128) as Time
}

/// The cycles a core at `hz` has run by time `t`.
#[inline]
pub fn cycle_at(t: Time, hz: u64) -> u64 {
    (t as u128 * hz as u128 / PS_PER_SEC as u128) as u64
}

/// The order a core polls its VMs in.
#[derive(Clone, Debug)]
pub enum Sched {
    /// OVS's round robin, from slot `next`.
    RoundRobin {
        /// The next slot to poll.
        next: usize,
    },
    /// HBS.
    Hbs(Hbs),
}

impl Default for Sched {
    fn default() -> Self {
        Sched::RoundRobin { next: 0 }
    }
}

/// A core's state.
#[derive(Clone, Debug, Default)]
pub struct Pmd {
    /// The host's vswitch (index) it belongs to.
    pub host: u32,
    /// The VMs it polls, in order.
    pub vms: Vec<VmId>,
    /// Its poll order.
    pub sched: Sched,
    /// Cycles since time 0 up to the end of its current work.
    pub clock: u64,
    /// The batch in progress: its packets (and whether each may be dropped), its
    /// VM's slot and its cycles.
    pub batch: Vec<(PktId, bool)>,
    /// The slot of the batch in progress (`None`: the core sleeps).
    pub serving: Option<usize>,
    /// Cycles of the batch in progress.
    pub cost: u64,
    /// Cycles spent forwarding batches, per VM slot.
    pub vm_cycles: Vec<u64>,
    /// Packets forwarded, per VM slot.
    pub vm_packets: Vec<u64>,
    /// Cycles spent on empty polls.
    pub poll: u64,
    /// Cycles asleep.
    pub idle: u64,
    /// The VMs' cycle buckets, by slot, if C2TB limits them.
    pub c2tb: Option<C2tb>,
    /// Its host NIC's receive queue (slot [`RX`]), if it polls one.
    pub rxq: Option<VecDeque<PktId>>,
    /// Cycles spent on the receive queue's batches.
    pub rx_cycles: u64,
    /// Packets forwarded from the receive queue.
    pub rx_packets: u64,
}

impl Pmd {
    /// Whether it is forwarding a batch.
    #[inline]
    pub fn busy(&self) -> bool {
        self.serving.is_some()
    }

    /// Cycles spent forwarding, all VMs and the receive queue.
    pub fn used(&self) -> u64 {
        self.vm_cycles.iter().sum::<u64>() + self.rx_cycles
    }

    /// A sleeping core wakes at `now`: the cycles since its clock were idle.
    pub fn wake(&mut self, now: Time, hz: u64) {
        let c = cycle_at(now, hz);
        if c > self.clock {
            self.idle += c - self.clock;
            self.clock = c;
        }
    }

    /// The slot to serve next ([`RX`] for the receive queue): the first (in the
    /// scheduler's order) it may serve that holds packets (`held(vm)` for a VM's
    /// ring), after the empty polls before it (their cycles spent and charged), or
    /// `None` when a whole round found nothing to serve.
    pub fn choose(&mut self, empty_poll: u64, held: impl Fn(VmId) -> usize) -> Option<usize> {
        let Pmd {
            vms,
            sched,
            clock,
            poll,
            c2tb,
            rxq,
            ..
        } = self;
        // an empty poll: its cycles spent and charged; whether the VM has tokens left
        let mut poll_empty = |c2tb: &mut Option<C2tb>, slot: usize| {
            *clock += empty_poll;
            *poll += empty_poll;
            slot == RX
                || c2tb.as_mut().is_none_or(|c| {
                    c.charge(slot, empty_poll);
                    c.may_serve(slot)
                })
        };
        let rx = rxq.is_some() as usize;
        let rx_held = rxq.as_ref().map_or(0, VecDeque::len);
        match sched {
            Sched::RoundRobin { next } => {
                let m = vms.len() + rx;
                for step in 0..m {
                    let slot = slot_at((*next + step) % m, rx);
                    if slot == RX {
                        if rx_held > 0 {
                            return Some(RX);
                        }
                        poll_empty(c2tb, RX);
                        continue;
                    }
                    if c2tb.as_ref().is_some_and(|c| !c.may_serve(slot)) {
                        continue;
                    }
                    if held(vms[slot]) > 0 {
                        return Some(slot);
                    }
                    poll_empty(c2tb, slot);
                }
                None
            }
            Sched::Hbs(h) => {
                if rx == 1 {
                    if rx_held > 0 {
                        return Some(RX);
                    }
                    poll_empty(c2tb, RX);
                }
                h.choose(|slot| held(vms[slot]), |slot| poll_empty(c2tb, slot))
            }
        }
    }

    /// A batch of `cost` cycles from `slot` starts: the time it ends.
    pub fn start(&mut self, slot: usize, cost: u64, packets: usize, hz: u64) -> Time {
        self.serving = Some(slot);
        self.cost = cost;
        self.clock += cost;
        if slot == RX {
            self.rx_cycles += cost;
            self.rx_packets += packets as u64;
        } else {
            self.vm_cycles[slot] += cost;
            self.vm_packets[slot] += packets as u64;
            if let Some(c) = self.c2tb.as_mut() {
                c.mark_served(slot);
            }
        }
        if let Sched::RoundRobin { next } = &mut self.sched {
            let rx = self.rxq.is_some() as usize;
            let pos = if slot == RX { 0 } else { slot + rx };
            *next = (pos + 1) % (self.vms.len() + rx);
        }
        time_of(self.clock, hz)
    }

    /// The batch in progress ends: its cycles come out of its VM's bucket (after
    /// the batch, as measured, §IV-A-2). Its slot.
    pub fn finish(&mut self) -> Option<usize> {
        let slot = self.serving.take()?;
        if slot == RX {
            return Some(RX);
        }
        let left = self.c2tb.as_mut().is_none_or(|c| {
            c.charge(slot, self.cost);
            c.may_serve(slot)
        });
        if let Sched::Hbs(h) = &mut self.sched {
            h.served(slot, left);
        }
        Some(slot)
    }

    /// The C2TB manager's call: the buckets refill, and under HBS the VMs whose
    /// tokens are positive again leave the waiting queue. `held(v)`: the packets VM
    /// `v` has waiting.
    pub fn refill(&mut self, held: impl Fn(VmId) -> usize) {
        let Some(c) = self.c2tb.as_mut() else {
            return;
        };
        let vms = &self.vms;
        c.update(|slot| held(vms[slot]) > 0);
        if let Sched::Hbs(h) = &mut self.sched {
            h.refill(|slot| c.may_serve(slot));
        }
    }

    /// Every cycle of its clock is accounted for: forwarding + empty polls + idle.
    pub fn conserved(&self) -> bool {
        self.used() + self.poll + self.idle == self.clock
    }
}

/// The slot at position `pos` of the round robin's list (the receive queue first
/// if `rx` is 1).
#[inline]
fn slot_at(pos: usize, rx: usize) -> usize {
    if rx == 1 {
        pos.checked_sub(1).unwrap_or(RX)
    } else {
        pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_does_not_drift() {
        let hz = 2_200_000_000;
        assert_eq!(time_of(1, hz), 455);
        assert_eq!(cycle_at(455, hz), 1);
        for c in [0u64, 1, 7, 2_199_999_999, 2_200_000_000, 123_456_789_012] {
            assert_eq!(cycle_at(time_of(c, hz), hz), c);
        }
        assert_eq!(time_of(2_200_000_000, hz), PS_PER_SEC);
    }

    #[test]
    fn round_robin_skips_empty_rings_at_a_cost() {
        let mut p = Pmd {
            vms: vec![VmId(0), VmId(1), VmId(2)],
            vm_cycles: vec![0; 3],
            vm_packets: vec![0; 3],
            ..Default::default()
        };
        let held = |v: VmId| if v.0 == 2 { 5 } else { 0 };
        assert_eq!(p.choose(200, held), Some(2));
        assert_eq!((p.clock, p.poll), (400, 400));
        p.start(2, 1000, 5, 2_200_000_000);
        assert!(matches!(p.sched, Sched::RoundRobin { next: 0 }));
        assert_eq!(p.clock, 1400);
        assert_eq!(p.finish(), Some(2));
        assert_eq!(p.choose(200, |_| 0), None);
        assert_eq!(p.poll, 1000);
        p.wake(time_of(5000, 2_200_000_000), 2_200_000_000);
        assert_eq!(p.clock, 5000);
        assert!(p.conserved());
    }

    #[test]
    fn the_receive_queue_is_first_in_the_round_robin_and_has_no_bucket() {
        let c2tb = C2tb::new(
            super::super::Mode::Strict,
            super::super::Redistribution::default(),
            1000,
            50_000_000,
            2_200_000_000,
            &[(1, 1), (1, 1)],
        );
        let mut p = Pmd {
            vms: vec![VmId(0), VmId(1)],
            vm_cycles: vec![0; 2],
            vm_packets: vec![0; 2],
            rxq: Some(VecDeque::from(vec![PktId(0); 3])),
            c2tb: Some(c2tb),
            ..Default::default()
        };
        let hz = 2_200_000_000;
        // everything holds packets: the list is rxq, vm0, vm1, rxq, ...
        let mut order = Vec::new();
        for _ in 0..4 {
            let s = p.choose(200, |_| 3).unwrap();
            order.push(s);
            p.start(s, 1000, 3, hz);
            p.finish();
        }
        assert_eq!(order, vec![RX, 0, 1, RX]);
        // the receive queue's cycles are its own, counted as forwarding
        assert_eq!((p.rx_cycles, p.rx_packets), (2000, 6));
        assert_eq!(p.used(), 4000);
        // the VMs' buckets are spent; the receive queue is still polled
        assert_eq!(p.choose(200, |_| 3), Some(RX));
        p.start(RX, 100, 1, hz);
        p.finish();
        // an empty receive queue costs an empty poll; the VMs have no tokens
        p.rxq = Some(VecDeque::new());
        assert_eq!(p.choose(200, |_| 3), None);
        assert_eq!(p.poll, 200);
        assert!(p.conserved());
    }

    #[test]
    fn under_hbs_the_receive_queue_comes_before_every_class() {
        let mut p = Pmd {
            vms: vec![VmId(0), VmId(1)],
            vm_cycles: vec![0; 2],
            vm_packets: vec![0; 2],
            rxq: Some(VecDeque::from(vec![PktId(0)])),
            sched: Sched::Hbs(Hbs::new(&[1, 2], 8)),
            ..Default::default()
        };
        assert_eq!(p.choose(200, |_| 1), Some(RX));
        p.start(RX, 100, 1, 2_200_000_000);
        p.finish();
        p.rxq = Some(VecDeque::new());
        assert_eq!(p.choose(200, |_| 1), Some(0));
        assert_eq!(p.poll, 200);
    }
}
