//! One VM's egress stage in its host's virtual switch: a queue in front of the
//! NIC and the token-bucket microscheduler that paces it (MBFQ §4, Fig. 1(c)).
//!
//! A packet the bucket allows goes straight on to the NIC; otherwise it waits here
//! in arrival order. The queue pushes back instead of dropping: a TCP sender is told
//! how much room is left before it sends ([`Vm::room`]) and is woken when a
//! departure makes room, the way a Linux socket is throttled by its qdisc (TCP
//! small queues). Only senders that cannot be told to wait (UDP) lose packets at
//! a full queue, and those drops are counted.

use std::collections::VecDeque;

use super::mbfq::VmState;
use super::token_bucket::TokenBucket;
use crate::engine::Time;
use crate::net::{FlowId, HostId, PktId};

/// What happened to a packet a VM offered its vswitch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// It goes on to the NIC now.
    Pass,
    /// It waits in the VM's queue.
    Queued,
    /// The queue was full (UDP only).
    Dropped,
}

/// One VM: its identity, guarantee, egress queue and microscheduler.
#[derive(Clone, Debug)]
pub struct Vm {
    /// Name, unique in the scenario.
    pub name: String,
    /// Tenant index.
    pub tenant: u32,
    /// The host it runs on.
    pub host: HostId,
    /// MG, the minimum bandwidth guarantee (the hose model's per-VM B), bit/s.
    pub guarantee_bps: u64,
    /// Weight among the VMs of its host; `None`: MG / C (MBFQ Table 1).
    pub weight: Option<f64>,
    /// The macroscheduler's memory of this VM.
    pub ctl: VmState,
    /// Latest target rate TR, for the record.
    pub target_bps: Option<f64>,
    /// Wire bytes the VM has sent past its microscheduler.
    pub tx_bytes: u64,
    /// `tx_bytes` at the last macroscheduler run.
    pub tx_at_tick: u64,
    /// Packets dropped at a full queue.
    pub drops: u64,
    /// Set while a wake-up event for this VM is pending at that time.
    pub wake_at: Option<Time>,
    queue: VecDeque<(PktId, u32)>,
    bytes: u64,
    limit: u64,
    bucket: TokenBucket,
    shaping: bool,
    blocked: VecDeque<FlowId>,
}

impl Vm {
    /// A VM with an empty queue of `limit` bytes and its microscheduler off.
    pub fn new(
        name: String,
        tenant: u32,
        host: HostId,
        guarantee_bps: u64,
        limit: u64,
        burst: u64,
    ) -> Self {
        Vm {
            name,
            tenant,
            host,
            guarantee_bps,
            weight: None,
            ctl: VmState::default(),
            target_bps: None,
            tx_bytes: 0,
            tx_at_tick: 0,
            drops: 0,
            wake_at: None,
            queue: VecDeque::new(),
            bytes: 0,
            limit,
            bucket: TokenBucket::new(guarantee_bps, burst),
            shaping: false,
            blocked: VecDeque::new(),
        }
    }

    /// The rate the microscheduler enforces, if it is on.
    pub fn shaping_rate(&self) -> Option<u64> {
        self.shaping.then(|| self.bucket.rate_bps())
    }

    /// Bytes a TCP sender may still hand over before it must wait.
    #[inline]
    pub fn room(&self) -> u64 {
        if self.shaping {
            self.limit.saturating_sub(self.bytes)
        } else {
            u64::MAX
        }
    }

    /// Packets waiting.
    pub fn held(&self) -> u64 {
        self.queue.len() as u64
    }

    /// Offers a packet of `size` wire bytes at `now`. `may_drop` is false for
    /// packets of senders that respect [`room`](Self::room) (TCP), which are always
    /// taken.
    #[inline]
    pub fn offer(&mut self, now: Time, id: PktId, size: u32, may_drop: bool) -> Offer {
        if !self.shaping {
            self.tx_bytes += size as u64;
            return Offer::Pass;
        }
        if self.queue.is_empty() && self.bucket.conform_at() <= now {
            self.bucket.take(now, size as u64);
            self.tx_bytes += size as u64;
            return Offer::Pass;
        }
        if may_drop && self.bytes + size as u64 > self.limit {
            self.drops += 1;
            return Offer::Dropped;
        }
        self.queue.push_back((id, size));
        self.bytes += size as u64;
        Offer::Queued
    }

