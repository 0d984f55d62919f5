//! MBFQ's macroscheduler (To, Padhye, Varghese, Firestone, HotMiddlebox 2016), as
//! pure functions of measured send rates: Phase 1 (Fig. 3) turns each VM's send
//! rate SR into a target rate TR; Phase 2 (Fig. 4) turns the targets into allocated
//! rates AR that never oversubscribe the capacity C and share what is left over in
//! proportion to weights. §4's rule that the macroscheduler switches the
//! microschedulers off while the NIC is under 80 % utilised is [`MbfqParams::active`].
//! Names follow the paper's Table 1. Rates are bit/s as `f64`: the paper works at
//! 1 Mbps granularity, and the order of operations is fixed, so results are
//! deterministic.
//!
//! Where the pseudocode leaves room (each choice is exercised by a test below):
//! * Fig. 4 never lowers `AvailBw_All` when it hands out `FairShare_i`, and lines
//!   40–45 are not indented under line 36. Read literally, every pass would hand
//!   out the whole of `AvailBw_All` again, and VMs already at their target would
//!   be removed twice. We read it as the text describes: each pass shares out what
//!   is available at its start (`AvailBw_All` and `W_All` of that moment) among
//!   the VMs still below TR, and takes back what overshoots a VM's TR for the next
//!   pass. The loop ends when nothing is left or no VM is below its TR; it runs at
//!   most once per VM.
//! * Line 8's "SR < 0.85 × AR for the last 500 msec" is counted in whole intervals,
//!   as the text says ("for five consecutive intervals"): the condition holds when
//!   the last ⌈500 ms / T⌉ intervals (at least one) all measured SR < 0.85 × AR
//!   with the microscheduler on. Line 12's test is SR > 0.95 × AR, as in the code
//!   (the text says ≥).
//! * While the microschedulers are off, AR is `Disabled` (line 6), RU and the
//!   low-rate count restart from 0.
//!
//! [`Mbfq`] is the host policy: every T it runs the macroscheduler on the send
//! rates the datapath measured over T and sets each VM's shaper (the
//! microscheduler) to AR, or switches them off. T is a whole multiple of the hosts'
//! tick (by default the tick is T); with several ticks per T the send rates and NIC
//! utilisation are the means over T. [`MbfqSpec`] is its `[vswitch.mbfq]` table.

mod table;
pub use table::MbfqSpec;

use super::policy::{Cell, ColumnSpec, HostCtx, HostMeasure, HostPolicy};
use super::shaper::ShaperId;
use crate::engine::{to_secs, Time};
use crate::net::VmId;

/// Every MBFQ constant; the defaults are the published values.
#[derive(Clone, Debug, PartialEq)]
pub struct MbfqParams {
    /// T, the macroscheduler period [100 ms] (§4).
    pub interval: Time,
    /// How long SR must stay under `reclaim_below` × AR before bandwidth is
    /// reclaimed [500 ms] (§3, §5.4).
    pub reclaim_after: Time,
    /// The "not using its allocation" fraction [0.85] (Fig. 3 line 8).
    pub reclaim_below: f64,
    /// TR = `headroom` × SR when reclaiming or when AR is disabled [1.1] (lines 7, 10).
    pub headroom: f64,
    /// The "fully using its allocation" fraction [0.95] (line 12).
    pub full_use: f64,
    /// TR multipliers of the first two ramp-up stages [1.2, 1.5] (lines 15, 17).
    pub ramp: [f64; 2],
    /// Their cap, as a fraction of C added to AR [0.1] (lines 15, 17).
    pub ramp_cap: f64,
    /// Multiplier of the third stage, TR = max(`ramp_final` × AR, MG) [2.0] (line 19).
    pub ramp_final: f64,
    /// The floor under every TR [10 Mb/s] (line 23).
    pub floor_bps: f64,
    /// NIC utilisation under which the microschedulers are switched off [0.8] (§4).
    pub activate_above: f64,
}

impl Default for MbfqParams {
    fn default() -> Self {
        MbfqParams {
            interval: 100_000_000_000,
            reclaim_after: 500_000_000_000,
            reclaim_below: 0.85,
            headroom: 1.1,
            full_use: 0.95,
            ramp: [1.2, 1.5],
            ramp_cap: 0.1,
            ramp_final: 2.0,
            floor_bps: 10e6,
            activate_above: 0.8,
        }
    }
}

