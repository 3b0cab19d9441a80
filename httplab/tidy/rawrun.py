"""Build the tidy frames (docs/data.md) of a raw run directory, raw/<run_id>/, read through
httplab.parse.layout (the one module that knows its file names and reads them).

A rep is finished when r<rep>.run.json exists (written last); unfinished reps are skipped.
A point that several client hosts loaded at once (scenario.json "client_hosts" ≥ 2; "client_layout":
"per_host", which an inventory's one client machine has too) has the load tool's files per host,
r<rep>.h<I>.*, merged into its one runs row by httplab.tidy.multihost; each host's own figures are
the client_hosts frame.
"""
from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..parse import layout
from ..parse.errors import RawFormatError
from ..parse.jsonio import read_json_object, require
from ..parse.layout import (CLIENT_TIME, CPU_JSON, RUN_JSON, SERVER_JSON, TLS_TXT, PointFiles, RepFiles,
                            read_meta)
from ..parse.loaders import load_rep
from ..parse.loadresult import LoadResult
from . import bounds, multihost, schema
from ..parse.cpuwindow import WindowCpu, server_window_cpu_of, window_cpu_of
from ..parse.percentiles import coarsen_histogram, weighted_percentiles
from .facts import run_facts
from .rawpack import readable_view, relocate_error
from ..lab.servers import aa_of

# ---------------------------------------------------------------- frame schemas
# The columns, their types and meaning: httplab.tidy.schema (published in docs/data.md).
RUNS_COLUMNS: tuple[str, ...] = tuple(schema.columns(schema.RUNS))
# Tool-specific float columns (LoadResult.extra), appended after RUNS_COLUMNS only when some run of
# the frame comes from a tool that provides them (NaN in the other rows); text columns appended the
# same way (None in the other rows): the negotiated TLS parameters of TLS points (tls_info.point_tls).
# Columns of points loaded through per-host files (several client hosts, or an inventory's client
# machine: tidy.multihost), appended last only when a point of the frame was (1 and 0.0 in the
# other rows).
HOST_COLUMNS: tuple[str, ...] = ("client_hosts", "client_start_skew_ms")
EXTRA_COLUMNS: tuple[str, ...] = tuple(c.name for c in schema.RUNS
                                       if c.optional and c.type == "float" and c.name not in HOST_COLUMNS)
TEXT_EXTRA_COLUMNS: tuple[str, ...] = tuple(c.name for c in schema.RUNS if c.optional and c.type == "str?")
# text columns a tool's loader gives in LoadResult.text (the TLS ones come from tls_info instead)
TOOL_TEXT_COLUMNS: tuple[str, ...] = ("load_model",)
RUN_KEY: tuple[str, ...] = ("run_id", "suite", "server", "scenario", "rep")
LATENCY_COLUMNS: tuple[str, ...] = tuple(schema.columns(schema.LATENCY))
CLIENT_HOSTS_COLUMNS: tuple[str, ...] = tuple(schema.columns(schema.CLIENT_HOSTS))
VERIFY_COLUMNS: tuple[str, ...] = ("run_id", "suite", "server", "rep", "passed", "n_pass", "n_fail",
                                   "failed_checks", "lines", "raw_path")
SUITE_COLUMNS: tuple[str, ...] = ("run_id", "suite", "status", "message", "end_utc")

def _of_type(*types: str) -> tuple[str, ...]:
    return tuple(c.name for c in schema.RUNS if c.type in types and not c.optional)


