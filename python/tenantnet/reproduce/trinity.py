"""Trinity (Hu et al., IEEE TCC 2018), §V-A: Figs. 6 and 7.

Set-up (§IV-B, spec §3.0): the testbed's dumbbell, two switches joined by a 1 Gb/s
link; tenant A's VM A1 (left0) sends to A2 (right0) over one TCP connection, tenant
B's B1 (left1) to B2 (right1) over N connections, each pair with a pipe guarantee.
Linux 2.6.38's TCP without ECN (NewReno here: initial window 3, 200 ms minimum RTO),
1448-byte payloads in 1538 wire bytes, 25 µs per link, 5 ms rate-control interval;
the schemes' presets set the switches (2 strict-priority queues or one, ECN at
30 KB, a 4 MB shared buffer). Throughput is A2's (and B2's) goodput scaled to wire
bits, averaged after a 200 ms warm-up over 2 s (spec §5 #18: the paper gives
neither the duration nor the values of N).

Schemes: no protection, static reservation per pair, ElasticSwitch as Trinity's
code runs it (C-ES) and with Trinity's rate control (A-ES), Trinity under its
`refined` rate control (the default), its paper's read literally (`paper`) and its
public module's (`code`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from ..jobs import progress
from ..measure.analysis import by_scope, window
from ..report.plotting import legend_outside, markers, save_csv, save_png, style
from ..sim.api import run
from ..sim.schemes import vswitch_table
from .claims import claim, frame

GOODPUT = 1448 / 1538
"""Payload per wire byte of a full segment: Linux over 1 GbE with a 1500-byte MTU."""

LINK_MBPS = 1000.0
WARMUP_S = 0.2
MEASURE_S = 2.0
NS = (1, 2, 4, 8, 10, 16, 32)
"""The values of N (spec §5 #18: the paper's axis values are not in the text)."""

PIPES = {"pair_guarantees": None}
"""Trinity's testbed guarantees each VM pair its pipe (§IV-B): the schemes run without
a partitioned hose."""
SCHEMES: dict[str, tuple[str, dict[str, Any]]] = {
    "none": ("no protection", vswitch_table("none")),
    "static": ("static reservation", vswitch_table("static")),
    "c-es": ("ElasticSwitch (C-ES)", vswitch_table("c-es", **PIPES)),
    "a-es": ("ElasticSwitch (A-ES)", vswitch_table("a-es", **PIPES)),
    "trinity": ("Trinity (refined RC)",
                vswitch_table("trinity", **PIPES, trinity={"profile": "refined"})),
    "trinity-paper": ("Trinity (paper RC)",
                      vswitch_table("trinity", **PIPES, trinity={"profile": "paper"})),
    "trinity-code": ("Trinity (module RC)",
                     vswitch_table("trinity", **PIPES, trinity={"profile": "code"})),
}
"""Each scheme: its label and its `[vswitch]` table, the registry's
(`tenantnet.sim.schemes`) on Trinity's pipes."""

SHORT = {"none": "none", "static": "static", "c-es": "C-ES", "a-es": "A-ES",
         "trinity": "Trinity\n(refined RC)", "trinity-paper": "Trinity\n(paper RC)",
         "trinity-code": "Trinity\n(module RC)"}

def the_testbed(hosts_per_side: int) -> dict[str, Any]:
    """Trinity's testbed (§IV-B, spec §3.0): the dumbbell's `topology` and the
    servers' `transport` (Linux 2.6.38's TCP as NewReno, 1 GbE framing)."""
    return {
        "topology": {"kind": "dumbbell", "hosts_per_side": hosts_per_side,
                     "link_rate": "1Gbps", "link_delay": "25us"},
        "transport": {"protocol": "newreno", "mss": "1448B", "header": "90B",
                      "init_cwnd": 3, "min_rto": "200ms"},
    }


TRINITY_PROFILES = ("trinity", "trinity-paper", "trinity-code")
"""Trinity under its default profile (`refined`), then `paper` and `code` beside it."""
FIG6_SCHEMES = ("none", "static", "c-es", *TRINITY_PROFILES)
FIG7_SCHEMES = ("c-es", "a-es", *TRINITY_PROFILES)


def fig6_scenario(scheme: str | dict[str, Any], ga_mbps: float, gb_mbps: float, *, n: int = 10,
                  duration_s: float = WARMUP_S + MEASURE_S, sample_s: float = 0.01,
                  pipes: bool = True, b_start_s: float = 0.0,
                  b_udp: bool = False) -> dict[str, Any]:
    """Fig. 6's traffic under `scheme` (a key of `SCHEMES`, or a `[vswitch]` table):
    A1 -> A2 over 1 connection, B1 -> B2 over `n` from `b_start_s` (with `b_udp`,
    unbounded UDP at the NIC's rate instead), pipes at `ga_mbps`/`gb_mbps` (the
    tenants' hose guarantees equal to them)."""
    vswitch = dict(SCHEMES[scheme][1]) if isinstance(scheme, str) else dict(scheme)
    name = scheme if isinstance(scheme, str) else vswitch.get("policy", "none")

    def tenant(name: str, g: float, side: int) -> dict[str, Any]:
        t: dict[str, Any] = {
            "name": name, "guarantee": f"{g:g}Mbps",
            "vms": [{"name": f"{name}1", "host": f"left{side}"},
                    {"name": f"{name}2", "host": f"right{side}"}],
        }
        if pipes:
            t["pipes"] = [{"src": f"{name}1", "dst": f"{name}2", "guarantee": f"{g:g}Mbps"}]
        return t
    return {
        "name": f"trinity-fig6-{name}-{ga_mbps:g}-{gb_mbps:g}-n{n}",
        "simulation": {"duration": f"{round(duration_s * 1e3)}ms", "seed": 1},
        **the_testbed(2),
        "network": {"buffer": "200KB"},
        "tenants": [tenant("A", ga_mbps, 0), tenant("B", gb_mbps, 1)],
        "vswitch": vswitch,
        "workloads": [
            {"kind": "long_lived", "tenant": "A", "src": "A1", "dst": "A2"},
            {"kind": "cbr", "tenant": "B", "src": "B1", "dst": "B2", "rate": "1Gbps",
             "start": f"{round(b_start_s * 1e6)}us"} if b_udp else
            {"kind": "long_lived", "tenant": "B", "src": "B1", "dst": "B2",
             "flows_per_pair": n, "start": f"{round(b_start_s * 1e6)}us"},
        ],
        "output": {"sample_interval": f"{round(sample_s * 1e6)}us", "throughput": ["tenant"],
                   "queues": False},
    }


def tenant_series(r: Any) -> pd.DataFrame:
    """Each tenant's throughput per sample as wire Mb/s (goodput over the framing),
    one column per tenant."""
    s = by_scope(r.throughput, "tenant", by="tenant") * 1000 / GOODPUT
    s.columns.name = None
    return s.reset_index()


def mean_after(series: pd.DataFrame, after_s: float = WARMUP_S) -> dict[str, float]:
    """Each tenant's mean after the warm-up, wire Mb/s."""
    s = window(series, after_s)
    return {t: float(s[t].mean()) for t in ("A", "B")}


def point(scheme: str, ga: float, gb: float, n: int) -> dict[str, Any]:
    """One run: A2's and B2's mean wire Mb/s, and the share of 10 ms samples after
    the warm-up in which each got less than 95 % of its guarantee."""
    s = tenant_series(run(fig6_scenario(scheme, ga, gb, n=n)))
    m = mean_after(s)
    after = window(s, WARMUP_S)
    below = {t: float((after[t] < 0.95 * g).mean() * 100) for t, g in (("A", ga), ("B", gb))}
    return {"scheme": scheme, "guarantees_mbps": f"{ga:g}/{gb:g}", "n": n,
            "a2_mbps": m["A"], "b2_mbps": m["B"],
            "a2_below_pct": below["A"], "b2_below_pct": below["B"]}


def ideal_a2(ga: float, gb: float) -> float:
    """A2's share when both tenants are backlogged: its guarantee plus half the
    spare (the spare shared in proportion to guarantees, equal here)."""
    return ga + (LINK_MBPS - ga - gb) * ga / (ga + gb)


def fig6_points(schemes: tuple[str, ...] = FIG6_SCHEMES, ns: tuple[int, ...] = NS,
                settings: tuple[tuple[float, float], ...] = ((100, 100), (300, 300)),
                ) -> pd.DataFrame:
    """Figs. 6(a) and 6(b): A2's throughput against N for every scheme."""
    todo = [(s, g, n) for g in settings for s in schemes for n in ns]
    rows = [point(s, g[0], g[1], n) for s, g, n in progress.steps(
        todo, lambda t: f"Fig. 6: {t[0]}, {t[1][0]:g}/{t[1][1]:g} Mb/s, N = {t[2]}")]
    return pd.DataFrame(rows)


def check(name: str, ours: float, paper: str, ok: bool | None, note: str = "", *,
          expected: str = "", why_not: str = "", differs: str = "") -> dict[str, Any]:
    """One claim of a Trinity figure (see `claims`): `paper` only what the paper prints."""
    return claim(name, round(ours, 1), paper=paper, expected=expected, ok=ok,
                 why_not=why_not, differs=differs, note=note)


OVERSHOOT = ("read literally, the red rate overshoots to about 1.5 × C before the 30 KB "
             "red queue marks, then is cut again by the marks of red packets sent before "
             "the cut (Eqs. 5-6 applied per interval)")
"""Why the paper's rate controller misses the claims on the link's use."""

BLACKOUT = ("below C/(N + 1), still no guarantee: behind a port's own 200 KB of tail "
            "drop B's ten connections keep it full and A's packets, sent with the hosts' "
            "transmit wait, mostly find it so (TCP Outcast's port blackout); the testbed's "
            "switch had a shared buffer (performance guide, host timing)")
"""Why one connection against ten gets less than its share without protection."""

ES_CONSTANTS = ("ElasticSwitch's rate-allocation constants are not published; C-ES is "
                "Trinity's public module's ElasticSwitch, with its own constants")
"""Why ElasticSwitch's numbers differ from the paper's (a decided difference)."""


def fig6_compare(pts: pd.DataFrame) -> pd.DataFrame:
    """The published claims of Fig. 6 (§V-A) beside ours."""
    p = pts.set_index(["scheme", "guarantees_mbps", "n"])["a2_mbps"]
    rows = []
    for g in (100, 300):
        key = f"{g}/{g}"
        ideal = ideal_a2(g, g)
        for s in TRINITY_PROFILES:
            a2 = float(p[(s, key, 10)])
            rows.append(check(f"{SCHEMES[s][0]}: A2 at {key} Mb/s, N = 10, within 5 % of "
                              f"{ideal:g} Mb/s", a2,
                              '"fully utilizes all the spare bandwidth"',
                              abs(a2 / ideal - 1) <= 0.05, "ours: wire Mb/s",
                              expected=f"{ideal:g} ± 5 % (the spare split evenly)"))
        st = float(p[("static", key, 10)])
        rows.append(check(f"static: A2 at {key} Mb/s within 2 % of its guarantee", st,
                          '"provides minimum bandwidth guarantee, but does not utilize any '
                          'spare bandwidth"', abs(st / g - 1) <= 0.02, "ours: wire Mb/s",
                          expected=f"{g} ± 2 %"))
        none = float(p[("none", key, 10)])
        share = LINK_MBPS / 11
        rows.append(check(f"no protection: A2 at {key} Mb/s, N = 10, within 20 % of C/(N+1)",
                          none, '"does not provide any bandwidth guarantee"',
                          abs(none / share - 1) <= 0.2, "ours: wire Mb/s",
                          expected=f"C/(N + 1) = {share:.1f} ± 20 %", why_not=BLACKOUT))
        es = float(p[("c-es", key, 10)])
        tr = float(p[("trinity", key, 10)])
        rows.append(check(f"C-ES: A2 at {key} Mb/s, N = 10, at least 20 % below Trinity's",
                          (1 - es / tr) * 100, "Trinity 20.88-53.06 % above ElasticSwitch",
                          es <= 0.8 * tr, "ours: % below Trinity at N = 10",
                          expected=">= 20 %", differs=ES_CONSTANTS))
        gain = [(float(p[("trinity", key, n)]) / float(p[("c-es", key, n)]) - 1) * 100
                for n in sorted(set(pts["n"]))]
        rows.append(check(f"Trinity over C-ES at {key} Mb/s, mean over N", sum(gain) / len(gain),
                          "20.88-53.06 %", 20.88 <= sum(gain) / len(gain) <= 53.06,
                          "the paper's N values are unknown: a range, not a point",
                          expected="within the paper's range", differs=ES_CONSTANTS))
    es = float(p[("c-es", "100/100", 10)])
    rows.append(check("C-ES: A2 at 100/100 Mb/s, N = 10, about 230 Mb/s", es,
                      '"only about 230Mbps"', abs(es / 230 - 1) <= 0.15,
                      "ours: wire Mb/s", expected="230 ± 15 %", differs=ES_CONSTANTS))
    return frame(rows)


def fig6_series() -> pd.DataFrame:
    """Fig. 6(c): A2 every 5 ms at N = 10, 100/100 Mb/s, under C-ES and Trinity."""
    out = []
    for s in progress.steps(["c-es", *TRINITY_PROFILES], lambda s: f"Fig. 6(c): {s}"):
        r = run(fig6_scenario(s, 100, 100, n=10, duration_s=0.5, sample_s=0.005))
        out.append(tenant_series(r).assign(scheme=s))
    return pd.concat(out, ignore_index=True)


def reproduce_fig6(out: Path) -> list[Path]:
    """Writes trinity_fig6.png, the points and the 5 ms series (CSV), and the
    comparison with the paper."""

    out.mkdir(parents=True, exist_ok=True)
    pts = fig6_points()
    series = fig6_series()
    written = [save_csv(pts, out / "trinity_fig6.csv"),
               save_csv(series.rename(columns={"A": "a2_mbps", "B": "b2_mbps"}),
                        out / "trinity_fig6_series.csv"),
               save_csv(fig6_compare(pts), out / "trinity_fig6_vs_paper.csv")]
    fig, axes = plt.subplots(3, 1, figsize=(9, 12))
    fig.subplots_adjust(hspace=0.4)
    for ax, g in zip(axes[:2], (100, 300), strict=True):
        key = f"{g}/{g}"
        for i, s in enumerate(FIG6_SCHEMES):
            d = pts[(pts["scheme"] == s) & (pts["guarantees_mbps"] == key)]
            ax.plot(d["n"], d["a2_mbps"], label=SCHEMES[s][0], **markers(i))
        ax.axhline(ideal_a2(g, g), color="k", ls="--", lw=1, label="ideal (G + spare / 2)")
        ax.axhline(g, color="grey", ls=":", lw=1, label="A's guarantee")
        ax.set_xscale("log", base=2)
        ax.set_xticks(list(NS), [str(n) for n in NS])
        ax.set_xlabel("N, B's TCP connections")
        ax.set_ylabel("A2 throughput (wire Mb/s)")
        ax.set_title(f"Fig. 6({'a' if g == 100 else 'b'}): guarantees {key} Mb/s "
                     "(each point one run)")
        ax.set_ylim(0, LINK_MBPS)
    ax = axes[2]
    for i, (s, d) in enumerate(series.groupby("scheme", sort=False)):
        ax.plot(d["time_s"] * 1e3, d["A"], label=SCHEMES[str(s)][0], drawstyle="steps-pre",
                **style(i + 2))
    ax.axhline(ideal_a2(100, 100), color="k", ls="--", lw=1, label="ideal")
    ax.axhline(100, color="grey", ls=":", lw=1, label="A's guarantee")
    ax.set_title("Fig. 6(c): A2 every 5 ms, N = 10, 100/100 Mb/s")
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("A2 throughput (wire Mb/s)")
    ax.set_ylim(0, LINK_MBPS)
    for ax in axes:
        ax.grid(alpha=0.3)
        legend_outside(ax)
    written.append(save_png(fig, out / "trinity_fig6.png"))
    return written


FIG7_SETTINGS = {"a": (100.0, 100.0), "b": (750.0, 150.0)}
"""Fig. 7's panels: (a) as Fig. 6(a); (b) A 750 / B 150 Mb/s, Fig. 2(c)'s split with
the large guarantee on the single-connection tenant (spec §5 #19: not stated)."""


def fig7_points() -> pd.DataFrame:
    """A2's and B2's mean throughput at N = 10 under each Fig. 7 scheme and panel."""
    todo = [(p, s) for p in FIG7_SETTINGS for s in FIG7_SCHEMES]
    rows = []
    for panel, s in progress.steps(todo, lambda t: f"Fig. 7({t[0]}): {t[1]}"):
        ga, gb = FIG7_SETTINGS[panel]
        rows.append({"panel": panel, **point(s, ga, gb, 10)})
    return pd.DataFrame(rows)


def fig7_compare(pts: pd.DataFrame) -> pd.DataFrame:
    """Fig. 7's qualitative claims (§V-A) beside ours; A-ES fails guarantees in the
    paper's panel (b) only, so its panel (a) is reported, not judged."""
    rows = []
    worst = "ours: worst tenant, % of its guarantee"
    for panel, (ga, gb) in FIG7_SETTINGS.items():
        spare = LINK_MBPS - ga - gb
        for s in FIG7_SCHEMES:
            d = pts[(pts["panel"] == panel) & (pts["scheme"] == s)].iloc[0]
            a, b = float(d["a2_mbps"]), float(d["b2_mbps"])
            low = min(a / ga, b / gb) * 100
            kept = low >= 98
            used = (a + b - ga - gb) / spare * 100 if spare > 0 else 100.0
            tag = f"({panel}) {SCHEMES[s][0]}"
            if s == "c-es":
                rows.append(check(f"{tag}: keeps both guarantees", low,
                                  '"provides bandwidth guarantees"', kept, worst,
                                  expected=">= 98 %"))
                rows.append(check(f"{tag}: leaves at least 20 % of the spare unused", used,
                                  '"cannot fully utilize spare bandwidth"', used <= 80,
                                  "ours: % of the spare used", expected="<= 80 %"))
            elif s == "a-es":
                rows.append(check(f"{tag}: one tenant below its guarantee", low,
                                  '"fails to provide bandwidth guarantees" (Fig. 7(b))',
                                  not kept if panel == "b" else None, worst,
                                  expected="< 98 %" if panel == "b" else "",
                                  why_not="A's and B's guarantees in panel (b) are not in "
                                  "the paper (ours: 750 / 150 Mb/s); with them A-ES keeps "
                                  "both in every 10 ms sample"))
            else:
                rows.append(check(f"{tag}: keeps both guarantees", low,
                                  '"provides accurate bandwidth guarantees"', kept, worst,
                                  expected=">= 98 %"))
                rows.append(check(f"{tag}: link at least 95 % used", (a + b) / LINK_MBPS * 100,
                                  '"achieving good work conservation"',
                                  a + b >= 0.95 * LINK_MBPS, "ours: % of the link",
                                  expected=">= 95 %",
                                  why_not=OVERSHOOT if s == "trinity-paper" else ""))
    return frame(rows)


def reproduce_fig7(out: Path) -> list[Path]:
    """Writes trinity_fig7.png, the points (CSV) and the comparison with the paper."""

    out.mkdir(parents=True, exist_ok=True)
    pts = fig7_points()
    written = [save_csv(pts, out / "trinity_fig7.csv"),
               save_csv(fig7_compare(pts), out / "trinity_fig7_vs_paper.csv")]
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), sharey=True)
    width = 0.38
    for ax, (panel, (ga, gb)) in zip(axes, FIG7_SETTINGS.items(), strict=True):
        d = pts[pts["panel"] == panel].reset_index(drop=True)
        x = range(len(d))
        ax.bar([i - width / 2 for i in x], d["a2_mbps"], width, label="A2 (1 connection)",
               **{k: v for k, v in style(0).items() if k == "color"})
        ax.bar([i + width / 2 for i in x], d["b2_mbps"], width, label="B2 (10 connections)",
               **{k: v for k, v in style(1).items() if k == "color"})
        ax.axhline(ga, color=style(0)["color"], ls="--", lw=1, label=f"A's guarantee ({ga:g})")
        ax.axhline(gb, color=style(1)["color"], ls=":", lw=1.5,
                   label=f"B's guarantee ({gb:g})")
        ax.set_xticks(list(x), [SHORT[s] for s in d["scheme"]], fontsize=8)
        ax.set_title(f"Fig. 7({panel}): guarantees A {ga:g} / B {gb:g} Mb/s, N = 10")
        ax.set_ylabel("mean throughput (wire Mb/s)")
        ax.set_ylim(0, LINK_MBPS)
        ax.grid(alpha=0.3, axis="y")
        legend_outside(ax, below=True)
    written.append(save_png(fig, out / "trinity_fig7.png"))
    return written


