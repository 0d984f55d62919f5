"""Reproductions of the papers' key results: ``tenantnet reproduce NAME --out DIR``.

Each entry builds its scenarios, runs them, and writes a plot (PNG) and the data
(CSV) into the output folder. The tests run the same code, scaled where needed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path


def _lazy(module: str, fn: str) -> Callable[[Path], list[Path]]:
    """``module.fn``, imported when called (listing reproductions imports no plotting)."""
    def call(out: Path) -> list[Path]:
        f: Callable[[Path], list[Path]] = getattr(
            importlib.import_module(f".{module}", __name__), fn)
        return f(out)
    return call


REPRODUCTIONS: dict[str, tuple[str, Callable[[Path], list[Path]]]] = {
    "barberq-fig1": ("BarberQ Fig. 1: two services, best effort vs BarberQ",
                     _lazy("barberq", "reproduce_fig1")),
    "barberq-fig2": ("BarberQ Fig. 2: 8 services, fairness and throughput over time",
                     _lazy("barberq", "reproduce_fig2")),
    "barberq-fig3": ("BarberQ Fig. 3: 144-host leaf-spine, four workloads at 50-90 % load; "
                     "mean FCT of all and small flows, BarberQ, best effort, strawman "
                     "(a few minutes)", _lazy("barberq_macro", "reproduce_fig3")),
    "barberq-fig4": ("BarberQ Fig. 4: the same against per-queue ECN and PMSB with ECN*, "
                     "under the htsim and under the linux transport profile "
                     "(a few minutes)", _lazy("barberq_macro", "reproduce_fig4")),
    "c2qos-fig1": ("C2QoS Fig. 1: ingress policing in bytes or packets per second fails to "
                   "isolate two VMs on one PMD core; C2TB does",
                   _lazy("c2qos_fig1", "reproduce_fig1")),
    "c2qos-fig3": ("C2QoS Fig. 3: latency against the number of VMs on one PMD core, "
                   "probes alone and with bulk TCP",
                   _lazy("c2qos_fig3", "reproduce_fig3")),
    "c2qos-fig5-6": ("C2QoS Figs. 5-6: the bandwidth-CPU model as the simulated PMD core "
                     "charges it, against traffic characteristics and deployment",
                     _lazy("c2qos_model", "reproduce_figs5_6")),
    "c2qos-fig7": ("C2QoS Fig. 7: C2TB MIN-MAX's worked example; MAX_i and four VMs' "
                   "cycle rates, strict and three readings of Alg. 1",
                   _lazy("c2qos_fig7", "reproduce_fig7")),
    "c2qos-fig10": ("C2QoS Fig. 10: four VMs on one PMD core through three phases; ingress "
                    "policing, C2TB strict and MIN-MAX, and the latency probe with HBS",
                    _lazy("c2qos", "reproduce_fig10")),
    "c2qos-fig11": ("C2QoS Fig. 11: C2TB's accuracy with mixed packet sizes and many VMs; "
                    "HBS's latency levels by priority class",
                    _lazy("c2qos_fig11", "reproduce_fig11")),
    "c2qos-fig12": ("C2QoS Fig. 12: FTP bulk transfers beside Nginx servers under a pressure "
                    "test; FTP bandwidth and Nginx response time",
                    _lazy("c2qos_fig12", "reproduce_fig12")),
    "c2qos-fig13": ("C2QoS Fig. 13: a VM sends larger packets than it paid for and the NIC "
                    "becomes the bottleneck; C2QoS alone and with the NIC handler",
                    _lazy("c2qos_fig13", "reproduce_fig13")),
    "mbfq-fig5": ("MBFQ Fig. 5: the spread of the measured send rate against the "
                  "macroscheduler's interval T, one VM with 32 TCP connections",
                  _lazy("mbfq_timing", "reproduce_fig5")),
    "mbfq-fig6": ("MBFQ Fig. 6: four VMs share 9.5 Gb/s; ramp-up and ramp-down, "
                  "MBFQ and static reservation", _lazy("mbfq", "reproduce_fig6")),
    "mbfq-fig7": ("MBFQ Fig. 7: a VM's ramp-up alone and beside a full link under MBFQ",
                  _lazy("mbfq_timing", "reproduce_fig7")),
    "qshare-table1": ("QShare Table 1: queue scarcity in a full k=16 fat-tree, 1:1, 4:1, 16:1",
                      _lazy("qshare", "reproduce_table1")),
    "qshare-load": ("QShare §7.3.1: Poisson tenant arrivals and departures; queue contention "
                    "against datacenter load", _lazy("qshare", "reproduce_load")),
    "qshare-fig2": ("QShare Fig. 2 and 11: WFQ against conservative and aggressive "
                    "ElasticSwitch on the testbed's core, 250/250 and 700/200 Mb/s",
                    _lazy("qshare_fig2", "reproduce_fig2")),
    "qshare-fig3c": ("QShare Fig. 3(c): two queues, A dedicated, B and C shared and capped; "
                     "the controller in the packet simulator",
                     _lazy("qshare_packet", "reproduce_fig3c")),
    "qshare-fig7a": ("QShare Fig. 7(a): ten tenants on the testbed's core, T1-T5 backlogged, "
                     "the others joining; the paper's binding and the controller every 4 s",
                     _lazy("qshare_packet", "reproduce_fig7a")),
    "qshare-fig7b": ("QShare Fig. 7(b): unpredictable demand (closed-loop enterprise requests, "
                     "active or dormant), core utilisation over a minute at T_c = 4 s",
                     _lazy("qshare_fig7bc", "reproduce_fig7b")),
    "qshare-fig7c": ("QShare Fig. 7(c): mean core utilisation under unpredictable demand "
                     "for T_c from 0.5 to 16 s", _lazy("qshare_fig7bc", "reproduce_fig7c")),
    "qshare-fig8": ("QShare Fig. 8: a shuffle's FCTs against fabric load; QShare, three "
                    "ElasticSwitch variants, static reservation and no protection, under "
                    "the htsim and under the linux transport profile",
                    _lazy("qshare_fig8", "reproduce_fig8")),
    "qshare-fig10": ("QShare Fig. 10: throughput gain vs inactive ratio, link utilisation CDF",
                     _lazy("qshare", "reproduce_fig10")),
    "trinity-fig6": ("Trinity Fig. 6: one connection against N, guarantees 100/100 and "
                     "300/300 Mb/s; no protection, static, ElasticSwitch, Trinity",
                     _lazy("trinity", "reproduce_fig6")),
    "trinity-fig7": ("Trinity Fig. 7: C-ES, A-ES and Trinity at N = 10, guarantees "
                     "100/100 and 750/150 Mb/s", _lazy("trinity", "reproduce_fig7")),
    "trinity-fig2": ("Trinity Fig. 2: ElasticSwitch's valleys (C-ES, 150/150 Mb/s) and "
                     "A-ES's slow return of a guarantee (150/750), Trinity beside",
                     _lazy("trinity_convergence", "reproduce_fig2")),
    "trinity-fig8": ("Trinity Fig. 8: FileStore and MapReduce shuffles together; "
                     "no protection, static, C-ES, Trinity",
                     _lazy("trinity_shuffle", "reproduce_fig8")),
    "trinity-fig9": ("Trinity Fig. 9: memcached query completion times under a UDP attack",
                     _lazy("trinity_memcached", "reproduce_fig9")),
    "trinity-fig12": ("Trinity Fig. 12: convergence against unbounded UDP at a 1 ms interval",
                      _lazy("trinity_convergence", "reproduce_fig12")),
    "trinity-shares": ("Trinity Eq. 4: guarantees and the spare in proportion to them, "
                       "40 random cases of 2-4 tenants on one link, every profile",
                       _lazy("trinity_shares", "reproduce_shares")),
    "trinity-tables": ("Trinity Tables II-IV: 1 KB and 20 KB request-response times next "
                       "to long flows; Trinity and C-ES", _lazy("trinity_tables",
                                                               "reproduce_tables")),
}


#: Each paper's evaluation transport, as the paper and the project's reading of it
#: state it, and the tenantnet transport profile nearest to it (``--transport paper``).
PAPER_TRANSPORT: dict[str, tuple[str, str]] = {
    "barberq": ("a packet-level simulation with \"TCP\" and RTO_min = 5 ms (§IV-B); the "
                "simulator and its loss recovery are not named", "htsim"),
    "c2qos": ("Linux 4.8.0 hosts and guests, Ubuntu 16.04.1 (§II-B): CUBIC with SACK, "
              "and RACK on by default since Linux 4.4", "linux"),
    "mbfq": ("Windows Server with Hyper-V (§5): Windows' TCP, with SACK", "linux"),
    "qshare": ("Linux 3.13 testbed (CUBIC, initial window 10, min RTO 200 ms): SACK "
               "and tail loss probes, no RACK", "linux"),
    "trinity": ("Linux 3.13 testbed, Trinity's kernel module (CUBIC, min RTO "
                "200 ms): SACK and tail loss probes, no RACK", "linux"),
}

#: Reproductions that already run under both profiles and report them side by side.
BOTH_PROFILES = ("barberq-fig4", "qshare-fig8")


def paper_transport(name: str) -> tuple[str, str]:
    """The transport of reproduction `name`'s paper and the profile nearest to it."""
    return PAPER_TRANSPORT[name.split("-")[0]]

