//! DCTCP's sender-side estimator (Alizadeh et al., SIGCOMM 2010, §3.1; RFC 8257 §3.3).
//!
//! The sender counts, over each window of data (one RTT: until `snd_una` passes
//! the `snd_nxt` recorded at the window's start), the bytes acknowledged and the
//! bytes acknowledged by ACKs carrying ECE. At the end of the window it updates
//! α ← (1 − g)·α + g·F with F the marked fraction. On ECE the congestion window is
//! cut once per window of data to cwnd·(1 − α/2).
//!
//! htsim's `DCTCPSrc` (`transport.dctcp_window = "acks"`) counts its window
//! instead in ACK packets: each ACK counts one segment, marked if it carries ECE,
//! and the window ends once the segments counted reach the congestion window at
//! the previous window's end (2 segments at first). With windows of one or two
//! segments, as in a permutation of DCTCP flows sharing 100-packet buffers, that
//! window is up to twice the sequence one, so α and htsim's every-window cut come
//! half as often.

/// α and the per-window counters.
#[derive(Clone, Debug)]
pub struct DctcpEstimator {
    /// The estimate α of the fraction of marked packets.
    pub alpha: f64,
    g: f64,
    /// Where the window ends: a sequence number, or with `by_acks` the bytes of
    /// ACKs that make it.
    window_end: u64,
    acked: u64,
    marked: u64,
    /// The segment size each ACK counts for, when windows are counted in ACKs.
    by_acks: Option<u64>,
}

impl DctcpEstimator {
    /// A fresh estimator with α = `alpha_init` and gain `g`.
    pub fn new(alpha_init: f64, g: f64) -> Self {
        DctcpEstimator {
            alpha: alpha_init,
            g,
            window_end: 0,
            acked: 0,
            marked: 0,
            by_acks: None,
        }
    }

    /// The estimator counting windows in ACKs of `mss`-byte segments, as htsim's
    /// `DCTCPSrc` (module doc); the first window is two segments.
    pub fn counting_acks(mut self, mss: u64) -> Self {
        self.by_acks = Some(mss);
        self.window_end = 2 * mss;
        self
    }

    /// A window ended with the congestion window at `cwnd` (after any cut): with
    /// windows counted in ACKs, the next one is `cwnd` bytes of them.
    pub fn window_restarted(&mut self, cwnd: u64) {
        if self.by_acks.is_some() {
            self.window_end = cwnd;
        }
    }

    /// Accounts one ACK that acknowledged `acked` new bytes, with or without ECE;
    /// `snd_una` is after the ACK, `snd_nxt` the next byte to be sent. Returns
    /// whether α was updated (a window ended).
    pub fn on_ack(&mut self, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64) -> bool {
        if let Some(seg) = self.by_acks {
            return self.on_ack_counted(ece, seg);
        }
        self.acked += acked;
        if ece {
            self.marked += acked;
        }
        if snd_una < self.window_end || self.acked == 0 {
            return false;
        }
        let f = self.marked as f64 / self.acked as f64;
        self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
        self.acked = 0;
        self.marked = 0;
        self.window_end = snd_nxt;
        true
    }

    /// htsim's count: one segment per ACK; the window ends when the count reaches
    /// the bytes set by [`Self::window_restarted`].
    fn on_ack_counted(&mut self, ece: bool, seg: u64) -> bool {
        self.acked += seg;
        if ece {
            self.marked += seg;
        }
        if self.acked < self.window_end {
            return false;
        }
        let f = self.marked as f64 / self.acked as f64;
        self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
        self.acked = 0;
        self.marked = 0;
        true
    }

    /// The window after DCTCP's cut: cwnd·(1 − α/2), at least `floor`. The decrease
    /// cwnd·α/2 is rounded down, as Linux's integer `cwnd * alpha >> 11` is.
    pub fn reduced_window(&self, cwnd: u64, floor: u64) -> u64 {
        let cut = (cwnd as f64 * self.alpha / 2.0) as u64;
        (cwnd - cut.min(cwnd)).max(floor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_converges_to_the_marked_fraction() {
        let mut d = DctcpEstimator::new(1.0, 1.0 / 16.0);
        let mut una = 0;
        // a window of 10 segments of 1000 B in flight; 3 of every 10 ACKs carry ECE
        for _ in 0..200 {
            for i in 0..10 {
                una += 1000;
                d.on_ack(1000, i < 3, una, una + 10_000);
            }
        }
        assert!((d.alpha - 0.3).abs() < 1e-3, "{}", d.alpha);
        assert_eq!(
            DctcpEstimator::new(0.3, 0.0625).reduced_window(100_000, 2000),
            85_000
        );
        assert_eq!(
            DctcpEstimator::new(1.0, 0.0625).reduced_window(3000, 2000),
            2000
        );
    }

    #[test]
    fn htsims_window_counts_acks_up_to_the_last_windows_cwnd() {
        let mut d = DctcpEstimator::new(0.0, 0.5).counting_acks(1000);
        // the first window is two ACKs, whatever their sequence numbers
        assert!(!d.on_ack(0, true, 0, 1000)); // a duplicate ACK counts
        assert!(d.on_ack(1000, false, 1000, 2000));
        assert!((d.alpha - 0.25).abs() < 1e-12); // F = 1/2
                                                 // a window of 1500 bytes of congestion window: two ACKs again
        d.window_restarted(1500);
        assert!(!d.on_ack(1000, true, 2000, 3000));
        assert!(d.on_ack(1000, true, 3000, 4000));
        assert!((d.alpha - 0.625).abs() < 1e-12);
        // 3000 bytes: three ACKs
        d.window_restarted(3000);
        assert!(!d.on_ack(1000, false, 4000, 5000));
        assert!(!d.on_ack(1000, false, 5000, 6000));
        assert!(d.on_ack(1000, false, 6000, 7000));
        // the sequence window would have ended on the first of them
        let mut s = DctcpEstimator::new(0.0, 0.5);
        assert!(s.on_ack(1000, false, 1000, 2000));
        assert!(s.on_ack(1000, false, 2000, 3000));
    }

    #[test]
    fn one_update_per_window() {
        let mut d = DctcpEstimator::new(0.0, 0.5);
        assert!(d.on_ack(1000, true, 1000, 5000)); // first ACK closes the empty first window
        assert!((d.alpha - 0.5).abs() < 1e-12);
        assert!(!d.on_ack(1000, true, 2000, 6000));
        assert!(!d.on_ack(2000, false, 4000, 6000));
        assert!(d.on_ack(1000, false, 5000, 7000));
        // F = 1000/4000 over the second window: 0.5*0.5 + 0.5*0.25
        assert!((d.alpha - 0.375).abs() < 1e-12);
    }
}
