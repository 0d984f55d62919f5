//! What a run holds in memory: estimated from the scenario before it runs, so that a
//! scenario that would not fit is refused up front with the estimate, and watched
//! while it runs, so that a run whose estimate was too low stops with an error
//! instead of being killed by the operating system (an allocation failure aborts the
//! process; nothing can catch it).
//!
//! The estimate adds up, for the whole life of a run including the results handed
//! to Python and written to Parquet (peak resident memory, measured end to end with
//! `tenantnet run`; the calibration is in BENCHMARKS.md):
//! * the network: every port and the forwarding tables;
//! * every flow (its spec, both transport ends, its row of `flows`);
//! * the recorded samples: rows of `throughput` (per flow while it runs, per tenant,
//!   link, queue and VM), of `queues` and of `vm_rates`;
//! * packets alive at once (waiting in buffers and VM queues, on the wire);
//! * the largest initial window one TCP sender hands over at once.

use super::parts::{Fabric, Hosts, Records};
use crate::engine::Time;

/// The default memory budget of a run: 8 GiB.
pub const DEFAULT_BUDGET: u64 = 8 << 30;

/// The default limit on a run's estimated events: 10^12, about two days at
/// [`NS_PER_EVENT`].
pub const DEFAULT_MAX_EVENTS: f64 = 1e12;

/// Wall time per event for the time estimates: 150 ns, this project's 2-core VM on the
/// permutation benchmark (BENCHMARKS.md) rounded up.
pub const NS_PER_EVENT: f64 = 150.0;

/// Bytes per row of `throughput` (Rust columns, their Python copy, the DataFrame).
pub const PER_SAMPLE_ROW: f64 = 160.0;
/// Bytes per row of `queues`.
pub const PER_QUEUE_ROW: f64 = 180.0;
/// Bytes per captured packet: its row (40), twice while a parallel run's
/// partitions hand theirs over, and its table's columns (14 × 8).
pub const PER_CAPTURED: f64 = 200.0;
/// Bytes per flow-trace row: its row (72), twice while a parallel run's partitions
/// hand theirs over, and its table's columns (9 × 8).
pub const PER_TRACE_ROW: f64 = 250.0;
/// Bytes per row of `vm_rates` (280 measured with MBFQ's two policy columns; 90
/// more for Trinity's two and ElasticSwitch's one, at the same 30 per column).
pub const PER_VM_RATE_ROW: f64 = 370.0;
/// Bytes per flow.
pub const PER_FLOW: f64 = 1000.0;
/// Bytes per port (a switch port or host NIC), its row of `links` included.
pub const PER_PORT: f64 = 1600.0;
/// Bytes per queue of a port beyond its first (a queue's entry, counters and
/// scheduler state): measured by peak RSS on the k = 16 permutation, 1024 host NICs
/// with `host_nic = "fq"` (31 queues more each) against FIFO NICs, 159 bytes.
pub const PER_EXTRA_QUEUE: f64 = 200.0;
/// Bytes per forwarding-table entry (switch × leaf).
pub const PER_ROUTE: f64 = 12.0;
/// Bytes per packet alive at once (its slot, its event or queue entry).
pub const PER_PACKET: f64 = 80.0;
/// Bytes more per packet alive when a flow recovers with SACK: the option an ACK
/// carries in the run's `SackStore` (56 bytes and its free-list entry; at most one
/// per packet alive).
pub const PER_SACK_OPTION: f64 = 64.0;
/// Bytes more per flow that recovers with SACK: the sender's boxed state (120
/// bytes and the allocator's 16), the receiver's boxed reporter with its four
/// ranges (24 + 64 and 16), and eight SACKed ranges on the scoreboard at 24 bytes
/// each (a range and its suffix sum), by construction; a flow with more holes
/// grows past it.
pub const PER_SACK_FLOW: f64 = 440.0;
/// Bytes more per flow that detects losses with RACK-TLP: its boxed state (240
/// bytes and the allocator's 16), eight send-time records of new data (16 bytes
/// each) and four retransmissions in flight, kept in send order (24 bytes) and by
/// sequence (24 bytes), with each buffer's allocator overhead; by construction, a
/// flow with more grows past it.
pub const PER_RACK_FLOW: f64 = 640.0;

