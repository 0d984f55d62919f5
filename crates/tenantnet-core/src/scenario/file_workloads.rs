//! The workloads whose traffic comes from files the scenario names: a trace of flow
//! records (`trace`) and traffic matrices (`matrix`). The files are read by the
//! caller (`crate::scenario::Inputs`); their flows are made in
//! `scenario/build/flows/trace.rs` and `matrix.rs`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::workloads::SizeSampling;
use crate::units::TimeSpan;

fn zero() -> TimeSpan {
    TimeSpan(0)
}

fn unit() -> f64 {
    1.0
}

/// Flows replayed from a file of flow records, one row per flow: `start` (seconds,
/// or a time with its unit), `src`, `dst` (host names, or the row's tenant's VM
/// names), `size` (bytes, or a size with its unit; empty: a long-lived flow), and
/// optionally `stop`, `tenant`, `dscp`, `protocol` (`tcp` or `dctcp`) and `id` (rows
/// are taken in the order of their ids, else in the file's order; they need not be
/// sorted by time). CSV or Parquet, read with Arrow by the Python package.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    /// The file, relative to the scenario (`.csv`, `.csv.gz`, `.parquet`).
    pub file: String,
    /// Added to every row's start and stop ["0s"].
    #[serde(default = "zero")]
    pub start: TimeSpan,
    /// Multiplies every row's start and stop (2: the trace takes twice as long, at half
    /// its arrival rate) [1].
    #[serde(default = "unit")]
    pub time_scale: f64,
    /// Multiplies every row's size, rounded to whole bytes (2: twice the bytes in the
    /// same arrivals, twice the offered load) [1].
    #[serde(default = "unit")]
    pub load_scale: f64,
}

/// One traffic matrix of a series and when it takes over.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MatrixStep {
    /// When this matrix takes over (until the next one's `at`, or `stop`).
    pub at: TimeSpan,
    /// Its file, relative to the scenario.
    pub file: String,
}

/// A tenant's traffic matrix: flows between each pair of hosts (or VMs) arrive as a
/// Poisson process, with sizes from a CDF, so that each pair's offered load is its
/// entry. A matrix is a CSV or Parquet file, either a list (`src`, `dst`, `rate`) or
/// a dense table (the first column names the sources, every other column is a
/// destination); a rate is bits per second, or a rate with its unit (`"2Gbps"`).
/// Give one matrix (`file`) or a series over time (`series`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Matrix {
    /// The matrix file, for the whole run (or give `series`).
    #[serde(default)]
    pub file: Option<String>,
    /// Matrices over time: `[{ at = "0s", file = "tm0.csv" }, …]`, in order of `at`.
    #[serde(default)]
    pub series: Option<Vec<MatrixStep>>,
    /// Built-in flow-size distribution: `websearch`, `datamining`, ….
    #[serde(default)]
    pub cdf: Option<String>,
    /// A CDF file instead (`size_bytes cumulative_probability` per line).
    #[serde(default)]
    pub cdf_file: Option<String>,
    /// When the first matrix takes over, with `file` ["0s"].
    #[serde(default = "zero")]
    pub start: TimeSpan,
    /// When flows stop arriving.
    pub stop: TimeSpan,
    /// How sizes are drawn [stratified].
    #[serde(default)]
    pub sizes: SizeSampling,
}
