"""What a comparison could have detected: the minimum detectable effect (MDE) of a ratio's t
interval, at the reps that ran.

A Δ that is not clear says little unless the reader knows how large a Δ the run could have seen.
A t interval on the log scale with half-width h and d.f. df has standard error se = h / t(1 − α/2,
df). A true ratio r makes the interval exclude 1 with probability 1 − F(t_q; df, δ) + F(−t_q; df, δ),
F the non-central t distribution with non-centrality δ = ln r / se. The MDE is the r at which that
probability is `power`: exp(δ80 · se) − 1, δ80 solved once per df (about 3.7 at 4 d.f., 2.8 at many,
for 80 % power at 95 % confidence; the familiar t_q + t_power is its large-sample form). A paired
interval has df = pairs − 1; a Welch interval's df lies between min(n) − 1 and n_a + n_b − 2, and the
lower end is taken (the larger δ80: the MDE is never understated). tests/unit/test_power.py checks
the 80 % by simulation.
"""
from __future__ import annotations

import math
from functools import lru_cache

from ._scipy import optimize, sps

POWER = 0.80


@lru_cache(maxsize=None)
def noncentrality(df: float, confidence: float = 0.95, power: float = POWER) -> float:
    """δ at which a two-sided t test of this df and level rejects with probability `power`."""
    tq = sps.t.ppf(0.5 + confidence / 2, df)

    def miss(delta: float) -> float:
        # the lower tail (an interval wholly below 1) is negligible here, and scipy's non-central t
        # returns NaN for it at some large δ: read as 0
        low = sps.nct.cdf(-tq, df, delta)
        return sps.nct.sf(tq, df, delta) + (0.0 if math.isnan(low) else low) - power
    # δ80 lies between the large-sample t_q + t_power and a few units more at the smallest df
    return float(optimize.brentq(miss, 0.0, 20.0))


def mde(lo: float, hi: float, df: float, confidence: float = 0.95, power: float = POWER) -> float:
    """The smallest |ratio − 1| found with probability `power` by an interval [lo, hi] of this
    width (ratios, log-scale t interval with df d.f.); NaN without an interval."""
    if not (lo > 0 and hi > 0 and math.isfinite(lo) and math.isfinite(hi)) or df < 1:
        return math.nan
    se = (math.log(hi) - math.log(lo)) / 2 / sps.t.ppf(0.5 + confidence / 2, df)
    return math.exp(noncentrality(float(df), confidence, power) * se) - 1


def df_of(paired: bool, n_pairs: int, n_a: int, n_b: int) -> float:
    """The interval's d.f.: pairs − 1 when paired, else Welch's lower bound min(n_a, n_b) − 1."""
    return float(n_pairs - 1) if paired else float(min(n_a, n_b) - 1)
