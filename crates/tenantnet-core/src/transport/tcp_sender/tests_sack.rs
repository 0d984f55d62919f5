//! The SACK sender against a SACK receiver over a loop that loses chosen
//! transmissions: one round trip a round, every segment of a round delivered in
//! order unless lost, every ACK fed back.

use super::*;
use crate::transport::tcp_receiver::{DataSegment, ReceiverOut, TcpReceiver};

const RTT: Time = 100;

fn sack_cfg(recovery: Recovery) -> TcpConfig {
    TcpConfig {
        mss: 1000,
        init_cwnd: 10,
        min_rto: 1000,
        initial_rto: 1000,
        delayed_ack: false,
        recovery,
        ..Default::default()
    }
}

/// A sender and receiver joined by a loop that drops transmission `n` (counted
/// from 1) of the segment starting at `seq` for each `(seq, n)` in `losses`.
pub(super) struct Loop {
    c: TcpConfig,
    pub(super) s: TcpSender,
    r: TcpReceiver,
    losses: Vec<(u64, u32)>,
    sent: std::collections::HashMap<u64, u32>,
    now: Time,
    /// Segments the sender sent, in order: (seq, retransmission).
    pub(super) log: Vec<(u64, bool)>,
    /// Bytes sent on ACKs that left the sender in recovery.
    pub(super) sent_in_recovery: u64,
    /// RecoverFS: the flight when recovery began.
    pub(super) recover_fs: u64,
    /// Segments sent in each round.
    pub(super) per_round: Vec<usize>,
}

impl Loop {
    pub(super) fn new(recovery: Recovery, bytes: u64, losses: &[(u64, u32)]) -> Self {
        let c = sack_cfg(recovery);
        let r = if recovery.uses_sack() {
            TcpReceiver::with_sack()
        } else {
            TcpReceiver::new()
        };
        let s = TcpSender::new(&c, bytes);
        Loop {
            c,
            s,
            r,
            losses: losses.to_vec(),
            sent: Default::default(),
            now: 0,
            log: Vec::new(),
            sent_in_recovery: 0,
            recover_fs: 0,
            per_round: Vec::new(),
        }
    }

    /// Runs until every byte is acknowledged or `rounds` round trips pass; returns
    /// the round trips it took.
    pub(super) fn run(&mut self, rounds: u32) -> u32 {
        let mut out = SenderOut::default();
        // the timer's pending events, as the simulator's queue would hold them
        let mut timers: Vec<Time> = Vec::new();
        self.s.start(0, &self.c, &mut out);
        for round in 1..=rounds {
            self.now += RTT;
            // timer events due by now fire at their times; with nothing else in
            // the loop, the next one fires whenever it is due
            loop {
                timers.extend(out.rto_event.take());
                timers.sort_unstable();
                let due = timers.first().is_some_and(|&t| t <= self.now);
                let silent = out.segments.is_empty() && !timers.is_empty();
                if !due && !silent {
                    break;
                }
                let t = timers.remove(0);
                self.now = self.now.max(t);
                self.s.on_rto_event(t, &self.c, &mut out);
            }
            let segs = std::mem::take(&mut out.segments);
            assert!(
                !segs.is_empty() || self.s.done(),
                "a silent sender has its timer armed"
            );
            let mut acks = ReceiverOut::default();
            self.per_round.push(segs.len());
            for g in segs {
                self.log.push((g.seq, g.retx));
                let n = self.sent.entry(g.seq).or_default();
                *n += 1;
                if self.losses.contains(&(g.seq, *n)) {
                    continue;
                }
                let d = DataSegment {
                    seq: g.seq,
                    len: g.len,
                    ce: false,
                    ts: self.now - RTT,
                    push: false,
                };
                self.r.on_data(self.now, d, None, &mut acks);
            }
            for a in acks.acks.drain(..) {
                let sack = (a.sack.n > 0).then_some(&a.sack);
                let (before, was) = (out.segments.len(), self.s.in_recovery);
                let flight = self.s.snd_max - self.s.snd_una;
                self.s
                    .on_ack(self.now, a.ack, a.ece, a.ts, sack, &self.c, &mut out);
                if self.s.in_recovery {
                    let new = &out.segments[before..];
                    self.sent_in_recovery += new.iter().map(|g| g.len as u64).sum::<u64>();
                    if !was {
                        self.recover_fs = flight;
                    }
                }
            }
            if self.s.done() {
                return round;
            }
        }
        panic!(
            "not done in {rounds} round trips: snd_una {}",
            self.s.snd_una
        );
    }

