//! The `reno_sack` sender (Linux's recovery without SACK) against Linux's rules,
//! over the SACK tests' loop (its receiver sends no SACK blocks for it).

use super::tests_sack::Loop;
use super::*;

/// The segments sent on each of three duplicate ACKs of 0 after an initial window
/// of ten 1000-byte segments.
fn sent_on_dupacks(recovery: Recovery) -> Vec<usize> {
    let c = TcpConfig {
        mss: 1000,
        recovery,
        ..Default::default()
    };
    let mut s = TcpSender::new(&c, 100_000);
    let mut out = SenderOut::default();
    s.start(0, &c, &mut out);
    assert_eq!(out.segments.len(), 10);
    (1..=3)
        .map(|i| {
            out.segments.clear();
            s.on_ack(i, 0, false, 0, None, &c, &mut out);
            out.segments.len()
        })
        .collect()
}

#[test]
fn duplicate_acks_take_segments_out_of_the_pipe() {
    // tcp_add_reno_sack: each duplicate ACK counts a segment the receiver holds, so
    // the first two let a new segment out (what RFC 3042's Limited Transmit
    // prescribes); the third starts recovery, where PRR lets the head go again.
    // RFC 6582's NewReno sends nothing until the third.
    assert_eq!(sent_on_dupacks(Recovery::RenoSack), vec![1, 1, 1]);
    assert_eq!(sent_on_dupacks(Recovery::NewReno), vec![0, 0, 1]);
}

#[test]
fn one_loss_is_one_fast_retransmission_and_prr_sends_ssthresh_worth() {
    let mut l = Loop::new(Recovery::RenoSack, 200_000, &[(30_000, 1)]);
    l.run(60);
    assert_eq!(l.retransmitted(), vec![30_000]);
    assert_eq!((l.s.stats.fast_retransmits, l.s.stats.timeouts), (1, 0));
    // PRR (tcp_cwnd_reduction): over the recovery ssthresh/prior_cwnd of what was
    // delivered goes out; prior_cwnd is the window, here the flight
    let (ssthresh, mss) = (l.s.ssthresh, 1000);
    assert_eq!(ssthresh, l.recover_fs / 2);
    assert!(
        l.sent_in_recovery <= ssthresh + mss && l.sent_in_recovery + 2 * mss >= ssthresh,
        "sent {} in recovery, ssthresh {ssthresh}",
        l.sent_in_recovery
    );
}

#[test]
fn each_partial_ack_resends_the_next_hole_without_a_timeout() {
    let losses = [(2000, 1), (5000, 1), (7000, 1), (8000, 1)];
    let mut reno = Loop::new(Recovery::RenoSack, 40_000, &losses);
    let rounds = reno.run(50);
    assert_eq!(reno.retransmitted(), vec![2000, 5000, 7000, 8000]);
    assert_eq!(
        (reno.s.stats.fast_retransmits, reno.s.stats.timeouts),
        (1, 0)
    );
    // one hole a round trip: each retransmission follows the partial ACK of the
    // last, with new data between; SACK sends all four at once
    let gaps: Vec<usize> = (reno.log.iter().enumerate())
        .filter(|(_, l)| l.1)
        .map(|(i, _)| i)
        .collect::<Vec<_>>()
        .windows(2)
        .map(|w| w[1] - w[0])
        .collect();
    assert!(gaps.iter().all(|&g| g > 1), "{gaps:?}");
    let mut newreno = Loop::new(Recovery::NewReno, 40_000, &losses);
    assert!(rounds <= newreno.run(50));
}

#[test]
fn a_lost_retransmission_is_found_by_the_timeout_and_the_count_restarts() {
    let losses = [(4000, 1), (4000, 2)];
    let mut l = Loop::new(Recovery::RenoSack, 20_000, &losses);
    l.run(50);
    assert_eq!((l.s.stats.fast_retransmits, l.s.stats.timeouts), (1, 1));
    let first = l.retransmitted();
    assert_eq!(&first[..2], &[4000, 4000]);
    assert!(!l.s.in_recovery);
}

#[test]
fn after_a_timeout_go_back_ns_duplicates_start_no_recovery() {
    // a lost retransmission holds recovery open while duplicate ACKs clock new
    // data out, until the timeout; the duplicate ACKs of that data arrive after
    // it. Linux's Loss state (tcp_process_loss) neither counts them nor starts
    // recovery on them: the sender slow-starts from one segment. Counted, they
    // started a recovery whose pipe was everything sent before the timeout, PRR
    // opened the window to it, and go-back-N resent all of it at once (296
    // segments in one round trip, 5 000 to 83 000, which the receiver held).
    let losses = [(4000, 1), (4000, 2), (90_000, 1)];
    let mut l = Loop::new(Recovery::RenoSack, 300_000, &losses);
    l.run(100);
    // the timeout resends the twice-lost segment and nothing the receiver holds;
    // 90 000, sent after it, is a loss of its own, repaired by a fast retransmit
    assert_eq!(l.retransmitted(), vec![4000, 4000, 90_000]);
    assert_eq!((l.s.stats.fast_retransmits, l.s.stats.timeouts), (2, 1));
    // the round of the timeout's retransmission (the second of 4 000) and the
    // rounds after it: slow start and then congestion avoidance, never a burst
    let timeout_at = (l.log.iter().enumerate().filter(|(_, g)| g.1))
        .nth(1)
        .unwrap()
        .0;
    let mut sent = 0;
    let timeout_round = (l.per_round.iter())
        .position(|&k| {
            sent += k;
            sent > timeout_at
        })
        .unwrap();
    let before = *l.per_round[..timeout_round].iter().max().unwrap();
    let after = *l.per_round[timeout_round + 1..].iter().max().unwrap();
    assert!(
        after <= 2 * before,
        "a round after the timeout sent {after}, one before it at most {before}"
    );
}
