//! MBFQ's table of the scenario, `[vswitch.mbfq]`: every constant optional, the
//! published values as defaults, checked when resolved into [`MbfqParams`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::MbfqParams;
use crate::engine::Time;
use crate::units::{Rate, TimeSpan};
use crate::vswitch::policy::PolicyTable;

/// MBFQ's constants (Figs. 3–4, §4); every key optional, published defaults in brackets.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MbfqSpec {
    /// T, the macroscheduler period ["100ms"]; a whole multiple of
    /// `vswitch.interval`, which follows it when not given.
    pub interval: Option<TimeSpan>,
    /// How long a VM must use under `reclaim_below` of its rate before it is reclaimed ["500ms"].
    pub reclaim_after: Option<TimeSpan>,
    /// Fraction of AR under which a VM is not using its allocation [0.85].
    pub reclaim_below: Option<f64>,
    /// TR = headroom × SR when reclaiming or unthrottled [1.1].
    pub headroom: Option<f64>,
    /// Fraction of AR above which a VM is using all of it [0.95].
    pub full_use: Option<f64>,
    /// TR multipliers of ramp-up stages 1 and 2 [[1.2, 1.5]].
    pub ramp: Option<[f64; 2]>,
    /// Cap of stages 1 and 2 as a fraction of C above AR [0.1].
    pub ramp_cap: Option<f64>,
    /// Stage 3: TR = max(ramp_final × AR, MG) [2.0].
    pub ramp_final: Option<f64>,
    /// Floor under every target rate ["10Mbps"].
    pub floor: Option<Rate>,
    /// NIC utilisation under which microschedulers are off [0.8].
    pub activate_above: Option<f64>,
}

impl MbfqSpec {
    /// Every key set to MBFQ's published constant, the value used when it is absent.
    pub fn defaults() -> MbfqSpec {
        let d = MbfqParams::default();
        MbfqSpec {
            interval: Some(TimeSpan(d.interval)),
            reclaim_after: Some(TimeSpan(d.reclaim_after)),
            reclaim_below: Some(d.reclaim_below),
            headroom: Some(d.headroom),
            full_use: Some(d.full_use),
            ramp: Some(d.ramp),
            ramp_cap: Some(d.ramp_cap),
            ramp_final: Some(d.ramp_final),
            floor: Some(Rate(d.floor_bps as u64)),
            activate_above: Some(d.activate_above),
        }
    }
}

impl PolicyTable for MbfqSpec {
    type Params = MbfqParams;

    fn defaults() -> Self {
        MbfqSpec::defaults()
    }

    const PERIOD_KEY: Option<&'static str> = Some("interval");

    fn period(&self) -> Option<Time> {
        self.interval.map(|x| x.0)
    }

    fn run_period(p: &MbfqParams) -> Option<Time> {
        Some(p.interval)
    }

    fn resolve(&self) -> Result<MbfqParams, (&'static str, String)> {
        let d = MbfqParams::default();
        let p = MbfqParams {
            interval: self.interval.map_or(d.interval, |x| x.0),
            reclaim_after: self.reclaim_after.map_or(d.reclaim_after, |x| x.0),
            reclaim_below: self.reclaim_below.unwrap_or(d.reclaim_below),
            headroom: self.headroom.unwrap_or(d.headroom),
            full_use: self.full_use.unwrap_or(d.full_use),
            ramp: self.ramp.unwrap_or(d.ramp),
            ramp_cap: self.ramp_cap.unwrap_or(d.ramp_cap),
            ramp_final: self.ramp_final.unwrap_or(d.ramp_final),
            floor_bps: self.floor.map_or(d.floor_bps, |x| x.0 as f64),
            activate_above: self.activate_above.unwrap_or(d.activate_above),
        };
        let fail = |k: &'static str, m: &str| Err((k, m.to_string()));
        for (f, v) in [
            ("reclaim_below", p.reclaim_below),
            ("full_use", p.full_use),
            ("ramp_cap", p.ramp_cap),
        ] {
            if !(v > 0.0 && v <= 1.0) {
                return fail(f, "expected a fraction in (0, 1]");
            }
        }
        if !(0.0..=1.0).contains(&p.activate_above) {
            return fail("activate_above", "expected a fraction in [0, 1]");
        }
        for (f, v) in [
            ("headroom", p.headroom),
            ("ramp", p.ramp[0]),
            ("ramp", p.ramp[1]),
            ("ramp_final", p.ramp_final),
        ] {
            if !(v.is_finite() && v >= 1.0) {
                return fail(f, "expected a multiplier of at least 1");
            }
        }
        if p.floor_bps < 1.0 {
            return fail("floor", "expected a positive rate");
        }
        Ok(p)
    }
}
