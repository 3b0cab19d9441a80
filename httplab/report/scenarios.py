"""Human labels for scenarios and the table layout of each suite (which runs go in which table)."""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..lab.suites import has_module, suite_module, suite_of_part
from ..stats.select import Where, select
from .fmt import fmt_size


_TLS_PROTOCOL_LABEL = {"h2": "HTTPS/2 ", "h3": "HTTP/3 "}


def scenario_label(row: Mapping[str, Any], batch_note: bool = True) -> str:
    """'GET /echo 1 KiB, 100 conns' / 'GET /ping, 100 conns, pipeline 16 (latency per batch)'."""
    parts = [f"{row['method']} {row['route']}"]
    size = row.get("size_bytes", 0)
    head = parts[0] + (f" {fmt_size(size)}" if size else "")
    if bool(row.get("tls", False)):  # the https suite mixes HTTPS/1.1 and HTTPS/2; h3's QUIC is TLS too
        head = _TLS_PROTOCOL_LABEL.get(str(row.get("protocol")), "HTTPS/1.1 ") + head
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


def common_connections(runs: pd.DataFrame, prefer: int = 100) -> int | None:
    if runs.empty:
        return None
    conns = runs["connections"].unique().tolist()
    if prefer in conns:
        return prefer
    return int(runs["connections"].value_counts().idxmax())


def declared_sections(part: str) -> list[Section]:
    """The [[sections]] of the suite that `part` belongs to (its suite.toml): fixed filters, as a
    suite without layout code of its own declares them."""
    s = suite_of_part(part)
    if s is None:
        return []
    return [Section(str(d["key"]), str(d["title"]), dict(d["where"]), str(d["vary"]),
                    str(d.get("vary_label", d["vary"])), transfer=bool(d.get("transfer", False)),
                    note=str(d.get("note", ""))) for d in s.sections]


def suite_sections(part: str, runs: pd.DataFrame) -> list[Section]:
    """The table layout of a suite's part, for this run's data: its suite's own `table_layout(runs)`
    (suites/<name>/report.py), else the [[sections]] its suite.toml declares; ValueError for a part
    with neither."""
    s = suite_of_part(part)
    if s is not None and has_module(s.name):
        layout = getattr(suite_module(s.name), "table_layout", None)
        if layout is not None:
            return list(layout(runs))
    declared = declared_sections(part)
    if declared:
        return declared
    raise ValueError(f"no table layout for suite {part!r}: give its suite a table_layout(runs) in report.py "
                     "or [[sections]] in its suite.toml")


def uncovered(runs: pd.DataFrame, sections: list[Section]) -> pd.DataFrame:
    """Runs that fall in none of the sections (shown in an 'other scenarios' table)."""
    if runs.empty:
        return runs
    covered = pd.Series(False, index=runs.index)
    for s in sections:
        covered[select(runs, s.where).index] = True
    return runs[~covered]


# ---------------------------------------------------------------- a scenario id in words

# The ids the suites' matrices give their scenarios ([h1_|h2_]method_route[_s<bytes>|_b<bytes>]
# [_close][_pipe<n>]_c<conns>[_m<streams>]), so that a text that carries only the id (the claim
# ledger's points, a history series) can be printed in the words of the tables. The routes are the
# matrices' paths; an id outside the pattern is printed as it is.
_ID = re.compile(r"\b(?:(?P<part>[a-z0-9]+)/)?(?:(?P<tls>h[12])_)?(?P<method>get|post)_(?P<route>[a-z]+)"
                 r"(?:_s(?P<size>\d+)|_b(?P<body>\d+))?(?P<close>_close)?(?:_pipe(?P<pipe>\d+))?"
                 r"_c(?P<conns>\d+)(?:_m(?P<streams>\d+))?\b")
_ROUTE_PATH = {("GET", "root"): "/", ("GET", "query"): "/something?foo=bar",
               ("GET", "json"): "/something?json=true", ("POST", "json"): "/something"}
_PART_WORDS = {"http1": "HTTP/1.1 ", "h2c": "h2c ", "h3": "HTTP/3 "}   # https's ids carry h1_/h2_


def _id_words(m: re.Match[str]) -> str:
    method = m["method"].upper()
    head = _PART_WORDS.get(m["part"] or "", "")
    head += {"h1": "HTTPS/1.1 ", "h2": "HTTPS/2 "}.get(m["tls"] or "", "")
    head += f"{method} {_ROUTE_PATH.get((method, m['route']), '/' + m['route'])}"
    if m["size"]:
        head += f" {fmt_size(int(m['size']))}"
    if m["body"]:
        head += f" {fmt_size(int(m['body']))} body"
    extra = [f"{int(m['conns'])} conns"]
    if m["close"]:
        extra.append("Connection: close")
    if m["pipe"]:
        extra.append(f"pipeline {int(m['pipe'])}")
    if m["streams"]:
        extra.append("one stream each" if m["streams"] == "1" else f"{int(m['streams'])} streams")
    return f"{head} ({', '.join(extra)})"


def scenario_words(scenario: str) -> str:
    """'get_echo_s1024_c100' -> 'GET /echo 1 KiB (100 conns)'; an id outside the pattern as it is."""
    m = _ID.fullmatch(scenario)
    return _id_words(m) if m else scenario


def ids_worded(text: str) -> str:
    """Every scenario id in a text ('h2c/get_ping_c100 vs http1/get_ping_c100: +20% …') in words."""
    return _ID.sub(_id_words, text)
