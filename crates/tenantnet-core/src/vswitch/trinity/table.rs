//! Trinity's table of the scenario, `[vswitch.trinity]`: the profile and every
//! constant, optional, with the paper's or the public module's values as defaults
//! (spec §1.14), checked when resolved into [`TrinityParams`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::Time;
use crate::units::{Rate, Size, TimeSpan};
use crate::vswitch::policy::PolicyTable;

crate::kinds::named_kinds! {
    /// Which rate controller Trinity runs (`vswitch.trinity.profile`).
    Profile {
        /// The default: the paper's controller where a packet model shows the literal
        /// reading defeats the paper's own goal, each departure named and measured
        /// (docs/guide/tenants.md): R_W is cut at most once per feedback round trip,
        /// marks on red packets sent before the last cut not applied (DCTCP's and
        /// Linux's CWR rule; red packets carry the red rate's epoch, a new one at
        /// each cut), beside `paper`'s hold of the interval right after a cut; Eq. 5
        /// cuts by β averaged as DCTCP averages its α (`ecn_gain`), from 1 at each new
        /// episode; near the R_W of its last cut a caution channel grows by
        /// `probe_step` · R_G an interval (Eq. 6 up to `probe_near` of it), so the
        /// spare goes in proportion to the guarantees across hosts as Eq. 4 shares it
        /// within one; a trapped channel whose red is delivered again leaves the trap
        /// at half the R_W it was trapped at; an idle caution channel keeps its R_W.
        Refined = "refined",
        /// The paper's (§III-C) read literally: congestion-free and congestion-caution
        /// sets, Eqs. 2–6, β the fraction of red packets marked per interval,
        /// anti-trapping.
        Paper = "paper",
        /// The public kernel module's (baiwei0427/Trinity, `trinity.c`): each
        /// feedback cuts R_W by F/200 or closes half the gap to the NIC, F the
        /// percentage of red bytes marked over an arrival-driven interval.
        Code = "code",
    }
}

