//! ElasticSwitch (Popa et al., SIGCOMM 2013) as Trinity's evaluation runs it, its
//! baseline: every VM pair with a guarantee G (a pipe, `[[tenants.pipes]]`) is
//! rate-limited at a rate R ≥ G that grows while its path is uncongested and falls
//! on ECN marks. The channels, the receivers' counts and the feedback packets are
//! Trinity's (`vswitch/channels`), with one colour: every packet leaves with DSCP 0
//! and ECT, one bucket at R (its second bucket never fills again after its first
//! 32 KiB), receivers count every packet.
//!
//! * `trinity-code` (C-ES, spec §2.1): the public module compiled without
//!   `-DTRINITY` (`trinity.c:360-371`): on a feedback with any marked byte R = G,
//!   else R grows by ⌊10 % of the gap to the NIC⌋, at least 10 Mb/s, in whole Mb/s;
//!   the receiver reports the percentage of all bytes marked over arrival-driven
//!   5 ms intervals. No guarantee partitioning, hold-increase, rate-caution,
//!   headroom or loss detection.
//! * `aggressive` (A-ES, spec §2.2, T:L998-1001): R = G + W, W under Trinity's
//!   paper controller (P/Q, Eqs. 2-6; no anti-trapping: there is no red queue to
//!   trap packets in) on the marked fraction of all packets.
//!
//! * `paper` (spec §2.3, `elasticswitch/ra.rs`): the ES paper's rate allocation as
//!   far as its sources describe it, R ≥ B cut on the marked fraction of a pair's
//!   packets and raised by weighted steps, with headroom, hold-increase and
//!   rate-caution as knobs; the constants are our choice (spec §5 #14: the paper's
//!   could not be verified). Its guarantee partitioning is
//!   `vswitch.pair_guarantees = "dynamic"` (`channels/gp.rs`), for every profile.

pub mod ra;
mod table;

pub use table::{EsParams, EsProfile, EsSpec};

use ra::{ra_step, Knobs, PairRa};

use super::channels::{
    decode_paper, ChannelCfg, ChannelScheme, Channels, OnChannels, ShaperCfg, Tx,
};
use super::policy::{Cell, ColumnSpec, HostCtx, HostMeasure};
use super::shaper::Shapers;
use super::trinity::rc::{self, Rate};

/// The module's DSCP of every ElasticSwitch packet (`tbf.h:101`) and of its
/// feedback (`params.h:10`).
const DSCP: u8 = 0;
const FEEDBACK_DSCP: u8 = 2;

/// C-ES's R (Mb/s) after a feedback of `f` % marked bytes, for a pair with
/// guarantee `g` Mb/s, a NIC of `ceiling` Mb/s, closing `permille` ‰ of the gap
/// per congestion-free interval, at least `least` Mb/s (`trinity.c:362,370`).
pub fn ces_step(g: u64, r: u64, f: u64, ceiling: u64, permille: u64, least: u64) -> u64 {
    if f != 0 {
        g
    } else if r < ceiling {
        r + ((ceiling - r) * permille / 1000).max(least)
    } else {
        r
    }
}

/// A sending channel's state under ElasticSwitch: the module's (A-ES's W under the
/// paper's controller, C-ES's R in whole Mb/s) and the `paper` profile's RA state.
pub type EsPair = Rate<PairRa>;

/// The `elasticswitch` policy of one host: its rate allocation over its channels.
pub type ElasticSwitch = OnChannels<RateAllocation>;

/// ElasticSwitch's rate allocation (RA) of each pair's limiter under its profile.
#[derive(Clone, Debug)]
pub struct RateAllocation {
    p: EsParams,
}

impl ChannelScheme for RateAllocation {
    type Params = EsParams;
    type State = EsPair;

