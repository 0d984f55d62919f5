//! Trinity (Hu et al., IEEE TCC 2018): bandwidth guarantees, work conservation
//! and low latency for short messages at once, from the hypervisor.
//!
//! * **Sender** (§III-B): one channel per VM pair with a guarantee R_G, a
//!   two-colour shaper (`vswitch/two_colour.rs`): green tokens at R_G, red at R_W;
//!   a TCP flow's first `short_threshold` bytes are short (green only, served
//!   first), the rest long (green if there is a token and no short packet waits,
//!   else red); every packet leaves with its colour's DSCP (green 1, red 0) and ECT.
//!   Switches serve green before red (two strict-priority queues) and mark red
//!   with ECN: the `trinity` preset sets up switch ports so
//!   (`scenario/build/presets.rs`).
//! * **Receiver** (§III-C, T:L817-827): per channel, counts red packets and those
//!   marked CE, and sends the counts back in a 64-byte feedback packet with the
//!   feedback DSCP, bypassing the shapers; per flow, holds green packets that
//!   overtook red ones until the gap fills or a timeout (`trinity/reseq.rs`).
//! * **Rate control** of R_W (`trinity/rc.rs`), profile `paper` (every interval,
//!   on the last feedback: the P/Q sets, Eqs. 2–6 and anti-trapping) or `code`
//!   (the public module: on each feedback, from byte percentages over
//!   arrival-driven intervals).
//!
//! Channels exist for the VM pairs with a pipe guarantee (`[[tenants.pipes]]`,
//! R_G = the pipe: "for pipe models, R_G is simply the input", T:L551-553). Not
//! yet modelled: guarantee partitioning of hose guarantees and the
//! colour-transition delay τ (the `code` profile has neither, nor resequencing).

mod feedback;
pub mod rc;
mod reseq;
mod table;

pub use table::{Profile, TrinityParams, TrinitySpec};

use feedback::{decode_paper, RxCounts};
use rc::{code_step, paper_step, RcChannel};
use reseq::Reseq;

use super::policy::PairId;
use super::policy::{ColumnSpec, ControlMsg, Egress, HostCtx, HostMeasure, HostPolicy, Ingress};
use super::shaper::{Shaper, ShaperId};
use crate::engine::Time;
use crate::net::packet::flags;
use crate::net::{Packet, VmId};

/// A channel this host sends on.
#[derive(Clone, Debug)]
struct Tx {
    pair: PairId,
    shaper: ShaperId,
    rc: RcChannel,
    /// Green and red bytes its shaper had released at the last tick.
    sent_at_tick: [u64; 2],
    /// Red bytes it released in the last full interval.
    red_last: u64,
    /// R_W in whole Mb/s (`code`).
    w_mbps: u64,
}

/// A channel this host receives on.
#[derive(Clone, Debug)]
struct Rx {
    pair: PairId,
    /// The pair its feedback goes back on (the channel's reverse).
    back: PairId,
    counts: RxCounts,
    /// Start of the current interval (`code`: arrival-driven).
    since: Time,
    /// Ticks since a packet last arrived (`paper`).
    quiet: u32,
}

/// The `trinity` policy of one host.
#[derive(Clone, Debug)]
pub struct Trinity {
    p: TrinityParams,
    tx: Vec<Tx>,
    rx: Vec<Rx>,
    /// C_W = C − Σ B_X over the host's VMs (Eq. 2), bit/s.
    c_w: f64,
    /// C in whole Mb/s (the `code` profile's ceiling).
    c_mbps: u64,
    /// Time since the last rate-control interval (the hosts' tick may be finer).
    elapsed: Time,
    /// Resequencing per flow received, by flow id.
    reseq: std::collections::BTreeMap<u32, Reseq>,
}

impl Trinity {
    /// It records nothing per VM (its state is per channel).
    pub const COLUMNS: &'static [ColumnSpec] = &[];

    /// The policy for a host.
    pub fn new(p: &TrinityParams, _vms: &[VmId]) -> Self {
        Trinity {
            p: p.clone(),
            tx: Vec::new(),
            rx: Vec::new(),
            c_w: 0.0,
            c_mbps: 0,
            elapsed: 0,
            reseq: Default::default(),
        }
    }

