//! The parts of a multi-queue switch port: the queues themselves, DSCP
//! classification, the schedulers that pick which queue sends next, the buffer
//! policies that decide which packets are admitted (or evicted), and ECN marking.
//! A [`Port`](port::Port) composes one of each; every scheme and baseline that acts
//! in the switch is one implementation of one of these.

pub mod buffer;
pub mod classify;
pub mod ecn;
pub mod fifo;
pub mod port;
pub mod queues;
pub mod sched;

pub use classify::DscpMap;
pub use fifo::OneQueue;
pub use queues::{QueueSet, QueueStats, QueueStore};
