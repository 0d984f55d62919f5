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

use super::keys::{self, quote};
use super::spec::{ScenarioSpec, TopologySpec, TransportSpec, TOPOLOGY_KINDS};
use super::tenants::policy_table_defaults;
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

pub use super::keys::{join, lookup};

/// A serde path as a key path.
fn path_of(segs: &[&Segment]) -> String {
    let mut path = String::new();
    for seg in segs {
        match seg {
            Segment::Seq { index } => path.push_str(&format!("[{index}]")),
            Segment::Map { key } => path = join(&path, &quote(key)),
            Segment::Enum { variant } => path = join(&path, &quote(variant)),
            Segment::Unknown => path = join(&path, "?"),
        }
    }
    path
}

/// Turns serde's wording into ours: which key, and what was expected.
fn explain(
    file: &str,
    prefix: &str,
    err: serde_path_to_error::Error<toml::de::Error>,
    root: &Value,
) -> ScenarioError {
    let segs: Vec<&Segment> = err.path().iter().collect();
    let key = join(prefix, &path_of(&segs));
    let raw = err.inner().message().trim().to_string();
    if let Some(rest) = raw.strip_prefix("unknown field `") {
        // "unknown field `x`, expected one of …" or "…`, there are no fields"
        let name = rest
            .split_once("`, ")
            .map_or(rest.trim_end_matches('`'), |(n, _)| n);
        // the path may already end with the unknown key
        let parent = match segs.last() {
            Some(Segment::Map { key: k }) if k == name => {
                join(prefix, &path_of(&segs[..segs.len() - 1]))
            }
            _ => key.clone(),
        };
        let full = join(&parent, &quote(name));
        let expected = keys::expected(root, &parent)
            .map(|e| e.replacen("a table of ", "one of ", 1))
            .unwrap_or_else(|| "no keys here".into());
        return ScenarioError::at(
            file,
            full.clone(),
            lookup(root, &full),
            format!("unknown key; expected {expected}"),
        );
    }
    if let Some(rest) = raw.strip_prefix("missing field `") {
        let name = rest.split('`').next().unwrap_or("");
        return ScenarioError::at(
            file,
            join(&key, &quote(name)),
            None,
            "required key is missing",
        );
    }
    let wrong_shape = [
        "invalid type:",
        "invalid value:",
        "invalid length",
        "wanted exactly",
    ]
    .iter()
    .any(|p| raw.starts_with(p));
    let message = if let Some(rest) = raw.strip_prefix("unknown variant `") {
        let got = rest.split('`').next().unwrap_or("");
        let expected = keys::expected(root, &key).unwrap_or_else(|| {
            let e = rest.split_once(", expected ").map(|x| x.1).unwrap_or("");
            e.replace('`', "\"")
        });
        format!(
            "unknown value {}; expected {expected}",
            crate::units::quoted(got)
        )
    } else if let (true, Some(expected)) = (wrong_shape, keys::expected(root, &key)) {
        format!("expected {expected}")
    } else if let Some(expected) = serde_expected(&raw) {
        format!("expected {expected}")
    } else {
        // our own messages (units, hosts, DSCP values)
        raw.replace('`', "")
    };
    ScenarioError::at(file, key.clone(), lookup(root, &key), message)
}

/// What serde's "invalid type: …, expected …" (or "invalid value", "invalid length")
/// says is expected, in the words the rest of the messages use; None for any other
/// message.
fn serde_expected(raw: &str) -> Option<String> {
    let shaped = ["invalid type:", "invalid value:", "invalid length"];
    if !shaped.iter().any(|p| raw.starts_with(p)) {
        return None;
    }
    let (_, want) = raw.rsplit_once(", expected ")?;
    let want = want.trim().trim_end_matches('.').replace('`', "");
    let words = match want.as_str() {
        "i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64" | "usize" | "isize" => {
            "a whole number".to_string()
        }
        "f32" | "f64" => "a number".into(),
        "a boolean" => "true or false".into(),
        "a sequence" => "a list".into(),
        "a map" => "a table".into(),
        "string only" | "a borrowed string" => "a string".into(),
        other => other
            .replace("a sequence", "a list")
            .replace("a map", "a table")
            .replace("unit variant", "a name"),
    };
    Some(words)
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
        "request_response" => WorkloadKind::RequestResponse(de_at(file, &p, v, root)?),
        "pingpong" => WorkloadKind::PingPong(de_at(file, &p, v, root)?),
        "closed_loop" => WorkloadKind::ClosedLoop(de_at(file, &p, v, root)?),
        "trace" => WorkloadKind::Trace(de_at(file, &p, v, root)?),
        "matrix" => WorkloadKind::Matrix(de_at(file, &p, v, root)?),
        _ => WorkloadKind::OnOff(de_at(file, &p, v, root)?),
    };
    Ok(WorkloadSpec { common, kind })
}

