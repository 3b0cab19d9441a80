"""Runs frame -> the estimates and comparisons frames (schema: stats.schema; docs/data.md).

Every figure the reports print comes from a row of these frames: an estimate per (suite, scenario,
server, metric), and a comparison per pair of cells and metric. Failed runs never enter them.

Comparisons of kind "server" cover every pair of servers of a suite's scenario, each pair once,
A being the server that comes first in display order (servers.sort_servers); `lookup` returns
either direction. Kinds "scenario" (one server, two of its scenarios) and "suite" (the same server
and scenario in two suites) are made for the pairs a report asks for.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from ..tidy.servers import aa_of, sort_servers
from .methods import DEFAULT_CONFIDENCE, Ratio, center, ratio_by_rep
from .metrics import METRICS, Metric
from .schema import empty, validate

Cell = tuple[str, str, str]   # (suite, scenario, server)


def _ok(runs: pd.DataFrame) -> pd.DataFrame:
    return runs[runs["status"] == "ok"] if len(runs) else runs


def _share(flags: pd.Series | None) -> float:
    if flags is None:
        return math.nan
    known = flags.dropna()
    return float(known.astype(bool).mean()) if len(known) else math.nan


def _by_rep(g: pd.DataFrame, metric: Metric) -> dict[int, float]:
    vals = metric.values(g)
    return {int(r): float(v) for r, v in zip(g["rep"], vals) if math.isfinite(v)}


# ---------------------------------------------------------------- estimates
def estimates_frame(runs: pd.DataFrame, metrics: Sequence[str] = tuple(METRICS),
                    confidence: float = DEFAULT_CONFIDENCE) -> pd.DataFrame:
    """One row per (suite, scenario, server, metric) with at least one run."""
    if runs.empty:
        return empty("estimates")
    rows = []
    for (suite, scenario, server), g in runs.groupby(["suite", "scenario", "server"], sort=True):
        ok = _ok(g)
        n_failed = int(len(g) - len(ok))
        cb = _share(ok["client_bound"]) if "client_bound" in ok else math.nan
        nz = _share(ok["noisy"]) if "noisy" in ok else math.nan
        for name in metrics:
            m = METRICS[name]
            e = center(m.values(ok), confidence)
            rows.append({
                "run_id": str(g["run_id"].iloc[0]), "suite": suite, "scenario": scenario,
                "server": server, "metric": name, "unit": m.unit, "n": e.n, "n_failed": n_failed,
                "estimate": _f(e.estimate), "lo": _f(e.lo), "hi": _f(e.hi),
                "confidence": confidence, "method": e.method, "reason": e.reason or "",
                "client_bound_share": cb, "noisy_share": nz,
            })
    df = pd.DataFrame(rows, columns=[c for c in empty("estimates").columns])
    return validate(_types(df, "estimates"), "estimates")


# ---------------------------------------------------------------- comparisons
def _f(x: float | None) -> float:
    return math.nan if x is None else float(x)


def _types(df: pd.DataFrame, frame: str) -> pd.DataFrame:
    proto = empty(frame)
    for col in proto.columns:
        if proto[col].dtype != object:
            df[col] = df[col].astype(proto[col].dtype)
    return df


def _verdict(r: Ratio, m: Metric, floor: float, both_client_bound: bool) -> str:
    if m.name == "req_per_s" and both_client_bound:
        return "both client-bound"
    if not r.has_interval:
        return "no interval"
    if not r.clear:
        return "no clear difference"
    if math.isfinite(floor) and -floor <= r.lo - 1.0 and r.hi - 1.0 <= floor:  # type: ignore[operator]
        return "below the noise floor"
    higher = r.ratio > 1.0  # type: ignore[operator]
    if m.higher_is_better is None:
        return m.better if higher else m.worse
    return m.better if higher == m.higher_is_better else m.worse


class _Cells:
    """Per-cell rep -> value maps and client-bound flags of one runs frame (ok runs only)."""

    def __init__(self, runs: pd.DataFrame):
        self.groups = {key: g for key, g in _ok(runs).groupby(["suite", "scenario", "server"], sort=True)}

    def values(self, cell: Cell, m: Metric) -> dict[int, float]:
        g = self.groups.get(cell)
        return {} if g is None else _by_rep(g, m)

    def client_bound(self, cell: Cell) -> bool:
        g = self.groups.get(cell)
        if g is None or "client_bound" not in g:
            return False
        s = _share(g["client_bound"])
        return bool(not math.isnan(s) and s >= 0.5)


def _row(run_id: str, kind: str, m: Metric, a: Cell, b: Cell, r: Ratio, floor: float,
         cb_a: bool, cb_b: bool) -> dict:
    return {
        "run_id": run_id, "kind": kind, "metric": m.name,
        "a_suite": a[0], "a_scenario": a[1], "a_server": a[2],
        "b_suite": b[0], "b_scenario": b[1], "b_server": b[2],
        "n_a": r.n_a, "n_b": r.n_b, "n_pairs": r.n_pairs, "paired": r.paired,
        "ratio": _f(r.ratio), "lo": _f(r.lo), "hi": _f(r.hi), "p_value": _f(r.p_value),
        "confidence": r.confidence, "method": r.method, "reason": r.reason or "",
        "noise_floor": floor, "verdict": _verdict(r, m, floor, cb_a and cb_b),
        "a_client_bound": cb_a, "b_client_bound": cb_b,
    }


def noise_floors(runs: pd.DataFrame, metrics: Sequence[str] = tuple(METRICS),
                 confidence: float = DEFAULT_CONFIDENCE) -> dict[tuple[str, str], float]:
    """(suite, metric) -> the A/A noise floor: the largest |bound − 1| of the A/A copy's ratio to
    its original over the scenarios the copy ran; suites without a copy (or without an interval)
    are absent."""
    cells = _Cells(runs)
    floors: dict[tuple[str, str], float] = {}
    for (suite, scenario, server) in cells.groups:
        original = aa_of(server)
        if original is None:
            continue
        for name in metrics:
            m = METRICS[name]
            r = ratio_by_rep(cells.values((suite, scenario, server), m),
                             cells.values((suite, scenario, original), m), confidence)
            if r.has_interval:
                w = max(abs(r.lo - 1.0), abs(r.hi - 1.0))  # type: ignore[operator]
                floors[(suite, name)] = max(w, floors.get((suite, name), 0.0))
    return floors


def comparisons_frame(runs: pd.DataFrame, metrics: Sequence[str] = tuple(METRICS),
                      scenario_pairs: Iterable[tuple[str, str, str]] = (),
                      suite_pairs: Iterable[tuple[str, str, str, str]] = (),
                      confidence: float = DEFAULT_CONFIDENCE) -> pd.DataFrame:
    """Every server pair of every (suite, scenario), plus the requested cross-scenario pairs
    (suite, scenario A, scenario B: for every server that ran both) and cross-suite pairs
    (suite A, suite B, scenario A, scenario B: for every server that ran both)."""
    if runs.empty:
        return empty("comparisons")
    run_id = str(runs["run_id"].iloc[0])
    cells = _Cells(runs)
    floors = noise_floors(runs, metrics, confidence)
    rows = []

    def add(kind: str, a: Cell, b: Cell) -> None:
        cb_a, cb_b = cells.client_bound(a), cells.client_bound(b)
        for name in metrics:
            m = METRICS[name]
            r = ratio_by_rep(cells.values(a, m), cells.values(b, m), confidence)
            floor = floors.get((a[0], name), math.nan) if a[0] == b[0] else math.nan
            rows.append(_row(run_id, kind, m, a, b, r, floor, cb_a, cb_b))

    by_point: dict[tuple[str, str], list[str]] = {}
    for suite, scenario, server in cells.groups:
        by_point.setdefault((suite, scenario), []).append(server)
    for (suite, scenario), servers in sorted(by_point.items()):
        for a, b in combinations(sort_servers(servers), 2):
            add("server", (suite, scenario, a), (suite, scenario, b))
    for suite, sa, sb in scenario_pairs:
        for server in sort_servers({c[2] for c in cells.groups if c[0] == suite}):
            if (suite, sa, server) in cells.groups and (suite, sb, server) in cells.groups:
                add("scenario", (suite, sa, server), (suite, sb, server))
    for su_a, su_b, sa, sb in suite_pairs:
        for server in sort_servers({c[2] for c in cells.groups}):
            if (su_a, sa, server) in cells.groups and (su_b, sb, server) in cells.groups:
                add("suite", (su_a, sa, server), (su_b, sb, server))
    df = pd.DataFrame(rows, columns=list(empty("comparisons").columns))
    return validate(_types(df, "comparisons"), "comparisons")


def lookup(comparisons: pd.DataFrame, metric: str, a: Cell, b: Cell) -> pd.Series | None:
    """The comparison A vs B of a metric, in that direction (a stored B vs A row is inverted:
    ratio and bounds become reciprocals, the verdict swaps); None when the frame has neither."""
    c = comparisons[comparisons["metric"] == metric]
    fwd = c[(c["a_suite"] == a[0]) & (c["a_scenario"] == a[1]) & (c["a_server"] == a[2])
            & (c["b_suite"] == b[0]) & (c["b_scenario"] == b[1]) & (c["b_server"] == b[2])]
    if len(fwd):
        return fwd.iloc[0]
    rev = c[(c["a_suite"] == b[0]) & (c["a_scenario"] == b[1]) & (c["a_server"] == b[2])
            & (c["b_suite"] == a[0]) & (c["b_scenario"] == a[1]) & (c["b_server"] == a[2])]
    if not len(rev):
        return None
    return invert(rev.iloc[0])


def invert(row: pd.Series) -> pd.Series:
    """B vs A from an A vs B row."""
    out = row.copy()
    for side in ("suite", "scenario", "server", "client_bound"):
        out[f"a_{side}"], out[f"b_{side}"] = row[f"b_{side}"], row[f"a_{side}"]
    out["n_a"], out["n_b"] = row["n_b"], row["n_a"]
    with np.errstate(divide="ignore"):
        out["ratio"] = 1.0 / row["ratio"]
        out["lo"], out["hi"] = 1.0 / row["hi"], 1.0 / row["lo"]
    m = METRICS[row["metric"]]
    swap = {m.better: m.worse, m.worse: m.better}
    out["verdict"] = swap.get(row["verdict"], row["verdict"])
    return out
