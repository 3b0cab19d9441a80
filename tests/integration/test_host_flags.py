"""The host-mode flags are checked before anything runs (scripts/lib/hosts.sh, lib/inventory.sh,
lib/netns.sh): each mistake is refused with its reason, and no run directory is made.
- several client hosts need a mode with more than one (netns or an inventory), and a tool that
  splits its load (not the latency suites' set request rate);
- --rtt needs the netns mode and a kernel with netem (refused here when it has none: no delay is
  faked in user space);
- an inventory must name exactly one server host, which is this machine, and one or more clients;
  Ansible's own reading of the file is what is checked."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.concurrent

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, tmp: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "RAW_ROOT": str(tmp / "raw")}
    return subprocess.run([str(ROOT / "scripts" / args[0]), *args[1:]], capture_output=True, text=True,
                          timeout=120, env=env, cwd=ROOT)


def refused(r: subprocess.CompletedProcess, *words: str) -> None:
    assert r.returncode != 0, r.stdout + r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


def no_run_made(tmp: Path) -> None:
    assert not (tmp / "raw").exists() or not any((tmp / "raw").iterdir())


def test_several_clients_in_the_local_mode_are_refused(tmp_path: Path) -> None:
    r = run("bench.sh", "http1", "--quick", "--clients", "2", tmp=tmp_path)
    refused(r, "--clients 2", "the local host mode has one client", "--hosts netns")
    no_run_made(tmp_path)


@pytest.mark.parametrize("value", ["0", "x", "-1"])
def test_a_bad_client_count_is_refused(tmp_path: Path, value: str) -> None:
    r = run("bench.sh", "http1", "--quick", "--hosts", "netns", "--clients", value, tmp=tmp_path)
    refused(r, "--clients takes a number")
    no_run_made(tmp_path)


def test_the_latency_suites_rate_is_not_split_over_client_hosts(tmp_path: Path) -> None:
    r = run("bench.sh", "latency_h1", "--quick", "--hosts", "netns", "--clients", "2", tmp=tmp_path)
    refused(r, "oha", "not split over client hosts")
    no_run_made(tmp_path)


def test_rtt_needs_the_netns_mode(tmp_path: Path) -> None:
    r = run("bench.sh", "http1", "--quick", "--rtt", "10", tmp=tmp_path)
    refused(r, "--rtt", "--hosts netns")
    no_run_made(tmp_path)


def netem_available() -> bool:
    body = f'source "{ROOT}/scripts/lib.sh"; source "{ROOT}/scripts/lib/netns.sh"; netns_netem_available'
    return subprocess.run(["bash", "-c", body], capture_output=True).returncode == 0


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None, reason="namespaces need root")
def test_rtt_is_refused_with_its_reason_where_the_kernel_has_no_netem(tmp_path: Path) -> None:
    if netem_available():
        pytest.skip("this kernel has netem: --rtt is offered")
    for script in (["run_all.sh", "--skip-setup", "--new"], ["bench.sh", "http1"]):
        r = run(*script, "--quick", "--hosts", "netns", "--rtt", "10", tmp=tmp_path)
        refused(r, "no netem qdisc", "does not fake it")
    r = run("rtt_sweep.sh", "--rtts", "0,10", "--quick", tmp=tmp_path)
    refused(r, "no netem qdisc")
    no_run_made(tmp_path)


def inventory(tmp: Path, text: str) -> Path:
    p = tmp / "hosts.ini"
    p.write_text(text)
    return p


LOCAL = 'ansible_connection=local ansible_python_interpreter="{{ ansible_playbook_python }}"'


@pytest.mark.parametrize("text, words", [
    ("[clients]\nc1 ansible_host=192.0.2.20\n", ["group 'server' must hold exactly one host"]),
    (f"[server]\na {LOCAL}\nb {LOCAL}\n[clients]\nc1 ansible_host=192.0.2.20\n",
     ["group 'server' must hold exactly one host", "holds 2"]),
    (f"[server]\na {LOCAL} lab_addr=127.0.0.1\n", ["group 'clients' holds no host"]),
    ("[server]\nfar ansible_host=192.0.2.10\n[clients]\nc1 ansible_host=192.0.2.20\n",
     ["the server host 'far' (192.0.2.10) is not this machine", "run the lab on the server host"]),
])
def test_an_inventory_that_does_not_fit_is_refused(tmp_path: Path, text: str, words: list[str]) -> None:
    r = run("bench.sh", "http1", "--quick", "--inventory", str(inventory(tmp_path, text)), tmp=tmp_path)
    refused(r, "--inventory", *words)
    no_run_made(tmp_path)


def test_a_missing_inventory_and_a_mode_mismatch_are_refused(tmp_path: Path) -> None:
    r = run("bench.sh", "http1", "--quick", "--inventory", str(tmp_path / "nope.ini"), tmp=tmp_path)
    refused(r, "no such readable file")
    r = run("bench.sh", "http1", "--quick", "--hosts", "inventory", tmp=tmp_path)
    refused(r, "--hosts inventory needs --inventory FILE")
    ok = inventory(tmp_path, f"[server]\na {LOCAL} lab_addr=127.0.0.1\n[clients]\nc1 ansible_host=192.0.2.20\n"
                             "c2 ansible_host=192.0.2.21\n")
    r = run("bench.sh", "http1", "--quick", "--inventory", str(ok), "--clients", "3", tmp=tmp_path)
    refused(r, "--clients 3", "has 2 client host(s)")
    no_run_made(tmp_path)


def test_the_latency_suites_are_refused_in_the_inventory_mode(tmp_path: Path) -> None:
    ok = inventory(tmp_path, f"[server]\na {LOCAL} lab_addr=127.0.0.1\n[clients]\nc1 ansible_host=192.0.2.20\n")
    r = run("bench.sh", "latency_h1", "--quick", "--inventory", str(ok), tmp=tmp_path)
    refused(r, "loads with oha", "--hosts local or netns")
    no_run_made(tmp_path)
