//! How a parallel run's threads share its partitions, window by window, on a machine
//! that may be doing other work.
//!
//! Each partition of a window is claimed by one thread: a thread claims its own
//! partition first, then any other that no thread has claimed yet, so that a thread
//! that lost its core (another process took it) holds up no one unless it lost it
//! while it held a partition. The thread that finishes a window's last partition
//! closes the window and opens the next. Which thread runs a partition changes
//! nothing in it: the results are the same bytes whoever runs what.
//!
//! A thread that lost its core while it held a partition closes that window late.
//! It then sees the window took far longer than windows do ([`Pace`]); when such
//! windows took more than [`LOSS`] of the last [`PERIOD`], it naps, at
//! first for [`NAP_MIN`], then four times as long each time it is caught again, up to
//! [`NAP_MAX`], while the others run its partitions: the run folds onto fewer
//! threads while the machine is busy, and unfolds when the napping thread comes back
//! and keeps up ([`STREAK`] windows). One thread never naps, so the run goes on.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A window that took this long...
const LAG_MIN: Duration = Duration::from_micros(100);
/// ...and this many times as long as windows take lately was held up by a thread
/// that lost its core.
const LAG_FACTOR: f64 = 20.0;
/// How much of a window's time the typical window time takes in.
const EWMA: f64 = 0.05;

/// A thread caught holding a window up naps this long at first...
pub(super) const NAP_MIN: Duration = Duration::from_millis(2);
/// ...four times as long each time it is caught again, up to this: a thread that
/// lost its core once is likely to lose it again, and each time costs the others a
/// wait of the order of a millisecond.
pub(super) const NAP_MAX: Duration = Duration::from_secs(1);
/// A thread naps when the windows it held up took more than this share of the last
/// [`PERIOD`]: a thread that lost its core to other work loses it every time slice
/// or so, while on a quiet machine a window now and then is late for other reasons
/// (the hypervisor ran another machine's core), which is cheaper to wait for than
/// to run without the thread.
pub(super) const LOSS: f64 = 0.05;
/// The span the share [`LOSS`] is of.
pub(super) const PERIOD: Duration = Duration::from_millis(100);
/// A thread that found every partition claimed before it came, window after window
/// for this long, naps too: it spins for windows it never gets, on a core the
/// others need (another process holds the rest).
pub(super) const MISSING: Duration = Duration::from_millis(5);
/// Windows a thread shares with another without holding one up before its naps
/// start again at [`NAP_MIN`].
pub(super) const STREAK: u64 = 20_000;

/// Which window each partition may be claimed for next.
pub(super) struct Claims {
    next: Vec<AtomicUsize>,
}

impl Claims {
    /// `n` partitions, each free for window `k` first.
    pub(super) fn new(n: usize, k: usize) -> Self {
        Claims {
            next: (0..n).map(|_| AtomicUsize::new(k)).collect(),
        }
    }

    /// Claims partition `p` for window `k`: false when a thread has claimed it for `k`
    /// already, or `k` is over.
    pub(super) fn claim(&self, p: usize, k: usize) -> bool {
        self.next[p]
            .compare_exchange(k, k + 1, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }
}

/// How long windows take, and each thread's naps: kept from call to call.
#[derive(Clone, Debug)]
pub(super) struct Pace {
    /// The typical window's wall time (s), an exponentially weighted mean.
    typical: f64,
    /// Each thread's naps.
    pub(super) naps: Vec<Naps>,
    /// Windows run, and of those, windows one thread ran alone.
    pub(super) windows: u64,
    pub(super) solo: u64,
}

/// One thread's naps.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Naps {
    /// Times it was caught holding a window up since its last streak.
    level: u32,
    /// Windows it ran since it was last caught.
    streak: u64,
    /// Until when it naps (a nap a call's end cut short goes on in the next).
    until: Option<Instant>,
    /// Since when it counts the time of the windows it held up, and that time.
    period: Option<(Instant, Duration)>,
    /// Since when it has found every partition claimed, window after window.
    missing: Option<Instant>,
    /// Naps it took.
    pub(super) taken: u64,
}

