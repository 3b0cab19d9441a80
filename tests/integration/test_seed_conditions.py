"""The seed-conditions profile and the scaling suite's plan, through the scripts: on this machine
the profile is refused before anything starts, naming the CPUs it needs; on a machine given as a
CPU list (LAB_CPUS, counting the points only: nothing is started) it adds the single-threaded C
server and the write-ups' 10 s runs, and the scaling suite measures every n of its plan."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.concurrent

ROOT = Path(__file__).resolve().parents[2]


def count(part: str, tmp: Path, *flags: str, cpus: str | None = None) -> tuple[int, int]:
    env = {**os.environ, "LAB_COUNT_POINTS": "1", "RAW_ROOT": str(tmp / "raw")}
    if cpus:
        env["LAB_CPUS"] = cpus
    out = subprocess.run([str(ROOT / "scripts" / "bench.sh"), part, "--run-dir", str(tmp / f"{part}{flags}{cpus}"),
                          *flags], env=env, capture_output=True, text=True, check=True).stdout.split()
    return int(out[-2]), int(out[-1])


@pytest.mark.skipif((os.cpu_count() or 0) >= 8, reason="the refusal needs a machine of fewer than 8 CPUs")
def test_the_profile_is_refused_here_with_the_reason(tmp_path):
    env = {**os.environ, "RAW_ROOT": str(tmp_path / "raw"), "DATA_ROOT": str(tmp_path / "data"),
           "REPORTS_ROOT": str(tmp_path / "reports")}
    r = subprocess.run([str(ROOT / "scripts" / "run_all.sh"), "--skip-setup", "--seed-conditions", "--new"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert f"needs at least 8 CPUs" in r.stderr and f"gives the lab {os.cpu_count()}" in r.stderr
    assert not (tmp_path / "raw").exists() or not any((tmp_path / "raw").iterdir())   # nothing started
    r = subprocess.run([str(ROOT / "scripts" / "run_all.sh"), "--quick", "--seed-conditions"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "exclude each other" in r.stderr


def test_on_sixteen_cpus_it_adds_the_single_threaded_c_server_and_the_seeds_durations(tmp_path):
    # (the full profile at the seed profile's 5 reps of 3 s in server blocks: http1's own design in
    # the full profile is 12 interleaved reps of 1 s, suite.toml [full])
    full_n, full_s = count("http1", tmp_path, "--reps", "5", "--duration", "3", "--warmup", "1", "--blocks", "server",
                           cpus="0-15")
    seed_n, seed_s = count("http1", tmp_path, "--seed-conditions", cpus="0-15")
    scenarios = 13          # the http1 suite's; evloop@1 serves every one, 5 reps
    assert seed_n == full_n + 5 * scenarios
    assert seed_s > 2.5 * full_s      # 10 s runs instead of 3 s


def test_the_scaling_suite_measures_every_n_of_its_plan(tmp_path):
    here_n, _ = count("scaling_h2c", tmp_path, "--quick")
    big_n, _ = count("scaling_h2c", tmp_path, "--quick", cpus="0-15")
    assert big_n == 4 * here_n if os.cpu_count() == 2 else big_n >= here_n   # n = 1, 2, 4, 8 against 1
