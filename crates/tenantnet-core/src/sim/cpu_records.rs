//! The CPU model's records: each host tick's `vm_cpu` and `pmd` rows, the NIC
//! monitor's `nic_monitor` rows, and the summary's totals; a parallel run's view of
//! its partitions' CPU models.

use super::cpu::CpuState;
use super::parallel::rows;
use super::results::{Column, Table};
use super::view::RunView;
use crate::engine::{to_secs, Time};
use crate::vswitch::c2qos::pmd::{Pmd, Sched};

/// Per host tick, per VM: `vm_cpu` rows.
#[derive(Clone, Debug, Default)]
pub(super) struct VmCpuCols {
    pub(super) time: Vec<f64>,
    pub(super) vm: Vec<u32>,
    pub(super) cycles: Vec<u64>,
    pub(super) share: Vec<f64>,
    pub(super) packets: Vec<u64>,
    pub(super) policed: Vec<u64>,
    pub(super) tokens: Vec<Option<f64>>,
    pub(super) class: Vec<Option<u64>>,
}

/// Per host tick, per core: `pmd` rows.
#[derive(Clone, Debug, Default)]
pub(super) struct PmdCols {
    pub(super) time: Vec<f64>,
    pub(super) host: Vec<u32>,
    pub(super) core: Vec<u64>,
    pub(super) busy: Vec<f64>,
    pub(super) rx: Vec<f64>,
    pub(super) poll: Vec<f64>,
    pub(super) idle: Vec<f64>,
}

/// A core's counters at the last tick.
#[derive(Clone, Debug, Default)]
pub(super) struct AtTick {
    pub(super) used: u64,
    pub(super) rx: u64,
    pub(super) poll: u64,
    pub(super) idle: u64,
    pub(super) vm_cycles: Vec<u64>,
    pub(super) vm_packets: Vec<u64>,
}

/// Per NIC monitor reading: `nic_monitor` rows.
#[derive(Clone, Debug, Default)]
pub(super) struct NicCols {
    pub(super) time: Vec<f64>,
    pub(super) host: Vec<u32>,
    pub(super) gbps: Vec<f64>,
    pub(super) policing: Vec<u64>,
}

/// Each named column of the partitions' records `parts`, in `order`.
macro_rules! gather_columns {
    ($parts:expr, $order:expr; $($col:ident),*) => {
        Self { $($col: rows::gather($parts, $order, |r| &r.$col),)* }
    };
}

impl VmCpuCols {
    /// A parallel run's rows (`parts`, each partition's) in the sequential run's
    /// order: by time, then by the VM's host vswitch (`vswitch_of`).
    fn merged(parts: &[&Self], vswitch_of: impl Fn(u32) -> u32) -> Self {
        let key = |r: &Self| r.vm.iter().map(|&v| vswitch_of(v)).collect();
        let order = &rows::order_by(parts, |r| &r.time, key);
        gather_columns!(parts, order; time, vm, cycles, share, packets, policed, tokens, class)
    }
}

impl PmdCols {
    /// A parallel run's rows in the sequential run's order: by time, then host.
    fn merged(parts: &[&Self]) -> Self {
        let order = &rows::order_by(parts, |r| &r.time, |r| r.host.clone());
        gather_columns!(parts, order; time, host, core, busy, rx, poll, idle)
    }
}

impl NicCols {
    /// A parallel run's rows in the sequential run's order: by time, then host.
    fn merged(parts: &[&Self]) -> Self {
        let order = &rows::order_by(parts, |r| &r.time, |r| r.host.clone());
        gather_columns!(parts, order; time, host, gbps, policing)
    }
}

impl CpuState {
    /// A partition's copy of the CPU model (before its first event): all of it, its
    /// records empty.
    pub(super) fn fork(&self) -> Self {
        let mut c = self.clone();
        (c.vm_cols, c.pmd_cols, c.nic_cols) = Default::default();
        c
    }

    /// The run's view of its partitions' CPU models (`parts`): each core, VM ring,
    /// VM cost and NIC monitor from the partition of its host vswitch (`owner`, by
    /// vswitch; `vms`' vswitches), the drops summed, the records merged.
    pub(super) fn absorb(
        &mut self,
        parts: &[&CpuState],
        owner: &[usize],
        vms: &[crate::vswitch::Vm],
    ) {
        for c in 0..self.cores.len() {
            let o = owner[self.cores[c].host as usize];
            self.cores[c].clone_from(&parts[o].cores[c]);
            self.at_tick[c].clone_from(&parts[o].at_tick[c]);
        }
        for (v, vm) in vms.iter().enumerate() {
            let o = owner[vm.vswitch as usize];
            self.vm[v].clone_from(&parts[o].vm[v]);
            self.rings[v].clone_from(&parts[o].rings[v]);
        }
        for k in 0..self.monitors.len() {
            self.monitors[k].clone_from(&parts[owner[k]].monitors[k]);
        }
        self.rx_dropped = parts.iter().map(|p| p.rx_dropped).sum();
        let vswitch_of = |v: u32| vms[v as usize].vswitch;
        let cols: Vec<_> = parts.iter().map(|p| &p.vm_cols).collect();
        self.vm_cols = VmCpuCols::merged(&cols, vswitch_of);
        let cols: Vec<_> = parts.iter().map(|p| &p.pmd_cols).collect();
        self.pmd_cols = PmdCols::merged(&cols);
        let cols: Vec<_> = parts.iter().map(|p| &p.nic_cols).collect();
        self.nic_cols = NicCols::merged(&cols);
    }
}

