"""The lab's wrk (scripts/setup.sh, setup_wrk: Debian's wrk 4.1.0 source with
scripts/patches/wrk-lab.patch): --lab-connect-wait starts its clock once every connection has
connected, or says on stderr how many had not when the wait ran out (the loader fails such a point:
tests/unit/test_wrk_loader.py); -v names the build on its second line, its first being Debian's."""
import os
import subprocess
import time

import pytest

from co_runs import REPORT_LUA, uncorrected_histogram
from httplab.parse.wrk import read_wrk_json
from lab_tools import lab_tool, silent_listener

pytestmark = pytest.mark.concurrent   # a deadline with seconds of margin


def _lab_wrk() -> str:
    return lab_tool("wrk", "-v")


def test_version_names_the_build_and_keeps_the_first_line():
    out = subprocess.run([_lab_wrk(), "-v"], capture_output=True, text=True).stdout.splitlines()
    # the first line is Debian's binary package's, unchanged (run.sh records it as tools.wrk)
    assert out[0] == "wrk debian/4.1.0-3+b2 [epoll] Copyright (C) 2012 Will Glozer"
    assert out[1] == "lab build 2: --lab-connect-wait, untimed only the requests sent before the clock"


def test_connect_wait_runs_out_and_names_the_connections_still_connecting():
    wrk = _lab_wrk()
    # a listener that accepts (the kernel completes the TCP handshake) and never answers: every
    # connection stays in its TLS handshake
    with silent_listener() as port:
        t0 = time.monotonic()
        r = subprocess.run(["timeout", "10", wrk, "--lab-connect-wait=1s", "-t1", "-c4", "-d1s",
                            f"https://127.0.0.1:{port}/ping"], capture_output=True, text=True)
        took = time.monotonic() - t0
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    assert 1.9 < took < 5, took   # the wait, then the run
    assert ("wrk: 4 connection(s) had not finished connecting when the connect wait ended; the clock starts "
            "without them") in r.stderr.splitlines()
    assert "0 requests in" in r.stdout


def test_connect_wait_starts_the_clock_once_every_connection_connected(server):
    r = subprocess.run(["timeout", "10", _lab_wrk(), "--lab-connect-wait=5s", "-t1", "-c8", "-d1s",
                        f"http://127.0.0.1:{server.port}/ping"], capture_output=True, text=True)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert r.stderr.splitlines() == ["wrk: every connection connected; the clock starts"]
    done = int(r.stdout.split(" requests in ")[0].split()[-1])
    assert done > 0


def test_without_the_option_nothing_is_said():
    wrk = _lab_wrk()
    with silent_listener() as port:
        r = subprocess.run(["timeout", "10", wrk, "-t1", "-c2", "-d1s", f"http://127.0.0.1:{port}/"],
                           capture_output=True, text=True)
    assert "connect" not in r.stderr, r.stderr


def _snapshot_lines(path) -> list[str]:
    lines = path.read_text().splitlines()
    assert lines[0].startswith("uptime ") and len(lines[0].split()) == 3, lines[0]
    assert any(l.startswith("cpu0 ") for l in lines), lines
    assert sum(l.startswith("self ") for l in lines) == 1, lines
    return lines


def test_start_snapshot_is_taken_when_the_clock_starts(server, tmp_path):
    """With the connect wait, WRK_START_SNAPSHOT receives the counters the lab reads around its
    window (the end snapshot's format), for the PIDs named, the moment the clock starts."""
    snap = tmp_path / "start.snapshot"
    env = {**os.environ, "WRK_START_SNAPSHOT": str(snap), "WRK_SNAPSHOT_PIDS": f"{server.proc.pid} 999999999"}
    before = time.clock_gettime(time.CLOCK_BOOTTIME)
    r = subprocess.run(["timeout", "10", _lab_wrk(), "--lab-connect-wait=5s", "-t1", "-c8", "-d1s",
                        f"http://127.0.0.1:{server.port}/ping"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, (r.stdout, r.stderr)
    lines = _snapshot_lines(snap)
    # taken inside the run, before its second of load
    taken = float(lines[0].split()[1])
    assert before - 0.02 <= taken <= before + 1.0, (before, taken)
    # the server's line (a PID that does not exist adds nothing); no temporary file left
    assert [l.split()[1] for l in lines if l.startswith("pid ")] == [str(server.proc.pid)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["start.snapshot"]


def test_no_start_snapshot_without_the_connect_wait(server, tmp_path):
    snap = tmp_path / "start.snapshot"
    env = {**os.environ, "WRK_START_SNAPSHOT": str(snap), "WRK_SNAPSHOT_PIDS": str(server.proc.pid)}
    r = subprocess.run(["timeout", "10", _lab_wrk(), "-t1", "-c2", "-d1s", f"http://127.0.0.1:{server.port}/ping"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert not snap.exists()


def test_connect_wait_leaves_untimed_only_the_requests_sent_before_the_clock(server, tmp_path):
    """Each connection's requests sent before the clock started are not timed (at most one each:
    a connection has one request on the wire); every later answer has its latency. The lab's first
    build compared a request's send time with the start of wrk's current 100 ms rate sample and so
    left untimed one request per connection per sample, the slow ones most often. wrk's histogram
    is corrected for coordinated omission; co_runs.uncorrected_histogram undoes that exactly."""
    conns, out = 8, tmp_path / "wrk.json"
    r = subprocess.run(["timeout", "10", _lab_wrk(), "--lab-connect-wait=5s", "-t1", f"-c{conns}", "-d2s",
                        "-s", str(REPORT_LUA), f"http://127.0.0.1:{server.port}/ping"],
                       capture_output=True, text=True, env={**os.environ, "WRK_JSON": str(out)})
    assert r.returncode == 0, (r.stdout, r.stderr)
    hook = read_wrk_json(out)
    assert hook.requests > 20 * conns  # 20 rate samples of 100 ms, many answers in each
    timed = int(uncorrected_histogram(hook, conns)[1].sum())
    assert hook.requests - conns <= timed <= hook.requests, (timed, hook.requests)