def leaf_spine_scenario(policy: str, duration_s: float = 0.05) -> dict[str, Any]:
    """The Trinity benchmark (issue 14): a 64-host leaf-spine (8 leaves of 8 hosts,
    4 spines, 10 Gb/s to hosts, 2:1 oversubscribed), 10 tenants of 8 VMs (tenant t's
    VM i on leaf i, rack position t mod 8: the first two tenants share hosts with the
    last two), every VM pair of a tenant a pipe of 1 Gb/s / 7 and a long-lived TCP
    flow, under `policy` (`trinity` or `none`; the same switches either way: the
    Trinity preset's 2 strict-priority queues, ECN and buffer)."""
    g = round(1e9 / 7)
    tenants = []
    for t in range(10):
        vms = [{"name": f"t{t}v{i}", "host": f"h{8 * i + t % 8}"} for i in range(8)]
        pipes = [{"src": a["name"], "dst": b["name"], "guarantee": f"{g}bps"}
                 for a in vms for b in vms if a is not b]
        tenants.append({"name": f"t{t}", "guarantee": "1Gbps", "vms": vms, "pipes": pipes})
    return {
        "name": f"trinity-leaf-spine-{policy}",
        "simulation": {"duration": f"{round(duration_s * 1e3)}ms", "seed": 1},
        "topology": {"kind": "leaf_spine", "leaves": 8, "spines": 4, "hosts_per_leaf": 8,
                     "link_rate": "10Gbps", "oversubscription": 2, "link_delay": "1us"},
        "network": {"queues": 2, "scheduler": "strict", "dscp_map": {"0": 1},
                    "ecn_threshold": "30KB", "ecn_scope": "queue", "host_ecn": False,
                    "buffer_policy": "dynamic_threshold", "pool": "4MB"},
        "transport": {"protocol": "newreno", "min_rto": "1ms"},
        "tenants": tenants,
        "vswitch": {"policy": policy},
        "workloads": [{"kind": "long_lived", "tenant": f"t{t}", "src": "all", "dst": "all"}
                      for t in range(10)],
        "output": {"throughput": [], "queues": False},
    }
