"""valgrind cachegrind's output file (`--cachegrind-out-file`), the counts of one server process
under scripts/cost.sh, read into its totals; and the point record beside it.

The file (valgrind 3.x):

    desc: I1 cache: ...              (free text, any number)
    cmd: /path/to/server 28080 ...
    events: Ir [more events]
    fl=file                          the body: per file and function, a source line and one
    fn=function                      count per event
    12 345
    ...
    summary: 9848393 [one per event]

Only `events:` and `summary:` are needed; the body's counts must add up to the summary (a file cut
short, or from another tool, is refused). Every problem names the file and the line
(RawFormatError). `read_cachegrind` also reads the xz-compressed files scripts/cost.sh keeps
(`*.xz`).

A point (scripts/cost.sh cost_point) is raw/<run_id>/cost/<server>.<protocol>/n<N>/r<rep>.json, with
beside it the counts (r<rep>.cachegrind.out.xz) and h2load's report (r<rep>.h2load.txt):
`read_cost_point` reads all three into a CostPoint, whose `problems()` say why it does not count
(a request that failed, a non-2xx answer, fewer requests than asked).
"""
from __future__ import annotations

import lzma
from dataclasses import dataclass
from pathlib import Path

from .errors import RawConsistencyError, RawFormatError
from .h2load import H2loadText, read_h2load_text
from .jsonio import decode_utf8, read_json_object, require


@dataclass(frozen=True)
class CachegrindTotals:
    path: str
    cmd: str                    # the `cmd:` line: the program and its arguments
    events: tuple[str, ...]     # e.g. ("Ir",)
    totals: dict[str, int]      # the summary, per event

    @property
    def ir(self) -> int:
        """Instructions executed (the event Ir)."""
        if "Ir" not in self.totals:
            raise RawFormatError(self.path, f"no Ir event (events: {' '.join(self.events)})")
        return self.totals["Ir"]


def _counts(words: list[str], n: int, path: str, line: int, what: str) -> list[int]:
    if len(words) > n or not all(w.isdigit() for w in words):
        raise RawFormatError(path, f"{what}: expected up to {n} whole counts, got {' '.join(words)!r}", line=line)
    return [int(w) for w in words] + [0] * (n - len(words))   # trailing zero counts may be left out


def parse_cachegrind(text: str, path: str | Path = "<cachegrind.out>") -> CachegrindTotals:
    """The totals of a cachegrind output file; RawFormatError (file, line) when it has no events
    line, no summary, a line that is none of the known kinds, or a summary its body does not add
    up to (RawConsistencyError)."""
    path = str(path)
    cmd = ""
    events: tuple[str, ...] | None = None
    sums: list[int] = []
    summary: list[int] | None = None
    for i, raw in enumerate(text.splitlines(), start=1):
        ln = raw.strip()
        if not ln or ln.startswith("#"):
            continue
        if summary is not None:
            raise RawFormatError(path, f"a line after the summary: {ln[:60]!r}", line=i)
        key, sep, rest = ln.partition(":")
        if sep and key in ("desc", "cmd", "events", "summary", "version", "creator", "pid", "positions"):
            if key == "cmd":
                cmd = rest.strip()
            elif key == "events":
                if events is not None:
                    raise RawFormatError(path, "a second events line", line=i)
                events = tuple(rest.split())
                if not events:
                    raise RawFormatError(path, "an events line naming no event", line=i)
                sums = [0] * len(events)
            elif key == "summary":
                if events is None:
                    raise RawFormatError(path, "summary before the events line", line=i)
                summary = _counts(rest.split(), len(events), path, i, "summary")
            continue
        if "=" in ln.split()[0]:          # fl=, fn=, fi=, fe= ...
            continue
        words = ln.split()
        if events is None:
            raise RawFormatError(path, f"counts before the events line: {ln[:60]!r}", line=i)
        if not words[0].isdigit():
            raise RawFormatError(path, f"not a cachegrind line: {ln[:60]!r}", line=i)
        for k, c in enumerate(_counts(words[1:], len(events), path, i, "a count line")):
            sums[k] += c
    n_lines = len(text.splitlines())
    if events is None:
        raise RawFormatError(path, "no 'events:' line: not a cachegrind output file", line=n_lines or None)
    if summary is None:
        raise RawFormatError(path, "no 'summary:' line: the file was cut short (did the server exit "
                                   "before valgrind wrote it?)", line=n_lines or None)
    if sums != summary:
        raise RawConsistencyError(path, f"the counts add up to {sums}, the summary says {summary}",
                                  line=n_lines)
    return CachegrindTotals(path=path, cmd=cmd, events=events, totals=dict(zip(events, summary)))


def read_cachegrind(path: str | Path) -> CachegrindTotals:
    """parse_cachegrind of a file, xz-compressed when its name ends in .xz."""
    p = Path(path)
    data = p.read_bytes()
    if p.suffix == ".xz":
        try:
            data = lzma.decompress(data)
        except lzma.LZMAError as exc:
            raise RawFormatError(p, f"not an xz file ({exc})") from exc
    return parse_cachegrind(decode_utf8(data, p), p)


# ---------------------------------------------------------------- the point record

@dataclass(frozen=True)
class CostPoint:
    path: str
    server: str
    protocol: str
    mode: str
    requests: int               # N asked of h2load
    rep: int
    client_command: str
    server_command: str
    instrument: str
    start_utc: str
    counts: CachegrindTotals
    load: H2loadText

    def problems(self) -> list[str]:
        """Why the point does not count (empty when every request succeeded with a 2xx)."""
        t, out = self.load, []
        if t.requests_total != self.requests:
            out.append(f"h2load was asked for {t.requests_total} requests, the record says {self.requests}")
        if t.succeeded != self.requests:
            out.append(f"{t.succeeded} of {self.requests} requests succeeded")
        if t.failed or t.errored or t.timeout:
            out.append(f"{t.failed} failed, {t.errored} errored, {t.timeout} timed out")
        if t.status_2xx != self.requests:
            out.append(f"{t.status_2xx} 2xx answers of {self.requests} "
                       f"({t.status_3xx} 3xx, {t.status_4xx} 4xx, {t.status_5xx} 5xx)")
        return out


def point_files(record: Path) -> tuple[Path, Path]:
    """The counts and h2load report beside a point record r<rep>.json (or .r<rep>.json)."""
    stem = record.name[: -len(".json")]
    return record.with_name(f"{stem}.cachegrind.out.xz"), record.with_name(f"{stem}.h2load.txt")


def read_cost_point(record: str | Path) -> CostPoint:
    """A point: its record, its counts and h2load's report; RawFormatError naming the file."""
    record = Path(record)
    doc = read_json_object(record)
    counts_path, load_path = point_files(record)
    for p in (counts_path, load_path):
        if not p.is_file():
            raise RawFormatError(p, f"missing: the point {record} has no {p.name}")
    return CostPoint(
        path=str(record), server=require(doc, "server", record, str), protocol=require(doc, "protocol", record, str),
        mode=require(doc, "mode", record, str), requests=require(doc, "requests", record, int),
        rep=require(doc, "rep", record, int), client_command=require(doc, "client_command", record, str),
        server_command=require(doc, "server_command", record, str),
        instrument=require(doc, "instrument", record, str), start_utc=require(doc, "start_utc", record, str),
        counts=read_cachegrind(counts_path), load=read_h2load_text(load_path))
