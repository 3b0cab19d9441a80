"""Parsers for wrk 4.x output: the text report on stdout and the JSON of our Lua done() hook.

Both parsers are pure (text in, dataclass out); `path` is only used in error messages.
Units: latencies in µs, byte counts in bytes, durations in seconds unless the name says otherwise.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .jsonio import number_pairs
from .errors import RawFormatError

# wrk prints times with format_time_us (us, ms, s, m, h), counts with format_metric (k, M, G, T,
# base 1000) and bytes with format_binary (B, KB, MB, GB, TB, base 1024).
_TIME_US = {"us": 1.0, "ms": 1e3, "s": 1e6, "m": 60e6, "h": 3600e6}
_METRIC = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_BINARY = {"B": 1.0, "KB": 1024.0, "MB": 1024.0**2, "GB": 1024.0**3, "TB": 1024.0**4}

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_PCT = r"(?:-?nan|[-+]?\d+(?:\.\d+)?)%"


def _scaled(token: str, units: dict[str, float], what: str) -> float:
    """A number followed by one of `units` (suffix -> factor), scaled."""
    m = re.fullmatch(rf"({_NUM})({'|'.join(sorted(units, key=len, reverse=True))})", token)
    if not m:
        raise ValueError(f"not a wrk {what}: {token!r}")
    return float(m.group(1)) * units[m.group(2)]


def parse_time_us(token: str) -> float:
    """'2.30ms' -> 2300.0 (µs)."""
    return _scaled(token, _TIME_US, "time")


def parse_metric(token: str) -> float:
    """'1.91k' -> 1910.0; '747.18' -> 747.18."""
    return _scaled(token, _METRIC, "count")


def parse_bytes(token: str) -> float:
    """'1.04MB' -> 1090519.04 (wrk's units are binary: 1 MB = 2^20 bytes)."""
    return _scaled(token, _BINARY, "byte size")


def _parse_pct(token: str) -> float:
    return math.nan if "nan" in token else float(token.rstrip("%"))


@dataclass(frozen=True)
class SocketErrors:
    connect: int = 0
    read: int = 0
    write: int = 0
    timeout: int = 0

    @property
    def total(self) -> int:
        return self.connect + self.read + self.write + self.timeout


@dataclass(frozen=True)
class ThreadStat:
    """One row of wrk's "Thread Stats" block (Latency in µs, or Req/Sec)."""
    avg: float
    stdev: float
    max: float
    within_stdev_pct: float  # NaN when wrk printed -nan%


@dataclass(frozen=True)
class WrkText:
    """wrk's text report (stdout)."""
    url: str
    test_duration: str  # as wrk printed it after "Running", e.g. "1s"
    threads: int
    connections: int
    latency: ThreadStat  # µs
    req_per_thread: ThreadStat
    requests: int
    runtime_s: float
    bytes_read: float  # approximate: wrk rounds to 2 decimals in binary units
    socket_errors: SocketErrors
    non2xx: int
    requests_per_s: float
    transfer_per_s: float  # bytes/s, binary units as printed, rounded
    latency_distribution: dict[float, float] = field(default_factory=dict)  # percent -> µs


# the header
_RE_RUNNING = re.compile(r"Running (\S+) test @ (\S+)")
_RE_THREADS = re.compile(r"(\d+) threads and (\d+) connections")
# the per-thread statistics
_RE_HEADER = re.compile(r"Thread Stats\s+Avg\s+Stdev\s+Max\s+\+/- Stdev")
_RE_LATENCY = re.compile(rf"Latency\s+(\S+)\s+(\S+)\s+(\S+)\s+({_PCT})")
_RE_REQSEC = re.compile(rf"Req/Sec\s+(\S+)\s+(\S+)\s+(\S+)\s+({_PCT})")
# --latency's distribution, the totals, the error lines wrk prints only when a counter is not
# zero, and the rates: kind -> pattern of the whole line
_RE_TAIL = {kind: re.compile(pattern) for kind, pattern in (
    ("dist_header", r"Latency Distribution"),
    ("dist_row", rf"({_NUM})%\s+(\S+)"),
    ("summary", r"(\d+) requests in (\S+), (\S+) read"),
    ("socket", r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)"),
    ("non2xx", r"Non-2xx or 3xx responses: (\d+)"),
    ("rps", rf"Requests/sec:\s+({_NUM})"),
    ("tps", r"Transfer/sec:\s+(\S+)"),
)}


def parse_wrk_text(text: str, path: str | Path = "<wrk stdout>") -> WrkText:
    """Parse wrk's stdout report. Any line that is not part of wrk's report raises RawFormatError
    naming the file and the line number."""
    found: dict[str, object] = {}
    dist: dict[float, float] = {}
    socket = SocketErrors()
    non2xx = 0
    for lineno, raw_line in enumerate(text.splitlines(), start=1):
        line = raw_line.strip()
        if not line:
            continue
        try:
            if m := _RE_RUNNING.fullmatch(line):
                found["duration"], found["url"] = m.group(1), m.group(2)
            elif m := _RE_THREADS.fullmatch(line):
                found["threads"], found["connections"] = int(m.group(1)), int(m.group(2))
            elif _RE_HEADER.fullmatch(line) or _RE_TAIL["dist_header"].fullmatch(line):
                pass
            elif m := _RE_LATENCY.fullmatch(line):
                found["latency"] = ThreadStat(parse_time_us(m.group(1)), parse_time_us(m.group(2)),
                                              parse_time_us(m.group(3)), _parse_pct(m.group(4)))
            elif m := _RE_REQSEC.fullmatch(line):
                found["reqsec"] = ThreadStat(parse_metric(m.group(1)), parse_metric(m.group(2)),
                                             parse_metric(m.group(3)), _parse_pct(m.group(4)))
            elif m := _RE_TAIL["dist_row"].fullmatch(line):
                dist[float(m.group(1))] = parse_time_us(m.group(2))
            elif m := _RE_TAIL["summary"].fullmatch(line):
                found["requests"] = int(m.group(1))
                found["runtime_s"] = parse_time_us(m.group(2)) / 1e6
                found["bytes_read"] = parse_bytes(m.group(3))
            elif m := _RE_TAIL["socket"].fullmatch(line):
                socket = SocketErrors(*(int(g) for g in m.groups()))
            elif m := _RE_TAIL["non2xx"].fullmatch(line):
                non2xx = int(m.group(1))
            elif m := _RE_TAIL["rps"].fullmatch(line):
                found["rps"] = float(m.group(1))
            elif m := _RE_TAIL["tps"].fullmatch(line):
                found["tps"] = parse_bytes(m.group(1))
            else:
                raise RawFormatError(path, f"unexpected line in wrk output: {raw_line!r}", line=lineno)
        except ValueError as exc:
            if isinstance(exc, RawFormatError):
                raise
            raise RawFormatError(path, f"{exc} in line {raw_line!r}", line=lineno) from exc
    required = {"url": "Running ... test @ URL", "threads": "N threads and M connections",
                "latency": "Latency", "reqsec": "Req/Sec", "requests": "N requests in T, B read",
                "rps": "Requests/sec:", "tps": "Transfer/sec:"}
    for key, label in required.items():
        if key not in found:
            raise RawFormatError(path, f"wrk output has no {label!r} line", key=label)
    return WrkText(
        url=str(found["url"]), test_duration=str(found["duration"]),
        threads=int(found["threads"]), connections=int(found["connections"]),  # type: ignore[arg-type]
        latency=found["latency"], req_per_thread=found["reqsec"],  # type: ignore[arg-type]
        requests=int(found["requests"]), runtime_s=float(found["runtime_s"]),  # type: ignore[arg-type]
        bytes_read=float(found["bytes_read"]), socket_errors=socket, non2xx=non2xx,  # type: ignore[arg-type]
        requests_per_s=float(found["rps"]), transfer_per_s=float(found["tps"]),  # type: ignore[arg-type]
        latency_distribution=dist,
    )


@dataclass(frozen=True)
class WrkLatencySummary:
    """wrk's own latency numbers (µs); all None when no request completed."""
    min: float | None
    max: float | None
    mean: float | None
    stdev: float | None
    p50: float | None
    p90: float | None
    p99: float | None
    p999: float | None


@dataclass(frozen=True, eq=False)
class WrkJson:
    """The JSON written by scripts/lua/report.lua's done() hook."""
    duration_us: float
    requests: int
    bytes: float
    socket_errors: SocketErrors
    status_errors: int  # wrk's errors.status: responses with status >= 400
    latency: WrkLatencySummary
    req_per_thread_mean: float
    req_per_thread_stdev: float
    req_per_thread_max: float
    hist_kind: str  # "exact" (value, count) pairs or "quantiles" (a grid, each count 1)
    hist_values_us: np.ndarray  # float64, ascending
    hist_counts: np.ndarray  # int64

    @property
    def duration_s(self) -> float:
        return self.duration_us / 1e6

    @property
    def req_per_s(self) -> float:
        return self.requests / self.duration_s if self.duration_us > 0 else math.nan


# exact: every distinct value with its count; quantiles: a dense grid of percentiles (a histogram
# too wide to walk); none: no histogram (a sliced run's, WRK_NO_HIST, whose latencies are not kept)
HIST_KINDS = ("exact", "quantiles", "none")


def _get(obj: dict, key: str, path: str | Path, prefix: str = "") -> object:
    if not isinstance(obj, dict) or key not in obj:
        raise RawFormatError(path, "missing key", key=prefix + key)
    return obj[key]


def _num(obj: dict, key: str, path: str | Path, prefix: str = "") -> float:
    value = _get(obj, key, path, prefix)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RawFormatError(path, f"expected a number, got {value!r}", key=prefix + key)
    return float(value)


def parse_wrk_json(text: str, path: str | Path = "<wrk json>") -> WrkJson:
    """Parse the done() hook's JSON. Decode errors name the line; missing or mistyped keys name
    the key (dotted, e.g. 'summary.errors.read')."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RawFormatError(path, f"invalid JSON: {exc.msg} (column {exc.colno})",
                             line=exc.lineno) from exc
    if not isinstance(doc, dict):
        raise RawFormatError(path, "top level is not a JSON object", line=1)
    tool = _get(doc, "tool", path)
    if tool != "wrk":
        raise RawFormatError(path, f"tool is {tool!r}, expected 'wrk'", key="tool")
    summary = _get(doc, "summary", path)
    errors = _get(summary, "errors", path, "summary.")
    sock = SocketErrors(*(int(_num(errors, k, path, "summary.errors."))
                          for k in ("connect", "read", "write", "timeout")))
    status = int(_num(errors, "status", path, "summary.errors."))
    lat = _get(doc, "latency", path)
    lat_vals = {k: _num(lat, k, path, "latency.")
                for k in ("min", "max", "mean", "stdev", "p50", "p90", "p99", "p999")}
    hist_kind = _get(doc, "hist_kind", path)
    if hist_kind not in HIST_KINDS:
        raise RawFormatError(path, f"unknown hist_kind {hist_kind!r}", key="hist_kind")
    hist = _get(doc, "latency_hist", path)
    if not isinstance(hist, list):
        raise RawFormatError(path, "expected a list of [value, count] pairs", key="latency_hist")
    values = np.empty(len(hist), dtype=np.float64)
    counts = np.empty(len(hist), dtype=np.int64)
    fast = number_pairs(hist)
    if fast is not None:
        values, counts = fast
    for i, pair in enumerate(hist if fast is None else ()):  # the slow path names the bad entry
        if (not isinstance(pair, list) or len(pair) != 2
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in pair)
                or pair[1] < 0):
            raise RawFormatError(path, f"bad histogram entry {pair!r}", key=f"latency_hist[{i}]")
        values[i], counts[i] = pair
    order = np.argsort(values, kind="stable")
    values, counts = values[order], counts[order]
    empty = counts.sum() == 0
    # wrk starts min at UINT64_MAX and leaves it there when nothing was recorded.
    latency = WrkLatencySummary(*(None if empty else lat_vals[k] for k in
                                  ("min", "max", "mean", "stdev", "p50", "p90", "p99", "p999")))
    rpt = _get(doc, "requests_per_thread", path)
    return WrkJson(
        duration_us=_num(summary, "duration_us", path, "summary."),
        requests=int(_num(summary, "requests", path, "summary.")),
        bytes=_num(summary, "bytes", path, "summary."),
        socket_errors=sock, status_errors=status, latency=latency,
        req_per_thread_mean=_num(rpt, "mean", path, "requests_per_thread."),
        req_per_thread_stdev=_num(rpt, "stdev", path, "requests_per_thread."),
        req_per_thread_max=_num(rpt, "max", path, "requests_per_thread."),
        hist_kind=str(hist_kind), hist_values_us=values, hist_counts=counts,
    )


def read_wrk_text(path: str | Path) -> WrkText:
    p = Path(path)
    return parse_wrk_text(p.read_text(encoding="utf-8", errors="replace"), p)


def read_wrk_json(path: str | Path) -> WrkJson:
    p = Path(path)
    return parse_wrk_json(p.read_text(encoding="utf-8", errors="replace"), p)


def check_req_per_s(text: WrkText, hook: WrkJson, path: str | Path, rel_tol: float = 0.01) -> None:
    """Raise RawConsistencyError if text Requests/sec and JSON requests/duration disagree by more
    than rel_tol (plus the 0.005 rounding of the printed number)."""
    from .errors import RawConsistencyError

    from_json = hook.req_per_s
    if math.isnan(from_json):
        return
    if abs(text.requests_per_s - from_json) > rel_tol * max(abs(from_json), abs(text.requests_per_s)) + 0.005:
        raise RawConsistencyError(
            path, f"Requests/sec {text.requests_per_s:.2f} in the text report but "
                  f"{from_json:.2f} from the JSON hook (requests/duration): more than "
                  f"{rel_tol:.0%} apart", key="Requests/sec")
