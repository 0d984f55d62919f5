//! CUBIC's window against RFC 9438's formulas and Linux's integer rules.

use super::*;

const MS: Time = 1_000_000_000;

/// An ACK at `now` with RTT sample `rtt`, in congestion avoidance.
fn ack(c: &mut Cubic, now: Time, rtt: Time) {
    let s = AckSample {
        now,
        rtt,
        snd_una: 0,
        snd_nxt: 0,
        cwnd: 0,
        mss: 1460,
        srtt: rtt,
    };
    c.ack_at(&s, false);
}

/// Acknowledges one window of `cwnd` segments an ACK at a time, spread over `rtt`
/// from `now`; the window after it.
fn one_round(c: &mut Cubic, now: Time, rtt: Time, mut cwnd: u64) -> u64 {
    let acks = cwnd;
    for i in 0..acks {
        ack(c, now + rtt * i / acks, rtt);
        cwnd += c.on_ack(cwnd, 1);
    }
    cwnd
}

#[test]
fn a_loss_sets_w_max_ssthresh_at_beta_and_k_from_the_gap() {
    let mut c = Cubic::default();
    assert_eq!(c.congestion(100), 70); // 100 x 717/1024 = 70.02
    assert_eq!(c.last_max_cwnd, 100);
    ack(&mut c, 0, 0);
    c.on_ack(70, 1);
    // K = cbrt((W_max - cwnd_epoch) / C) (RFC 9438 eq. 2): cbrt(30 / 0.4)
    assert!((c.k - 75f64.cbrt()).abs() < 1e-12, "{}", c.k);
    assert_eq!(c.origin, 100);
    assert!((c.w_cubic(0.0) - 70.0).abs() < 1e-9);
    assert!((c.w_cubic(c.k) - 100.0).abs() < 1e-9);
    assert_eq!(c.congestion(2), 2, "ssthresh is at least 2 segments");
}

#[test]
fn fast_convergence_releases_a_maximum_not_regained() {
    let mut c = Cubic::default();
    c.congestion(100);
    c.congestion(90); // below the last W_max: W_max = 90 (1 + beta) / 2
    assert_eq!(c.last_max_cwnd, 90 * 1741 / 2048);
    c.congestion(120); // above it: W_max is the window
    assert_eq!(c.last_max_cwnd, 120);
}

#[test]
fn at_small_bandwidth_delay_products_the_reno_friendly_window_governs() {
    // W_max 100 segments and 100 us round trips: K is 4.2 s, so the cubic curve
    // stays flat for the 20 round trips here and the window grows as Reno's would,
    // alpha_cubic = 3 (1 - beta) / (1 + beta) a round trip (Linux: 8/15)
    let mut c = Cubic::default();
    let mut cwnd = c.congestion(100);
    let rtt = MS / 10;
    for r in 0..20 {
        cwnd = one_round(&mut c, r * rtt, rtt, cwnd);
    }
    let per_rtt = (cwnd - 70) as f64 / 20.0;
    let alpha = 3.0 * (1.0 - 0.7) / (1.0 + 0.7);
    assert!(
        (per_rtt - alpha).abs() < 0.1,
        "{per_rtt} segments a round trip"
    );
    assert!(
        c.tcp_cwnd >= cwnd - 1,
        "W_est {} and cwnd {cwnd}",
        c.tcp_cwnd
    );
}

#[test]
fn at_large_ones_the_window_follows_the_cubic_curve_to_w_max_at_k() {
    // W_max 10 000 segments, 100 ms round trips: K = cbrt(3000 / 0.4) = 19.6 s, and
    // the window after t seconds is W_cubic(t + RTT) within a segment a round trip
    let mut c = Cubic::default();
    let mut cwnd = c.congestion(10_000);
    let rtt = 100 * MS;
    let mut now = 0;
    let mut worst: f64 = 0.0;
    while to_secs(now) < 25.0 {
        let want = c.w_cubic(to_secs(now + rtt)).min(1.5 * cwnd as f64);
        cwnd = one_round(&mut c, now, rtt, cwnd);
        now += rtt;
        if to_secs(now) > 1.0 {
            worst = worst.max((cwnd as f64 - want).abs() / want);
        }
    }
    assert!(worst < 0.01, "{worst}");
    let at_k = c.w_cubic(c.k);
    assert!((at_k - 10_000.0).abs() < 1e-6);
    assert!(cwnd > 10_000, "past K the curve is convex: {cwnd}");
}

#[test]
fn before_any_loss_the_window_grows_at_least_5_percent_a_round_trip() {
    let mut c = Cubic::default();
    let cwnd = one_round(&mut c, 0, 10 * MS, 1000);
    assert_eq!(c.cnt, 20);
    assert!(cwnd >= 1050, "{cwnd}");
}

#[test]
fn a_timeout_forgets_everything() {
    let mut c = Cubic::default();
    c.congestion(100);
    ack(&mut c, 0, 5 * MS);
    c.on_ack(70, 1);
    c.reset(0);
    assert_eq!(
        (c.last_max_cwnd, c.delay_min, c.origin, c.tcp_cwnd),
        (0, 0, 0, 0)
    );
    ack(&mut c, MS, 0);
    c.on_ack(10, 1);
    assert_eq!((c.k, c.origin), (0.0, 10));
}

#[test]
fn a_sample_within_a_second_of_an_epoch_start_leaves_delay_min_alone() {
    // bictcp_acked: "discard delay samples right after fast recovery"
    let mut c = Cubic::default();
    ack(&mut c, 0, 5 * MS);
    c.congestion(100);
    c.on_ack(70, 1); // the epoch starts at t = 0
    ack(&mut c, 999 * MS, 2 * MS);
    assert_eq!(c.delay_min, 5 * MS);
    ack(&mut c, 1000 * MS, 2 * MS);
    assert_eq!(c.delay_min, 2 * MS);
}