impl MbfqParams {
    /// Consecutive low intervals that make "the last 500 msec".
    pub fn reclaim_intervals(&self) -> u32 {
        (self.reclaim_after.div_ceil(self.interval.max(1)) as u32).max(1)
    }

    /// Whether the microschedulers run at this NIC utilisation (§4).
    pub fn active(&self, nic_utilisation: f64) -> bool {
        nic_utilisation >= self.activate_above
    }
}

/// What the macroscheduler remembers about one VM between runs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VmState {
    /// AR, the allocated rate; `None` is the paper's `Disabled`.
    pub ar: Option<f64>,
    /// RU, consecutive iterations the VM needed bandwidth (0–3).
    pub ru: u32,
    /// Consecutive intervals with SR < `reclaim_below` × AR.
    pub low: u32,
}

/// One VM's inputs to a macroscheduler run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VmInput {
    /// SR, the send rate measured over the last T.
    pub sr: f64,
    /// MG, the minimum bandwidth guarantee.
    pub mg: f64,
    /// W, the weight (the paper: MG / C).
    pub w: f64,
}

/// Phase 1 (Fig. 3, lines 5–23) for one VM: its target rate TR, updating RU and
/// the low-rate count.
pub fn target_rate(p: &MbfqParams, c: f64, st: &mut VmState, vm: &VmInput) -> f64 {
    let sr = vm.sr;
    let tr = match st.ar {
        None => {
            st.low = 0;
            p.headroom * sr
        }
        Some(ar) => {
            st.low = if sr < p.reclaim_below * ar {
                st.low + 1
            } else {
                0
            };
            if st.low >= p.reclaim_intervals() {
                st.ru = st.ru.saturating_sub(1);
                p.headroom * sr
            } else if sr > p.full_use * ar {
                st.ru = (st.ru + 1).min(3);
                match st.ru {
                    1 => (p.ramp[0] * ar).min(ar + p.ramp_cap * c),
                    2 => (p.ramp[1] * ar).min(ar + p.ramp_cap * c),
                    _ => (p.ramp_final * ar).max(vm.mg),
                }
            } else {
                st.ru = st.ru.saturating_sub(1);
                ar
            }
        }
    };
    tr.max(p.floor_bps)
}

/// Phase 2 (Fig. 3 lines 24–32 and Fig. 4): the new rates NR. Each VM starts at
/// min(TR, MG); what is left of `c` goes to the VMs below their TR in proportion
/// to `w`, pass after pass, each capped at its TR (see the module notes).
pub fn allocate(c: f64, tr: &[f64], mg: &[f64], w: &[f64]) -> Vec<f64> {
    let n = tr.len();
    debug_assert!(mg.len() == n && w.len() == n);
    let mut nr: Vec<f64> = (0..n).map(|i| tr[i].min(mg[i])).collect();
    let mut below: Vec<bool> = (0..n).map(|i| nr[i] < tr[i]).collect();
    let mut avail = c - nr.iter().sum::<f64>();
    loop {
        let w_all: f64 = (0..n).filter(|&i| below[i]).map(|i| w[i]).sum();
        if avail <= 0.0 || w_all <= 0.0 {
            return nr;
        }
        let pool = avail;
        avail = 0.0;
        for i in 0..n {
            if !below[i] {
                continue;
            }
            nr[i] += pool * w[i] / w_all;
            if nr[i] >= tr[i] {
                avail += nr[i] - tr[i];
                nr[i] = tr[i];
                below[i] = false;
            }
        }
    }
}

/// What one macroscheduler run decided.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// NIC utilisation under the threshold: microschedulers off, nothing throttled.
    Inactive,
    /// New allocated rates, and the targets they came from, per VM.
    Rates {
        /// AR per VM.
        ar: Vec<f64>,
        /// TR per VM.
        tr: Vec<f64>,
    },
}

/// One macroscheduler run (§4 then Figs. 3 and 4) over the VMs sharing capacity `c`.
pub fn run(
    p: &MbfqParams,
    c: f64,
    nic_utilisation: f64,
    states: &mut [VmState],
    vms: &[VmInput],
) -> Decision {
    if !p.active(nic_utilisation) {
        for s in states.iter_mut() {
            *s = VmState::default();
        }
        return Decision::Inactive;
    }
    let tr: Vec<f64> = states
        .iter_mut()
        .zip(vms)
        .map(|(s, v)| target_rate(p, c, s, v))
        .collect();
    let mg: Vec<f64> = vms.iter().map(|v| v.mg).collect();
    let w: Vec<f64> = vms.iter().map(|v| v.w).collect();
    let ar = allocate(c, &tr, &mg, &w);
    for (s, &a) in states.iter_mut().zip(&ar) {
        s.ar = Some(a);
    }
    Decision::Rates { ar, tr }
}

