//! Topology builders. Each takes its scenario table and returns the wired
//! [`NetworkBuilder`](super::NetworkBuilder) plus a one-line description. Every host
//! and switch gets a stable name, documented on each builder, that scenarios use to
//! pick hosts and results use to label rows.

pub mod dumbbell;
pub mod fat_tree;
pub mod graph;
pub mod jellyfish;
pub mod leaf_spine;
pub mod star;

pub use dumbbell::Dumbbell;
pub use fat_tree::FatTree;
pub use graph::{Graph, GraphLink};
pub use jellyfish::Jellyfish;
pub use leaf_spine::LeafSpine;
pub use star::Star;

use crate::units::{Rate, TimeSpan};

/// Default link rate: 10 Gb/s.
pub fn default_rate() -> Rate {
    Rate(10_000_000_000)
}

/// Default per-link propagation delay: 1 µs.
pub fn default_delay() -> TimeSpan {
    TimeSpan(1_000_000)
}

/// A topology parameter that is out of range: (parameter, message).
pub type SpecError = (std::borrow::Cow<'static, str>, String);

/// Most hosts a topology may have.
pub const MAX_HOSTS: u64 = 1 << 20;

/// Fails if `a` switches of `b` hosts each (each a parameter's name and value) make
/// more than [`MAX_HOSTS`] hosts, naming the larger of the two, which the user is
/// likelier to have set too high, with the product.
pub fn check_product(a: (&'static str, u64), b: (&'static str, u64)) -> Result<(), SpecError> {
    let hosts = a.1.saturating_mul(b.1);
    if hosts > MAX_HOSTS {
        let big = if a.1 >= b.1 { a } else { b };
        return Err((
            big.0.into(),
            format!(
                "{} hosts ({} {} x {} {}); expected at most {MAX_HOSTS}",
                hosts, a.1, a.0, b.1, b.0
            ),
        ));
    }
    Ok(())
}

/// Fails with a message naming `param` if `hosts` exceeds [`MAX_HOSTS`].
pub fn check_hosts(param: &'static str, hosts: u64) -> Result<(), SpecError> {
    if hosts > MAX_HOSTS {
        return Err((
            param.into(),
            format!("{hosts} hosts; expected at most {MAX_HOSTS}"),
        ));
    }
    Ok(())
}
