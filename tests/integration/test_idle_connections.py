"""The idle-connection memory measurement end to end (scripts/idle_memory.sh): the C
server (the -O2 build the suites run, started and pinned as they start it) at 2,000 idle keep-alive
connections over HTTP/1.1 and h2c, one rep each. The raw records are written, the tidy frame and
the table made, and the cost per connection is computed and within the 4 KiB target over
HTTP/1.1 and h2c. About 20 s."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from evloop_process import missing, need
from httplab.parse.idle_conns import read_idle_point
from httplab.tidy.read import read_frame
from idle_memory_checks import IDLE_TARGET_KIB, assert_idle_cost

ROOT = Path(__file__).resolve().parents[2]
N = 2000


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict:
    need("jq")
    need("curl")
    build = Path(os.environ.get("BUILD_DIR") or ROOT / "build")
    if not (build / "bench" / "http_bench_server").exists():
        missing(f"the C server is not built in {build} (scripts/build.sh)")
    base = tmp_path_factory.mktemp("idle-memory")
    env = {**os.environ, "RAW_ROOT": str(base / "raw"), "DATA_ROOT": str(base / "data"),
           "REPORTS_ROOT": str(base / "reports")}
    run = subprocess.run([str(ROOT / "scripts" / "idle_memory.sh"), "--skip-build", "--targets",
                          "evloop:h1,evloop:h2c", "--conns", str(N), "--reps", "1"],
                         env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:] + run.stdout[-2000:]
    (run_dir,) = [p for p in (base / "raw").iterdir() if p.is_dir()]
    return {"run": run_dir, "data": base / "data" / run_dir.name, "stdout": run.stdout, "stderr": run.stderr}


def test_each_mode_measured_every_connection(measured: dict) -> None:
    frame = read_frame(measured["data"], "idle_memory")
    assert set(frame["mode"]) == {"h1", "h2c"} and (frame["conns"] == N).all()
    for mode in ("h1", "h2c"):
        rows = assert_idle_cost(frame, "evloop", mode, N, max_kib=IDLE_TARGET_KIB)
        assert len(rows) == 1
        r = rows.iloc[0]
        assert r["rss_after_kb"] > r["rss_before_kb"] > 0
        assert r["kib_per_conn"] == pytest.approx((r["rss_after_kb"] - r["rss_before_kb"]) / N)
        assert r["n_procs"] == 1   # the C server is one process


def test_raw_records_and_run_meta(measured: dict) -> None:
    meta = json.loads((measured["run"] / "meta.json").read_text())
    assert meta["complete"] is True and meta["suites"] == ["idle_memory"]
    assert meta["params"]["conns"] == [N] and meta["params"]["targets"] == ["evloop:h1", "evloop:h2c"]
    order = json.loads((measured["run"] / "idle_memory" / "order.json").read_text())
    assert sorted(order["orders"][0]) == ["evloop:h1", "evloop:h2c"]
    for mode in ("h1", "h2c"):
        d = measured["run"] / "idle_memory" / f"evloop.{mode}" / f"c{N}"
        point = read_idle_point(d / "r1.json")
        assert point.answered == point.alive_after == N and not point.problems()
        assert point.before.settled and point.after.settled
        assert (d / "r1.server.log").is_file()
        doc = json.loads((d / "r1.json").read_text())
        assert doc["client_affinity"] == [1] or len(os.sched_getaffinity(0)) < 2   # the client core


def test_table_is_printed(measured: dict) -> None:
    out = measured["stdout"]
    assert "Memory per idle keep-alive connection" in out and "C (evloop)" in out
    assert "h2c" in out and "KiB" in out
    assert (measured["data"] / "idle_memory.csv").is_file()


def test_report_page_and_index(measured: dict) -> None:
    reports = measured["run"].parent.parent / "reports"
    page = reports / measured["run"].name / "idle_memory.html"
    assert page.is_file() and "<table" in page.read_text()
    assert f"{measured['run'].name}/idle_memory.html" in (reports / "index.html").read_text()
