//! Host timing: a packet that reaches a host is handed to its stack a random while
//! later (`network.host_jitter`), as a host's NIC and driver hand packets over at
//! their next interrupt or poll rather than as each one arrives; and a packet a host
//! sends reaches its NIC a random while later (`network.tx_jitter`), the driver's
//! doorbell and the NIC's reads of the descriptor and the payload over PCIe.
//!
//! The model, the same both ways: each packet waits a time drawn uniformly from
//! [0, J) (the wait until the next instant the host looks, whose phase is
//! independent of the packet's arrival), from a stream of the run's seed that
//! belongs to that host and direction, and is handed over after the packet ahead of
//! it (the NIC delivers in order, and the driver posts in order), at least a
//! picosecond after: no two of a host's handovers share an instant, whose order the
//! event keys would leave to packet ids, which differ between a run's partitions.
//! On receive the wait is drawn as the packet goes on the wire toward the host and
//! its arrival is put that much later (a link keeps its order, so the draws follow
//! the arrivals); on transmit the packet joins its NIC's queue at that time, by an
//! event of its own (`Handoff`) or, where nothing could tell the difference, at once
//! with the NIC's clock set to it (`sim/handoff.rs`). A random wait at the sender is
//! how simulators have long broken phase effects (ns-2's TCP agents' `overhead_`,
//! after Floyd and Jacobson, "On traffic phase effects in packet-switched gateways",
//! 1992).
//!
//! J on receive is the host's receive-interrupt moderation period: Linux's mlx5
//! driver defaults to 16 µs from the interrupt event and 3 µs where the timer
//! restarts on each completion, which the devices that can do it do by default
//! (`MLX5E_PARAMS_DEFAULT_RX_CQ_MODERATION_USEC`, `..._USEC_FROM_CQE` in
//! `drivers/net/ethernet/mellanox/mlx5/core/en.h`). J on transmit is of the order of
//! a PCIe round trip, most of a small packet's time through a NIC (Neugebauer
//! et al., "Understanding PCIe performance for end host networking", SIGCOMM 2018):
//! about a microsecond. Where hosts and links run at the same rate, identical
//! senders otherwise act at the same picosecond round after round and a tail-drop
//! queue shuts the same one out each time (phase lock), which real hosts do not
//! sustain.
//!
//! Left out: the batching itself (packets arriving within one period reach the
//! stack together), CPU scheduling delays, and a NIC's reads made ahead while it
//! sends (a packet that finds its NIC busy still waits its own draw).

use crate::engine::wait::Wait;
use crate::engine::Time;

/// Each of `hosts` hosts' waits below `max` picoseconds, from stream `key/H` of
/// `seed` (`network.host_jitter` on receive, `network.tx_jitter` on transmit);
/// none when `max` is 0.
pub fn host_waits(key: &str, max: Time, hosts: usize, seed: u64) -> Vec<Wait> {
    if max == 0 {
        return Vec::new();
    }
    (0..hosts)
        .map(|h| Wait::new(seed, &format!("{key}/{h}"), max))
        .collect()
}
