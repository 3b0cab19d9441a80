"""Walk a raw run directory (raw/<run_id>/...) and build the tidy frames (docs/data.md).

Layout (the contract with the shell scripts):
    raw/<run_id>/meta.json
    raw/<run_id>/<suite>/suite.json
    raw/<run_id>/<suite>/<server>/verify.r<rep>.txt
    raw/<run_id>/<suite>/<server>/<scenario>/scenario.json
    raw/<run_id>/<suite>/<server>/<scenario>/r<rep>.{stdout.txt,stderr.txt,wrk.json,server.json,run.json}
A rep is finished when r<rep>.run.json exists (written last); unfinished reps are skipped.
A point that several client hosts loaded at once (scenario.json "client_hosts" ≥ 2; "client_layout":
"per_host", which an inventory's one client machine has too) has the load tool's files per host,
r<rep>.h<I>.*, merged into its one runs row by httplab.tidy.multihost; each host's own figures are
the client_hosts frame.
"""
from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..parse.errors import RawFormatError
from ..parse.jsonio import read_json_object, require
from ..parse.loaders import loader_for
from ..parse.loadresult import LoadResult
from . import bounds, multihost, schema
from ..parse.cpuwindow import WindowCpu, server_window_cpu, window_cpu
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

_REP_RE = re.compile(r"r(\d+)\.run\.json")
_VERIFY_RE = re.compile(r"verify\.r(\d+)\.txt")


# ---------------------------------------------------------------- small readers
def read_meta(run_dir: str | Path) -> dict[str, Any]:
    """raw/<run_id>/meta.json as a dict (RawFormatError if missing keys run_id/complete)."""
    path = Path(run_dir) / "meta.json"
    meta = read_json_object(path)
    require(meta, "run_id", path, str)
    meta.setdefault("complete", False)
    return meta


def read_scenario(scenario_dir: Path) -> dict[str, Any]:
    path = scenario_dir / "scenario.json"
    doc = read_json_object(path)
    for key, types in SCENARIO_KEYS.items():
        require(doc, key, path, types)
    return doc


def finished_reps(scenario_dir: Path) -> list[int]:
    """Reps whose r<rep>.run.json exists (the finished ones), ascending."""
    reps = []
    for p in scenario_dir.iterdir():
        m = _REP_RE.fullmatch(p.name)
        if m:
            reps.append(int(m.group(1)))
    return sorted(reps)


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


def _opt_float(doc: dict[str, Any], key: str, path: Path) -> float:
    value = doc.get(key)
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RawFormatError(path, f"unexpected value {value!r}", key=key)
    return float(value)


def read_server_cost(path: Path) -> ServerCost | None:
    """r<rep>.server.json -> CPU seconds of the process tree over the window, RSS; None if absent."""
    if not path.is_file():
        return None
    doc = read_json_object(path)
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


# ---------------------------------------------------------------- walking
@dataclass(frozen=True)
class PointDir:
    suite: str
    server: str
    scenario_dir: Path


def iter_scenario_dirs(run_dir: Path) -> Iterator[Path]:
    """Every raw/<run_id>/<suite>/<server>/<scenario>/ that has a scenario.json, sorted."""
    for path in sorted(run_dir.glob("*/*/*/scenario.json")):
        yield path.parent


def _cpu_columns(win: WindowCpu | None) -> dict[str, Any]:
    """The runs row's core figures of a one-host point (r<rep>.cpu.json, cpuwindow.window_cpu)."""
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


