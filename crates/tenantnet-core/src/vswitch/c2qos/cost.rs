//! The bandwidth–CPU model of C2QoS (§III): the cycles a poll-mode core spends to
//! forward one packet of a VM, by stage (Eq. 1: C = C_ingress + C_classification +
//! C_egress), and the deployment coefficients (§III-C: C_VM = Π R_i · C_single).
//!
//! The paper gives one hard number and ratios; the per-stage constants are derived
//! from them (spec `c2qos.md` §1.4): 4 Gb/s of 1024-byte packets cost 0.792 G
//! cycles/s at R = 1.4 × 1.14 (§VI-A), so c(1024 B, one flow) = 1016 cycles at R = 1;
//! ingress grows linearly with size, c_in(1500) = 2.2 · c_in(64) ("more than twice",
//! §III-B); classification with many flows (EMC misses) costs 1.67× one flow's
//! (§III-B); egress is constant. The split of the constant part (ingress 400,
//! classification 175, egress 120) is our choice.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

crate::kinds::named_kinds! {
    /// A VM's flow pattern as classification sees it (§III-B, Fig. 5(c)).
    Flows {
        /// One flow (or few): every packet hits the exact-match cache.
        Single = "single",
        /// Many flows: packets miss the EMC and pay the datapath classifier.
        Multiple = "multiple",
    }
}

/// Per-packet cycles of each forwarding stage at R = 1 (`vswitch.cpu.costs`).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Costs {
    /// Ingress (copying the packet out of the guest) of a 64-byte packet [400].
    #[serde(default = "d_ingress_base")]
    pub ingress_base: f64,
    /// Ingress cycles per byte beyond 64 [0.3343 = 480 / 1436, so that a 1500-byte
    /// packet's ingress costs 2.2 times a 64-byte one's].
    #[serde(default = "d_ingress_per_byte")]
    pub ingress_per_byte: f64,
    /// Classification of a packet of a single-flow VM (an EMC hit) [175].
    #[serde(default = "d_classify_single")]
    pub classify_single: f64,
    /// Classification of a packet of a many-flow VM (EMC miss, datapath
    /// classifier) [292 = 1.67 × 175].
    #[serde(default = "d_classify_multiple")]
    pub classify_multiple: f64,
    /// Egress (descriptors to the NIC) [120].
    #[serde(default = "d_egress")]
    pub egress: f64,
}

fn d_ingress_base() -> f64 {
    400.0
}
fn d_ingress_per_byte() -> f64 {
    480.0 / 1436.0
}
fn d_classify_single() -> f64 {
    175.0
}
fn d_classify_multiple() -> f64 {
    175.0 * 1.67
}
fn d_egress() -> f64 {
    120.0
}

impl Default for Costs {
    fn default() -> Self {
        Costs {
            ingress_base: d_ingress_base(),
            ingress_per_byte: d_ingress_per_byte(),
            classify_single: d_classify_single(),
            classify_multiple: d_classify_multiple(),
            egress: d_egress(),
        }
    }
}

impl Costs {
    /// C_ingress of a packet of `size` bytes (no cheaper than a 64-byte one).
    pub fn ingress(&self, size: u32) -> f64 {
        self.ingress_base + self.ingress_per_byte * (size.max(64) - 64) as f64
    }

    /// c(s, f) = c_in(s) + c_cls(f) + c_eg at R = 1.
    pub fn per_packet(&self, size: u32, flows: Flows) -> f64 {
        let cls = match flows {
            Flows::Single => self.classify_single,
            Flows::Multiple => self.classify_multiple,
        };
        self.ingress(size) + cls + self.egress
    }

    /// The cycles a packet costs a VM with deployment factor `r` (Π R_i), whole.
    #[inline]
    pub fn cycles(&self, size: u32, flows: Flows, r: f64) -> u64 {
        (self.per_packet(size, flows) * r).round() as u64
    }

    /// The checks of a `costs` table: every constant finite and not negative, and
    /// a packet costing at least one cycle. An error names the key.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        for (k, v) in [
            ("ingress_base", self.ingress_base),
            ("ingress_per_byte", self.ingress_per_byte),
            ("classify_single", self.classify_single),
            ("classify_multiple", self.classify_multiple),
            ("egress", self.egress),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err((
                    k,
                    format!("{v} is not a number of cycles; expected one ≥ 0"),
                ));
            }
        }
        if self.per_packet(64, Flows::Single) < 1.0 {
            return Err((
                "ingress_base",
                "a 64-byte packet would cost no cycles; expected costs adding up to at least 1"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// C_alloc (§IV-A-1): the cycles/s a VM needs for `bps` of packets of its SLA
/// preference (`size` bytes, `flows`), at deployment factor `r`.
pub fn c_alloc(costs: &Costs, bps: u64, size: u32, flows: Flows, r: f64) -> u64 {
    let pps = bps as f64 / (8.0 * size as f64);
    (pps * costs.per_packet(size, flows) * r).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_derived_table() {
        // spec c2qos.md §1.4: c single / multiple at R = 1
        let c = Costs::default();
        for (s, single, multiple) in [
            (64, 695, 812),
            (128, 716, 834),
            (256, 759, 876),
            (512, 845, 962),
            (1024, 1016, 1133),
            (1500, 1175, 1292),
        ] {
            assert_eq!(c.cycles(s, Flows::Single, 1.0), single, "{s}");
            assert_eq!(c.cycles(s, Flows::Multiple, 1.0), multiple, "{s}");
        }
        // "more than twice": ingress of 1500 B is 2.2 × that of 64 B
        assert!((c.ingress(1500) / c.ingress(64) - 2.2).abs() < 1e-12);
    }

    #[test]
    fn the_papers_anchor() {
        // §VI-A: 4 Gb/s of 1024-byte packets on NUMA node 1 with 4 VMs on one node
        // cost 0.792 G cycles/s (36 % of 2.2 GHz); 1 Gb/s a quarter of it
        let c = Costs::default();
        let r = 1.4 * 1.14;
        let four = c_alloc(&c, 4_000_000_000, 1024, Flows::Single, r);
        assert!((four as f64 / 0.792e9 - 1.0).abs() < 0.001, "{four}");
        let one = c_alloc(&c, 1_000_000_000, 1024, Flows::Single, r);
        assert!((one as f64 / 0.198e9 - 1.0).abs() < 0.001, "{one}");
    }

    #[test]
    fn bad_costs_are_named() {
        let c = Costs {
            egress: -1.0,
            ..Costs::default()
        };
        assert_eq!(c.check().unwrap_err().0, "egress");
        let zero = Costs {
            ingress_base: 0.0,
            ingress_per_byte: 0.0,
            classify_single: 0.0,
            classify_multiple: 0.0,
            egress: 0.0,
        };
        assert!(zero.check().is_err());
    }
}
