"""Runs frame -> the estimates and comparisons frames (schema: stats.schema; docs/data.md).

Every figure the reports print comes from a row of these frames: an estimate per (suite, scenario,
server, metric), and a comparison per pair of cells and metric. Failed runs never enter them.

A cell is (suite, scenario, server); its values are rep -> value maps of the ok runs. Besides the
scenarios that ran, a suite can have composite cells (declared in its suite.toml): per rep, the mean
req/s of several scenarios, for the reps in which all of them are ok (the languages suite's score).

Comparisons of kind "server" cover every pair of servers of a suite's scenario, each pair once,
A being the server that comes first in display order (servers.sort_servers); RunStats.compare
returns either direction. Kinds "scenario" (one server, two of its scenarios) and "suite" (the same
server in two suites) are made for the pairs asked for.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from ..lab.servers import aa_of, sort_servers, tcp_twin
from .methods import DEFAULT_CONFIDENCE, Ratio, center, ratio_by_rep, ratio_paired
from .power import df_of, mde
from .metrics import METRICS, Metric
from .schema import empty, validate

Cell = tuple[str, str, str]   # (suite, scenario, server)
Composites = Mapping[tuple[str, str], Sequence[str]]   # (suite, name) -> member scenarios


def _share(flags: pd.Series | None) -> float:
    if flags is None:
        return math.nan
    known = flags.dropna()
    return float(known.astype(bool).mean()) if len(known) else math.nan


class Cells:
    """The cells of a runs frame: per cell and metric the rep -> value map of its ok runs, its failed
    runs, and the client-bound and noisy shares of its ok runs."""

    def __init__(self, runs: pd.DataFrame, composites: Composites = {}):
        self.values: dict[Cell, dict[str, dict[int, float]]] = {}
        self.n_failed: dict[Cell, int] = {}
        self.client_bound_share: dict[Cell, float] = {}
        self.noisy_share: dict[Cell, float] = {}
        self.run_id = str(runs["run_id"].iloc[0]) if len(runs) else ""
        if runs.empty:
            return
        for key, g in runs.groupby(["suite", "scenario", "server"], sort=True):
            ok = g[g["status"] == "ok"]
            reps = ok["rep"].to_numpy()
            self.values[key] = {name: {int(r): float(v) for r, v in zip(reps, m.values(ok)) if math.isfinite(v)}
                                for name, m in METRICS.items() if _has_metric(g, m)}
            self.n_failed[key] = int(len(g) - len(ok))
            self.client_bound_share[key] = _share(ok["client_bound"]) if "client_bound" in ok else math.nan
            self.noisy_share[key] = _share(ok["noisy"]) if "noisy" in ok else math.nan
        for (suite, name), members in composites.items():
            self._add_composite(suite, name, tuple(members))

    def _add_composite(self, suite: str, name: str, members: tuple[str, ...]) -> None:
        servers = {c[2] for c in self.values if c[0] == suite and c[1] in members}
        for server in servers:
            maps = [self.values.get((suite, sc, server), {}).get("req_per_s", {}) for sc in members]
            reps = set.intersection(*(set(m) for m in maps)) if all(maps) else set()
            cell = (suite, name, server)
            self.values[cell] = {"req_per_s": {r: float(np.mean([m[r] for m in maps])) for r in sorted(reps)}}
            all_reps = set().union(*(set(m) for m in maps)) | {
                r for sc in members for r in range(1, self.n_failed.get((suite, sc, server), 0) + 1)}
            self.n_failed[cell] = max(0, len(all_reps) - len(reps))
            shares = [self.client_bound_share.get((suite, sc, server), math.nan) for sc in members]
            known = [s for s in shares if not math.isnan(s)]
            self.client_bound_share[cell] = float(np.mean(known)) if known else math.nan
            noisy = [self.noisy_share.get((suite, sc, server), math.nan) for sc in members]
            known = [s for s in noisy if not math.isnan(s)]
            self.noisy_share[cell] = float(np.mean(known)) if known else math.nan

    def metric(self, cell: Cell, metric: str) -> dict[int, float] | None:
        """rep -> value of one metric; None when the cell or the metric is not there."""
        return self.values.get(cell, {}).get(metric)

    def client_bound(self, cell: Cell) -> bool:
        """Most of the cell's ok runs were client-bound."""
        s = self.client_bound_share.get(cell, math.nan)
        return bool(not math.isnan(s) and s >= 0.5)


