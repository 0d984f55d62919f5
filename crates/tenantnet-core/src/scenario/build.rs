//! From a parsed scenario to a ready [`Sim`]: wire the topology, resolve transport
//! settings, draw every flow (workload by workload, in `flows`). Every check that
//! needs more than one key (a host name against the topology, a buffer against the
//! packet size, a CDF file's contents) happens here or in `flows` and fails with a
//! [`ScenarioError`] naming the key.

use std::path::Path;

use toml::Value;

use super::fabric;
use super::flows::{self, WorkloadCtx};
use super::parse::{join, lookup, Scenario, ScenarioError};
use super::spec::{Protocol, TransportSpec};
use super::vswitch;
use super::workloads::Hosts;
use crate::net::{HostId, Network};
use crate::sim::recorder::OutputParams;
use crate::sim::results::RunMeta;
use crate::sim::{Sim, SimParams};
use crate::transport::{CongestionControl, TcpConfig};
use crate::units::{ByteSize, Size};
use crate::workload::FlowSpec;

/// Where errors point: the file, its parsed text, and the folder relative paths start from.
pub struct Ctx<'a> {
    /// Scenario file name.
    pub file: &'a str,
    /// The scenario as parsed TOML, to quote values in errors.
    pub root: &'a Value,
    /// Folder of the scenario file.
    pub base_dir: &'a Path,
}

