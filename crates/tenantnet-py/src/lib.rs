//! `tenantnet._core`: the thin pyo3 binding of tenantnet-core.
//!
//! It parses scenarios (raising `ScenarioError`), steps simulations with the GIL
//! released, and hands results over as raw little-endian column buffers that the
//! Python side wraps with numpy and pandas. No simulation logic lives here.

mod inputs;
mod mbfq;
mod qshare;

use std::path::Path;
use tenantnet_core::control::Action;

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use tenantnet_core::engine::{from_secs, to_secs};
use tenantnet_core::net::PortId;
use tenantnet_core::scenario::{self, Format, LoadOptions, ScenarioError as CoreError};
use tenantnet_core::sim::cut_profile::CutProfile;
use tenantnet_core::sim::footprint::MemoryUse;
use tenantnet_core::sim::footprint::{Footprint, PartKind};
use tenantnet_core::sim::results::Column;
use tenantnet_core::sim::{RunView, Sim};
use tenantnet_core::switch::DscpMap;
use tenantnet_core::workload::Cdf;

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "A scenario that cannot be run. args: (message, file, key, value)."
);

fn scenario_err(e: CoreError) -> PyErr {
    ScenarioError::new_err((e.to_string(), e.file, e.key, e.value))
}

fn le_bytes<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * N);
    for &x in v {
        out.extend_from_slice(&f(x));
    }
    out
}

fn column<'py>(py: Python<'py>, c: &Column) -> PyResult<Bound<'py, PyTuple>> {
    let b = |v: Vec<u8>| PyBytes::new(py, &v).into_any();
    Ok(match c {
        Column::U64(v) => PyTuple::new(
            py,
            [
                pyo3::types::PyString::new(py, "u64").into_any(),
                b(le_bytes(v, u64::to_le_bytes)),
            ],
        )?,
        Column::F64(v) => PyTuple::new(
            py,
            [
                pyo3::types::PyString::new(py, "f64").into_any(),
                b(le_bytes(v, f64::to_le_bytes)),
            ],
        )?,
        Column::OptF64(v) => {
            let vals: Vec<f64> = v.iter().map(|x| x.unwrap_or(f64::NAN)).collect();
            let mask: Vec<u8> = v.iter().map(|x| x.is_none() as u8).collect();
            PyTuple::new(
                py,
                [
                    pyo3::types::PyString::new(py, "opt_f64").into_any(),
                    b(le_bytes(&vals, f64::to_le_bytes)),
                    b(mask),
                ],
            )?
        }
        Column::OptU64(v) => {
            let vals: Vec<u64> = v.iter().map(|x| x.unwrap_or(0)).collect();
            let mask: Vec<u8> = v.iter().map(|x| x.is_none() as u8).collect();
            PyTuple::new(
                py,
                [
                    pyo3::types::PyString::new(py, "opt_u64").into_any(),
                    b(le_bytes(&vals, u64::to_le_bytes)),
                    b(mask),
                ],
            )?
        }
        Column::Str { codes, labels } => PyTuple::new(
            py,
            [
                pyo3::types::PyString::new(py, "str").into_any(),
                b(le_bytes(codes, u32::to_le_bytes)),
                PyList::new(py, labels)?.into_any(),
            ],
        )?,
    })
}

/// A simulation built from a scenario, stepped from Python.
#[pyclass(module = "tenantnet._core")]
struct Simulation {
    sim: Sim,
    source: String,
    /// Simulated time run between two checks for Ctrl-C, adapted to last about
    /// [`SLICE_WALL_S`] of wall time.
    slice: tenantnet_core::engine::Time,
}

/// Wall time between two checks for a signal (Ctrl-C) while a run goes on without
/// the GIL.
const SLICE_WALL_S: f64 = 0.1;

