"""`tenantnet advise` and `tenantnet.advise`: which scheme, with which settings,
meets a set of service levels (:mod:`.slo`)."""
