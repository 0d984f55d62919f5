"""``python -m tenantnet``: the ``tenantnet`` command."""

from .cli.main import main

main()
