"""Integration tests for servers/evloop (HTTP/1.1 over raw sockets).

Run: python3 -m pytest -q tests/integration/test_evloop_http1.py
(after `make -C servers/evloop asan`). See conftest.py for the fixtures.
"""
import random
import re
import resource
import select
import socket
import struct
import time

import pytest

DATE_RE = re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d "
                     r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
                     r"\d{4} \d\d:\d\d:\d\d GMT$")
MAX_BODY = 1048576  # the shared server runs with --max-body 1048576


class Response:
    def __init__(self, status, headers, body, raw_head):
        self.status = status
        self.headers = headers  # list of (lower-case name, value)
        self.body = body
        self.raw_head = raw_head

    def get(self, name):
        vals = [v for n, v in self.headers if n == name.lower()]
        assert len(vals) <= 1, f"duplicate {name}: {vals}"
        return vals[0] if vals else None


class Client:
    def __init__(self, port, timeout=5.0):
        self.sock = socket.create_connection(("127.0.0.1", port),
                                             timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        data = self.sock.recv(262144)
        if not data:
            raise EOFError("connection closed; buffered: %r" % self.buf[:200])
        self.buf += data

    def read_response(self, head=False):
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        raw, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = raw.decode("latin-1").split("\r\n")
        version, status, _reason = lines[0].split(" ", 2)
        assert version == "HTTP/1.1", lines[0]
        headers = []
        for line in lines[1:]:
            name, value = line.split(":", 1)
            headers.append((name.lower(), value.strip()))
        resp = Response(int(status), headers, b"", raw + b"\r\n\r\n")
        if resp.status == 100:
            return resp
        length = int(resp.get("content-length"))
        if head:
            length = 0
        while len(self.buf) < length:
            self._fill()
        resp.body, self.buf = self.buf[:length], self.buf[length:]
        return resp

    def is_closed(self, timeout=2.0):
        """True if the peer closes (EOF or reset) within timeout with no
        further bytes."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            return not self.buf
        except socket.timeout:
            return False
        return data == b"" and not self.buf

    def close(self):
        self.sock.close()


def check_common(resp, ctype=None):
    assert resp.get("server") == "evloop"
    assert DATE_RE.match(resp.get("date") or ""), resp.get("date")
    assert resp.get("content-type")
    assert resp.get("content-length") is not None
    assert resp.get("transfer-encoding") is None
    if ctype:
        assert resp.get("content-type") == ctype


def roundtrip(port, raw, head=False):
    c = Client(port)
    c.send(raw)
    r = c.read_response(head=head)
    return c, r


def get(path, extra=""):
    return f"GET {path} HTTP/1.1\r\nHost: t\r\n{extra}\r\n".encode()


def post(body, extra=""):
    return (f"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: {len(body)}"
            f"\r\n{extra}\r\n").encode() + body


def chunked(pieces, ext=False, trailers=False):
    out = b""
    for i, p in enumerate(pieces):
        out += b"%x" % len(p)
        if ext:
            out += b";n=%d;q=\"a b\"" % i
        out += b"\r\n" + p + b"\r\n"
    out += b"0\r\n"
    if trailers:
        out += b"X-Trailer: yes\r\nY: 2\r\n"
    return out + b"\r\n"


def assert_serving(port):
    c, r = roundtrip(port, get("/ping"))
    assert r.status == 200 and r.body == b"pong"
    c.close()


# ---- basic routes -------------------------------------------------------

def test_ping_exact(server):
    c, r = roundtrip(server.port, get("/ping"))
    assert re.fullmatch(
        rb"HTTP/1\.1 200 OK\r\nServer: evloop\r\nDate: [^\r\n]+\r\n"
        rb"Content-Type: text/plain\r\nContent-Length: 4\r\n\r\n", r.raw_head)
    check_common(r, "text/plain")
    assert r.body == b"pong"
    # keep-alive: same connection serves again
    c.send(get("/ping"))
    assert c.read_response().body == b"pong"
    c.close()


def test_echo_get_sizes(server):
    c = Client(server.port)
    for query, n in [("", 64), ("?size=0", 0), ("?size=1", 1),
                     ("?size=1000", 1000), ("?a=b&size=7&c", 7),
                     ("?size=1048576", 1048576)]:
        c.send(get("/echo" + query))
        r = c.read_response()
        assert r.status == 200
        check_common(r, "text/plain")
        assert r.get("content-length") == str(n)
        assert r.body == b"x" * n
    c.close()


@pytest.mark.parametrize("query", ["size=", "size", "size=abc", "size=-1",
                                   "size=10x", "size=+5", "size=1048577",
                                   "size=99999999999999999999"])
def test_echo_bad_size(server, query):
    c, r = roundtrip(server.port, get("/echo?" + query))
    assert r.status == 400
    check_common(r, "text/plain")
    assert r.body
    c.close()


def test_post_echo(server):
    c = Client(server.port)
    for body in [b"hello", b"", bytes(range(256)) * 4,
                 random.Random(1).randbytes(100000)]:
        c.send(post(body))
        r = c.read_response()
        assert r.status == 200
        check_common(r, "application/octet-stream")
        assert r.get("content-length") == str(len(body))
        assert r.body == body
    # no Content-Length at all: empty body
    c.send(b"POST /echo HTTP/1.1\r\nHost: t\r\n\r\n")
    r = c.read_response()
    assert r.status == 200 and r.body == b"" and r.get("content-length") == "0"
    c.close()


def test_post_body_in_pieces(server):
    body = random.Random(2).randbytes(300000)
    c = Client(server.port)
    raw = post(body)
    for i in range(0, len(raw), 7777):
        c.send(raw[i:i + 7777])
    r = c.read_response()
    assert r.status == 200 and r.body == body
    c.close()


def test_head(server):
    c = Client(server.port)
    c.send(b"HEAD /ping HTTP/1.1\r\nHost: t\r\n\r\n")
    r = c.read_response(head=True)
    assert r.status == 200 and r.get("content-length") == "4"
    check_common(r, "text/plain")
    c.send(b"HEAD /echo?size=100 HTTP/1.1\r\nHost: t\r\n\r\n")
    r = c.read_response(head=True)
    assert r.status == 200 and r.get("content-length") == "100"
    # no body bytes were sent: the next response starts right away
    c.send(get("/ping"))
    r = c.read_response()
    assert r.status == 200 and r.body == b"pong"
    c.close()


def test_http10_closes(server):
    c, r = roundtrip(server.port, b"GET /ping HTTP/1.0\r\n\r\n")
    assert r.status == 200 and r.body == b"pong"
    assert r.get("connection") == "close"
    assert c.is_closed()


def test_http10_keep_alive(server):
    c = Client(server.port)
    for _ in range(3):
        c.send(b"GET /ping HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        r = c.read_response()
        assert r.body == b"pong"
        assert r.get("connection") == "keep-alive"
    c.close()


def test_connection_close(server):
    c, r = roundtrip(server.port, get("/ping", "Connection: close\r\n"))
    assert r.status == 200 and r.body == b"pong"
    assert r.get("connection") == "close"
    assert c.is_closed()


def test_expect_continue(server):
    c = Client(server.port)
    c.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n"
           b"Expect: 100-continue\r\n\r\n")
    r = c.read_response()
    assert r.status == 100
    assert r.raw_head == b"HTTP/1.1 100 Continue\r\n\r\n"
    c.send(b"hello")
    r = c.read_response()
    assert r.status == 200 and r.body == b"hello"
    # body sent along with the head: no interim response
    c.send(post(b"abc", "Expect: 100-continue\r\n"))
    r = c.read_response()
    assert r.status == 200 and r.body == b"abc"
    c.close()


def test_expect_continue_too_large(server):
    c, r = roundtrip(server.port,
                     b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: "
                     b"%d\r\nExpect: 100-continue\r\n\r\n" % (MAX_BODY + 1))
    assert r.status == 413
    assert r.get("connection") == "close"
    assert c.is_closed()


# ---- pipelining ---------------------------------------------------------

def pipeline_batch(n):
    reqs, expect = [], []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            reqs.append(get("/ping"))
            expect.append((False, b"pong"))
        elif kind == 1:
            reqs.append(get(f"/echo?size={i}"))
            expect.append((False, b"x" * i))
        elif kind == 2:
            body = b"body-%d" % i
            reqs.append(post(body))
            expect.append((False, body))
        else:
            reqs.append(b"HEAD /ping HTTP/1.1\r\nHost: t\r\n\r\n")
            expect.append((True, b""))
    return b"".join(reqs), expect


@pytest.mark.parametrize("n", [16, 100])
def test_pipelining(server, n):
    raw, expect = pipeline_batch(n)
    c = Client(server.port)
    c.send(raw)
    for head, body in expect:
        r = c.read_response(head=head)
        assert r.status == 200
        assert r.body == body
    c.close()


def test_pipelining_large_responses(server):
    # More output than the high-water mark: the server pauses and resumes.
    c = Client(server.port)
    c.send(get("/echo?size=1048576") * 4 + get("/ping"))
    for _ in range(4):
        assert c.read_response().body == b"x" * 1048576
    assert c.read_response().body == b"pong"
    c.close()


def test_pipelining_stops_at_close(server):
    c = Client(server.port)
    c.send(get("/ping") + get("/ping", "Connection: close\r\n") + get("/ping"))
    assert c.read_response().get("connection") is None
    assert c.read_response().get("connection") == "close"
    assert c.is_closed()


# ---- chunked request bodies ---------------------------------------------

CHUNK_HEAD = (b"POST /echo HTTP/1.1\r\nHost: t\r\n"
              b"Transfer-Encoding: chunked\r\n\r\n")


def test_chunked_whole(server):
    pieces = [b"hello", b" ", b"world" * 1000, b"!"]
    c = Client(server.port)
    c.send(CHUNK_HEAD + chunked(pieces, ext=True, trailers=True))
    r = c.read_response()
    assert r.status == 200 and r.body == b"".join(pieces)
    assert r.get("content-length") == str(len(r.body))
    c.send(CHUNK_HEAD + b"0\r\n\r\n")
    r = c.read_response()
    assert r.status == 200 and r.body == b""
    c.close()


def test_chunked_byte_by_byte(server):
    pieces = [b"abc", b"defgh", b"i"]
    raw = CHUNK_HEAD + chunked(pieces, ext=True, trailers=True) + get("/ping")
    c = Client(server.port)
    for i in range(len(raw)):
        c.send(raw[i:i + 1])
    r = c.read_response()
    assert r.status == 200 and r.body == b"abcdefghi"
    assert c.read_response().body == b"pong"
    c.close()


def test_chunked_too_large(server):
    c, r = roundtrip(server.port,
                     CHUNK_HEAD + b"%x\r\n" % (MAX_BODY + 1) + b"abc")
    assert r.status == 413 and r.get("connection") == "close"
    assert c.is_closed()


def test_chunked_total_too_large(server):
    c = Client(server.port)
    c.send(CHUNK_HEAD)
    block = b"x" * 65536
    try:
        for _ in range(MAX_BODY // len(block) + 2):
            c.send(b"%x\r\n" % len(block) + block + b"\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    r = c.read_response()
    assert r.status == 413
    c.close()


# ---- error answers ------------------------------------------------------

ERRORS = [
    ("head too big", b"GET /ping HTTP/1.1\r\nX: " + b"a" * 17000
     + b"\r\n\r\n", 431),
    ("head too big, unfinished", b"GET /ping HTTP/1.1\r\nX: " + b"a" * 17000,
     431),
    ("body too large", b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: "
     b"%d\r\n\r\n" % (MAX_BODY + 1), 413),
    ("CL and TE", b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n"
     b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    ("bad request line", b"GET  /ping HTTP/1.1\r\n\r\n", 400),
    ("garbage request line", b"hello there\r\n\r\n", 400),
    ("bad header", b"GET /ping HTTP/1.1\r\nHost : t\r\n\r\n", 400),
    ("obs-fold", b"GET /ping HTTP/1.1\r\nA: b\r\n c\r\n\r\n", 400),
    ("bare LF", b"GET /ping HTTP/1.1\nHost: t\n\n", 400),
    ("NUL in header", b"GET /ping HTTP/1.1\r\nA: b\x00\r\n\r\n", 400),
    ("bad content-length", b"POST /echo HTTP/1.1\r\nContent-Length: 1x\r\n"
     b"\r\n", 400),
    ("conflicting content-length", b"POST /echo HTTP/1.1\r\nContent-Length: "
     b"1\r\nContent-Length: 2\r\n\r\nab", 400),
    ("bad chunk size", CHUNK_HEAD + b"zz\r\n", 400),
    ("chunked in HTTP/1.0", b"POST /echo HTTP/1.0\r\nTransfer-Encoding: "
     b"chunked\r\n\r\n0\r\n\r\n", 400),
    ("unsupported TE", b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n"
     b"\r\n", 501),
    ("HTTP/1.1 without Host", b"GET /ping HTTP/1.1\r\n\r\n", 400),
    ("two Hosts", b"GET /ping HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
    ("HTTP/2.0", b"GET /ping HTTP/2.0\r\n\r\n", 505),
    ("HTTP/1.2", b"GET /ping HTTP/1.2\r\n\r\n", 505),
    ("HTTP/0.9 style", b"GET /ping HTTP/0.9\r\n\r\n", 505),
]


@pytest.mark.parametrize("raw,status", [(r, s) for _, r, s in ERRORS],
                         ids=[n for n, _, _ in ERRORS])
def test_error_answers(server, raw, status):
    c, r = roundtrip(server.port, raw)
    assert r.status == status
    check_common(r, "text/plain")
    assert r.get("connection") == "close"
    assert 0 < len(r.body) < 100
    assert c.is_closed()
    assert_serving(server.port)


def test_not_found_and_method_not_allowed(server):
    c = Client(server.port)
    c.send(get("/nope"))
    r = c.read_response()
    assert r.status == 404
    check_common(r, "text/plain")
    c.send(b"POST /ping HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nab")
    r = c.read_response()
    assert r.status == 405 and r.get("allow") == "GET, HEAD"
    c.send(b"DELETE /echo HTTP/1.1\r\nHost: t\r\n\r\n")
    r = c.read_response()
    assert r.status == 405 and r.get("allow") == "GET, HEAD, POST"
    # routing errors do not break framing: the connection stays usable
    c.send(get("/ping"))
    assert c.read_response().body == b"pong"
    c.close()


def test_garbage_input(server):
    rnd = random.Random(3)
    for i in range(40):
        c = Client(server.port, timeout=3)
        junk = rnd.randbytes(rnd.randint(1, 3000))
        if i % 2:
            junk = b"GET /ping HTTP/1.1\r\n" + junk + b"\r\n\r\n"
        try:
            c.send(junk)
            c.sock.shutdown(socket.SHUT_WR)
            while c.sock.recv(65536):
                pass
        except (ConnectionResetError, BrokenPipeError, socket.timeout):
            pass
        c.close()
    assert_serving(server.port)


# ---- load and misbehaving clients --------------------------------------

def test_500_concurrent_connections(server):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2048:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    clients = [Client(server.port, timeout=10) for _ in range(500)]
    for i, c in enumerate(clients):
        c.send(get(f"/echo?size={i}"))
    for i, c in enumerate(clients):
        r = c.read_response()
        assert r.status == 200 and len(r.body) == i
    for c in clients:
        c.close()


def rst_close(sock):
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                    struct.pack("ii", 1, 0))
    sock.close()


def test_clients_that_vanish(server):
    port = server.port
    # half a head, then gone
    c = Client(port)
    c.send(b"GET /ping HTTP/1.1\r\nHo")
    c.close()
    # half a body, then gone
    c = Client(port)
    c.send(b"POST /echo HTTP/1.1\r\nContent-Length: 100000\r\n\r\n" + b"a" * 500)
    c.close()
    # half a chunked body, then reset
    c = Client(port)
    c.send(CHUNK_HEAD + b"100\r\nabc")
    rst_close(c.sock)
    # big responses never read
    c = Client(port)
    c.send(get("/echo?size=1048576") * 8)
    time.sleep(0.05)
    c.close()
    # reset in the middle of a response
    c = Client(port)
    c.send(get("/echo?size=1048576") * 4)
    c.sock.recv(1000)
    rst_close(c.sock)
    # reset right after sending
    c = Client(port)
    c.send(post(b"z" * 50000))
    rst_close(c.sock)
    time.sleep(0.2)
    assert_serving(port)


def test_half_closed_client_still_answered(server):
    c = Client(server.port)
    c.send(get("/ping") + get("/echo?size=3"))
    c.sock.shutdown(socket.SHUT_WR)
    assert c.read_response().body == b"pong"
    assert c.read_response().body == b"xxx"
    assert c.is_closed()


# ---- timers -------------------------------------------------------------

def test_header_timeout(make_server):
    s = make_server("--header-timeout", "300")
    c = Client(s.port)
    t0 = time.monotonic()
    c.send(b"GET /ping HTTP/1.1\r\nHost: t\r\n")
    r = c.read_response()
    assert r.status == 408 and r.get("connection") == "close"
    assert c.is_closed()
    took = time.monotonic() - t0
    assert 0.25 <= took < 1.3, took

    # trickling bytes does not extend the deadline
    c = Client(s.port)
    t0 = time.monotonic()
    answered = False
    for b in b"GET /ping HTTP/1.1\r\nX-Slow: " + b"a" * 40:
        try:
            c.sock.sendall(bytes([b]))
        except (BrokenPipeError, ConnectionResetError):
            break
        readable, _, _ = select.select([c.sock], [], [], 0.05)
        if readable:
            answered = True
            break
    took = time.monotonic() - t0
    assert answered
    assert c.read_response().status == 408
    assert 0.25 <= took < 1.0, took

    # a connection that sends nothing is closed silently
    c = Client(s.port)
    assert c.is_closed(timeout=1.5)

    # a complete request is not affected
    assert_serving(s.port)


def test_idle_timeout(make_server):
    s = make_server("--idle-timeout", "500")
    c = Client(s.port)
    c.send(get("/ping"))
    assert c.read_response().body == b"pong"
    t0 = time.monotonic()
    assert c.is_closed(timeout=2.5)
    took = time.monotonic() - t0
    assert 0.4 <= took < 1.5, took


def test_body_timeout_pause_and_rate(make_server):
    """--body-timeout bounds a pause in a body even after a fast start (credit
    earned at --body-min-rate does not cover it), and a trickle below the rate
    is cut off: 408 and close, both within about the timeout."""
    s = make_server("--body-timeout", "700")
    c = Client(s.port)
    t0 = time.monotonic()
    c.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n"
           + b"x" * 50000)            # 50 s of credit at the default rate
    r = c.read_response()
    took = time.monotonic() - t0
    assert r.status == 408 and r.get("connection") == "close"
    assert c.is_closed()
    assert 0.6 <= took < 1.6, took

    c = Client(s.port)
    c.send(b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n")
    t0 = time.monotonic()
    answered = False
    while time.monotonic() - t0 < 3:
        try:
            c.sock.sendall(b"x")       # a byte every 0.1 s: never a pause
        except (BrokenPipeError, ConnectionResetError):
            break
        readable, _, _ = select.select([c.sock], [], [], 0.1)
        if readable:
            answered = True
            break
    took = time.monotonic() - t0
    assert answered and c.read_response().status == 408
    assert 0.6 <= took < 1.6, took
    assert_serving(s.port)


def test_sigterm_completes_inflight_response(make_server):
    s = make_server()
    busy = Client(s.port)
    busy.send(get("/echo?size=1048576"))
    busy.sock.recv(1)  # the response has started; most of it is queued
    idle = Client(s.port)
    idle.send(get("/ping"))
    assert idle.read_response().body == b"pong"

    t0 = time.monotonic()
    s.sigterm()
    busy.buf = b"H"
    r = busy.read_response()
    assert r.status == 200 and r.body == b"x" * 1048576
    assert idle.is_closed(timeout=2)
    rc = s.proc.wait(3)
    assert rc == 0
    assert time.monotonic() - t0 < 1.5
    # new connections are refused once shutdown began
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", s.port), timeout=1)
    s.check_clean()
