"""The pinned cores over one measured window: how busy the client and server cores were, CPU steal,
and the CPU time of anything other than the server and the load tool.

Raw inputs, written by scripts/lib.sh measure_point beside each point:
    r<rep>.cpu.json          /proc/stat counters of the pinned CPUs before and after the window
    r<rep>.client.time.txt   GNU time's line for the load tool: user_s=… sys_s=… wall_s=… maxrss_kb=… exit=…

The window ends where the load ended. New wrk runs write an end-of-load snapshot (report.lua, the
first thing its done() hook does): the "after" counters and the tool's own CPU ticks
(client_cpu_ticks) are from that moment. Older runs read them after the tool exited, so the window
also held wrk's histogram dump (up to ~1 s for servers with wide latency tails), with the server
idle and one client core busy; window_cpu removes that tail (tail_s) from both sets of cores: from
the server cores as idle time, from the client cores as one busy core, and from the tool's CPU.

Foreign CPU is what the pinned cores spent outside idle, iowait and steal minus what the processes
pinned there (the server's tree, the load tool) were charged. On a kernel without IRQ time
accounting (this one) softirq work done in a task's context is charged to that task, so it cancels
out; softirq work done by ksoftirqd or from idle counts as foreign, which makes the noisy flag err
on the side of flagging.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import RawFormatError
from .jsonio import read_utf8, require
from .layout import CLIENT_TIME, CPU_JSON, RepFiles

# /proc/stat per-CPU fields, in order (guest and guest_nice are already inside user and nice).
_USER, _NICE, _SYSTEM, _IDLE, _IOWAIT, _IRQ, _SOFTIRQ, _STEAL = range(8)

_TIME_RE = re.compile(r"user_s=(?P<user>[0-9.]+) sys_s=(?P<sys>[0-9.]+) wall_s=(?P<wall>[0-9.:]+)"
                      r"(?: maxrss_kb=(?P<maxrss>\d+))?(?: exit=(?P<exit>-?\d+))?")


@dataclass(frozen=True)
class ClientTime:
    cpu_s: float
    wall_s: float
    maxrss_kb: float


def read_client_time(path: Path) -> ClientTime | None:
    """client_time_of the file; None if absent."""
    if not path.is_file():
        return None
    return client_time_of(read_utf8(path), path)


def client_time_of(text: str, where: str | Path) -> ClientTime:
    """The load tool's CPU seconds from GNU time's output (its last matching line); RawFormatError
    naming `where` and the line when there is none. GNU time writes 'Command exited with non-zero
    status N' before the line when the tool failed."""
    path = where
    lines = text.splitlines()
    for lineno in range(len(lines), 0, -1):
        m = _TIME_RE.search(lines[lineno - 1])
        if m:
            wall = m.group("wall")
            try:
                wall_s = float(wall) if ":" not in wall else sum(
                    float(x) * 60 ** i for i, x in enumerate(reversed(wall.split(":"))))
            except ValueError as exc:
                raise RawFormatError(path, f"bad wall time {wall!r}", line=lineno) from exc
            return ClientTime(cpu_s=float(m.group("user")) + float(m.group("sys")), wall_s=wall_s,
                              maxrss_kb=float(m.group("maxrss")) if m.group("maxrss") else math.nan)
    raise RawFormatError(path, "no 'user_s=… sys_s=… wall_s=…' line (GNU time output)",
                         line=max(len(lines), 1))


@dataclass(frozen=True)
class CoreDeltas:
    """Summed /proc/stat deltas (clock ticks) over a set of CPUs."""
    n_cpus: int
    total: int      # user..steal
    busy: int       # total - idle - iowait
    charged: int    # busy - steal: what tasks (and irq/softirq) used
    worst_steal_frac: float  # the largest steal / total of one CPU of the set

    def without_tail(self, tail_ticks: float, busy_cpus: int) -> "CoreDeltas":
        """These deltas less a tail of tail_ticks per CPU during which busy_cpus of the set were
        busy (charged to the load tool) and the others idle."""
        if tail_ticks <= 0:
            return self
        busy_cut = min(busy_cpus, self.n_cpus) * tail_ticks
        total = max(0, round(self.total - self.n_cpus * tail_ticks))
        busy = max(0, round(self.busy - busy_cut))
        charged = max(0, round(self.charged - busy_cut))
        return CoreDeltas(self.n_cpus, total, min(busy, total), min(charged, total),
                          self.worst_steal_frac)


