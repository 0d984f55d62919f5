"""C2QoS (§III-B, §III-C) Figs. 5 and 6: the bandwidth-CPU model the simulator's PMD
core runs, measured the way the paper measured its OVS-DPDK, beside the numbers the
paper prints.

The paper's figures are plots; its text gives one number or ratio for each panel, and
the model's constants were set from exactly those (spec `c2qos.md` §1.4: c_in(1500) =
2.2·c_in(64), c_cls(multiple) = 1.67·c_cls(single), R_NUMA = 1.4, R_#VMs = 1.14 and
1.07 at 4 VMs, R_#cores = 1.47 given as `vswitch.cpu.factor`). What this reproduction
checks is that the simulated core charges them: each point is a run with one VM (or n)
sending UDP at a fixed rate through the testbed's core, its cycles per second read from
`vm_cpu` (after the first 10 ms). Where the paper's shape is a guess of ours (R_#VMs
away from 4 VMs) the table says so.

* Fig. 5(a): 1500-byte packets, one flow, 10^4 to 8·10^5 packets/s: cycles/s against
  PPS ("proportional to the PPS").
* Fig. 5(b): 10^5 packets/s, one flow, 64 to 1500 bytes: per-packet cycles; ingress is
  what varies ("increasing the packet size will only increase C_ingress").
* Fig. 5(c): 10^5 packets/s of 1500 bytes, one flow or many (EMC misses).
* Fig. 6(a): the VM's memory on the vswitch's NUMA node or another.
* Fig. 6(b): 1 to 16 VMs, each at 5·10^4 packets/s of 1500 bytes (16 fill 70 % of the
  core), on one node or spread.
* Fig. 6(c): two PMD cores (R_#cores = 1.47 as `factor`, the paper's ratio).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from ..jobs import progress
from ..measure.analysis import window
from ..report.plotting import save_csv, save_png, style
from ..sim.scenario import schema
from .c2qos import run_cpu, testbed
from .claims import claim, frame

DURATION_S = 0.1
WARMUP_S = 0.01
PPS = (1e4, 5e4, 1e5, 2e5, 4e5, 8e5)
SIZES = (64, 128, 256, 512, 1024, 1500)
VM_COUNTS = (1, 2, 4, 8, 12, 16)
BASE_PPS = 1e5
VMS_PPS = 5e4
"""Fig. 6(b)'s rate per VM: 16 VMs at 1.28 × 1175 cycles a packet fill 0.7 of the core."""


def point_scenario(pps: float, size: int, vms: int = 1, flows: str = "single",
                   numa: str = "local", cpu: dict[str, Any] | None = None) -> dict[str, Any]:
    """`vms` VMs on host ``s``, each sending UDP at `pps` packets/s of `size` bytes."""
    names = [f"VM{i + 1}" for i in range(vms)]
    spec = [{"name": n, "host": "s", "guarantee": "0.5Gbps", "numa": numa} for n in names]
    work = [{"kind": "cbr", "tenant": "T", "src": n, "dst": "r", "classify": flows,
             "rate": f"{pps * size * 8:.0f}bps", "packet_size": f"{size}B"} for n in names]
    return testbed("c2qos-model", spec, work, cpu=cpu or {}, duration_s=DURATION_S)


def cycles_per_packet(d: dict[str, Any], pps: float) -> float:
    """The mean cycles each packet of one VM cost on the core in the run of `d`."""
    r = run_cpu(d)
    c = window(r.vm_cpu, WARMUP_S)
    per_vm = c.groupby("vm")["cycles"].sum() / (DURATION_S - WARMUP_S)
    return float(per_vm.mean() / pps)


def default_costs() -> dict[str, float]:
    """The model's per-stage constants (`vswitch.cpu.costs`' defaults)."""
    return dict(schema()["$defs"]["CpuSpec"]["properties"]["costs"]["default"])


