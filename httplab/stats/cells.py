"""The interval objects the per-suite report code formats cell by cell (MeanCI for one server's
figure, RatioCI for a Δ), computed with stats.methods. RatioCI keeps the Δ as a fraction
(ratio − 1: 0.18 = +18 %), which is how the tables print it.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .methods import (CENTER_RAW_T, DEFAULT_CONFIDENCE, MIN_RUNS, NEEDS_RUNS, Estimate, Ratio, Values,
                      center, ratio_by_rep, ratio_welch, t_bounds)

__all__ = ["MIN_RUNS", "NEEDS_RUNS", "MINUS", "MeanCI", "RatioCI", "mean_ci", "ratio_ci",
           "ratio_ci_by_rep", "signed_mean_ci", "tail_ratio", "tail_ratio_ci", "format_delta"]


@dataclass(frozen=True)
class RatioCI:
    """Δ = A/B − 1 as a fraction (0.18 = +18 %); low/high None when no interval."""
    estimate: float | None
    low: float | None
    high: float | None
    n_a: int
    n_b: int
    confidence: float
    reason: str | None = None
    method: str = ""
    p_value: float | None = None
    paired: bool = False
    n_pairs: int = 0
    # the comparisons frame's verdict (stats.frames.verdict: faster, cheaper, ..., 'no clear
    # difference', 'below the noise floor', 'both client-bound', 'no interval'); None for a Δ not
    # read off that frame
    verdict: str | None = None

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def clear(self) -> bool:
        """True when the interval excludes 0 (a difference the data supports)."""
        return self.has_interval and (self.low > 0 or self.high < 0)  # type: ignore[operator]

    @classmethod
    def of(cls, r: Ratio) -> "RatioCI":
        def d(x: float | None) -> float | None:
            return None if x is None else x - 1.0
        return cls(d(r.ratio), d(r.lo), d(r.hi), r.n_a, r.n_b, r.confidence, r.reason, r.method,
                   r.p_value, r.paired, r.n_pairs)


@dataclass(frozen=True)
class MeanCI:
    """One server's figure: `mean` is the estimate of stats.methods.center (the geometric mean of
    the runs, or their mean where a value is ≤ 0), with its interval."""
    mean: float | None
    low: float | None
    high: float | None
    n: int
    confidence: float
    reason: str | None = None
    method: str = ""
    values: tuple[float, ...] = ()

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def half_width(self) -> float | None:
        """The larger distance from the estimate to a bound (the half-width of a symmetric interval;
        an asymmetric one is printed as its bounds, report.fmt.fmt_mean_ci)."""
        if not self.has_interval or self.mean is None:
            return None
        return max(self.high - self.mean, self.mean - self.low)  # type: ignore[operator]

    @property
    def symmetric(self) -> bool:
        """Both sides equal (a Student-t interval on the values themselves): only then does
        `estimate ± half` read true. A geometric mean's interval (a t interval on the log scale) is
        always asymmetric, its upper side the longer: `113,899 ± 8,591` would misstate
        [105,911, 122,489], so it is printed as its bounds."""
        if not self.has_interval or self.mean is None:
            return False
        up, down = self.high - self.mean, self.mean - self.low  # type: ignore[operator]
        return abs(up - down) <= 1e-9 * max(abs(up), abs(down), 1e-300)

    @classmethod
    def of(cls, e: Estimate, values: tuple[float, ...] = ()) -> "MeanCI":
        return cls(e.estimate, e.lo, e.hi, e.n, e.confidence, e.reason, e.method, values)


def mean_ci(x: Values, confidence: float = DEFAULT_CONFIDENCE) -> MeanCI:
    """One server's figure across runs (stats.methods.center)."""
    arr = np.asarray(x, dtype=np.float64).ravel()
    arr = arr[np.isfinite(arr)]
    return MeanCI.of(center(arr, confidence), tuple(float(v) for v in arr))


def signed_mean_ci(x: Values, confidence: float = DEFAULT_CONFIDENCE) -> MeanCI:
    """Arithmetic mean with a Student-t interval, for quantities that may be negative (a run's
    offset from its point's mean): no log scale."""
    arr = np.asarray(x, dtype=np.float64).ravel()
    arr = arr[np.isfinite(arr)]
    if len(arr) == 0:
        return MeanCI(None, None, None, 0, confidence, "no data", CENTER_RAW_T)
    m = float(arr.mean())
    if len(arr) < MIN_RUNS or np.ptp(arr) == 0:
        reason = NEEDS_RUNS if len(arr) < MIN_RUNS else "all runs equal; no CI"
        return MeanCI(m, None, None, len(arr), confidence, reason, CENTER_RAW_T)
    _, lo, hi = t_bounds(arr, confidence)
    return MeanCI(m, float(lo), float(hi), len(arr), confidence, None, CENTER_RAW_T)


