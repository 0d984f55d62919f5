//! HBS, hierarchical batch scheduling (C2QoS §IV-B, Fig. 8): the order in which a
//! PMD core serves its VMs when some must wait less than others.
//!
//! Each VM has a priority class, 1 (highest) to 8, set by the operator. The core
//! keeps one FIFO *ready queue* per class and a *waiting queue* for the VMs whose
//! C2TB tokens are used up (§IV-B-1). It polls only ready VMs, a class only when
//! every higher class has nothing to send ("absolute execution privileges"), FIFO
//! inside a class; after a batch the VM goes back to the tail of its class, or to
//! the waiting queue when its tokens are now ≤ 0, and the C2TB manager moves it back
//! once its tokens are positive again (§V).
//!
//! Idle high-priority VMs would be polled first for ever and waste cycles, so a VM
//! that has had nothing to send for several polls drops a class at a time, and
//! returns to its own class the moment it sends (§IV-B-3).
//!
//! The paper gives the rules, not the loop; ours (spec `c2qos.md` §4.3, choices
//! A13–A15): one scheduling decision scans the classes from the top and each class's
//! entries in order, each VM at most once per scan (so an idle top-class VM is not
//! re-polled for ever), and serves the first VM whose ring holds packets; an empty
//! poll costs cycles (charged to the VM's bucket, §IV-B-3), counts towards
//! demotion (one class after `demote_after` consecutive empty polls, down to the
//! lowest class) and sends the VM to the tail of its (new) class. The scan starts
//! again from the top after every batch.

use std::collections::VecDeque;

/// Priority classes (§IV-B-1).
pub const CLASSES: u8 = 8;

/// The worst-case wait of a VM in each class before its batch starts (§IV-B-2):
/// W_j = (N_1·k_1 + … + N_{j−1}·k_{j−1} + N_j) · c, with `ready[j]` = N_{j+1} the
/// VMs ready in class j+1, `k[j]` = k_{j+1} the batches a VM of class j+1 may send
/// while a lower one sends one (k ≥ 1), and `c` one batch's time. As printed, it
/// leaves out a lower class's batch already in progress when a VM becomes ready
/// (the bound for class 1 is then (N_1 + 1)·c; spec A16).
pub fn worst_wait(ready: &[u32], k: &[f64], c: f64) -> Vec<f64> {
    let mut above = 0.0;
    ready
        .iter()
        .enumerate()
        .map(|(j, &n)| {
            let w = (above + n as f64) * c;
            above += n as f64 * k.get(j).copied().unwrap_or(1.0).max(1.0);
            w
        })
        .collect()
}

/// One core's HBS state over the VMs it polls (by slot).
#[derive(Clone, Debug)]
pub struct Hbs {
    /// Empty polls in a row after which a VM drops a class.
    demote_after: u32,
    /// Each VM's configured class, 0-based (class 1 is 0).
    own: Vec<u8>,
    /// Each VM's class now.
    class: Vec<u8>,
    /// Each VM's empty polls in a row in its class now.
    empty: Vec<u32>,
    /// The ready queues, highest class first.
    ready: Vec<VecDeque<usize>>,
    /// VMs whose tokens are used up, in the order they came.
    waiting: Vec<usize>,
    /// The scan in which each VM was last polled.
    seen: Vec<u64>,
    /// Scans so far.
    scan: u64,
}

impl Hbs {
    /// Every VM ready in its class (`classes[slot]`, 1–8), in slot order.
    pub fn new(classes: &[u8], demote_after: u32) -> Self {
        let own: Vec<u8> = classes.iter().map(|&c| c.clamp(1, CLASSES) - 1).collect();
        let mut ready = vec![VecDeque::new(); CLASSES as usize];
        for (slot, &c) in own.iter().enumerate() {
            ready[c as usize].push_back(slot);
        }
        Hbs {
            demote_after: demote_after.max(1),
            class: own.clone(),
            empty: vec![0; own.len()],
            seen: vec![0; own.len()],
            own,
            ready,
            waiting: Vec::new(),
            scan: 0,
        }
    }

    /// One scheduling decision: the first ready VM, by class and then in order,
    /// whose ring holds packets (`held(slot)`), after the empty polls of those
    /// before it (`poll_empty(slot)` spends and charges their cycles and says
    /// whether the VM still has tokens); `None` when none has packets.
    pub fn choose(
        &mut self,
        held: impl Fn(usize) -> usize,
        mut poll_empty: impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        self.scan += 1;
        for p in 0..self.ready.len() {
            let mut i = 0;
            while i < self.ready[p].len() {
                let slot = self.ready[p][i];
                if self.seen[slot] == self.scan {
                    i += 1;
                    continue;
                }
                self.seen[slot] = self.scan;
                self.ready[p].remove(i);
                if held(slot) > 0 {
                    return Some(slot);
                }
                let tokens_left = poll_empty(slot);
                self.empty[slot] += 1;
                if self.empty[slot] >= self.demote_after {
                    self.class[slot] = (self.class[slot] + 1).min(CLASSES - 1);
                    self.empty[slot] = 0;
                }
                self.requeue(slot, tokens_left);
            }
        }
        None
    }

