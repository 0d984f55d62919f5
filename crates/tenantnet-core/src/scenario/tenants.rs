//! The `[[tenants]]` and `[vswitch]` tables: tenants' VMs with hose-model
//! guarantees, and how each host's virtual switch enforces them.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::parse::join;
use super::workloads::Hosts;
use crate::engine::Time;
use crate::units::{Rate, Size, TimeSpan};
use crate::vswitch::{PolicyConfig, PolicyKind, PolicyTable};

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
    /// N, the number of VMs, each guaranteed `guarantee`, for QShare's Algorithm 1 to
    /// place before traffic starts (needs `[qshare]`; instead of `hosts` and `vms`).
    /// Its VMs are named `<tenant>/vm0`, `<tenant>/vm1`, … in server order.
    #[serde(default)]
    pub size: Option<u32>,
    /// When the tenant arrives: its VMs are embedded then and its workloads may start
    /// no earlier (needs `[qshare]`; §5.3: "newly arrived tenants are served in shared
    /// queues") ["0s"].
    #[serde(default = "time_zero")]
    pub arrive: TimeSpan,
    /// When the tenant departs: its slots and reservations are released, and its
    /// workloads stop offering data and start no flow from then on (needs `[qshare]`)
    /// [never].
    #[serde(default)]
    pub depart: Option<TimeSpan>,
    /// Pipe-model guarantees between pairs of the tenant's VMs (Trinity §III-B:
    /// "for pipe models, R_G is simply the input"): a list of `[[tenants.pipes]]`.
    #[serde(default)]
    pub pipes: Vec<PipeSpec>,
}

impl VmSpec {
    /// VM `name` on `host`, everything else as the tenant says.
    pub fn on(name: String, host: &str) -> Self {
        VmSpec {
            name: Some(name),
            host: host.to_string(),
            guarantee: None,
            weight: None,
            changes: Vec::new(),
            cycles: None,
            priority: None,
            numa: Default::default(),
            preference: None,
        }
    }
}

/// A guarantee from one of a tenant's VMs to another (the pipe model).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PipeSpec {
    /// The sending VM's name.
    pub src: String,
    /// The receiving VM's name.
    pub dst: String,
    /// The guarantee from `src` to `dst`, e.g. `"100Mbps"` (wire bits).
    pub guarantee: Rate,
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
    /// C_alloc, the CPU cycles per second its traffic may use on its host's PMD
    /// core under C2TB (`vswitch.cpu.limiter = "c2tb"`), e.g. `"0.792GHz"` [from its
    /// guarantee and `vswitch.cpu.preference` by the bandwidth–CPU model].
    #[serde(default)]
    pub cycles: Option<crate::units::Frequency>,
    /// Its HBS priority class, 1 (highest) to 8 (`vswitch.cpu.scheduler = "hbs"`,
    /// `options:priority` in the paper's OVS) [8].
    #[serde(default)]
    pub priority: Option<u8>,
    /// Where its memory is, for R_NUMA: `local` or `remote` ["local"].
    #[serde(default)]
    pub numa: crate::vswitch::c2qos::Numa,
    /// Its SLA traffic preference, from which C_alloc is computed
    /// [`vswitch.cpu.preference`].
    #[serde(default)]
    pub preference: Option<crate::vswitch::c2qos::PreferenceSpec>,
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

