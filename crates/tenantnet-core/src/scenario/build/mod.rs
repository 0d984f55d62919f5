//! From a parsed scenario to a ready [`Sim`]: wire the topology, resolve transport
//! settings, draw every flow (workload by workload, in `flows`). Every check that
//! needs more than one key (a host name against the topology, a buffer against the
//! packet size, a CDF file's contents) happens here or in `flows` and fails with a
//! [`ScenarioError`] naming the key.

use std::path::Path;

use toml::Value;

pub mod cpu;
pub mod fabric;
pub mod fabric_file;
pub mod flows;
pub mod layout;
pub mod lifetimes;
mod periodic;
pub mod pipes;
pub mod presets;
pub mod qshare;
pub mod tenants;
pub mod tenants_file;
pub mod transport;

use self::flows::WorkloadCtx;
use super::estimate::{Estimator, RunShape};
use super::parse::{join, lookup, Scenario, ScenarioError};
use super::spec::{Protocol, TransportSpec};
use super::workloads::{Hosts, WorkloadKind};
use super::LoadOptions;
use crate::engine::Time;
use crate::net::{FabricConfig, HostId, Network, PortId};
use crate::sim::recorder::OutputParams;
use crate::sim::results::{RunMeta, WorkloadInfo};
use crate::sim::{Sim, SimParams};
use crate::transport::TcpConfig;
use crate::units::{ByteSize, Size};
use crate::workload::{Exchanges, FlowSpec};

/// Where errors point: the file, its parsed text, and the folder relative paths start from.
pub struct Ctx<'a> {
    /// Scenario file name.
    pub file: &'a str,
    /// The scenario as parsed TOML, to quote values in errors.
    pub root: &'a Value,
    /// Folder of the scenario file.
    pub base_dir: &'a Path,
    /// The tables the scenario names by file, as the caller read them.
    pub inputs: &'a crate::scenario::Inputs,
}

impl Ctx<'_> {
    /// An error at `key`, quoting its value.
    pub fn err(&self, key: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError::at(self.file, key, lookup(self.root, key), message)
    }

    /// Whether the scenario writes `key` (rather than leaving it to its default).
    pub fn written(&self, key: &str) -> bool {
        lookup(self.root, key).is_some()
    }
}

/// Simple glob matching: `*` any run of characters, `?` any one character.
pub fn glob(pattern: &str, name: &str) -> bool {
    fn rec(p: &[char], n: &[char]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some('*'), _) => rec(&p[1..], n) || (!n.is_empty() && rec(p, &n[1..])),
            (Some('?'), Some(_)) => rec(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => rec(&p[1..], &n[1..]),
            _ => false,
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    rec(&p, &n)
}

fn host_range(net: &Network) -> String {
    let n = net.hosts.len();
    let name = |i: usize| net.host_name(HostId(i as u32)).to_string();
    match n {
        0 => "none".into(),
        1..=4 => (0..n).map(name).collect::<Vec<_>>().join(", "),
        _ => format!("{}, {}, … {} ({} hosts)", name(0), name(1), name(n - 1), n),
    }
}

/// The hosts a selector names, in host order, without duplicates.
pub(super) fn resolve_hosts(
    ctx: &Ctx,
    net: &Network,
    sel: &Hosts,
    key: &str,
) -> Result<Vec<HostId>, ScenarioError> {
    let mut chosen = vec![false; net.hosts.len()];
    for pat in &sel.0 {
        let mut any = false;
        for (i, h) in net.hosts.iter().enumerate() {
            let name = &net.nodes[h.node.idx()].name;
            if pat == "all" || glob(pat, name) {
                chosen[i] = true;
                any = true;
            }
        }
        if !any {
            return Err(ctx.err(
                key,
                format!(
                    "no host of this topology matches {}; expected host names such as {}",
                    crate::units::quoted(pat),
                    host_range(net)
                ),
            ));
        }
    }
    Ok((0..net.hosts.len())
        .filter(|&i| chosen[i])
        .map(|i| HostId(i as u32))
        .collect())
}

pub(super) fn bytes_only(
    ctx: &Ctx,
    s: Option<Size>,
    key: &str,
    default: u64,
) -> Result<u64, ScenarioError> {
    match s {
        None => Ok(default),
        Some(Size(ByteSize::Bytes(b))) if b > 0 => Ok(b),
        Some(Size(ByteSize::Bytes(_))) => Err(ctx.err(key, "expected a positive size in bytes")),
        Some(Size(ByteSize::Packets(_))) => Err(ctx.err(
            key,
            "expected a size in bytes, such as \"1460B\", not packets",
        )),
    }
}

/// The scenario's flows, the transport configurations they index, its tenants and
/// per-workload facts.
struct Traffic {
    flows: Vec<FlowSpec>,
    exchanges: Exchanges,
    tcp: Vec<TcpConfig>,
    tenants: Vec<String>,
    infos: Vec<WorkloadInfo>,
}

/// What every workload shares while its flows are drawn.
struct Shared<'a> {
    net: &'a Network,
    base_tcp: &'a TcpConfig,
    fabric: &'a FabricConfig,
    declared: &'a tenants::BuiltTenants,
}