    /// VM `slot`'s batch is done: back to its own class, at the tail of its ready
    /// queue, or to the waiting queue if its tokens are used up.
    pub fn served(&mut self, slot: usize, tokens_left: bool) {
        self.empty[slot] = 0;
        self.class[slot] = self.own[slot];
        self.requeue(slot, tokens_left);
    }

    fn requeue(&mut self, slot: usize, tokens_left: bool) {
        if tokens_left {
            self.ready[self.class[slot] as usize].push_back(slot);
        } else {
            self.waiting.push(slot);
        }
    }

    /// The manager's call (after the buckets' refill): waiting VMs whose tokens are
    /// positive again go to the tail of their class, in the order they waited.
    pub fn refill(&mut self, may_serve: impl Fn(usize) -> bool) {
        let mut still = Vec::new();
        for slot in std::mem::take(&mut self.waiting) {
            if may_serve(slot) {
                self.ready[self.class[slot] as usize].push_back(slot);
            } else {
                still.push(slot);
            }
        }
        self.waiting = still;
    }

    /// VM `slot`'s class now, 1–8.
    pub fn class_of(&self, slot: usize) -> u8 {
        self.class[slot] + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn higher_classes_go_first_and_fifo_within_a_class() {
        let mut h = Hbs::new(&[2, 1, 2, 1], 8);
        let all = |_: usize| 1;
        let mut order = Vec::new();
        for _ in 0..6 {
            let s = h.choose(all, |_| true).unwrap();
            order.push(s);
            h.served(s, true);
        }
        // class 1 (slots 1 and 3) takes every batch while it has packets
        assert_eq!(order, vec![1, 3, 1, 3, 1, 3]);
        // slot 1 out of tokens: slot 3 alone, then class 2 once 3 waits too
        let s = h.choose(all, |_| true).unwrap();
        h.served(s, false);
        let s = h.choose(all, |_| true).unwrap();
        assert_eq!(s, 3);
        h.served(s, false);
        assert_eq!(h.choose(all, |_| true), Some(0));
        h.served(0, true);
        h.refill(|s| s == 1);
        assert_eq!(h.choose(all, |_| true), Some(1));
    }

    #[test]
    fn an_idle_vm_drops_a_class_after_8_empty_polls_and_returns_when_it_sends() {
        let mut h = Hbs::new(&[1, 3], 8);
        let mut polls = 0;
        for _ in 0..8 {
            assert_eq!(
                h.choose(
                    |s| (s == 1) as usize,
                    |_| {
                        polls += 1;
                        true
                    }
                ),
                Some(1)
            );
            h.served(1, true);
        }
        assert_eq!(polls, 8);
        assert_eq!(h.class_of(0), 2);
        // 8 more: class 3, then 4 after 8 more
        for _ in 0..16 {
            h.choose(|s| (s == 1) as usize, |_| true);
            h.served(1, true);
        }
        assert_eq!(h.class_of(0), 4);
        // demoted below slot 1 (class 3), it is polled only when slot 1 has nothing
        assert_eq!(h.choose(|_| 1, |_| true), Some(1));
        h.served(1, true);
        // found sending, it is served and back in class 1 at once
        assert_eq!(h.choose(|s| (s == 0) as usize, |_| true), Some(0));
        h.served(0, true);
        assert_eq!(h.class_of(0), 1);
        assert_eq!(h.choose(|_| 1, |_| true), Some(0));
    }

    #[test]
    fn a_scan_polls_each_vm_at_most_once() {
        let mut h = Hbs::new(&[1, 1, 1], 1);
        let mut polls = 0;
        assert_eq!(
            h.choose(
                |_| 0,
                |_| {
                    polls += 1;
                    true
                }
            ),
            None
        );
        assert_eq!(polls, 3);
    }

    #[test]
    fn the_worst_wait_is_the_papers_sum() {
        let w = worst_wait(&[4, 4, 4, 4], &[1.0, 2.0, 1.0], 10.0);
        assert_eq!(w, vec![40.0, 80.0, 160.0, 200.0]);
        // sequential OVS: every VM waits for all the others
        let w = worst_wait(&[16], &[], 10.0);
        assert_eq!(w, vec![160.0]);
    }
}
