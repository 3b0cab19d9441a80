"""The per-point rules (docs/method.md) on fixtures: the window's own memory peak, the client-bound
and noisy flags with their thresholds (httplab.tidy.bounds), the load tool's CPU, positions and A/A
naming."""
import json
import math
from pathlib import Path

import pytest

from httplab.tidy import bounds
from httplab.parse.cpuwindow import read_client_time, window_cpu
from httplab.parse.errors import RawFormatError
from httplab.tidy.rawrun import aa_of, build_frames, read_server_cost
from make_fake_run import make_fake_run, write_cpu_window


# ---------------------------------------------------------------- thresholds
@pytest.mark.parametrize("client, server, want", [
    (0.95, 0.60, True),            # the tool saturated, the server had time to spare
    (bounds.CLIENT_BUSY_MIN, 0.5, True),
    (0.89, 0.60, False),           # the tool had time to spare
    (0.99, 0.95, False),           # both saturated: the server is (also) the limit
    (0.99, bounds.SERVER_SATURATED, False),
    (None, 0.5, None), (0.95, math.nan, None),
])
def test_client_bound_rule(client, server, want):
    assert bounds.client_bound(client, server) is want


@pytest.mark.parametrize("steal, foreign, want", [
    (0.0, 0.0, False), (bounds.STEAL_MAX_PCT, 0.0, False), (2.1, 0.0, True),
    (0.0, bounds.FOREIGN_MAX_PCT, False), (0.0, 5.5, True), (None, 1.0, None),
])
def test_noisy_rule(steal, foreign, want):
    assert bounds.noisy(steal, foreign) is want
    assert (bounds.noisy_reason(steal, foreign) != "") is bool(want)


def test_thresholds_are_described():
    text = bounds.describe_thresholds()
    assert "90%" in text and "2 %" in text and "5 %" in text


# ---------------------------------------------------------------- the window's cores
def _window(tmp_path: Path, **kw) -> Path:
    d = tmp_path / "pt"
    d.mkdir()
    write_cpu_window(d / "r1", **kw)
    return d


def test_window_cpu_client_bound_point(tmp_path):
    d = _window(tmp_path, server_cpu_s=2.0, wall_s=4.0, client_cpu_s=3.9)
    w = window_cpu(d, 1, server_cpu_s=2.0)
    assert w.client_busy == pytest.approx(0.975, abs=0.01)
    assert w.server_busy == pytest.approx(0.5, abs=0.01)
    assert w.client_cpu_s == pytest.approx(3.9, abs=0.02)
    assert w.foreign_cpu_pct == pytest.approx(0.0, abs=1.0) and w.steal_pct == 0.0
    assert bounds.client_bound(w.client_busy, w.server_busy) is True


def test_window_cpu_sees_foreign_process_and_steal(tmp_path):
    d = _window(tmp_path, server_cpu_s=2.0, wall_s=4.0, client_cpu_s=2.0, foreign_s=0.4, steal_s=0.2)
    w = window_cpu(d, 1, server_cpu_s=2.0)
    assert w.foreign_cpu_pct == pytest.approx(10.0, abs=1.0)   # 0.4 s of 4 s on the server core
    assert w.steal_pct == pytest.approx(5.0, abs=0.5)
    assert bounds.noisy(w.steal_pct, w.foreign_cpu_pct) is True


def test_old_window_loses_the_tools_tail(tmp_path):
    """An old window read after wrk exited: 3 s of load, then 1 s of wrk's histogram dump (server
    idle, one client core busy). The tail comes off both sets of cores and the tool's CPU."""
    d = _window(tmp_path, server_cpu_s=2.85, wall_s=4.0, client_cpu_s=3.9)
    whole = window_cpu(d, 1, server_cpu_s=2.85)
    assert whole.server_busy == pytest.approx(0.71, abs=0.01)     # what the old window said
    w = window_cpu(d, 1, server_cpu_s=2.85, tail_s=1.0)
    assert w.server_busy == pytest.approx(0.95, abs=0.01)
    assert w.client_busy == pytest.approx(0.967, abs=0.01)
    assert w.client_cpu_s == pytest.approx(2.9, abs=0.02)


