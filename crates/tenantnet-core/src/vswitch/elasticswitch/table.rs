//! ElasticSwitch's table of the scenario, `[vswitch.elasticswitch]`: the profile
//! and its constants, optional, with Trinity's public module's values as defaults
//! (spec §2.1, §2.2, §1.14), checked when resolved into [`EsParams`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::Time;
use crate::units::{ByteSize, Size, TimeSpan};
use crate::vswitch::policy::PolicyTable;

crate::kinds::named_kinds! {
    /// Which ElasticSwitch rate allocation runs (`vswitch.elasticswitch.profile`).
    EsProfile {
        /// C-ES, conservative, as Trinity's public module runs it without `-DTRINITY`
        /// (`trinity.c:360-371`) and Trinity §V compares against: back to the
        /// guarantee on any ECN mark, else up by 10 % of the gap to the NIC.
        TrinityCode = "trinity-code",
        /// A-ES, aggressive (Trinity §V-A, T:L998-1001): ElasticSwitch "with
        /// Trinity's rate control", R = R_G + R_W with R_W under Trinity's paper
        /// controller (Eqs. 2-6) on the marked fraction of all packets.
        Aggressive = "aggressive",
        /// The ElasticSwitch paper's rate allocation as far as its sources say
        /// (`elasticswitch/ra.rs`): R ≥ B, cut on ECN marks, weighted increases,
        /// with headroom, hold-increase and rate-caution as knobs whose values are
        /// our choice. Pair with `vswitch.pair_guarantees = "dynamic"` for its
        /// guarantee partitioning.
        Paper = "paper",
    }
}

/// Every ElasticSwitch constant.
#[derive(Clone, Debug, PartialEq)]
pub struct EsParams {
    /// The rate allocation.
    pub profile: EsProfile,
    /// The interval over which receivers measure [5 ms] (T:L938; `params.h:5`).
    pub interval: Time,
    /// Depth of each pair's bucket [32 KiB] (`params.h:16`).
    pub bucket: u64,
    /// The share of the gap to the NIC a congestion-free interval closes
    /// (`trinity-code`) [0.1] (`ELASTICSWITCH_ALPHA` = 100 per mille, `params.h:22`).
    pub increase: f64,
    /// The least increase, Mb/s (`trinity-code`) [10] (`MINIMUM_RATE_INCREASE`,
    /// `params.h:24`).
    pub min_increase_mbps: u64,
    /// α of Trinity's Eq. 6 (`aggressive`) [0.25], as Trinity's (which also holds
    /// the marks right after a cut, `TrinityParams::hold`).
    pub alpha: f64,
    /// Size of a feedback packet on the wire [64 B] (T:L824).
    pub feedback_size: u32,
    /// `paper`: R's increase per congestion-free interval as a share of the
    /// pair's guarantee [0.1, our choice].
    pub weighted_increase: f64,
    /// `paper`: the share of C no pair's R may take [0.1] ("10% headroom",
    /// T:L401).
    pub headroom: f64,
    /// `paper`: how long a pair guaranteed 100 Mb/s waits after a cut before it
    /// increases again, inversely proportional to the guarantee [10 ms, our
    /// choice]; 0: no hold-increase.
    pub hold_increase: Time,
    /// `paper`: whether increases shrink as B / R above the guarantee [true].
    pub rate_caution: bool,
}

impl Default for EsParams {
    fn default() -> Self {
        EsParams {
            profile: EsProfile::TrinityCode,
            interval: 5_000_000_000,
            bucket: 32 * 1024,
            increase: 0.1,
            min_increase_mbps: 10,
            alpha: 0.25,
            feedback_size: 64,
            weighted_increase: 0.1,
            headroom: 0.1,
            hold_increase: 10_000_000_000,
            rate_caution: true,
        }
    }
}

