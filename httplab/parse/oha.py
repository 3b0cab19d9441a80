"""Reads oha's JSON report (`oha --output-format json`, 1.16) into OhaReport.

What oha writes, and how it is read (its source: printer.rs, result_data.rs):
- `summary.total`: the run's wall time in seconds, from the first scheduled request to the last
  answer (with -w, answers in flight at the -z deadline are waited for).
- `statusCodeDistribution`: responses per HTTP status. Their sum is the number of answered requests.
  `summary.requestsPerSec` is NOT used: oha divides *all* results by the time, errors included
  (a run against a closed port reports ~2000 req/s of "Connection refused").
- `errorDistribution`: client-side errors per message (connection refused, timeout, reset, ...).
  "aborted due to deadline" marks requests still in flight when -z ended the run: the end of the
  window, not the server (oha's own success rate leaves them out); the loader decides how many of
  them a run may have.
- `latencyPercentiles` (p10 … p99.99) and `summary.slowest`/`fastest`/`average`: seconds, taken
  by oha from every answered request (index ⌊p/100·n⌋ of the sorted latencies). With -q and
  --latency-correction a latency counts from the request's scheduled send time.
A file that is not such a report raises RawFormatError naming the file and the key.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import RawFormatError
from .jsonio import read_json_object, require

# The percentiles oha reports, in its key order.
PERCENTILES: tuple[float, ...] = (10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99)
DEADLINE_ERROR = "aborted due to deadline"


@dataclass(frozen=True)
class OhaReport:
    path: str
    total_s: float
    status_counts: dict[int, int]
    errors: dict[str, int]  # every client-side error but DEADLINE_ERROR
    aborted_at_deadline: int
    bytes_read: int
    fastest_s: float  # NaN when nothing was answered
    slowest_s: float
    average_s: float
    percentiles_s: dict[float, float]  # empty when nothing was answered

    @property
    def responses(self) -> int:
        return sum(self.status_counts.values())

    @property
    def non_2xx(self) -> int:
        return sum(n for code, n in self.status_counts.items() if not 200 <= code < 300)


def _number(value: Any, path: str, key: str) -> float:
    """A JSON number (oha writes NaN as null when nothing was answered)."""
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RawFormatError(path, f"unexpected value {value!r}", key=key)
    return float(value)


def _counts(doc: dict[str, Any], key: str, path: str) -> dict[str, int]:
    raw = require(doc, key, path, dict)
    out: dict[str, int] = {}
    for name, n in raw.items():
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise RawFormatError(path, f"unexpected count {n!r} for {name!r}", key=key)
        out[name] = n
    return out


def parse_oha_json(path: str | Path) -> OhaReport:
    """oha's JSON report file (oha_report of its contents)."""
    return oha_report(read_json_object(path), str(path))


def oha_report(doc: dict[str, Any], where: str) -> OhaReport:
    """oha's JSON report (the parsed object) as an OhaReport; RawFormatError naming `where` and
    the key."""
    p = where
    summary = require(doc, "summary", p, dict)
    total = _number(require(summary, "total", p), p, "summary.total")
    if not total >= 0:
        raise RawFormatError(p, f"unexpected value {total!r}", key="summary.total")
    statuses: dict[int, int] = {}
    for code, n in _counts(doc, "statusCodeDistribution", p).items():
        if not code.isdigit() or not 100 <= int(code) <= 599:
            raise RawFormatError(p, f"unexpected status {code!r}", key="statusCodeDistribution")
        statuses[int(code)] = n
    errors = _counts(doc, "errorDistribution", p)
    aborted = errors.pop(DEADLINE_ERROR, 0)
    pct_doc = require(doc, "latencyPercentiles", p, dict)
    percentiles: dict[float, float] = {}
    if sum(statuses.values()) > 0:
        for q in PERCENTILES:
            key = f"p{q:g}"
            percentiles[q] = _number(require(pct_doc, key, p), p, f"latencyPercentiles.{key}")
        values = list(percentiles.values())
        if any(math.isnan(v) or v < 0 for v in values) or values != sorted(values):
            raise RawFormatError(p, f"percentiles not ascending non-negative seconds: {values}",
                                 key="latencyPercentiles")
    data = summary.get("totalData", 0)
    if isinstance(data, bool) or not isinstance(data, int) or data < 0:
        raise RawFormatError(p, f"unexpected value {data!r}", key="summary.totalData")
    return OhaReport(
        path=p, total_s=total, status_counts=statuses, errors=errors, aborted_at_deadline=aborted,
        bytes_read=data,
        fastest_s=_number(summary.get("fastest"), p, "summary.fastest"),
        slowest_s=_number(summary.get("slowest"), p, "summary.slowest"),
        average_s=_number(summary.get("average"), p, "summary.average"),
        percentiles_s=percentiles,
    )
