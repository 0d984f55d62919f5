//! Prefetching on large fabrics: before an event is handled, the processor is asked
//! to start loading what the next events read ([`crate::engine::prefetch`]), where
//! the ports outgrow the caches (`Fabric::prefetch`, set by the fabric's size).
//! The events are read here, in the loop's layer; the fabric only loads its ports
//! and packets.

use super::parts::Fabric;
use super::Event;
use crate::engine::queue::EventQueue;

/// Hints the processor to load what the next event reads first (a transmission's
/// end: its port; a packet reaching a switch: the port it is routed to) and the
/// packets of the events likely soon after it (the top's children in the current
/// bucket's heap). Out of line, so that runs without the hints pay only the test of
/// the flag.
#[inline(never)]
pub(super) fn near(events: &EventQueue, fabric: &Fabric) {
    let mut near = events.peek_near();
    match near.next().and_then(Event::decode) {
        Some(Event::Arrive(id)) => fabric.prefetch_route(id),
        Some(Event::TxDone(port)) => fabric.prefetch_port(port),
        _ => {}
    }
    for soon in near {
        if let Some(Event::Arrive(id)) = Event::decode(soon) {
            fabric.prefetch_packet(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Sim;
    // up the layers: the run is built from a scenario, as a user's run is
    use crate::scenario::{load, Format, LoadOptions};
    use std::path::Path;

    /// A k = 4 fat-tree (its ports fit any cache, so no hints unless forced) with
    /// losses, ECN marks and partitioned ties.
    const MIXED: &str = r#"
        [simulation]
        duration = "3ms"
        seed = 4
        ties = "partitioned"
        [topology]
        kind = "fat_tree"
        k = 4
        [network]
        buffer = "60KB"
        ecn_threshold = "20pkt"
        [transport]
        protocol = "dctcp"
        [[workloads]]
        kind = "poisson"
        load = 0.7
        cdf = "websearch"
        stop = "2ms"
        [[workloads]]
        kind = "incast"
        receiver = "h0"
        size = "100KB"
    "#;

    fn sim(threads: usize, hints: bool) -> Sim {
        let mut s = load(
            MIXED,
            "t.toml",
            Path::new("."),
            Format::Toml,
            &LoadOptions::default(),
        )
        .expect("valid scenario");
        s.set_threads(threads, true);
        s.fabric.prefetch = hints;
        s
    }

    #[test]
    fn hints_change_no_result() {
        let mut plain = sim(1, false);
        assert!(
            !plain.fabric.prefetch,
            "a k = 4 fat-tree is below the threshold"
        );
        plain.run();
        let plain = plain.results();
        assert!(plain.summary.ecn_marks > 0 && plain.summary.packets_dropped > 0);
        // on, alone and on two threads (each partition's events hint its own state)
        for threads in [1, 2] {
            let mut hinted = sim(threads, true);
            hinted.run();
            let hinted = hinted.results();
            assert_eq!(plain.tables, hinted.tables, "{threads} threads");
            assert_eq!(plain.summary.events, hinted.summary.events);
            assert_eq!(plain.summary.ecn_marks, hinted.summary.ecn_marks);
        }
    }
}
