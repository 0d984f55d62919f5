//! The SACK options of the ACKs in flight. A packet has no room for three blocks,
//! so an ACK that carries SACK blocks holds a handle to its option here in its
//! `len` (an ACK has no payload): the handle plus one, 0 for none. The option is
//! taken back when the ACK reaches its sender or is dropped, so the store holds at
//! most one entry per ACK alive. Runs without SACK never touch it.

use crate::transport::sack::SackOption;

/// Options of live ACKs, by handle, with a free list.
#[derive(Clone, Default)]
pub struct SackStore {
    options: Vec<SackOption>,
    free: Vec<u32>,
}

impl SackStore {
    /// Stores `opt` and returns what the ACK's `len` carries: 0 for an option
    /// without blocks (nothing stored), the handle plus one otherwise.
    pub fn put(&mut self, opt: SackOption) -> u32 {
        if opt.n == 0 {
            return 0;
        }
        match self.free.pop() {
            Some(h) => {
                self.options[h as usize] = opt;
                h + 1
            }
            None => {
                self.options.push(opt);
                self.options.len() as u32
            }
        }
    }

    /// Takes back the option of an ACK whose `len` is `tag` (see [`put`](Self::put)).
    pub fn take(&mut self, tag: u32) -> Option<SackOption> {
        let h = tag.checked_sub(1)?;
        self.free.push(h);
        Some(self.options[h as usize])
    }

    /// Bytes it holds now.
    pub fn bytes(&self) -> u64 {
        (self.options.capacity() * std::mem::size_of::<SackOption>() + self.free.capacity() * 4)
            as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_reused_and_empty_options_take_none() {
        let mut s = SackStore::default();
        let mut o = SackOption::default();
        assert_eq!(s.put(o), 0);
        assert_eq!(s.take(0), None);
        o.n = 1;
        o.blocks[0] = (10, 20);
        let a = s.put(o);
        o.blocks[0] = (30, 40);
        let b = s.put(o);
        assert_eq!((a, b), (1, 2));
        assert_eq!(s.take(a).unwrap().blocks(), [(10, 20)]);
        let c = s.put(o);
        assert_eq!(c, 1, "the freed handle is reused");
        assert_eq!(s.take(b).unwrap().blocks(), [(30, 40)]);
    }
}