    pub(super) fn retransmitted(&self) -> Vec<u64> {
        self.log.iter().filter(|l| l.1).map(|l| l.0).collect()
    }
}

#[test]
fn one_loss_is_repaired_by_one_retransmission_and_halves_the_window() {
    let mut l = Loop::new(Recovery::Sack, 60_000, &[(3000, 1)]);
    l.run(50);
    assert_eq!(l.retransmitted(), vec![3000]);
    assert_eq!((l.s.stats.fast_retransmits, l.s.stats.timeouts), (1, 0));
    // ssthresh = FlightSize/2 at the third duplicate ACK: three ACKs grew cwnd to
    // 13 segments from 3000, the first two duplicates each let one more segment
    // out as they took one from the pipe (Limited Transmit, RFC 3042): 15 in flight
    assert_eq!(l.s.ssthresh, 7_500);
}

#[test]
fn several_losses_in_one_window_are_repaired_in_one_recovery_without_a_timeout() {
    let losses = [(2000, 1), (5000, 1), (7000, 1), (8000, 1)];
    let mut sack = Loop::new(Recovery::Sack, 40_000, &losses);
    let rounds = sack.run(50);
    assert_eq!(sack.retransmitted(), vec![2000, 5000, 7000, 8000]);
    assert_eq!(
        (sack.s.stats.fast_retransmits, sack.s.stats.timeouts),
        (1, 0)
    );
    // NewReno repairs one hole a round trip
    let mut newreno = Loop::new(Recovery::NewReno, 40_000, &losses);
    let nr_rounds = newreno.run(50);
    assert!(
        nr_rounds > rounds,
        "newreno {nr_rounds} round trips, sack {rounds}"
    );
}

#[test]
fn a_lost_retransmission_waits_for_the_timeout_which_resends_only_holes() {
    // 2000 lost twice; 5000 lost once and repaired in recovery
    let losses = [(2000, 1), (2000, 2), (5000, 1)];
    let mut l = Loop::new(Recovery::Sack, 20_000, &losses);
    l.run(50);
    assert_eq!(l.s.stats.timeouts, 1);
    // recovery resends both holes, then the rescue retransmission of the last
    // segment (RFC 6675 §4, NextSeg rule 4); after the timeout only the hole is
    // resent, not the SACKed segments above it
    assert_eq!(l.retransmitted(), vec![2000, 5000, 19_000, 2000]);
}

#[test]
fn losses_of_the_tail_are_resent_without_retransmitting_sacked_data() {
    // the last two segments are lost: no duplicate ACKs follow them, so the
    // timeout repairs them, and only them
    let losses = [(8000, 1), (9000, 1)];
    let mut l = Loop::new(Recovery::Sack, 10_000, &losses);
    l.run(50);
    assert_eq!(l.s.stats.timeouts, 1);
    assert_eq!(l.retransmitted(), vec![8000, 9000]);
}

#[test]
fn without_sack_options_the_sack_sender_still_completes() {
    // a receiver that sends no SACK blocks: its duplicate ACKs report nothing new,
    // so the timeout finds the loss; the receiver held what followed the hole
    let mut l = Loop::new(Recovery::Sack, 10_000, &[(4000, 1)]);
    l.r = TcpReceiver::new();
    l.run(50);
    assert_eq!((l.s.stats.fast_retransmits, l.s.stats.timeouts), (0, 1));
    assert_eq!(l.retransmitted(), vec![4000]);
}

