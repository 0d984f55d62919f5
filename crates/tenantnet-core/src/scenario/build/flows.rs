//! From a workload table to its flows: every generator of `crate::workload`
//! applied to hosts resolved against the topology, with the checks that need both.
//! Each kind counts its flows and adds them to the memory estimate before it makes
//! them, so a workload too large to hold is refused before it is allocated.

use super::tenants::resolve_ends;
use super::transport::MIN_TIMER;
use super::{bytes_only, Ctx};
use crate::engine::rng::Rng;
use crate::engine::Time;
use crate::net::{Network, VmId};
use crate::scenario::estimate::Estimator;
use crate::scenario::parse::{join, ScenarioError};
use crate::scenario::workloads::{
    Cbr, Fixed, Hosts, Incast, LongLived, OnOff as OnOffSpec, PeriodDistribution, Permutation,
    Poisson as PoissonSpec, SizeSampling, WorkloadKind,
};
use crate::sim::event;
use crate::sim::results::WorkloadInfo;
use crate::transport::udp::OnOff;
use crate::transport::TcpConfig;
use crate::units::{Size, MAX_DURATION, MAX_PACKET};
use crate::vswitch::Vm;
use crate::workload::generate::{all_pairs, permutation, Poisson, Window};
use crate::workload::{Cdf, Exchanges, FlowKind, FlowSpec, OnHost, TrafficEnd};

mod closed_loop;
mod matrix;
mod requests;
pub mod trace;

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
    /// Gates and queries made by earlier workloads.
    pub exchanges_so_far: (usize, usize),
    /// Every VM of the scenario.
    pub vms: &'a [Vm],
    /// The VMs of this workload's tenant (empty: it sends between hosts).
    pub mine: &'a [VmId],
    /// Each VM's egress queue, bytes.
    pub vm_queue: u64,
    /// Every tenant's name, by index (a trace's rows name theirs).
    pub tenants: &'a [String],
    /// The VMs of each declared tenant, by index.
    pub vms_of: &'a [Vec<VmId>],
    /// The transport of each protocol a trace's rows name (`tcp`, `dctcp`): the
    /// workload's with that protocol.
    pub protocols: &'a [(String, u32)],
}

