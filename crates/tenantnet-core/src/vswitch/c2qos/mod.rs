//! The software vswitch's CPU, and C2QoS (Yang et al., JSA 2021): when the
//! vswitch's poll-mode (PMD) cores, not the NIC, are the scarce resource.
//!
//! With `[vswitch.cpu]` in a scenario, every VM's packets wait in its guest TX ring
//! (256 packets; TCP senders wait for room, UDP packets that find it full are
//! dropped and counted) until a PMD core polls the VM and forwards a batch of up to
//! 32 of them, spending cycles per packet by size and flow pattern (`cost.rs`).
//! The batch's packets go on through the host policy and its shapers to the NIC
//! when the batch is done. Without the table packets pass the vswitch for free, as
//! before.
//!
//! * [`cost`]: the bandwidth–CPU model (§III).
//! * [`c2tb`]: the CPU-cycle token bucket (§IV-A, Alg. 1).
//! * [`pmd`]: a PMD core's clock and poll loop (OVS's round robin, §II-C; C2TB
//!   only skips VMs without tokens, §VI-A).
//! * [`hbs`]: hierarchical batch scheduling, priority classes polled in order
//!   (§IV-B).
//! * [`factors`]: the deployment coefficients R_NUMA and R_#VMs (§III-C).
//! * [`nic_handler`]: ingress policing switched on when the NIC, not the core, is
//!   the bottleneck (§VII).
//!
//! OVS's own limiter, ingress policing (a colour-blind srTCM byte bucket with no
//! excess burst, metering after the guest copy), is the shared token bucket's
//! [`police`](crate::vswitch::token_bucket::TokenBucket::police).
//!
//! The simulation's side (rings, batches as events, the manager's tick, records) is
//! `sim/cpu.rs`.

pub mod c2tb;
pub mod cost;
pub mod factors;
pub mod hbs;
pub mod nic_handler;
pub mod pmd;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::Time;
use crate::units::{ByteSize, Frequency, Size, TimeSpan};
pub use c2tb::{Mode, Redistribution};
pub use cost::{Costs, Flows};
pub use factors::{Numa, VmsFactor};
pub use nic_handler::{NicHandlerParams, NicHandlerSpec};

crate::kinds::named_kinds! {
    /// What limits each VM's use of a PMD core (`vswitch.cpu.limiter`).
    Limiter {
        /// Nothing: OVS-DPDK without QoS; every VM gets the same number of polls.
        None = "none",
        /// OVS's ingress policing at each VM's guarantee (`[vswitch.cpu.policer]`):
        /// the paper's baseline, "ovs-ingress-policy" (§II-B, §VI-A).
        Policing = "policing",
        /// C2TB, a token bucket of CPU cycles per VM (`[vswitch.cpu.c2tb]`).
        C2tb = "c2tb",
    }
}

crate::kinds::named_kinds! {
    /// The order a PMD core polls its VMs in (`vswitch.cpu.scheduler`).
    Scheduler {
        /// OVS's loop: every VM in turn (§II-C).
        RoundRobin = "round_robin",
        /// HBS: priority classes, highest first, idle VMs demoted (§IV-B).
        Hbs = "hbs",
    }
}

crate::kinds::named_kinds! {
    /// Whether packets from the NIC to the VMs cost PMD cycles (`vswitch.cpu.rx_path`).
    RxPath {
        /// They reach the VMs for free: the paper's model and all its equations cover
        /// VM → NIC only (§III-A; spec choice A11).
        Bypass = "bypass",
        /// They wait in the NIC's receive queue, which the host's first core polls
        /// like a port (first in the round robin, above every HBS class, no C2TB
        /// bucket), each costing c(s, single) times its destination VM's factors:
        /// as real OVS-DPDK, where the same PMD forwards both directions.
        Pmd = "pmd",
    }
}