/// Checks that a transport's packets fit every port buffer.
fn fits_ports(
    ctx: &Ctx,
    fabric: &FabricConfig,
    cfg: &TcpConfig,
    key: &str,
) -> Result<(), ScenarioError> {
    for (b, bk) in [
        (fabric.switch_port.buffer, "network.buffer"),
        (fabric.host_port.buffer, "network.host_buffer"),
    ] {
        let bk = if ctx.written(bk) {
            bk
        } else {
            "network.buffer"
        };
        transport::fits(ctx, cfg, key, b, bk)?;
    }
    Ok(())
}

/// The declared tenant that an undeclared `name` is probably a misspelling of: one
/// whose name it starts with or that starts with it, or one at most a quarter of its
/// letters away. A tenant the scenario does not declare is allowed (traffic of no VMs,
/// no guarantee), so only a name this close to a declared one is taken for a typo.
fn typo<'a>(name: &str, declared: &'a [String]) -> Option<&'a str> {
    if declared.iter().any(|d| d == name) {
        return None;
    }
    let close = |d: &String| {
        let prefix =
            d.len().min(name.len()) >= 3 && (d.starts_with(name) || name.starts_with(d.as_str()));
        prefix || strsim::normalized_levenshtein(d, name) >= 0.75
    };
    declared.iter().find(|d| close(d)).map(String::as_str)
}

