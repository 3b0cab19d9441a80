"""The slicer with the real load tool: wrk, started stopped and given 0.25 s slices in turn against
two live servers (the floor and the C server), ends on SIGINT to its main thread with its figures,
and its rate over the seconds it ran matches a contiguous run's. The rates are checked loosely (a
neighbour may load the machine); what must hold exactly is that each wrk ran for its share and no
longer, while its own clock counted the stopped time too."""
import json
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from httplab.lab import slicer

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "build" / "bench"

pytestmark = [
    pytest.mark.concurrent,
    pytest.mark.skipif((not shutil.which("wrk") or not (BENCH / "floor").exists())
                       and not os.environ.get("LAB_REQUIRE_TOOLS"),
                       reason="wrk and build/bench (scripts/build.sh) are needed (LAB_REQUIRE_TOOLS=1 makes this a failure)"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def two_servers():
    ports = {"floor": _free_port(), "evloop": _free_port()}
    cmds = {"floor": [str(BENCH / "floor"), str(ports["floor"]), "127.0.0.1"],
            "evloop": [str(BENCH / "http_bench_server"), str(ports["evloop"]), "--bind", "127.0.0.1", "--workers", "1"]}
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for c in cmds.values()]
    for port in ports.values():
        for _ in range(200):
            if subprocess.run(["curl", "-s", "-o", "/dev/null", f"http://127.0.0.1:{port}/ping"]).returncode == 0:
                break
            time.sleep(0.02)
        else:
            pytest.fail(f"a server did not answer on port {port}")
    yield ports
    for p in procs:
        p.terminate()
        p.wait()


def _wrk(port: int, seconds: int) -> list[str]:
    return ["wrk", "-t1", "-c20", f"-d{seconds}s", "--timeout", "10s", f"http://127.0.0.1:{port}/ping"]


def test_sliced_wrk_runs_its_share_and_reads_as_a_contiguous_run(tmp_path, two_servers):
    contiguous = {}
    for name, port in two_servers.items():
        out = subprocess.run(_wrk(port, 1), capture_output=True, text=True, check=True).stdout
        contiguous[name] = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    spec = {"slice_s": 0.25, "active_s": 1.0, "grace_s": 10,
            "tools": [{"name": n, "argv": _wrk(p, 600), "stdout": str(tmp_path / f"{n}.out"),
                       "stderr": str(tmp_path / f"{n}.err"), "end": "sigint"} for n, p in two_servers.items()]}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    assert slicer.main([str(tmp_path / "spec.json"), "--record", str(tmp_path / "slices.json")]) == 0
    record = json.loads((tmp_path / "slices.json").read_text())
    for name in two_servers:
        t = record["tools"][name]
        out = (tmp_path / f"{name}.out").read_text()
        assert t["exit"] == 0 and t["slices"] == 4, out
        # wrk's worker notices the end at its next 100 ms tick: the tail is short
        assert 0.95 < t["ran_s"] - t["tail_s"] < 1.1 and t["tail_s"] < 0.5
        assert "Socket errors" not in out and "Non-2xx" not in out, out
        m = re.search(r"(\d+) requests in ([\d.]+)(m?s)", out)
        requests, wall = int(m.group(1)), float(m.group(2)) / (1000 if m.group(3) == "ms" else 1)
        # wrk's own clock ran through the other tool's slices as well
        assert wall > t["ran_s"] + 0.5
        rate = requests / t["ran_s"]
        assert 0.5 < rate / contiguous[name] < 2, (name, rate, contiguous[name])