fn footprint_rows(f: &Footprint) -> Vec<(&'static str, String, String, f64)> {
    f.parts()
        .iter()
        .map(|p| {
            let kind = match p.kind {
                PartKind::Fixed => "fixed",
                PartKind::Recording => "recording",
                PartKind::Packets => "packets",
            };
            (kind, p.what.clone(), p.key.clone(), p.bytes)
        })
        .collect()
}

impl Simulation {
    /// `ScenarioError` if the run stopped because it outgrew its memory budget.
    fn check_failure(&self) -> PyResult<()> {
        match self.sim.budget.failure() {
            None => Ok(()),
            Some(f) => Err(ScenarioError::new_err((
                format!("{}: {}: {}", self.source, f.key, f.message),
                self.source.clone(),
                f.key.clone(),
                None::<String>,
            ))),
        }
    }

    /// The ports of node `node` (a switch's, or a host's NIC), or only its port
    /// toward `peer`.
    fn ports_of(&self, node: &str, peer: Option<&str>) -> PyResult<Vec<PortId>> {
        let net = &self.sim.fabric.net;
        let n = net
            .node_by_name(node)
            .ok_or_else(|| PyValueError::new_err(format!("no node named {node:?}")))?;
        let ports = &net.nodes[n.idx()].ports;
        let Some(p) = peer else {
            return Ok(ports.clone());
        };
        let toward = |id: &&PortId| net.nodes[net.ports[id.idx()].peer().idx()].name == p;
        let port = ports
            .iter()
            .find(toward)
            .ok_or_else(|| PyValueError::new_err(format!("{node:?} has no port toward {p:?}")))?;
        Ok(vec![*port])
    }
}

