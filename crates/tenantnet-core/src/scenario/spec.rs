//! The scenario format: what a TOML scenario file may contain. The doc comments
//! become the descriptions in `tenantnet schema`'s JSON Schema.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::tenants::{TenantSpec, VswitchSpec};
use super::workloads::WorkloadSpec;
use crate::net::host_nic::{AckPath, HostNic};
use crate::net::topology::{Dumbbell, FatTree, Graph, Jellyfish, LeafSpine, SpecError, Star};
use crate::net::NetworkBuilder;
pub use crate::sim::recorder::Scope;
use crate::switch::buffer::BufferPolicyKind;
use crate::switch::ecn::{EcnMarkPoint, EcnScope};
use crate::switch::sched::SchedulerKind;
use crate::transport::{CwrReduction, DctcpCut, DctcpWindow, LossSsthresh, Recovery, TlpTimeout};
use crate::units::{Size, TimeSpan};

// `T` and `W` are the topology and workload types: the parser first reads both as
// plain tables, then dispatches on their `kind` key, so that errors inside them still
// name the exact key.

/// A tenantnet scenario: a topology, how its ports queue and mark, the default
/// transport, the workloads that run on it, and what to record.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "tenantnet scenario")]
pub struct ScenarioSpec<T = TopologySpec, W = WorkloadSpec> {
    /// A short name for the scenario, used in reports.
    #[serde(default)]
    pub name: Option<String>,
    /// Free text describing the scenario.
    #[serde(default)]
    pub description: Option<String>,
    /// Length of the run, seed, and stopping rule.
    pub simulation: SimulationSpec,
    /// The fabric: `kind` is one of `dumbbell`, `star`, `leaf_spine`, `fat_tree`,
    /// `jellyfish`, `graph`.
    pub topology: T,
    /// Buffers and ECN marking of every port.
    #[serde(default)]
    pub network: NetworkSpec,
    /// Defaults for every TCP flow; a workload's own `transport` table overrides them.
    #[serde(default)]
    pub transport: TransportSpec,
    /// Tenants with VMs and bandwidth guarantees: a list of `[[tenants]]` tables.
    #[serde(default)]
    pub tenants: Vec<TenantSpec>,
    /// The tenants' VMs from a file (CSV or Parquet, relative to the scenario), a row
    /// per VM: `tenant`, `host`, and optionally `vm` (its name [`<tenant>/<host>`]) and
    /// `guarantee` [the tenant's, from `[[tenants]]`]. A tenant the file names and
    /// `[[tenants]]` does not is added.
    #[serde(default)]
    pub tenants_file: Option<String>,
    /// How each host's virtual switch enforces its VMs' guarantees.
    #[serde(default)]
    pub vswitch: VswitchSpec,
    /// QShare's controller binding the tenants to switch queues during the run.
    #[serde(default)]
    pub qshare: Option<super::qshare::QShareSpec>,
    /// The traffic: a list of `[[workloads]]` tables, each with a `kind`.
    #[serde(default)]
    pub workloads: Vec<W>,
    /// What the run records.
    #[serde(default)]
    pub output: OutputSpec,
}

/// The fabric, selected by `kind`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TopologySpec {
    /// Two switches joined by one bottleneck link, `hosts_per_side` hosts on each.
    Dumbbell(Dumbbell),
    /// One switch with `hosts` hosts.
    Star(Star),
    /// Two-tier leaf-spine with an oversubscription ratio.
    LeafSpine(LeafSpine),
    /// Three-tier fat-tree(k), optionally oversubscribed at the core.
    FatTree(FatTree),
    /// Switches wired at random into a regular graph (Jellyfish).
    Jellyfish(Jellyfish),
    /// Hosts, switches and links written out.
    Graph(Graph),
}

impl TopologySpec {
    /// Wires the topology: the builder and a one-line description.
    pub fn build(&self) -> Result<(NetworkBuilder, String), SpecError> {
        match self {
            TopologySpec::Dumbbell(t) => t.build(),
            TopologySpec::Star(t) => t.build(),
            TopologySpec::LeafSpine(t) => t.build(),
            TopologySpec::FatTree(t) => t.build(),
            TopologySpec::Jellyfish(t) => t.build(),
            TopologySpec::Graph(t) => t.build(),
        }
    }
}

