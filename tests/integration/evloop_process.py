"""Running the evloop server under test, shared by the integration test modules: the
ASan/UBSan build started on port 0 (its port read from its "NAME: listening on
ADDR:PORT" line), stderr collected for the sanitizer check; and the tool checks
(missing/need) that fail under scripts/test.sh and skip elsewhere."""
import os
import pathlib
import re
import shutil
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
    """The server binary (EVLOOP_BIN, default the ASan http_bench_server) started as
    `binary 0 *leading *args`; https_bench_server takes its certificate and key
    as `leading`. EVLOOP_WORKERS=N adds `--workers N` and EVLOOP_LOOP=NAME `--loop NAME`
    (unless the test sets them): the test command runs the C server's integration tests
    once more each way."""

    def __init__(self, *args, binary=None, leading=()):
        binary = binary or os.environ.get("EVLOOP_BIN", str(DEFAULT_BIN))
        if not os.path.exists(binary):
            pytest.fail(f"server binary not found: {binary} (run make asan)")
        env = dict(os.environ)
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
        workers = os.environ.get("EVLOOP_WORKERS")
        if workers and "--workers" not in args:
            args = (*args, "--workers", workers)
        loop = os.environ.get("EVLOOP_LOOP")
        if loop and "--loop" not in args:
            args = (*args, "--loop", loop)
        self.proc = subprocess.Popen([binary, "0", *leading, *args],
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
            m = re.match(r"\S+: listening on (\S+):(\d+)$",
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
        # a pass on another loop must not have quietly run on epoll
        assert "falling back to epoll" not in text, text




def finish(s, max_shutdown_s=None):
    """Teardown check of a server: it was alive (or the test stopped it), exits
    0 on SIGTERM (within max_shutdown_s when given) and printed no sanitizer
    report."""
    was_alive = s.alive() or s.stopped_by_test
    rc, took = s.terminate()
    s.check_clean()
    assert was_alive, "server died: " + s.stderr()
    assert rc == 0, f"exit code {rc}: " + s.stderr()
    if max_shutdown_s is not None:
        assert took < max_shutdown_s, f"shutdown took {took:.2f}s"


def missing(why):
    """A tool a test needs is absent: a skip for a developer poking around, a
    failure under scripts/test.sh (LAB_REQUIRE_TOOLS=1), where setup installs it."""
    if os.environ.get("LAB_REQUIRE_TOOLS") == "1":
        pytest.fail(why)
    pytest.skip(why)


def need(tool):
    if shutil.which(tool) is None:
        missing(f"{tool} not installed (Debian packages nghttp2-client, curl, openssl)")


def run(cmd, timeout=60, **kw):
    return subprocess.run(cmd, capture_output=True, timeout=timeout, **kw)


def h2load_summary(out):
    """h2load's request counters (total ... timeout) and its 2xx count, from its stdout."""
    text = out.decode(errors="replace")
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, "
                  r"(\d+) succeeded, (\d+) failed, (\d+) errored, "
                  r"(\d+) timeout", text)
    assert m, text
    keys = ("total", "started", "done", "succeeded", "failed", "errored",
            "timeout")
    res = dict(zip(keys, map(int, m.groups())))
    codes = re.search(r"status codes: (\d+) 2xx", text)
    res["2xx"] = int(codes.group(1)) if codes else 0
    return res
