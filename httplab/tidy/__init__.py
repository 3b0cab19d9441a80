"""Layer 2, tidy: a raw run (raw/<run_id>/, packed or not) -> the tidy frames (runs, latency,
verify, suites; one row per measured run), with the flags rules (bounds), the server names, the
run order and the packing of raw files.

May import: parse/ and tidy/ itself, pandas and numpy. Not stats/ or report/.
"""
