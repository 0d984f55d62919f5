//! The `trace` workload: a flow per row of a file of flow records, read by the
//! caller ([`crate::scenario::Inputs`]). Every value is checked here, against the
//! network and the tenants: an error names the file, the row and the column.
//!
//! A row's `src` and `dst` are host names, or VM names of the row's tenant. A host
//! name stands for the tenant's first VM on that host; a host without VMs is itself
//! (traffic to or from outside the tenants); a host of other tenants' VMs only is an
//! error. Rows are flows in the order of their `id`s, or of the file;
//! the run orders them by start time itself.

use std::collections::HashMap;

use super::Gen;
use crate::engine::Time;
use crate::net::HostId;
use crate::scenario::build::Ctx;
use crate::scenario::inputs::{bytes, seconds, Cell, InputTable};
use crate::scenario::parse::ScenarioError;
use crate::scenario::spec::Protocol;
use crate::scenario::workloads::Trace;
use crate::table::Column;
use crate::units::MAX_DURATION;
use crate::workload::{FlowKind, TrafficEnd};

/// The columns a trace must have.
pub const REQUIRED: [&str; 4] = ["start", "src", "dst", "size"];
/// The columns it may have besides.
pub const OPTIONAL: [&str; 5] = ["stop", "tenant", "dscp", "protocol", "id"];

/// A trace's table and where its errors point.
struct Rows<'a> {
    t: &'a InputTable,
    whose: String,
}

impl Rows<'_> {
    fn col(&self, name: &str) -> Option<&Column> {
        self.t.column(name)
    }

    fn err(&self, row: usize, col: &str, message: &str) -> ScenarioError {
        let cell = self
            .col(col)
            .map_or(Cell::Missing, |c| InputTable::cell(c, row));
        self.t.err(row, col, cell, message, &self.whose)
    }

    fn get(&self, col: &str, row: usize) -> Cell<'_> {
        self.col(col)
            .map_or(Cell::Missing, |c| InputTable::cell(c, row))
    }

    /// The text of `col` at `row`, which must have one.
    fn text(&self, col: &str, row: usize) -> Result<&str, ScenarioError> {
        match self.get(col, row) {
            Cell::Text(s) => Ok(s),
            Cell::Missing => Err(self.err(row, col, "expected a value")),
            Cell::Num(_) => Err(self.err(row, col, "expected a name")),
        }
    }
}