#[pymethods]
impl Simulation {
    /// Builds the simulation of scenario `text` (TOML, or JSON when `fmt == "json"`);
    /// `source` names it in errors, relative paths are taken from `base_dir`. `seed`
    /// replaces `simulation.seed`; `memory_budget` (bytes, default 8 GiB) bounds the
    /// memory the run may use, `max_events` (default 10^12) the events it may be
    /// estimated to need. `tables`: the files the scenario names (`trace` workloads)
    /// as `tenantnet.sim.tables` read them.
    #[new]
    #[pyo3(signature = (text, source, base_dir, fmt = "toml", seed = None, memory_budget = None, max_events = None, tables = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        text: &str,
        source: &str,
        base_dir: &str,
        fmt: &str,
        seed: Option<u64>,
        memory_budget: Option<u64>,
        max_events: Option<f64>,
        tables: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let format = match fmt {
            "toml" => Format::Toml,
            "json" => Format::Json,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown scenario format {other:?}; expected \"toml\" or \"json\""
                )))
            }
        };
        let d = LoadOptions::default();
        let opts = LoadOptions {
            seed,
            memory_budget: memory_budget.unwrap_or(d.memory_budget),
            max_events: max_events.unwrap_or(d.max_events),
        };
        let inputs = inputs::inputs(tables)?;
        let sim = scenario::load_with(text, (source, Path::new(base_dir)), format, &opts, &inputs)
            .map_err(scenario_err)?;
        Ok(Simulation {
            sim,
            source: source.to_string(),
            slice: 100_000_000, // 100 us of simulated time to start with
        })
    }

    /// Runs every event up to simulated time `t_s` seconds (capped at the end), without
    /// the GIL. Raises `ScenarioError` if the run outgrew its memory budget.
    fn run_until(&mut self, py: Python<'_>, t_s: f64) -> PyResult<()> {
        if t_s.is_nan() || t_s < 0.0 {
            return Err(PyValueError::new_err(format!(
                "run_until({t_s}): expected a simulated time in seconds, at least 0 (inf runs to the end)"
            )));
        }
        let t = from_secs(t_s.min(to_secs(self.sim.budget.end())));
        // in slices of about SLICE_WALL_S of wall time, checking for Ctrl-C between
        // them (the slices do not change the run: events are processed in order)
        loop {
            let target = t.min(RunView::of(&self.sim).now.saturating_add(self.slice));
            let started = std::time::Instant::now();
            let sim = &mut self.sim;
            py.detach(move || sim.run_until(target));
            let wall = started.elapsed().as_secs_f64();
            let factor = (SLICE_WALL_S / wall.max(1e-6)).clamp(0.25, 4.0);
            self.slice = ((self.slice as f64 * factor) as tenantnet_core::engine::Time).max(1);
            if target >= t
                || self.sim.budget.finished(RunView::of(&self.sim).now)
                || self.sim.budget.failure().is_some()
            {
                break;
            }
            py.check_signals()?;
        }
        self.check_failure()
    }

    /// Lets the run use up to `threads` threads (1 to 4096; 0: as many as the
    /// machine's cores when the run is large enough to gain, `Sim::set_threads`), no
    /// more than the machine has idle cores; with `exact`, as many as asked whatever
    /// the load. Only before the run starts.
    /// `cores` (0: all) bounds the cores a run chosen for (`threads` 0) may take.
    #[pyo3(signature = (threads, exact = false, cores = 0))]
    fn set_threads(&mut self, threads: usize, exact: bool, cores: usize) -> PyResult<()> {
        if threads > 4096 {
            return Err(PyValueError::new_err(format!(
                "set_threads({threads}): expected 1 to 4096 threads (0: chosen for the run)"
            )));
        }
        if RunView::of(&self.sim).events_processed() > 0 {
            return Err(PyValueError::new_err(
                "set_threads: the run has started; set threads on a new simulation",
            ));
        }
        self.sim.set_threads(threads, exact);
        self.sim.parallel.share(cores);
        Ok(())
    }

    /// The threads the run uses (1 until it starts, or when it cannot be cut).
    #[getter]
    fn threads(&self) -> usize {
        self.sim.parallel.threads_used()
    }

    /// Why the run uses one thread although more were asked for (once it started).
    #[getter]
    fn threads_note(&self) -> Option<String> {
        self.sim.parallel.threads_note().map(str::to_string)
    }

    /// Runs the whole run as `run_until(inf)` does (the same results, without the
    /// GIL), and profiles it as cut for `threads` threads: what a parallel run would
    /// face (`tenantnet_core::sim::cut_profile`), as JSON. Only before the run starts.
    fn run_profiling_cut(&mut self, py: Python<'_>, threads: usize) -> PyResult<String> {
        if threads == 0 || threads > 4096 {
            return Err(PyValueError::new_err(format!(
                "run_profiling_cut({threads}): expected 1 to 4096 threads"
            )));
        }
        if RunView::of(&self.sim).events_processed() > 0 {
            return Err(PyValueError::new_err(
                "run_profiling_cut: the run has started; profile a new simulation",
            ));
        }
        let sim = &mut self.sim;
        let profile = py.detach(move || CutProfile::measure(sim, threads));
        self.check_failure()?;
        Ok(serde_json::to_string(&profile).expect("a profile serializes"))
    }

    /// The memory the run was estimated to need: `[(kind, what, key, bytes)]`, kind
    /// one of `fixed`, `recording`, `packets`.
    #[getter]
    fn footprint(&self) -> Vec<(&'static str, String, String, f64)> {
        footprint_rows(self.sim.budget.footprint())
    }

    /// The estimate in words: `about 13.2 MiB of memory (6.7 MiB for …, …) and about
    /// 9.6e7 events (at most about 14 s at 150 ns each)`.
    #[getter]
    fn footprint_summary(&self) -> String {
        let f = self.sim.budget.footprint();
        format!("{} and {}", f.summary(), f.events_summary())
    }

    /// The scenario-wide TCP configuration as resolved (profile and keys applied),
    /// as JSON: the keys a cross-check with another simulator needs.
    #[getter]
    fn transport_json(&self) -> String {
        let Some(c) = self.sim.ends.tcp_configs().first() else {
            return "{}".into();
        };
        serde_json::json!({
            "cc": c.cc.name(),
            "dctcp": c.cc == tenantnet_core::transport::CongestionControl::Dctcp,
            "ect": c.ect(),
            "recovery": c.recovery.name(),
            "mss": c.mss,
            "header": c.header,
            "init_cwnd": c.init_cwnd,
            "min_rto_s": to_secs(c.min_rto),
            "delayed_ack": c.delayed_ack,
            "delayed_ack_timeout_s": to_secs(c.delayed_ack_timeout),
            "quick_acks": c.quick_acks,
            "ack_push": c.ack_push,
        })
        .to_string()
    }

    /// Events the run was estimated to need.
    #[getter]
    fn events_estimate(&self) -> f64 {
        self.sim.budget.footprint().events
    }

    /// The memory the run uses now, bytes (estimated at the footprint's costs).
    #[getter]
    fn memory_in_use(&self) -> f64 {
        let sim = &self.sim;
        sim.budget
            .in_use(&MemoryUse::of(&sim.fabric, &sim.hosts, &sim.records))
    }

    /// Current simulated time, seconds.
    #[getter]
    fn now_s(&self) -> f64 {
        to_secs(RunView::of(&self.sim).now)
    }

    /// Configured end of the run, seconds.
    #[getter]
    fn end_s(&self) -> f64 {
        to_secs(self.sim.budget.end())
    }

    /// Whether the run is over.
    #[getter]
    fn finished(&self) -> bool {
        self.sim.budget.finished(RunView::of(&self.sim).now)
    }

    /// Each flow's data path as port names (`"node->peer"`), from the source's NIC
    /// to the last switch's port toward the destination, in flow order.
    #[getter]
    fn flow_paths(&self) -> Vec<Vec<String>> {
        self.sim.fabric.flow_paths(&self.sim.ends.flows)
    }

    /// Each flow's ACK path as port names, from the destination's NIC to the last
    /// switch's port toward the source, in flow order.
    #[getter]
    fn flow_ack_paths(&self) -> Vec<Vec<String>> {
        self.sim.fabric.flow_ack_paths(&self.sim.ends.flows)
    }

    /// Events processed so far.
    #[getter]
    fn events(&self) -> u64 {
        RunView::of(&self.sim).events_processed()
    }

    /// Sets the queue weights of every port of switch `switch` (or only its port
    /// toward `peer`) from now on; a host's name sets its NIC's (under
    /// `network.host_nic = "dscp"`).
    #[pyo3(signature = (switch, weights, peer = None))]
    fn set_queue_weights(
        &mut self,
        switch: &str,
        weights: Vec<u32>,
        peer: Option<&str>,
    ) -> PyResult<()> {
        for port in self.ports_of(switch, peer)? {
            let a = Action::QueueWeights {
                port,
                weights: weights.clone(),
            };
            self.sim.apply(a).map_err(|e| {
                PyValueError::new_err(format!("set_queue_weights({switch:?}): {e}"))
            })?;
        }
        Ok(())
    }

    /// Replaces the DSCP -> queue map of every port of switch `switch` (or only its
    /// port toward `peer`) from now on; unlisted DSCPs go to queue 0. A host's name
    /// sets its NIC's (under `network.host_nic = "dscp"`).
    #[pyo3(signature = (switch, mapping, peer = None))]
    fn set_dscp_map(
        &mut self,
        switch: &str,
        mapping: std::collections::BTreeMap<u32, u32>,
        peer: Option<&str>,
    ) -> PyResult<()> {
        let err = |e: String| PyValueError::new_err(format!("set_dscp_map({switch:?}): {e}"));
        let pairs: Vec<(u32, u32)> = mapping.into_iter().collect();
        let map = DscpMap::try_from_pairs(&pairs).map_err(err)?;
        for port in self.ports_of(switch, peer)? {
            let a = Action::DscpMap {
                port,
                map: map.clone(),
            };
            self.sim.apply(a).map_err(err)?;
        }
        Ok(())
    }

    /// Packet counters so far: sent, data_sent, delivered, dropped, ecn_marks.
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (c, marks) = RunView::of(&self.sim).counters();
        let d = PyDict::new(py);
        d.set_item("sent", c.sent)?;
        d.set_item("data_sent", c.data_sent)?;
        d.set_item("delivered", c.delivered)?;
        d.set_item("dropped", c.dropped)?;
        d.set_item("evicted", c.evicted)?;
        d.set_item("ecn_marks", marks)?;
        Ok(d)
    }

    /// The flows as a trace (`RunView::trace_table`): `{column: tuple}`; raises
    /// `ValueError` with why the flows cannot be one.
    fn trace_table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = RunView::of(&self.sim)
            .trace_table()
            .map_err(PyValueError::new_err)?;
        let cols = PyDict::new(py);
        for (name, c) in &t.columns {
            cols.set_item(*name, column(py, c)?)?;
        }
        Ok(cols)
    }

    /// Closes the run and returns `(summary_json, {table: {column: encoded}})`.
    fn results<'py>(&mut self, py: Python<'py>) -> PyResult<(String, Bound<'py, PyDict>)> {
        let r = self.sim.results();
        let summary = serde_json::to_string_pretty(&r.summary)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let tables = PyDict::new(py);
        for t in &r.tables {
            let cols = PyDict::new(py);
            for (name, c) in &t.columns {
                cols.set_item(*name, column(py, c)?)?;
            }
            tables.set_item(t.name, cols)?;
        }
        Ok((summary, tables))
    }
}

