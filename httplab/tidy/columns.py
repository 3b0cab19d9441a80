"""The tidy frames' columns, from their schema (tidy.schema, docs/data.md): the runs frame's required
and optional columns by kind, the latency, client_hosts, verify and suites frames' columns, and the
key of a run. Shared by the row builders (tidy.points) and the frame builders (tidy.rawrun)."""
from __future__ import annotations

from . import schema

# The columns, their types and meaning: httplab.tidy.schema (published in docs/data.md).
RUNS_COLUMNS: tuple[str, ...] = tuple(schema.columns(schema.RUNS))
# Tool-specific float columns (LoadResult.extra), appended after RUNS_COLUMNS only when some run of
# the frame comes from a tool that provides them (NaN in the other rows); text columns appended the
# same way (None in the other rows): the negotiated TLS parameters of TLS points (tls_info.point_tls).
# Columns of points loaded through per-host files (several client hosts, or an inventory's client
# machine: tidy.multihost), appended last only when a point of the frame was (1 and 0.0 in the
# other rows).
HOST_COLUMNS: tuple[str, ...] = ("client_hosts", "client_start_skew_ms")
EXTRA_COLUMNS: tuple[str, ...] = tuple(c.name for c in schema.RUNS
                                       if c.optional and c.type == "float" and c.name not in HOST_COLUMNS)
TEXT_EXTRA_COLUMNS: tuple[str, ...] = tuple(c.name for c in schema.RUNS if c.optional and c.type == "str?")
# text columns a tool's loader gives in LoadResult.text (the TLS ones come from tls_info instead)
TOOL_TEXT_COLUMNS: tuple[str, ...] = ("load_model",)
RUN_KEY: tuple[str, ...] = ("run_id", "suite", "server", "scenario", "rep")
LATENCY_COLUMNS: tuple[str, ...] = tuple(schema.columns(schema.LATENCY))
CLIENT_HOSTS_COLUMNS: tuple[str, ...] = tuple(schema.columns(schema.CLIENT_HOSTS))
VERIFY_COLUMNS: tuple[str, ...] = ("run_id", "suite", "server", "rep", "passed", "n_pass", "n_fail",
                                   "failed_checks", "lines", "raw_path")
SUITE_COLUMNS: tuple[str, ...] = ("run_id", "suite", "status", "message", "end_utc")

def _of_type(*types: str) -> tuple[str, ...]:
    return tuple(c.name for c in schema.RUNS if c.type in types and not c.optional)


_INT_COLS = _of_type("int")
_NULLABLE_INT_COLS = _of_type("int?")
_NULLABLE_BOOL_COLS = _of_type("bool?")
_FLOAT_COLS = _of_type("float")
_TEXT_COLS = _of_type("str")
_OPTIONAL_TEXT_COLS = _of_type("str?")
