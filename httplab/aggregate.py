"""Selecting runs and aggregating a metric across reps (long frames used by tables, plots, summary)."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .stats import DEFAULT_SEED, MeanCI, RatioCI, mean_ci, ratio_ci

# A filter: column -> value, or column -> predicate on the column (Series -> bool Series).
Where = Mapping[str, Any | Callable[[pd.Series], pd.Series]]


def select(runs: pd.DataFrame, where: Where | None = None) -> pd.DataFrame:
    """Rows of runs matching every condition of where (all rows when where is None/empty)."""
    if runs.empty or not where:
        return runs
    mask = pd.Series(True, index=runs.index)
    for col, cond in where.items():
        if col not in runs:
            return runs.iloc[0:0]
        mask &= cond(runs[col]) if callable(cond) else (runs[col] == cond)
    return runs[mask]


def ok_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """Only status == 'ok' (failed runs are excluded from all statistics)."""
    return runs[runs["status"] == "ok"] if not runs.empty else runs


def column(df: pd.DataFrame, col: str) -> np.ndarray:
    """A column as a float array; empty when the frame is empty or has no such column."""
    if df.empty or col not in df:
        return np.array([], dtype=np.float64)
    return df[col].to_numpy(dtype=np.float64)


def values(runs: pd.DataFrame, metric: str, **where: Any) -> np.ndarray:
    """The metric over ok runs matching where (keyword form), as a float array."""
    sub = select(ok_runs(runs), where)
    return sub[metric].to_numpy(dtype=np.float64) if not sub.empty else np.array([], dtype=np.float64)


def metric_ci(runs: pd.DataFrame, metric: str, confidence: float = 0.95, **where: Any) -> MeanCI:
    return mean_ci(values(runs, metric, **where), confidence)


def delta_ci(runs: pd.DataFrame, metric: str, server_a: str, server_b: str, confidence: float = 0.95,
             n_boot: int = 9999, seed: int = DEFAULT_SEED, **where: Any) -> RatioCI:
    """Δ of metric between two servers on the runs matching where (ok runs only)."""
    return ratio_ci(values(runs, metric, server=server_a, **where),
                    values(runs, metric, server=server_b, **where), confidence, n_boot, seed)


def summarize(runs: pd.DataFrame, by: Sequence[str], metric: str, confidence: float = 0.95) -> pd.DataFrame:
    """Long frame: by… + n_ok, n_failed, mean, low, high, reason (ok runs in the statistics)."""
    cols = list(by) + ["n_ok", "n_failed", "mean", "low", "high", "reason"]
    if runs.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for key, grp in runs.groupby(list(by), sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        ok = grp[grp["status"] == "ok"]
        ci = mean_ci(ok[metric].to_numpy(dtype=np.float64), confidence)
        rows.append(list(key) + [ci.n, int((grp["status"] != "ok").sum()), ci.mean, ci.low,
                                 ci.high, ci.reason])
    return pd.DataFrame(rows, columns=cols)
