"""tenantnet beside other simulators: the DCTCP permutation against htsim, and
any scenario against ns-3 flow by flow."""
