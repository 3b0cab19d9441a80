"""httplab: analysis side of the HTTP server benchmark lab, in four layers read top-down, each
importing only the layers below it (tests/unit/test_import_graph.py checks this):

  parse/   raw tool output -> typed records
  tidy/    a raw run -> tidy frames (runs, latency, verify, suites)
  stats/   the runs frame -> estimates and comparisons (the numbers every report prints)
  report/  tables, plots, prose, notebooks' glue, the report index

The names below are imported on first use, not with the package: the small command-line tools the
shell calls between measured runs (`python -m httplab h2log`, `lab.schedule`, `lab.hoststate`) must not pay
for pandas and scipy (~0.8 s each time) when they need neither.
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "NoRunError": "parse.errors", "RawConsistencyError": "parse.errors", "RawFormatError": "parse.errors",
    "build_frames": "tidy.rawrun", "load_run": "tidy.rawrun", "load_verify": "tidy.rawrun",
    "read_meta": "tidy.rawrun", "write_tidy": "tidy.rawrun",
    "default_run_dir": "tidy.runs_select", "list_runs": "tidy.runs_select",
    "format_delta": "stats", "mean_ci": "stats", "ratio_ci": "stats",
}

__all__ = sorted(_EXPORTS)
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'httplab' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
