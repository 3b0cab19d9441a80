"""The method section: command lines read back from raw/, shown repository-relative and grouped
by shape; the settings from meta.json; the measured coverage."""
from __future__ import annotations

from pathlib import Path

import pytest

from httplab.report import engine as R
from httplab.report import method as M

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "raw" / "20261123T092401Z-vm"


def test_paths_are_repository_relative_and_ports_masked():
    cmd = ("WRK_LUA_DIR=/home/ab/lab/scripts/lua wrk -s /tmp/x/lab/scripts/lua/report.lua "
           "http://127.0.0.1:18080/ping")
    assert M.relative(cmd) == "WRK_LUA_DIR=scripts/lua wrk -s scripts/lua/report.lua http://127.0.0.1:PORT/ping"
    assert M.relative("h2load -d /srv/lab/build/payload/x1024 http://127.0.0.1:1/echo") == \
        "h2load -d build/payload/x1024 http://127.0.0.1:PORT/echo"


def test_shapes_group_scenarios_that_differ_only_in_values():
    cmds = [("get_ping_c50", "wrk -c 50 http://h/ping"), ("get_ping_c100", "wrk -c 100 http://h/ping"),
            ("post_b1024", "wrk -c 100 -s post.lua BODY_SIZE=1024 http://h/echo")]
    assert M.shapes(cmds) == [(["get_ping_c50", "get_ping_c100"], "wrk -c 50 http://h/ping"),
                              (["post_b1024"], "wrk -c 100 -s post.lua BODY_SIZE=1024 http://h/echo")]


def test_method_section_of_the_reference_run():
    data = ROOT / "data" / RUN.name     # as committed (test_committed_runs_rebuild: what raw/ rebuilds to)
    if not RUN.is_dir() or not (data / "estimates.parquet").is_file():
        pytest.skip("the reference run is not in raw/ and data/")
    ctx = R.open_report("h2c", run_dir=RUN, out_dir=data, baseline="go", start=ROOT)
    md = M.method_markdown(ctx)
    assert md.startswith("## Method")
    assert "h2load -t 1 -c 50 -m 10 -D 3 http://127.0.0.1:PORT/ping" in md
    assert "-d build/payload/x1024" in md
    assert str(ROOT) not in md and "/work/" not in md
    assert "3 s after 1 s of unrecorded warm-up" in md and "server on CPU 0" in md
    # the committed coverage table's range at n ≥ 5 (its measured rows of the interleaved design included)
    from httplab.stats.coverage import committed_table
    t = committed_table()
    t = t[(t["interval"] != "ranking_holm") & (t["n"] >= 5)]
    assert f"{100 * t['coverage'].min():.1f}–{100 * t['coverage'].max():.1f} %" in md
    assert 0.93 <= t["coverage"].min() and t["coverage"].max() <= 0.97
