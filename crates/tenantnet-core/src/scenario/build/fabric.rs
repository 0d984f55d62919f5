//! From `[network]` to the configuration of every port: buffers, queues,
//! scheduler, buffer policy, ECN and DSCP classification, with the checks that
//! tie those keys together.

use super::Ctx;
use crate::net::port::{EcnConfig, EcnMarkPoint, PortConfig, QueueConfig};
use crate::net::{FabricConfig, Network};
use crate::scenario::parse::join;
use crate::scenario::parse::ScenarioError;
use crate::scenario::spec::{DscpMapSpec, NetworkSpec, TransportProfile};
use crate::switch::buffer::{BufferParams, BufferPolicy, BufferPolicyKind};
use crate::switch::ecn::EcnScope;
use crate::switch::sched::SchedulerKind;
use crate::switch::DscpMap;
use crate::units::ByteSize;

/// Most queues a switch port may have.
pub const MAX_QUEUES: u32 = 32;

/// The largest `network.clock_ppm`: a clock 0.1 % off is a fault, not a tolerance.
pub const MAX_CLOCK_PPM: u32 = 1000;

/// Resolves `[network]` for full-size packets of `pkt` bytes. Whether packets fit
/// the buffers is checked by the caller against every transport
/// (`super::transport::fits`), which knows which key to blame. `profile` is the
/// scenario's transport profile, whose clocks and transmit wait stand where
/// `network.clock_ppm` and `network.tx_jitter` are absent.
pub fn fabric(
    ctx: &Ctx,
    nw: &NetworkSpec,
    pkt: u64,
    profile: TransportProfile,
) -> Result<FabricConfig, ScenarioError> {
    let buffer = nw.buffer.0.bytes(pkt);
    let host_buffer = nw.host_buffer.map_or(buffer, |b| b.0.bytes(pkt));
    let queues = queue_config(ctx, nw, pkt)?;
    let params = BufferParams {
        dt_alpha: nw.dt_alpha,
    };
    let policy = BufferPolicy::configure(nw.buffer_policy, &params)
        .map_err(|(k, m)| ctx.err(&join("network", k), m))?;
    if let Err(m) = policy.check_weights(&queues.weights, buffer, pkt) {
        return Err(ctx.err("network.buffer", m));
    }
    let pool_size = nw.pool.map(|p| p.0.bytes(pkt));
    if pool_size.is_some_and(|p| p < pkt) {
        return Err(ctx.err("network.pool", "smaller than one full-size packet"));
    }
    let clock_ppm = nw.clock_ppm.unwrap_or(profile.clock_ppm());
    if clock_ppm > MAX_CLOCK_PPM {
        return Err(ctx.err(
            "network.clock_ppm",
            format!(
                "{clock_ppm} ppm: expected at most {MAX_CLOCK_PPM} (IEEE 802.3 allows transmitters ±100)"
            ),
        ));
    }
    let dscp_map = dscp_map(ctx, nw)?;
    let ecn = ecn_config(nw, pkt);
    if let Some(k) = ecn.threshold {
        ecn_reachable(ctx, nw, k, (buffer, host_buffer, pool_size))?;
    }
    let host_ecn = EcnConfig {
        threshold: if nw.host_ecn { ecn.threshold } else { None },
        at: ecn.at,
        scope: EcnScope::Port,
    };
    Ok(FabricConfig {
        host_port: PortConfig {
            queues: nw.host_nic.queues(pkt, &queues),
            ..PortConfig::fifo(host_buffer, host_ecn)
        },
        switch_port: PortConfig {
            buffer,
            ecn,
            queues,
            policy,
        },
        dscp_map,
        pool_size,
        host_nic: nw.host_nic,
        host_jitter: nw.host_jitter.map_or(0, |t| t.0),
        tx_jitter: nw.tx_jitter.map_or(profile.tx_jitter(), |t| t.0),
        clock_ppm,
        ack_path: nw.ack_path,
    })
}