def _cpu_list(spec: str, path: str | Path, key: str) -> list[str]:
    cpus: list[str] = []
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            lo, _, hi = part.partition("-")
            if not (lo.isdigit() and hi.isdigit()) or int(lo) > int(hi):
                raise RawFormatError(path, f"bad CPU list {spec!r}", key=key)
            cpus.extend(str(c) for c in range(int(lo), int(hi) + 1))
        elif part.isdigit():
            cpus.append(part)
        else:
            raise RawFormatError(path, f"bad CPU list {spec!r}", key=key)
    return cpus


def cpu_list(spec: str, path: Path, key: str = "cpus") -> list[str]:
    """The CPU numbers of a list like "1" or "0-3,6", as strings; RawFormatError naming path and key."""
    return _cpu_list(spec, path, key)


def core_deltas(doc: dict, cpus: str, path: Path, key: str = "cpus") -> CoreDeltas:
    """The summed deltas of doc's proc_stat_before/after over the CPU list `cpus` ("1", "0-3,6"),
    e.g. of a client host's host.json (client_hosts.py); RawFormatError naming path and key."""
    return _deltas(doc, _cpu_list(cpus, path, key), path)


def _deltas(doc: dict, cpus: list[str], path: str | Path) -> CoreDeltas:
    before = require(doc, "proc_stat_before", path, dict)
    after = require(doc, "proc_stat_after", path, dict)
    total = busy = charged = 0
    worst = 0.0
    for cpu in cpus:
        b, a = before.get(cpu), after.get(cpu)
        if not (isinstance(b, list) and isinstance(a, list) and len(b) >= 8 and len(a) >= 8):
            raise RawFormatError(path, f"no /proc/stat counters for CPU {cpu}", key="proc_stat_before")
        d = [int(a[i]) - int(b[i]) for i in range(8)]
        if any(x < 0 for x in d):
            raise RawFormatError(path, f"/proc/stat counters of CPU {cpu} went backwards", key="proc_stat_after")
        t = sum(d)
        total += t
        busy += t - d[_IDLE] - d[_IOWAIT]
        charged += t - d[_IDLE] - d[_IOWAIT] - d[_STEAL]
        if t > 0:
            worst = max(worst, d[_STEAL] / t)
    return CoreDeltas(len(cpus), total, busy, charged, worst)


@dataclass(frozen=True)
class WindowCpu:
    client_cpu_s: float       # the load tool's CPU seconds (user + system), from GNU time
    client_busy: float        # busy fraction of the client cores
    server_busy: float        # busy fraction of the server cores
    steal_pct: float          # worst pinned core's steal, % of its time
    foreign_cpu_pct: float    # other processes' CPU, % of one core (the worse of the two sets)


def _frac(x: int, total: int) -> float:
    return x / total if total > 0 else math.nan


def foreign_pct(d: CoreDeltas, own_s: float, clk: int) -> float:
    """CPU of anything but the pinned processes on a set of cores, % of one core: the cores'
    charged ticks less own_s seconds of the processes pinned there; NaN when unknown."""
    if d.total <= 0 or math.isnan(own_s):
        return math.nan
    per_core_ticks = d.total / d.n_cpus
    return 100.0 * max(0.0, d.charged - own_s * clk) / per_core_ticks


def _cpu_doc(doc: dict, path: str | Path) -> tuple[int, CoreDeltas]:
    """r<rep>.cpu.json's clock rate and the server cores' deltas."""
    clk = require(doc, "clk_tck", path, int)
    if clk <= 0:
        raise RawFormatError(path, f"clk_tck must be > 0, got {clk}", key="clk_tck")
    server = _deltas(doc, _cpu_list(require(doc, "server_cpus", path, str), path, "server_cpus"), path)
    return clk, server


@dataclass(frozen=True)
class ServerWindowCpu:
    server_busy: float        # busy fraction of the server cores
    steal_pct: float          # worst server core's steal, % of its time
    foreign_cpu_pct: float    # other processes' CPU on the server cores, % of one core


def _point_files(scenario_dir: Path, rep: int) -> RepFiles | None:
    files = RepFiles.of_dir(scenario_dir, rep)
    return files if files.has(CPU_JSON) else None


