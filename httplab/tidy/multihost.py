"""A measured point that several client hosts loaded at once (docs/host-modes.md; scenario.json
"client_hosts": N ≥ 2, "client_layout": "per_host"; also an inventory's one client machine, whose
files are per host too): every host's files read, merged into the point's one LoadResult
(httplab.parse.merge), what fails the point, the client columns of its runs row, and its rows of the
client_hosts frame (one per host).

The point is failed, never merged from fewer hosts in silence, when a host's host.json, tool
output or GNU time line is missing, a host's tool exited non-zero, or the hosts' tools started
further apart than httplab.tidy.bounds.start_skew_limit_s (for h2load also its latency runs).

Client columns: client_cpu_s is the hosts' tool CPU summed; client_busy the busiest host's busy
share of its own load CPUs (its host.json counters); client_bound when any host was client-bound
against the server cores' busy share; steal the worst core of the server and of every host;
foreign CPU the worse of the server cores' (r<rep>.cpu.json, whose client part is not read) and
of each group of hosts that share cores (client_hosts.client_foreign_pct).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..parse.client_hosts import ClientHost, client_foreign_pct, client_host_of, start_offsets_s, start_skew_s
from ..parse.cpuwindow import ClientTime, ServerWindowCpu, client_time_of
from ..parse.errors import RawFormatError
from ..parse.layout import CLIENT_TIME, HOST_JSON, LAT_HOST_JSON, OHA_JSON, WRK_JSON, RepFiles
from ..parse.loaders import load_rep
from ..parse.loadresult import LoadResult
from ..parse.merge import merge_results
from ..parse.percentiles import weighted_percentiles
from . import bounds

# The file whose absence means the tool wrote no result (loaders that return None without it).
_RESULT_FILE = {"wrk": WRK_JSON, "oha": OHA_JSON}


LAYOUTS = ("single", "per_host")


def client_hosts_of(scen: Mapping[str, Any], path: str | Path) -> int:
    """scenario.json's client_hosts (1 when absent: every point before several hosts existed);
    RawFormatError naming the file and key unless it is an integer ≥ 1."""
    n = scen.get("client_hosts", 1)
    if n is None:
        return 1
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise RawFormatError(path, f"unexpected value {n!r}", key="client_hosts")
    return n


def per_host_layout(scen: Mapping[str, Any], path: str | Path) -> bool:
    """Whether the point's load-tool files are per client host (r<rep>.h<I>.*): scenario.json's
    client_layout "per_host" (scripts/lib/fanout.sh: several hosts, or the one client machine of an
    inventory), "single" for r<rep>.*; without the key (points written before it), per host when
    client_hosts ≥ 2. RawFormatError naming the file and key for another layout, or "single" with
    several hosts."""
    layout = scen.get("client_layout")
    n = client_hosts_of(scen, path)
    if layout is None:
        return n > 1
    if layout not in LAYOUTS or (layout == "single" and n > 1):
        raise RawFormatError(path, f"unexpected value {layout!r} (layouts: {', '.join(LAYOUTS)}; "
                             f"per_host with {n} client hosts)", key="client_layout")
    return layout == "per_host"


@dataclass(frozen=True)
class HostShare:
    host: int
    record: ClientHost | None       # r<rep>.h<I>.host.json
    result: LoadResult | None       # the host's tool output
    time: ClientTime | None         # r<rep>.h<I>.client.time.txt


@dataclass(frozen=True)
class MultiPoint:
    n_hosts: int
    shares: tuple[HostShare, ...]
    result: LoadResult | None       # merged over the hosts that left a record and a result
    reasons: tuple[str, ...]        # why the point fails, beyond the merged result's own
    skew_s: float                   # first to last tool start (NaN without records)

    @property
    def records(self) -> list[ClientHost]:
        return [s.record for s in self.shares if s.record is not None]


def _record(files: RepFiles, suffix: str) -> ClientHost | None:
    """Client host files.host's host.json (suffix HOST_JSON or LAT_HOST_JSON); None when absent."""
    doc = files.json(suffix)
    return None if doc is None else client_host_of(doc, files.where(suffix), files.host)


