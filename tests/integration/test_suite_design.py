"""A suite's own design in the full profile (suite.toml [full]: scripts/lib/suite.sh suite_full_design),
recorded per part in meta.json (suite_params.<part>) and kept by a resumed run (recorded_design,
resume_design): the four seed suites run 12 interleaved reps of 1 s, the others the profile's 5 of 3 s;
a flag overrides the one setting it names; a run records which settings were flags."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from httplab.lab import suites

pytestmark = pytest.mark.concurrent

ROOT = Path(__file__).resolve().parents[2]
SEED_DESIGN = {"blocks": "sliced", "reps": 12, "duration_s": 1, "warmup_s": 0, "latency_every": 2}


def _count(tmp: Path, part: str, *flags: str) -> tuple[int, int]:
    """(points, planned seconds) of a part in the full profile, counted without running it."""
    env = {**os.environ, "LAB_COUNT_POINTS": "1", "RAW_ROOT": str(tmp / "raw")}
    for var in ("DURATION", "WARMUP", "REPS", "LATENCY_EVERY", "BLOCKS"):
        env.pop(var, None)
    out = subprocess.run([str(ROOT / "scripts" / "bench.sh"), part, "--run-dir", str(tmp / f"{part}{flags}"), *flags],
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    return int(out[-2]), int(out[-1])


def _shell(script: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", f'set -euo pipefail; source "{ROOT}/scripts/lib.sh"; {script}'],
                          env={**os.environ, **env}, capture_output=True, text=True)


def test_the_seed_suites_declare_the_interleaved_design():
    for name in ("http1", "h2c", "https", "languages"):
        assert suites.suite(name).full == SEED_DESIGN, name
    assert suites.suite("latency").full == {}
    assert suites.full_assignments("http1") == ["BLOCKS=sliced", "REPS=12", "DURATION=1", "WARMUP=0", "LATENCY_EVERY=2"]
    assert suites.full_assignments("latency_h1") == [] and suites.full_assignments("no_such_part") == []


@pytest.mark.parametrize("table,says", [
    ("[full]\nreps = 0\n", "reps must be a whole number ≥ 1"),
    ("[full]\nblocks = \"slices\"\n", "blocks must be one of server, scenario, sliced"),
    ("[full]\nslice_s = 0.2\n", "unknown key 'slice_s'"),
    ("[full]\nwarmup_s = true\n", "warmup_s must be a whole number ≥ 0"),
])
def test_a_bad_full_table_names_the_file(tmp_path, table, says):
    folder = tmp_path / "x"
    folder.mkdir()
    (folder / "x.sh").write_text("SUITE=x\n")
    (folder / "suite.toml").write_text('title = "x"\n' + table)
    with pytest.raises(suites.SuiteError, match="suite.toml \\[full\\]") as e:
        suites.load_suite(folder)
    assert says in str(e.value)


def test_the_full_profile_counts_each_suites_own_design(tmp_path):
    own = _count(tmp_path, "http1")
    profile = _count(tmp_path, "http1", "--reps", "5", "--duration", "3", "--warmup", "1", "--blocks", "server")
    assert own[0] * 5 == profile[0] * 12, (own, profile)
    # a flag overrides the one setting it names; the others stay the suite's
    assert _count(tmp_path, "http1", "--reps", "5")[0] == profile[0]
    # a suite without [full] runs the profile's design
    assert _count(tmp_path, "latency_h1") == _count(tmp_path, "latency_h1", "--reps", "5", "--duration", "3")


def test_a_resumed_part_keeps_the_design_it_recorded(tmp_path):
    meta = {"run_id": "x", "profile": "full", "params": {"duration_s": 3, "warmup_s": 1, "reps": 5, "blocks": "server"},
            "suite_params": {"http1": {**SEED_DESIGN, "reps": 7, "slice_s": 0.25},
                             "languages": {"warmup_s": 1}}}   # an older run's record: no design
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    show = 'apply_profile full; recorded_design; echo "$DURATION $WARMUP $REPS ${LATENCY_EVERY:--} ${BLOCKS:--} $SLICE_S"'
    r = _shell(f'RUN_DIR="{tmp_path}" SUITE=http1; REPS=3 BLOCKS=server; {show}')
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "0", "7", "2", "sliced", "0.25"]      # the record wins over flags
    r = _shell(f'RUN_DIR="{tmp_path}" SUITE=languages; {show}')
    assert r.stdout.split() == ["1", "0", "12", "2", "sliced", "0.1"]      # none recorded: its suite's
    r = _shell(f'RUN_DIR="{tmp_path}" SUITE=latency_h1; {show}')
    assert r.stdout.split() == ["3", "1", "5", "-", "-", "0.1"]             # the profile's (defaults follow)


def test_a_resumed_run_passes_on_only_its_flags(tmp_path):
    show = 'resume_design "$F"; echo "${DURATION:--} ${WARMUP:--} ${REPS:--} ${LATENCY_EVERY:--} ${BLOCKS:--}"'
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"params": {"duration_s": 3, "warmup_s": 1, "reps": 4, "blocks": "server",
                                           "given": ["reps"]}}))
    r = _shell(f"DURATION=9 BLOCKS=scenario; {show}", F=str(meta))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["-", "-", "4", "-", "-"]
    # a run made before params.given passed every setting on
    meta.write_text(json.dumps({"params": {"duration_s": 3, "warmup_s": 1, "reps": 4}}))
    assert _shell(show, F=str(meta)).stdout.split() == ["3", "1", "4", "1", "server"]
    meta.write_text(json.dumps({"params": {"given": ["colour"]}}))
    r = _shell(show, F=str(meta))
    assert r.returncode != 0 and "params.given names colour, not a design setting" in r.stderr


def test_a_run_records_its_flags_and_each_parts_design(tmp_path):
    """Live: http1 in its own design with --reps 2 (a flag) on the C server and the floor."""
    env = {**os.environ, "RAW_ROOT": str(tmp_path / "raw"), "DATA_ROOT": str(tmp_path / "data"),
           "REPORTS_ROOT": str(tmp_path / "reports")}
    for var in ("DURATION", "WARMUP", "REPS", "LATENCY_EVERY", "BLOCKS"):
        env.pop(var, None)
    r = subprocess.run([str(ROOT / "scripts" / "run_all.sh"), "--skip-setup", "--skip-build", "--new", "--no-reports",
                        "--no-pack", "--suites", "http1", "--servers", "evloop,floor", "--scenarios", "get_ping_c100",
                        "--no-aa", "--reps", "2"], env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "interleaved in 0.1 s slices" in r.stderr
    (run,) = (tmp_path / "raw").iterdir()
    meta = json.loads((run / "meta.json").read_text())
    assert meta["params"]["given"] == ["reps"] and meta["params"]["reps"] == 2
    own = meta["suite_params"]["http1"]
    assert (own["blocks"], own["reps"], own["duration_s"], own["warmup_s"], own["latency_every"]) == ("sliced", 2, 1, 0, 2)
    assert own["slice_s"] == 0.1
    assert sorted(p.name for p in (run / "http1" / "evloop" / "get_ping_c100").glob("r*.slices.json")) == \
        ["r1.slices.json", "r2.slices.json"]


def test_counting_the_points_alone_makes_no_run(tmp_path):
    """`LAB_COUNT_POINTS=1 scripts/bench.sh PART` without --run-dir prints the plan and writes nothing:
    no raw/<run_id>/ with only a meta.json in it, which the index would list as an empty run."""
    env = {**os.environ, "LAB_COUNT_POINTS": "1", "RAW_ROOT": str(tmp_path / "raw")}
    out = subprocess.run([str(ROOT / "scripts" / "bench.sh"), "http1"], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert int(out[-2]) > 0 and int(out[-1]) > 0, out
    assert not (tmp_path / "raw").exists() or not any((tmp_path / "raw").iterdir())
