"""Fixtures for the evloop HTTP/1.1 integration tests.

The server under test is the ASan/UBSan build (EVLOOP_BIN, default
<repo>/build/asan/http_bench_server). Each server is started on port 0 and
its port read from the "listening on ADDR:PORT" line; on teardown it must
still be alive, exit 0 on SIGTERM, and have printed no sanitizer report.
"""
import os

import pytest

from evloop_process import Server, finish

# The harness runs of these tests leave the machine's canary out (scripts/lib/canary.sh: 3 to 9 s a
# suite part); the toy-suite test turns it on and checks it end to end.
os.environ.setdefault("LAB_CANARY", "0")

# The tests marked `concurrent` run two at a time (pytest-xdist, scripts/test.sh): each worker's lab
# runs get ports of their own (the harness's and the cost script's defaults would collide).
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if _WORKER.startswith("gw") and _WORKER[2:].isdigit():
    _n = int(_WORKER[2:]) + 1
    os.environ.setdefault("LAB_PORT_BASE", str(18080 + 500 * _n))
    os.environ.setdefault("LAB_COST_PORT_BASE", str(30080 + 500 * _n))


@pytest.fixture
def make_server():
    """Factory for servers with custom flags; each is checked at teardown."""
    servers = []

    def start(*args):
        s = Server(*args)
        servers.append(s)
        return s

    yield start
    for s in servers:
        finish(s)


@pytest.fixture(scope="module")
def shared_server():
    s = Server("--max-body", "1048576")
    yield s
    finish(s, max_shutdown_s=3)


@pytest.fixture
def server(shared_server):
    """The shared server; after every test it must still be alive and
    clean."""
    yield shared_server
    assert shared_server.alive(), "server died: " + shared_server.stderr()
    shared_server.check_clean()


@pytest.fixture(scope="module")
def h2_shared_server():
    """A server with the default flags (--max-body 16 MiB), shared by the
    HTTP/2 tests of a module; checked like shared_server at teardown."""
    s = Server()
    yield s
    finish(s, max_shutdown_s=3)


@pytest.fixture
def h2_server(h2_shared_server):
    """The shared h2 server; after every test it must still be alive and
    clean."""
    yield h2_shared_server
    s = h2_shared_server
    assert s.alive(), "server died: " + s.stderr()
    s.check_clean()