crate::kinds::named_kinds! {
    /// What ingress policing counts (`vswitch.cpu.policer.unit`).
    PolicerUnit {
        /// Bytes of IP packet at the VM's guarantee (OVS's policer, Fig. 1(a)).
        Bytes = "bytes",
        /// Packets at the guarantee over the SLA preference's packet size
        /// (Fig. 1(c)'s PPS limit).
        Packets = "packets",
    }
}

/// `[vswitch.cpu.policer]`: OVS-DPDK's ingress policing (an srTCM meter,
/// colour-blind, excess burst 0: a token bucket that starts full; `lib/netdev-dpdk.c`).
/// It meters each packet right after the guest copy, so a policed packet still
/// costs its ingress cycles.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicerSpec {
    /// `bytes` or `packets` ["bytes"].
    #[serde(default)]
    pub unit: PolicerUnit,
    /// The bucket's depth (CBS) ["1MB": OVS's default 8000 kbit]; in packets, this
    /// over the VM's preference packet size.
    #[serde(default = "d_burst")]
    pub burst: Size,
}

fn d_burst() -> Size {
    Size(ByteSize::Bytes(1_000_000))
}

impl Default for PolicerSpec {
    fn default() -> Self {
        PolicerSpec {
            unit: PolicerUnit::Bytes,
            burst: d_burst(),
        }
    }
}

/// `[vswitch.cpu.hbs]`: HBS's constants.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HbsSpec {
    /// Empty polls in a row after which an idle VM drops one class ("several",
    /// §IV-B-3) [8].
    #[serde(default = "d_demote")]
    pub demote_after: u32,
}

fn d_demote() -> u32 {
    8
}

impl Default for HbsSpec {
    fn default() -> Self {
        HbsSpec {
            demote_after: d_demote(),
        }
    }
}

/// A VM's SLA traffic preference (§III-D), from which C_alloc is computed.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreferenceSpec {
    /// Packet size on the wire ["362B", simple IMIX's mean: 64, 594 and 1518 B at 7:4:1].
    #[serde(default = "d_pref_size")]
    pub packet_size: Size,
    /// Flow pattern ["single"].
    #[serde(default)]
    pub flows: Flows,
}

fn d_pref_size() -> Size {
    Size(ByteSize::Bytes(362))
}

impl PreferenceSpec {
    /// (packet size in bytes, flows), or what is wrong with the size.
    pub fn resolve(&self) -> Result<(u32, Flows), String> {
        match self.packet_size.0 {
            ByteSize::Bytes(b) if (64..=crate::units::MAX_PACKET).contains(&b) => {
                Ok((b as u32, self.flows))
            }
            _ => Err("expected a size in bytes from 64B to 65535B".into()),
        }
    }
}

impl Default for PreferenceSpec {
    fn default() -> Self {
        PreferenceSpec {
            packet_size: d_pref_size(),
            flows: Flows::Single,
        }
    }
}

/// `[vswitch.c2tb]`: C2TB's constants.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct C2tbSpec {
    /// `strict` (buckets fill at C_alloc) or `minmax` (at C_alloc plus a weighted
    /// share of the idle cycles, overflow re-distributed) ["minmax"].
    #[serde(default = "d_mode")]
    pub mode: Mode,
    /// invl, the manager's period ["50us", §V].
    #[serde(default = "d_invl")]
    pub interval: TimeSpan,
    /// bucket_depth, cycles [110000: one interval of a 2.2 GHz core; the paper
    /// gives none].
    #[serde(default = "d_depth")]
    pub bucket_depth: u64,
    /// How Alg. 1 hands out the overflow: `proportional` or `literal` ["proportional"].
    #[serde(default)]
    pub redistribution: Redistribution,
}

fn d_mode() -> Mode {
    Mode::MinMax
}
fn d_invl() -> TimeSpan {
    TimeSpan(50_000_000)
}
fn d_depth() -> u64 {
    110_000
}

impl Default for C2tbSpec {
    fn default() -> Self {
        C2tbSpec {
            mode: d_mode(),
            interval: d_invl(),
            bucket_depth: d_depth(),
            redistribution: Redistribution::default(),
        }
    }
}

