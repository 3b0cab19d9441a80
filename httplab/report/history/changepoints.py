"""Change points in a series of runs: the algorithm of Apache Otava 0.8.0
(`otava.analysis.compute_change_points`, the successor of MongoDB's and DataStax's Hunter: Fleming
et al., "Hunter: Using Change Point Detection to Hunt for Performance Regressions", ICPE 2023),
written out here on numpy and scipy.

Why not the package itself: apache-otava 0.8.0 (the only release on PyPI) requires numpy == 2.2.0.*
and scipy < 1.17 on Python 3.11, and the lab pins numpy 2.4.6 and scipy 1.17.1 (environment.yml);
pip refuses the combination (ResolutionImpossible), so scripts/setup.sh could not install it, and
it also pulls in google-cloud-bigquery, slack-sdk and pg8000 for its connectors. Its analysis code
needs only numpy and scipy, and runs unchanged on the lab's pins when installed with --no-deps;
tests/unit/test_history_changepoints.py checks this module against it, point for point, wherever
`otava` can be imported (docs/history.md says how).

The algorithm, as Otava runs it with its defaults (window 50, p ≤ 0.001, no minimum magnitude):
1. split: in sliding windows (50 points, step 25), E-divisive means (Matteson and James) proposes
   the split maximising the energy statistic Q̂ between the two sides; a Student t-test between the
   segments the split separates keeps it while p ≤ 10 × max_pvalue (the "weak" change points);
2. merge: the weakest point (largest p) is dropped while p ≥ max_pvalue (or, once all are
   significant, the smallest relative change while it is ≤ min_magnitude), its neighbours' tests
   recomputed over the merged segments.
A series needs 3 points for any test (a t-test of 1 point against 1 has no degrees of freedom).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import ttest_ind_from_stats

WINDOW_LEN = 50        # Otava's defaults (otava.series.AnalysisOptions)
MAX_PVALUE = 0.001
MIN_MAGNITUDE = 0.0
MIN_POINTS = 3         # fewer: no test has a degree of freedom
ENGINE = "Apache Otava 0.8.0's algorithm (E-divisive means split, t-test merge), httplab.report.history.changepoints"


@dataclass(frozen=True)
class ChangePoint:
    """A change at `index`: the series' point `index` is the first of the new level."""
    index: int
    pvalue: float
    mean_before: float
    mean_after: float
    std_before: float
    std_after: float

    @property
    def forward_change(self) -> float:
        """after / before − 1 (0 where the mean before is 0)."""
        return self.mean_after / self.mean_before - 1.0 if self.mean_before else 0.0

    @property
    def magnitude(self) -> float:
        """Otava's change magnitude: the larger of |after/before − 1| and |before/after − 1|."""
        back = self.mean_before / self.mean_after - 1.0 if self.mean_after else 0.0
        return max(abs(self.forward_change), abs(back))


def _ttest(left: np.ndarray, right: np.ndarray, index: int) -> ChangePoint:
    """Otava's TTestSignificanceTester.compare: two-sided Student t-test from the segments' means
    and (population) standard deviations."""
    mean_l, mean_r = float(np.mean(left)), float(np.mean(right))
    std_l = float(np.std(left)) if len(left) >= 2 else 0.0
    std_r = float(np.std(right)) if len(right) >= 2 else 0.0
    if len(left) + len(right) > 2:
        _, p = ttest_ind_from_stats(mean_l, std_l, len(left), mean_r, std_r, len(right), alternative="two-sided")
        p = float(p)
    else:
        p = 1.0
    return ChangePoint(index, p, mean_l, mean_r, std_l, std_r)


def _intervals(indexes: Sequence[int], n: int) -> list[tuple[int, int]]:
    """The segments [start, stop) that sorted change points cut a series of n points into."""
    cuts = [0, *indexes, n]
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if a != b]


def _stats(index: int, series: np.ndarray, intervals: list[tuple[int, int]]) -> ChangePoint:
    """The test of a (candidate) change point against the segments around it: the segment it falls
    in split at it, or, when it is a segment's end already, that segment and the next."""
    for i, (a, b) in enumerate(intervals):
        if b == index:
            return _ttest(series[a:b], series[intervals[i + 1][0]:intervals[i + 1][1]], index)
        if a < index < b:
            return _ttest(series[a:index], series[index:b], index)
    raise ValueError(f"change point {index} lies in none of {intervals}")


