//! Reading a scenario file, with errors that name the file, the key, the value and
//! the expected form.
//!
//! The text is read into a TOML table, then deserialized in two steps: the whole
//! file with `topology` and each workload kept as plain tables, then each of those
//! by its `kind`. `serde_path_to_error` tracks the key path through every step, so
//! an error deep inside `[[workloads]]` still names `workloads[2].size`.

use std::fmt;

use serde::de::DeserializeOwned;
use serde_path_to_error::Segment;
use toml::{Table, Value};

use super::spec::{ScenarioSpec, TopologySpec, TOPOLOGY_KINDS};
use super::workloads::{WorkloadCommon, WorkloadKind, WorkloadSpec, COMMON_KEYS, WORKLOAD_KINDS};

/// A scenario that cannot be run, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The scenario file (or a name standing for it).
    pub file: String,
    /// Dotted key path, e.g. `workloads[0].size`; empty for whole-file errors.
    pub key: String,
    /// The offending value as written (TOML syntax), when there is one.
    pub value: Option<String>,
    /// What is wrong and what was expected.
    pub message: String,
}

impl ScenarioError {
    /// An error at `key`, showing `value`.
    pub fn at(
        file: &str,
        key: impl Into<String>,
        value: Option<String>,
        message: impl Into<String>,
    ) -> Self {
        ScenarioError {
            file: file.to_string(),
            key: key.into(),
            value,
            message: message.into(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}: ", self.file)?;
        if !self.key.is_empty() {
            write!(f, "{}", self.key)?;
            if let Some(v) = &self.value {
                write!(f, " = {v}")?;
            }
            write!(f, ": ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// Text formats a scenario can come in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// TOML (scenario files).
    Toml,
    /// JSON (scenarios built in Python as dictionaries).
    Json,
}

/// The parsed scenario, before it is built into a simulation.
pub type Scenario = ScenarioSpec<TopologySpec, WorkloadSpec>;

/// Joins key paths: `join("a", "b")` is `a.b`, `join("a", "[0]")` is `a[0]`.
pub fn join(prefix: &str, rest: &str) -> String {
    match (prefix.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_string(),
        (_, true) => prefix.to_string(),
        _ if rest.starts_with('[') => format!("{prefix}{rest}"),
        _ => format!("{prefix}.{rest}"),
    }
}

/// The value at a dotted key path in `root`, rendered as TOML.
pub fn lookup(root: &Value, key: &str) -> Option<String> {
    let mut v = root;
    for part in key.split('.') {
        let (name, idx) = match part.find('[') {
            Some(i) => (&part[..i], Some(&part[i..])),
            None => (part, None),
        };
        if !name.is_empty() {
            v = v.as_table()?.get(name)?;
        }
        if let Some(idx) = idx {
            for n in idx.split(['[', ']']).filter(|s| !s.is_empty()) {
                v = v.as_array()?.get(n.parse::<usize>().ok()?)?;
            }
        }
    }
    Some(render(v))
}

fn render(v: &Value) -> String {
    match v {
        Value::Table(t) => {
            let inner: Vec<String> = t
                .iter()
                .map(|(k, v)| format!("{k} = {}", render(v)))
                .collect();
            format!("{{ {} }}", inner.join(", "))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(render).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

/// Turns serde's wording into ours: which key, and what was expected.
fn explain(
    file: &str,
    prefix: &str,
    err: serde_path_to_error::Error<toml::de::Error>,
    root: &Value,
) -> ScenarioError {
    let mut path = String::new();
    for seg in err.path().iter() {
        match seg {
            Segment::Seq { index } => path.push_str(&format!("[{index}]")),
            Segment::Map { key } => path = join(&path, key),
            Segment::Enum { variant } => path = join(&path, variant),
            Segment::Unknown => path = join(&path, "?"),
        }
    }
    let key = join(prefix, &path);
    let raw = err.inner().message().trim().to_string();
    if let Some(rest) = raw.strip_prefix("unknown field `") {
        let name = rest.split('`').next().unwrap_or("");
        let expected = rest
            .split_once(", expected ")
            .map(|x| x.1)
            .unwrap_or("no keys");
        // the path already ends with the unknown key
        let last = err.path().iter().next_back();
        let full = match last {
            Some(Segment::Map { key: k }) if k == name => key.clone(),
            _ => join(&key, name),
        };
        let value = lookup(root, &full);
        return ScenarioError::at(
            file,
            full,
            value,
            format!("unknown key; expected {}", expected.replace('`', "")),
        );
    }
    if let Some(rest) = raw.strip_prefix("missing field `") {
        let name = rest.split('`').next().unwrap_or("");
        return ScenarioError::at(file, join(&key, name), None, "required key is missing");
    }
    let message = if let Some(rest) = raw.strip_prefix("unknown variant `") {
        let got = rest.split('`').next().unwrap_or("");
        let expected = rest.split_once(", expected ").map(|x| x.1).unwrap_or("");
        format!(
            "unknown value {got:?}; expected {}",
            expected.replace('`', "\"")
        )
    } else {
        // serde's "invalid type: integer `5`, expected a string" and our unit messages
        raw.replace('`', "")
    };
    ScenarioError::at(file, key.clone(), lookup(root, &key), message)
}

/// Deserializes `value` (found at key path `prefix`) as `T`.
fn de_at<T: DeserializeOwned>(
    file: &str,
    prefix: &str,
    value: Value,
    root: &Value,
) -> Result<T, ScenarioError> {
    serde_path_to_error::deserialize(value).map_err(|e| explain(file, prefix, e, root))
}

/// Removes and returns the `kind` of a tagged table at `prefix`.
fn take_kind<'k>(
    file: &str,
    prefix: &str,
    t: &mut Table,
    kinds: &[&'k str],
    root: &Value,
) -> Result<&'k str, ScenarioError> {
    let key = join(prefix, "kind");
    let expected = format!(
        "one of {}",
        kinds
            .iter()
            .map(|k| format!("{k:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let v = t.remove("kind").ok_or_else(|| {
        ScenarioError::at(
            file,
            &key,
            None,
            format!("required key is missing; expected {expected}"),
        )
    })?;
    let s = v.as_str().unwrap_or("");
    kinds.iter().find(|k| **k == s).copied().ok_or_else(|| {
        ScenarioError::at(
            file,
            &key,
            lookup(root, &key),
            format!("unknown kind; expected {expected}"),
        )
    })
}

fn parse_topology(file: &str, mut t: Table, root: &Value) -> Result<TopologySpec, ScenarioError> {
    let kind = take_kind(file, "topology", &mut t, &TOPOLOGY_KINDS, root)?;
    let v = Value::Table(t);
    let p = "topology";
    Ok(match kind {
        "dumbbell" => TopologySpec::Dumbbell(de_at(file, p, v, root)?),
        "star" => TopologySpec::Star(de_at(file, p, v, root)?),
        "leaf_spine" => TopologySpec::LeafSpine(de_at(file, p, v, root)?),
        "jellyfish" => TopologySpec::Jellyfish(de_at(file, p, v, root)?),
        "graph" => TopologySpec::Graph(de_at(file, p, v, root)?),
        _ => TopologySpec::FatTree(de_at(file, p, v, root)?),
    })
}

fn parse_workload(
    file: &str,
    i: usize,
    mut t: Table,
    root: &Value,
) -> Result<WorkloadSpec, ScenarioError> {
    let p = format!("workloads[{i}]");
    let kind = take_kind(file, &p, &mut t, &WORKLOAD_KINDS, root)?;
    let mut common = Table::new();
    for k in COMMON_KEYS {
        if let Some(v) = t.remove(k) {
            common.insert(k.to_string(), v);
        }
    }
    let common: WorkloadCommon = de_at(file, &p, Value::Table(common), root)?;
    let v = Value::Table(t);
    let kind = match kind {
        "long_lived" => WorkloadKind::LongLived(de_at(file, &p, v, root)?),
        "fixed" => WorkloadKind::Fixed(de_at(file, &p, v, root)?),
        "permutation" => WorkloadKind::Permutation(de_at(file, &p, v, root)?),
        "incast" => WorkloadKind::Incast(de_at(file, &p, v, root)?),
        "poisson" => WorkloadKind::Poisson(de_at(file, &p, v, root)?),
        "cbr" => WorkloadKind::Cbr(de_at(file, &p, v, root)?),
        _ => WorkloadKind::OnOff(de_at(file, &p, v, root)?),
    };
    Ok(WorkloadSpec { common, kind })
}

/// Parses scenario `text` read from `file`.
pub fn parse(text: &str, file: &str, format: Format) -> Result<Scenario, ScenarioError> {
    parse_with_root(text, file, format).map(|(s, _)| s)
}

/// Parses scenario `text`, also returning the raw TOML value (to quote in later errors).
pub fn parse_with_root(
    text: &str,
    file: &str,
    format: Format,
) -> Result<(Scenario, Value), ScenarioError> {
    let root: Value = match format {
        Format::Toml => Value::Table(toml::from_str::<Table>(text).map_err(|e| {
            ScenarioError::at(
                file,
                "",
                None,
                format!("not valid TOML: {}", e.to_string().trim()),
            )
        })?),
        Format::Json => serde_json::from_str::<Value>(text).map_err(|e| {
            ScenarioError::at(file, "", None, format!("not valid scenario JSON: {e}"))
        })?,
    };
    if !root.is_table() {
        return Err(ScenarioError::at(
            file,
            "",
            None,
            "expected a table of scenario keys",
        ));
    }
    let raw: ScenarioSpec<Table, Table> = de_at(file, "", root.clone(), &root)?;
    let topology = parse_topology(file, raw.topology, &root)?;
    let workloads = raw
        .workloads
        .into_iter()
        .enumerate()
        .map(|(i, t)| parse_workload(file, i, t, &root))
        .collect::<Result<Vec<_>, _>>()?;
    let scenario = ScenarioSpec {
        name: raw.name,
        description: raw.description,
        simulation: raw.simulation,
        topology,
        network: raw.network,
        transport: raw.transport,
        tenants: raw.tenants,
        vswitch: raw.vswitch,
        workloads,
        output: raw.output,
    };
    Ok((scenario, root))
}

/// Builds a topology from a `[topology]` table given as JSON text (errors name
/// `source` and keys under `topology`). For tools that need the fabric without a
/// scenario, such as the QShare controller.
pub fn topology(
    json: &str,
    source: &str,
) -> Result<(crate::net::NetworkBuilder, String), ScenarioError> {
    let v: Value = serde_json::from_str(json)
        .map_err(|e| ScenarioError::at(source, "topology", None, format!("not valid JSON: {e}")))?;
    let root = {
        let mut t = Table::new();
        t.insert("topology".into(), v.clone());
        Value::Table(t)
    };
    let Value::Table(t) = v else {
        return Err(ScenarioError::at(
            source,
            "topology",
            None,
            "expected a table",
        ));
    };
    let spec = parse_topology(source, t, &root)?;
    spec.build().map_err(|(param, msg)| {
        let key = join("topology", &param);
        ScenarioError::at(source, key.clone(), lookup(&root, &key), msg)
    })
}

/// The JSON Schema of the scenario format, pretty-printed.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Scenario);
    serde_json::to_string_pretty(&schema).expect("schema serializes")
}