/// `[vswitch.cpu]`: the hosts' PMD cores and what forwarding costs them.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CpuSpec {
    /// PMD cores per host; VM k of a host is polled by core k mod `cores` [1].
    #[serde(default = "d_cores")]
    pub cores: u32,
    /// Each core's clock ["2.2GHz", §II-B].
    #[serde(default = "d_frequency")]
    pub frequency: Frequency,
    /// Most packets a poll takes from a ring [32, OVS's NETDEV_MAX_BURST].
    #[serde(default = "d_batch")]
    pub batch: u32,
    /// Each VM's guest TX ring, packets [256, QEMU's default].
    #[serde(default = "d_ring")]
    pub ring: u32,
    /// Cycles a poll that finds a ring empty costs [200].
    #[serde(default = "d_empty_poll")]
    pub empty_poll: u64,
    /// Cycles each batch costs beyond its packets [0].
    #[serde(default)]
    pub batch_overhead: u64,
    /// `bypass` or `pmd`: whether packets to the VMs cost the cores cycles ["bypass"].
    #[serde(default)]
    pub rx_path: RxPath,
    /// The NIC's receive queue with `rx_path = "pmd"`, packets (those that find it
    /// full are dropped and counted) [2048, OVS's default `n_rxq_desc`].
    #[serde(default = "d_rx_ring")]
    pub rx_ring: u32,
    /// A deployment coefficient applied to every packet's cost and to C_alloc,
    /// beside R_NUMA and R_#VMs: R_#cores (1.47 with 2 cores, §III-C) or any other
    /// [1.0].
    #[serde(default = "d_factor")]
    pub factor: f64,
    /// R_NUMA of a VM whose memory is on another NUMA node than the vswitch's
    /// (`numa = "remote"`) [1.4, §III-C "40 % more"].
    #[serde(default = "d_numa_remote")]
    pub numa_remote: f64,
    /// R_#VMs from the number of VMs on the host: `none` (1.0), `same_node` (1.14
    /// with 4 VMs) or `different_nodes` (1.07 with 4) ["none"].
    #[serde(default)]
    pub vms_factor: VmsFactor,
    /// Per-packet cycles of each stage at R = 1.
    #[serde(default)]
    pub costs: Costs,
    /// The SLA preference C_alloc is computed for, when a VM gives no `cycles`.
    #[serde(default)]
    pub preference: PreferenceSpec,
    /// `none`, `policing` (OVS's ingress policing) or `c2tb` ["none"].
    #[serde(default)]
    pub limiter: Limiter,
    /// `round_robin` (OVS) or `hbs` ["round_robin"].
    #[serde(default)]
    pub scheduler: Scheduler,
    /// C2TB's constants.
    #[serde(default)]
    pub c2tb: C2tbSpec,
    /// Ingress policing's constants.
    #[serde(default)]
    pub policer: PolicerSpec,
    /// HBS's constants.
    #[serde(default)]
    pub hbs: HbsSpec,
    /// The NIC-bottleneck handler (§VII), if the table is present.
    #[serde(default)]
    pub nic_handler: Option<NicHandlerSpec>,
}

fn d_cores() -> u32 {
    1
}
fn d_frequency() -> Frequency {
    Frequency(2_200_000_000)
}
fn d_batch() -> u32 {
    32
}
fn d_ring() -> u32 {
    256
}
fn d_rx_ring() -> u32 {
    2048
}
fn d_empty_poll() -> u64 {
    200
}
fn d_factor() -> f64 {
    1.0
}
fn d_numa_remote() -> f64 {
    1.4
}