impl<'a> Gen<'a, '_> {
    pub(super) fn trace(&mut self, w: &Trace) -> Result<(), ScenarioError> {
        let rows = self.trace_rows(w)?;
        for (name, x) in [("time_scale", w.time_scale), ("load_scale", w.load_scale)] {
            if !(x.is_finite() && x > 0.0) {
                return Err(self.err(name, "expected a positive number"));
            }
        }
        self.count(rows.t.rows as u64, "file")?;
        let order = self.row_order(&rows)?;
        let mut ends = EndCache::default();
        for row in order {
            let tenant = self.row_tenant(&rows, row)?;
            let src = ends.resolve(self, &rows, row, "src", tenant)?;
            let dst = ends.resolve(self, &rows, row, "dst", tenant)?;
            if src.host == dst.host {
                return Err(rows.err(row, "dst", "expected a host apart from src's"));
            }
            let at = |col: &str| -> Result<Option<Time>, ScenarioError> {
                let t = seconds(rows.get(col, row)).map_err(|e| rows.err(row, col, &e))?;
                t.map(|t| shifted(t, w).ok_or_else(|| rows.err(row, col, LONG)))
                    .transpose()
            };
            let start = at("start")?.ok_or_else(|| rows.err(row, "start", "expected a time"))?;
            let stop = at("stop")?;
            if stop.is_some_and(|s| s <= start) {
                return Err(rows.err(row, "stop", "expected a stop time after start"));
            }
            let pkt = self.c.tcp.mss as u64;
            let size = bytes(rows.get("size", row), pkt).map_err(|e| rows.err(row, "size", &e))?;
            let size = size.map(|b| ((b as f64 * w.load_scale).round() as u64).max(1));
            let kind = self.row_kind(&rows, row)?;
            let dscp = self.row_dscp(&rows, row)?;
            self.push_as((src, dst), (size, start, stop), kind, (tenant, dscp));
        }
        Ok(())
    }

    /// The table the caller read for `w`, with the columns a trace needs.
    fn trace_rows(&self, w: &Trace) -> Result<Rows<'a>, ScenarioError> {
        let c: &'a super::WorkloadCtx<'a> = self.c;
        let t = c.ctx.inputs.get(&w.file).ok_or_else(|| {
            self.err(
                "file",
                "the trace was not read: trace files are read by the Python package (with Arrow); run this scenario with `tenantnet run` or tenantnet.run",
            )
        })?;
        let whose = format!("{} of {}", self.k("file"), self.c.ctx.file);
        let rows = Rows { t, whose };
        let names = t.names();
        if let Some(missing) = REQUIRED.iter().find(|c| !names.contains(c)) {
            return Err(ScenarioError::at(
                &t.path,
                "",
                None,
                format!(
                    "no column {missing:?}; a trace needs columns {} (and may have {}); it has {} ({})",
                    REQUIRED.join(", "),
                    OPTIONAL.join(", "),
                    names.join(", "),
                    rows.whose
                ),
            ));
        }
        Ok(rows)
    }

    /// The rows in flow order: by `id` where the file has ids (each a distinct whole
    /// number), else as the file has them.
    fn row_order(&self, rows: &Rows) -> Result<Vec<usize>, ScenarioError> {
        let n = rows.t.rows;
        let Some(col) = rows.col("id") else {
            return Ok((0..n).collect());
        };
        let mut ids = Vec::with_capacity(n);
        for row in 0..n {
            match InputTable::cell(col, row) {
                Cell::Num(x) if x >= 0.0 && x.fract() == 0.0 && x < 2f64.powi(53) => {
                    ids.push((x as u64, row))
                }
                _ => return Err(rows.err(row, "id", "expected a whole number of at least 0")),
            }
        }
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0].0 == w[1].0) {
            let first = w[0].1.min(w[1].1) + 1;
            return Err(rows.err(
                w[0].1.max(w[1].1),
                "id",
                &format!("the same id as row {first}; expected distinct ids"),
            ));
        }
        Ok(ids.into_iter().map(|(_, row)| row).collect())
    }

    /// The tenant of `row`: its `tenant` column, or the workload's.
    fn row_tenant(&self, rows: &Rows, row: usize) -> Result<u32, ScenarioError> {
        let name = match rows.get("tenant", row) {
            Cell::Missing => return Ok(self.c.tenant),
            _ => rows.text("tenant", row)?,
        };
        match self.c.tenants.iter().position(|t| t == name) {
            Some(i) => Ok(i as u32),
            None => Err(rows.err(
                row,
                "tenant",
                &format!(
                    "names no tenant of [[tenants]]; expected one of {}",
                    self.c.tenants.join(", ")
                ),
            )),
        }
    }

    /// The DSCP of `row`: its `dscp` column, or the workload's.
    fn row_dscp(&self, rows: &Rows, row: usize) -> Result<u8, ScenarioError> {
        match rows.get("dscp", row) {
            Cell::Missing => Ok(self.c.dscp[self.made.len() % self.c.dscp.len()]),
            Cell::Num(x) if (0.0..=63.0).contains(&x) && x.fract() == 0.0 => Ok(x as u8),
            _ => Err(rows.err(row, "dscp", "expected a DSCP value in 0..=63")),
        }
    }

    /// The transport of `row`: its `protocol` column, or the workload's.
    fn row_kind(&self, rows: &Rows, row: usize) -> Result<FlowKind, ScenarioError> {
        let transport = match rows.get("protocol", row) {
            Cell::Missing => self.c.transport,
            _ => {
                let p = rows.text("protocol", row)?;
                match self.c.protocols.iter().find(|(name, _)| name == p) {
                    Some(&(_, t)) => t,
                    None => {
                        return Err(rows.err(row, "protocol", "expected \"tcp\", \"newreno\", \"dctcp\" or \"cubic\" (a trace's flows are TCP; give UDP traffic as cbr or on_off workloads)"))
                    }
                }
            }
        };
        Ok(FlowKind::Tcp { transport })
    }
}

const LONG: &str = "later than 1000000s, the longest time tenantnet simulates";