/// A workload's size distribution from its `cdf` (built-in) or `cdf_file` key.
fn load_cdf(
    ctx: &Ctx,
    (cdf, cdf_file): (&Option<String>, &Option<String>),
    key: &str,
) -> Result<Cdf, ScenarioError> {
    match (cdf, cdf_file) {
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

/// The start of the `n`-th (last) of `n` flows `interval` apart from `start`, if it
/// is within [`MAX_DURATION`].
fn nth_start(start: Time, interval: Time, n: u64) -> Option<Time> {
    let t = interval
        .checked_mul(n.saturating_sub(1))?
        .checked_add(start)?;
    (t <= MAX_DURATION).then_some(t)
}

/// Pairs of `srcs` × `dsts` on different hosts, counted without making them.
fn count_pairs(srcs: &[TrafficEnd], dsts: &[TrafficEnd], hosts: usize) -> u64 {
    let mut per_host = vec![0u64; hosts];
    for d in dsts {
        per_host[d.host.idx()] += 1;
    }
    let same: u64 = srcs.iter().map(|s| per_host[s.host.idx()]).sum();
    srcs.len() as u64 * dsts.len() as u64 - same
}

/// One workload's flows being made.
struct Gen<'a, 'e> {
    c: &'a WorkloadCtx<'a>,
    est: &'e mut Estimator,
    key: String,
    made: Vec<FlowSpec>,
    info: WorkloadInfo,
    exchanges: Exchanges,
}

/// What a workload made.
pub struct Made {
    /// Its flows.
    pub flows: Vec<FlowSpec>,
    /// Facts for the summary.
    pub info: WorkloadInfo,
    /// Its gates and queries (request–response workloads).
    pub exchanges: Exchanges,
}

impl Gen<'_, '_> {
    fn k(&self, f: &str) -> String {
        join(&self.key, f)
    }

    fn err(&self, f: &str, message: impl Into<String>) -> ScenarioError {
        self.c.ctx.err(&self.k(f), message)
    }

    fn tcp(&self) -> FlowKind {
        FlowKind::Tcp {
            transport: self.c.transport,
        }
    }

    fn push(
        &mut self,
        ends: (TrafficEnd, TrafficEnd),
        size: Option<u64>,
        start: Time,
        stop: Option<Time>,
        kind: FlowKind,
    ) {
        let dscp = self.c.dscp[self.made.len() % self.c.dscp.len()];
        self.push_as(ends, (size, start, stop), kind, (self.c.tenant, dscp));
    }

    /// [`push`](Self::push) for `tenant`, with DSCP `dscp` (a trace's row's own).
    fn push_as(
        &mut self,
        (src, dst): (TrafficEnd, TrafficEnd),
        (size, start, stop): (Option<u64>, Time, Option<Time>),
        kind: FlowKind,
        (tenant, dscp): (u32, u8),
    ) {
        self.made.push(FlowSpec {
            src: src.host,
            dst: dst.host,
            src_vm: src.vm,
            dst_vm: dst.vm,
            size,
            start,
            stop,
            tenant,
            workload: self.c.index as u32,
            dscp,
            pias: self.c.pias,
            kind,
            after: None,
            signals: None,
        });
    }

    /// `n` flows about to be made, counted at key `f`: within the id space and the
    /// memory budget.
    fn count(&mut self, n: u64, f: &str) -> Result<(), ScenarioError> {
        if n.saturating_add(self.c.flows_so_far as u64) > event::MAX_ID as u64 {
            return Err(self.err(
                f,
                format!("{n} flows; expected at most {} in all", event::MAX_ID),
            ));
        }
        let key = self.k(f);
        self.est.flows(self.c.ctx, n, &self.key, &key)
    }

    fn size_of(&self, s: Size, f: &str) -> Result<u64, ScenarioError> {
        let b = s.0.bytes(self.c.tcp.mss as u64);
        if b == 0 {
            return Err(self.err(f, "expected a positive size"));
        }
        Ok(b)
    }

    fn check_stop(&self, start: Time, stop: Option<Time>) -> Result<(), ScenarioError> {
        match stop {
            Some(s) if s <= start => Err(self.err("stop", "expected a stop time after start")),
            _ => Ok(()),
        }
    }

    fn beyond(&self, f: &str, what: &str) -> ScenarioError {
        self.err(
            f,
            format!("{what} would start after 1000000s, the longest time tenantnet simulates"),
        )
    }

    fn ends(&self, sel: &Hosts, f: &str) -> Result<Vec<TrafficEnd>, ScenarioError> {
        let c = self.c;
        resolve_ends(c.ctx, c.net, c.vms, c.mine, sel, &self.k(f))
    }

    /// Every (src, dst) pair on different hosts, `per_pair` flows each, counted at
    /// `f` before they are made.
    fn pairs(
        &mut self,
        src: &Hosts,
        dst: &Hosts,
        per_pair: u64,
        f: &str,
    ) -> Result<Vec<(TrafficEnd, TrafficEnd)>, ScenarioError> {
        let (s, d) = (self.ends(src, "src")?, self.ends(dst, "dst")?);
        let n = count_pairs(&s, &d, self.c.net.hosts.len());
        if n == 0 {
            return Err(self.err(
                "dst",
                "no (src, dst) pair with src and dst on different hosts",
            ));
        }
        self.count(n.saturating_mul(per_pair), f)?;
        Ok(all_pairs(&s, &d))
    }

    fn udp_size(&self, s: Option<Size>, rate: u64) -> Result<u32, ScenarioError> {
        let c = self.c;
        let size = bytes_only(c.ctx, s, &self.k("packet_size"), c.tcp.packet_size())?;
        let fits = |limit: u64, what: &str| {
            if size > limit {
                return Err(self.err(
                    "packet_size",
                    format!("{size} bytes do not fit {what} ({limit} bytes), so every packet would be dropped"),
                ));
            }
            Ok(())
        };
        if size > MAX_PACKET {
            return Err(self.err(
                "packet_size",
                format!("expected at most {MAX_PACKET} bytes (the largest packet on the wire)"),
            ));
        }
        fits(c.max_packet, "the smallest port buffer")?;
        if !c.mine.is_empty() {
            fits(c.vm_queue, "the VMs' egress queue vswitch.queue")?;
        }
        if (size as u128) * 8 * crate::engine::PS_PER_SEC as u128 / (rate as u128) < 1000 {
            return Err(self.err(
                "rate",
                "packets would be less than 1 ns apart; expected a lower rate",
            ));
        }
        Ok(size as u32)
    }

    fn long_lived(&mut self, l: &LongLived) -> Result<(), ScenarioError> {
        self.check_stop(l.start.0, l.stop.map(|s| s.0))?;
        let pairs = self.pairs(&l.src, &l.dst, l.flows_per_pair as u64, "flows_per_pair")?;
        for p in pairs {
            for _ in 0..l.flows_per_pair {
                self.push(p, None, l.start.0, l.stop.map(|x| x.0), self.tcp());
            }
        }
        Ok(())
    }

    fn fixed(&mut self, f: &Fixed) -> Result<(), ScenarioError> {
        let size = self.size_of(f.size, "size")?;
        let per_pair = f.flows_per_pair as u64;
        let pairs = self.pairs(&f.src, &f.dst, per_pair, "flows_per_pair")?;
        nth_start(f.start.0, f.interval.0, per_pair)
            .ok_or_else(|| self.beyond("interval", "the last flow of each pair"))?;
        for p in pairs {
            for i in 0..per_pair {
                let start = f.start.0 + i * f.interval.0;
                self.push(p, Some(size), start, None, self.tcp());
            }
        }
        Ok(())
    }

    fn permutation(&mut self, p: &Permutation) -> Result<(), ScenarioError> {
        let hosts = self.ends(&p.hosts, "hosts")?;
        if hosts.len() < 2 {
            return Err(self.err("hosts", "a permutation needs at least 2 hosts"));
        }
        let mut on: Vec<_> = hosts.iter().map(|e| e.host).collect();
        on.sort();
        on.dedup();
        if on.len() != hosts.len() {
            return Err(self.err(
                "hosts",
                "a permutation needs its endpoints on distinct hosts",
            ));
        }
        let size = p.size.map(|s| self.size_of(s, "size")).transpose()?;
        self.check_stop(p.start.0, p.stop.map(|s| s.0))?;
        self.count(hosts.len() as u64, "hosts")?;
        let stream = format!("workload{}/permutation", self.c.index);
        let mut rng = Rng::stream(self.c.seed, &stream);
        for pair in permutation(&hosts, &mut rng) {
            self.push(pair, size, p.start.0, p.stop.map(|x| x.0), self.tcp());
        }
        Ok(())
    }

    fn incast(&mut self, ic: &Incast) -> Result<(), ScenarioError> {
        let rx = self.ends(&Hosts(vec![ic.receiver.clone()]), "receiver")?;
        if rx.len() != 1 {
            return Err(self.err("receiver", "expected exactly one host or VM"));
        }
        let senders: Vec<TrafficEnd> = self
            .ends(&ic.senders, "senders")?
            .into_iter()
            .filter(|h| h.host != rx[0].host)
            .collect();
        if senders.is_empty() {
            return Err(self.err("senders", "no sender other than the receiver"));
        }
        if ic.rounds == 0 {
            return Err(self.err("rounds", "expected at least 1"));
        }
        let size = self.size_of(ic.size, "size")?;
        self.count(senders.len() as u64 * ic.rounds as u64, "rounds")?;
        nth_start(ic.start.0, ic.interval.0, ic.rounds as u64)
            .ok_or_else(|| self.beyond("interval", "the last round"))?;
        for r in 0..ic.rounds as u64 {
            for &s in &senders {
                let start = ic.start.0 + r * ic.interval.0;
                self.push((s, rx[0]), Some(size), start, None, self.tcp());
            }
        }
        Ok(())
    }

    /// The arrival window of a Poisson workload, its flows counted.
    fn poisson_window(
        &mut self,
        p: &PoissonSpec,
        cdf: &Cdf,
        capacity: f64,
    ) -> Result<Window, ScenarioError> {
        let rate = p.load * capacity / (8.0 * cdf.mean());
        match (p.flows, p.stop) {
            (Some(_), Some(_)) => Err(self.err("stop", "give either flows or stop, not both")),
            (None, None) => Err(self.err(
                "flows",
                "required key is missing; give flows (a count) or stop (a time)",
            )),
            (Some(0), None) => Err(self.err("flows", "expected at least 1")),
            (Some(n), None) => {
                self.count(n, "flows")?;
                let span_s = n as f64 / rate;
                if p.start.0 as f64 + span_s * 1e12 > MAX_DURATION as f64 {
                    return Err(self.err(
                        "load",
                        format!(
                            "{n} flows at this load arrive over {span_s:.3e} s, beyond 1000000s, the longest time tenantnet simulates; expected a higher load or fewer flows"
                        ),
                    ));
                }
                Ok(Window::Flows(n as usize))
            }
            (None, Some(s)) => {
                self.check_stop(p.start.0, Some(s.0))?;
                let expect = rate * (s.0 - p.start.0) as f64 / 1e12;
                self.count(expect.ceil() as u64, "stop")?;
                Ok(Window::Until(s.0))
            }
        }
    }

    fn poisson(&mut self, p: &PoissonSpec) -> Result<(), ScenarioError> {
        if !(p.load.is_finite() && p.load > 0.0) {
            return Err(self.err(
                "load",
                "expected a positive fraction of source capacity, such as 0.5",
            ));
        }
        let cdf = load_cdf(self.c.ctx, (&p.cdf, &p.cdf_file), &self.key)?;
        let srcs = self.ends(&p.src, "src")?;
        let dsts = self.ends(&p.dst, "dst")?;
        if dsts.iter().all(|d| d.host == dsts[0].host)
            && srcs.iter().any(|s| s.host == dsts[0].host)
        {
            return Err(self.err("dst", "a source has no destination on another host"));
        }
        let mut src_hosts: Vec<_> = srcs.iter().map(|e| e.host()).collect();
        src_hosts.sort();
        src_hosts.dedup();
        let net = self.c.net;
        let capacity: f64 = src_hosts.iter().map(|&h| net.host_rate(h) as f64).sum();
        let window = self.poisson_window(p, &cdf, capacity)?;
        let gen = Poisson {
            load: p.load,
            capacity_bps: capacity,
            start: p.start.0,
            window,
            cdf: &cdf,
            stratified: p.sizes == SizeSampling::Stratified,
        };
        let stream = format!("workload{}", self.c.index);
        let (arrivals, window_s) = gen.generate(&srcs, &dsts, self.c.seed, &stream);
        let bytes: u64 = arrivals.iter().map(|a| a.3).sum();
        self.info.offered_load = Some(bytes as f64 * 8.0 / (window_s * capacity));
        self.info.window_s = Some(window_s);
        for (t, s, d, size) in arrivals {
            self.push((s, d), Some(size), t, None, self.tcp());
        }
        Ok(())
    }

    /// UDP sources at `rate` from every src to every dst.
    fn udp(
        &mut self,
        (src, dst): (&Hosts, &Hosts),
        rate: u64,
        packet_size: Option<Size>,
        (start, stop): (Time, Option<Time>),
        onoff: Option<OnOff>,
    ) -> Result<(), ScenarioError> {
        self.check_stop(start, stop)?;
        let size = self.udp_size(packet_size, rate)?;
        for p in self.pairs(src, dst, 1, "src")? {
            let kind = FlowKind::Udp {
                rate_bps: rate,
                packet_size: size,
                onoff: onoff.clone(),
            };
            self.push(p, None, start, stop, kind);
        }
        Ok(())
    }

    fn cbr(&mut self, c: &Cbr) -> Result<(), ScenarioError> {
        let when = (c.start.0, c.stop.map(|s| s.0));
        self.udp((&c.src, &c.dst), c.rate.0, c.packet_size, when, None)
    }

    fn on_off(&mut self, o: &OnOffSpec) -> Result<(), ScenarioError> {
        self.check_stop(o.start.0, o.stop.map(|s| s.0))?;
        for (f, v) in [("on", o.on.0), ("off", o.off.0)] {
            if v < MIN_TIMER {
                return Err(self.err(f, crate::units::MIN_TIMER_TEXT));
            }
        }
        let onoff = OnOff {
            on: o.on.0,
            off: o.off.0,
            exponential: o.distribution == PeriodDistribution::Exponential,
        };
        let when = (o.start.0, o.stop.map(|s| s.0));
        self.udp((&o.src, &o.dst), o.rate.0, o.packet_size, when, Some(onoff))
    }
}

/// The flows of workload `kind` and facts about them for the summary.
pub fn generate(
    kind: &WorkloadKind,
    c: &WorkloadCtx,
    est: &mut Estimator,
) -> Result<Made, ScenarioError> {
    let name = match kind {
        WorkloadKind::LongLived(_) => "long_lived",
        WorkloadKind::Fixed(_) => "fixed",
        WorkloadKind::Permutation(_) => "permutation",
        WorkloadKind::Incast(_) => "incast",
        WorkloadKind::Poisson(_) => "poisson",
        WorkloadKind::Cbr(_) => "cbr",
        WorkloadKind::OnOff(_) => "on_off",
        WorkloadKind::RequestResponse(_) => "request_response",
        WorkloadKind::PingPong(_) => "pingpong",
        WorkloadKind::ClosedLoop(_) => "closed_loop",
        WorkloadKind::Trace(_) => "trace",
        WorkloadKind::Matrix(_) => "matrix",
    };
    let mut g = Gen {
        c,
        est,
        key: format!("workloads[{}]", c.index),
        made: Vec::new(),
        info: WorkloadInfo {
            kind: name.into(),
            tenant: c.tenant_name.to_string(),
            flows: 0,
            offered_load: None,
            window_s: None,
        },
        exchanges: Exchanges::default(),
    };
    match kind {
        WorkloadKind::LongLived(l) => g.long_lived(l)?,
        WorkloadKind::Fixed(f) => g.fixed(f)?,
        WorkloadKind::Permutation(p) => g.permutation(p)?,
        WorkloadKind::Incast(ic) => g.incast(ic)?,
        WorkloadKind::Poisson(p) => g.poisson(p)?,
        WorkloadKind::Cbr(cb) => g.cbr(cb)?,
        WorkloadKind::OnOff(o) => g.on_off(o)?,
        WorkloadKind::RequestResponse(r) => g.request_response(r)?,
        WorkloadKind::PingPong(p) => g.pingpong(p)?,
        WorkloadKind::ClosedLoop(w) => g.closed_loop(w)?,
        WorkloadKind::Trace(w) => g.trace(w)?,
        WorkloadKind::Matrix(m) => g.matrix(m)?,
    }
    g.info.flows = g.made.len() as u64;
    Ok(Made {
        flows: g.made,
        info: g.info,
        exchanges: g.exchanges,
    })
}
