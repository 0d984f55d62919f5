use super::*;
use crate::transport::DctcpWindow;

fn cfg() -> TcpConfig {
    TcpConfig {
        mss: 1000,
        init_cwnd: 2,
        min_rto: 100,
        initial_rto: 1000,
        ..Default::default()
    }
}

/// A sender for `bytes` bytes (`u64::MAX`: unbounded) started at time 0, and what
/// starting it sent.
fn started(c: &TcpConfig, bytes: u64) -> (TcpSender, SenderOut) {
    let mut s = TcpSender::new(c, bytes);
    let mut out = SenderOut::default();
    s.start(0, c, &mut out);
    (s, out)
}

fn seqs(out: &SenderOut) -> Vec<(u64, bool)> {
    out.segments.iter().map(|s| (s.seq, s.retx)).collect()
}

#[test]
fn slow_start_doubles_per_round() {
    let c = cfg();
    let (mut s, mut out) = started(&c, u64::MAX);
    assert_eq!(seqs(&out), vec![(0, false), (1000, false)]);
    assert_eq!(out.rto_event, Some(1000));
    out.segments.clear();
    s.on_ack(10, 1000, false, 0, None, &c, &mut out);
    s.on_ack(11, 2000, false, 0, None, &c, &mut out);
    assert_eq!(s.cwnd, 4000);
    assert_eq!(out.segments.len(), 4);
}

#[test]
fn congestion_avoidance_adds_one_mss_per_window() {
    let c = TcpConfig {
        init_ssthresh: Some(2),
        ..cfg()
    };
    let (mut s, mut out) = started(&c, u64::MAX);
    s.on_ack(10, 1000, false, 0, None, &c, &mut out);
    assert_eq!(s.cwnd, 2000);
    s.on_ack(10, 2000, false, 0, None, &c, &mut out);
    assert_eq!(s.cwnd, 3000);
}

#[test]
fn three_dupacks_fast_retransmit_and_newreno_recovery() {
    let c = TcpConfig {
        init_cwnd: 10,
        ..cfg()
    };
    let (mut s, mut out) = started(&c, u64::MAX);
    assert_eq!(s.snd_max, 10_000);
    // segment 0 lost: the next three arrivals produce dupacks for 0
    out.segments.clear();
    for _ in 0..3 {
        s.on_ack(10, 0, false, 0, None, &c, &mut out);
    }
    assert_eq!(seqs(&out), vec![(0, true)]);
    assert_eq!(s.ssthresh, 5000);
    assert_eq!(s.cwnd, 8000);
    assert_eq!(s.stats.fast_retransmits, 1);
    // segment 3000 was lost too: the partial ACK retransmits it
    out.segments.clear();
    s.on_ack(20, 3000, false, 0, None, &c, &mut out);
    assert_eq!(
        out.segments[0],
        Segment {
            seq: 3000,
            len: 1000,
            retx: true
        }
    );
    // the full ACK ends recovery with cwnd <= ssthresh
    out.segments.clear();
    s.on_ack(30, 10_000, false, 0, None, &c, &mut out);
    assert!(s.cwnd <= 5000);
    assert_eq!(s.stats.retransmits, 2);
}

#[test]
fn only_the_first_partial_ack_restarts_the_timer() {
    let c = TcpConfig {
        init_cwnd: 10,
        ..cfg()
    };
    let (mut s, mut out) = started(&c, u64::MAX);
    for _ in 0..3 {
        s.on_ack(10, 0, false, 0, None, &c, &mut out);
    }
    // first partial ACK: timer restarted (sample 20 -> rto = min_rto 100)
    out = SenderOut::default();
    s.on_ack(20, 2000, false, 0, None, &c, &mut out);
    assert_eq!(out.rto_event, Some(120));
    let deadline = 120;
    // later partial ACKs leave it alone, so it expires during recovery
    s.on_ack(30, 4000, false, 0, None, &c, &mut out);
    s.on_ack(40, 6000, false, 0, None, &c, &mut out);
    out = SenderOut::default();
    s.on_rto_event(deadline, &c, &mut out);
    assert_eq!(s.stats.timeouts, 1);
    assert_eq!(
        out.segments[0],
        Segment {
            seq: 6000,
            len: 1000,
            retx: true
        }
    );
    assert_eq!(s.cwnd, 1000);
    // a timeout during recovery keeps the ssthresh recovery chose
    assert_eq!(s.ssthresh, 5000);
}