impl Default for CpuSpec {
    fn default() -> Self {
        CpuSpec {
            cores: d_cores(),
            frequency: d_frequency(),
            batch: d_batch(),
            ring: d_ring(),
            empty_poll: d_empty_poll(),
            batch_overhead: 0,
            rx_path: RxPath::Bypass,
            rx_ring: d_rx_ring(),
            factor: d_factor(),
            numa_remote: d_numa_remote(),
            vms_factor: VmsFactor::None,
            costs: Costs::default(),
            preference: PreferenceSpec::default(),
            limiter: Limiter::None,
            scheduler: Scheduler::RoundRobin,
            c2tb: C2tbSpec::default(),
            policer: PolicerSpec::default(),
            hbs: HbsSpec::default(),
            nic_handler: None,
        }
    }
}

/// The most cores per host, batch and ring the model takes.
const MAX_CORES: u32 = 64;
const MAX_BATCH: u32 = 1024;
const MAX_RING: u32 = 65_536;

/// C2TB's resolved constants.
#[derive(Clone, Debug, PartialEq)]
pub struct C2tbParams {
    /// The fill rule.
    pub mode: Mode,
    /// invl.
    pub interval: Time,
    /// bucket_depth, cycles.
    pub depth: i64,
    /// The overflow rule.
    pub redistribution: Redistribution,
}

/// Ingress policing's resolved constants.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicerParams {
    /// What it counts.
    pub unit: PolicerUnit,
    /// CBS, bytes.
    pub burst: u64,
    /// Whether it polices from the start (the limiter), or only while the NIC
    /// handler has it on.
    pub from_start: bool,
}

/// The CPU model's resolved parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuParams {
    /// PMD cores per host.
    pub cores: u32,
    /// Their clock, Hz.
    pub hz: u64,
    /// Packets per batch at most.
    pub batch: u32,
    /// Guest TX ring, packets.
    pub ring: u32,
    /// Cycles of an empty poll.
    pub empty_poll: u64,
    /// Cycles per batch beyond its packets.
    pub batch_overhead: u64,
    /// The NIC's receive queue (packets), if the cores forward packets to the VMs
    /// (`rx_path = "pmd"`).
    pub rx_ring: Option<u32>,
    /// The host-wide coefficient (R_#cores or other).
    pub factor: f64,
    /// R_NUMA of remote VMs.
    pub numa_remote: f64,
    /// R_#VMs's rule.
    pub vms_factor: VmsFactor,
    /// Per-packet costs.
    pub costs: Costs,
    /// The SLA preference: packet size (bytes) and flows.
    pub preference: (u32, Flows),
    /// C2TB, if it limits the VMs.
    pub c2tb: Option<C2tbParams>,
    /// Ingress policing, if it limits the VMs or the NIC handler may switch it on.
    pub policer: Option<PolicerParams>,
    /// HBS's demotion threshold, if HBS schedules (else round robin).
    pub hbs: Option<u32>,
    /// The NIC handler, if on.
    pub nic_handler: Option<NicHandlerParams>,
}

/// The CPU model as a run uses it: the parameters, and per VM (by `VmId`) its
/// C_alloc (cycles/s), its weight for MIN-MAX's idle cycles, its deployment
/// coefficient, its HBS class and its policer's rate.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuSetup {
    /// The parameters.
    pub params: CpuParams,
    /// C_alloc of each VM.
    pub c_alloc: Vec<u64>,
    /// Weight of each VM (its guarantee in bit/s, or its explicit weight × 10^6).
    pub weights: Vec<u64>,
    /// Π R_i of each VM: what each of its packets' costs is multiplied by.
    pub factor: Vec<f64>,
    /// HBS class of each VM, 1–8.
    pub priority: Vec<u8>,
    /// Each VM's policer: rate (bit/s, or packets/s) and depth (bytes, or
    /// packets), at its guarantee.
    pub policer: Vec<(u64, u64)>,
    /// Per workload: whether its packets miss the EMC (`classify = "multiple"`).
    pub multiple: Vec<bool>,
}