/// The `mbfq` host policy: the macroscheduler's memory of each of the host's VMs.
#[derive(Clone, Debug)]
pub struct Mbfq {
    p: MbfqParams,
    states: Vec<VmState>,
    /// Latest TR per VM, for the record (`None` while inactive).
    target: Vec<Option<f64>>,
    /// Measurements of the ticks since the last run, while T spans several.
    since: Since,
}

/// What the ticks since the macroscheduler's last run measured: bits each VM sent,
/// and the NIC's utilisation times seconds.
#[derive(Clone, Debug, Default)]
struct Since {
    time: Time,
    bits: Vec<f64>,
    nic: f64,
}

impl Mbfq {
    /// Its columns in `vm_rates`: TR and RU.
    pub const COLUMNS: &'static [ColumnSpec] = &[
        ColumnSpec {
            name: "target_gbps",
            other: Cell::Rate(None),
        },
        ColumnSpec {
            name: "ru",
            other: Cell::Count(0),
        },
    ];

    /// The policy for a host with `vms`.
    pub fn new(p: &MbfqParams, vms: &[VmId]) -> Self {
        Mbfq {
            p: p.clone(),
            states: vec![VmState::default(); vms.len()],
            target: vec![None; vms.len()],
            since: Since {
                bits: vec![0.0; vms.len()],
                ..Default::default()
            },
        }
    }

    /// Adds a tick's measurements to those since the last run; the means over T
    /// (send rates, NIC utilisation) once T is complete. One tick per T hands its
    /// measurements on unchanged.
    fn over_t(&mut self, m: &HostMeasure) -> Option<(Vec<f64>, f64)> {
        let s = &mut self.since;
        if s.time == 0 && m.interval >= self.p.interval {
            return Some((m.sent_bps.to_vec(), m.nic_utilisation));
        }
        let dt = to_secs(m.interval);
        s.time += m.interval;
        for (b, r) in s.bits.iter_mut().zip(m.sent_bps) {
            *b += r * dt;
        }
        s.nic += m.nic_utilisation * dt;
        if s.time < self.p.interval {
            return None;
        }
        let secs = to_secs(s.time);
        let sr = s.bits.iter().map(|b| b / secs).collect();
        let util = s.nic / secs;
        *s = Since {
            bits: vec![0.0; s.bits.len()],
            ..Default::default()
        };
        Some((sr, util))
    }
}

impl HostPolicy for Mbfq {
    /// §4: every T, Figs. 3–4 on the measured SRs; each VM's shaper gets AR (at
    /// least 1 bit/s), or is switched off while the NIC is under 80 % utilised.
    fn tick(&mut self, ctx: &mut HostCtx, m: &HostMeasure) {
        let Some((sent, util)) = self.over_t(m) else {
            return;
        };
        let c = ctx.capacity_bps as f64;
        let inputs: Vec<VmInput> = ctx
            .mine
            .iter()
            .zip(&sent)
            .map(|(v, &sr)| {
                let vm = &ctx.vms[v.idx()];
                let mg = vm.guarantee_bps as f64;
                VmInput {
                    sr,
                    mg,
                    w: vm.weight.unwrap_or(mg / c),
                }
            })
            .collect();
        let decision = run(&self.p, c, util, &mut self.states, &inputs);
        let mine = ctx.mine;
        for (i, &v) in mine.iter().enumerate() {
            let (rate, tr) = match &decision {
                Decision::Inactive => (None, None),
                Decision::Rates { ar, tr } => (Some(ar[i].round().max(1.0) as u64), Some(tr[i])),
            };
            self.target[i] = tr;
            ctx.shapers.set_rate(ctx.now, ShaperId::of_vm(v), rate);
        }
    }

    fn record(&self, i: usize, out: &mut Vec<Cell>) {
        out.push(Cell::Rate(self.target[i]));
        out.push(Cell::Count(self.states[i].ru as u64));
    }
}

#[cfg(test)]
mod tests;
