"""Run against run: "did my change make it faster?" (scripts/compare.sh, notebooks/compare.ipynb).

Two runs frames in (A: the run before the change, B: after), one row per point and metric out
(the run_comparisons frame, RUN_COMPARISONS below). A point is (suite, scenario, server) and is
compared when both runs have it; A/A copies ("<server>~aa") are not compared, they give the noise
floor. Only ok runs enter (stats.frames.Cells drops failed ones).

The runs of two runs are independent (no rep of A is paired with a rep of B), so the ratio B/A is
the lab's unpaired method, stats.methods.ratio_welch (Welch's t on the logs; its coverage is in
stats/coverage_table.csv), with its rule for fewer than MIN_RUNS runs: the ratio of geometric
means, no interval. The p-values of all the comparisons are adjusted together with Holm's
procedure (stats.multiple.holm); a difference counts only when its adjusted p-value is below
1 − confidence. The intervals printed are the unadjusted ones.

Noise floor per (suite, metric): the A/A floor of each run (stats.frames.noise_floors: the largest
|bound − 1| of the A/A copy's ratio to its original), the larger of the two when both runs have
one; DEFAULT_FLOOR, stated in the report as an assumption, when neither has. A within-run A/A
floor holds no between-run drift (another day, another boot), so it is a lower bound of what
separates two runs of the same code.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from ..tidy.schema import Column, check, empty_frame, table
from ..lab.servers import is_aa_copy
from .frames import Cell, Cells, noise_floors
from .methods import DEFAULT_CONFIDENCE, center, ratio_welch
from .metrics import METRICS, Metric
from .multiple import holm

COMPARED_METRICS: tuple[str, ...] = ("req_per_s", "cpu_us_per_req", "lat_p99_us")
DEFAULT_FLOOR = 0.05   # ±5 %: the assumed noise floor of a suite and metric without an A/A copy

REGRESSION = "regression"
IMPROVEMENT = "improvement"
POSSIBLE_REGRESSION = "possible regression"
POSSIBLE_IMPROVEMENT = "possible improvement"
BELOW_FLOOR = "below the noise floor"
NO_CLEAR = "no clear difference"
BOTH_CLIENT_BOUND = "both client-bound"
NO_INTERVAL = "no interval"
# The order the report lists verdicts in: findings first.
VERDICTS: tuple[str, ...] = (REGRESSION, IMPROVEMENT, POSSIBLE_REGRESSION, POSSIBLE_IMPROVEMENT,
                             BELOW_FLOOR, NO_CLEAR, BOTH_CLIENT_BOUND, NO_INTERVAL)
FLOOR_A, FLOOR_B, FLOOR_DEFAULT = "A/A of run A", "A/A of run B", "assumed default"

RUN_COMPARISONS: tuple[Column, ...] = table("""
run_a          | str   |          | run A, the one compared against (raw/<run_a>/)
run_b          | str   |          | run B, the one compared (usually the newer: after the change)
suite          | str   |          | the point's suite
scenario       | str   |          | the point's scenario
server         | str   |          | the point's server (A/A copies are not compared)
metric         | str   |          | req_per_s, cpu_us_per_req or lat_p99_us (httplab.stats.metrics)
unit           | str   |          | the metric's unit
n_a            | int   | runs     | ok runs of the point in run A
n_b            | int   | runs     | ok runs of the point in run B
a_estimate     | float | unit     | geometric mean of A's ok runs
b_estimate     | float | unit     | geometric mean of B's ok runs
ratio          | float |          | B/A: ratio of geometric means (1.18 = B 18 % higher)
lo             | float |          | lower bound of the ratio's interval; NaN without one (see reason)
hi             | float |          | upper bound of the ratio's interval
p_value        | float |          | two-sided p-value of ratio = 1 (unadjusted)
p_holm         | float |          | p_value adjusted with Holm's procedure over every row of the comparison; NaN outside the family
confidence     | float |          | nominal coverage of the interval
method         | str   |          | the interval's method (unpaired: Welch t on logs)
reason         | str   |          | why there is no interval ('' when there is one)
noise_floor    | float | fraction | the floor the verdict used: a ratio within 1 ± noise_floor is no finding
floor_source   | str   |          | A/A of run A, A/A of run B (the larger of the two when both have one) or assumed default
verdict        | str   |          | B against A: regression or improvement (the whole interval beyond the floor, Holm-adjusted p below 1 − confidence), possible regression/improvement (part of it beyond), below the noise floor, no clear difference, both client-bound (req/s measured the load tool in both runs), no interval
a_client_bound | bool  |          | most of A's ok runs of the point were client-bound
b_client_bound | bool  |          | most of B's ok runs of the point were client-bound
""")


def validate(df: pd.DataFrame, where: str = "") -> pd.DataFrame:
    return check(df, "run_comparisons", RUN_COMPARISONS, where)


def empty() -> pd.DataFrame:
    return empty_frame(RUN_COMPARISONS)


def common_points(a: Cells, b: Cells) -> list[Cell]:
    """The (suite, scenario, server) points both runs have, A/A copies left out, sorted."""
    return sorted(p for p in set(a.values) & set(b.values) if not is_aa_copy(p[2]))


def floors(a: Cells, b: Cells, suites: Iterable[str], metrics: Iterable[str],
           confidence: float = DEFAULT_CONFIDENCE, default: float = DEFAULT_FLOOR
           ) -> dict[tuple[str, str], tuple[float, str]]:
    """(suite, metric) -> (floor, its source): the larger of the two runs' A/A floors, or the
    default when neither run has one."""
    fa, fb = noise_floors(a, confidence), noise_floors(b, confidence)
    out: dict[tuple[str, str], tuple[float, str]] = {}
    for key in ((s, m) for s in suites for m in metrics):
        have = [(f[key], src) for f, src in ((fa, FLOOR_A), (fb, FLOOR_B)) if key in f]
        out[key] = max(have) if have else (default, FLOOR_DEFAULT)
    return out


def run_verdict(ratio: float, lo: float, hi: float, p_holm: float, metric: Metric, floor: float,
                confidence: float = DEFAULT_CONFIDENCE, both_client_bound: bool = False) -> str:
    """B against A (module docstring and RUN_COMPARISONS.verdict); NaN lo/hi: no interval."""
    if metric.name == "req_per_s" and both_client_bound:
        return BOTH_CLIENT_BOUND
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return NO_INTERVAL
    if not (lo > 1.0 or hi < 1.0) or not (math.isfinite(p_holm) and p_holm < 1.0 - confidence):
        return NO_CLEAR
    if 1.0 - floor <= lo and hi <= 1.0 + floor:
        return BELOW_FLOOR
    good = (ratio > 1.0) == bool(metric.higher_is_better)
    beyond = hi < 1.0 - floor or lo > 1.0 + floor
    if beyond:
        return IMPROVEMENT if good else REGRESSION
    return POSSIBLE_IMPROVEMENT if good else POSSIBLE_REGRESSION


def _f(x: float | None) -> float:
    return math.nan if x is None else float(x)


def _rows(a: Cells, b: Cells, points: list[Cell], metrics: tuple[str, ...], confidence: float) -> list[dict]:
    rows = []
    for point in points:
        for name in metrics:
            va, vb = a.metric(point, name), b.metric(point, name)
            if va is None or vb is None:
                continue
            r = ratio_welch(list(vb.values()), list(va.values()), confidence)   # B/A
            rows.append({
                "run_a": a.run_id, "run_b": b.run_id, "suite": point[0], "scenario": point[1],
                "server": point[2], "metric": name, "unit": METRICS[name].unit,
                "n_a": r.n_b, "n_b": r.n_a,
                "a_estimate": _f(center(list(va.values()), confidence).estimate),
                "b_estimate": _f(center(list(vb.values()), confidence).estimate),
                "ratio": _f(r.ratio), "lo": _f(r.lo), "hi": _f(r.hi), "p_value": _f(r.p_value),
                "p_holm": math.nan, "confidence": confidence, "method": r.method, "reason": r.reason or "",
                "noise_floor": math.nan, "floor_source": "", "verdict": "",
                "a_client_bound": a.client_bound(point), "b_client_bound": b.client_bound(point),
            })
    return rows


def _in_family(row: Mapping) -> bool:
    """Rows whose p-value is tested: not req/s of a point client-bound in both runs."""
    cb = row["metric"] == "req_per_s" and row["a_client_bound"] and row["b_client_bound"]
    return math.isfinite(row["p_value"]) and not cb


def run_vs_run(runs_a: pd.DataFrame, runs_b: pd.DataFrame, confidence: float = DEFAULT_CONFIDENCE,
               default_floor: float = DEFAULT_FLOOR, metrics: tuple[str, ...] = COMPARED_METRICS
               ) -> pd.DataFrame:
    """The run_comparisons frame of B against A: every point both runs have, every metric of
    `metrics` both have values of (empty frame when they share no point)."""
    a, b = Cells(runs_a), Cells(runs_b)
    points = common_points(a, b)
    rows = _rows(a, b, points, metrics, confidence)
    if not rows:
        return empty()
    family = [i for i, r in enumerate(rows) if _in_family(r)]
    adjusted = holm([rows[i]["p_value"] for i in family])
    for i, p in zip(family, adjusted):
        rows[i]["p_holm"] = float(p)
    fl = floors(a, b, sorted({p[0] for p in points}), metrics, confidence, default_floor)
    for r in rows:
        r["noise_floor"], r["floor_source"] = fl[(r["suite"], r["metric"])]
        r["verdict"] = run_verdict(r["ratio"], r["lo"], r["hi"], r["p_holm"], METRICS[r["metric"]],
                                   r["noise_floor"], confidence, r["a_client_bound"] and r["b_client_bound"])
    df = pd.DataFrame(rows, columns=[c.name for c in RUN_COMPARISONS])
    for col, proto in empty().items():
        df[col] = df[col].astype(proto.dtype)
    return validate(df, "run_vs_run")


def verdict_rank(verdict: str) -> int:
    """Position of a verdict in VERDICTS (findings first); unknown ones last."""
    return VERDICTS.index(verdict) if verdict in VERDICTS else len(VERDICTS)


def findings_first(df: pd.DataFrame) -> pd.DataFrame:
    """The frame sorted by verdict (VERDICTS order), then suite, scenario, server, metric."""
    if df.empty:
        return df
    key = df["verdict"].map(verdict_rank)
    order = np.lexsort([df["metric"], df["server"], df["scenario"], df["suite"], key])
    return df.iloc[order].reset_index(drop=True)
