"""The measured window on a live server, through scripts/lib.sh measure_point itself: the peak RSS
a point reports is that window's own (a small scenario after a large one reports the smaller peak),
with the kernel's clear_refs reset and with the sampling fallback; the load tool's CPU and the
pinned cores' counters are recorded, and the tidy frame turns them into flags."""
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from httplab.tidy.rawrun import read_server_cost
from httplab.parse.cpuwindow import read_client_time, window_cpu

ROOT = Path(__file__).resolve().parents[2]

# A server whose /grow?mb=N touches N MiB, answers, and gives the memory back (munmap): its RSS
# peaks during a window that requests /grow?mb=200 and stays small during one that requests mb=0.
GROW_SERVER = textwrap.dedent('''
    import mmap, sys
    from http.server import BaseHTTPRequestHandler, HTTPServer
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def do_GET(self):
            mb = int(self.path.partition("mb=")[2] or 0)
            if mb:
                m = mmap.mmap(-1, mb << 20)
                for off in range(0, mb << 20, 4096):
                    m[off] = 1
                m.close()
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")
        def log_message(self, *a):
            pass
    HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
''')

pytestmark = pytest.mark.skipif(
    (not shutil.which("wrk") or not Path("/usr/bin/time").exists()) and not os.environ.get("LAB_REQUIRE_TOOLS"),
    reason="wrk and GNU time are needed (LAB_REQUIRE_TOOLS=1 makes this a failure)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def grow_server(tmp_path):
    port = _free_port()
    script = tmp_path / "grow.py"
    script.write_text(GROW_SERVER)
    proc = subprocess.Popen([sys.executable, str(script), str(port)])
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    yield proc, port
    proc.kill()
    proc.wait()


def _measure(tmp_path: Path, pid: int, port: int, scenarios: list[tuple[str, int]], extra_env: dict,
             lua: str = "report.lua", lua_dir: Path | None = None) -> None:
    """Runs measure_point for each (dir name, mb) in order, on one server process, as a rep does."""
    lines = [f'source "{ROOT}/scripts/lib.sh"', "default_cpu_sets",
             f"TLS=false DURATION=1 WARMUP=0 SC_CONNS=1 SC_SIZE=0 SC_DEPTH=1 SC_LUA={lua}",
             f"SERVER_PID={pid} SERVER_RSS_START=$(mem_kb VmRSS {pid}) POINT_POSITION=1"]
    if lua_dir is not None:
        lines.append(f'LUA_DIR="{lua_dir}"')
    for name, mb in scenarios:
        lines += [f'mkdir -p "{tmp_path}/{name}"',
                  f'SC_URL="http://127.0.0.1:{port}/grow?mb={mb}"',
                  f'measure_point "{tmp_path}/{name}" 1 wrk',
                  # the server may still be answering the last request of the window (touching
                  # 200 MiB); the suites' warm-up gives it that time, this test has none
                  'sleep 1']
    subprocess.run(["bash", "-c", "set -euo pipefail\n" + "\n".join(lines)], check=True,
                   env={**os.environ, **extra_env}, timeout=120)


@pytest.mark.parametrize("method, env", [("clear_refs", {}), ("sampled", {"LAB_FORCE_RSS_SAMPLING": "1"})])
def test_small_scenario_after_large_reports_smaller_peak(tmp_path, grow_server, method, env):
    proc, port = grow_server
    _measure(tmp_path, proc.pid, port, [("large", 200), ("small", 0)], env)
    large = read_server_cost(tmp_path / "large" / "r1.server.json")
    small = read_server_cost(tmp_path / "small" / "r1.server.json")
    assert large.rss_peak_method == small.rss_peak_method == method
    assert large.rss_peak_kb > 150 * 1024, large       # the 200 MiB touched inside the window
    assert small.rss_peak_kb < 60 * 1024, small        # not the earlier window's peak
    assert small.rss_start_kb == large.rss_start_kb    # one start-up per rep
    assert small.rss_warm_kb < 60 * 1024
    run = json.loads((tmp_path / "small" / "r1.run.json").read_text())
    assert run["position"] == 1 and run["exit_code"] == 0


def test_window_records_client_and_cores(tmp_path, grow_server):
    proc, port = grow_server
    _measure(tmp_path, proc.pid, port, [("ping", 0)], {})
    d = tmp_path / "ping"
    assert (d / "r1.cpu.json").is_file() and (d / "r1.client.time.txt").is_file()
    cost = read_server_cost(d / "r1.server.json")
    w = window_cpu(d, 1, cost.cpu_s)
    t = read_client_time(d / "r1.client.time.txt")
    assert 0.9 < t.wall_s < 5 and t.cpu_s >= w.client_cpu_s >= 0   # wrk ran for its second
    assert cost.window_end == "load_end"
    # the lab's wrk (--lab-connect-wait) opens the window when its clock starts, after its connects
    lab_wrk = "lab build" in subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout
    assert lab_wrk or not os.environ.get("LAB_REQUIRE_TOOLS"), "wrk on PATH is not the lab's build"
    doc = json.loads((d / "r1.server.json").read_text())
    cpu = json.loads((d / "r1.cpu.json").read_text())
    if lab_wrk:
        assert (d / "r1.start.snapshot").is_file()
        assert doc["window_start"] == cpu["window_start"] == "clock_start" and 0 < doc["clock_start_s"] < 1, doc
        assert 0.9 < doc["wall_s"] < 1.2, doc          # the load's second, from the clock's start
        assert cost.clock_start_s == doc["clock_start_s"]
        assert 0 <= cpu["client_cpu_ticks_before"] <= cpu["client_cpu_ticks"], cpu
    else:
        assert doc["window_start"] == "tool_start" and doc["clock_start_s"] is None
    assert 0 <= w.client_busy <= 1 and 0 <= w.server_busy <= 1
    assert w.steal_pct >= 0 and w.foreign_cpu_pct >= 0


# A wrk script whose done() hook, after report.lua's, keeps wrk's core busy for a second with the
# server idle: what dumping a wide latency histogram does (up to ~1 s for Python's stdlib server).
SLOW_DONE = textwrap.dedent('''
    dofile(os.getenv("WRK_LUA_DIR") .. "/report.lua")
    local report_done = done
    function done(summary, latency, requests)
      report_done(summary, latency, requests)
      local t = os.clock()
      while os.clock() - t < 1.0 do end
    end
''')


def test_window_ends_with_the_load_not_the_tool(tmp_path, grow_server):
    """The server's CPU share and both cores' busy fractions are over the load, not over the
    tool's post-processing: wrk's end-of-load snapshot closes the window."""
    proc, port = grow_server
    lua_dir = tmp_path / "lua"
    lua_dir.mkdir()
    shutil.copy(ROOT / "scripts" / "lua" / "report.lua", lua_dir / "report.lua")
    (lua_dir / "slow_done.lua").write_text(SLOW_DONE)
    _measure(tmp_path, proc.pid, port, [("slow", 0)], {}, lua="slow_done.lua", lua_dir=lua_dir)
    d = tmp_path / "slow"
    assert (d / "r1.end.snapshot").is_file()
    doc = json.loads((d / "r1.server.json").read_text())
    assert doc["window_end"] == "load_end"
    assert doc["tool_wall_s"] > 1.9 and doc["wall_s"] < 1.6, doc   # 1 s load + 1 s busy done()
    cost = read_server_cost(d / "r1.server.json")
    w = window_cpu(d, 1, cost.cpu_s)
    t = read_client_time(d / "r1.client.time.txt")
    assert t.cpu_s - w.client_cpu_s > 0.8      # the busy second after the load is not the window's
