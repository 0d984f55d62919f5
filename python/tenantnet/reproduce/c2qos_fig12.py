"""C2QoS §VI-C and Fig. 12: an application mix, FTP bulk transfers beside Nginx web
servers under a pressure test.

Set-up (paper, §VI-C; spec c2qos.md §6.6 for what it leaves open): four VMs on one
2.2 GHz PMD core (NUMA node 1, four VMs on the node: R = 1.4 x 1.14, as §VI-A),
two FTP servers that bought 4 Gb/s each and two Nginx servers that bought 1 Gb/s
each, C_alloc priced at 1024 B, one flow, for the Nginx VMs and at the FTP VMs'
own 1500 B (spec §6.6 prices all at 1024 B; then C2TB lets FTP's 1500-byte packets
reach 5.06 Gb/s each and fill the NIC, as Fig. 13 shows). FTP = a backlogged TCP
sender of 1500-byte packets per FTP VM, always on. The Nginx pressure test (wrk) = ``CONNS``
closed-loop clients per Nginx VM at the receiver, each sending a 128-byte request
and waiting for an 850-byte response (a default index page, one packet), with
dispersed 5-tuples (`classify = "multiple"`); HBS puts the Nginx VMs in class 1
and the FTP VMs in class 8. The paper's test runs 30-70 s of a longer run; ours
runs FTP alone for ``phase_s`` and then the test for 2 x ``phase_s``. Native = the
same test with the FTP VMs silent (under C2TB only, whose Nginx buckets do not
bind at this load).

Paper: FTP's bandwidth drops by about 11 % under ingress policing during the test,
C2TB keeps it at 4 Gb/s; Nginx's response time doubles under ingress policing,
C2TB alone removes 50 % of the added latency and C2QoS (C2TB + HBS) more than 80 %.
Checks on the extra median response time over native: C2TB only / ingress
policing in [0.3, 0.7], C2QoS / ingress policing at most 0.3; FTP loses 5-25 %
under policing (S) and at most 2 % under C2TB (H).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..jobs import progress
from ..measure.analysis import window
from ..measure.tables import vm_means
from ..report.plotting import save_csv, save_png, style
from .c2qos import check_row, dur, run_cpu, testbed
from .claims import frame

FTP, NGINX = ("FTP1", "FTP2"), ("Nginx1", "Nginx2")
GUARANTEE_GBPS = {"FTP1": 4.0, "FTP2": 4.0, "Nginx1": 1.0, "Nginx2": 1.0}
CONNS = 4
"""wrk's concurrent connections per Nginx VM (ours: the paper gives none). With 8
the Nginx VMs need more cycles than their C_alloc (each query costs a response and
an ACK of the request, 850 B with the many-flow classification) and C2TB itself
doubles their native response time; 4 stay below it."""
POLICIES = {
    "ingress policing": {"limiter": "policing"},
    "C2TB only": {"limiter": "c2tb", "c2tb": {"mode": "strict"}},
    "C2QoS (C2TB + HBS)": {"limiter": "c2tb", "c2tb": {"mode": "strict"}, "scheduler": "hbs"},
}
NATIVE = "native (FTP silent)"


def fig12_scenario(cpu: dict[str, Any], phase_s: float, ftp: bool = True,
                   conns: int = CONNS) -> dict[str, Any]:
    """The application mix under `cpu`; without `ftp`, the FTP VMs stay silent."""
    # the FTP VMs' SLA is priced at their own 1500-byte packets (at 1024 B their
    # cycles would buy 5.06 Gb/s of 1500 B and fill the NIC)
    vms: list[dict[str, Any]] = [
        {"name": v, "host": "s", "guarantee": f"{g:g}Gbps", "numa": "remote",
         "priority": 1 if v in NGINX else 8} for v, g in GUARANTEE_GBPS.items()]
    for v in vms[:2]:
        v["preference"] = {"packet_size": "1500B"}
    work: list[dict[str, Any]] = []
    if ftp:
        work.append({"kind": "long_lived", "tenant": "T", "src": list(FTP), "dst": "r",
                     "transport": {"mss": "1460B"}})
    queries = int(2 * phase_s / 40e-6) + 10
    work += [{"kind": "request_response", "tenant": "T", "src": "r", "dst": v,
              "request": "128B", "size": "850B", "queries": queries, "start": dur(phase_s),
              "classify": "multiple"} for v in NGINX for _ in range(conns)]
    return testbed("c2qos-fig12", vms, work, cpu={
        "vms_factor": "same_node", "preference": {"packet_size": "1024B", "flows": "single"},
        **cpu}, duration_s=3 * phase_s, sample="50ms")


def measure(r: Any, phase_s: float, ftp: bool) -> dict[str, Any]:
    """FTP's mean rate alone and during the test (Gb/s, per VM), the core's idle
    share during the test, and every response time during the test after its
    first 10 % (us)."""
    def ftp_mean(lo: float, hi: float) -> float:
        return float(vm_means(r, lo, hi).reindex(list(FTP)).fillna(0.0).mean())

    pmd = window(r.pmd, 1.3 * phase_s)
    q = r.queries[r.queries["qct_s"].notna()]
    q = q[q["start_s"] > 1.2 * phase_s]
    return {"ftp_alone": ftp_mean(0.3 * phase_s, phase_s),
            "ftp_test": ftp_mean(1.3 * phase_s, 3 * phase_s),
            "idle_test": float((pmd["idle"] + pmd["poll"]).mean()),
            "rt_us": (q["qct_s"].astype(float) * 1e6).to_numpy()}


def run_fig12(phase_s: float = 0.5) -> dict[str, dict[str, Any]]:
    """Every policy, and native, measured."""
    todo = [(k, v, True) for k, v in POLICIES.items()] + [(NATIVE, POLICIES["C2TB only"], False)]
    return {name: measure(run_cpu(fig12_scenario(cpu, phase_s, ftp)), phase_s, ftp)
            for name, cpu, ftp in progress.steps(todo, lambda x: f"Fig. 12: {x[0]}")}


def compare(got: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """Fig. 12's claims and spec §6.6's checks next to our numbers."""

    med = {k: float(np.median(v["rt_us"])) for k, v in got.items()}
    native = med.pop(NATIVE)
    extra = {k: m - native for k, m in med.items()}
    rows = []
    for k in POLICIES:
        g = got[k]
        lost = 1 - g["ftp_test"] / g["ftp_alone"]
        if k == "ingress policing":
            ok = 0.05 <= lost <= 0.25
            rows.append(check_row(k, "test", "FTP loses 5-25 % against FTP alone", lost * 100,
                                  "11 %", ok,
                                  f"percent; FTP alone {g['ftp_alone']:.3f} Gb/s per VM (NewReno "
                                  f"against the 1 MB policer), during the test {g['ftp_test']:.3f}"
                                  + ("" if ok else ": the Nginx load takes fewer cycles than "
                                     f"the core has idle ({g['idle_test'] * 100:.0f} % left "
                                     "during the test), so nothing is taken from FTP")))
        else:
            rows.append(check_row(k, "test", "FTP keeps 4 Gb/s (-2 %)", g["ftp_test"], "4",
                                  g["ftp_test"] >= 3.92, "Gb/s per FTP VM"))
    a = extra["ingress policing"]
    rows.append(check_row("ingress policing", "test", "Nginx median response time over native",
                          med["ingress policing"] / native, "about 2 x", None,
                          f"medians {med['ingress policing']:.1f} us against native "
                          f"{native:.1f} us"))
    for k, lim, paper in (("C2TB only", (0.3, 0.7), "removes 50 % of the extra"),
                          ("C2QoS (C2TB + HBS)", (0.0, 0.3), "removes > 80 % of the extra")):
        ratio = extra[k] / a if a > 0 else float("inf")
        rows.append(check_row(k, "test", f"extra / extra(ingress policing) in [{lim[0]}, {lim[1]}]",
                              ratio, paper, lim[0] <= ratio <= lim[1],
                              f"extra {extra[k]:.1f} us against policing's {a:.1f} us"
                              + ("" if lim[0] <= ratio <= lim[1] else "; " + WHY)))
    return frame(rows)


WHY = ("under C2TB the FTP VMs are held to their tokens with full rings, so each sends "
       "full batches of 32 x 1500 B (48 KB) into the NIC's FIFO, and a response waits "
       "behind them: with a 100 Gb/s NIC the C2TB-only median falls to native (the "
       "tests check it). Under policing NewReno keeps the FTP rings short. The core is "
       "not the bottleneck here, so the paper's CPU-side waiting does not appear")


def reproduce_fig12(out: Path, phase_s: float = 0.5) -> list[Path]:
    """Writes c2qos_fig12.png, the response times and FTP rates (CSV) and the
    comparison with the paper."""


    out.mkdir(parents=True, exist_ok=True)
    got = run_fig12(phase_s)
    check = compare(got)
    rt = pd.concat([pd.DataFrame({"policy": k, "response_us": v["rt_us"]})
                    for k, v in got.items()], ignore_index=True)
    ftp = pd.DataFrame([{"policy": k, "ftp_alone_gbps": v["ftp_alone"],
                         "ftp_test_gbps": v["ftp_test"]} for k, v in got.items() if k != NATIVE])
    written = [save_csv(rt, out / "c2qos_fig12_response.csv"),
               save_csv(ftp, out / "c2qos_fig12_ftp.csv"),
               save_csv(check, out / "c2qos_fig12_vs_paper.csv")]
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.6))
    x = np.arange(len(ftp))
    axes[0].bar(x - 0.2, ftp["ftp_alone_gbps"], 0.4, label="FTP alone", **{
        "color": style(0)["color"]})
    axes[0].bar(x + 0.2, ftp["ftp_test_gbps"], 0.4, label="during the Nginx test", **{
        "color": style(1)["color"]})
    axes[0].axhline(4.0, color="k", ls="--", lw=1, label="purchased 4 Gb/s")
    axes[0].set_xticks(x, [p.replace(" (", "\n(") for p in ftp["policy"]])
    axes[0].set_ylabel("wire rate per FTP VM (Gb/s)")
    axes[0].set_title("Fig. 12: FTP bandwidth")
    axes[0].set_ylim(0, 4.9)
    axes[0].legend(loc="upper center", ncol=3, fontsize=8)
    names = list(got)
    axes[1].boxplot([got[k]["rt_us"] for k in names], showfliers=False, whis=(5, 95))
    axes[1].set_xticks(range(1, len(names) + 1), [k.replace(" (", "\n(") for k in names],
                       fontsize=8)
    axes[1].set_ylabel("Nginx response time (us; whiskers p5-p95)")
    axes[1].set_title(f"Fig. 12: Nginx response time, {CONNS} connections per server")
    axes[1].set_ylim(bottom=0)
    for ax in axes:
        ax.grid(alpha=0.3, axis="y")
    fig.suptitle("C2QoS Fig. 12: two FTP servers (4 Gb/s) and two Nginx servers (1 Gb/s) on "
                 "one 2.2 GHz PMD core", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    written.append(save_png(fig, out / "c2qos_fig12.png"))
    return written
