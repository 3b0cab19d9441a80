"""The cells of a report table, made from rows of the statistics frames (stats.frames): every Δ
a report prints is a comparisons row, formatted here; nothing here computes an interval."""
from __future__ import annotations

import math

import pandas as pd

from ..stats import MeanCI, RatioCI, format_delta
from ..stats.cells import CLIENT_BOUND_LEADS, CLIENT_BOUND_TRAILS
from ..stats.frames import RunStats, cell_of, compare_runs
from ..stats.methods import NEEDS_RUNS


def ratio_ci_of(row: pd.Series | None) -> RatioCI:
    """A comparisons row as the Δ = A/B − 1 the tables print (no data when there is no row)."""
    if row is None or not math.isfinite(row["ratio"]):
        reason = "no data" if row is None else (row["reason"] or "no data")
        n_a, n_b = (0, 0) if row is None else (int(row["n_a"]), int(row["n_b"]))
        return RatioCI(None, None, None, n_a, n_b, 0.95 if row is None else float(row["confidence"]), reason)

    def d(x: float) -> float | None:
        return x - 1.0 if math.isfinite(x) else None
    return RatioCI(d(row["ratio"]), d(row["lo"]), d(row["hi"]), int(row["n_a"]), int(row["n_b"]),
                   float(row["confidence"]), row["reason"] or (None if math.isfinite(row["lo"]) else NEEDS_RUNS),
                   row["method"], None if not math.isfinite(row["p_value"]) else float(row["p_value"]),
                   bool(row["paired"]), int(row["n_pairs"]), printed_verdict(row))


def printed_verdict(row: pd.Series) -> str | None:
    """The verdict a comparisons row prints with: the frame's, except for a req/s Δ with exactly one
    client-bound side, which is a bound (stats.cells.ONE_SIDE_WORDS): the higher side client-bound,
    the gap is at least the printed one; the lower side client-bound, no verdict either way."""
    v = str(row["verdict"]) if "verdict" in row else None
    a_cb, b_cb = (bool(x) if pd.notna(x) else False
                  for x in (row.get("a_client_bound", False), row.get("b_client_bound", False)))
    if row.get("metric") != "req_per_s" or a_cb == b_cb or not math.isfinite(row["ratio"]):
        return v
    bound_is_higher = (row["ratio"] >= 1.0) == a_cb
    return CLIENT_BOUND_LEADS if bound_is_higher else CLIENT_BOUND_TRAILS


def mean_ci_of(row: pd.Series | None) -> MeanCI:
    """An estimates row as the figure the tables print (no data when there is no row)."""
    if row is None or not math.isfinite(row["estimate"]):
        return MeanCI(None, None, None, 0 if row is None else int(row["n"]), 0.95, "no data")

    def v(x: float) -> float | None:
        return float(x) if math.isfinite(x) else None
    return MeanCI(float(row["estimate"]), v(row["lo"]), v(row["hi"]), int(row["n"]), float(row["confidence"]),
                  row["reason"] or None, row["method"])


def comparison(stats: RunStats | None, metric: str, a: pd.DataFrame, b: pd.DataFrame,
               confidence: float = 0.95) -> pd.Series | None:
    """The comparisons row of `metric`, A vs B, where A and B are one cell's runs each: from the run's
    frames when given (a report), else computed the same way on the two cells alone (a table built
    outside a report). None when a side has no runs."""
    ca, cb = cell_of(a), cell_of(b)
    if ca is None or cb is None:
        return None
    if stats is not None:
        row = stats.compare(metric, ca, cb)
        if row is not None:
            return row
    return compare_runs(a, b, metric, confidence)


def delta(stats: RunStats | None, metric: str, a: pd.DataFrame, b: pd.DataFrame, confidence: float = 0.95
          ) -> RatioCI:
    """comparison() as the Δ the tables format."""
    return ratio_ci_of(comparison(stats, metric, a, b, confidence))


def delta_text(stats: RunStats | None, metric: str, a: pd.DataFrame, b: pd.DataFrame,
               confidence: float = 0.95) -> str:
    """`+18% [+15%, +21%]` and the other forms of stats.format_delta."""
    return format_delta(delta(stats, metric, a, b, confidence))
