"""The inventory host mode when a client host cannot be reached, or the suite is stopped mid-point
(scripts/lib/inventory.sh), on scripts/inventory_netns.sh's stand-in machines: an
unreachable host stops the run before it begins, saying which host Ansible could not reach and why
in a few lines rather than pages of JSON, with nothing recorded; a stopped suite leaves no load
running on any client host; the stand-ins are removed."""
from __future__ import annotations

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
    r = subprocess.run([*enter, str(ROOT / "scripts" / "bench.sh"), "http1", "--quick", "--servers", "evloop",
                        "--scenarios", "get_ping_c100", "--duration", "1", "--warmup", "0",
                        "--inventory", str(hosts / "inventory.ini")],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode != 0
    # found when the run begins (every host's facts go into meta.json), before any server starts
    assert "gathering the hosts' facts failed" in r.stderr, r.stderr
    assert "client2" in r.stderr and "UNREACHABLE" in r.stderr, r.stderr
    assert "jq:" not in r.stderr, r.stderr                 # stopped cleanly, not past the failure
    assert len(r.stderr.splitlines()) < 40, r.stderr     # the gist, not Ansible's whole output
    raw = tmp_path / "raw"
    assert not raw.exists() or not list(raw.rglob("meta.json")), list(raw.rglob("*"))
    assert not raw.exists() or not list(raw.rglob("r*.run.json"))   # nothing measured


def test_a_suite_stopped_mid_point_ends_the_load_on_every_client_host(stand_ins, tmp_path: Path) -> None:
    """Ctrl-C while both client hosts are loading: the suite stops, and stop.yml ends each host's
    client_run.sh, which ends its tool's whole session: no wrk is left on any host."""
    import time
    hosts, enter = stand_ins
    env = {**os.environ, "RAW_ROOT": str(tmp_path / "raw")}
    p = subprocess.Popen([*enter, str(ROOT / "scripts" / "bench.sh"), "http1", "--quick", "--servers", "evloop",
                          "--scenarios", "get_ping_c100", "--duration", "40", "--warmup", "0",
                          "--inventory", str(hosts / "inventory.ini")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)

    def loads() -> list[str]:
        out = subprocess.run(["pgrep", "-af", "wrk -d 40s"], capture_output=True, text=True).stdout
        return [ln for ln in out.splitlines() if str(hosts) in ln or "10.231.0.1" in ln]

    try:
        deadline = time.monotonic() + 120
        while len([ln for ln in loads() if ln.split()[1] == "wrk"]) < 2:
            assert time.monotonic() < deadline, "the two hosts' loads never started"
            assert p.poll() is None, p.communicate()
            time.sleep(0.2)
        os.killpg(p.pid, signal.SIGINT)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode != 0
    assert "interrupted" in err, err
    time.sleep(1)
    assert loads() == [], loads()