/// The topology kinds, as written in `kind`.
pub const TOPOLOGY_KINDS: [&str; 6] = [
    "dumbbell",
    "star",
    "leaf_spine",
    "fat_tree",
    "jellyfish",
    "graph",
];

/// Length of the run and randomness.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimulationSpec {
    /// Simulated time to run, e.g. `"50ms"`.
    pub duration: TimeSpan,
    /// Seed of every random stream (ECMP salts, workload arrivals, sizes, pairs).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// End the run as soon as every finite flow has completed (default false).
    #[serde(default)]
    pub stop_when_done: bool,
    /// How events at the same picosecond are ordered: `partitioned` (default), by a
    /// seeded rank of the port that scheduled them, drawn afresh at each instant, the
    /// order a parallel run needs; `scheduled`, in the order they were scheduled
    /// (htsim's order; a run under it takes one thread).
    #[serde(default)]
    pub ties: crate::engine::queue::Ties,
}

fn default_seed() -> u64 {
    1
}

/// Buffers, queues, scheduling and ECN of every port. By default a port is one
/// tail-drop FIFO with a byte limit; `host_nic` sets how host NICs order packets.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    /// Buffer of each switch port, e.g. `"1MB"` or `"100pkt"` (default `"1MB"`).
    #[serde(default = "default_buffer")]
    pub buffer: Size,
    /// ECN marking threshold K of each switch port, e.g. `"65pkt"`; absent: no marking.
    #[serde(default)]
    pub ecn_threshold: Option<Size>,
    /// Where K is applied: `enqueue` (default) or `dequeue`.
    #[serde(default)]
    pub ecn_mark: EcnMarkPoint,
    /// Buffer of each host NIC queue (default: `buffer`).
    #[serde(default)]
    pub host_buffer: Option<Size>,
    /// Whether host NIC queues mark at K like switch ports (default true).
    #[serde(default = "yes")]
    pub host_ecn: bool,
    /// How host NICs order packets: fifo (default), fq (per-flow round robin), ack_first
    /// or dscp (the switches' queues, by DSCP).
    #[serde(default)]
    pub host_nic: HostNic,
    /// The path ACKs take: hashed (default, ECMP) or symmetric (back along the data's path).
    #[serde(default)]
    pub ack_path: AckPath,
    /// The longest a packet that reaches a host waits for the host to take it (its NIC's receive-interrupt moderation), e.g. "8us": each waits a time drawn uniformly below it, in order, from the run's seed, so that hosts sending in step drift apart as real ones do (Linux's mlx5 driver moderates for 3 µs where its timer restarts on each completion, its default on the devices that can, and 16 µs from the interrupt event) [none].
    #[serde(default)]
    pub host_jitter: Option<TimeSpan>,
    /// The longest a packet a host sends waits before its NIC takes it (the driver's doorbell and the NIC's reads of the descriptor and the payload over PCIe), e.g. "1us": each waits a time drawn uniformly below it, in order, from the run's seed; a packet that finds the NIC busy waits for it as before; "0us" turns it off [1us under the `linux` transport profile (`[transport]`'s, the default), none under `htsim`].
    #[serde(default)]
    pub tx_jitter: Option<TimeSpan>,
    /// How far each port's clock may be off its link's rate, in parts per million: each port sends at the rate times 1 + u·clock_ppm·10⁻⁶, u drawn uniformly in [−1, 1] from the run's seed (IEEE 802.3 allows transmitters ±100 ppm), so that links of one nominal rate drift against each other as real ones do; guarantees, loads, ideal completion times and utilisation are still reckoned by the links' rates [100 under the `linux` transport profile (`[transport]`'s, the default), 0 under `htsim`].
    #[serde(default)]
    pub clock_ppm: Option<u32>,
    /// What K is compared with: `port` occupancy (default), the packet's `queue`, or `pmsb` (both).
    #[serde(default)]
    pub ecn_scope: EcnScope,
    /// Queues per switch port, 1 to 32 [1].
    #[serde(default = "one_queue")]
    pub queues: u32,
    /// Scheduler across a port's queues: strict, wrr, dwrr, wfq, sp_dwrr [dwrr].
    #[serde(default)]
    pub scheduler: SchedulerKind,
    /// One weight per queue, each at least 1 [all 1].
    #[serde(default)]
    pub weights: Option<Vec<u32>>,
    /// DWRR bytes per unit of weight per round [one full-size packet].
    #[serde(default)]
    pub quantum: Option<Size>,
    /// Strict-priority queues (0..n) above the DWRR group of `sp_dwrr` [1].
    #[serde(default = "one_queue")]
    pub strict_queues: u32,
    /// Buffer management of switch ports: tail_drop, static_partition, barberq, dynamic_threshold [tail_drop].
    #[serde(default)]
    pub buffer_policy: BufferPolicyKind,
    /// α of dynamic_threshold [1.0].
    #[serde(default = "default_alpha")]
    pub dt_alpha: f64,
    /// Each switch's shared pool for dynamic_threshold [buffer times the switch's ports].
    #[serde(default)]
    pub pool: Option<Size>,
    /// DSCP → queue map of every switch: "zero" (all to queue 0, default), "identity" (d to queue d), or a table such as { 46 = 7, 10 = 1 }.
    #[serde(default)]
    pub dscp_map: DscpMapSpec,
}

