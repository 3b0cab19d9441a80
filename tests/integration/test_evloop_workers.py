"""--workers N: N worker processes on one port through SO_REUSEPORT, each pinned
to its own CPU of the server's set, started and stopped by a parent that only supervises.
The rest of the C server's integration tests also run with EVLOOP_WORKERS=2 (scripts/test.sh)."""
import os
import signal
import socket
import time

import pytest

from evloop_process import Server, finish


def children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(x) for x in f.read().split()]


def tcp_sockets(pid: int) -> int:
    """Open sockets of a process (its fds that are sockets)."""
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"):
                n += 1
        except OSError:
            pass
    return n


def get_ping(sock: socket.socket) -> bytes:
    sock.sendall(b"GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    while not data.endswith(b"pong"):
        chunk = sock.recv(4096)
        assert chunk, data
        data += chunk
    return data


@pytest.fixture
def two():
    s = Server("--workers", "2")
    yield s
    if s.alive():
        finish(s, max_shutdown_s=5)


def test_two_workers_share_the_port_and_each_takes_connections(two):
    kids = children(two.proc.pid)
    assert len(kids) == 2, two.stderr()
    before = {k: tcp_sockets(k) for k in kids}
    conns = [socket.create_connection(("127.0.0.1", two.port)) for _ in range(64)]
    try:
        for c in conns:
            assert get_ping(c).startswith(b"HTTP/1.1 200 OK")
        # the kernel spreads 64 connections over both listening sockets
        gained = {k: tcp_sockets(k) - before[k] for k in kids}
        assert all(g > 0 for g in gained.values()), gained
        assert sum(gained.values()) == 64, gained
    finally:
        for c in conns:
            c.close()
    assert "2 workers (SO_REUSEPORT)" in two.stderr()


def test_each_worker_on_its_own_cpu(two):
    allowed = os.sched_getaffinity(two.proc.pid)
    mine = [os.sched_getaffinity(k) for k in children(two.proc.pid)]
    assert all(len(m) == 1 and m <= allowed for m in mine), mine
    if len(allowed) >= 2:
        assert mine[0] != mine[1], mine


def test_sigterm_stops_every_worker_cleanly(two):
    kids = children(two.proc.pid)
    rc, took = two.terminate()
    assert rc == 0 and took < 5, two.stderr()
    for k in kids:
        assert not os.path.exists(f"/proc/{k}") or open(f"/proc/{k}/stat").read().split()[2] == "Z"
    two.check_clean()


def test_a_dead_worker_stops_the_server(two):
    kids = children(two.proc.pid)
    os.kill(kids[0], signal.SIGKILL)
    deadline = time.monotonic() + 5
    while two.alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not two.alive(), "the parent kept serving with one worker fewer"
    assert two.proc.returncode != 0
    assert "killed by signal 9; stopping the other workers" in two.stderr()
    assert not os.path.exists(f"/proc/{kids[1]}") or \
        open(f"/proc/{kids[1]}/stat").read().split()[2] == "Z"


def test_one_worker_is_the_plain_server():
    s = Server("--workers", "1")
    try:
        assert children(s.proc.pid) == []
        c = socket.create_connection(("127.0.0.1", s.port))
        assert get_ping(c).startswith(b"HTTP/1.1 200 OK")
        c.close()
    finally:
        finish(s)


def test_bad_worker_counts_are_refused():
    import subprocess
    from evloop_process import DEFAULT_BIN
    binary = os.environ.get("EVLOOP_BIN", str(DEFAULT_BIN))
    for bad in ("0", "257", "x"):
        r = subprocess.run([binary, "0", "--workers", bad], capture_output=True, timeout=10)
        assert r.returncode == 2 and b"--workers" in r.stderr, r.stderr
