"""QShare (Liu et al.) in the packet simulator: the controller binding tenants to
switch queues while traffic runs (spec qshare-packet-level §4).

Fig. 3(c), §3.2 (Q:L570-588): a 1 Gb/s link with two queues; tenants A, B and C
each reserve 300 Mb/s on it. A holds a dedicated queue, B and C share the other,
each capped at its guarantee. A alone takes the whole link; with B and C active,
each of them gets its 300 Mb/s at once and A the rest.

Ours: the testbed's dumbbell at 1 GbE (spec §4.0) with two queues per port, each
tenant one VM on a left host sending over one TCP connection to one on the facing
right host, so the core link is the only one they share. The controller runs every
0.5 s (the example has no T_c) and starts every tenant in the shared queue (§5.3);
A, backlogged alone, earns the dedicated queue at the first interval. B and C run
from 2 s to 4 s. Weights as the controller pushes them: 300 : 600 Mb/s reserved,
proportionally on 1-15, A's queue 8 and the shared queue 15 (the paper's example:
1 and 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .. import progress
from ..api import run
from ..plotting import legend_outside, mark_times, save_csv, save_png, style
from .trinity import check, tenant_series

LINK_MBPS = 1000.0
FIG3C_GUARANTEE_MBPS = 300.0
FIG3C_INTERVAL_S = 0.5
FIG3C_BC_S = (2.0, 4.0)
"""When B and C are active (not given: the example is a thought experiment)."""
FIG3C_DURATION_S = 6.0
SAMPLE_S = 0.1
SETTLE_S = 0.5
"""Samples this long after a phase starts are left out of its means: one control
interval, then TCP's ramp."""


def the_testbed(hosts_per_side: int, queues: int = 8) -> dict[str, Any]:
    """QShare's testbed (§7, spec §4.0): two ToRs joined by a 1 Gb/s core link, 1 GbE
    servers, `queues` WFQ queues per switch port. Linux 3.13's TCP as NewReno with an
    initial window of 10, a 200 ms minimum RTO and TCP small queues at that kernel's
    128 KB, 1448-byte payloads in 1538 wire bytes (spec §5 #16). Switch buffers are a
    4 MB shared pool per switch under dynamic thresholds, alpha = 1 (spec §5 #17: the
    paper does not give them)."""
    return {
        "topology": {"kind": "dumbbell", "hosts_per_side": hosts_per_side,
                     "link_rate": "1Gbps", "link_delay": "25us"},
        "transport": {"protocol": "newreno", "mss": "1448B", "header": "90B",
                      "init_cwnd": 10, "min_rto": "200ms", "limit_output_bytes": "128KB"},
        "network": {"queues": queues, "scheduler": "wfq", "buffer": "4MB",
                    "buffer_policy": "dynamic_threshold", "pool": "4MB"},
    }


def fig3c_scenario(duration_s: float = FIG3C_DURATION_S,
                   bc_s: tuple[float, float] = FIG3C_BC_S,
                   interval_s: float = FIG3C_INTERVAL_S) -> dict[str, Any]:
    """Fig. 3(c): tenants A, B, C with 300 Mb/s each on the core link, two queues
    per port, QShare's controller every `interval_s`; B and C active over `bc_s`."""
    def tenant(name: str, i: int) -> dict[str, Any]:
        return {"name": name, "guarantee": f"{FIG3C_GUARANTEE_MBPS:g}Mbps",
                "vms": [{"name": f"{name}1", "host": f"left{i}"},
                        {"name": f"{name}2", "host": f"right{i}"}]}

    def flow(name: str, start: float | None = None, stop: float | None = None
             ) -> dict[str, Any]:
        w: dict[str, Any] = {"kind": "long_lived", "tenant": name,
                             "src": f"{name}1", "dst": f"{name}2"}
        if start is not None:
            w["start"] = f"{round(start * 1e3)}ms"
        if stop is not None:
            w["stop"] = f"{round(stop * 1e3)}ms"
        return w

    return {
        "name": "qshare-fig3c",
        "simulation": {"duration": f"{round(duration_s * 1e3)}ms", "seed": 1},
        **the_testbed(3, queues=2),
        "tenants": [tenant(n, i) for i, n in enumerate("ABC")],
        "qshare": {"interval": f"{round(interval_s * 1e3)}ms"},
        "workloads": [flow("A"), flow("B", *bc_s), flow("C", *bc_s)],
        "output": {"sample_interval": f"{round(SAMPLE_S * 1e3)}ms",
                   "throughput": ["tenant"], "queues": False},
    }


def window(s: pd.DataFrame, start: float, end: float) -> pd.DataFrame:
    """Samples ending in (start + settle, end]."""
    return s[(s["time_s"] > start + SETTLE_S + 1e-9) & (s["time_s"] <= end + 1e-9)]


