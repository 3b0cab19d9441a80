"""The scaling suite's smoke run of scripts/test.sh (LAB_SCALING_SMOKE_DIR: raw/, data/, reports/ of
`run_all.sh --quick --suites scaling --servers evloop,go`, one rep): each server ran as <server>@<n>
for every n of the machine's plan (n = 1 on two cores), pinned to n CPUs and told n, every point
records the plan, and the report has its sections."""
from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pandas as pd
import pytest

from smoke_runs import the_run

from httplab.lab import cores as C
from httplab.lab.servers import base_of

SMOKE = os.environ.get("LAB_SCALING_SMOKE_DIR")
pytestmark = pytest.mark.skipif(not SMOKE, reason="LAB_SCALING_SMOKE_DIR not set (scripts/test.sh sets it)")


@pytest.fixture(scope="module")
def run_dir() -> Path:
    return the_run(SMOKE)


@pytest.fixture(scope="module")
def runs(run_dir: Path) -> pd.DataFrame:
    return pd.read_parquet(Path(SMOKE) / "data" / run_dir.name / "runs.parquet")


def test_every_server_ran_at_every_n_of_the_plan(run_dir: Path, runs: pd.DataFrame) -> None:
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["suites"] == ["scaling_h1", "scaling_h2c", "scaling_tls"] and meta["complete"] is True
    plan = C.scaling_plan(sorted(os.sched_getaffinity(0)))
    want = {f"{s}@{n}" for s in ("evloop", "go") for n in plan.ladder}
    assert set(runs["server"]) == want
    assert (runs["status"] == "ok").all(), runs[["server", "scenario", "fail_reason"]]
    assert {base_of(s) for s in runs["server"]} == {"evloop", "go"}
    assert set(runs["suite"]) == {"scaling_h1", "scaling_h2c", "scaling_tls"}


def test_points_record_the_plan(run_dir: Path) -> None:
    with tarfile.open(run_dir / "scaling_h2c" / "evloop@1.tar.xz") as tar:   # the packed suite
        (member,) = [m for m in tar.getmembers() if m.name.endswith("get_ping_c100/scenario.json")]
        scen = json.load(tar.extractfile(member))  # type: ignore[arg-type]
    assert scen["scaling_ladder"][0] == 1 and "cores measured" in scen["scaling_plan"]
    if os.cpu_count() == 2:
        assert "n = 1 only" in scen["scaling_plan"]


def test_the_report_has_its_sections(run_dir: Path) -> None:
    md = (Path(SMOKE) / "reports" / run_dir.name / "scaling.md").read_text()
    for title in ("Findings", "Throughput against cores", "Scaling efficiency", "Cost per request and busy cores",
                  "Measurement quality", "Method notes", "Run and machine", "Verify gate"):
        assert f">{title}" in md, title
    for point in ("HTTP/1.1 GET /ping, 100 conns", "h2c GET /ping", "HTTPS/1.1 GET /ping", "HTTPS/2 GET /ping"):
        assert f"**{point}" in md, point
    assert "C (evloop) at 1 core" in md and "**Where the load tools ran out**" in md
    if C.scaling_plan(sorted(os.sched_getaffinity(0))).ladder == (1,):
        assert "This machine allowed n = 1 only." in md and "No efficiency curve" in md
