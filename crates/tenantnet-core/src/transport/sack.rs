//! Selective acknowledgements and the loss recovery built on them: the SACK option
//! an ACK carries (RFC 2018, with D-SACK, RFC 2883), the sender's scoreboard and its
//! rules (RFC 6675: IsLost, SetPipe, NextSeg), and Proportional Rate Reduction
//! (RFC 6937), which sets the window during recovery as Linux does.
//!
//! The scoreboard keeps byte ranges, not segments: the SACKed ranges above the
//! cumulative ACK, merged and sorted, with the SACKed bytes above each. Every rule
//! of RFC 6675 is a statement about the holes between them; since IsLost only
//! weakens going up, SetPipe and NextSeg are counted by binary search rather than
//! by walking the holes (the walks are kept, and debug builds check every count
//! against them). An ACK costs no allocation once the scoreboard has grown to the
//! most ranges it needs.
//!
//! Choices where the RFCs leave room:
//! * IsLost counts SACKed bytes above a hole (more than (DupThresh − 1)·SMSS) or
//!   SACKed ranges above it (DupThresh or more); with full-size segments the byte
//!   rule is Linux's "DupThresh segments SACKed above".
//! * An ACK is a duplicate (RFC 6675 §2) when it advances nothing and SACKs new data.
//! * After a retransmission timeout the scoreboard is kept (RFC 6675 §5.1): every
//!   un-SACKed byte below the recovery point counts as lost and only holes are
//!   resent. A receiver that reneges on SACKed data (discards it) is not modelled:
//!   tenantnet's receivers never do, and Linux's reneging check is left out.
//! * D-SACK blocks are reported and join the scoreboard like any block (they lie
//!   below the ACK or inside SACKed data); the sender does not undo a window
//!   reduction on them (Linux's undo, RFC 3708, is left out).

/// SACK blocks an ACK carries: at most three, the option space left beside the
/// timestamps option (RFC 2018 §3: 40 bytes of options, 10 + 2 for timestamps).
pub const MAX_SACK_BLOCKS: usize = 3;

/// The SACK option of one ACK: `n` blocks `[start, end)`, the block holding the
/// segment that triggered the ACK first (RFC 2018 §4), then the ones reported most
/// recently before. With `dsack` the first block reports a duplicate segment
/// (RFC 2883) rather than data above the cumulative ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackOption {
    /// Blocks used.
    pub n: u8,
    /// The first block is a D-SACK.
    pub dsack: bool,
    /// The blocks, `[start, end)` byte ranges.
    pub blocks: [(u64, u64); MAX_SACK_BLOCKS],
}

impl SackOption {
    /// The blocks in use.
    pub fn blocks(&self) -> &[(u64, u64)] {
        &self.blocks[..self.n as usize]
    }

    /// Option bytes on the wire: two NOPs, kind and length, and 8 bytes a block
    /// (Linux's layout); 0 without blocks.
    pub fn wire_bytes(&self) -> u32 {
        if self.n == 0 {
            0
        } else {
            4 + 8 * self.n as u32
        }
    }

    fn push(&mut self, b: (u64, u64)) -> bool {
        if (self.n as usize) < MAX_SACK_BLOCKS {
            self.blocks[self.n as usize] = b;
            self.n += 1;
            true
        } else {
            false
        }
    }
}

/// Ranges the receiver remembers to report, Linux's `TCP_NUM_SACKS`: one more
/// than fit beside timestamps, so that when a reported range is delivered the next
/// most recent takes its place. Older ranges are not reported again until a
/// segment arrives in them.
pub const SACK_RANGES_KEPT: usize = 4;

/// The receiver's side: which out-of-order ranges to report, most recent first.
#[derive(Clone, Debug, Default)]
pub struct SackReporter {
    /// Out-of-order ranges in the order to report them, at most
    /// [`SACK_RANGES_KEPT`].
    recent: Vec<(u64, u64)>,
}

impl SackReporter {
    /// A segment `[seq, end)` arrived out of order and now lies in `range` (the
    /// reassembly range that holds it): that range is reported first from now on.
    pub fn arrived(&mut self, range: (u64, u64)) {
        self.recent.retain(|r| r.1 < range.0 || r.0 > range.1);
        self.recent.truncate(SACK_RANGES_KEPT - 1);
        self.recent.insert(0, range);
    }

