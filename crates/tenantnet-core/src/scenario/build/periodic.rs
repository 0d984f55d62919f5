//! The tables and timers a run keeps every so often beyond the sampling and the
//! hosts' tick, for the estimate of its memory and events: the vswitch CPU model's
//! records (`vm_cpu`, `pmd` per tick, `nic_monitor` per reading) and its C2TB
//! managers' calls, QShare's decisions and the rows they add (`qshare_tenants`,
//! `qshare_queues`). Bytes per row: the columns at the `vm_rates` row's cost per
//! column (about 40 bytes, `sim/footprint.rs`), rounded up.

use crate::net::Network;
use crate::scenario::estimate::Periodic;
use crate::scenario::parse::Scenario;
use crate::vswitch::VswitchParams;

/// Bytes per column of a recorded row.
const PER_COLUMN: f64 = 40.0;

/// Every periodic record and timer of the run `sc` builds on `net`.
pub fn records(sc: &Scenario, net: &Network, vs: &VswitchParams, tenants: usize) -> Vec<Periodic> {
    let mut out = Vec::new();
    if let Some(cpu) = vs.cpu.as_ref() {
        let hosts = vs.hosts.len() as f64;
        let cores = hosts * cpu.params.cores as f64;
        let tick = |what, rows: f64, columns: f64| Periodic {
            key: vs.tick_key.clone(),
            what,
            period: vs.tick,
            rows,
            row_bytes: columns * PER_COLUMN,
            events: 0.0,
        };
        out.push(tick("vm_cpu rows", vs.vms.len() as f64, 9.0));
        out.push(tick("pmd rows", cores, 6.0));
        if let Some(c) = cpu.params.c2tb.as_ref() {
            out.push(Periodic {
                key: "vswitch.cpu.c2tb.interval".into(),
                what: "C2TB manager calls",
                period: c.interval,
                rows: 0.0,
                row_bytes: 0.0,
                events: cores,
            });
        }
        if let Some(h) = cpu.params.nic_handler.as_ref() {
            out.push(Periodic {
                key: "vswitch.cpu.nic_handler.monitor".into(),
                what: "nic_monitor rows",
                period: h.monitor,
                rows: hosts,
                row_bytes: 4.0 * PER_COLUMN,
                events: hosts,
            });
        }
    }
    if let Some(q) = sc.qshare.as_ref() {
        // each decision: a row per tenant, and at most every switch port's queues
        let queues: usize = (net.ports.iter())
            .filter(|p| net.is_switch(p.node()))
            .map(|p| p.queue_count())
            .sum();
        out.push(Periodic {
            key: "qshare.interval".into(),
            what: "QShare decision rows",
            period: q.interval.0,
            rows: tenants as f64 + queues as f64,
            row_bytes: 6.0 * PER_COLUMN,
            events: 1.0 + queues as f64 / 8.0,
        });
    }
    out
}
