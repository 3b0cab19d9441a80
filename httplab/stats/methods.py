"""The interval methods every report uses, chosen by their measured coverage (stats.coverage).

All the lab's metrics are positive (req/s, latencies, CPU, memory, P99/P50), and run-to-run noise
on them is multiplicative: a slow rep slows every request of it. So every interval is computed on
the log scale and mapped back:

* one server's figure (`center`): the geometric mean of its runs with a Student-t interval on the
  logs, n − 1 d.f. It estimates the centre (median) of the run distribution; with the small spreads
  of req/s it equals the arithmetic mean to a fraction of its interval. It never crosses zero.
* A vs B (`ratio_paired`, `ratio_welch`): the ratio of geometric means. Paired when both ran in
  the same reps (reps are blocks: each rep starts every server fresh, minutes apart, in a random
  order, so drift between reps cancels in the per-rep log ratio): a one-sample t interval on the
  per-rep log ratios, n_pairs − 1 d.f. Otherwise Welch's t on the two samples of logs
  (Welch–Satterthwaite d.f.), which keeps its coverage when the two spreads differ (3:1 is common
  here; Welch 1947, "The generalization of 'Student's' problem when several different population
  variances are involved", Biometrika 34:28-35). Both give the t-test's two-sided p-value, which
  the rankings correct for multiplicity.

No small-sample correction is applied on top: t intervals are exact for normal log-values at any n,
and the coverage simulation (normal and lognormal noise, n = 3, 5, 10, equal and 3:1 spreads)
measures them at 94-96 % for a nominal 95 %. The earlier bootstrap (BCa, widened by Hesterberg's
expansion) covered only 91-93 % with unequal spreads and is gone.

Fewer than MIN_RUNS values (or pairs): an estimate but no interval, with the reason. Values ≤ 0
have no log: `center` falls back to a Student-t interval on the raw values (saying so); ratios
give none.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._scipy import sps

MIN_RUNS = 5
NEEDS_RUNS = f"CI needs ≥ {MIN_RUNS} runs"
DEFAULT_CONFIDENCE = 0.95

CENTER_LOG_T = "geometric mean, t interval on logs"
CENTER_RAW_T = "mean, Student t (values ≤ 0: no log scale)"
RATIO_PAIRED = "paired by rep, t interval on log ratios"
RATIO_WELCH = "unpaired, Welch t on logs"

Values = Sequence[float] | np.ndarray


@dataclass(frozen=True, kw_only=True)
class Interval:
    """An interval [lo, hi] at `confidence` from `method`; lo/hi None without one (see reason)."""
    lo: float | None = None
    hi: float | None = None
    confidence: float
    method: str
    reason: str | None = None

    @property
    def has_interval(self) -> bool:
        return self.lo is not None and self.hi is not None


@dataclass(frozen=True, kw_only=True)
class Estimate(Interval):
    """One figure of one server over n runs."""
    estimate: float | None
    n: int


@dataclass(frozen=True, kw_only=True)
class Ratio(Interval):
    """A/B as a ratio (1.18 = A 18 % higher), the two-sided p-value of ratio = 1, and the runs used:
    n_a and n_b, n_pairs the reps both ran in (the pairs, when paired)."""
    ratio: float | None
    p_value: float | None = None
    n_a: int
    n_b: int
    n_pairs: int
    paired: bool

    @property
    def clear(self) -> bool:
        """The interval excludes 1: a difference the data supports at this confidence."""
        return self.has_interval and (self.lo > 1.0 or self.hi < 1.0)  # type: ignore[operator]


def clean(x: Values) -> np.ndarray:
    """Finite values as float64 (NaN and inf dropped)."""
    arr = np.asarray(x, dtype=np.float64).ravel()
    return arr[np.isfinite(arr)]


# ---------------------------------------------------------------- vectorised cores
# The coverage simulation calls these on (trials, n) arrays; the functions below on one sample.
def t_bounds(logs: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and t-interval bounds along the last axis (n − 1 d.f.)."""
    n = logs.shape[-1]
    m = logs.mean(axis=-1)
    half = sps.t.ppf(0.5 + confidence / 2.0, n - 1) * logs.std(axis=-1, ddof=1) / math.sqrt(n)
    return m, m - half, m + half


def welch_bounds(la: np.ndarray, lb: np.ndarray, confidence: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Difference of means along the last axis with Welch's interval; also its t and d.f."""
    na, nb = la.shape[-1], lb.shape[-1]
    va, vb = la.var(axis=-1, ddof=1) / na, lb.var(axis=-1, ddof=1) / nb
    se2 = va + vb
    with np.errstate(divide="ignore", invalid="ignore"):
        df = se2 ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1))
    d = la.mean(axis=-1) - lb.mean(axis=-1)
    se = np.sqrt(se2)
    half = sps.t.ppf(0.5 + confidence / 2.0, df) * se
    with np.errstate(divide="ignore", invalid="ignore"):
        t = d / se
    return d, d - half, d + half, t, df


def _p_two_sided(t: float, df: float) -> float:
    return float(2.0 * sps.t.sf(abs(t), df))


