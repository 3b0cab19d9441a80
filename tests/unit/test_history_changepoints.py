"""Change points (httplab.report.history.changepoints): a planted 15 % step is found at the right run,
an A/A history (one level, the lab's noise) flags none, and the algorithm is Apache Otava's, point
for point, wherever the otava package can be imported (docs/history.md: it cannot be installed beside
the lab's pins, so this last check runs where someone installed it with --no-deps)."""
import numpy as np
import pytest

from httplab.report.history import changepoints as cp


def _series(n, noise, seed, step_at=None, step=0.0, level=150_000.0):
    rng = np.random.default_rng(seed)
    x = level * (1 + noise * rng.standard_normal(n))
    if step_at is not None:
        x[step_at:] *= 1 + step
    return x


def test_a_planted_15_percent_step_is_found_at_the_right_run():
    """16 runs with 2 % noise, the last 7 15 % slower: the change point is run 9."""
    found = cp.detect(_series(16, 0.02, 0, step_at=9, step=-0.15))
    assert [c.index for c in found] == [9]
    c = found[0]
    assert c.pvalue <= cp.MAX_PVALUE
    assert -0.20 < c.forward_change < -0.10


def test_planted_steps_are_found_at_the_right_run_in_most_histories():
    """Over 40 histories (2 % noise) the step is found exactly at its run in at least 36 (a point
    that the noise puts between the two levels may move it by one: Otava does the same)."""
    exact = sum([c.index for c in cp.detect(_series(16, 0.02, s, step_at=9, step=-0.15))] == [9] for s in range(40))
    assert exact >= 36


def test_in_5_percent_noise_a_15_percent_step_is_found_within_a_run_mostly():
    hits = 0
    for s in range(40):
        found = cp.detect(_series(16, 0.05, 50 + s, step_at=8, step=-0.15))
        hits += len(found) == 1 and abs(found[0].index - 8) <= 1
    assert hits >= 30


def test_a_step_up_is_found_too():
    found = cp.detect(_series(12, 0.02, 11, step_at=4, step=0.15))
    assert [c.index for c in found] == [4] and found[0].forward_change > 0.1


@pytest.mark.parametrize("seed", range(20))
def test_an_aa_history_flags_none(seed):
    """One level with the noise the committed runs show between days (5 %): no change point."""
    assert cp.detect(_series(16, 0.05, 100 + seed)) == []


def test_too_short_a_series_is_not_tested():
    assert cp.detect([1.0, 2.0]) == []
    assert cp.detect([]) == []


def test_nan_is_refused():
    with pytest.raises(ValueError):
        cp.detect([1.0, float("nan"), 1.0, 1.0])


def test_two_steps_are_both_found():
    x = _series(30, 0.01, 3)
    x[10:] *= 0.85
    x[20:] *= 0.8
    assert [c.index for c in cp.detect(x)] == [10, 20]


def test_the_same_as_apache_otava_where_it_can_be_imported():
    otava = pytest.importorskip("otava.analysis")
    rng = np.random.default_rng(7)
    for _ in range(150):
        n = int(rng.integers(3, 80))
        x = 100 * (1 + 0.05 * rng.standard_normal(n))
        for _ in range(int(rng.integers(0, 3))):
            x[int(rng.integers(1, n)):] *= rng.choice([0.8, 0.9, 1.15, 1.3])
        for p, mm in ((0.001, 0.0), (0.05, 0.0), (0.01, 0.05)):
            theirs = otava.compute_change_points(list(x), max_pvalue=p, min_magnitude=mm)[0]
            ours = cp.detect(x, p, mm)
            assert [int(c.index) for c in theirs] == [c.index for c in ours]
            assert np.allclose([float(c.stats.pvalue) for c in theirs], [c.pvalue for c in ours], rtol=1e-9)
