//! The `[[tenants]]` and `[vswitch]` tables: tenants' VMs with hose-model
//! guarantees, and how each host's virtual switch enforces them.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::workloads::Hosts;
use crate::units::{Rate, Size, TimeSpan};

/// A tenant: VMs placed on hosts, each with a bandwidth guarantee (the hose
/// model's per-VM B). Workloads of this tenant send from and to its VMs.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TenantSpec {
    /// The tenant's name, as workloads' `tenant` key names it.
    pub name: String,
    /// Guarantee of every VM that does not set its own, e.g. `"1Gbps"`.
    #[serde(default)]
    pub guarantee: Option<Rate>,
    /// One VM on each of these hosts, named `<tenant>/<host>`.
    #[serde(default)]
    pub hosts: Option<Hosts>,
    /// VMs listed one by one.
    #[serde(default)]
    pub vms: Vec<VmSpec>,
}

/// One VM.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VmSpec {
    /// Its name, unique in the scenario [`<tenant>/vm<i>`].
    #[serde(default)]
    pub name: Option<String>,
    /// The host it runs on.
    pub host: String,
    /// Its guarantee [the tenant's `guarantee`].
    #[serde(default)]
    pub guarantee: Option<Rate>,
    /// Its weight for spare bandwidth under MBFQ [guarantee / capacity, the
    /// paper's W]. Give every VM of a host a weight, or none.
    #[serde(default)]
    pub weight: Option<f64>,
    /// Changes to its guarantee (and weight) during the run.
    #[serde(default)]
    pub changes: Vec<VmChangeSpec>,
}

/// A VM's guarantee changing at a time.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VmChangeSpec {
    /// When.
    pub at: TimeSpan,
    /// The new guarantee.
    pub guarantee: Rate,
    /// The new weight, if the VM's host uses explicit weights.
    #[serde(default)]
    pub weight: Option<f64>,
}

/// Enforcement in a host's virtual switch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PolicySpec {
    /// No enforcement: VMs share the NIC as their transports do.
    #[default]
    None,
    /// Static reservation: each VM capped at its guarantee (not work-conserving).
    Static,
    /// MBFQ: a macroscheduler resets each VM's token bucket every interval.
    Mbfq,
}

/// The virtual switch of every host that has VMs.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VswitchSpec {
    /// Enforcement: none, static or mbfq [none].
    #[serde(default)]
    pub policy: PolicySpec,
    /// Per-host policies that differ from `policy`, e.g. `{ h3 = "static" }`.
    #[serde(default)]
    pub hosts: BTreeMap<String, PolicySpec>,
    /// C, the bandwidth a host shares among its VMs [the NIC rate].
    #[serde(default)]
    pub capacity: Option<Rate>,
    /// Each VM's egress queue ["64KB"]; TCP senders wait when it is full.
    #[serde(default = "default_queue")]
    pub queue: Size,
    /// Token-bucket depth of each microscheduler ["10pkt"].
    #[serde(default = "default_burst")]
    pub burst: Size,
    /// MBFQ's constants.
    #[serde(default)]
    pub mbfq: MbfqSpec,
}

fn default_queue() -> Size {
    Size(crate::units::ByteSize::Bytes(64_000))
}

fn default_burst() -> Size {
    Size(crate::units::ByteSize::Packets(10))
}

impl Default for VswitchSpec {
    fn default() -> Self {
        VswitchSpec {
            policy: PolicySpec::None,
            hosts: BTreeMap::new(),
            capacity: None,
            queue: default_queue(),
            burst: default_burst(),
            mbfq: MbfqSpec::default(),
        }
    }
}

/// MBFQ's constants (Figs. 3–4, §4); every key optional, published defaults in brackets.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MbfqSpec {
    /// T, the macroscheduler period ["100ms"]; also the period of `vm_rates`.
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
        let d = crate::vswitch::MbfqParams::default();
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
