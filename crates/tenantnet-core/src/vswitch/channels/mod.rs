//! Per-VM-pair channels with receiver feedback: the mechanism Trinity and
//! ElasticSwitch share (Trinity §III-B, T:L817-837; its public module's
//! `trinity.c`, `rx.h`, `tx.h`, which runs both schemes).
//!
//! * **Sender**: every VM pair with a guarantee R_G (a pipe, `[[tenants.pipes]]`)
//!   whose source is on this host gets a channel: a two-colour shaper
//!   (`vswitch/two_colour.rs`) that a scheme sets rates on; the scheme keeps its
//!   rate-control state beside it (`S`).
//! * **Receiver**: every such pair into this host gets a receiving context that
//!   counts, per interval, the packets of the counted class (Trinity's red;
//!   ElasticSwitch's every packet, all sent with the same DSCP) and how many arrived
//!   marked CE, and sends them back in a feedback packet: at the end of every
//!   interval for each pair heard from in the last two (`timed`), or when a packet
//!   arrives an interval or more after the interval began (`arrival`, as the
//!   module does, `trinity.c:378-447`). Feedback travels on the reverse pair, past
//!   the shapers, with its own DSCP.
//! * Optionally, per flow, resequencing of green packets that overtook red ones
//!   (`reseq.rs`).
//! * With `vswitch.pair_guarantees = "dynamic"`, ElasticSwitch's guarantee
//!   partitioning every interval (`gp.rs`): each end offers its share, senders
//!   forward theirs in a control packet on the pair, receivers theirs in the
//!   feedback; the scheme applies the new guarantees it is given
//!   ([`Channels::regrant`]).
//! * A scheme's rate control implements [`ChannelScheme`] over its host's
//!   channels; [`OnChannels`] is the host policy it runs as (`scheme.rs`).

mod feedback;
mod gp;
mod reseq;
mod scheme;

pub use feedback::{decode_epoch, decode_paper, RxCounts};
use reseq::Reseq;
pub use scheme::{ChannelScheme, OnChannels};

use super::policy::{ControlMsg, ControlPayload, Egress, HostCtx, Ingress, PairId};
use super::shaper::{Shaper, ShaperId};
use crate::engine::Time;
use crate::net::packet::flags;
use crate::net::{Packet, VmId};

/// When receivers send feedback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// At the end of every interval, for each pair heard from in the last two.
    Timed,
    /// When a packet arrives an interval or more after the interval began.
    Arrival,
}

/// What a receiver puts in its feedback word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Word {
    /// Counted packets marked and counted packets ([`RxCounts::paper_word`]).
    Packets,
    /// The whole percentage of counted bytes marked ([`RxCounts::code_word`]).
    BytePercent,
    /// Counted packets of the newest epoch marked and counted, and that epoch
    /// ([`RxCounts::epoch_word`], Trinity's `refined` profile).
    PacketsEpoch,
}

/// How a scheme's channels measure and report.
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelCfg {
    /// The measurement interval.
    pub interval: Time,
    /// When feedback is sent.
    pub timing: Timing,
    /// What it carries.
    pub word: Word,
    /// A feedback packet's size on the wire, bytes.
    pub feedback_size: u32,
    /// The DSCP of feedback packets.
    pub feedback_dscp: u8,
    /// The DSCP of the packets receivers count (Trinity's red).
    pub counted_dscp: u8,
    /// How long a green packet that overtook red ones is held (0: never).
    pub reseq_timeout: Time,
}

impl ChannelCfg {
    /// The settings of one of the two styles: `module` (the public kernel module:
    /// arrival-driven intervals, the whole percentage of counted bytes marked) or
    /// the paper's (timed intervals, counted packets marked and counted).
    pub fn new(module: bool, interval: Time, feedback: (u32, u8), counted_dscp: u8) -> Self {
        ChannelCfg {
            interval,
            timing: if module {
                Timing::Arrival
            } else {
                Timing::Timed
            },
            word: if module {
                Word::BytePercent
            } else {
                Word::Packets
            },
            feedback_size: feedback.0,
            feedback_dscp: feedback.1,
            counted_dscp,
            reseq_timeout: 0,
        }
    }
}

