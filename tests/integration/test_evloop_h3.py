"""HTTP/3 in the C server (https_bench_server --h3 yes: QUIC on the TCP port's number over UDP, from
the same event loop), on its ASan/UBSan build (EVLOOP_TLS_BIN or build/asan/https_bench_server).

Two independent HTTP/3 clients speak to it: ngtcp2's (gtlsclient, on GnuTLS) and the lab's h3load
(quinn + h3 on rustls). Hostile datagrams are made here: garbage, truncated headers, a version the
server does not speak (it must answer with Version Negotiation), and a flood of Initials that
cannot be decrypted. As for every C-server test, the server must be alive at the end, exit 0 on
SIGTERM and have printed no sanitizer report."""
from __future__ import annotations

import json
import os
import random
import shutil
import socket
import struct
import subprocess
from pathlib import Path

import pytest

from evloop_process import Server, finish, missing, need, run

REPO = Path(__file__).resolve().parents[2]
DEFAULT_BIN = REPO / "build" / "asan" / "https_bench_server"
H3LOAD = REPO / "build" / "tools" / "h3load"
BODY = bytes(range(256)) * 17 + b"end"   # 4355 bytes, no two halves alike


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    need("openssl")
    d = tmp_path_factory.mktemp("h3")
    crt, key = d / "cert.pem", d / "key.pem"
    r = run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-subj", "/CN=localhost", "-days", "2", "-keyout", str(key), "-out", str(crt)])
    assert r.returncode == 0, r.stderr
    return crt, key


def start(cert, *args: str) -> Server:
    return Server("--bind", "127.0.0.1", "--h3", "yes", *args,
                  binary=os.environ.get("EVLOOP_TLS_BIN", str(DEFAULT_BIN)), leading=(str(cert[0]), str(cert[1])))


@pytest.fixture(scope="module")
def shared(cert):
    s = start(cert)
    yield s
    finish(s, max_shutdown_s=3)


@pytest.fixture
def server(shared):
    yield shared
    assert shared.alive(), "server died: " + shared.stderr()
    shared.check_clean()


def gtls(port: int, path: str, out: Path, *args: str) -> tuple[int | None, bytes]:
    """One request with ngtcp2's client: its status and the body it saved."""
    if shutil.which("gtlsclient") is None:
        missing("ngtcp2's HTTP/3 client (gtlsclient) is missing: scripts/setup.sh")
    out.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["timeout", "10", "gtlsclient", "--exit-on-all-streams-close", "--timeout=5s", "--no-quic-dump",
                        f"--download={out}", *args, "127.0.0.1", str(port), f"https://127.0.0.1:{port}{path}"],
                       capture_output=True, text=True)
    status = next((int(ln.split()[-1].rstrip("]")) for ln in r.stderr.splitlines() + r.stdout.splitlines()
                   if "[:status:" in ln), None)
    name = path.rsplit("/", 1)[-1] or "index.html"
    f = out / name
    return status, f.read_bytes() if f.exists() else b""


