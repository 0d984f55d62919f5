"""``python -m tenantnet``: the ``tenantnet`` command."""

from .cli import main

main()
