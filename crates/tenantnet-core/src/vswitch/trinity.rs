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
//!   overtook red ones until the gap fills or a timeout (`channels/reseq.rs`).
//! * **Rate control** of R_W (`trinity/rc.rs`), profile `refined` (the default:
//!   `paper` with the departures [`Profile::Refined`] names; among them R_W is cut
//!   at most once per feedback round trip, red packets carrying the shaper's red
//!   epoch, a new one at each cut, so marks on red of an epoch before the last cut
//!   are not applied), `paper` (every interval, on the last feedback: the P/Q sets,
//!   Eqs. 2–6 and anti-trapping, read literally) or `code` (the public module: on
//!   each feedback, from byte percentages over arrival-driven intervals).
//!
//! Channels (`vswitch/channels`, shared with ElasticSwitch) exist for the VM pairs
//! with a pipe guarantee (`[[tenants.pipes]]`, R_G = the pipe: "for pipe models,
//! R_G is simply the input", T:L551-553) or, with `vswitch.pair_guarantees =
//! "hose"`, with a share of the hose guarantees (`vswitch/partition.rs`, Eq. 1),
//! re-partitioned every interval with `"dynamic"` (`channels/gp.rs`).
//! A lane's change from red to green can be deferred by τ (`two_colour.rs`,
//! `vswitch.trinity.tau`, off by default: see [`TrinityParams::tau`]); the `code`
//! profile has no resequencing.

pub mod rc;
mod table;

pub use table::{Profile, TrinityParams, TrinitySpec};

use rc::{code_step, Rate};

use super::channels::{ChannelCfg, ChannelScheme, Channels, OnChannels, ShaperCfg, Tx, Word};
use super::policy::{Cell, ColumnSpec, HostCtx, HostMeasure};
use super::shaper::Shapers;

/// The `trinity` policy of one host: its rate control over its channels.
pub type Trinity = OnChannels<RateControl>;

/// Trinity's rate control of R_W (§III-D) under its profile.
#[derive(Clone, Debug)]
pub struct RateControl {
    p: TrinityParams,
}

impl ChannelScheme for RateControl {
    type Params = TrinityParams;
    type State = Rate;

    /// Its columns in `vm_rates`: the sums over the VM's channels of R_G (the pair
    /// guarantees, re-partitioned with `pair_guarantees = "dynamic"`) and of R_W,
    /// as set at the tick.
    const COLUMNS: &'static [ColumnSpec] = &[
        ColumnSpec {
            name: "rg_gbps",
            other: Cell::Rate(None),
        },
        ColumnSpec {
            name: "rw_gbps",
            other: Cell::Rate(None),
        },
    ];

    fn new(p: &TrinityParams) -> (Self, ChannelCfg) {
        let module = p.profile == Profile::Code;
        let base = ChannelCfg::new(module, p.interval, (p.feedback_size, p.dscp[2]), p.dscp[1]);
        let cfg = ChannelCfg {
            reseq_timeout: p.reseq_timeout,
            word: match p.profile {
                Profile::Refined => Word::PacketsEpoch,
                _ => base.word,
            },
            ..base
        };
        (RateControl { p: p.clone() }, cfg)
    }

    /// A feedback word for channel `i` of this host arrived: `paper` runs the
    /// host's rate control on it at once (the sender's period is the receiver's:
    /// waiting for the sender's own timer would add up to an interval of delay, which
    /// on Fig. 6's set-up cost 20 % of the link), `code` the module's update.
    fn on_feedback(&mut self, ch: &mut Channels<Rate>, ctx: &mut HostCtx, i: usize, word: u64) {
        match self.p.profile {
            Profile::Paper => {
                rc::heard(&mut ch.tx[i], word, true);
                self.control(ch, ctx);
            }
            Profile::Refined => {
                let t = &mut ch.tx[i];
                let epoch = ctx.shapers[t.shaper].colours().map_or(0, |c| c.epoch);
                rc::heard_epoch(t, word, epoch, true);
                self.control(ch, ctx);
            }
            Profile::Code => {
                let t = &mut ch.tx[i];
                let g = t.g / 1_000_000;
                t.st.mbps = code_step(g, t.st.mbps, word, ch.c_mbps);
                ctx.shapers
                    .set_red_rate(ctx.now, t.shaper, t.st.mbps * 1_000_000);
            }
        }
    }

    fn start(&mut self, ch: &mut Channels<Rate>, ctx: &mut HostCtx) {
        let p = &self.p;
        ch.open(ctx, |g, share| {
            // paper: all channels start in P (T:L609); code: R_W = 0 (`tx.h:167`)
            let w0 = match p.profile {
                Profile::Paper | Profile::Refined => share,
                Profile::Code => 0.0,
            };
            let shaper = ShaperCfg {
                rates: (g, w0 as u64),
                bucket: p.bucket,
                priority_below: p.short_threshold,
                dscp: [p.dscp[0], p.dscp[1]],
                tau: p.tau,
            };
            (shaper, Rate::start(g, w0, 0, ()))
        });
    }

    fn tick(&mut self, ch: &mut Channels<Rate>, ctx: &mut HostCtx, m: &HostMeasure) {
        let ended = ch.tick(ctx, m.interval);
        // a new R_G from guarantee partitioning: the green bucket's rate and the
        // weight in Eq. 4
        ch.regrant(ctx, |_, t, ctx| {
            t.st.rc.g = t.g as f64;
            ctx.shapers.set_rate(ctx.now, t.shaper, Some(t.g));
        });
        if ended && self.p.profile != Profile::Code {
            self.control(ch, ctx);
        }
    }

    fn record(&self, ch: &Channels<Rate>, i: usize, out: &mut Vec<Cell>) {
        out.push(Cell::Rate(ch.per_vm(i, |_, t| t.g as f64)));
        let w = |t: &Tx<Rate>| match self.p.profile {
            Profile::Paper | Profile::Refined => t.st.rc.w,
            Profile::Code => (t.st.mbps * 1_000_000) as f64,
        };
        out.push(Cell::Rate(ch.per_vm(i, |_, t| w(t))));
    }
}

impl RateControl {
    /// The paper's rate control over the host's channels, the new R_W into the red
    /// buckets that changed.
    fn control(&self, ch: &mut Channels<Rate>, ctx: &mut HostCtx) {
        let (p, now) = (&self.p, ctx.now);
        let refined = p.profile == Profile::Refined;
        let gains = rc::Gains {
            alpha: p.alpha,
            trap: p.trap_rate_bps as f64,
            hold: p.hold,
            cwr: refined,
            probe: refined.then_some((p.probe_near, p.probe_step)),
            ecn_gain: p.ecn_gain,
            untrap: p.untrap,
            keep_idle: p.keep_idle,
        };
        let epochs = gains.cwr;
        let set = |t: &Tx<Rate>, sh: &mut Shapers| {
            sh.set_red_rate(now, t.shaper, t.st.rc.w as u64);
            if epochs && t.st.rc.cut {
                // red sent from now on is the cut's (the CWR rule's reference)
                sh.next_epoch(t.shaper);
            }
        };
        rc::control(ch, &gains, set, ctx.shapers);
    }
}
