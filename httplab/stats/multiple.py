"""Multiple comparisons: Holm's step-down adjustment and the rank ranges it leaves open.

Holm (1979, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6:65-70)
controls the family-wise error rate under any dependence between the tests, which pairwise
comparisons of servers measured in the same reps have. Ten lines, so written here rather than
pulling in statsmodels for `multipletests`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def holm(p: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values (same order as p): reject H_i at level α when adjusted p_i ≤ α.
    NaN p-values stay NaN and do not count towards the family size."""
    p = np.asarray(p, dtype=np.float64)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = len(ok)
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adj = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(adj)
    return out


def rank_ranges(servers: Sequence[str], better: Mapping[tuple[str, str], bool]) -> dict[str, tuple[int, int]]:
    """Each server's (best, worst) possible rank, 1 = best, given the pairs the corrected
    comparisons settled: better[(a, b)] is True when a was found better than b. A server can be no
    better than 1 + the number of servers found better than it, and no worse than n − the number
    found worse."""
    n = len(servers)
    ahead = {s: sum(better.get((o, s), False) for o in servers if o != s) for s in servers}
    behind = {s: sum(better.get((s, o), False) for o in servers if o != s) for s in servers}
    return {s: (1 + ahead[s], n - behind[s]) for s in servers}


def rank(order: Sequence[str], pairs: Mapping[tuple[str, str], tuple[float | None, float | None]],
         confidence: float, must_tie: frozenset[str] = frozenset(),
         floor_ties: frozenset[tuple[str, str]] = frozenset()
         ) -> dict[str, tuple[int, int, tuple[str, ...]]]:
    """Ranks of servers given in descending order of their estimate, from their pairwise
    comparisons pairs[(a, b)] = (ratio a/b, unadjusted p-value). The p-values of all pairs (but
    those of two servers in `must_tie`, which always tie and stay out of the family) are adjusted
    together with Holm's procedure; a is ahead of b when the adjusted p-value is below 1 −
    confidence; a pair of `floor_ties` (its difference lies inside the run's A/A noise floor) stays
    in the family but never separates its two servers. Returns server -> (best rank, worst rank, the
    servers it ties with)."""
    family = [(a, b) for i, a in enumerate(order) for b in order[i + 1:]
              if not (a in must_tie and b in must_tie) and (a, b) in pairs]
    adjusted = holm([np.nan if pairs[k][1] is None else pairs[k][1] for k in family])
    better: dict[tuple[str, str], bool] = {}
    for (a, b), p in zip(family, adjusted):
        ratio = pairs[(a, b)][0]
        if (a, b) in floor_ties:
            continue
        if np.isfinite(p) and p < 1.0 - confidence and ratio is not None:
            better[(a, b) if ratio > 1 else (b, a)] = True
    ranges = rank_ranges(order, better)
    return {s: (*ranges[s], tuple(o for o in order if o != s and not better.get((s, o))
                                  and not better.get((o, s))))
            for s in order}
