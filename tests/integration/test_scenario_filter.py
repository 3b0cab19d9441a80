"""--scenarios (scripts/lib/suite.sh scenario_selected), through bench.sh's point count (LAB_COUNT_POINTS,
which touches nothing): globs select scenario ids in every suite, and a SUITE:GLOB glob in its suite
only, so that one run_all line can pick different scenarios in suites whose ids overlap."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.concurrent

ROOT = Path(__file__).resolve().parents[2]


def points(suite: str, tmp: Path, scenarios: str) -> int:
    env = {**os.environ, "LAB_COUNT_POINTS": "1", "RAW_ROOT": str(tmp / "raw")}
    out = subprocess.run([str(ROOT / "scripts" / "bench.sh"), suite, "--run-dir", str(tmp / suite), "--servers", "evloop",
                          "--reps", "1", "--no-aa", "--scenarios", scenarios],
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    return int(out[-2])


def test_a_plain_glob_selects_in_every_suite(tmp_path: Path) -> None:
    assert points("http1", tmp_path, "get_ping_c100") == 1
    assert points("h2c", tmp_path, "get_ping_*") > 1


def test_a_suite_glob_selects_in_its_suite_only(tmp_path: Path) -> None:
    # h2c's ids overlap http1's (get_ping_c100 in both): each suite takes its own glob, and a suite
    # named by none of them selects nothing
    flt = "http1:get_ping_c100,h2c:get_ping_c[25]*"
    assert points("http1", tmp_path, flt) == 1
    assert points("h2c", tmp_path, flt) == points("h2c", tmp_path, "get_ping_c[25]*") >= 2
    assert points("https", tmp_path, flt) == 0
