import json
import shutil

import numpy as np
import pandas as pd
import pytest

from httplab.parse.errors import RawConsistencyError, RawFormatError
from httplab.tidy.rawrun import (LATENCY_COLUMNS, RUNS_COLUMNS, build_frames, load_run, load_suites,
                            load_verify, write_tidy)
from make_fake_run import DEFAULT_SCENARIOS, FIXTURES, make_fake_run

DESIGN_COLUMNS = ("run_id, suite, protocol, tls, server, route, method, size_bytes, connections, streams, "
                  "client_threads, duration_s, rep, status, requests, req_per_s, bytes_per_s, lat_mean_us, "
                  "lat_p50_us, lat_p90_us, lat_p99_us, lat_p999_us, lat_max_us, errors, server_cpu_s, cpu_pct, "
                  "cpu_us_per_req, rss_peak_kb, raw_path, position, client_cpu_s, client_busy, server_busy, "
                  "client_bound, steal_pct, foreign_cpu_pct, noisy, rss_start_kb").split(", ")


def test_columns_are_design_plus_extras(fake_run):
    runs, latency = build_frames(fake_run)
    assert list(runs.columns) == DESIGN_COLUMNS + [
        "scenario", "pipeline", "fail_reason", "hist_kind", "capacity_rps", "rss_warm_kb",
        "rss_peak_method", "noisy_reason", "aa_of", "start_utc", "window_s", "window_end"]
    assert tuple(runs.columns) == RUNS_COLUMNS
    assert tuple(latency.columns) == LATENCY_COLUMNS


def test_rows_status_and_unfinished_rep_ignored(fake_run):
    runs, latency = build_frames(fake_run)
    # 3 servers x 6 scenarios x 5 reps; the unfinished evloop rep 6 is not there
    assert len(runs) == 3 * len(DEFAULT_SCENARIOS) * 5
    assert runs["rep"].max() == 5
    failed = runs[runs["status"] == "failed"]
    assert len(failed) == 1
    row = failed.iloc[0]
    assert (row["server"], row["scenario"], row["rep"]) == ("go", "get_ping_c100", 2)
    assert "non-2xx/3xx responses" in row["fail_reason"] and row["errors"] > 0
    ok = runs[runs["status"] == "ok"]
    assert (ok["fail_reason"] == "").all() and (ok["errors"] == 0).all()
    assert set(latency.groupby(["server", "scenario", "rep"]).size().index) >= {("evloop", "get_ping_c50", 1)}


def test_numbers_and_cpu_maths(fake_run):
    runs, latency = build_frames(fake_run)
    r = runs[(runs["server"] == "evloop") & (runs["scenario"] == "get_ping_c50") & (runs["rep"] == 1)].iloc[0]
    d = fake_run / "http1/evloop/get_ping_c50"
    hook = json.loads((d / "r1.wrk.json").read_text())
    srv = json.loads((d / "r1.server.json").read_text())
    dur = hook["summary"]["duration_us"] / 1e6
    assert r["requests"] == hook["summary"]["requests"]
    assert r["req_per_s"] == pytest.approx(hook["summary"]["requests"] / dur)
    assert r["bytes_per_s"] == pytest.approx(hook["summary"]["bytes"] / dur)
    cpu_s = (srv["cpu_ticks_after"] - srv["cpu_ticks_before"]) / srv["clk_tck"]
    assert r["server_cpu_s"] == pytest.approx(cpu_s)
    assert r["cpu_pct"] == pytest.approx(100 * cpu_s / srv["wall_s"])
    assert r["cpu_us_per_req"] == pytest.approx(1e6 * cpu_s / hook["summary"]["requests"])
    assert r["rss_peak_kb"] == srv["rss_peak_kb"]
    assert r["raw_path"] == f"{fake_run.name}/http1/evloop/get_ping_c50/r1"
    assert r["lat_p50_us"] <= r["lat_p90_us"] <= r["lat_p99_us"] <= r["lat_p999_us"] <= r["lat_max_us"]
    h = latency[(latency["server"] == "evloop") & (latency["scenario"] == "get_ping_c50") & (latency["rep"] == 1)]
    assert h["count"].sum() == sum(c for _, c in hook["latency_hist"])


def _add_point(run_dir, scenario, rep, stem, exit_code=0, alive=True, with_json=True):
    d = run_dir / "http1" / "evloop" / scenario
    for ext in ("stdout.txt", "stderr.txt") + (("wrk.json",) if with_json else ()):
        src = FIXTURES / f"{stem}.{ext}"
        if src.exists():
            shutil.copy(src, d / f"r{rep}.{ext}")
    (d / f"r{rep}.server.json").write_text(json.dumps({
        "pids": [1], "clk_tck": 100, "cpu_ticks_before": 0, "cpu_ticks_after": 50, "wall_s": 1.0,
        "rss_kb": 100, "rss_peak_kb": 120, "server_alive": alive}))
    (d / f"r{rep}.run.json").write_text(json.dumps({"rep": rep, "exit_code": exit_code, "server_alive": alive}))


