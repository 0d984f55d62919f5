//! The column tables a run and its mechanisms produce (flows, throughput, queues,
//! links, and the controllers' and policies' own records). A neutral module: the
//! mechanisms that record write tables without depending on the simulation that
//! collects them (`crate::sim::results`); the Python layer turns each into a pandas
//! DataFrame.

/// One column of a results table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    /// Unsigned integers.
    U64(Vec<u64>),
    /// Floats.
    F64(Vec<f64>),
    /// Floats, some missing.
    OptF64(Vec<Option<f64>>),
    /// Unsigned integers, some missing.
    OptU64(Vec<Option<u64>>),
    /// Strings, dictionary-encoded: each row is an index into `labels`.
    Str {
        /// Row values.
        codes: Vec<u32>,
        /// Distinct strings.
        labels: Vec<String>,
    },
}

impl Column {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::OptF64(v) => v.len(),
            Column::OptU64(v) => v.len(),
            Column::Str { codes, .. } => codes.len(),
        }
    }

    /// Whether the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn strings(labels: Vec<String>, codes: Vec<u32>) -> Column {
        Column::Str { codes, labels }
    }
}

/// A named table of equal-length columns.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Table name (`flows`, `throughput`, `queues`, `links`).
    pub name: &'static str,
    /// (column name, column).
    pub columns: Vec<(&'static str, Column)>,
}