#[test]
fn timeout_goes_back_to_snd_una_with_one_segment() {
    let c = TcpConfig {
        init_cwnd: 4,
        ..cfg()
    };
    let (mut s, mut out) = started(&c, u64::MAX);
    let at = out.rto_event.unwrap();
    out = SenderOut::default();
    s.on_rto_event(at, &c, &mut out);
    assert_eq!(seqs(&out), vec![(0, true)]);
    assert_eq!(s.cwnd, 1000);
    assert_eq!(s.ssthresh, 2000);
    assert_eq!(s.rto(), 2000, "backed off");
    assert_eq!(out.rto_event, Some(at + 2000));
    // expiring again for the same segment holds ssthresh constant
    let mut again = s.clone();
    let mut o = SenderOut::default();
    again.on_rto_event(at + 2000, &c, &mut o);
    assert_eq!((again.ssthresh, again.rto()), (2000, 4000));
    // an ACK covering everything that was delivered moves snd_nxt past the hole
    out = SenderOut::default();
    s.on_ack(at + 10, 4000, false, at, None, &c, &mut out);
    // slow start to ssthresh (2000), the other 3000 acked bytes count toward
    // congestion avoidance: one more MSS, cwnd 3000
    assert_eq!(s.cwnd, 3000);
    assert_eq!(s.snd_nxt, 4000 + 3000);
}

#[test]
fn rto_rearm_later_schedules_no_event() {
    let c = cfg();
    let (mut s, mut out) = started(&c, u64::MAX);
    assert_eq!(out.rto_event.take(), Some(1000));
    // the first RTT sample shrinks the RTO to min_rto: an earlier event is needed
    s.on_ack(10, 1000, false, 0, None, &c, &mut out);
    assert_eq!(out.rto_event.take(), Some(110));
    s.on_ack(20, 2000, false, 10, None, &c, &mut out);
    assert_eq!(out.rto_event, None, "deadline moved later: no new event");
    // the event at 110 reschedules itself to the real deadline, 120
    let mut o2 = SenderOut::default();
    s.on_rto_event(110, &c, &mut o2);
    assert_eq!(o2.rto_event, Some(120));
    assert!(o2.segments.is_empty());
    // the superseded event at 1000 is stale
    let mut o3 = SenderOut::default();
    s.on_rto_event(1000, &c, &mut o3);
    assert!(o3.rto_event.is_none() && o3.segments.is_empty());
}

#[test]
fn dctcp_cuts_once_per_window_by_alpha() {
    let c = TcpConfig {
        cc: CongestionControl::Dctcp,
        init_cwnd: 10,
        dctcp_alpha_init: 1.0,
        ..cfg()
    };
    let (mut s, mut out) = started(&c, u64::MAX);
    s.on_ack(10, 1000, true, 0, None, &c, &mut out);
    // alpha after the first (all-marked) window stays 1: cut to cwnd/2
    let after_first = s.cwnd;
    assert_eq!(after_first, (10_000u64 + 1000) / 2);
    s.on_ack(11, 2000, true, 0, None, &c, &mut out);
    assert_eq!(s.cwnd, after_first, "no second cut in the same window");
    assert_eq!(s.stats.ecn_cuts, 1);
}