def ratio_ci(a: Values, b: Values, confidence: float = DEFAULT_CONFIDENCE) -> RatioCI:
    """Δ = A/B − 1 from two samples without rep labels: Welch on the logs."""
    return RatioCI.of(ratio_welch(a, b, confidence))


def ratio_ci_by_rep(a: Mapping[int, float], b: Mapping[int, float],
                    confidence: float = DEFAULT_CONFIDENCE) -> RatioCI:
    """Δ = A/B − 1 from rep -> value maps: paired by rep where possible (stats.methods.ratio_by_rep)."""
    return RatioCI.of(ratio_by_rep(dict(a), dict(b), confidence))


def tail_ratio(p99: Values, p50: Values) -> np.ndarray:
    """P99/P50 per run (NaN where P50 is not > 0)."""
    hi = np.asarray(p99, dtype=np.float64)
    lo = np.asarray(p50, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(lo > 0, hi / lo, np.nan)


def tail_ratio_ci(p99: Values, p50: Values, confidence: float = DEFAULT_CONFIDENCE) -> MeanCI:
    """P99/P50 computed per run, then its centre and interval across runs."""
    return mean_ci(tail_ratio(p99, p50), confidence)


# ---------------------------------------------------------------- formatting
MINUS = "\u2212"


def _pct(x: float, digits: int) -> str:
    s = f"{x * 100:+.{digits}f}%"
    return s.replace("-", MINUS)


def _digits_for(*xs: float | None) -> int:
    vals = [abs(x) for x in xs if x is not None]
    return 1 if vals and max(vals) < 0.02 else 0


# the comparisons verdicts that are not a clear difference (format_delta words them before the Δ)
NOT_CLEAR = ("no clear difference", "below the noise floor", "both client-bound", "no interval")
# A req/s Δ with one client-bound side (report.cells.ratio_ci_of): that side's figure is the load
# tool's ceiling, a lower bound of the server's. Where it is the higher side, the true gap is at
# least the printed one (a bound, never a "faster"); where it is the lower side, its server may be as
# fast or faster, so the Δ says nothing either way.
CLIENT_BOUND_LEADS, CLIENT_BOUND_TRAILS = "client-bound side leads", "client-bound side trails"
ONE_SIDE_WORDS = {CLIENT_BOUND_LEADS: "client-bound: the gap is at least", CLIENT_BOUND_TRAILS: "client-bound: no verdict"}


def format_delta(r: RatioCI, digits: int | None = None) -> str:
    """`+18% [+15%, +21%]` (and the comparisons frame's word for it, `+18% [+15%, +21%] faster`, when
    read off that frame); `no clear difference (+1% [−2%, +4%])` when the CI holds 0; `inside the noise
    floor (…)` for a clear Δ no wider than the run's A/A floor; `client-bound: capacity only (…)` for
    req/s of two client-bound points; `+18% (n=3, CI needs ≥ 5 runs)` without an interval; `no data`
    without an estimate."""
    if r.estimate is None:
        return f"no data ({r.reason})" if r.reason and r.reason != "no data" else "no data"
    d = _digits_for(r.estimate, r.low, r.high) if digits is None else digits
    if not r.has_interval:
        n = f"n={r.n_a}" if r.n_a == r.n_b else f"n={r.n_a}/{r.n_b}"
        return f"{_pct(r.estimate, d)} ({n}, {r.reason})"
    if r.clear:  # a bound that excludes 0 never prints as ±0%
        while d < 3 and any(abs(round(x * 100, d)) == 0 for x in (r.low, r.high)):  # type: ignore[arg-type]
            d += 1
    text = f"{_pct(r.estimate, d)} [{_pct(r.low, d)}, {_pct(r.high, d)}]"  # type: ignore[arg-type]
    return with_verdict(text, r)


def with_verdict(text: str, r: RatioCI) -> str:
    """A Δ's printed numbers (`+18% [+15%, +21%]`, or a share) worded with its verdict: `… faster`
    (the frame's word for a clear difference), `no clear difference (…)`, `inside the noise floor
    (…)`, `client-bound: capacity only (…)`, and for one client-bound side `client-bound: the gap is
    at least (…)` or `client-bound: no verdict (…)` (ONE_SIDE_WORDS)."""
    if r.verdict == "both client-bound":
        return f"client-bound: capacity only ({text})"
    if r.verdict in ONE_SIDE_WORDS:
        return f"{ONE_SIDE_WORDS[r.verdict]} ({text})"
    if not r.clear:
        return f"no clear difference ({text})"
    if r.verdict == "below the noise floor":
        return f"inside the noise floor ({text})"
    # a clear difference carries the frame's word for it (faster, cheaper, ...) when it has one
    return f"{text} {r.verdict}" if r.verdict and r.verdict not in NOT_CLEAR else text


