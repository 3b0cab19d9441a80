"""Integration tests for TLS in servers/evloop (https_bench_server).

Run: python3 -m pytest -q tests/integration/test_evloop_tls.py
(after `make -C servers/evloop asan`). The server under test is the ASan
build, EVLOOP_TLS_BIN or <repo>/build/asan/https_bench_server. A throwaway
RSA-2048 self-signed certificate is made in a temporary directory when the
module starts (never committed).

HTTP/1.1 is spoken through Python's ssl module; h2 through `curl`,
`nghttp`, `h2load` and h2spec. As in conftest.py, every server must still be
alive at teardown, exit 0 on SIGTERM, and have printed no sanitizer report.
"""
import os
import pathlib
import random
import re
import socket
import ssl
import time
import warnings

import pytest

from evloop_process import Server, finish, h2load_summary, missing, need, run

REPO = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_BIN = REPO / "build" / "asan" / "https_bench_server"
H2SPEC = REPO / "build" / "tools" / "h2spec"


# ---- certificate and server ----------------------------------------------------

@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    need("openssl")
    d = tmp_path_factory.mktemp("tls")
    crt, key = d / "cert.pem", d / "key.pem"
    r = run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
             "-subj", "/CN=localhost", "-days", "2", "-keyout", str(key),
             "-out", str(crt)])
    assert r.returncode == 0, r.stderr
    return crt, key


class TlsServer(Server):
    """https_bench_server (EVLOOP_TLS_BIN, default the ASan build) with the test
    certificate."""

    def __init__(self, cert, *args):
        super().__init__(*args, binary=os.environ.get("EVLOOP_TLS_BIN", str(DEFAULT_BIN)),
                         leading=(str(cert[0]), str(cert[1])))

    def url(self, path):
        return f"https://127.0.0.1:{self.port}{path}"


@pytest.fixture(scope="module")
def shared(cert):
    s = TlsServer(cert)
    yield s
    finish(s, max_shutdown_s=3)


@pytest.fixture
def server(shared):
    """The shared server; after every test it must be alive and clean."""
    yield shared
    assert shared.alive(), "server died: " + shared.stderr()
    shared.check_clean()


@pytest.fixture
def make_server(cert):
    servers = []

    def start(*args):
        s = TlsServer(cert, *args)
        servers.append(s)
        return s

    yield start
    for s in servers:
        finish(s)


# ---- an HTTP/1.1 client over ssl --------------------------------------------

def client_context(alpn=None, version=None):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if alpn is not None:
        ctx.set_alpn_protocols(alpn)
    if version is not None:
        ctx.minimum_version = ctx.maximum_version = version
    return ctx


def tls_connect(port, alpn=None, version=None, ctx=None, timeout=10.0,
                session=None):
    ctx = ctx or client_context(alpn, version)
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    # Ragged EOFs raise, so a clean close shows that close_notify came.
    return ctx.wrap_socket(raw, server_hostname="localhost",
                           suppress_ragged_eofs=False, session=session)


