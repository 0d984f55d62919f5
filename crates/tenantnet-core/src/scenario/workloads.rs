//! The `[[workloads]]` tables of a scenario.
//!
//! Every workload has a `kind` and the common keys of [`WorkloadCommon`] (tenant,
//! DSCP, transport overrides); the other keys depend on the kind.

use std::borrow::Cow;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

pub use super::file_workloads::{Matrix, MatrixStep, Trace};
use super::spec::TransportSpec;
use crate::units::{Rate, Size, TimeSpan};

/// A set of hosts: a name (`"h3"`), a glob (`"left*"`, `"h1?"`), `"all"`, or a list
/// of these.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hosts(pub Vec<String>);

impl Hosts {
    /// Every host.
    pub fn all() -> Hosts {
        Hosts(vec!["all".into()])
    }
}

const HOSTS_EXPECTED: &str = "a host name, a glob such as \"left*\", \"all\", or a list of these";

impl<'de> Deserialize<'de> for Hosts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Hosts;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(HOSTS_EXPECTED)
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Hosts, E> {
                Ok(Hosts(vec![s.to_string()]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Hosts, A::Error> {
                let mut v = Vec::new();
                while let Some(s) = seq.next_element::<String>()? {
                    v.push(s);
                }
                if v.is_empty() {
                    return Err(de::Error::custom(format!(
                        "empty list; expected {HOSTS_EXPECTED}"
                    )));
                }
                Ok(Hosts(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Hosts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl JsonSchema for Hosts {
    fn schema_name() -> Cow<'static, str> {
        "Hosts".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": HOSTS_EXPECTED,
            "anyOf": [
                {"type": "string"},
                {"type": "array", "items": {"type": "string"}, "minItems": 1}
            ]
        })
    }
}

fn all_hosts() -> Hosts {
    Hosts::all()
}

fn zero() -> TimeSpan {
    TimeSpan(0)
}

fn one() -> u32 {
    1
}

fn default_tenant() -> String {
    "default".into()
}

/// The keys of [`WorkloadCommon`], which the parser takes out of a workload table
/// before reading the kind's own keys.
pub const COMMON_KEYS: [&str; 5] = ["tenant", "dscp", "pias", "transport", "classify"];

/// Keys every workload may have.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadCommon {
    /// Tenant the flows belong to ["default"].
    #[serde(default = "default_tenant")]
    pub tenant: String,
    /// DSCP of the flows' packets, 0–63: one value, or a list assigned to the
    /// workload's flows in turn (flow k gets entry k mod n) [0].
    #[serde(default)]
    pub dscp: Dscp,
    /// PIAS tagging: each flow's first `threshold` bytes carry DSCP `dscp`.
    #[serde(default)]
    pub pias: Option<Pias>,
    /// Transport overrides for this workload's TCP flows.
    #[serde(default)]
    pub transport: Option<TransportSpec>,
    /// How the vswitch classifies its packets, for the CPU model's cost: `single`
    /// (few flows, exact-match cache hits) or `multiple` (many flows, misses;
    /// C2QoS §III-B) ["single"].
    #[serde(default)]
    pub classify: crate::vswitch::c2qos::Flows,
}

/// PIAS (Bai et al., NSDI 2015) two-level tagging at the host: the first
/// `threshold` bytes of every flow carry `dscp` (mapped to a strict-priority queue),
/// the rest the flow's own DSCP (its service queue).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pias {
    /// Demotion threshold ["100KB"].
    #[serde(default = "pias_threshold")]
    pub threshold: Size,
    /// DSCP of the bytes below the threshold.
    pub dscp: u8,
}

fn pias_threshold() -> Size {
    Size(crate::units::ByteSize::Bytes(100_000))
}

/// One DSCP value or a list of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dscp(pub Vec<u8>);

impl Default for Dscp {
    fn default() -> Self {
        Dscp(vec![0])
    }
}

impl<'de> Deserialize<'de> for Dscp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Clone, Copy)]
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Dscp;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a DSCP value 0-63 or a list of them")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dscp, E> {
                u8::try_from(v)
                    .ok()
                    .filter(|d| *d < 64)
                    .map(|d| Dscp(vec![d]))
                    .ok_or_else(|| E::custom(format!("{v} is not a DSCP value; expected 0-63")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dscp, E> {
                self.visit_i64(v.min(i64::MAX as u64) as i64)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Dscp, A::Error> {
                let mut v = Vec::new();
                while let Some(d) = seq.next_element::<i64>()? {
                    v.push(V.visit_i64::<A::Error>(d)?.0[0]);
                }
                if v.is_empty() {
                    return Err(de::Error::custom("empty list; expected DSCP values 0-63"));
                }
                Ok(Dscp(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Dscp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl JsonSchema for Dscp {
    fn schema_name() -> Cow<'static, str> {
        "Dscp".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "a DSCP value 0-63, or a list of them assigned to flows in turn",
            "anyOf": [
                {"type": "integer", "minimum": 0, "maximum": 63},
                {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 63}, "minItems": 1}
            ]
        })
    }
}

/// Long-lived flows between every source and every destination (src ≠ dst).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LongLived {
    /// Sending hosts.
    pub src: Hosts,
    /// Receiving hosts.
    pub dst: Hosts,
    /// Parallel flows per (src, dst) pair [1].
    #[serde(default = "one")]
    pub flows_per_pair: u32,
    /// Start time ["0s"].
    #[serde(default = "zero")]
    pub start: TimeSpan,
    /// Time the flows stop offering new data; absent: they run to the end.
    #[serde(default)]
    pub stop: Option<TimeSpan>,
}

/// Fixed-size flows between every source and every destination (src ≠ dst).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fixed {
    /// Sending hosts.
    pub src: Hosts,
    /// Receiving hosts.
    pub dst: Hosts,
    /// Bytes per flow, e.g. `"1MB"`.
    pub size: Size,
    /// Flows per (src, dst) pair [1].
    #[serde(default = "one")]
    pub flows_per_pair: u32,
    /// Start of the first flow of each pair ["0s"].
    #[serde(default = "zero")]
    pub start: TimeSpan,
    /// Gap between successive flows of a pair ["0s"].
    #[serde(default = "zero")]
    pub interval: TimeSpan,
}

