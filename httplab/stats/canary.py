"""Two runs through their machines' canary (tidy frame `canary`, scripts/lib/canary.sh): how much
faster B's machine was than A's on the same fixed work, and what is left of a run-vs-run Δ once
that is taken out.

The canary's floor (the floor responder's req/s on one core under wrk) is the reference for req/s:
it is the same kind of work as a small HTTP server's (accept, read, write over loopback), with no
server code in it. Per part, its B/A ratio is the geometric mean of B's moments (start, mid, end)
over that of A's; the spread of the moments within each run is reported beside it, because the
canary is one run per moment and carries no interval of its own. A point's req/s ratio divided by
its part's canary ratio is the Δ "on equal machines"; the share of the difference the canary
explains is log(canary) / log(ratio): 100 % when the machine accounts for all of it, 0 % when the
machines were equally fast. CPU-µs per request scales the other way (a faster machine needs fewer
µs), so it is multiplied by the canary ratio. P99 latency is not normalised: its relation to a
machine's speed is not one number.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

FIGURES = (("floor_req_per_s", "floor req/s"), ("cpu_mops_per_s", "CPU loop Mops/s"),
           ("pingpong_rt_per_s", "ping-pong round trips/s"))
# how each compared metric moves with a faster machine: req/s with it, CPU-µs per request against it
SCALES = {"req_per_s": 1.0, "cpu_us_per_req": -1.0}
# below this |log ratio| (±1 %) a Δ is too small for a share of it to mean anything
MIN_LOG_RATIO = math.log(1.01)


def _positive(values: pd.Series) -> np.ndarray:
    v = values.to_numpy(dtype=float)
    return v[np.isfinite(v) & (v > 0)]


def canary_parts(canary: pd.DataFrame) -> pd.DataFrame:
    """Per run and part (the tidy frame `canary`'s run_id and suite): the number of moments, each
    figure's geometric mean over the moments (a figure that did not run, NaN or 0, is left out) and
    its spread (max/min − 1; NaN below two moments). The one place the canary is summarised: the
    run-vs-run comparison below and the history store (report.history.store) both read this."""
    columns = ["run_id", "suite", "moments", *(c for c, _ in FIGURES), *(f"{c}_spread" for c, _ in FIGURES)]
    rows = []
    if len(canary):
        for (run_id, part), g in canary.groupby(["run_id", "suite"], sort=True):
            row: dict[str, object] = {"run_id": run_id, "suite": part, "moments": len(g)}
            for col, _ in FIGURES:
                v = _positive(g[col]) if col in g else np.array([])   # a figure the frame lacks: NaN
                row[col] = float(np.exp(np.log(v).mean())) if len(v) else math.nan
                row[f"{col}_spread"] = float(v.max() / v.min() - 1) if len(v) > 1 else math.nan
            rows.append(row)
    return pd.DataFrame(rows, columns=columns)


def canary_ratios(canary_a: pd.DataFrame, canary_b: pd.DataFrame) -> pd.DataFrame:
    """Per part both runs measured: each canary figure of A and B (geometric mean over the moments),
    B/A, and each run's spread over its moments (max/min − 1)."""
    pa, pb = (canary_parts(c).set_index("suite") for c in (canary_a, canary_b))
    rows = []
    for part in sorted(set(pa.index) & set(pb.index)):
        a, b = pa.loc[part], pb.loc[part]
        row: dict[str, object] = {"suite": part, "moments_a": int(a["moments"]), "moments_b": int(b["moments"])}
        for col, _ in FIGURES:
            ga, gb = float(a[col]), float(b[col])
            row[f"{col}_a"], row[f"{col}_b"] = ga, gb
            row[f"{col}_ratio"] = gb / ga if ga > 0 and gb > 0 else math.nan
            row[f"{col}_spread_a"], row[f"{col}_spread_b"] = float(a[f"{col}_spread"]), float(b[f"{col}_spread"])
        rows.append(row)
    return pd.DataFrame(rows)


def explained_share(ratio: float, canary: float, scale: float = 1.0) -> float:
    """The share of a Δ that the canary accounts for: log(canary^scale) / log(ratio) (NaN for a Δ
    within ±1 %, where a share means nothing)."""
    if not (ratio > 0 and canary > 0) or abs(math.log(ratio)) < MIN_LOG_RATIO:
        return math.nan
    return scale * math.log(canary) / math.log(ratio)


def through_canary(frame: pd.DataFrame, ratios: pd.DataFrame, reference: str = "floor_req_per_s") -> pd.DataFrame:
    """The run-vs-run rows of the metrics the canary scales (SCALES) with the canary of their part:
    the Δ as measured, the canary's B/A, the Δ on equal machines (ratio and bounds ÷ canary^scale)
    and the share the canary explains. Rows of a part without a canary in both runs are left out."""
    if frame.empty or ratios.empty:
        return pd.DataFrame()
    by_part = ratios.set_index("suite")[f"{reference}_ratio"]
    sub = frame[frame["metric"].isin(list(SCALES)) & frame["suite"].isin(list(by_part.index))].copy()
    if sub.empty:
        return pd.DataFrame()
    canary = sub["suite"].map(by_part).astype(float)
    scale = sub["metric"].map(SCALES).astype(float)
    factor = canary ** scale
    sub["canary_ratio"] = canary
    for c in ("ratio", "lo", "hi"):
        sub[f"{c}_equal_machines"] = sub[c] / factor
    sub["canary_explains"] = [explained_share(r, k, s) for r, k, s in zip(sub["ratio"], canary, scale)]
    return sub.reset_index(drop=True)