#[test]
fn prr_sends_ssthresh_worth_during_recovery_and_exits_at_ssthresh() {
    // RFC 6937 §3: over the recovery, PRR sends ssthresh/RecoverFS of what is
    // delivered; nearly all of RecoverFS is delivered before the recovery point
    // is acknowledged, the last ACK's share going out after the exit
    let mut l = Loop::new(Recovery::Sack, 200_000, &[(30_000, 1)]);
    l.run(60);
    let (ssthresh, mss) = (l.s.ssthresh, 1000);
    assert_eq!(l.s.stats.fast_retransmits, 1);
    assert_eq!(ssthresh, l.recover_fs / 2);
    assert!(
        l.sent_in_recovery <= ssthresh && l.sent_in_recovery + 2 * mss >= ssthresh,
        "sent {} in recovery, ssthresh {ssthresh}",
        l.sent_in_recovery
    );
}

/// The window after each of `acks` (ACK number, ECE) without losses.
fn windows(c: &TcpConfig, acks: &[(u64, bool)]) -> Vec<(u64, u64)> {
    let mut s = TcpSender::new(c, u64::MAX);
    let mut out = SenderOut::default();
    s.start(0, c, &mut out);
    let mut w = Vec::new();
    for (i, &(ack, ece)) in acks.iter().enumerate() {
        s.on_ack(10 + i as Time, ack, ece, 0, None, c, &mut out);
        w.push((s.cwnd, s.stats.ecn_cuts));
    }
    w
}

#[test]
fn dctcps_cuts_are_the_same_with_sack_rack_and_newreno() {
    let acks: Vec<(u64, bool)> = (1..60)
        .map(|i| (i * 1000, i % 7 == 0 || i % 11 == 0))
        .collect();
    for cut in [DctcpCut::OnEce, DctcpCut::EveryWindow] {
        let c = TcpConfig {
            cc: CongestionControl::Dctcp,
            dctcp_cut: cut,
            dctcp_g: 0.25,
            ..sack_cfg(Recovery::NewReno)
        };
        let w = windows(&c, &acks);
        assert!(w.last().unwrap().1 >= 3, "{cut:?}: the ACKs cut the window");
        for recovery in [Recovery::Sack, Recovery::Rack] {
            let sack = TcpConfig {
                recovery,
                ..c.clone()
            };
            assert_eq!(windows(&sack, &acks), w, "{cut:?} {recovery:?}");
        }
    }
}

#[test]
fn under_random_losses_sack_times_out_far_less_often_than_newreno_and_rack_less_still() {
    // 15 % of transmissions lost, retransmissions included (the same ones for
    // each recovery), in three loss patterns
    let mut timeouts = [0u64; 3];
    for seed in [12345u64, 999, 4242] {
        let mut x = seed;
        let mut losses = Vec::new();
        for seq in (0..500_000u64).step_by(1000) {
            for n in 1..4 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                if (x >> 33) % 100 < 15 {
                    losses.push((seq, n));
                }
            }
        }
        let mut each = [0u64; 3];
        for (i, recovery) in [Recovery::NewReno, Recovery::Sack, Recovery::Rack]
            .into_iter()
            .enumerate()
        {
            let mut l = Loop::new(recovery, 500_000, &losses);
            l.run(100_000);
            each[i] = l.s.stats.timeouts;
            timeouts[i] += each[i];
        }
        // RACK resends lost retransmissions without waiting for the timer
        assert!(
            each[2] < each[1],
            "{seed}: sack {}, rack {}",
            each[1],
            each[2]
        );
    }
    let [newreno, sack, _] = timeouts;
    // 88 against 37 (and RACK 11); the window growing after a timeout on SACKs
    // alone, before Linux's rule, made it 88 against 26
    assert!(
        newreno >= 30 && 2 * sack <= newreno,
        "newreno {newreno}, sack {sack}"
    );
}