# ---------------------------------------------------------------- one server
def center(x: Values, confidence: float = DEFAULT_CONFIDENCE) -> Estimate:
    """Geometric mean of the runs with a t interval on the log scale (module docstring); the mean
    with a Student-t interval on the raw values when a value is ≤ 0."""
    arr = clean(x)
    n = len(arr)
    raw = bool(np.any(arr <= 0))
    method = CENTER_RAW_T if raw else CENTER_LOG_T
    if n == 0:
        return Estimate(estimate=None, n=0, confidence=confidence, method=method, reason="no data")
    vals = arr if raw else np.log(arr)
    back = (lambda v: float(v)) if raw else (lambda v: float(math.exp(v)))
    est = back(vals.mean())
    reason = NEEDS_RUNS if n < MIN_RUNS else "all runs equal; no CI" if np.ptp(vals) == 0 else None
    if reason:
        return Estimate(estimate=est, n=n, confidence=confidence, method=method, reason=reason)
    _, lo, hi = t_bounds(vals, confidence)
    return Estimate(estimate=est, lo=back(lo), hi=back(hi), n=n, confidence=confidence, method=method)


# ---------------------------------------------------------------- two servers
def _ratio(est: float | None, bounds: tuple[float, float] | None, p: float | None, n_a: int, n_b: int,
           n_pairs: int, paired: bool, confidence: float, method: str, reason: str | None = None) -> Ratio:
    lo, hi = (float(math.exp(bounds[0])), float(math.exp(bounds[1]))) if bounds else (None, None)
    return Ratio(ratio=est, lo=lo, hi=hi, p_value=p, n_a=n_a, n_b=n_b, n_pairs=n_pairs, paired=paired,
                 confidence=confidence, method=method, reason=reason)


def ratio_welch(a: Values, b: Values, confidence: float = DEFAULT_CONFIDENCE) -> Ratio:
    """A/B from two independent samples: Welch's t on the logs."""
    xa, xb = clean(a), clean(b)
    n_a, n_b = len(xa), len(xb)
    args = (n_a, n_b, 0, False, confidence, RATIO_WELCH)
    if n_a == 0 or n_b == 0:
        return _ratio(None, None, None, *args, "no data")
    if np.any(xa <= 0) or np.any(xb <= 0):
        return _ratio(None, None, None, *args, "values ≤ 0: no ratio")
    la, lb = np.log(xa), np.log(xb)
    est = float(math.exp(la.mean() - lb.mean()))
    if n_a < MIN_RUNS or n_b < MIN_RUNS:
        return _ratio(est, None, None, *args, NEEDS_RUNS)
    if np.ptp(la) == 0 and np.ptp(lb) == 0:
        return _ratio(est, None, None, *args, "all runs equal; no CI")
    _, lo, hi, t, df = welch_bounds(la, lb, confidence)
    return _ratio(est, (float(lo), float(hi)), _p_two_sided(float(t), float(df)), *args)


def ratio_paired(a: Values, b: Values, confidence: float = DEFAULT_CONFIDENCE) -> Ratio:
    """A/B from pairs (a[i], b[i] ran in the same rep): t interval on the per-pair log ratios.
    A pair with a non-finite side is dropped."""
    xa = np.asarray(a, dtype=np.float64).ravel()
    xb = np.asarray(b, dtype=np.float64).ravel()
    if xa.shape != xb.shape:
        raise ValueError(f"paired samples differ in length ({len(xa)} vs {len(xb)})")
    keep = np.isfinite(xa) & np.isfinite(xb)
    xa, xb = xa[keep], xb[keep]
    n = len(xa)
    args = (n, n, n, True, confidence, RATIO_PAIRED)
    if n == 0 or np.any(xa <= 0) or np.any(xb <= 0):
        return _ratio(None, None, None, *args, "no data" if n == 0 else "values ≤ 0: no ratio")
    d = np.log(xa) - np.log(xb)
    est = float(math.exp(d.mean()))
    if n < MIN_RUNS or np.ptp(d) == 0:
        reason = f"CI needs ≥ {MIN_RUNS} pairs" if n < MIN_RUNS else "all pairs equal; no CI"
        return _ratio(est, None, None, *args, reason)
    m, lo, hi = t_bounds(d, confidence)
    t = float(m) / (float(d.std(ddof=1)) / math.sqrt(n))
    return _ratio(est, (float(lo), float(hi)), _p_two_sided(t, n - 1), *args)


def ratio_by_rep(a: dict[int, float], b: dict[int, float], confidence: float = DEFAULT_CONFIDENCE
                 ) -> Ratio:
    """A/B from rep -> value maps (ok runs only): paired over the reps both ran in when there are
    at least MIN_RUNS of them, else Welch over all runs of each."""
    common = sorted(set(a) & set(b))
    if len(common) >= MIN_RUNS:
        return ratio_paired([a[r] for r in common], [b[r] for r in common], confidence)
    r = ratio_welch(list(a.values()), list(b.values()), confidence)
    return dataclasses.replace(r, n_pairs=len(common))
