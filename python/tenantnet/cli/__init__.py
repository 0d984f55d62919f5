"""The ``tenantnet`` command: the parser and dispatch (:mod:`.main`) and one module
per command family."""
