//! `topology.kind = "graph"` with `file`: a fabric exported from an inventory or
//! LLDP, as NetworkX's node-link JSON (read here) or a CSV of links (read by the
//! caller with Arrow, [`crate::scenario::Inputs`]), turned into the inline graph
//! and checked by its rules; an error points into the file (`links[3]`, `nodes[7]`,
//! `row 4`).
//!
//! Which nodes are hosts: a node's `type` (or `kind`, `role`) attribute in the JSON
//! (`host`, `server`; anything else is a switch), else the scenario's `hosts` and
//! `switches` lists, else its degree: a node with one link is a host. Hosts keep
//! the file's order (the JSON's nodes, or the CSV's first mentions). A link's `rate`
//! is bits per second or a rate with its unit, its `delay` seconds or a time with
//! its unit; without them, the graph's `link_rate` and `link_delay`.

use std::collections::HashMap;

use serde_json::Value;

use super::Ctx;
use crate::net::topology::graph::{Graph, GraphLink};
use crate::net::NetworkBuilder;
use crate::scenario::inputs::{rate, seconds, Cell, InputTable};
use crate::scenario::parse::{join, ScenarioError};
use crate::scenario::spec::TopologySpec;
use crate::units::{Rate, TimeSpan};

/// Where each node and link of a graph read from a file came from.
struct Places {
    path: String,
    nodes: HashMap<String, String>,
    links: Vec<String>,
}

/// The scenario's topology wired, its graph read from its file if it names one.
pub fn topology(ctx: &Ctx, spec: &TopologySpec) -> Result<(NetworkBuilder, String), ScenarioError> {
    let at_key = |(param, msg): (std::borrow::Cow<'static, str>, String)| {
        ctx.err(&join("topology", &param), msg)
    };
    let TopologySpec::Graph(g) = spec else {
        return spec.build().map_err(at_key);
    };
    let Some(file) = &g.file else {
        return spec.build().map_err(at_key);
    };
    if !g.links.is_empty() {
        return Err(ctx.err("topology.links", "give either links or file, not both"));
    }
    let (read, places) = read(ctx, g, file)?;
    read.build().map_err(|(param, msg)| {
        let place = place_of(&read, &places, &param);
        let whose = format!("topology.file of {}", ctx.file);
        let hint = match param.as_ref() {
            "hosts" => "; a host is a node with one link, or one that topology.hosts or its type attribute names",
            _ => "",
        };
        ScenarioError::at(&places.path, place, None, format!("{msg}{hint} ({whose})"))
    })
}

/// The place in the file of the graph's `param` (`links[3].b`, `hosts[2]`).
fn place_of(g: &Graph, p: &Places, param: &str) -> String {
    let index = |prefix: &str| {
        let rest = param.strip_prefix(prefix)?.strip_prefix('[')?;
        rest.split(']').next()?.parse::<usize>().ok()
    };
    if let Some(i) = index("links") {
        return p.links.get(i).cloned().unwrap_or_default();
    }
    let node = index("hosts")
        .and_then(|i| g.hosts.get(i))
        .or_else(|| index("switches").and_then(|i| g.switches.get(i)));
    node.and_then(|n| p.nodes.get(n).cloned())
        .unwrap_or_default()
}

fn err(path: &str, place: String, msg: impl Into<String>, ctx: &Ctx) -> ScenarioError {
    let msg = format!("{} (topology.file of {})", msg.into(), ctx.file);
    ScenarioError::at(path, place, None, msg)
}

/// The graph in `file`, with its rates and delays and its hosts decided.
fn read(ctx: &Ctx, g: &Graph, file: &str) -> Result<(Graph, Places), ScenarioError> {
    let (nodes, links, places) = if file.to_lowercase().ends_with(".json") {
        read_json(ctx, file)?
    } else {
        read_csv(ctx, file)?
    };
    let mut degree: HashMap<&str, usize> = HashMap::new();
    for l in &links {
        *degree.entry(l.a.as_str()).or_default() += 1;
        *degree.entry(l.b.as_str()).or_default() += 1;
    }
    let (mut hosts, mut switches) = (Vec::new(), Vec::new());
    for (name, kind) in &nodes {
        let listed = if g.hosts.contains(name) {
            Some(true)
        } else if g.switches.contains(name) {
            Some(false)
        } else {
            None
        };
        let host = kind
            .or(listed)
            .unwrap_or(degree.get(name.as_str()) == Some(&1));
        if host {
            hosts.push(name.clone());
        } else {
            switches.push(name.clone());
        }
    }
    for (list, key) in [
        (&g.hosts, "topology.hosts"),
        (&g.switches, "topology.switches"),
    ] {
        if let Some(n) = list.iter().find(|n| !nodes.iter().any(|(m, _)| m == *n)) {
            return Err(ctx.err(key, format!("{n:?} is no node of {}", places.path)));
        }
    }
    let graph = Graph {
        file: None,
        hosts,
        switches,
        links,
        link_rate: g.link_rate,
        link_delay: g.link_delay,
    };
    Ok((graph, places))
}

/// Nodes (name, whether the file says it is a host), links and their places.
type Read = (Vec<(String, Option<bool>)>, Vec<GraphLink>, Places);

fn name_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A JSON attribute as a table's cell.
fn cell(v: Option<&Value>) -> Result<Cell<'_>, String> {
    match v {
        None | Some(Value::Null) => Ok(Cell::Missing),
        Some(Value::Number(n)) => n.as_f64().map(Cell::Num).ok_or("expected a number".into()),
        Some(Value::String(s)) => Ok(Cell::Text(s)),
        Some(_) => Err("expected a number or text with a unit".into()),
    }
}

