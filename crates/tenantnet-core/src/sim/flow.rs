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

/// Transport state of a flow. Kept inline rather than boxed: the TCP state is
/// touched on every packet and flows are few next to packets.
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
    /// Transport state.
    pub ep: Endpoint,
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
    /// random streams of its own, so they do not depend on the other flows.
    pub fn new(index: usize, spec: FlowSpec, tcp: &[TcpConfig], seed: u64) -> Self {
        let ep = match &spec.kind {
            FlowKind::Tcp { transport } => Endpoint::Tcp {
                snd: TcpSender::new(&tcp[*transport as usize], spec.size.unwrap_or(u64::MAX)),
                rcv: if tcp[*transport as usize].recovery.uses_sack() {
                    TcpReceiver::with_sack()
                } else {
                    TcpReceiver::new()
                }
                .with_quick_acks(tcp[*transport as usize].quick_acks),
            },
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
        };
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
            ep,
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
        self.spec.size.is_some() && matches!(self.ep, Endpoint::Tcp { .. })
    }

    /// Whether the flow has nothing more to carry: a TCP flow whose sender has every
    /// byte it will send acknowledged (a sized flow that completed, a long-lived one
    /// stopped and drained). UDP sources are never over before the run ends.
    pub fn over(&self) -> bool {
        match &self.ep {
            Endpoint::Tcp { snd, .. } => snd.done(),
            Endpoint::Udp { .. } => false,
        }
    }
}