/// Every Trinity constant.
#[derive(Clone, Debug, PartialEq)]
pub struct TrinityParams {
    /// The rate controller.
    pub profile: Profile,
    /// The rate-control interval [5 ms] (T:L938).
    pub interval: Time,
    /// A TCP flow's first bytes below this are short: green only, in the priority
    /// lane [100 KiB] (`params.h:29`; the paper says "a few or tens of KBs").
    pub short_threshold: u64,
    /// α of Eq. 6, the increase factor of a congestion-caution channel [0.25].
    /// The paper gives no value (T:L672-677); the module's `TRINITY_ALPHA` (0.5)
    /// closes half a gap, a different rule. Chosen on Fig. 6 at N = 10 (wire Mb/s,
    /// A2 / link, with `hold`): α = 0.5 435 / 874 (100/100) and 498 / 944
    /// (300/300); 0.25 481 / 928 and 487 / 932; 0.1 487 / 907 and 481 / 947.
    pub alpha: f64,
    /// Whether marks reported in the interval right after a cut (Eq. 5) are not
    /// applied again [paper: true]. That interval's red packets were marked by the
    /// queue the cut is draining; applying them cuts twice for one overshoot (β is
    /// near 1 in both), and a 1 Gb/s link idles until the ×(1 + α) increase
    /// recovers. DCTCP, which Eq. 5 follows, cuts at most once per window of data.
    /// The paper is silent; read literally (`false`), Fig. 6 at N = 10 gets A2 389
    /// and 408 Mb/s with the link 79 % and 88 % used.
    pub hold: bool,
    /// Depth of each bucket, green and red [32 KiB] (`params.h:16`).
    pub bucket: u64,
    /// R_W of a channel found trapped ["10Kbps"] (T:L728).
    pub trap_rate_bps: u64,
    /// Size of a feedback packet on the wire [64 B] (T:L824).
    pub feedback_size: u32,
    /// DSCP of green packets (1), red packets (0) and feedback (paper: green's;
    /// code: 2), `params.h:10,17-18`.
    pub dscp: [u8; 3],
    /// How long the receiver holds a green packet that overtook red ones [paper:
    /// 20 ms; code: 0, none]; 0 turns resequencing off. The paper gives no value;
    /// the spec suggested 1 ms, but the timeout must outlast the red queue's delay,
    /// which a shared buffer lets grow to milliseconds: on Fig. 6's set-up at
    /// 300/300 Mb/s, 1 s, no resequencing gave 8 195 spurious retransmissions
    /// (nothing is dropped), 1 ms 5 437 (it releases held packets out of order),
    /// 5 ms and 20 ms 147.
    pub reseq_timeout: Time,
    /// The colour-transition delay τ [0: none]: a long-flow lane that sent red
    /// turns green only τ later (`two_colour.rs`). The paper gives no value
    /// (T:L747); the spec suggested 500 µs, about twice the time a 30 KB red queue
    /// takes to drain at 1 Gb/s. Measured on Fig. 6 at N = 10 (A2 / B2 wire Mb/s,
    /// ideal 500 each): τ = 0 483 / 441 (100/100) and 485 / 445 (300/300);
    /// 100 µs 471 / 453 and 451 / 481; 200 µs 505 / 422 and 469 / 459; 500 µs
    /// 539 / 397 and 402 / 529. The link's use is unchanged (92-94 %) and both
    /// guarantees hold, but a lane that is always backlogged (B's ten connections)
    /// meets the deferral at every turn to green and A's single connection seldom,
    /// which skews the spare away from an even split; so τ is off by default.
    pub tau: Time,
    /// With the `refined` profile: a caution channel at or above this fraction of
    /// its R_W before the last cut grows by `probe_step` · R_G an interval, and below
    /// it by Eq. 6's × (1 + α) but not past it [0.9]. Eq. 6 alone brings R_W back to
    /// R_P in a few intervals and the P/Q cycle repeats the overshoot that was just
    /// cut; growing slowly where the channel was last marked (as BIC/CUBIC do near
    /// W_max) damps it. Measured effects in docs/guide/tenants.md.
    pub probe_near: f64,
    /// The slow growth's step, a fraction of the channel's R_G an interval [0.1; see
    /// `probe_near`]. In proportion to R_G, so that channels on different hosts,
    /// cut alike by one queue's marks, settle with the spare in proportion to their
    /// guarantees (a step in proportion to C_W gave the most to the smallest
    /// guarantee: Jain's index of spare/guarantee 0.85 with 0.02 · C_W, 0.97 with
    /// 0.1 · R_G, on twelve random cases before `ecn_gain` was added).
    pub probe_step: f64,
    /// DCTCP's gain g: Eq. 5 cuts by the average of β over the channel's feedback,
    /// α ← (1 − g)·α + g·β, from α = 1 at the start and at each entry into Q
    /// (Linux's DCTCP starts at 1), instead of the last interval's β [refined: 1/16;
    /// 0: off]. A standing queue a little too long marks every red packet of an
    /// interval, and β = 1 halves R_W for an overshoot of a few per cent.
    pub ecn_gain: f64,
    /// Whether a trapped channel whose red is delivered again leaves the trap at half
    /// the R_W it was trapped at, instead of growing from the trap rate by Eq. 6
    /// [refined: true]. The paper's trap test cannot tell red starved by green from
    /// red late behind a deep red queue (the channel's own, at start); a channel
    /// trapped by the latter stays near 10 Kb/s for tens of intervals while its
    /// neighbours take the spare.
    pub untrap: bool,
    /// Whether a caution channel that fell idle for an interval keeps its R_W and
    /// its place in Q, instead of being offered its whole Eq. 4 share for when it
    /// returns [refined: true]: a TCP stall of one interval then does not come back
    /// as a burst at the host's spare capacity (as TCP keeps its window after an
    /// idle period no larger than before it, RFC 7661).
    pub keep_idle: bool,
}

impl TrinityParams {
    /// The defaults of `profile`.
    pub fn of(profile: Profile) -> Self {
        TrinityParams {
            profile,
            interval: 5_000_000_000,
            short_threshold: 100 * 1024,
            alpha: 0.25,
            // `refined` keeps the hold beside its CWR rule: without it Fig. 6 at
            // N = 10 used 94.7 / 94.8 % of the link instead of 97.1 / 97.7 %
            // (100/100, 300/300 Mb/s) and 31 of 80 random cases failed, not 0
            hold: profile != Profile::Code,
            bucket: 32 * 1024,
            trap_rate_bps: 10_000,
            feedback_size: 64,
            dscp: [1, 0, if profile == Profile::Code { 2 } else { 1 }],
            reseq_timeout: if profile == Profile::Code {
                0
            } else {
                20_000_000_000
            },
            tau: 0,
            probe_near: 0.9,
            probe_step: 0.1,
            ecn_gain: if profile == Profile::Refined {
                1.0 / 16.0
            } else {
                0.0
            },
            untrap: profile == Profile::Refined,
            keep_idle: profile == Profile::Refined,
        }
    }
}

impl Default for TrinityParams {
    fn default() -> Self {
        TrinityParams::of(Profile::default())
    }
}