#[test]
fn a_reduction_paced_by_prr_comes_down_to_the_same_window_as_the_cut() {
    // NewReno with ECN, SACK: 60 ACKs of a segment each, the 20th with ECE
    let acks: Vec<(u64, bool)> = (1..=60).map(|i| (i * 1000, i == 20)).collect();
    let base = TcpConfig {
        ecn: true,
        ..sack_cfg(Recovery::Sack)
    };
    let prr = TcpConfig {
        cwr_reduction: CwrReduction::Prr,
        ..base.clone()
    };
    let cut = windows(&base, &acks);
    let paced = windows(&prr, &acks);
    // before ECE: the same growth
    assert_eq!(cut[..19], paced[..19]);
    // at ECE the cut halves the window at once; PRR keeps what the pipe holds
    assert!(
        cut[19].0 < paced[19].0,
        "cut {:?}, paced {:?}",
        cut[19],
        paced[19]
    );
    assert_eq!((cut[19].1, paced[19].1), (1, 1), "one reduction each");
    // the reduction ends when the data sent before ECE is acknowledged, at
    // ssthresh: the window the cut gave at once
    let s = {
        let mut s = TcpSender::new(&prr, u64::MAX);
        let mut out = SenderOut::default();
        s.start(0, &prr, &mut out);
        for (i, &(ack, ece)) in acks.iter().enumerate() {
            s.on_ack(10 + i as Time, ack, ece, 0, None, &prr, &mut out);
        }
        s
    };
    assert!(!s.sack_state().cwr, "the reduction is over");
    assert_eq!(s.ssthresh, cut[19].0);
    assert!(paced.iter().skip(19).all(|w| w.0 >= cut[19].0));
}

#[test]
fn a_timeout_halves_the_window_not_the_data_the_receiver_holds() {
    // a SACK sender whose hole at snd_una outlived its retransmission ran 2 MB
    // ahead with a 40 KB window: the receiver holds the 2 MB, the network the
    // window. At the timer, ssthresh is half the window (Linux's tcp_enter_loss),
    // not half the 2 MB "flight" (RFC 5681's FlightSize); without SACK it is that
    for (recovery, want) in [(Recovery::Sack, 20_000), (Recovery::NewReno, 1_000_000)] {
        let c = sack_cfg(recovery);
        let mut s = TcpSender::new(&c, u64::MAX);
        (s.snd_una, s.snd_nxt, s.snd_max, s.cwnd) = (0, 2_000_000, 2_000_000, 40_000);
        let mut out = SenderOut::default();
        let at = s.rto_timer.arm(5_000).expect("an event");
        s.on_rto_event(at, &c, &mut out);
        assert_eq!((s.stats.timeouts, s.ssthresh), (1, want), "{recovery:?}");
    }
}

/// What the sender sends on an ACK of `cum` at `now` with SACK `blocks`.
fn ack_with(
    s: &mut TcpSender,
    c: &TcpConfig,
    now: Time,
    cum: u64,
    blocks: &[(u64, u64)],
) -> Vec<(u64, bool)> {
    let mut out = SenderOut {
        room: u64::MAX,
        ..Default::default()
    };
    let mut b = [(0, 0); crate::transport::sack::MAX_SACK_BLOCKS];
    b[..blocks.len()].copy_from_slice(blocks);
    let o = SackOption {
        n: blocks.len() as u8,
        dsack: false,
        blocks: b,
    };
    s.on_ack(now, cum, false, 0, Some(&o), c, &mut out);
    out.segments.iter().map(|g| (g.seq, g.retx)).collect()
}

/// Ten segments out, the first six lost, in recovery with the pipe below ssthresh
/// (6000), the first five holes resent: the steps of the next test.
fn in_recovery_below_ssthresh(c: &TcpConfig) -> TcpSender {
    let mut s = TcpSender::new(c, 100_000);
    let mut out = SenderOut {
        room: u64::MAX,
        ..Default::default()
    };
    s.start(0, c, &mut out);
    assert_eq!(out.segments.len(), 10);
    let mut ack = |now, cum, end| ack_with(&mut s, c, now, cum, &[(6000, end)]);
    // the first two duplicate ACKs send new data (Limited Transmit, RFC 3042)
    assert_eq!(ack(100, 0, 7000), vec![(10_000, false)]);
    assert_eq!(ack(101, 0, 8000), vec![(11_000, false)]);
    // the third shows the loss: ssthresh half the 12 segments out, the pipe 3
    // (9000-12000) below it, and the fast retransmission goes
    assert_eq!(ack(102, 0, 9000), vec![(0, true)]);
    // a duplicate ACK delivering one segment lets one go (Linux's conservative
    // bound; RFC 6937's slow-start bound on every ACK would send two)
    assert_eq!(ack(103, 0, 10_000), vec![(1000, true)]);
    // the ACK of the first retransmission advanced SND.UNA and marked nothing
    // newly lost: what it delivered and one segment more
    assert_eq!(ack(200, 1000, 10_000), vec![(2000, true), (3000, true)]);
    // the next duplicate: one again
    assert_eq!(ack(201, 1000, 11_000), vec![(4000, true)]);
    assert!(s.in_recovery);
    assert_eq!(s.ssthresh, 6000);
    s
}

