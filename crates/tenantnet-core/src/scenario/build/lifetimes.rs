//! Tenants' lifetimes (`[[tenants]] arrive` and `depart`): checked against the run,
//! and every flow of a tenant kept inside its lifetime.
//!
//! Choices (documented in the README): a workload of a tenant may not start before
//! the tenant arrives (an error names it); at its departure the tenant's VMs stop,
//! so its flows stop offering data (a sized flow still in flight stays unfinished)
//! and no flow of it starts from then on, a request–response or closed-loop gate
//! included.

use super::Ctx;
use crate::engine::{to_secs, Time};
use crate::scenario::parse::{join, ScenarioError};
use crate::scenario::tenants::TenantSpec;
use crate::workload::{Exchanges, FlowSpec};

/// A tenant's lifetime: when it arrives and (if it does) departs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lifetime {
    /// Its arrival.
    pub arrive: Time,
    /// Its departure.
    pub depart: Option<Time>,
}

impl Lifetime {
    /// Whether it spans the whole run.
    pub fn always(&self) -> bool {
        self.arrive == 0 && self.depart.is_none()
    }
}

/// Each tenant's lifetime, checked: arrival before the run's end and before the
/// departure, and lifetimes only where QShare's controller embeds tenants over time.
pub fn check(
    ctx: &Ctx,
    tenants: &[TenantSpec],
    duration: Time,
    qshare: bool,
) -> Result<Vec<Lifetime>, ScenarioError> {
    let mut out = Vec::with_capacity(tenants.len());
    for (i, t) in tenants.iter().enumerate() {
        let key = format!("tenants[{i}]");
        let life = Lifetime {
            arrive: t.arrive.0,
            depart: t.depart.map(|d| d.0),
        };
        let k = if t.depart.is_some() {
            "depart"
        } else {
            "arrive"
        };
        if !life.always() && !qshare {
            return Err(ctx.err(
                &join(&key, k),
                "tenants arrive and depart during a run under QShare's controller, which \
                 embeds them in time order: expected a [qshare] table",
            ));
        }
        if life.arrive >= duration {
            return Err(ctx.err(
                &join(&key, "arrive"),
                format!(
                    "expected an arrival before the run ends at {} s",
                    to_secs(duration)
                ),
            ));
        }
        if life.depart.is_some_and(|d| d <= life.arrive) {
            return Err(ctx.err(
                &join(&key, "depart"),
                format!(
                    "expected a departure after the arrival at {} s",
                    to_secs(life.arrive)
                ),
            ));
        }
        out.push(life);
    }
    Ok(out)
}

/// Keeps every flow inside its tenant's lifetime (tenants beyond `lives` were
/// named only by workloads and live throughout): an error names the first
/// workload with a flow that starts before its tenant arrives; flows and gates
/// stop at the departure.
pub fn clip(
    ctx: &Ctx,
    lives: &[Lifetime],
    names: &[String],
    flows: &mut [FlowSpec],
    exchanges: &mut Exchanges,
) -> Result<(), ScenarioError> {
    let life = |t: u32| lives.get(t as usize).filter(|l| !l.always());
    if !lives.iter().any(|l| !l.always()) {
        return Ok(());
    }
    for f in flows.iter_mut() {
        let Some(l) = life(f.tenant) else { continue };
        if f.after.is_none() && f.start < l.arrive {
            return Err(ctx.err(
                &format!("workloads[{}]", f.workload),
                format!(
                    "a flow of tenant {} starts at {} s, before the tenant arrives at {} s: \
                     expected the workload's start at or after the arrival",
                    crate::units::quoted(&names[f.tenant as usize]),
                    to_secs(f.start),
                    to_secs(l.arrive)
                ),
            ));
        }
        if let Some(d) = l.depart {
            f.stop = Some(f.stop.map_or(d, |s| s.min(d)));
        }
    }
    for g in exchanges.gates.iter_mut() {
        let tenant = g.opens.first().map(|&f| flows[f as usize].tenant);
        if let Some(d) = tenant.and_then(life).and_then(|l| l.depart) {
            g.until = Some(g.until.map_or(d, |u| u.min(d)));
        }
    }
    Ok(())
}
