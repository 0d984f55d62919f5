"""How far the session's scaled reproductions are cut (``conftest.py`` runs them once,
tests/test_trinity_repro.py checks them against the paper, tests/test_digests.py
digests them). Their commands run them whole, a minute together
(`scripts/claims_table.py --run`)."""

FIG8_SCALE = 0.03
"""Trinity Fig. 8 with every size cut to 3 %."""
TABLES_QUERIES = 300
"""Trinity Tables II-IV with 300 exchanges per size (the command runs 2000)."""
FIG9_QUERIES = 200
"""Trinity Fig. 9 with 200 queries per client (the command runs 1000)."""
