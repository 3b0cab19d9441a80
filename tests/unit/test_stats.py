"""stats.methods and the cells the reports format: log-scale t intervals (one server), paired by
rep or Welch (two), never an impossible interval, no interval below 5 runs, and exact values
checked against hand computations."""
import math

import numpy as np
import pytest
from scipy import stats as sps

from httplab.stats import (NEEDS_RUNS, RatioCI, center, format_delta, mean_ci, ratio_by_rep, ratio_ci,
                           ratio_ci_by_rep, ratio_paired, ratio_welch, signed_mean_ci, tail_ratio,
                           tail_ratio_ci)
from httplab.stats.methods import CENTER_LOG_T, CENTER_RAW_T, RATIO_PAIRED, RATIO_WELCH


def test_center_is_geometric_mean_with_log_t_interval():
    x = [10.0, 12.0, 11.0, 13.0, 9.0]
    e = center(x)
    logs = np.log(x)
    half = sps.t.ppf(0.975, 4) * logs.std(ddof=1) / math.sqrt(5)
    assert e.estimate == pytest.approx(math.exp(logs.mean()))
    assert e.lo == pytest.approx(math.exp(logs.mean() - half))
    assert e.hi == pytest.approx(math.exp(logs.mean() + half))
    assert e.method == CENTER_LOG_T and e.n == 5


def test_positive_quantities_never_get_an_interval_below_zero():
    """The languages report once printed "4.5× [−0.3, 9.4]" for a P99/P50 ratio."""
    wild = [0.4, 9.0, 1.1, 12.0, 0.6]
    e = mean_ci(wild)
    assert e.low > 0 and e.high > e.mean > e.low
    r = ratio_ci(wild, [1.0, 1.2, 0.9, 1.1, 1.0])
    assert r.low > -1.0   # ratio − 1 > −100 %: the ratio itself stays positive


def test_values_at_or_below_zero_fall_back_to_raw_t():
    e = center([-1.0, 1.0, 2.0, 0.5, 0.0])
    assert e.method == CENTER_RAW_T and e.has_interval
    s = signed_mean_ci([-2.0, -1.0, 0.0, 1.0, 2.5])
    assert s.mean == pytest.approx(0.1) and s.low < 0 < s.high and s.method == CENTER_RAW_T


def test_paired_ratio_matches_hand_computation_and_removes_rep_drift():
    drift = np.array([1.0, 0.7, 1.3, 0.9, 1.15])      # the whole rep slower or faster
    a = 120.0 * drift * np.array([1.01, 0.99, 1.0, 1.02, 0.98])
    b = 100.0 * drift * np.array([0.99, 1.01, 1.0, 0.98, 1.02])
    p = ratio_paired(a, b)
    d = np.log(a) - np.log(b)
    half = sps.t.ppf(0.975, 4) * d.std(ddof=1) / math.sqrt(5)
    assert p.ratio == pytest.approx(math.exp(d.mean()))
    assert (p.lo, p.hi) == (pytest.approx(math.exp(d.mean() - half)), pytest.approx(math.exp(d.mean() + half)))
    assert p.paired and p.n_pairs == 5 and p.method == RATIO_PAIRED and p.clear
    assert p.p_value == pytest.approx(sps.ttest_rel(np.log(a), np.log(b)).pvalue)
    w = ratio_welch(a, b)             # the same data unpaired: drift widens the interval
    assert w.method == RATIO_WELCH and not w.paired
    assert math.log(w.hi / w.lo) > 5 * math.log(p.hi / p.lo) and not w.clear
    assert w.p_value == pytest.approx(sps.ttest_ind(np.log(a), np.log(b), equal_var=False).pvalue)


def test_by_rep_pairs_when_five_reps_are_shared_else_welch():
    a = {1: 110.0, 2: 112.0, 3: 108.0, 4: 111.0, 5: 109.0, 6: 110.5}
    b = {1: 100.0, 2: 101.0, 3: 99.0, 4: 100.5, 5: 99.5}
    r = ratio_by_rep(a, b)
    assert r.paired and r.n_pairs == 5 and r.n_a == 5
    b4 = {k: v for k, v in b.items() if k != 5}
    r = ratio_by_rep(a, b4)
    assert not r.paired and r.n_pairs == 4 and (r.n_a, r.n_b) == (6, 4) and r.reason == NEEDS_RUNS
    c = ratio_ci_by_rep(a, b)
    assert isinstance(c, RatioCI) and c.estimate == pytest.approx(r.ratio - 1, abs=0.01) and c.paired