    /// The index of this host's sending channel on `pair`.
    fn tx_of(&self, pair: PairId) -> Option<usize> {
        self.tx.binary_search_by_key(&pair, |t| t.pair).ok()
    }

    /// The index of this host's receiving context on `pair`.
    fn rx_of(&self, pair: PairId) -> Option<usize> {
        self.rx.binary_search_by_key(&pair, |r| r.pair).ok()
    }

    /// A channel for every pair with a pipe that a VM of this host sends on, and a
    /// receiving context for every such pair into one.
    fn open_channels(&mut self, ctx: &mut HostCtx) {
        let mine = ctx.mine;
        let piped = ctx
            .pairs
            .iter()
            .enumerate()
            .filter_map(|(i, pr)| Some((i as PairId, pr.src?, pr.dst?, pr.guarantee_bps?)));
        let piped: Vec<_> = piped.collect();
        let sum_g: f64 = piped
            .iter()
            .filter(|c| mine.contains(&c.1))
            .map(|c| c.3 as f64)
            .sum();
        for &(pair, src, dst, g) in &piped {
            if mine.contains(&src) {
                let w0 = match self.p.profile {
                    Profile::Paper => self.c_w * g as f64 / sum_g,
                    Profile::Code => 0.0,
                };
                let own = &ctx.shapers[ShaperId::of_vm(src)];
                let mut sh = Shaper::two_colour(
                    src,
                    (g, w0 as u64),
                    (own.limit(), self.p.bucket),
                    self.p.short_threshold,
                    [self.p.dscp[0], self.p.dscp[1]],
                );
                sh.service = own.service;
                self.tx.push(Tx {
                    pair,
                    shaper: ctx.shapers.add(sh),
                    rc: RcChannel {
                        g: g as f64,
                        w: w0,
                        ..Default::default()
                    },
                    sent_at_tick: [0; 2],
                    red_last: 0,
                    w_mbps: 0,
                });
            }
            if mine.contains(&dst) {
                self.rx.push(Rx {
                    pair,
                    back: ctx.pairs[pair as usize].reverse,
                    counts: RxCounts::default(),
                    since: ctx.now,
                    quiet: 0,
                });
            }
        }
    }

    /// A feedback word for channel `i` of this host arrived: `paper` runs the
    /// host's rate control on it at once (the sender's period is the receiver's:
    /// waiting for the sender's own timer would add up to an interval of delay, which
    /// on Fig. 6's set-up cost 20 % of the link), `code` the module's update.
    fn on_feedback(&mut self, ctx: &mut HostCtx, i: usize, word: u64) {
        let t = &mut self.tx[i];
        match self.p.profile {
            Profile::Paper => {
                let (beta, no_red) = decode_paper(word);
                t.rc.beta = beta;
                t.rc.trapped = no_red && t.red_last > 0;
                t.rc.heard = true;
                self.control(ctx);
            }
            Profile::Code => {
                let g = (t.rc.g / 1e6) as u64;
                t.w_mbps = code_step(g, t.w_mbps, word, self.c_mbps);
                ctx.shapers
                    .set_red_rate(ctx.now, t.shaper, t.w_mbps * 1_000_000);
            }
        }
    }

    /// Receiving context `i` sends its counts back and starts a new interval.
    fn send_feedback(&mut self, ctx: &mut HostCtx, i: usize) {
        let r = &mut self.rx[i];
        let word = match self.p.profile {
            Profile::Paper => r.counts.paper_word(),
            Profile::Code => r.counts.code_word(),
        };
        ctx.control.push(ControlMsg {
            pair: r.back,
            size: self.p.feedback_size,
            word,
        });
        r.counts = RxCounts::default();
        r.since = ctx.now;
    }

    /// Every interval (`paper`): which sending channels were active and how much
    /// red each sent, for the activity sets and the anti-trapping check.
    fn measure(&mut self, ctx: &HostCtx) {
        for t in &mut self.tx {
            let sh = &ctx.shapers[t.shaper];
            let sent = sh.colours().map_or([0; 2], |c| c.sent);
            let moved = sent[0] + sent[1] - t.sent_at_tick[0] - t.sent_at_tick[1];
            t.rc.active = moved > 0 || sh.held() > 0;
            t.red_last = sent[1] - t.sent_at_tick[1];
            t.sent_at_tick = sent;
        }
    }

