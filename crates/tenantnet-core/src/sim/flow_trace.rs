//! Per-flow traces (`[output] trace_flows`, `trace_fraction`): a traced TCP flow's
//! sender state each time the simulator drives it (its start, every ACK, every
//! timer, every resume after its host had no room): the window, ssthresh, the
//! smoothed RTT, the RTO, the congestion state (`CaState`), `snd_una` and the highest
//! byte sent. At most `trace_rows` rows are kept, the earliest, the same on any
//! number of threads (`kept.rs`).

use super::kept::Kept;
use super::view::RunView;
use crate::engine::{to_secs, Time};
use crate::net::FlowId;
use crate::table::{Column, Table};
use crate::transport::tcp_sender::{CaState, TcpSender};

/// One row of the trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct TraceRow {
    /// When.
    pub time: Time,
    /// The flow.
    pub flow: u32,
    /// Rows of this flow before this one at this instant (keeps the order of a
    /// flow's rows at one instant).
    pub nth: u32,
    /// The window, bytes.
    pub cwnd: u64,
    /// ssthresh, bytes (`u64::MAX`: not set yet).
    pub ssthresh: u64,
    /// The smoothed RTT (0: no sample yet).
    pub srtt: Time,
    /// The retransmission timeout.
    pub rto: Time,
    /// The congestion state's code (its place in `CaState::ALL`).
    pub state: u8,
    /// The oldest unacknowledged byte.
    pub snd_una: u64,
    /// The highest byte sent, plus one.
    pub snd_max: u64,
}

/// Which flows a run traces and what it has recorded.
#[derive(Clone, Debug, Default)]
pub struct FlowTrace {
    /// Whether each flow (by id) is traced.
    flows: Vec<bool>,
    /// The last row's time and count at that time, per flow.
    last: Vec<(Time, u32)>,
    /// The rows kept.
    pub kept: Kept<TraceRow>,
}

impl FlowTrace {
    /// A trace of the flows `on` marks, keeping at most `limit` rows.
    pub fn new(on: Vec<bool>, limit: u64) -> Self {
        FlowTrace {
            last: vec![(Time::MAX, 0); on.len()],
            flows: on,
            kept: Kept::new(limit),
        }
    }

    /// The same trace with nothing recorded yet (a partition's).
    pub fn empty_like(&self) -> Self {
        FlowTrace::new(self.flows.clone(), self.kept.limit)
    }

    /// Flow `f`'s sender `s` was driven at `now`.
    #[inline]
    pub fn record(&mut self, now: Time, f: FlowId, s: &TcpSender) {
        if !self.flows.get(f.idx()).copied().unwrap_or(false) {
            return;
        }
        let last = &mut self.last[f.idx()];
        let nth = if last.0 == now { last.1 + 1 } else { 0 };
        *last = (now, nth);
        self.kept.push(TraceRow {
            time: now,
            flow: f.0,
            nth,
            cwnd: s.cwnd,
            ssthresh: s.ssthresh,
            srtt: s.srtt().unwrap_or(0),
            rto: s.rto(),
            state: s.ca_state() as u8,
            snd_una: s.snd_una,
            snd_max: s.snd_max,
        });
    }
}

impl RunView<'_> {
    /// The `flow_trace` table: `time_s`, `flow_id`, `cwnd_bytes`, `ssthresh_bytes`
    /// (missing until set), `srtt_s` (missing before a sample), `rto_s`, `state`,
    /// `snd_una`, `snd_max`.
    pub fn flow_trace_table(&self, t: &FlowTrace) -> Table {
        let rows = &t.kept.rows;
        let u = |f: &dyn Fn(&TraceRow) -> u64| Column::U64(rows.iter().map(f).collect());
        let states = CaState::ALL.iter().map(|c| c.name().to_string()).collect();
        Table {
            name: "flow_trace",
            columns: vec![
                (
                    "time_s",
                    Column::F64(rows.iter().map(|r| to_secs(r.time)).collect()),
                ),
                ("flow_id", u(&|r| r.flow as u64)),
                ("cwnd_bytes", u(&|r| r.cwnd)),
                (
                    "ssthresh_bytes",
                    Column::OptU64(
                        rows.iter()
                            .map(|r| (r.ssthresh != u64::MAX).then_some(r.ssthresh))
                            .collect(),
                    ),
                ),
                (
                    "srtt_s",
                    Column::OptF64(
                        rows.iter()
                            .map(|r| (r.srtt > 0).then(|| to_secs(r.srtt)))
                            .collect(),
                    ),
                ),
                (
                    "rto_s",
                    Column::F64(rows.iter().map(|r| to_secs(r.rto)).collect()),
                ),
                (
                    "state",
                    Column::strings(states, rows.iter().map(|r| r.state as u32).collect()),
                ),
                ("snd_una", u(&|r| r.snd_una)),
                ("snd_max", u(&|r| r.snd_max)),
            ],
        }
    }
}