/// Bytes per packet alive at once, with or without SACK options beside them.
pub fn per_packet(sack: bool) -> f64 {
    PER_PACKET + if sack { PER_SACK_OPTION } else { 0.0 }
}
/// Bytes per segment of an initial window handed over in one call.
pub const PER_SEGMENT: f64 = 24.0;

/// What a part of the estimate is; the run watches the last two as they grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartKind {
    /// Allocated when the run is built (the network, flows, initial windows).
    Fixed,
    /// Rows recorded while the run goes on.
    Recording,
    /// Packets alive at once.
    Packets,
}

/// One part of the estimate: what it is, the scenario key that drives it, bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    /// Allocated up front, recorded, or packets.
    pub kind: PartKind,
    /// What the bytes hold, e.g. `3.0e9 throughput samples`.
    pub what: String,
    /// The scenario key that makes it large, e.g. `output.sample_interval`.
    pub key: String,
    /// Estimated bytes.
    pub bytes: f64,
}

/// A run's estimated memory, part by part.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Footprint {
    /// The parts, in the order they were added.
    parts: Vec<Part>,
    /// Their bytes, summed as they are added (a scenario with 10^5 workloads adds as
    /// many parts, and checks the total after each).
    total: f64,
    /// Events the run is estimated to process.
    pub events: f64,
}

/// Bytes as a person writes them, in binary units: `812 MiB`, `3.4 GiB`.
pub fn human_bytes(b: f64) -> String {
    const K: f64 = 1024.0;
    let (v, u) = if b >= K * K * K * K {
        (b / (K * K * K * K), "TiB")
    } else if b >= K * K * K {
        (b / (K * K * K), "GiB")
    } else if b >= K * K {
        (b / (K * K), "MiB")
    } else {
        (b / K, "KiB")
    };
    if v >= 100.0 {
        format!("{v:.0} {u}")
    } else {
        format!("{v:.1} {u}")
    }
}

/// Seconds as a person writes them: `about 14 s`, `about 3.2 hours`, `about 4.1 days`.
pub fn human_secs(s: f64) -> String {
    if s < 1.0 {
        "under a second".into()
    } else if s < 120.0 {
        format!("about {s:.0} s")
    } else if s < 7200.0 {
        format!("about {:.0} minutes", s / 60.0)
    } else if s < 172_800.0 {
        format!("about {:.1} hours", s / 3600.0)
    } else {
        format!("about {:.1} days", s / 86400.0)
    }
}

/// A count as a person writes it: `1200`, `3.0e9`.
pub fn human_count(n: f64) -> String {
    if n < 1e6 {
        format!("{n:.0}")
    } else {
        format!("{n:.1e}")
    }
}

impl Footprint {
    /// Adds a part.
    pub fn add(
        &mut self,
        kind: PartKind,
        what: impl Into<String>,
        key: impl Into<String>,
        bytes: f64,
    ) {
        self.parts.push(Part {
            kind,
            what: what.into(),
            key: key.into(),
            bytes,
        });
        self.total += bytes;
    }

    /// The parts, in the order they were added.
    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// Total estimated bytes.
    pub fn total(&self) -> f64 {
        self.total
    }

    /// Estimated bytes of the parts of one kind.
    pub fn of(&self, kind: PartKind) -> f64 {
        self.parts
            .iter()
            .filter(|p| p.kind == kind)
            .map(|p| p.bytes)
            .sum()
    }

    /// The largest part.
    pub fn largest(&self) -> Option<&Part> {
        self.parts.iter().max_by(|a, b| a.bytes.total_cmp(&b.bytes))
    }

