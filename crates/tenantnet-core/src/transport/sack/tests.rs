//! One test per rule: the option's layout (RFC 2018 §3-4, RFC 2883), the scoreboard
//! and IsLost, SetPipe and NextSeg (RFC 6675 §4), PRR's two regimes (RFC 6937 §3).

use super::*;

const MSS: u64 = 1000;
const LOST: (u32, u64, u64) = (3, MSS, 0);

fn opt(blocks: &[(u64, u64)]) -> SackOption {
    let mut o = SackOption::default();
    for b in blocks {
        o.push(*b);
    }
    o
}

#[test]
fn the_option_takes_4_bytes_and_8_a_block_and_at_most_three_blocks() {
    assert_eq!(SackOption::default().wire_bytes(), 0);
    assert_eq!(opt(&[(1, 2)]).wire_bytes(), 12);
    assert_eq!(opt(&[(1, 2), (3, 4), (5, 6), (7, 8)]).wire_bytes(), 28);
    assert_eq!(opt(&[(1, 2), (3, 4), (5, 6), (7, 8)]).n, 3);
}

#[test]
fn the_receiver_reports_the_latest_range_first_then_the_ones_before() {
    let mut r = SackReporter::default();
    r.arrived((2000, 3000));
    r.arrived((5000, 6000));
    assert_eq!(r.option(None).blocks(), &[(5000, 6000), (2000, 3000)]);
    // a segment extends the older range: it becomes the first
    r.arrived((2000, 4000));
    assert_eq!(r.option(None).blocks(), &[(2000, 4000), (5000, 6000)]);
    // two ranges joined by a segment become one, reported once
    r.arrived((2000, 6000));
    assert_eq!(r.option(None).blocks(), &[(2000, 6000)]);
    // a D-SACK leads (RFC 2883 §4), the ranges follow
    let d = r.option(Some((0, 1000)));
    assert!(d.dsack && d.blocks() == [(0, 1000), (2000, 6000)]);
    r.delivered(6000);
    assert_eq!(r.option(None).n, 0);
    // no more than three blocks, the most recent
    for k in 0..5 {
        r.arrived((10_000 + 2000 * k, 11_000 + 2000 * k));
    }
    assert_eq!(
        r.option(None).blocks(),
        &[(18_000, 19_000), (16_000, 17_000), (14_000, 15_000)]
    );
}

#[test]
fn the_receiver_keeps_four_ranges_as_linux_does() {
    // ranges arrive from the highest down: the most recent is the lowest
    let mut r = SackReporter::default();
    for k in (0..5).rev() {
        r.arrived((10_000 + 2000 * k, 11_000 + 2000 * k));
    }
    let b = |k: u64| (10_000 + 2000 * k, 11_000 + 2000 * k);
    assert_eq!(r.option(None).blocks(), &[b(0), b(1), b(2)]);
    // the lowest is delivered: the fourth kept range is reported, the fifth was
    // forgotten (TCP_NUM_SACKS = 4)
    r.delivered(b(0).1);
    assert_eq!(r.option(None).blocks(), &[b(1), b(2), b(3)]);
    r.delivered(b(1).1);
    assert_eq!(r.option(None).blocks(), &[b(2), b(3)]);
}

#[test]
fn the_scoreboard_merges_ranges_and_forgets_what_is_cumulatively_acked() {
    let mut sb = Scoreboard::default();
    assert_eq!(sb.update(0, Some(&opt(&[(3000, 4000)]))), 1000);
    assert_eq!(
        sb.update(0, Some(&opt(&[(4000, 5000), (7000, 8000)]))),
        2000
    );
    assert_eq!(sb.ranges(), &[(3000, 5000), (7000, 8000)]);
    assert_eq!(sb.update(0, Some(&opt(&[(3000, 5000)]))), 0); // nothing new
                                                              // the cumulative ACK passes the first range: its bytes leave the scoreboard
    assert_eq!(sb.update(5000, None), -2000);
    assert_eq!(
        (sb.ranges(), sb.sacked_bytes()),
        (&[(7000, 8000)][..], 1000)
    );
    // a D-SACK below the ACK changes nothing
    let mut d = opt(&[(1000, 2000), (7000, 8000)]);
    d.dsack = true;
    assert_eq!(sb.update(5000, Some(&d)), 0);
    assert_eq!(sb.high_sacked(5000), 8000);
}