/// A TOML syntax error as one line: where, and what is wrong (the parser's own
/// message quotes the offending line, which may be megabytes long).
fn toml_syntax(text: &str, e: &toml::de::Error) -> String {
    let mut what = e.message().trim().trim_end_matches('.').to_string();
    let huge = what.contains("value was too large")
        || what.contains("number too large")
        || (what.contains("invalid type: integer") && what.contains("as i128"));
    if huge {
        let shown = what.split('`').nth(1).filter(|_| what.contains('`'));
        what = format!(
            "{}a whole number beyond 9223372036854775807 (2^63 - 1), the largest a scenario holds",
            shown.map_or(String::new(), |n| format!("{n} is "))
        );
    }
    match e.span() {
        Some(span) => {
            let start = span.start.min(text.len());
            let before = &text[..start];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            let shown = text[start - before.rsplit('\n').next().map_or(0, str::len)..]
                .lines()
                .next()
                .unwrap_or("")
                .trim();
            let quoted = crate::units::quoted(shown);
            let shown = &quoted[1..quoted.len() - 1];
            format!("not valid TOML: line {line}, column {column}: {what} (the line: {shown})")
        }
        None => format!("not valid TOML: {what}"),
    }
}

/// A JSON value as the TOML value a scenario file would hold; else the key path, the
/// value and why TOML cannot hold it (null, an integer beyond 2^63 - 1).
fn from_json(v: &serde_json::Value, path: &str) -> Result<Value, (String, String, String)> {
    use serde_json::Value as J;
    let beyond = || {
        "expected a whole number from -9223372036854775808 to 9223372036854775807 (a \
         scenario's integers)"
            .to_string()
    };
    Ok(match v {
        J::Null => {
            let why = "expected a value (a scenario has no null: leave the key out)";
            return Err((path.to_string(), "null".into(), why.into()));
        }
        J::Bool(b) => Value::Boolean(*b),
        J::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Value::Integer(i),
            (None, _) if n.is_u64() => return Err((path.to_string(), n.to_string(), beyond())),
            (None, Some(f)) => Value::Float(f),
            (None, None) => return Err((path.to_string(), n.to_string(), beyond())),
        },
        J::String(s) => Value::String(s.clone()),
        J::Array(a) => Value::Array(
            (a.iter().enumerate())
                .map(|(i, x)| from_json(x, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        J::Object(m) => Value::Table(
            m.iter()
                .map(|(k, x)| Ok((k.clone(), from_json(x, &join(path, &quote(k)))?)))
                .collect::<Result<_, (String, String, String)>>()?,
        ),
    })
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
        Format::Toml => Value::Table(
            toml::from_str::<Table>(text)
                .map_err(|e| ScenarioError::at(file, "", None, toml_syntax(text, &e)))?,
        ),
        Format::Json => {
            let json = serde_json::from_str::<serde_json::Value>(text).map_err(|e| {
                ScenarioError::at(file, "", None, format!("not valid scenario JSON: {e}"))
            })?;
            from_json(&json, "")
                .map_err(|(key, shown, why)| ScenarioError::at(file, key, Some(shown), why))?
        }
    };
    if !root.is_table() {
        return Err(ScenarioError::at(
            file,
            "",
            None,
            "expected a table of scenario keys",
        ));
    }
    if let Some(key) = keys::first_non_table(&root) {
        let expected = keys::expected(&root, &key).unwrap_or_else(|| "a table".into());
        return Err(ScenarioError::at(
            file,
            key.clone(),
            lookup(&root, &key),
            format!("expected {expected}"),
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
        tenants_file: raw.tenants_file,
        vswitch: raw.vswitch,
        qshare: raw.qshare,
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
///
/// Keys that are optional because the simulator supplies a value carry that value as
/// their `default` (the transport's and MBFQ's constants, taken from the code that
/// applies them); keys whose absence means "none" carry no default.
pub fn json_schema() -> String {
    let mut schema = schemars::schema_for!(Scenario).to_value();
    drop_null_defaults(&mut schema);
    let mut filled = vec![(
        "TransportSpec".to_string(),
        "",
        serde_json::to_value(TransportSpec::defaults()),
    )];
    filled.extend(policy_table_defaults());
    for (_, _, v) in filled.iter_mut() {
        if let Ok(serde_json::Value::Object(m)) = v {
            m.retain(|_, x| !x.is_null()); // absent means unbounded (init_ssthresh)
        }
    }
    for (def, _, values) in &filled {
        if let (Ok(serde_json::Value::Object(vals)), Some(props)) = (
            values,
            schema.pointer_mut(&format!("/$defs/{def}/properties")),
        ) {
            for (k, v) in vals {
                if let Some(p) = props.get_mut(k).and_then(|p| p.as_object_mut()) {
                    p.insert("default".into(), v.clone());
                }
            }
        }
    }
    if let Ok(t) = &filled[0].2 {
        if let Some(p) = schema.pointer_mut("/properties/transport") {
            p["default"] = t.clone();
        }
    }
    for (_, field, values) in &filled[1..] {
        if let (Ok(m), Some(p)) = (values, schema.pointer_mut("/properties/vswitch/default")) {
            p[*field] = m.clone();
        }
    }
    serde_json::to_string_pretty(&schema).expect("schema serializes")
}

/// Removes `"default": null` and the `null` entries of default objects.
fn drop_null_defaults(v: &mut serde_json::Value) {
    use serde_json::Value as J;
    match v {
        J::Object(m) => {
            if m.get("default") == Some(&J::Null) {
                m.remove("default");
            }
            if let Some(J::Object(d)) = m.get_mut("default") {
                d.retain(|_, x| !x.is_null());
            }
            m.values_mut().for_each(drop_null_defaults);
        }
        J::Array(a) => a.iter_mut().for_each(drop_null_defaults),
        _ => {}
    }
}
