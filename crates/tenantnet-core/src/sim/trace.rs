//! A run's flows as a trace (`tenantnet flows`): the rows a `trace` workload reads
//! (`scenario/build/flows/trace.rs`), so that replaying them gives the same flows,
//! in the same order, with the same transports, tenants, VMs and DSCP.
//!
//! What a trace cannot say is refused with the flow and the reason: a flow that
//! waits for a gate (request–response, closed loops), UDP, PIAS tagging, a transport
//! that differs from the scenario's in more than its protocol, and a tenant's traffic
//! to a host of other tenants' VMs.

use super::results::Table;
use super::view::RunView;
use crate::engine::to_secs;
use crate::table::Column;
use crate::transport::CongestionControl;
use crate::workload::FlowKind;

/// The congestion controls a trace's `protocol` column names, in their codes' order.
const CCS: [CongestionControl; 3] = [
    CongestionControl::NewReno,
    CongestionControl::Dctcp,
    CongestionControl::Cubic,
];

impl RunView<'_> {
    /// The `trace` table: a row per flow, in flow order, with the columns a `trace`
    /// workload reads (`id`, `start`, `stop` in seconds, `src`, `dst`, `size` in bytes,
    /// `tenant`, `dscp`, `protocol`: the congestion control's name, `newreno`,
    /// `dctcp` or `cubic`), or why the flows cannot be one.
    pub fn trace_table(&self) -> Result<Table, String> {
        let fl = &self.ends.flows;
        let base = &self.ends.tcp[0];
        let mut names: Vec<String> = Vec::new();
        let mut index = std::collections::HashMap::new();
        let mut code = |s: String| -> u32 {
            *index.entry(s.clone()).or_insert_with(|| {
                names.push(s);
                names.len() as u32 - 1
            })
        };
        let (mut src, mut dst, mut protocol) = (vec![], vec![], vec![]);
        for (i, f) in fl.iter().enumerate() {
            let s = &f.spec;
            let why = |w: &str| format!("flow {i} (workload {}): {w}", s.workload);
            if s.after.is_some() || s.signals.is_some() {
                return Err(why("it waits for a gate of a request–response or closed-loop workload, which a trace cannot express"));
            }
            if s.pias.is_some() {
                return Err(why("it is tagged by PIAS, which a trace cannot express (give pias on the trace workload instead)"));
            }
            let FlowKind::Tcp { transport } = s.kind else {
                return Err(why("it is UDP; a trace's flows are TCP"));
            };
            let cfg = &self.ends.tcp[transport as usize];
            let mut same = cfg.clone();
            same.cc = base.cc;
            if same != *base {
                return Err(why("its workload's transport differs from the scenario's in more than its protocol, which a trace cannot express"));
            }
            // the congestion control by name: `tcp` means CUBIC under the `linux`
            // profile and NewReno under `htsim`, so it would not say which ran
            protocol.push(CCS.iter().position(|&c| c == cfg.cc).unwrap_or(0) as u32);
            src.push(code(
                self.end_name(s.src, s.src_vm, s.tenant)
                    .map_err(|e| why(&e))?,
            ));
            dst.push(code(
                self.end_name(s.dst, s.dst_vm, s.tenant)
                    .map_err(|e| why(&e))?,
            ));
        }
        let secs = |t: u64| to_secs(t);
        let tenants = self.records.meta.tenants.clone();
        let columns = vec![
            ("id", Column::U64((0..fl.len() as u64).collect())),
            (
                "start",
                Column::F64(fl.iter().map(|f| secs(f.spec.start)).collect()),
            ),
            ("src", Column::strings(names.clone(), src)),
            ("dst", Column::strings(names, dst)),
            (
                "size",
                Column::OptU64(fl.iter().map(|f| f.spec.size).collect()),
            ),
            (
                "stop",
                Column::OptF64(fl.iter().map(|f| f.spec.stop.map(secs)).collect()),
            ),
            (
                "tenant",
                Column::strings(tenants, fl.iter().map(|f| f.spec.tenant).collect()),
            ),
            (
                "dscp",
                Column::U64(fl.iter().map(|f| f.spec.dscp as u64).collect()),
            ),
            (
                "protocol",
                Column::strings(CCS.iter().map(|c| c.name().into()).collect(), protocol),
            ),
        ];
        Ok(Table {
            name: "trace",
            columns,
        })
    }

    /// How a trace names an end on `host` (of VM `vm`) of tenant `tenant`'s flow: the
    /// host's name where that resolves to the same end (no VM, or the tenant's first
    /// VM there), else the VM's name.
    fn end_name(
        &self,
        host: crate::net::HostId,
        vm: Option<crate::net::VmId>,
        tenant: u32,
    ) -> Result<String, String> {
        let vms = &self.hosts.vms;
        let host_name = self.fabric.net.host_name(host).to_string();
        let first_there = vms
            .iter()
            .position(|v| v.tenant == tenant && v.host == host);
        match vm {
            None if vms.iter().any(|v| v.host == host) => Err(format!(
                "it ends on host {host_name}, which has other tenants' VMs but none of tenant {:?}: a trace names a VM there",
                self.records.meta.tenants[tenant as usize]
            )),
            None => Ok(host_name),
            Some(v) if first_there == Some(v.idx()) => Ok(host_name),
            Some(v) => Ok(vms[v.idx()].name.clone()),
        }
    }
}
