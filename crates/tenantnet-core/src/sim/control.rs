//! Fabric controllers in the run (`crate::control`): woken when they ask, they read
//! a [`FabricView`] and their actions are validated and applied here. The pyo3
//! binding's mid-run changes go through the same [`Sim::apply`].

use super::{Event, Sim};
use crate::control::{Action, FabricView, TagScope};
use crate::engine::queue::Origin;
use crate::vswitch::HostPolicy;

impl Sim {
    /// Schedules every controller's first wake.
    pub(super) fn start_controllers(&mut self) {
        for i in 0..self.control.len() {
            if let Some(t) = self.control.next_wake(i, self.now) {
                self.schedule(t, Event::Control(i as u32), Origin::GLOBAL);
            }
        }
    }

    /// Controller `i` is woken: its actions are applied in order, then its next
    /// wake is scheduled. An invalid action stops the run with its reason. The wall
    /// time it takes is counted in `control_wall_s`.
    pub(super) fn on_control(&mut self, i: u32) {
        let started = std::time::Instant::now();
        self.control(i);
        self.records.control_wall += started.elapsed().as_secs_f64();
    }

    fn control(&mut self, i: u32) {
        let mut actions = Vec::new();
        self.hosts.sum_vm_rx();
        let view = FabricView {
            now: self.now,
            net: &self.fabric.net,
            vms: &self.hosts.vms,
        };
        let woke = self.control.wake(i as usize, &view, &mut actions);
        if let Err(e) = woke {
            return self.budget.stop(self.now, "controller", e);
        }
        for a in actions {
            if let Err(e) = self.apply(a) {
                let why = format!("a controller asked for an invalid change: {e}");
                return self.budget.stop(self.now, "controller", why);
            }
        }
        if let Some(t) = self.control.next_wake(i as usize, self.now) {
            self.schedule(t, Event::Control(i), Origin::GLOBAL);
        }
    }

    /// What every controller recorded.
    pub(super) fn controller_tables(&self) -> Vec<crate::sim::results::Table> {
        self.control.tables(&self.fabric.net)
    }

    /// Checks action `a` and applies it now (in a parallel run, to the run's view and
    /// to every partition's copy of what it changes; while the partitions are out,
    /// after the window's global step).
    pub fn apply(&mut self, a: Action) -> Result<(), String> {
        let copy = self.parallel.coordinator.then(|| a.clone());
        self.apply_here(a)?;
        match (copy, &self.parallel.par) {
            (Some(a), Some(par)) => par.apply(&a, self.now),
            (Some(a), None) => {
                self.parallel.relay.push(a);
                Ok(())
            }
            (None, _) => Ok(()),
        }
    }

    /// Checks action `a` and applies it now to this copy of the run.
    pub(super) fn apply_here(&mut self, a: Action) -> Result<(), String> {
        match a {
            Action::QueueWeights { port, weights } => {
                let packet = self.ends.tcp[0].packet_size();
                self.fabric.set_weights(port, &weights, packet)
            }
            Action::DscpMap { port, map } => self.fabric.set_dscp_map(port, map),
            Action::TagDscp { scope, dscp } => {
                if let Some(d) = dscp.filter(|&d| d > 63) {
                    return Err(format!("DSCP {d}: expected 0 to 63"));
                }
                let hit = |v: &crate::vswitch::Vm| match scope {
                    TagScope::Host(h) => v.host == h,
                    TagScope::Tenant(t) => v.tenant == t,
                };
                let mut any = false;
                for v in self.hosts.vms.iter_mut().filter(|v| hit(v)) {
                    v.dscp_tag = dscp;
                    any = true;
                }
                any.then_some(()).ok_or_else(|| match scope {
                    TagScope::Host(h) if h.idx() < self.fabric.net.hosts.len() => {
                        format!("host {} has no VMs", self.fabric.net.host_name(h))
                    }
                    TagScope::Host(h) => format!("there is no host {}", h.0),
                    TagScope::Tenant(t) => format!("tenant {t} has no VMs"),
                })
            }
            Action::VmCap { vm, cap_bps } => {
                self.hosts.check_vm(vm)?;
                if cap_bps == Some(0) {
                    return Err("a cap must be a positive rate".into());
                }
                // a VM's shapers work in its host's partition only
                if self.owns_vswitch(self.hosts.vms[vm.idx()].vswitch as usize) {
                    self.hosts.shapers.set_cap(self.now, vm, cap_bps);
                    self.after_hook();
                }
                Ok(())
            }
            Action::VmGuarantee {
                vm,
                guarantee_bps,
                weight,
            } => {
                self.hosts.check_vm(vm)?;
                if guarantee_bps == 0 || weight.is_some_and(|w| !(w.is_finite() && w > 0.0)) {
                    return Err("expected a positive guarantee and weight".into());
                }
                let v = &mut self.hosts.vms[vm.idx()];
                v.guarantee_bps = guarantee_bps;
                v.weight = weight.or(v.weight);
                let k = v.vswitch as usize;
                if self.owns_vswitch(k) {
                    self.with_host(k, |p, ctx| p.guarantee_changed(ctx, vm));
                }
                Ok(())
            }
        }
    }
}