/// Draws every workload's flows, in workload order.
fn traffic(
    sc: &Scenario,
    ctx: &Ctx,
    sh: &Shared,
    est: &mut Estimator,
) -> Result<Traffic, ScenarioError> {
    let pkt = sh.base_tcp.packet_size();
    let max_packet = sh.fabric.host_port.buffer.min(sh.fabric.switch_port.buffer);
    let mut t = Traffic {
        flows: Vec::new(),
        exchanges: Exchanges::default(),
        tcp: vec![sh.base_tcp.clone()],
        tenants: sh.declared.names.clone(),
        infos: Vec::new(),
    };
    for (wi, w) in sc.workloads.iter().enumerate() {
        let key = format!("workloads[{wi}]");
        let k = |f: &str| join(&key, f);
        if ctx.written(&k("tenant")) {
            if let Some(near) = typo(&w.common.tenant, &sh.declared.names) {
                return Err(ctx.err(
                    &k("tenant"),
                    format!(
                        "names no tenant of [[tenants]], but is close to {near:?}: a tenant not declared has no VMs and no guarantee (its traffic is the hosts'); expected {near:?}, or a name apart from the declared ones"
                    ),
                ));
            }
        }
        let fresh = !t.tenants.contains(&w.common.tenant);
        let tenant = match t.tenants.iter().position(|n| *n == w.common.tenant) {
            Some(i) => i as u32,
            None => {
                t.tenants.push(w.common.tenant.clone());
                t.tenants.len() as u32 - 1
            }
        };
        let pias = match &w.common.pias {
            None => None,
            Some(p) if p.dscp > 63 => {
                return Err(ctx.err(&k("pias.dscp"), "expected a DSCP value in 0..=63"))
            }
            Some(p) => Some((p.threshold.0.bytes(pkt), p.dscp)),
        };
        let (wcfg, tkey) = match &w.common.transport {
            None => (sh.base_tcp.clone(), "transport".to_string()),
            Some(o) => {
                let cfg = transport::resolve(ctx, &sc.transport.overlaid(o), &k("transport"))?;
                fits_ports(ctx, sh.fabric, &cfg, &k("transport"))?;
                (cfg, k("transport"))
            }
        };
        let mine = sh
            .declared
            .vms_of
            .get(tenant as usize)
            .map_or(&[][..], |v| v.as_slice());
        if !mine.is_empty() {
            transport::fits(ctx, &wcfg, &tkey, sh.declared.vm_queue, "vswitch.queue")?;
        }
        let transport = match t.tcp.iter().position(|c| *c == wcfg) {
            Some(i) => i as u32,
            None => {
                t.tcp.push(wcfg.clone());
                t.tcp.len() as u32 - 1
            }
        };
        let protocols = match &w.kind {
            WorkloadKind::Trace(tr) => {
                let base = w.common.transport.clone().unwrap_or_default();
                let mut resolve = |p: Protocol| {
                    let o = TransportSpec {
                        protocol: Some(p),
                        ..base.clone()
                    };
                    let cfg = transport::resolve(ctx, &sc.transport.overlaid(&o), &k("transport"))?;
                    fits_ports(ctx, sh.fabric, &cfg, &k("transport"))?;
                    Ok(match t.tcp.iter().position(|c| *c == cfg) {
                        Some(i) => i as u32,
                        None => {
                            t.tcp.push(cfg);
                            t.tcp.len() as u32 - 1
                        }
                    })
                };
                flows::trace::protocols(ctx, tr, &mut resolve)?
            }
            _ => Vec::new(),
        };
        let wc = WorkloadCtx {
            ctx,
            net: sh.net,
            index: wi,
            tenant,
            tenant_name: &w.common.tenant,
            dscp: &w.common.dscp.0,
            pias,
            tcp: &wcfg,
            transport,
            seed: sc.simulation.seed,
            max_packet,
            flows_so_far: t.flows.len(),
            exchanges_so_far: (t.exchanges.gates.len(), t.exchanges.queries.len()),
            vms: &sh.declared.params.vms,
            mine,
            vm_queue: sh.declared.vm_queue,
            tenants: &t.tenants,
            vms_of: &sh.declared.vms_of,
            protocols: &protocols,
        };
        let made = flows::generate(&w.kind, &wc, est)?;
        // a trace whose rows all name their tenants brings no tenant of its own
        let unused = fresh && !made.flows.iter().any(|f| f.tenant == tenant);
        if unused && matches!(w.kind, WorkloadKind::Trace(_)) {
            t.tenants.pop();
        }
        t.infos.push(made.info);
        if t.flows.is_empty() {
            t.flows = made.flows; // a large trace's specs are not copied
        } else {
            t.flows.extend(made.flows);
        }
        t.exchanges.gates.extend(made.exchanges.gates);
        t.exchanges.queries.extend(made.exchanges.queries);
    }
    Ok(t)
}

/// What the run records.
fn output(sc: &Scenario, ctx: &Ctx) -> Result<OutputParams, ScenarioError> {
    let duration = sc.simulation.duration.0;
    let interval = sc
        .output
        .sample_interval
        .map_or((duration / 100).max(1), |s| s.0);
    if interval < MIN_SAMPLE_INTERVAL {
        return Err(ctx.err(
            "output.sample_interval",
            "expected at least 1ns (the shortest sampling interval)",
        ));
    }
    let mut scopes = sc.output.throughput.clone();
    scopes.sort();
    scopes.dedup();
    Ok(OutputParams {
        interval,
        scopes,
        queues: sc.output.queues,
        host_queues: sc.output.host_queues,
        capture: None,
        trace: None,
    })
}