/// Trinity's constants; every key optional, defaults in brackets.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrinitySpec {
    /// The rate controller: `refined` (the paper's, with the departures its docs name), `paper` (§III-C read literally) or `code` (the public kernel module) ["refined"].
    pub profile: Option<Profile>,
    /// The rate-control interval ["5ms"]; a whole multiple of `vswitch.interval`,
    /// which follows it when not given.
    pub interval: Option<TimeSpan>,
    /// Bytes of a TCP flow sent green in the priority lane before it counts as long ["100KiB"].
    pub short_threshold: Option<Size>,
    /// α of Eq. 6 [0.25].
    pub alpha: Option<f64>,
    /// Whether the marks reported right after a cut are not applied again [true;
    /// the code profile has no such rule].
    pub hold: Option<bool>,
    /// Depth of the green and of the red bucket ["32KiB"].
    pub bucket: Option<Size>,
    /// R_W of a channel found trapped ["10Kbps"].
    pub trap_rate: Option<Rate>,
    /// How long the receiver holds a green packet that overtook red ones ["20ms";
    /// "0s" with the code profile, which has no resequencing]; "0s": off.
    pub reseq_timeout: Option<TimeSpan>,
    /// The colour-transition delay τ: how long a long-flow lane that sent red waits
    /// before it turns green ["0s": none].
    pub tau: Option<TimeSpan>,
    /// With the `refined` profile, the fraction of R_W before the last cut above which a caution channel grows by `probe_step` · R_G an interval instead of × (1 + α) [0.9; 0 to 1].
    pub probe_near: Option<f64>,
    /// With the `refined` profile, the slow growth's step as a fraction of R_G an interval [0.1; 0 to 1].
    pub probe_step: Option<f64>,
    /// With the `refined` profile, DCTCP's gain g for averaging β before Eq. 5's cut [1/16; 0: the last interval's β; 0 to 1].
    pub ecn_gain: Option<f64>,
    /// Whether a trapped channel whose red is delivered again leaves the trap at half the R_W it was trapped at [true with `refined`, else false].
    pub untrap: Option<bool>,
    /// Whether a caution channel that fell idle keeps its R_W and its place in the caution set [true with `refined`, else false].
    pub keep_idle: Option<bool>,
}

impl PolicyTable for TrinitySpec {
    type Params = TrinityParams;

    fn defaults() -> Self {
        let d = TrinityParams::default();
        TrinitySpec {
            profile: Some(d.profile),
            interval: Some(TimeSpan(d.interval)),
            short_threshold: Some(Size(crate::units::ByteSize::Bytes(d.short_threshold))),
            alpha: Some(d.alpha),
            hold: Some(d.hold),
            bucket: Some(Size(crate::units::ByteSize::Bytes(d.bucket))),
            trap_rate: Some(Rate(d.trap_rate_bps)),
            reseq_timeout: Some(TimeSpan(d.reseq_timeout)),
            tau: Some(TimeSpan(d.tau)),
            probe_near: Some(d.probe_near),
            probe_step: Some(d.probe_step),
            ecn_gain: Some(d.ecn_gain),
            untrap: Some(d.untrap),
            keep_idle: Some(d.keep_idle),
        }
    }

    const PERIOD_KEY: Option<&'static str> = Some("interval");

    fn period(&self) -> Option<Time> {
        self.interval.map(|x| x.0)
    }

    fn run_period(p: &TrinityParams) -> Option<Time> {
        Some(p.interval)
    }

    fn resolve(&self) -> Result<TrinityParams, (&'static str, String)> {
        let d = TrinityParams::of(self.profile.unwrap_or_default());
        let bytes = |s: Option<Size>, k: &'static str, d: u64| match s.map(|s| s.0) {
            None => Ok(d),
            Some(crate::units::ByteSize::Bytes(b)) if b > 0 => Ok(b),
            Some(_) => Err((k, "expected a positive number of bytes".to_string())),
        };
        let p = TrinityParams {
            interval: self.interval.map_or(d.interval, |x| x.0),
            short_threshold: bytes(self.short_threshold, "short_threshold", d.short_threshold)?,
            alpha: self.alpha.unwrap_or(d.alpha),
            hold: self.hold.unwrap_or(d.hold),
            bucket: bytes(self.bucket, "bucket", d.bucket)?,
            trap_rate_bps: self.trap_rate.map_or(d.trap_rate_bps, |r| r.0),
            reseq_timeout: self.reseq_timeout.map_or(d.reseq_timeout, |t| t.0),
            tau: self.tau.map_or(d.tau, |t| t.0),
            probe_near: self.probe_near.unwrap_or(d.probe_near),
            probe_step: self.probe_step.unwrap_or(d.probe_step),
            ecn_gain: self.ecn_gain.unwrap_or(d.ecn_gain),
            untrap: self.untrap.unwrap_or(d.untrap),
            keep_idle: self.keep_idle.unwrap_or(d.keep_idle),
            ..d
        };
        if !(p.alpha.is_finite() && p.alpha > 0.0) {
            return Err(("alpha", "expected a positive number".into()));
        }
        for (k, v) in [
            ("probe_near", p.probe_near),
            ("probe_step", p.probe_step),
            ("ecn_gain", p.ecn_gain),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err((k, format!("{v}: expected a number from 0 to 1")));
            }
        }
        Ok(p)
    }
}
