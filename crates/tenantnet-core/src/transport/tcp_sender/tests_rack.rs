//! RACK-TLP at packet level: a sender and a SACK receiver joined by a path with a
//! one-way delay and a serialisation time per segment, events in time order, on
//! which chosen transmissions are lost or held back (reordering).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use super::*;
use crate::transport::tcp_receiver::{Ack, DataSegment, ReceiverOut, TcpReceiver};

/// One-way delay.
const DELAY: Time = 100;
/// Time a segment takes on the wire: a burst leaves one segment per unit.
const SER: Time = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Data(u64, u32, Time),
    Ack(u64),
    Timer,
}

/// What happens to transmission `n` (from 1) of the segment at `seq`.
#[derive(Clone, Copy, Debug)]
enum Fate {
    Lost,
    Late(Time),
}

struct Path {
    c: TcpConfig,
    s: TcpSender,
    r: TcpReceiver,
    fates: HashMap<(u64, u32), Fate>,
    sent: HashMap<u64, u32>,
    q: BinaryHeap<Reverse<(Time, u64, Ev)>>,
    acks: HashMap<u64, Ack>,
    order: u64,
    wire_free: Time,
    /// Segments sent: (time, seq, retransmission).
    log: Vec<(Time, u64, bool)>,
}

impl Path {
    fn new(recovery: Recovery, bytes: u64, fates: &[((u64, u32), Fate)]) -> Self {
        let c = TcpConfig {
            mss: 1000,
            init_cwnd: 10,
            min_rto: 20_000,
            initial_rto: 20_000,
            recovery,
            ..Default::default()
        };
        Path {
            s: TcpSender::new(&c, bytes),
            r: if recovery.uses_sack() {
                TcpReceiver::with_sack()
            } else {
                TcpReceiver::new()
            },
            c,
            fates: fates.iter().copied().collect(),
            sent: HashMap::new(),
            q: BinaryHeap::new(),
            acks: HashMap::new(),
            order: 0,
            wire_free: 0,
            log: Vec::new(),
        }
    }

    fn push(&mut self, t: Time, e: Ev) {
        self.order += 1;
        self.q.push(Reverse((t, self.order, e)));
    }

    fn transmit(&mut self, now: Time, out: &mut SenderOut) {
        if let Some(t) = out.rto_event.take() {
            self.push(t, Ev::Timer);
        }
        for g in out.segments.drain(..) {
            self.log.push((now, g.seq, g.retx));
            let n = self.sent.entry(g.seq).or_default();
            *n += 1;
            let depart = now.max(self.wire_free) + SER;
            self.wire_free = depart;
            let extra = match self.fates.get(&(g.seq, *n)) {
                Some(Fate::Lost) => continue,
                Some(Fate::Late(x)) => *x,
                None => 0,
            };
            self.push(depart + DELAY + extra, Ev::Data(g.seq, g.len, now));
        }
    }

    /// Runs until every byte is acknowledged; the time it took.
    fn run(&mut self) -> Time {
        let mut out = SenderOut::default();
        self.s.start(0, &self.c, &mut out);
        self.transmit(0, &mut out);
        self.drive(out)
    }

    /// The application gives `more` bytes at `now`; runs until they are
    /// acknowledged.
    fn give(&mut self, more: u64, now: Time) -> Time {
        let mut out = SenderOut::default();
        self.s.limit += more;
        self.s.resume(now, &self.c, &mut out);
        self.transmit(now, &mut out);
        self.drive(out)
    }

