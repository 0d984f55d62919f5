//! The fabric-controller interface: a controller is woken when it asks to be
//! (every control interval, or at scheduled instants), reads the fabric through a
//! read-only [`FabricView`], and acts through [`Action`]s that the simulation
//! validates and applies. QShare's controller (issue 16) and the scenario's
//! scheduled VM guarantee changes ([`scheduled::ScheduledChanges`], the first
//! controller) are implementations.
//!
//! Adding a controller: a file with a struct implementing [`Controller`], plus its
//! line in the `controllers!` registration below.

pub mod qshare;
mod qshare_records;
pub mod scheduled;

use crate::engine::Time;
use crate::net::{HostId, Network, PortId, VmId};
use crate::switch::DscpMap;
use crate::table::Table;
use crate::vswitch::Vm;
use qshare::QShare;
use scheduled::ScheduledChanges;

/// What a controller may read: per port and queue, bytes sent, drops and ECN
/// marks (through `net.ports[p].queue_stats(q)`, `queue_tx_bytes(q)`, `stats()`),
/// and per VM the bytes sent and received (`vms[v].tx_bytes`, `rx_bytes`).
pub struct FabricView<'a> {
    /// Now.
    pub now: Time,
    /// The network and its ports' counters.
    pub net: &'a Network,
    /// Every VM and its counters.
    pub vms: &'a [Vm],
}

/// Which packets a DSCP tag applies to at their sending host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagScope {
    /// Every VM on this host.
    Host(HostId),
    /// Every VM of this tenant.
    Tenant(u32),
}

/// One change a controller asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// A switch port's queue weights (scheduler weights and the buffer and marking
    /// shares derived from them), one per queue, each at least 1.
    QueueWeights {
        /// The port.
        port: PortId,
        /// Its weights.
        weights: Vec<u32>,
    },
    /// A switch port's DSCP → queue map.
    DscpMap {
        /// The port.
        port: PortId,
        /// The map (every queue must exist at the port).
        map: DscpMap,
    },
    /// The DSCP every packet of these VMs leaves with (`None`: their own again).
    TagDscp {
        /// Whose packets.
        scope: TagScope,
        /// The code point, 0–63.
        dscp: Option<u8>,
    },
    /// A ceiling on a VM's sending rate, enforced by its shapers whatever its host
    /// policy sets (`None`: lifted).
    VmCap {
        /// The VM.
        vm: VmId,
        /// The ceiling, bit/s (positive).
        cap_bps: Option<u64>,
    },
    /// A VM's guarantee (and weight, where weights are explicit) changes; its host
    /// policy hears of it.
    VmGuarantee {
        /// The VM.
        vm: VmId,
        /// The new guarantee, bit/s (positive).
        guarantee_bps: u64,
        /// The new weight.
        weight: Option<f64>,
    },
}

/// A fabric controller.
pub trait Controller {
    /// When it wants to be woken next (after `now`), if ever.
    fn next_wake(&self, now: Time) -> Option<Time>;

    /// Woken: reads the view and pushes actions, applied in order right after.
    /// An error (the controller found its own state broken) stops the run with it.
    fn wake(&mut self, view: &FabricView, actions: &mut Vec<Action>) -> Result<(), String>;

    /// What it recorded, as results tables (named after the controller).
    fn tables(&self, _net: &Network) -> Vec<Table> {
        Vec::new()
    }
}

/// Declares the controllers, one line each: `Variant(Type)`.
macro_rules! controllers {
    ($($(#[$doc:meta])* $v:ident($t:ty);)*) => {
        /// A run's controller, dispatched statically.
        pub enum Controllers {
            $($(#[$doc])* $v($t),)*
        }

        impl Controller for Controllers {
            fn next_wake(&self, now: Time) -> Option<Time> {
                match self { $(Controllers::$v(c) => c.next_wake(now),)* }
            }
            fn wake(&mut self, view: &FabricView, actions: &mut Vec<Action>) -> Result<(), String> {
                match self { $(Controllers::$v(c) => c.wake(view, actions),)* }
            }
            fn tables(&self, net: &Network) -> Vec<Table> {
                match self { $(Controllers::$v(c) => c.tables(net),)* }
            }
        }
    };
}

controllers! {
    /// The scenario's scheduled VM guarantee changes.
    Scheduled(ScheduledChanges);
    /// QShare's dynamic tenant–queue binding (`[qshare]`).
    QShare(Box<QShare>);
}