fn one_queue() -> u32 {
    1
}

fn default_alpha() -> f64 {
    1.0
}

/// A switch's DSCP → queue map.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum DscpMapSpec {
    /// Every DSCP to queue 0.
    #[default]
    Zero,
    /// DSCP d to queue d.
    Identity,
    /// Listed (dscp, queue) pairs; others to queue 0.
    Pairs(Vec<(u32, u32)>),
}

impl<'de> Deserialize<'de> for DscpMapSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, MapAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DscpMapSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"zero\", \"identity\", or a table of dscp = queue such as { 46 = 7 }")
            }
            fn visit_str<E: Error>(self, s: &str) -> Result<DscpMapSpec, E> {
                match s {
                    "zero" => Ok(DscpMapSpec::Zero),
                    "identity" => Ok(DscpMapSpec::Identity),
                    _ => Err(E::custom(format!(
                        "unknown value {}; expected \"zero\", \"identity\" or a table of DSCP = queue",
                        crate::units::quoted(s)
                    ))),
                }
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<DscpMapSpec, A::Error> {
                let mut pairs = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, u32>()? {
                    let d: u32 = k.parse().ok().filter(|d| *d < 64).ok_or_else(|| {
                        A::Error::custom(format!(
                            "DSCP {} is not a number from 0 to 63",
                            crate::units::quoted(&k)
                        ))
                    })?;
                    pairs.push((d, v));
                }
                Ok(DscpMapSpec::Pairs(pairs))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for DscpMapSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DscpMapSpec::Zero => s.serialize_str("zero"),
            DscpMapSpec::Identity => s.serialize_str("identity"),
            DscpMapSpec::Pairs(p) => {
                let m: std::collections::BTreeMap<String, u32> =
                    p.iter().map(|(d, q)| (d.to_string(), *q)).collect();
                m.serialize(s)
            }
        }
    }
}

impl JsonSchema for DscpMapSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "DscpMap".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "\"zero\", \"identity\", or a table of DSCP (0-63) = queue",
            "anyOf": [
                {"type": "string", "enum": ["zero", "identity"]},
                {"type": "object", "patternProperties": {"^([0-9]|[1-5][0-9]|6[0-3])$": {"type": "integer", "minimum": 0}}, "additionalProperties": false}
            ]
        })
    }
}

fn default_buffer() -> Size {
    Size(crate::units::ByteSize::Bytes(1_000_000))
}

fn yes() -> bool {
    true
}

