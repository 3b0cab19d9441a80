"""The QUIC attack cases (HTTP/3 over UDP, against `https_bench_server --h3 yes`): handshake
floods from many source ports, the amplification limit for addresses not yet validated, datagram
floods that name no connection, request streams that hold credit and stream slots across
connections, and clients that stop reading. Each is bounded (seconds, a fixed number of sockets,
loopback only) and reports, as the TCP cases do, whether the server answered as its limit says
(servers/evloop/README.md, "HTTP/3 over QUIC")."""
from __future__ import annotations

import os
import random
import selectors
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aioquic.buffer import encode_uint_var
from aioquic.h3.connection import FrameType
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection

from attack_cases import Case, Outcome, parallel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from quic_client import RawH3, qpack_int  # noqa: E402

HOST = "127.0.0.1"
INITIAL, HANDSHAKE, RETRY = 0, 2, 3          # long-header packet types of QUIC v1
MAX_HANDSHAKES = 64                          # --h3-max-handshakes of the flood case


# ---- the server's certificate ---------------------------------------------------------------------

_CERT: tuple[str, str] | None = None


def big_certificate() -> tuple[str, str]:
    """A self-signed certificate with 400 DNS names (about 9 KB): the server's first flight is
    then three times the 1200 bytes of a client's first Initial and more, so the amplification
    limit (RFC 9000 8.1: at most 3x what an unvalidated address sent) has something to cut."""
    global _CERT
    if _CERT is None:
        d = tempfile.mkdtemp(prefix="quic-attack-")
        crt, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
        names = ",".join(f"DNS:host{i}.attack.example" for i in range(400))
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-subj", "/CN=localhost", "-days", "2", "-keyout", key, "-out", crt,
                        "-addext", f"subjectAltName=DNS:localhost,{names}"],
                       check=True, capture_output=True)
        _CERT = (crt, key)
    return _CERT


# ---- packets ----------------------------------------------------------------------------------------

def first_initial(port: int) -> tuple[bytes, bytes]:
    """A client's first Initial datagram (a real ClientHello, padded to 1200 bytes) and the
    source connection ID the server's answers will carry as their destination."""
    cfg = QuicConfiguration(is_client=True, alpn_protocols=["h3"], verify_mode=ssl.CERT_NONE)
    q = QuicConnection(configuration=cfg)
    q.connect((HOST, port), now=time.time())
    (data, _), = q.datagrams_to_send(now=time.time())
    return data, q.host_cid


def long_header(data: bytes) -> tuple[int, bytes] | None:
    """(packet type, destination connection ID) of a long-header packet, else None."""
    if len(data) < 7 or not data[0] & 0x80:
        return None
    n = data[5]
    return (data[0] >> 4) & 3, data[6:6 + n]