    /// Everything below `rcv_nxt` is delivered: its ranges are no longer reported.
    pub fn delivered(&mut self, rcv_nxt: u64) {
        self.recent.retain(|r| r.0 >= rcv_nxt);
    }

    /// The option for an ACK: `dup`, a duplicate segment's range, first as a D-SACK
    /// (RFC 2883 §4) if given, then the ranges most recent first.
    pub fn option(&self, dup: Option<(u64, u64)>) -> SackOption {
        let mut o = SackOption::default();
        if let Some(d) = dup {
            o.push(d);
            o.dsack = true;
        }
        for r in &self.recent {
            if !o.push(*r) {
                break;
            }
        }
        o
    }
}

/// The sender's scoreboard (RFC 6675 §3).
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// SACKed ranges above the cumulative ACK, sorted, disjoint, not adjacent.
    sacked: Vec<(u64, u64)>,
    /// Bytes in `sacked`.
    sacked_bytes: u64,
    /// `above[k]`: bytes in `sacked[k..]`, so that IsLost costs no walk.
    above: Vec<u64>,
    /// One past the highest byte retransmitted in this recovery (HighRxt + 1).
    pub rxt_end: u64,
}

impl Scoreboard {
    /// Bytes SACKed above the cumulative ACK.
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }

    /// The SACKed ranges, sorted.
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.sacked
    }

    /// One past the highest SACKed byte (the cumulative ACK if none).
    pub fn high_sacked(&self, snd_una: u64) -> u64 {
        self.sacked.last().map_or(snd_una, |r| r.1)
    }

    /// Forgets everything (a new connection).
    pub fn clear(&mut self) {
        self.sacked.clear();
        self.above.clear();
        self.sacked_bytes = 0;
    }

    /// The cumulative ACK is now `snd_una` and the ACK carried `opt`: ranges below
    /// `snd_una` drop out, the option's blocks (a D-SACK's included: they fall
    /// below the ACK or inside SACKed data) join. The change of SACKed bytes.
    pub fn update(&mut self, snd_una: u64, opt: Option<&SackOption>) -> i64 {
        if self.sacked.is_empty() && opt.is_none() {
            return 0;
        }
        let before = self.sacked_bytes as i64;
        let cut = self.sacked.partition_point(|r| r.1 <= snd_una);
        let mut changed = cut > 0;
        if cut > 0 {
            self.sacked.drain(..cut);
        }
        if let Some(first) = self.sacked.first_mut() {
            if first.0 < snd_una {
                first.0 = snd_una;
                changed = true;
            }
        }
        if let Some(o) = opt {
            for &(s, e) in o.blocks() {
                let s = s.max(snd_una);
                if e > s {
                    changed |= self.insert(s, e);
                }
            }
        }
        if changed {
            self.sum_above();
        }
        self.sacked_bytes as i64 - before
    }

    /// `above` and `sacked_bytes` from `sacked`.
    fn sum_above(&mut self) {
        self.above.resize(self.sacked.len() + 1, 0);
        let mut sum = 0;
        for (k, r) in self.sacked.iter().enumerate().rev() {
            sum += r.1 - r.0;
            self.above[k] = sum;
        }
        self.above[self.sacked.len()] = 0;
        self.sacked_bytes = sum;
    }

    /// IsLost for a byte below `sacked[k]` and above `sacked[k - 1]`.
    fn lost_below(&self, k: usize, dupthresh: u32, mss: u64) -> bool {
        let bytes = self.above.get(k).copied().unwrap_or(0);
        bytes > (dupthresh as u64).saturating_sub(1) * mss
            || self.sacked.len() - k >= dupthresh as usize
    }

    /// Adds `[s, e)`; whether anything changed.
    fn insert(&mut self, s: u64, e: u64) -> bool {
        let i = self.sacked.partition_point(|r| r.1 < s);
        let mut j = i;
        let (mut lo, mut hi) = (s, e);
        while j < self.sacked.len() && self.sacked[j].0 <= hi {
            lo = lo.min(self.sacked[j].0);
            hi = hi.max(self.sacked[j].1);
            j += 1;
        }
        match j - i {
            0 => self.sacked.insert(i, (lo, hi)),
            1 if self.sacked[i] == (lo, hi) => return false,
            1 => self.sacked[i] = (lo, hi),
            _ => {
                self.sacked[i] = (lo, hi);
                self.sacked.drain(i + 1..j);
            }
        }
        true
    }

    /// RFC 6675's IsLost for any byte of the hole that starts at `seq`: more than
    /// (DupThresh − 1)·SMSS bytes SACKed above it, or DupThresh SACKed ranges.
    pub fn is_lost(&self, seq: u64, dupthresh: u32, mss: u64) -> bool {
        let i = self.sacked.partition_point(|r| r.1 <= seq);
        match self.sacked.get(i) {
            // inside a SACKed range: what is above it in that range counts
            Some(r) if r.0 < seq => {
                let bytes = self.above[i] - (seq - r.0);
                bytes > (dupthresh as u64).saturating_sub(1) * mss
                    || self.sacked.len() - i >= dupthresh as usize
            }
            _ => self.lost_below(i, dupthresh, mss),
        }
    }

    /// The holes from `from` (at least the cumulative ACK) up to `top`: the un-SACKed
    /// ranges in order, each with whether it is lost (every byte below `all_lost_below` is, after a timeout; a
    /// hole across it is two, the lost part and the rest).
    pub fn holes(
        &self,
        from: u64,
        top: u64,
        lost: (u32, u64, u64),
    ) -> impl Iterator<Item = (u64, u64, bool)> + '_ {
        let (dupthresh, mss, all_lost_below) = lost;
        let mut at = from;
        let mut k = self.sacked.partition_point(|r| r.1 <= from);
        std::iter::from_fn(move || loop {
            if at >= top {
                return None;
            }
            let end = match self.sacked.get(k) {
                Some(&(s, e)) if s <= at => {
                    at = at.max(e);
                    k += 1;
                    continue;
                }
                Some(&(s, _)) => s.min(top),
                None => top,
            };
            let start = at;
            // a hole that straddles the timeout's recovery point splits there
            let end = if start < all_lost_below {
                end.min(all_lost_below)
            } else {
                end
            };
            at = end;
            // every SACKed range from `k` on is above the hole
            let lost = start < all_lost_below || self.lost_below(k, dupthresh, mss);
            return Some((start, end, lost));
        })
    }

    /// RFC 6675's SetPipe: the bytes between `snd_una` and `snd_max` not SACKed,
    /// each counted once if not lost and once more if retransmitted (below
    /// `rxt_end`). IsLost only weakens going up (fewer SACKed bytes and ranges
    /// above), so the lost bytes are the un-SACKed ones below one point, found by a
    /// binary search: the count costs O(log ranges), not a walk over the holes.
    /// `snd_una` is the one of the last [`update`](Self::update).
    pub fn pipe(&self, snd_una: u64, snd_max: u64, lost: (u32, u64, u64)) -> u64 {
        let (lost_end, lost_unsacked) = self.lost_split(snd_una, snd_max, lost);
        let rxt_end = self.rxt_end.clamp(snd_una, snd_max);
        let retransmitted = if self.sacked.is_empty() {
            rxt_end - snd_una
        } else {
            self.unsacked_below(snd_una, rxt_end)
        };
        let unsacked = snd_max - snd_una - self.sacked_bytes;
        debug_assert!(lost_end <= snd_max);
        unsacked - lost_unsacked + retransmitted
    }

    /// Where the lost bytes end: every un-SACKed byte in `[snd_una, lost_end)` is
    /// lost by IsLost or by the timeout, none above it.
    pub fn lost_end(&self, snd_una: u64, snd_max: u64, lost: (u32, u64, u64)) -> u64 {
        self.lost_split(snd_una, snd_max, lost).0
    }

    /// [`lost_end`](Self::lost_end) and the un-SACKed bytes below it.
    fn lost_split(&self, snd_una: u64, snd_max: u64, lost: (u32, u64, u64)) -> (u64, u64) {
        let (dupthresh, mss, all_lost_below) = lost;
        // holes below sacked[k] are lost for k < n_lost
        let (mut lo, mut hi) = (0, self.sacked.len() + 1);
        if self.sacked.is_empty() && !self.lost_below(0, dupthresh, mss) {
            hi = 0;
        }
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.lost_below(mid, dupthresh, mss) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        // the boundary and the SACKed bytes below it, without a search
        let (boundary, sacked_below) = match lo {
            0 => (snd_una, 0),
            n => match self.sacked.get(n - 1) {
                Some(r) => (r.0, self.sacked_bytes - self.above[n - 1]),
                None => (snd_max, self.sacked_bytes),
            },
        };
        let timeout_end = all_lost_below.clamp(snd_una, snd_max);
        if timeout_end > boundary {
            (timeout_end, self.unsacked_below(snd_una, timeout_end))
        } else {
            (boundary, boundary - snd_una - sacked_below)
        }
    }

    /// The first hole at or above `from` and below `top`, cut at `top`, and whether
    /// it is lost.
    pub fn first_hole(
        &self,
        from: u64,
        top: u64,
        lost: (u32, u64, u64),
    ) -> Option<(u64, u64, bool)> {
        if from >= top {
            return None;
        }
        let (dupthresh, mss, all_lost_below) = lost;
        let mut i = self.sacked.partition_point(|r| r.1 <= from);
        let mut at = from;
        if let Some(r) = self.sacked.get(i).filter(|r| r.0 <= at) {
            // SACKed ranges never touch: the byte after one starts a hole
            at = r.1;
            i += 1;
        }
        let end = self.sacked.get(i).map_or(top, |r| r.0.min(top));
        let lost = at < all_lost_below || self.lost_below(i, dupthresh, mss);
        (at < top).then_some((at, end, lost))
    }

    /// Un-SACKed bytes in `[snd_una, x)`.
    pub fn unsacked_below(&self, snd_una: u64, x: u64) -> u64 {
        let i = self.sacked.partition_point(|r| r.1 <= x);
        let mut sacked = self.sacked_bytes - self.above.get(i).copied().unwrap_or(0);
        if let Some(r) = self.sacked.get(i) {
            sacked += x.saturating_sub(r.0);
        }
        x - snd_una - sacked
    }

    /// SetPipe as RFC 6675 words it, hole by hole (what [`pipe`](Self::pipe)
    /// must equal; debug builds check it on every count).
    pub fn pipe_by_walk(&self, snd_una: u64, snd_max: u64, lost: (u32, u64, u64)) -> u64 {
        let mut pipe = 0;
        for (s, e, is_lost) in self.holes(snd_una, snd_max, lost) {
            if !is_lost {
                pipe += e - s;
            }
            pipe += self.rxt_end.clamp(s, e) - s;
        }
        pipe
    }
}