    /// Takes the head packet if it may leave at `now`.
    #[inline]
    pub fn pop_ready(&mut self, now: Time) -> Option<PktId> {
        let &(id, size) = self.queue.front()?;
        if self.shaping {
            if self.bucket.conform_at() > now {
                return None;
            }
            self.bucket.take(now, size as u64);
        }
        self.queue.pop_front();
        self.bytes -= size as u64;
        self.tx_bytes += size as u64;
        Some(id)
    }

    /// When the head packet may leave, if one waits.
    pub fn next_departure(&self) -> Option<Time> {
        (!self.queue.is_empty()).then(|| {
            if self.shaping {
                self.bucket.conform_at()
            } else {
                0
            }
        })
    }

    /// Switches the microscheduler on at `rate_bps` (keeping the bucket's state if
    /// it was on) or, with `None`, off.
    pub fn set_shaping(&mut self, now: Time, rate_bps: Option<u64>) {
        match rate_bps {
            Some(r) => {
                if !self.shaping {
                    self.bucket.refill(now);
                }
                self.bucket.set_rate(now, r);
                self.shaping = true;
            }
            None => self.shaping = false,
        }
    }

    /// Notes that flow `f` stopped for lack of room.
    pub fn block(&mut self, f: FlowId) {
        self.blocked.push_back(f);
    }

    /// The flow that has waited longest for room.
    pub fn first_blocked(&self) -> Option<FlowId> {
        self.blocked.front().copied()
    }

    /// Removes [`first_blocked`](Self::first_blocked) from the waiting list.
    pub fn pop_blocked(&mut self) -> Option<FlowId> {
        self.blocked.pop_front()
    }

    /// Flows waiting for room.
    pub fn blocked(&self) -> usize {
        self.blocked.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000_000;

    #[test]
    fn an_unshaped_vm_passes_everything_and_has_unlimited_room() {
        let mut vm = Vm::new("v".into(), 0, HostId(0), 1_000_000, 3000, 0);
        assert_eq!(vm.room(), u64::MAX);
        for i in 0..100 {
            assert_eq!(vm.offer(0, PktId(i), 1500, true), Offer::Pass);
        }
        assert_eq!(vm.tx_bytes, 150_000);
    }

    #[test]
    fn a_shaped_vm_paces_queues_and_pushes_back() {
        // 12 Mb/s: one 1500-byte packet per ms; no burst beyond one packet
        let mut vm = Vm::new("v".into(), 0, HostId(0), 12_000_000, 4500, 0);
        vm.set_shaping(0, Some(12_000_000));
        assert_eq!(vm.offer(0, PktId(0), 1500, false), Offer::Pass);
        assert_eq!(vm.offer(0, PktId(1), 1500, false), Offer::Queued);
        assert_eq!(vm.offer(0, PktId(2), 1500, false), Offer::Queued);
        assert_eq!(vm.room(), 1500);
        assert_eq!(vm.next_departure(), Some(MS));
        assert_eq!(vm.pop_ready(MS - 1), None);
        assert_eq!(vm.pop_ready(MS), Some(PktId(1)));
        assert_eq!(vm.next_departure(), Some(2 * MS));
        // TCP packets are always taken (the sender respects room); UDP is dropped
        assert_eq!(vm.offer(MS, PktId(3), 1500, false), Offer::Queued);
        assert_eq!(vm.offer(MS, PktId(4), 1500, false), Offer::Queued);
        assert_eq!(vm.room(), 0);
        assert_eq!(vm.offer(MS, PktId(5), 1500, true), Offer::Dropped);
        assert_eq!((vm.drops, vm.held()), (1, 3));
        // switching the microscheduler off releases everything at once
        vm.set_shaping(MS, None);
        let out: Vec<_> = std::iter::from_fn(|| vm.pop_ready(MS)).collect();
        assert_eq!(out, vec![PktId(2), PktId(3), PktId(4)]);
        assert_eq!(vm.tx_bytes, 5 * 1500);
    }

    #[test]
    fn blocked_flows_wake_in_order() {
        let mut vm = Vm::new("v".into(), 0, HostId(0), 1, 1500, 0);
        vm.block(FlowId(4));
        vm.block(FlowId(2));
        assert_eq!(vm.first_blocked(), Some(FlowId(4)));
        assert_eq!(vm.pop_blocked(), Some(FlowId(4)));
        assert_eq!((vm.blocked(), vm.pop_blocked()), (1, Some(FlowId(2))));
    }
}