def _has_metric(g: pd.DataFrame, m: Metric) -> bool:
    return bool(np.isfinite(m.values(g)).any())


def _f(x: float | None) -> float:
    return math.nan if x is None else float(x)


def _types(df: pd.DataFrame, frame: str) -> pd.DataFrame:
    proto = empty(frame)
    for col in proto.columns:
        if proto[col].dtype != object:
            df[col] = df[col].astype(proto[col].dtype)
    return df


# ---------------------------------------------------------------- estimates
def estimates_frame(cells: Cells, confidence: float = DEFAULT_CONFIDENCE) -> pd.DataFrame:
    """One row per cell and metric it has."""
    rows = []
    for cell in sorted(cells.values):
        suite, scenario, server = cell
        for name, vals in cells.values[cell].items():
            e = center(list(vals.values()), confidence)
            rows.append({
                "run_id": cells.run_id, "suite": suite, "scenario": scenario, "server": server,
                "metric": name, "unit": METRICS[name].unit, "n": e.n, "n_failed": cells.n_failed[cell],
                "estimate": _f(e.estimate), "lo": _f(e.lo), "hi": _f(e.hi),
                "confidence": confidence, "method": e.method, "reason": e.reason or "",
                "client_bound_share": cells.client_bound_share[cell], "noisy_share": cells.noisy_share[cell],
            })
    if not rows:
        return empty("estimates")
    return validate(_types(pd.DataFrame(rows, columns=list(empty("estimates").columns)), "estimates"),
                    "estimates")


# ---------------------------------------------------------------- comparisons
def verdict(r: Ratio, m: Metric, floor: float, both_client_bound: bool) -> str:
    """The comparison's verdict, A against B (schema: comparisons.verdict)."""
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


def noise_floors(cells: Cells, confidence: float = DEFAULT_CONFIDENCE) -> dict[tuple[str, str], float]:
    """(suite, metric) -> the A/A noise floor: the largest |bound − 1| of the A/A copy's ratio to
    its original over the scenarios the copy ran; suites without a copy (or without an interval)
    are absent."""
    floors: dict[tuple[str, str], float] = {}
    for (suite, scenario, server), metrics in cells.values.items():
        original = aa_of(server)
        if original is None:
            continue
        for name, vals in metrics.items():
            other = cells.metric((suite, scenario, original), name)
            if other is None:
                continue
            r = ratio_by_rep(vals, other, confidence)
            if r.has_interval:
                w = max(abs(r.lo - 1.0), abs(r.hi - 1.0))  # type: ignore[operator]
                floors[(suite, name)] = max(w, floors.get((suite, name), 0.0))
    return floors


def _kind(a: Cell, b: Cell) -> str:
    if a[0] != b[0]:
        return "suite"
    return "server" if a[1] == b[1] else "scenario"


def comparison_rows(cells: Cells, a: Cell, b: Cell, floors: Mapping[tuple[str, str], float] = {},
                    confidence: float = DEFAULT_CONFIDENCE, metrics: Iterable[str] | None = None) -> list[dict]:
    """The comparisons rows A vs B, one per metric both cells have (all, or those of `metrics`)."""
    kind = _kind(a, b)
    cb_a, cb_b = cells.client_bound(a), cells.client_bound(b)
    rows = []
    for name, va in cells.values.get(a, {}).items():
        vb = cells.metric(b, name)
        if vb is None or (metrics is not None and name not in metrics):
            continue
        m = METRICS[name]
        r = ratio_by_rep(va, vb, confidence)
        floor = floors.get((a[0], name), math.nan) if kind != "suite" else math.nan
        rows.append({
            "run_id": cells.run_id, "kind": kind, "metric": name,
            "a_suite": a[0], "a_scenario": a[1], "a_server": a[2],
            "b_suite": b[0], "b_scenario": b[1], "b_server": b[2],
            "n_a": r.n_a, "n_b": r.n_b, "n_pairs": r.n_pairs, "paired": r.paired,
            "ratio": _f(r.ratio), "lo": _f(r.lo), "hi": _f(r.hi), "p_value": _f(r.p_value),
            "confidence": r.confidence, "method": r.method, "reason": r.reason or "",
            "noise_floor": floor, "verdict": verdict(r, m, floor, cb_a and cb_b),
            "a_client_bound": cb_a, "b_client_bound": cb_b,
            "mde": mde(_f(r.lo), _f(r.hi), df_of(r.paired, r.n_pairs, r.n_a, r.n_b), r.confidence),
        })
    return rows


