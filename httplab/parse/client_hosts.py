"""One client host's record of its share of a measured point that several client hosts loaded at once
(docs/host-modes.md): r<rep>.h<I>.host.json, written by scripts/client_run.sh around the tool's
run on host I (r<rep>.h<I>.lat.host.json for h2load's latency run), read into a typed record; and
the figures across hosts that the fail rules and the client columns need (start skew, foreign CPU
of hosts that share cores).

    {"host": 1, "name": "…-cli1", "addr": "10.231.0.11", "machine": "<machine-id>", "cpus": "1",
     "clk_tck": 100, "start_at": 1764000000.5, "started": 1764000000.500321, "ended": 1764000003.61,
     "exit_code": 0, "proc_stat_before": {"1": [user, nice, system, idle, …]}, "proc_stat_after": {…}}

start_at is the agreed start (the same on every host); started and ended are the host's own clock
when the tool was exec'd and when it ended; the proc_stat counters are those of the host's load
CPUs around that run (the shape of r<rep>.cpu.json's).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cpuwindow import CoreDeltas, core_deltas, cpu_list, foreign_pct
from .errors import RawFormatError
from .jsonio import read_json_object, require

_NUM = (int, float)


@dataclass(frozen=True)
class ClientHost:
    path: str
    host: int                  # I, 1-based
    name: str                  # the host's name (its network namespace in netns mode)
    addr: str
    machine: str               # /etc/machine-id: hosts with the same one share a kernel (and cores)
    cpus: str                  # the host's load CPUs ("1", "0-3")
    clk_tck: int
    start_at: float            # the agreed start, epoch seconds (NaN when not recorded)
    started: float             # this host's clock when the tool was exec'd
    ended: float               # ... and when it ended
    exit_code: int | None      # the tool's exit status (124: stopped at its deadline)
    cores: CoreDeltas          # the load CPUs over the run
    proc_stat_before: Mapping[str, tuple[int, ...]]
    proc_stat_after: Mapping[str, tuple[int, ...]]

    @property
    def busy(self) -> float:
        """Busy fraction of the host's load CPUs over its run (cpuwindow's definition)."""
        return self.cores.busy / self.cores.total if self.cores.total > 0 else math.nan

    @property
    def steal_pct(self) -> float:
        """The worst load CPU's steal, % of its time."""
        return 100.0 * self.cores.worst_steal_frac


def _counters(doc: dict[str, Any], key: str, cpus: Sequence[str]) -> dict[str, tuple[int, ...]]:
    block = doc[key]
    return {c: tuple(int(x) for x in block[c]) for c in cpus}


def read_client_host(path: str | Path, host: int | None = None) -> ClientHost:
    """The file as a ClientHost; RawFormatError naming the file and key when a key is missing or
    of the wrong type, the counters do not fit, the host number is not `host` (the file's name
    says which host it is), or the run ended before it started."""
    p = Path(path)
    return client_host_of(read_json_object(p), p, host)


def client_host_of(doc: dict[str, Any], where: str | Path, host: int | None = None) -> ClientHost:
    """A host.json's JSON object as a ClientHost; RawFormatError naming `where` (read_client_host's
    rules)."""
    p = where
    number = require(doc, "host", p, int)
    if host is not None and number != host:
        raise RawFormatError(p, f"host {number} in the file of client host {host}", key="host")
    cpus = str(require(doc, "cpus", p, str))
    clk = require(doc, "clk_tck", p, int)
    if clk <= 0:
        raise RawFormatError(p, f"clk_tck must be > 0, got {clk}", key="clk_tck")
    started = float(require(doc, "started", p, _NUM))
    ended = float(require(doc, "ended", p, _NUM))
    if ended < started:
        raise RawFormatError(p, f"ended ({ended}) before started ({started})", key="ended")
    if "exit_code" not in doc:
        raise RawFormatError(p, "missing key", key="exit_code")
    exit_code = doc["exit_code"]
    if exit_code is not None and (isinstance(exit_code, bool) or not isinstance(exit_code, int)):
        raise RawFormatError(p, f"unexpected value {exit_code!r}", key="exit_code")
    start_at = doc.get("start_at")
    if start_at is not None and (isinstance(start_at, bool) or not isinstance(start_at, _NUM)):
        raise RawFormatError(p, f"unexpected value {start_at!r}", key="start_at")
    name = doc.get("name")
    if name is not None and not isinstance(name, str):
        raise RawFormatError(p, f"unexpected value {name!r}", key="name")
    cores = core_deltas(doc, cpus, p, key="cpus")  # checks the counters of every CPU of cpus
    wanted = cpu_list(cpus, p, key="cpus")
    return ClientHost(
        path=str(p), host=number, name=name or "", addr=str(require(doc, "addr", p, str)),
        machine=str(require(doc, "machine", p, str)), cpus=cpus, clk_tck=clk,
        start_at=math.nan if start_at is None else float(start_at), started=started, ended=ended,
        exit_code=exit_code, cores=cores,
        proc_stat_before=_counters(doc, "proc_stat_before", wanted),
        proc_stat_after=_counters(doc, "proc_stat_after", wanted))


def start_skew_s(hosts: Sequence[ClientHost]) -> float:
    """Seconds between the first and the last host's start (0 for one host, NaN for none)."""
    if not hosts:
        return math.nan
    starts = [h.started for h in hosts]
    return max(starts) - min(starts)


def start_offsets_s(hosts: Sequence[ClientHost]) -> dict[int, float]:
    """Each host's start after the first host's, seconds, by host number."""
    if not hosts:
        return {}
    first = min(h.started for h in hosts)
    return {h.host: h.started - first for h in hosts}


def client_foreign_pct(hosts: Sequence[ClientHost], tool_cpu_s: Sequence[float]) -> float:
    """CPU of anything but the load tools on the client hosts' load CPUs, % of one core: the worst
    group of hosts that share cores. Hosts with the same machine and the same CPUs share them (netns
    mode: every client namespace runs on this machine's client CPUs), so one group's foreign CPU is
    the cores' charged ticks over the union of its hosts' runs (per CPU the earliest "before" and the
    latest "after" counters; they only grow) less the sum of its hosts' tool CPU (tool_cpu_s, in the
    order of hosts). NaN when no group is known (a host's tool CPU is unknown: its group is)."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, h in enumerate(hosts):
        groups.setdefault((h.machine, h.cpus), []).append(i)
    worst = math.nan
    for (_, cpus), members in groups.items():
        first = hosts[members[0]]
        ids = sorted(first.proc_stat_before)
        doc = {
            "proc_stat_before": {c: [min(v) for v in zip(*(hosts[i].proc_stat_before[c] for i in members))]
                                 for c in ids},
            "proc_stat_after": {c: [max(v) for v in zip(*(hosts[i].proc_stat_after[c] for i in members))]
                                for c in ids},
        }
        union = core_deltas(doc, cpus, Path(first.path), key="cpus")
        own = sum(tool_cpu_s[i] for i in members)
        pct = foreign_pct(union, own, first.clk_tck)
        if not math.isnan(pct):
            worst = pct if math.isnan(worst) else max(worst, pct)
    return worst