/// A random permutation: every host sends one flow to a distinct other host.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Permutation {
    /// Hosts taking part ["all"].
    #[serde(default = "all_hosts")]
    pub hosts: Hosts,
    /// Bytes per flow; absent: long-lived.
    #[serde(default)]
    pub size: Option<Size>,
    /// Start time ["0s"].
    #[serde(default = "zero")]
    pub start: TimeSpan,
    /// Time long-lived flows stop offering data.
    #[serde(default)]
    pub stop: Option<TimeSpan>,
}

/// N-to-1 incast: every sender sends `size` bytes to `receiver` at the same time.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Incast {
    /// The receiving host.
    pub receiver: String,
    /// Sending hosts ["all", the receiver excluded].
    #[serde(default = "all_hosts")]
    pub senders: Hosts,
    /// Bytes each sender sends per round.
    pub size: Size,
    /// Start of the first round ["0s"].
    #[serde(default = "zero")]
    pub start: TimeSpan,
    /// Number of rounds [1].
    #[serde(default = "one")]
    pub rounds: u32,
    /// Gap between round starts ["0s"].
    #[serde(default = "zero")]
    pub interval: TimeSpan,
}

/// How a Poisson workload draws flow sizes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SizeSampling {
    /// One uniform point per stratum of the CDF, shuffled: exact marginal
    /// distribution, offered load on target.
    #[default]
    Stratified,
    /// Independent draws.
    Iid,
}

/// Poisson flow arrivals with sizes from a CDF at a target load.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Poisson {
    /// Offered load as a fraction of the summed NIC rate of the source hosts (0 < load).
    pub load: f64,
    /// A built-in size distribution: websearch, datamining, cache, hadoop, enterprise.
    #[serde(default)]
    pub cdf: Option<String>,
    /// A CDF file (`size_bytes cumulative_probability` per line), relative to the scenario.
    #[serde(default)]
    pub cdf_file: Option<String>,
    /// Source hosts ["all"].
    #[serde(default = "all_hosts")]
    pub src: Hosts,
    /// Destination hosts ["all"].
    #[serde(default = "all_hosts")]
    pub dst: Hosts,
    /// Number of flows to generate; exclusive with `stop`.
    #[serde(default)]
    pub flows: Option<u64>,
    /// End of the arrival window; exclusive with `flows`.
    #[serde(default)]
    pub stop: Option<TimeSpan>,
    /// Start of the arrival window ["0s"].
    #[serde(default = "zero")]
    pub start: TimeSpan,
    /// `stratified` (default) or `iid` size sampling.
    #[serde(default)]
    pub sizes: SizeSampling,
}

/// Constant-bit-rate UDP from every source to every destination.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cbr {
    /// Sending hosts.
    pub src: Hosts,
    /// Receiving hosts.
    pub dst: Hosts,
    /// Rate of each source.
    pub rate: Rate,
    /// Wire size of each packet [MSS + header].
    #[serde(default)]
    pub packet_size: Option<Size>,
    /// Start time ["0s"].
    #[serde(default = "zero")]
    pub start: TimeSpan,
    /// Stop time; absent: the end of the run.
    #[serde(default)]
    pub stop: Option<TimeSpan>,
}

