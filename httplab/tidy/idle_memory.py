"""The idle-connection memory measurement (scripts/idle_memory.sh) as a tidy frame: one row per
point (server, mode, N, rep) of raw/<run_id>/idle_memory/<server>.<mode>/c<N>/r<rep>.json
(httplab.parse.idle_conns), written to data/<run_id>/idle_memory.parquet and .csv. Its columns are
the published schema IDLE_MEMORY (tidy.schema.FRAMES, docs/data.md).

A point is ok when every connection got its answer and was still open when the memory was read,
and both readings had settled; else failed, with the reason. Only ok points enter a statistic
(stats.idle_memory).
"""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ..parse.idle_conns import IdlePoint, read_idle_point
from ..parse.errors import RawFormatError
from . import schema

SUITE_DIR = "idle_memory"   # raw/<run_id>/idle_memory/
_POINT = re.compile(r"(?P<server>[a-z][a-z0-9_]*(?:~aa)?)\.(?P<mode>h1|h2c)/c(?P<asked>\d+)/r(?P<rep>\d+)\.json")


def point_rows(run_dir: str | Path) -> list[tuple[str, str, int, int, Path]]:
    """(server, mode, N asked, rep, file) of every finished point of the run, sorted."""
    root = Path(run_dir) / SUITE_DIR
    out = []
    for p in sorted(root.glob("*/c*/r*.json")) if root.is_dir() else ():
        m = _POINT.fullmatch(p.relative_to(root).as_posix())
        if m:
            out.append((m["server"], m["mode"], int(m["asked"]), int(m["rep"]), p))
    return sorted(out)


def row(run_id: str, server: str, rep: int, point: IdlePoint, raw_path: str) -> dict:
    problems = point.problems()
    return {
        "run_id": run_id, "server": server, "mode": point.mode, "conns": point.conns,
        "conns_asked": point.conns_asked, "rep": rep, "status": "failed" if problems else "ok",
        "answered": point.answered, "alive_after": point.alive_after,
        "rss_before_kb": float(point.before.vmrss_kb), "rss_after_kb": float(point.after.vmrss_kb),
        "kib_per_conn": point.kib_per_conn, "anon_kib_per_conn": point.anon_kib_per_conn,
        "pss_before_kb": float(point.before.pss_kb), "pss_after_kb": float(point.after.pss_kb),
        "n_procs": point.after.n_procs, "open_s": point.open_s, "held_s": point.held_s,
        "fail_reason": "; ".join(problems), "raw_path": raw_path,
    }


def idle_frame(run_dir: str | Path) -> pd.DataFrame:
    """The run's idle-memory points, one row each (schema IDLE_MEMORY); empty when it has none."""
    run_dir = Path(run_dir)
    rows = []
    for server, mode, asked, rep, path in point_rows(run_dir):
        point = read_idle_point(path)
        if point.mode != mode or point.conns_asked != asked:
            raise RawFormatError(path, f"the record says mode {point.mode}, N {point.conns_asked}; its "
                                       f"path says {mode}, {asked}")
        rows.append(row(run_dir.name, server, rep, point, path.relative_to(run_dir.parent).as_posix()))
    cols = schema.IDLE_MEMORY
    if not rows:
        return schema.empty_frame(cols)
    df = pd.DataFrame(rows, columns=schema.columns(cols))
    for c in cols:
        df[c.name] = df[c.name].astype(schema.DTYPES[c.type])
    return schema.validate(df, "idle_memory")


def write_idle(frame: pd.DataFrame, out_dir: str | Path) -> list[Path]:
    """idle_memory.parquet and idle_memory.csv under out_dir (created), validated first."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    schema.validate(frame, "idle_memory", str(out / "idle_memory.parquet"))
    frame.to_parquet(out / "idle_memory.parquet", index=False)
    frame.to_csv(out / "idle_memory.csv", index=False)
    return [out / "idle_memory.parquet", out / "idle_memory.csv"]
