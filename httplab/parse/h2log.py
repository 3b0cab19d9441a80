"""Compact an h2load `--log-file` into a small JSON histogram, and read that JSON back.

The log (nghttp2 1.52; one line per request completed in the measured phase, tab-separated):

    <start time, µs since the epoch>\\t<HTTP status, or -1 when the stream failed>\\t<duration µs>

Command line (called by the h2c shell script right after each latency run, before it deletes the log):

    python -m httplab h2log LOGFILE OUT.json

Exit status 0 on success; 2 with a message naming the file and line on stderr when the log is
malformed (OUT.json is then not written); OUT.json is written atomically (temporary file + rename).

Output JSON (keys sorted by value where they are lists/maps):

    {"tool": "h2load-log", "format": 1, "source": "<log file name>", "requests": N,
     "status_counts": {"-1": K, "0": Z, "200": N, "404": M},
     "latency_hist": [[duration_us, count], ...],
     "first_start_us": ..., "last_end_us": ...}

`requests` is the number of log lines; `latency_hist` holds the duration of every line (every
status, so its counts sum to `requests`); `last_end_us` = max(start + duration).
Status 0 is what h2load 1.52 logs for a request in flight at the warm-up → main switch whose
`:status` arrived during the warm-up (see tests/fixtures/h2load/README.md): not an error.

Speed: the log is read in 8 MiB chunks; each chunk's form is checked by one regular expression and
its numbers converted in bulk (about 1 s per million lines, 0.2 s for the 100,000 of a typical
latency run, where importing pandas alone took longer), and a chunk that fails is re-read line
by line to name the first bad line. The compaction uses only Python's standard library: it runs on the
benchmark host between measured runs, where the lab's analysis stack (numpy, pandas) need not exist.
"""
from __future__ import annotations

import json
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import RawFormatError
from .jsonio import number_pairs, read_json_object, require

if TYPE_CHECKING:
    import numpy as np

TOOL = "h2load-log"
FORMAT = 1
CHUNK_BYTES = 8 << 20
MIN_STATUS, MAX_STATUS = -1, 999

_LINE_RE = re.compile(rb"(-?\d+)\t(-?\d+)\t(-?\d+)")
# a chunk of whole lines as the fast path takes it: three tab-separated integers a line (a sign
# allowed, as a CSV reader takes one), a CR before the newline allowed
_CHUNK_RE = re.compile(rb"(?:[-+]?\d+\t[-+]?\d+\t[-+]?\d+\r?\n)*")


@dataclass(frozen=True, eq=False)
class H2Log:
    """A compacted h2load log: counts per status, exact duration histogram (µs), time span."""
    requests: int
    status_counts: dict[int, int]
    hist_values_us: np.ndarray  # sorted, int64
    hist_counts: np.ndarray  # int64, same length
    first_start_us: int | None
    last_end_us: int | None
    source: str = ""

    @property
    def failed_streams(self) -> int:
        """Lines with status -1 (stream failed: reset, connection error)."""
        return int(self.status_counts.get(-1, 0))

    @property
    def non_2xx(self) -> dict[int, int]:
        """Statuses that are real responses but not 2xx (1xx/3xx/4xx/5xx); excludes -1 and 0."""
        return {s: n for s, n in self.status_counts.items() if s > 0 and not 200 <= s < 300 and n > 0}

    @property
    def span_s(self) -> float:
        """Seconds from the first request start to the last request end (NaN when empty)."""
        if self.first_start_us is None or self.last_end_us is None:
            return math.nan
        return (self.last_end_us - self.first_start_us) / 1e6

    def to_doc(self) -> dict[str, Any]:
        return {
            "tool": TOOL, "format": FORMAT, "source": self.source, "requests": int(self.requests),
            "status_counts": {str(s): int(self.status_counts[s]) for s in sorted(self.status_counts)},
            "latency_hist": [[int(v), int(c)] for v, c in zip(self.hist_values_us, self.hist_counts)],
            "first_start_us": self.first_start_us, "last_end_us": self.last_end_us,
        }