#[test]
fn below_ssthresh_prr_adds_a_segment_only_on_an_ack_that_advanced() {
    // PRR's slow-start reduction bound (RFC 6937 §3.1) only on a safe ACK (RFC
    // 9937, Linux's tcp_cwnd_reduction): the steps are asserted in the helper
    let c = sack_cfg(Recovery::Sack);
    in_recovery_below_ssthresh(&c);
}

#[test]
fn an_ack_that_advanced_but_marked_a_loss_gets_no_slow_start_segment() {
    let c = sack_cfg(Recovery::Sack);
    let mut s = in_recovery_below_ssthresh(&c);
    let mut ack = |now, cum, blocks: &[(u64, u64)]| ack_with(&mut s, &c, now, cum, blocks);
    // safe ACKs (each advanced, nothing newly lost): the last hole, then new data
    let block = [(6000, 11_000)];
    assert_eq!(ack(202, 2000, &block), vec![(5000, true), (12_000, false)]);
    assert_eq!(ack(203, 3000, &block), vec![(13_000, false)]);
    let above = |end| [(12_000, end), (6000, 11_000)];
    assert_eq!(
        ack(204, 4000, &above(13_000)),
        vec![(14_000, false), (15_000, false)]
    );
    assert_eq!(
        ack(205, 5000, &above(14_000)),
        vec![(16_000, false), (17_000, false)]
    );
    // this one advances too, but its third segment SACKed above 11 000 marks that
    // segment lost: two segments for the two it delivered, not a third, although
    // ssthresh (6000) leaves room for it (pipe 3000, cwnd 5000)
    assert_eq!(
        ack(206, 6000, &above(15_000)),
        vec![(11_000, true), (18_000, false)]
    );
    assert_eq!((s.cwnd, s.ssthresh), (5000, 6000));
}

#[test]
fn after_a_timeout_only_an_ack_that_advances_grows_the_window() {
    // Linux raises cwnd in Loss only on FLAG_DATA_ACKED (tcp_may_raise_cwnd), by
    // the bytes the ACK delivered; ns-3 likewise in CA_LOSS. A sender whose hole
    // at SND.UNA outlives its retransmission must not grow on SACKs of new data
    for recovery in [Recovery::Sack, Recovery::Rack] {
        let c = sack_cfg(recovery);
        let mut s = TcpSender::new(&c, 100_000);
        let mut out = SenderOut {
            room: u64::MAX,
            ..Default::default()
        };
        s.start(0, &c, &mut out);
        let at = s.rto_timer.deadline().expect("the timer armed");
        s.on_rto_event(at, &c, &mut out);
        assert_eq!((s.stats.timeouts, s.cwnd), (1, 1000), "{recovery:?}");
        let at = at + 50;
        // segment 1, late, is SACKed: the hole at 0 is still there
        ack_with(&mut s, &c, at, 0, &[(1000, 2000)]);
        assert_eq!(s.cwnd, 1000, "{recovery:?}: a SACK alone grew the window");
        // the retransmission of 0 arrives: 2000 acknowledged, 1000 of it new
        ack_with(&mut s, &c, at + 50, 2000, &[]);
        assert_eq!(s.cwnd, 2000, "{recovery:?}");
        // then a SACK above a hole at 2000, and an ACK that fills it with 3 new
        ack_with(&mut s, &c, at + 100, 2000, &[(3000, 4000)]);
        assert_eq!(s.cwnd, 2000, "{recovery:?}");
        ack_with(&mut s, &c, at + 150, 6000, &[]);
        assert_eq!(s.cwnd, 5000, "{recovery:?}: 3000 newly delivered");
    }
}