/// Generates [`VswitchSpec`] from the host policies' registration: its common keys,
/// then one table per policy that has parameters (`[vswitch.mbfq]`, …).
macro_rules! vswitch_spec {
    ($($(#[$doc:meta])* $v:ident($t:ty) = $name:literal $(, $field:ident: $table:ty)?;)*) => {
        /// The virtual switch of every host that has VMs.
        #[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct VswitchSpec {
            /// Enforcement, one of the host policies [none].
            #[serde(default)]
            pub policy: PolicyKind,
            /// Per-host policies that differ from `policy`, e.g. `{ h3 = "static" }`.
            #[serde(default)]
            pub hosts: BTreeMap<String, PolicyKind>,
            /// C, the bandwidth a host shares among its VMs [the NIC rate].
            #[serde(default)]
            pub capacity: Option<Rate>,
            /// Each VM's egress queue ["64KB"]; TCP senders wait when it is full.
            #[serde(default = "default_queue")]
            pub queue: Size,
            /// Token-bucket depth of each microscheduler ["10pkt"].
            #[serde(default = "default_burst")]
            pub burst: Size,
            /// Where VM pairs' guarantees come from: `pipes` (only `[[tenants.pipes]]`),
            /// `hose` (also every other VM-to-VM pair with traffic: the smaller of
            /// its sender's and its receiver's hose guarantee divided among their
            /// pairs, Trinity's Eq. 1) or `dynamic` (as `hose`, then re-divided
            /// max-min every interval over the pairs active in it, ElasticSwitch's
            /// guarantee partitioning; `trinity` and `elasticswitch` only) ["pipes"].
            #[serde(default)]
            pub pair_guarantees: crate::vswitch::partition::PairGuarantees,
            /// How often each host measures its VMs and NIC, ticks its policy and
            /// records a row of `vm_rates` [a policy table's period if one is given
            /// (`mbfq.interval`), else "100ms"].
            #[serde(default)]
            pub interval: Option<TimeSpan>,
            /// The PMD cores that forward VMs' packets, and what limits each VM's
            /// share of them (C2QoS) [none: the vswitch costs no CPU].
            #[serde(default)]
            pub cpu: Option<crate::vswitch::c2qos::CpuSpec>,
            $($(
                #[doc = concat!("The `", $name, "` policy's parameters.")]
                #[serde(default, rename = $name)]
                pub $field: $table,
            )?)*
        }

        impl Default for VswitchSpec {
            fn default() -> Self {
                VswitchSpec {
                    policy: PolicyKind::default(),
                    hosts: BTreeMap::new(),
                    capacity: None,
                    queue: default_queue(),
                    burst: default_burst(),
                    pair_guarantees: Default::default(),
                    interval: None,
                    cpu: None,
                    $($($field: <$table>::default(),)?)*
                }
            }
        }

        /// Every policy table resolved: each policy's configuration, and the
        /// periods policies run at (key, period, whether the table set it).
        pub struct PolicyTables {
            configs: Vec<PolicyConfig>,
            /// `(policy, key, period, set explicitly)` of each policy that has a period.
            pub periods: Vec<(PolicyKind, String, Time, bool)>,
        }

        impl PolicyTables {
            /// Resolves every table of `vs` (used or not, so a scenario is checked
            /// whole); an error names the key within `[vswitch]` and what it expected.
            pub fn resolve(vs: &VswitchSpec) -> Result<Self, (String, String)> {
                let mut configs = Vec::new();
                let mut periods = Vec::new();
                $(
                    #[allow(unused_mut, unused_assignments)]
                    let mut c = PolicyConfig::$v(Default::default());
                    $(
                        let table = &vs.$field;
                        let p = table
                            .resolve()
                            .map_err(|(k, m)| (join($name, k), m))?;
                        if let (Some(k), Some(t)) =
                            (<$table>::PERIOD_KEY, <$table>::run_period(&p))
                        {
                            periods.push((
                                PolicyKind::$v,
                                join($name, k),
                                t,
                                table.period().is_some(),
                            ));
                        }
                        c = PolicyConfig::$v(p);
                    )?
                    configs.push(c);
                )*
                Ok(PolicyTables { configs, periods })
            }

            /// The configuration of policy `kind`.
            pub fn config(&self, kind: PolicyKind) -> PolicyConfig {
                self.configs[kind as usize].clone()
            }
        }

        /// Every policy table at its defaults: its schema name, its key in
        /// `[vswitch]` and its value (for the schema's `default`s).
        pub fn policy_table_defaults(
        ) -> Vec<(String, &'static str, serde_json::Result<serde_json::Value>)> {
            vec![$($(
                (
                    <$table as JsonSchema>::schema_name().to_string(),
                    $name,
                    serde_json::to_value(<$table as PolicyTable>::defaults()),
                ),
            )?)*]
        }
    };
}

crate::vswitch::policy::for_each_policy!(vswitch_spec);

fn default_queue() -> Size {
    Size(crate::units::ByteSize::Bytes(64_000))
}

fn default_burst() -> Size {
    Size(crate::units::ByteSize::Packets(10))
}

fn time_zero() -> TimeSpan {
    TimeSpan(0)
}
