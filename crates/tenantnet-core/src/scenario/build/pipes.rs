//! From `[[tenants.pipes]]` to pipe-model guarantees between VMs, with the checks
//! that make them enforceable: both ends are VMs of the tenant on different hosts,
//! each pipe is given once, and the pipes leaving (or entering) a host fit its NIC.

use super::tenants::show;
use super::Ctx;
use crate::net::{HostId, Network, VmId};
use crate::scenario::parse::{join, ScenarioError};
use crate::scenario::tenants::TenantSpec;
use crate::vswitch::{Pipe, Vm};

/// The VM among `mine` called `name` (`key` names the field for errors).
fn named(
    ctx: &Ctx,
    vms: &[Vm],
    mine: &[VmId],
    name: &str,
    key: &str,
) -> Result<VmId, ScenarioError> {
    if let Some(v) = mine.iter().find(|v| vms[v.idx()].name == name) {
        return Ok(*v);
    }
    let names: Vec<&str> = mine.iter().map(|v| vms[v.idx()].name.as_str()).collect();
    Err(ctx.err(
        key,
        format!(
            "no VM {} in this tenant; expected one of {}",
            crate::units::quoted(name),
            names.join(", ")
        ),
    ))
}

/// Every tenant's pipes, checked. `vms_of[i]`: tenant `i`'s VMs.
pub fn pipes(
    ctx: &Ctx,
    net: &Network,
    tenants: &[TenantSpec],
    vms: &[Vm],
    vms_of: &[Vec<VmId>],
) -> Result<Vec<Pipe>, ScenarioError> {
    let mut out: Vec<Pipe> = Vec::new();
    let mut sent = vec![0u64; net.hosts.len()];
    let mut received = vec![0u64; net.hosts.len()];
    for (ti, t) in tenants.iter().enumerate() {
        for (j, p) in t.pipes.iter().enumerate() {
            let pk = format!("tenants[{ti}].pipes[{j}]");
            let src = named(ctx, vms, &vms_of[ti], &p.src, &join(&pk, "src"))?;
            let dst = named(ctx, vms, &vms_of[ti], &p.dst, &join(&pk, "dst"))?;
            let (hs, hd) = (vms[src.idx()].host, vms[dst.idx()].host);
            if hs == hd {
                return Err(ctx.err(
                    &join(&pk, "dst"),
                    format!(
                        "{} and {} are both on host {}; a pipe guarantees a path across the fabric, so expected VMs on different hosts",
                        crate::units::quoted(&p.src),
                        crate::units::quoted(&p.dst),
                        net.host_name(hs)
                    ),
                ));
            }
            if out.iter().any(|q| q.src == src && q.dst == dst) {
                return Err(ctx.err(
                    &pk,
                    format!(
                        "the pipe {} → {} is given twice",
                        crate::units::quoted(&p.src),
                        crate::units::quoted(&p.dst)
                    ),
                ));
            }
            let (g, gk) = (p.guarantee.0, join(&pk, "guarantee"));
            fits(ctx, net, (&mut sent, hs), g, (&gk, "leaving"))?;
            fits(ctx, net, (&mut received, hd), g, (&gk, "entering"))?;
            out.push(Pipe {
                src,
                dst,
                guarantee_bps: g,
            });
        }
    }
    Ok(out)
}

/// Adds `g` to host `h`'s total of pipes in one direction; fails if the total
/// exceeds its NIC rate.
fn fits(
    ctx: &Ctx,
    net: &Network,
    (total, h): (&mut [u64], HostId),
    g: u64,
    (key, way): (&str, &str),
) -> Result<(), ScenarioError> {
    total[h.idx()] += g;
    let nic = net.host_rate(h);
    if total[h.idx()] <= nic {
        return Ok(());
    }
    Err(ctx.err(
        key,
        format!(
            "the pipes {way} host {} would be guaranteed {} in all, more than its NIC rate ({})",
            net.host_name(h),
            show(total[h.idx()]),
            show(nic)
        ),
    ))
}
