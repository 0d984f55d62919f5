//! A flow's spec and its transport state at both ends.

use crate::engine::rng::Rng;
use crate::engine::Time;
use crate::net::routing::mix32;
use crate::transport::tcp_receiver::TcpReceiver;
use crate::transport::tcp_sender::TcpSender;
use crate::transport::udp::UdpSource;
use crate::transport::TcpConfig;
use crate::vswitch::{PairId, NO_PAIR};
use crate::workload::{FlowKind, FlowSpec};

/// Transport state of a flow, made when it is first needed (see [`Flow::ep`]).
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Endpoint {
    /// A TCP connection: sender at `src`, receiver at `dst`.
    Tcp {
        /// The sender.
        snd: TcpSender,
        /// The receiver.
        rcv: TcpReceiver,
    },
    /// A UDP source; the sink only counts bytes.
    Udp {
        /// The source.
        src: UdpSource,
        /// Bytes sent so far (the next packet's sequence number).
        sent: u64,
    },
}

impl Endpoint {
    /// The state in `ep`, flow number `index`'s with `spec`, made now if it has none
    /// (borrowing the flow's fields apart, so its spec stays readable).
    #[inline]
    pub fn made<'a>(
        ep: &'a mut Option<Box<Endpoint>>,
        index: usize,
        spec: &FlowSpec,
        tcp: &[TcpConfig],
        seed: u64,
    ) -> &'a mut Endpoint {
        ep.get_or_insert_with(|| Box::new(Endpoint::new(index, spec, tcp, seed)))
    }

    /// The transport state flow number `index` with `spec` starts with.
    #[cold]
    fn new(index: usize, spec: &FlowSpec, tcp: &[TcpConfig], seed: u64) -> Self {
        match &spec.kind {
            FlowKind::Tcp { transport } => {
                let cfg = &tcp[*transport as usize];
                let rcv = if cfg.recovery.uses_sack() {
                    TcpReceiver::with_sack()
                } else {
                    TcpReceiver::new()
                };
                Endpoint::Tcp {
                    snd: TcpSender::new(cfg, spec.size.unwrap_or(u64::MAX)),
                    rcv: rcv.with_quick_acks(cfg.quick_acks),
                }
            }
            FlowKind::Udp {
                rate_bps,
                packet_size,
                onoff,
            } => Endpoint::Udp {
                src: UdpSource::new(
                    *rate_bps,
                    *packet_size,
                    onoff.clone(),
                    Rng::stream(seed, &format!("udp-onoff/{index}")),
                ),
                sent: 0,
            },
        }
    }
}

/// One flow.
#[derive(Clone, Debug)]
pub struct Flow {
    /// What to send, from where to where, when.
    pub spec: FlowSpec,
    /// ECMP hash of the forward direction.
    pub hash: u32,
    /// ECMP hash of the reverse (ACK) direction.
    pub hash_rev: u32,
    /// When the sender had every byte acknowledged (sized TCP flows only).
    pub end: Option<Time>,
    /// Bytes delivered to the receiving application (in order, for TCP).
    pub delivered: u64,
    /// Transport state: `None` until the flow's sender starts or its receiver gets
    /// its first packet ([`Flow::ep_mut`]), boxed so that a flow waiting to start
    /// holds 8 bytes of it instead of about 400 (a trace of a million flows has a
    /// few thousand running at once). Made then as it would have been at the start
    /// of the run: it depends only on the flow's number, spec and the seed.
    pub ep: Option<Box<Endpoint>>,
    /// Waiting in its VM's list for room in the vswitch queue.
    pub blocked: bool,
    /// Its VM pair, data direction (`NO_PAIR` without VMs).
    pub pair: PairId,
    /// Its VM pair, ACK direction.
    pub pair_rev: PairId,
    /// The shaper its sender waits for room in: a `ShaperId`, [`NO_CHANNEL`] (not
    /// from a VM) or [`LIVE_CHANNEL`] (the policy chooses afresh each time). Set
    /// when the vswitches start.
    pub chan: u32,
    /// Its queue in the host NIC at its sending end and at its receiving end, where
    /// its ACKs leave (`network.host_nic = "fq"`; 0 otherwise).
    pub nic_q: [u8; 2],
    /// TCP small queues: the limit its sender is held to (`u64::MAX`: none) and the
    /// bytes of its data in its host now, and whether the sender waits for them.
    pub small_queue: SmallQueue,
}

/// A TCP sender's TCP-small-queues state (`transport.limit_output_bytes`): Linux
/// counts a socket's bytes from the moment it queues a packet until the NIC reports
/// it sent (`tcp_small_queue_check`, `tcp_wfree`); here a packet counts until its
/// last bit leaves its host's NIC, as with a NIC that reports completions at once
/// (a driver that coalesces them would hold the bytes longer).
#[derive(Clone, Copy, Debug)]
pub struct SmallQueue {
    /// The most bytes it may hold after a send: the limit plus one full packet
    /// (`u64::MAX`: no limit; see [`TcpConfig::small_queue_limit`]).
    pub limit: u64,
    /// Bytes of its data between the sender and its host NIC's wire.
    pub held: u64,
    /// The sender stopped for lack of room and waits for a release.
    pub waiting: bool,
}

impl SmallQueue {
    /// Whether the flow is limited at all.
    #[inline]
    pub fn on(&self) -> bool {
        self.limit != u64::MAX
    }

