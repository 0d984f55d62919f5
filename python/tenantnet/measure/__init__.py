"""What a run gave each tenant: windows over sampled series, the tables of a report,
the measures of ``compare`` and ``sweep``, statistics over seeds and the verdicts."""
