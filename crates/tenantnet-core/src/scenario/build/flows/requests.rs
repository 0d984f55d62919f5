//! The `request_response` workload: every query of every client as flows and
//! gates. A query to k servers is k request flows (client → server), each of whose
//! full delivery opens a gate that starts the server's response flow (server →
//! client); the k responses' deliveries open the query's gate, which completes the
//! query and, in a closed loop, starts the client's next query.

use super::{nth_start, Gen};
use crate::engine::rng::Rng;
use crate::engine::Time;
use crate::scenario::parse::ScenarioError;
use crate::scenario::workloads::{PingPong, RequestResponse};
use crate::workload::{GateSpec, QuerySpec, TrafficEnd};

impl Gen<'_, '_> {
    /// The global id of the next gate this workload makes.
    pub(super) fn next_gate(&self) -> u32 {
        (self.c.exchanges_so_far.0 + self.exchanges.gates.len()) as u32
    }

    /// The global id of the next flow this workload makes.
    pub(super) fn next_flow(&self) -> u32 {
        (self.c.flows_so_far + self.made.len()) as u32
    }

    /// The servers each client may ask (those on other hosts); fails for a client
    /// with too few for the fan-out.
    fn servers_of(
        &self,
        clients: &[TrafficEnd],
        servers: &[TrafficEnd],
        fanout: Option<u32>,
    ) -> Result<Vec<Vec<TrafficEnd>>, ScenarioError> {
        let mut out = Vec::with_capacity(clients.len());
        for c in clients {
            let mine: Vec<TrafficEnd> = servers
                .iter()
                .filter(|s| s.host != c.host)
                .copied()
                .collect();
            let need = fanout.unwrap_or(1).max(1) as usize;
            if mine.len() < need {
                let host = self.c.net.host_name(c.host);
                let m = match fanout {
                    Some(k) => format!(
                        "client on host {host} has {} servers on other hosts; expected at least fanout = {k}",
                        mine.len()
                    ),
                    None => format!("client on host {host} has no server on another host"),
                };
                return Err(self.err(if fanout.is_some() { "fanout" } else { "dst" }, m));
            }
            out.push(mine);
        }
        Ok(out)
    }

    pub(super) fn request_response(&mut self, r: &RequestResponse) -> Result<(), ScenarioError> {
        let clients = self.ends(&r.src, "src")?;
        let servers = self.ends(&r.dst, "dst")?;
        let size = self.size_of(r.size, "size")?;
        let request = self.size_of(r.request, "request")?;
        if r.queries == 0 {
            return Err(self.err("queries", "expected at least 1"));
        }
        if r.fanout == Some(0) {
            return Err(self.err("fanout", "expected at least 1"));
        }
        if let Some(i) = r.interval {
            if i.0 == 0 {
                return Err(self.err("interval", "expected a positive interval"));
            }
            nth_start(r.start.0, i.0, r.queries as u64)
                .ok_or_else(|| self.beyond("interval", "the last query"))?;
        }
        let asked = self.servers_of(&clients, &servers, r.fanout)?;
        let per_client: Vec<u64> = asked
            .iter()
            .map(|a| r.fanout.map_or(a.len(), |k| k as usize) as u64)
            .collect();
        let flows: u64 = per_client.iter().sum::<u64>() * 2 * r.queries as u64;
        self.count(flows, "queries")?;
        let stream = format!("workload{}/request_response", self.c.index);
        let mut rng = Rng::stream(self.c.seed, &stream);
        for (c, mut pool) in clients.into_iter().zip(asked) {
            let mut last: Option<u32> = None;
            for q in 0..r.queries as u64 {
                let chosen = match r.fanout {
                    Some(k) => {
                        rng.shuffle(&mut pool);
                        pool[..k as usize].to_vec()
                    }
                    None => pool.clone(),
                };
                let start = match r.interval {
                    Some(i) => Some(r.start.0 + q * i.0),
                    None => (q == 0).then_some(r.start.0),
                };
                let after = if r.interval.is_none() { last } else { None };
                last = Some(self.query(c, &chosen, (request, size), start, after));
            }
        }
        Ok(())
    }

    /// A ping-pong probe: a closed loop of `count` exchanges of `message` bytes each
    /// way between each client and the one server.
    pub(super) fn pingpong(&mut self, p: &PingPong) -> Result<(), ScenarioError> {
        if self.ends(&p.dst, "dst")?.len() != 1 {
            return Err(self.err("dst", "expected one server (a VM or a host)"));
        }
        self.size_of(p.message, "message")?;
        if p.count == 0 {
            return Err(self.err("count", "expected at least 1"));
        }
        let made = self.request_response(&RequestResponse {
            src: p.src.clone(),
            dst: p.dst.clone(),
            size: p.message,
            request: p.message,
            fanout: Some(1),
            queries: p.count,
            interval: None,
            start: p.start,
        });
        // the flow-count estimate is the one error left that names a key of its own
        made.map_err(|e| match e.key.ends_with(".queries") {
            true => self.err("count", e.message),
            false => e,
        })
    }

    /// One query of client `c` to `servers`: returns its completion gate. It begins
    /// at `start`, or when gate `after` opens.
    fn query(
        &mut self,
        c: TrafficEnd,
        servers: &[TrafficEnd],
        (request, size): (u64, u64),
        start: Option<Time>,
        after: Option<u32>,
    ) -> u32 {
        let id = (self.c.exchanges_so_far.1 + self.exchanges.queries.len()) as u32;
        self.exchanges.queries.push(QuerySpec {
            workload: self.c.index as u32,
            tenant: self.c.tenant,
            client: c.host,
            servers: servers.len() as u32,
            start,
        });
        let done = self.next_gate();
        self.exchanges.gates.push(GateSpec {
            waits: servers.len() as u32,
            ends: Some(id),
            ..Default::default()
        });
        let mut requests = Vec::with_capacity(servers.len());
        for &s in servers {
            // the response waits for its request's gate, and signals the query's
            let answered = self.next_gate();
            requests.push(self.next_flow());
            self.push(
                (c, s),
                Some(request),
                start.unwrap_or(Time::MAX),
                None,
                self.tcp(),
            );
            self.gate_last(after, Some(answered));
            let response = self.next_flow();
            self.push((s, c), Some(size), Time::MAX, None, self.tcp());
            self.gate_last(Some(answered), Some(done));
            self.exchanges.gates.push(GateSpec {
                waits: 1,
                opens: vec![response],
                ..Default::default()
            });
        }
        if let Some(g) = after {
            let base = self.c.exchanges_so_far.0;
            let gate = &mut self.exchanges.gates[g as usize - base];
            gate.opens.extend(requests);
            gate.begins = Some(id);
        }
        done
    }

    /// The flow just made starts when gate `after` opens and signals `signals`.
    pub(super) fn gate_last(&mut self, after: Option<u32>, signals: Option<u32>) {
        let f = self.made.last_mut().expect("a flow was just made");
        f.after = after;
        f.signals = signals;
    }
}
