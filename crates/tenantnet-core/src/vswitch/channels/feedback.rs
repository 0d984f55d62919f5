//! What a Trinity receiver counts on each channel and the feedback it sends back
//! (§III-B, T:L817-827): per interval, how many red packets (or bytes) arrived
//! and how many of them carried a CE mark, in one 64-bit word.

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
}

impl RxCounts {
    /// Counts a packet of `size` bytes.
    pub fn add(&mut self, size: u32, red: bool, marked: bool) {
        self.packets += 1;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feedback_words_round_trip() {
        let mut c = RxCounts::default();
        c.add(1500, false, false);
        assert_eq!(decode_paper(c.paper_word()), (0.0, true));
        for i in 0..8 {
            c.add(1500, true, i % 4 == 0);
        }
        c.add(64, true, true);
        assert_eq!(decode_paper(c.paper_word()), (3.0 / 9.0, false));
        // bytes, truncated: 3064 of 12064 marked = 25.4 %
        assert_eq!(c.code_word(), 25);
        assert_eq!(RxCounts::default().code_word(), 0);
    }
}
