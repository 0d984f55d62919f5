"""Defaults the command line shows before anything heavy is imported (``tenantnet
--help`` reads them without loading pandas)."""

SETTLE_S = 0.5
"""How long a tenant's VM must have had demand before its intervals are judged on
guarantees and fairness (:mod:`tenantnet.measure.metrics`): the demo's choice, the second
half of each 1 s phase."""

DEFAULT_SEEDS = 3
"""Seeds per scheme in ``compare`` unless told otherwise: the fewest that give an
interval worth reading."""
