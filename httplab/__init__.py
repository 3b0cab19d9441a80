"""httplab: analysis side of the HTTP server benchmark lab (raw runs -> tidy frames, statistics,
seed-style tables, plots, reports). See DESIGN.md §3–§5.

The names below are imported on first use, not with the package: the small command-line tools the
shell calls between measured runs (`python -m httplab.h2log`, `.order`, `.hoststate`) must not pay
for pandas and scipy (~0.8 s each time) when they need neither.
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "NoRunError": "errors", "RawConsistencyError": "errors", "RawFormatError": "errors",
    "build_frames": "rawrun", "load_run": "rawrun", "load_verify": "rawrun", "read_meta": "rawrun",
    "write_tidy": "rawrun",
    "default_run_dir": "runs_select", "list_runs": "runs_select",
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
