"""Reads h3load's JSON report (tools/h3load, the lab's HTTP/3 load generator, format 1) into
H3LoadReport.

What h3load writes (its source's header says how it counts):
- `requests_window`, `status_counts`, `body_bytes_window`, `latency_hist`: the answers that completed
  between the end of its warm-up (-w) and the end of its window (-d); the histogram holds their
  latencies in whole µs, exactly ([[µs, count], ...], ascending).
- `requests_total`, `status_counts_total`, `body_bytes_total`: every answer of the whole run
  (warm-up included). `aborted_at_end`: requests in flight when the window ended, abandoned (their
  streams reset; at most one per stream), as wrk drops its own at its deadline.
- `load_s`: from the start (before the first connection) to the last answer; `run_s`: to the end of
  its work, connections closed.
- `alpn`: the application protocol its TLS handshake agreed (null when no connection was made);
  `tls_version`: TLSv1.3, the only version QUIC runs.
- `errors`: `connect` (a connection not made: no handshake, refused), `stream` (a stream or
  connection error), `timeout` (a request not answered within --timeout); `connected`: connections
  made, of `connections`.
A file that is not such a report, or whose counts disagree with each other, raises RawFormatError
naming the file and the key.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import RawFormatError
from .jsonio import number_pairs, require

FORMAT = 1
ERROR_KINDS = ("connect", "stream", "timeout")


@dataclass(frozen=True, eq=False)
class H3LoadReport:
    path: str
    connections: int
    streams: int
    warmup_s: float
    duration_s: float
    load_s: float
    run_s: float
    connected: int
    alpn: str | None
    tls_version: str | None
    requests_total: int
    requests_window: int
    status_counts: dict[int, int]        # the window's
    status_counts_total: dict[int, int]  # the whole run's
    errors: dict[str, int]               # ERROR_KINDS
    aborted_at_end: int
    body_bytes_window: int
    body_bytes_total: int
    hist_values_us: np.ndarray
    hist_counts: np.ndarray

    @property
    def non_2xx_total(self) -> int:
        return sum(n for code, n in self.status_counts_total.items() if not 200 <= code < 300)


def _count(doc: dict[str, Any], key: str, p: str) -> int:
    n = require(doc, key, p, int)
    if n < 0:
        raise RawFormatError(p, f"unexpected value {n!r}", key=key)
    return n


def _seconds(doc: dict[str, Any], key: str, p: str) -> float:
    v = float(require(doc, key, p, (int, float)))
    if not v >= 0:
        raise RawFormatError(p, f"unexpected value {v!r}", key=key)
    return v


def _statuses(doc: dict[str, Any], key: str, p: str) -> dict[int, int]:
    out: dict[int, int] = {}
    for code, n in require(doc, key, p, dict).items():
        if not code.isdigit() or not 100 <= int(code) <= 599:
            raise RawFormatError(p, f"unexpected status {code!r}", key=key)
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise RawFormatError(p, f"unexpected count {n!r} for status {code}", key=key)
        out[int(code)] = n
    return out


def _text_or_none(doc: dict[str, Any], key: str, p: str) -> str | None:
    v = require(doc, key, p)
    if v is not None and not isinstance(v, str):
        raise RawFormatError(p, f"unexpected value {v!r}", key=key)
    return v


def h3load_report(doc: dict[str, Any], where: str) -> H3LoadReport:
    """h3load's report (the parsed object) as an H3LoadReport; RawFormatError naming `where` and
    the key."""
    p = where
    if require(doc, "tool", p) != "h3load" or require(doc, "format", p) != FORMAT:
        raise RawFormatError(p, f"not an h3load report of format {FORMAT}", key="tool")
    errors_doc = require(doc, "errors", p, dict)
    errors = {k: _count(errors_doc, k, p) for k in ERROR_KINDS}
    pairs = number_pairs(require(doc, "latency_hist", p, list), integers=True)
    if pairs is None:
        raise RawFormatError(p, "entries must be [µs, count] pairs of whole numbers ≥ 0", key="latency_hist")
    values, counts = pairs
    rep = H3LoadReport(
        path=p, connections=_count(doc, "connections", p), streams=_count(doc, "streams", p),
        warmup_s=_seconds(doc, "warmup_s", p), duration_s=_seconds(doc, "duration_s", p),
        load_s=_seconds(doc, "load_s", p), run_s=_seconds(doc, "run_s", p),
        connected=_count(doc, "connected", p),
        alpn=_text_or_none(doc, "alpn", p), tls_version=_text_or_none(doc, "tls_version", p),
        requests_total=_count(doc, "requests_total", p), requests_window=_count(doc, "requests_window", p),
        status_counts=_statuses(doc, "status_counts", p),
        status_counts_total=_statuses(doc, "status_counts_total", p), errors=errors,
        aborted_at_end=_count(doc, "aborted_at_end", p),
        body_bytes_window=_count(doc, "body_bytes_window", p), body_bytes_total=_count(doc, "body_bytes_total", p),
        hist_values_us=values, hist_counts=counts,
    )
    # the report's counts must agree with each other (a cut or edited file does not)
    checks = (
        ("status_counts", sum(rep.status_counts.values()), rep.requests_window, "requests_window"),
        ("status_counts_total", sum(rep.status_counts_total.values()), rep.requests_total, "requests_total"),
        ("latency_hist", int(counts.sum()), rep.requests_window, "requests_window"),
    )
    for key, got, want, of in checks:
        if got != want:
            raise RawFormatError(p, f"counts sum to {got}, {of} is {want}", key=key)
    if rep.requests_window > rep.requests_total:
        raise RawFormatError(p, f"{rep.requests_window} in the window but {rep.requests_total} in the whole run",
                             key="requests_window")
    if rep.aborted_at_end > rep.connections * rep.streams:
        raise RawFormatError(p, f"{rep.aborted_at_end} requests abandoned at the end, more than the "
                             f"{rep.connections * rep.streams} streams could hold", key="aborted_at_end")
    if rep.connected > rep.connections:
        raise RawFormatError(p, f"{rep.connected} connections made of {rep.connections}", key="connected")
    return rep
