"""The inventory host mode when a client host cannot be reached (scripts/lib/inventory.sh; issue
19), on scripts/inventory_netns.sh's stand-in machines: the suite stops before any point, saying
which host Ansible could not reach and why, in a few lines rather than pages of JSON; nothing is
recorded as measured; the stand-ins are removed."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None or not Path("/usr/sbin/sshd").exists()
    or not (ROOT / ".venv" / "bin" / "ansible-playbook").exists(),
    reason="needs root, iproute2, sshd and the lab's Ansible (scripts/setup.sh)")


@pytest.fixture()
def stand_ins(tmp_path: Path):
    hosts = tmp_path / "hosts"
    up = subprocess.run([str(ROOT / "scripts" / "inventory_netns.sh"), "up", str(hosts), "2"],
                        capture_output=True, text=True, timeout=120)
    assert up.returncode == 0, up.stderr
    yield hosts, up.stdout.split()
    subprocess.run([str(ROOT / "scripts" / "inventory_netns.sh"), "down", str(hosts)], timeout=60)
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert "-srv" not in out and "-cli" not in out, out


def test_an_unreachable_client_host_stops_the_suite_naming_it(stand_ins, tmp_path: Path) -> None:
    hosts, enter = stand_ins
    # client2's sshd goes away: its machine is "down"
    os.kill(int((hosts / "sshd.2.pid").read_text()), signal.SIGTERM)
    env = {**os.environ, "RAW_ROOT": str(tmp_path / "raw")}
    r = subprocess.run([*enter, str(ROOT / "scripts" / "bench_http1.sh"), "--quick", "--servers", "evloop",
                        "--scenarios", "get_ping_c100", "--duration", "1", "--warmup", "0",
                        "--inventory", str(hosts / "inventory.ini")],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode != 0
    assert "installing the client side failed" in r.stderr, r.stderr
    assert "client2" in r.stderr and "UNREACHABLE" in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) < 40, r.stderr     # the gist, not Ansible's whole output
    runs = list((tmp_path / "raw").iterdir())
    assert len(runs) == 1
    assert not list(runs[0].rglob("r*.run.json"))         # nothing measured
    meta = json.loads((runs[0] / "meta.json").read_text())
    assert meta["params"]["hosts"] == "inventory" and meta["params"]["client_hosts"] == 2
