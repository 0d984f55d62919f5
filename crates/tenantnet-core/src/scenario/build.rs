//! From a parsed scenario to a ready [`Sim`]: wire the topology, resolve transport
//! settings, draw every flow. Every check that needs more than one key (a host name
//! against the topology, a buffer against the packet size, a CDF file's contents)
//! happens here and fails with a [`ScenarioError`] naming the key.

use std::path::Path;

use toml::Value;

use super::parse::{join, lookup, Scenario, ScenarioError};
use super::spec::{EcnMark, Protocol, TopologySpec, TransportSpec};
use super::workloads::{Hosts, PeriodDistribution, SizeSampling, WorkloadKind};
use crate::engine::rng::Rng;
use crate::engine::Time;
use crate::net::port::{EcnConfig, EcnMarkPoint, PortConfig};
use crate::net::{HostId, Network};
use crate::sim::recorder::OutputParams;
use crate::sim::results::{RunMeta, WorkloadInfo};
use crate::sim::{event, Sim, SimParams};
use crate::transport::udp::OnOff;
use crate::transport::{CongestionControl, TcpConfig};
use crate::units::{ByteSize, Size};
use crate::workload::generate::{all_pairs, permutation, Poisson, Window};
use crate::workload::{Cdf, FlowKind, FlowSpec};

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
    fn err(&self, key: &str, message: impl Into<String>) -> ScenarioError {
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
fn resolve_hosts(
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

fn bytes_only(ctx: &Ctx, s: Option<Size>, key: &str, default: u64) -> Result<u64, ScenarioError> {
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

fn load_cdf(ctx: &Ctx, p: &super::workloads::Poisson, key: &str) -> Result<Cdf, ScenarioError> {
    match (&p.cdf, &p.cdf_file) {
        (Some(_), Some(_)) => Err(ctx.err(
            &join(key, "cdf_file"),
            "give either cdf or cdf_file, not both",
        )),
        (None, None) => Err(ctx.err(
            &join(key, "cdf"),
            format!(
                "required key is missing; expected one of {} or a cdf_file",
                Cdf::builtin_names().join(", ")
            ),
        )),
        (Some(name), None) => Cdf::builtin(name).ok_or_else(|| {
            ctx.err(
                &join(key, "cdf"),
                format!(
                    "unknown distribution; expected one of {}",
                    Cdf::builtin_names().join(", ")
                ),
            )
        }),
        (None, Some(file)) => {
            let path = ctx.base_dir.join(file);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                ctx.err(
                    &join(key, "cdf_file"),
                    format!("cannot read {}: {e}", path.display()),
                )
            })?;
            Cdf::parse(&text, file)
                .map_err(|e| ctx.err(&join(key, "cdf_file"), format!("{}: {e}", path.display())))
        }
    }
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

    let nw = &sc.network;
    let buffer = nw.buffer.0.bytes(pkt);
    if buffer < pkt {
        return Err(ctx.err(
            "network.buffer",
            format!("smaller than one full-size packet ({pkt} bytes)"),
        ));
    }
    let host_buffer = nw.host_buffer.map_or(buffer, |b| b.0.bytes(pkt));
    if host_buffer < pkt {
        return Err(ctx.err(
            "network.host_buffer",
            format!("smaller than one full-size packet ({pkt} bytes)"),
        ));
    }
    let at = match nw.ecn_mark {
        EcnMark::Enqueue => EcnMarkPoint::Enqueue,
        EcnMark::Dequeue => EcnMarkPoint::Dequeue,
    };
    let threshold = nw.ecn_threshold.map(|k| k.0.bytes(pkt));
    let switch_cfg = PortConfig {
        buffer,
        ecn: EcnConfig { threshold, at },
    };
    let host_cfg = PortConfig {
        buffer: host_buffer,
        ecn: EcnConfig {
            threshold: if nw.host_ecn { threshold } else { None },
            at,
        },
    };

    let built = match &sc.topology {
        TopologySpec::Dumbbell(t) => t.build(),
        TopologySpec::Star(t) => t.build(),
        TopologySpec::LeafSpine(t) => t.build(),
        TopologySpec::FatTree(t) => t.build(),
    };
    let (builder, topo_desc) =
        built.map_err(|(param, msg)| ctx.err(&join("topology", param), msg))?;
    let net = builder
        .build(host_cfg, switch_cfg, seed)
        .map_err(|e| ScenarioError::at(ctx.file, "topology", None, e))?;

    let mut tenants: Vec<String> = Vec::new();
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
        if w.common.dscp > 63 {
            return Err(ctx.err(&k("dscp"), "expected a DSCP value in 0..=63"));
        }
        let wcfg = match &w.common.transport {
            None => base_tcp.clone(),
            Some(t) => resolve_transport(ctx, &sc.transport.overlaid(t), &k("transport"))?,
        };
        if wcfg.packet_size() > host_buffer.min(buffer) {
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
        let mut made: Vec<FlowSpec> = Vec::new();
        let mut info = WorkloadInfo {
            kind: String::new(),
            tenant: w.common.tenant.clone(),
            flows: 0,
            offered_load: None,
            window_s: None,
        };
        let mut push = |src: HostId,
                        dst: HostId,
                        size: Option<u64>,
                        start: Time,
                        stop: Option<Time>,
                        kind: FlowKind| {
            made.push(FlowSpec {
                src,
                dst,
                size,
                start,
                stop,
                tenant,
                workload: wi as u32,
                dscp: w.common.dscp,
                kind,
            });
        };
        let tcp_kind = FlowKind::Tcp { transport };
        let size_of = |s: Size, f: &str| -> Result<u64, ScenarioError> {
            let b = s.0.bytes(wcfg.mss as u64);
            if b == 0 {
                return Err(ctx.err(&k(f), "expected a positive size"));
            }
            Ok(b)
        };
        let check_stop = |start: Time, stop: Option<Time>| -> Result<(), ScenarioError> {
            match stop {
                Some(s) if s <= start => {
                    Err(ctx.err(&k("stop"), "expected a stop time after start"))
                }
                _ => Ok(()),
            }
        };
        let too_many = |n: u64, f: &str| -> Result<(), ScenarioError> {
            if n + flows.len() as u64 > event::MAX_ID as u64 {
                return Err(ctx.err(
                    &k(f),
                    format!("{n} flows; expected at most {} in all", event::MAX_ID),
                ));
            }
            Ok(())
        };
        let udp_size = |s: Option<Size>, rate: u64| -> Result<u32, ScenarioError> {
            let size = bytes_only(ctx, s, &k("packet_size"), wcfg.packet_size())?;
            if size > host_buffer.min(buffer) || size > u32::MAX as u64 {
                return Err(ctx.err(&k("packet_size"), "a packet does not fit the port buffers"));
            }
            if (size as u128) * 8 * crate::engine::PS_PER_SEC as u128 / (rate as u128) < 1000 {
                return Err(ctx.err(
                    &k("rate"),
                    "packets would be less than 1 ns apart; expected a lower rate",
                ));
            }
            Ok(size as u32)
        };
        let pairs_of = |src: &Hosts, dst: &Hosts| -> Result<Vec<(HostId, HostId)>, ScenarioError> {
            let s = resolve_hosts(ctx, &net, src, &k("src"))?;
            let d = resolve_hosts(ctx, &net, dst, &k("dst"))?;
            let p = all_pairs(&s, &d);
            if p.is_empty() {
                return Err(ctx.err(&k("dst"), "no (src, dst) pair with src different from dst"));
            }
            Ok(p)
        };
        match &w.kind {
            WorkloadKind::LongLived(l) => {
                info.kind = "long_lived".into();
                check_stop(l.start.0, l.stop.map(|s| s.0))?;
                let pairs = pairs_of(&l.src, &l.dst)?;
                too_many(
                    pairs.len() as u64 * l.flows_per_pair as u64,
                    "flows_per_pair",
                )?;
                for (s, d) in pairs {
                    for _ in 0..l.flows_per_pair {
                        push(s, d, None, l.start.0, l.stop.map(|x| x.0), tcp_kind.clone());
                    }
                }
            }
            WorkloadKind::Fixed(f) => {
                info.kind = "fixed".into();
                let size = size_of(f.size, "size")?;
                let pairs = pairs_of(&f.src, &f.dst)?;
                too_many(
                    pairs.len() as u64 * f.flows_per_pair as u64,
                    "flows_per_pair",
                )?;
                for (s, d) in pairs {
                    for i in 0..f.flows_per_pair as u64 {
                        push(
                            s,
                            d,
                            Some(size),
                            f.start.0 + i * f.interval.0,
                            None,
                            tcp_kind.clone(),
                        );
                    }
                }
            }
            WorkloadKind::Permutation(p) => {
                info.kind = "permutation".into();
                let hosts = resolve_hosts(ctx, &net, &p.hosts, &k("hosts"))?;
                if hosts.len() < 2 {
                    return Err(ctx.err(&k("hosts"), "a permutation needs at least 2 hosts"));
                }
                let size = p.size.map(|s| size_of(s, "size")).transpose()?;
                check_stop(p.start.0, p.stop.map(|s| s.0))?;
                let mut rng = Rng::stream(seed, &format!("workload{wi}/permutation"));
                for (s, d) in permutation(&hosts, &mut rng) {
                    push(s, d, size, p.start.0, p.stop.map(|x| x.0), tcp_kind.clone());
                }
            }
            WorkloadKind::Incast(ic) => {
                info.kind = "incast".into();
                let rx =
                    resolve_hosts(ctx, &net, &Hosts(vec![ic.receiver.clone()]), &k("receiver"))?;
                if rx.len() != 1 {
                    return Err(ctx.err(&k("receiver"), "expected exactly one host"));
                }
                let senders: Vec<HostId> = resolve_hosts(ctx, &net, &ic.senders, &k("senders"))?
                    .into_iter()
                    .filter(|h| *h != rx[0])
                    .collect();
                if senders.is_empty() {
                    return Err(ctx.err(&k("senders"), "no sender other than the receiver"));
                }
                if ic.rounds == 0 {
                    return Err(ctx.err(&k("rounds"), "expected at least 1"));
                }
                let size = size_of(ic.size, "size")?;
                too_many(senders.len() as u64 * ic.rounds as u64, "rounds")?;
                for r in 0..ic.rounds as u64 {
                    for &s in &senders {
                        push(
                            s,
                            rx[0],
                            Some(size),
                            ic.start.0 + r * ic.interval.0,
                            None,
                            tcp_kind.clone(),
                        );
                    }
                }
            }
            WorkloadKind::Poisson(p) => {
                info.kind = "poisson".into();
                if !(p.load.is_finite() && p.load > 0.0) {
                    return Err(ctx.err(
                        &k("load"),
                        "expected a positive fraction of source capacity, such as 0.5",
                    ));
                }
                let cdf = load_cdf(ctx, p, &key)?;
                let srcs = resolve_hosts(ctx, &net, &p.src, &k("src"))?;
                let dsts = resolve_hosts(ctx, &net, &p.dst, &k("dst"))?;
                if dsts.len() == 1 && srcs.contains(&dsts[0]) {
                    return Err(ctx.err(&k("dst"), "a source has no destination other than itself"));
                }
                let window = match (p.flows, p.stop) {
                    (Some(_), Some(_)) => {
                        return Err(ctx.err(&k("stop"), "give either flows or stop, not both"))
                    }
                    (None, None) => {
                        return Err(ctx.err(
                            &k("flows"),
                            "required key is missing; give flows (a count) or stop (a time)",
                        ))
                    }
                    (Some(0), None) => return Err(ctx.err(&k("flows"), "expected at least 1")),
                    (Some(n), None) => Window::Flows(n as usize),
                    (None, Some(s)) => {
                        check_stop(p.start.0, Some(s.0))?;
                        Window::Until(s.0)
                    }
                };
                let capacity: f64 = srcs.iter().map(|&h| net.host_rate(h) as f64).sum();
                if let Window::Until(stop) = window {
                    let expect =
                        p.load * capacity / (8.0 * cdf.mean()) * (stop - p.start.0) as f64 / 1e12;
                    too_many(expect.ceil() as u64, "stop")?;
                } else if let Window::Flows(n) = window {
                    too_many(n as u64, "flows")?;
                }
                let gen = Poisson {
                    load: p.load,
                    capacity_bps: capacity,
                    start: p.start.0,
                    window,
                    cdf: &cdf,
                    stratified: p.sizes == SizeSampling::Stratified,
                };
                let (arrivals, window_s) =
                    gen.generate(&srcs, &dsts, seed, &format!("workload{wi}"));
                let bytes: u64 = arrivals.iter().map(|a| a.3).sum();
                info.offered_load = Some(bytes as f64 * 8.0 / (window_s * capacity));
                info.window_s = Some(window_s);
                for (t, s, d, size) in arrivals {
                    push(s, d, Some(size), t, None, tcp_kind.clone());
                }
            }
            WorkloadKind::Cbr(c) => {
                info.kind = "cbr".into();
                check_stop(c.start.0, c.stop.map(|s| s.0))?;
                let size = udp_size(c.packet_size, c.rate.0)?;
                for (s, d) in pairs_of(&c.src, &c.dst)? {
                    let kind = FlowKind::Udp {
                        rate_bps: c.rate.0,
                        packet_size: size,
                        onoff: None,
                    };
                    push(s, d, None, c.start.0, c.stop.map(|x| x.0), kind);
                }
            }
            WorkloadKind::OnOff(o) => {
                info.kind = "on_off".into();
                check_stop(o.start.0, o.stop.map(|s| s.0))?;
                for (f, v) in [("on", o.on.0), ("off", o.off.0)] {
                    if v == 0 {
                        return Err(ctx.err(&k(f), "expected a positive duration"));
                    }
                }
                let size = udp_size(o.packet_size, o.rate.0)?;
                let onoff = OnOff {
                    on: o.on.0,
                    off: o.off.0,
                    exponential: o.distribution == PeriodDistribution::Exponential,
                };
                for (s, d) in pairs_of(&o.src, &o.dst)? {
                    let kind = FlowKind::Udp {
                        rate_bps: o.rate.0,
                        packet_size: size,
                        onoff: Some(onoff.clone()),
                    };
                    push(s, d, None, o.start.0, o.stop.map(|x| x.0), kind);
                }
            }
        }
        info.flows = made.len() as u64;
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