impl Default for NetworkSpec {
    fn default() -> Self {
        NetworkSpec {
            buffer: default_buffer(),
            ecn_threshold: None,
            ecn_mark: EcnMarkPoint::Enqueue,
            host_buffer: None,
            host_ecn: true,
            host_nic: HostNic::Fifo,
            ack_path: AckPath::Hashed,
            host_jitter: None,
            tx_jitter: None,
            clock_ppm: None,
            ecn_scope: EcnScope::Port,
            queues: 1,
            scheduler: SchedulerKind::Dwrr,
            weights: None,
            quantum: None,
            strict_queues: 1,
            buffer_policy: BufferPolicyKind::TailDrop,
            dt_alpha: 1.0,
            pool: None,
            dscp_map: DscpMapSpec::Zero,
        }
    }
}

/// TCP variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// The transport profile's TCP: NewReno under `htsim`, CUBIC under `linux`.
    Tcp,
    /// TCP NewReno (RFC 5681, RFC 6582), whatever the profile.
    Newreno,
    /// DCTCP.
    Dctcp,
    /// CUBIC (RFC 9438) as Linux runs it, with HyStart.
    Cubic,
}

/// TCP parameters. Every key is optional; defaults in brackets, by `profile` where the two
/// profiles differ (`linux` is the default).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransportSpec {
    /// `tcp` (the profile's TCP: NewReno under `htsim`, CUBIC under `linux`), `newreno`, `dctcp` or `cubic` (RFC 9438 with HyStart, as Linux's) [tcp].
    pub protocol: Option<Protocol>,
    /// Maximum segment size, payload bytes ["1460B"].
    pub mss: Option<Size>,
    /// Header bytes per data packet on the wire ["40B"].
    pub header: Option<Size>,
    /// Size of a pure ACK on the wire ["64B"].
    pub ack_size: Option<Size>,
    /// Initial congestion window, segments [10].
    pub init_cwnd: Option<u32>,
    /// Initial slow-start threshold, segments [unbounded].
    pub init_ssthresh: Option<u32>,
    /// Minimum retransmission timeout ["10ms" under `htsim`, "200ms" under `linux`].
    pub min_rto: Option<TimeSpan>,
    /// Maximum retransmission timeout after backoff ["1s" under `htsim`, "120s" under `linux`].
    pub max_rto: Option<TimeSpan>,
    /// Retransmission timeout before the first RTT sample ["10ms" under `htsim`, the min RTO under `linux`].
    pub initial_rto: Option<TimeSpan>,
    /// Duplicate ACKs that trigger fast retransmit [3].
    pub dupack_threshold: Option<u32>,
    /// ECN-capable NewReno that halves its window on ECE (RFC 3168) [false; DCTCP always uses ECN].
    pub ecn: Option<bool>,
    /// Delayed ACKs: every second segment or on a timer [false under `htsim`, true under `linux`].
    pub delayed_ack: Option<bool>,
    /// Delayed-ACK timer ["1ms" under `htsim`, "40ms" under `linux`].
    pub delayed_ack_timeout: Option<TimeSpan>,
    /// DCTCP's EWMA gain g [0.0625].
    pub dctcp_g: Option<f64>,
    /// DCTCP's initial alpha [1.0, as Linux].
    pub dctcp_alpha_init: Option<f64>,
    /// When DCTCP cuts its window by alpha/2: `on_ece` (once per window on ECE, RFC 8257 and Linux) or `every_window` (at each window's end while alpha > 0, htsim) [on_ece].
    pub dctcp_cut: Option<DctcpCut>,
    /// How DCTCP delimits the windows over which it updates alpha (and cuts, with `every_window`): `sequence` (one round trip of data, RFC 8257 and Linux) or `acks` (ACK packets, one segment each, up to the congestion window at the previous window's end, htsim) [sequence].
    pub dctcp_window: Option<DctcpWindow>,
    /// TCP small queues: a sender stops while more than this many bytes of its data are in its host (vswitch and NIC queues and the NIC's wire), as with Linux's `tcp_limit_output_bytes` (128KB in 2012, 256KB from 2015, 4MB from 2025). A packet counts until its last bit leaves the host's NIC [no limit].
    pub limit_output_bytes: Option<Size>,
    /// How losses are detected and repaired: `newreno` (cumulative ACKs, RFC 6582: one hole a round trip, go-back-N after a timeout) or `reno_sack` (cumulative ACKs as Linux and ns-3 recover without SACK: duplicate ACKs counted as SACKed segments for the pipe, Linux's PRR, one retransmission per partial ACK) or `sack` (up to three SACK blocks on every ACK, RFC 2018/2883; RFC 6675's scoreboard with Proportional Rate Reduction, RFC 6937; after a timeout only holes are resent; a lost retransmission waits for the timeout) or `rack` (SACK with RACK-TLP loss detection, RFC 8985, Linux's default: losses marked by time with a reordering window, lost retransmissions sent again, a tail loss found by a probe) [newreno under `htsim`, rack under `linux`].
    pub recovery: Option<Recovery>,
    /// With `recovery = "rack"`, the tail loss probe's timeout: `rfc8985` (two smoothed RTTs, plus the delayed-ACK timeout when one segment is out) or `linux` (two smoothed RTTs plus 2ms, or plus the minimum RTO when one segment is out) [rfc8985 under `htsim`, linux under `linux`].
    pub tlp_timeout: Option<TlpTimeout>,
    /// Segments acknowledged at once at a connection's start even with delayed ACKs (Linux's quick-ACK mode: 16) [0 under `htsim`, 16 under `linux`].
    pub quick_acks: Option<u32>,
    /// With delayed ACKs, acknowledge at once the segment that ends the application's data (Linux does for a PSH segment the application reads) [false under `htsim`, true under `linux`].
    pub ack_push: Option<bool>,
    /// Start each sender with the RTT sample its connection's handshake would have given (tenantnet's flows have none): the round trip of an ACK-sized SYN and SYN-ACK over the flow's paths, idle. It gives the tail loss probe its timeout from the first window, as Linux's data segments have after the handshake (`tcp_synack_rtt_meas`), and replaces `initial_rto` for them (without it, under `linux`'s 200ms min RTO a lost first window waits for the timer) [false under `htsim`, true under `linux`].
    pub handshake_rtt: Option<bool>,
    /// How the window comes down after ECE, with `recovery = "sack"` or `"rack"`: `immediate` (at once to cwnd·(1 − α/2) for DCTCP, half for NewReno: the DCTCP paper, RFC 8257, htsim) or `prr` (a little on each ACK by Proportional Rate Reduction until the data sent before is acknowledged, as Linux's CWR state does); with `recovery = "newreno"` the cut is immediate [immediate under `htsim`, prr under `linux`].
    pub cwr_reduction: Option<CwrReduction>,
    /// What ssthresh halves when a loss is found or the retransmission timer expires: `flight` (max(FlightSize/2, 2·MSS), RFC 5681 eq. 4, RFC 6675, htsim; at a timeout with SACK the smaller of the flight and the window) or `cwnd` (max(cwnd/2, 2·MSS): Linux's Reno and ns-3's TcpLinuxReno; with SACK the flight counts SACKed bytes above a hole, which are not in the network) [flight under `htsim`, cwnd under `linux`].
    pub loss_ssthresh: Option<LossSsthresh>,
    /// A named set of defaults for the keys above, which keys set beside it override: `linux` (the default) or `htsim` (NewReno without SACK, min RTO 10ms, no delayed ACKs, matched to htsim for its cross-check and the benchmarks against it); `linux` is what a current Linux host does: CUBIC for `tcp`, RACK-TLP with Linux's probe timeout, min RTO 200ms, max RTO 120s, the initial RTO at the min RTO as after a handshake, delayed ACKs with a 40ms timer, 16 quick ACKs, PSH segments acknowledged at once, the handshake's RTT sample, the window brought down after ECE by PRR, ssthresh half the window after a loss. The profile also sets `network.clock_ppm` and `network.tx_jitter` where the scenario does not (100 ppm and 1us under `linux`, 0 and none under `htsim`) [linux].
    pub profile: Option<TransportProfile>,
}

