//! The `closed_loop` workload (QShare §7.1.2, §7.2): each loop is a chain of flows
//! joined by gates, the next flow starting when the last has been delivered, at
//! once or after a dormant period (the gate's delay).
//!
//! The chain is made before the run, so its length is fixed in advance: a loop
//! gets flows for as long as a lower bound on its timeline, every flow at the
//! slower NIC's line rate with no queueing and every dormant period as drawn, is
//! before `stop`. The run can only be slower than that bound, so every request the
//! loop makes before `stop` exists; those the run does not reach before `stop`
//! never start (their gates are closed from `stop` on).

use super::{load_cdf, Gen};
use crate::engine::rng::Rng;
use crate::engine::{Time, PS_PER_SEC};
use crate::scenario::parse::ScenarioError;
use crate::scenario::workloads::{ClosedLoop, LoopServers};
use crate::workload::{GateSpec, TrafficEnd};

/// One request of a loop, drawn before any flow is made.
struct Request {
    server: TrafficEnd,
    size: u64,
    /// The dormant period after it is delivered (0: active).
    sleep: Time,
}

impl Gen<'_, '_> {
    pub(super) fn closed_loop(&mut self, w: &ClosedLoop) -> Result<(), ScenarioError> {
        let cdf = load_cdf(self.c.ctx, (&w.cdf, &w.cdf_file), &self.key)?;
        if !(0.0..=1.0).contains(&w.dormant) {
            return Err(self.err("dormant", "expected a probability from 0 to 1"));
        }
        self.check_stop(w.start.0, Some(w.stop.0))?;
        let clients = self.ends(&w.src, "src")?;
        let servers = self.ends(&w.dst, "dst")?;
        let mut loops = Vec::new();
        for c in &clients {
            let pool: Vec<TrafficEnd> = (servers.iter())
                .filter(|s| s.host != c.host)
                .copied()
                .collect();
            if pool.is_empty() {
                let host = self.c.net.host_name(c.host);
                return Err(self.err(
                    "dst",
                    format!("client on host {host} has no server on another host"),
                ));
            }
            match w.servers {
                LoopServers::Each => loops.extend(pool.into_iter().map(|s| (*c, vec![s]))),
                LoopServers::Random => loops.push((*c, pool)),
            }
        }
        // counted before they are drawn: the expected number, each request taking
        // its mean transfer at line rate and its mean sleep
        let span = (w.stop.0 - w.start.0) as f64;
        let sleep = w.dormant * w.dormancy.0 as f64 / 2.0;
        let expect: f64 = (loops.iter())
            .map(|(c, pool)| {
                let rate = self.loop_rate(*c, pool) as f64;
                span / (cdf.mean() * 8.0 * PS_PER_SEC as f64 / rate + sleep).max(1.0)
            })
            .sum();
        self.count(expect.ceil() as u64, "stop")?;
        let most = (2.0 * expect) as usize + 1000;
        let stream = format!("workload{}/closed_loop", self.c.index);
        let mut rng = Rng::stream(self.c.seed, &stream);
        let mut chains = Vec::with_capacity(loops.len());
        let mut drawn = 0;
        for (c, pool) in loops {
            let chain = self.chain(w, &cdf, (c, &pool), &mut rng, most - drawn);
            drawn += chain.len();
            if drawn >= most {
                return Err(self.err(
                    "stop",
                    format!("the loops draw more than {most} requests, twice as many as expected"),
                ));
            }
            chains.push((c, chain));
        }
        for (client, requests) in chains {
            self.make_chain(client, &requests, w);
        }
        Ok(())
    }

    /// The slowest NIC rate between a loop's client and its servers.
    fn loop_rate(&self, client: TrafficEnd, pool: &[TrafficEnd]) -> u64 {
        let net = self.c.net;
        (pool.iter())
            .map(|s| net.host_rate(s.host))
            .fold(net.host_rate(client.host), u64::min)
    }

    /// A loop's requests: drawn while the lower bound on its timeline is before
    /// `stop`, and at most `most`.
    fn chain(
        &self,
        w: &ClosedLoop,
        cdf: &crate::workload::Cdf,
        (client, pool): (TrafficEnd, &[TrafficEnd]),
        rng: &mut Rng,
        most: usize,
    ) -> Vec<Request> {
        let net = self.c.net;
        let mut t = w.start.0;
        let mut out = Vec::new();
        while t < w.stop.0 && out.len() < most {
            let server = match pool.len() {
                1 => pool[0],
                n => pool[rng.below(n as u64) as usize],
            };
            let size = cdf.size_at(rng.uniform()).max(1);
            let rate = net.host_rate(server.host).min(net.host_rate(client.host));
            let sleep = match rng.uniform() < w.dormant {
                true => (rng.uniform() * w.dormancy.0 as f64) as Time,
                false => 0,
            };
            let transfer = (size as u128 * 8 * PS_PER_SEC as u128 / rate as u128) as Time;
            t = t.saturating_add(transfer.max(1)).saturating_add(sleep);
            out.push(Request {
                server,
                size,
                sleep,
            });
        }
        out
    }

    /// A loop's flows, server to client, each gated on the last's delivery.
    fn make_chain(&mut self, client: TrafficEnd, requests: &[Request], w: &ClosedLoop) {
        let mut last: Option<u32> = None;
        for (i, r) in requests.iter().enumerate() {
            let flow = self.next_flow();
            let start = if i == 0 { w.start.0 } else { Time::MAX };
            self.push((r.server, client), Some(r.size), start, None, self.tcp());
            let base = self.c.exchanges_so_far.0;
            if let Some(g) = last {
                self.exchanges.gates[g as usize - base].opens.push(flow);
            }
            let gate = self.next_gate();
            self.exchanges.gates.push(GateSpec {
                waits: 1,
                delay: r.sleep,
                until: Some(w.stop.0),
                ..Default::default()
            });
            self.gate_last(last, Some(gate));
            last = Some(gate);
        }
    }
}
