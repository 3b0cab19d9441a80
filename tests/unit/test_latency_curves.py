"""The latency suites' statistics (httplab.stats.latency_curves): the knee per rep (crossing,
interpolation, saturation, censoring, a client-bound crossing), its summary over reps and the
curve points, on small hand-made runs frames."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from httplab.stats.latency_curves import curve_points, knees, rep_knee

CAP = 100_000.0


def row(rep: int, frac: float | None, p99: float, status: str = "ok", model: str = "open",
        scenario: str | None = None, client_bound: bool = False, server: str = "evloop",
        suite: str = "latency_h1") -> dict:
    target = math.nan if frac is None else frac * CAP
    return {"suite": suite, "server": server, "scenario": scenario or f"f{round((frac or 0) * 100):03d}",
            "rep": rep, "status": status, "load_model": model, "target_rps": target,
            "load_fraction": math.nan if frac is None else frac, "capacity_ref_rps": CAP,
            "req_per_s": target if frac else CAP, "cpu_us_per_req": 5.0, "client_bound": client_bound,
            "lat_p50_us": p99 / 3, "lat_p90_us": p99 / 2, "lat_p99_us": p99, "lat_p999_us": p99 * 2,
            "lat_max_us": p99 * 3}


def test_knee_interpolates_between_the_points_around_the_crossing() -> None:
    pts = pd.DataFrame([row(1, 0.1, 100.0), row(1, 0.5, 200.0), row(1, 0.8, 900.0)])
    k = rep_knee(pts, multiple=3.0)
    assert k is not None and not k.censored and not k.tool_bound
    # limit 300 µs between (50k, 200 µs) and (80k, 900 µs), log P99 linear in the rate
    t = (math.log(300) - math.log(200)) / (math.log(900) - math.log(200))
    assert k.knee_rps == pytest.approx(50_000 + t * 30_000)


def test_saturated_point_is_a_crossing_and_a_curve_that_never_crosses_is_censored() -> None:
    sat = pd.DataFrame([row(1, 0.1, 100.0), row(1, 0.5, 150.0), row(1, 0.9, 5000.0, status="saturated",
                                                                     client_bound=True)])
    k = rep_knee(sat)
    assert k is not None and k.knee_rps == 50_000 and not k.censored and k.tool_bound
    flat = pd.DataFrame([row(1, 0.1, 100.0), row(1, 0.5, 150.0), row(1, 0.95, 250.0)])
    k = rep_knee(flat)
    assert k is not None and k.censored and k.knee_rps == 95_000


def test_no_baseline_no_knee() -> None:
    assert rep_knee(pd.DataFrame([row(1, 0.1, 100.0, status="failed"), row(1, 0.5, 150.0)])) is None


def test_knees_summarise_reps_with_an_interval() -> None:
    rows = []
    for rep, mid in enumerate([200.0, 210.0, 190.0, 205.0, 195.0], start=1):
        rows += [row(rep, 0.1, 100.0), row(rep, 0.5, mid), row(rep, 0.8, 900.0)]
    rows.append(row(1, None, 80.0, model="closed", scenario="closed"))
    k = knees(pd.DataFrame(rows))
    assert len(k) == 1
    r = k.iloc[0]
    assert r["n_reps"] == 5 and r["n_censored"] == 0 and r["n_tool_bound"] == 0
    assert r["knee_rps"].has_interval and 50_000 < r["knee_rps"].mean < 80_000
    assert r["knee_fraction"] == pytest.approx(r["knee_rps"].mean / CAP)


def test_curve_points_count_statuses_and_keep_saturated_out() -> None:
    rows = [row(rep, 0.9, 1000.0 * rep) for rep in (1, 2, 3)]
    rows += [row(4, 0.9, 1e6, status="saturated"), row(5, 0.9, 1e6, status="failed")]
    pts = curve_points(pd.DataFrame(rows))
    p = pts.iloc[0]
    assert (p["n_ok"], p["n_saturated"], p["n_failed"]) == (3, 1, 1)
    assert p["lat_p99_us"].mean == pytest.approx((1000 * 2000 * 3000) ** (1 / 3))


def test_a_contrast_without_an_ok_run_says_why() -> None:
    """The latency report's findings: where a point of the 80 % contrast has no ok run (every rep
    saturated: the server, or the tool, did not keep the rate), the line says so instead of 'no data'."""
    import pandas as pd

    from httplab.lab.suites import suite_module

    L = suite_module("latency")
    sat = pd.DataFrame({"scenario": ["f080", "f080"], "status": ["saturated", "saturated"]})
    ok = pd.DataFrame({"scenario": ["f080_uncorrected"] * 2, "status": ["ok", "saturated"]})
    assert L.no_ok_runs(sat, ok) == "no ok run at f080: 2 saturated, the rate was not kept"
    assert L.no_ok_runs(ok, ok) is None
    failed = pd.DataFrame({"scenario": ["f080"], "status": ["failed"]})
    assert L.no_ok_runs(ok, failed) == "no ok run at f080: 1 failed"
