"""tenantnet: side-by-side simulation of how datacenter networks are shared among tenants.

>>> import tenantnet
>>> res = tenantnet.run("scenario.toml")          # doctest: +SKIP
>>> res.flows.head()                               # doctest: +SKIP
>>> c = tenantnet.compare("scenario.toml")         # doctest: +SKIP
>>> c.verdicts                                     # doctest: +SKIP

The package's folders follow what a user does: ``sim`` (a scenario and its run),
``measure``, ``report``, ``comparison`` (``compare`` and ``sweep``), ``advice`` (``advise``),
``reproduce``,
``linux`` (``tc``, eBPF, namespaces, the emulation), ``sonic``, ``crosscheck`` and
``cli``, over ``jobs`` (processes, progress, output folders) and ``errors``.
"""

import importlib

from . import _core
from .errors import ScenarioError
from .sim.api import run
from .sim.results import Results
from .sim.scenario import Scenario, schema
from .sim.simulation import Simulation

__version__ = _core.version()

LAZY = {
    "compare": ("tenantnet.comparison.api", "compare"),
    "advise": ("tenantnet.advice.api", "advise"),
    "sweep": ("tenantnet.comparison.sweep", "sweep"),
    "schemes": ("tenantnet.sim.schemes", None),
    "metrics": ("tenantnet.measure.metrics", None),
    "qshare": ("tenantnet.sim.qshare", None),
    "emulation": ("tenantnet.linux.emulation", None),
}
"""Names imported when first used, so that ``import tenantnet`` loads no pandas:
``compare`` and ``sweep``, and the modules the guides name as ``tenantnet.<name>``."""


def __getattr__(name: str) -> object:
    """A name of ``LAZY``, imported when first used."""
    if name not in LAZY:
        raise AttributeError(f"module 'tenantnet' has no attribute {name!r}")
    module, attr = LAZY[name]
    loaded = importlib.import_module(module)
    return loaded if attr is None else getattr(loaded, attr)


__all__ = ["Results", "Scenario", "ScenarioError", "Simulation", "__version__", "advise",
           "compare", "run", "schema", "sweep"]