impl CpuState {
    /// The rows of `vm_cpu` and `pmd` for the interval `iv` that ends at `now`, of
    /// the cores of the host vswitches that run here (`owns`).
    pub(super) fn record_tick(&mut self, now: Time, iv: Time, owns: impl Fn(usize) -> bool) {
        let cpu = self;
        let (hz, t) = (cpu.p.hz, to_secs(now));
        let span = (iv as u128 * hz as u128 / crate::units::PS_PER_SEC as u128).max(1) as f64;
        for (c, core) in cpu.cores.iter_mut().enumerate() {
            if !owns(core.host as usize) {
                continue;
            }
            if !core.busy() {
                core.wake(now, hz);
            }
            let last = &mut cpu.at_tick[c];
            for (slot, v) in core.vms.iter().enumerate() {
                let cyc = core.vm_cycles[slot] - last.vm_cycles[slot];
                let r = &mut cpu.vm_cols;
                r.time.push(t);
                r.vm.push(v.0);
                r.cycles.push(cyc);
                r.share.push(cyc as f64 / span);
                r.packets
                    .push(core.vm_packets[slot] - last.vm_packets[slot]);
                let vc = &mut cpu.vm[v.idx()];
                r.policed.push(vc.policed - vc.policed_at_tick);
                vc.policed_at_tick = vc.policed;
                r.tokens
                    .push(core.c2tb.as_ref().map(|b| b.buckets[slot].tokens as f64));
                r.class.push(match &core.sched {
                    Sched::Hbs(h) => Some(h.class_of(slot) as u64),
                    Sched::RoundRobin { .. } => None,
                });
            }
            let used = core.used();
            let r = &mut cpu.pmd_cols;
            r.time.push(t);
            r.host.push(core.host);
            r.core.push(c as u64);
            r.busy.push((used - last.used) as f64 / span);
            r.rx.push((core.rx_cycles - last.rx) as f64 / span);
            r.poll.push((core.poll - last.poll) as f64 / span);
            r.idle.push((core.idle - last.idle) as f64 / span);
            *last = AtTick {
                used,
                rx: core.rx_cycles,
                poll: core.poll,
                idle: core.idle,
                vm_cycles: core.vm_cycles.clone(),
                vm_packets: core.vm_packets.clone(),
            };
        }
    }
}

impl RunView<'_> {
    /// The `vm_cpu` and `pmd` tables, when the CPU model is on.
    pub(super) fn cpu_tables(&self) -> Vec<Table> {
        let Some(cpu) = self.hosts.cpu.as_ref() else {
            return Vec::new();
        };
        let (r, q) = (&cpu.vm_cols, &cpu.pmd_cols);
        let hosts = self.host_labels();
        let labels: Vec<String> = (self.hosts.vswitches.iter())
            .map(|h| hosts[h.host.idx()].clone())
            .collect();
        let n = &cpu.nic_cols;
        let nic = (!cpu.monitors.is_empty()).then(|| Table {
            name: "nic_monitor",
            columns: vec![
                ("time_s", Column::F64(n.time.clone())),
                ("host", Column::strings(labels.clone(), n.host.clone())),
                ("nic_gbps", Column::F64(n.gbps.clone())),
                ("policing", Column::U64(n.policing.clone())),
            ],
        });
        let mut tables = vec![
            Table {
                name: "vm_cpu",
                columns: vec![
                    ("time_s", Column::F64(r.time.clone())),
                    ("vm", Column::strings(self.vm_labels(), r.vm.clone())),
                    ("cycles", Column::U64(r.cycles.clone())),
                    ("cpu_share", Column::F64(r.share.clone())),
                    ("packets", Column::U64(r.packets.clone())),
                    ("policed", Column::U64(r.policed.clone())),
                    ("tokens", Column::OptF64(r.tokens.clone())),
                    ("class", Column::OptU64(r.class.clone())),
                ],
            },
            Table {
                name: "pmd",
                columns: vec![
                    ("time_s", Column::F64(q.time.clone())),
                    ("host", Column::strings(labels, q.host.clone())),
                    ("core", Column::U64(q.core.clone())),
                    ("busy", Column::F64(q.busy.clone())),
                    ("rx", Column::F64(q.rx.clone())),
                    ("poll", Column::F64(q.poll.clone())),
                    ("idle", Column::F64(q.idle.clone())),
                ],
            },
        ];
        tables.extend(nic);
        tables
    }

    /// The CPU model's totals for the summary.
    pub(super) fn cpu_summary(&self) -> Option<super::results::CpuSummary> {
        let cpu = self.hosts.cpu.as_ref()?;
        let sum = |f: &dyn Fn(&Pmd) -> u64| cpu.cores.iter().map(f).sum::<u64>();
        Some(super::results::CpuSummary {
            cores: cpu.cores.len(),
            cycles_forwarding: sum(&|c| c.used()),
            cycles_rx: sum(&|c| c.rx_cycles),
            packets_rx: sum(&|c| c.rx_packets),
            packets_rx_dropped: cpu.rx_dropped,
            cycles_empty_polls: sum(&|c| c.poll),
            cycles_idle: sum(&|c| c.idle),
            cycles_clock: sum(&|c| c.clock),
            packets_policed: cpu.vm.iter().map(|v| v.policed).sum(),
            c2tb_throttled: cpu.cores.iter().any(|c| c.c2tb.is_some()).then(|| {
                let throttled = |c: &Pmd| c.c2tb.as_ref().map_or(0, |b| b.throttled);
                cpu.cores.iter().map(throttled).sum()
            }),
            cycle_conservation_ok: cpu.conserved(),
        })
    }
}