/// The switches of scenario `text` (TOML, or JSON when `fmt == "json"`) as a
/// deployment sees them, as JSON: the network keys after the host policies' presets
/// and each switch's ports in link order (`Ethernet<4·i>`, the peer, the rate).
#[pyfunction]
#[pyo3(signature = (text, source, base_dir, fmt = "toml", tables = None))]
fn switch_layout(
    text: &str,
    source: &str,
    base_dir: &str,
    fmt: &str,
    tables: Option<&Bound<'_, PyDict>>,
) -> PyResult<String> {
    let format = if fmt == "json" {
        Format::Json
    } else {
        Format::Toml
    };
    let inputs = inputs::inputs(tables)?;
    scenario::switch_layout(text, (source, Path::new(base_dir)), format, &inputs)
        .map(|v| v.to_string())
        .map_err(scenario_err)
}

/// The JSON Schema of the scenario format.
/// What the memory estimate counts for one flow, bytes, and the default memory
/// budget: what a trace's rows are checked against before its file is read.
#[pyfunction]
fn flow_memory() -> (f64, u64) {
    use tenantnet_core::sim::footprint as fp;
    (fp::PER_FLOW, fp::DEFAULT_BUDGET)
}

#[pyfunction]
fn schema() -> String {
    scenario::parse::json_schema()
}

