//! Fabric controllers in the run (`crate::control`): woken when they ask, they read
//! a [`FabricView`] and their actions are validated and applied here. The pyo3
//! binding's mid-run changes go through the same [`Sim::apply`].

use super::{Event, Sim};
use crate::control::{Action, FabricView};
use crate::engine::queue::Origin;
use crate::vswitch::HostPolicy;

impl Sim {
    /// Controller `i` is woken: its actions are applied in order, then its next
    /// wake is scheduled. An invalid action stops the run with its reason. The wall
    /// time it takes is counted in `control_wall_s`.
    pub(super) fn on_control(&mut self, i: u32) {
        let started = std::time::Instant::now();
        let mut actions = Vec::new();
        self.hosts.sum_vm_rx();
        let view = FabricView {
            now: self.now,
            net: &self.fabric.net,
            vms: &self.hosts.vms,
        };
        let woke = self.control.wake(i as usize, &view, &mut actions);
        let applied = woke.and_then(|()| {
            let invalid = |e| format!("a controller asked for an invalid change: {e}");
            actions
                .into_iter()
                .try_for_each(|a| self.apply(a).map_err(invalid))
        });
        match applied {
            Err(e) => self.budget.stop(self.now, "controller", e),
            Ok(()) => {
                if let Some(t) = self.control.next_wake(i as usize, self.now) {
                    self.schedule(t, Event::Control(i), Origin::GLOBAL);
                }
            }
        }
        self.records.control_wall += started.elapsed().as_secs_f64();
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
            Action::TagDscp { scope, dscp } => self.hosts.tag_dscp(scope, dscp, &self.fabric.net),
            Action::VmCap { vm, cap_bps } => {
                self.hosts.check_vm(vm)?;
                if cap_bps == Some(0) {
                    return Err("a cap must be a positive rate".into());
                }
                // a VM's shapers work in its host's partition only
                if self
                    .parallel
                    .owns_vswitch(self.hosts.vms[vm.idx()].vswitch as usize)
                {
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
                let k = self.hosts.set_guarantee(vm, guarantee_bps, weight)?;
                if self.parallel.owns_vswitch(k) {
                    self.with_host(k, |p, ctx| p.guarantee_changed(ctx, vm));
                }
                Ok(())
            }
        }
    }
}