def _frame(rows: list[dict]) -> pd.DataFrame:
    if not rows:
        return empty("comparisons")
    return validate(_types(pd.DataFrame(rows, columns=list(empty("comparisons").columns)), "comparisons"),
                    "comparisons")


def counterpart(cells: Cells, point: tuple[str, str], server: str) -> str | None:
    """The server that stands for `server` at a point of another suite: itself when it ran there,
    else its TCP twin when that did (an HTTP/3 server's manifest names the server of the same
    application over TCP: Go's net/http for quic-go's); None when neither ran there."""
    for candidate in (server, tcp_twin(server)):
        if candidate is not None and (*point, candidate) in cells.values:
            return candidate
    return None


def comparisons_frame(cells: Cells, scenario_pairs: Iterable[tuple[str, str, str]] = (),
                      suite_pairs: Iterable[tuple[str, str, str, str]] = (),
                      confidence: float = DEFAULT_CONFIDENCE) -> pd.DataFrame:
    """Every server pair of every (suite, scenario) cell group, plus the requested cross-scenario
    pairs (suite, scenario A, scenario B: for every server that ran both) and cross-suite pairs
    (suite A, suite B, scenario A, scenario B: for every server that ran both, or whose TCP twin ran
    B: counterpart)."""
    floors = noise_floors(cells, confidence)
    pairs: list[tuple[Cell, Cell]] = []
    by_point: dict[tuple[str, str], list[str]] = {}
    for suite, scenario, server in cells.values:
        by_point.setdefault((suite, scenario), []).append(server)
    for (suite, scenario), servers in sorted(by_point.items()):
        pairs += [((suite, scenario, a), (suite, scenario, b)) for a, b in combinations(sort_servers(servers), 2)]
    for suite, sa, sb in scenario_pairs:
        pairs += [((suite, sa, s), (suite, sb, s)) for s in sort_servers(by_point.get((suite, sa), []))
                  if (suite, sb, s) in cells.values]
    for su_a, su_b, sa, sb in suite_pairs:
        for s in sort_servers(by_point.get((su_a, sa), [])):
            b = counterpart(cells, (su_b, sb), s)
            if b is not None:
                pairs.append(((su_a, sa, s), (su_b, sb, b)))
    rows = [row for a, b in pairs for row in comparison_rows(cells, a, b, floors, confidence)]
    rows += [drift_row(cells, suite, confidence) for suite in sorted({c[0] for c in cells.values})]
    return _frame([r for r in rows if r is not None])


DRIFT_CELLS = ("all points", "last rep", "first rep")   # scenario, A server, B server of a drift row


def drift_row(cells: Cells, suite: str, confidence: float = DEFAULT_CONFIDENCE) -> dict | None:
    """The comparisons row (kind "drift") of suite_drift: A = every point's last rep, B = its
    first, req/s; None when no point has two reps."""
    r = suite_drift(cells, suite, "req_per_s", confidence)
    if r.n_pairs == 0:
        return None
    scen, last, first = DRIFT_CELLS
    return {
        "run_id": cells.run_id, "kind": "drift", "metric": "req_per_s",
        "a_suite": suite, "a_scenario": scen, "a_server": last,
        "b_suite": suite, "b_scenario": scen, "b_server": first,
        "n_a": r.n_a, "n_b": r.n_b, "n_pairs": r.n_pairs, "paired": True,
        "ratio": _f(r.ratio), "lo": _f(r.lo), "hi": _f(r.hi), "p_value": _f(r.p_value),
        "confidence": r.confidence, "method": "paired by point, t interval on log ratios (last rep / first)",
        "reason": r.reason or "", "noise_floor": math.nan,
        "verdict": verdict(r, METRICS["req_per_s"], math.nan, False),
        "a_client_bound": False, "b_client_bound": False,
        "mde": mde(_f(r.lo), _f(r.hi), df_of(True, r.n_pairs, r.n_a, r.n_b), r.confidence),
    }