#[test]
fn htsims_dctcp_cuts_at_every_window_end_while_alpha_is_positive() {
    let c = TcpConfig {
        cc: CongestionControl::Dctcp,
        init_cwnd: 10,
        dctcp_alpha_init: 0.0,
        dctcp_g: 0.5,
        dctcp_cut: DctcpCut::EveryWindow,
        ..cfg()
    };
    let (mut s, mut out) = started(&c, u64::MAX);
    // the first ACK closes the empty first window; alpha 0: no cut, slow start goes on
    s.on_ack(10, 1000, false, 0, None, &c, &mut out);
    assert_eq!((s.cwnd, s.stats.ecn_cuts), (11_000, 0));
    // an ECE ends slow start (before the ACK grows the window) without cutting
    s.on_ack(11, 2000, true, 0, None, &c, &mut out);
    assert_eq!((s.cwnd, s.ssthresh, s.stats.ecn_cuts), (11_000, 11_000, 0));
    // the window (up to the 11 000 bytes sent when it opened) ends with 1 of its
    // 10 000 bytes marked: alpha = 0.5 * 0.1 = 0.05, and the window is cut by
    // alpha/2 although this ACK carries no ECE
    s.on_ack(12, 11_000, false, 0, None, &c, &mut out);
    assert!((s.alpha().unwrap() - 0.05).abs() < 1e-12);
    assert_eq!(s.stats.ecn_cuts, 1);
    assert_eq!(s.cwnd, 11_000 - (11_000.0 * 0.025) as u64);
    // with on_ece the same unmarked ACK would not have cut
    let c2 = TcpConfig {
        dctcp_cut: DctcpCut::OnEce,
        ..c.clone()
    };
    let (mut s2, mut out2) = started(&c2, u64::MAX);
    s2.on_ack(10, 1000, false, 0, None, &c2, &mut out2);
    s2.on_ack(11, 2000, true, 0, None, &c2, &mut out2);
    let cuts = s2.stats.ecn_cuts;
    s2.on_ack(12, 11_000, false, 0, None, &c2, &mut out2);
    assert_eq!(s2.stats.ecn_cuts, cuts);
}

#[test]
fn htsims_window_counted_in_acks_spans_the_cwnd_after_the_last_cut() {
    let c = TcpConfig {
        cc: CongestionControl::Dctcp,
        init_cwnd: 2,
        init_ssthresh: Some(2),
        dctcp_alpha_init: 1.0,
        dctcp_g: 0.5,
        dctcp_cut: DctcpCut::EveryWindow,
        dctcp_window: DctcpWindow::Acks,
        ..cfg()
    };
    let (mut s, mut out) = started(&c, u64::MAX);
    // the first window is two ACKs: the first does not end it, the second does
    // (alpha = 0.5·1 + 0.5·0 = 0.5) and cuts 2 000 bytes by a quarter, before the
    // ACK's own growth adds a segment (the two ACKs make a window of growth)
    s.on_ack(10, 1000, false, 0, None, &c, &mut out);
    assert_eq!(s.stats.ecn_cuts, 0);
    s.on_ack(11, 2000, false, 0, None, &c, &mut out);
    assert!((s.alpha().unwrap() - 0.5).abs() < 1e-12);
    assert_eq!((s.stats.ecn_cuts, s.cwnd), (1, 2500));
    // the next window is the 1 500 bytes of cwnd just after the cut: two ACKs
    s.on_ack(12, 3000, false, 0, None, &c, &mut out);
    assert_eq!(s.stats.ecn_cuts, 1);
    s.on_ack(13, 4000, false, 0, None, &c, &mut out);
    assert_eq!(s.stats.ecn_cuts, 2);
    assert!((s.alpha().unwrap() - 0.25).abs() < 1e-12);
}

#[test]
fn finite_flow_stops_at_its_size() {
    let c = cfg();
    let (mut s, mut out) = started(&c, 2500);
    s.on_ack(10, 2000, false, 0, None, &c, &mut out);
    assert_eq!(
        out.segments.last().unwrap(),
        &Segment {
            seq: 2000,
            len: 500,
            retx: false
        }
    );
    s.on_ack(20, 2500, false, 0, None, &c, &mut out);
    assert!(s.done());
}