# ---------------------------------------------------------------- the slow, exact line check
def _check_line(raw: bytes, path: Path, lineno: int) -> tuple[int, int, int]:
    """(start, status, duration) of one line, or RawFormatError naming the file and line."""
    line = raw.rstrip(b"\r\n")
    m = _LINE_RE.fullmatch(line)
    if not m:
        shown = line[:80].decode("utf-8", "replace")
        raise RawFormatError(path, "expected 'start_us<TAB>status<TAB>duration_us' (three integers), "
                                   f"got {shown!r}", line=lineno)
    start, status, dur = (int(g) for g in m.groups())
    _check_values(start, status, dur, path, lineno)
    return start, status, dur


def _check_values(start: int, status: int, dur: int, path: Path, lineno: int) -> None:
    if start <= 0:
        raise RawFormatError(path, f"start time {start} is not a positive µs timestamp", line=lineno)
    if not MIN_STATUS <= status <= MAX_STATUS:
        raise RawFormatError(path, f"status {status} outside -1..999", line=lineno)
    if dur < 0:
        raise RawFormatError(path, f"negative duration {dur}", line=lineno)


def _locate_error(chunk: bytes, path: Path, first_line: int) -> RawFormatError:
    """Walk a chunk line by line and return the error for its first bad line."""
    for i, raw in enumerate(chunk.split(b"\n")[:-1] if chunk.endswith(b"\n") else chunk.split(b"\n")):
        try:
            _check_line(raw, path, first_line + i)
        except RawFormatError as exc:
            return exc
    return RawFormatError(path, "could not parse this part of the log", line=first_line)


# ---------------------------------------------------------------- the fast path
class _Acc:
    """Running totals across chunks."""

    def __init__(self) -> None:
        self.n = 0
        self.status: Counter[int] = Counter()
        self.hist: Counter[int] = Counter()
        self.first: int | None = None
        self.last: int | None = None

    def add(self, chunk: bytes, path: Path, first_line: int) -> None:
        """One chunk of whole lines (ending with '\\n'), checked; RawFormatError naming the first
        bad line."""
        if not _CHUNK_RE.fullmatch(chunk):
            raise _locate_error(chunk, path, first_line)
        nums = list(map(int, chunk.split()))
        starts, statuses, durs = nums[0::3], nums[1::3], nums[2::3]
        if not starts:
            return
        if min(starts) <= 0 or min(statuses) < MIN_STATUS or max(statuses) > MAX_STATUS or min(durs) < 0:
            raise _locate_error(chunk, path, first_line)
        self.n += len(starts)
        self.status.update(statuses)
        self.hist.update(durs)
        lo, hi = min(starts), max(map(int.__add__, starts, durs))
        self.first = lo if self.first is None else min(self.first, lo)
        self.last = hi if self.last is None else max(self.last, hi)

    def doc(self, source: str) -> dict[str, Any]:
        return {
            "tool": TOOL, "format": FORMAT, "source": source, "requests": self.n,
            "status_counts": {str(s): self.status[s] for s in sorted(self.status)},
            "latency_hist": [[v, self.hist[v]] for v in sorted(self.hist)],
            "first_start_us": self.first, "last_end_us": self.last,
        }


def compact_doc(path: str | Path, chunk_bytes: int = CHUNK_BYTES) -> dict[str, Any]:
    """Stream an h2load --log-file and return its JSON document (see the module docstring), with
    Python's standard library alone.

    Raises RawFormatError naming the file and the 1-based line of the first malformed line (a
    line that is not three tab-separated integers, a non-positive start, a status outside -1..999,
    a negative duration; an empty line counts as malformed). An empty file gives requests = 0.
    """
    p = Path(path)
    acc = _Acc()
    line_no = 1  # number of the first line of the next chunk
    carry = b""
    with open(p, "rb") as fh:
        while True:
            block = fh.read(chunk_bytes)
            if not block:
                break
            data = carry + block
            cut = data.rfind(b"\n")
            if cut < 0:
                carry = data
                continue
            chunk, carry = data[:cut + 1], data[cut + 1:]
            acc.add(chunk, p, line_no)
            line_no += chunk.count(b"\n")
    if carry:  # last line without a newline
        acc.add(carry + b"\n", p, line_no)
    return acc.doc(p.name)


def compact_log(path: str | Path, chunk_bytes: int = CHUNK_BYTES) -> H2Log:
    """compact_doc's document as an H2Log (the analysis side's form, with numpy arrays)."""
    return h2log_of(compact_doc(path, chunk_bytes), Path(path))


def _write_doc(doc: dict[str, Any], out: str | Path) -> Path:
    """Write the JSON document atomically (tmp file in the same directory, then rename)."""
    out = Path(out)
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")
    os.replace(tmp, out)
    return out


