use super::*;
use crate::packet::{flags, Packet};
use crate::switch::buffer::shared_dt::DynamicThreshold;
use crate::switch::buffer::static_partition::StaticPartition;
use crate::switch::ecn::EcnScope;
use crate::switch::sched::SchedulerKind;

const RATE: u64 = 10_000_000_000;

fn fifo(buffer: u64, k: Option<u64>, at: EcnMarkPoint) -> Port {
    let cfg = PortConfig::fifo(
        buffer,
        EcnConfig {
            threshold: k,
            at,
            scope: EcnScope::Port,
        },
    );
    Port::new(NodeId(0), NodeId(1), RATE, 1_000_000, &cfg)
}

fn pkt(pool: &mut PacketPool, size: u32) -> PktId {
    pool.alloc(Packet {
        size,
        flags: flags::ECT,
        ..Default::default()
    })
}

fn offer(p: &mut Port, pool: &mut PacketPool, now: Time, id: PktId, q: usize) -> Admit {
    let mut ev = Vec::new();
    let a = p.enqueue(now, id, q, pool, None, &mut ev);
    for (_, v) in ev {
        pool.free(v);
    }
    a
}

/// Drains the port from its first wake-up; returns the queue each packet came from.
fn drain(
    p: &mut Port,
    pool: &mut PacketPool,
    mut t: Time,
    queue_of: impl Fn(PktId) -> usize,
) -> Vec<usize> {
    let mut order = Vec::new();
    loop {
        let (started, next) = p.tx_done(t, pool, None);
        if let Some((id, _)) = started {
            order.push(queue_of(id));
        }
        match next {
            Some(n) => t = n,
            None => return order,
        }
    }
}

#[test]
fn idle_port_transmits_at_once_and_queues_behind() {
    let mut pool = PacketPool::default();
    let mut p = fifo(100_000, None, EcnMarkPoint::Enqueue);
    let a = pkt(&mut pool, 1500);
    // 1500 B at 10 Gb/s = 1.2 us, plus 1 us propagation
    assert_eq!(
        offer(&mut p, &mut pool, 0, a, 0),
        Admit::Transmit {
            arrive: 2_200_000,
            wake: None
        }
    );
    assert_eq!(pool[a].at, NodeId(1));
    let b = pkt(&mut pool, 1500);
    assert_eq!(
        offer(&mut p, &mut pool, 100, b, 0),
        Admit::Queued(Some(1_200_000))
    );
    let c = pkt(&mut pool, 1500);
    assert_eq!(offer(&mut p, &mut pool, 200, c, 0), Admit::Queued(None));
    assert_eq!(p.occupancy(200), 4500);
    assert_eq!(
        p.tx_done(1_200_000, &mut pool, None),
        (Some((b, 3_400_000)), Some(2_400_000))
    );
    assert_eq!(
        p.tx_done(2_400_000, &mut pool, None),
        (Some((c, 4_600_000)), None)
    );
    assert_eq!(p.occupancy(3_000_000), 1500);
    assert_eq!(p.occupancy(3_600_000), 0);
    p.finish(4_000_000, None);
    let expect = 1500u128 * 100
        + 3000 * 100
        + 4500 * (1_200_000 - 200)
        + 3000 * 1_200_000
        + 1500 * 1_200_000;
    assert_eq!(p.stats().area, expect);
    assert_eq!(p.stats().tx_pkts, 3);
}

#[test]
fn serialization_is_exact_over_a_train() {
    // 3 Gb/s: 1 B = 2666.67 ps, so the carried remainder matters
    let cfg = PortConfig::fifo(1 << 30, EcnConfig::default());
    let mut p = Port::new(NodeId(0), NodeId(1), 3_000_000_000, 0, &cfg);
    let mut pool = PacketPool::default();
    let first = pkt(&mut pool, 1);
    assert!(matches!(
        offer(&mut p, &mut pool, 0, first, 0),
        Admit::Transmit { .. }
    ));
    let mut wake = None;
    for _ in 0..2999 {
        let id = pkt(&mut pool, 1);
        if let Admit::Queued(Some(w)) = offer(&mut p, &mut pool, 0, id, 0) {
            wake = Some(w);
        }
    }
    let mut t = wake.unwrap();
    let mut last_arrival = 0;
    loop {
        let (started, next) = p.tx_done(t, &mut pool, None);
        last_arrival = last_arrival.max(started.unwrap().1);
        match next {
            Some(n) => t = n,
            None => break,
        }
    }
    // 3000 bytes at 3 Gb/s take exactly 8 us
    assert_eq!(last_arrival, 8_000_000);
}