/// What to send next (RFC 6675's NextSeg), given the connection's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Retransmit `[seq, seq + len)`.
    Retransmit(u64, u64),
    /// Send new data from `snd_max`.
    New(u64, u64),
    /// The rescue retransmission (rule 4) of `[seq, seq + len)`: HighRxt stays.
    Rescue(u64, u64),
    /// Nothing may be sent.
    Nothing,
}

/// The state NextSeg reads.
#[derive(Clone, Copy, Debug)]
pub struct NextSegState {
    /// Cumulative ACK (HighACK).
    pub snd_una: u64,
    /// One past the highest byte sent (HighData + 1).
    pub snd_max: u64,
    /// Bytes the application gave.
    pub limit: u64,
    /// SMSS.
    pub mss: u64,
    /// DupThresh.
    pub dupthresh: u32,
    /// After a timeout: every byte below it counts as lost.
    pub all_lost_below: u64,
    /// Whether the rescue retransmission (rule 4) may be used now.
    pub rescue: bool,
}

/// NextSeg (RFC 6675 §4): (1) the first lost byte not yet retransmitted, (2) new
/// data, (3) the first un-SACKed byte not yet retransmitted below the highest
/// SACKed byte, (4) the rescue retransmission: one segment ending at the highest
/// outstanding un-SACKed byte.
pub fn next_seg(sb: &Scoreboard, st: &NextSegState) -> Next {
    let lost = (st.dupthresh, st.mss, st.all_lost_below);
    let top = sb
        .high_sacked(st.snd_una)
        .max(st.all_lost_below.min(st.snd_max));
    // nothing below HighRxt is sent again; IsLost only weakens going up, so the
    // first hole above HighRxt decides between rules 1 and 3
    let from = st.snd_una.max(sb.rxt_end);
    let hole = sb.first_hole(from, top, lost).map(|(s, e, lost)| {
        // a hole across the timeout's recovery point is two (see `holes`)
        let e = if s < st.all_lost_below {
            e.min(st.all_lost_below)
        } else {
            e
        };
        (s, (e - s).min(st.mss), lost)
    });
    let next = match hole {
        Some((s, len, true)) => Next::Retransmit(s, len),
        _ if st.snd_max < st.limit => Next::New(st.snd_max, (st.limit - st.snd_max).min(st.mss)),
        Some((s, len, false)) => Next::Retransmit(s, len),
        None => rescue(sb, st),
    };
    debug_assert_eq!(next, next_seg_by_walk(sb, st));
    next
}

