//! The VM results: `vms` (one row per VM: totals) and `vm_rates` (one row per VM
//! per host tick: measured send rate, the rate the VM's shaper enforces, its
//! guarantee, and every host policy's own columns, e.g. MBFQ's target and RU).

use super::parallel::rows;
use super::results::{Column, Table};
use super::view::RunView;
use crate::engine::to_secs;
use crate::vswitch::policy::{all_columns, Cell, ColumnSpec};
use crate::vswitch::PolicyKind;

/// The per-VM rate record (`vm_rates`): one row per VM per tick.
#[derive(Default)]
pub struct VmRateCols {
    /// Tick time, seconds.
    pub time: Vec<f64>,
    /// VM index.
    pub vm: Vec<u32>,
    /// SR, the send rate over the last interval, bit/s.
    pub sr: Vec<f64>,
    /// The rate the VM's own shaper enforces from this tick (`None`: off).
    pub ar: Vec<Option<f64>>,
    /// The VM's guarantee at this tick, bit/s.
    pub guarantee: Vec<f64>,
    /// NIC utilisation of the VM's host over the last interval.
    pub nic_util: Vec<f64>,
    /// Every policy kind's own columns, in registration order.
    pub specs: Vec<ColumnSpec>,
    /// Index in `specs` of each kind's first column.
    pub first: Vec<usize>,
    /// Their values, one per column.
    pub extra: Vec<PolicyValues>,
}

/// The values of one policy column, typed as its [`ColumnSpec::other`].
#[derive(Clone, Debug)]
pub enum PolicyValues {
    /// Rates, bit/s.
    Rate(Vec<Option<f64>>),
    /// Counts.
    Count(Vec<u64>),
}

impl PolicyValues {
    fn new(kind: Cell) -> Self {
        match kind {
            Cell::Rate(_) => PolicyValues::Rate(Vec::new()),
            Cell::Count(_) => PolicyValues::Count(Vec::new()),
        }
    }

    /// Appends `c`. A cell of the other type (a policy's bug, caught in debug
    /// builds) records nothing useful: none or 0.
    pub(super) fn push(&mut self, c: Cell) {
        match (self, c) {
            (PolicyValues::Rate(v), Cell::Rate(r)) => v.push(r),
            (PolicyValues::Count(v), Cell::Count(n)) => v.push(n),
            (PolicyValues::Rate(v), Cell::Count(_)) => {
                debug_assert!(false, "a count in a rate column");
                v.push(None)
            }
            (PolicyValues::Count(v), Cell::Rate(_)) => {
                debug_assert!(false, "a rate in a count column");
                v.push(0)
            }
        }
    }
}

impl VmRateCols {
    /// An empty record with every policy kind's columns.
    pub fn new() -> Self {
        let (specs, first) = all_columns();
        VmRateCols {
            extra: specs.iter().map(|c| PolicyValues::new(c.other)).collect(),
            specs,
            first,
            ..Default::default()
        }
    }
}

/// A `vm_rates` row's policy cells: the policy's own `cells` in its columns `own`
/// (in order; cells beyond them are dropped rather than spilt into another policy's
/// columns), every other column its [`ColumnSpec::other`].
pub(super) fn row_cells<'a>(
    specs: &'a [ColumnSpec],
    own: std::ops::Range<usize>,
    cells: &'a [Cell],
) -> impl Iterator<Item = Cell> + 'a {
    specs.iter().enumerate().map(move |(c, spec)| {
        let mine = own.contains(&c).then(|| cells.get(c - own.start)).flatten();
        *mine.unwrap_or(&spec.other)
    })
}

fn gbps(bps: &[f64]) -> Column {
    Column::F64(bps.iter().map(|x| x / 1e9).collect())
}

fn opt_gbps(bps: &[Option<f64>]) -> Column {
    Column::OptF64(bps.iter().map(|x| x.map(|v| v / 1e9)).collect())
}

/// A policy's recorded column: rates in Gb/s, counts as they are.
fn policy_column(values: &PolicyValues) -> Column {
    match values {
        PolicyValues::Rate(r) => opt_gbps(r),
        PolicyValues::Count(n) => Column::U64(n.clone()),
    }
}

impl PolicyValues {
    /// Appends row `i` of `from`, a column of the same type.
    fn push_row(&mut self, from: &PolicyValues, i: usize) {
        match (self, from) {
            (PolicyValues::Rate(v), PolicyValues::Rate(f)) => v.push(f[i]),
            (PolicyValues::Count(v), PolicyValues::Count(f)) => v.push(f[i]),
            _ => unreachable!("every record has the same columns"),
        }
    }
}