/// Parses a size such as `"8GiB"` into bytes; raises ValueError saying what is expected.
#[pyfunction]
fn parse_size(text: &str) -> PyResult<u64> {
    match tenantnet_core::units::parse_bytes(text) {
        Ok(tenantnet_core::units::ByteSize::Bytes(b)) => Ok(b),
        Ok(_) => Err(PyValueError::new_err(format!(
            "{text:?}: expected a size in bytes such as \"8GiB\" or \"500MB\", not packets"
        ))),
        Err(e) => Err(PyValueError::new_err(format!(
            "{text:?}: {e}; expected a size such as \"8GiB\" or \"500MB\""
        ))),
    }
}

/// Parses a duration such as `"150ms"` into seconds; raises ValueError saying what is
/// expected.
#[pyfunction]
fn parse_duration(text: &str) -> PyResult<f64> {
    tenantnet_core::units::parse_duration(text)
        .map(|ps| ps as f64 / 1e12)
        .map_err(|e| {
            PyValueError::new_err(format!(
                "{text:?}: {e}; expected a duration such as \"150ms\" or \"1.5s\""
            ))
        })
}

/// Seconds as scenario files write durations: `3ms`, `1.5s`, `250us`.
#[pyfunction]
fn format_duration(seconds: f64) -> String {
    tenantnet_core::units::format_duration(from_secs(seconds))
}

