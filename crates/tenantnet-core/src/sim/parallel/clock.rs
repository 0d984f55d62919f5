//! How a parallel run's threads learn that a window is open: the thread that closes
//! a window publishes the next one (its index and bound), and the others wait for it.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

/// Spins this many times before it yields (about 200 us here).
const SPINS: u32 = 1 << 14;

/// Then yields the core this many times before it sleeps.
const YIELDS: u32 = 64;

/// The index of no window yet.
const NONE: usize = usize::MAX;

/// The open window, published by the thread that closed the one before.
///
/// A waiting thread spins first: a window of the permutation at k = 8 takes a few
/// microseconds, and a futex wake-up (13–22 us on this machine) would cost more than
/// the window. A thread that spins in vain (the window is long, or the thread that
/// holds it lost its core) yields, then sleeps until the next window is published.
/// With more threads than cores it sleeps at once.
pub(super) struct WindowClock {
    spins: u32,
    /// The open window's index ([`NONE`] before the first).
    index: AtomicUsize,
    /// Its bound, in two halves written before the index.
    hi: AtomicU64,
    lo: AtomicU64,
    /// No more windows: the call is over, or a thread failed.
    over: AtomicBool,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

impl WindowClock {
    /// A clock for `threads` threads.
    pub(super) fn new(threads: usize) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        WindowClock {
            spins: if threads <= cores { SPINS } else { 0 },
            index: AtomicUsize::new(NONE),
            hi: AtomicU64::new(0),
            lo: AtomicU64::new(0),
            over: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// Opens window `k` with bound `b`: what the caller wrote before is visible to
    /// the threads that see it.
    pub(super) fn publish(&self, k: usize, b: u128) {
        self.hi.store((b >> 64) as u64, Ordering::Relaxed);
        self.lo.store(b as u64, Ordering::Relaxed);
        self.index.store(k, Ordering::Release);
        self.wake_all();
    }

    /// No more windows (the call is over, or a thread failed): every thread waiting,
    /// sleeping or napping returns.
    pub(super) fn finish(&self) {
        self.over.store(true, Ordering::Release);
        let _held = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        self.wake.notify_all();
    }

    fn wake_all(&self) {
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _held = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
            self.wake.notify_all();
        }
    }

    /// The open window if it is not `seen` (its index and bound), or none when there
    /// are no more: waits for one. The bound may be a later window's if that window
    /// was published meanwhile; a thread only acts on a window whose partitions it
    /// can still claim, which a later window's publisher has all done.
    pub(super) fn next(&self, seen: usize) -> Option<(usize, u128)> {
        let open = || {
            if self.over.load(Ordering::Acquire) {
                return Some(None);
            }
            let k = self.index.load(Ordering::Acquire);
            let b = (u128::from(self.hi.load(Ordering::Relaxed)) << 64)
                | u128::from(self.lo.load(Ordering::Relaxed));
            (k != seen && k != NONE).then_some(Some((k, b)))
        };
        for _ in 0..self.spins {
            if let Some(w) = open() {
                return w;
            }
            std::hint::spin_loop();
        }
        for _ in 0..YIELDS.min(self.spins) {
            if let Some(w) = open() {
                return w;
            }
            std::thread::yield_now();
        }
        // no wake-up is lost: the publisher stores the index before it reads the
        // sleepers, a sleeper counts itself before it reads the index
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        let mut held = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        let w = loop {
            if let Some(w) = open() {
                break w;
            }
            held = self.wake.wait(held).unwrap_or_else(PoisonError::into_inner);
        };
        drop(held);
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
        w
    }

    /// Sleeps for `d`, or until there are no more windows.
    pub(super) fn nap(&self, d: Duration) {
        let held = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        if !self.over.load(Ordering::Acquire) {
            let _ = self
                .wake
                .wait_timeout_while(held, d, |_| !self.over.load(Ordering::Acquire));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn a_waiting_thread_gets_each_window_published_and_none_after_the_end() {
        // the publisher opens the next window once the waiter has taken this one (as
        // a window's partitions are run before the next is published), after a pause
        // in which the waiter spins, yields or sleeps: on a busy machine too
        for spins in [SPINS, 0] {
            let c = WindowClock {
                spins,
                ..WindowClock::new(2)
            };
            let taken = AtomicUsize::new(0);
            std::thread::scope(|s| {
                let seen = s.spawn(|| {
                    let mut got = vec![];
                    let mut k = NONE;
                    while let Some((next, b)) = c.next(k) {
                        got.push((next, b));
                        taken.store(got.len(), Ordering::Release);
                        k = next;
                    }
                    got
                });
                for k in 0..50usize {
                    c.publish(k, (k as u128) << 70 | 7);
                    std::thread::sleep(Duration::from_micros(300));
                    let t = Instant::now();
                    while taken.load(Ordering::Acquire) <= k {
                        assert!(
                            t.elapsed() < Duration::from_secs(20),
                            "window {k} not taken"
                        );
                        std::thread::sleep(Duration::from_micros(50));
                    }
                }
                c.finish();
                let got = seen.join().unwrap();
                let want: Vec<_> = (0..50usize).map(|k| (k, (k as u128) << 70 | 7)).collect();
                assert_eq!(got, want, "spins {spins}");
            });
        }
    }

    #[test]
    fn the_end_cuts_a_nap_short() {
        let c = WindowClock::new(2);
        let t = Instant::now();
        std::thread::scope(|s| {
            s.spawn(|| c.nap(Duration::from_secs(5)));
            std::thread::sleep(Duration::from_millis(20));
            c.finish();
        });
        assert!(t.elapsed() < Duration::from_secs(2));
        c.nap(Duration::from_secs(5)); // over already: returns at once
        assert!(t.elapsed() < Duration::from_secs(2));
    }
}
