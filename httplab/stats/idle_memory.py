"""The idle-connection memory measurement's figures (scripts/idle_memory.sh): per server, mode and N,
the memory of one idle keep-alive connection, kib_per_conn of the tidy frame (tidy.idle_memory),
as the geometric mean of the ok points with its t interval on the log scale (stats.methods.center,
the method of every figure of the lab; no interval below MIN_RUNS points, and the mean with a
Student-t interval where a value is ≤ 0)."""
from __future__ import annotations

import math

import pandas as pd

from .methods import DEFAULT_CONFIDENCE, center

ESTIMATE_COLUMNS: tuple[str, ...] = (
    "server", "mode", "conns", "conns_asked", "n", "n_failed", "estimate", "lo", "hi", "confidence",
    "method", "reason", "anon_estimate", "rss_before_kb", "rss_after_kb")


def _f(x: float | None) -> float:
    return math.nan if x is None else float(x)


def idle_estimates(frame: pd.DataFrame, confidence: float = DEFAULT_CONFIDENCE) -> pd.DataFrame:
    """One row per (server, mode, N asked): KiB per idle connection with its interval (estimate,
    lo, hi over the n ok points; n_failed points left out), the same for anonymous memory alone
    (anon_estimate, no interval), and the median RSS before and after (KiB)."""
    rows = []
    if frame.empty:
        return pd.DataFrame(columns=list(ESTIMATE_COLUMNS))
    for (server, mode, asked), g in frame.groupby(["server", "mode", "conns_asked"], sort=True):
        ok = g[g["status"] == "ok"]
        e = center(ok["kib_per_conn"].to_numpy(dtype=float), confidence)
        anon = center(ok["anon_kib_per_conn"].to_numpy(dtype=float), confidence)
        rows.append({
            "server": server, "mode": mode, "conns": int(g["conns"].min()), "conns_asked": int(asked),
            "n": e.n, "n_failed": int(len(g) - len(ok)), "estimate": _f(e.estimate), "lo": _f(e.lo),
            "hi": _f(e.hi), "confidence": confidence, "method": e.method, "reason": e.reason or "",
            "anon_estimate": _f(anon.estimate),
            "rss_before_kb": float(ok["rss_before_kb"].median()) if len(ok) else math.nan,
            "rss_after_kb": float(ok["rss_after_kb"].median()) if len(ok) else math.nan,
        })
    return pd.DataFrame(rows, columns=list(ESTIMATE_COLUMNS))
