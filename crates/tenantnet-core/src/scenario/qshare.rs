//! The `[qshare]` table: QShare's controller binding the scenario's tenants to
//! switch queues while traffic runs (Liu et al. §5, §7.1).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::units::TimeSpan;

/// QShare's controller. Every `[[tenants]]` tenant with VMs is embedded where its
/// VMs run (hose reservations on its Tenant-Routing tree, as Algorithm 1 would
/// reserve them); every `interval` the controller measures each tenant's usage per
/// host, scores it (Eq. 1–2), runs Algorithm 2 and configures the switch ports of
/// the tenants' trees. Needs `network.queues` ≥ 2 and a weighted scheduler.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QShareSpec {
    /// T_c, the control interval ["4s", §7.1.1].
    #[serde(default = "default_interval")]
    pub interval: TimeSpan,
    /// How long after each decision the switches and hosts apply it ["0s"; the
    /// paper measures < 50 ms for 48 ports, §7.4].
    #[serde(default = "zero")]
    pub delay: TimeSpan,
    /// The largest queue weight the switches accept: the port's largest queue gets
    /// it, the others their reservation relative to it [15, the paper's switches;
    /// SONiC's DWRR takes up to 100].
    #[serde(default = "default_max_weight")]
    pub max_weight: u32,
    /// k, the pricing constant of the score S_T = k·N·B·U_T (Eq. 2) [1].
    #[serde(default = "one")]
    pub k: f64,
    /// Tenants in dedicated queues from the start [none: every tenant starts in the
    /// shared queue, §5.3].
    #[serde(default)]
    pub dedicated: Vec<String>,
    /// What a tenant in the shared queue may send: `guarantee` (each VM capped at
    /// its guarantee, §7.1) or `uncapped` ["guarantee"].
    #[serde(default)]
    pub shared: SharedRate,
    /// Algorithm 1's weight w_q on the queue-occupation cost c_q (1 − w_q on the
    /// bandwidth cost c_b), electing among TR options that hold a tenant's hosts
    /// [0.5].
    #[serde(default = "half")]
    pub cq_weight: f64,
    /// The worst-case survival ratio f of tenants placed by their `size`: at most
    /// ⌊(1 − f)·N⌋ of a tenant's VMs on one server (§4, high availability) [none].
    #[serde(default)]
    pub ha: Option<f64>,
    /// VM slots per server [10, the paper's testbed, or the most VMs any host runs].
    #[serde(default)]
    pub slots: Option<u32>,
}

/// What shared-queue tenants may send.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SharedRate {
    /// Each VM capped at its guarantee (§7.1, with ElasticSwitch-like allocation off).
    #[default]
    Guarantee,
    /// No cap: shared tenants compete in the shared queue.
    Uncapped,
}

fn default_interval() -> TimeSpan {
    TimeSpan(4_000_000_000_000)
}

fn zero() -> TimeSpan {
    TimeSpan(0)
}

fn default_max_weight() -> u32 {
    15
}

fn one() -> f64 {
    1.0
}

fn half() -> f64 {
    0.5
}