def points() -> pd.DataFrame:
    """Every panel's points: (panel, x, cycles per packet)."""
    runs: list[tuple[str, str, float, dict[str, Any]]] = []
    runs += [("5a", "pps", p, point_scenario(p, 1500)) for p in PPS]
    runs += [("5b", "bytes", s, point_scenario(BASE_PPS, s)) for s in SIZES]
    runs += [("5c", f, 0.0, point_scenario(BASE_PPS, 1500, flows=f))
             for f in ("single", "multiple")]
    runs += [("6a", n, 0.0, point_scenario(BASE_PPS, 1500, numa=n)) for n in ("local", "remote")]
    runs += [("6b", f, n, point_scenario(VMS_PPS, 1500, vms=n, cpu={"vms_factor": f}))
             for f in ("same_node", "different_nodes") for n in VM_COUNTS]
    runs += [("6c", f"{c} cores", float(c), point_scenario(
        BASE_PPS, 1500, cpu={"cores": c, "factor": 1.47 if c == 2 else 1.0})) for c in (1, 2)]
    rows = []
    for panel, case, x, d in progress.steps(runs, lambda r: f"Figs. 5-6: {r[0]} {r[1]} {r[2]:g}"):
        pps = x if panel == "5a" else VMS_PPS if panel == "6b" else BASE_PPS
        rows.append({"panel": panel, "case": case, "x": x,
                     "cycles_per_packet": round(cycles_per_packet(d, pps), 3)})
    return pd.DataFrame(rows)


def compare(pts: pd.DataFrame, costs: dict[str, float]) -> pd.DataFrame:
    """The paper's numbers beside the simulated core's; `costs` are the model's
    per-stage constants (`vswitch.cpu.costs`), which the ingress and classification
    shares are read against."""
    p = pts.set_index(["panel", "case", "x"])["cycles_per_packet"]
    a = pts[pts["panel"] == "5a"]["cycles_per_packet"]
    flat = float((a.max() / a.min() - 1) * 100)
    fixed = costs["classify_single"] + costs["egress"]
    ingress = {s: float(p[("5b", "bytes", s)]) - fixed for s in (64, 1500)}
    cls = p[("5c", "multiple", 0.0)] - p[("5c", "single", 0.0)] + costs["classify_single"]
    note = "the model's constant is set from this number; checked: the simulated core charges it"
    rows = [
        claim("(5a) cycles per packet from 10^4 to 8·10^5 pps, spread %", round(flat, 3),
              paper='"proportional to the PPS"', expected="<= 1 %", ok=flat <= 1),
        claim("(5b) C_ingress(1500 B) / C_ingress(64 B)", round(ingress[1500] / ingress[64], 3),
              paper='"more than twice"', expected="> 2", ok=ingress[1500] > 2 * ingress[64],
              note=note),
        claim("(5c) C_classification, many flows / one", round(float(cls / costs[
            "classify_single"]), 3), paper="1.67 times", expected="1.67 ± 1 %",
              ok=abs(cls / costs["classify_single"] / 1.67 - 1) <= 0.01, note=note),
    ]
    for panel, label, num, den, want, said in (
            ("6a", "VM memory on another NUMA node / on the vswitch's", ("6a", "remote", 0.0),
             ("6a", "local", 0.0), 1.4, '"40% more CPU cycles"'),
            ("6b", "4 VMs on one node / 1 VM", ("6b", "same_node", 4.0),
             ("6b", "same_node", 1.0), 1.14, "1.14 times"),
            ("6b", "4 VMs on different nodes / 1 VM", ("6b", "different_nodes", 4.0),
             ("6b", "different_nodes", 1.0), 1.07, "1.07"),
            ("6c", "two PMD cores / one", ("6c", "2 cores", 2.0), ("6c", "1 cores", 1.0), 1.47,
             '"about 1.47 times more CPU cycles"')):
        ratio = float(p[num] / p[den])
        rows.append(claim(f"({panel}) {label}", round(ratio, 4), paper=said,
                          expected=f"{want:g} ± 1 %", ok=abs(ratio / want - 1) <= 0.01,
                          note=note))
    top = float(p[("6b", "same_node", 16.0)] / p[("6b", "same_node", 1.0)])
    ten = float(p[("6b", "same_node", 12.0)] / p[("6b", "same_node", 1.0)])
    rows.append(claim("(6b) one node: 16 VMs over 12 VMs, change %",
                      round((top / ten - 1) * 100, 3),
                      paper='"almost the same after VM grows more than 10"', expected="<= 1 %",
                      ok=abs(top / ten - 1) <= 0.01,
                      note="the curve between the paper's points is our reading of its shape "
                      "(factors.rs)"))
    return frame(rows)