impl Pace {
    /// For `threads` threads.
    pub(super) fn new(threads: usize) -> Self {
        Pace {
            typical: 0.0,
            naps: vec![Naps::default(); threads],
            windows: 0,
            solo: 0,
        }
    }

    /// What the run's threads did, in a line, when one thread ran every partition of
    /// a tenth of the windows or more; none otherwise.
    pub(super) fn folded(&self, threads: usize) -> Option<String> {
        let share = self.solo as f64 / self.windows.max(1) as f64;
        let naps: u64 = self.naps.iter().map(|n| n.taken).sum();
        (share >= 0.1).then(|| {
            format!(
                "ran on {threads} threads, but one thread ran every partition in {:.0} % of its windows: the machine's other work held its cores ({naps} naps)",
                100.0 * share
            )
        })
    }

    /// Takes in a window that took `took`: how long the thread that closed it held it
    /// up, if it did.
    pub(super) fn held_up(&mut self, took: Duration) -> Option<Duration> {
        self.windows += 1;
        let s = took.as_secs_f64();
        if took > LAG_MIN && self.typical > 0.0 && s > LAG_FACTOR * self.typical {
            return Some(took);
        }
        self.typical = if self.typical == 0.0 {
            s
        } else {
            self.typical + EWMA * (s - self.typical)
        };
        None
    }
}

impl Naps {
    /// A window it saw, of `n` partitions: it ran `ran` of them, and held the window
    /// up for `held` if it did. The nap it should take now, if any. Only windows it
    /// shared with another thread make a streak: a thread alone keeps up with no one.
    /// `clock` tells the time, read only when the thread ran nothing or held the
    /// window up (a test's clock is its own).
    pub(super) fn ran(
        &mut self,
        ran: usize,
        n: usize,
        held: Option<Duration>,
        clock: impl Fn() -> Instant,
    ) -> Option<Duration> {
        let Some(now) = (ran == 0 || held.is_some()).then(clock) else {
            self.missing = None;
            return self.kept_up(ran, n);
        };
        let missing = if ran == 0 {
            let since = *self.missing.get_or_insert(now);
            now.saturating_duration_since(since) >= MISSING
        } else {
            self.missing = None;
            false
        };
        if held.is_none() && !missing {
            return self.kept_up(ran, n);
        }
        if let Some(took) = held {
            let (since, lost) = match self.period {
                Some((since, lost)) if now.saturating_duration_since(since) < PERIOD => {
                    (since, lost + took)
                }
                _ => (now, took),
            };
            self.period = Some((since, lost));
            if !missing && lost.as_secs_f64() < LOSS * PERIOD.as_secs_f64() {
                return None;
            }
        }
        self.period = None;
        self.missing = None;
        self.streak = 0;
        let d = NAP_MIN
            .saturating_mul(1 << (2 * self.level.min(15)))
            .min(NAP_MAX);
        self.level += 1;
        self.until = Some(now + d);
        Some(d)
    }

    /// A window it kept up with: one of a streak if it shared it with another thread.
    fn kept_up(&mut self, ran: usize, n: usize) -> Option<Duration> {
        self.streak += u64::from(ran < n);
        if self.streak >= STREAK {
            self.level = 0;
        }
        None
    }

    /// What is left of its nap.
    pub(super) fn left(&self) -> Option<Duration> {
        let until = self.until?;
        until.checked_duration_since(Instant::now())
    }

    /// Naps for `d` from now (a test's: a thread that lost its core).
    #[cfg(test)]
    pub(super) fn nap_for(&mut self, d: Duration) {
        self.until = Some(Instant::now() + d);
    }

    /// Its nap is over (or was not taken: no other thread was awake).
    pub(super) fn woke(&mut self) {
        self.taken += u64::from(self.until.take().is_some());
    }
}