#[test]
fn tail_drop_at_the_byte_limit() {
    let mut pool = PacketPool::default();
    let mut p = fifo(3000, None, EcnMarkPoint::Enqueue);
    let ids: Vec<_> = (0..3).map(|_| pkt(&mut pool, 1500)).collect();
    assert!(matches!(
        offer(&mut p, &mut pool, 0, ids[0], 0),
        Admit::Transmit { .. }
    ));
    assert!(matches!(
        offer(&mut p, &mut pool, 0, ids[1], 0),
        Admit::Queued(_)
    ));
    assert_eq!(offer(&mut p, &mut pool, 0, ids[2], 0), Admit::Dropped);
    assert_eq!(p.stats().drops, 1);
}

#[test]
fn marks_on_enqueue_above_k() {
    let mut pool = PacketPool::default();
    let mut p = fifo(100_000, Some(3000), EcnMarkPoint::Enqueue);
    let ids: Vec<_> = (0..4).map(|_| pkt(&mut pool, 1500)).collect();
    for &id in &ids {
        offer(&mut p, &mut pool, 0, id, 0);
    }
    // occupancies found: 0, 1500, 3000, 4500 -> only the last exceeds K
    let marked: Vec<bool> = ids.iter().map(|&i| pool[i].has(flags::CE)).collect();
    assert_eq!(marked, vec![false, false, false, true]);
    assert_eq!(p.stats().marks, 1);
}

#[test]
fn marks_on_dequeue_with_itself_counted() {
    let mut pool = PacketPool::default();
    let mut p = fifo(100_000, Some(3000), EcnMarkPoint::Dequeue);
    let ids: Vec<_> = (0..4).map(|_| pkt(&mut pool, 1500)).collect();
    for &id in &ids {
        offer(&mut p, &mut pool, 0, id, 0);
    }
    // at each start the port holds: 1500 (first, alone), then 4500, 3000, 1500
    drain(&mut p, &mut pool, 1_200_000, |_| 0);
    let marked: Vec<bool> = ids.iter().map(|&i| pool[i].has(flags::CE)).collect();
    assert_eq!(marked, vec![false, true, false, false]);
}

#[test]
fn marks_at_the_end_with_what_arrived_meanwhile_counted() {
    let mut pool = PacketPool::default();
    let mut p = fifo(100_000, Some(3000), EcnMarkPoint::End);
    let ids: Vec<_> = (0..4).map(|_| pkt(&mut pool, 1500)).collect();
    offer(&mut p, &mut pool, 0, ids[0], 0);
    // the other three arrive while the first is serialized (it ends at 1.2 us)
    for &id in &ids[1..] {
        offer(&mut p, &mut pool, 100, id, 0);
    }
    // at each end the port holds: 6000 (itself and the three), 4500, 3000, and the
    // last alone (no wake at its end: it was judged alone when it started)
    drain(&mut p, &mut pool, 1_200_000, |_| 0);
    let marked: Vec<bool> = ids.iter().map(|&i| pool[i].has(flags::CE)).collect();
    assert_eq!(marked, vec![true, true, false, false]);
    assert_eq!(p.stats().marks, 2);
    // on dequeue the first, alone when it started, would not have been marked
    let mut q = fifo(100_000, Some(3000), EcnMarkPoint::Dequeue);
    let first = pkt(&mut pool, 1500);
    offer(&mut q, &mut pool, 0, first, 0);
    for _ in 0..3 {
        let id = pkt(&mut pool, 1500);
        offer(&mut q, &mut pool, 100, id, 0);
    }
    drain(&mut q, &mut pool, 1_200_000, |_| 0);
    assert!(!pool[first].has(flags::CE));
}

fn multi(kind: SchedulerKind, weights: &[u32], strict: usize, policy: BufferPolicy) -> Port {
    // a buffer that holds the whole backlog: every queue stays backlogged
    let cfg = PortConfig {
        buffer: 10_000_000_000,
        ecn: EcnConfig::default(),
        queues: QueueConfig {
            weights: weights.to_vec(),
            scheduler: kind,
            quantum: 1500,
            strict,
        },
        policy,
    };
    Port::new(NodeId(0), NodeId(1), RATE, 0, &cfg)
}

