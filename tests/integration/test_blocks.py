"""Scenario blocks (`--blocks scenario`, scripts/lib/suite.sh suite_blocks), through run_all.sh on
live servers: in each rep every server runs a scenario before any runs the next, each started and
gated for it (a server log and a verify file per block), the run's meta records the mode and the
built data reads every block's gate; the latency suites, whose rates follow a capacity point of
the same start, keep one block per rep; a mode the harness does not know is refused."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.concurrent

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ("get_ping_c100", "get_ping_pipe16_c100")


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "RAW_ROOT": str(tmp / "raw"), "DATA_ROOT": str(tmp / "data"),
            "REPORTS_ROOT": str(tmp / "reports")}


def test_every_server_runs_a_scenario_before_any_runs_the_next(tmp_path):
    r = subprocess.run([str(ROOT / "scripts" / "run_all.sh"), "--skip-setup", "--skip-build", "--new", "--no-reports",
                        "--suites", "http1", "--servers", "evloop,floor", "--scenarios", ",".join(SCENARIOS),
                        "--no-aa", "--reps", "2", "--duration", "1", "--warmup", "0", "--blocks", "scenario"],
                       env=_env(tmp_path), capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "2 scenario blocks per rep" in r.stderr
    done = re.findall(r"\[http1 \d+/8\] (\S+) (\S+) r(\d)", r.stderr)
    assert len(done) == 8
    # per rep: both servers' first scenario, then both servers' second
    for rep in ("1", "2"):
        seq = [sc for _, sc, rp in done if rp == rep]
        assert seq == [SCENARIOS[0]] * 2 + [SCENARIOS[1]] * 2, seq
    (run,) = (tmp_path / "raw").iterdir()
    assert json.loads((run / "meta.json").read_text())["params"]["blocks"] == "scenario"
    subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "httplab", "pack", "unpack", str(run)],
                   cwd=ROOT, check=True, capture_output=True)
    for server in ("evloop", "floor"):
        names = {p.name for p in (run / "http1" / server).iterdir() if p.is_file()}
        for rep in (1, 2):
            for sc in SCENARIOS:
                assert f"server.r{rep}.{sc}.log" in names and f"verify.r{rep}.{sc}.txt" in names, names
    data = tmp_path / "data" / run.name
    subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "httplab", "build", str(run), str(data)],
                   cwd=ROOT, check=True, capture_output=True)
    verify = pd.read_parquet(data / "verify.parquet")
    assert len(verify) == 4 and verify["passed"].all() and (verify["n_pass"] >= 2).all()
    runs = pd.read_parquet(data / "runs.parquet")
    assert len(runs) == 8 and (runs["status"] == "ok").all()


def _count(tmp: Path, part: str, *flags: str) -> tuple[int, int]:
    env = {**os.environ, "LAB_COUNT_POINTS": "1", "RAW_ROOT": str(tmp / "raw")}
    out = subprocess.run([str(ROOT / "scripts" / "bench.sh"), part, "--run-dir", str(tmp / f"{part}{flags}"),
                          "--quick", *flags], env=env, capture_output=True, text=True, check=True).stdout.split()
    return int(out[-2]), int(out[-1])


def test_the_plan_counts_a_start_per_block_and_the_latency_suites_keep_one(tmp_path):
    one, blocks = _count(tmp_path, "http1"), _count(tmp_path, "http1", "--blocks", "scenario")
    assert one[0] == blocks[0] and blocks[1] > one[1]          # the same points, more starts
    assert _count(tmp_path, "latency_h1") == _count(tmp_path, "latency_h1", "--blocks", "scenario")


def test_an_unknown_mode_is_refused_before_anything_starts(tmp_path):
    r = subprocess.run([str(ROOT / "scripts" / "run_all.sh"), "--skip-setup", "--new", "--blocks", "point"],
                       env=_env(tmp_path), capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode != 0 and "--blocks takes server, scenario or sliced (got 'point')" in r.stderr
    assert not (tmp_path / "raw").exists() or not any((tmp_path / "raw").iterdir())