def reproduce_figs5_6(out: Path) -> list[Path]:
    """Writes c2qos_fig5_6.png, the points (CSV) and the comparison with the paper."""

    out.mkdir(parents=True, exist_ok=True)
    pts = points()
    costs = default_costs()
    written = [save_csv(pts, out / "c2qos_fig5_6.csv"),
               save_csv(compare(pts, costs), out / "c2qos_fig5_6_vs_paper.csv")]
    fig, axes = plt.subplots(2, 3, figsize=(14, 7.5))
    fig.subplots_adjust(hspace=0.45, wspace=0.3)
    a = pts[pts["panel"] == "5a"]
    axes[0][0].plot(a["x"] / 1e3, a["cycles_per_packet"] * a["x"] / 1e6, **style(0))
    axes[0][0].set(title="Fig. 5(a): 1500 B, one flow", xlabel="packets/s (thousands)",
                   ylabel="cycles/s (millions)")
    b = pts[pts["panel"] == "5b"]
    fixed = costs["classify_single"] + costs["egress"]
    axes[0][1].plot(b["x"], b["cycles_per_packet"], label="total", **style(0))
    axes[0][1].plot(b["x"], b["cycles_per_packet"] - fixed, label="ingress", **style(1))
    axes[0][1].set(title="Fig. 5(b): 10^5 pps, one flow", xlabel="packet size (bytes)",
                   ylabel="cycles per packet")
    axes[0][1].legend(fontsize=8, loc="upper left")
    for ax, panel, title, said in (
            (axes[0][2], "5c", "Fig. 5(c): flows (1500 B)", "paper: classification ×1.67"),
            (axes[1][0], "6a", "Fig. 6(a): VM memory's NUMA node", "paper: ×1.4"),
            (axes[1][2], "6c", "Fig. 6(c): PMD cores", "paper: ×1.47")):
        d = pts[pts["panel"] == panel]
        ax.bar(d["case"].astype(str).str.replace("1 cores", "1 core"), d["cycles_per_packet"],
               color=style(0)["color"])
        y = d["cycles_per_packet"].to_numpy()
        ax.text(1, y[1] * 1.03, f"×{y[1] / y[0]:.3g} ({said})", ha="center", fontsize=8)
        ax.set(title=title, ylabel="cycles per packet")
        ax.set_ylim(0, y.max() * 1.2)
    for i, (f, d) in enumerate(pts[pts["panel"] == "6b"].groupby("case", sort=False)):
        one = float(d[d["x"] == 1]["cycles_per_packet"].iloc[0])
        axes[1][1].plot(d["x"], d["cycles_per_packet"] / one, label=str(f).replace("_", " "),
                        **(style(i) | {"markevery": 1}))
    axes[1][1].plot([4, 4], [1.07, 1.14], "kx", ms=9, mew=2, ls="none",
                    label="paper: 1.14 / 1.07 at 4 VMs")
    axes[1][1].set(title="Fig. 6(b): VMs on the host", xlabel="VMs",
                   ylabel="cycles per packet / 1 VM's")
    axes[1][1].legend(fontsize=8, loc="lower right")
    for ax in axes.flat:
        ax.grid(alpha=0.3)
    axes[0][0].set_ylim(bottom=0)
    axes[0][1].set_ylim(bottom=0)
    fig.suptitle("C2QoS Figs. 5-6: the simulated PMD core's cycles, the bandwidth-CPU model")
    written.append(save_png(fig, out / "c2qos_fig5_6.png"))
    return written