/// `t` stretched by the workload's `time_scale` and shifted by its `start`, if
/// within the longest time simulated.
fn shifted(t: Time, w: &Trace) -> Option<Time> {
    let t = match w.time_scale {
        1.0 => t,
        s => (t as f64 * s).round() as Time,
    };
    t.checked_add(w.start.0).filter(|&t| t <= MAX_DURATION)
}

/// Each name's endpoint for each tenant, resolved once: a VM name of the tenant, or a
/// host's name, which stands for the tenant's first VM on that host; a host without
/// VMs is itself (a sink outside the tenants, as a generator's plain host), and a host
/// of another tenant's VMs only is an error.
#[derive(Default)]
pub(super) struct EndCache {
    hosts: Option<HashMap<String, HostId>>,
    ends: HashMap<(u32, String), TrafficEnd>,
}

impl EndCache {
    /// The end `name` names for `tenant`, or what is wrong with it.
    pub(super) fn end(&mut self, g: &Gen, name: &str, tenant: u32) -> Result<TrafficEnd, String> {
        if let Some(e) = self.ends.get(&(tenant, name.to_string())) {
            return Ok(*e);
        }
        let net = g.c.net;
        let hosts = self.hosts.get_or_insert_with(|| {
            (0..net.hosts.len())
                .map(|h| {
                    (
                        net.host_name(HostId(h as u32)).to_string(),
                        HostId(h as u32),
                    )
                })
                .collect()
        });
        let mine =
            g.c.vms_of
                .get(tenant as usize)
                .map_or(&[][..], |v| v.as_slice());
        let vms = g.c.vms;
        let by_name = mine.iter().find(|v| vms[v.idx()].name == name);
        let host = hosts.get(name).copied();
        let on_host = || mine.iter().find(|v| Some(vms[v.idx()].host) == host);
        let end = match (by_name.or_else(on_host), host) {
            (Some(&v), _) => TrafficEnd {
                host: vms[v.idx()].host,
                vm: Some(v),
            },
            // a host of another tenant's VMs
            (None, Some(h)) if vms.iter().any(|v| v.host == h) => {
                let tname = &g.c.tenants[tenant as usize];
                return Err(format!(
                    "is a host of another tenant's VMs, where tenant {tname:?} has none"
                ));
            }
            // a host without VMs (a sink outside the tenants)
            (None, Some(h)) => TrafficEnd { host: h, vm: None },
            (None, None) if mine.is_empty() => return Err("names no host of the topology".into()),
            (None, None) => {
                let tname = &g.c.tenants[tenant as usize];
                return Err(format!(
                    "names no host of the topology and no VM of tenant {tname:?}"
                ));
            }
        };
        self.ends.insert((tenant, name.to_string()), end);
        Ok(end)
    }

    /// The end `col` of `row` names for `tenant`.
    fn resolve(
        &mut self,
        g: &Gen,
        rows: &Rows,
        row: usize,
        col: &str,
        tenant: u32,
    ) -> Result<TrafficEnd, ScenarioError> {
        let name = rows.text(col, row)?;
        self.end(g, name, tenant)
            .map_err(|e| rows.err(row, col, &e))
    }
}

/// The transport of each protocol the rows of trace `w` name, from `resolve` (the
/// workload's transport with that protocol); a protocol that is not `tcp`,
/// `newreno`, `dctcp` or `cubic` is refused at its first row. Empty when the file has no `protocol`
/// column or was not read.
pub fn protocols(
    ctx: &Ctx,
    w: &Trace,
    resolve: &mut dyn FnMut(Protocol) -> Result<u32, ScenarioError>,
) -> Result<Vec<(String, u32)>, ScenarioError> {
    let Some(t) = ctx.inputs.get(&w.file) else {
        return Ok(Vec::new());
    };
    let Some(Column::Str { codes, labels }) = t.column("protocol") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (i, label) in labels.iter().enumerate() {
        let p = match label.as_str() {
            "tcp" => Protocol::Tcp,
            "newreno" => Protocol::Newreno,
            "dctcp" => Protocol::Dctcp,
            "cubic" => Protocol::Cubic,
            _ => continue, // refused at its row, with the row's number
        };
        if codes.contains(&(i as u32)) {
            out.push((label.clone(), resolve(p)?));
        }
    }
    Ok(out)
}
