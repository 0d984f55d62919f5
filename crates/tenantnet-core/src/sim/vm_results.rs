//! The VM results: `vms` (one row per VM: totals) and `vm_rates` (one row per VM
//! per host tick: measured send rate, the rate the VM's shaper enforces, its
//! guarantee, and every host policy's own columns, e.g. MBFQ's target and RU).

use super::datapath::PolicyValues;
use super::results::{Column, Table};
use super::Sim;
use crate::engine::to_secs;
use crate::vswitch::PolicyKind;

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

impl Sim {
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