/// Rule 4, the rescue retransmission, when it may be used.
fn rescue(sb: &Scoreboard, st: &NextSegState) -> Next {
    let high = sb.high_sacked(st.snd_una).max(st.snd_una);
    if st.rescue && st.snd_max > high {
        let len = (st.snd_max - high).min(st.mss);
        return Next::Rescue(st.snd_max - len, len);
    }
    Next::Nothing
}

/// NextSeg as RFC 6675 words it, hole by hole (what [`next_seg`] must equal; debug
/// builds check it on every call).
pub fn next_seg_by_walk(sb: &Scoreboard, st: &NextSegState) -> Next {
    let lost = (st.dupthresh, st.mss, st.all_lost_below);
    let top = sb
        .high_sacked(st.snd_una)
        .max(st.all_lost_below.min(st.snd_max));
    let mut unlost = None;
    for (s, e, is_lost) in sb.holes(st.snd_una.max(sb.rxt_end), top, lost) {
        if is_lost {
            return Next::Retransmit(s, (e - s).min(st.mss));
        }
        unlost.get_or_insert((s, (e - s).min(st.mss)));
    }
    if st.snd_max < st.limit {
        return Next::New(st.snd_max, (st.limit - st.snd_max).min(st.mss));
    }
    match unlost {
        Some((s, len)) => Next::Retransmit(s, len),
        None => rescue(sb, st),
    }
}

