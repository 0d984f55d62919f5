"""Every figure and table of the five papers, and what tenantnet does with it: the
reproduction that checks its claims, or why none does.

The documentation's table of claims (``scripts/claims_table.py``) lists every item
here; a test checks that every reproduction appears and every item is accounted for.
"""

from __future__ import annotations

from typing import NamedTuple


class Item(NamedTuple):
    """A figure or table of a paper."""

    paper: str
    """The paper, as the documentation names it."""
    item: str
    """``Fig. N`` or ``Table N`` as the paper numbers it."""
    what: str
    """What it shows, in a few words."""
    reproductions: tuple[str, ...] = ()
    """The reproductions that check its claims (``tenantnet reproduce NAME``)."""
    why_not: str = ""
    """Why no reproduction checks it: ``not applicable: ...`` (nothing a packet
    simulator can say) or ``not reproduced yet: ...`` (it could, and does not yet)."""


NOT_YET = "not reproduced yet: "
NA = "not applicable: "

DIAGRAM = NA + "a diagram, no measurement"

ITEMS: tuple[Item, ...] = (
    Item("BarberQ", "Fig. 1", "two services share a port: goodput", ("barberq-fig1",)),
    Item("BarberQ", "Fig. 2", "8 services: fairness and throughput over time", ("barberq-fig2",)),
    Item("BarberQ", "Fig. 3", "FCT against non-ECN schemes", ("barberq-fig3",)),
    Item("BarberQ", "Fig. 4", "FCT against ECN schemes", ("barberq-fig4",)),
    Item("C2QoS", "Fig. 1", "token buckets in bytes or packets fail to isolate", ("c2qos-fig1",)),
    Item("C2QoS", "Fig. 2", "where hardware and software switches contend",
         why_not=DIAGRAM),
    Item("C2QoS", "Fig. 3", "TCP latency against the number of VMs", ("c2qos-fig3",)),
    Item("C2QoS", "Fig. 4", "OVS's batch I/O processing", why_not=DIAGRAM),
    Item("C2QoS", "Fig. 5", "CPU cost against traffic characteristics", ("c2qos-fig5-6",)),
    Item("C2QoS", "Fig. 6", "CPU cost against deployment", ("c2qos-fig5-6",)),
    Item("C2QoS", "Fig. 7", "C2TB's MIN and MAX bandwidth", ("c2qos-fig7",)),
    Item("C2QoS", "Fig. 8", "HBS's design", why_not=DIAGRAM),
    Item("C2QoS", "Fig. 9", "the changes to OVS-DPDK", why_not=DIAGRAM),
    Item("C2QoS", "Fig. 10", "TCP bandwidth and latency through three phases",
         ("c2qos-fig10",)),
    Item("C2QoS", "Fig. 11", "accuracy with mixed sizes and many VMs; HBS's levels",
         ("c2qos-fig11",)),
    Item("C2QoS", "Fig. 12", "Nginx and FTP under a pressure test", ("c2qos-fig12",)),
    Item("C2QoS", "Fig. 13", "larger packets than paid for; the NIC handler", ("c2qos-fig13",)),
    Item("MBFQ", "Fig. 1", "scheduling models", why_not=DIAGRAM),
    Item("MBFQ", "Fig. 2", "burstiness of a NIC's transmit completions",
         why_not=NA + "it measures a Hyper-V host's NIC completions, below what a packet "
         "model represents"),
    Item("MBFQ", "Fig. 3", "phase 1's pseudocode",
         why_not=NA + "pseudocode (implemented in the macroscheduler)"),
    Item("MBFQ", "Fig. 4", "phase 2's pseudocode",
         why_not=NA + "pseudocode (implemented in the macroscheduler)"),
    Item("MBFQ", "Fig. 5", "variance of the measured send rate against T", ("mbfq-fig5",)),
    Item("MBFQ", "Fig. 6", "ramp-up and ramp-down test", ("mbfq-fig6",)),
    Item("MBFQ", "Fig. 7", "a VM's ramp-up with TCP alone and under MBFQ", ("mbfq-fig7",)),
    Item("MBFQ", "Fig. 8", "the reclaim timer's effect on a file copy",
         why_not=NOT_YET + "the timer is modelled (`mbfq.reclaim_after`), but the experiment "
         "needs an application-paced, bursty TCP source (a file copy using about 800 Mb/s), "
         "which tenantnet's workloads do not have"),
    Item("MBFQ", "Table 1", "notation", why_not=NA + "notation"),
    Item("QShare", "Fig. 1", "the hose model and the bandwidth reserved on each link",
         why_not=NA + "an example (its reservation formulas are the placement's, tested "
         "in tests/test_qshare.py)"),
    Item("QShare", "Fig. 2", "WFQ against end-host ElasticSwitch", ("qshare-fig2",)),
    Item("QShare", "Fig. 3", "(a), (b) design examples; (c) two queues, A dedicated",
         ("qshare-fig3c",)),
    Item("QShare", "Fig. 4", "QShare's architecture", why_not=DIAGRAM),
    Item("QShare", "Fig. 5", "the bandwidth a tenant's tree requires", why_not=DIAGRAM),
    Item("QShare", "Fig. 6", "the software implementation", why_not=DIAGRAM),
    Item("QShare", "Fig. 7", "(a) ten tenants on the testbed; (b), (c) unpredictable "
         "demand", ("qshare-fig7a", "qshare-fig7b", "qshare-fig7c")),
    Item("QShare", "Fig. 8", "FCT against fabric load", ("qshare-fig8",)),
    Item("QShare", "Fig. 9", "the workloads' flow sizes",
         why_not=NA + "input data: the distributions are in the package (`cdf = "
         "\"enterprise\"`, `\"datamining\"`)"),
    Item("QShare", "Fig. 10", "gain and link use in a large datacenter", ("qshare-fig10",)),
    Item("QShare", "Fig. 11", "ElasticSwitch's trade-off (appendix)", ("qshare-fig2",)),
    Item("QShare", "Fig. 12", "guarantee partitioning re-learns after a TM change",
         why_not=DIAGRAM),
    Item("QShare", "Table 1", "queue scarcity in a k = 16 fat-tree",
         ("qshare-table1", "qshare-load")),
    Item("QShare", "Table 2", "properties of related work", why_not=NA + "a survey"),
    Item("Trinity", "Fig. 1", "tenant abstractions", why_not=DIAGRAM),
    Item("Trinity", "Fig. 2", "the dilemma: conservative and aggressive probing",
         ("trinity-fig2",)),
    Item("Trinity", "Fig. 3", "Trinity's framework", why_not=DIAGRAM),
    Item("Trinity", "Fig. 4", "the VM-to-VM channel's pipeline", why_not=DIAGRAM),
    Item("Trinity", "Fig. 5", "the testbed", why_not=NA + "the testbed (each reproduction "
         "builds it)"),
    Item("Trinity", "Fig. 6", "A2's throughput against B's connections", ("trinity-fig6",)),
    Item("Trinity", "Fig. 7", "guarantees and work conservation, three schemes",
         ("trinity-fig7",)),
    Item("Trinity", "Fig. 8", "FileStore and MapReduce shuffles", ("trinity-fig8",)),
    Item("Trinity", "Fig. 9", "memcached under a UDP attack", ("trinity-fig9",)),
    Item("Trinity", "Fig. 10", "CPU overhead against active flows",
         why_not=NA + "it measures a host's CPU"),
    Item("Trinity", "Fig. 11", "CPU overhead against network load",
         why_not=NA + "it measures a host's CPU"),
    Item("Trinity", "Fig. 12", "convergence under mixed traffic", ("trinity-fig12",)),
    Item("Trinity", "Table I", "previous approaches", why_not=NA + "a survey"),
    Item("Trinity", "Tables II-IV", "short flows' completion times", ("trinity-tables",)),
    Item("Trinity", "Eq. 4", "the spare in proportion to the guarantees (§III-C), over "
         "random tenants", ("trinity-shares",)),
)
"""The five papers' figures and tables, in the papers' order."""

PAPERS = ("BarberQ", "C2QoS", "MBFQ", "QShare", "Trinity")