impl Ctx<'_> {
    /// An error at `key`, quoting its value.
    pub fn err(&self, key: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError::at(self.file, key, lookup(self.root, key), message)
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
                    "no host of this topology matches {pat:?}; expected host names such as {}",
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

/// Resolves transport settings (`key` is where they were written) into a config.
fn resolve_transport(ctx: &Ctx, t: &TransportSpec, key: &str) -> Result<TcpConfig, ScenarioError> {
    let d = TcpConfig::default();
    let k = |f: &str| join(key, f);
    let cfg = TcpConfig {
        cc: match t.protocol.unwrap_or(Protocol::Tcp) {
            Protocol::Tcp => CongestionControl::NewReno,
            Protocol::Dctcp => CongestionControl::Dctcp,
        },
        mss: bytes_only(ctx, t.mss, &k("mss"), d.mss as u64)? as u32,
        header: match t.header {
            Some(Size(ByteSize::Bytes(b))) => b as u32,
            None => d.header,
            Some(_) => {
                return Err(ctx.err(&k("header"), "expected a size in bytes, such as \"40B\""))
            }
        },
        ack_size: bytes_only(ctx, t.ack_size, &k("ack_size"), d.ack_size as u64)? as u32,
        init_cwnd: t.init_cwnd.unwrap_or(d.init_cwnd),
        init_ssthresh: t.init_ssthresh.or(d.init_ssthresh),
        min_rto: t.min_rto.map_or(d.min_rto, |x| x.0),
        max_rto: t.max_rto.map_or(d.max_rto, |x| x.0),
        initial_rto: t.initial_rto.map_or(d.initial_rto, |x| x.0),
        dupack_threshold: t.dupack_threshold.unwrap_or(d.dupack_threshold),
        ecn: t.ecn.unwrap_or(d.ecn),
        delayed_ack: t.delayed_ack.unwrap_or(d.delayed_ack),
        delayed_ack_timeout: t.delayed_ack_timeout.map_or(d.delayed_ack_timeout, |x| x.0),
        dctcp_g: t.dctcp_g.unwrap_or(d.dctcp_g),
        dctcp_alpha_init: t.dctcp_alpha_init.unwrap_or(d.dctcp_alpha_init),
    };
    if cfg.mss > 65_000 {
        return Err(ctx.err(&k("mss"), "expected at most 65000 bytes"));
    }
    for (f, v) in [
        ("init_cwnd", cfg.init_cwnd),
        ("dupack_threshold", cfg.dupack_threshold),
    ] {
        if v == 0 {
            return Err(ctx.err(&k(f), "expected at least 1"));
        }
    }
    if cfg.init_ssthresh == Some(0) {
        return Err(ctx.err(&k("init_ssthresh"), "expected at least 1 segment"));
    }
    if cfg.min_rto == 0 || cfg.max_rto < cfg.min_rto {
        return Err(ctx.err(&k("max_rto"), "expected 0 < min_rto <= max_rto"));
    }
    if cfg.delayed_ack && cfg.delayed_ack_timeout == 0 {
        return Err(ctx.err(&k("delayed_ack_timeout"), "expected a positive duration"));
    }
    for (f, v) in [
        ("dctcp_g", cfg.dctcp_g),
        ("dctcp_alpha_init", cfg.dctcp_alpha_init),
    ] {
        if !(0.0..=1.0).contains(&v) || (f == "dctcp_g" && v == 0.0) {
            return Err(ctx.err(&k(f), "expected a number in (0, 1]"));
        }
    }
    Ok(cfg)
}

/// Builds the simulation a scenario describes.
pub fn build(sc: &Scenario, ctx: &Ctx) -> Result<Sim, ScenarioError> {
    if sc.simulation.duration.0 == 0 {
        return Err(ctx.err("simulation.duration", "expected a positive duration"));
    }
    let duration = sc.simulation.duration.0;
    let seed = sc.simulation.seed;
    let base_tcp = resolve_transport(ctx, &sc.transport, "transport")?;
    let pkt = base_tcp.packet_size();

    let fabric = fabric::fabric(ctx, &sc.network, pkt)?;
    let max_packet = fabric.host_port.buffer.min(fabric.switch_port.buffer);

    let (builder, topo_desc) = sc
        .topology
        .build()
        .map_err(|(param, msg)| ctx.err(&join("topology", &param), msg))?;
    let net = builder
        .build(&fabric, seed)
        .map_err(|e| ScenarioError::at(ctx.file, "topology", None, e))?;

    let declared = vswitch::build(ctx, &net, &sc.tenants, &sc.vswitch, pkt)?;
    let mut tenants: Vec<String> = declared.names.clone();
    let mut tcp: Vec<TcpConfig> = vec![base_tcp.clone()];
    let mut flows: Vec<FlowSpec> = Vec::new();
    let mut infos = Vec::new();
    for (wi, w) in sc.workloads.iter().enumerate() {
        let key = format!("workloads[{wi}]");
        let k = |f: &str| join(&key, f);
        let tenant = match tenants.iter().position(|t| *t == w.common.tenant) {
            Some(i) => i as u32,
            None => {
                tenants.push(w.common.tenant.clone());
                tenants.len() as u32 - 1
            }
        };
        let pias = match &w.common.pias {
            None => None,
            Some(p) if p.dscp > 63 => {
                return Err(ctx.err(&k("pias.dscp"), "expected a DSCP value in 0..=63"))
            }
            Some(p) => Some((p.threshold.0.bytes(pkt), p.dscp)),
        };
        let wcfg = match &w.common.transport {
            None => base_tcp.clone(),
            Some(t) => resolve_transport(ctx, &sc.transport.overlaid(t), &k("transport"))?,
        };
        if wcfg.packet_size() > max_packet {
            return Err(ctx.err(
                &k("transport.mss"),
                format!(
                    "a full packet ({} bytes) does not fit the port buffers",
                    wcfg.packet_size()
                ),
            ));
        }
        let transport = match tcp.iter().position(|c| *c == wcfg) {
            Some(i) => i as u32,
            None => {
                tcp.push(wcfg.clone());
                tcp.len() as u32 - 1
            }
        };
        let wc = WorkloadCtx {
            ctx,
            net: &net,
            index: wi,
            tenant,
            tenant_name: &w.common.tenant,
            dscp: &w.common.dscp.0,
            pias,
            tcp: &wcfg,
            transport,
            seed,
            max_packet,
            flows_so_far: flows.len(),
            vms: &declared.params.vms,
            mine: declared
                .vms_of
                .get(tenant as usize)
                .map_or(&[][..], |v| v.as_slice()),
        };
        let (made, info) = flows::generate(&w.kind, &wc)?;
        infos.push(info);
        flows.extend(made);
    }

    let interval = sc
        .output
        .sample_interval
        .map_or((duration / 100).max(1), |s| s.0);
    if interval == 0 {
        return Err(ctx.err("output.sample_interval", "expected a positive duration"));
    }
    let mut scopes = sc.output.throughput.clone();
    scopes.sort();
    scopes.dedup();
    let params = SimParams {
        net,
        flows,
        tcp,
        duration,
        seed,
        stop_when_done: sc.simulation.stop_when_done,
        output: OutputParams {
            interval,
            scopes,
            queues: sc.output.queues,
            host_queues: sc.output.host_queues,
        },
        meta: RunMeta {
            name: sc.name.clone().unwrap_or_else(|| ctx.file.to_string()),
            topology: topo_desc,
            tenants,
            workloads: infos,
        },
        vswitch: declared.params,
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
