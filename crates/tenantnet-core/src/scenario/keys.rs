//! Key paths as errors show them (`workloads[2].transport.mss`), and what a key
//! expects, read from the scenario's JSON Schema.
//!
//! A key that is not a bare TOML key (letters, digits, `_`, `-`) is quoted, as TOML
//! writes it: `simulation."seed "`, `simulation.""`.

use std::sync::OnceLock;

use serde_json::Value as Json;
use toml::Value;

/// One step of a key path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// A table key.
    Key(String),
    /// A list index.
    Index(usize),
}

/// `name` as a key path shows it: bare if TOML allows, else quoted.
pub fn quote(name: &str) -> String {
    let bare = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        name.to_string()
    } else {
        let esc: String = name
            .chars()
            .flat_map(|c| match c {
                '"' => "\\\"".chars().collect::<Vec<_>>(),
                '\\' => "\\\\".chars().collect(),
                c if c.is_control() => format!("\\u{:04X}", c as u32).chars().collect(),
                c => vec![c],
            })
            .collect();
        format!("\"{esc}\"")
    }
}

/// Joins key paths: `join("a", "b")` is `a.b`, `join("a", "[0]")` is `a[0]`. `rest`
/// is already a path (quote names with [`quote`] first).
pub fn join(prefix: &str, rest: &str) -> String {
    match (prefix.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_string(),
        (_, true) => prefix.to_string(),
        _ if rest.starts_with('[') => format!("{prefix}{rest}"),
        _ => format!("{prefix}.{rest}"),
    }
}

/// Splits a key path into its steps; `None` if it is malformed.
pub fn segments(path: &str) -> Option<Vec<Seg>> {
    let mut out = Vec::new();
    let mut it = path.chars().peekable();
    while let Some(&c) = it.peek() {
        match c {
            '.' => {
                it.next();
            }
            '[' => {
                it.next();
                let n: String = it.by_ref().take_while(|c| *c != ']').collect();
                out.push(Seg::Index(n.parse().ok()?));
            }
            '"' => {
                it.next();
                let mut name = String::new();
                loop {
                    match it.next()? {
                        '"' => break,
                        '\\' => match it.next()? {
                            'u' => {
                                let hex: String = it.by_ref().take(4).collect();
                                name.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                            }
                            e => name.push(e),
                        },
                        c => name.push(c),
                    }
                }
                out.push(Seg::Key(name));
            }
            _ => {
                let mut name = String::new();
                while let Some(&c) = it.peek() {
                    if c == '.' || c == '[' {
                        break;
                    }
                    name.push(c);
                    it.next();
                }
                out.push(Seg::Key(name));
            }
        }
    }
    Some(out)
}

/// The value at key path `key` in `root`.
pub fn value_at<'a>(root: &'a Value, key: &str) -> Option<&'a Value> {
    let mut v = root;
    for s in segments(key)? {
        v = match s {
            Seg::Key(k) => v.as_table()?.get(&k)?,
            Seg::Index(i) => v.as_array()?.get(i)?,
        };
    }
    Some(v)
}

/// The value at key path `key` in `root`, rendered as TOML on one line, cut to
/// [`SHOWN_MAX`] characters with `…`.
pub fn lookup(root: &Value, key: &str) -> Option<String> {
    value_at(root, key).map(|v| {
        let text = render(v);
        if text.chars().count() > SHOWN_MAX {
            let cut: String = text.chars().take(SHOWN_MAX - 1).collect();
            format!("{cut}…")
        } else {
            text
        }
    })
}

/// The most characters of a value an error shows.
pub const SHOWN_MAX: usize = 100;

/// A value in TOML syntax, inline, on one line (strings as basic strings, escaped).
pub fn render(v: &Value) -> String {
    match v {
        Value::String(s) => crate::units::quoted(s),
        Value::Table(t) => {
            let inner: Vec<String> = t
                .iter()
                .map(|(k, v)| format!("{} = {}", quote(k), render(v)))
                .collect();
            format!("{{ {} }}", inner.join(", "))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(render).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

fn schema() -> &'static Json {
    static SCHEMA: OnceLock<Json> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        serde_json::to_value(schemars::schema_for!(super::parse::Scenario)).unwrap_or(Json::Null)
    })
}

