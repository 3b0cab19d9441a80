"""The backends suite's smoke run of scripts/test.sh (LAB_BACKENDS_SMOKE_DIR: raw/, data/, reports/
of `run_all.sh --quick --suites backends`, the C server on epoll and on io_uring and both floors, one
rep): every server ran both quick points without an error, the io_uring entry really ran on io_uring
(its log has no fallback, its start line asks for it), and the exported report carries the targets,
the ratio tables and the figures."""
from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pytest

from smoke_runs import the_run

from httplab.tidy.rawrun import load_run

SMOKE = os.environ.get("LAB_BACKENDS_SMOKE_DIR")
pytestmark = pytest.mark.skipif(not SMOKE, reason="LAB_BACKENDS_SMOKE_DIR not set (scripts/test.sh sets it)")
SERVERS = {"evloop", "evloop_uring", "floor", "floor_uring"}


@pytest.fixture(scope="module")
def run_dir() -> Path:
    return the_run(SMOKE)


def test_every_server_ran_both_points_cleanly(run_dir: Path) -> None:
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["suites"] == ["backends"] and meta["complete"] is True
    runs = load_run(run_dir).runs
    assert set(runs["server"]) == SERVERS
    assert set(runs["scenario"]) == {"get_ping_c100", "get_ping_pipe16_c100"}
    assert (runs["status"] == "ok").all(), runs[["server", "scenario", "fail_reason"]]
    assert (runs["req_per_s"] > 0).all() and runs["cpu_us_per_req"].notna().all()


def test_the_io_uring_entry_ran_on_io_uring(run_dir: Path) -> None:
    with tarfile.open(run_dir / "backends" / "evloop_uring.tar.xz") as tar:
        logs = [m for m in tar.getmembers() if m.name.endswith(".log") and "server.r" in m.name]
        assert logs, [m.name for m in tar.getmembers()]
        for m in logs:
            text = tar.extractfile(m).read().decode()  # type: ignore[union-attr]
            assert "listening" in text and "falling back" not in text, text


def test_report_has_targets_ratios_and_figures(run_dir: Path) -> None:
    md = (Path(SMOKE) / "reports" / run_dir.name / "backends.md").read_text()
    assert "The suite's targets against this run" in md
    assert "How the gain moves with connections and pipelining" in md
    assert "the C server: io_uring / epoll (C uring/C)" in md
    assert md.count("![") >= 2
    assert (Path(SMOKE) / "reports" / run_dir.name / "backends.html").is_file()
