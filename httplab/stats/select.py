"""Selecting runs and aggregating a metric across reps (long frames used by tables, plots, summary)."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd


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
    return df[col].to_numpy(dtype=np.float64, na_value=np.nan)
