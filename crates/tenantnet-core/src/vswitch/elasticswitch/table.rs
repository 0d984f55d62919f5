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
        }
    }
}

/// ElasticSwitch's constants; every key optional, defaults in brackets.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EsSpec {
    /// The rate allocation: `trinity-code` (C-ES) or `aggressive` (A-ES) ["trinity-code"].
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
            ..d
        };
        if !(p.increase.is_finite() && p.increase > 0.0 && p.increase <= 1.0) {
            return Err(("increase", "expected a share above 0 and at most 1".into()));
        }
        if !(p.alpha.is_finite() && p.alpha > 0.0) {
            return Err(("alpha", "expected a positive number".into()));
        }
        Ok(p)
    }
}