#[test]
fn is_lost_needs_more_than_two_segments_or_three_ranges_sacked_above() {
    let mut sb = Scoreboard::default();
    sb.update(0, Some(&opt(&[(1000, 3000)])));
    assert!(!sb.is_lost(0, 3, MSS)); // two segments above: not yet
    sb.update(0, Some(&opt(&[(3000, 4000)])));
    assert!(sb.is_lost(0, 3, MSS)); // three
    assert!(!sb.is_lost(4000, 3, MSS)); // nothing above
                                        // three small ranges above count as DupThresh discontiguous SACKed sequences
    let mut sb = Scoreboard::default();
    sb.update(0, Some(&opt(&[(100, 200), (300, 400), (500, 600)])));
    assert!(sb.is_lost(0, 3, MSS) && !sb.is_lost(250, 3, MSS));
}

#[test]
fn pipe_counts_unsacked_bytes_not_lost_and_retransmissions_again() {
    // 10 segments out; 4, 5, 6 SACKed: the hole 1-3 is lost, 7-10 is not
    let mut sb = Scoreboard::default();
    sb.update(0, Some(&opt(&[(3000, 6000)])));
    let holes: Vec<_> = sb.holes(0, 10_000, LOST).collect();
    assert_eq!(holes, vec![(0, 3000, true), (6000, 10_000, false)]);
    assert_eq!(sb.pipe(0, 10_000, LOST), 4000);
    sb.rxt_end = 1000; // the first lost segment was retransmitted
    assert_eq!(sb.pipe(0, 10_000, LOST), 5000);
    // after a timeout every un-SACKed byte below the recovery point is lost
    assert_eq!(sb.pipe(0, 10_000, (3, MSS, 10_000)), 1000);
    // new data sent since the timeout, above its recovery point, is in the pipe
    let holes: Vec<_> = sb.holes(0, 12_000, (3, MSS, 8000)).collect();
    assert_eq!(
        holes,
        vec![(0, 3000, true), (6000, 8000, true), (8000, 12_000, false)]
    );
    assert_eq!(sb.pipe(0, 12_000, (3, MSS, 8000)), 1000 + 4000);
}

#[test]
fn next_seg_follows_rfc_6675s_four_rules_in_order() {
    let mut sb = Scoreboard::default();
    sb.update(0, Some(&opt(&[(3000, 6000)])));
    let st = NextSegState {
        snd_una: 0,
        snd_max: 10_000,
        limit: 20_000,
        mss: MSS,
        dupthresh: 3,
        all_lost_below: 0,
        rescue: false,
    };
    // (1) the first lost byte above HighRxt
    assert_eq!(next_seg(&sb, &st), Next::Retransmit(0, 1000));
    sb.rxt_end = 3000;
    // (2) new data once every lost hole is retransmitted
    assert_eq!(next_seg(&sb, &st), Next::New(10_000, 1000));
    // (3) no new data: an un-SACKed, not lost byte below the highest SACKed one
    let mut sb3 = Scoreboard::default();
    sb3.update(0, Some(&opt(&[(2000, 3000)])));
    let st3 = NextSegState {
        limit: 10_000,
        ..st
    };
    assert_eq!(next_seg(&sb3, &st3), Next::Retransmit(0, 1000));
    // (4) the rescue retransmission: the highest outstanding un-SACKed segment
    sb.rxt_end = 3000;
    let st4 = NextSegState {
        limit: 10_000,
        rescue: true,
        ..st
    };
    assert_eq!(next_seg(&sb, &st4), Next::Rescue(9000, 1000));
    let st5 = NextSegState {
        rescue: false,
        ..st4
    };
    assert_eq!(next_seg(&sb, &st5), Next::Nothing);
    // after a timeout, holes above the highest SACK count too
    let st6 = NextSegState {
        all_lost_below: 10_000,
        ..st5
    };
    assert_eq!(next_seg(&sb, &st6), Next::Retransmit(6000, 1000));
}