    /// Its column in `vm_rates`: the sum of the VM's pair limiters' rates R, as
    /// set at the tick.
    const COLUMNS: &'static [ColumnSpec] = &[ColumnSpec {
        name: "limit_gbps",
        other: Cell::Rate(None),
    }];

    fn new(p: &EsParams) -> (Self, ChannelCfg) {
        let module = p.profile == EsProfile::TrinityCode;
        let cfg = ChannelCfg::new(module, p.interval, (p.feedback_size, FEEDBACK_DSCP), DSCP);
        (RateAllocation { p: p.clone() }, cfg)
    }

    /// A feedback word for channel `i` of this host arrived.
    fn on_feedback(&mut self, ch: &mut Channels<EsPair>, ctx: &mut HostCtx, i: usize, word: u64) {
        match self.p.profile {
            EsProfile::TrinityCode => {
                let t = &mut ch.tx[i];
                let permille = (self.p.increase * 1000.0).round() as u64;
                let least = self.p.min_increase_mbps;
                let g = t.g / 1_000_000;
                t.st.mbps = ces_step(g, t.st.mbps, word, ch.c_mbps, permille, least);
                // never below the guarantee, which need not be whole Mb/s
                let r = limit(self.p.profile, t);
                ctx.shapers.set_rate(ctx.now, t.shaper, Some(r));
            }
            EsProfile::Aggressive => {
                rc::heard(&mut ch.tx[i], word, false);
                self.aggressive(ch, ctx);
            }
            EsProfile::Paper => {
                let (beta, _) = decode_paper(word);
                let (knobs, c) = (self.knobs(), ch.c_mbps as f64 * 1e6);
                let t = &mut ch.tx[i];
                t.st.own = ra_step(t.st.own, t.g as f64, beta, ctx.now, c, &knobs);
                let r = limit(self.p.profile, t);
                ctx.shapers.set_rate(ctx.now, t.shaper, Some(r));
            }
        }
    }

    fn start(&mut self, ch: &mut Channels<EsPair>, ctx: &mut HostCtx) {
        let p = &self.p;
        ch.open(ctx, |g, share| {
            // C-ES (and paper) start at the guarantee (`tx.h:172-173`); A-ES in P (Eq. 4)
            let w0 = match p.profile {
                EsProfile::TrinityCode | EsProfile::Paper => 0.0,
                EsProfile::Aggressive => share,
            };
            let shaper = ShaperCfg {
                rates: (g + w0 as u64, 0),
                bucket: p.bucket,
                priority_below: 0,
                dscp: [DSCP, DSCP],
                tau: 0,
            };
            let ra = PairRa {
                r: g as f64,
                hold_until: 0,
            };
            (shaper, Rate::start(g, w0, g / 1_000_000, ra))
        });
    }

    fn tick(&mut self, ch: &mut Channels<EsPair>, ctx: &mut HostCtx, m: &HostMeasure) {
        let ended = ch.tick(ctx, m.interval);
        // a new guarantee from GP: the limiter's floor (and A-ES's weight)
        let profile = self.p.profile;
        ch.regrant(ctx, |_, t, ctx| {
            t.st.rc.g = t.g as f64;
            let r = limit(profile, t);
            ctx.shapers.set_rate(ctx.now, t.shaper, Some(r));
        });
        if ended && self.p.profile == EsProfile::Aggressive {
            self.aggressive(ch, ctx);
        }
    }

    fn record(&self, ch: &Channels<EsPair>, i: usize, out: &mut Vec<Cell>) {
        let r = |_: usize, t: &Tx<EsPair>| limit(self.p.profile, t) as f64;
        out.push(Cell::Rate(ch.per_vm(i, r)));
    }
}

impl RateAllocation {
    /// The `paper` profile's knobs.
    fn knobs(&self) -> Knobs {
        Knobs {
            increase: self.p.weighted_increase,
            headroom: self.p.headroom,
            hold: self.p.hold_increase,
            caution: self.p.rate_caution,
        }
    }

    /// A-ES: Trinity's paper controller over W, each pair's limiter at G + W.
    fn aggressive(&self, ch: &mut Channels<EsPair>, ctx: &mut HostCtx) {
        let now = ctx.now;
        let set = |t: &Tx<EsPair>, sh: &mut Shapers| {
            sh.set_rate(now, t.shaper, Some(aggressive_limit(t)))
        };
        let gains = rc::Gains {
            alpha: self.p.alpha,
            trap: 0.0,
            hold: true,
            cwr: false,
            probe: None,
            ecn_gain: 0.0,
            untrap: false,
            keep_idle: false,
        };
        rc::control(ch, &gains, set, ctx.shapers);
    }
}

/// A-ES's limiter rate, G + W, bit/s.
fn aggressive_limit(t: &Tx<EsPair>) -> u64 {
    t.g + t.st.rc.w as u64
}

/// A channel's limiter rate R under `profile`, bit/s: C-ES's whole Mb/s, A-ES's
/// G + W, the paper's R, never below G.
fn limit(profile: EsProfile, t: &Tx<EsPair>) -> u64 {
    match profile {
        EsProfile::Aggressive => aggressive_limit(t),
        EsProfile::TrinityCode => (t.st.mbps * 1_000_000).max(t.g),
        EsProfile::Paper => (t.st.own.r as u64).max(t.g),
    }
}

#[cfg(test)]
mod tests {
    use super::ces_step;

    #[test]
    fn ces_falls_to_the_guarantee_on_any_mark_or_closes_a_tenth_of_the_gap() {
        assert_eq!(ces_step(100, 500, 1, 960, 100, 10), 100);
        assert_eq!(ces_step(100, 100, 0, 960, 100, 10), 186); // + ⌊860 / 10⌋
        assert_eq!(ces_step(100, 900, 0, 960, 100, 10), 910); // + max(6, 10)
        assert_eq!(ces_step(100, 960, 0, 960, 100, 10), 960);
    }
}