/// A channel this host sends on, with its scheme's state `S`.
#[derive(Clone, Debug)]
pub struct Tx<S> {
    /// The VM pair.
    pub pair: PairId,
    /// Its sending VM.
    pub src: VmId,
    /// Its shaper.
    pub shaper: ShaperId,
    /// Its guarantee R_G, bit/s.
    pub g: u64,
    /// Whether it sent or held packets in the last interval (timed channels).
    pub active: bool,
    /// Red bytes it sent in the last interval (timed channels).
    pub red_last: u64,
    /// Red bytes it sent in the interval before that.
    pub red_before: u64,
    /// Green and red bytes its shaper had released at the last interval's end.
    sent_at: [u64; 2],
    /// The receiver's last offer for it, bit/s (`u64::MAX`: none, or its guarantee
    /// is not re-partitioned).
    offer_back: u64,
    /// The scheme's state.
    pub st: S,
}

/// A channel this host receives on.
#[derive(Clone, Debug)]
struct Rx {
    pair: PairId,
    /// The pair its feedback goes back on (the channel's reverse).
    back: PairId,
    counts: RxCounts,
    /// Start of the current interval (arrival-driven feedback).
    since: Time,
    /// Intervals since a packet last arrived.
    quiet: u32,
    /// The sender's last offer for it, bit/s (`u64::MAX`: none yet).
    offer_fwd: u64,
    /// This receiver's offer, sent back in the feedback (`u64::MAX`: none).
    offer: u64,
}

/// What the shaper of a new channel looks like.
#[derive(Clone, Copy, Debug)]
pub struct ShaperCfg {
    /// Its green and red rates, bit/s.
    pub rates: (u64, u64),
    /// Depth of each bucket, bytes.
    pub bucket: u64,
    /// A TCP flow's bytes below this go in the priority lane (0: none).
    pub priority_below: u64,
    /// DSCP of green and of red packets.
    pub dscp: [u8; 2],
    /// The colour-transition delay τ (0: none).
    pub tau: Time,
}

/// A host's channels, sending and receiving.
#[derive(Clone, Debug)]
pub struct Channels<S> {
    cfg: ChannelCfg,
    /// Sending channels, by pair.
    pub tx: Vec<Tx<S>>,
    rx: Vec<Rx>,
    /// Time since the last interval ended (the hosts' tick may be finer).
    elapsed: Time,
    /// Resequencing per flow received, by flow id.
    reseq: std::collections::BTreeMap<u32, Reseq>,
    /// C_W = C − Σ B_X over the host's VMs (Trinity's Eq. 2), bit/s (set by `open`).
    pub c_w: f64,
    /// C, the host's capacity, in whole Mb/s (the module's ceiling).
    pub c_mbps: u64,
    /// Sending channels whose guarantee `g` guarantee partitioning changed, for
    /// the scheme to apply ([`regrant`](Self::regrant)).
    regranted: Vec<usize>,
    /// The host's VMs (set by `open`), in the order of its recorded rows.
    mine: Vec<VmId>,
    /// Whether any of its pairs is re-partitioned (`gp.rs`).
    dynamic: bool,
}

/// What a host's channels made of an arriving packet: a feedback word for one of
/// its sending channels, or a packet to handle (not `switch::buffer::Arrival`).
pub enum Heard {
    /// A feedback word for sending channel `.0`.
    Feedback(usize, u64),
    /// A packet, handled as this says.
    Packet(Ingress),
}

impl<S> Channels<S> {
    /// No channels yet.
    pub fn new(cfg: ChannelCfg) -> Self {
        Channels {
            cfg,
            tx: Vec::new(),
            rx: Vec::new(),
            elapsed: 0,
            reseq: Default::default(),
            c_w: 0.0,
            c_mbps: 0,
            regranted: Vec::new(),
            mine: Vec::new(),
            dynamic: false,
        }
    }

    /// The index of this host's sending channel on `pair`.
    fn tx_of(&self, pair: PairId) -> Option<usize> {
        self.tx.binary_search_by_key(&pair, |t| t.pair).ok()
    }

    /// The index of this host's receiving channel on `pair`.
    fn rx_of(&self, pair: PairId) -> Option<usize> {
        self.rx.binary_search_by_key(&pair, |r| r.pair).ok()
    }

