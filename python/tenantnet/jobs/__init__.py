"""Running work on this machine: worker processes (:mod:`.pool`), progress on the
terminal, what the CPUs are doing, and folders of output written whole or not at all."""
