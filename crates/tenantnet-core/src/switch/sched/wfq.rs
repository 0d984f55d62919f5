//! Weighted fair queueing with virtual start and finish tags, in the self-clocked
//! form (SCFQ, Golestani, INFOCOM 1994) that a switch can compute without
//! emulating the fluid GPS server: a packet of size L arriving at queue i gets start
//! tag S = max(V, F_i) and finish tag F = S + L/w_i, where F_i is the finish tag of
//! the queue's previous packet and V, the virtual time, is the finish tag of the
//! packet last selected. The head packet with the smallest finish tag goes next
//! (ties to the lower queue). Tags are fixed point: L·2^20/w_i.

use std::collections::VecDeque;

use super::{SchedParams, SchedulerRule};
use crate::switch::queues::QueueStore;

const SCALE: u64 = 1 << 20;

/// WFQ state.
#[derive(Clone, Debug)]
pub struct Wfq {
    weights: Vec<u32>,
    vtime: u64,
    last_finish: Vec<u64>,
    tags: Vec<VecDeque<u64>>,
}

impl SchedulerRule for Wfq {
    /// WFQ over the port's queues.
    fn configure(p: &SchedParams<'_>) -> Self {
        Wfq {
            weights: p.weights.to_vec(),
            vtime: 0,
            last_finish: vec![0; p.weights.len()],
            tags: vec![VecDeque::new(); p.weights.len()],
        }
    }

    /// New weights; packets already queued keep their tags.
    fn set_weights(&mut self, weights: &[u32]) {
        self.weights.copy_from_slice(weights);
    }

    /// Tags a packet of `size` bytes joining queue `i`.
    #[inline]
    fn enqueued(&mut self, i: usize, size: u32) {
        let start = self.vtime.max(self.last_finish[i]);
        let finish = start + size as u64 * SCALE / self.weights[i] as u64;
        self.last_finish[i] = finish;
        self.tags[i].push_back(finish);
    }

    /// The queue whose head has the smallest finish tag.
    #[inline]
    fn select<Q: QueueStore>(&mut self, qs: &Q) -> Option<usize> {
        let mut mask = qs.nonempty_mask();
        let mut best: Option<(u64, usize)> = None;
        while mask != 0 {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let f = self.tags[i][0];
            if best.is_none_or(|(bf, _)| f < bf) {
                best = Some((f, i));
            }
        }
        let (f, i) = best?;
        self.vtime = f;
        Some(i)
    }

    /// Queue `i` sent its head.
    #[inline]
    fn dequeued(&mut self, i: usize, _now_empty: bool) {
        self.tags[i].pop_front();
    }

    /// Queue `i` lost its tail to an eviction.
    fn evicted(&mut self, i: usize, _now_empty: bool) {
        self.tags[i].pop_back();
        self.last_finish[i] = self.tags[i].back().copied().unwrap_or(self.vtime);
    }
}