    /// The paper's rate control over the host's channels ([`paper_step`]), the new
    /// R_W into the red buckets that changed.
    fn control(&mut self, ctx: &mut HostCtx) {
        let mut chans: Vec<RcChannel> = self.tx.iter().map(|t| t.rc).collect();
        paper_step(
            &mut chans,
            self.c_w,
            self.p.alpha,
            self.p.trap_rate_bps as f64,
        );
        for (t, mut c) in self.tx.iter_mut().zip(chans) {
            c.heard = false;
            if c.w != t.rc.w {
                ctx.shapers.set_red_rate(ctx.now, t.shaper, c.w as u64);
            }
            t.rc = c;
        }
    }
}

impl HostPolicy for Trinity {
    fn start(&mut self, ctx: &mut HostCtx) {
        let guaranteed: u64 = ctx
            .mine
            .iter()
            .map(|v| ctx.vms[v.idx()].guarantee_bps)
            .sum();
        self.c_w = ctx.capacity_bps.saturating_sub(guaranteed) as f64;
        self.c_mbps = ctx.capacity_bps / 1_000_000;
        self.open_channels(ctx);
        // made in pair order: both are searched by pair
        debug_assert!(self.tx.windows(2).all(|w| w[0].pair < w[1].pair));
        debug_assert!(self.rx.windows(2).all(|w| w[0].pair < w[1].pair));
    }

    #[inline]
    fn egress(&mut self, pkt: &mut Packet, src: VmId, pair: PairId) -> Egress {
        if pkt.has(flags::CONTROL) {
            // feedback bypasses the shapers, in the high-priority class (T:L834-837)
            pkt.dscp = self.p.dscp[2];
            pkt.flags |= flags::ECT;
            return Egress::Shaper(ShaperId::of_vm(src));
        }
        Egress::Shaper(self.channel(src, pair))
    }

    #[inline]
    fn channel(&self, src: VmId, pair: PairId) -> ShaperId {
        self.tx_of(pair)
            .map_or(ShaperId::of_vm(src), |i| self.tx[i].shaper)
    }

    #[inline]
    fn uses_ingress(&self) -> bool {
        true
    }

    fn ingress(&mut self, ctx: &mut HostCtx, pkt: &Packet, _dst: VmId) -> Ingress {
        if pkt.has(flags::CONTROL) {
            // feedback travels on the reverse of the channel it is about
            if let Some(i) = self.tx_of(ctx.pairs[pkt.pair as usize].reverse) {
                self.on_feedback(ctx, i, pkt.seq);
            }
            return Ingress::Consumed;
        }
        let Some(i) = self.rx_of(pkt.pair) else {
            return Ingress::Deliver;
        };
        if self.p.profile == Profile::Code
            && ctx.now - self.rx[i].since >= self.p.interval
            && self.rx[i].counts.packets > 0
        {
            self.send_feedback(ctx, i);
        }
        let r = &mut self.rx[i];
        if self.p.profile == Profile::Code && r.counts.packets == 0 {
            r.since = ctx.now;
        }
        let red = pkt.dscp == self.p.dscp[1];
        r.counts.add(pkt.size, red, pkt.has(flags::CE));
        r.quiet = 0;
        if self.p.reseq_timeout == 0 || pkt.has(flags::ACK) {
            return Ingress::Deliver;
        }
        let st = self.reseq.entry(pkt.flow.0).or_default();
        st.arrive(pkt, !red, ctx.now, self.p.reseq_timeout, ctx.release);
        Ingress::Consumed
    }

    fn tick(&mut self, ctx: &mut HostCtx, m: &HostMeasure) {
        for st in self.reseq.values_mut() {
            st.expire(ctx.now, self.p.reseq_timeout, ctx.release);
        }
        self.elapsed += m.interval;
        if self.p.profile != Profile::Paper || self.elapsed < self.p.interval {
            return;
        }
        self.elapsed = 0;
        // receivers: feedback for every channel heard from in the last 2 intervals
        for i in 0..self.rx.len() {
            if self.rx[i].quiet < 2 {
                self.send_feedback(ctx, i);
            }
            self.rx[i].quiet += 1;
        }
        self.measure(ctx);
        self.control(ctx);
    }
}
