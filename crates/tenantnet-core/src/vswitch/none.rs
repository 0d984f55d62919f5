//! No enforcement: every VM's packets pass its shaper, whose bucket stays off, so
//! VMs share the NIC as their transports do. The baseline of every paper here.

use super::policy::{ColumnSpec, HostPolicy};
use crate::net::VmId;

/// The `none` policy: every hook is the interface's default.
#[derive(Clone, Debug, Default)]
pub struct NoEnforcement;

impl NoEnforcement {
    /// It records nothing of its own.
    pub const COLUMNS: &'static [ColumnSpec] = &[];

    /// The policy for a host.
    pub fn new(_: &(), _vms: &[VmId]) -> Self {
        NoEnforcement
    }
}

impl HostPolicy for NoEnforcement {}