/// A key as error messages show it: bare if TOML allows, else quoted (`"seed "`).
#[pyfunction]
fn quote_key(name: &str) -> String {
    scenario::keys::quote(name)
}

/// Names of the built-in flow-size distributions.
#[pyfunction]
fn cdf_names() -> Vec<&'static str> {
    Cdf::builtin_names()
}

/// The (size_bytes, probability) points and the mean of a built-in distribution.
#[pyfunction]
fn builtin_cdf(name: &str) -> PyResult<(Vec<(f64, f64)>, f64)> {
    let c = Cdf::builtin(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown distribution {name:?}; expected one of {:?}",
            Cdf::builtin_names()
        ))
    })?;
    Ok((c.points().to_vec(), c.mean()))
}

/// Parses CDF text; returns its points and mean or raises ValueError naming the line.
#[pyfunction]
fn parse_cdf(text: &str, name: &str) -> PyResult<(Vec<(f64, f64)>, f64)> {
    let c = Cdf::parse(text, name).map_err(|e| PyValueError::new_err(format!("{name}: {e}")))?;
    Ok((c.points().to_vec(), c.mean()))
}

/// C2QoS's cycles per packet (§III; the bandwidth–CPU model's constants, spec
/// `c2qos.md` §1.4): a packet of `size` bytes, classified as `flows` ("single" or
/// "multiple"), at deployment factor `r` (Π R_i), in whole cycles as the simulator
/// charges them.
#[pyfunction]
#[pyo3(signature = (size, flows = "single", r = 1.0))]
fn c2qos_packet_cycles(size: u32, flows: &str, r: f64) -> PyResult<u64> {
    use tenantnet_core::vswitch::c2qos::{Costs, Flows};
    let f = Flows::ALL
        .iter()
        .copied()
        .find(|f| f.name() == flows)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "flows {flows:?}: expected \"single\" or \"multiple\""
            ))
        })?;
    if !(r.is_finite() && r > 0.0) {
        return Err(PyValueError::new_err(format!(
            "r = {r}: expected a deployment factor > 0"
        )));
    }
    Ok(Costs::default().cycles(size, f, r))
}

/// HBS's worst-case wait before a VM's batch starts, per class (§IV-B-2):
/// W_j = (N_1·k_1 + … + N_{j−1}·k_{j−1} + N_j)·c, `ready[j]` the VMs ready in class
/// j+1, `k[j]` the batches each may send while a lower class sends one, `c` one
/// batch's time (seconds or any unit; the result is in the same).
#[pyfunction]
fn hbs_worst_wait(ready: Vec<u32>, k: Vec<f64>, c: f64) -> Vec<f64> {
    tenantnet_core::vswitch::c2qos::hbs::worst_wait(&ready, &k, c)
}

/// The version of the Rust core.
#[pyfunction]
fn version() -> &'static str {
    tenantnet_core::VERSION
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add_class::<qshare::QShare>()?;
    m.add_class::<mbfq::Macroscheduler>()?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(flow_memory, m)?)?;
    m.add_function(wrap_pyfunction!(switch_layout, m)?)?;
    m.add_function(wrap_pyfunction!(format_duration, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(quote_key, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size, m)?)?;
    m.add_function(wrap_pyfunction!(cdf_names, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_cdf, m)?)?;
    m.add_function(wrap_pyfunction!(parse_cdf, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(c2qos_packet_cycles, m)?)?;
    m.add_function(wrap_pyfunction!(hbs_worst_wait, m)?)?;
    Ok(())
}
