"""Integration tests for the five-language shoot-out servers (servers/go/lang,
servers/rust, servers/node, servers/cpp, servers/python).

Each server is started pinned to CPU 0 (taskset -c 0) on a free loopback port,
must print "<name>: listening on 127.0.0.1:PORT", and is then checked route by
route over real sockets (http.client), then stopped with SIGTERM.

Run: python -m pytest -q tests/integration/test_languages.py
after building: scripts/build.sh (Go) and make -C servers/{rust,cpp,node,python}.
A server whose binary, venv or node_modules is missing is skipped (the reason
names the make target), unless LANG_TESTS_REQUIRE_ALL=1.
"""
import http.client
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("BUILD_DIR", REPO / "build"))
BENCH = BUILD / "bench"
NODE = shutil.which("node") or "node"
PYTHON3 = shutil.which("python3") or "python3"

# name -> (command line with {port}, what must exist, how to build it).
SERVERS = {
    # our C event loop is the shoot-out's "C with epoll" entry (its own, deeper
    # tests are in test_evloop_languages.py)
    "evloop": ([BENCH / "http_bench_server", "{port}"],
               BENCH / "http_bench_server", "scripts/build.sh"),
    "lang_go_std": ([BENCH / "lang_go_std", "{port}"],
                    BENCH / "lang_go_std", "scripts/build.sh --servers lang_go_std"),
    "lang_rust_std": ([BENCH / "lang_rust_std", "{port}"],
                      BENCH / "lang_rust_std", "make -C servers/rust"),
    "lang_node_std": ([NODE, REPO / "servers/node/std/server.js", "{port}"],
                      REPO / "servers/node/std/server.js", "-"),
    "lang_cpp_std": ([BENCH / "lang_cpp_std", "{port}"],
                     BENCH / "lang_cpp_std", "make -C servers/cpp"),
    "lang_python_std": ([PYTHON3, REPO / "servers/python/std/server.py", "{port}"],
                        REPO / "servers/python/std/server.py", "-"),
    "lang_go_fasthttp": ([BENCH / "lang_go_fasthttp", "{port}"],
                         BENCH / "lang_go_fasthttp", "scripts/build.sh --servers lang_go_fasthttp"),
    "lang_rust_axum": ([BENCH / "lang_rust_axum", "{port}"],
                       BENCH / "lang_rust_axum", "make -C servers/rust"),
    "lang_node_fastify": ([NODE, REPO / "servers/node/prod/server.js", "{port}"],
                          REPO / "servers/node/prod/node_modules/fastify",
                          "make -C servers/node"),
    "lang_cpp_beast": ([BENCH / "lang_cpp_beast", "{port}"],
                       BENCH / "lang_cpp_beast", "make -C servers/cpp"),
    "lang_python_uvicorn": ([BUILD / "pyservers/bin/python",
                             REPO / "servers/python/prod/server.py", "{port}"],
                            BUILD / "pyservers/bin/uvicorn", "make -C servers/python"),
}

# The name a server gives itself in its ready line, where it is not its lab name.
READY_NAME = {"evloop": "http_bench_server"}

# Exit statuses accepted after SIGTERM: 0, or death by the signal itself
# (lang_rust_std keeps the default action; uvicorn re-raises the signal).
SIGTERM_OK = (0, -signal.SIGTERM)

NESTED = {
    "name": "Zoë ✓ 名前 😀",
    "escapes": "quote \" backslash \\ slash / tab \t nl \n ctl \u0001",
    "ints": [0, -1, 42, 9007199254740991, -9007199254740991],
    "floats": [3.25, -0.5, 1e-07, 6.02e+23, 1.5e300],
    "flags": [True, False, None],
    "nested": {"a": {"b": {"c": [1, [2, [3, {"d": "deep"}]]]}}, "empty": {},
               "list": []},
    "": "empty key",
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, name):
        cmd, needs, build = SERVERS[name]
        if not pathlib.Path(needs).exists():
            msg = f"{name}: {needs} missing (build: {build})"
            if os.environ.get("LANG_TESTS_REQUIRE_ALL") == "1":
                pytest.fail(msg)
            pytest.skip(msg)
        self.name = name
        self.port = free_port()
        argv = [str(a).format(port=self.port) for a in cmd]
        self.proc = subprocess.Popen(["taskset", "-c", "0", *argv],
                                     stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, cwd=REPO)
        self.lines = []
        self.ready = threading.Event()
        self.ready_line = None
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        if not self.ready.wait(30) or self.ready_line is None:
            self.stop()
            pytest.fail(f"{name} did not start: {self.stderr()}")
        self._wait_port()

    def _read(self):
        ready_name = READY_NAME.get(self.name, self.name)
        pattern = re.compile(rf"^{ready_name}: listening on 127\.0\.0\.1:(\d+)$")
        for raw in self.proc.stderr:
            line = raw.decode(errors="replace").rstrip("\n")
            self.lines.append(line)
            m = pattern.match(line)
            if m and self.ready_line is None:
                self.ready_line = line
                assert int(m.group(1)) == self.port, line
                self.ready.set()
        self.ready.set()

    def _wait_port(self):
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), 1).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stderr(self):
        return "\n".join(self.lines)

    def alive(self):
        return self.proc.poll() is None

    def stop(self, timeout=10):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = None
        self.reader.join(5)
        return rc

    def conn(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)

    def request(self, method, target, body=None, headers=None):
        c = self.conn()
        try:
            c.request(method, target, body=body, headers=headers or {})
            r = c.getresponse()
            return r, r.read()
        finally:
            c.close()


