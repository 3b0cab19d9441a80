"""Measured coverage of every interval the reports print (stats.methods), by simulation.

For each method, each n in (3, 5, 10), each noise model and each pair of spreads, `TRIALS` samples
are drawn with a known truth and the share of intervals that contain it is counted. The draws are
seeded, so the table is the same on every machine; tests/unit/test_coverage.py recomputes it, checks
that nominal 95 % intervals cover 93-97 % at n ≥ 5, and that the committed copy
(coverage_table.csv beside this file, which every report's method notes print) is current.

Models, on one server's runs x_i with centre μ (the truth the intervals aim at):
* normal:     x_i = μ · (1 + s·z_i)        (median = mean = μ)
* lognormal:  x_i = μ · exp(s·z_i)         (median = μ)
with z_i standard normal and s the spread (CV). Two servers have spreads (s_a, s_b): equal (10 %,
10 %), 3:1 (15 %, 5 %) like the C server's ±14 % beside C++ std's ±3 % in the languages ranking,
and, lognormal only, a wide 3:1 (45 %, 15 %) like P99 across runs. Paired designs add a rep effect
shared by both servers of a rep (spread 10 %, the drift pairing removes); unpaired designs draw the
two samples independently. The truth of a ratio is μ_a/μ_b = 1.2.

A ranking row measures the family-wise error of Holm's procedure over all pairwise paired
comparisons of 6 equal servers: the share of simulated runs where any pair is called different.

The measured rows check the design the lab's interleaved runs use (`--blocks sliced`, 12 reps) on
noise as it was, not as a model says: each pair's per-rep log ratio ℓ_r is drawn from the pooled,
standardised residuals of the committed interleaved runs' server pairs (sliced_residuals.csv beside
this file, written by `python -m httplab coverage --residuals DATA_DIR...`: every pair's ℓ_r centred
on its mean and divided by its sd), resampled, so their tails and skew stay in. The paired t
interval's coverage does not depend on the spread, only on the noise's shape and n.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..tidy.rawrun import part_blocks
from .methods import DEFAULT_CONFIDENCE, t_bounds, welch_bounds
from .multiple import holm

TRIALS = 20000
SEED = 20261123
NS = (3, 5, 10, 12)
TRUE_RATIO = 1.2
REP_SPREAD = 0.10
RANK_SERVERS = 6
TABLE_PATH = Path(__file__).with_name("coverage_table.csv")
RESIDUALS_PATH = Path(__file__).with_name("sliced_residuals.csv")
MEASURED_SPREAD = 0.05   # the scale of the measured rows' ℓ_r (the coverage does not depend on it)
COLUMNS = ("interval", "design", "noise", "spread", "n", "trials", "coverage")


@dataclass(frozen=True)
class Case:
    interval: str     # center | ratio_welch | ratio_paired | ranking_holm
    design: str       # one server | unpaired | paired by rep
    noise: str        # normal | lognormal
    spread: str       # label
    s_a: float
    s_b: float


SPREADS = {"equal 10%:10%": (0.10, 0.10), "3:1 15%:5%": (0.15, 0.05)}
WIDE = {"wide 3:1 45%:15%": (0.45, 0.15)}


def cases() -> Iterator[Case]:
    for noise in ("normal", "lognormal"):
        spreads = SPREADS | (WIDE if noise == "lognormal" else {})
        for label, (sa, sb) in spreads.items():
            yield Case("center", "one server", noise, f"{sa:.0%}", sa, sa)
            yield Case("ratio_welch", "unpaired", noise, label, sa, sb)
            yield Case("ratio_paired", "paired by rep", noise, label, sa, sb)
    yield Case("ranking_holm", "paired by rep", "lognormal", "equal 10%:10%", 0.10, 0.10)
    if RESIDUALS_PATH.exists():
        yield Case("ratio_paired", "interleaved slices", "measured", "the runs' own", MEASURED_SPREAD,
                   MEASURED_SPREAD)


def measured_residuals() -> np.ndarray:
    """The pooled standardised residuals the measured rows resample (sliced_residuals.csv)."""
    return pd.read_csv(RESIDUALS_PATH)["z"].to_numpy(dtype=float)


def _draw(rng: np.random.Generator, noise: str, mu: float, s: float, shape: tuple[int, ...],
          rep_effect: np.ndarray | None = None) -> np.ndarray:
    z = rng.standard_normal(shape)
    x = mu * (1.0 + s * z) if noise == "normal" else mu * np.exp(s * z)
    if rep_effect is not None:
        x = x * (1.0 + rep_effect if noise == "normal" else np.exp(rep_effect))
    return x


def _coverage(case: Case, n: int, rng: np.random.Generator, trials: int, confidence: float) -> float:
    if case.interval == "center":
        x = _draw(rng, case.noise, 100.0, case.s_a, (trials, n))
        _, lo, hi = t_bounds(np.log(x), confidence)
        return float(np.mean((lo <= np.log(100.0)) & (np.log(100.0) <= hi)))
    truth = np.log(TRUE_RATIO)
    if case.interval == "ratio_welch":
        a = _draw(rng, case.noise, 100.0 * TRUE_RATIO, case.s_a, (trials, n))
        b = _draw(rng, case.noise, 100.0, case.s_b, (trials, n))
        _, lo, hi, _, _ = welch_bounds(np.log(a), np.log(b), confidence)
    elif case.interval == "ratio_paired" and case.noise == "measured":
        ell = truth + case.s_a * rng.choice(measured_residuals(), size=(trials, n), replace=True)
        _, lo, hi = t_bounds(ell, confidence)
    elif case.interval == "ratio_paired":
        rep = REP_SPREAD * rng.standard_normal((trials, n))
        a = _draw(rng, case.noise, 100.0 * TRUE_RATIO, case.s_a, (trials, n), rep)
        b = _draw(rng, case.noise, 100.0, case.s_b, (trials, n), rep)
        _, lo, hi = t_bounds(np.log(a) - np.log(b), confidence)
    else:
        return 1.0 - _holm_family_error(case, n, rng, trials // 10, 1.0 - confidence)
    return float(np.mean((lo <= truth) & (truth <= hi)))


def _holm_family_error(case: Case, n: int, rng: np.random.Generator, trials: int, alpha: float) -> float:
    """Share of trials in which Holm calls any pair of RANK_SERVERS equal servers different."""
    from .methods import ratio_paired
    k = RANK_SERVERS
    errors = 0
    for _ in range(trials):
        rep = REP_SPREAD * rng.standard_normal(n)
        runs = [_draw(rng, case.noise, 100.0, case.s_a, (n,), rep) for _ in range(k)]
        p = [ratio_paired(runs[i], runs[j]).p_value for i in range(k) for j in range(i + 1, k)]
        errors += bool(np.any(holm(np.array(p, dtype=float)) < alpha))
    return errors / trials


def coverage_table(trials: int = TRIALS, seed: int = SEED, confidence: float = DEFAULT_CONFIDENCE
                   ) -> pd.DataFrame:
    """One row per (case, n): the share of nominal-`confidence` intervals that held the truth (for
    ranking_holm: 1 − the family-wise error rate)."""
    rows = []
    for i, case in enumerate(cases()):
        for n in NS:
            rng = np.random.default_rng([seed, i, n])
            cov = _coverage(case, n, rng, trials, confidence)
            rows.append({"interval": case.interval, "design": case.design, "noise": case.noise,
                         "spread": case.spread, "n": n,
                         "trials": trials // 10 if case.interval == "ranking_holm" else trials,
                         "coverage": round(cov, 4)})
    return pd.DataFrame(rows, columns=list(COLUMNS))


def committed_table() -> pd.DataFrame:
    """The table the reports print (coverage_table.csv), as written by `python -m httplab coverage`."""
    return pd.read_csv(TABLE_PATH)


def write_residuals(data_dirs: list[str]) -> pd.DataFrame:
    """sliced_residuals.csv from built interleaved runs: every server pair's standardised per-rep log
    ratios (stats.design), on req/s and CPU-µs per request, with the run, suite and metric."""
    from .design import METRICS, load_built_run, rep_log_ratios, standardised_residuals
    parts = []
    for d in data_dirs:
        runs, comparisons, meta = load_built_run(d)
        # (each part as it ran: the full profile runs a suite in its own design, suite_params)
        other = sorted(p for p in runs["suite"].unique() if part_blocks(meta, str(p)) != "sliced")
        if other:
            raise SystemExit(f"{d}: not an interleaved run ({', '.join(other)} did not run sliced)")
        for m in METRICS:
            z = standardised_residuals(rep_log_ratios(runs, comparisons, m))
            parts.append(z.assign(run_id=meta["run_id"], metric=m)[["run_id", "suite", "metric", "z"]])
    out = pd.concat(parts, ignore_index=True)
    out["z"] = out["z"].round(4)
    out.to_csv(RESIDUALS_PATH, index=False)
    return out


def main(argv: list[str] | None = None) -> int:
    """`python -m httplab coverage [--residuals DATA_DIR...]`: simulate the intervals' coverage again
    and rewrite the table; with --residuals, first take the measured rows' residuals from these built
    interleaved runs."""
    import argparse
    ap = argparse.ArgumentParser(prog="python -m httplab coverage", description=main.__doc__)
    ap.add_argument("--residuals", nargs="+", metavar="DATA_DIR", help="data/<run_id>/ of interleaved runs")
    args = ap.parse_args(argv)
    if args.residuals:
        z = write_residuals(args.residuals)
        print(f"{RESIDUALS_PATH.name}: {len(z)} residuals of {z['run_id'].nunique()} run(s)")
    table = coverage_table()
    table.to_csv(TABLE_PATH, index=False)
    print(table.to_string(index=False))
    return 0
