//! A flow's ideal completion time: what it would take alone on an idle path, the
//! reference its measured completion time is divided by to give its slowdown (the
//! measure of pFabric, HPCC and most datacenter transport papers: serialization at
//! the bottleneck rate plus the base round trip).
//!
//! Exactly, for a store-and-forward path whose sender is never held back by its
//! window: the first packet crosses the hops before the slowest one (the first
//! slowest, where several tie); the slowest hop then sends every wire byte of the
//! flow (payload plus one header per segment) back to back; the last packet crosses
//! the hops after it, each faster or as fast, without waiting; every hop adds its
//! propagation delay; and the ACK for the last byte comes back the same way, one
//! ACK's serialization and one delay per hop. A lone flow no larger than its
//! initial window, on an otherwise idle network, completes in exactly this time
//! (to the picosecond's rounding): its slowdown is 1.
//!
//! Also the round trip a flow's handshake would measure on the same idle paths
//! (`transport.handshake_rtt`), which its sender starts with.

use super::flow::Flow;
use crate::engine::Time;
use crate::net::{Network, PortId};
use crate::transport::TcpConfig;
use crate::units::PS_PER_SEC;
use crate::workload::FlowKind;

fn ser(bytes: u64, rate_bps: u64) -> f64 {
    bytes as f64 * 8.0 * PS_PER_SEC as f64 / rate_bps as f64
}

/// The ideal completion time, seconds, of `size` payload bytes sent over `fwd` and
/// acknowledged over `rev` with transport `cfg`.
pub fn ideal_fct(net: &Network, fwd: &[PortId], rev: &[PortId], size: u64, cfg: &TcpConfig) -> f64 {
    let mss = cfg.mss as u64;
    let header = cfg.header as u64;
    let segments = size.div_ceil(mss).max(1);
    let wire = size + segments * header;
    let first = size.min(mss) + header;
    let last = size - (segments - 1) * mss + header;
    let rate = |p: &PortId| net.ports[p.idx()].rate_bps();
    let delay = |p: &PortId| net.ports[p.idx()].delay() as f64;
    let slowest = fwd
        .iter()
        .enumerate()
        .min_by_key(|(i, p)| (rate(p), *i))
        .map_or(0, |(i, _)| i);
    let mut t = 0.0;
    for (i, p) in fwd.iter().enumerate() {
        let bytes = match i.cmp(&slowest) {
            std::cmp::Ordering::Less => first,
            std::cmp::Ordering::Equal => wire,
            std::cmp::Ordering::Greater => last,
        };
        t += ser(bytes, rate(p)) + delay(p);
    }
    ack_trip(net, rev, cfg, t) / PS_PER_SEC as f64
}

/// `from` plus the picoseconds an ACK-sized segment of `cfg` takes over `ports`, idle,
/// store and forward: each hop's serialisation and delay, added hop by hop.
fn ack_trip(net: &Network, ports: &[PortId], cfg: &TcpConfig, from: f64) -> f64 {
    ports.iter().fold(from, |t, p| {
        let port = &net.ports[p.idx()];
        t + (ser(cfg.ack_size as u64, port.rate_bps()) + port.delay() as f64)
    })
}

/// The RTT sample `flow`'s handshake would have given, where its transport (of
/// `tcp`) takes one (`transport.handshake_rtt`): the round trip of an ACK-sized
/// segment (a SYN) over its data path and its answer (the SYN-ACK) over its ACK path,
/// idle, store-and-forward at every hop.
pub fn handshake_rtt(net: &Network, flow: &Flow, tcp: &[TcpConfig]) -> Option<Time> {
    let FlowKind::Tcp { transport } = flow.spec.kind else {
        return None;
    };
    let cfg = &tcp[transport as usize];
    if !cfg.handshake_rtt {
        return None;
    }
    let fwd = net.path(flow.spec.src, flow.spec.dst, flow.hash);
    let rev = net.path(flow.spec.dst, flow.spec.src, flow.hash_rev);
    Some(ack_trip(net, &rev, cfg, ack_trip(net, &fwd, cfg, 0.0)).round() as Time)
}