_INT_COLS = _of_type("int")
_NULLABLE_INT_COLS = _of_type("int?")
_NULLABLE_BOOL_COLS = _of_type("bool?")
_FLOAT_COLS = _of_type("float")
_TEXT_COLS = _of_type("str")
_OPTIONAL_TEXT_COLS = _of_type("str?")

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
    return ServerCost(
        window_end=window_end,
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
    writing its per-request database. Taken as the window's wall time less the tool's own duration
    (which runs from its start to the end of the load, connects included). Zero for windows that closed with the load (window_end load_end) and for
    h2load, whose excess wall time is its connection set-up, before its clock starts."""
    if (tool not in ("wrk", "oha") or cost is None or result is None or cost.window_end == "load_end"
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
    result = run.result
    cost = None if not files.has(SERVER_JSON) else server_cost(files.json(SERVER_JSON) or {},
                                                               files.where(SERVER_JSON))
    reasons = fail_reasons(exit_code, result, _alive(run_doc, cost), scen["tool"])
    if run.multi is not None:
        reasons.extend(run.multi.reasons)
    tls_cols, tls_reasons = _tls(files, scen, result)
    reasons.extend(tls_reasons)
    status = _status(reasons, result)
    cols = _result_columns(result)
    tail_s = _window_tail(scen["tool"], cost, run)
    costs = _cost_columns(cost, tail_s, cols["requests"])
    cores = _core_columns(files, run, costs["server_cpu_s"], tail_s)
    position = _int_field(run_doc, "position", files.where(RUN_JSON), minimum=1)
    row: dict[str, Any] = {
        "run_id": run_id, **_scenario_columns(scen), "rep": rep, "status": status, **cols, **costs,
        "raw_path": layout.raw_path(run_id, point.rel, rep), "position": position,
        **{k: cores[k] for k in ("client_cpu_s", "client_busy", "server_busy", "client_bound",
                                 "steal_pct", "foreign_cpu_pct", "noisy", "noisy_reason")},
        "fail_reason": "; ".join(reasons), "start_utc": run_doc.get("start_utc"),
        **tls_cols,
    }
    host_rows: list[dict[str, Any]] = []
    if run.multi is not None:
        row["client_hosts"] = run.n_hosts
        row["client_start_skew_ms"] = 1e3 * run.multi.skew_s
        host_rows = multihost.host_rows(run.multi, row, cores["server_busy"])
    return row, result, host_rows


def infer_positions(rows: list[dict[str, Any]]) -> None:
    """Fill a missing position (runs made before the order was recorded) with the server's rank
    among the servers of its (suite, rep) by the start time of its first point: servers of a rep
    ran one after the other. Rows that recorded their position keep it."""
    firsts: dict[tuple[str, int], dict[str, str]] = {}
    for r in rows:
        if r.get("start_utc"):
            slot = firsts.setdefault((r["suite"], r["rep"]), {})
            if r["server"] not in slot or r["start_utc"] < slot[r["server"]]:
                slot[r["server"]] = r["start_utc"]
    for r in rows:
        if r.get("position") is None and r.get("start_utc"):
            slot = firsts[(r["suite"], r["rep"])]
            ranked = sorted(slot, key=lambda s: (slot[s], s))
            r["position"] = ranked.index(r["server"]) + 1


def empty_runs_frame() -> pd.DataFrame:
    return _typed_runs(pd.DataFrame({c: [] for c in RUNS_COLUMNS}))


def _typed_runs(df: pd.DataFrame, extras: tuple[str, ...] = (), text_extras: tuple[str, ...] = (),
                host_cols: tuple[str, ...] = ()) -> pd.DataFrame:
    for c in extras:
        if c not in df:
            df[c] = math.nan
    for c in text_extras:
        df[c] = df[c].astype(object).where(df[c].notna(), None) if c in df else None
    df = df.loc[:, list(RUNS_COLUMNS) + list(extras) + list(text_extras) + list(host_cols)].copy()
    for c in extras:
        df[c] = df[c].astype("float64")
    if "client_hosts" in host_cols:
        df["client_hosts"] = df["client_hosts"].astype("int64")
    if "client_start_skew_ms" in host_cols:
        df["client_start_skew_ms"] = df["client_start_skew_ms"].astype("float64")
    for c in _INT_COLS:
        df[c] = df[c].astype("int64")
    for c in _NULLABLE_INT_COLS:
        df[c] = pd.array([None if v is None or (isinstance(v, float) and math.isnan(v)) else int(v)
                          for v in df[c]], dtype="Int64")
    for c in _NULLABLE_BOOL_COLS:
        df[c] = pd.array([None if v is None or (isinstance(v, float) and math.isnan(v)) else bool(v)
                          for v in df[c]], dtype="boolean")
    for c in _FLOAT_COLS:
        df[c] = df[c].astype("float64")
    df["tls"] = df["tls"].astype(bool)
    for c in _TEXT_COLS:
        df[c] = df[c].astype(object).astype(str) if len(df) else df[c].astype(object)
    for c in _OPTIONAL_TEXT_COLS:
        df[c] = df[c].astype(object).where(df[c].notna(), None)
    return df.reset_index(drop=True)


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def typed_frame(rows: list[dict[str, Any]], cols: tuple[schema.Column, ...]) -> pd.DataFrame:
    """rows as a frame of the schema's (required) columns, each of its declared type."""
    if not rows:
        return schema.empty_frame(cols)
    df = pd.DataFrame({c.name: [r.get(c.name) for r in rows] for c in cols if not c.optional})
    for c in cols:
        if c.optional:
            continue
        values = list(df[c.name])
        if c.type == "int?":
            df[c.name] = pd.array([None if _missing(v) else int(v) for v in values], dtype="Int64")
        elif c.type == "bool?":
            df[c.name] = pd.array([None if _missing(v) else bool(v) for v in values], dtype="boolean")
        elif c.type in ("str", "str?"):
            df[c.name] = pd.Series([None if _missing(v) else str(v) for v in values], dtype=object)
        else:
            df[c.name] = df[c.name].astype(schema.DTYPES[c.type])
    return df


def empty_client_hosts_frame() -> pd.DataFrame:
    return schema.empty_frame(schema.CLIENT_HOSTS)


def build_frames(run_dir: str | Path, meta: Mapping[str, Any] | None = None
                 ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs, latency) frames for one raw run. Failed runs are kept (status='failed')."""
    runs, latency, _ = build_all_frames(run_dir, meta)
    return runs, latency


def build_all_frames(run_dir: str | Path, meta: Mapping[str, Any] | None = None
                     ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(runs, latency, client_hosts) frames for one raw run; client_hosts has one row per client
    host of every point that several hosts loaded at once (no rows when none did). meta: the
    run's meta.json when the caller has read it (read here otherwise)."""
    run_dir = Path(run_dir)
    run_id = (read_meta(run_dir) if meta is None else meta)["run_id"]
    rows: list[dict[str, Any]] = []
    host_rows: list[dict[str, Any]] = []
    lat_parts: list[pd.DataFrame] = []
    for point in layout.iter_points(run_dir):
        check_scenario(point.scenario, point.scenario_where)
        for rep in point.reps:
            row, result, hosts = _point_row(run_id, point, rep)
            rows.append(row)
            host_rows += hosts
            if result is not None and len(result.hist_values_us):
                # The stored curve is coarsened (≤ 0.5 % per value); the run's percentiles
                # above were taken from the full histogram.
                values, counts = coarsen_histogram(result.hist_values_us, result.hist_counts)
                n = len(values)
                lat_parts.append(pd.DataFrame({
                    "run_id": [run_id] * n, "suite": [row["suite"]] * n,
                    "server": [row["server"]] * n, "scenario": [row["scenario"]] * n,
                    "rep": np.full(n, rep, dtype=np.int64),
                    "latency_us": values,
                    "count": counts.astype(np.int64),
                }))
    extras = tuple(c for c in EXTRA_COLUMNS if any(c in r for r in rows))
    text_extras = tuple(c for c in TEXT_EXTRA_COLUMNS if any(c in r for r in rows))
    host_cols = HOST_COLUMNS if host_rows else ()
    for r in rows if host_rows else ():
        r.setdefault("client_hosts", 1)
        r.setdefault("client_start_skew_ms", 0.0)
    if rows:
        infer_positions(rows)
    runs = _typed_runs(pd.DataFrame(rows), extras, text_extras, host_cols) if rows else empty_runs_frame()
    runs = runs.sort_values(["suite", "scenario", "server", "rep"], kind="stable").reset_index(drop=True)
    if lat_parts:
        latency = pd.concat(lat_parts, ignore_index=True)
    else:
        latency = pd.DataFrame({"run_id": pd.Series([], dtype=object), "suite": pd.Series([], dtype=object),
                                "server": pd.Series([], dtype=object), "scenario": pd.Series([], dtype=object),
                                "rep": pd.Series([], dtype="int64"), "latency_us": pd.Series([], dtype="float64"),
                                "count": pd.Series([], dtype="int64")})
    clients = typed_frame(host_rows, schema.CLIENT_HOSTS)
    clients = clients.sort_values(["suite", "scenario", "server", "rep", "host"], kind="stable").reset_index(drop=True)
    return runs, latency.loc[:, list(LATENCY_COLUMNS)], clients


# ---------------------------------------------------------------- verify gates and suites
def parse_verify(text: str) -> tuple[list[str], list[str], list[str]]:
    """(all non-blank lines, PASS lines, FAIL lines) of a verify transcript. Lines that start with
    neither PASS nor FAIL are kept as notes; a transcript with no check at all does not pass."""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    passes = [ln for ln in lines if ln.lstrip().startswith("PASS")]
    fails = [ln for ln in lines if ln.lstrip().startswith("FAIL")]
    return lines, passes, fails


def load_verify(run_dir: str | Path, meta: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """One row per (suite, server, rep) verify gate: passed, counts, the failed checks, all lines."""
    run_dir = Path(run_dir)
    run_id = (read_meta(run_dir) if meta is None else meta)["run_id"]
    rows = []
    for vf in layout.verify_files(run_dir):
        lines, passes, fails = parse_verify(vf.text)
        rows.append({
            "run_id": run_id, "suite": vf.part, "server": vf.server,
            "rep": vf.rep, "passed": bool(passes) and not fails,
            "n_pass": len(passes), "n_fail": len(fails),
            "failed_checks": "\n".join(fails) if fails else ("" if passes else "no check recorded"),
            "lines": "\n".join(lines), "raw_path": vf.raw_path,
        })
    df = pd.DataFrame(rows, columns=list(VERIFY_COLUMNS))
    return df.sort_values(["suite", "server", "rep"], kind="stable").reset_index(drop=True)


def load_suites(run_dir: str | Path, meta: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """One row per suite directory: status from suite.json, or 'incomplete' when it is missing."""
    run_dir = Path(run_dir)
    meta = read_meta(run_dir) if meta is None else meta
    rows = []
    for suite in sorted(layout.part_names(run_dir, meta)):
        found = layout.suite_status(run_dir, suite)
        if found is not None:
            doc, where = found
            rows.append({"run_id": meta["run_id"], "suite": suite,
                         "status": str(require(doc, "status", where, str)),
                         "message": str(doc.get("message") or ""), "end_utc": doc.get("end_utc")})
        else:
            rows.append({"run_id": meta["run_id"], "suite": suite, "status": "incomplete",
                         "message": "no suite.json (suite not finished)", "end_utc": None})
    return pd.DataFrame(rows, columns=list(SUITE_COLUMNS))


# ---------------------------------------------------------------- everything at once
@dataclass(frozen=True, eq=False)
class RawRun:
    run_dir: Path
    meta: dict[str, Any]
    runs: pd.DataFrame
    latency: pd.DataFrame
    verify: pd.DataFrame
    suites: pd.DataFrame
    # one row per client host of the points that several hosts loaded at once (no rows otherwise)
    client_hosts: pd.DataFrame = field(default_factory=empty_client_hosts_frame)
    # what the reports say beyond the frames: per part its host states, hosts, certificate and
    # commands (tidy.facts; data/<run_id>/run.json)
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def run_id(self) -> str:
        return str(self.meta["run_id"])

    def frames(self) -> dict[str, pd.DataFrame]:
        """The tidy frames (docs/data.md) for write_tidy; client_hosts only when the run has rows for
        it (a run of one-host points writes the same files as before several hosts existed)."""
        frames = {"runs": self.runs, "latency": self.latency}
        if len(self.client_hosts):
            frames["client_hosts"] = self.client_hosts
        return frames

    def suite(self, name: str) -> "RawRun":
        """The same run restricted to one suite."""
        return self.suites_named([name])

    def suites_named(self, names: Sequence[str]) -> "RawRun":
        """The same run restricted to these suites (the latency report reads three)."""
        wanted = list(names)

        def pick(df: pd.DataFrame) -> pd.DataFrame:
            return df[df["suite"].isin(wanted)].reset_index(drop=True) if "suite" in df else df
        runs = pick(self.runs)
        # tool-specific columns that carry nothing for this suite are dropped (so an http1 suite
        # of a run that also has an h2c suite keeps exactly RUNS_COLUMNS)
        empty_extras = [c for c in EXTRA_COLUMNS + TEXT_EXTRA_COLUMNS if c in runs and runs[c].isna().all()]
        clients = pick(self.client_hosts)
        if not len(clients):   # no point of these suites was loaded through per-host files
            empty_extras += [c for c in HOST_COLUMNS if c in runs]
        runs = runs.drop(columns=empty_extras)
        facts = {"parts": {k: v for k, v in self.facts.get("parts", {}).items() if k in wanted}}
        return RawRun(self.run_dir, self.meta, runs, pick(self.latency),
                      pick(self.verify), pick(self.suites), clients, facts)

    def part_facts(self, part: str) -> dict[str, Any]:
        """One part's facts ({} for a part the run has none of)."""
        return self.facts.get("parts", {}).get(part) or {}


def load_run(run_dir: str | Path) -> RawRun:
    """The run's frames. A packed run (suites as <server>.tar.xz, see rawpack) is read through
    rawpack.readable_view, so it loads exactly as unpacked: RawRun.run_dir and every raw_path stay
    those of run_dir, and a malformed file is named by its archive and member."""
    run_dir = Path(run_dir)
    meta = read_meta(run_dir)
    view = readable_view(run_dir)
    try:
        runs, latency, clients = build_all_frames(view, meta)
        verify, suites = load_verify(view, meta), load_suites(view, meta)
        parts = sorted({*map(str, runs["suite"]), *map(str, suites["suite"])} if len(suites) else set(map(str, runs["suite"])))
        facts = run_facts(view, parts, runs)
    except RawFormatError as exc:
        raise relocate_error(exc, view, run_dir) from exc
    return RawRun(run_dir, meta, runs, latency, verify, suites, clients, facts)


def write_tidy(frames: Mapping[str, pd.DataFrame], out_dir: str | Path, csv: bool | None = None
               ) -> list[Path]:
    """Write each frame as <name>.parquet under out_dir (created), and <name>.csv beside it only on
    request: csv=True, or csv=None and the environment variable HTTPLAB_CSV=1 (`python -m
    httplab.tidy.to_csv data/<run_id>` makes the CSVs of written frames later). Without CSV, a
    <name>.csv left from an earlier write is removed (it would disagree with the parquet file).
    Returns the paths written."""
    if csv is None:
        csv = os.environ.get("HTTPLAB_CSV", "").strip().lower() in ("1", "true", "yes")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, df in frames.items():
        pq, csv_path = out / f"{name}.parquet", out / f"{name}.csv"
        if name in schema.FRAMES or name in schema.OPTIONAL_FRAMES:
            schema.validate(df, name, str(pq))
        df.to_parquet(pq, index=False)
        written.append(pq)
        if csv:
            df.to_csv(csv_path, index=False)
            written.append(csv_path)
        else:
            csv_path.unlink(missing_ok=True)
    return written