def server_window_cpu(scenario_dir: Path, rep: int, server_cpu_s: float, tail_s: float = 0.0
                      ) -> ServerWindowCpu | None:
    """server_window_cpu_of the point's r<rep>.cpu.json; None when it has none."""
    files = _point_files(Path(scenario_dir), rep)
    if files is None:
        return None
    return server_window_cpu_of(files.json(CPU_JSON) or {}, files.where(CPU_JSON), server_cpu_s, tail_s)


def server_window_cpu_of(cpu_doc: dict, where: str | Path, server_cpu_s: float, tail_s: float = 0.0
                         ) -> ServerWindowCpu:
    """The server cores' figures of r<rep>.cpu.json (its JSON object) alone, for a point loaded
    from several client hosts: its client part (client_cpus, client_cpu_ticks,
    r<rep>.client.time.txt) is not read, each host's own counters are in its r<rep>.h<I>.host.json
    (client_hosts.py). tail_s as in window_cpu_of (there is no end-of-load snapshot)."""
    clk, server = _cpu_doc(cpu_doc, where)
    if tail_s > 0:
        server = server.without_tail(tail_s * clk, busy_cpus=0)
    return ServerWindowCpu(server_busy=_frac(server.busy, server.total),
                           steal_pct=100.0 * server.worst_steal_frac,
                           foreign_cpu_pct=foreign_pct(server, server_cpu_s, clk))


def window_cpu(scenario_dir: Path, rep: int, server_cpu_s: float, tail_s: float = 0.0
               ) -> WindowCpu | None:
    """window_cpu_of the point's r<rep>.cpu.json and r<rep>.client.time.txt; None when the point
    has no r<rep>.cpu.json (runs made before it was recorded)."""
    files = _point_files(Path(scenario_dir), rep)
    if files is None:
        return None
    return window_cpu_of(files.json(CPU_JSON) or {}, files.where(CPU_JSON),
                         files.text(CLIENT_TIME), files.where(CLIENT_TIME), server_cpu_s, tail_s)


def window_cpu_of(cpu_doc: dict, where: str | Path, time_text: str | None, time_where: str | Path,
                  server_cpu_s: float, tail_s: float = 0.0) -> WindowCpu:
    """The window's core figures for one point from r<rep>.cpu.json's JSON object and the text of
    r<rep>.client.time.txt (None when absent). tail_s: seconds at the end of an old window that
    followed the load (the tool's own post-processing); ignored when the window ended with the load."""
    path = where
    doc = cpu_doc
    clk, server = _cpu_doc(doc, path)
    client = _deltas(doc, _cpu_list(require(doc, "client_cpus", path, str), path, "client_cpus"), path)
    ct = client_time_of(time_text, time_where) if time_text is not None else None
    client_cpu_s = ct.cpu_s if ct else math.nan
    ticks = doc.get("client_cpu_ticks")
    # the tool's CPU when the window opened at its clock's start (window_start clock_start): its
    # connects' share, left out as the server's is
    before = doc.get("client_cpu_ticks_before", 0)
    if isinstance(before, bool) or not isinstance(before, int) or before < 0:
        raise RawFormatError(path, f"unexpected value {before!r}", key="client_cpu_ticks_before")
    client_cpu_s -= before / clk
    if ticks is not None:
        if isinstance(ticks, bool) or not isinstance(ticks, int) or ticks < before:
            raise RawFormatError(path, f"unexpected value {ticks!r}", key="client_cpu_ticks")
        client_cpu_s = (ticks - before) / clk    # the tool's CPU up to the end of the load
    elif tail_s > 0:
        server = server.without_tail(tail_s * clk, busy_cpus=0)
        client = client.without_tail(tail_s * clk, busy_cpus=1)
        client_cpu_s = max(0.0, client_cpu_s - tail_s)

    f_server = foreign_pct(server, server_cpu_s, clk)
    f_client = foreign_pct(client, client_cpu_s, clk)
    foreign = max((f for f in (f_server, f_client) if not math.isnan(f)), default=math.nan)
    return WindowCpu(
        client_cpu_s=client_cpu_s,
        client_busy=_frac(client.busy, client.total),
        server_busy=_frac(server.busy, server.total),
        steal_pct=100.0 * max(server.worst_steal_frac, client.worst_steal_frac),
        foreign_cpu_pct=foreign,
    )
