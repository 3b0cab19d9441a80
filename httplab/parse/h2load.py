"""Parser for h2load's text report (stdout), both layouts:

* nghttp2 ≤ 1.68 (1.52 is installed here): the timing table has columns `min max mean sd +/- sd`
  and rows `time for request`, `time for connect`, `time to 1st byte`, `req/s`;
* nghttp2 ≥ 1.69 (per its h2load manual): columns `min max mean sd median p95 p99 +/- sd` and rows
  `request`, `connect`, `TTFB`, `req/s`.

Both parse into one `H2loadText`; `median/p95/p99` are None for the old layout.

Which req/s? With `--warm-up-time`, `finished in` includes the warm-up (3.00 s for 1 s + 2 s) while
the req/s and byte rate on that line are computed over the main duration only (41,930 done / 2 s =
20,965.00 in tests/fixtures/h2load/clean_ping). So requests / finished-time would under-report by
warm-up / (warm-up + duration). We take `done` as the request count and the *measured duration* as:
the main duration from the `spawning thread #0: ... Timing-based test with Xs of warm-up time and
Ys of main duration` line when present (timing-based runs), else the `finished in` time (count-based
runs, no warm-up). `check_consistency` verifies that done / measured duration matches the req/s
printed on the `finished in` line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .errors import RawConsistencyError, RawFormatError
from .jsonio import read_utf8

# ---------------------------------------------------------------- units
_DUR_UNITS = {"us": 1.0, "ms": 1e3, "s": 1e6, "m": 60e6, "h": 3600e6}
_DUR_RE = re.compile(r"(\d+(?:\.\d+)?)(us|ms|s|m|h)")
_SIZE_UNITS = {"B": 1.0, "KB": 1024.0, "MB": 1024.0**2, "GB": 1024.0**3, "TB": 1024.0**4}
_SIZE_RE = re.compile(r"(\d+(?:\.\d+)?)(B|KB|MB|GB|TB)")


def parse_duration_us(token: str) -> float | None:
    """'301us' -> 301, '8.14ms' -> 8140, '1.08s' -> 1.08e6; None if not a duration."""
    m = _DUR_RE.fullmatch(token)
    return float(m.group(1)) * _DUR_UNITS[m.group(2)] if m else None


def parse_size_bytes(token: str) -> float | None:
    """'641.27KB' -> 656660.48 (h2load's units are binary: 1 KB = 1024 B); None if not a size."""
    m = _SIZE_RE.fullmatch(token)
    return float(m.group(1)) * _SIZE_UNITS[m.group(2)] if m else None


# ---------------------------------------------------------------- result
@dataclass(frozen=True)
class StatRow:
    """One row of h2load's timing table. Time rows are in µs; the req/s row in requests/s.
    `within_sd_pct` is the `+/- sd` column. median/p95/p99 only from nghttp2 ≥ 1.69."""
    min: float
    max: float
    mean: float
    sd: float
    within_sd_pct: float
    median: float | None = None
    p95: float | None = None
    p99: float | None = None


@dataclass(frozen=True)
class H2loadText:
    path: str
    layout: str  # "1.52" (≤ 1.68 table) or "1.69" (table with median/p95/p99)
    protocol: str | None  # "Application protocol:" line; None when no connection was made
    clients: int | None
    warmup_s: float | None
    main_duration_s: float | None  # from the spawning line of a timing-based run
    finished_s: float  # "finished in" (includes the warm-up)
    req_per_s: float  # as printed on the finished line (over the main duration)
    bytes_per_s: float  # as printed (rounded, binary units)
    requests_total: int
    started: int
    done: int
    succeeded: int
    failed: int
    errored: int
    timeout: int
    status_2xx: int
    status_3xx: int
    status_4xx: int
    status_5xx: int
    traffic_bytes: int  # "traffic: ... (N) total": bytes received on the wire in the main phase
    header_bytes: int
    data_bytes: int
    header_space_savings_pct: float
    request: StatRow
    connect: StatRow
    ttfb: StatRow
    req_s: StatRow

    @property
    def measured_duration_s(self) -> float:
        """The time req/s is computed over: main duration (timing-based) else finished time."""
        return self.main_duration_s if self.main_duration_s is not None else self.finished_s

    @property
    def non_2xx(self) -> int:
        return self.status_3xx + self.status_4xx + self.status_5xx

    @property
    def has_percentiles(self) -> bool:
        return self.request.median is not None


# ---------------------------------------------------------------- line patterns
_NUM = r"(\d+(?:\.\d+)?)"
_FINISHED_RE = re.compile(rf"finished in (\S+), {_NUM} req/s, (\S+)/s")
_REQUESTS_RE = re.compile(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                          r"(\d+) failed, (\d+) errored, (\d+) timeout")
_STATUS_RE = re.compile(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx")
_TRAFFIC_RE = re.compile(r"traffic: \S+ \((\d+)\) total, \S+ \((\d+)\) headers "
                         rf"\(space savings {_NUM}%\), \S+ \((\d+)\) data")
_SPAWN_RE = re.compile(r"spawning thread #0: (\d+) total client\(s\)\.(.*)")
_TIMING_RE = re.compile(r"Timing-based test with (\S+) of warm-up time and (\S+) of main duration")
_PROTO_RE = re.compile(r"Application protocol: (\S+)")

# table row label -> field; both layouts
_ROW_LABELS = {
    "time for request": "request", "request": "request",
    "time for connect": "connect", "connect": "connect",
    "time to 1st byte": "ttfb", "ttfb": "ttfb",
    "req/s": "req_s",
}
_ROW_ORDER = ("request", "connect", "ttfb", "req_s")
_OLD_HEADER = ("min", "max", "mean", "sd", "+/-sd")
_NEW_HEADER = ("min", "max", "mean", "sd", "median", "p95", "p99", "+/-sd")


def _stat_value(token: str, is_time: bool, path: str, line: int, label: str) -> float:
    if is_time:
        v = parse_duration_us(token)
    else:
        try:
            v = float(token)
        except ValueError:
            v = None
    if v is None:
        raise RawFormatError(path, f"{label}: cannot read {token!r} as a "
                                   f"{'duration' if is_time else 'number'}", line=line)
    return v


def _parse_row(text: str, header: tuple[str, ...], expected: str, path: str, line: int) -> StatRow:
    label, sep, rest = text.partition(":")
    key = _ROW_LABELS.get(label.strip().lower()) if sep else None
    if key != expected:
        want = {"request": "time for request / request", "connect": "time for connect / connect",
                "ttfb": "time to 1st byte / TTFB", "req_s": "req/s"}[expected]
        raise RawFormatError(path, f"expected the '{want}' row of the timing table, got {text.strip()!r}",
                             line=line)
    tokens = rest.split()
    if len(tokens) != len(header):
        raise RawFormatError(path, f"{label.strip()}: {len(tokens)} values for {len(header)} columns",
                             line=line)
    is_time = key != "req_s"
    vals: dict[str, float] = {}
    for col, tok in zip(header, tokens):
        if col == "+/-sd":
            if not tok.endswith("%"):
                raise RawFormatError(path, f"{label.strip()}: '+/- sd' value {tok!r} is not a percentage",
                                     line=line)
            vals[col] = _stat_value(tok[:-1], False, path, line, label.strip())
        else:
            vals[col] = _stat_value(tok, is_time, path, line, label.strip())
    return StatRow(vals["min"], vals["max"], vals["mean"], vals["sd"], vals["+/-sd"],
                   vals.get("median"), vals.get("p95"), vals.get("p99"))


def _after(lines: list[str], i: int, pattern: re.Pattern, what: str, path: str) -> re.Match:
    """The line right after index i must match pattern (1-based line numbers in errors)."""
    if i + 1 >= len(lines):
        raise RawFormatError(path, f"file ends before the {what} line (truncated?)", line=len(lines))
    m = pattern.search(lines[i + 1])
    if not m:
        raise RawFormatError(path, f"expected the {what} line, got {lines[i + 1].strip()!r}", line=i + 2)
    return m


def has_summary(text: str) -> bool:
    """True when the text contains h2load's final report ("finished in ..."); False when h2load
    died or was killed before printing it."""
    return any(_FINISHED_RE.match(ln.strip()) for ln in text.splitlines())


def parse_h2load_text(text: str, path: str | Path = "<h2load stdout>") -> H2loadText:
    """Parse h2load's stdout. RawFormatError (file, line) when the report is missing, truncated or
    has an unexpected line where a known one belongs."""
    path = str(path)
    lines = text.splitlines()
    protocol = clients = warmup = main = None
    fin_idx = None
    for i, raw in enumerate(lines):
        ln = raw.strip()
        if (m := _SPAWN_RE.match(ln)) and clients is None:
            clients = int(m.group(1))
            if (t := _TIMING_RE.search(m.group(2))):
                w, d = parse_duration_us(t.group(1)), parse_duration_us(t.group(2))
                if w is None or d is None:
                    raise RawFormatError(path, f"cannot read warm-up/main duration in {ln!r}", line=i + 1)
                warmup, main = w / 1e6, d / 1e6
        elif (m := _PROTO_RE.match(ln)) and protocol is None:
            protocol = m.group(1)
        elif ln.startswith("finished in"):
            fin_idx = i
            break
    if fin_idx is None:
        raise RawFormatError(path, "no 'finished in' line: h2load did not print its report",
                             line=len(lines) or None)
    fm = _FINISHED_RE.match(lines[fin_idx].strip())
    if not fm:
        raise RawFormatError(path, f"cannot read the finished line {lines[fin_idx].strip()!r}", line=fin_idx + 1)
    finished_us = parse_duration_us(fm.group(1))
    rate = parse_size_bytes(fm.group(3))
    if finished_us is None or rate is None:
        raise RawFormatError(path, f"cannot read the finished line {lines[fin_idx].strip()!r}", line=fin_idx + 1)
    i = fin_idx
    rq = _after(lines, i, _REQUESTS_RE, "'requests:'", path)
    i += 1
    sc = _after(lines, i, _STATUS_RE, "'status codes:'", path)
    i += 1
    tr = _after(lines, i, _TRAFFIC_RE, "'traffic:'", path)
    i += 1
    if i + 1 >= len(lines):
        raise RawFormatError(path, "file ends before the timing table (truncated?)", line=len(lines))
    head = tuple(lines[i + 1].replace("+/- sd", "+/-sd").split())
    if head == _OLD_HEADER:
        layout = "1.52"
    elif head == _NEW_HEADER:
        layout = "1.69"
    else:
        raise RawFormatError(path, f"unknown timing-table header {lines[i + 1].strip()!r}", line=i + 2)
    i += 1
    rows: dict[str, StatRow] = {}
    for key in _ROW_ORDER:
        if i + 1 >= len(lines):
            raise RawFormatError(path, f"file ends before the {key!r} row of the timing table (truncated?)",
                                 line=len(lines))
        rows[key] = _parse_row(lines[i + 1], head, key, path, i + 2)
        i += 1
    return H2loadText(
        path=path, layout=layout, protocol=protocol, clients=clients, warmup_s=warmup,
        main_duration_s=main, finished_s=finished_us / 1e6, req_per_s=float(fm.group(2)),
        bytes_per_s=rate,
        requests_total=int(rq.group(1)), started=int(rq.group(2)), done=int(rq.group(3)),
        succeeded=int(rq.group(4)), failed=int(rq.group(5)), errored=int(rq.group(6)),
        timeout=int(rq.group(7)),
        status_2xx=int(sc.group(1)), status_3xx=int(sc.group(2)), status_4xx=int(sc.group(3)),
        status_5xx=int(sc.group(4)),
        traffic_bytes=int(tr.group(1)), header_bytes=int(tr.group(2)),
        header_space_savings_pct=float(tr.group(3)), data_bytes=int(tr.group(4)),
        request=rows["request"], connect=rows["connect"], ttfb=rows["ttfb"], req_s=rows["req_s"],
    )


def read_h2load_text(path: str | Path) -> H2loadText:
    p = Path(path)
    text = read_utf8(p)
    return parse_h2load_text(text, p)


def check_consistency(t: H2loadText, tolerance: float = 0.01) -> None:
    """done / measured duration must match the printed req/s (within `tolerance`, relative, or 1
    req/s); RawConsistencyError naming the file otherwise."""
    dur = t.measured_duration_s
    if not (dur > 0) or t.done == 0:
        return
    mine = t.done / dur
    if abs(mine - t.req_per_s) > max(1.0, tolerance * t.req_per_s):
        raise RawConsistencyError(
            t.path, f"done / measured duration = {t.done} / {dur:g} s = {mine:.2f} req/s, but the "
                    f"finished line says {t.req_per_s:.2f} req/s")


def is_h2(protocol: str | None) -> bool:
    return protocol is not None and protocol.lower() in ("h2c", "h2")