def test_window_tail_only_for_wrk_windows_read_at_exit():
    from httplab.parse.loadresult import LoadResult
    from httplab.tidy.rawrun import ServerCost, window_tail_s
    import numpy as np
    res = LoadResult(tool="wrk", requests=100, duration_s=3.0, bytes_read=0.0, errors={},
                     lat_mean_us=1.0, lat_max_us=1.0, hist_kind="none",
                     hist_values_us=np.array([]), hist_counts=np.array([]))
    old = ServerCost(cpu_s=2.0, wall_s=3.6, rss_kb=1, rss_peak_kb=1, alive=True)
    new = ServerCost(cpu_s=2.0, wall_s=3.01, rss_kb=1, rss_peak_kb=1, alive=True, window_end="load_end")
    assert window_tail_s("wrk", old, res) == pytest.approx(0.6)
    assert window_tail_s("wrk", new, res) == 0.0
    assert window_tail_s("h2load", old, res) == 0.0     # h2load's excess is before its clock
    assert window_tail_s("wrk", None, res) == 0.0


def test_window_from_the_clock_start_leaves_the_connects_out(tmp_path):
    """A window opened at the tool's clock (its start snapshot): the server's ticks are counted
    from there (cpu_ticks_before is the snapshot's), clock_start_s keeps the connects' seconds, and
    the tool's CPU before the clock (client_cpu_ticks_before) comes off its CPU, whether that is
    read from its end snapshot or from its exit's /usr/bin/time."""
    p = tmp_path / "r1.server.json"
    doc = {"pids": [1], "clk_tck": 100, "cpu_ticks_before": 40, "cpu_ticks_after": 140, "wall_s": 1.0,
           "tool_wall_s": 1.9, "window_start": "clock_start", "clock_start_s": 0.8, "window_end": "load_end",
           "rss_kb": 1, "server_alive": True}
    p.write_text(json.dumps(doc))
    cost = read_server_cost(p)
    assert cost.cpu_s == pytest.approx(1.0) and cost.clock_start_s == 0.8
    p.write_text(json.dumps({**doc, "window_start": "tool_start", "clock_start_s": None}))
    assert math.isnan(read_server_cost(p).clock_start_s)
    for bad in ({"window_start": "somewhere"}, {"clock_start_s": None}, {"clock_start_s": -1}):
        p.write_text(json.dumps({**doc, **bad}))
        with pytest.raises(RawFormatError, match=r"r1\.server\.json.*(window_start|clock_start_s)"):
            read_server_cost(p)
    (tmp_path / "w").mkdir()
    d = _window(tmp_path / "w", server_cpu_s=1.0, wall_s=1.0, client_cpu_s=1.5)
    c = d / "r1.cpu.json"
    cpu = json.loads(c.read_text())
    c.write_text(json.dumps({**cpu, "client_cpu_ticks_before": 50}))
    assert window_cpu(d, 1, 1.0).client_cpu_s == pytest.approx(1.0, abs=0.02)    # the time file's
    c.write_text(json.dumps({**cpu, "client_cpu_ticks": 160, "client_cpu_ticks_before": 50}))
    assert window_cpu(d, 1, 1.0).client_cpu_s == pytest.approx(1.1)                # the snapshots'
    c.write_text(json.dumps({**cpu, "client_cpu_ticks": 40, "client_cpu_ticks_before": 50}))
    with pytest.raises(RawFormatError, match="client_cpu_ticks"):
        window_cpu(d, 1, 1.0)


def test_window_cpu_absent_for_old_runs(tmp_path):
    assert window_cpu(tmp_path, 1, 1.0) is None


