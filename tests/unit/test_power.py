"""The minimum detectable effect (httplab.stats.power): a true ratio of exactly the MDE is found
(the interval excludes 1) in 80 % of simulated runs, paired and at the lab's rep counts."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from httplab.stats.power import df_of, mde, noncentrality


@pytest.mark.parametrize("n", [5, 10, 20])
def test_a_ratio_of_the_mde_is_found_in_80_percent_of_runs(n):
    """Normal noise on the log scale, sd 0.1: the MDE of an interval of the expected width is the
    effect; the share of simulated paired runs whose 95 % interval excludes 1 is 80 % ± 1.5 %."""
    rng = np.random.default_rng(n)
    sd, trials, df = 0.1, 40_000, n - 1
    tq = sps.t.ppf(0.975, df)
    se = sd / math.sqrt(n)
    effect = math.log1p(mde(math.exp(-tq * se), math.exp(tq * se), df))
    x = rng.normal(effect, sd, size=(trials, n))
    m, s = x.mean(axis=1), x.std(axis=1, ddof=1) / math.sqrt(n)
    found = np.mean(np.abs(m) > tq * s)
    assert found == pytest.approx(0.80, abs=0.015)


def test_the_familiar_large_sample_form():
    assert noncentrality(10_000) == pytest.approx(sps.norm.ppf(0.975) + sps.norm.ppf(0.8), rel=2e-3)
    assert noncentrality(4) > noncentrality(9) > noncentrality(19)


def test_no_interval_no_mde_and_the_welch_df():
    assert math.isnan(mde(math.nan, 1.1, 4)) and math.isnan(mde(0.9, 1.1, 0))
    assert df_of(True, 5, 5, 5) == 4 and df_of(False, 0, 5, 8) == 4