/// The threads not napping: one always stays.
pub(super) struct Awake {
    n: AtomicUsize,
}

impl Awake {
    /// `n` threads, all awake.
    pub(super) fn new(n: usize) -> Self {
        Awake {
            n: AtomicUsize::new(n),
        }
    }

    /// Whether this thread may nap (another is awake); it is then counted asleep
    /// until [`wake`](Self::wake).
    pub(super) fn may_nap(&self) -> bool {
        let mut n = self.n.load(Ordering::SeqCst);
        while n > 1 {
            match self
                .n
                .compare_exchange(n, n - 1, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return true,
                Err(now) => n = now,
            }
        }
        false
    }

    /// A napping thread woke.
    pub(super) fn wake(&self) {
        self.n.fetch_add(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partition_is_claimed_once_per_window_and_never_for_a_past_one() {
        let c = Claims::new(2, 5);
        assert!(c.claim(0, 5) && !c.claim(0, 5));
        assert!(c.claim(1, 5));
        assert!(!c.claim(0, 4) && c.claim(0, 6) && !c.claim(1, 7));
    }

    #[test]
    fn a_window_far_longer_than_windows_take_was_held_up() {
        let mut p = Pace::new(2);
        for _ in 0..100 {
            assert!(p.held_up(Duration::from_micros(10)).is_none());
        }
        assert!(p.held_up(Duration::from_micros(90)).is_none()); // under LAG_MIN
        assert_eq!(
            p.held_up(Duration::from_millis(3)),
            Some(Duration::from_millis(3))
        );
        assert!(
            p.typical < 20e-6,
            "a late window does not move the typical one"
        );
    }

    #[test]
    fn a_thread_naps_once_the_windows_it_held_up_cost_a_twentieth_of_the_time() {
        let mut n = Naps::default();
        let ms = Duration::from_millis;
        let t = Instant::now();
        assert_eq!(n.ran(1, 2, Some(ms(3)), || t), None);
        let t = t + PERIOD;
        assert_eq!(n.ran(1, 2, Some(ms(3)), || t), None, "a new period");
        let t = t + ms(1);
        assert_eq!(n.ran(1, 2, Some(ms(3)), || t), Some(NAP_MIN), "6 ms of 100");
    }

    #[test]
    fn naps_grow_up_to_the_most_and_a_streak_resets_them() {
        let mut n = Naps::default();
        let late = Some(Duration::from_millis(10));
        let t = Instant::now();
        let naps: Vec<_> = (0..6).map(|_| n.ran(1, 2, late, || t).unwrap()).collect();
        assert_eq!(naps[0], NAP_MIN);
        assert_eq!(naps[1], NAP_MIN * 4);
        assert_eq!(naps[5], NAP_MAX);
        for _ in 0..STREAK {
            assert!(n.ran(2, 2, None, || t).is_none()); // windows it ran alone
        }
        assert_eq!(n.ran(1, 2, late, || t), Some(NAP_MAX));
        for _ in 0..STREAK {
            assert!(n.ran(1, 2, None, || t).is_none());
        }
        assert_eq!(n.ran(1, 2, late, || t), Some(NAP_MIN));
    }

    #[test]
    fn a_thread_that_finds_no_partition_left_again_and_again_naps() {
        let mut n = Naps::default();
        let t = Instant::now();
        assert_eq!(n.ran(0, 2, None, || t), None);
        assert_eq!(n.ran(0, 2, None, || t + MISSING / 2), None);
        assert_eq!(n.ran(0, 2, None, || t + MISSING), Some(NAP_MIN));
        assert_eq!(n.ran(1, 2, None, || t + MISSING), None);
    }

    #[test]
    fn one_thread_always_stays_awake() {
        let a = Awake::new(2);
        assert!(a.may_nap() && !a.may_nap());
        a.wake();
        assert!(a.may_nap());
    }
}
