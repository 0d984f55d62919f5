//! Packet capture (`[output] capture`): every packet chosen ports put on the wire,
//! at the simulated instant its first bit leaves, kept as a table (`capture`) from
//! which the Python side writes pcap files that Wireshark and tshark read.
//!
//! A run keeps at most `capture_packets` packets, the earliest (by time, then port),
//! the same set on any number of threads (`kept.rs`).

use super::kept::Kept;
use super::view::RunView;
use crate::engine::Time;
use crate::net::{Packet, PortId};
use crate::packet::flags;
use crate::table::{Column, Table};

/// One packet put on the wire of a captured port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Captured {
    /// When its first bit left, picoseconds.
    pub time: Time,
    /// The port.
    pub port: u32,
    /// Its sequence number (data) or cumulative ACK (ACKs).
    pub seq: u64,
    /// Its flow (`u32::MAX`: a control packet, which belongs to none).
    pub flow: u32,
    /// Size on the wire, bytes.
    pub size: u32,
    /// Payload bytes (0 for ACKs and control packets).
    pub payload: u32,
    /// `flags::*` bits.
    pub flags: u8,
    /// DSCP.
    pub dscp: u8,
    /// The host it is routed to.
    pub dst: u32,
}

/// What a run captures and what it has captured.
#[derive(Clone, Debug, Default)]
pub struct Capture {
    /// Whether each port (by id) is captured.
    ports: Vec<bool>,
    /// The packets kept.
    pub kept: Kept<Captured>,
}

impl Capture {
    /// A capture of `ports` (ids) among `n` ports, keeping at most `limit` packets.
    pub fn new(ports: &[u32], n: usize, limit: u64) -> Self {
        let mut on = vec![false; n];
        for &p in ports {
            on[p as usize] = true;
        }
        Capture {
            ports: on,
            kept: Kept::new(limit),
        }
    }

    /// The same capture with nothing taken yet (a partition's).
    pub fn empty_like(&self) -> Self {
        Capture {
            ports: self.ports.clone(),
            kept: Kept::new(self.kept.limit),
        }
    }

    /// Packet `p` went on the wire of `port` at `now`.
    #[inline]
    pub fn on_wire(&mut self, now: Time, port: PortId, p: &Packet) {
        if !self.ports[port.idx()] {
            return;
        }
        let control = p.flags & flags::CONTROL != 0;
        let ack = p.flags & flags::ACK != 0;
        self.kept.push(Captured {
            time: now,
            port: port.0,
            seq: p.seq,
            flow: if control { u32::MAX } else { p.flow.0 },
            size: p.size,
            payload: if ack || control { 0 } else { p.len },
            flags: p.flags,
            dscp: p.dscp,
            dst: p.dst.0,
        });
    }
}

impl RunView<'_> {
    /// The `capture` table: a row per packet captured (`time_ps`, `node`, `peer`,
    /// `flow_id` (missing for control packets), `src_host` and `dst_host` (host
    /// indices, the packet's own direction), `kind` (data, ack, udp or control),
    /// `seq`, `payload_bytes`, `wire_bytes`, `dscp`, `ecn` (0 not ECT, 2 ECT(0), 3
    /// CE), `ece`, `retx`).
    pub fn capture_table(&self, c: &Capture) -> Table {
        let rows = &c.kept.rows;
        let ports = &self.fabric.net.ports;
        let node = |r: &Captured| ports[r.port as usize].node().0;
        let peer = |r: &Captured| ports[r.port as usize].peer().0;
        let (mut src, mut dst, mut kind) = (vec![], vec![], vec![]);
        for r in rows {
            let (s, d, k) = self.ends_of(r);
            src.push(s);
            dst.push(d);
            kind.push(k);
        }
        let u = |f: &dyn Fn(&Captured) -> u64| Column::U64(rows.iter().map(f).collect());
        let kinds = ["data", "ack", "udp", "control"].map(String::from).to_vec();
        Table {
            name: "capture",
            columns: vec![
                ("time_ps", u(&|r| r.time)),
                (
                    "node",
                    Column::strings(self.node_labels(), rows.iter().map(node).collect()),
                ),
                (
                    "peer",
                    Column::strings(self.node_labels(), rows.iter().map(peer).collect()),
                ),
                (
                    "flow_id",
                    Column::OptU64(
                        rows.iter()
                            .map(|r| (r.flow != u32::MAX).then_some(r.flow as u64))
                            .collect(),
                    ),
                ),
                ("src_host", Column::U64(src)),
                ("dst_host", Column::U64(dst)),
                ("kind", Column::strings(kinds, kind)),
                ("seq", u(&|r| r.seq)),
                ("payload_bytes", u(&|r| r.payload as u64)),
                ("wire_bytes", u(&|r| r.size as u64)),
                ("dscp", u(&|r| r.dscp as u64)),
                ("ecn", u(&|r| ecn_bits(r.flags))),
                ("ece", u(&|r| (r.flags & flags::ECE != 0) as u64)),
                ("retx", u(&|r| (r.flags & flags::RETX != 0) as u64)),
            ],
        }
    }

    /// A captured packet's source and destination hosts and its kind's code (0
    /// data, 1 ACK, 2 UDP, 3 control). A control packet's source is the host whose
    /// NIC sent it, or, on a switch's port, its destination (it names none).
    fn ends_of(&self, r: &Captured) -> (u64, u64, u32) {
        let Some(f) = self.ends.flows.get(r.flow as usize) else {
            let node = self.fabric.net.ports[r.port as usize].node();
            let hosts = &self.fabric.net.hosts;
            let src = hosts.iter().position(|h| h.node == node);
            return (src.map_or(r.dst as u64, |i| i as u64), r.dst as u64, 3);
        };
        let (s, d) = (f.spec.src.0 as u64, f.spec.dst.0 as u64);
        if r.flags & flags::ACK != 0 {
            (d, s, 1)
        } else if matches!(f.spec.kind, crate::workload::FlowKind::Udp { .. }) {
            (s, d, 2)
        } else {
            (s, d, 0)
        }
    }
}

/// The IP header's ECN field of a packet with `flags`.
fn ecn_bits(f: u8) -> u64 {
    match (f & flags::ECT != 0, f & flags::CE != 0) {
        (_, true) => 3,
        (true, false) => 2,
        _ => 0,
    }
}
