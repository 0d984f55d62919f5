//! Timers that are re-armed on nearly every packet (TCP's retransmission timer, the
//! delayed-ACK timer) without piling dead events into the event queue.
//!
//! A [`LazyTimer`] keeps its deadline in the owner and at most one live event in the
//! queue. Pushing the deadline later (the common case: every ACK restarts the RTO)
//! schedules nothing; when the event fires early the owner asks [`LazyTimer::fire`],
//! which says to re-schedule for the real deadline. Only moving a deadline earlier
//! schedules a second event, and the superseded one is recognised as stale when it
//! fires because its time no longer matches.

use super::Time;

/// What the owner should do when a timer event fires.
#[derive(Debug, PartialEq, Eq)]
pub enum Fired {
    /// The deadline has passed: run the timeout.
    Expired,
    /// The deadline moved later: schedule an event at this time.
    Reschedule(Time),
    /// Cancelled or superseded: nothing to do.
    Stale,
}

/// A timer with one deadline and at most one useful event in the queue.
#[derive(Clone, Copy, Debug, Default)]
pub struct LazyTimer {
    deadline: Option<Time>,
    event_at: Option<Time>,
}

impl LazyTimer {
    /// Arms the timer for `deadline`; returns the time to schedule an event at, if one
    /// is needed.
    #[inline]
    pub fn arm(&mut self, deadline: Time) -> Option<Time> {
        self.deadline = Some(deadline);
        match self.event_at {
            Some(at) if at <= deadline => None,
            _ => {
                self.event_at = Some(deadline);
                Some(deadline)
            }
        }
    }

    /// Asks for an event at `at` without touching the deadline (a second deadline
    /// the owner keeps beside it, sharing this timer's events); returns the time to
    /// schedule an event at, if one is needed. When it fires, [`fire`](Self::fire)
    /// reschedules for the deadline, if any, and the owner checks its own.
    #[inline]
    pub fn wake(&mut self, at: Time) -> Option<Time> {
        match self.event_at {
            Some(e) if e <= at => None,
            _ => {
                self.event_at = Some(at);
                Some(at)
            }
        }
    }

    /// Disarms the timer (its queued event, if any, will fire as stale).
    #[inline]
    pub fn cancel(&mut self) {
        self.deadline = None;
    }

    /// The armed deadline.
    pub fn deadline(&self) -> Option<Time> {
        self.deadline
    }

    /// Whether the timer is armed.
    pub fn is_armed(&self) -> bool {
        self.deadline.is_some()
    }

    /// Called when an event scheduled by this timer fires at `now`.
    #[inline]
    pub fn fire(&mut self, now: Time) -> Fired {
        if self.event_at != Some(now) {
            return Fired::Stale;
        }
        self.event_at = None;
        match self.deadline {
            None => Fired::Stale,
            Some(d) if d <= now => {
                self.deadline = None;
                Fired::Expired
            }
            Some(d) => {
                self.event_at = Some(d);
                Fired::Reschedule(d)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rearming_later_schedules_nothing() {
        let mut t = LazyTimer::default();
        assert_eq!(t.arm(100), Some(100));
        assert_eq!(t.arm(150), None);
        assert_eq!(t.arm(200), None);
        assert_eq!(t.fire(100), Fired::Reschedule(200));
        assert_eq!(t.fire(200), Fired::Expired);
        assert!(!t.is_armed());
    }

    #[test]
    fn rearming_earlier_supersedes() {
        let mut t = LazyTimer::default();
        assert_eq!(t.arm(100), Some(100));
        assert_eq!(t.arm(50), Some(50));
        assert_eq!(t.fire(50), Fired::Expired);
        assert_eq!(t.fire(100), Fired::Stale);
    }

    #[test]
    fn a_wake_event_reschedules_for_the_deadline() {
        let mut t = LazyTimer::default();
        assert_eq!(t.arm(100), Some(100));
        assert_eq!(t.wake(40), Some(40));
        assert_eq!(t.wake(60), None);
        assert_eq!(t.fire(40), Fired::Reschedule(100));
        assert_eq!(t.fire(100), Fired::Expired);
        let mut idle = LazyTimer::default();
        assert_eq!(idle.wake(10), Some(10));
        assert_eq!(idle.fire(10), Fired::Stale);
    }

    #[test]
    fn cancelled_timer_fires_stale() {
        let mut t = LazyTimer::default();
        assert_eq!(t.arm(100), Some(100));
        t.cancel();
        assert_eq!(t.fire(100), Fired::Stale);
        // re-arming after the stale event was consumed schedules again
        assert_eq!(t.arm(300), Some(300));
        assert_eq!(t.fire(300), Fired::Expired);
    }
}
