"""What a comparison could have detected: the minimum detectable effect (MDE) of a ratio's t
interval, at the reps that ran.

A Δ that is not clear says little unless the reader knows how large a Δ the run could have seen.
For a t interval on the log scale with half-width h and d.f. df, the standard error is
se = h / t(1 − α/2, df); a true ratio r is found (the interval excludes 1) with probability
`power` when |ln r| ≥ (t(1 − α/2, df) + t(power, df)) · se. So the MDE is
exp(h · (1 + t(power, df) / t(1 − α/2, df))) − 1: about 1.34 h at 5 pairs, 1.43 h at many, for
80 % power at 95 % confidence. A paired interval has df = pairs − 1; a Welch interval's df lies
between min(n) − 1 and n_a + n_b − 2, and the upper end is taken (the larger factor: the MDE is
not understated).
"""
from __future__ import annotations

import math

from scipy import stats as sps

POWER = 0.80


def mde(lo: float, hi: float, df: float, confidence: float = 0.95, power: float = POWER) -> float:
    """The smallest |ratio − 1| found with probability `power` by an interval [lo, hi] of this
    width (ratios, log-scale t interval with df d.f.); NaN without an interval."""
    if not (lo > 0 and hi > 0 and math.isfinite(lo) and math.isfinite(hi)) or df < 1:
        return math.nan
    h = (math.log(hi) - math.log(lo)) / 2
    tq, tp = sps.t.ppf(0.5 + confidence / 2, df), sps.t.ppf(power, df)
    return math.exp(h * (1 + tp / tq)) - 1


def df_of(paired: bool, n_pairs: int, n_a: int, n_b: int) -> float:
    """The interval's d.f.: pairs − 1 when paired, else Welch's upper bound n_a + n_b − 2."""
    return float(n_pairs - 1) if paired else float(n_a + n_b - 2)
