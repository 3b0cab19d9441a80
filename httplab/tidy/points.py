"""One finished rep of one point as its runs row: the load tool's result (one host, or several
merged), the server's cost over the measured window, the CPU cores' share (client-bound, noisy), the
negotiated TLS, and the status rule (ok, failed with its reasons, saturated). rawrun builds the
frames from these rows; the contents come from httplab.parse.layout (RepFiles)."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..parse import layout
from ..parse.errors import RawFormatError
from ..parse.jsonio import read_json_object, require
from ..parse.layout import (CLIENT_TIME, CPU_JSON, RUN_JSON, SERVER_JSON, SLICES_JSON, TLS_TXT, PointFiles,
                            RepFiles)
from ..parse.loaders import load_rep
from ..parse.loadresult import LoadResult
from . import bounds, multihost
from .columns import EXTRA_COLUMNS, TOOL_TEXT_COLUMNS
from ..lab.servers import aa_of
from ..parse.cpuwindow import WindowCpu, cpu_list, server_window_cpu_of, window_cpu_of
from ..parse.percentiles import weighted_percentiles


SCENARIO_KEYS: dict[str, type | tuple[type, ...]] = {
    "suite": str, "protocol": str, "tls": bool, "server": str, "scenario": str, "route": str,
    "method": str, "size_bytes": int, "connections": int, "streams": int, "pipeline": int,
    "client_threads": int, "duration_s": (int, float), "tool": str,
}


# ---------------------------------------------------------------- small readers
# read_meta (raw/<run_id>/meta.json: run_id required, complete defaulting to False) is the layout's.

def check_scenario(doc: dict[str, Any], where: str | Path) -> dict[str, Any]:
    """scenario.json's object, its keys checked (RawFormatError naming `where` and the key)."""
    for key, types in SCENARIO_KEYS.items():
        require(doc, key, where, types)
    return doc


@dataclass(frozen=True)
class ServerCost:
    cpu_s: float
    wall_s: float
    rss_kb: float
    rss_peak_kb: float          # the window's own peak; NaN when only a cumulative one was recorded
    alive: bool | None
    rss_start_kb: float = math.nan
    rss_warm_kb: float = math.nan
    rss_peak_method: str = "cumulative"
    window_end: str = "tool_exit"   # load_end: the window closed when the load ended (snapshot)
    # the seconds from the window's opening, before the tool started, to the tool's clock start
    # (its connects and handshakes), when the window starts there (window_start clock_start: the
    # lab's wrk's and h2load's start snapshot); NaN where the window opened before the tool
    clock_start_s: float = math.nan


def _opt_float(doc: dict[str, Any], key: str, path: str | Path) -> float:
    value = doc.get(key)
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RawFormatError(path, f"unexpected value {value!r}", key=key)
    return float(value)


def read_server_cost(path: Path) -> ServerCost | None:
    """server_cost of an r<rep>.server.json file; None if absent."""
    if not path.is_file():
        return None
    return server_cost(read_json_object(path), path)


def server_cost(doc: dict[str, Any], where: str | Path) -> ServerCost:
    """r<rep>.server.json's object -> CPU seconds of the process tree over the window, RSS;
    RawFormatError naming `where` and the key."""
    path = where
    num = (int, float)
    clk = require(doc, "clk_tck", path, num)
    before = require(doc, "cpu_ticks_before", path, num)
    after = require(doc, "cpu_ticks_after", path, num)
    wall = require(doc, "wall_s", path, num)
    if clk <= 0:
        raise RawFormatError(path, f"clk_tck must be > 0, got {clk}", key="clk_tck")
    if after < before:
        raise RawFormatError(path, "cpu_ticks_after < cpu_ticks_before", key="cpu_ticks_after")
    alive = doc.get("server_alive")
    # Before the window's peak was reset (no rss_peak_method), VmHWM covered everything since the
    # server started: the peak of every earlier scenario of the rep. It is not reported.
    method = doc.get("rss_peak_method")
    if method is not None and method not in ("clear_refs", "sampled"):
        raise RawFormatError(path, f"unknown method {method!r}", key="rss_peak_method")
    window_end = doc.get("window_end", "tool_exit")
    if window_end not in ("load_end", "tool_exit"):
        raise RawFormatError(path, f"unknown window end {window_end!r}", key="window_end")
    window_start = doc.get("window_start", "tool_start")
    if window_start not in ("tool_start", "clock_start"):
        raise RawFormatError(path, f"unknown window start {window_start!r}", key="window_start")
    clock_start_s = _opt_float(doc, "clock_start_s", path)
    if window_start == "clock_start" and not clock_start_s >= 0:
        raise RawFormatError(path, "a window that starts at the tool's clock needs clock_start_s >= 0",
                             key="clock_start_s")
    return ServerCost(
        window_end=window_end,
        clock_start_s=clock_start_s if window_start == "clock_start" else math.nan,
        cpu_s=(after - before) / clk,
        wall_s=float(wall),
        rss_kb=_opt_float(doc, "rss_kb", path),
        rss_peak_kb=_opt_float(doc, "rss_peak_kb", path) if method else math.nan,
        alive=None if alive is None else bool(alive),
        rss_start_kb=_opt_float(doc, "rss_start_kb", path),
        rss_warm_kb=_opt_float(doc, "rss_warm_kb", path),
        rss_peak_method=method or "cumulative",
    )


