"""oha's JSON report (httplab.parse.oha) and the oha point loader, on reports captured here with
oha 1.16.0 (tests/fixtures/oha/: see README there for the commands)."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from httplab.parse.errors import RawFormatError
from httplab.parse.oha import parse_oha_json
from httplab.parse.oha_loader import GRID_WEIGHTS, load_oha_point
from httplab.parse.percentiles import weighted_percentiles

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "oha"


def point(tmp_path: Path, fixture: str, **scenario: object) -> Path:
    d = tmp_path / "pt"
    d.mkdir()
    shutil.copy(FIX / fixture, d / "r1.oha.json")
    base = {"connections": 100, "streams": 1, "load_model": "open", "target_rps": 53685,
            "load_fraction": 0.8, "capacity_ref_rps": 67106.1}
    (d / "scenario.json").write_text(json.dumps(base | scenario))
    return d


def test_open_h1_report_numbers() -> None:
    r = parse_oha_json(FIX / "open_h1_evloop.json")
    assert r.responses == 53650 and r.non_2xx == 0 and r.errors == {} and r.aborted_at_deadline == 0
    assert r.total_s == pytest.approx(1.002040567)
    assert r.percentiles_s[99.0] == pytest.approx(json.loads((FIX / "open_h1_evloop.json").read_text())
                                                  ["latencyPercentiles"]["p99"])


def test_loader_gives_back_ohas_percentiles_exactly(tmp_path: Path) -> None:
    doc = json.loads((FIX / "open_h1_evloop.json").read_text())
    res = load_oha_point(point(tmp_path, "open_h1_evloop.json"), 1)
    assert res is not None and res.hist_kind == "percentiles" and res.total_errors == 0
    assert sum(GRID_WEIGHTS) == 1_000_000
    got = weighted_percentiles(res.hist_values_us, res.hist_counts, [50, 90, 99, 99.9, 100])
    want = [doc["latencyPercentiles"][k] * 1e6 for k in ("p50", "p90", "p99", "p99.9")]
    assert np.allclose(got[:4], want) and got[4] == pytest.approx(doc["summary"]["slowest"] * 1e6)
    # req/s is answered requests over oha's time, not oha's requestsPerSec
    assert res.req_per_s == pytest.approx(53650 / doc["summary"]["total"])
    assert res.extra["target_rps"] == 53685 and res.extra["load_fraction"] == 0.8


def test_refused_connections_fail_the_run_and_count_no_requests(tmp_path: Path) -> None:
    res = load_oha_point(point(tmp_path, "refused.json"), 1)
    assert res is not None and res.requests == 0 and res.hist_kind == "none"
    assert res.errors["oha: Connection refused (os error 111)"] == 1998
    assert math.isnan(res.lat_max_us)
    # oha's own requestsPerSec counts the errors (1995/s): ours must not
    assert json.loads((FIX / "refused.json").read_text())["summary"]["requestsPerSec"] > 1000


def test_non_2xx_fails(tmp_path: Path) -> None:
    res = load_oha_point(point(tmp_path, "status_404_evloop.json"), 1)
    assert res is not None and res.errors["non-2xx responses"] == 1998 and res.total_errors == 1998


def test_deadline_aborts_tolerated_up_to_in_flight(tmp_path: Path) -> None:
    # h2c: 10 connections x 10 streams, 56 in flight when -z ended the run
    ok = load_oha_point(point(tmp_path, "open_h2c_evloop.json", connections=10, streams=10), 1)
    assert ok is not None and ok.total_errors == 0 and ok.extra["aborted_at_deadline"] == 56
    shutil.rmtree(tmp_path / "pt")
    bad = load_oha_point(point(tmp_path, "open_h2c_evloop.json", connections=5, streams=10), 1)
    assert bad is not None and bad.total_errors == 56


def test_missing_report_is_none(tmp_path: Path) -> None:
    (tmp_path / "pt").mkdir()
    assert load_oha_point(tmp_path / "pt", 1) is None


@pytest.mark.parametrize("edit, key", [
    (lambda d: d.pop("summary"), "summary"),
    (lambda d: d["statusCodeDistribution"].update({"2x0": 3}), "statusCodeDistribution"),
    (lambda d: d["errorDistribution"].update({"reset": -1}), "errorDistribution"),
    (lambda d: d["latencyPercentiles"].update({"p99": "fast"}), "latencyPercentiles.p99"),
    (lambda d: d["latencyPercentiles"].update({"p50": 9.0}), "latencyPercentiles"),
])
def test_malformed_report_names_file_and_key(tmp_path: Path, edit, key: str) -> None:
    doc = json.loads((FIX / "open_h1_evloop.json").read_text())
    edit(doc)
    bad = tmp_path / "r1.oha.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(RawFormatError) as e:
        parse_oha_json(bad)
    assert str(bad) in str(e.value) and key in str(e.value)


def test_truncated_json_names_line(tmp_path: Path) -> None:
    bad = tmp_path / "r1.oha.json"
    bad.write_text((FIX / "open_h1_evloop.json").read_text()[:200])
    with pytest.raises(RawFormatError, match=r"r1\.oha\.json, line \d+: invalid JSON"):
        parse_oha_json(bad)


# ---------------------------------------------------------------- the window (oha --db-url)
from httplab.parse.oha_db import compact, main as oha_db_main, read_window  # noqa: E402


def test_window_keeps_requests_scheduled_after_the_warmup(tmp_path: Path) -> None:
    import sqlite3
    con = sqlite3.connect(FIX / "small_open.db")
    rows = con.execute("SELECT start_latency_correction, duration FROM oha").fetchall()
    con.close()
    doc = compact(FIX / "small_open.db", 1.0)
    kept = sorted(round(d * 1e6) for s, d in rows if s >= 1.0)
    assert doc["requests_total"] == 400 and doc["requests_window"] == len(kept) and 180 <= len(kept) <= 220
    assert doc["status_counts"] == {"200": len(kept)}
    hist = dict((v, c) for v, c in doc["latency_hist"])  # type: ignore[union-attr]
    assert sum(hist.values()) == len(kept) and max(hist) == kept[-1] and min(hist) == kept[0]
    out = tmp_path / "r1.oha.hist.json"
    assert oha_db_main([str(FIX / "small_open.db"), str(out), "--skip", "1"]) == 0
    win = read_window(out)
    assert win.requests_window == len(kept) and win.skip_s == 1.0


def test_loader_uses_the_window_histogram(tmp_path: Path) -> None:
    d = point(tmp_path, "small_open.json", connections=4, target_rps=200, warmup_in_run=True)
    assert oha_db_main([str(FIX / "small_open.db"), str(d / "r1.oha.hist.json"), "--skip", "1"]) == 0
    res = load_oha_point(d, 1)
    assert res is not None and res.hist_kind == "exact" and res.total_errors == 0 and not res.notes
    assert res.requests == 400 and int(res.hist_counts.sum()) == read_window(d / "r1.oha.hist.json").requests_window
    (d / "r1.oha.hist.json").unlink()
    missing = load_oha_point(d, 1)
    assert missing is not None and missing.notes and "missing" in missing.notes[0]


def test_not_an_oha_database_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "x.db"
    bad.write_text("not sqlite")
    with pytest.raises(RawFormatError, match="x.db: not oha's database"):
        compact(bad, 0)
    assert oha_db_main([str(bad), str(tmp_path / "o.json")]) == 2 and not (tmp_path / "o.json").exists()


def test_window_histogram_that_does_not_add_up_is_refused(tmp_path: Path) -> None:
    doc = compact(FIX / "small_open.db", 1.0)
    doc["requests_window"] = int(doc["requests_window"]) + 1  # type: ignore[call-overload]
    p = tmp_path / "r1.oha.hist.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(RawFormatError, match="latency_hist"):
        read_window(p)
