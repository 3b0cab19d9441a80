"""Latency-under-load statistics of open-model points (the runs whose load tool had a load model:
the latency suite's parts):
per point the curve's figures with intervals, and per server the knee. (The corrected/uncorrected
contrast is a scenario pair of stats.write, a row of the comparisons frame.)

Points (one per suite, server and scenario) come from httplab.tidy: `load_model` closed | open |
open_uncorrected, `target_rps` (open points), `load_fraction` (open points set as a share of the
server's capacity, `capacity_ref_rps`). Only ok runs enter a figure; saturated and failed runs are
counted beside it. Every figure is stats.cells.mean_ci (the geometric mean of the runs with a t
interval on the log scale, the method whose coverage tests/unit/test_coverage.py checks).

The knee of a server's curve: the highest offered rate at which P99 stays within KNEE_MULTIPLE ×
its P99 at the lowest fraction of capacity, found per rep and then summarised over reps. Per rep
the fraction points are taken in order of rate; the first one whose P99 passes the limit, or that
saturated or failed, is the crossing, and the knee is interpolated between it and the point before
it (log P99 linear in the rate). A rep whose curve never crosses gives its highest point's rate and
is counted as censored (the knee is at least that): the summary says so. A rep whose crossing
point was client-bound (the load tool's core saturated, the server's not) is counted too: there
the tool's own lag in sending is part of the P99, and the knee may be the tool's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from .cells import mean_ci

KNEE_MULTIPLE = 3.0
"""The knee: P99 may grow to this multiple of the low-load P99."""
SHARED_SCENARIO = "r10k"
"""The shared absolute rate the HDR plots and the closed/open table use (10,000 req/s)."""
CONTRAST_FRACTION = 0.80
CONTRAST_PAIR: tuple[str, str] = ("f080", "f080_uncorrected")
"""The scenarios of one schedule at CONTRAST_FRACTION timed from the scheduled and from the actual
send; stats.write compares them (a scenario pair, paired by rep) so the report's Δ is a row of the
run's comparisons frame."""
PERCENTILE_COLS: tuple[str, ...] = ("lat_p50_us", "lat_p90_us", "lat_p99_us", "lat_p999_us", "lat_max_us")


def latency_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs of open-model parts (their load columns set: a load model), others dropped."""
    if runs.empty or "load_model" not in runs:
        return runs.iloc[0:0]
    modelled = set(runs.loc[runs["load_model"].notna(), "suite"])
    return runs[runs["suite"].isin(modelled)].reset_index(drop=True)


def _first(values: pd.Series) -> float:
    v = values.dropna()
    return float(v.iloc[0]) if len(v) else math.nan


def curve_points(runs: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """One row per (suite, server, scenario): load_model, target_rps, load_fraction, the runs'
    counts by status (n ok / saturated / failed), and for the ok runs the achieved req/s, server
    CPU-µs per request and P50/P90/P99/P99.9/max as MeanCI, plus how many ok runs were
    client-bound. Rows sorted by suite, server, load model and rate."""
    lr = latency_runs(runs)
    rows = []
    for (suite, server, scenario), g in lr.groupby(["suite", "server", "scenario"], sort=True):
        ok = g[g["status"] == "ok"]
        row = {
            "suite": suite, "server": server, "scenario": scenario,
            "load_model": str(g["load_model"].dropna().iloc[0]) if g["load_model"].notna().any() else "",
            "target_rps": _first(g["target_rps"]) if "target_rps" in g else math.nan,
            "load_fraction": _first(g["load_fraction"]) if "load_fraction" in g else math.nan,
            "n_runs": len(g), "n_ok": len(ok),
            "n_saturated": int((g["status"] == "saturated").sum()),
            "n_failed": int((g["status"] == "failed").sum()),
            "n_client_bound": int(ok["client_bound"].fillna(False).astype(bool).sum()),
            "req_per_s": mean_ci(ok["req_per_s"], confidence),
            "cpu_us_per_req": mean_ci(ok["cpu_us_per_req"], confidence),
        }
        for col in PERCENTILE_COLS:
            row[col] = mean_ci(ok[col], confidence)
        rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    rate = out["target_rps"].fillna(out["req_per_s"].map(lambda m: m.mean if m.mean is not None else math.nan))
    return (out.assign(_rate=rate).sort_values(["suite", "server", "load_model", "_rate"], kind="stable")
            .drop(columns="_rate").reset_index(drop=True))


# ---------------------------------------------------------------- the knee
@dataclass(frozen=True)
class RepKnee:
    rep: int
    knee_rps: float
    censored: bool  # the curve never crossed: the knee is at least knee_rps
    low_p99_us: float
    # the crossing point was client-bound: the load tool's core, not the server, was saturated, and
    # its own lag in sending is part of the latency (the knee may be the tool's)
    tool_bound: bool = False


def rep_knee(points: pd.DataFrame, multiple: float = KNEE_MULTIPLE) -> RepKnee | None:
    """The knee of one rep's fraction points (runs rows of one suite, server and rep, load_model
    open with a load_fraction). None when the lowest fraction's run is not ok (no baseline)."""
    pts = points.sort_values("target_rps")
    if pts.empty or pts.iloc[0]["status"] != "ok":
        return None
    rep = int(pts.iloc[0]["rep"])
    low = float(pts.iloc[0]["lat_p99_us"])
    limit = multiple * low
    prev_rate, prev_p99 = float(pts.iloc[0]["target_rps"]), low
    for _, p in pts.iloc[1:].iterrows():
        rate = float(p["target_rps"])
        tool = bool(p["client_bound"]) if "client_bound" in p and not pd.isna(p["client_bound"]) else False
        if p["status"] != "ok":
            # saturated or failed: the curve is past the knee somewhere in (prev, rate]
            return RepKnee(rep, prev_rate, False, low, tool)
        p99 = float(p["lat_p99_us"])
        if p99 > limit:
            # log P99 linear in the rate between the last point under the limit and this one
            t = (math.log(limit) - math.log(prev_p99)) / (math.log(p99) - math.log(prev_p99))
            return RepKnee(rep, prev_rate + t * (rate - prev_rate), False, low, tool)
        prev_rate, prev_p99 = rate, p99
    return RepKnee(rep, prev_rate, True, low)


def knees(runs: pd.DataFrame, multiple: float = KNEE_MULTIPLE, confidence: float = 0.95) -> pd.DataFrame:
    """One row per (suite, server): the knee in req/s (MeanCI over reps), as a fraction of the
    capacity, the number of reps that gave one and of those that never crossed (censored), and
    the low-load P99 (MeanCI)."""
    lr = latency_runs(runs)
    frac = lr[(lr["load_model"] == "open") & lr["load_fraction"].notna()] if not lr.empty else lr
    rows = []
    for (suite, server), g in frac.groupby(["suite", "server"], sort=True):
        reps = [k for _, pts in g.groupby("rep") if (k := rep_knee(pts, multiple)) is not None]
        cap = _first(g["capacity_ref_rps"])
        knee = mean_ci([k.knee_rps for k in reps], confidence)
        rows.append({
            "suite": suite, "server": server, "capacity_rps": cap,
            "knee_rps": knee,
            "knee_fraction": (knee.mean / cap) if knee.mean is not None and cap > 0 else math.nan,
            "n_reps": len(reps), "n_censored": sum(k.censored for k in reps),
            "n_tool_bound": sum(k.tool_bound for k in reps),
            "low_p99_us": mean_ci([k.low_p99_us for k in reps], confidence),
            "multiple": multiple,
        })
    return pd.DataFrame(rows)
