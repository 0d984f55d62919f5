//! Request–response exchanges at run time: gates that start flows once others
//! have been delivered in full (a response once its request has arrived, a
//! closed-loop client's next query once its last is complete), and each query's
//! completion time, recorded in the `queries` table.

use super::results::{Column, Table};
use super::view::RunView;
use crate::engine::{to_secs, Time};
use crate::net::HostId;
use crate::workload::Exchanges;

/// The gates and queries of a run, and how far each has got.
#[derive(Clone, Default)]
pub struct ExchangeState {
    spec: Exchanges,
    /// Per gate: deliveries it still waits for.
    waiting: Vec<u32>,
    /// Per query: when it began.
    began: Vec<Option<Time>>,
    /// Per query: when its last response arrived.
    ended: Vec<Option<Time>>,
}

impl ExchangeState {
    /// How many gates there are.
    pub fn gates(&self) -> usize {
        self.spec.gates.len()
    }

    /// A parallel run's view of its partitions' exchanges (`parts`): each query's
    /// begin and end from the partition of its client (`client`), where its gates
    /// open.
    pub(super) fn absorb(&mut self, parts: &[&ExchangeState], client: &dyn Fn(HostId) -> usize) {
        for (q, spec) in self.spec.queries.iter().enumerate() {
            let theirs = parts[client(spec.client)];
            self.began[q] = theirs.began[q];
            self.ended[q] = theirs.ended[q];
        }
    }

    /// Gate `g` counts a flow delivered in full at `now`: if that was the last
    /// delivery it waited for, it opens (once): when its flows begin (its delay
    /// after now, `None` past its `until`), and whether that is later than now.
    pub(super) fn delivered(&mut self, g: usize, now: Time) -> Option<(Time, Vec<u32>, bool)> {
        self.waiting[g] -= 1;
        if self.waiting[g] > 0 {
            return None;
        }
        let gate = &mut self.spec.gates[g];
        if let Some(q) = gate.ends {
            self.ended[q as usize] = Some(now);
        }
        if let Some(q) = gate.begins {
            self.began[q as usize] = Some(now);
        }
        // a gate opens once
        let at = now.saturating_add(gate.delay);
        if gate.until.is_some_and(|u| at >= u) {
            return None;
        }
        Some((at, std::mem::take(&mut gate.opens), gate.delay > 0))
    }

    /// The state of `spec` before the run.
    pub fn new(spec: Exchanges) -> Self {
        ExchangeState {
            waiting: spec.gates.iter().map(|g| g.waits).collect(),
            began: spec.queries.iter().map(|q| q.start).collect(),
            ended: vec![None; spec.queries.len()],
            spec,
        }
    }
}

impl RunView<'_> {
    /// The `queries` table: one row per query of the request–response workloads.
    pub(super) fn queries_table(&self) -> Table {
        let x = &self.ends.exchanges;
        let q = &x.spec.queries;
        let secs = |t: Option<Time>| t.map(to_secs);
        let qct = x.began.iter().zip(&x.ended).map(|(b, e)| match (b, e) {
            (Some(b), Some(e)) => Some(to_secs(e - b)),
            _ => None,
        });
        Table {
            name: "queries",
            columns: vec![
                ("query_id", Column::U64((0..q.len() as u64).collect())),
                (
                    "workload",
                    Column::U64(q.iter().map(|q| q.workload as u64).collect()),
                ),
                (
                    "tenant",
                    Column::strings(
                        self.records.meta.tenants.clone(),
                        q.iter().map(|q| q.tenant).collect(),
                    ),
                ),
                (
                    "client",
                    Column::strings(self.host_labels(), q.iter().map(|q| q.client.0).collect()),
                ),
                (
                    "servers",
                    Column::U64(q.iter().map(|q| q.servers as u64).collect()),
                ),
                (
                    "start_s",
                    Column::OptF64(x.began.iter().map(|&t| secs(t)).collect()),
                ),
                (
                    "end_s",
                    Column::OptF64(x.ended.iter().map(|&t| secs(t)).collect()),
                ),
                ("qct_s", Column::OptF64(qct.collect())),
            ],
        }
    }
}