def h3load(port: int, path: str, out: Path, *args: str) -> dict:
    if not H3LOAD.exists():
        missing("h3load is not built (scripts/build.sh)")
    r = subprocess.run([str(H3LOAD), *args, "-d", "1", "--timeout", "5", "--insecure", "--json", str(out),
                        f"https://127.0.0.1:{port}{path}"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text())


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_the_routes_answer_over_http3(server, tmp_path):
    assert gtls(server.port, "/ping", tmp_path / "a") == (200, b"pong")
    assert gtls(server.port, "/echo?size=1024", tmp_path / "b") == (200, b"x" * 1024)
    (tmp_path / "body.bin").write_bytes(BODY)
    assert gtls(server.port, "/echo", tmp_path / "c", "-m", "POST", "-d", str(tmp_path / "body.bin")) == (200, BODY)
    assert gtls(server.port, "/nowhere", tmp_path / "d")[0] == 404
    assert gtls(server.port, "/ping", tmp_path / "e", "-m", "POST", "-d", str(tmp_path / "body.bin"))[0] == 405


def test_a_body_over_max_body_is_413(cert, tmp_path):
    s = start(cert, "--max-body", "1000")
    try:
        (tmp_path / "body.bin").write_bytes(BODY)
        assert gtls(s.port, "/echo", tmp_path / "a", "-m", "POST", "-d", str(tmp_path / "body.bin"))[0] == 413
        assert gtls(s.port, "/ping", tmp_path / "b") == (200, b"pong")     # the connection-level state is fine
    finally:
        finish(s)


def load_round(port: int, tmp_path: Path) -> None:
    """GET /echo 1 KiB and POST /echo 4355 bytes, 20 connections × 10 streams, 1 s each: every
    request answered 200 with its body, nothing else."""
    (tmp_path / "body.bin").write_bytes(BODY)
    get = h3load(port, "/echo?size=1024", tmp_path / "get.json", "-c", "20", "-m", "10")
    post = h3load(port, "/echo", tmp_path / "post.json", "-c", "20", "-m", "10", "--body", str(tmp_path / "body.bin"))
    for doc, size in ((get, 1024), (post, len(BODY))):
        assert doc["errors"] == {"connect": 0, "stream": 0, "timeout": 0} and doc["connected"] == 20
        n = doc["requests_window"]
        assert n > 200 and doc["status_counts"] == {"200": n} and doc["body_bytes_window"] == n * size
        assert doc["alpn"] == "h3"


def test_load_from_a_second_client_is_all_answered(server, tmp_path):
    load_round(server.port, tmp_path)


def test_memory_settles_under_repeated_load(cert, tmp_path):
    """On the bench build (ASan's quarantine holds freed memory, so its RSS climbs by design): the
    third round of load holds no more than the second (streams pooled, connections freed); a leak
    per request or per connection would grow by megabytes."""
    bench = REPO / "build" / "bench" / "https_bench_server"
    if not bench.exists():
        missing("the bench build is missing (scripts/build.sh)")
    s = Server("--bind", "127.0.0.1", "--h3", "yes", binary=str(bench), leading=(str(cert[0]), str(cert[1])))
    try:
        runs = []
        for _ in range(3):
            load_round(s.port, tmp_path)
            runs.append(rss_kib(s.proc.pid))
        assert runs[2] - runs[1] < 4 * 1024, runs
        assert runs[2] < 128 * 1024, runs
    finally:
        finish(s)


def _long_header(version: int, dcid: bytes, scid: bytes, rest: bytes, first: int = 0xC0) -> bytes:
    return bytes([first]) + struct.pack(">I", version) + bytes([len(dcid)]) + dcid + bytes([len(scid)]) + scid + rest


def test_an_unknown_version_gets_version_negotiation(server):
    dcid, scid = os.urandom(8), os.urandom(8)
    pkt = _long_header(0x1A2A3A4A, dcid, scid, b"\x00" * 1200)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(3)
        s.sendto(pkt, ("127.0.0.1", server.port))
        data, _ = s.recvfrom(2048)
    assert data[0] & 0x80 and struct.unpack(">I", data[1:5])[0] == 0      # a Version Negotiation packet
    n = data[5]
    assert data[6:6 + n] == scid                                          # addressed to the client's SCID
    m = data[6 + n]
    assert data[7 + n:7 + n + m] == dcid
    versions = [struct.unpack(">I", data[i:i + 4])[0] for i in range(7 + n + m, len(data), 4)]
    assert 1 in versions, versions


def test_hostile_datagrams_are_dropped_and_it_serves_on(cert, tmp_path):
    s = start(cert, "--max-conns", "64", "--handshake-timeout", "1000")
    try:
        rnd = random.Random(7)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            for i in range(3000):
                kind = i % 4
                if kind == 0:      # garbage of any size
                    pkt = rnd.randbytes(rnd.randint(1, 1500))
                elif kind == 1:    # a long header cut short
                    pkt = _long_header(1, rnd.randbytes(8), rnd.randbytes(8), b"")[: rnd.randint(1, 22)]
                elif kind == 2:    # a short header for no connection of ours
                    pkt = bytes([0x40]) + rnd.randbytes(rnd.randint(20, 1200))
                else:              # an Initial whose payload is noise: a handshake that cannot start
                    pkt = _long_header(1, rnd.randbytes(8), rnd.randbytes(8), b"\x00\x44\xd0" + rnd.randbytes(1250))
                u.sendto(pkt, ("127.0.0.1", s.port))
        assert s.alive(), s.stderr()
        assert gtls(s.port, "/ping", tmp_path / "a") == (200, b"pong")
        assert rss_kib(s.proc.pid) < 512 * 1024
    finally:
        finish(s)


def _fake_initial(rnd: random.Random, token: bytes = b"") -> bytes:
    """A client Initial by its header (version 1, 8-byte DCID and SCID, the token, a 1232-byte
    length) whose payload is noise: it parses, and cannot be decrypted."""
    return _long_header(1, rnd.randbytes(8), rnd.randbytes(8),
                        bytes([len(token)]) + token + b"\x44\xd0" + rnd.randbytes(1250))


def test_beyond_its_handshake_budget_a_client_must_retry(cert, tmp_path):
    """--h3-max-handshakes 0: every new client is sent a Retry and must come back with its token
    (ngtcp2's client and quinn's both do), and then is served."""
    s = start(cert, "--h3-max-handshakes", "0")
    try:
        r = subprocess.run(["timeout", "10", "gtlsclient", "--exit-on-all-streams-close", "--timeout=5s",
                            "127.0.0.1", str(s.port), f"https://127.0.0.1:{s.port}/ping"],
                           capture_output=True, text=True)
        said = r.stdout + r.stderr
        assert "type=Retry" in said and "[:status: 200]" in said, said[-3000:]
        doc = h3load(s.port, "/ping", tmp_path / "load.json", "-c", "20", "-m", "2")
        assert doc["connected"] == 20 and doc["errors"] == {"connect": 0, "stream": 0, "timeout": 0}
    finally:
        finish(s)


def _client_initials(port: int, n: int) -> list[bytes]:
    """The first datagrams of n real clients (aioquic: a ClientHello each, a DCID each), which
    this test sends and then never follows up: handshakes left hanging, as a flood leaves them."""
    import ssl
    import time

    from aioquic.quic.configuration import QuicConfiguration
    from aioquic.quic.connection import QuicConnection

    out = []
    for _ in range(n):
        c = QuicConnection(configuration=QuicConfiguration(is_client=True, alpn_protocols=["h3"],
                                                           verify_mode=ssl.CERT_NONE))
        c.connect(("127.0.0.1", port), now=time.time())
        out.append(c.datagrams_to_send(now=time.time())[0][0])
    return out


def test_a_handshake_flood_is_answered_with_retries_and_holds_no_state(cert, tmp_path):
    """1,000 real client Initials, never followed up, against a budget of 8 handshakes: 8 start
    (their server flight comes back), every other one gets a Retry, a stateless answer no larger
    than its Initial, and makes no connection; an Initial of noise makes none either, and a bad
    token is refused; a real client is still served (through a Retry)."""
    s = start(cert, "--h3-max-handshakes", "8", "--handshake-timeout", "5000")
    try:
        initials = _client_initials(s.port, 1000)
        rnd = random.Random(11)
        retries, flights, closes = set(), set(), 0
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            u.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
            for pkt in initials:
                u.sendto(pkt, ("127.0.0.1", s.port))
            for _ in range(200):
                u.sendto(_fake_initial(rnd), ("127.0.0.1", s.port))
            u.sendto(_fake_initial(rnd, token=b"\xb6" + rnd.randbytes(40)), ("127.0.0.1", s.port))
            u.settimeout(1)
            try:
                while True:
                    data, _ = u.recvfrom(4096)
                    n = data[5]
                    dcid = data[6:6 + n]                   # the client's SCID it answers
                    if data[0] & 0xF0 == 0xF0:             # long header, type Retry
                        assert len(data) < 1200
                        retries.add(dcid)
                    elif len(dcid) == 8 and any(dcid == p[15:23] for p in initials[:50]):
                        flights.add(dcid)
                    else:
                        closes += 1
            except socket.timeout:
                pass
        assert len(retries) >= 990 and len(flights) <= 8 and closes >= 1, (len(retries), len(flights), closes)
        assert s.alive(), s.stderr()
        assert gtls(s.port, "/ping", tmp_path / "a") == (200, b"pong")
    finally:
        finish(s)
