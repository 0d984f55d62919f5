//! The barrier a parallel run's threads meet at between windows.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

/// Spins this many times before it yields (about 200 us here).
const SPINS: u32 = 1 << 14;

/// Then yields the core this many times before it sleeps.
const YIELDS: u32 = 64;

/// A barrier that spins, then sleeps. A window of the permutation at k = 8 takes a
/// few microseconds, and a futex wake-up (13–22 us on this machine) would cost more
/// than the window, so a thread spins first. A thread whose partner has lost its
/// core (another process, or more threads than cores) would spin in vain: past
/// [`SPINS`] it sleeps until the last thread arrives, which then wakes the sleepers.
/// With more threads than cores it sleeps at once.
pub(super) struct SpinBarrier {
    n: usize,
    spins: u32,
    arrived: AtomicUsize,
    generation: AtomicUsize,
    sleepers: AtomicUsize,
    aborted: AtomicBool,
    lock: Mutex<()>,
    wake: Condvar,
}

impl SpinBarrier {
    /// A barrier for `n` threads.
    pub(super) fn new(n: usize) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        SpinBarrier {
            n,
            spins: if n <= cores { SPINS } else { 0 },
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            sleepers: AtomicUsize::new(0),
            aborted: AtomicBool::new(false),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// Waits until all `n` threads have called it; what each wrote before is
    /// visible to all after. False when the barrier was [aborted](Self::abort): a
    /// thread failed and will not come.
    pub(super) fn wait(&self) -> bool {
        let g = self.generation.load(Ordering::SeqCst);
        if self.arrived.fetch_add(1, Ordering::SeqCst) + 1 == self.n {
            self.arrived.store(0, Ordering::SeqCst);
            self.generation.fetch_add(1, Ordering::SeqCst);
            if self.sleepers.load(Ordering::SeqCst) > 0 {
                let _held = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
                self.wake.notify_all();
            }
            return !self.aborted.load(Ordering::SeqCst);
        }
        let passed =
            || self.generation.load(Ordering::Acquire) != g || self.aborted.load(Ordering::Acquire);
        for _ in 0..self.spins {
            if passed() {
                return !self.aborted.load(Ordering::SeqCst);
            }
            std::hint::spin_loop();
        }
        for _ in 0..YIELDS.min(self.spins) {
            if passed() {
                return !self.aborted.load(Ordering::SeqCst);
            }
            std::thread::yield_now();
        }
        // no wake-up is lost: the last thread bumps the generation before it reads
        // the sleepers, a sleeper counts itself before it reads the generation
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        let mut held = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        while !passed() {
            held = self.wake.wait(held).unwrap_or_else(PoisonError::into_inner);
        }
        drop(held);
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
        !self.aborted.load(Ordering::SeqCst)
    }

    /// Lets every thread waiting now or later through, with `wait` false: a thread
    /// failed.
    pub(super) fn abort(&self) {
        self.aborted.store(true, Ordering::SeqCst);
        let _held = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        self.wake.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn no_thread_passes_before_all_arrive() {
        for spins in [SPINS, 0] {
            rounds(SpinBarrier {
                spins,
                ..SpinBarrier::new(3)
            });
        }
    }

    fn rounds(b: SpinBarrier) {
        let count = AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for round in 1..=200u64 {
                        count.fetch_add(1, Ordering::SeqCst);
                        assert!(b.wait());
                        assert!(count.load(Ordering::SeqCst) >= 3 * round);
                        assert!(b.wait());
                    }
                });
            }
        });
        assert_eq!(count.load(Ordering::SeqCst), 600);
    }

    #[test]
    fn an_abort_lets_the_waiting_threads_through() {
        for spins in [SPINS, 0] {
            let b = SpinBarrier {
                spins,
                ..SpinBarrier::new(3)
            };
            std::thread::scope(|s| {
                let waiting: Vec<_> = (0..2).map(|_| s.spawn(|| b.wait())).collect();
                std::thread::sleep(std::time::Duration::from_millis(20));
                b.abort();
                for w in waiting {
                    assert!(!w.join().unwrap());
                }
            });
            assert!(!b.wait());
        }
    }
}
