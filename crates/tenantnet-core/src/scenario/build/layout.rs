//! A scenario's switches as a deployment sees them (`tenantnet deploy sonic`): the
//! `[network]` keys after the host policies' presets, and each switch's ports in
//! link order, named `Ethernet<4·i>` for the switch's i-th link (the breakout
//! numbering of 4-lane ports, as QShare's binding names them), each with the node at
//! the other end and the link's rate. Every switch port has the same configuration
//! (the scenario's `[network]` table), so the keys are given once.

use serde_json::{json, Value};

use super::{fabric, presets, transport, Ctx};
use crate::scenario::parse::{Scenario, ScenarioError};

/// The layout of scenario `sc` as JSON: `{"network": {…}, "packet_bytes",
/// "dscp_to_queue": [64 queues], "switches": [{"name", "ports": [{"port", "peer",
/// "rate_bps"}]}]}`; `packet_bytes` is a full packet on the wire, the unit of sizes
/// given in `pkt`.
pub fn switch_layout(sc: &Scenario, ctx: &Ctx) -> Result<Value, ScenarioError> {
    let network = presets::network(ctx, &sc.network, &sc.vswitch)?;
    let packet = transport::resolve(ctx, &sc.transport, "transport")?.packet_size();
    let dscp: Vec<usize> = (fabric::dscp_map(ctx, &network)?.pairs())
        .map(|(_, q)| q)
        .collect();
    let (builder, _) = super::fabric_file::topology(ctx, &sc.topology)?;
    let nodes: Vec<(&str, bool)> = builder.nodes().collect();
    let mut ports: Vec<Vec<Value>> = vec![Vec::new(); nodes.len()];
    for (a, b, rate) in builder.links() {
        for (from, to) in [(a, b), (b, a)] {
            let list = &mut ports[from.idx()];
            list.push(json!({
                "port": format!("Ethernet{}", 4 * list.len()),
                "peer": nodes[to.idx()].0,
                "rate_bps": rate,
            }));
        }
    }
    let switches: Vec<Value> = (nodes.iter().zip(ports))
        .filter(|((_, host), _)| !host)
        .map(|((name, _), ports)| json!({"name": name, "ports": ports}))
        .collect();
    let network = serde_json::to_value(&network)
        .map_err(|e| ctx.err("network", format!("cannot be written out: {e}")))?;
    Ok(json!({
        "network": network,
        "packet_bytes": packet,
        "dscp_to_queue": dscp,
        "switches": switches,
    }))
}