def _qhat_candidate(x: np.ndarray, start: int, end: int) -> tuple[int, float]:
    """E-divisive means' best split of x[start:end]: the τ of the (τ, κ) maximising
    Q̂(x[start:τ], x[τ:κ]) (Otava's PairDistanceCalculator, power 1), as (τ, Q̂). The Q̂ table is laid
    out as Otava's (row τ − start − 1, column κ − start − 2, zero below the diagonal) and its first
    maximum taken, so ties resolve alike."""
    size = end - start - 1
    q = np.zeros((size, size))
    for i in range(size):
        tau = start + i + 1
        left = x[start:tau]
        n = len(left)
        within_l = np.abs(left[:, None] - left[None, :]).sum() / 2.0
        for j in range(i, size):
            kappa = start + j + 2
            right = x[tau:kappa]
            m = len(right)
            between = np.abs(left[:, None] - right[None, :]).sum()
            within_r = np.abs(right[:, None] - right[None, :]).sum() / 2.0
            val = 2.0 / (m + n) * between
            if n > 1:
                val -= 2.0 * m / (m + n) / (n - 1) * within_l
            if m > 1:
                val -= 2.0 * n / (m + n) / (m - 1) * within_r
            q[i, j] = val
    i, j = np.unravel_index(np.argmax(q), q.shape)
    return int(i) + 1 + start, float(q[i, j])


def _window_change_points(x: np.ndarray, max_pvalue: float) -> list[ChangePoint]:
    """Otava's ChangePointDetector on one window: split where Q̂ is largest while the split's t-test
    is significant (p ≤ max_pvalue)."""
    found: list[ChangePoint] = []
    while True:
        intervals = _intervals([c.index for c in found], len(x))
        candidates = [_qhat_candidate(x, a, b) for a, b in intervals if b - a > 1]
        if not candidates:
            break
        index, _ = max(candidates, key=lambda c: c[1])
        cp = _stats(index, x, intervals)
        if cp.pvalue > max_pvalue:
            break
        found = sorted([*found, cp], key=lambda c: c.index)
    return found


def _split(x: np.ndarray, window_len: int, max_pvalue: float) -> list[ChangePoint]:
    start, step, found = 0, int(window_len / 2), {}
    while start < len(x):
        end = min(start + window_len, len(x))
        new = [ChangePoint(c.index + start, *(getattr(c, f) for f in ("pvalue", "mean_before", "mean_after",
                                                                          "std_before", "std_after")))
               for c in _window_change_points(x[start:end], max_pvalue)]
        start = max(new[-1].index if new else 0, start + step)
        for c in new:
            found.setdefault(c.index, c)
    indexes = sorted(found)
    intervals = _intervals(indexes, len(x))
    return [_stats(i, x, intervals) for i in indexes]


def _merge(points: list[ChangePoint], x: np.ndarray, max_pvalue: float, min_magnitude: float) -> list[ChangePoint]:
    points = list(points)
    while points:
        weakest = max(points, key=lambda c: c.pvalue)
        if weakest.pvalue < max_pvalue:
            weakest = min(points, key=lambda c: c.magnitude)
            if weakest.magnitude > min_magnitude:
                return points
        k = points.index(weakest)
        del points[k]
        intervals = _intervals([c.index for c in points], len(x))
        for j in (k, k + 1):
            if 0 <= j < len(points):
                points[j] = _stats(points[j].index, x, intervals)
    return points


def detect(values: Sequence[float], max_pvalue: float = MAX_PVALUE, min_magnitude: float = MIN_MAGNITUDE,
           window_len: int = WINDOW_LEN) -> list[ChangePoint]:
    """The change points of a series (in its order), as Otava's compute_change_points finds them;
    [] for a series of fewer than MIN_POINTS points. NaN values are not allowed (drop them first)."""
    x = np.asarray(values, dtype=np.float64)
    if np.isnan(x).any():
        raise ValueError("a series with NaN values: drop the runs without an estimate first")
    if len(x) < MIN_POINTS:
        return []
    assert window_len >= 2, "window length must be at least 2"
    first_pass = max_pvalue * 10 if max_pvalue < 0.05 else (max_pvalue * 2 if max_pvalue < 0.5 else max_pvalue)
    return _merge(_split(x, window_len, first_pass), x, max_pvalue, min_magnitude)
