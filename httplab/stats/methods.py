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
  here). Both give the t-test's two-sided p-value, which the rankings correct for multiplicity.

No small-sample correction is applied on top: t intervals are exact for normal log-values at any n,
and the coverage simulation (normal and lognormal noise, n = 3, 5, 10, equal and 3:1 spreads)
measures them at 94-96 % for a nominal 95 %. The earlier bootstrap (BCa, widened by Hesterberg's
expansion) covered only 91-93 % with unequal spreads and is gone.

Fewer than MIN_RUNS values (or pairs): an estimate but no interval, with the reason. Values ≤ 0
have no log: `center` falls back to a Student-t interval on the raw values (saying so); ratios
give none.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

MIN_RUNS = 5
NEEDS_RUNS = f"CI needs ≥ {MIN_RUNS} runs"
DEFAULT_CONFIDENCE = 0.95

CENTER_LOG_T = "geometric mean, t interval on logs"
CENTER_RAW_T = "mean, Student t (values ≤ 0: no log scale)"
RATIO_PAIRED = "paired by rep, t interval on log ratios"
RATIO_WELCH = "unpaired, Welch t on logs"

Values = Sequence[float] | np.ndarray


@dataclass(frozen=True)
class Estimate:
    """One figure of one server: estimate with [lo, hi] at `confidence`; lo/hi None without one."""
    estimate: float | None
    lo: float | None
    hi: float | None
    n: int
    confidence: float
    method: str
    reason: str | None = None

    @property
    def has_interval(self) -> bool:
        return self.lo is not None and self.hi is not None


@dataclass(frozen=True)
class Ratio:
    """A/B as a ratio (1.18 = A 18 % higher) with [lo, hi] and the two-sided p-value of ratio = 1."""
    ratio: float | None
    lo: float | None
    hi: float | None
    p_value: float | None
    n_a: int
    n_b: int
    n_pairs: int          # reps both ran in (used when paired)
    paired: bool
    confidence: float
    method: str
    reason: str | None = None

    @property
    def has_interval(self) -> bool:
        return self.lo is not None and self.hi is not None

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
    """Geometric mean of the runs with a t interval on the log scale (module docstring)."""
    arr = clean(x)
    n = len(arr)
    if n == 0:
        return Estimate(None, None, None, 0, confidence, CENTER_LOG_T, "no data")
    if np.any(arr <= 0):
        return _center_raw(arr, confidence)
    logs = np.log(arr)
    est = float(math.exp(logs.mean()))
    if n < MIN_RUNS:
        return Estimate(est, None, None, n, confidence, CENTER_LOG_T, NEEDS_RUNS)
    if np.ptp(logs) == 0:
        return Estimate(est, None, None, n, confidence, CENTER_LOG_T, "all runs equal; no CI")
    _, lo, hi = t_bounds(logs, confidence)
    return Estimate(est, float(math.exp(lo)), float(math.exp(hi)), n, confidence, CENTER_LOG_T)


def _center_raw(arr: np.ndarray, confidence: float) -> Estimate:
    n = len(arr)
    est = float(arr.mean())
    if n < MIN_RUNS:
        return Estimate(est, None, None, n, confidence, CENTER_RAW_T, NEEDS_RUNS)
    if np.ptp(arr) == 0:
        return Estimate(est, None, None, n, confidence, CENTER_RAW_T, "all runs equal; no CI")
    m, lo, hi = t_bounds(arr, confidence)
    return Estimate(float(m), float(lo), float(hi), n, confidence, CENTER_RAW_T)


# ---------------------------------------------------------------- two servers
def _no_ratio(ratio: float | None, n_a: int, n_b: int, n_pairs: int, paired: bool, confidence: float,
              method: str, reason: str) -> Ratio:
    return Ratio(ratio, None, None, None, n_a, n_b, n_pairs, paired, confidence, method, reason)


def ratio_welch(a: Values, b: Values, confidence: float = DEFAULT_CONFIDENCE) -> Ratio:
    """A/B from two independent samples: Welch's t on the logs."""
    xa, xb = clean(a), clean(b)
    n_a, n_b = len(xa), len(xb)
    args = (n_a, n_b, 0, False, confidence, RATIO_WELCH)
    if n_a == 0 or n_b == 0:
        return _no_ratio(None, *args, "no data")
    if np.any(xa <= 0) or np.any(xb <= 0):
        return _no_ratio(None, *args, "values ≤ 0: no ratio")
    la, lb = np.log(xa), np.log(xb)
    est = float(math.exp(la.mean() - lb.mean()))
    if n_a < MIN_RUNS or n_b < MIN_RUNS:
        return _no_ratio(est, *args, NEEDS_RUNS)
    if np.ptp(la) == 0 and np.ptp(lb) == 0:
        return _no_ratio(est, *args, "all runs equal; no CI")
    _, lo, hi, t, df = welch_bounds(la, lb, confidence)
    return Ratio(est, float(math.exp(lo)), float(math.exp(hi)), _p_two_sided(float(t), float(df)),
                 n_a, n_b, 0, False, confidence, RATIO_WELCH)


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
    if n == 0:
        return _no_ratio(None, *args, "no data")
    if np.any(xa <= 0) or np.any(xb <= 0):
        return _no_ratio(None, *args, "values ≤ 0: no ratio")
    d = np.log(xa) - np.log(xb)
    est = float(math.exp(d.mean()))
    if n < MIN_RUNS:
        return _no_ratio(est, *args, f"CI needs ≥ {MIN_RUNS} pairs")
    if np.ptp(d) == 0:
        return _no_ratio(est, *args, "all pairs equal; no CI")
    m, lo, hi = t_bounds(d, confidence)
    t = float(m) / (float(d.std(ddof=1)) / math.sqrt(n))
    return Ratio(est, float(math.exp(lo)), float(math.exp(hi)), _p_two_sided(t, n - 1),
                 n, n, n, True, confidence, RATIO_PAIRED)


def ratio_by_rep(a: dict[int, float], b: dict[int, float], confidence: float = DEFAULT_CONFIDENCE
                 ) -> Ratio:
    """A/B from rep -> value maps (ok runs only): paired over the reps both ran in when there are
    at least MIN_RUNS of them, else Welch over all runs of each."""
    common = sorted(set(a) & set(b))
    if len(common) >= MIN_RUNS:
        return ratio_paired([a[r] for r in common], [b[r] for r in common], confidence)
    r = ratio_welch(list(a.values()), list(b.values()), confidence)
    return Ratio(r.ratio, r.lo, r.hi, r.p_value, r.n_a, r.n_b, len(common), False, r.confidence,
                 r.method, r.reason)
