//! The scenario's scheduled VM guarantee changes (`[[tenants.vms.changes]]`) as a
//! controller: woken at each change's time, it asks for the changes due.

use super::{Action, Controller, FabricView};
use crate::engine::Time;
use crate::vswitch::VmChange;

/// Guarantee changes in time order, and how many were applied.
#[derive(Clone, Debug, Default)]
pub struct ScheduledChanges {
    changes: Vec<VmChange>,
    next: usize,
}

impl ScheduledChanges {
    /// The controller for `changes` (any order; applied in time order, ties in
    /// the order given).
    pub fn new(mut changes: Vec<VmChange>) -> Self {
        changes.sort_by_key(|c| c.at);
        ScheduledChanges { changes, next: 0 }
    }

    /// The run's controllers for a scenario's `changes`: this one, if there are any.
    pub fn controllers(changes: Vec<VmChange>) -> Vec<super::Controllers> {
        if changes.is_empty() {
            return Vec::new();
        }
        vec![super::Controllers::Scheduled(ScheduledChanges::new(
            changes,
        ))]
    }
}

impl Controller for ScheduledChanges {
    fn next_wake(&self, _now: Time) -> Option<Time> {
        self.changes.get(self.next).map(|c| c.at)
    }

    fn wake(&mut self, view: &FabricView, actions: &mut Vec<Action>) -> Result<(), String> {
        while let Some(c) = self.changes.get(self.next) {
            if c.at > view.now {
                break;
            }
            self.next += 1;
            actions.push(Action::VmGuarantee {
                vm: c.vm,
                guarantee_bps: c.guarantee_bps,
                weight: c.weight,
            });
        }
        Ok(())
    }
}