/// Follows `$ref` and drops the `null` branch of an optional key.
fn resolve(node: &Json) -> &Json {
    let mut n = node;
    for _ in 0..8 {
        if let Some(r) = n.get("$ref").and_then(Json::as_str) {
            let name = r.trim_start_matches("#/$defs/");
            match schema().get("$defs").and_then(|d| d.get(name)) {
                Some(d) => n = d,
                None => return n,
            }
        } else if let Some(any) = n.get("anyOf").and_then(Json::as_array) {
            let real: Vec<&Json> = any
                .iter()
                .filter(|b| b.get("type").and_then(Json::as_str) != Some("null"))
                .collect();
            match real.as_slice() {
                [one] => n = one,
                _ => return n,
            }
        } else {
            return n;
        }
    }
    n
}

/// The branch of a `kind`-tagged schema (topology, workloads) that `kind` selects.
fn by_kind<'a>(node: &'a Json, kind: Option<&str>) -> &'a Json {
    let Some(branches) = node.get("oneOf").and_then(Json::as_array) else {
        return node;
    };
    let of = |b: &Json| {
        resolve(b)
            .pointer("/properties/kind/const")
            .and_then(Json::as_str)
            .map(str::to_string)
    };
    branches
        .iter()
        .find(|b| of(b).is_some() && of(b).as_deref() == kind)
        .map(resolve)
        .unwrap_or(node)
}

/// The schema of the key at `key`, with `root` to tell which `kind` applies.
fn node_at(root: &Value, key: &str) -> Option<&'static Json> {
    let mut n = resolve(schema());
    let mut prefix = String::new();
    for s in segments(key)? {
        let kind = value_at(root, &prefix)
            .and_then(|v| v.get("kind"))
            .and_then(|k| k.as_str());
        n = by_kind(n, kind);
        n = match &s {
            Seg::Key(k) => {
                prefix = join(&prefix, &quote(k));
                let named = n.get("properties").and_then(|p| p.get(k));
                resolve(named.or_else(|| n.get("additionalProperties").filter(|a| a.is_object()))?)
            }
            Seg::Index(i) => {
                prefix = format!("{prefix}[{i}]");
                resolve(n.get("items")?)
            }
        };
    }
    let kind = value_at(root, &prefix)
        .and_then(|v| v.get("kind"))
        .and_then(|k| k.as_str());
    Some(by_kind(n, kind))
}

/// Whether the schema wants a table at `key` and nothing else (a struct: serde would
/// read a list there field by field, by position).
fn wants_table(root: &Value, key: &str) -> bool {
    node_at(root, key).map(resolve).is_some_and(|n| {
        n.get("type").and_then(Json::as_str) == Some("object") && n.get("oneOf").is_none()
    })
}

/// The first key path in `root` whose value is not a table where the schema wants a
/// table (depth first, in the file's order), if any.
pub fn first_non_table(root: &Value) -> Option<String> {
    fn walk(root: &Value, v: &Value, path: &str) -> Option<String> {
        let children: Vec<(String, &Value)> = match v {
            Value::Table(t) => t.iter().map(|(k, x)| (join(path, &quote(k)), x)).collect(),
            Value::Array(a) => (a.iter().enumerate())
                .map(|(i, x)| (format!("{path}[{i}]"), x))
                .collect(),
            _ => return None,
        };
        for (p, x) in children {
            if !x.is_table() && wants_table(root, &p) {
                return Some(p);
            }
            if let Some(found) = walk(root, x, &p) {
                return Some(found);
            }
        }
        None
    }
    walk(root, root, "")
}

/// What the key at `key` expects, in words, if the schema says.
pub fn expected(root: &Value, key: &str) -> Option<String> {
    describe(node_at(root, key)?)
}

fn consts(node: &Json) -> Option<Vec<String>> {
    if let Some(e) = node.get("enum").and_then(Json::as_array) {
        return Some(e.iter().map(|v| v.to_string()).collect());
    }
    let branches = node.get("oneOf").and_then(Json::as_array)?;
    branches
        .iter()
        .map(|b| {
            let b = resolve(b);
            b.get("const")
                .or_else(|| b.pointer("/properties/kind/const"))
                .map(|v| v.to_string())
        })
        .collect()
}

