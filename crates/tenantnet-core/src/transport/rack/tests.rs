//! RACK's rules one by one (RFC 8985 §6.2, §7.2).

use super::*;

/// Ten segments of 100 bytes sent one per time unit from t = 0 (segment k at
/// time 10·k), with RTT 1000.
fn ten_sent() -> Rack {
    let mut r = Rack::default();
    for k in 0..10 {
        r.on_sent_new(100 * k, 10 * k as Time);
    }
    r
}

#[test]
fn bursts_sent_at_one_instant_share_a_record() {
    let mut r = Rack::default();
    for k in 0..5 {
        r.on_sent_new(100 * k, 7);
    }
    r.on_sent_new(500, 8);
    assert_eq!(r.sent.len(), 2);
    r.acked(450);
    assert_eq!(
        r.sent.len(),
        2,
        "the record holding the cumulative ACK stays"
    );
    r.acked(500);
    assert_eq!(r.sent.len(), 1);
}

#[test]
fn sent_after_breaks_time_ties_by_sequence() {
    assert!(sent_after(5, 100, 4, 900));
    assert!(sent_after(5, 200, 5, 100));
    assert!(!sent_after(5, 100, 5, 100));
    assert!(!sent_after(5, 100, 5, 200));
}

#[test]
fn a_segment_is_lost_once_a_later_one_is_delivered_and_rtt_plus_window_passed() {
    let mut r = ten_sent();
    // segment 5 (sent at 50) delivered at 1050: RTT 1000
    r.update(50, 600, 1050);
    assert_eq!(r.rtt, 1000);
    // with a reordering window of 100, segments 0..5 are lost only from 1100 on:
    // segment 0 at 0 + 1100, segment 4 at 40 + 1100; the timer is set for the
    // last of them (RFC 8985 §6.2 step 5 takes the largest remaining time; at
    // the granularity of bursts, the burst of RACK's own segment, 50 + 1100)
    assert!(!r.detect_loss(1050, 100, 0, 1000));
    assert_eq!(r.lost_below, 0);
    assert_eq!(r.reo_deadline, Some(50 + 1100));
    assert!(r.detect_loss(1125, 100, 0, 1000));
    assert_eq!(r.lost_below, 300, "segments sent at 0, 10 and 20 are lost");
    assert_eq!(r.reo_deadline, Some(50 + 1100));
    assert!(r.detect_loss(2000, 100, 0, 1000));
    assert_eq!(
        r.lost_below, 600,
        "up to the delivered segment (itself delivered): those sent after it wait"
    );
    assert_eq!(r.reo_deadline, None);
    // with no window, everything sent before it is lost at once
    let mut z = ten_sent();
    z.update(50, 600, 1050);
    assert!(z.detect_loss(1050, 0, 0, 1000));
    assert_eq!(z.lost_below, 600);
}

#[test]
fn within_one_burst_only_lower_sequence_counts_as_sent_before() {
    let mut r = Rack::default();
    r.on_sent_new(0, 0); // ten segments at time 0
    r.update(0, 600, 1000); // segment [500, 600) delivered
    assert!(r.detect_loss(1000, 0, 0, 1000));
    assert_eq!(r.lost_below, 600, "bytes up to the delivered segment's end");
}

#[test]
fn a_retransmission_is_judged_by_its_own_send_time() {
    let mut r = ten_sent();
    r.update(50, 600, 1050);
    assert!(r.detect_loss(1050, 0, 0, 1000));
    r.on_retransmit(0, 100, 1060);
    r.on_retransmit(100, 200, 1061);
    assert_eq!(r.resend_from, 200);
    assert!(r.rtx_at(50) == Some((0, 100)) && r.rtx_at(200).is_none());
    // a segment sent after the retransmissions is delivered 1000 later
    r.on_sent_new(1000, 1070);
    r.update(1070, 1100, 2070);
    assert!(r.detect_loss(2070, 0, 0, 1100));
    assert!(r.in_flight().is_empty(), "both retransmissions are lost");
    assert_eq!(r.resend_from, 0, "their bytes are to be sent again");
}

#[test]
fn a_delivered_retransmission_is_not_judged_lost() {
    let mut r = ten_sent();
    r.update(50, 600, 1050);
    r.detect_loss(1050, 0, 0, 1000);
    r.on_retransmit(0, 100, 1060);
    r.update(1060, 100, 2060);
    r.acked(100);
    assert!(r.in_flight().is_empty());
    assert_eq!(r.resend_from, 100);
}

#[test]
fn the_reordering_window_follows_rfc8985() {
    let mut r = ten_sent();
    r.update(0, 100, 400); // min RTT 400
    assert_eq!(r.reo_wnd(false, false, 500), 100, "min_RTT/4");
    assert_eq!(
        r.reo_wnd(true, false, 500),
        0,
        "in recovery, no reordering seen"
    );
    assert_eq!(r.reo_wnd(false, true, 500), 0, "DupThresh segments SACKed");
    r.reordering_seen = true;
    assert_eq!(r.reo_wnd(true, true, 500), 100);
    r.on_dsack(0, 1000);
    r.on_dsack(0, 1000); // the same round: no second step
    assert_eq!(r.reo_wnd(false, false, 500), 200);
    r.on_dsack(1000, 2000);
    assert_eq!(r.reo_wnd(false, false, 500), 300);
    assert_eq!(r.reo_wnd(false, false, 250), 250, "never above SRTT");
    for _ in 0..16 {
        r.on_recovery_end();
    }
    assert_eq!(r.reo_wnd(false, false, 500), 100, "back to one step");
}

#[test]
fn a_timeout_forgets_retransmissions_and_the_probe() {
    let mut r = ten_sent();
    r.on_retransmit(0, 100, 100);
    r.tlp.end_seq = Some(1000);
    r.reo_deadline = Some(5);
    r.on_timeout(0);
    assert!(r.in_flight().is_empty());
    assert_eq!(
        (r.resend_from, r.tlp.end_seq, r.reo_deadline),
        (0, None, None)
    );
}

#[test]
fn the_probe_timeout_is_two_rtts_plus_the_delayed_ack_for_one_segment() {
    let rfc = TlpTimeout::Rfc8985;
    assert_eq!(probe_timeout(rfc, Some(100), false, 40, (500, 9)), 200);
    assert_eq!(probe_timeout(rfc, Some(100), true, 40, (500, 9)), 240);
    assert_eq!(probe_timeout(rfc, None, false, 40, (500, 9)), 9);
}

#[test]
fn linuxs_probe_timeout_adds_two_ms_or_the_min_rto_for_one_segment() {
    let linux = TlpTimeout::Linux;
    let two_ms = LINUX_TIMEOUT_MIN;
    assert_eq!(
        probe_timeout(linux, Some(100), false, 40, (500, 9)),
        200 + two_ms
    );
    assert_eq!(
        probe_timeout(linux, Some(100), true, 40, (500, 9)),
        200 + 500
    );
}