/// The flows `output.trace_flows` and `output.trace_fraction` trace among `flows`
/// (each flow drawn with that chance from the seed's `flow_trace` stream, one draw a
/// flow in order), and the most rows kept; None without a trace.
fn flow_trace(
    sc: &Scenario,
    ctx: &Ctx,
    flows: &[FlowSpec],
) -> Result<Option<(Vec<bool>, u64)>, ScenarioError> {
    let o = &sc.output;
    let limit = kept_limit(ctx, "output.trace_rows", o.trace_rows, "rows")?;
    let fraction = o.trace_fraction.unwrap_or(0.0);
    if !(0.0..=1.0).contains(&fraction) {
        return Err(ctx.err("output.trace_fraction", "expected a fraction from 0 to 1"));
    }
    if o.trace_flows.is_empty() && fraction == 0.0 {
        return Ok(None);
    }
    let tcp = |f: &FlowSpec| matches!(f.kind, crate::workload::FlowKind::Tcp { .. });
    let mut draw = crate::engine::rng::Rng::stream(sc.simulation.seed, "flow_trace");
    let mut on: Vec<bool> = (flows.iter())
        .map(|f| draw.uniform() < fraction && tcp(f))
        .collect();
    for (k, &id) in o.trace_flows.iter().enumerate() {
        let key = format!("output.trace_flows[{k}]");
        match flows.get(id as usize) {
            None => {
                return Err(ctx.err(
                    &key,
                    format!(
                        "no flow {id}: the run has {} flows (ids 0 to {})",
                        flows.len(),
                        flows.len().saturating_sub(1)
                    ),
                ));
            }
            Some(f) if !tcp(f) => {
                return Err(ctx.err(
                    &key,
                    format!("flow {id} is UDP: a trace follows a TCP sender"),
                ));
            }
            Some(_) => on[id as usize] = true,
        }
    }
    Ok(Some((on, limit)))
}

/// The most rows a packet capture or a flow trace keeps unless `output.capture_packets`
/// or `output.trace_rows` says.
pub const KEPT_ROWS: u64 = 1_000_000;

/// The most rows kept as `key` sets it (`value`), from 1 to 2^32 `what`.
fn kept_limit(ctx: &Ctx, key: &str, value: Option<u64>, what: &str) -> Result<u64, ScenarioError> {
    match value.unwrap_or(KEPT_ROWS) {
        n @ 1..=0x1_0000_0000 => Ok(n),
        _ => Err(ctx.err(key, format!("expected from 1 to 2^32 {what}"))),
    }
}

/// The ports `output.capture` names (module doc of `sim/capture.rs`), and the most
/// packets kept; None without a capture.
fn capture(
    sc: &Scenario,
    ctx: &Ctx,
    net: &Network,
) -> Result<Option<(Vec<u32>, u64)>, ScenarioError> {
    let o = &sc.output;
    let limit = kept_limit(ctx, "output.capture_packets", o.capture_packets, "packets")?;
    if o.capture.is_empty() {
        return Ok(None);
    }
    let mut ports = Vec::new();
    for (i, name) in o.capture.iter().enumerate() {
        let key = format!("output.capture[{i}]");
        let (node, peer) = match name.split_once("->") {
            Some((a, b)) => (a.trim(), Some(b.trim())),
            None => (name.trim(), None),
        };
        let Some(n) = net.node_by_name(node) else {
            return Err(ctx.err(&key, format!("no node named {node:?}: expected a host or switch of the topology, or \"node->peer\"")));
        };
        let found: Vec<u32> = (0..net.ports.len() as u32)
            .filter(|&p| match peer {
                Some(q) => net.port_name(PortId(p)) == format!("{node}->{q}"),
                None => net.ports[p as usize].node() == n,
            })
            .collect();
        if found.is_empty() {
            return Err(ctx.err(
                &key,
                format!("{node} has no port toward {:?}", peer.unwrap_or("")),
            ));
        }
        ports.extend(found);
    }
    ports.sort_unstable();
    ports.dedup();
    Ok(Some((ports, limit)))
}

/// The shortest sampling interval: 1 ns.
pub const MIN_SAMPLE_INTERVAL: Time = 1000;