def compare_runs(a: pd.DataFrame, b: pd.DataFrame, metric: str, confidence: float = DEFAULT_CONFIDENCE
                 ) -> pd.Series | None:
    """The comparisons row of `metric` between two cells given as their runs (each frame one
    suite, scenario and server): the same computation as in comparisons_frame, on these two only
    (no noise floor). None when a side is empty or spans several cells."""
    ca, cb = cell_of(a), cell_of(b)
    if ca is None or cb is None:
        return None
    df = _frame(comparison_rows(Cells(pd.concat([a, b], ignore_index=True)), ca, cb, {}, confidence, [metric]))
    return df.iloc[0] if len(df) else None


def cell_of(runs: pd.DataFrame) -> Cell | None:
    """The one (suite, scenario, server) of a frame's rows; None when empty or several."""
    if runs.empty:
        return None
    keys = runs[["suite", "scenario", "server"]].drop_duplicates()
    return tuple(keys.iloc[0]) if len(keys) == 1 else None  # type: ignore[return-value]


# ---------------------------------------------------------------- lookups
def invert(row: pd.Series) -> pd.Series:
    """B vs A from an A vs B row."""
    out = row.copy()
    for side in ("suite", "scenario", "server", "client_bound"):
        out[f"a_{side}"], out[f"b_{side}"] = row[f"b_{side}"], row[f"a_{side}"]
    out["n_a"], out["n_b"] = row["n_b"], row["n_a"]
    out["ratio"] = 1.0 / row["ratio"] if row["ratio"] else math.nan
    out["lo"], out["hi"] = (1.0 / row["hi"], 1.0 / row["lo"]) if row["lo"] > 0 else (math.nan, math.nan)
    m = METRICS[row["metric"]]
    swap = {m.better: m.worse, m.worse: m.better}
    out["verdict"] = swap.get(row["verdict"], row["verdict"])
    return out


class RunStats:
    """The estimates and comparisons of one run, indexed for the report layer's lookups."""

    def __init__(self, estimates: pd.DataFrame, comparisons: pd.DataFrame):
        self.estimates = estimates
        self.comparisons = comparisons
        # an empty frame may come without its columns (a run with no comparable cells)
        self._est = {} if estimates.empty else {
            (r.suite, r.scenario, r.server, r.metric): i
            for i, r in enumerate(estimates[["suite", "scenario", "server", "metric"]].itertuples())}
        cols = ["metric", "a_suite", "a_scenario", "a_server", "b_suite", "b_scenario", "b_server"]
        self._cmp = {} if comparisons.empty else {
            tuple(r[1:]): i for i, r in enumerate(comparisons[cols].itertuples())}

    def estimate(self, cell: Cell, metric: str) -> pd.Series | None:
        """The estimates row of a cell's metric; None when the run has no such value."""
        i = self._est.get((*cell, metric))
        return None if i is None else self.estimates.iloc[i]

    def drift(self, suite: str) -> pd.Series | None:
        """The suite's drift row (kind "drift"); None when it has none."""
        return self.compare("req_per_s", (suite, DRIFT_CELLS[0], DRIFT_CELLS[1]),
                            (suite, DRIFT_CELLS[0], DRIFT_CELLS[2]))

    def compare(self, metric: str, a: Cell, b: Cell) -> pd.Series | None:
        """The comparisons row A vs B (a stored B vs A row inverted); None when there is none."""
        i = self._cmp.get((metric, *a, *b))
        if i is not None:
            return self.comparisons.iloc[i]
        i = self._cmp.get((metric, *b, *a))
        return None if i is None else invert(self.comparisons.iloc[i])


def suite_drift(cells: Cells, suite: str, metric: str = "req_per_s",
                confidence: float = DEFAULT_CONFIDENCE) -> Ratio:
    """How far a suite's measurements moved while it ran: over every point (scenario × server) of
    the suite with an ok run in both its first and its last rep, the ratio last / first, paired by
    point (a t interval on the per-point log ratios). A between-suite Δ (suites run one after the
    other) is read against this: drift of this size is in it too."""
    firsts, lasts = [], []
    for (s, _, _), metrics in sorted(cells.values.items()):
        vals = metrics.get(metric) if s == suite else None
        if vals and len(vals) >= 2:
            firsts.append(vals[min(vals)])
            lasts.append(vals[max(vals)])
    return ratio_paired(lasts, firsts, confidence)