def write_compact(log: H2Log, out: str | Path) -> Path:
    """Write the log's JSON document atomically (tmp file in the same directory, then rename)."""
    return _write_doc(log.to_doc(), out)


# ---------------------------------------------------------------- reading the JSON back
def _int(value: Any, path: str | Path, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RawFormatError(path, f"expected an integer, got {value!r}", key=key)
    return value


def read_compact(path: str | Path) -> H2Log:
    """Read an r<rep>.lat.h2log.json written by `compact_log`/the CLI (h2log_of its contents)."""
    return h2log_of(read_json_object(path), Path(path))


def h2log_of(doc: dict[str, Any], where: str | Path) -> H2Log:
    """The JSON object `compact_log`/the CLI wrote as an H2Log; RawFormatError naming `where` and
    the key when it is not one."""
    import numpy as np

    p = where
    tool = require(doc, "tool", p, str)
    if tool != TOOL:
        raise RawFormatError(p, f"tool is {tool!r}, expected {TOOL!r}", key="tool")
    n = _int(require(doc, "requests", p), p, "requests")
    raw_status = require(doc, "status_counts", p, dict)
    status: dict[int, int] = {}
    for k, v in raw_status.items():
        try:
            code = int(k)
        except ValueError:
            raise RawFormatError(p, f"status key {k!r} is not an integer", key="status_counts") from None
        status[code] = _int(v, p, f"status_counts.{k}")
    hist = require(doc, "latency_hist", p, list)
    vals, cnts = [], []
    fast = number_pairs(hist, integers=True)
    if fast is not None:
        vals, cnts = fast[0].astype(np.int64), fast[1]
    for i, pair in enumerate(hist if fast is None else ()):  # the slow path names the bad entry
        if not (isinstance(pair, list) and len(pair) == 2):
            raise RawFormatError(p, f"entry {i} is not a [duration_us, count] pair", key="latency_hist")
        vals.append(_int(pair[0], p, f"latency_hist[{i}][0]"))
        c = _int(pair[1], p, f"latency_hist[{i}][1]")
        if c < 0:
            raise RawFormatError(p, f"negative count in entry {i}", key="latency_hist")
        cnts.append(c)
    total = int(np.sum(cnts))
    if total != n:
        raise RawFormatError(p, f"histogram counts sum to {total}, requests is {n}", key="latency_hist")
    if sum(status.values()) != n:
        raise RawFormatError(p, f"status counts sum to {sum(status.values())}, requests is {n}",
                             key="status_counts")
    first, last = doc.get("first_start_us"), doc.get("last_end_us")
    first = None if first is None else _int(first, p, "first_start_us")
    last = None if last is None else _int(last, p, "last_end_us")
    return H2Log(n, dict(sorted(status.items())), np.asarray(vals, dtype=np.int64),
                 np.asarray(cnts, dtype=np.int64), first, last, str(doc.get("source") or ""))


def histogram_from(values_us: Sequence[int] | np.ndarray, counts: Sequence[int] | np.ndarray,
                   status_counts: Mapping[int, int], first_start_us: int | None = None,
                   last_end_us: int | None = None, source: str = "") -> H2Log:
    """Build an H2Log from parts (used to write fake runs in tests)."""
    import numpy as np

    v = np.asarray(values_us, dtype=np.int64)
    c = np.asarray(counts, dtype=np.int64)
    order = np.argsort(v, kind="stable")
    return H2Log(int(c.sum()), dict(sorted((int(k), int(n)) for k, n in status_counts.items())),
                 v[order], c[order], first_start_us, last_end_us, source)


# ---------------------------------------------------------------- CLI
def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0] in ("-h", "--help"):
        print("usage: python -m httplab h2log LOGFILE OUT.json\n"
              "Compacts an h2load --log-file (start_us<TAB>status<TAB>duration_us per line) into a "
              "JSON histogram.", file=sys.stderr)
        return 0 if args[:1] in (["-h"], ["--help"]) else 64
    src, out = args
    try:
        doc = compact_doc(src)
    except FileNotFoundError:
        print(f"h2log: {src}: no such file", file=sys.stderr)
        return 2
    except RawFormatError as exc:
        print(f"h2log: {exc}", file=sys.stderr)
        return 2
    _write_doc(doc, out)
    return 0
