"""Fixtures for the evloop HTTP/1.1 integration tests.

The server under test is the ASan/UBSan build (EVLOOP_BIN, default
<repo>/build/asan/http_bench_server). Each server is started on port 0 and
its port read from the "listening on ADDR:PORT" line; on teardown it must
still be alive, exit 0 on SIGTERM, and have printed no sanitizer report.
"""
import os
import pathlib
import re
import signal
import subprocess
import threading
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_BIN = REPO / "build" / "asan" / "http_bench_server"
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "runtime error:",
                     "ERROR: LeakSanitizer")


class Server:
    def __init__(self, *args):
        binary = os.environ.get("EVLOOP_BIN", str(DEFAULT_BIN))
        if not os.path.exists(binary):
            pytest.fail(f"server binary not found: {binary} (run make asan)")
        env = dict(os.environ)
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
        self.proc = subprocess.Popen([binary, "0", *args],
                                     stderr=subprocess.PIPE, env=env)
        self.lines = []
        self.stopped_by_test = False
        self._ready = threading.Event()
        self.port = None
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        if not self._ready.wait(10) or self.port is None:
            self.proc.kill()
            pytest.fail("server did not start: " + self.stderr())

    def _read_stderr(self):
        for raw in self.proc.stderr:
            line = raw.decode(errors="replace")
            self.lines.append(line)
            m = re.match(r"http_bench_server: listening on (\S+):(\d+)$",
                         line.strip())
            if m and self.port is None:
                self.port = int(m.group(2))
                self._ready.set()
        self._ready.set()

    def stderr(self):
        return "".join(self.lines)

    def alive(self):
        return self.proc.poll() is None

    def sigterm(self):
        """For tests that shut the server down themselves."""
        self.stopped_by_test = True
        self.proc.send_signal(signal.SIGTERM)

    def terminate(self, timeout=5.0):
        """SIGTERM; returns (exit code, seconds taken)."""
        t0 = time.monotonic()
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self._reader.join(5)
        return rc, time.monotonic() - t0

    def check_clean(self):
        text = self.stderr()
        for marker in SANITIZER_MARKERS:
            assert marker not in text, text


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
        was_alive = s.alive() or s.stopped_by_test
        rc, _ = s.terminate()
        s.check_clean()
        assert was_alive, "server died: " + s.stderr()
        assert rc == 0, f"exit code {rc}: " + s.stderr()


@pytest.fixture(scope="module")
def shared_server():
    s = Server("--max-body", "1048576")
    yield s
    was_alive = s.alive()
    rc, took = s.terminate()
    s.check_clean()
    assert was_alive, "server died: " + s.stderr()
    assert rc == 0, f"exit code {rc}: " + s.stderr()
    assert took < 3, f"shutdown took {took:.2f}s"


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
    was_alive = s.alive()
    rc, took = s.terminate()
    s.check_clean()
    assert was_alive, "server died: " + s.stderr()
    assert rc == 0, f"exit code {rc}: " + s.stderr()
    assert took < 3, f"shutdown took {took:.2f}s"


@pytest.fixture
def h2_server(h2_shared_server):
    """The shared h2 server; after every test it must still be alive and
    clean."""
    yield h2_shared_server
    s = h2_shared_server
    assert s.alive(), "server died: " + s.stderr()
    s.check_clean()
