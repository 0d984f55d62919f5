//! `tenantnet._core.QShare`: the QShare controller (placement, binding, fluid
//! model) over a topology, driven from Python.

use std::collections::{BTreeMap, BTreeSet};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tenantnet_core::qshare::binding::{
    allocate_queues, configure, score, u_factor, HypervisorUsage, PortQueues,
};
use tenantnet_core::qshare::experiment::{churn, fill, gain_at, scarcity, TenantGen};
use tenantnet_core::qshare::fluid::{Model, Sharing};
use tenantnet_core::qshare::place::LogOp;
use tenantnet_core::qshare::switch_ports::switch_ports;
use tenantnet_core::qshare::{Datacenter, Hose, Placer, Request, Strategy};
use tenantnet_core::scenario::parse;

/// One churn sample: (t, tenants, slot use %, RND %, rejected so far).
type ChurnRow = (f64, u32, f64, f64, u32);

/// One link's queues: (link id, [(queue, tenants, weight)]).
type PortRow = (u32, Vec<(u32, Vec<u32>, u32)>);

/// A datacenter under QShare's controller.
#[pyclass(module = "tenantnet._core")]
pub struct QShare {
    p: Placer,
    desc: String,
}

#[pymethods]
impl QShare {
    /// A datacenter on topology `topology_json` (a `[topology]` table as JSON) with
    /// `slots` VM slots per server and `queues` queues per port. `strategy` is
    /// `balanced` (Algorithm 1 with weight `cq_weight` on c_q) or `greedy`. In a
    /// random topology each level explores `k_paths` path ranks (§4.1's k). Errors
    /// in the topology name `source` (the file it came from).
    #[new]
    #[pyo3(signature = (topology_json, slots, queues = 8, strategy = "balanced", cq_weight = 0.5, k_paths = 3, source = "<qshare>"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        topology_json: &str,
        slots: u32,
        queues: u32,
        strategy: &str,
        cq_weight: f64,
        k_paths: u8,
        source: &str,
    ) -> PyResult<Self> {
        if slots == 0 || !(1..=64).contains(&queues) {
            return Err(PyValueError::new_err(format!(
                "slots = {slots}, queues = {queues}: expected at least 1 slot and 1 to 64 queues"
            )));
        }
        let (b, desc) = parse::topology(topology_json, source)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let mut dc = Datacenter::from_builder(&b, slots, queues).map_err(PyValueError::new_err)?;
        if !(1..=16).contains(&k_paths) {
            return Err(PyValueError::new_err(format!(
                "k_paths {k_paths}: expected 1 to 16"
            )));
        }
        dc.k_paths = k_paths;
        let strategy = match strategy {
            "balanced" if (0.0..=1.0).contains(&cq_weight) => Strategy::Balanced { cq_weight },
            "balanced" => return Err(PyValueError::new_err("cq_weight: expected 0 to 1")),
            "greedy" => Strategy::Greedy,
            s => {
                return Err(PyValueError::new_err(format!(
                    "strategy {s:?}: expected \"balanced\" or \"greedy\""
                )))
            }
        };
        Ok(QShare {
            p: Placer::new(dc, strategy),
            desc,
        })
    }

    /// One line describing the topology.
    #[getter]
    fn topology(&self) -> String {
        self.desc.clone()
    }

    /// Embeds a tenant with per-VM guarantees `guarantees_bps`; returns its id, or
    /// `None` if it does not fit anywhere (nothing changes).
    #[pyo3(signature = (guarantees_bps, ha = None))]
    fn place(&mut self, guarantees_bps: Vec<u64>, ha: Option<f64>) -> PyResult<Option<u32>> {
        if let Some(f) = ha {
            if !(0.0..1.0).contains(&f) {
                return Err(PyValueError::new_err("ha: expected 0 <= f < 1"));
            }
        }
        Ok(self.p.place(Request {
            hose: Hose::new(guarantees_bps),
            ha,
        }))
    }

    /// Embeds a tenant with per-VM guarantees `guarantees_bps` whose VMs are on the
    /// named servers, `servers[i].1` of them on `servers[i].0` in VM order (the lowest
    /// TR option holding them all); its id, or a `ValueError` saying why not
    /// (nothing changes).
    fn pin(&mut self, guarantees_bps: Vec<u64>, servers: Vec<(String, u32)>) -> PyResult<u32> {
        let dc = &self.p.dc;
        let on = (servers.iter())
            .map(|(name, k)| {
                let s = dc
                    .server_named(name)
                    .ok_or_else(|| PyValueError::new_err(format!("servers: no server {name:?}")))?;
                Ok((s, *k))
            })
            .collect::<PyResult<Vec<_>>>()?;
        let req = Request {
            hose: Hose::new(guarantees_bps),
            ha: None,
        };
        self.p
            .pin(req, &on)
            .map_err(|e| PyValueError::new_err(format!("pin: {}", e.describe(&self.p.dc))))
    }

    /// What changed the datacenter, in order (admitted requests with their ids,
    /// departures): `[{op: "place", guarantees_bps, ha, id} | {op: "depart", id}]`.
    /// Replaying it on the same topology rebuilds the datacenter exactly.
    fn log<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.p
            .log
            .iter()
            .map(|op| {
                let d = PyDict::new(py);
                match op {
                    LogOp::Place { request, id } => {
                        d.set_item("op", "place")?;
                        d.set_item("guarantees_bps", request.hose.b.clone())?;
                        d.set_item("ha", request.ha)?;
                        d.set_item("id", id)?;
                    }
                    LogOp::Pin {
                        request,
                        servers,
                        id,
                    } => {
                        let dc = &self.p.dc;
                        let on: Vec<(&str, u32)> = (servers.iter())
                            .map(|&(s, k)| (dc.server_name(s), k))
                            .collect();
                        d.set_item("op", "pin")?;
                        d.set_item("guarantees_bps", request.hose.b.clone())?;
                        d.set_item("servers", on)?;
                        d.set_item("id", id)?;
                    }
                    LogOp::Depart { id } => {
                        d.set_item("op", "depart")?;
                        d.set_item("id", id)?;
                    }
                }
                Ok(d)
            })
            .collect()
    }

    /// Each switch port of a binding's `ports` (as `bind` returns them) for tenants
    /// with DSCP values `dscp`: `[(switch, port, peer, dscp_to_queue[64],
    /// [(queue, weight)])]`, the links' upper ends first.
    #[allow(clippy::type_complexity)]
    fn switch_ports(
        &self,
        ports: Vec<PortRow>,
        dscp: BTreeMap<u32, u8>,
    ) -> PyResult<Vec<(String, String, String, Vec<u8>, Vec<(u32, u32)>)>> {
        let ports: Vec<PortQueues> = ports
            .into_iter()
            .map(|(link, queues)| PortQueues { link, queues })
            .collect();
        let out = switch_ports(&self.p.dc, &ports, &dscp).map_err(PyValueError::new_err)?;
        Ok(out
            .into_iter()
            .map(|s| (s.switch, s.port, s.peer, s.dscp_to_queue, s.weights))
            .collect())
    }

    /// Removes tenant `id`; returns whether it was embedded.
    fn depart(&mut self, id: u32) -> bool {
        self.p.depart(id).is_some()
    }

    /// Fills the datacenter with random tenants until `give_up` consecutive
    /// rejections: `{admitted, rejected, place_ns}`.
    #[pyo3(signature = (seed, mean_vms = 49.0, guarantees_bps = None, ha = None, give_up = 100))]
    fn fill<'py>(
        &mut self,
        py: Python<'py>,
        seed: u64,
        mean_vms: f64,
        guarantees_bps: Option<Vec<u64>>,
        ha: Option<f64>,
        give_up: u32,
    ) -> PyResult<Bound<'py, PyDict>> {
        if !(mean_vms.is_finite() && mean_vms > 0.0) || give_up == 0 {
            return Err(PyValueError::new_err(
                "expected a positive mean_vms and give_up of at least 1",
            ));
        }
        let mut gen = TenantGen {
            mean_vms,
            ha,
            ..TenantGen::default()
        };
        if let Some(g) = guarantees_bps {
            gen.guarantees = g;
        }
        let p = &mut self.p;
        let f = py.detach(|| fill(p, &gen, seed, give_up));
        let d = PyDict::new(py);
        d.set_item("admitted", f.admitted)?;
        d.set_item("rejected", f.rejected)?;
        d.set_item("place_ns", f.place_ns)?;
        Ok(d)
    }

    /// §7.3.1's arrival-departure process (Poisson arrivals at `lambda` per second,
    /// constant `lifetime`): `[(t, tenants, slot_use, rnd, rejected)]` every `every` s.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (lambda_per_s, lifetime_s, horizon_s, every_s, seed, mean_vms = 49.0, ha = None))]
    fn churn(
        &mut self,
        py: Python<'_>,
        lambda_per_s: f64,
        lifetime_s: f64,
        horizon_s: f64,
        every_s: f64,
        seed: u64,
        mean_vms: f64,
        ha: Option<f64>,
    ) -> PyResult<Vec<ChurnRow>> {
        if !(lambda_per_s > 0.0 && lifetime_s > 0.0 && every_s > 0.0 && horizon_s > 0.0) {
            return Err(PyValueError::new_err(
                "expected positive rate, lifetime, horizon and step",
            ));
        }
        let gen = TenantGen {
            mean_vms,
            ha,
            ..TenantGen::default()
        };
        let p = &mut self.p;
        let s = py.detach(|| churn(p, &gen, lambda_per_s, lifetime_s, horizon_s, every_s, seed));
        Ok(s.into_iter()
            .map(|x| (x.t, x.tenants, x.slot_use, x.rnd, x.rejected))
            .collect())
    }

    /// Table 1's measures of the current placement, as JSON (`Scarcity`'s fields).
    #[pyo3(signature = (intervals = 20, seed = 1))]
    fn scarcity(&self, py: Python<'_>, intervals: u32, seed: u64) -> PyResult<String> {
        let s = py.detach(|| scarcity(&self.p, intervals, seed));
        serde_json::to_string(&s).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Tenant `id`'s score S_T = k·N·B·U_T (Eq. 2), U_T from `usage` by Eq. 1:
    /// `[(server, inbound_bps, outbound_bps)]`; `None` counts the tenant fully busy (U = 1).
    #[pyo3(signature = (id, usage = None, k = 1.0))]
    fn score(&self, id: u32, usage: Option<Vec<(String, f64, f64)>>, k: f64) -> PyResult<f64> {
        let t = self
            .p
            .tenants
            .get(&id)
            .ok_or_else(|| PyValueError::new_err(format!("no tenant {id}")))?;
        let u = match usage {
            None => 1.0,
            Some(rows) => {
                let dc = &self.p.dc;
                let mut hu = Vec::new();
                for (name, inbound, outbound) in rows {
                    let node = dc.names.iter().position(|n| *n == name);
                    let server = node.map(|i| dc.server_of[i]).filter(|&s| s != u32::MAX);
                    let server = server.ok_or_else(|| {
                        PyValueError::new_err(format!("{name:?} is not a server"))
                    })?;
                    hu.push(HypervisorUsage {
                        server,
                        inbound,
                        outbound,
                    });
                }
                u_factor(t, &hu)
            }
        };
        Ok(score(t, u, k))
    }

    /// One draw of Fig. 10 at inactive ratio `r_in`: (gain of every active tenant
    /// using the network, link utilisation under QShare, under static reservation).
    /// `sharing`: `per-link` (§7.3.2 as written) or `max-min`; `server_port_bps`:
    /// the server links' capacity while sharing (default: the topology's).
    #[pyo3(signature = (r_in, seed, sharing = "per-link", server_port_bps = None))]
    fn gain_at(
        &self,
        py: Python<'_>,
        r_in: f64,
        seed: u64,
        sharing: &str,
        server_port_bps: Option<u64>,
    ) -> PyResult<(Vec<f64>, Vec<f64>, Vec<f64>)> {
        let sharing = match sharing {
            "per-link" => Sharing::PerLink,
            "max-min" => Sharing::MaxMin,
            s => {
                return Err(PyValueError::new_err(format!(
                    "sharing {s:?}: expected \"per-link\" or \"max-min\""
                )))
            }
        };
        if !(0.0..1.0).contains(&r_in) {
            return Err(PyValueError::new_err("r_in: expected 0 <= r_in < 1"));
        }
        let model = Model {
            sharing,
            server_port_bps,
        };
        let r = py.detach(|| gain_at(&self.p, r_in, seed, model));
        Ok((r.gain.into_values().collect(), r.util_qshare, r.util_static))
    }

    /// Embedded tenants: `{id: {vms, guarantee_bps, root, layer, rank, servers,
    /// paths, links, cb, cq}}` (`paths`: each server's link ids up to the root).
    fn tenants<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        let dc = &self.p.dc;
        for (id, t) in &self.p.tenants {
            let d = PyDict::new(py);
            d.set_item("vms", t.request.hose.n())?;
            d.set_item("guarantee_bps", t.request.hose.b.clone())?;
            d.set_item("root", &dc.names[t.root as usize])?;
            d.set_item("layer", t.layer)?;
            d.set_item("rank", t.rank)?;
            d.set_item("paths", t.paths.clone())?;
            let servers: Vec<(String, u32)> = t
                .servers
                .iter()
                .map(|&(s, k)| (dc.server_name(s).to_string(), k))
                .collect();
            d.set_item("servers", servers)?;
            d.set_item(
                "links",
                t.links.iter().map(|&(l, r)| (l, r)).collect::<Vec<_>>(),
            )?;
            d.set_item("cb", t.cb)?;
            d.set_item("cq", t.cq)?;
            out.set_item(id, d)?;
        }
        Ok(out)
    }

    /// Server names, in server order.
    fn servers(&self) -> Vec<String> {
        let dc = &self.p.dc;
        dc.servers
            .iter()
            .map(|&s| dc.names[s as usize].clone())
            .collect()
    }

    /// Links: `[(upper, lower, capacity_bps, reserved_bps, tenants)]`, by link id.
    fn links(&self) -> Vec<(String, String, u64, u64, u32)> {
        let dc = &self.p.dc;
        dc.links
            .iter()
            .map(|l| {
                (
                    dc.names[l.upper as usize].clone(),
                    dc.names[l.lower as usize].clone(),
                    l.capacity,
                    l.reserved,
                    l.tenants,
                )
            })
            .collect()
    }

    /// One control interval of Algorithm 2 and its configuration: tenants holding
    /// dedicated queues (`held` from the last interval, `scores` S_T per tenant),
    /// their DSCP values and every link's queues `(queue, tenants, weight)` with
    /// weights in 1..=`max_weight`.
    #[pyo3(signature = (scores, held = Vec::new(), seed = 1, max_weight = 15))]
    fn bind<'py>(
        &self,
        py: Python<'py>,
        scores: BTreeMap<u32, f64>,
        held: Vec<u32>,
        seed: u64,
        max_weight: u32,
    ) -> PyResult<Bound<'py, PyDict>> {
        if max_weight == 0 {
            return Err(PyValueError::new_err("max_weight: expected at least 1"));
        }
        let held: BTreeSet<u32> = held.into_iter().collect();
        let ded = allocate_queues(&self.p, &held, &scores, seed);
        let b = configure(&self.p, &ded, max_weight);
        let d = PyDict::new(py);
        d.set_item("dedicated", b.dedicated.iter().copied().collect::<Vec<_>>())?;
        d.set_item("dscp", b.dscp.clone())?;
        d.set_item("dscp_exhausted", b.dscp_exhausted.clone())?;
        let ports: Vec<PortRow> = b.ports.iter().map(|p| (p.link, p.queues.clone())).collect();
        d.set_item("ports", ports)?;
        Ok(d)
    }
}