def test_fewer_than_5_runs_has_no_interval():
    r = ratio_ci([1, 2, 3], [1, 2, 3, 4, 5])
    assert r.estimate is not None and r.low is None and r.high is None
    assert r.reason == NEEDS_RUNS and not r.clear
    m = mean_ci([1, 2, 3, 4])
    assert m.mean == pytest.approx(24 ** 0.25) and m.low is None and m.reason == NEEDS_RUNS
    p = ratio_paired([1, 2, 3, 4], [1, 2, 3, 4])
    assert p.lo is None and "pairs" in p.reason


def test_degenerate_inputs_never_crash_nor_fake_an_interval():
    r = ratio_ci([5] * 5, [5] * 5)
    assert r.estimate == 0 and r.low is None and "equal" in r.reason
    r = ratio_ci([1] * 6, [0] * 6)
    assert r.estimate is None and r.low is None
    r = ratio_ci([], [1, 2, 3, 4, 5])
    assert r.estimate is None and r.reason == "no data"
    r = ratio_ci([np.nan] * 5, [1] * 5)
    assert r.estimate is None
    r = ratio_ci([1, 1, 1, 1, 2], [1] * 5)  # one side constant: Welch still defined
    assert r.estimate == pytest.approx(2 ** 0.2 - 1) and r.has_interval
    m = mean_ci([3.0] * 5)
    assert m.mean == pytest.approx(3.0) and m.low is None and "equal" in m.reason
    assert mean_ci([]).mean is None
    with pytest.raises(ValueError):
        ratio_paired([1, 2], [1, 2, 3])


def test_half_width_and_symmetry_of_a_log_interval():
    """A geometric mean's interval (log scale) is asymmetric however narrow, so it is printed as its
    bounds, never as ± its larger side; a Student-t interval on the values is symmetric."""
    from httplab.report.fmt import fmt_mean_ci
    from httplab.stats import signed_mean_ci
    m = mean_ci([100.0, 101, 99, 100.5, 99.5])
    assert not m.symmetric and m.half_width == pytest.approx(max(m.high - m.mean, m.mean - m.low))
    wide = mean_ci([1.0, 8.0, 2.0, 6.0, 3.0])
    assert not wide.symmetric
    assert signed_mean_ci([100.0, 101, 99, 100.5, 99.5]).symmetric
    # a cell once printed 113,899 ± 8,591 (the larger side): the interval is [105,911, 122,489]
    from httplab.stats.cells import MeanCI
    cell = MeanCI(113_899.0, 105_911.0, 122_489.0, 12, 0.95, method="geometric mean, t interval on logs")
    assert fmt_mean_ci(cell) == "113,899 [105,911 – 122,489] (n=12)"
    assert "±" not in fmt_mean_ci(m, show_n=False)


def test_tail_ratio_per_run():
    assert tail_ratio([100, 300], [50, 100]).tolist() == [2, 3]
    assert np.isnan(tail_ratio([1], [0])[0])
    t = tail_ratio_ci([100, 200, 300, 400, 500], [50, 100, 100, 100, 100])
    assert t.mean == pytest.approx(math.exp(np.mean(np.log([2, 2, 3, 4, 5]))))


def test_format_delta_rules():
    assert format_delta(RatioCI(0.18, 0.15, 0.21, 5, 5, 0.95)) == "+18% [+15%, +21%]"
    assert format_delta(RatioCI(-0.3, -0.35, -0.25, 5, 5, 0.95)) == "\u221230% [\u221235%, \u221225%]"
    assert format_delta(RatioCI(0.01, -0.02, 0.04, 5, 5, 0.95)) == "no clear difference (+1% [\u22122%, +4%])"
    # one decimal when every number is below 2 %, so small effects do not print as +0%
    assert format_delta(RatioCI(0.004, -0.01, 0.015, 5, 5, 0.95)) == \
        "no clear difference (+0.4% [\u22121.0%, +1.5%])"
    assert format_delta(RatioCI(0.18, None, None, 3, 3, 0.95, NEEDS_RUNS)) == "+18% (n=3, CI needs ≥ 5 runs)"
    assert format_delta(RatioCI(0.18, None, None, 5, 4, 0.95, NEEDS_RUNS)) == "+18% (n=5/4, CI needs ≥ 5 runs)"
    assert format_delta(RatioCI(None, None, None, 0, 5, 0.95, "no data")) == "no data"
    assert format_delta(RatioCI(0.18, 0.15, 0.21, 5, 5, 0.95), digits=1) == "+18.0% [+15.0%, +21.0%]"


def test_format_delta_of_real_result():
    text = format_delta(ratio_ci([118, 120, 119, 121, 122], [100, 99, 101, 100, 102]))
    assert text.startswith("+20% [") and "no clear" not in text
    text = format_delta(ratio_ci([100, 104, 96, 101, 99], [101, 97, 103, 99, 100]))
    assert text.startswith("no clear difference (")