@pytest.mark.parametrize("stem,exit_code,alive,expect", [
    ("read_errors", 0, True, ["read errors", "no request completed"]),
    ("write_errors", 0, True, ["write errors"]),
    ("timeouts", 0, True, ["4 timeouts", "4 read errors"]),
    ("connect_refused", 1, True, ["wrk exited with code 1", "wrk wrote no result"]),
    ("clean_ping", 0, False, ["server not alive after the run"]),
])
def test_failed_reasons(tmp_path, stem, exit_code, alive, expect):
    run_dir = make_fake_run(tmp_path, servers=("evloop",), reps=1, scenarios=DEFAULT_SCENARIOS[:1],
                            failed=(), unfinished=())
    _add_point(run_dir, "get_ping_c50", 7, stem, exit_code, alive)
    runs, _ = build_frames(run_dir)
    row = runs[runs["rep"] == 7].iloc[0]
    assert row["status"] == "failed"
    for text in expect:
        assert text in row["fail_reason"]


def test_missing_scenario_key_names_file_and_key(fake_run):
    p = fake_run / "http1/go/get_ping_c50/scenario.json"
    doc = json.loads(p.read_text())
    del doc["connections"]
    p.write_text(json.dumps(doc))
    with pytest.raises(RawFormatError) as ei:
        build_frames(fake_run)
    assert str(p) in str(ei.value) and "connections" in str(ei.value)


def test_truncated_run_json_names_line(fake_run):
    p = fake_run / "http1/go/get_ping_c50/r3.run.json"
    p.write_text('{"rep": 3,\n "exit_code": ')
    with pytest.raises(RawFormatError) as ei:
        build_frames(fake_run)
    assert str(p) in str(ei.value) and ei.value.line == 2


def test_text_json_disagreement_is_raised(fake_run):
    p = fake_run / "http1/go/get_ping_c50/r1.stdout.txt"
    text = p.read_text()
    p.write_text("\n".join("Requests/sec:  1.00" if ln.startswith("Requests/sec") else ln
                           for ln in text.splitlines()))
    with pytest.raises(RawConsistencyError):
        build_frames(fake_run)


def test_unknown_tool_is_reported(fake_run):
    p = fake_run / "http1/go/get_ping_c50/scenario.json"
    doc = json.loads(p.read_text())
    doc["tool"] = "vegeta"
    p.write_text(json.dumps(doc))
    with pytest.raises(KeyError, match="vegeta"):
        build_frames(fake_run)


def test_verify_and_suites(fake_run):
    (fake_run / "http1/go/verify.r2.txt").write_text("PASS GET /ping\nFAIL GET /echo?size=64 -> body mismatch\n")
    v = load_verify(fake_run)
    row = v[(v["server"] == "go") & (v["rep"] == 2)].iloc[0]
    assert not row["passed"] and row["n_fail"] == 1 and "body mismatch" in row["failed_checks"]
    assert v[v["server"] == "evloop"]["passed"].all()
    s = load_suites(fake_run)
    assert s.iloc[0]["status"] == "complete"
    (fake_run / "http1/suite.json").unlink()
    assert load_suites(fake_run).iloc[0]["status"] == "incomplete"


def test_scenario_blocks_gates_are_one_row_per_rep(fake_run):
    """With --blocks scenario a server is gated once per scenario of a rep (verify.r<rep>.<scenario>.txt):
    the rep's row passes only when every one of its gates did, and carries all their checks; a resumed
    start's gate (….resumed-<t>.txt) is not read."""
    d = fake_run / "http1/go"
    for f in d.glob("verify.r*.txt"):
        f.unlink()
    (d / "verify.r1.get_ping_c50.txt").write_text("PASS GET /ping\n")
    (d / "verify.r1.get_echo_s64_c50.txt").write_text("PASS GET /echo?size=64\n")
    (d / "verify.r2.get_ping_c50.txt").write_text("PASS GET /ping\n")
    (d / "verify.r2.get_echo_s64_c50.txt").write_text("FAIL GET /echo?size=64 -> body mismatch\n")
    (d / "verify.r2.get_ping_c50.resumed-1700000000.txt").write_text("FAIL GET /ping -> 500\n")
    (d / "verify.r3.get_ping_c50.txt").write_text("# a gate that recorded nothing\n")
    (d / "verify.r3.get_echo_s64_c50.txt").write_text("PASS GET /echo?size=64\n")
    v = load_verify(fake_run)
    go = v[v["server"] == "go"].set_index("rep")
    assert list(go.index) == [1, 2, 3]
    assert go.loc[1, "passed"] and go.loc[1, "n_pass"] == 2 and go.loc[1, "failed_checks"] == ""
    assert not go.loc[2, "passed"] and go.loc[2, "n_fail"] == 1 and go.loc[2, "n_pass"] == 1
    assert "body mismatch" in go.loc[2, "failed_checks"] and "500" not in go.loc[2, "lines"]
    assert not go.loc[3, "passed"] and "no check recorded (" in go.loc[3, "failed_checks"]
    assert "verify.r3.get_ping_c50.txt" in go.loc[3, "failed_checks"]
    assert go.loc[1, "raw_path"].endswith("go/verify.r1.get_echo_s64_c50.txt")   # the first by path


def test_write_tidy_roundtrip(fake_run, tmp_path):
    run = load_run(fake_run)
    paths = write_tidy(run.frames(), tmp_path / "data" / run.run_id)
    names = sorted(p.name for p in paths)
    assert names == ["latency.parquet", "runs.parquet"]
    back = pd.read_parquet(tmp_path / "data" / run.run_id / "runs.parquet")
    assert list(back.columns) == list(RUNS_COLUMNS) and len(back) == len(run.runs)
    assert np.allclose(back["req_per_s"], run.runs["req_per_s"])
