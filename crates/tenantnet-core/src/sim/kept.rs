//! Rows a run records on request, kept up to a limit: the earliest (by the rows'
//! order, time first), the same set on any number of threads. Each partition of a
//! parallel run keeps at most the limit since it last handed its rows over; the run
//! keeps the earliest `limit` of all it was handed. The packet capture and the flow
//! trace record this way.

use serde::Serialize;

/// What a packet capture or a flow trace kept (`summary.json`'s `capture` and
/// `flow_trace`).
#[derive(Clone, Debug, Serialize)]
pub struct KeptSummary {
    /// Rows kept (packets, or the trace's rows).
    pub rows: u64,
    /// Whether rows past the limit were left out (the earliest kept).
    pub truncated: bool,
}

/// Rows of type `T`, at most `limit` kept.
#[derive(Clone, Debug, Default)]
pub struct Kept<T> {
    /// The most rows kept.
    pub limit: u64,
    /// The rows kept, in the order taken (sorted by [`Kept::finish`]).
    pub rows: Vec<T>,
    /// Whether rows past the limit were left out.
    pub full: bool,
}

impl<T> Kept<T> {
    /// What was kept, for the summary.
    pub fn summary(&self) -> KeptSummary {
        KeptSummary {
            rows: self.rows.len() as u64,
            truncated: self.full,
        }
    }
}

impl<T: Ord> Kept<T> {
    /// Nothing kept yet, at most `limit` rows.
    pub fn new(limit: u64) -> Self {
        Kept {
            limit,
            rows: Vec::new(),
            full: false,
        }
    }

    /// Keeps `row` unless `limit` rows are already kept.
    #[inline]
    pub fn push(&mut self, row: T) {
        if self.rows.len() as u64 >= self.limit {
            self.full = true;
        } else {
            self.rows.push(row);
        }
    }

    /// Takes in what the partitions kept since the last call, keeping the earliest
    /// `limit`.
    pub fn absorb<'a>(&mut self, parts: impl Iterator<Item = &'a mut Kept<T>>)
    where
        T: 'a,
    {
        for p in parts {
            self.rows.append(&mut p.rows);
            self.full |= p.full;
        }
        if self.rows.len() as u64 > self.limit {
            self.finish();
        }
    }

    /// Sorts the rows and keeps the earliest `limit`.
    pub fn finish(&mut self) {
        self.rows.sort_unstable();
        if self.rows.len() as u64 > self.limit {
            self.rows.truncate(self.limit as usize);
            self.full = true;
        }
    }
}