    /// The host's C_W and C; a channel for every pair with a guarantee that a VM of
    /// this host sends on, its shaper and state from `make(R_G, share)`, `share`
    /// its Eq. 4 share of C_W were every channel congestion-free (C_W · R_G / Σ R_G
    /// over the host's channels, bit/s); and a receiving context for every such
    /// pair into one.
    pub fn open(&mut self, ctx: &mut HostCtx, mut make: impl FnMut(u64, f64) -> (ShaperCfg, S)) {
        let mine = ctx.mine;
        self.mine = mine.to_vec();
        let guaranteed: u64 = mine.iter().map(|v| ctx.vms[v.idx()].guarantee_bps).sum();
        self.c_w = ctx.capacity_bps.saturating_sub(guaranteed) as f64;
        self.c_mbps = ctx.capacity_bps / 1_000_000;
        let piped: Vec<_> = (ctx.pairs.iter().enumerate())
            .filter_map(|(i, pr)| Some((i as PairId, pr.src?, pr.dst?, pr.guarantee_bps?)))
            .collect();
        let sum_g: u64 = (piped.iter())
            .filter(|c| mine.contains(&c.1))
            .map(|c| c.3)
            .sum();
        for &(pair, src, dst, g) in &piped {
            if mine.contains(&src) {
                let share = if sum_g > 0 {
                    self.c_w * g as f64 / sum_g as f64
                } else {
                    0.0
                };
                let (sc, st) = make(g, share);
                let own = &ctx.shapers[ShaperId::of_vm(src)];
                let sh = Shaper::two_colour(
                    src,
                    sc.rates,
                    (own.limit(), sc.bucket),
                    sc.priority_below,
                    sc.dscp,
                )
                .with_tau(sc.tau);
                self.tx.push(Tx {
                    pair,
                    src,
                    shaper: ctx.shapers.add(sh),
                    g,
                    active: false,
                    red_last: 0,
                    red_before: 0,
                    sent_at: [0; 2],
                    offer_back: u64::MAX,
                    st,
                });
            }
            if mine.contains(&dst) {
                let back = ctx.pairs[pair as usize].reverse;
                let (counts, since, quiet) = (RxCounts::default(), ctx.now, 0);
                self.rx.push(Rx {
                    pair,
                    back,
                    counts,
                    since,
                    quiet,
                    offer_fwd: u64::MAX,
                    offer: u64::MAX,
                });
            }
        }
        let repartitioned = |pair: PairId| ctx.pairs[pair as usize].repartition;
        self.dynamic = (self.tx.iter().map(|t| t.pair))
            .chain(self.rx.iter().map(|r| r.pair))
            .any(repartitioned);
        // made in pair order: both are searched by pair
        debug_assert!(self.tx.windows(2).all(|w| w[0].pair < w[1].pair));
        debug_assert!(self.rx.windows(2).all(|w| w[0].pair < w[1].pair));
    }

    /// Where VM `src`'s packet on `pair` goes: its channel's shaper; feedback
    /// bypasses the shapers (the VM's own passes everything) with the feedback
    /// DSCP (T:L834-837).
    #[inline]
    pub fn egress(&self, pkt: &mut Packet, src: VmId, pair: PairId) -> Egress {
        if pkt.has(flags::CONTROL) {
            pkt.dscp = self.cfg.feedback_dscp;
            pkt.flags |= flags::ECT;
            return Egress::Shaper(ShaperId::of_vm(src));
        }
        Egress::Shaper(self.channel(src, pair))
    }

    /// The shaper VM `src`'s packets on `pair` wait in.
    #[inline]
    pub fn channel(&self, src: VmId, pair: PairId) -> ShaperId {
        self.tx_of(pair)
            .map_or(ShaperId::of_vm(src), |i| self.tx[i].shaper)
    }

