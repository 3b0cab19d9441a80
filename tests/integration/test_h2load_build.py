"""The lab's h2load (scripts/setup.sh, setup_h2load: Debian's nghttp2 1.52.0 source with
scripts/patches/h2load-lab.patch) ends a -D run on time when clients are still
connecting as its window ends, where Debian's build never exits; it says how many on stderr, which
the loader reads to fail the point (tests/unit/test_h2load_loader.py); SIGINT ends a -D run with
its report, also after the tool was stopped (SIGSTOP) and continued, as the interleaved slices do;
and --lab-connect-wait starts the clock once every client has connected, or says on stderr how many
had not when the wait ran out; the harness passes it to its measured runs."""
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from lab_tools import lab_tool, silent_listener

pytestmark = pytest.mark.concurrent   # a deadline with seconds of margin


def _lab_h2load() -> str:
    return lab_tool("h2load", "--version")


def test_version_names_the_build_and_keeps_the_first_line():
    out = subprocess.run([_lab_h2load(), "--version"], capture_output=True, text=True).stdout.splitlines()
    # the first line is Debian's, unchanged (run.sh records it as tools.h2load; runs stay comparable)
    assert out[0] == "h2load nghttp2/1.52.0"
    assert out[1].startswith("lab build: ")


def test_clients_that_never_connect_end_with_the_window():
    h2load = _lab_h2load()
    # a listener that accepts (the kernel completes the TCP handshake) and never answers: every
    # client stays in its TLS handshake for the whole window
    with silent_listener() as port:
        t0 = time.monotonic()
        r = subprocess.run(["timeout", "10", h2load, "-t1", "-c4", "-D", "1", f"https://127.0.0.1:{port}/ping"],
                           capture_output=True, text=True)
        took = time.monotonic() - t0
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)   # Debian's build: 124, at the timeout
    assert took < 5, took
    assert "h2load: 4 client(s) had not finished connecting when the duration ended; closed" in r.stderr
    assert "requests: 0 total" in r.stdout


def test_connect_wait_runs_out_and_names_the_clients_still_connecting():
    h2load = _lab_h2load()
    # the silent listener again: no client ever finishes its handshake
    with silent_listener() as port:
        t0 = time.monotonic()
        r = subprocess.run(["timeout", "10", h2load, "--lab-connect-wait=1s", "-t1", "-c4", "-D", "1",
                            f"https://127.0.0.1:{port}/ping"], capture_output=True, text=True)
        took = time.monotonic() - t0
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    assert 1.9 < took < 5, took   # the wait, then the window
    assert r.stderr.splitlines() == [
        "h2load: 4 client(s) had not finished connecting when the connect wait ended; thread #0 starts without them",
        "h2load: 4 client(s) had not finished connecting when the duration ended; closed"]


