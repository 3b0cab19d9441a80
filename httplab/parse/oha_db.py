"""Compact oha's per-request SQLite record (`oha --db-url FILE`) into a small JSON histogram of the
measured window, and read that JSON back.

Why: oha's JSON report gives nine percentiles of the whole run, warm-up included. A latency suite
point is one oha run of warm-up + measured seconds (one process, so the connections, and over TLS
their handshakes, are made during the warm-up, not in the window); oha writes every answered
request to the database after the load, with its scheduled send time (`start_latency_correction`,
NULL without -q/--latency-correction: then the actual `start`), its `end` and its `duration`
(seconds since the run's start; duration from the scheduled send when corrected). The window is
every request scheduled at or after `--skip` seconds.

    python -m httplab oha-hist DB OUT.json --skip S

Exit status 0 on success; 2 with a message naming the file on stderr when the database is not
oha's (OUT.json is then not written); OUT.json is written atomically.

Output JSON:

    {"tool": "oha-db", "format": 1, "skip_s": S, "requests_total": N, "requests_window": n,
     "status_counts": {"200": n, ...},           (window)
     "window_first_s": ..., "window_last_end_s": ...,
     "latency_hist": [[duration_us, count], ...]}   (window; 1 µs resolution, counts sum to n)
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sqlite3
import sys
from dataclasses import dataclass
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import RawFormatError
from .jsonio import number_pairs, read_json_object, require

if TYPE_CHECKING:
    import numpy as np

FORMAT = 1


def compact(db: str | Path, skip_s: float) -> dict[str, object]:
    """The window's histogram and counts from oha's database (RawFormatError when it is not one)."""
    path = Path(db)
    if not path.is_file():
        raise RawFormatError(path, "no such database")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            total = con.execute("SELECT COUNT(*) FROM oha").fetchone()[0]
            rows = con.execute(
                "SELECT duration, status, end, COALESCE(start_latency_correction, start) AS sched "
                "FROM oha WHERE COALESCE(start_latency_correction, start) >= ?", (skip_s,)).fetchall()
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise RawFormatError(path, f"not oha's database ({exc})") from exc
    # Python floats are IEEE doubles, as a float64 array is: the same rounding (round() and
    # numpy's rint both round half to even) and the same JSON, with the standard library alone
    # (this runs on the benchmark host between measured runs)
    arr = [tuple(math.nan if x is None else float(x) for x in row) for row in rows]
    if any(not math.isfinite(x) for row in arr for x in row) or any(row[0] < 0 for row in arr):
        raise RawFormatError(path, "a duration that is negative or not a number")
    hist = Counter(round(row[0] * 1e6) for row in arr)
    codes = Counter(int(row[1]) for row in arr)
    return {
        "tool": "oha-db", "format": FORMAT, "skip_s": skip_s, "requests_total": int(total),
        "requests_window": len(arr),
        "status_counts": {str(c): codes[c] for c in sorted(codes)},
        "window_first_s": min(row[3] for row in arr) if arr else None,
        "window_last_end_s": max(row[2] for row in arr) if arr else None,
        "latency_hist": [[v, hist[v]] for v in sorted(hist)],
    }


@dataclass(frozen=True)
class OhaWindow:
    path: str
    skip_s: float
    requests_total: int
    requests_window: int
    status_counts: dict[int, int]
    hist_values_us: np.ndarray
    hist_counts: np.ndarray


def read_window(path: str | Path) -> OhaWindow:
    """The JSON file `compact` wrote, checked (window_of its contents)."""
    return window_of(read_json_object(path), str(path))


def window_of(doc: dict[str, object], where: str) -> OhaWindow:
    """The JSON object `compact` wrote, checked (RawFormatError naming `where` and the key
    otherwise)."""
    p = where
    if require(doc, "tool", p) != "oha-db" or require(doc, "format", p) != FORMAT:
        raise RawFormatError(p, "not an oha-db histogram of format 1", key="tool")
    pairs = number_pairs(require(doc, "latency_hist", p, list), integers=True)
    if pairs is None:
        raise RawFormatError(p, "entries must be [µs, count] pairs of whole numbers ≥ 0", key="latency_hist")
    values, counts = pairs
    n = require(doc, "requests_window", p, int)
    if int(counts.sum()) != n:
        raise RawFormatError(p, f"histogram counts sum to {int(counts.sum())}, requests_window is {n}",
                             key="latency_hist")
    statuses = {int(k): int(v) for k, v in require(doc, "status_counts", p, dict).items()}
    return OhaWindow(p, float(require(doc, "skip_s", p, (int, float))), require(doc, "requests_total", p, int),
                     n, statuses, values, counts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db")
    ap.add_argument("out")
    ap.add_argument("--skip", type=float, default=0.0, help="seconds of warm-up to leave out")
    args = ap.parse_args(argv)
    try:
        doc = compact(args.db, args.skip)
    except RawFormatError as exc:
        print(f"oha_db: {exc}", file=sys.stderr)
        return 2
    tmp = f"{args.out}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, separators=(",", ":"))
    os.replace(tmp, args.out)
    return 0