/// Backlogs every queue with `per_queue` packets of `size(q)` bytes and returns the
/// bytes each queue sent in the first `budget` packets.
fn shares(
    p: &mut Port,
    queues: usize,
    per_queue: usize,
    size: impl Fn(usize) -> u32,
    budget: usize,
) -> Vec<u64> {
    let mut pool = PacketPool::default();
    let mut queue_of = std::collections::HashMap::new();
    // the first packet goes on the wire at once; backlog everything else behind it
    let first = pkt(&mut pool, 100);
    queue_of.insert(first, usize::MAX);
    offer(p, &mut pool, 0, first, 0);
    for _ in 0..per_queue {
        for q in 0..queues {
            let id = pkt(&mut pool, size(q));
            queue_of.insert(id, q);
            offer(p, &mut pool, 0, id, q);
        }
    }
    let t = 100 * 8 * 100; // 100 B at 10 Gb/s
    let order = drain(p, &mut pool, t, |id| queue_of[&id]);
    let mut bytes = vec![0u64; queues];
    for &q in order.iter().take(budget) {
        bytes[q] += size(q) as u64;
    }
    bytes
}

fn assert_shares(bytes: &[u64], weights: &[u32], tol: f64) {
    let total: u64 = bytes.iter().sum();
    let wsum: u32 = weights.iter().sum();
    for (b, w) in bytes.iter().zip(weights) {
        let got = *b as f64 / total as f64;
        let want = *w as f64 / wsum as f64;
        assert!(
            (got - want).abs() <= tol * want,
            "{bytes:?} vs weights {weights:?}"
        );
    }
}

#[test]
fn wrr_dwrr_wfq_give_weighted_shares() {
    let w = [1, 2, 3, 4];
    let mut p = multi(SchedulerKind::Wrr, &w, 0, BufferPolicy::default());
    assert_shares(&shares(&mut p, 4, 2000, |_| 1500, 4000), &w, 0.01);
    // DWRR and WFQ with unequal packet sizes: byte shares still follow weights
    let sizes = |q: usize| [1500u32, 700, 64, 9000][q];
    let mut p = multi(SchedulerKind::Dwrr, &w, 0, BufferPolicy::default());
    let b = shares(&mut p, 4, 60_000, sizes, 36_000);
    assert_shares(&b, &w, 0.01);
    let mut p = multi(SchedulerKind::Wfq, &w, 0, BufferPolicy::default());
    let b = shares(&mut p, 4, 60_000, sizes, 36_000);
    assert_shares(&b, &w, 0.01);
}

#[test]
fn strict_priority_starves_lower_queues() {
    let mut p = multi(
        SchedulerKind::Strict,
        &[1, 1, 1],
        0,
        BufferPolicy::default(),
    );
    let b = shares(&mut p, 3, 100, |_| 1500, 100);
    assert_eq!(b, vec![150_000, 0, 0]);
    let mut p = multi(
        SchedulerKind::SpDwrr,
        &[1, 1, 3],
        1,
        BufferPolicy::default(),
    );
    let b = shares(&mut p, 3, 400, |_| 1500, 700);
    // queue 0 first (400 packets), then DWRR 1:3 between queues 1 and 2
    assert_eq!(b[0], 400 * 1500);
    assert_shares(&b[1..], &[1, 3], 0.02);
}

#[test]
fn weights_can_change_mid_run() {
    let mut p = multi(SchedulerKind::Dwrr, &[1, 1], 0, BufferPolicy::default());
    p.set_weights(&[3, 1], 1500).unwrap();
    assert_shares(&shares(&mut p, 2, 2000, |_| 1500, 2000), &[3, 1], 0.01);
    assert!(p.set_weights(&[1, 0], 1500).is_err());
    assert!(p.set_weights(&[1], 1500).is_err());
}

#[test]
fn static_partition_caps_each_queue_at_its_share() {
    let cfg = PortConfig {
        buffer: 6000,
        ecn: EcnConfig::default(),
        queues: QueueConfig {
            weights: vec![1, 2],
            scheduler: SchedulerKind::Dwrr,
            quantum: 1500,
            strict: 0,
        },
        policy: BufferPolicy::StaticPartition(StaticPartition),
    };
    let mut p = Port::new(NodeId(0), NodeId(1), RATE, 0, &cfg);
    let mut pool = PacketPool::default();
    // tau = 2000 / 4000: queue 0 takes one 1500-byte packet, not two
    let a = pkt(&mut pool, 1500);
    let b = pkt(&mut pool, 1500);
    assert!(matches!(
        offer(&mut p, &mut pool, 0, a, 0),
        Admit::Transmit { .. }
    ));
    assert_eq!(offer(&mut p, &mut pool, 0, b, 0), Admit::Dropped);
    let c = pkt(&mut pool, 1500);
    let d = pkt(&mut pool, 1500);
    assert!(matches!(
        offer(&mut p, &mut pool, 0, c, 1),
        Admit::Queued(_)
    ));
    assert!(matches!(
        offer(&mut p, &mut pool, 0, d, 1),
        Admit::Queued(_)
    ));
}

