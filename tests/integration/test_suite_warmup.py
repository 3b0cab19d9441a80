"""A suite's own warm-up (SUITE_MIN_WARMUP in its declaration: the languages suite's Node servers
compile at run time): a smaller --warmup is raised to it, a larger one kept; the planned seconds
count it (bench.sh's point count, LAB_COUNT_POINTS, which starts nothing); and a run of several
suites whose params say less records the suite's own under meta.json's suite_params, which the
reports read (httplab.tidy.rawrun.suite_params)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from httplab.tidy.rawrun import suite_params

pytestmark = pytest.mark.concurrent

ROOT = Path(__file__).resolve().parents[2]


def planned_seconds(suite: str, tmp: Path, warmup: int) -> int:
    env = {**os.environ, "LAB_COUNT_POINTS": "1", "RAW_ROOT": str(tmp / "raw")}
    out = subprocess.run([str(ROOT / "scripts" / "bench.sh"), suite, "--run-dir", str(tmp / f"{suite}-{warmup}"),
                          "--servers", "evloop,lang_go_std", "--reps", "4", "--no-aa", "--duration", "1",
                          "--warmup", str(warmup), "--scenarios", "get_root_c100"],
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    return int(out[-1])


def test_the_languages_suite_warms_at_least_its_minimum(tmp_path: Path) -> None:
    # 8 points: at --warmup 0 they are warmed 1 s each as at --warmup 1; at 2 s, 1 s more each
    assert planned_seconds("languages", tmp_path, 0) == planned_seconds("languages", tmp_path, 1)
    assert planned_seconds("languages", tmp_path, 2) - planned_seconds("languages", tmp_path, 1) in (7, 8, 9)


def test_a_suite_without_a_minimum_takes_the_flag(tmp_path: Path) -> None:
    env = {**os.environ, "LAB_COUNT_POINTS": "1", "RAW_ROOT": str(tmp_path / "raw")}

    def secs(w: int) -> int:
        out = subprocess.run([str(ROOT / "scripts" / "bench.sh"), "http1", "--run-dir", str(tmp_path / f"h{w}"),
                              "--servers", "evloop", "--reps", "4", "--no-aa", "--warmup", str(w),
                              "--scenarios", "get_ping_c100"], env=env, capture_output=True, text=True, check=True)
        return int(out.stdout.split()[-1])
    assert secs(1) - secs(0) in (3, 4, 5)


def _note(run_dir: Path, suite: str, warmup: int) -> subprocess.CompletedProcess[str]:
    script = (f'set -euo pipefail; source "{ROOT}/scripts/lib.sh"; SUITE={suite} WARMUP={warmup}; '
              f'note_suite_warmup "{run_dir}"')
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True)


def test_meta_records_a_suite_warmed_otherwise(tmp_path: Path) -> None:
    meta = {"run_id": "x", "profile": "full", "params": {"duration_s": 1, "warmup_s": 0, "reps": 12}}
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    assert _note(tmp_path, "http1", 0).returncode == 0          # as the run's params: nothing written
    assert "suite_params" not in json.loads((tmp_path / "meta.json").read_text())
    r = _note(tmp_path, "languages", 1)
    assert r.returncode == 0, r.stderr
    got = json.loads((tmp_path / "meta.json").read_text())
    assert got["suite_params"] == {"languages": {"warmup_s": 1}} and got["params"] == meta["params"]
    assert suite_params(got, "languages")["warmup_s"] == 1 and suite_params(got, "http1")["warmup_s"] == 0
    assert suite_params(got)["warmup_s"] == 0 and suite_params({}, "languages") == {}
