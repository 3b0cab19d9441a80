"""Integration tests for HTTP/2 over cleartext (h2c) in servers/evloop.

Run: python3 -m pytest -q tests/integration/test_evloop_h2.py
(after `make -C servers/evloop asan`). See conftest.py for the fixtures.

There is no Python HTTP/2 library here, so the tests drive the server with
the nghttp2 command-line tools (`nghttp`, `h2load`), `curl`, h2spec, and a
small raw-frame client below. The raw client encodes requests with HPACK
literals only (no Huffman, no dynamic table) and never decodes response
headers; it checks DATA payloads, RST_STREAM and GOAWAY, which are not
compressed. Statuses are checked through `nghttp -v` and curl.
"""
import os
import pathlib
import random
import re
import socket
import struct
import time

import pytest

from evloop_process import h2load_summary, missing, need, run

REPO = pathlib.Path(__file__).resolve().parents[2]
H2SPEC = REPO / "build" / "tools" / "h2spec"
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = (
    0x0, 0x1, 0x3, 0x4, 0x6, 0x7, 0x8)
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
NO_ERROR, PROTOCOL_ERROR = 0x0, 0x1




def url(server, path):
    return f"http://127.0.0.1:{server.port}{path}"


# ---- a raw frame client ---------------------------------------------------

def frame(ftype, flags, sid, payload=b""):
    return (struct.pack(">I", len(payload))[1:] + bytes([ftype, flags])
            + struct.pack(">I", sid) + payload)


def hpack_string(s):
    assert len(s) < 127
    return bytes([len(s)]) + s


def request_block(method, path, headers=()):
    """A header block from literals: static-table indexes for :method
    GET/POST and :scheme http, literal values for :path/:authority."""
    block = {b"GET": b"\x82", b"POST": b"\x83"}[method]
    block += b"\x86"                                 # :scheme: http
    block += b"\x04" + hpack_string(path)            # :path (name index 4)
    block += b"\x01" + hpack_string(b"localhost")    # :authority (index 1)
    for name, value in headers:                      # literal, new name
        block += b"\x00" + hpack_string(name) + hpack_string(value)
    return block


class Stream:
    def __init__(self):
        self.headers = 0   # HEADERS frames seen
        self.data = b""
        self.ended = False
        self.reset = None  # RST_STREAM error code


