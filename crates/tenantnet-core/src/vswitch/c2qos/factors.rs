//! The deployment coefficients of the bandwidth–CPU model (C2QoS §III-C): the same
//! traffic costs more cycles when the VM's memory is on another NUMA node than the
//! vswitch's (R_NUMA = 1.4, "40 % more", mostly in the copy) and when more VMs
//! share the host (R_#VMs: 1.14 for 4 VMs on one node, 1.07 for 4 on different
//! nodes; rising steeply below 8 VMs, flat above 10). The factors are independent,
//! so a VM's packets cost C_single · Π R_i (§III-D).
//!
//! The paper states R_#VMs only at 4 VMs; the other points of the curve are our
//! reading of its shape (spec `c2qos.md` §1.4, marked guesses): on one node 1.00,
//! 1.05, 1.14, 1.25 and 1.28 at 1, 2, 4, 8 and 10 or more VMs, linear in between;
//! on different nodes half the increase.

crate::kinds::named_kinds! {
    /// Where a VM's memory is (`tenants[].vms[].numa`).
    Numa {
        /// On the vswitch's NUMA node: R_NUMA = 1.
        Local = "local",
        /// On another node: R_NUMA = `vswitch.cpu.numa_remote`.
        Remote = "remote",
    }
}

crate::kinds::named_kinds! {
    /// How R_#VMs follows the number of VMs on a host (`vswitch.cpu.vms_factor`).
    VmsFactor {
        /// 1.0 whatever the number.
        None = "none",
        /// The VMs share one NUMA node (the worst case: 1.14 for 4 VMs).
        SameNode = "same_node",
        /// The VMs are spread over nodes (1.07 for 4 VMs).
        DifferentNodes = "different_nodes",
    }
}

/// R_#VMs on one node at 1, 2, 4, 8 and 10 VMs.
const SAME_NODE: [(f64, f64); 5] = [
    (1.0, 1.00),
    (2.0, 1.05),
    (4.0, 1.14),
    (8.0, 1.25),
    (10.0, 1.28),
];

impl VmsFactor {
    /// R_#VMs with `n` VMs on the host.
    pub fn of(self, n: usize) -> f64 {
        let n = (n.max(1) as f64).min(10.0);
        let i = SAME_NODE.iter().position(|p| p.0 >= n).unwrap_or(4);
        let same = if i == 0 {
            SAME_NODE[0].1
        } else {
            let (a, b) = (SAME_NODE[i - 1], SAME_NODE[i]);
            a.1 + (b.1 - a.1) * (n - a.0) / (b.0 - a.0)
        };
        match self {
            VmsFactor::None => 1.0,
            VmsFactor::SameNode => same,
            VmsFactor::DifferentNodes => 1.0 + (same - 1.0) / 2.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_points_and_the_shape() {
        assert_eq!(VmsFactor::SameNode.of(4), 1.14);
        assert!((VmsFactor::DifferentNodes.of(4) - 1.07).abs() < 1e-12);
        assert_eq!(VmsFactor::SameNode.of(1), 1.0);
        assert!((VmsFactor::SameNode.of(3) - 1.095).abs() < 1e-12);
        assert_eq!(VmsFactor::SameNode.of(16), 1.28);
        assert_eq!(VmsFactor::None.of(16), 1.0);
    }
}