def fig3c_compare(s: pd.DataFrame, binding: pd.DataFrame, duration_s: float = FIG3C_DURATION_S,
                  bc_s: tuple[float, float] = FIG3C_BC_S) -> pd.DataFrame:
    """Fig. 3(c)'s claims beside ours: A alone takes the link; with B and C active
    each gets 300 Mb/s (±3 %) and A the rest; A dedicated, B and C shared."""
    g = FIG3C_GUARANTEE_MBPS
    alone = pd.concat([window(s, FIG3C_INTERVAL_S, bc_s[0]), window(s, bc_s[1], duration_s)])
    both = window(s, *bc_s)
    rows = [check("A alone: mean share of the link", alone["A"].mean() / LINK_MBPS * 100,
                  "100 % (\"A gets the full link\")", alone["A"].mean() >= 0.95 * LINK_MBPS,
                  "ours: % of 1 Gb/s, wire")]
    for t in ("B", "C"):
        m = float(both[t].mean())
        rows.append(check(f"B and C active: {t}'s mean (wire Mb/s)", m, g,
                          abs(m / g - 1) <= 0.03, "capped at its guarantee in the shared queue"))
        worst = float((both[t] - g).abs().max() / g * 100)
        rows.append(check(f"B and C active: {t}'s worst 0.1 s sample off 300 Mb/s (%)",
                          worst, "\"immediately\" 300", worst <= 5))
    rest = LINK_MBPS - both["B"].mean() - both["C"].mean()
    a = float(both["A"].mean())
    rows.append(check("B and C active: A's mean (wire Mb/s)", a, f"the rest, {rest:.0f}",
                      abs(a / rest - 1) <= 0.05, "1000 minus B's and C's means"))
    last = binding[binding["time_s"] == binding["time_s"].max()].set_index("tenant")
    ded = "".join(sorted(t for t in "ABC" if last.loc[t, "dedicated"] == 1))
    rows.append(check("the binding at the end: D-tenants", float(len(ded)), "A",
                      ded == "A", f"ours: {ded or 'none'} (1 = A alone)"))
    return pd.DataFrame(rows)


def fig3c_run() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The run: per-tenant series, the controller's tenant rows and its port pushes."""
    r = run(fig3c_scenario())
    assert r.qshare_tenants is not None and r.qshare_queues is not None
    return tenant_series(r), r.qshare_tenants, r.qshare_queues


def reproduce_fig3c(out: Path) -> list[Path]:
    """Writes qshare_fig3c.png, the series, the controller's binding and pushes
    (CSV), and the comparison with the paper."""
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    for _ in progress.steps(["run"], lambda _: "Fig. 3(c): A, B and C over 6 s"):
        s, binding, pushes = fig3c_run()
    written = [save_csv(s, out / "qshare_fig3c.csv"),
               save_csv(binding, out / "qshare_fig3c_binding.csv"),
               save_csv(pushes, out / "qshare_fig3c_queues.csv"),
               save_csv(fig3c_compare(s, binding), out / "qshare_fig3c_vs_paper.csv")]
    core = pushes[(pushes["port"] == "switch-left->switch-right")
                  & (pushes["time_s"] == pushes["time_s"].max())]
    weights = {str(r.tenants): int(r.weight) for r in core.itertuples()}
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(9, 7), height_ratios=(3, 1), sharex=True)
    for i, t in enumerate("ABC"):
        ax.plot(s["time_s"], s[t], label=f"tenant {t}", drawstyle="steps-pre",
                **{**style(i), "markevery": 5})
    ax.axhline(FIG3C_GUARANTEE_MBPS, color="grey", ls=":", lw=1, label="guarantee, 300 Mb/s")
    mark_times(ax, list(FIG3C_BC_S), "B and C start / stop")
    ax.set_ylabel("goodput as wire Mb/s, per 0.1 s")
    ax.set_ylim(0, LINK_MBPS * 1.1)
    ax.set_title(f"QShare Fig. 3(c) on a 1 Gb/s link: A dedicated (weight {weights.get('A')}), "
                 f"B and C shared (weight {weights.get('B C')})", fontsize=10)
    ax.annotate("A's TCP recovers from the losses\nof its share falling to 400 Mb/s\n"
                "(acked in bursts, off the scale)", xy=(2.35, LINK_MBPS * 1.05),
                xytext=(2.9, 650), fontsize=7, arrowprops={"arrowstyle": "->", "lw": 0.6})
    for i, t in enumerate("ABC"):
        d = binding[binding["tenant"] == t]
        bx.step(d["time_s"], d["dedicated"] + 0.08 * (i - 1), where="post", label=t,
                color=style(i)["color"], ls=style(i)["ls"])
    bx.set_yticks([0, 1], ["shared", "dedicated"])
    bx.set_ylim(-0.3, 1.3)
    bx.set_xlabel("time (s)")
    bx.set_title(f"binding, decided every {FIG3C_INTERVAL_S:g} s", fontsize=10)
    for a in (ax, bx):
        a.grid(alpha=0.3)
        legend_outside(a)
    written.append(save_png(fig, out / "qshare_fig3c.png"))
    return written