#[test]
fn prr_sends_in_proportion_then_bounds_the_slow_start() {
    // RFC 6937 §3: 20 segments out, ssthresh 10: while pipe > ssthresh, one segment
    // goes for every two delivered
    let mut prr = Prr::start(20 * MSS);
    let mut sent = 0;
    for k in 1..=6u64 {
        let pipe = 19 * MSS - k * MSS + sent; // pipe falls by what is delivered
        let cwnd = prr.on_ack(MSS, pipe, 10 * MSS, MSS, true);
        let go = cwnd.saturating_sub(pipe);
        prr.out += go;
        sent += go;
    }
    assert_eq!(prr.out, 3 * MSS); // ⌈6 · 10/20⌉ segments

    // once pipe is at or below ssthresh, an ACK that advanced SND.UNA and marked
    // nothing lost may send one MSS more than was delivered (slow-start bound)
    let below = |safe| {
        let mut prr = Prr::start(20 * MSS);
        prr.delivered = 5 * MSS;
        prr.out = 5 * MSS;
        prr.on_ack(MSS, 4 * MSS, 10 * MSS, MSS, safe) - 4 * MSS
    };
    assert_eq!(below(true), 2 * MSS);
    // any other ACK (a duplicate, or one that marked a loss) only what it delivered
    assert_eq!(below(false), MSS);
    // and never past ssthresh
    let mut prr = Prr::start(20 * MSS);
    let cwnd = prr.on_ack(20 * MSS, 9 * MSS, 10 * MSS, MSS, true);
    assert_eq!(cwnd, 10 * MSS);
}

#[test]
fn the_counted_pipe_and_next_seg_equal_rfc_6675s_walks_hole_by_hole() {
    // random scoreboards, HighRxt and timeout points: the binary-search counts of
    // `pipe` and `next_seg` against RFC 6675's walks over the holes
    let mut x: u64 = 7;
    let mut next = |m: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % m
    };
    for _ in 0..2000 {
        let mut sb = Scoreboard::default();
        let una = next(5) * MSS;
        let max = una + (1 + next(40)) * MSS;
        let blocks: Vec<(u64, u64)> = (0..next(8))
            .map(|_| {
                let s = una + next(40) * MSS / 2;
                (s, s + (1 + next(4)) * MSS / 2)
            })
            .filter(|b| b.1 <= max)
            .collect();
        for b in blocks.chunks(3) {
            sb.update(una, Some(&opt(b)));
        }
        sb.rxt_end = una + next(45) * MSS;
        let alb = if next(3) == 0 {
            una + next(45) * MSS
        } else {
            0
        };
        let limit = max + next(2) * MSS;
        for dupthresh in [1, 3] {
            let lost = (dupthresh, MSS, alb);
            let at = format!(
                "{:?} una {una} max {max} rxt {} alb {alb}",
                sb.ranges(),
                sb.rxt_end
            );
            assert_eq!(
                sb.pipe(una, max, lost),
                sb.pipe_by_walk(una, max, lost),
                "{at}"
            );
            let st = NextSegState {
                snd_una: una,
                snd_max: max,
                limit,
                mss: MSS,
                dupthresh,
                all_lost_below: alb,
                rescue: true,
            };
            assert_eq!(next_seg(&sb, &st), next_seg_by_walk(&sb, &st), "{at}");
        }
    }
}