def window_tail_s(tool: str, cost: ServerCost | None, result: LoadResult | None) -> float:
    """Seconds at the end of a window read after wrk exited that followed its load: wrk's done()
    hook dumping the histogram (up to ~1 s for wide latency tails), the server idle; likewise oha
    writing its per-request database, and h3load closing its connections after the last answer. Taken as the window's wall time less the tool's own duration
    (which runs from its start to the end of the load, connects included). Zero for windows that closed with the load (window_end load_end) and for
    h2load, whose excess wall time is its connection set-up, before its clock starts."""
    if (tool not in ("wrk", "oha", "h3load") or cost is None or result is None or cost.window_end in ("load_end", "sliced")
            or not result.duration_s > 0):
        return 0.0
    return max(0.0, cost.wall_s - result.duration_s)


# ---------------------------------------------------------------- status rule
def fail_reasons(exit_code: int | None, result: LoadResult | None, server_alive: bool | None,
                 tool: str) -> list[str]:
    """Human reasons why a run is failed; empty list = ok.

    Failed when: the load tool exited non-zero, it left no output, any error counter > 0 (socket
    errors, non-2xx/3xx responses, h2load failed/errored/timeout), the loader noted a problem
    (LoadResult.notes: a missing file, a wrong protocol, ...), zero completed requests, or the
    server was not alive after the run.
    """
    reasons: list[str] = []
    if exit_code is not None and exit_code != 0:
        reasons.append(f"{tool} exited with code {exit_code}")
    if result is None:
        reasons.append(f"{tool} wrote no result")
    else:
        for label, n in result.errors.items():
            if n > 0:
                reasons.append(f"{n:,} {label}")
        reasons.extend(result.notes)
        if result.requests <= 0:
            reasons.append("no request completed")
    if server_alive is False:
        reasons.append("server not alive after the run")
    return reasons


# ---------------------------------------------------------------- one rep's runs row
def _cpu_columns(win: WindowCpu | None) -> dict[str, Any]:
    """The runs row's core figures of a one-host point (r<rep>.cpu.json, cpuwindow.window_cpu_of)."""
    steal = win.steal_pct if win else math.nan
    foreign = win.foreign_cpu_pct if win else math.nan
    return {
        "client_cpu_s": win.client_cpu_s if win else math.nan,
        "client_busy": win.client_busy if win else math.nan,
        "server_busy": win.server_busy if win else math.nan,
        "client_bound": bounds.client_bound(win.client_busy, win.server_busy) if win else None,
        "steal_pct": steal, "foreign_cpu_pct": foreign,
        "noisy": bounds.noisy(steal, foreign) if win else None,
        "noisy_reason": bounds.noisy_reason(steal, foreign) if win else "",
    }


def _int_field(doc: dict[str, Any], key: str, where: str, minimum: int | None = None) -> int | None:
    """doc[key] when an integer (≥ minimum) or absent/null (None); RawFormatError otherwise."""
    value = doc.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or (minimum is not None and value < minimum)):
        raise RawFormatError(where, f"unexpected value {value!r}", key=key)
    return value


@dataclass(frozen=True)
class _ToolRun:
    """The load tool's side of one rep: its result, and for per-host points the hosts' shares."""
    result: LoadResult | None
    multi: multihost.MultiPoint | None
    n_hosts: int


