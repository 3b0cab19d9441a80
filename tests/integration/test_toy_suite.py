"""A suite is one folder: a toy suite made by creating suites/<name>/ alone (its declaration, one
part's scenario matrix, one report section) runs through `run_all.sh --quick` to an exported report,
and nothing outside that folder is touched or needs editing.

It runs the real pipeline (the C server and the floor responder, wrk, the generic report notebook),
into scratch raw/, data/ and reports/ folders; the suite's folder is removed however the test ends."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]

SUITE_TOML = """# A toy suite, made by a test.
title = "Toy suite: GET /ping"
order = 999
baseline = "floor"

[[sections]]
key = "ping"
title = "GET /ping by connections"
where = {{ method = "GET", route = "/ping" }}
vary = "connections"
vary_label = "Connections"
"""

PART_SH = """# shellcheck shell=bash
# {name}: GET /ping over HTTP/1.1 with wrk at two connection counts.
SUITE={name} PROTOCOL=h1 TLS=false SCHEME=http SERVER_MODE=h1
SUITE_DEFAULT_SERVERS="evloop floor"
# id            kind  method route size connections depth lua
SCENARIOS=(
    "get_ping_c10  ping  GET  /ping 0    10  1  report.lua"
    "get_ping_c20  ping  GET  /ping 0    20  1  report.lua"
)
HEADLINE_SCENARIOS=get_ping_c10
QUICK_SCENARIOS=get_ping_c10,get_ping_c20
"""


def _status() -> set[str]:
    """git's view of the working tree (changed and untracked paths)."""
    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return {line[3:] for line in out.splitlines()}


@pytest.fixture
def toy_suite():
    if not (ROOT / "build" / "bench" / "http_bench_server").exists():
        pytest.skip("the C server is not built (scripts/build.sh)")
    name = "toy" + uuid.uuid4().hex[:6]
    folder = ROOT / "suites" / name
    before = _status()
    folder.mkdir()
    try:
        (folder / "suite.toml").write_text(SUITE_TOML.format(name=name))
        (folder / f"{name}.sh").write_text(PART_SH.format(name=name))
        yield name, folder, before
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_toy_suite_is_one_folder(toy_suite, tmp_path: Path) -> None:
    name, folder, before = toy_suite
    env = {**os.environ, "RAW_ROOT": str(tmp_path / "raw"), "DATA_ROOT": str(tmp_path / "data"),
           "REPORTS_ROOT": str(tmp_path / "reports"), "LAB_CANARY": "1"}
    r = subprocess.run([str(ROOT / "scripts" / "run_all.sh"), "--skip-setup", "--new", "--quick", "--suites", name,
                        "--reps", "1", "--duration", "1", "--warmup", "0"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    (run_dir,) = list((tmp_path / "raw").iterdir())
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["suites"] == [name] and meta["complete"] is True
    # the report: exported, with the declared section holding both servers' figures
    md = (tmp_path / "reports" / run_dir.name / f"{name}.md").read_text()
    html = (tmp_path / "reports" / run_dir.name / f"{name}.html").read_text()
    assert "Toy suite: GET /ping" in md and "GET /ping by connections" in md
    section = md.split('<h2 id="get-ping-by-connections">', 1)[1].split("<h2 ", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("| 10 ") or ln.startswith("| 20 ")]
    # both servers' req/s, P50 and mean latency (each with its n: no interval at one run), and the Δ
    assert len(rows) == 2 and all(ln.count("(n=1") == 7 for ln in rows), section
    assert "C req/s" in section and "floor req/s" in section, section
    assert "GET /ping by connections" in html
    # the data frames of the run were written
    assert (tmp_path / "data" / run_dir.name / "estimates.parquet").is_file()
    # the machine's canary at the suite's start (the quick profile with one rep has no middle and
    # no end: the test command's smoke run, with five, checks the end), in raw/, data/ and the header
    # (the run's end packs each folder of a part, the canary's too: httplab.tidy.rawpack)
    assert sorted(p.name.split(".tar")[0] for p in (run_dir / name).glob("canary.*")) == ["canary.start"]
    canary = pd.read_parquet(tmp_path / "data" / run_dir.name / "canary.parquet")
    assert list(canary["when"]) == ["start"] and (canary["problems"] == "").all(), canary.to_dict("records")
    assert (canary[["cpu_mops_per_s", "pingpong_rt_per_s", "floor_req_per_s"]] > 0).all().all()
    # the quick profile's programs run a quarter second, its floor wrk's one second
    assert list(canary["probe_seconds"]) == [0.25] and list(canary["seconds"]) == [1.0]
    assert "| Canary | CPU loop " in md and "at the start (the floor 1 s, the CPU loop and the ping-pong 0.25 s, one run)" in md and "at the end:" not in md
    # nothing outside the suite's folder changed in the working tree
    after = _status() - before
    assert all(p.startswith(f"suites/{name}/") for p in after), sorted(after)
