"""Sliced blocks (`--blocks sliced`, scripts/lib/sliced.sh), through run_all.sh on live servers:
every server of a rep is up at once and each scenario's tools run in turn in slices; every point
keeps its files plus r<rep>.slices.json, and the built data reads each rate over the seconds its
tool ran, and their latency from each tool's contiguous latency run after the window (h2load's log,
wrk's histogram: never the slices', which hold the stopped seconds) in the reps --latency-every keeps
it in; over TLS as over cleartext. Where the mode does
not apply, it is refused before anything starts."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

# (alone, not beside the smoke run: its live sliced runs over TLS and Node load both cores)

ROOT = Path(__file__).resolve().parents[2]
PY = str(ROOT / ".venv" / "bin" / "python")


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "RAW_ROOT": str(tmp / "raw"), "DATA_ROOT": str(tmp / "data"),
            "REPORTS_ROOT": str(tmp / "reports")}


def test_a_sliced_run_interleaves_the_servers_and_reads_rates_over_their_seconds(tmp_path):
    r = subprocess.run([str(ROOT / "scripts" / "run_all.sh"), "--skip-setup", "--skip-build", "--new", "--no-reports",
                        "--suites", "http1,h2c,https", "--servers", "evloop,go,floor",
                        "--scenarios", "get_ping_c100,h2_get_ping_c100,h1_get_ping_c100", "--aa",
                        "--reps", "2", "--duration", "1", "--warmup", "0", "--blocks", "sliced",
                        "--latency-every", "2"],
                       env=_env(tmp_path), capture_output=True, text=True, timeout=400, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "interleaved in 0.1 s slices" in r.stderr
    (run,) = (tmp_path / "raw").iterdir()
    params = json.loads((run / "meta.json").read_text())["params"]
    assert params["blocks"] == "sliced" and params["latency_every"] == 2 and params["slice_s"] == 0.1
    subprocess.run([PY, "-m", "httplab", "pack", "unpack", str(run)], cwd=ROOT, check=True, capture_output=True)
    records = sorted(run.glob("*/*/*/r*.slices.json"))
    assert records, "no slices.json"
    for path in records:
        rec = json.loads(path.read_text())
        assert rec["slice_s"] == 0.1 and rec["cycles"] == 10 and len(rec["order"]) >= 2, rec
        assert rec["tool"]["slices"] == 10 and rec["tool"]["exit"] == 0 and rec["tool"]["fault"] is None
        assert rec["tool"]["drain_wait_s"] > 0 and rec["tool"]["drains_capped"] == 0
        assert 0 <= rec["tool"]["drain_s"] <= rec["tool"]["drain_wait_s"]
        assert 0.95 < rec["tool"]["ran_s"] < 2.5
    data = tmp_path / "data" / run.name
    subprocess.run([PY, "-m", "httplab", "build", str(run), str(data)], cwd=ROOT, check=True, capture_output=True)
    runs = pd.read_parquet(data / "runs.parquet")
    assert (runs["status"] == "ok").all(), runs[runs["status"] != "ok"][["server", "scenario", "fail_reason"]]
    assert (runs["window_end"] == "sliced").all()
    # http1: evloop, go, floor and the A/A copy; h2c: evloop, go and the copy (the floor speaks h1 only);
    # https: evloop and go on its HTTPS/1.1 and HTTPS/2 points, the copy on the first (its headline)
    assert len(runs[runs["suite"] == "http1"]) == 8 and len(runs[runs["suite"] == "h2c"]) == 6
    assert len(runs[runs["suite"] == "https"]) == 10
    assert (runs["req_per_s"] > 1000).all() and (runs["cpu_us_per_req"] > 0).all()
    assert (runs["server_busy"] <= 1.2).all() and runs["foreign_cpu_pct"].isna().all()
    # the latency run in rep 1 only (--latency-every 2), wrk's as h2load's: rep 2 says so and has no
    # latency files; rep 1 has P50, P99, mean and max from the latency run
    for tool_points in (runs[(runs["suite"] == "http1") | (runs["scenario"] == "h1_get_ping_c100")],
                        runs[(runs["suite"] == "h2c") | (runs["scenario"] == "h2_get_ping_c100")]):
        one, two = tool_points[tool_points["rep"] == 1], tool_points[tool_points["rep"] == 2]
        assert not one.empty and one[["lat_p50_us", "lat_p99_us", "lat_mean_us", "lat_max_us"]].notna().all().all()
        assert (one["lat_p50_us"] <= one["lat_p99_us"]).all() and (one["lat_p99_us"] <= one["lat_max_us"]).all()
        assert two["lat_p50_us"].isna().all() and two["lat_max_us"].isna().all()
    # wrk's P99 is not the slices' stopped seconds (≥ 0.1 s a stop) nor, over TLS, the first requests
    # queued behind the handshakes (160-195 ms before the lab's wrk left them untimed): 8-24 ms here
    wrk = runs[((runs["suite"] == "http1") | (runs["scenario"] == "h1_get_ping_c100")) & (runs["rep"] == 1)]
    assert (wrk["lat_p99_us"] < 60_000).all(), wrk[["scenario", "server", "lat_p99_us"]]
    for suite in ("http1", "h2c", "https"):
        for path in run.glob(f"{suite}/*/*/r2.run.json"):
            assert json.loads(path.read_text())["latency_run"] is False
            assert not list(path.parent.glob("r2.lat.*"))
        for path in run.glob(f"{suite}/*/*/r1.run.json"):
            assert json.loads(path.read_text())["latency_run"] is True
    assert list(run.glob("http1/*/*/r1.lat.wrk.json")) and list(run.glob("h2c/*/*/r1.lat.h2log.json"))


def test_sliced_is_refused_for_a_server_on_a_cpu_set_of_its_own(tmp_path):
    r = subprocess.run([str(ROOT / "scripts" / "run_all.sh"), "--skip-setup", "--skip-build", "--new", "--no-reports",
                        "--suites", "scaling", "--servers", "evloop", "--reps", "1", "--duration", "1",
                        "--warmup", "0", "--blocks", "sliced"],
                       env=_env(tmp_path), capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode != 0 and "--blocks sliced gives every server the same CPUs" in r.stderr, r.stderr[-2000:]