    /// A packet arrives for a VM of this host: feedback for one of its sending
    /// channels, or a packet counted (and, TCP data only, perhaps held: a UDP flow
    /// neither minds reordering nor fills the gaps its drops leave) on its receiving
    /// channel.
    pub fn ingress(&mut self, ctx: &mut HostCtx, pkt: &Packet, tcp: bool) -> Heard {
        match pkt.control_payload() {
            Some(ControlPayload::Offer { offer }) => {
                // a sender's offer, on the pair it is about
                if let Some(i) = self.rx_of(pkt.pair) {
                    self.rx[i].offer_fwd = offer;
                }
                return Heard::Packet(Ingress::Consumed);
            }
            Some(ControlPayload::Feedback { word, offer }) => {
                // feedback travels on the reverse of the channel it is about
                return match self.tx_of(ctx.pairs[pkt.pair as usize].reverse) {
                    Some(i) => {
                        self.tx[i].offer_back = offer;
                        Heard::Feedback(i, word)
                    }
                    None => Heard::Packet(Ingress::Consumed),
                };
            }
            None => {}
        }
        let Some(i) = self.rx_of(pkt.pair) else {
            return Heard::Packet(Ingress::Deliver);
        };
        let arrival = self.cfg.timing == Timing::Arrival;
        if arrival
            && ctx.now - self.rx[i].since >= self.cfg.interval
            && self.rx[i].counts.packets > 0
        {
            self.send_feedback(ctx, i);
        }
        let r = &mut self.rx[i];
        if arrival && r.counts.packets == 0 {
            r.since = ctx.now;
        }
        let counted = pkt.dscp == self.cfg.counted_dscp;
        r.counts
            .add(pkt.size, counted, pkt.has(flags::CE), pkt.epoch);
        r.quiet = 0;
        if self.cfg.reseq_timeout == 0 || pkt.has(flags::ACK) || !tcp {
            return Heard::Packet(Ingress::Deliver);
        }
        let st = self.reseq.entry(pkt.flow.0).or_default();
        st.arrive(pkt, !counted, ctx.now, self.cfg.reseq_timeout, ctx.release);
        Heard::Packet(Ingress::Consumed)
    }

    /// Receiving context `i` sends its counts back and starts a new interval.
    fn send_feedback(&mut self, ctx: &mut HostCtx, i: usize) {
        let r = &mut self.rx[i];
        let word = match self.cfg.word {
            Word::Packets => r.counts.paper_word(),
            Word::BytePercent => r.counts.code_word(),
            Word::PacketsEpoch => r.counts.epoch_word(),
        };
        ctx.control.push(ControlMsg {
            pair: r.back,
            size: self.cfg.feedback_size,
            payload: ControlPayload::Feedback {
                word,
                offer: r.offer,
            },
        });
        r.counts = RxCounts::default();
        r.since = ctx.now;
    }

    /// The hosts' tick, `dt` after the last: releases held packets past their
    /// timeout and, at the end of an interval, measures the sending channels
    /// (`active`, `red_last`), re-partitions guarantees if they are dynamic and,
    /// with timed feedback, sends it; whether a timed interval ended so.
    pub fn tick(&mut self, ctx: &mut HostCtx, dt: Time) -> bool {
        for st in self.reseq.values_mut() {
            st.expire(ctx.now, self.cfg.reseq_timeout, ctx.release);
        }
        self.elapsed += dt;
        if self.elapsed < self.cfg.interval {
            return false;
        }
        self.elapsed = 0;
        self.measure(ctx);
        self.partition(ctx);
        let timed = self.cfg.timing == Timing::Timed;
        for i in 0..self.rx.len() {
            if timed && self.rx[i].quiet < 2 {
                self.send_feedback(ctx, i);
            }
            self.rx[i].quiet = self.rx[i].quiet.saturating_add(1);
        }
        timed
    }

    /// Each sending channel's bytes over the interval that ended.
    fn measure(&mut self, ctx: &HostCtx) {
        for t in &mut self.tx {
            let sh = &ctx.shapers[t.shaper];
            let sent = sh.colours().map_or([0; 2], |c| c.sent);
            let moved = sent[0] + sent[1] - t.sent_at[0] - t.sent_at[1];
            t.active = moved > 0 || sh.held() > 0;
            t.red_before = t.red_last;
            t.red_last = sent[1] - t.sent_at[1];
            t.sent_at = sent;
        }
    }

    /// The sum of `f` over the sending channels of the host's `i`-th VM, bit/s
    /// (`None`: it has none), for the recorded columns.
    pub fn per_vm(&self, i: usize, f: impl Fn(usize, &Tx<S>) -> f64) -> Option<f64> {
        let v = self.mine[i];
        let mine = (self.tx.iter().enumerate()).filter(|(_, t)| t.src == v);
        mine.fold(None, |acc, (i, t)| Some(acc.unwrap_or(0.0) + f(i, t)))
    }

    /// Hands each sending channel whose guarantee `g` changed to `apply`, with its
    /// index.
    pub fn regrant(
        &mut self,
        ctx: &mut HostCtx,
        mut apply: impl FnMut(usize, &mut Tx<S>, &mut HostCtx),
    ) {
        for i in std::mem::take(&mut self.regranted) {
            apply(i, &mut self.tx[i], ctx);
        }
    }
}