class Reader:
    """Reads HTTP/1.1 responses (Content-Length framed) off a socket."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def _fill(self):
        data = self.sock.recv(1 << 20)
        if not data:
            raise EOFError("connection closed")
        self.buf += data

    def response(self):
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {}
        for line in lines[1:]:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
        n = int(headers.get("content-length", "0"))
        while len(self.buf) < n:
            self._fill()
        body, self.buf = self.buf[:n], self.buf[n:]
        return status, headers, body

    def at_eof(self):
        """True once the peer closed cleanly (close_notify, then EOF)."""
        try:
            return self.sock.recv(1) == b""
        except ssl.SSLEOFError:
            return False


def get(path, keep=True):
    conn = "" if keep else "Connection: close\r\n"
    return (f"GET {path} HTTP/1.1\r\nHost: localhost\r\n{conn}\r\n"
            .encode())


def post(path, body):
    return (f"POST {path} HTTP/1.1\r\nHost: localhost\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def h1_roundtrip(port, request, **kw):
    with tls_connect(port, **kw) as s:
        s.sendall(request)
        return Reader(s).response()


def h2_get(url, *args):
    need("curl")
    return run(["curl", "-sk", "--http2", "--max-time", "30", *args, url])


def partial_client_hello(nbytes):
    """The first nbytes of a real ClientHello, made with a memory BIO."""
    ctx = client_context(["h2", "http/1.1"])
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        obj.do_handshake()
    hello = outgoing.read()
    assert hello[0] == 0x16 and len(hello) > nbytes
    return hello[:nbytes]


def wait_eof(sock, timeout):
    """Seconds until the peer closed (EOF or reset), or None."""
    t0 = time.monotonic()
    sock.settimeout(timeout)
    try:
        while sock.recv(4096):
            pass
    except (ConnectionResetError, socket.timeout):
        if time.monotonic() - t0 >= timeout:
            return None
    return time.monotonic() - t0


# ---- ALPN and versions -------------------------------------------------------

def test_alpn_h2_selects_http2(server):
    with tls_connect(server.port, alpn=["h2", "http/1.1"]) as s:
        assert s.selected_alpn_protocol() == "h2"
        # The server speaks first in h2: its SETTINGS frame (type 4).
        s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes(
            [0, 0, 0, 4, 0, 0, 0, 0, 0]))
        head = b""
        while len(head) < 9:
            head += s.recv(9 - len(head))
        assert head[3] == 4
    r = h2_get(server.url("/ping"), "-w", "\n%{http_version}")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"pong\n2"
    need("nghttp")
    r = run(["nghttp", "-v", server.url("/ping")])
    assert r.returncode == 0, r.stderr
    assert b"The negotiated protocol: h2" in r.stdout
    assert re.search(rb"\) :status: 200", r.stdout)
    assert b"pong" in r.stdout


def test_alpn_http11_selects_http1(server):
    with tls_connect(server.port, alpn=["http/1.1"]) as s:
        assert s.selected_alpn_protocol() == "http/1.1"
        s.sendall(get("/ping"))
        status, headers, body = Reader(s).response()
    assert (status, body) == (200, b"pong")
    assert headers["server"] == "evloop"


def test_upgrade_h2c_over_tls_is_ignored(server):
    """h2c is the cleartext token; over TLS h2 comes only through ALPN (RFC 7540 3.3),
    so the request is answered as HTTP/1.1 instead of with 101."""
    with tls_connect(server.port, alpn=["http/1.1"]) as s:
        s.sendall(b"GET /ping HTTP/1.1\r\nHost: t\r\nConnection: Upgrade, HTTP2-Settings\r\n"
                  b"Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n")
        status, headers, body = Reader(s).response()
    assert (status, body) == (200, b"pong")


@pytest.mark.parametrize("alpn", [None, ["spdy/3", "foo"]],
                         ids=["no-alpn", "unknown-alpn"])
def test_without_usable_alpn_http11_is_served(server, alpn):
    with tls_connect(server.port, alpn=alpn) as s:
        assert s.selected_alpn_protocol() is None
        s.sendall(get("/ping"))
        assert Reader(s).response()[2] == b"pong"


def test_curl_http11_over_tls(server):
    need("curl")
    r = run(["curl", "-sk", "--http1.1", "-w", "\n%{http_version}",
             server.url("/ping")])
    assert r.stdout == b"pong\n1.1", r.stderr


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2,
                                     ssl.TLSVersion.TLSv1_3],
                         ids=["tls1.2", "tls1.3"])
@pytest.mark.parametrize("alpn", [["http/1.1"], ["h2"]], ids=["h1", "h2"])
def test_tls_versions(server, version, alpn):
    with tls_connect(server.port, alpn=alpn, version=version) as s:
        assert s.version() == {ssl.TLSVersion.TLSv1_2: "TLSv1.2",
                               ssl.TLSVersion.TLSv1_3: "TLSv1.3"}[version]
        assert s.selected_alpn_protocol() == alpn[0]
        cipher = s.cipher()[0]
        # TLS 1.2 offers forward-secret AEAD suites only (RFC 7540 9.2.2).
        assert "GCM" in cipher or "CHACHA20" in cipher, cipher
        if alpn == ["http/1.1"]:
            s.sendall(get("/ping"))
            assert Reader(s).response()[2] == b"pong"


def test_tls13_preferred(server):
    with tls_connect(server.port) as s:
        assert s.version() == "TLSv1.3"


def test_tls11_refused(server):
    ctx = client_context()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            ctx.minimum_version = ssl.TLSVersion.TLSv1
            ctx.maximum_version = ssl.TLSVersion.TLSv1_1
        ctx.set_ciphers("ALL:@SECLEVEL=0")
    except (ValueError, ssl.SSLError):
        pytest.skip("this OpenSSL cannot offer TLS 1.1")
    with pytest.raises((ssl.SSLError, ConnectionResetError, OSError)):
        tls_connect(server.port, ctx=ctx).close()
    assert h1_roundtrip(server.port, get("/ping"))[2] == b"pong"


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2,
                                     ssl.TLSVersion.TLSv1_3],
                         ids=["tls1.2", "tls1.3"])
def test_session_resumption(server, version):
    ctx = client_context(["http/1.1"], version)
    with tls_connect(server.port, ctx=ctx) as s:
        # TLS 1.3 tickets come after the handshake: read a response first.
        s.sendall(get("/ping"))
        Reader(s).response()
        sess = s.session
    assert sess is not None
    with tls_connect(server.port, ctx=ctx, session=sess) as s:
        assert s.session_reused
        s.sendall(get("/ping"))
        assert Reader(s).response()[2] == b"pong"


# ---- exact bodies ----------------------------------------------------------------

SIZES = [0, 1, 4095, 16384, 16385, 65536, 262145, 1048576]


@pytest.mark.parametrize("size", SIZES)
def test_echo_size_h1(server, size):
    status, headers, body = h1_roundtrip(server.port,
                                         get(f"/echo?size={size}"))
    assert status == 200
    assert int(headers["content-length"]) == size
    assert body == b"x" * size


@pytest.mark.parametrize("size", SIZES)
def test_echo_size_h2(server, size):
    r = h2_get(server.url(f"/echo?size={size}"))
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"x" * size


def test_ping_both_protocols(server):
    assert h1_roundtrip(server.port, get("/ping"))[:3:2] == (200, b"pong")
    assert h2_get(server.url("/ping")).stdout == b"pong"


@pytest.mark.parametrize("size", [65536, 1048576], ids=["64k", "1m"])
def test_post_echo_h1(server, size):
    body = random.Random(size).randbytes(size)
    status, _, got = h1_roundtrip(server.port, post("/echo", body))
    assert status == 200
    assert got == body


@pytest.mark.parametrize("size", [65536, 1048576], ids=["64k", "1m"])
def test_post_echo_h2(server, tmp_path, size):
    body = random.Random(size).randbytes(size)
    f = tmp_path / "body"
    f.write_bytes(body)
    r = h2_get(server.url("/echo"), "--data-binary", f"@{f}")
    assert r.returncode == 0, r.stderr
    assert r.stdout == body


def test_h2_many_streams_and_big_bodies(server, tmp_path):
    need("h2load")
    r = run(["h2load", "-n", "2000", "-c", "4", "-m", "100",
             server.url("/echo?size=100")])
    res = h2load_summary(r.stdout)
    assert res["succeeded"] == 2000, r.stdout.decode()
    body = tmp_path / "body"
    body.write_bytes(os.urandom(65536))
    r = run(["h2load", "-n", "200", "-c", "2", "-m", "10", "-d", str(body),
             server.url("/echo")])
    res = h2load_summary(r.stdout)
    assert res["succeeded"] == 200, r.stdout.decode()


def test_h2_preface_without_alpn_is_http1(server):
    # Over TLS, h2 is entered through ALPN only (RFC 9113 3.3): the
    # preface is an HTTP/1 request line with an unsupported version.
    with tls_connect(server.port) as s:
        assert s.selected_alpn_protocol() is None
        s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        rd = Reader(s)
        assert rd.response()[0] == 505
        assert rd.at_eof()


# ---- HTTP/1.1 pipelining over TLS -------------------------------------------------

def test_pipelined_sixteen_in_one_send(server):
    paths = [f"/echo?size={i * 100}" if i % 2 else "/ping" for i in range(16)]
    with tls_connect(server.port, alpn=["http/1.1"]) as s:
        s.sendall(b"".join(get(p) for p in paths))
        rd = Reader(s)
        for i, p in enumerate(paths):
            status, _, body = rd.response()
            assert status == 200
            assert body == (b"x" * (i * 100) if i % 2 else b"pong"), p


def test_pipelined_burst_larger_than_the_read_buffer(server):
    # ~60 KiB of requests: more than the 32 KiB read buffer, so OpenSSL
    # holds records the socket no longer announces (tls_pending).
    n = 1000
    with tls_connect(server.port, alpn=["http/1.1"]) as s:
        s.sendall(b"".join(get(f"/echo?size={i % 7}") for i in range(n)))
        rd = Reader(s)
        for i in range(n):
            assert rd.response()[2] == b"x" * (i % 7)


def test_close_sends_close_notify(server):
    with tls_connect(server.port, alpn=["http/1.1"]) as s:
        s.sendall(get("/ping", keep=False))
        rd = Reader(s)
        assert rd.response()[2] == b"pong"
        assert rd.at_eof(), "no close_notify before EOF"


# ---- broken clients ------------------------------------------------------------------

@pytest.mark.parametrize("hello", [
    b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
    random.Random(7).randbytes(600),
    b"\x16\x03\x01\x00\x05\x01\x00\x00\x01\x00",  # a record with a bad hello
], ids=["plaintext-http", "random", "bad-handshake"])
def test_garbage_client_hello_closes_only_that_connection(server, hello):
    other = tls_connect(server.port, alpn=["http/1.1"])
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
        s.sendall(hello)
        assert wait_eof(s, 5) is not None, "connection not closed"
    other.sendall(get("/ping"))
    assert Reader(other).response()[2] == b"pong"
    other.close()
    assert h1_roundtrip(server.port, get("/ping"))[2] == b"pong"


def test_stalled_handshake_times_out(make_server):
    s = make_server("--handshake-timeout", "300")
    other = tls_connect(s.port, alpn=["http/1.1"])
    with socket.create_connection(("127.0.0.1", s.port), timeout=5) as raw:
        raw.sendall(partial_client_hello(40))
        took = wait_eof(raw, 5)
    assert took is not None and 0.2 < took < 1.5, took
    # An established connection is not held to the handshake timeout.
    time.sleep(0.4)
    other.sendall(get("/ping"))
    assert Reader(other).response()[2] == b"pong"
    other.close()
    assert h1_roundtrip(s.port, get("/ping"))[2] == b"pong"


def test_silent_client_times_out_too(make_server):
    s = make_server("--handshake-timeout", "300")
    with socket.create_connection(("127.0.0.1", s.port), timeout=5) as raw:
        took = wait_eof(raw, 5)
    assert took is not None and 0.2 < took < 1.5, took


def test_wrong_protocol_after_alpn_h2_is_closed(server):
    with tls_connect(server.port, alpn=["h2"]) as s:
        s.sendall(get("/ping"))   # HTTP/1 where the h2 preface must be
        data = b""
        try:
            while chunk := s.recv(65536):
                data += chunk
        except (ssl.SSLError, ConnectionResetError):
            pass
    assert b"HTTP/1.1" not in data
    assert h1_roundtrip(server.port, get("/ping"))[2] == b"pong"


# ---- many connections, shutdown -------------------------------------------------

def test_two_hundred_concurrent_connections(server):
    # Each request goes out right after its handshake and no answer is read before all 200 are
    # open, so the server holds 200 connections at once. (Sending only once all were open left the
    # first ones idle for the 200 handshakes' time, which on a loaded machine under ASan reached the
    # server's 10 s header timeout: it closed them, rightly.)
    conns = []
    try:
        for i in range(200):
            conns.append(tls_connect(server.port, alpn=["http/1.1"] if i % 2 else None))
            conns[-1].sendall(get(f"/echo?size={i}"))
        for i, s in enumerate(conns):
            status, _, body = Reader(s).response()
            assert (status, body) == (200, b"x" * i)
    finally:
        for s in conns:
            s.close()


def test_two_hundred_concurrent_h2_connections(server):
    need("h2load")
    r = run(["h2load", "-n", "2000", "-c", "200", "-m", "4",
             server.url("/ping")])
    res = h2load_summary(r.stdout)
    assert res["succeeded"] == 2000, r.stdout.decode()


def test_sigterm_exits_zero_with_connections_open(make_server):
    s = make_server()
    idle = tls_connect(s.port, alpn=["http/1.1"])
    idle.sendall(get("/ping"))
    rd = Reader(idle)
    assert rd.response()[2] == b"pong"
    half = socket.create_connection(("127.0.0.1", s.port), timeout=5)
    half.sendall(partial_client_hello(20))
    time.sleep(0.1)
    s.stopped_by_test = True
    rc, took = s.terminate()
    assert rc == 0, s.stderr()
    assert took < 3
    s.check_clean()
    # The idle keep-alive connection was closed with a close_notify.
    assert rd.at_eof()
    idle.close()
    half.close()


# ---- conformance -------------------------------------------------------------------

def test_h2spec_over_tls(make_server):
    if not H2SPEC.exists():
        missing("h2spec is not installed in build/tools "
                "(scripts/setup.sh installs it)")
    s = make_server()
    r = run([str(H2SPEC), "-t", "-k", "-h", "127.0.0.1", "-p", str(s.port),
             "--path", "/echo", "-o", "2"], timeout=600)
    out = r.stdout.decode(errors="replace")
    m = re.search(r"(\d+) tests, (\d+) passed, (\d+) skipped, (\d+) failed",
                  out)
    assert m, out[-3000:]
    total, passed, skipped, failed = map(int, m.groups())
    assert failed == 0 and skipped == 0, out[-3000:]
    assert passed == total >= 145