@pytest.fixture(scope="module", params=list(SERVERS))
def server(request):
    s = Server(request.param)
    yield s
    was_alive = s.alive()
    rc = s.stop()
    assert was_alive, f"{s.name} died: {s.stderr()}"
    assert rc in SIGTERM_OK, f"{s.name}: exit status {rc} after SIGTERM: {s.stderr()}"


def ctype(resp):
    return resp.getheader("Content-Type", "").split(";")[0].strip().lower()


def check_length(resp, body):
    assert resp.getheader("Transfer-Encoding") is None
    assert resp.getheader("Content-Length") == str(len(body))


def test_root(server):
    r, body = server.request("GET", "/")
    assert r.status == 200
    assert body == b"Hello, World!"
    assert ctype(r) == "text/plain"
    check_length(r, body)


@pytest.mark.parametrize("query,expected", [
    ("", b""),
    ("foo=bar", b"foo=bar\n"),
    ("a=1&b=x%20y&c=%E2%9C%93", "a=1\nb=x y\nc=✓\n".encode()),
    ("a=1&a=2&plus=x+y", b"a=1\na=2\nplus=x y\n"),
])
def test_query_text(server, query, expected):
    r, body = server.request("GET", "/something" + ("?" + query if query else ""))
    assert r.status == 200
    assert ctype(r) == "text/plain"
    assert body == expected
    check_length(r, body)


def test_query_json(server):
    r, body = server.request("GET", "/something?json=true&x=1&name=Zo%C3%AB&x=2")
    assert r.status == 200
    assert ctype(r) == "application/json"
    check_length(r, body)
    assert json.loads(body) == {"message": "Hello, World!",
                                "query": {"json": "true", "x": "2", "name": "Zoë"}}
    r, body = server.request("GET", "/something?json=true&x=1")
    assert json.loads(body) == {"message": "Hello, World!",
                                "query": {"json": "true", "x": "1"}}


def test_json_false_is_text(server):
    r, body = server.request("GET", "/something?json=false")
    assert (r.status, ctype(r), body) == (200, "text/plain", b"json=false\n")


@pytest.mark.parametrize("doc", [NESTED, [1, "two", 3.5], "just a string", 12, None])
def test_post_json(server, doc):
    raw = json.dumps(doc, ensure_ascii=False).encode()
    r, body = server.request("POST", "/something", body=raw,
                             headers={"Content-Type": "application/json"})
    assert r.status == 200, body
    assert ctype(r) == "application/json"
    check_length(r, body)
    assert json.loads(body) == {"received": doc, "bytes": len(raw)}


def test_post_json_any_content_type(server):
    raw = b'{"a": [1, 2]}'
    for headers in ({"Content-Type": "text/plain"}, {}):
        r, body = server.request("POST", "/something", body=raw, headers=headers)
        assert r.status == 200, body
        assert json.loads(body) == {"received": {"a": [1, 2]}, "bytes": len(raw)}


@pytest.mark.parametrize("raw", [b"this is not json", b'{"a": 1', b"", b"[1, 2] x"])
def test_post_invalid(server, raw):
    r, body = server.request("POST", "/something", body=raw,
                             headers={"Content-Type": "application/json"})
    assert r.status == 400
    check_length(r, body)
    assert len(body) < 200


@pytest.mark.parametrize("method,target", [
    ("GET", "/nope"), ("DELETE", "/"), ("POST", "/"), ("PUT", "/something"),
    ("DELETE", "/something"), ("GET", "/something/else"), ("GET", "/somethingelse"),
])
def test_not_found(server, method, target):
    r, body = server.request(method, target)
    assert r.status == 404
    check_length(r, body)


def test_keep_alive(server):
    c = server.conn()
    try:
        c.connect()
        first = c.sock
        for k in range(5):
            c.request("GET", "/")
            r = c.getresponse()
            assert (r.status, r.read()) == (200, b"Hello, World!")
            c.request("GET", f"/something?k={k}")
            r = c.getresponse()
            assert r.read() == f"k={k}\n".encode()
            raw = json.dumps({"k": k}).encode()
            c.request("POST", "/something", body=raw)
            r = c.getresponse()
            assert json.loads(r.read()) == {"received": {"k": k}, "bytes": len(raw)}
            c.request("GET", "/nope")
            r = c.getresponse()
            assert r.status == 404
            r.read()
            assert not r.will_close
            assert c.sock is first, "the server closed the connection"
    finally:
        c.close()


def test_connection_close(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break  # the server closed: Connection: close was honoured
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    assert body == b"Hello, World!"


def test_pipelined(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
                  b"GET /something?p=1 HTTP/1.1\r\nHost: x\r\n\r\n"
                  b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    assert data.count(b"HTTP/1.1 200") == 3, data
    assert data.count(b"Hello, World!") == 2 and b"p=1\n" in data, data


def test_expect_continue(server):
    raw = json.dumps({"big": "x" * 2000}).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(b"POST /something HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                  b"Content-Type: application/json\r\n"
                  b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(raw))
        s.settimeout(3)
        interim = s.recv(65536)
        assert interim.startswith(b"HTTP/1.1 100"), interim
        s.settimeout(10)
        s.sendall(raw)
        data = interim.split(b"\r\n\r\n", 1)[1]
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), data
    assert json.loads(body) == {"received": {"big": "x" * 2000}, "bytes": len(raw)}
