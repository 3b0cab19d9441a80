"""Rep designs by power (httplab.stats.design): the pairs' log ratios are read as the reports pair
them, the spread's two parts are recovered from runs of two lengths, and the simulated half-widths
and coverage of a design agree with the t interval's theory on normal data."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from httplab.stats import design as D


def _runs(rng: np.random.Generator, reps: int, duration: float, a: float, b: float,
          ratio: float = 1.2) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two servers on two points, each rep's log ratio drawn with variance a + b/duration; B's figure
    shares a rep effect with A's (the pairing removes it)."""
    rows = []
    for scen in ("get_ping_c100", "get_echo_s1024_c100"):
        for rep in range(1, reps + 1):
            shared = rng.normal(0, 0.1)
            e = rng.normal(0, math.sqrt(a + b / duration))
            xb = 100_000 * math.exp(shared)
            rows += [{"suite": "http1", "scenario": scen, "server": "evloop", "rep": rep, "status": "ok",
                      "req_per_s": xb * ratio * math.exp(e), "cpu_us_per_req": 10.0, "duration_s": duration},
                     {"suite": "http1", "scenario": scen, "server": "go", "rep": rep, "status": "ok",
                      "req_per_s": xb, "cpu_us_per_req": 12.0, "duration_s": duration}]
    runs = pd.DataFrame(rows)
    cmp_ = pd.DataFrame([{"kind": "server", "metric": "req_per_s", "a_suite": "http1", "a_scenario": s,
                          "a_server": "evloop", "b_server": "go"} for s in ("get_ping_c100", "get_echo_s1024_c100")])
    return runs, cmp_


def test_log_ratios_are_paired_by_rep_and_skip_failed_runs():
    runs, cmp_ = _runs(np.random.default_rng(1), 5, 1.0, 0.0, 0.0)
    runs.loc[(runs["server"] == "go") & (runs["rep"] == 3), "status"] = "failed"
    r = D.rep_log_ratios(runs, cmp_, "req_per_s")
    assert set(r["rep"]) == {1, 2, 4, 5} and len(r) == 8
    assert np.allclose(r["log_ratio"], math.log(1.2))          # the shared rep effect cancels


def test_half_width_is_the_paired_t_intervals():
    ratios = pd.DataFrame({"suite": "s", "scenario": "p", "a_server": "a", "b_server": "b", "rep": range(1, 6),
                           "log_ratio": [0.1, 0.2, 0.15, 0.05, 0.12]})
    sp = D.pair_spreads(ratios)
    sd = float(np.std([0.1, 0.2, 0.15, 0.05, 0.12], ddof=1))
    assert sp.loc[0, "half_width"] == pytest.approx(sps.t.ppf(0.975, 4) * sd / math.sqrt(5))


def test_the_two_parts_of_the_spread_are_recovered_from_two_run_lengths():
    rng = np.random.default_rng(7)
    a, b = 0.004, 0.012               # at 1 s three quarters of the variance shrinks with length
    short = D.pair_spreads(D.rep_log_ratios(*_runs(rng, 4000, 1.0, a, b), "req_per_s"))
    long = D.pair_spreads(D.rep_log_ratios(*_runs(rng, 4000, 4.0, a, b), "req_per_s"))
    comp = D.components(short, 1.0, long, 4.0)
    assert comp["a"].to_numpy() == pytest.approx([a, a], rel=0.15)
    assert comp["b"].to_numpy() == pytest.approx([b, b], rel=0.15)
    with pytest.raises(ValueError):
        D.components(long, 4.0, short, 1.0)


def test_simulated_design_matches_theory_on_normal_residuals():
    """Resampling many standard-normal residuals: the median half-width is t·σ·E-ish[s]/√n and the
    intervals cover 95 %."""
    rng = np.random.default_rng(3)
    key = {"suite": "s", "scenario": "p", "a_server": "a", "b_server": "b"}
    res = pd.DataFrame({**key, "z": rng.standard_normal(5000)}, index=range(5000))
    comp = pd.DataFrame([{**key, "a": 0.01, "b": 0.0}])
    sim = D.simulate(comp, res, D.Design(reps=20, duration_s=1, warmup_s=0), trials=20000)
    sigma, n = 0.1, 20
    # the median of s is σ·√(χ²_{n−1} median/(n−1))
    expected = sps.t.ppf(0.975, n - 1) * sigma * math.sqrt(sps.chi2.median(n - 1) / (n - 1)) / math.sqrt(n)
    assert sim.loc[0, "half_width"] == pytest.approx(expected, rel=0.02)
    assert sim.loc[0, "coverage"] == pytest.approx(0.95, abs=0.006)


def test_more_reps_of_the_measured_design_narrow_its_intervals():
    key = {"suite": "s", "scenario": "p", "a_server": "a", "b_server": "b"}
    res = pd.DataFrame({**key, "z": np.random.default_rng(5).standard_normal(200)}, index=range(200))
    spreads = pd.DataFrame([{**key, "n": 12, "sd": 0.1, "half_width": 0.06}])
    p = D.plan(spreads, res, duration_s=1, warmup_s=0, reps=(5, 20), points=10, overhead_s=0.5, trials=400)
    assert list(p["reps"]) == [5, 20]
    assert list(p["minutes"]) == pytest.approx([5 * 10 * 1.5 / 60, 20 * 10 * 1.5 / 60])
    # t(0.975, n−1)/√n: 1.24 at 5 reps, 0.47 at 20
    assert p["median"].iloc[1] < p["median"].iloc[0] * 0.45
    assert (p["coverage_median"] > 0.92).all()


def test_the_command_reads_the_committed_study_runs(capsys):
    """`python -m httplab design` on a study run as docs/evidence/rep-design/ keeps it (run.json and
    two frames, no more): it prints the run's half-widths per metric and its design at more reps."""
    study = Path(__file__).resolve().parents[2] / "docs" / "evidence" / "rep-design"
    (run,) = sorted(study.glob("A-*"))
    assert D.main([str(run), "--reps", "5", "10", "--trials", "50"]) == 0
    out = capsys.readouterr().out
    assert "req_per_s, reps 5, 3 s runs" in out and "cpu_us_per_req, reps 5" in out
    assert out.count("this design at more reps") == 2