impl VmRateCols {
    /// The rows of `parts` (the records of a parallel run's partitions, each with
    /// its own hosts' rows) in the sequential run's order: by time, then by host
    /// vswitch (`vswitch_of` a VM), a host's VMs in the order it recorded them.
    pub(super) fn merged(parts: &[&VmRateCols], vswitch_of: impl Fn(u32) -> u32) -> Self {
        let key = |r: &Self| r.vm.iter().map(|&v| vswitch_of(v)).collect();
        let order = rows::order_by(parts, |r| &r.time, key);
        let mut out = VmRateCols::new();
        out.time = rows::gather(parts, &order, |r| &r.time);
        out.vm = rows::gather(parts, &order, |r| &r.vm);
        out.sr = rows::gather(parts, &order, |r| &r.sr);
        out.ar = rows::gather(parts, &order, |r| &r.ar);
        out.guarantee = rows::gather(parts, &order, |r| &r.guarantee);
        out.nic_util = rows::gather(parts, &order, |r| &r.nic_util);
        for (c, col) in out.extra.iter_mut().enumerate() {
            for &(p, i) in &order {
                col.push_row(&parts[p].extra[c], i);
            }
        }
        out
    }
}

impl RunView<'_> {
    pub(super) fn vm_labels(&self) -> Vec<String> {
        self.hosts.vms.iter().map(|v| v.name.clone()).collect()
    }

    /// One row per VM.
    pub(super) fn vms_table(&self) -> Table {
        let vms = &self.hosts.vms;
        let n = vms.len();
        let span = to_secs(self.now).max(1e-30);
        let host_labels = self.host_labels();
        let columns = vec![
            (
                "vm",
                Column::strings(self.vm_labels(), (0..n as u32).collect()),
            ),
            (
                "tenant",
                Column::strings(
                    self.records.meta.tenants.clone(),
                    vms.iter().map(|v| v.tenant).collect(),
                ),
            ),
            (
                "host",
                Column::strings(host_labels, vms.iter().map(|v| v.host.0).collect()),
            ),
            (
                "policy",
                Column::strings(
                    PolicyKind::ALL
                        .iter()
                        .map(|p| p.name().to_string())
                        .collect(),
                    vms.iter()
                        .map(|v| self.hosts.vswitches[v.vswitch as usize].policy.kind() as u32)
                        .collect(),
                ),
            ),
            (
                "guarantee_gbps",
                Column::F64(vms.iter().map(|v| v.guarantee_bps as f64 / 1e9).collect()),
            ),
            (
                "weight",
                Column::OptF64(vms.iter().map(|v| v.weight).collect()),
            ),
            (
                "tx_bytes",
                Column::U64(vms.iter().map(|v| v.tx_bytes).collect()),
            ),
            (
                "mean_gbps",
                Column::F64(
                    vms.iter()
                        .map(|v| v.tx_bytes as f64 * 8.0 / span / 1e9)
                        .collect(),
                ),
            ),
            ("drops", Column::U64(vms.iter().map(|v| v.drops).collect())),
        ];
        Table {
            name: "vms",
            columns,
        }
    }

    /// One row per VM per vswitch tick.
    pub(super) fn vm_rates_table(&self) -> Table {
        let r = &self.hosts.vm_rates;
        let vms = &self.hosts.vms;
        let mut columns = vec![
            ("time_s", Column::F64(r.time.clone())),
            ("vm", Column::strings(self.vm_labels(), r.vm.clone())),
            (
                "tenant",
                Column::strings(
                    self.records.meta.tenants.clone(),
                    r.vm.iter().map(|&v| vms[v as usize].tenant).collect(),
                ),
            ),
            ("send_gbps", gbps(&r.sr)),
            ("allocated_gbps", opt_gbps(&r.ar)),
        ];
        for (spec, cells) in r.specs.iter().zip(&r.extra) {
            columns.push((spec.name, policy_column(cells)));
        }
        columns.push(("guarantee_gbps", gbps(&r.guarantee)));
        columns.push(("nic_utilization", Column::F64(r.nic_util.clone())));
        Table {
            name: "vm_rates",
            columns,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_policys_extra_cells_never_spill_into_another_policys_columns() {
        use super::{row_cells, Cell, ColumnSpec};
        let spec = |name, other| ColumnSpec { name, other };
        let specs = [
            spec("a", Cell::Rate(None)),
            spec("b", Cell::Count(0)),
            spec("c", Cell::Rate(None)),
        ];
        // the policy owning column 1 recorded two cells: the second is dropped
        let cells = [Cell::Count(7), Cell::Rate(Some(5.0))];
        let row: Vec<Cell> = row_cells(&specs, 1..2, &cells).collect();
        assert_eq!(
            row,
            vec![Cell::Rate(None), Cell::Count(7), Cell::Rate(None)]
        );
        // one that recorded too few leaves its other columns at their defaults
        let row: Vec<Cell> = row_cells(&specs, 0..2, &cells[..1]).collect();
        assert_eq!(row, vec![Cell::Count(7), Cell::Count(0), Cell::Rate(None)]);
    }
}
