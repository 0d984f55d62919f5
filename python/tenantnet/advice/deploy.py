"""The deployment of the configuration `tenantnet advise` recommends (else the
closest), written beside its report (``deploy/``): what ``tenantnet deploy`` gives
for the tuned scenario as it is, and in ``DEPLOY.md`` what to set at each place of
the network, the tuned values included.

* **Switches**: one SONiC config_db per switch (``deploy/sonic/``, validated as
  ``tenantnet deploy sonic`` validates), where SONiC can express the scheme's
  switch pieces; else why not, and for QShare the controller's commands with the
  tuned values.
* **Hosts**: for the host schemes Linux's traffic control can enforce (none,
  static, MBFQ) the ``tenantnet deploy linux`` command per host, which needs the
  host's uplink and its VMs' addresses (only the user knows them); for the others,
  the values to set.
* **Transport**: DCTCP's settings on every host, its gain as Linux's shift
  (``dctcp_shift_g``: g = 2^-shift)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from ..linux.tc import SCHEMES as LINUX_SCHEMES
from ..linux.tc import host_scheme
from ..sim.params import get_key
from ..sim.scenario import Scenario
from ..sonic.configdb import first_violation
from ..sonic.fabric import sonic_configs, write_config_dbs
from .answer import Advice
from .search import Config


def write(a: Advice, out: Path, scenario_file: str = "recommended.json") -> Path | None:
    """Writes ``out/deploy/`` for `a`'s recommended (else closest) configuration,
    whose scenario is `scenario_file` in `out`; its ``DEPLOY.md``, or None when the
    search has no configuration to deploy."""
    config = a.recommended or a.closest
    if config is None:
        return None
    d = out / "deploy"
    d.mkdir(parents=True, exist_ok=True)
    sc = Scenario.from_dict(a.scenario, str(out / scenario_file), a.base_dir)
    lines = [f"# Deploying {config.label()}", ""]
    if a.recommended is None:
        lines += ["Nothing tried met every level on the held-out seeds: this is the "
                  f"closest configuration, bound by {a.binding}.", ""]
    lines += [f"The tuned scenario is `{scenario_file}`; every command here takes it "
              "as it is.", ""]
    lines += _switches(sc, config, d) + _hosts(sc, config, scenario_file) + \
        _transport(a.scenario) + _values(config)
    path = d / "DEPLOY.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _switches(sc: Scenario, config: Config, d: Path) -> list[str]:
    out = ["## Switches", ""]
    try:
        dbs, notes = sonic_configs(sc, None)
    except (ValueError, ScenarioError) as e:
        out += [f"SONiC: none written. {e}", ""]
        if config.scheme == "qshare":
            out += _qshare(sc.data())
        return out
    bad = first_violation(dbs)
    if bad:
        return [*out, f"SONiC: none written: {bad}.", ""]
    (d / "sonic").mkdir(exist_ok=True)
    write_config_dbs(dbs, d / "sonic", notes)
    return [*out, f"`sonic/`: one SONiC config_db per switch ({len(dbs)}), validated "
            "against SONiC's YANG rules; the same as `tenantnet deploy sonic "
            "recommended.json -o DIR`.", *(f"- note: {n}" for n in notes), ""]


def _qshare(data: dict[str, Any]) -> list[str]:
    q = data.get("qshare") or {}
    queues = get_key(data, "network.queues")
    return ["QShare's controller binds tenants to queues as their demand changes; its "
            "tuned settings:", "",
            f"- `tenantnet qshare place ... --cq-weight {q.get('cq_weight', 0.5)}`",
            f"- every {q.get('interval', '4s')} (T_c): `tenantnet qshare bind DIR "
            f"--usage USAGE.csv --max-weight {q.get('max_weight', 15)}` with the "
            "measured usage",
            "- then `tenantnet qshare emit-sonic DIR -o OUT` for the switches",
            f"- each port with {queues if queues is not None else 8} weighted-fair "
            "queues", ""]


def _hosts(sc: Scenario, config: Config, scenario_file: str) -> list[str]:
    data = sc.data()
    scheme = host_scheme(data)
    out = ["## Hosts", ""]
    if scheme not in LINUX_SCHEMES:
        tuned = [f"`{k}` = {v}" for k, v in config.values if k.startswith("vswitch.")]
        return [*out, f"The hosts run {scheme}, which tenantnet cannot deploy on Linux "
                "yet (`tenantnet deploy linux` writes "
                f"{', '.join(LINUX_SCHEMES)}); its tuned settings: "
                f"{', '.join(tuned) or 'as registered'}.", ""]
    vms = sc.simulation().results().vms
    out += [f"The hosts run {scheme}. On each host, with its uplink for DEV and each "
            "VM's IPv4 source address (`--apply` instead of `--dry-run` sets it):", "",
            "```sh"]
    for host in sorted(set(map(str, vms["host"]))):
        addrs = " ".join(f"--addr {vm}=IPV4" for vm in vms[vms["host"] == host]["vm"])
        out.append(f"tenantnet deploy linux {scenario_file} --host {host} --dev DEV "
                   f"{addrs} --dry-run")
    return [*out, "```", ""]


def _transport(data: dict[str, Any]) -> list[str]:
    t = data.get("transport") or {}
    if t.get("protocol") != "dctcp":
        return []
    g = float(t.get("dctcp_g", 1 / 16))
    shift = round(-math.log2(g))
    near = "" if math.isclose(2.0 ** -shift, g) else f", the nearest to {g:g}"
    return ["## Transport", "", "On every host (DCTCP, with g as Linux keeps it: "
            f"g = 2^-{shift} = {2.0 ** -shift:g}{near}):", "", "```sh",
            "sysctl -w net.ipv4.tcp_congestion_control=dctcp net.ipv4.tcp_ecn=1",
            f"echo {shift} > /sys/module/tcp_dctcp/parameters/dctcp_shift_g", "```", ""]


def _values(config: Config) -> list[str]:
    if not config.values:
        return ["## Tuned values", "", "None: the scheme as registered.", ""]
    return ["## Tuned values", "", "| key | value |", "|---|---|",
            *(f"| `{k}` | {json.dumps(v) if isinstance(v, str) else v} |"
              for k, v in config.values), ""]