def _tool_run(files: RepFiles, scen: dict[str, Any], scen_where: str) -> _ToolRun:
    """The tool's result: one host's files, or every client host's merged (tidy.multihost)."""
    n_hosts = multihost.client_hosts_of(scen, scen_where)
    if multihost.per_host_layout(scen, scen_where):
        multi = multihost.load_multi_point(files, scen, n_hosts)
        return _ToolRun(multi.result, multi, n_hosts)
    return _ToolRun(load_rep(scen["tool"], files, scen), None, n_hosts)


def _alive(run_doc: dict[str, Any], cost: ServerCost | None) -> bool | None:
    """Whether the server still answered: False when run.json or server.json says not."""
    flags = [run_doc.get("server_alive"), cost.alive if cost else None]
    return False if any(a is False for a in flags) else (True if any(a is True for a in flags) else None)


def _tls(files: RepFiles, scen: dict[str, Any], result: LoadResult | None
         ) -> tuple[dict[str, str | None], list[str]]:
    """A TLS point's negotiated-parameter columns and fail reasons (r<rep>.tls.txt); ({}, [])
    for a cleartext point."""
    if not scen["tls"]:
        return {}, []
    from ..parse.tls_info import tls_columns
    return tls_columns(files.text(TLS_TXT), files.where(TLS_TXT), files.name(TLS_TXT), scen,
                       result.text if result else None)


def _status(reasons: list[str], result: LoadResult | None) -> str:
    """failed (any reason), saturated (an open-model rate the server did not keep up with: its
    reason appended) or ok."""
    if reasons:
        return "failed"
    if result is not None:
        saturated = bounds.saturation_reason(result.req_per_s, result.extra.get("target_rps"))
        if saturated:
            reasons.append(saturated)
            return "saturated"
    return "ok"


def _result_columns(result: LoadResult | None) -> dict[str, Any]:
    """The tool's figures: requests, rates, latency (percentiles from the full histogram), errors,
    the histogram's kind, and the tool's own text and float columns."""
    if result is not None and result.hist_counts.sum() > 0:
        p50, p90, p99, p999 = weighted_percentiles(result.hist_values_us, result.hist_counts,
                                                   [50, 90, 99, 99.9])
    else:
        p50 = p90 = p99 = p999 = math.nan
    cols: dict[str, Any] = {
        "requests": float(result.requests) if result else math.nan,
        "req_per_s": result.req_per_s if result else math.nan,
        "bytes_per_s": result.bytes_per_s if result else math.nan,
        "lat_mean_us": result.lat_mean_us if result else math.nan,
        "lat_p50_us": p50, "lat_p90_us": p90, "lat_p99_us": p99, "lat_p999_us": p999,
        "lat_max_us": result.lat_max_us if result else math.nan,
        "errors": float(result.total_errors) if result else math.nan,
        "hist_kind": result.hist_kind if result else "none",
    }
    for col in TOOL_TEXT_COLUMNS:
        if result is not None and result.text.get(col) is not None:
            cols[col] = result.text[col]
    for col in EXTRA_COLUMNS:
        if result is not None and col in result.extra:
            value = result.extra[col]
            cols[col] = math.nan if value is None else float(value)
    return cols


def _window_tail(tool: str, cost: ServerCost | None, run: _ToolRun) -> float:
    """Seconds of the server's window outside the load (window_tail_s; per-host points:
    multihost.outside_load_s)."""
    if run.multi is None:
        return window_tail_s(tool, cost, run.result)
    return multihost.outside_load_s(run.multi, tool, cost.wall_s if cost else math.nan)


def _cost_columns(cost: ServerCost | None, tail_s: float, requests: float) -> dict[str, Any]:
    """The server's cost over its window (r<rep>.server.json less the tail): CPU, CPU per request,
    the capacity it implies, RSS, the window's length and how it ended."""
    cpu_s = cost.cpu_s if cost else math.nan
    window_s = cost.wall_s - tail_s if cost else math.nan
    cpu_us_per_req = 1e6 * cpu_s / requests if requests and requests > 0 else math.nan
    return {
        "server_cpu_s": cpu_s,
        "cpu_pct": 100.0 * cpu_s / window_s if cost and window_s > 0 else math.nan,
        "cpu_us_per_req": cpu_us_per_req,
        "capacity_rps": 1e6 / cpu_us_per_req if cpu_us_per_req and cpu_us_per_req > 0 else math.nan,
        "rss_peak_kb": cost.rss_peak_kb if cost else math.nan,
        "rss_start_kb": cost.rss_start_kb if cost else math.nan,
        "rss_warm_kb": cost.rss_warm_kb if cost else math.nan,
        "rss_peak_method": cost.rss_peak_method if cost else "none",
        "window_s": window_s,
        "window_end": ("none" if cost is None else "tool_exit_corrected" if tail_s > 0
                       else cost.window_end),
    }


