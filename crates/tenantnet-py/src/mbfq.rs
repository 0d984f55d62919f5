//! `tenantnet._core.Macroscheduler`: MBFQ's macroscheduler (`vswitch::mbfq::run`) for
//! one host, called from Python by the emulation's agent (`tenantnet emulate`), so that
//! the agent on real Linux runs the code the simulator runs.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use tenantnet_core::engine::to_secs;
use tenantnet_core::vswitch::mbfq::{run, Decision, VmInput, VmState};
use tenantnet_core::vswitch::policy::PolicyTable;
use tenantnet_core::vswitch::{MbfqParams, MbfqSpec};

/// The macroscheduler of one host: its constants (a `[vswitch.mbfq]` table), the NIC's
/// capacity C and each VM's memory (AR, RU, the low-rate count) between runs.
#[pyclass(module = "tenantnet._core")]
pub struct Macroscheduler {
    p: MbfqParams,
    c: f64,
    states: Vec<VmState>,
}

#[pymethods]
impl Macroscheduler {
    /// A macroscheduler for `vms` VMs on a NIC of `capacity_bps`, with the constants of
    /// `table` (the scenario's `[vswitch.mbfq]` as JSON; `{}` for the published ones).
    #[new]
    fn new(table: &str, capacity_bps: f64, vms: usize) -> PyResult<Self> {
        let spec: MbfqSpec = serde_json::from_str(table)
            .map_err(|e| PyValueError::new_err(format!("vswitch.mbfq: {e}")))?;
        let p = spec
            .resolve()
            .map_err(|(k, m)| PyValueError::new_err(format!("vswitch.mbfq.{k}: {m}")))?;
        if !(capacity_bps.is_finite() && capacity_bps > 0.0) {
            return Err(PyValueError::new_err(format!(
                "capacity_bps = {capacity_bps}: expected a positive rate"
            )));
        }
        Ok(Macroscheduler {
            p,
            c: capacity_bps,
            states: vec![VmState::default(); vms],
        })
    }

    /// T, the period between runs, in seconds.
    #[getter]
    fn interval_s(&self) -> f64 {
        to_secs(self.p.interval)
    }

    /// One run over the send rates `sr` (bit/s over the last T), guarantees `mg` and
    /// weights `w` (bit/s, one per VM) at NIC utilisation `nic_utilisation`: `None`
    /// while the microschedulers are off (§4), else (AR, TR) per VM in bit/s.
    fn run(
        &mut self,
        nic_utilisation: f64,
        sr: Vec<f64>,
        mg: Vec<f64>,
        w: Vec<f64>,
    ) -> PyResult<Option<(Vec<f64>, Vec<f64>)>> {
        let n = self.states.len();
        if sr.len() != n || mg.len() != n || w.len() != n {
            return Err(PyValueError::new_err(format!(
                "expected {n} send rates, guarantees and weights, got {}, {} and {}",
                sr.len(),
                mg.len(),
                w.len()
            )));
        }
        let inputs: Vec<VmInput> = (0..n)
            .map(|i| VmInput {
                sr: sr[i],
                mg: mg[i],
                w: w[i],
            })
            .collect();
        Ok(
            match run(&self.p, self.c, nic_utilisation, &mut self.states, &inputs) {
                Decision::Inactive => None,
                Decision::Rates { ar, tr } => Some((ar, tr)),
            },
        )
    }

    /// RU of each VM (consecutive runs it needed more bandwidth, 0–3).
    #[getter]
    fn ru(&self) -> Vec<u32> {
        self.states.iter().map(|s| s.ru).collect()
    }
}