@pytest.fixture
def h2c_port():
    """The C server (scripts/build.sh), which speaks h2c with prior knowledge on its HTTP/1.1 port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = Path(__file__).resolve().parents[2] / "build" / "bench" / "http_bench_server"
    srv = subprocess.Popen([str(server), str(port), "--bind", "127.0.0.1"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            assert time.monotonic() < deadline and srv.poll() is None, "the h2c server did not start"
            time.sleep(0.05)
        yield port
    finally:
        srv.kill()
        srv.wait()


def test_connect_wait_starts_the_clock_once_every_client_connected(h2c_port):
    r = subprocess.run(["timeout", "10", _lab_h2load(), "--lab-connect-wait=5s", "-t1", "-c8", "-m1", "-D", "1",
                        f"http://127.0.0.1:{h2c_port}/ping"], capture_output=True, text=True)
    assert r.returncode == 0, (r.stdout, r.stderr)
    # every client connected (the line a slicer watches for), then the (empty) warm-up, then the window
    assert r.stderr.splitlines() == ["h2load: every client connected; thread #0 starts (its warm-up, then its clock)"]
    lines = r.stdout.splitlines()
    assert lines.index("Warm-up started for thread #0.") < lines.index("Main benchmark duration is started for thread #0.")
    done = int(r.stdout.split("requests: ")[1].split()[4])
    assert done > 0


def test_start_snapshot_is_taken_when_the_main_duration_begins(h2c_port, tmp_path):
    """H2LOAD_START_SNAPSHOT receives the counters the lab reads around its window (the format of
    the lab's wrk snapshots), for the PIDs named, once the clients have connected."""
    snap = tmp_path / "start.snapshot"
    server_pid = next(p for p in _pids_listening(h2c_port))
    env = {**os.environ, "H2LOAD_START_SNAPSHOT": str(snap), "H2LOAD_SNAPSHOT_PIDS": f"{server_pid} x1 999999999"}
    before = time.clock_gettime(time.CLOCK_BOOTTIME)
    r = subprocess.run(["timeout", "10", _lab_h2load(), "--lab-connect-wait=5s", "-t2", "-c8", "-m1", "-D", "1",
                        f"http://127.0.0.1:{h2c_port}/ping"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, (r.stdout, r.stderr)
    lines = snap.read_text().splitlines()
    assert lines[0].startswith("uptime ") and before - 0.02 <= float(lines[0].split()[1]) <= before + 1.0, lines[0]
    assert any(l.startswith("cpu0 ") for l in lines) and sum(l.startswith("self ") for l in lines) == 1
    assert [l.split()[1] for l in lines if l.startswith("pid ")] == [str(server_pid)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["start.snapshot"]


def _pids_listening(port: int) -> list[int]:
    """The PIDs with a socket listening on 127.0.0.1:port (ss -ltnp)."""
    out = subprocess.run(["ss", "-Hltnp", f"sport = :{port}"], capture_output=True, text=True, check=True).stdout
    return [int(x.split("=")[1]) for x in out.replace(",", " ").split() if x.startswith("pid=")]


def test_the_harness_passes_the_connect_wait_to_its_measured_runs():
    root = Path(__file__).resolve().parents[2]
    for tool in ("h2load", "wrk"):
        script = f'set -euo pipefail; source "{root}/scripts/lib.sh"; connect_wait_args {tool}; echo "${{CONNECT_WAIT[*]}}"'
        out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout.strip()
        assert out == "--lab-connect-wait=5s", tool


def test_sigint_ends_a_timed_run_with_its_report(h2c_port):
    h2load = _lab_h2load()
    port = h2c_port
    for stopped in (False, True):
        p = subprocess.Popen([h2load, "-t1", "-c4", "-m1", "-D", "3600", f"http://127.0.0.1:{port}/ping"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        time.sleep(0.5)
        if stopped:
            p.send_signal(signal.SIGSTOP)
            time.sleep(0.3)
        p.send_signal(signal.SIGINT)
        if stopped:
            p.send_signal(signal.SIGCONT)
        out, err = p.communicate(timeout=10)
        assert p.returncode == 0, (out, err)
        done = int(out.split("requests: ")[1].split()[4])   # "N total, N started, N done, ..."
        assert done > 0 and "finished in" in out, out



def test_the_harness_measures_a_point_again_once_when_clients_never_connected(tmp_path):
    """note_unconnected (scripts/lib/measure.sh): on a point's first try the line on h2load's stderr
    is a fault the suite answers by measuring again; on the retry, or in a sliced block, it is not
    (the run is recorded and the loader fails it)."""
    root = Path(__file__).resolve().parents[2]
    err = tmp_path / "r1.stderr.txt"
    err.write_text("h2load: 2 client(s) had not finished connecting when the duration ended; closed\n")
    clean = tmp_path / "clean.stderr.txt"
    clean.write_text("")

    def fault(stderr: Path, setup: str = "") -> str:
        script = (f'set -euo pipefail; source "{root}/scripts/lib.sh"; POINT_FAULT= POINT_FAULT_KIND= {setup}; '
                  f'note_unconnected "h2load\'s throughput run" "{stderr}"; echo "$POINT_FAULT_KIND|$POINT_FAULT"')
        return subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout.strip()
    assert fault(err) == ("unconnected|h2load's throughput run had client(s) still connecting when its connect wait or "
                          "window ended (2 on its stderr)")
    late = tmp_path / "late.stderr.txt"
    late.write_text("h2load: 3 client(s) had not finished connecting when the connect wait ended; the warm-up "
                    "started without them\n")
    assert fault(late).startswith("unconnected|") and fault(late).endswith("(3 on its stderr)")
    assert fault(clean) == "|"
    assert fault(err, "POINT_RETRIED='h2load closed 2'") == "|"
    assert fault(err, "BLOCKS=sliced") == "|"
