//! HyStart's two exits and its guards, against `tcp_cubic.c`'s rules.

use super::*;

const US: Time = 1_000_000;

/// An ACK at `now` (µs) with RTT `rtt` (µs) acknowledging up to `una`, the window
/// `cwnd` segments of 1460 bytes, 200 segments sent, the smoothed RTT `rtt`.
fn at(now: u64, rtt: u64, una: u64, cwnd: u64) -> AckSample {
    AckSample {
        now: now * US,
        rtt: rtt * US,
        snd_una: una,
        snd_nxt: 200 * 1460,
        cwnd,
        mss: 1460,
        srtt: rtt * US,
    }
}

#[test]
fn the_ack_delay_is_four_gso_packets_at_twice_the_window_a_round_trip() {
    // 4 x 64 KB at 2 x 16 x 1460 B / 20 us = 112.2 us; never more than 1 ms
    let d = ack_delay(&at(0, 20, 0, 16));
    assert_eq!(d, 4 * 65_536 * 20 * US / (2 * 16 * 1460));
    assert_eq!(ack_delay(&at(0, 5_000, 0, 16)), ACK_DELAY_MAX);
}

#[test]
fn an_ack_train_longer_than_half_the_least_rtt_ends_slow_start() {
    // delay_min 100 us, window 64: the threshold is (100 + ack delay) / 2 us
    let mut h = HyStart::default();
    let threshold = (100 * US + ack_delay(&at(0, 100, 0, 64))) / 2;
    h.new_round(0, 100 * 1460);
    let mut t = 0;
    let mut found = None;
    while found.is_none() {
        t += 1; // an ACK a microsecond: one train
        found = h.on_ack(&at(t, 100, 1460, 64), 100 * US, true);
    }
    assert_eq!(found, Some(Exit::AckTrain));
    assert_eq!(
        t * US,
        threshold + US - threshold % US,
        "the first ACK past it"
    );
}

#[test]
fn acks_more_than_2_ms_apart_are_no_train() {
    let mut h = HyStart::default();
    h.new_round(0, 100 * 1460);
    for i in 1..20 {
        let s = at(i * 2_001, 10_000, 1460, 64);
        assert_eq!(h.on_ack(&s, 10_000 * US, true), None, "ACK {i}");
    }
}

#[test]
fn below_16_segments_hystart_does_not_look() {
    let mut h = HyStart::default();
    h.new_round(0, 100 * 1460);
    for t in 1..200 {
        assert_eq!(h.on_ack(&at(t, 100, 1460, 15), 10 * US, true), None);
    }
}

#[test]
fn a_round_whose_least_rtt_rose_4_ms_ends_slow_start_after_8_samples() {
    // delay_min 1 ms: the threshold is clamp(1/8 ms, 4 ms, 16 ms) = 4 ms above it;
    // ACKs 3 ms apart so that no train forms
    for (rtt, want) in [(5_000, None), (5_001, Some(Exit::Delay))] {
        let mut h = HyStart::default();
        h.new_round(0, 100 * 1460);
        let mut found = None;
        for i in 1..=9 {
            found = found.or(h.on_ack(&at(i * 3_000, rtt, 1460, 64), 1_000 * US, true));
            if i <= 8 {
                assert_eq!(found, None, "sample {i} of rtt {rtt}");
            }
        }
        assert_eq!(found, want, "rtt {rtt} us");
    }
}

#[test]
fn the_delay_threshold_is_an_eighth_of_the_least_rtt_within_4_and_16_ms() {
    for (delay_min_ms, rise_ms) in [(64, 8), (400, 16), (8, 4)] {
        for (extra, want) in [(0, None), (1, Some(Exit::Delay))] {
            let mut h = HyStart::default();
            h.new_round(0, 100 * 1460);
            let rtt = (delay_min_ms + rise_ms) * 1000 + extra;
            let mut found = None;
            for i in 1..=9 {
                let s = at(i * 3_000, rtt, 1460, 64);
                found = found.or(h.on_ack(&s, delay_min_ms * 1000 * US, true));
            }
            assert_eq!(found, want, "delay_min {delay_min_ms} ms, rtt {rtt} us");
        }
    }
}

#[test]
fn a_new_round_restarts_the_train_and_the_samples() {
    let mut h = HyStart::default();
    h.new_round(0, 10 * 1460);
    for i in 1..=8 {
        h.on_ack(&at(i * 3_000, 9_000, 1460, 64), 1_000 * US, true);
    }
    // the ACK past the round's last segment starts a new round: no exit yet
    assert_eq!(
        h.on_ack(&at(30_000, 9_000, 11 * 1460, 64), 1_000 * US, true),
        None
    );
    assert_eq!(h.end_seq, 200 * 1460);
    // a discarded sample keeps the rounds but judges nothing
    assert_eq!(h.on_ack(&at(30_001, 9_000, 12 * 1460, 64), US, false), None);
}

#[test]
fn after_an_exit_hystart_stays_quiet_until_a_timeout_resets_it() {
    let mut c = crate::transport::cubic::Cubic::default();
    let mut s = at(0, 100, 1460, 64);
    let mut n = 0;
    while c.ack_at(&s, true).is_none() {
        s.now += US;
        n += 1;
        assert!(n < 1000);
    }
    s.now += US;
    assert_eq!(c.ack_at(&s, true), None);
    assert!(c.hystart.found.is_some());
    c.reset(300 * 1460);
    assert_eq!(c.hystart.found, None);
}