/// Switch ports' queues: how many, their weights, the scheduler and its quantum.
fn queue_config(ctx: &Ctx, nw: &NetworkSpec, pkt: u64) -> Result<QueueConfig, ScenarioError> {
    let n = nw.queues;
    if !(1..=MAX_QUEUES).contains(&n) {
        return Err(ctx.err(
            "network.queues",
            format!("expected 1 to {MAX_QUEUES} queues per port"),
        ));
    }
    let weights = nw.weights.clone().unwrap_or_else(|| vec![1; n as usize]);
    if weights.len() != n as usize || weights.contains(&0) {
        return Err(ctx.err(
            "network.weights",
            format!("expected {n} weights, each at least 1"),
        ));
    }
    let scheduler = nw.scheduler;
    if scheduler == SchedulerKind::SpDwrr && !(1..n).contains(&nw.strict_queues) {
        return Err(ctx.err(
            "network.strict_queues",
            format!("expected 1 to {} strict queues below the DWRR group", n - 1),
        ));
    }
    let quantum = match nw.quantum {
        None => pkt,
        Some(s) => match s.0 {
            ByteSize::Bytes(0) => {
                return Err(ctx.err("network.quantum", "expected a positive size"))
            }
            other => other.bytes(pkt),
        },
    };
    Ok(QueueConfig {
        weights,
        scheduler,
        quantum,
        strict: nw.strict_queues as usize,
    })
}

/// Every switch port's DSCP → queue map.
pub(crate) fn dscp_map(ctx: &Ctx, nw: &NetworkSpec) -> Result<DscpMap, ScenarioError> {
    let n = nw.queues;
    Ok(match &nw.dscp_map {
        DscpMapSpec::Zero => DscpMap::default(),
        DscpMapSpec::Identity => DscpMap::identity(n as usize),
        DscpMapSpec::Pairs(p) => {
            if let Some((d, q)) = p.iter().find(|(_, q)| *q >= n) {
                return Err(ctx.err(
                    "network.dscp_map",
                    format!(
                        "DSCP {d} maps to queue {q}, but ports have queues 0..{}",
                        n - 1
                    ),
                ));
            }
            DscpMap::from_pairs(
                &p.iter()
                    .map(|&(d, q)| (d as u8, q as u8))
                    .collect::<Vec<_>>(),
            )
        }
    })
}

/// Switch ports' ECN marking: threshold, instant and scope.
fn ecn_config(nw: &NetworkSpec, pkt: u64) -> EcnConfig {
    let (at, scope) = (nw.ecn_mark, nw.ecn_scope);
    EcnConfig {
        threshold: nw.ecn_threshold.map(|k| k.0.bytes(pkt)),
        at,
        scope,
    }
}

/// A threshold K that no occupancy can exceed marks nothing: refuse it rather than
/// run a scenario whose ECN is silently off. A port holds at most its buffer (a
/// shared pool's port at most the pool).
fn ecn_reachable(
    ctx: &Ctx,
    nw: &NetworkSpec,
    k: u64,
    (buffer, host_buffer, pool): (u64, u64, Option<u64>),
) -> Result<(), ScenarioError> {
    let (cap, what) = match (nw.buffer_policy, pool) {
        (BufferPolicyKind::DynamicThreshold, Some(p)) => (p, "network.pool"),
        // a default pool is the buffer times the switch's ports: any K may be reachable
        (BufferPolicyKind::DynamicThreshold, None) => (u64::MAX, ""),
        _ => (buffer, "network.buffer"),
    };
    if k >= cap {
        return Err(ctx.err(
            "network.ecn_threshold",
            format!(
                "K = {k} bytes is not below {what} ({cap} bytes): no switch port could ever exceed it, so nothing would be marked; expected a threshold below the buffer"
            ),
        ));
    }
    if nw.host_ecn && k >= host_buffer {
        return Err(ctx.err(
            "network.ecn_threshold",
            format!(
                "K = {k} bytes is not below network.host_buffer ({host_buffer} bytes): host NICs would never mark; expected a threshold below it, or host_ecn = false"
            ),
        ));
    }
    Ok(())
}

/// `ecn_mark = "end"` marks a packet while it travels to the next node, so every
/// link needs a delay: over a zero-delay link it would arrive before its end.
pub fn marks_in_flight(ctx: &Ctx, nw: &NetworkSpec, net: &Network) -> Result<(), ScenarioError> {
    if nw.ecn_mark != EcnMarkPoint::End || nw.ecn_threshold.is_none() {
        return Ok(());
    }
    match net.ports.iter().position(|p| p.delay() == 0) {
        None => Ok(()),
        Some(i) => Err(ctx.err(
            "network.ecn_mark",
            format!(
                "\"end\" marks a packet as its last bit leaves, while it travels on, but the link {} has no delay; expected links with a positive delay, or ecn_mark = \"dequeue\"",
                net.port_name(crate::net::PortId(i as u32))
            ),
        )),
    }
}
