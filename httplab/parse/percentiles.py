"""Percentiles of a weighted sample (a latency histogram: values with counts).

Rule (nearest rank on the cumulative count): for q in [0, 100] and N = total count,
rank = max(1, ceil(q/100 * N)); the q-th percentile is the smallest value whose cumulative count
reaches rank. So P0 is the minimum, P100 the maximum, and every percentile is an observed value
(no interpolation). This matches how HdrHistogram-style tools report percentiles.
With integer counts "cumulative count ≥ ceil(q/100·N)" is the same as "cumulative count ≥ q/100·N",
which is the form used here, so it also works for fractional weights (pooled, normalised runs).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def weighted_percentiles(values: Sequence[float] | np.ndarray, counts: Sequence[float] | np.ndarray,
                         qs: Sequence[float] | np.ndarray) -> np.ndarray:
    """Percentiles qs (0..100) of values weighted by counts; NaN for every q if the total count is 0.

    values need not be sorted; zero counts are allowed; negative counts or q outside [0, 100] raise
    ValueError.
    """
    v = np.asarray(values, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64)
    q = np.atleast_1d(np.asarray(qs, dtype=np.float64))
    if v.shape != c.shape or v.ndim != 1:
        raise ValueError("values and counts must be 1-D and of equal length")
    if np.any(c < 0):
        raise ValueError("counts must be >= 0")
    if np.any((q < 0) | (q > 100)) or np.any(np.isnan(q)):
        raise ValueError("percentiles must be within [0, 100]")
    keep = c > 0
    v, c = v[keep], c[keep]
    if v.size == 0:
        return np.full(q.shape, np.nan)
    order = np.argsort(v, kind="stable")
    v, c = v[order], c[order]
    cum = np.cumsum(c)
    total = cum[-1]
    # tolerance so that float noise (0.07 * 100 = 7.000000000000001) does not push the rank up
    targets = q / 100.0 * total - 1e-9 * total
    idx = np.searchsorted(cum, targets, side="left")
    return v[np.minimum(idx, v.size - 1)]


def weighted_percentile(values: Sequence[float] | np.ndarray, counts: Sequence[float] | np.ndarray,
                        q: float) -> float:
    """One percentile; see weighted_percentiles."""
    return float(weighted_percentiles(values, counts, [q])[0])


def weighted_mean(values: Sequence[float] | np.ndarray, counts: Sequence[float] | np.ndarray) -> float:
    v = np.asarray(values, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64)
    total = c.sum()
    return float((v * c).sum() / total) if total > 0 else math.nan


# Relative width of the buckets coarsen_histogram merges values into.
COARSE_STEP = 0.01
# Below this (µs) values are kept exact: 1 % of it is under the tools' 1 µs resolution.
COARSE_EXACT_BELOW_US = 100.0


def coarsen_histogram(values: Sequence[float] | np.ndarray, counts: Sequence[float] | np.ndarray,
                      step: float = COARSE_STEP,
                      exact_below: float = COARSE_EXACT_BELOW_US) -> tuple[np.ndarray, np.ndarray]:
    """Merge a 1-µs-resolution histogram into buckets `step` wide on a log scale (HdrHistogram's
    idea), each represented by its geometric midpoint, so any value moves by at most step/2
    (0.5 %). Values below `exact_below` stay as they are. Returns (values, counts), sorted.

    Why: a full run's histograms hold millions of distinct values, which made the tidy latency
    frame hundreds of MB; the percentiles in the runs frame are still taken from the raw,
    uncoarsened histogram, so only the stored curves lose that 0.5 %."""
    v = np.asarray(values, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64)
    if v.shape != c.shape or v.ndim != 1:
        raise ValueError("values and counts must be 1-D and of equal length")
    coarse = v >= exact_below
    log_step = math.log1p(step)
    k = np.floor(np.log(np.where(coarse, v, 1.0)) / log_step)
    mid = np.round(np.exp((k + 0.5) * log_step), 1)
    key = np.where(coarse, mid, v)
    out_v, inverse = np.unique(key, return_inverse=True)
    out_c = np.bincount(inverse, weights=c, minlength=out_v.size)
    keep = out_c > 0
    return out_v[keep], out_c[keep]
