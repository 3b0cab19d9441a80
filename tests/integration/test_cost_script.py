"""Instructions per request end to end (scripts/cost.sh, docs/cost.md): the C server (the -O2 build
the suites run, started from its manifest and pinned as they pin it) under valgrind cachegrind,
HTTP/1.1 keep-alive, N = 200 and 1,000 requests, two reps. The raw records, the frames and the
report page are written; the figure is positive and sane, the two reps agree, and the gate passes
the run against itself. About 15 s."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.concurrent

ROOT = Path(__file__).resolve().parents[2]


def _free_port_base() -> int:
    """A port base whose first few ports are free now (the script's default 28080 may be in use),
    from the worker's base (conftest.py) up, and below the ephemeral range (32768 on Linux), where a
    neighbouring test's client connection could take the port between this check and the bind."""
    for base in range(int(os.environ.get("LAB_COST_PORT_BASE", "28080")), 32760 - 8, 97):
        try:
            for p in range(base, base + 8):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
    pytest.skip("no free ports")


def test_cost_script_measures_evloop_h1(tmp_path: Path) -> None:
    for tool in ("valgrind", "h2load", "jq", "xz", "curl"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is missing (scripts/setup.sh)")
    build = Path(os.environ.get("BUILD_DIR") or ROOT / "build")
    if not (build / "bench" / "http_bench_server").exists():
        pytest.skip(f"the C server is not built in {build} (scripts/build.sh)")
    env = {**os.environ, "RAW_ROOT": str(tmp_path / "raw"), "DATA_ROOT": str(tmp_path / "data"),
           "REPORTS_ROOT": str(tmp_path / "reports"), "LAB_COST_PORT_BASE": str(_free_port_base())}
    run = subprocess.run([str(ROOT / "scripts" / "cost.sh"), "--skip-build", "--servers", "evloop",
                          "--protocols", "h1", "--n1", "200", "--n2", "1000", "--reps", "2"],
                         env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:] + run.stdout[-2000:]
    (run_dir,) = [p for p in (tmp_path / "raw").iterdir() if p.is_dir()]
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["complete"] is True and meta["profile"] == "cost" and meta["params"]["requests"] == [200, 1000]
    for n in (200, 1000):
        for rep in (1, 2):
            for suffix in ("json", "cachegrind.out.xz", "h2load.txt", "server.log"):
                assert (run_dir / "cost" / "evloop.h1" / f"n{n}" / f"r{rep}.{suffix}").is_file()
    reps = pd.read_parquet(tmp_path / "data" / run_dir.name / "cost.parquet")
    assert len(reps) == 2 and (reps["status"] == "ok").all()
    x = reps["instr_per_req"]
    # an HTTP/1.1 GET /ping in an epoll server: a few thousand user-space instructions
    assert (x > 500).all() and (x < 50_000).all(), x.tolist()
    assert (x.max() - x.min()) / x.mean() < 0.01, x.tolist()
    assert (tmp_path / "reports" / run_dir.name / "cost.html").is_file()
    gate = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "httplab", "cost", "gate", str(run_dir),
                           str(tmp_path / "data" / run_dir.name)], capture_output=True, text=True, cwd=ROOT)
    assert gate.returncode == 0 and "gate passed" in gate.stdout, gate.stdout + gate.stderr
