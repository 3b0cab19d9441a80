"""Regression tests for the server audit (README, "Server audit: writes per
response, TCP_NODELAY, build mode"), on lang_python_std.

Python's http.server wrote a response's head and body in two send() calls
without TCP_NODELAY: on a keep-alive connection Nagle held the body until the
client's delayed ACK of the head (~40 ms), so every request took 44 ms and the
languages suite measured 2,256 req/s at 25 % CPU. These tests catch that coming
back, three ways:
  - timing: 20 sequential keep-alive requests on one connection, median under
    20 ms, half Linux's minimum delayed-ACK timer of 40 ms (a healthy server
    answers in ~1 ms, a stalled one in 40-44 ms every time);
  - syscalls (when strace can run): one write per response, TCP_NODELAY set;
  - Connection: close is announced in the response (without it wrk reused the
    closed connection and counted every request of get_root_close_c100 as a read
    error), and the listen backlog is not socketserver's default of 5.

Run: python -m pytest -q tests/integration/test_server_audit.py (< 5 s).
"""
import os
import pathlib
import re
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
PYTHON3 = shutil.which("python3") or "python3"
SERVER = [PYTHON3, str(REPO / "servers/python/std/server.py")]

GET = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
GET_JSON = b"GET /something?json=true HTTP/1.1\r\nHost: x\r\n\r\n"
BODY = b'{"name":"benchmark","value":42,"tags":["a","b"]}'
POST = (b"POST /something HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(BODY), BODY))
REQUESTS = [GET, GET_JSON, POST]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout=15):
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server on port {port} did not start "
                                   f"(exit status {proc.poll()})")
            time.sleep(0.05)


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def read_response(sock, buf=b""):
    """Reads one Content-Length response; returns (head, body, leftover)."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed mid-response: {buf!r}"
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    m = re.search(rb"(?im)^content-length:\s*(\d+)\s*$", head)
    assert m, head
    n = int(m.group(1))
    while len(rest) < n:
        chunk = sock.recv(65536)
        assert chunk, "connection closed mid-body"
        rest += chunk
    return head, rest[:n], rest[n:]


def timed_keepalive(port, n=20):
    """Seconds per request/response round trip, n sequential ones on one connection."""
    times = []
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        left = b""
        for i in range(n):
            t0 = time.perf_counter()
            s.sendall(REQUESTS[i % len(REQUESTS)])
            head, _, left = read_response(s, left)
            times.append(time.perf_counter() - t0)
            assert head.startswith(b"HTTP/1.1 200"), head
    return times


@pytest.fixture(scope="module")
def python_std():
    port = free_port()
    # not pinned: on a busy machine the scheduler may pick the idler core
    proc = subprocess.Popen([*SERVER, str(port)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=REPO)
    try:
        wait_port(port, proc)
        yield port
    finally:
        stop(proc)


def test_keepalive_has_no_delayed_ack_stall(python_std):
    # The first two round trips are fast even with the stall (TCP quick-ACK mode
    # at connection start), so the median over 20 is what tells.
    times = timed_keepalive(python_std)
    median_ms = statistics.median(times) * 1e3
    assert median_ms < 20, (
        f"median keep-alive round trip {median_ms:.1f} ms (all: "
        f"{[round(t * 1e3, 1) for t in times]}): the ~40 ms Nagle/delayed-ACK stall "
        "is back (head and body in separate writes without TCP_NODELAY?)")


def test_connection_close_is_announced(python_std):
    with socket.create_connection(("127.0.0.1", python_std), timeout=10) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        head, body, _ = read_response(s)
    assert body == b"Hello, World!"
    assert re.search(rb"(?im)^connection:\s*close\s*$", head), head


def test_listen_backlog(python_std):
    ss = shutil.which("ss")
    if ss is None:
        if os.environ.get("LAB_REQUIRE_TOOLS"):
            pytest.fail("ss (iproute2) not installed; scripts/setup.sh installs it")
        pytest.skip("ss (iproute2) not installed")
    out = subprocess.run([ss, "-ltnH", f"sport = :{python_std}"], capture_output=True,
                         text=True, check=True).stdout.split()
    # State Recv-Q Send-Q Local Peer; for a listening socket Send-Q is the backlog.
    assert len(out) >= 4 and out[0] == "LISTEN", out
    assert int(out[2]) >= 128, f"listen backlog {out[2]} (socketserver's default is 5)"


def parse_strace(text):
    """(accepted fds, [(syscall, fd)] of write-class calls, NODELAY fds) from strace -f."""
    pending, calls = {}, []
    for line in text.splitlines():
        m = re.match(r"^(\d+) +(.*)$", line)
        if not m:
            continue
        pid, rest = m.groups()
        if rest.endswith("<unfinished ...>"):
            pending[pid] = rest[: -len("<unfinished ...>")]
            continue
        r = re.match(r"<\.\.\. (\w+) resumed>(.*)$", rest)
        if r:
            rest = pending.pop(pid, r.group(1) + "(") + r.group(2)
        calls.append(rest)
    accepted = {m.group(1) for c in calls
                if (m := re.match(r"accept4?\(.*\)\s+=\s+(\d+)$", c))}
    writes = [(m.group(1), m.group(2)) for c in calls
              if (m := re.match(r"(write|writev|sendto|sendmsg|sendmmsg|sendfile)\((\d+),", c))]
    nodelay = {m.group(1) for c in calls
               if (m := re.match(r"setsockopt\((\d+), SOL_TCP, TCP_NODELAY, \[1\]", c))}
    return accepted, writes, nodelay


def strace_works():
    strace = shutil.which("strace")
    if strace is None:
        return False
    r = subprocess.run([strace, "-qq", "-e", "trace=none", "true"], capture_output=True)
    return r.returncode == 0


@pytest.mark.skipif(not strace_works() and not os.environ.get("LAB_REQUIRE_TOOLS"),
                    reason="strace missing or ptrace not permitted (LAB_REQUIRE_TOOLS=1 makes this a failure)")
def test_one_write_per_response_with_nodelay():
    n = 12
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        log = pathlib.Path(tmp, "strace.txt")
        proc = subprocess.Popen(
            ["strace", "-f", "-qq", "-o", str(log), "-e",
             "trace=write,writev,sendto,sendmsg,sendmmsg,sendfile,setsockopt,accept,accept4",
             *SERVER, str(port)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, cwd=REPO, start_new_session=True)
        try:
            wait_port(port, proc)
            time.sleep(0.3)  # let wait_port's probe connection reach the log first
            start = len(log.read_text().splitlines())
            timed_keepalive(port, n)
            time.sleep(0.2)
            text = "\n".join(log.read_text().splitlines()[start:])
        finally:
            # strace and the server (its child) are alone in their session: SIGTERM
            # both (strace alone would detach and leave the server running).
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    accepted, writes, nodelay = parse_strace(text)
    conn_writes = [w for w in writes if w[1] in accepted]
    used = {fd for _, fd in conn_writes}
    assert len(used) == 1, f"expected writes on one connection, saw fds {used}:\n{text}"
    assert len(conn_writes) == n, (
        f"{len(conn_writes)} writes for {n} responses (one each expected): {conn_writes}")
    assert used <= nodelay, f"TCP_NODELAY not set on fd {used - nodelay}:\n{text}"