impl CpuSpec {
    /// The parameters, or the key (within `[vswitch.cpu]`) that is wrong and what
    /// it expected.
    pub fn resolve(&self) -> Result<CpuParams, (String, String)> {
        let err = |k: &str, m: String| Err((k.to_string(), m));
        if self.cores == 0 || self.cores > MAX_CORES {
            return err(
                "cores",
                format!("{}; expected 1 to {MAX_CORES}", self.cores),
            );
        }
        if self.batch == 0 || self.batch > MAX_BATCH {
            return err(
                "batch",
                format!("{}; expected 1 to {MAX_BATCH} packets", self.batch),
            );
        }
        for (k, v) in [("ring", self.ring), ("rx_ring", self.rx_ring)] {
            if v == 0 || v > MAX_RING {
                return err(k, format!("{v}; expected 1 to {MAX_RING} packets"));
            }
        }
        self.costs
            .check()
            .map_err(|(k, m)| (format!("costs.{k}"), m))?;
        let preference = self
            .preference
            .resolve()
            .map_err(|m| ("preference.packet_size".to_string(), m))?;
        for (k, v) in [("factor", self.factor), ("numa_remote", self.numa_remote)] {
            if !(v.is_finite() && v > 0.0 && v <= 100.0) {
                return err(k, format!("{v}; expected a number above 0, at most 100"));
            }
        }
        let burst = match self.policer.burst.0 {
            ByteSize::Bytes(b) if b > 0 => b,
            _ => return err("policer.burst", "expected a positive size in bytes".into()),
        };
        if self.hbs.demote_after == 0 {
            return err("hbs.demote_after", "0; expected at least 1 poll".into());
        }
        let nic_handler = match &self.nic_handler {
            Some(h) => Some(
                h.resolve()
                    .map_err(|(k, m)| (format!("nic_handler.{k}"), m))?,
            ),
            None => None,
        };
        let c = &self.c2tb;
        if let Err(m) = crate::units::check_timer(c.interval.0) {
            return err("c2tb.interval", m);
        }
        if c.bucket_depth == 0 || c.bucket_depth > i64::MAX as u64 / 4 {
            return err(
                "c2tb.bucket_depth",
                format!("{}; expected a positive number of cycles", c.bucket_depth),
            );
        }
        Ok(CpuParams {
            cores: self.cores,
            hz: self.frequency.0,
            batch: self.batch,
            ring: self.ring,
            empty_poll: self.empty_poll,
            batch_overhead: self.batch_overhead,
            rx_ring: (self.rx_path == RxPath::Pmd).then_some(self.rx_ring),
            factor: self.factor,
            numa_remote: self.numa_remote,
            vms_factor: self.vms_factor,
            costs: self.costs,
            preference,
            c2tb: (self.limiter == Limiter::C2tb).then_some(C2tbParams {
                mode: c.mode,
                interval: c.interval.0,
                depth: c.bucket_depth as i64,
                redistribution: c.redistribution,
            }),
            policer: (self.limiter == Limiter::Policing || nic_handler.is_some()).then_some(
                PolicerParams {
                    unit: self.policer.unit,
                    burst,
                    from_start: self.limiter == Limiter::Policing,
                },
            ),
            hbs: (self.scheduler == Scheduler::Hbs).then_some(self.hbs.demote_after),
            nic_handler,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_resolve_and_bad_keys_are_named() {
        let p = CpuSpec::default().resolve().unwrap();
        assert_eq!(
            (p.cores, p.hz, p.batch, p.ring),
            (1, 2_200_000_000, 32, 256)
        );
        assert_eq!(p.preference, (362, Flows::Single));
        assert!(p.c2tb.is_none());
        let bad = CpuSpec {
            cores: 0,
            ..CpuSpec::default()
        };
        assert_eq!(bad.resolve().unwrap_err().0, "cores");
        let mut bad = CpuSpec::default();
        bad.preference.packet_size = Size(ByteSize::Bytes(40));
        assert_eq!(bad.resolve().unwrap_err().0, "preference.packet_size");
        let mut bad = CpuSpec::default();
        bad.costs.egress = f64::NAN;
        assert_eq!(bad.resolve().unwrap_err().0, "costs.egress");
    }
}