#[test]
fn a_sender_out_of_room_waits_and_does_not_grow_its_window() {
    let c = TcpConfig {
        init_cwnd: 10,
        ..cfg()
    };
    let mut s = TcpSender::new(&c, u64::MAX);
    let mut out = SenderOut {
        room: 2 * 1040 + 100,
        ..Default::default()
    };
    s.start(0, &c, &mut out);
    assert_eq!(out.segments.len(), 2, "room for two 1040-byte packets");
    assert!(out.blocked);
    // ACKs while the host holds it back leave cwnd alone
    let mut out = SenderOut {
        room: 0,
        ..Default::default()
    };
    s.on_ack(10, 2000, false, 0, None, &c, &mut out);
    assert_eq!(s.cwnd, 10_000);
    assert!(out.segments.is_empty() && out.blocked);
    // room again: it sends up to its window, and is window-limited once more
    let mut out = SenderOut::default();
    s.resume(20, &c, &mut out);
    assert_eq!(out.segments.len(), 10);
    assert!(!out.blocked);
    s.on_ack(30, 3000, false, 0, None, &c, &mut out);
    assert_eq!(s.cwnd, 11_000, "slow start resumes");
}

#[test]
fn loss_ssthresh_halves_the_flight_or_the_window_as_configured() {
    // an application-limited sender: 6 segments out under a window of 10
    let flight = |how| {
        let c = TcpConfig {
            init_cwnd: 10,
            loss_ssthresh: how,
            ..cfg()
        };
        let (mut s, mut out) = started(&c, 6000);
        assert_eq!((s.snd_max, s.cwnd), (6000, 10_000));
        for _ in 0..3 {
            s.on_ack(10, 0, false, 0, None, &c, &mut out);
        }
        let after_loss = s.ssthresh;
        // a timeout after the recovery ended: ssthresh from the same rule
        s.on_ack(20, 6000, false, 0, None, &c, &mut out);
        let (mut s2, mut out2) = started(&c, 6000);
        s2.on_rto_event(1000, &c, &mut out2);
        (after_loss, s2.ssthresh)
    };
    assert_eq!(flight(LossSsthresh::Flight), (3000, 3000));
    assert_eq!(flight(LossSsthresh::Cwnd), (5000, 5000));
}

#[test]
fn cubic_cuts_to_beta_of_the_window_on_loss_and_ece_and_grows_by_its_curve() {
    let c = TcpConfig {
        cc: CongestionControl::Cubic,
        init_cwnd: 100,
        ecn: true,
        ..cfg()
    };
    // a loss: ssthresh = 100 x 717/1024 = 70 segments, from the window not the flight
    let (mut s, mut out) = started(&c, 60_000);
    for _ in 0..3 {
        s.on_ack(10, 0, false, 0, None, &c, &mut out);
    }
    assert_eq!(s.ssthresh, 70_000);
    // ECE: the same cut, and W_max is the window cut from
    let (mut s, mut out) = started(&c, u64::MAX);
    s.on_ack(10, 1000, true, 0, None, &c, &mut out);
    assert_eq!((s.cwnd, s.ssthresh), (70_000, 70_000));
    assert_eq!(s.cubic.as_ref().map(|x| x.last_max_cwnd), Some(101));
    // in congestion avoidance the Reno-friendly window leads at first: a window
    // of ACKs (each acknowledging one segment) adds under one segment
    let mut ack = 1000;
    for i in 0..70 {
        ack += 1000;
        s.on_ack(20 + i, ack, false, 10, None, &c, &mut out);
    }
    assert_eq!(s.cwnd, 70_000);
    // a timeout forgets W_max (the timer's event, rescheduled lazily, followed)
    let mut at = out.rto_event.expect("the timer runs");
    while s.stats.timeouts == 0 {
        let mut o = SenderOut::default();
        s.on_rto_event(at, &c, &mut o);
        at = o.rto_event.unwrap_or(at);
    }
    assert_eq!(s.cubic.as_ref().map(|x| x.last_max_cwnd), Some(0));
}
