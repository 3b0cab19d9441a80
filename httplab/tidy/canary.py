"""The machine's canary of a run (scripts/lib/canary.sh): per part and moment (start, mid, end) the
fixed CPU loop's speed, the loopback ping-pong's round trips and the floor responder's req/s, as the
tidy frame `canary` (schema: tidy.schema CANARY). A run made before the canary existed has no
canary folders and gives an empty frame.

Raw layout, per part: <part>/canary.<when>/canary.json (written last: what ran, and why a part did
not), cpu.json and pingpong.json (build/bench/canary's one JSON object each), floor.stdout.txt
(wrk's text report). A malformed file raises RawFormatError naming it (and its line or key).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from ..parse.errors import RawFormatError
from ..parse.jsonio import read_json_object, read_utf8, require
from ..parse.wrk import parse_wrk_text
from . import schema

WHEN_ORDER = ("start", "mid", "end")


def _number(doc: dict[str, Any], key: str, path: Path) -> float:
    value = require(doc, key, path, (int, float))
    return float(value)


def _part_figure(folder: Path, name: str, key: str) -> float:
    """One part's figure from its JSON (NaN when the part did not run: no file)."""
    path = folder / f"{name}.json"
    if not path.is_file():
        return math.nan
    return _number(read_json_object(path), key, path)


def _floor(folder: Path) -> tuple[float, int | None, str]:
    """(req/s, errors, problem) of the floor's wrk run: NaN req/s when it did not run, or with any
    socket error or non-2xx answer (a failed run is never a figure)."""
    path = folder / "floor.stdout.txt"
    if not path.is_file():
        return math.nan, None, ""
    w = parse_wrk_text(read_utf8(path), path)
    errors = int(w.non2xx + w.socket_errors.total)
    if errors:
        return math.nan, errors, f"floor: {errors} socket errors or non-2xx answers (failed)"
    return float(w.requests_per_s), 0, ""


def canary_rows(run_dir: Path, part: str, run_id: str) -> list[dict[str, Any]]:
    rows = []
    found = sorted((run_dir / part).glob("canary.*/canary.json"),
                   key=lambda p: WHEN_ORDER.index(p.parent.name.split(".", 1)[1])
                   if p.parent.name.split(".", 1)[1] in WHEN_ORDER else len(WHEN_ORDER))
    for path in found:
        folder = path.parent
        doc = read_json_object(path)
        when = str(require(doc, "when", path, str))
        if when not in WHEN_ORDER:
            raise RawFormatError(path, f"unexpected value {when!r}", key="when")
        problems = [str(p) for p in require(doc, "problems", path, list)]
        floor_rps, floor_errors, floor_problem = _floor(folder)
        if floor_problem:
            problems.append(floor_problem)
        rows.append({
            "run_id": run_id, "suite": part, "when": when, "utc": str(require(doc, "utc", path, str)),
            "seconds": _number(doc, "seconds", path),
            # (written since the quick profile's programs run shorter than its floor; before, one length)
            "probe_seconds": _number(doc, "probe_seconds" if "probe_seconds" in doc else "seconds", path),
            "server_cpu": str(require(doc, "server_cpu", path, str)),
            "cpu_mops_per_s": _part_figure(folder, "cpu", "mops_per_s"),
            "pingpong_rt_per_s": _part_figure(folder, "pingpong", "round_trips_per_s"),
            "floor_req_per_s": floor_rps, "floor_errors": floor_errors,
            "problems": "; ".join(problems), "raw_path": f"{run_id}/{part}/{folder.name}",
        })
    return rows


def load_canary(run_dir: str | Path, parts: list[str], meta: Mapping[str, Any]) -> pd.DataFrame:
    """The canary frame of a run's parts (no rows when the run has no canary)."""
    run_dir = Path(run_dir)
    rows = [r for part in parts for r in canary_rows(run_dir, part, str(meta["run_id"]))]
    cols = [c.name for c in schema.CANARY]
    df = pd.DataFrame(rows, columns=cols)
    df["floor_errors"] = df["floor_errors"].astype("Int64")
    for c in ("seconds", "probe_seconds", "cpu_mops_per_s", "pingpong_rt_per_s", "floor_req_per_s"):
        df[c] = df[c].astype("float64")
    return df
