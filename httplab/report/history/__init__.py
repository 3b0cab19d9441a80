"""The lab's history: every committed run's statistics in one queryable store, the headline
metrics over runs, dates, commits and machines, and the change points in each series measured on
one machine (docs/history.md).

    store.py         DuckDB over data/*/ (estimates, comparisons, runs) with each run's identity
    changepoints.py  change-point detection (Apache Otava's E-divisive means with a t-test)
    page.py          reports/history.md, history.html and its figures; the index's lines
    cli.py           python -m httplab history

It sits in the report layer: it reads data/<run_id>/ only, like every report.
"""