crate::kinds::named_kinds! {
    /// A named set of transport defaults (`transport.profile`).
    TransportProfile (default Linux) {
        /// Matched to htsim (its cross-check and the benchmarks against it): NewReno without SACK, min RTO 10 ms, no delayed ACKs.
        Htsim = "htsim",
        /// A current Linux host: CUBIC with HyStart for `protocol = "tcp"` (Linux's default congestion control since 2.6.19), RACK-TLP (`tcp_recovery` = 1, Linux 4.18 on) with Linux's probe timeout, min RTO 200 ms (TCP_RTO_MIN), max RTO 120 s (TCP_RTO_MAX), delayed ACKs with a 40 ms timer (TCP_DELACK_MIN), 16 quick ACKs at the start (TCP_MAX_QUICKACKS), PSH segments acknowledged at once, the window brought down after ECE by PRR (`tcp_cwnd_reduction`), ssthresh after a loss half the window rather than the flight (`tcp_reno_ssthresh`). The initial RTO is the min RTO (whatever it is set to): Linux's data segments follow a handshake whose RTT sample on a datacenter path puts the RTO at its minimum, and tenantnet has no handshake (TCP_TIMEOUT_INIT, 1 s, is the SYN's); each sender starts with that sample (`handshake_rtt`), which gives the tail loss probe its timeout from the first window.
        Linux = "linux",
    }
}

