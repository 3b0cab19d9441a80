"""wrk's latency of a sliced point (httplab.parse.wrk_loader), on a captured point of the lab's
sliced test (tests/fixtures/wrk/sliced_point: Go's GET /ping at 100 connections, rep 1 with wrk's
latency run after the window, rep 2 without): the latency comes from r<rep>.lat.wrk.json, never from
the slices' run (which held its requests stopped); the latency run's errors fail the point; a rep
the design left without it has no latency; one whose file is missing fails."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from httplab.parse.wrk_loader import load_wrk_point
from httplab.tidy.rawrun import fail_reasons

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "wrk" / "sliced_point"


@pytest.fixture
def point(tmp_path: Path) -> Path:
    d = tmp_path / "get_ping_c100"
    shutil.copytree(FIX, d)
    return d


def test_the_latency_is_the_latency_runs(point):
    res = load_wrk_point(point, 1)
    lat = json.loads((FIX / "r1.lat.wrk.json").read_text())
    # (wrk's histogram also holds the requests that end between its stop and its threads' exit, a
    # few per cent more than the summary counts, in a contiguous run as here)
    assert res.hist_kind == "exact" and 1 <= res.hist_counts.sum() / lat["summary"]["requests"] < 1.15
    assert res.lat_max_us == lat["latency"]["max"] and math.isclose(res.lat_mean_us, lat["latency"]["mean"])
    # the rate is still the measured run's, not the latency run's
    assert res.requests == json.loads((FIX / "r1.wrk.json").read_text())["summary"]["requests"]
    assert str(point / "r1.lat.wrk.json") in res.source_files
    assert not fail_reasons(0, res, True, "wrk")


def test_a_rep_without_the_latency_run_has_none(point):
    res = load_wrk_point(point, 2)
    assert res.hist_kind == "none" and math.isnan(res.lat_mean_us) and math.isnan(res.lat_max_us)
    assert not fail_reasons(0, res, True, "wrk")


def test_the_latency_runs_errors_fail_the_point(point):
    doc = json.loads((point / "r1.lat.wrk.json").read_text())
    doc["summary"]["errors"]["status"] = 3
    (point / "r1.lat.wrk.json").write_text(json.dumps(doc))
    reasons = "; ".join(fail_reasons(0, load_wrk_point(point, 1), True, "wrk"))
    assert "non-2xx/3xx responses (latency run)" in reasons, reasons


def test_a_missing_latency_file_fails_the_point(point):
    (point / "r1.lat.wrk.json").unlink()
    reasons = "; ".join(fail_reasons(0, load_wrk_point(point, 1), True, "wrk"))
    assert "wrk's latency run: r1.lat.wrk.json missing" in reasons, reasons


def test_a_sliced_point_of_an_older_run_keeps_no_latency(point):
    """Runs made before the latency run (no latency_run key in run.json): no latency, no fault."""
    doc = json.loads((point / "r1.run.json").read_text())
    del doc["latency_run"]
    (point / "r1.run.json").write_text(json.dumps(doc))
    (point / "r1.lat.wrk.json").unlink()
    res = load_wrk_point(point, 1)
    assert res.hist_kind == "none" and not fail_reasons(0, res, True, "wrk")
