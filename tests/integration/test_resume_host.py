"""A run resumes only on the machine it was started on (scripts/lib/run.sh resume_host_check):
its CPU model, CPU count, kernel and host name, as meta.json's host records them. A run resumed
elsewhere would put two machines' figures into one interval."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.concurrent

ROOT = Path(__file__).resolve().parents[2]


def _shell(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", f'set -euo pipefail; source "{ROOT}/scripts/lib.sh"; {script}'],
                          env=dict(os.environ), capture_output=True, text=True)


def _this_host() -> dict:
    r = _shell("this_host_json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _check(tmp: Path, host: dict | None) -> subprocess.CompletedProcess[str]:
    run = tmp / "20261206T000000Z-vm"
    run.mkdir()
    meta = {"run_id": run.name, "params": {}} | ({"host": host} if host is not None else {})
    (run / "meta.json").write_text(json.dumps(meta))
    return _shell(f'resume_host_check "{run}/meta.json"; echo resumes')


def test_this_host_is_what_a_new_run_records():
    host = _this_host()
    assert set(host) == {"cpu_model", "cores", "kernel", "hostname"}
    assert host["cores"] == os.cpu_count() and host["kernel"].startswith("Linux ")


def test_the_same_machine_resumes(tmp_path):
    r = _check(tmp_path, _this_host())
    assert r.returncode == 0 and r.stdout.strip() == "resumes", r.stderr


def test_a_run_older_than_the_record_resumes(tmp_path):
    r = _check(tmp_path, None)
    assert r.returncode == 0 and r.stdout.strip() == "resumes", r.stderr


@pytest.mark.parametrize("field,value", [("cpu_model", "Some Other CPU @ 1.0GHz"), ("cores", 16),
                                         ("kernel", "Linux 1.0.0"), ("hostname", "elsewhere")])
def test_another_machine_is_refused_and_named(tmp_path, field, value):
    host = _this_host() | {field: value}
    r = _check(tmp_path, host)
    assert r.returncode != 0 and "resumes" not in r.stdout
    assert "was started on another machine than this one" in r.stderr, r.stderr
    assert f"{field} {value} (here: {_this_host()[field]})" in r.stderr, r.stderr
    assert "start another with --new" in r.stderr
