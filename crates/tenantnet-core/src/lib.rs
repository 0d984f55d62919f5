//! # tenantnet-core
//!
//! A deterministic packet-level simulator of multi-tenant datacenter networks.
//! Time is integer picoseconds; entities live in arenas indexed by typed ids; the
//! same scenario and seed always produce the same results.
//!
//! * [`engine`]: time, the event queue, lazy timers, seeded random streams.
//! * [`net`]: packets, ports (queues + link), hosts, switches, ECMP routing, topologies.
//! * [`switch`]: a port's queues, DSCP classification, schedulers, buffer policies
//!   (including BarberQ) and ECN marking.
//! * [`transport`]: TCP NewReno, DCTCP, SACK and RACK-TLP loss recovery, UDP sources.
//! * [`vswitch`]: tenants' VMs in the host's virtual switch: per-VM queues, token
//!   buckets, static reservation and MBFQ.
//! * [`workload`]: flow-size distributions and traffic generators.
//! * [`qshare`]: QShare's controller: placement, queue binding, fluid model.
//! * [`scenario`]: the TOML scenario format, its parser and builder.
//! * [`sim`]: the event loop, the data path, recording and results.
//!
//! ```no_run
//! let mut sim = tenantnet_core::scenario::load_file(std::path::Path::new("scenario.toml")).unwrap();
//! sim.run();
//! let results = sim.results();
//! println!("{}", serde_json::to_string_pretty(&results.summary).unwrap());
//! ```

#![warn(missing_docs)]

pub mod control;
pub mod engine;
mod kinds;
pub mod net;
pub mod packet;
pub mod qshare;
pub mod scenario;
pub mod sim;
pub mod switch;
pub mod table;
pub mod transport;
pub mod units;
pub mod vswitch;
pub mod workload;

/// The tenantnet version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
