//! What a Trinity receiver counts on each channel and the feedback it sends back
//! (§III-B, T:L817-827): per interval, how many red packets (or bytes) arrived
//! and how many of them carried a CE mark, in one 64-bit word. Red packets carry
//! their sender's red epoch (`Packet::epoch`, a new one at each cut of R_W under the
//! `refined` profile): the receiver counts the red packets of the newest epoch it has
//! seen in the interval, so the sender can tell marks on packets it sent before its
//! last cut (the epoch word). Without epochs (every packet's is 0) the counts are
//! those of every red packet.

/// Bits of the epoch word's epoch.
const EPOCH_BITS: u32 = 16;
/// Bits of each count in the epoch word (at most 2^24 − 1 packets an interval).
const COUNT_BITS: u32 = 24;

/// A receiver's counts on one channel since its last feedback.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxCounts {
    /// Packets of any colour.
    pub packets: u64,
    /// Red packets.
    pub red: u64,
    /// Red packets marked CE.
    pub red_marked: u64,
    /// Wire bytes of red packets.
    pub red_bytes: u64,
    /// Wire bytes of red packets marked CE.
    pub red_marked_bytes: u64,
    /// The epoch of the red packets counted (the newest seen).
    pub epoch: u16,
}

impl RxCounts {
    /// Counts a packet of `size` bytes; a red one of an older `epoch` than the newest
    /// seen in the interval is not counted, one of a newer restarts the red counts.
    pub fn add(&mut self, size: u32, red: bool, marked: bool, epoch: u16) {
        self.packets += 1;
        if red && epoch != self.epoch {
            if (epoch.wrapping_sub(self.epoch) as i16) < 0 && self.red > 0 {
                return;
            }
            *self = RxCounts {
                packets: self.packets,
                epoch,
                ..RxCounts::default()
            };
        }
        if red {
            self.red += 1;
            self.red_bytes += size as u64;
            if marked {
                self.red_marked += 1;
                self.red_marked_bytes += size as u64;
            }
        }
    }

    /// The paper's feedback: red packets marked and red packets, 32 bits each.
    pub fn paper_word(&self) -> u64 {
        let c = |x: u64| x.min(u32::MAX as u64);
        c(self.red_marked) << 32 | c(self.red)
    }

    /// The `refined` profile's feedback: red packets marked and red packets of the
    /// newest epoch, 24 bits each (capped), and that epoch.
    pub fn epoch_word(&self) -> u64 {
        let cap = (1u64 << COUNT_BITS) - 1;
        let (marked, red) = (self.red_marked.min(cap), self.red.min(cap));
        marked << (COUNT_BITS + EPOCH_BITS) | red << EPOCH_BITS | self.epoch as u64
    }

    /// The module's feedback: F, the whole percentage of red bytes marked (0
    /// without red bytes), as `trinity.c:389-399` computes it.
    pub fn code_word(&self) -> u64 {
        (100 * self.red_marked_bytes)
            .checked_div(self.red_bytes)
            .unwrap_or(0)
    }
}

/// β and whether no red packet arrived, from a paper feedback word.
pub fn decode_paper(word: u64) -> (f64, bool) {
    let (marked, red) = (word >> 32, word & u32::MAX as u64);
    if red == 0 {
        (0.0, true)
    } else {
        (marked as f64 / red as f64, false)
    }
}

/// β, whether no red packet arrived, and the red packets' epoch, from an epoch word.
pub fn decode_epoch(word: u64) -> (f64, bool, u16) {
    let red = (word >> EPOCH_BITS) & ((1 << COUNT_BITS) - 1);
    let marked = word >> (COUNT_BITS + EPOCH_BITS);
    let epoch = (word & ((1 << EPOCH_BITS) - 1)) as u16;
    if red == 0 {
        (0.0, true, epoch)
    } else {
        (marked as f64 / red as f64, false, epoch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feedback_words_round_trip() {
        let mut c = RxCounts::default();
        c.add(1500, false, false, 0);
        assert_eq!(decode_paper(c.paper_word()), (0.0, true));
        for i in 0..8 {
            c.add(1500, true, i % 4 == 0, 0);
        }
        c.add(64, true, true, 0);
        assert_eq!(decode_paper(c.paper_word()), (3.0 / 9.0, false));
        // bytes, truncated: 3064 of 12064 marked = 25.4 %
        assert_eq!(c.code_word(), 25);
        assert_eq!(RxCounts::default().code_word(), 0);
    }

    #[test]
    fn an_epoch_word_counts_the_newest_epochs_red_packets() {
        let mut c = RxCounts::default();
        assert_eq!(decode_epoch(c.epoch_word()), (0.0, true, 0));
        // epoch 0: two red, both marked; then epoch 1 arrives: counted afresh
        c.add(1500, true, true, 0);
        c.add(1500, true, true, 0);
        c.add(1500, true, false, 1);
        c.add(1500, true, true, 1);
        // a late packet of epoch 0 (sent before the cut) is not counted
        c.add(1500, true, true, 0);
        c.add(1500, false, false, 0);
        assert_eq!(c.packets, 6);
        assert_eq!(decode_epoch(c.epoch_word()), (0.5, false, 1));
        // epochs wrap: 0 is newer than u16::MAX
        let mut w = RxCounts::default();
        w.add(1500, true, true, u16::MAX);
        w.add(1500, true, false, 0);
        assert_eq!(decode_epoch(w.epoch_word()), (0.0, false, 0));
        // counts above 2^24 - 1 are capped, not carried into the next field
        let big = RxCounts {
            red: 1 << 25,
            red_marked: 1 << 25,
            epoch: 7,
            ..RxCounts::default()
        };
        assert_eq!(decode_epoch(big.epoch_word()), (1.0, false, 7));
    }
}