def _core_columns(files: RepFiles, run: _ToolRun, cpu_s: float, tail_s: float) -> dict[str, Any]:
    """The pinned cores over the window (r<rep>.cpu.json): busy shares, client-bound, steal,
    foreign CPU and the noisy flag; per-host points take the client side from the hosts' files."""
    cpu_doc = files.json(CPU_JSON)
    if run.multi is None:
        win = None if cpu_doc is None else window_cpu_of(
            cpu_doc, files.where(CPU_JSON), files.text(CLIENT_TIME), files.where(CLIENT_TIME), cpu_s, tail_s)
        return _cpu_columns(win)
    server = None if cpu_doc is None else server_window_cpu_of(cpu_doc, files.where(CPU_JSON), cpu_s, tail_s)
    return multihost.cpu_columns(run.multi, server)


# ---------------------------------------------------------------- a point of a sliced block
# (scripts/lib/sliced.sh: every server up at once, the tools run in turn in short slices)

# the tools whose latency a sliced point keeps: each measures it in a contiguous run of its own after
# the window (h2load's log; wrk's latency run, which its loader alone reads for a sliced point)
SLICED_LATENCY_KEPT = ("h2load", "wrk")


def sliced_seconds(files: RepFiles) -> float | None:
    """The seconds a sliced point's tool was let run (r<rep>.slices.json: tool.ran_s, its slices
    and its tail); None for a point measured in one contiguous run. RawFormatError naming the file
    and key."""
    doc = files.json(SLICES_JSON)
    if doc is None:
        return None
    where = files.where(SLICES_JSON)
    tool = require(doc, "tool", where, dict)
    ran = require(tool, "ran_s", where, (int, float))
    if isinstance(ran, bool) or not ran > 0:
        raise RawFormatError(where, f"unexpected value {ran!r}", key="ran_s")
    return float(ran)


def sliced_connect_seconds(files: RepFiles) -> float:
    """The seconds a sliced point's tool spent connecting before its clock started
    (r<rep>.slices.json: tool.connect_s); NaN where its time counted from its start."""
    doc = files.json(SLICES_JSON)
    tool = {} if doc is None else require(doc, "tool", files.where(SLICES_JSON), dict)
    v = tool.get("connect_s")
    if v is None:
        return math.nan
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
        raise RawFormatError(files.where(SLICES_JSON), f"unexpected value {v!r}", key="connect_s")
    return float(v)


def sliced_connect_cpu(files: RepFiles) -> tuple[float, float]:
    """The CPU seconds a sliced point's server and tool spent in the tool's connects, before its
    clock started (r<rep>.slices.json: tool.connect_server_cpu_s and connect_tool_cpu_s, which the
    slicer records for a tool that waits for its connections); (0, 0) where it did not. Left out of
    the point's cost as the connects' seconds are left out of its time: CPU-µs per request is then
    a keep-alive request's, without connection set-up (TLS handshakes)."""
    doc = files.json(SLICES_JSON)
    tool = {} if doc is None else require(doc, "tool", files.where(SLICES_JSON), dict)
    out = []
    for key in ("connect_server_cpu_s", "connect_tool_cpu_s"):
        v = tool.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0):
            raise RawFormatError(files.where(SLICES_JSON), f"unexpected value {v!r}", key=key)
        out.append(float(v or 0.0))
    return out[0], out[1]


def _sliced_core_columns(files: RepFiles, cpu_s: float, ran_s: float) -> dict[str, Any]:
    """The core figures of a sliced point: the busy shares are the tool's and the server's own CPU
    over the seconds the tool ran (the cores' counters over the window hold every server's and every
    tool's work); steal is the window's; foreign CPU cannot be told from the other servers' (NaN)."""
    cpu_doc = files.json(CPU_JSON)
    win = None if cpu_doc is None else window_cpu_of(
        cpu_doc, files.where(CPU_JSON), files.text(CLIENT_TIME), files.where(CLIENT_TIME), cpu_s, 0.0)
    if win is None:
        return _cpu_columns(None)
    n_server = len(cpu_list(require(cpu_doc, "server_cpus", files.where(CPU_JSON), str), files.where(CPU_JSON), "server_cpus"))
    n_client = len(cpu_list(require(cpu_doc, "client_cpus", files.where(CPU_JSON), str), files.where(CPU_JSON), "client_cpus"))
    client_cpu_s = win.client_cpu_s - sliced_connect_cpu(files)[1]
    client_busy = client_cpu_s / (ran_s * n_client)
    server_busy = cpu_s / (ran_s * n_server)
    return {
        "client_cpu_s": client_cpu_s, "client_busy": client_busy, "server_busy": server_busy,
        "client_bound": bounds.client_bound(client_busy, server_busy),
        "steal_pct": win.steal_pct, "foreign_cpu_pct": math.nan,
        "noisy": bounds.noisy(win.steal_pct, math.nan), "noisy_reason": "",
    }