impl TransportProfile {
    /// How far ports' clocks are apart under this profile when `network.clock_ppm`
    /// is absent: IEEE 802.3's ±100 ppm where hosts are real (`linux`), exact where
    /// the profile matches htsim, whose links have no clocks.
    pub fn clock_ppm(self) -> u32 {
        match self {
            TransportProfile::Htsim => 0,
            TransportProfile::Linux => 100,
        }
    }

    /// The longest a packet a host sends waits for its NIC under this profile when
    /// `network.tx_jitter` is absent, in picoseconds: about a PCIe round trip (1 µs,
    /// `net::host_jitter`) where hosts are real (`linux`), none where the profile
    /// matches htsim, whose hosts hand packets over at once.
    pub fn tx_jitter(self) -> u64 {
        match self {
            TransportProfile::Htsim => 0,
            TransportProfile::Linux => 1_000_000,
        }
    }

    /// The transport this profile sets when no key overrides it.
    pub fn config(self) -> crate::transport::TcpConfig {
        let d = crate::transport::TcpConfig::default();
        match self {
            TransportProfile::Htsim => d,
            TransportProfile::Linux => crate::transport::TcpConfig {
                cc: crate::transport::CongestionControl::Cubic,
                recovery: Recovery::Rack,
                tlp_timeout: TlpTimeout::Linux,
                min_rto: 200_000_000_000,
                initial_rto: 200_000_000_000,
                max_rto: 120_000_000_000_000,
                delayed_ack: true,
                delayed_ack_timeout: 40_000_000_000,
                quick_acks: 16,
                ack_push: true,
                handshake_rtt: true,
                cwr_reduction: CwrReduction::Prr,
                loss_ssthresh: LossSsthresh::Cwnd,
                ..d
            },
        }
    }
}

