//! `tenants_file`: the tenants' VMs from a file (CSV or Parquet, read by the caller
//! with Arrow, [`crate::scenario::Inputs`]), a row per VM: `tenant`, `host`, and
//! optionally `vm` (its name, `<tenant>/<host>` when empty) and `guarantee` (a rate;
//! the tenant's hose guarantee from `[[tenants]]` when empty). The rows become VMs
//! of `[[tenants]]` (a tenant the file names and `[[tenants]]` does not is added, in
//! the file's order), checked here with errors that name the file, the row and the
//! column.

use std::collections::HashSet;

use super::Ctx;
use crate::net::Network;
use crate::scenario::inputs::{rate, Cell, InputTable};
use crate::scenario::parse::{Scenario, ScenarioError};
use crate::scenario::tenants::{TenantSpec, VmSpec};
use crate::units::Rate;

/// `sc` with the VMs of its `tenants_file` added to its tenants (`sc` itself when
/// it names no file).
pub fn expand(ctx: &Ctx, sc: &Scenario, net: &Network) -> Result<Option<Scenario>, ScenarioError> {
    let Some(file) = &sc.tenants_file else {
        return Ok(None);
    };
    let t = ctx.inputs.get(file).ok_or_else(|| {
        ctx.err("tenants_file", "the file was not read: it is read by the Python package (with Arrow); run this scenario with `tenantnet run` or tenantnet.run")
    })?;
    let whose = format!("tenants_file of {}", ctx.file);
    for need in ["tenant", "host"] {
        if t.column(need).is_none() {
            let msg = format!("no column {need:?}; expected tenant, host and optionally vm and guarantee; it has {} ({whose})", t.names().join(", "));
            return Err(ScenarioError::at(&t.path, "", None, msg));
        }
    }
    let mut out = sc.clone();
    let hosts: HashSet<&str> = (0..net.hosts.len())
        .map(|h| net.host_name(crate::net::HostId(h as u32)))
        .collect();
    let mut names: HashSet<String> = HashSet::new();
    for row in 0..t.rows {
        let get = |c: &str| {
            t.column(c)
                .map_or(Cell::Missing, |col| InputTable::cell(col, row))
        };
        let bad = |c: &str, m: &str| t.err(row, c, get(c), m, &whose);
        let text = |c: &str| match get(c) {
            Cell::Text(s) if !s.is_empty() => Ok(Some(s.to_string())),
            Cell::Missing => Ok(None),
            _ => Err(bad(c, "expected a name")),
        };
        let tenant = text("tenant")?.ok_or_else(|| bad("tenant", "expected a tenant's name"))?;
        let host = text("host")?.ok_or_else(|| bad("host", "expected a host's name"))?;
        if !hosts.contains(host.as_str()) {
            return Err(bad("host", "names no host of the topology"));
        }
        let vm = text("vm")?.unwrap_or_else(|| format!("{tenant}/{host}"));
        if !names.insert(vm.clone()) {
            return Err(bad("vm", &format!("a second VM named {vm:?}; expected unique names (give a vm column for two VMs of a tenant on one host)")));
        }
        let guarantee = match rate(get("guarantee")).map_err(|e| bad("guarantee", &e))? {
            Some(0) => return Err(bad("guarantee", "expected a positive rate")),
            g => g.map(Rate),
        };
        let i = match out.tenants.iter().position(|x| x.name == tenant) {
            Some(i) => i,
            None => {
                out.tenants.push(named(&tenant));
                out.tenants.len() - 1
            }
        };
        let mut v = VmSpec::on(vm, &host);
        v.guarantee = guarantee;
        out.tenants[i].vms.push(v);
    }
    Ok(Some(out))
}

/// A tenant with a name only, everything else as `[[tenants]]` defaults it.
fn named(name: &str) -> TenantSpec {
    let mut t = toml::Table::new();
    t.insert("name".into(), toml::Value::String(name.into()));
    toml::Value::Table(t)
        .try_into()
        .expect("a tenant needs only its name")
}