def _scenario_columns(scen: dict[str, Any]) -> dict[str, Any]:
    """The point's parameters from scenario.json."""
    return {
        "suite": scen["suite"], "protocol": scen["protocol"], "tls": scen["tls"],
        "server": scen["server"], "route": scen["route"], "method": scen["method"],
        "size_bytes": scen["size_bytes"], "connections": scen["connections"],
        "streams": scen["streams"], "client_threads": scen["client_threads"],
        "duration_s": float(scen["duration_s"]), "scenario": scen["scenario"],
        "pipeline": scen["pipeline"], "aa_of": aa_of(scen["server"]),
    }


def _point_row(run_id: str, point: PointFiles, rep: int
               ) -> tuple[dict[str, Any], LoadResult | None, list[dict[str, Any]]]:
    """The runs row of one rep of a point, its LoadResult (for the latency frame) and, when
    several client hosts loaded it, its client_hosts rows (else [])."""
    files, scen = point.rep(rep), point.scenario
    run_doc = files.json(RUN_JSON) or {}
    exit_code = _int_field(run_doc, "exit_code", files.where(RUN_JSON))
    run = _tool_run(files, scen, point.scenario_where)
    cost = None if not files.has(SERVER_JSON) else server_cost(files.json(SERVER_JSON) or {},
                                                               files.where(SERVER_JSON))
    ran_s = sliced_seconds(files)
    if ran_s is not None:
        # a sliced point: rates and the server's share over the seconds the tool ran
        if run.result is not None:
            run = dataclasses.replace(run, result=run.result.over_seconds(
                ran_s, latency_kept=scen["tool"] in SLICED_LATENCY_KEPT))
        if cost is not None:
            cost = dataclasses.replace(cost, cpu_s=cost.cpu_s - sliced_connect_cpu(files)[0], wall_s=ran_s,
                                       window_end="sliced", clock_start_s=sliced_connect_seconds(files))
    result = run.result
    reasons = fail_reasons(exit_code, result, _alive(run_doc, cost), scen["tool"])
    if run.multi is not None:
        reasons.extend(run.multi.reasons)
    tls_cols, tls_reasons = _tls(files, scen, result)
    reasons.extend(tls_reasons)
    status = _status(reasons, result)
    cols = _result_columns(result)
    tail_s = _window_tail(scen["tool"], cost, run)
    costs = _cost_columns(cost, tail_s, cols["requests"])
    cores = (_core_columns(files, run, costs["server_cpu_s"], tail_s) if ran_s is None
             else _sliced_core_columns(files, costs["server_cpu_s"], ran_s))
    position = _int_field(run_doc, "position", files.where(RUN_JSON), minimum=1)
    row: dict[str, Any] = {
        "run_id": run_id, **_scenario_columns(scen), "rep": rep, "status": status, **cols, **costs,
        "raw_path": layout.raw_path(run_id, point.rel, rep), "position": position,
        **{k: cores[k] for k in ("client_cpu_s", "client_busy", "server_busy", "client_bound",
                                 "steal_pct", "foreign_cpu_pct", "noisy", "noisy_reason")},
        "fail_reason": "; ".join(reasons), "start_utc": run_doc.get("start_utc"),
        **tls_cols,
    }
    if cost is not None and not math.isnan(cost.clock_start_s):
        row["connect_s"] = cost.clock_start_s   # an optional column: windows that began at the clock
    host_rows: list[dict[str, Any]] = []
    if run.multi is not None:
        row["client_hosts"] = run.n_hosts
        row["client_start_skew_ms"] = 1e3 * run.multi.skew_s
        host_rows = multihost.host_rows(run.multi, row, cores["server_busy"])
    return row, result, host_rows