impl TransportSpec {
    /// Every key set to the value the simulator uses when it is absent.
    pub fn defaults() -> TransportSpec {
        use crate::units::ByteSize::Bytes;
        let d = TransportProfile::default().config();
        TransportSpec {
            protocol: Some(Protocol::Tcp),
            mss: Some(Size(Bytes(d.mss as u64))),
            header: Some(Size(Bytes(d.header as u64))),
            ack_size: Some(Size(Bytes(d.ack_size as u64))),
            init_cwnd: Some(d.init_cwnd),
            init_ssthresh: d.init_ssthresh,
            min_rto: Some(TimeSpan(d.min_rto)),
            max_rto: Some(TimeSpan(d.max_rto)),
            initial_rto: Some(TimeSpan(d.initial_rto)),
            dupack_threshold: Some(d.dupack_threshold),
            ecn: Some(d.ecn),
            delayed_ack: Some(d.delayed_ack),
            delayed_ack_timeout: Some(TimeSpan(d.delayed_ack_timeout)),
            dctcp_g: Some(d.dctcp_g),
            dctcp_alpha_init: Some(d.dctcp_alpha_init),
            dctcp_cut: Some(d.dctcp_cut),
            dctcp_window: Some(d.dctcp_window),
            limit_output_bytes: None,
            recovery: Some(d.recovery),
            tlp_timeout: Some(d.tlp_timeout),
            quick_acks: Some(d.quick_acks),
            ack_push: Some(d.ack_push),
            handshake_rtt: Some(d.handshake_rtt),
            cwr_reduction: Some(d.cwr_reduction),
            loss_ssthresh: Some(d.loss_ssthresh),
            profile: Some(TransportProfile::Linux),
        }
    }

    /// `self` with every key that `over` sets replaced by `over`'s value.
    pub fn overlaid(&self, over: &TransportSpec) -> TransportSpec {
        macro_rules! pick {
            ($($f:ident),*) => { TransportSpec { $($f: over.$f.or(self.$f)),* } };
        }
        pick!(
            protocol,
            mss,
            header,
            ack_size,
            init_cwnd,
            init_ssthresh,
            min_rto,
            max_rto,
            initial_rto,
            dupack_threshold,
            ecn,
            delayed_ack,
            delayed_ack_timeout,
            dctcp_g,
            dctcp_alpha_init,
            dctcp_cut,
            dctcp_window,
            limit_output_bytes,
            recovery,
            tlp_timeout,
            quick_acks,
            ack_push,
            handshake_rtt,
            cwr_reduction,
            loss_ssthresh,
            profile
        )
    }
}

/// What the run records.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Sampling interval of throughput and queue samples [duration / 100].
    #[serde(default)]
    pub sample_interval: Option<TimeSpan>,
    /// Throughput scopes to record [`["flow", "tenant", "link", "queue", "vm"]`].
    #[serde(default = "default_scopes")]
    pub throughput: Vec<Scope>,
    /// Record switch-port occupancy every interval in `queues.parquet` [true].
    #[serde(default = "yes")]
    pub queues: bool,
    /// Record host NIC queues in `queues.parquet` too [false].
    #[serde(default)]
    pub host_queues: bool,
    /// Capture every packet these ports put on the wire, written as pcap files (`capture/NODE-PEER.pcap`, Wireshark's and tshark's format, in simulated time) and `capture.parquet`: a node's name (all its ports) or `"node->peer"` (one port), e.g. `["h0", "tor0->agg1"]` [none].
    #[serde(default)]
    pub capture: Vec<String>,
    /// The most packets a capture keeps, the earliest first; the summary says when more went by [1000000].
    #[serde(default)]
    pub capture_packets: Option<u64>,
    /// TCP flows (by `flow_id`) whose sender state is traced in `flow_trace.parquet` each time the simulator drives it: the window, ssthresh, the smoothed RTT, the RTO and the congestion state (open, disorder, cwr, recovery, loss) [none].
    #[serde(default)]
    pub trace_flows: Vec<u64>,
    /// Besides `trace_flows`, a fraction of the TCP flows traced, drawn from the run's seed, e.g. 0.01 [none].
    #[serde(default)]
    pub trace_fraction: Option<f64>,
    /// The most rows a flow trace keeps, the earliest first [1000000].
    #[serde(default)]
    pub trace_rows: Option<u64>,
}

fn default_scopes() -> Vec<Scope> {
    vec![
        Scope::Flow,
        Scope::Tenant,
        Scope::Link,
        Scope::Queue,
        Scope::Vm,
    ]
}

impl Default for OutputSpec {
    fn default() -> Self {
        OutputSpec {
            sample_interval: None,
            throughput: default_scopes(),
            queues: true,
            host_queues: false,
            capture: Vec::new(),
            capture_packets: None,
            trace_flows: Vec::new(),
            trace_fraction: None,
            trace_rows: None,
        }
    }
}