/// ElasticSwitch's constants; every key optional, defaults in brackets.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EsSpec {
    /// The rate allocation: `trinity-code` (C-ES), `aggressive` (A-ES) or `paper`
    /// (the ES paper's, constants our choice) ["trinity-code"].
    pub profile: Option<EsProfile>,
    /// The measurement and rate-allocation interval ["5ms"]; a whole multiple of
    /// `vswitch.interval`, which follows it when not given.
    pub interval: Option<TimeSpan>,
    /// Depth of each pair's bucket ["32KiB"].
    pub bucket: Option<Size>,
    /// Share of the gap to the NIC closed per congestion-free interval (trinity-code) [0.1].
    pub increase: Option<f64>,
    /// Least increase per congestion-free interval, Mb/s (trinity-code) [10].
    pub min_increase_mbps: Option<u64>,
    /// α of Trinity's Eq. 6 (aggressive) [0.25].
    pub alpha: Option<f64>,
    /// Increase per congestion-free interval as a share of the guarantee (paper) [0.1].
    pub weighted_increase: Option<f64>,
    /// Share of C no pair's rate may take (paper) [0.1].
    pub headroom: Option<f64>,
    /// Wait after a cut before increasing again, for a pair guaranteed 100 Mb/s,
    /// inversely proportional to the guarantee (paper) ["10ms"]; "0s": none.
    pub hold_increase: Option<TimeSpan>,
    /// Smaller increases the further the rate is above the guarantee (paper) [true].
    pub rate_caution: Option<bool>,
}

impl PolicyTable for EsSpec {
    type Params = EsParams;

    fn defaults() -> Self {
        let d = EsParams::default();
        EsSpec {
            profile: Some(d.profile),
            interval: Some(TimeSpan(d.interval)),
            bucket: Some(Size(ByteSize::Bytes(d.bucket))),
            increase: Some(d.increase),
            min_increase_mbps: Some(d.min_increase_mbps),
            alpha: Some(d.alpha),
            weighted_increase: Some(d.weighted_increase),
            headroom: Some(d.headroom),
            hold_increase: Some(TimeSpan(d.hold_increase)),
            rate_caution: Some(d.rate_caution),
        }
    }

    const PERIOD_KEY: Option<&'static str> = Some("interval");

    fn period(&self) -> Option<Time> {
        self.interval.map(|x| x.0)
    }

    fn run_period(p: &EsParams) -> Option<Time> {
        Some(p.interval)
    }

    fn resolve(&self) -> Result<EsParams, (&'static str, String)> {
        let d = EsParams::default();
        let bucket = match self.bucket.map(|s| s.0) {
            None => d.bucket,
            Some(ByteSize::Bytes(b)) if b > 0 => b,
            Some(_) => return Err(("bucket", "expected a positive number of bytes".into())),
        };
        let p = EsParams {
            profile: self.profile.unwrap_or_default(),
            interval: self.interval.map_or(d.interval, |x| x.0),
            bucket,
            increase: self.increase.unwrap_or(d.increase),
            min_increase_mbps: self.min_increase_mbps.unwrap_or(d.min_increase_mbps),
            alpha: self.alpha.unwrap_or(d.alpha),
            weighted_increase: self.weighted_increase.unwrap_or(d.weighted_increase),
            headroom: self.headroom.unwrap_or(d.headroom),
            hold_increase: self.hold_increase.map_or(d.hold_increase, |t| t.0),
            rate_caution: self.rate_caution.unwrap_or(d.rate_caution),
            ..d
        };
        if !(p.weighted_increase.is_finite() && p.weighted_increase > 0.0) {
            return Err(("weighted_increase", "expected a positive number".into()));
        }
        if !(p.headroom.is_finite() && (0.0..1.0).contains(&p.headroom)) {
            return Err((
                "headroom",
                "expected a share from 0 up to (not including) 1".into(),
            ));
        }
        if !(p.increase.is_finite() && p.increase > 0.0 && p.increase <= 1.0) {
            return Err(("increase", "expected a share above 0 and at most 1".into()));
        }
        if !(p.alpha.is_finite() && p.alpha > 0.0) {
            return Err(("alpha", "expected a positive number".into()));
        }
        Ok(p)
    }
}
