"""tenantnet: side-by-side simulation of how datacenter networks are shared among tenants.

>>> import tenantnet
>>> res = tenantnet.run("scenario.toml")          # doctest: +SKIP
>>> res.flows.head()                               # doctest: +SKIP
>>> c = tenantnet.compare("scenario.toml")         # doctest: +SKIP
>>> c.verdicts                                     # doctest: +SKIP
"""

from . import _core
from .api import compare, run
from .errors import ScenarioError
from .results import Results
from .scenario import Scenario, schema
from .simulation import Simulation

__version__ = _core.version()


def __getattr__(name: str) -> object:
    """``tenantnet.sweep`` (:func:`tenantnet.sweeps.sweep`), imported when first used."""
    if name == "sweep":
        from .sweeps import sweep
        return sweep
    raise AttributeError(f"module 'tenantnet' has no attribute {name!r}")


__all__ = ["Results", "Scenario", "ScenarioError", "Simulation", "__version__", "compare", "run",
           "schema", "sweep"]
