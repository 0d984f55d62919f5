//! Scenarios: the format ([`spec`], [`workloads`], [`tenants`]: serde structs of
//! what users write), reading it with precise errors ([`parse`], [`keys`]), and
//! turning it into a simulation ([`build`]: the fabric, transports, flows and
//! tenants' VMs, one file each under `build/`), refused up front when it would not
//! fit ([`estimate`]).

pub mod build;
pub mod estimate;
pub mod file_workloads;
pub mod inputs;
pub mod keys;
pub mod parse;
pub mod qshare;
pub mod spec;
pub mod tenants;
pub mod workloads;

use std::path::Path;

pub use inputs::{InputTable, Inputs};
pub use parse::{Format, Scenario, ScenarioError};

use crate::sim::footprint::{DEFAULT_BUDGET, DEFAULT_MAX_EVENTS};
use crate::sim::Sim;

/// How to load a scenario: what is not part of the scenario itself.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadOptions {
    /// Replaces `simulation.seed` (any `u64`; TOML integers stop at 2^63 − 1).
    pub seed: Option<u64>,
    /// The most memory the run may use, bytes: a scenario whose estimate exceeds it is
    /// refused, a run that grows past it stops with an error.
    pub memory_budget: u64,
    /// The most events a run may be estimated to need (about two days by default); a
    /// scenario estimated above it is refused.
    pub max_events: f64,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            seed: None,
            memory_budget: DEFAULT_BUDGET,
            max_events: DEFAULT_MAX_EVENTS,
        }
    }
}

/// Parses and builds a scenario. `file` names it in errors; relative paths inside
/// it (CDF files) are taken from `base_dir`.
pub fn load(
    text: &str,
    file: &str,
    base_dir: &Path,
    format: Format,
    opts: &LoadOptions,
) -> Result<Sim, ScenarioError> {
    load_with(text, (file, base_dir), format, opts, &Inputs::default())
}

/// [`load`], with the tables the scenario names by file (`trace` workloads) as the
/// caller read them ([`Inputs`]): a `trace` workload whose file is not among them is
/// refused with where to read it.
pub fn load_with(
    text: &str,
    (file, base_dir): (&str, &Path),
    format: Format,
    opts: &LoadOptions,
    inputs: &Inputs,
) -> Result<Sim, ScenarioError> {
    let (mut scenario, root) = parse::parse_with_root(text, file, format)?;
    if let Some(seed) = opts.seed {
        scenario.simulation.seed = seed;
    }
    let ctx = build::Ctx {
        file,
        root: &root,
        base_dir,
        inputs,
    };
    build::build(&scenario, &ctx, opts)
}

/// The switches of scenario `text` as a deployment sees them, as JSON
/// ([`build::layout::switch_layout`]): the network keys after the presets and each
/// switch's ports.
pub fn switch_layout(
    text: &str,
    (file, base_dir): (&str, &Path),
    format: Format,
    inputs: &Inputs,
) -> Result<serde_json::Value, ScenarioError> {
    let (scenario, root) = parse::parse_with_root(text, file, format)?;
    let ctx = build::Ctx {
        file,
        root: &root,
        base_dir,
        inputs,
    };
    build::layout::switch_layout(&scenario, &ctx)
}

/// Reads, parses and builds the scenario file at `path` with default options.
pub fn load_file(path: &Path) -> Result<Sim, ScenarioError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        ScenarioError::at(&file, "", None, format!("cannot read the scenario: {e}"))
    })?;
    let format = if path.extension().is_some_and(|e| e == "json") {
        Format::Json
    } else {
        Format::Toml
    };
    load(
        &text,
        &file,
        path.parent().unwrap_or(Path::new(".")),
        format,
        &LoadOptions::default(),
    )
}