/// Proportional Rate Reduction (RFC 6937, RFC 9937) with the slow-start reduction
/// bound on safe ACKs (Linux's choice): during recovery the window follows the data
/// the receiver reports delivered, so that by the end of recovery it has come down
/// to ssthresh without bursts or stalls. Counted in one unit throughout, the
/// caller's: bytes on the SACK paths, segments on `reno_sack`'s (as Linux counts it
/// there).
#[derive(Clone, Copy, Debug, Default)]
pub struct Prr {
    /// Data delivered to the receiver during recovery (`prr_delivered`).
    pub delivered: u64,
    /// Data sent during recovery (`prr_out`).
    pub out: u64,
    /// The flight size when recovery started (RecoverFS; Linux's `prior_cwnd`).
    pub recover_fs: u64,
}

impl Prr {
    /// Recovery starts with `flight` outstanding.
    pub fn start(flight: u64) -> Self {
        Prr {
            delivered: 0,
            out: 0,
            recover_fs: flight.max(1),
        }
    }

    /// An ACK reported `delivered` more; the window for now (RFC 6937 §3.1), given
    /// the pipe and ssthresh; `mss` is a segment in the same unit. Below ssthresh
    /// the slow-start reduction bound allows one MSS more than was delivered only on
    /// a `safe` ACK, one that advanced SND.UNA and marked nothing newly lost
    /// (RFC 9937's SafeACK, which obsoletes RFC 6937's choice of one bound for every
    /// ACK; Linux's `tcp_cwnd_reduction`: `FLAG_SND_UNA_ADVANCED && !newly_lost`);
    /// any other ACK gets the conservative bound. With the MSS on every ACK, each
    /// duplicate ACK of a recovery with losses left sent a segment more than it
    /// delivered.
    pub fn on_ack(
        &mut self,
        delivered: u64,
        pipe: u64,
        ssthresh: u64,
        mss: u64,
        safe: bool,
    ) -> u64 {
        self.delivered += delivered;
        let sndcnt = if pipe > ssthresh {
            // proportional: out ≈ delivered · ssthresh / RecoverFS
            let want =
                (self.delivered as u128 * ssthresh as u128).div_ceil(self.recover_fs as u128);
            (want as u64).saturating_sub(self.out)
        } else {
            // slow-start reduction bound on a safe ACK: at most one more MSS than
            // delivered; the conservative bound otherwise
            let ssrb = if safe { mss } else { 0 };
            let limit = self.delivered.saturating_sub(self.out).max(delivered) + ssrb;
            (ssthresh - pipe).min(limit)
        };
        pipe + sndcnt
    }
}

#[cfg(test)]
mod tests;