def _point_row(run_id: str, run_dir: Path, scenario_dir: Path, scen: dict[str, Any], rep: int
               ) -> tuple[dict[str, Any], LoadResult | None, list[dict[str, Any]]]:
    """The runs row of one rep of a point, its LoadResult (for the latency frame) and, when
    several client hosts loaded it, its client_hosts rows (else [])."""
    run_json_path = scenario_dir / f"r{rep}.run.json"
    run_json = read_json_object(run_json_path)
    exit_code = run_json.get("exit_code")
    if exit_code is not None and (isinstance(exit_code, bool) or not isinstance(exit_code, int)):
        raise RawFormatError(run_json_path, f"unexpected value {exit_code!r}", key="exit_code")
    tool = scen["tool"]
    scen_path = scenario_dir / "scenario.json"
    n_hosts = multihost.client_hosts_of(scen, scen_path)
    multi = (multihost.load_multi_point(scenario_dir, rep, scen, n_hosts)
             if multihost.per_host_layout(scen, scen_path) else None)
    result = multi.result if multi is not None else loader_for(tool)(scenario_dir, rep)
    cost = read_server_cost(scenario_dir / f"r{rep}.server.json")
    alive_flags = [run_json.get("server_alive"), cost.alive if cost else None]
    alive = False if any(a is False for a in alive_flags) else (
        True if any(a is True for a in alive_flags) else None)
    reasons = fail_reasons(exit_code, result, alive, tool)
    if multi is not None:
        reasons.extend(multi.reasons)
    tls_cols: dict[str, str | None] = {}
    if scen["tls"]:
        from ..parse.tls_info import point_tls
        tls_cols, tls_reasons = point_tls(scenario_dir, rep, scen, result.text if result else None)
        reasons.extend(tls_reasons)

    status = "failed" if reasons else "ok"
    if status == "ok" and result is not None:
        saturated = bounds.saturation_reason(result.req_per_s, result.extra.get("target_rps"))
        if saturated:
            status = "saturated"
            reasons.append(saturated)
    requests = float(result.requests) if result else math.nan
    if result is not None and result.hist_counts.sum() > 0:
        p50, p90, p99, p999 = weighted_percentiles(result.hist_values_us, result.hist_counts,
                                                   [50, 90, 99, 99.9])
    else:
        p50 = p90 = p99 = p999 = math.nan
    cpu_s = cost.cpu_s if cost else math.nan
    tail_s = (window_tail_s(tool, cost, result) if multi is None
              else multihost.outside_load_s(multi, tool, cost.wall_s if cost else math.nan))
    window_s = cost.wall_s - tail_s if cost else math.nan
    cpu_pct = 100.0 * cpu_s / window_s if cost and window_s > 0 else math.nan
    cpu_us_per_req = 1e6 * cpu_s / requests if requests and requests > 0 else math.nan
    if multi is None:
        cpu_cols = _cpu_columns(window_cpu(scenario_dir, rep, cpu_s, tail_s))
    else:
        cpu_cols = multihost.cpu_columns(multi, server_window_cpu(scenario_dir, rep, cpu_s, tail_s))
    position = run_json.get("position")
    if position is not None and (isinstance(position, bool) or not isinstance(position, int) or position < 1):
        raise RawFormatError(run_json_path, f"unexpected value {position!r}", key="position")
    server = scen["server"]
    rel = scenario_dir.relative_to(run_dir)
    row: dict[str, Any] = {
        "run_id": run_id, "suite": scen["suite"], "protocol": scen["protocol"], "tls": scen["tls"],
        "server": scen["server"], "route": scen["route"], "method": scen["method"],
        "size_bytes": scen["size_bytes"], "connections": scen["connections"],
        "streams": scen["streams"], "client_threads": scen["client_threads"],
        "duration_s": float(scen["duration_s"]), "rep": rep,
        "status": status,
        "requests": requests,
        "req_per_s": result.req_per_s if result else math.nan,
        "bytes_per_s": result.bytes_per_s if result else math.nan,
        "lat_mean_us": result.lat_mean_us if result else math.nan,
        "lat_p50_us": p50, "lat_p90_us": p90, "lat_p99_us": p99, "lat_p999_us": p999,
        "lat_max_us": result.lat_max_us if result else math.nan,
        "errors": float(result.total_errors) if result else math.nan,
        "server_cpu_s": cpu_s, "cpu_pct": cpu_pct, "cpu_us_per_req": cpu_us_per_req,
        "rss_peak_kb": cost.rss_peak_kb if cost else math.nan,
        "raw_path": f"{run_id}/{rel.as_posix()}/r{rep}",
        "position": position,
        "client_cpu_s": cpu_cols["client_cpu_s"],
        "client_busy": cpu_cols["client_busy"],
        "server_busy": cpu_cols["server_busy"],
        "client_bound": cpu_cols["client_bound"],
        "steal_pct": cpu_cols["steal_pct"], "foreign_cpu_pct": cpu_cols["foreign_cpu_pct"],
        "noisy": cpu_cols["noisy"],
        "rss_start_kb": cost.rss_start_kb if cost else math.nan,
        "scenario": scen["scenario"], "pipeline": scen["pipeline"],
        "fail_reason": "; ".join(reasons), "hist_kind": result.hist_kind if result else "none",
        "capacity_rps": 1e6 / cpu_us_per_req if cpu_us_per_req and cpu_us_per_req > 0 else math.nan,
        "rss_warm_kb": cost.rss_warm_kb if cost else math.nan,
        "rss_peak_method": cost.rss_peak_method if cost else "none",
        "noisy_reason": cpu_cols["noisy_reason"],
        "aa_of": aa_of(server),
        "start_utc": run_json.get("start_utc"),
        "window_s": window_s,
        "window_end": ("none" if cost is None else "tool_exit_corrected" if tail_s > 0
                       else cost.window_end),
    }
    row.update(tls_cols)
    for col in TOOL_TEXT_COLUMNS:
        if result is not None and result.text.get(col) is not None:
            row[col] = result.text[col]
    for col in EXTRA_COLUMNS:
        if result is not None and col in result.extra:
            value = result.extra[col]
            row[col] = math.nan if value is None else float(value)
    host_rows: list[dict[str, Any]] = []
    if multi is not None:
        row["client_hosts"] = n_hosts
        row["client_start_skew_ms"] = 1e3 * multi.skew_s
        host_rows = multihost.host_rows(multi, row, cpu_cols["server_busy"])
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


