"""The netns host mode's hosts (scripts/lib/netns.sh): a server host and client hosts as
network namespaces joined through a bridge, every client reaching the server host over TCP from its
own address, tbf shaping where asked, netem detected rather than assumed, and everything removed
afterwards, also when the script that made them is killed (its trap)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None,
                                reason="network namespaces need root and iproute2")


def lab(script: str, timeout: float = 60, **kw) -> subprocess.CompletedProcess:
    """bash with lib.sh and lib/netns.sh sourced, then `script`."""
    body = f'set -euo pipefail; source "{ROOT}/scripts/lib.sh"; source "{ROOT}/scripts/lib/netns.sh"\n{script}'
    return subprocess.run(["bash", "-c", body], capture_output=True, text=True, timeout=timeout, **kw)


def namespaces() -> list[str]:
    r = lab("netns_list")
    return r.stdout.split()


@pytest.fixture(autouse=True)
def clean():
    lab("netns_down")
    yield
    lab("netns_down")
    assert namespaces() == []


ECHO_SERVER = ("import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
               "s.bind(('10.231.0.1', 18555)); s.listen()\n"
               "for _ in range(2):\n c, a = s.accept(); c.sendall(a[0].encode()); c.close()")
CLIENT = ("import socket, time\n"
          "for _ in range(50):\n"
          " try: c = socket.create_connection(('10.231.0.1', 18555), timeout=3); break\n"
          " except ConnectionRefusedError: time.sleep(0.1)\n"
          "print(c.recv(64).decode())")


def test_two_client_hosts_reach_the_server_host_each_from_its_own_address():
    r = lab(f"""netns_up 2
echo "addr=$SERVER_ADDR"
netns_list
on_server_host python3 -c "{ECHO_SERVER}" &
on_client_host 1 python3 -c "{CLIENT}"
on_client_host 2 python3 -c "{CLIENT}"
wait""")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split()
    assert lines[0] == "addr=10.231.0.1"
    assert len([x for x in lines if x.endswith("-srv")]) == 1
    assert len([x for x in lines if "-cli" in x]) == 2
    assert lines[-2:] == ["10.231.0.11", "10.231.0.12"]   # what the server host saw
    # the client hosts share nothing with this host's loopback: 127.0.0.1 there is their own
    assert "10.231.0.1" not in subprocess.run(["ip", "-4", "addr"], capture_output=True, text=True).stdout


def test_rate_shapes_both_directions_with_tbf():
    r = lab("""NETNS_RATE=100mbit netns_up 1
on_client_host 1 tc qdisc show dev eth0
on_server_host tc qdisc show dev labv1""")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("qdisc tbf") == 2 and r.stdout.count("rate 100Mbit") == 2


def test_a_bad_rate_is_refused_with_its_reason():
    r = lab("NETNS_RATE=fast netns_up 1")
    assert r.returncode != 0 and "tc tbf rate fast" in r.stderr


def test_netem_is_detected_not_assumed():
    r = lab("netns_netem_available && echo yes || echo no")
    assert r.returncode == 0, r.stderr
    probe = subprocess.run("ip netns add hlprobe-x && ip -n hlprobe-x link set lo up && "
                           "ip netns exec hlprobe-x tc qdisc add dev lo root netem delay 1ms; rc=$?; "
                           "ip netns del hlprobe-x; exit $rc", shell=True, capture_output=True)
    assert r.stdout.strip() == ("yes" if probe.returncode == 0 else "no")
    assert namespaces() == []   # the probe's namespace is gone


def test_up_again_replaces_what_a_killed_run_left():
    assert lab("netns_up 3").returncode == 0
    assert len(namespaces()) == 4
    assert lab("netns_up 1").returncode == 0
    assert len(namespaces()) == 2


def test_a_killed_script_removes_its_hosts_through_its_trap():
    proc = subprocess.Popen(["bash", "-c", f'set -euo pipefail; source "{ROOT}/scripts/lib.sh"; '
                             f'source "{ROOT}/scripts/lib/netns.sh"; trap netns_down EXIT; '
                             'trap "exit 130" INT TERM; netns_up 2; echo up; sleep 60 & wait'],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "up"
    assert len(namespaces()) == 3
    proc.send_signal(signal.SIGTERM)
    proc.wait(10)
    deadline = time.monotonic() + 5
    while namespaces() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert namespaces() == []