/// A link's rate: bits per second, or a rate with its unit; positive.
fn link_rate(c: Cell) -> Result<Option<Rate>, String> {
    match rate(c)? {
        Some(0) => Err("expected a positive rate".into()),
        r => Ok(r.map(Rate)),
    }
}

/// A link's delay: seconds, or a time with its unit.
fn link_delay(c: Cell) -> Result<Option<TimeSpan>, String> {
    Ok(seconds(c)?.map(TimeSpan))
}

fn read_json(ctx: &Ctx, file: &str) -> Result<Read, ScenarioError> {
    let path = ctx.base_dir.join(file);
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(&path)
        .map_err(|e| ctx.err("topology.file", format!("cannot read {shown}: {e}")))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| err(&shown, String::new(), format!("not JSON: {e}"), ctx))?;
    let list = |k: &str| v.get(k).and_then(Value::as_array);
    let nodes_v = list("nodes").ok_or_else(|| {
        err(
            &shown,
            String::new(),
            "expected NetworkX's node-link JSON: no \"nodes\" list",
            ctx,
        )
    })?;
    let (links_key, links_v) = [("links", list("links")), ("edges", list("edges"))]
        .into_iter()
        .find_map(|(k, l)| l.map(|l| (k, l)))
        .ok_or_else(|| {
            err(
                &shown,
                String::new(),
                "expected NetworkX's node-link JSON: no \"links\" (or \"edges\") list",
                ctx,
            )
        })?;
    let mut places = Places {
        path: shown.clone(),
        nodes: HashMap::new(),
        links: Vec::new(),
    };
    let mut nodes = Vec::new();
    for (i, n) in nodes_v.iter().enumerate() {
        let place = format!("nodes[{i}]");
        let name = n.get("id").and_then(name_of).ok_or_else(|| {
            err(
                &shown,
                place.clone(),
                "expected an \"id\" (text or a number)",
                ctx,
            )
        })?;
        let kind = ["type", "kind", "role"]
            .iter()
            .find_map(|k| n.get(*k)?.as_str());
        let host = kind.map(|k| matches!(k.to_lowercase().as_str(), "host" | "server"));
        places.nodes.insert(name.clone(), place);
        nodes.push((name, host));
    }
    let mut links = Vec::new();
    for (i, l) in links_v.iter().enumerate() {
        let place = format!("{links_key}[{i}]");
        let end = |k: &str| {
            l.get(k).and_then(name_of).ok_or_else(|| {
                err(
                    &shown,
                    place.clone(),
                    format!("expected a \"{k}\" node id"),
                    ctx,
                )
            })
        };
        let (a, b) = (end("source")?, end("target")?);
        let rate = ["rate", "bandwidth", "capacity"]
            .iter()
            .find_map(|k| l.get(*k));
        let rate = cell(rate).and_then(link_rate);
        let rate = rate.map_err(|e| err(&shown, format!("{place}.rate"), e, ctx))?;
        let dly = ["delay", "latency"].iter().find_map(|k| l.get(*k));
        let delay = cell(dly).and_then(link_delay);
        let delay = delay.map_err(|e| err(&shown, format!("{place}.delay"), e, ctx))?;
        places.links.push(place);
        links.push(GraphLink { a, b, rate, delay });
    }
    Ok((nodes, links, places))
}

fn read_csv(ctx: &Ctx, file: &str) -> Result<Read, ScenarioError> {
    let t = ctx.inputs.get(file).ok_or_else(|| {
        ctx.err("topology.file", "the fabric was not read: a CSV fabric is read by the Python package (with Arrow); run this scenario with `tenantnet run`, or give node-link JSON")
    })?;
    let whose = format!("topology.file of {}", ctx.file);
    let col =
        |names: [&'static str; 2]| names.into_iter().find_map(|n| t.column(n).map(|c| (n, c)));
    let (Some(a), Some(b)) = (col(["a", "source"]), col(["b", "target"])) else {
        let msg = format!("expected columns a and b (or source and target), optional rate and delay; it has {} ({whose})", t.names().join(", "));
        return Err(ScenarioError::at(&t.path, "", None, msg));
    };
    let mut places = Places {
        path: t.path.clone(),
        nodes: HashMap::new(),
        links: Vec::new(),
    };
    let mut nodes = Vec::new();
    let mut links = Vec::new();
    for row in 0..t.rows {
        let mut end = |(name, c): (&str, &crate::table::Column)| match InputTable::cell(c, row) {
            Cell::Text(s) => {
                if !places.nodes.contains_key(s) {
                    places
                        .nodes
                        .insert(s.to_string(), format!("row {}, column {name}", row + 1));
                    nodes.push((s.to_string(), None));
                }
                Ok(s.to_string())
            }
            cell => Err(t.err(row, name, cell, "expected a node name", &whose)),
        };
        let (na, nb) = (end(a)?, end(b)?);
        let get = |n: &str| {
            t.column(n)
                .map_or(Cell::Missing, |c| InputTable::cell(c, row))
        };
        let r = link_rate(get("rate")).map_err(|e| t.err(row, "rate", get("rate"), &e, &whose))?;
        let d =
            link_delay(get("delay")).map_err(|e| t.err(row, "delay", get("delay"), &e, &whose))?;
        places.links.push(format!("row {}", row + 1));
        links.push(GraphLink {
            a: na,
            b: nb,
            rate: r,
            delay: d,
        });
    }
    Ok((nodes, links, places))
}