/// An eager FIFO port (dynamic thresholds at `alpha`, no buffer of its own) on a
/// shared pool of `size` bytes.
fn eager_on_pool(alpha: f64, size: u64) -> (Port, SharedPool) {
    let cfg = PortConfig {
        buffer: 0,
        ecn: EcnConfig::default(),
        queues: QueueConfig::fifo(),
        policy: BufferPolicy::DynamicThreshold(DynamicThreshold { alpha }),
    };
    let mut p = Port::new(NodeId(0), NodeId(1), RATE, 0, &cfg);
    p.core.pool = Some(0);
    (
        p,
        SharedPool {
            size,
            used: 0,
            alpha,
        },
    )
}

#[test]
fn eager_port_wakes_at_every_departure_and_returns_bytes_to_the_pool() {
    let (mut p, mut sp) = eager_on_pool(1.0, 10_000);
    let mut pool = PacketPool::default();
    let a = pkt(&mut pool, 1500);
    let mut ev = Vec::new();
    let r = p.enqueue(0, a, 0, &mut pool, Some(&mut sp), &mut ev);
    assert_eq!(
        r,
        Admit::Transmit {
            arrive: 1_200_000,
            wake: Some(1_200_000)
        }
    );
    assert_eq!(sp.used, 1500);
    assert_eq!(p.tx_done(1_200_000, &mut pool, Some(&mut sp)), (None, None));
    assert_eq!(sp.used, 0);
}

#[test]
fn ports_stay_small() {
    // ports are touched in random order: keep them within four cache lines
    assert!(
        std::mem::size_of::<Port>() <= 320,
        "{}",
        std::mem::size_of::<Port>()
    );
}

#[test]
fn a_stale_eager_wake_changes_nothing() {
    let (mut p, mut sp) = eager_on_pool(8.0, 100_000);
    let mut pool = PacketPool::default();
    let mut ev = Vec::new();
    let ids: Vec<_> = (0..3).map(|_| pkt(&mut pool, 1500)).collect();
    // a goes out at 0 and asks for a wake at 1.2 us
    assert_eq!(
        p.enqueue(0, ids[0], 0, &mut pool, Some(&mut sp), &mut ev),
        Admit::Transmit {
            arrive: 1_200_000,
            wake: Some(1_200_000)
        }
    );
    // b arrives at exactly 1.2 us, before that wake fires: it starts at once
    assert_eq!(
        p.enqueue(1_200_000, ids[1], 0, &mut pool, Some(&mut sp), &mut ev),
        Admit::Transmit {
            arrive: 2_400_000,
            wake: Some(2_400_000)
        }
    );
    // the first wake is now stale
    assert_eq!(p.tx_done(1_200_000, &mut pool, Some(&mut sp)), (None, None));
    // c queues behind b; the pending wake at 2.4 us still serves it
    assert_eq!(
        p.enqueue(1_300_000, ids[2], 0, &mut pool, Some(&mut sp), &mut ev),
        Admit::Queued(None)
    );
    assert_eq!(
        p.tx_done(2_400_000, &mut pool, Some(&mut sp)),
        (Some((ids[2], 3_600_000)), Some(3_600_000))
    );
    assert_eq!(p.tx_done(3_600_000, &mut pool, Some(&mut sp)), (None, None));
    assert_eq!(sp.used, 0, "every byte went back to the pool");
}

#[test]
fn dwrr_does_not_give_a_refilled_queue_a_second_turn() {
    // two queues, one packet each per turn: after queue 0 sends its only packet and
    // gets another, queue 1 must go next
    let mut p = multi(SchedulerKind::Dwrr, &[1, 1], 0, BufferPolicy::default());
    let mut pool = PacketPool::default();
    let mut queue_of = std::collections::HashMap::new();
    let mut send = |p: &mut Port, pool: &mut PacketPool, t: Time, q: usize| {
        let id = pkt(pool, 1500);
        queue_of.insert(id, q);
        offer(p, pool, t, id, q);
        id
    };
    send(&mut p, &mut pool, 0, 0); // on the wire until 1.2 us
    send(&mut p, &mut pool, 0, 0); // waits in queue 0
    for _ in 0..3 {
        send(&mut p, &mut pool, 0, 1); // queue 1 backlogged
    }
    let (a, _) = p.tx_done(1_200_000, &mut pool, None);
    let a = a.unwrap().0;
    // queue 0 is empty again; refill it before the next decision
    send(&mut p, &mut pool, 1_300_000, 0);
    let (b, _) = p.tx_done(2_400_000, &mut pool, None);
    let b = b.unwrap().0;
    assert_eq!((queue_of[&a], queue_of[&b]), (0, 1));
}
