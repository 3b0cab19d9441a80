import math

import numpy as np
import pytest

from httplab.parse.percentiles import weighted_mean, weighted_percentile, weighted_percentiles


def test_nearest_rank_on_unit_counts():
    v = list(range(1, 101))  # 1..100, one each
    assert weighted_percentile(v, [1] * 100, 50) == 50
    assert weighted_percentile(v, [1] * 100, 99) == 99
    assert weighted_percentile(v, [1] * 100, 99.9) == 100
    assert weighted_percentile(v, [1] * 100, 0) == 1
    assert weighted_percentile(v, [1] * 100, 100) == 100
    assert weighted_percentile(v, [1] * 100, 7) == 7  # 0.07*100 is 7.000000000000001 in floats


def test_matches_expanded_sample():
    rng = np.random.default_rng(3)
    values = np.unique(rng.integers(10, 5000, 300))
    counts = rng.integers(0, 50, len(values))
    sample = np.repeat(values, counts)
    n = len(sample)
    for q in (1, 25, 50, 90, 99, 99.9, 100):
        rank = max(1, math.ceil(q / 100 * n))
        assert weighted_percentile(values, counts, q) == np.sort(sample)[rank - 1]


def test_counts_weight_values_and_order_does_not_matter():
    assert weighted_percentile([30, 10, 20], [1, 8, 1], 50) == 10
    assert weighted_percentile([30, 10, 20], [1, 8, 1], 90) == 20
    assert weighted_percentile([30, 10, 20], [1, 8, 1], 91) == 30


def test_fractional_weights_pool():
    # two runs normalised to weight 1 each
    assert weighted_percentiles([1, 2, 3, 4], [0.5, 0.5, 0.5, 0.5], [25, 50, 75, 100]).tolist() == [1, 2, 3, 4]


def test_empty_and_invalid():
    assert math.isnan(weighted_percentile([], [], 50))
    assert math.isnan(weighted_percentile([5], [0], 50))
    with pytest.raises(ValueError):
        weighted_percentile([1], [-1], 50)
    with pytest.raises(ValueError):
        weighted_percentile([1], [1], 101)


def test_weighted_mean():
    assert weighted_mean([1, 3], [1, 3]) == pytest.approx(2.5)
    assert math.isnan(weighted_mean([], []))


def test_coarsen_histogram_bounds_the_error_and_keeps_counts():
    from httplab.parse.percentiles import coarsen_histogram

    rng = np.random.default_rng(3)
    values = np.unique(rng.integers(1, 2_000_000, 50_000)).astype(float)
    counts = rng.integers(1, 5, values.size).astype(float)
    cv, cc = coarsen_histogram(values, counts)
    assert cc.sum() == counts.sum()
    assert cv.size < values.size / 20  # the point: far fewer rows
    assert np.all(np.diff(cv) > 0)
    # every original value sits within 0.5 % (+ rounding) of the bucket it went to
    idx = np.searchsorted(cv, values)
    near = np.minimum(np.abs(cv[np.clip(idx, 0, cv.size - 1)] - values),
                      np.abs(cv[np.clip(idx - 1, 0, cv.size - 1)] - values))
    assert np.all(near <= values * 0.0051 + 0.05)
    # small values are untouched
    small = values < 100
    assert set(values[small]) <= set(cv)


def test_coarsened_percentiles_stay_within_half_a_percent():
    from httplab.parse.percentiles import coarsen_histogram

    rng = np.random.default_rng(4)
    lat = np.round(rng.lognormal(7, 0.8, 200_000))
    values, counts = np.unique(lat, return_counts=True)
    cv, cc = coarsen_histogram(values, counts)
    for q in (50, 90, 99, 99.9):
        exact = weighted_percentile(values, counts, q)
        assert abs(weighted_percentile(cv, cc, q) - exact) <= exact * 0.0051 + 0.05