    /// Room for more data bytes (`u64::MAX` with no limit).
    #[inline]
    pub fn room(&self) -> u64 {
        self.limit.saturating_sub(self.held)
    }
}

/// A flow whose sender is not in a VM: nothing limits its room.
pub const NO_CHANNEL: u32 = u32::MAX;

/// A flow whose policy may move it between shapers during the run.
pub const LIVE_CHANNEL: u32 = u32::MAX - 1;

impl Flow {
    /// Flow number `index` for `spec`. Its ECMP hash and its on/off periods come from
    /// random streams of its own, so they do not depend on the other flows; its
    /// transport state is made when first needed.
    pub fn new(index: usize, spec: FlowSpec, tcp: &[TcpConfig], seed: u64) -> Self {
        let limit = match &spec.kind {
            FlowKind::Tcp { transport } => tcp[*transport as usize].small_queue_limit(),
            FlowKind::Udp { .. } => u64::MAX,
        };
        let hash = Rng::stream(seed, &format!("flow-hash/{index}")).next_u64() as u32;
        Flow {
            spec,
            hash,
            hash_rev: mix32(hash ^ 0x5bd1_e995),
            end: None,
            delivered: 0,
            ep: None,
            blocked: false,
            pair: NO_PAIR,
            pair_rev: NO_PAIR,
            chan: NO_CHANNEL,
            nic_q: [0, 0],
            small_queue: SmallQueue {
                limit,
                held: 0,
                waiting: false,
            },
        }
    }

    /// Whether the flow is a TCP flow with a size (and so has a completion time).
    pub fn finite(&self) -> bool {
        self.spec.size.is_some() && matches!(self.spec.kind, FlowKind::Tcp { .. })
    }

    /// Flow number `index`'s transport state, made now if it has none yet (`tcp`
    /// the run's TCP configurations, `seed` the scenario's).
    #[inline]
    pub fn ep_mut(&mut self, index: usize, tcp: &[TcpConfig], seed: u64) -> &mut Endpoint {
        Endpoint::made(&mut self.ep, index, &self.spec, tcp, seed)
    }

    /// Whether the flow has nothing more to carry: a TCP flow whose sender has every
    /// byte it will send acknowledged (a sized flow that completed, a long-lived one
    /// stopped and drained). UDP sources are never over before the run ends.
    pub fn over(&self) -> bool {
        match self.ep.as_deref() {
            Some(Endpoint::Tcp { snd, .. }) => snd.done(),
            Some(Endpoint::Udp { .. }) | None => false,
        }
    }
}

/// How many specs [`flows_of`] turns into flows before it gives their room back.
const HANDOVER_BLOCK: usize = 1 << 14;

/// The flows of `specs` (flow `i` is `specs[i]`'s; `tcp` and `seed` as for
/// [`Flow::new`]). The specs' list is used from its end a block at a time and
/// shrunk after each, so the two lists together hold little more than the flows
/// alone: a trace of a million flows would otherwise keep all its specs twice
/// until the last flow is made. (Shrinking a large block hands its tail back to the
/// system with glibc's allocator; another may keep it until the list is dropped.)
pub fn flows_of(mut specs: Vec<FlowSpec>, tcp: &[TcpConfig], seed: u64) -> Vec<Flow> {
    let mut flows = Vec::with_capacity(specs.len());
    while !specs.is_empty() {
        let from = specs.len().saturating_sub(HANDOVER_BLOCK);
        for (i, spec) in specs.drain(from..).enumerate().rev() {
            flows.push(Flow::new(from + i, spec, tcp, seed));
        }
        specs.shrink_to_fit();
    }
    flows.reverse();
    flows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::HostId;

    fn spec(i: u64) -> FlowSpec {
        FlowSpec {
            src: HostId((i % 7) as u32),
            dst: HostId((i % 5) as u32),
            src_vm: None,
            dst_vm: None,
            size: Some(1000 + i),
            start: i * 3,
            stop: None,
            tenant: 0,
            workload: 0,
            dscp: 0,
            pias: None,
            kind: FlowKind::Tcp { transport: 0 },
            after: None,
            signals: None,
        }
    }

    /// Made a block at a time from the end of the list, flow `i` is still the one
    /// `Flow::new` makes for spec `i` (its hash is its number's), with no transport
    /// state until it is first needed, then the state a new sender has.
    #[test]
    fn flows_of_keeps_each_flow_its_number_and_makes_state_late() {
        let n = 2 * HANDOVER_BLOCK + 5;
        let tcp = [TcpConfig::default()];
        let mut flows = flows_of((0..n as u64).map(spec).collect(), &tcp, 9);
        assert_eq!(flows.len(), n);
        for i in [0, 1, HANDOVER_BLOCK - 1, HANDOVER_BLOCK, n - 1] {
            let one = Flow::new(i, spec(i as u64), &tcp, 9);
            assert_eq!(flows[i].spec, one.spec);
            assert_eq!(flows[i].hash, one.hash);
            assert!(flows[i].ep.is_none());
        }
        let Endpoint::Tcp { snd, .. } = flows[3].ep_mut(3, &tcp, 9) else {
            panic!("a TCP flow's state is TCP's");
        };
        assert_eq!(snd.snd_nxt, 0);
        assert!(!flows[3].over() && flows[3].finite());
    }
}