    fn drive(&mut self, mut out: SenderOut) -> Time {
        while let Some(Reverse((now, _, ev))) = self.q.pop() {
            assert!(now < 10_000_000, "not done: snd_una {}", self.s.snd_una);
            match ev {
                Ev::Data(seq, len, ts) => {
                    let mut ro = ReceiverOut::default();
                    let d = DataSegment {
                        seq,
                        len,
                        ce: false,
                        ts,
                        push: false,
                    };
                    self.r.on_data(now, d, None, &mut ro);
                    for a in ro.acks {
                        self.acks.insert(self.order + 1, a);
                        self.push(now + DELAY, Ev::Ack(self.order + 1));
                    }
                }
                Ev::Ack(id) => {
                    let a = self.acks.remove(&id).expect("an ACK");
                    let sack = (a.sack.n > 0).then_some(&a.sack);
                    self.s
                        .on_ack(now, a.ack, a.ece, a.ts, sack, &self.c, &mut out);
                }
                Ev::Timer => self.s.on_rto_event(now, &self.c, &mut out),
            }
            self.transmit(now, &mut out);
            if self.s.done() {
                return now;
            }
        }
        panic!(
            "a silent sender without a timer: snd_una {}",
            self.s.snd_una
        );
    }

    fn retransmitted(&self) -> Vec<u64> {
        self.log.iter().filter(|l| l.2).map(|l| l.1).collect()
    }
}

fn lost(seq: u64, n: u32) -> ((u64, u32), Fate) {
    ((seq, n), Fate::Lost)
}

#[test]
fn one_loss_is_marked_by_time_and_repaired_once() {
    let mut p = Path::new(Recovery::Rack, 40_000, &[lost(3000, 1)]);
    p.run();
    assert_eq!(p.retransmitted(), vec![3000]);
    assert_eq!((p.s.stats.fast_retransmits, p.s.stats.timeouts), (1, 0));
}

#[test]
fn several_losses_in_one_window_take_one_recovery() {
    let losses = [lost(2000, 1), lost(5000, 1), lost(7000, 1), lost(8000, 1)];
    let mut p = Path::new(Recovery::Rack, 40_000, &losses);
    p.run();
    assert_eq!(p.retransmitted(), vec![2000, 5000, 7000, 8000]);
    assert_eq!((p.s.stats.fast_retransmits, p.s.stats.timeouts), (1, 0));
}

#[test]
fn a_lost_retransmission_is_sent_again_without_a_timeout() {
    let losses = [lost(2000, 1), lost(2000, 2), lost(5000, 1)];
    let mut rack = Path::new(Recovery::Rack, 40_000, &losses);
    let t_rack = rack.run();
    assert_eq!(rack.s.stats.timeouts, 0);
    assert_eq!(rack.retransmitted(), vec![2000, 5000, 2000]);
    // RFC 6675 alone waits for the retransmission timer
    let mut sack = Path::new(Recovery::Sack, 40_000, &losses);
    let t_sack = sack.run();
    assert_eq!(sack.s.stats.timeouts, 1);
    assert!(t_sack > t_rack + 10_000, "sack {t_sack}, rack {t_rack}");
}

#[test]
fn reordering_seen_once_widens_the_window_and_spares_later_segments() {
    // segment 3000 arrives 2.5 segment times late (two SACKed past it: no
    // DupThresh), which RACK notes as reordering; later segments arrive 8.5
    // segment times late, past DupThresh, within RACK's window of min_RTT/4
    let late = |seq| ((seq, 1), Fate::Late(8 * SER + SER / 2 + 2));
    let fates = [
        ((3000, 1), Fate::Late(2 * SER + 1)),
        late(30_000),
        late(60_000),
        late(90_000),
    ];
    let mut rack = Path::new(Recovery::Rack, 120_000, &fates);
    rack.run();
    assert!(rack.s.rack().unwrap().reordering_seen);
    assert_eq!(
        rack.retransmitted(),
        Vec::<u64>::new(),
        "no spurious retransmission"
    );
    // DupThresh resends every segment that eight others overtake
    let mut sack = Path::new(Recovery::Sack, 120_000, &fates);
    sack.run();
    let spurious = sack.retransmitted();
    assert!(
        spurious.len() >= 2
            && spurious
                .iter()
                .all(|s| [30_000, 60_000, 90_000].contains(s)),
        "{spurious:?}"
    );
}