fn describe(node: &Json) -> Option<String> {
    let node = resolve(node);
    if let Some(c) = consts(node) {
        let tagged = node.get("oneOf").and_then(Json::as_array).is_some_and(|b| {
            b.iter()
                .any(|b| resolve(b).pointer("/properties/kind").is_some())
        });
        return Some(if tagged {
            format!("a table whose kind is one of {}", c.join(", "))
        } else {
            format!("one of {}", c.join(", "))
        });
    }
    let types: Vec<&str> = match node.get("type") {
        Some(Json::String(t)) => vec![t.as_str()],
        Some(Json::Array(a)) => a
            .iter()
            .filter_map(Json::as_str)
            .filter(|t| *t != "null")
            .collect(),
        _ => vec![],
    };
    let described = node
        .get("description")
        .and_then(Json::as_str)
        .filter(|d| d.starts_with("a ") || d.starts_with("an ") || d.starts_with('"'));
    match types.as_slice() {
        ["string"] => Some(described.unwrap_or("a string").to_string()),
        ["boolean"] => Some("true or false".into()),
        ["number"] => Some("a number".into()),
        ["integer"] => Some(integer(node)),
        ["object"] => {
            let keys: Vec<String> = node
                .get("properties")
                .and_then(Json::as_object)
                .map(|p| p.keys().map(|k| quote(k)).collect())
                .unwrap_or_default();
            Some(if keys.is_empty() {
                "a table".into()
            } else {
                format!("a table of {}", keys.join(", "))
            })
        }
        ["array"] => {
            let items = node.get("items").and_then(describe).unwrap_or_default();
            let n = match (
                node.get("minItems").and_then(Json::as_u64),
                node.get("maxItems").and_then(Json::as_u64),
            ) {
                (Some(a), Some(b)) if a == b => format!("a list of {a}"),
                _ => "a list".into(),
            };
            Some(if items.is_empty() {
                n
            } else {
                format!("{n}, each {items}")
            })
        }
        _ => described.map(str::to_string),
    }
}

fn integer(node: &Json) -> String {
    let max = match node.get("format").and_then(Json::as_str) {
        Some("uint8") => Some(u8::MAX as u64),
        Some("uint16") => Some(u16::MAX as u64),
        Some("uint32") => Some(u32::MAX as u64),
        Some("uint64") => Some(i64::MAX as u64),
        _ => node.get("maximum").and_then(Json::as_u64),
    };
    let min = node.get("minimum").and_then(Json::as_i64);
    match (min, max) {
        (Some(a), Some(b)) => format!("a whole number from {a} to {b}"),
        (Some(a), None) => format!("a whole number of at least {a}"),
        _ => "a whole number".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_through_quoting() {
        for name in ["seed", "seed ", "", "a.b", "q\"x", "é"] {
            let path = join("simulation", &quote(name));
            assert_eq!(
                segments(&path),
                Some(vec![Seg::Key("simulation".into()), Seg::Key(name.into())]),
                "{path}"
            );
        }
        assert_eq!(quote("seed "), "\"seed \"");
        assert_eq!(quote(""), "\"\"");
        assert_eq!(
            segments("workloads[2].transport.mss"),
            Some(vec![
                Seg::Key("workloads".into()),
                Seg::Index(2),
                Seg::Key("transport".into()),
                Seg::Key("mss".into())
            ])
        );
    }

    #[test]
    fn expectations_come_from_the_schema() {
        let root: Value = toml::from_str(
            "[vswitch]\npolicy = 8\n[topology]\nkind = \"star\"\n[[workloads]]\nkind = \"poisson\"\n",
        )
        .unwrap();
        let e = |k: &str| expected(&root, k).unwrap_or_default();
        assert_eq!(
            e("vswitch.policy"),
            "one of \"none\", \"static\", \"mbfq\", \"trinity\", \"elasticswitch\""
        );
        assert!(e("output").starts_with("a table of "), "{}", e("output"));
        assert_eq!(e("vswitch.mbfq.ramp"), "a list of 2, each a number");
        assert_eq!(
            e("simulation.seed"),
            "a whole number from 0 to 9223372036854775807"
        );
        assert!(e("topology.link_rate").starts_with("a data rate such as"));
        assert_eq!(e("workloads[0].sizes"), "one of \"stratified\", \"iid\"");
        assert_eq!(
            e("topology"),
            "a table of hosts, kind, link_delay, link_rate"
        );
        let bare: Value = toml::from_str("topology = 5").unwrap();
        let t = expected(&bare, "topology").unwrap_or_default();
        assert!(
            t.starts_with("a table whose kind is one of \"dumbbell\""),
            "{t}"
        );
        assert_eq!(e("simulation.stop_when_done"), "true or false");
    }
}