/// Distribution of on/off period lengths.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PeriodDistribution {
    /// Exponential with the given mean.
    #[default]
    Exponential,
    /// Always exactly the given length.
    Constant,
}

/// On/off UDP: CBR at `rate` during on periods, silent during off periods.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OnOff {
    /// Sending hosts.
    pub src: Hosts,
    /// Receiving hosts.
    pub dst: Hosts,
    /// Rate while on.
    pub rate: Rate,
    /// Mean on-period length.
    pub on: TimeSpan,
    /// Mean off-period length.
    pub off: TimeSpan,
    /// `exponential` (default) or `constant` period lengths.
    #[serde(default)]
    pub distribution: PeriodDistribution,
    /// Wire size of each packet [MSS + header].
    #[serde(default)]
    pub packet_size: Option<Size>,
    /// Start time ["0s"].
    #[serde(default = "zero")]
    pub start: TimeSpan,
    /// Stop time; absent: the end of the run.
    #[serde(default)]
    pub stop: Option<TimeSpan>,
}

/// Request–response exchanges: each client sends `queries` queries, each a
/// request of `request` bytes to `fanout` servers, each of which answers with
/// `size` bytes once the whole request has arrived; a query is complete when every
/// response has arrived (its query completion time is in the `queries` table).
/// With one server per query this is Trinity's client–server FCT workload (§V-B);
/// with every server, its memcached fan-out queries (§V-C).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestResponse {
    /// Clients: they send the requests and receive the responses.
    pub src: Hosts,
    /// Servers.
    pub dst: Hosts,
    /// Response bytes from each server, e.g. `"20KiB"` (Trinity's 20 KB).
    pub size: Size,
    /// Request bytes ["100B"].
    #[serde(default = "request_size")]
    pub request: Size,
    /// Servers each query asks: that many, drawn at random among the servers on
    /// other hosts than the client; absent: all of them (a fan-out query).
    #[serde(default)]
    pub fanout: Option<u32>,
    /// Queries per client [1].
    #[serde(default = "one")]
    pub queries: u32,
    /// Open loop: a client begins a query every `interval` from `start`. Absent:
    /// closed loop, each query begins the moment the client's previous one is
    /// complete.
    #[serde(default)]
    pub interval: Option<TimeSpan>,
    /// When each client begins its first query ["0s"].
    #[serde(default = "zero")]
    pub start: TimeSpan,
}

fn request_size() -> Size {
    Size(crate::units::ByteSize::Bytes(100))
}

/// A ping-pong latency probe, as qperf's `tcp_lat` measures it: each client sends
/// a `message` to the server and waits for the same back before it sends the next,
/// `count` times; the latency is half the round trip (the `queries` table's qct_s
/// / 2; `Results.pingpong()` in Python). One message in flight at a time, so the
/// probe itself loads the network by next to nothing. Each message is its own
/// short TCP flow (no handshake is modelled).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PingPong {
    /// Clients.
    pub src: Hosts,
    /// The server (one VM or host; a client on the same host is an error).
    pub dst: Hosts,
    /// Payload bytes each way ["1B", qperf's default].
    #[serde(default = "one_byte")]
    pub message: Size,
    /// Round trips per client [1000]; the probe stops when they are done.
    #[serde(default = "thousand")]
    pub count: u32,
    /// When each client sends its first message ["0s"].
    #[serde(default = "zero")]
    pub start: TimeSpan,
}

fn one_byte() -> Size {
    Size(crate::units::ByteSize::Bytes(1))
}

fn thousand() -> u32 {
    1000
}

/// Closed-loop requests (QShare §7.1.2 and §7.2): every client keeps asking servers
/// of its tenant for flows, each flow's bytes drawn from a CDF and sent by the
/// server to the client. When a flow has been delivered the client asks again at
/// once (active) or, with probability `dormant`, first sleeps a time uniform on
/// [0, `dormancy`] (dormant). `servers = "each"` runs a loop per (client, server
/// on another host) pair, one request outstanding to each server (§7.2's shuffle;
/// the spec's choice #23 for §7.1.2); `"random"` one loop per client, each request
/// to a server drawn at random. No request begins at or after `stop`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClosedLoop {
    /// A built-in size distribution: websearch, datamining, cache, hadoop, enterprise.
    #[serde(default)]
    pub cdf: Option<String>,
    /// A CDF file (`size_bytes cumulative_probability` per line), relative to the scenario.
    #[serde(default)]
    pub cdf_file: Option<String>,
    /// Clients: they receive the flows ["all"].
    #[serde(default = "all_hosts")]
    pub src: Hosts,
    /// Servers: they send them ["all"].
    #[serde(default = "all_hosts")]
    pub dst: Hosts,
    /// `each` (a loop per client and server) or `random` (a loop per client) ["each"].
    #[serde(default)]
    pub servers: LoopServers,
    /// Probability that a delivered flow is followed by a dormant period [0.5].
    #[serde(default = "half")]
    pub dormant: f64,
    /// Dormant periods are uniform on [0, dormancy] ["1s"].
    #[serde(default = "one_second")]
    pub dormancy: TimeSpan,
    /// When every loop asks first ["0s"].
    #[serde(default = "zero")]
    pub start: TimeSpan,
    /// No request begins at or after this time.
    pub stop: TimeSpan,
}