#[test]
fn a_tail_loss_is_found_by_the_probe_without_a_timeout() {
    // the last two segments are lost: no ACK follows them
    let losses = [lost(18_000, 1), lost(19_000, 1)];
    let mut rack = Path::new(Recovery::Rack, 20_000, &losses);
    let t_rack = rack.run();
    assert_eq!((rack.s.stats.timeouts, rack.s.stats.probes), (0, 1));
    // the probe resends the last segment; its SACK shows 18 000 lost
    assert_eq!(rack.retransmitted(), vec![19_000, 18_000]);
    assert!(t_rack < rack.c.min_rto, "done at {t_rack}");
    let mut sack = Path::new(Recovery::Sack, 20_000, &losses);
    sack.run();
    assert_eq!(sack.s.stats.timeouts, 1);
}

#[test]
fn a_probe_that_repairs_the_only_loss_reduces_the_window_once_data_follows() {
    let mut p = Path::new(Recovery::Rack, 20_000, &[lost(19_000, 1)]);
    let done = p.run();
    assert_eq!((p.s.stats.timeouts, p.s.stats.probes), (0, 1));
    assert_eq!(p.retransmitted(), vec![19_000]);
    // the probe's ACK reaches its end exactly: undecided until an ACK goes past
    // it or a D-SACK says the original arrived too (Linux's tcp_process_tlp_ack)
    assert_eq!(p.s.rack().unwrap().tlp.end_seq, Some(20_000));
    let cwnd = p.s.cwnd;
    p.give(1000, done + 10);
    assert_eq!(p.s.rack().unwrap().tlp.end_seq, None);
    assert!(p.s.cwnd < cwnd, "{} vs {cwnd}", p.s.cwnd);
    assert_eq!(p.s.ssthresh, p.s.cwnd);
}

#[test]
fn a_probe_sends_new_data_when_there_is_some() {
    // the whole second window (segments 10 000 to 29 000) is lost: no ACK comes
    // back, the probe sends new data (whatever the window), and its SACK shows
    // the window lost
    let mut p = Path::new(Recovery::Rack, 60_000, &window_lost(10..30));
    p.run();
    assert_eq!((p.s.stats.timeouts, p.s.stats.probes), (0, 1));
    let probe = first_sent(&p, 30_000);
    let resent: Vec<u64> = p.log[probe..].iter().filter(|l| l.2).map(|l| l.1).collect();
    assert_eq!(resent, (10..30).map(|k| k * 1000).collect::<Vec<_>>());
}

/// Segments `range` (in thousands of bytes) lost at their first transmission.
fn window_lost(range: std::ops::Range<u64>) -> Vec<((u64, u32), Fate)> {
    range.map(|k| lost(k * 1000, 1)).collect()
}

/// Where in `p`'s log the segment at `seq` was first sent.
fn first_sent(p: &Path, seq: u64) -> usize {
    p.log.iter().position(|l| l.1 == seq).expect("sent")
}

#[test]
fn with_the_handshakes_rtt_a_lost_first_window_is_probed_before_the_timeout() {
    // the whole first window is lost: no ACK comes back. Without an RTT sample the
    // probe's timeout is the initial RTO, and the timer fires first; with the
    // handshake's sample (`transport.handshake_rtt`) the probe goes after two RTTs,
    // sends new data, and its SACK shows the window lost
    let first = window_lost(0..10);
    let mut cold = Path::new(Recovery::Rack, 30_000, &first);
    cold.run();
    assert_eq!((cold.s.stats.timeouts, cold.s.stats.probes), (1, 0));
    let mut warm = Path::new(Recovery::Rack, 30_000, &first);
    let handshake = 2 * (DELAY + SER);
    warm.s.handshake(handshake);
    assert_eq!(warm.s.rto(), warm.c.min_rto); // the sample leaves the RTO at its floor
    let done = warm.run();
    assert_eq!((warm.s.stats.timeouts, warm.s.stats.probes), (0, 1));
    assert_eq!(warm.log[first_sent(&warm, 10_000)].0, 2 * handshake); // armed when the window left, at 0
    assert!(done < warm.c.min_rto, "done at {done}");
}
