"""HTML reports and figures: one look for every plot, the report of runs and its
QShare section."""
