//! QShare's control plane (Liu et al.; ../shared/papers/qshare.txt §3–§5, §7.3):
//! hose-model tenant placement, dynamic binding of tenants to a switch port's WFQ
//! queues, and a tenant-level fluid model for large-scale evaluation. Independent
//! of the packet simulator.
//!
//! * [`dc`]: the datacenter inventory (servers, switches by layer, links, queues).
//! * [`hose`]: the hose model's link reservations.
//! * [`ksp`]: Yen's k shortest paths, for TR options in random topologies.
//! * [`place`]: Algorithm 1 (balanced placement) and a greedy baseline.
//! * [`binding`]: U-factor, score, Algorithm 2, queue weights, DSCP values.
//! * [`switch_ports`]: a binding as each switch port's DSCP map and weights.
//! * [`fluid`]: the §7.3.2 fluid model (weighted max-min gains, utilisation).
//! * [`experiment`]: the §7.3 experiments (Table 1, Fig. 10).

pub mod binding;
pub mod dc;
pub mod experiment;
pub mod fluid;
pub mod hose;
pub mod ksp;
pub mod place;
pub mod switch_ports;

pub use dc::Datacenter;
pub use hose::Hose;
pub use place::{LogOp, Placer, Request, Strategy};
