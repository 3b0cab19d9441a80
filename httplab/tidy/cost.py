"""The instruction-count measurement (scripts/cost.sh) as a tidy frame: one row per server process,
raw/<run_id>/cost/<server>.<protocol>/n<N>/r<rep>.json with its counts and h2load's report
(httplab.parse.cachegrind), written with the per-rep figures (httplab.stats.cost) to
data/<run_id>/cost_points.{parquet,csv}.

A point is ok when every request of its N succeeded with a 2xx; else failed, with the reason. Only
ok points enter a figure. `check_point` is what scripts/cost.sh asks about a point it just measured
(python -m httplab cost check), before the point's files get their final names.
"""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ..parse.cachegrind import CostPoint, read_cost_point
from ..parse.errors import RawFormatError

COST_DIR = "cost"   # raw/<run_id>/cost/
_POINT = re.compile(r"(?P<server>[a-z][a-z0-9_]*)\.(?P<protocol>[a-z0-9_]+)/n(?P<n>\d+)/r(?P<rep>\d+)\.json")

# column -> pandas dtype, in order
POINT_COLUMNS: dict[str, str] = {
    "run_id": "string", "server": "string", "protocol": "string", "mode": "string", "requests": "int64",
    "rep": "int64", "ir": "int64", "succeeded": "int64", "status_2xx": "int64", "status": "string",
    "fail_reason": "string", "client_command": "string", "server_command": "string",
    "instrument": "string", "start_utc": "string", "raw_path": "string",
}


def point_files(run_dir: str | Path) -> list[tuple[str, str, int, int, Path]]:
    """(server, protocol, N, rep, record) of every finished point of the run, sorted."""
    root = Path(run_dir) / COST_DIR
    out = []
    for p in sorted(root.glob("*/n*/r*.json")) if root.is_dir() else ():
        m = _POINT.fullmatch(p.relative_to(root).as_posix())
        if m:
            out.append((m["server"], m["protocol"], int(m["n"]), int(m["rep"]), p))
    return sorted(out)


def point_row(run_id: str, point: CostPoint, raw_path: str) -> dict:
    problems = point.problems()
    return {
        "run_id": run_id, "server": point.server, "protocol": point.protocol, "mode": point.mode,
        "requests": point.requests, "rep": point.rep, "ir": point.counts.ir,
        "succeeded": point.load.succeeded, "status_2xx": point.load.status_2xx,
        "status": "failed" if problems else "ok", "fail_reason": "; ".join(problems),
        "client_command": point.client_command, "server_command": point.server_command,
        "instrument": point.instrument, "start_utc": point.start_utc, "raw_path": raw_path,
    }


def typed(rows: list[dict], columns: dict[str, str]) -> pd.DataFrame:
    """rows as a frame with exactly these columns and dtypes (an empty frame when no rows)."""
    df = pd.DataFrame(rows, columns=list(columns))
    return df.astype(columns)


def cost_points(run_dir: str | Path) -> pd.DataFrame:
    """The run's points, one row each (POINT_COLUMNS); RawFormatError where a record's path and
    contents disagree."""
    run_dir = Path(run_dir)
    rows = []
    for server, protocol, n, rep, path in point_files(run_dir):
        point = read_cost_point(path)
        if (point.server, point.protocol, point.requests, point.rep) != (server, protocol, n, rep):
            raise RawFormatError(path, f"the record says {point.server} {point.protocol} N={point.requests} "
                                       f"rep {point.rep}; its path says {server} {protocol} N={n} rep {rep}")
        rows.append(point_row(run_dir.name, point, path.relative_to(run_dir.parent).as_posix()))
    return typed(rows, POINT_COLUMNS)


def check_point(point_dir: str | Path, rep: int, tmp: bool = False) -> tuple[bool, str]:
    """(ok, one line) for the point r<rep>.json in point_dir (.r<rep>.json while scripts/cost.sh
    has not yet given it its final name): its instruction count and requests, or why it fails."""
    record = Path(point_dir) / (f".r{rep}.json" if tmp else f"r{rep}.json")
    try:
        point = read_cost_point(record)
        ir = point.counts.ir
    except (RawFormatError, OSError) as exc:
        return False, str(exc)
    problems = point.problems()
    if problems:
        return False, (f"{record}: {'; '.join(problems)} (h2load's report: "
                       f"{record.name[:-5]}.h2load.txt)")
    return True, f"{ir:,} instructions, {point.load.succeeded:,}/{point.requests:,} requests 2xx"
