"""The idle-connection memory measurement's raw record (scripts/idle_memory.sh): one JSON object per
point, written by its client (httplab/lab/idle_client.py) as
raw/<run_id>/idle_memory/<server>.<mode>/c<N>/r<rep>.json, read here into a typed record.

A point is one server in one mode, N connections, one rep: the server's tree's memory once stable
before the N connections (after a warm-up whose connections were closed) and once stable after
them, while each held one answered request and sent nothing more. The cost of an idle connection
is (VmRSS after − VmRSS before) / N, VmRSS summed over the server's processes (a master process
and its workers, where a server forks them). Every problem names the file and the key
(RawFormatError).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import RawFormatError
from .jsonio import read_json_object, require

MODES = ("h1", "h2c")


@dataclass(frozen=True)
class MemoryReading:
    """The server tree's memory at one moment (kB, summed over its processes)."""
    vmrss_kb: int
    rss_anon_kb: int
    pss_kb: int
    n_procs: int
    settled: bool       # VmRSS was stable over the last samples when read
    settle_s: float     # how long the reading waited for that


@dataclass(frozen=True)
class IdlePoint:
    path: str
    mode: str                    # h1 or h2c
    port: int
    conns: int                   # connections opened (N)
    conns_asked: int             # N as asked for; conns is smaller where the open-file limit
                                 # could not hold it (scripts/idle_memory.sh says so)
    answered: int                # of them, those that got their whole 200 answer
    alive_after: int             # of those, still open when the memory was read again
    errors: dict[str, int]       # the others, by what went wrong
    warmup_conns: int
    open_s: float                # seconds to open and answer all of them
    held_s: float                # seconds from the first connection to the "after" reading
    rlimit_nofile: tuple[int, int]
    start_utc: str
    before: MemoryReading
    after: MemoryReading

    @property
    def kib_per_conn(self) -> float:
        """(VmRSS after − VmRSS before) / N, in KiB; NaN without connections."""
        return (self.after.vmrss_kb - self.before.vmrss_kb) / self.conns if self.conns else math.nan

    @property
    def anon_kib_per_conn(self) -> float:
        """The same for anonymous memory alone (RssAnon: heap and buffers, no file pages)."""
        return (self.after.rss_anon_kb - self.before.rss_anon_kb) / self.conns if self.conns else math.nan

    def problems(self) -> list[str]:
        """Why the point does not measure N idle connections ([] when it does)."""
        out = []
        if self.answered < self.conns:
            errs = ", ".join(f"{n:,} {why}" for why, n in sorted(self.errors.items(), key=lambda kv: -kv[1]))
            out.append(f"{self.answered:,} of {self.conns:,} connections answered" + (f" ({errs})" if errs else ""))
        if self.alive_after < self.answered:
            out.append(f"{self.answered - self.alive_after:,} connections closed by the server before the "
                       "memory was read")
        for when, m in (("before", self.before), ("after", self.after)):
            if not m.settled:
                out.append(f"memory {when} the connections never settled (read after {m.settle_s:.1f} s)")
        return out


def _int(doc: dict[str, Any], key: str, path: str | Path) -> int:
    return int(require(doc, key, path, int))


def _num(doc: dict[str, Any], key: str, path: str | Path) -> float:
    return float(require(doc, key, path, (int, float)))


def _reading(doc: dict[str, Any], key: str, path: str | Path) -> MemoryReading:
    m = require(doc, key, path, dict)
    where = f"{path} ({key})"
    procs = require(m, "procs", where, dict)
    return MemoryReading(_int(m, "vmrss_kb", where), _int(m, "rss_anon_kb", where), _int(m, "pss_kb", where),
                         len(procs), bool(require(m, "settled", where, bool)), _num(m, "settle_s", where))


def read_idle_point(path: str | Path) -> IdlePoint:
    """One raw point, checked."""
    doc = read_json_object(path)
    if doc.get("tool") != "idle_conns":
        raise RawFormatError(path, f"not an idle_conns record (tool {doc.get('tool')!r})", key="tool")
    mode = require(doc, "mode", path, str)
    if mode not in MODES:
        raise RawFormatError(path, f"unknown mode {mode!r} (modes: {', '.join(MODES)})", key="mode")
    conns = _int(doc, "conns_requested", path)
    if conns <= 0:
        raise RawFormatError(path, f"conns_requested must be > 0, got {conns}", key="conns_requested")
    errors = require(doc, "errors", path, dict)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in errors.values()):
        raise RawFormatError(path, "error counts must be integers", key="errors")
    limits = require(doc, "rlimit_nofile", path, list)
    if len(limits) != 2 or not all(isinstance(v, int) for v in limits):
        raise RawFormatError(path, f"expected [soft, hard], got {limits!r}", key="rlimit_nofile")
    return IdlePoint(
        path=str(path), mode=mode, port=_int(doc, "port", path), conns=conns,
        conns_asked=int(doc["conns_asked"]) if isinstance(doc.get("conns_asked"), int) else conns,
        answered=_int(doc, "answered", path), alive_after=_int(doc, "alive_after", path),
        errors={str(k): int(v) for k, v in errors.items()}, warmup_conns=_int(doc, "warmup_conns", path),
        open_s=_num(doc, "open_s", path), held_s=_num(doc, "held_s", path),
        rlimit_nofile=(int(limits[0]), int(limits[1])), start_utc=str(require(doc, "start_utc", path, str)),
        before=_reading(doc, "before", path), after=_reading(doc, "after", path))