    /// The parts, largest first, in one line.
    pub fn breakdown(&self) -> String {
        let mut parts: Vec<&Part> = self.parts.iter().filter(|p| p.bytes >= 1.0).collect();
        parts.sort_by(|a, b| b.bytes.total_cmp(&a.bytes));
        parts
            .iter()
            .take(4)
            .map(|p| format!("{} for {}", human_bytes(p.bytes), p.what))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `about 13.2 MiB of memory (6.7 MiB for …, …)`.
    pub fn summary(&self) -> String {
        format!(
            "about {} of memory ({})",
            human_bytes(self.total()),
            self.breakdown()
        )
    }

    /// `up to about 9.6e7 events (at most about 14 s at 150 ns each)`: an upper
    /// estimate (the examples' runs process 50–90 % of it at 50–60 ns an event here;
    /// `compare`, `sweep` and `reproduce` time a trial for their estimates).
    pub fn events_summary(&self) -> String {
        format!(
            "up to about {} events (at most {} at {NS_PER_EVENT:.0} ns each)",
            human_count(self.events.round()),
            human_secs(self.events * NS_PER_EVENT * 1e-9)
        )
    }

    /// Fails, naming the key behind the largest part, if the total exceeds `budget`.
    pub fn check(&self, budget: u64) -> Result<(), (String, String)> {
        let total = self.total();
        if total <= budget as f64 {
            return Ok(());
        }
        let key = self.largest().map(|p| p.key.clone()).unwrap_or_default();
        Err((
            key,
            format!(
                "the run would need {}, more than the memory budget of {} (raise it with --memory-budget)",
                self.summary(),
                human_bytes(budget as f64)
            ),
        ))
    }
}

/// Samples taken at `interval`, `2·interval`, … up to `end`.
pub fn samples(end: Time, interval: Time) -> f64 {
    end.checked_div(interval).unwrap_or(0) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_part_is_blamed() {
        let mut f = Footprint::default();
        f.add(PartKind::Fixed, "flows", "workloads[0].flows", 1e9);
        let what = "3.0e9 throughput samples";
        f.add(PartKind::Recording, what, "output.sample_interval", 5e11);
        assert!(f.check(1 << 40).is_ok());
        let (key, msg) = f.check(8 << 30).unwrap_err();
        assert_eq!(key, "output.sample_interval");
        assert!(msg.contains("about 467 GiB"), "{msg}");
        assert!(
            msg.contains("466 GiB for 3.0e9 throughput samples, 954 MiB for flows"),
            "{msg}"
        );
        assert!(msg.contains("memory budget of 8.0 GiB"), "{msg}");
    }
}

/// What the run holds that grows as it goes, at one moment: the rows recorded and
/// the packet slots allocated, which `RunBudget::in_use` weighs against its memory.
#[derive(Clone, Copy)]
pub struct MemoryUse {
    /// Rows of the throughput samples.
    pub(super) sample_rows: usize,
    /// Rows of the queue samples.
    pub(super) queue_rows: usize,
    /// Rows of `vm_rates`.
    pub(super) vm_rate_rows: usize,
    /// Packet slots allocated.
    pub(super) packet_slots: usize,
    /// Bytes of SACK options in flight.
    pub(super) sack_bytes: u64,
}

impl MemoryUse {
    /// What `fabric`, `hosts` and `records` hold now (`RunBudget::in_use` weighs
    /// it).
    pub fn of(fabric: &Fabric, hosts: &Hosts, records: &Records) -> Self {
        MemoryUse {
            sample_rows: records.recorder.tp.time.len(),
            queue_rows: records.recorder.q.time.len(),
            vm_rate_rows: hosts.vm_rates.time.len(),
            packet_slots: fabric.pkts.slots(),
            sack_bytes: fabric.sacks.bytes(),
        }
    }
}