def build_frames(run_dir: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs, latency) frames for one raw run. Failed runs are kept (status='failed')."""
    runs, latency, _ = build_all_frames(run_dir)
    return runs, latency


def build_all_frames(run_dir: str | Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(runs, latency, client_hosts) frames for one raw run; client_hosts has one row per client
    host of every point that several hosts loaded at once (no rows when none did)."""
    run_dir = Path(run_dir)
    meta = read_meta(run_dir)
    run_id = meta["run_id"]
    rows: list[dict[str, Any]] = []
    host_rows: list[dict[str, Any]] = []
    lat_parts: list[pd.DataFrame] = []
    for scenario_dir in iter_scenario_dirs(run_dir):
        scen = read_scenario(scenario_dir)
        for rep in finished_reps(scenario_dir):
            row, result, hosts = _point_row(run_id, run_dir, scenario_dir, scen, rep)
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


def load_verify(run_dir: str | Path) -> pd.DataFrame:
    """One row per (suite, server, rep) verify gate: passed, counts, the failed checks, all lines."""
    run_dir = Path(run_dir)
    run_id = read_meta(run_dir)["run_id"]
    rows = []
    for path in sorted(run_dir.glob("*/*/verify.r*.txt")):
        m = _VERIFY_RE.fullmatch(path.name)
        if not m:
            continue
        lines, passes, fails = parse_verify(path.read_text(encoding="utf-8", errors="replace"))
        rows.append({
            "run_id": run_id, "suite": path.parent.parent.name, "server": path.parent.name,
            "rep": int(m.group(1)), "passed": bool(passes) and not fails,
            "n_pass": len(passes), "n_fail": len(fails),
            "failed_checks": "\n".join(fails) if fails else ("" if passes else "no check recorded"),
            "lines": "\n".join(lines), "raw_path": path.relative_to(run_dir.parent).as_posix(),
        })
    df = pd.DataFrame(rows, columns=list(VERIFY_COLUMNS))
    return df.sort_values(["suite", "server", "rep"], kind="stable").reset_index(drop=True)


def load_suites(run_dir: str | Path) -> pd.DataFrame:
    """One row per suite directory: status from suite.json, or 'incomplete' when it is missing."""
    run_dir = Path(run_dir)
    meta = read_meta(run_dir)
    names = set(meta.get("suites") or []) | {p.parent.name for p in run_dir.glob("*/suite.json")} | {
        p.parent.parent.parent.name for p in run_dir.glob("*/*/*/scenario.json")}
    rows = []
    for suite in sorted(names):
        path = run_dir / suite / "suite.json"
        if path.is_file():
            doc = read_json_object(path)
            rows.append({"run_id": meta["run_id"], "suite": suite,
                         "status": str(require(doc, "status", path, str)),
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
        runs, latency, clients = build_all_frames(view)
        verify, suites = load_verify(view), load_suites(view)
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
