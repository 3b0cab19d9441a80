"""Layer 4, report: tables, plots, prose and the notebooks' glue; the report index. Formats numbers
that stats/ computed; computes none of its own intervals.

May import: every lower layer (parse/, tidy/, stats/) and report/ itself.
"""