def test_window_cpu_counters_backwards_name_file(tmp_path):
    d = _window(tmp_path, server_cpu_s=1.0, wall_s=2.0, client_cpu_s=1.0)
    p = d / "r1.cpu.json"
    doc = json.loads(p.read_text())
    doc["proc_stat_after"]["0"][0] = 0
    p.write_text(json.dumps(doc))
    with pytest.raises(RawFormatError, match=r"r1\.cpu\.json.*backwards"):
        window_cpu(d, 1, 1.0)


def test_client_time_after_failed_tool(tmp_path):
    p = tmp_path / "r1.client.time.txt"
    p.write_text("Command exited with non-zero status 1\nuser_s=0.50 sys_s=0.25 wall_s=1.00 maxrss_kb=7000 exit=1\n")
    t = read_client_time(p)
    assert t.cpu_s == pytest.approx(0.75) and t.maxrss_kb == 7000
    p.write_text("garbage\n")
    with pytest.raises(RawFormatError, match=r"r1\.client\.time\.txt, line 1"):
        read_client_time(p)


# ---------------------------------------------------------------- memory of the window
def test_old_cumulative_peak_is_not_reported(tmp_path):
    p = tmp_path / "r1.server.json"
    p.write_text(json.dumps({"pids": [1], "clk_tck": 100, "cpu_ticks_before": 0, "cpu_ticks_after": 10,
                             "wall_s": 1.0, "rss_kb": 5000, "rss_peak_kb": 169820, "server_alive": True}))
    cost = read_server_cost(p)
    assert math.isnan(cost.rss_peak_kb) and cost.rss_peak_method == "cumulative"


def test_window_peak_is_read_with_its_method(tmp_path):
    p = tmp_path / "r1.server.json"
    p.write_text(json.dumps({"pids": [1], "clk_tck": 100, "cpu_ticks_before": 0, "cpu_ticks_after": 10,
                             "wall_s": 1.0, "rss_start_kb": 3000, "rss_warm_kb": 4000, "rss_peak_kb": 4500,
                             "rss_peak_method": "clear_refs", "rss_kb": 4100, "server_alive": True}))
    cost = read_server_cost(p)
    assert (cost.rss_start_kb, cost.rss_warm_kb, cost.rss_peak_kb) == (3000, 4000, 4500)
    doc = json.loads(p.read_text())
    doc["rss_peak_method"] = "guess"
    p.write_text(json.dumps(doc))
    with pytest.raises(RawFormatError, match="rss_peak_method"):
        read_server_cost(p)


# ---------------------------------------------------------------- frames
def test_frame_flags_positions_capacity(tmp_path):
    run = make_fake_run(tmp_path / "raw", servers=("evloop", "go"), failed=(), unfinished=())
    runs, _ = build_frames(run)
    assert runs["client_bound"].dtype.name == "boolean" and runs["noisy"].dtype.name == "boolean"
    assert not runs["client_bound"].any() and not runs["noisy"].any()
    ok = runs[runs["status"] == "ok"]
    assert (ok["capacity_rps"] * ok["cpu_us_per_req"] / 1e6).round(9).eq(1.0).all()
    # positions: inferred from start times when run.json has none; fake points share one time,
    # so the servers rank by name within a rep
    assert runs["position"].notna().all() and set(runs["position"].dropna().unique()) <= {1, 2}


def test_recorded_position_is_kept(tmp_path):
    run = make_fake_run(tmp_path / "raw", servers=("evloop", "go"), failed=(), unfinished=())
    for p in run.glob("http1/go/*/r1.run.json"):
        doc = json.loads(p.read_text())
        doc["position"] = 7
        p.write_text(json.dumps(doc))
    runs, _ = build_frames(run)
    go1 = runs[(runs["server"] == "go") & (runs["rep"] == 1)]
    assert (go1["position"] == 7).all()


def test_aa_naming():
    assert aa_of("evloop~aa") == "evloop" and aa_of("evloop") is None