/// Which servers a closed loop asks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoopServers {
    /// A loop per (client, server) pair.
    #[default]
    Each,
    /// A loop per client, each request to a server drawn at random.
    Random,
}

fn half() -> f64 {
    0.5
}

fn one_second() -> TimeSpan {
    TimeSpan(crate::engine::PS_PER_SEC)
}

/// A workload's kind-specific keys.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkloadKind {
    /// Long-lived flows.
    LongLived(LongLived),
    /// Fixed-size flows.
    Fixed(Fixed),
    /// A random permutation.
    Permutation(Permutation),
    /// N-to-1 incast.
    Incast(Incast),
    /// Poisson arrivals from a CDF.
    Poisson(Poisson),
    /// Constant-bit-rate UDP.
    Cbr(Cbr),
    /// On/off UDP.
    OnOff(OnOff),
    /// Request–response exchanges and fan-out queries.
    RequestResponse(RequestResponse),
    /// A ping-pong latency probe.
    PingPong(PingPong),
    /// Closed-loop requests with active and dormant periods.
    ClosedLoop(ClosedLoop),
    /// Flows replayed from a file.
    Trace(Trace),
    /// A traffic matrix's Poisson flows.
    Matrix(Matrix),
}

/// The workload kinds, as written in `kind`.
pub const WORKLOAD_KINDS: [&str; 12] = [
    "long_lived",
    "fixed",
    "permutation",
    "incast",
    "poisson",
    "cbr",
    "on_off",
    "request_response",
    "pingpong",
    "closed_loop",
    "trace",
    "matrix",
];

/// One `[[workloads]]` table.
#[derive(Clone, Debug, Serialize)]
pub struct WorkloadSpec {
    /// Tenant, DSCP, transport.
    #[serde(flatten)]
    pub common: WorkloadCommon,
    /// Kind-specific keys.
    #[serde(flatten)]
    pub kind: WorkloadKind,
}

/// One workload kind's JSON Schema: its own keys, the common keys and `kind`, and
/// no others (what `deny_unknown_fields` and the parser's split enforce).
fn variant_schema<T: JsonSchema>(g: &mut SchemaGenerator, kind: &str) -> serde_json::Value {
    let mut own = T::json_schema(g).to_value();
    let common = WorkloadCommon::json_schema(g).to_value();
    if let Some(props) = own.get_mut("properties").and_then(|p| p.as_object_mut()) {
        if let Some(cp) = common.get("properties").and_then(|p| p.as_object()) {
            props.extend(cp.clone());
        }
        props.insert(
            "kind".into(),
            serde_json::json!({"type": "string", "const": kind}),
        );
    }
    let required = own
        .as_object_mut()
        .map(|o| o.entry("required").or_insert_with(|| serde_json::json!([])));
    if let Some(serde_json::Value::Array(r)) = required {
        r.insert(0, serde_json::json!("kind"));
    }
    own["additionalProperties"] = serde_json::Value::Bool(false);
    own
}

impl JsonSchema for WorkloadSpec {
    fn schema_name() -> Cow<'static, str> {
        "Workload".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let variants = vec![
            variant_schema::<LongLived>(g, "long_lived"),
            variant_schema::<Fixed>(g, "fixed"),
            variant_schema::<Permutation>(g, "permutation"),
            variant_schema::<Incast>(g, "incast"),
            variant_schema::<Poisson>(g, "poisson"),
            variant_schema::<Cbr>(g, "cbr"),
            variant_schema::<OnOff>(g, "on_off"),
            variant_schema::<RequestResponse>(g, "request_response"),
            variant_schema::<PingPong>(g, "pingpong"),
            variant_schema::<ClosedLoop>(g, "closed_loop"),
            variant_schema::<Trace>(g, "trace"),
            variant_schema::<Matrix>(g, "matrix"),
        ];
        json_schema!({
            "description": "One [[workloads]] table; `kind` selects the keys it may have.",
            "oneOf": variants,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_keys_are_the_struct_fields() {
        let schema = schemars::schema_for!(WorkloadCommon).to_value();
        let mut fields: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        let mut keys = COMMON_KEYS.to_vec();
        fields.sort_unstable();
        keys.sort_unstable();
        assert_eq!(fields, keys);
    }
}