class RawH2:
    """Sends frames as given; reads frames into per-stream state. SETTINGS
    are acknowledged and our receive windows are big enough that the
    server never waits for a WINDOW_UPDATE in these tests."""

    def __init__(self, port, preface=True, timeout=5.0):
        self.sock = socket.create_connection(("127.0.0.1", port),
                                             timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.streams = {}
        self.goaway = None  # (last stream id, error code)
        self.settings = False  # the server's SETTINGS arrived
        self.pings = []  # payloads of PING ACKs
        self.eof = False
        if preface:
            self.send(self.preface())

    @staticmethod
    def preface():
        return PREFACE + frame(SETTINGS, 0, 0)

    def send(self, data):
        self.sock.sendall(data)

    def stream(self, sid):
        return self.streams.setdefault(sid, Stream())

    def _fill(self):
        try:
            data = self.sock.recv(1 << 20)
        except ConnectionResetError:
            data = b""
        if not data:
            self.eof = True
            return False
        self.buf += data
        return True

    def read_frame(self):
        """One frame as (type, flags, stream id, payload); None at EOF."""
        while len(self.buf) < 9:
            if not self._fill():
                return None
        length = int.from_bytes(self.buf[:3], "big")
        while len(self.buf) < 9 + length:
            if not self._fill():
                return None
        ftype, flags = self.buf[3], self.buf[4]
        sid = int.from_bytes(self.buf[5:9], "big") & 0x7FFFFFFF
        payload = self.buf[9:9 + length]
        self.buf = self.buf[9 + length:]
        self._track(ftype, flags, sid, payload)
        return ftype, flags, sid, payload

    def _track(self, ftype, flags, sid, payload):
        if ftype == SETTINGS and not flags & ACK:
            self.settings = True
            self.send(frame(SETTINGS, ACK, 0))
        elif ftype == PING and flags & ACK:
            self.pings.append(payload)
        elif ftype == HEADERS:
            st = self.stream(sid)
            st.headers += 1
            st.ended |= bool(flags & END_STREAM)
        elif ftype == DATA:
            st = self.stream(sid)
            st.data += payload
            st.ended |= bool(flags & END_STREAM)
        elif ftype == RST_STREAM:
            self.stream(sid).reset = struct.unpack(">I", payload)[0]
        elif ftype == GOAWAY:
            last, code = struct.unpack(">II", payload[:8])
            self.goaway = (last & 0x7FFFFFFF, code)

    def read_until(self, cond, timeout=5.0):
        deadline = time.monotonic() + timeout
        while not cond():
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            if self.read_frame() is None:
                break
        return cond()

    def done(self, *sids):
        return lambda: all(self.stream(s).ended or self.stream(s).reset
                           is not None for s in sids)

    def read_to_eof(self, timeout=5.0):
        return self.read_until(lambda: self.eof, timeout)

    def close(self):
        self.sock.close()


def get_frames(sid, path):
    return frame(HEADERS, END_STREAM | END_HEADERS, sid,
                 request_block(b"GET", path))


def post_frames(sid, path, body, declared=None, end=True):
    headers = []
    if declared is not None:
        headers.append((b"content-length", str(declared).encode()))
    out = frame(HEADERS, END_HEADERS, sid,
                request_block(b"POST", path, headers))
    return out + frame(DATA, END_STREAM if end else 0, sid, body)


# ---- tool output parsing ----------------------------------------------------

def nghttp_statuses(out):
    """':status' values in order of arrival from `nghttp -v` output."""
    return [int(m) for m in re.findall(rb"\) :status: (\d+)", out)]


def curl(*args, timeout=60):
    need("curl")
    return run(["curl", "-s", "--max-time", "30", *args], timeout=timeout)


# ---- basics -------------------------------------------------------------------

def test_prior_knowledge_ping(h2_server):
    r = curl("--http2-prior-knowledge", "-i", url(h2_server, "/ping"))
    assert r.returncode == 0, r.stderr
    head, body = r.stdout.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    assert lines[0].strip() == "HTTP/2 200"
    hdrs = dict(line.split(": ", 1) for line in lines[1:])
    assert hdrs["content-type"] == "text/plain"
    assert hdrs["content-length"] == "4"
    assert hdrs["server"] == "evloop"
    assert re.match(r"\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT$",
                    hdrs["date"])
    assert body == b"pong"


@pytest.mark.parametrize("size", [0, 1, 64, 2047, 2048, 4096, 16384, 16385,
                                  100000, 1048576])
def test_echo_size_exact(h2_server, size):
    r = curl("--http2-prior-knowledge", url(h2_server,
                                            f"/echo?size={size}"))
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"x" * size


def test_echo_default_and_bad_sizes(h2_server):
    need("nghttp")
    urls = [url(h2_server, p) for p in
            ("/echo", "/echo?size=1048577", "/echo?size=abc", "/nope",
             "/ping")]
    r = run(["nghttp", "-v", *urls])
    assert r.returncode == 0, r.stderr
    # nghttp prints bodies as they complete; all five on one connection.
    assert sorted(nghttp_statuses(r.stdout)) == [200, 200, 400, 400, 404]
    assert b"x" * 64 in r.stdout
    assert r.stdout.count(b"Connected") == 1


def test_method_not_allowed(h2_server):
    r = curl("--http2-prior-knowledge", "-i", "-X", "DELETE",
             url(h2_server, "/echo"))
    head = r.stdout.split(b"\r\n\r\n", 1)[0].decode().lower()
    assert head.startswith("http/2 405")
    assert "allow: get, head, post" in head
    r = curl("--http2-prior-knowledge", "-i", "-X", "POST",
             url(h2_server, "/ping"))
    head = r.stdout.split(b"\r\n\r\n", 1)[0].decode().lower()
    assert head.startswith("http/2 405") and "allow: get, head" in head


def test_head_has_length_but_no_body(h2_server):
    r = curl("--http2-prior-knowledge", "-I",
             url(h2_server, "/echo?size=1048576"))
    assert r.returncode == 0, r.stderr
    head = r.stdout.decode().lower()
    assert head.startswith("http/2 200")
    assert "content-length: 1048576" in head
    assert r.stdout.endswith(b"\r\n\r\n")


@pytest.mark.parametrize("size", [1, 1000, 65536, 1048576, 4 << 20])
def test_post_echo_exact(h2_server, tmp_path, size):
    body = random.Random(size).randbytes(size)
    path = tmp_path / "body"
    path.write_bytes(body)
    r = curl("--http2-prior-knowledge", "--data-binary", f"@{path}",
             url(h2_server, "/echo"))
    assert r.returncode == 0, r.stderr
    assert r.stdout == body


def test_post_echo_without_content_length(h2_server, tmp_path):
    """A streamed upload (no content-length) through several windows."""
    body = random.Random(7).randbytes(3 << 20)
    path = tmp_path / "body"
    path.write_bytes(body)
    r = curl("--http2-prior-knowledge", "-X", "POST", "-T", str(path),
             "-H", "Content-Length:", url(h2_server, "/echo"))
    assert r.returncode == 0, r.stderr
    assert r.stdout == body


def test_large_response_small_client_window(h2_server):
    """1 MiB out through a 16 KiB stream/connection window: hundreds of
    WINDOW_UPDATE round trips."""
    need("nghttp")
    r = run(["nghttp", "-w", "14", "-W", "14",
             url(h2_server, "/echo?size=1048576")])
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"x" * 1048576


def test_http1_still_served_on_the_same_port(h2_server):
    r = curl("--http1.1", "-i", url(h2_server, "/ping"))
    assert r.stdout.startswith(b"HTTP/1.1 200 OK\r\n")
    assert r.stdout.endswith(b"\r\n\r\npong")
    s = socket.create_connection(("127.0.0.1", h2_server.port), timeout=5)
    s.sendall(b"GET /echo?size=3 HTTP/1.1\r\nHost: t\r\n\r\n")
    data = b""
    while not data.endswith(b"xxx"):
        chunk = s.recv(4096)
        assert chunk, data
        data += chunk
    assert data.startswith(b"HTTP/1.1 200 OK\r\n")
    s.close()


# ---- Upgrade: h2c ------------------------------------------------------------

def test_upgrade_get(h2_server):
    r = curl("--http2", "-v", url(h2_server, "/echo?size=100000"))
    assert r.returncode == 0, r.stderr
    assert b"HTTP/1.1 101 Switching Protocols" in r.stderr
    assert b"< HTTP/2 200" in r.stderr
    assert r.stdout == b"x" * 100000


def test_upgrade_head(h2_server):
    r = curl("--http2", "-I", url(h2_server, "/ping"))
    assert r.returncode == 0, r.stderr
    text = r.stdout.decode().lower()
    assert "101 switching protocols" in text
    assert "http/2 200" in text and "content-length: 4" in text


def test_upgrade_ignored_for_post_with_body(h2_server):
    r = curl("--http2", "-v", "--data-binary", "hello",
             url(h2_server, "/echo"))
    assert r.returncode == 0, r.stderr
    # The status line, not the bare digits: the port number may hold "101".
    assert b"< HTTP/1.1 101" not in r.stderr
    assert b"< HTTP/1.1 200 OK" in r.stderr
    assert r.stdout == b"hello"


def raw_upgrade_request(settings=b"AAMAAABkAAQAAP__"):
    return (b"GET /ping HTTP/1.1\r\nHost: t\r\nConnection: Upgrade, "
            b"HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: " + settings
            + b"\r\n\r\n")


def test_upgrade_raw_with_pipelined_preface(h2_server):
    """Request, preface and a second stream in one write: the bytes after
    the head go to the h2 handler."""
    c = RawH2(h2_server.port, preface=False)
    c.send(raw_upgrade_request() + RawH2.preface()
           + get_frames(3, b"/echo?size=5"))
    while b"\r\n\r\n" not in c.buf:
        assert c._fill(), c.buf
    head, c.buf = c.buf.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 101 Switching Protocols\r\n")
    assert b"\r\nUpgrade: h2c" in head
    assert c.read_until(c.done(1, 3))
    assert c.stream(1).data == b"pong"
    assert c.stream(3).data == b"xxxxx"
    c.close()


def test_upgrade_with_bad_settings_stays_http1(h2_server):
    s = socket.create_connection(("127.0.0.1", h2_server.port), timeout=5)
    s.sendall(raw_upgrade_request(settings=b"not base64!"))
    data = b""
    while not data.endswith(b"pong"):
        chunk = s.recv(4096)
        assert chunk, data
        data += chunk
    assert data.startswith(b"HTTP/1.1 200 OK\r\n")
    s.close()


# ---- many streams, flow control, limits -------------------------------------

def test_hundred_streams_in_one_write(h2_server):
    """The seed answered at most 16 streams per read; every one must be."""
    c = RawH2(h2_server.port, preface=False)
    sids = list(range(1, 201, 2))
    c.send(RawH2.preface() + b"".join(get_frames(s, b"/ping") for s in sids))
    assert c.read_until(c.done(*sids), timeout=10)
    for s in sids:
        assert c.stream(s).data == b"pong", s
        assert c.stream(s).reset is None
    c.close()


def test_h2load_many_streams(h2_server):
    need("h2load")
    r = run(["h2load", "-n", "2000", "-c", "2", "-m", "100",
             url(h2_server, "/ping")])
    res = h2load_summary(r.stdout)
    assert res["succeeded"] == 2000 and res["2xx"] == 2000, res
    assert res["failed"] == 0 and res["errored"] == 0, res


def test_h2load_big_bodies_both_ways(h2_server, tmp_path):
    need("h2load")
    r = run(["h2load", "-n", "40", "-c", "2", "-m", "10",
             url(h2_server, "/echo?size=1048576")])
    res = h2load_summary(r.stdout)
    assert res["succeeded"] == 40 and res["failed"] == 0, res
    body = tmp_path / "body"
    body.write_bytes(os.urandom(65536))
    r = run(["h2load", "-n", "200", "-c", "2", "-m", "10", "-d", str(body),
             url(h2_server, "/echo")])
    res = h2load_summary(r.stdout)
    assert res["succeeded"] == 200 and res["2xx"] == 200, res
    assert res["failed"] == 0 and res["errored"] == 0, res


def test_content_length_mismatch_resets_stream(h2_server):
    c = RawH2(h2_server.port)
    c.send(post_frames(1, b"/echo", b"12345", declared=10))
    assert c.read_until(c.done(1))
    assert c.stream(1).reset == PROTOCOL_ERROR
    # The connection lives on.
    c.send(get_frames(3, b"/ping"))
    assert c.read_until(c.done(3))
    assert c.stream(3).data == b"pong"
    assert c.goaway is None
    c.close()


def test_body_limit_per_stream(make_server, tmp_path):
    s = make_server("--max-body", "1000")
    # Declared too large: refused when the HEADERS arrive.
    c = RawH2(s.port)
    c.send(post_frames(1, b"/echo", b"a" * 2000, declared=2000))
    assert c.read_until(c.done(1))
    assert c.stream(1).data == b"Content Too Large\n"
    # Undeclared: refused once the DATA passes the limit.
    c.send(post_frames(3, b"/echo", b"b" * 800, end=False)
           + frame(DATA, END_STREAM, 3, b"b" * 800))
    assert c.read_until(c.done(3))
    assert c.stream(3).data == b"Content Too Large\n"
    # At the limit, and a GET afterwards: same connection, still fine.
    c.send(post_frames(5, b"/echo", b"c" * 1000, declared=1000)
           + get_frames(7, b"/ping"))
    assert c.read_until(c.done(5, 7))
    assert c.stream(5).data == b"c" * 1000
    assert c.stream(7).data == b"pong"
    assert c.goaway is None
    c.close()

    need("nghttp")
    big = tmp_path / "big"
    big.write_bytes(b"z" * 2000)
    # Two requests on one connection (nghttp drops duplicate URIs).
    r = run(["nghttp", "-v", "-d", str(big), url(s, "/echo"),
             url(s, "/echo?again")])
    assert r.returncode == 0, r.stderr
    assert nghttp_statuses(r.stdout) == [413, 413]
    assert r.stdout.count(b"Connected") == 1
    small = tmp_path / "small"
    small.write_bytes(b"y" * 1000)
    r = run(["nghttp", "-v", "-d", str(small), url(s, "/echo")])
    assert nghttp_statuses(r.stdout) == [200]


# ---- connection lifecycle ----------------------------------------------------

def test_invalid_preface_is_closed_silently(h2_server):
    s = socket.create_connection(("127.0.0.1", h2_server.port), timeout=5)
    s.sendall(b"INVALID CONNECTION PREFACE\r\n\r\n")
    assert s.recv(4096) == b""
    s.close()


def test_stream_id_going_backwards_is_a_connection_error(h2_server):
    c = RawH2(h2_server.port)
    c.send(get_frames(5, b"/ping") + get_frames(3, b"/ping"))
    assert c.read_to_eof()
    assert c.goaway is not None and c.goaway[1] == PROTOCOL_ERROR
    c.close()


def test_client_goaway_closes_idle_connection(h2_server):
    c = RawH2(h2_server.port)
    c.send(get_frames(1, b"/ping"))
    assert c.read_until(c.done(1))
    c.send(frame(GOAWAY, 0, 0, struct.pack(">II", 1, NO_ERROR)))
    assert c.read_to_eof()
    c.close()


def test_ping_is_answered(h2_server):
    c = RawH2(h2_server.port)
    c.send(frame(PING, 0, 0, b"12345678"))
    assert c.read_until(lambda: c.pings)
    assert c.pings == [b"12345678"]
    c.close()


def test_goaway_on_sigterm(make_server):
    s = make_server()
    c = RawH2(s.port)
    assert c.read_until(lambda: c.settings)  # an idle, established session
    s.sigterm()
    assert c.read_until(lambda: c.goaway is not None, timeout=3)
    assert c.goaway == (0, NO_ERROR)
    assert c.read_to_eof(timeout=3)
    assert s.proc.wait(5) == 0
    c.close()


def test_sigterm_lets_streams_in_flight_finish(make_server):
    s = make_server()
    c = RawH2(s.port)
    # Half an upload: stream 1 is in flight when the signal arrives.
    c.send(post_frames(1, b"/echo", b"12345", declared=10, end=False))
    time.sleep(0.2)
    s.sigterm()
    assert c.read_until(lambda: c.goaway is not None, timeout=3)
    assert c.goaway == (1, NO_ERROR)
    c.send(frame(DATA, END_STREAM, 1, b"67890"))
    assert c.read_until(c.done(1))
    assert c.stream(1).data == b"1234567890"
    assert c.read_to_eof(timeout=3)
    assert s.proc.wait(5) == 0
    c.close()


def test_idle_timeout_sends_goaway(make_server):
    s = make_server("--idle-timeout", "300")
    c = RawH2(s.port)
    c.send(get_frames(1, b"/ping"))
    t0 = time.monotonic()
    assert c.read_until(lambda: c.goaway is not None, timeout=5)
    took = time.monotonic() - t0
    assert c.goaway == (1, NO_ERROR)
    assert c.stream(1).data == b"pong"
    assert c.read_to_eof(timeout=3)
    assert 0.2 < took < 2.5, took
    c.close()


# ---- conformance --------------------------------------------------------------

def h2spec_binary():
    if not H2SPEC.exists():
        missing("h2spec is not installed in build/tools (scripts/setup.sh installs it)")
    return str(H2SPEC)


def test_h2spec_clean(make_server):
    binary = h2spec_binary()
    s = make_server()
    r = run([binary, "-h", "127.0.0.1", "-p", str(s.port), "--path", "/echo",
             "-o", "2"], timeout=600)
    out = r.stdout.decode(errors="replace")
    m = re.search(r"(\d+) tests, (\d+) passed, (\d+) skipped, (\d+) failed",
                  out)
    assert m, out[-3000:]
    total, passed, skipped, failed = map(int, m.groups())
    assert failed == 0 and skipped == 0, out[-3000:]
    assert passed == total >= 145


def test_body_deadline_counts_from_each_streams_own_start(make_server):
    """--body-timeout is per stream and counts from that stream's HEADERS: a
    stream opened just before the connection's deadline check is not late (its
    pause clock starts when it opens, not at 0), while one that has sent
    nothing for the whole timeout gets 408."""
    s = make_server("--body-timeout", "1000")
    c = RawH2(s.port)
    c.send(frame(HEADERS, END_HEADERS, 1,
                 request_block(b"POST", b"/echo", [(b"content-length", b"2")])))
    time.sleep(0.8)
    c.send(frame(HEADERS, END_HEADERS, 3,
                 request_block(b"POST", b"/echo", [(b"content-length", b"2")])))
    assert c.read_until(lambda: c.stream(1).headers > 0, timeout=3)
    assert c.stream(3).headers == 0, "a fresh stream was timed out"
    c.send(frame(DATA, END_STREAM, 3, b"ok"))
    assert c.read_until(c.done(1, 3), timeout=3)
    assert c.stream(3).data == b"ok"
    c.close()
