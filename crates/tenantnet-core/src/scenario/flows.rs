//! From a workload table to its flows: every generator of `crate::workload`
//! applied to hosts resolved against the topology, with the checks that need both.

use super::build::{bytes_only, Ctx};
use super::parse::{join, ScenarioError};
use super::vswitch::resolve_ends;
use super::workloads::{
    Hosts, PeriodDistribution, Poisson as PoissonSpec, SizeSampling, WorkloadKind,
};
use crate::engine::rng::Rng;
use crate::engine::Time;
use crate::net::{Network, VmId};
use crate::sim::event;
use crate::sim::results::WorkloadInfo;
use crate::transport::udp::OnOff;
use crate::transport::TcpConfig;
use crate::units::Size;
use crate::vswitch::Vm;
use crate::workload::generate::{all_pairs, permutation, Poisson, Window};
use crate::workload::{Cdf, FlowKind, FlowSpec, OnHost, TrafficEnd};

/// What a workload's flows share, resolved by the builder.
pub struct WorkloadCtx<'a> {
    /// Where errors point.
    pub ctx: &'a Ctx<'a>,
    /// The built network, to resolve host names.
    pub net: &'a Network,
    /// The workload's index in `workloads`.
    pub index: usize,
    /// Tenant index.
    pub tenant: u32,
    /// Tenant name.
    pub tenant_name: &'a str,
    /// DSCP values assigned to its flows in turn.
    pub dscp: &'a [u8],
    /// PIAS tagging (threshold bytes, DSCP).
    pub pias: Option<(u64, u8)>,
    /// Its TCP configuration.
    pub tcp: &'a TcpConfig,
    /// Index of that configuration in the simulation's list.
    pub transport: u32,
    /// Scenario seed.
    pub seed: u64,
    /// Largest packet every port can hold.
    pub max_packet: u64,
    /// Flows made by earlier workloads.
    pub flows_so_far: usize,
    /// Every VM of the scenario.
    pub vms: &'a [Vm],
    /// The VMs of this workload's tenant (empty: it sends between hosts).
    pub mine: &'a [VmId],
}

fn load_cdf(ctx: &Ctx, p: &PoissonSpec, key: &str) -> Result<Cdf, ScenarioError> {
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

/// The flows of workload `kind` and facts about them for the summary.
pub fn generate(
    kind: &WorkloadKind,
    c: &WorkloadCtx,
) -> Result<(Vec<FlowSpec>, WorkloadInfo), ScenarioError> {
    let (ctx, net, wi, seed, wcfg, transport, tenant) =
        (c.ctx, c.net, c.index, c.seed, c.tcp, c.transport, c.tenant);
    let key = format!("workloads[{wi}]");
    let k = |f: &str| join(&key, f);
    let mut made: Vec<FlowSpec> = Vec::new();
    let mut info = WorkloadInfo {
        kind: String::new(),
        tenant: c.tenant_name.to_string(),
        flows: 0,
        offered_load: None,
        window_s: None,
    };
    let mut push = |src: TrafficEnd,
                    dst: TrafficEnd,
                    size: Option<u64>,
                    start: Time,
                    stop: Option<Time>,
                    kind: FlowKind| {
        made.push(FlowSpec {
            src: src.host,
            dst: dst.host,
            src_vm: src.vm,
            dst_vm: dst.vm,
            size,
            start,
            stop,
            tenant,
            workload: wi as u32,
            dscp: c.dscp[made.len() % c.dscp.len()],
            pias: c.pias,
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
            Some(s) if s <= start => Err(ctx.err(&k("stop"), "expected a stop time after start")),
            _ => Ok(()),
        }
    };
    let too_many = |n: u64, f: &str| -> Result<(), ScenarioError> {
        if n + c.flows_so_far as u64 > event::MAX_ID as u64 {
            return Err(ctx.err(
                &k(f),
                format!("{n} flows; expected at most {} in all", event::MAX_ID),
            ));
        }
        Ok(())
    };
    let udp_size = |s: Option<Size>, rate: u64| -> Result<u32, ScenarioError> {
        let size = bytes_only(ctx, s, &k("packet_size"), wcfg.packet_size())?;
        if size > c.max_packet || size > u32::MAX as u64 {
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
    let ends = |sel: &Hosts, f: &str| resolve_ends(ctx, net, c.vms, c.mine, sel, &k(f));
    let pairs_of =
        |src: &Hosts, dst: &Hosts| -> Result<Vec<(TrafficEnd, TrafficEnd)>, ScenarioError> {
            let p = all_pairs(&ends(src, "src")?, &ends(dst, "dst")?);
            if p.is_empty() {
                return Err(ctx.err(
                    &k("dst"),
                    "no (src, dst) pair with src and dst on different hosts",
                ));
            }
            Ok(p)
        };
    match kind {
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
            let hosts = ends(&p.hosts, "hosts")?;
            if hosts.len() < 2 {
                return Err(ctx.err(&k("hosts"), "a permutation needs at least 2 hosts"));
            }
            let mut on: Vec<_> = hosts.iter().map(|e| e.host).collect();
            on.sort();
            on.dedup();
            if on.len() != hosts.len() {
                return Err(ctx.err(
                    &k("hosts"),
                    "a permutation needs its endpoints on distinct hosts",
                ));
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
            let rx = ends(&Hosts(vec![ic.receiver.clone()]), "receiver")?;
            if rx.len() != 1 {
                return Err(ctx.err(&k("receiver"), "expected exactly one host or VM"));
            }
            let senders: Vec<TrafficEnd> = ends(&ic.senders, "senders")?
                .into_iter()
                .filter(|h| h.host != rx[0].host)
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
            let srcs = ends(&p.src, "src")?;
            let dsts = ends(&p.dst, "dst")?;
            if dsts.iter().all(|d| d.host == dsts[0].host)
                && srcs.iter().any(|s| s.host == dsts[0].host)
            {
                return Err(ctx.err(&k("dst"), "a source has no destination on another host"));
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
            let mut src_hosts: Vec<_> = srcs.iter().map(|e| e.host()).collect();
            src_hosts.sort();
            src_hosts.dedup();
            let capacity: f64 = src_hosts.iter().map(|&h| net.host_rate(h) as f64).sum();
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
            let (arrivals, window_s) = gen.generate(&srcs, &dsts, seed, &format!("workload{wi}"));
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
    Ok((made, info))
}
