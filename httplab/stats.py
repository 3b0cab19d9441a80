"""Statistics of DESIGN §4. Pure: arrays in, dataclasses out.

* Δ between two servers = mean(a)/mean(b) − 1 with a bootstrap BCa CI over runs (independent
  samples, ≥ 9,999 resamples, fixed seed): `ratio_ci`. At our sample sizes plain BCa is too
  narrow: measured on two normal samples of n = 5 a nominal 95 % BCa interval covers the true
  ratio only ~88 % of the time (n = 10: ~92 %). So each side of the BCa interval is widened about
  the estimate, on the log-ratio scale, by Hesterberg's small-sample expansion, c = √(m/(m−1)) · t(q, n_a+n_b−2) / z(q)
  with m = min(n_a, n_b): √(m/(m−1)) undoes the plug-in variance's (m−1)/m bias and t/z swaps
  normal tails for Student's. Measured coverage then: ~95 % at n = 5 and at n = 10
  (tests/unit/test_stats.py checks it).
* One server's metric: mean with a Student-t CI: `mean_ci`. Why t and not the bootstrap: with the
  5–10 runs per point we have, a bootstrap interval of a mean is too narrow (it uses the plug-in
  variance, biased by (n−1)/n, and normal-like tails instead of t with n−1 d.f.; at n = 5 a 95 %
  percentile/BCa interval covers roughly 85–90 %). A run's req/s is itself an average over many
  requests, so near-normality across runs is a fair assumption, and the t interval is symmetric,
  which lets tables print `mean ± half-width`.
* Fewer than MIN_RUNS values: no interval, reason "CI needs ≥ 5 runs". Never a made-up interval.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

MIN_RUNS = 5
DEFAULT_SEED = 20261121
NEEDS_RUNS = f"CI needs ≥ {MIN_RUNS} runs"


@dataclass(frozen=True)
class RatioCI:
    """Δ = mean(a)/mean(b) − 1 as a fraction (0.18 = +18 %); low/high None when no interval."""
    estimate: float | None
    low: float | None
    high: float | None
    n_a: int
    n_b: int
    confidence: float
    reason: str | None = None  # why there is no interval (or no estimate)
    method: str = "bootstrap BCa, small-sample expanded"

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def clear(self) -> bool:
        """True when the interval excludes 0 (a difference the data supports)."""
        return self.has_interval and (self.low > 0 or self.high < 0)  # type: ignore[operator]


@dataclass(frozen=True)
class MeanCI:
    mean: float | None
    low: float | None
    high: float | None
    n: int
    confidence: float
    reason: str | None = None
    method: str = "Student t"
    values: tuple[float, ...] = ()

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def half_width(self) -> float | None:
        if not self.has_interval:
            return None
        return (self.high - self.low) / 2.0  # type: ignore[operator]


def _clean(x: Sequence[float] | np.ndarray) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64).ravel()
    return arr[np.isfinite(arr)]


def _ratio_stat(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(a, axis=axis) / np.mean(b, axis=axis) - 1.0


def ratio_ci(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, confidence: float = 0.95,
             n_boot: int = 9999, seed: int = DEFAULT_SEED) -> RatioCI:
    """Δ = mean(a)/mean(b) − 1 with a two-sample BCa bootstrap CI (scipy.stats.bootstrap,
    independent samples, `n_boot` resamples, rng = np.random.default_rng(seed)).

    NaN/inf values are dropped first. No interval (reason set) when either side has < 5 values, the
    baseline mean is not positive, or all values are equal on both sides (the bootstrap
    distribution is then a single point and BCa is undefined).
    """
    xa, xb = _clean(a), _clean(b)
    n_a, n_b = len(xa), len(xb)
    if n_a == 0 or n_b == 0:
        return RatioCI(None, None, None, n_a, n_b, confidence, "no data")
    mean_b = float(xb.mean())
    if not mean_b > 0:
        return RatioCI(None, None, None, n_a, n_b, confidence, "baseline mean is not > 0")
    est = float(xa.mean()) / mean_b - 1.0
    if n_a < MIN_RUNS or n_b < MIN_RUNS:
        return RatioCI(est, None, None, n_a, n_b, confidence, NEEDS_RUNS)
    if np.ptp(xa) == 0 and np.ptp(xb) == 0:
        return RatioCI(est, None, None, n_a, n_b, confidence, "all runs equal; no CI")
    if np.any(xb <= 0):
        # a resample could have mean 0; the ratio is then undefined
        return RatioCI(est, None, None, n_a, n_b, confidence, "baseline has values ≤ 0; no CI")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res = sps.bootstrap((xa, xb), _ratio_stat, n_resamples=n_boot, paired=False,
                                vectorized=True, confidence_level=confidence, method="BCa",
                                rng=np.random.default_rng(seed))
            low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        except Exception as exc:  # scipy raises on some degenerate inputs
            return RatioCI(est, None, None, n_a, n_b, confidence, f"bootstrap failed ({type(exc).__name__})")
    if not (math.isfinite(low) and math.isfinite(high)):
        return RatioCI(est, None, None, n_a, n_b, confidence, "bootstrap distribution degenerate; no CI")
    low, high = _expand(est, low, high, small_sample_expansion(n_a, n_b, confidence))
    return RatioCI(est, low, high, n_a, n_b, confidence)


def _expand(est: float, low: float, high: float, c: float) -> tuple[float, float]:
    """Widen [low, high] about est by c on the log-ratio scale, where a ratio's interval is
    near-symmetric and the bounds stay above −100 % (a ratio of positive means is > 0)."""
    if low <= -1.0:  # a resample mean of 0 in a: no log scale; widen linearly
        return est - c * (est - low), est + c * (high - est)
    le, ll, lh = math.log1p(est), math.log1p(low), math.log1p(high)
    return math.expm1(le - c * (le - ll)), math.expm1(le + c * (lh - le))


def small_sample_expansion(n_a: int, n_b: int, confidence: float) -> float:
    """The factor a bootstrap interval is widened by at small n (see the module docstring)."""
    m = min(n_a, n_b)
    q = 0.5 + confidence / 2.0
    return math.sqrt(m / (m - 1)) * float(sps.t.ppf(q, df=n_a + n_b - 2)) / float(sps.norm.ppf(q))


def mean_ci(x: Sequence[float] | np.ndarray, confidence: float = 0.95) -> MeanCI:
    """Mean with a Student-t CI across runs; no interval below 5 values or when all are equal."""
    arr = _clean(x)
    n = len(arr)
    vals = tuple(float(v) for v in arr)
    if n == 0:
        return MeanCI(None, None, None, 0, confidence, "no data", values=vals)
    m = float(arr.mean())
    if n < MIN_RUNS:
        return MeanCI(m, None, None, n, confidence, NEEDS_RUNS, values=vals)
    sd = float(arr.std(ddof=1))
    if sd == 0:
        return MeanCI(m, None, None, n, confidence, "all runs equal; no CI", values=vals)
    half = float(sps.t.ppf(0.5 + confidence / 2.0, df=n - 1)) * sd / math.sqrt(n)
    return MeanCI(m, m - half, m + half, n, confidence, values=vals)


def tail_ratio(p99: Sequence[float] | np.ndarray, p50: Sequence[float] | np.ndarray) -> np.ndarray:
    """P99/P50 per run (NaN where P50 is not > 0)."""
    hi = np.asarray(p99, dtype=np.float64)
    lo = np.asarray(p50, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(lo > 0, hi / lo, np.nan)


def tail_ratio_ci(p99: Sequence[float] | np.ndarray, p50: Sequence[float] | np.ndarray,
                  confidence: float = 0.95) -> MeanCI:
    """P99/P50 computed per run, then mean and CI across runs."""
    return mean_ci(tail_ratio(p99, p50), confidence)


# ---------------------------------------------------------------- formatting
MINUS = "\u2212"


def _pct(x: float, digits: int) -> str:
    s = f"{x * 100:+.{digits}f}%"
    return s.replace("-", MINUS)


def _digits_for(*xs: float | None) -> int:
    vals = [abs(x) for x in xs if x is not None]
    return 1 if vals and max(vals) < 0.02 else 0


def format_delta(r: RatioCI, digits: int | None = None) -> str:
    """`+18% [+15%, +21%]`; `no clear difference (+1% [−2%, +4%])` when the CI holds 0;
    `+18% (n=3, CI needs ≥ 5 runs)` without an interval; `no data` without an estimate."""
    if r.estimate is None:
        return f"no data ({r.reason})" if r.reason and r.reason != "no data" else "no data"
    d = _digits_for(r.estimate, r.low, r.high) if digits is None else digits
    if not r.has_interval:
        n = f"n={r.n_a}" if r.n_a == r.n_b else f"n={r.n_a}/{r.n_b}"
        return f"{_pct(r.estimate, d)} ({n}, {r.reason})"
    text = f"{_pct(r.estimate, d)} [{_pct(r.low, d)}, {_pct(r.high, d)}]"  # type: ignore[arg-type]
    return text if r.clear else f"no clear difference ({text})"
