"""Human labels for scenarios and the table layout of each suite (which runs go in which table)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..lab.suites import suite_of_part
from ..stats.select import Where, select
from .fmt import fmt_size


def scenario_label(row: Mapping[str, Any], batch_note: bool = True) -> str:
    """'GET /echo 1 KiB, 100 conns' / 'GET /ping, 100 conns, pipeline 16 (latency per batch)'."""
    parts = [f"{row['method']} {row['route']}"]
    size = row.get("size_bytes", 0)
    head = parts[0] + (f" {fmt_size(size)}" if size else "")
    if bool(row.get("tls", False)):  # the https suite mixes HTTPS/1.1 and HTTPS/2
        head = ("HTTPS/2 " if row.get("protocol") == "h2" else "HTTPS/1.1 ") + head
    extra = [f"{int(row['connections'])} conns"]
    if is_close_scenario(row):
        extra.append("Connection: close")
    if int(row.get("streams", 1) or 1) > 1:
        extra.append(f"{int(row['streams'])} streams")
    if int(row.get("pipeline", 1) or 1) > 1:
        extra.append(f"pipeline {int(row['pipeline'])}" + (" (latency per batch)" if batch_note else ""))
    return ", ".join([head] + extra)


_ROUTE_ORDER = {("GET", "/ping"): 0, ("GET", "/echo"): 1, ("POST", "/echo"): 2,
                # the languages suite, in seed 003's order (others sort as 3)
                ("GET", "/"): 4, ("POST", "/something"): 5, ("GET", "/something?json=true"): 6,
                ("GET", "/something?foo=bar"): 7}


def is_close_scenario(row: Mapping[str, Any]) -> bool:
    """A scenario that sends `Connection: close` on every request: by convention its id has a
    `_close` part (languages suite: get_root_close_c100)."""
    return "_close" in str(row.get("scenario", ""))


def scenario_sort_key(row: Mapping[str, Any]) -> tuple:
    """Seed order: GET /ping, GET /echo, POST /echo, others; pipelined last; then size, connections."""
    return (int(row.get("pipeline", 1) or 1) > 1, str(row.get("protocol", "")), is_close_scenario(row),
            _ROUTE_ORDER.get((row["method"], row["route"]), 3),
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


def https_sections(runs: pd.DataFrame) -> list[Section]:
    """Seed 002's tables: HTTPS/1.1 (wrk) GET /ping by connections and GET /echo 1 KiB; HTTPS/2
    (h2load with ALPN h2) GET /ping by connections, GET /echo by size and POST /echo by body size
    (with Transfer/s). The protocol column splits the suite in two."""
    h1 = {"protocol": "h1", "tls": True}
    h2 = {"protocol": "h2", "tls": True}
    c_h1 = _common_connections(select(runs, {**h1, "method": "GET", "route": "/echo"}))
    c_get = _common_connections(select(runs, {**h2, "method": "GET", "route": "/echo"}))
    c_post = _common_connections(select(runs, {**h2, "method": "POST", "route": "/echo"}))
    h2_runs = select(runs, h2)
    streams = sorted(int(s) for s in h2_runs["streams"].unique()) if not h2_runs.empty else []
    s_txt = "/".join(str(s) for s in streams) or "N"
    note = (f"h2load -m {s_txt} over TLS (ALPN h2): up to {s_txt} concurrent streams per connection; "
            "latency is per stream, from the latency run's log.")
    return [
        Section("h1_ping", "HTTPS/1.1 GET /ping — by connections",
                {**h1, "method": "GET", "route": "/ping", "pipeline": lambda s: s <= 1},
                "connections", "Connections"),
        Section("h1_echo", f"HTTPS/1.1 GET /echo — response size ({c_h1 or 100} connections)",
                {**h1, "method": "GET", "route": "/echo", "connections": c_h1}, "size_bytes",
                "Response size", fixed={"connections": c_h1}),
        Section("h2_ping", "HTTPS/2 GET /ping — by connections", {**h2, "method": "GET", "route": "/ping"},
                "connections", "Connections", note=note),
        Section("h2_echo_get", f"HTTPS/2 GET /echo — response size ({c_get or 100} connections)",
                {**h2, "method": "GET", "route": "/echo", "connections": c_get}, "size_bytes",
                "Response size", note=note, fixed={"connections": c_get}),
        Section("h2_echo_post", f"HTTPS/2 POST /echo — request body ({c_post or 100} connections)",
                {**h2, "method": "POST", "route": "/echo", "connections": c_post}, "size_bytes",
                "Body size", transfer=True, note=note, fixed={"connections": c_post}),
    ]


# The languages suite's endpoints (seed 003), by scenario id: (key, title). Its tables are built
# by report.languages (one table per endpoint, every server a row), not by comparison_table.
LANGUAGE_ENDPOINTS: dict[str, tuple[str, str]] = {
    "get_root_c100": ("root", "Root endpoint (GET /)"),
    "post_json_c100": ("post", "POST endpoint (POST /something, JSON body)"),
    "get_json_c100": ("json", "JSON endpoint (GET /something?json=true)"),
    "get_query_c100": ("query", "Query endpoint (GET /something?foo=bar)"),
    "get_root_close_c100": ("close", "Connection: close (GET /, a new connection per request)"),
}


def languages_sections(runs: pd.DataFrame) -> list[Section]:
    """One section per endpoint of seed 003 (by scenario id), in the seed's order."""
    return [Section(key, title, {"scenario": scen}, "scenario", "Endpoint")
            for scen, (key, title) in LANGUAGE_ENDPOINTS.items()]


SUITE_SECTIONS = {"http1": http1_sections, "h2c": h2c_sections, "https": https_sections,
                  "languages": languages_sections}


def declared_sections(part: str) -> list[Section]:
    """The [[sections]] of the suite that `part` belongs to (its suite.toml): fixed filters, as a
    suite without layout code of its own declares them."""
    s = suite_of_part(part)
    if s is None:
        return []
    return [Section(str(d["key"]), str(d["title"]), dict(d["where"]), str(d["vary"]),
                    str(d.get("vary_label", d["vary"])), transfer=bool(d.get("transfer", False)),
                    note=str(d.get("note", ""))) for d in s.sections]


def suite_sections(suite: str, runs: pd.DataFrame) -> list[Section]:
    """The table layout of a suite's part ("http1", "h2c"): its layout code, else the sections its
    suite.toml declares; ValueError for a part with neither."""
    if suite in SUITE_SECTIONS:
        return SUITE_SECTIONS[suite](runs)
    declared = declared_sections(suite)
    if declared:
        return declared
    raise ValueError(f"no table layout for suite {suite!r} (known: {sorted(SUITE_SECTIONS)}; "
                     "or declare [[sections]] in its suite.toml)")


def uncovered(runs: pd.DataFrame, sections: list[Section]) -> pd.DataFrame:
    """Runs that fall in none of the sections (shown in an 'other scenarios' table)."""
    if runs.empty:
        return runs
    covered = pd.Series(False, index=runs.index)
    for s in sections:
        covered[select(runs, s.where).index] = True
    return runs[~covered]
