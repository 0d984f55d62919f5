//! Scenarios: the TOML format ([`spec`], [`workloads`], [`tenants`]), reading it
//! with precise errors ([`parse`]), and turning it into a simulation ([`build`],
//! [`vswitch`] for tenants' VMs).

pub mod build;
pub mod fabric;
pub mod flows;
pub mod parse;
pub mod spec;
pub mod tenants;
pub mod vswitch;
pub mod workloads;

use std::path::Path;

pub use parse::{Format, Scenario, ScenarioError};

use crate::sim::Sim;

/// Parses and builds a scenario. `file` names it in errors; relative paths inside
/// it (CDF files) are taken from `base_dir`.
pub fn load(text: &str, file: &str, base_dir: &Path, format: Format) -> Result<Sim, ScenarioError> {
    let (scenario, root) = parse::parse_with_root(text, file, format)?;
    let ctx = build::Ctx {
        file,
        root: &root,
        base_dir,
    };
    build::build(&scenario, &ctx)
}

/// Reads, parses and builds the scenario file at `path`.
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
    )
}