def load_multi_point(files: RepFiles, scen: Mapping[str, Any], n_hosts: int) -> MultiPoint:
    """Every host's share of the point's rep (files: the rep's contents), merged; see the module
    docstring for the reasons."""
    tool = str(scen["tool"])
    duration_s = float(scen["duration_s"])
    shares: list[HostShare] = []
    reasons: list[str] = []
    for i in range(1, n_hosts + 1):
        host = files.host_files(i)
        record = _record(host, HOST_JSON)
        if record is None:
            reasons.append(f"client host {i}: {host.name(HOST_JSON)} missing")
        elif record.exit_code not in (0, None):
            reasons.append(f"client host {i}: load tool exit {record.exit_code}")
        result = load_rep(tool, host, scen)
        if result is None:
            missing = f" ({host.name(_RESULT_FILE[tool])} missing)" if tool in _RESULT_FILE else ""
            reasons.append(f"client host {i}: {tool} wrote no result{missing}")
        time_text = host.text(CLIENT_TIME)
        time = None if time_text is None else client_time_of(time_text, host.where(CLIENT_TIME))
        if time is None:
            reasons.append(f"client host {i}: {host.name(CLIENT_TIME)} missing")
        shares.append(HostShare(i, record, result, time))
    complete = [s for s in shares if s.record is not None and s.result is not None]
    merged = (merge_results([s.result for s in complete], [s.record for s in complete])  # type: ignore[misc]
              if complete else None)
    records = [s.record for s in shares if s.record is not None]
    skew = start_skew_s(records)
    why = bounds.start_skew_reason(skew, duration_s)
    if why:
        reasons.append(why)
    if tool == "h2load":
        lat = [r for i in range(1, n_hosts + 1) if (r := _record(files.host_files(i), LAT_HOST_JSON))]
        lat_s = float(scen.get("latency_run_duration_s") or duration_s)
        why = bounds.start_skew_reason(start_skew_s(lat), lat_s, "latency run: client hosts")
        if why:
            reasons.append(why)
    return MultiPoint(n_hosts, tuple(shares), merged, tuple(reasons), skew)


def outside_load_s(mp: MultiPoint, tool: str, wall_s: float) -> float:
    """Seconds of the server's window (wall_s, r<rep>.server.json) outside the hosts' loads, which
    the window's figures leave out as server-idle time (rawrun's tail_s): the wait for the agreed
    start (scripts/lib/fanout.sh's lead, 0.5 s in netns mode and 8 s through Ansible, inside the
    window the suite reads around the fan-out), the launchers' start-up and, for wrk and oha, the
    tools' work after the load (wrk's histogram dump) as for one host. The load is the hosts' union
    window (the merged duration_s) for wrk and oha; for h2load, whose one-host window keeps its
    connection set-up, from the first host's start to the last host's exit (host.json)."""
    if mp.result is None or not wall_s > 0:
        return 0.0
    if tool == "h2load":
        records = mp.records
        span = max(r.ended for r in records) - min(r.started for r in records) if records else math.nan
    else:
        span = mp.result.duration_s
    return max(0.0, wall_s - span) if span > 0 else 0.0


def _max_known(values: list[float]) -> float:
    known = [v for v in values if not math.isnan(v)]
    return max(known) if known else math.nan


def _any_bound(flags: list[bool | None]) -> bool | None:
    if any(f is True for f in flags):
        return True
    return None if all(f is None for f in flags) else False


def cpu_columns(mp: MultiPoint, server: ServerWindowCpu | None) -> dict[str, Any]:
    """The runs row's client_cpu_s, client_busy, server_busy, client_bound, steal_pct,
    foreign_cpu_pct, noisy and noisy_reason (module docstring)."""
    tool_cpu = [s.time.cpu_s if s.time is not None else math.nan for s in mp.shares]
    records = [s.record for s in mp.shares if s.record is not None]
    record_cpu = [c for s, c in zip(mp.shares, tool_cpu) if s.record is not None]
    server_busy = server.server_busy if server else math.nan
    busy = [r.busy for r in records]
    steal = _max_known([server.steal_pct if server else math.nan] + [r.steal_pct for r in records])
    foreign = _max_known([server.foreign_cpu_pct if server else math.nan,
                          client_foreign_pct(records, record_cpu) if records else math.nan])
    return {
        "client_cpu_s": float(sum(tool_cpu)),
        "client_busy": _max_known(busy),
        "server_busy": server_busy,
        "client_bound": _any_bound([bounds.client_bound(b, server_busy) for b in busy]),
        "steal_pct": steal, "foreign_cpu_pct": foreign,
        "noisy": bounds.noisy(steal, foreign),
        "noisy_reason": bounds.noisy_reason(steal, foreign),
    }


def host_rows(mp: MultiPoint, key: Mapping[str, Any], server_busy: float) -> list[dict[str, Any]]:
    """The point's client_hosts rows: key (run_id, suite, server, scenario, rep) and each host's own
    figures (tidy.schema.CLIENT_HOSTS); unknown ones NaN / None."""
    offsets = start_offsets_s(mp.records)
    rows = []
    for s in mp.shares:
        r, rec = s.result, s.record
        if r is not None and int(r.hist_counts.sum()) > 0:
            p50, p99 = weighted_percentiles(r.hist_values_us, r.hist_counts, [50, 99])
        else:
            p50 = p99 = math.nan
        busy = rec.busy if rec is not None else math.nan
        rows.append({
            **{k: key[k] for k in ("run_id", "suite", "server", "scenario", "rep")},
            "host": s.host,
            "addr": rec.addr if rec is not None else None,
            "requests": r.requests if r is not None else None,
            "req_per_s": r.req_per_s if r is not None else math.nan,
            "errors": r.total_errors if r is not None else None,
            "lat_p50_us": float(p50), "lat_p99_us": float(p99),
            "client_cpu_s": s.time.cpu_s if s.time is not None else math.nan,
            "client_busy": busy,
            "client_bound": bounds.client_bound(busy, server_busy),
            "start_offset_ms": 1e3 * offsets[s.host] if s.host in offsets else math.nan,
            "exit_code": rec.exit_code if rec is not None else None,
        })
    return rows