def drain(sock: socket.socket, seconds: float, on_datagram) -> None:
    """Reads datagrams for `seconds`, each to on_datagram(bytes)."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        sock.settimeout(min(left, 0.1))
        try:
            on_datagram(sock.recv(65536))
        except (socket.timeout, BlockingIOError):
            pass


def drain_all(socks: list[socket.socket], seconds: float, on_datagram) -> None:
    """Reads every socket's datagrams for `seconds`, each to on_datagram(index, bytes): one thread
    and one poll over all of them, so that the attacker's own reading takes little CPU from the
    legitimate client measured beside it (a thread per socket once cost it a 329 ms answer)."""
    sel = selectors.DefaultSelector()
    for i, s in enumerate(socks):
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, i)
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        for key, _ in sel.select(min(left, 0.1)):
            try:
                while True:
                    on_datagram(key.data, key.fileobj.recv(65536))
            except BlockingIOError:
                pass
    sel.close()


def udp_socket() -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    s.bind((HOST, 0))
    return s


# ---- the cases ----------------------------------------------------------------------------------------

FLOOD_SOURCES, FLOOD_PER_SOURCE, FLOOD_SECONDS = 150, 10, 1.0
_FLOOD: list[tuple[bytes, bytes]] = []


def make_flood() -> None:
    """The flood's 1500 Initials, made before the case is watched (about 2 s of the client's CPU:
    a ClientHello's key shares each). An Initial does not name the server's port."""
    _FLOOD[:] = [first_initial(0) for _ in range(FLOOD_SOURCES * FLOOD_PER_SOURCE)]


def handshake_flood(port: int, listen_s: float = 3.0) -> Outcome:
    """1500 first Initials (real ClientHellos) in 1 s from 150 source ports, never continued,
    against --h3-max-handshakes 64 and --handshake-timeout 2000: at most 64 become connections,
    the rest are answered with a Retry, and no source gets back more than three times the bytes
    it sent."""
    sources = FLOOD_SOURCES
    if not _FLOOD:
        make_flood()
    socks = [udp_socket() for _ in range(sources)]
    owner: dict[bytes, int] = {}
    packets = []
    for i, (data, cid) in enumerate(_FLOOD):
        owner[cid] = i % sources
        packets.append((i % sources, data))
    sent = [0] * sources
    got = [0] * sources
    kinds: dict[bytes, set[int]] = {}
    # sent over FLOOD_SECONDS, as a flood keeps coming (a single burst would only measure how long
    # the server takes to read through its socket's queue, in which a legitimate client's packet
    # waits its turn whatever the server does with the flood's)
    t0 = time.monotonic()
    for k, (i, data) in enumerate(packets):
        if (ahead := k / len(packets) * FLOOD_SECONDS - (time.monotonic() - t0)) > 0.002:
            time.sleep(ahead)
        socks[i].sendto(data, (HOST, port))
        sent[i] += len(data)

    def take(i: int, d: bytes) -> None:
        got[i] += len(d)
        h = long_header(d)
        if h and h[1] in owner:
            kinds.setdefault(h[1], set()).add(h[0])
    drain_all(socks, listen_s, take)
    for s in socks:
        s.close()
    taken = sum(1 for k in kinds.values() if INITIAL in k or HANDSHAKE in k)
    retried = sum(1 for k in kinds.values() if RETRY in k)
    ratio = max(g / s for g, s in zip(got, sent))
    n = len(packets)
    return Outcome(f"{n} Initials from {sources} ports: {taken} taken as connections, {retried} answered "
                   f"with a Retry, {n - taken - retried} unanswered; at most {ratio:.2f}x the bytes a "
                   f"source sent came back", cut_off=taken <= MAX_HANDSHAKES + 8 and retried >= n // 2 and ratio <= 3.0,
                   seconds_to_cut=time.monotonic() - t0,
                   detail={"initials": n, "taken": taken, "retried": retried, "max_ratio": ratio})


def amplification(port: int, clients: int = 40, listen_s: float = 3.0) -> Outcome:
    """40 clients each send one Initial and never acknowledge what comes back, to a server whose
    first flight (a 9 KB certificate) is far more than 3 x 1200 bytes: each gets at most three
    times what it sent, retransmissions included, until it proves its address."""
    socks = [udp_socket() for _ in range(clients)]
    sent, got = [0] * clients, [0] * clients
    for i, s in enumerate(socks):
        data, _ = first_initial(port)
        s.sendto(data, (HOST, port))
        sent[i] = len(data)

    def take(i: int, d: bytes) -> None:
        got[i] += len(d)
    drain_all(socks, listen_s, take)
    for s in socks:
        s.close()
    ratio = max(g / s for g, s in zip(got, sent))
    answered = sum(1 for g in got if g)
    return Outcome(f"{clients} Initials of 1200 bytes never acknowledged: {answered} answered, at most "
                   f"{max(got)} bytes ({ratio:.2f}x) to one address in {listen_s:.0f} s",
                   cut_off=answered == clients and ratio <= 3.0,
                   detail={"max_bytes": max(got), "max_ratio": ratio})


RESET_RATE, RESET_BURST, RESET_MAX_BYTES = 100, 100, 41   # servers/evloop/http3/quic_reset.h


def garbage_flood(port: int, sources: int = 16, rate: int = 20_000, seconds: float = 3.0) -> Outcome:
    """20,000 datagrams a second for 3 s that name no connection: short headers with unknown
    connection IDs, Initials too short to be one (under 1200 bytes), Initials of 1200 bytes whose
    payload cannot be decrypted, and random bytes after a short header's first bit (a long header
    of a version the server does not speak is rightly answered with Version Negotiation, which the
    integration tests check). None may make state; the short headers may be answered with
    Stateless Resets (at most 41 bytes, smaller than what they answer), no more than the server's
    bucket allows (100, then 100 a second); nothing else may be answered."""
    rnd = random.Random(7)
    socks = [udp_socket() for _ in range(sources)]
    for s in socks:
        s.setblocking(False)

    def datagram(k: int) -> bytes:
        cid = rnd.randbytes(18)
        if k == 0:
            return bytes([0x40 | rnd.randrange(64)]) + cid + rnd.randbytes(40)
        long = bytes([0xC0]) + (1).to_bytes(4, "big") + bytes([18]) + cid + bytes([8]) + rnd.randbytes(8)
        if k == 1:
            return long + rnd.randbytes(60)
        if k == 2:
            return long + bytes([0x44, 0xD0]) + rnd.randbytes(1200 - len(long) - 2)
        junk = rnd.randbytes(rnd.randrange(1, 1400))
        return bytes([0x40 | junk[0] & 0x3F]) + junk[1:]       # (a short header's form bit)
    pool = [datagram(i % 4) for i in range(2000)]
    t0 = time.monotonic()
    sent = resets = others = 0
    while (elapsed := time.monotonic() - t0) < seconds:
        while sent < elapsed * rate:
            try:
                socks[sent % sources].sendto(pool[sent % len(pool)], (HOST, port))
            except BlockingIOError:
                pass
            sent += 1
        for s in socks:
            try:
                while d := s.recv(65536):
                    if not d[0] & 0x80 and len(d) <= RESET_MAX_BYTES:
                        resets += 1
                    else:
                        others += 1
            except BlockingIOError:
                pass
        time.sleep(0.002)
    for s in socks:
        s.close()
    allowed = RESET_BURST + RESET_RATE * seconds * 1.1
    return Outcome(f"{sent} datagrams naming no connection in {seconds:.0f} s: {resets} Stateless Resets "
                   f"(the bucket allows {allowed:.0f}), {others} other answers",
                   cut_off=others == 0 and resets <= allowed,
                   detail={"sent": sent, "resets": resets, "others": others})


def _await_answers(c: RawH3, sids: list[int], seconds: float, ping_id: int) -> float | None:
    """Keeps the connection alive (a PING each round: only the requests stall) until every stream
    in sids has its whole answer; seconds that took, or None."""
    t0 = time.monotonic()
    done = lambda: all(c.responses.get(s) and c.responses[s].ended for s in sids)  # noqa: E731
    while time.monotonic() - t0 < seconds:
        c.quic.send_ping(ping_id)
        c.pump(until=done, timeout=0.3)
        if done():
            return time.monotonic() - t0
    return None


def _stalled_outcome(res: list[dict], conns: int, streams: int, what: str) -> Outcome:
    errors = [r["error"] for r in res if "error" in r]
    timeouts = sum(r.get("timeouts", 0) for r in res)
    cuts = [r["closed"] for r in res if r.get("closed") is not None]
    total = conns * streams
    return Outcome(f"{total} {what} on {conns} connections: {timeouts} answered 408"
                   + (f", slowest connection's last at {max(cuts):.1f} s" if cuts else "")
                   + (f"; client errors: {errors[:2]}" if errors else ""),
                   cut_off=timeouts == total and not errors,
                   seconds_to_cut=max(cuts) if len(cuts) == conns else None,
                   detail={"timeouts": timeouts, "total": total})


def _stalled(port: int, i: int, open_stream, streams: int, seconds: float) -> dict:
    c = RawH3(port)
    sids = [open_stream(c) for _ in range(streams)]
    cut = _await_answers(c, sids, seconds, i)
    codes = [c.responses[s].status if s in c.responses else None for s in sids]
    c.close()
    return {"closed": cut, "timeouts": codes.count(408)}


def stalled_uploads(port: int, conns: int = 10, streams: int = 100, body: int = 8192,
                    seconds: float = 8.0) -> Outcome:
    """10 connections open 100 request streams each (the server's limit), upload 8 KiB on each
    and then send nothing more, while keeping their connections alive: 1,000 stream slots and
    8 MB of uploads held. The connection budget (--h2-conn-memory, 256 KiB) withholds credit past
    it, and --body-timeout answers every stalled request 408 and stops its upload."""
    def upload(c: RawH3) -> int:
        sid = c.quic.get_next_available_stream_id()
        c.h3.send_headers(sid, [(b":method", b"POST"), (b":scheme", b"https"), (b":authority", b"localhost"),
                                (b":path", b"/echo")])
        c.h3.send_data(sid, bytes(body), end_stream=False)
        return sid
    res = parallel(conns, lambda i: _stalled(port, i, upload, streams, seconds))
    return _stalled_outcome(res, conns, streams, "stalled uploads")


def held_headers(port: int, conns: int = 10, streams: int = 100, seconds: float = 8.0) -> Outcome:
    """10 connections open 100 request streams each and send 13,000 bytes of a 14,000-byte header
    field on each, then nothing more: nghttp3 keeps every partial header block (about 1.6 MB a
    connection, counted under --h3-conn-memory), and --body-timeout, which counts from a request's
    first header byte, answers each 408 and stops it."""
    name = b"x-pad"
    block = b"\x00\x00" + qpack_int(len(name), 3, 0x20) + name + qpack_int(14_000, 7, 0x00)
    frame = encode_uint_var(FrameType.HEADERS) + encode_uint_var(len(block) + 14_000) + block + bytes(13_000)

    def partial(c: RawH3) -> int:
        sid = c.quic.get_next_available_stream_id()
        c.send_raw(sid, frame)
        return sid
    res = parallel(conns, lambda i: _stalled(port, i, partial, streams, seconds))
    return _stalled_outcome(res, conns, streams, "partial header blocks")


def no_read(port: int, conns: int = 8, streams: int = 50, idle_s: float = 2.0) -> Outcome:
    """8 connections ask 50 responses of 1 MiB each and then neither read nor acknowledge
    anything: the server may keep only what its congestion window lets it send unacknowledged
    (the bodies are not copied), and drops each connection at its idle timeout (--idle-timeout):
    a PING sent after it is not answered."""
    clients = []
    for _ in range(conns):
        c = RawH3(port)
        for _ in range(streams):
            sid = c.quic.get_next_available_stream_id()
            c.h3.send_headers(sid, [(b":method", b"GET"), (b":scheme", b"https"), (b":authority", b"localhost"),
                                    (b":path", b"/echo?size=1048576")], end_stream=True)
        c.flush()
        clients.append(c)
    time.sleep(idle_s + 1.5)                  # nothing read, nothing acknowledged
    answered = told = 0
    for i, c in enumerate(clients):
        drain(c.sock, 0.05, lambda d: None)   # what the kernel kept meanwhile
        tokens = {c.quic._peer_cid.stateless_reset_token} | {p.stateless_reset_token for p in c.quic._peer_cid_available}
        c.quic.send_ping(i)
        c.flush()
        got: list[bytes] = []
        drain(c.sock, 1.0, got.append)
        resets = [d for d in got if d[-16:] in tokens]
        told += bool(resets)
        answered += len(got) > len(resets)    # a packet of the connection: it is still held
        c.close()
    return Outcome(f"{conns} connections with {streams} 1 MiB responses each, never read: "
                   f"{conns - answered} dropped by the server at its idle timeout ({told} told so by a "
                   f"Stateless Reset when they spoke again), {answered} still answer",
                   cut_off=answered == 0, detail={"still_answering": answered, "reset": told})


def _mib(n: int) -> int:
    return n << 20


CASES = [
    Case("h3_handshake_flood", "1500 first Initials in 1 s from 150 source ports, never continued",
         "--h3-max-handshakes (Retry), the 3x amplification limit", handshake_flood, setup=make_flood,
         evloop_args=("--h3-max-handshakes", str(MAX_HANDSHAKES), "--handshake-timeout", "2000"),
         protocol="h3", rss_growth_mib=48, cpu_s=6),
    Case("h3_amplification", "40 Initials never acknowledged, against a 9 KB certificate",
         "the 3x amplification limit (RFC 9000 8.1)", amplification,
         evloop_args=("--handshake-timeout", "2000"), protocol="h3", rss_growth_mib=24, cpu_s=3),
    Case("h3_garbage_flood", "20,000 datagrams a second naming no connection",
         "dropped without state or answer", garbage_flood, protocol="h3", rss_growth_mib=16, cpu_s=5),
    Case("h3_stalled_uploads", "10 connections x 100 request streams upload 8 KiB each and stall",
         "100 streams per connection, --h2-conn-memory (credit withheld), --body-timeout (408 per stream)",
         stalled_uploads,
         evloop_args=("--body-timeout", "2000", "--max-body", str(_mib(1) // 4),
                      "--h2-conn-memory", str(_mib(1) // 4)),
         protocol="h3", rss_growth_mib=80, cpu_s=8),
    Case("h3_held_headers", "10 connections x 100 request streams hold a partial 13 KB header field each",
         "--h3-conn-memory (what nghttp3 keeps, counted), --body-timeout (408 per stream)", held_headers,
         evloop_args=("--body-timeout", "2000"), protocol="h3", rss_growth_mib=80, cpu_s=8),
    Case("h3_no_read", "8 connections ask 50 x 1 MiB and never read or acknowledge",
         "congestion window (nothing copied), --idle-timeout (connection dropped)", no_read,
         evloop_args=("--idle-timeout", "2000"), protocol="h3", rss_growth_mib=48, cpu_s=5),
]
