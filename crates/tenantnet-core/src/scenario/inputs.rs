//! The tables a scenario names by file (a `trace` workload's flows), read by the
//! caller before the scenario is built: the Python package reads CSV and Parquet
//! with Arrow (`python/tenantnet/sim/tables.py`) and hands each file's columns here,
//! so that one library reads every format and the core checks every value with the
//! network at hand. A value's error names the file, its row and its column.

use std::collections::HashMap;

use super::parse::ScenarioError;
use crate::table::Column;
use crate::units::{parse_bytes, parse_duration, parse_rate, quoted, ByteSize};

/// The tables read for a scenario, by the file name as the scenario writes it.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    tables: HashMap<String, InputTable>,
}

impl Inputs {
    /// Adds the table read from `file` (as the scenario writes it).
    pub fn insert(&mut self, file: &str, table: InputTable) {
        self.tables.insert(file.to_string(), table);
    }

    /// The table read from `file`, if the caller read it.
    pub fn get(&self, file: &str) -> Option<&InputTable> {
        self.tables.get(file)
    }
}

/// One file's columns: numbers as floats (missing values `None`), text
/// dictionary-encoded ([`Column::Str`], a missing value coded `u32::MAX`).
#[derive(Clone, Debug)]
pub struct InputTable {
    /// The file's path as errors show it.
    pub path: String,
    /// Its rows.
    pub rows: usize,
    /// (name, column), each `rows` long.
    pub columns: Vec<(String, Column)>,
}

/// A missing text value's code in [`Column::Str`].
pub const MISSING: u32 = u32::MAX;

/// A value of one row, as a column holds it.
#[derive(Clone, Copy, Debug)]
pub enum Cell<'a> {
    /// A number.
    Num(f64),
    /// Text.
    Text(&'a str),
    /// No value.
    Missing,
}

impl InputTable {
    /// The column called `name`, if the file has one.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }

    /// The names of its columns.
    pub fn names(&self) -> Vec<&str> {
        self.columns.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// Row `row` (from 0) of `col`.
    pub fn cell<'a>(col: &'a Column, row: usize) -> Cell<'a> {
        match col {
            Column::OptF64(v) => v[row].map_or(Cell::Missing, Cell::Num),
            Column::F64(v) => Cell::Num(v[row]),
            Column::U64(v) => Cell::Num(v[row] as f64),
            Column::OptU64(v) => v[row].map_or(Cell::Missing, |x| Cell::Num(x as f64)),
            Column::Str { codes, labels } => match codes[row] {
                MISSING => Cell::Missing,
                c => Cell::Text(&labels[c as usize]),
            },
        }
    }

    /// An error at row `row` (from 0; shown from 1) of column `col`, showing `cell`;
    /// `whose` says which key of the scenario named the file.
    pub fn err(
        &self,
        row: usize,
        col: &str,
        cell: Cell,
        message: &str,
        whose: &str,
    ) -> ScenarioError {
        let value = match cell {
            Cell::Num(x) => Some(format!("{x}")),
            Cell::Text(s) => Some(quoted(s)),
            Cell::Missing => None,
        };
        let message = format!("{message} ({whose})");
        ScenarioError::at(
            &self.path,
            format!("row {}, column {col}", row + 1),
            value,
            message,
        )
    }
}

/// The longest time simulated, s.
const MAX_SECONDS: f64 = 1e6;

/// Seconds from a number, or a duration with its unit (`"1.5ms"`), in picoseconds.
pub fn seconds(cell: Cell) -> Result<Option<u64>, String> {
    match cell {
        Cell::Missing => Ok(None),
        Cell::Num(x) if (0.0..=MAX_SECONDS).contains(&x) => Ok(Some(crate::engine::from_secs(x))),
        Cell::Num(_) => Err("expected a time from 0 to 1000000 seconds".into()),
        // a number written as text (a column with units in other rows): seconds
        Cell::Text(s) => match s.trim().parse::<f64>() {
            Ok(x) => seconds(Cell::Num(x)),
            Err(_) => parse_duration(s).map(Some),
        },
    }
}

/// Bytes from a whole number, or a size with its unit (`"1.5MB"`; packets need the
/// packet size `pkt`).
pub fn bytes(cell: Cell, pkt: u64) -> Result<Option<u64>, String> {
    match cell {
        Cell::Missing => Ok(None),
        Cell::Num(x) if x.is_finite() && x >= 1.0 && x.fract() == 0.0 && x < 2f64.powi(63) => {
            Ok(Some(x as u64))
        }
        Cell::Num(_) => Err("expected a positive whole number of bytes".into()),
        // a number written as text (a column with units in other rows): bytes
        Cell::Text(s) if s.trim().parse::<f64>().is_ok() => {
            bytes(Cell::Num(s.trim().parse::<f64>().unwrap_or(0.0)), pkt)
        }
        Cell::Text(s) => match parse_bytes(s)? {
            ByteSize::Bytes(0) | ByteSize::Packets(0) => Err("expected a positive size".into()),
            b => Ok(Some(b.bytes(pkt))),
        },
    }
}

/// Bits per second from a number, or a rate with its unit (`"2Gbps"`); 0 is allowed
/// (what a missing value means is the caller's).
pub fn rate(cell: Cell) -> Result<Option<u64>, String> {
    const BAD: &str = "expected a rate of at least 0, in bits per second or with its unit";
    match cell {
        Cell::Missing => Ok(None),
        Cell::Num(x) if (0.0..1e18).contains(&x) => Ok(Some(x.round() as u64)),
        Cell::Num(_) => Err(BAD.into()),
        // a number written as text (a column with units in other rows): bit/s
        Cell::Text(s) => match s.trim().parse::<f64>() {
            Ok(x) => rate(Cell::Num(x)),
            Err(_) if s.trim().is_empty() => Ok(None),
            Err(_) => parse_rate(s).map(Some).map_err(|e| format!("{e}; {BAD}")),
        },
    }
}
