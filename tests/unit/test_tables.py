import pandas as pd
import pytest

from httplab.tidy.rawrun import build_frames
from httplab.lab.suites import suite_module
from httplab.report.scenarios import scenario_label, uncovered
from httplab.report.summary import summary_block
from httplab.report.tables import (comparison_table, cost_table, failed_runs_table, latency_table, to_markdown,
                            verify_table)
from make_fake_run import make_fake_run

FAST: dict = {"baseline": "go"}  # the http1 notebook's baseline parameter


@pytest.fixture
def runs(tmp_path):
    run = make_fake_run(tmp_path / "raw", reps_of={"nginx": 3})
    return build_frames(run)[0]


def _sections(runs):
    return {s.key: s for s in suite_module("http1").table_layout(runs)}


def test_ping_table_layout_n_and_delta(runs):
    s = _sections(runs)["ping"]
    t = comparison_table(runs, s.where, s.vary, vary_label=s.vary_label, title=s.title, **FAST)
    assert list(t.columns) == ["Connections", "C req/s", "Go req/s", "C P50", "Go P50", "C mean latency", "Go mean latency", "Δ C vs Go",
                               "nginx req/s (ref)"]
    assert t["Connections"].tolist() == ["50", "100"]
    row50 = t.iloc[0]
    assert "(n=5)" in row50["C req/s"] and " [" in row50["C req/s"] and "±" not in row50["C req/s"]   # a geometric mean: its bounds
    assert row50["Δ C vs Go"].startswith("+") and "[" in row50["Δ C vs Go"]
    # go rep 2 at 100 connections failed -> 4 ok runs -> no CI, said so
    assert "n=4, CI needs ≥ 5 runs" in t.iloc[1]["Go req/s"]
    assert "CI needs ≥ 5 runs" in t.iloc[1]["Δ C vs Go"]
    assert "n=3, CI needs ≥ 5 runs" in row50["nginx req/s (ref)"]
    cap = t.attrs["caption"]
    assert "95%" in cap and "n = ok runs" in cap and "1 failed run" in cap and "P50" in cap
    md = to_markdown(t)
    # with the mean latency beside P50 the table is shown in two parts, each keyed by Connections
    assert md.count("| Connections") == 2 and "|:--" in md and "Part 1 of 2" in md


def test_echo_and_post_tables(runs):
    sec = _sections(runs)
    t = comparison_table(runs, sec["echo_get"].where, "size_bytes", vary_label="Response size", **FAST)
    assert t["Response size"].tolist() == ["64 B", "4 KiB"]
    p = comparison_table(runs, sec["echo_post"].where, "size_bytes", vary_label="Body size", transfer=True, **FAST)
    assert {"C Transfer/s", "Go Transfer/s"} <= set(p.columns) and "MiB/s" in p.iloc[0]["C Transfer/s"]
    assert "C P50" not in p.columns


def test_missing_data_gives_empty_table_with_reason(runs):
    t = comparison_table(runs, {"route": "/nope"}, "connections", **FAST)
    assert t.empty and "no data" in t.attrs["caption"]
    assert "No data" in to_markdown(t)
    only_evloop = runs[runs["server"] == "evloop"]
    t = comparison_table(only_evloop, {"route": "/ping", "pipeline": 1}, "connections", **FAST)
    assert (t["Go req/s"] == "no data").all() and (t["Δ C vs Go"] == "no data").all()


def test_latency_and_cost_tables(runs):
    lt = latency_table(runs, **FAST)
    assert {"P50", "P99", "P99.9", "P99/P50", "Δ P99 vs Go", "n"} <= set(lt.columns)
    assert (lt.loc[lt["Server"] == "Go net/http", "Δ P99 vs Go"] == "—").all()
    assert any("latency per batch" in s for s in lt["Scenario"])
    assert "95%" in lt.attrs["caption"]
    ct = cost_table(runs, **FAST)
    assert {"req/s", "CPU %", "CPU-µs/req", "Peak RSS", "Δ CPU-µs/req vs Go"} <= set(ct.columns)
    c = ct[(ct["Server"] == "C (evloop)")].iloc[0]["Δ CPU-µs/req vs Go"]
    assert c.startswith("\u2212")  # the fake C server is cheaper per request


def test_failed_and_verify_tables(runs, tmp_path):
    f = failed_runs_table(runs)
    assert f[["Server", "Rep"]].values.tolist() == [["Go net/http", 2]]
    assert "non-2xx" in f.iloc[0]["Fail reason"]
    assert failed_runs_table(runs[runs["status"] == "ok"]).empty
    v = verify_table(pd.DataFrame({"server": ["go", "go"], "rep": [1, 2], "passed": [True, False],
                                   "n_pass": [3, 2], "n_fail": [0, 1], "failed_checks": ["", "FAIL x"]}))
    assert v.iloc[0]["Result"] == "FAIL" and v.iloc[0]["Rep blocks passed"] == "1/2"
    assert "r2: FAIL x" in v.iloc[0]["Failed checks"]


def test_sections_cover_all_fake_scenarios(runs):
    assert uncovered(runs, suite_module("http1").table_layout(runs)).empty
    assert scenario_label({"method": "POST", "route": "/echo", "size_bytes": 65536, "connections": 100,
                           "pipeline": 1}) == "POST /echo 64 KiB, 100 conns"
    # over TLS each protocol is named: HTTPS/1.1, HTTPS/2, and HTTP/3 (QUIC carries TLS 1.3)
    tls = {"method": "GET", "route": "/ping", "connections": 10, "streams": 10, "tls": True}
    assert [scenario_label({**tls, "protocol": p}) for p in ("h1", "h2", "h3")] == [
        "HTTPS/1.1 GET /ping, 10 conns, 10 streams", "HTTPS/2 GET /ping, 10 conns, 10 streams",
        "HTTP/3 GET /ping, 10 conns, 10 streams"]


def test_summary_block(runs):
    text = summary_block(runs, suite_module("http1").table_layout(runs), run_id="X", **FAST)
    lines = text.splitlines()
    assert lines[0] == "C (evloop) vs Go net/http — run X"
    ping = next(ln for ln in lines if ln.startswith("GET /ping:"))
    assert " ~ " in ping and "[" in ping and "of 2 points" in ping
    assert any(ln.startswith("Peak throughput: C ") and "req/s [" in ln for ln in lines)
    assert any(ln.startswith("Peak transfer: C ") and "MiB/s" in ln for ln in lines)
    empty = summary_block(runs.iloc[0:0], suite_module("http1").table_layout(runs.iloc[0:0]), **FAST)
    assert "no data" in empty