/// Builds the simulation a scenario describes, refusing it if its run would need
/// more memory or events than `opts` allow.
pub fn build(sc: &Scenario, ctx: &Ctx, opts: &LoadOptions) -> Result<Sim, ScenarioError> {
    let budget = opts.memory_budget;
    if sc.simulation.duration.0 == 0 {
        return Err(ctx.err("simulation.duration", "expected a positive duration"));
    }
    let duration = sc.simulation.duration.0;
    let seed = sc.simulation.seed;
    let mut est = Estimator::new(budget, opts.max_events);
    let base_tcp = transport::resolve(ctx, &sc.transport, "transport")?;
    let pkt = base_tcp.packet_size();
    let network = presets::network(ctx, &sc.network, &sc.vswitch)?;
    let profile = sc.transport.profile.unwrap_or_default();
    let fabric = fabric::fabric(ctx, &network, pkt, profile)?;
    fits_ports(ctx, &fabric, &base_tcp, "transport")?;
    let mut output = output(sc, ctx)?;

    let (builder, topo_desc) = fabric_file::topology(ctx, &sc.topology)?;
    est.network(ctx, &builder)?;
    let qdc = (sc.qshare.as_ref())
        .map(|q| qshare::datacenter(ctx, q, &network, &builder))
        .transpose()?;
    let net = builder
        .build(&fabric, seed)
        .map_err(|e| ScenarioError::at(ctx.file, "topology", None, e))?;
    fabric::marks_in_flight(ctx, &network, &net)?;
    output.capture = capture(sc, ctx, &net)?;

    let expanded = tenants_file::expand(ctx, sc, &net)?;
    let sc = expanded.as_ref().unwrap_or(sc);
    let lives = lifetimes::check(ctx, &sc.tenants, duration, sc.qshare.is_some())?;
    let mut declared = tenants::build(ctx, &net, &sc.tenants, &sc.vswitch, pkt)?;
    let mut controllers = Vec::new();
    if let (Some(q), Some(dc)) = (&sc.qshare, qdc) {
        // tenants given by their size are placed by Algorithm 1, then built
        let embedded = qshare::embed(ctx, q, dc, &net, (&sc.tenants, &lives), &declared)?;
        if sc.tenants.iter().any(|t| t.size.is_some()) {
            declared = tenants::build(ctx, &net, &embedded.tenants, &sc.vswitch, pkt)?;
        }
        controllers.push(qshare::controller(ctx, q, embedded, &net, &declared, seed)?);
    } else if let Some(t) = sc.tenants.iter().position(|t| t.size.is_some()) {
        return Err(ctx.err(
            &format!("tenants[{t}].size"),
            "QShare's Algorithm 1 places a tenant given by its size: expected a [qshare] \
             table, or the tenant's hosts or vms",
        ));
    }
    if let Some(cpu) = declared.params.cpu.as_mut() {
        cpu.multiple = (sc.workloads.iter())
            .map(|w| w.common.classify == crate::vswitch::c2qos::Flows::Multiple)
            .collect();
    }
    let shared = Shared {
        net: &net,
        base_tcp: &base_tcp,
        fabric: &fabric,
        declared: &declared,
    };
    let mut t = traffic(sc, ctx, &shared, &mut est)?;
    lifetimes::clip(ctx, &lives, &t.tenants, &mut t.flows, &mut t.exchanges)?;
    output.trace = flow_trace(sc, ctx, &t.flows)?;
    let periodic = periodic::records(sc, &net, &declared.params, t.tenants.len());
    est.run(
        ctx,
        &RunShape {
            net: &net,
            flows: &t.flows,
            tcp: &t.tcp,
            end: duration,
            tenants: t.tenants.len(),
            output: &output,
            vswitch: &declared.params,
            vm_queue: declared.vm_queue,
            periodic: &periodic,
        },
    )?;
    let params = SimParams {
        net,
        flows: t.flows,
        exchanges: t.exchanges,
        tcp: t.tcp,
        duration,
        seed,
        ties: sc.simulation.ties,
        stop_when_done: sc.simulation.stop_when_done,
        output,
        meta: RunMeta {
            name: sc.name.clone().unwrap_or_else(|| ctx.file.to_string()),
            topology: topo_desc,
            tenants: t.tenants,
            workloads: t.infos,
        },
        vswitch: declared.params,
        controllers,
        footprint: est.fp,
        budget,
    };
    Ok(Sim::new(params))
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn globbing() {
        assert!(glob("h*", "h12"));
        assert!(glob("left?", "left3"));
        assert!(!glob("left?", "left12"));
        assert!(glob("pod0-*", "pod0-edge1"));
        assert!(!glob("h1", "h12"));
        assert!(glob("*", ""));
    }
}
