"""Human labels for scenarios and the table layout of each suite (which runs go in which table)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .aggregate import Where, select
from .fmt import fmt_size


def scenario_label(row: Mapping[str, Any], batch_note: bool = True) -> str:
    """'GET /echo 1 KiB, 100 conns' / 'GET /ping, 100 conns, pipeline 16 (latency per batch)'."""
    parts = [f"{row['method']} {row['route']}"]
    size = row.get("size_bytes", 0)
    head = parts[0] + (f" {fmt_size(size)}" if size else "")
    extra = [f"{int(row['connections'])} conns"]
    if int(row.get("streams", 1) or 1) > 1:
        extra.append(f"{int(row['streams'])} streams")
    if int(row.get("pipeline", 1) or 1) > 1:
        extra.append(f"pipeline {int(row['pipeline'])}" + (" (latency per batch)" if batch_note else ""))
    return ", ".join([head] + extra)


_ROUTE_ORDER = {("GET", "/ping"): 0, ("GET", "/echo"): 1, ("POST", "/echo"): 2}


def scenario_sort_key(row: Mapping[str, Any]) -> tuple:
    """Seed order: GET /ping, GET /echo, POST /echo, others; pipelined last; then size, connections."""
    return (int(row.get("pipeline", 1) or 1) > 1, _ROUTE_ORDER.get((row["method"], row["route"]), 3),
            str(row["method"]), str(row["route"]), int(row.get("size_bytes", 0)),
            int(row.get("connections", 0)), str(row.get("scenario", "")))


def scenario_labels(runs: pd.DataFrame) -> dict[str, str]:
    """scenario id -> label, from the first run of each scenario."""
    out: dict[str, str] = {}
    for _, row in runs.drop_duplicates("scenario").iterrows():
        out[str(row["scenario"])] = scenario_label(row)
    return out


@dataclass(frozen=True)
class Section:
    """One seed-style table: the runs it covers and the column that varies along its rows."""
    key: str
    title: str
    where: Where
    vary: str
    vary_label: str
    transfer: bool = False
    note: str = ""
    fixed: dict[str, Any] = field(default_factory=dict)  # filters chosen from the data, for the prose


def _common_connections(runs: pd.DataFrame, prefer: int = 100) -> int | None:
    if runs.empty:
        return None
    conns = runs["connections"].unique().tolist()
    if prefer in conns:
        return prefer
    return int(runs["connections"].value_counts().idxmax())


def http1_sections(runs: pd.DataFrame) -> list[Section]:
    """Seed 000's tables, defined on scenario columns (not on scenario names):
    GET /ping by connections; GET /echo by size at 100 connections; POST /echo by body size
    (with Transfer/s); pipelined GET /ping. Connections for the /echo tables: 100 when present,
    else the most common value in the data."""
    not_pipelined = {"pipeline": lambda s: s <= 1}
    get_echo = select(runs, {"method": "GET", "route": "/echo", **not_pipelined})
    post_echo = select(runs, {"method": "POST", "route": "/echo", **not_pipelined})
    c_get, c_post = _common_connections(get_echo), _common_connections(post_echo)
    pipelined = select(runs, {"pipeline": lambda s: s > 1})
    depths = sorted(int(d) for d in pipelined["pipeline"].unique()) if not pipelined.empty else []
    depth_txt = "/".join(str(d) for d in depths) or "N"
    return [
        Section("ping", "GET /ping — minimal response", {"method": "GET", "route": "/ping", **not_pipelined},
                "connections", "Connections"),
        Section("echo_get", f"GET /echo — response size ({c_get or 100} connections)",
                {"method": "GET", "route": "/echo", "connections": c_get, **not_pipelined},
                "size_bytes", "Response size", fixed={"connections": c_get}),
        Section("echo_post", f"POST /echo — request body ({c_post or 100} connections)",
                {"method": "POST", "route": "/echo", "connections": c_post, **not_pipelined},
                "size_bytes", "Body size", transfer=True, fixed={"connections": c_post}),
        Section("pipeline", f"GET /ping pipelined ({depth_txt} deep)",
                {"route": "/ping", "pipeline": lambda s: s > 1}, "connections", "Connections",
                note="wrk records one latency sample per pipelined batch, so latency here is per "
                     "batch, not per request."),
    ]


def h2c_sections(runs: pd.DataFrame) -> list[Section]:
    """Seed 001's tables (h2load, -m streams per connection): GET /ping by connections; GET /echo
    by size and POST /echo by body size (with Transfer/s) at 100 connections (else the most common
    value in the data). Same Section shape as http1_sections, so tables/plots/summary serve both."""
    get_echo = select(runs, {"method": "GET", "route": "/echo"})
    post_echo = select(runs, {"method": "POST", "route": "/echo"})
    c_get, c_post = _common_connections(get_echo), _common_connections(post_echo)
    streams = sorted(int(s) for s in runs["streams"].unique()) if not runs.empty else []
    s_txt = "/".join(str(s) for s in streams) or "N"
    note = (f"h2load -m {s_txt}: up to {s_txt} concurrent streams per connection; latency is per "
            "stream (request), from the latency run's log.")
    return [
        Section("ping", "GET /ping — minimal response", {"method": "GET", "route": "/ping"},
                "connections", "Connections", note=note),
        Section("echo_get", f"GET /echo — response size ({c_get or 100} connections)",
                {"method": "GET", "route": "/echo", "connections": c_get},
                "size_bytes", "Response size", note=note, fixed={"connections": c_get}),
        Section("echo_post", f"POST /echo — request body ({c_post or 100} connections)",
                {"method": "POST", "route": "/echo", "connections": c_post},
                "size_bytes", "Body size", transfer=True, note=note, fixed={"connections": c_post}),
    ]


SUITE_SECTIONS = {"http1": http1_sections, "h2c": h2c_sections}


def suite_sections(suite: str, runs: pd.DataFrame) -> list[Section]:
    """The table layout of a suite ("http1", "h2c"); ValueError for a suite without one."""
    try:
        return SUITE_SECTIONS[suite](runs)
    except KeyError:
        raise ValueError(f"no table layout for suite {suite!r} (known: {sorted(SUITE_SECTIONS)})") from None


def uncovered(runs: pd.DataFrame, sections: list[Section]) -> pd.DataFrame:
    """Runs that fall in none of the sections (shown in an 'other scenarios' table)."""
    if runs.empty:
        return runs
    covered = pd.Series(False, index=runs.index)
    for s in sections:
        covered[select(runs, s.where).index] = True
    return runs[~covered]
