"""The client of the idle-connection memory measurement (scripts/idle_memory.sh): what N idle
keep-alive connections cost a server in memory.

    python -m httplab idle-client --port PORT --mode h1|h2c --conns N --server-pid PID --out FILE.json

Against a server already started (pinned, ready) on 127.0.0.1:PORT, whose process tree is PID:
  1. a warm-up: WARMUP connections make one request each and are closed (the server's one-time
     allocations, the first request's, are then behind the baseline);
  2. the server tree's memory, read once it is stable (the "before"): VmRSS, RssAnon, RssFile
     from /proc/<pid>/status and Rss/Pss from /proc/<pid>/smaps_rollup, per process;
  3. N connections are opened, at most --batch of them in flight, and each makes one real
     request (HTTP/1.1: GET /ping with keep-alive; h2c: the client preface, SETTINGS, a
     HEADERS frame for GET /ping on stream 1, SETTINGS ACK for the server's SETTINGS) and reads
     the whole answer (200, body "pong"); then it stays open and sends nothing more;
  4. the memory again once it is stable (the "after"), then each connection is checked to be
     still open (a peek that would block: neither closed nor reset by the server);
  5. every connection is closed with a reset (SO_LINGER 0: no TIME_WAIT left behind).

It writes one JSON object (raw data: httplab.parse.idle_conns reads it) and prints one line. It
needs an open-file limit above N (it raises its soft limit to the hard one) and nothing beyond
the standard library and hpack (the lab's environment).
"""
from __future__ import annotations

import argparse
import errno
import json
import os
import resource
import selectors
import socket
import struct
import sys
import time
from collections import Counter
from pathlib import Path

import hpack

TOOL_VERSION = 1
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
H2_DATA, H2_HEADERS, H2_RST, H2_SETTINGS, H2_GOAWAY = 0x0, 0x1, 0x3, 0x4, 0x7
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
SOURCES = 16   # loopback source addresses the connections come from (127.0.0.2 ...)
STATUS_FIELDS = ("VmRSS", "RssAnon", "RssFile", "RssShmem")
ROLLUP_FIELDS = ("Rss", "Pss", "Pss_Anon", "Pss_File", "Private_Dirty", "Shared_Clean")


# ---------------------------------------------------------------- the server's memory
def tree_pids(pid: int) -> list[int]:
    """PID and its descendants (a multi-process server's workers), as scripts/lib/proc.sh tree_pids."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop(0)
        if not os.path.isdir(f"/proc/{p}"):
            continue
        out.append(p)
        for task in sorted(os.listdir(f"/proc/{p}/task")) if os.path.isdir(f"/proc/{p}/task") else ():
            try:
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
            except OSError:
                pass
    return out


def _kb_fields(path: str, names: tuple[str, ...]) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        with open(path) as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in names:
                    out[key] = int(rest.split()[0])
    except OSError:
        pass
    return out


def memory(pid: int) -> dict:
    """The tree's memory now: per process its status and smaps_rollup fields (kB), and the sums."""
    procs = {}
    for p in tree_pids(pid):
        procs[str(p)] = {"status": _kb_fields(f"/proc/{p}/status", STATUS_FIELDS),
                         "smaps_rollup": _kb_fields(f"/proc/{p}/smaps_rollup", ROLLUP_FIELDS)}
    return {"pids": [int(p) for p in procs], "procs": procs,
            "vmrss_kb": sum(v["status"].get("VmRSS", 0) for v in procs.values()),
            "rss_anon_kb": sum(v["status"].get("RssAnon", 0) for v in procs.values()),
            "pss_kb": sum(v["smaps_rollup"].get("Pss", 0) for v in procs.values())}


def settled_memory(pid: int, min_s: float, max_s: float, window: int = 5, tolerance_kb: int = 16,
                   every_s: float = 0.1) -> dict:
    """memory() once the tree's VmRSS has stayed within tolerance_kb over `window` samples taken
    every_s apart, and at least min_s after the call; at max_s it is read as it is (settled false).
    The VmRSS samples are kept."""
    t0 = time.monotonic()
    samples: list[int] = []
    while True:
        m = memory(pid)
        samples.append(m["vmrss_kb"])
        waited = time.monotonic() - t0
        recent = samples[-window:]
        stable = len(recent) == window and max(recent) - min(recent) <= tolerance_kb
        if (stable and waited >= min_s) or waited >= max_s:
            m.update(settled=bool(stable), settle_s=round(waited, 3), samples_kb=samples)
            return m
        time.sleep(every_s)


# ---------------------------------------------------------------- one connection
class Conn:
    __slots__ = ("sock", "state", "buf", "body", "status", "decoder", "outq", "error")

    def __init__(self, sock: socket.socket):
        self.sock, self.state, self.buf, self.body = sock, "connecting", b"", b""
        self.status: int | None = None
        self.decoder: hpack.Decoder | None = None
        self.outq = b""
        self.error = ""


def h1_request(port: int) -> bytes:
    return f"GET /ping HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()


def _frame(ftype: int, flags: int, sid: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", sid) + payload


def h2_request(port: int) -> bytes:
    """Preface, an empty SETTINGS, HEADERS GET /ping on stream 1 (END_STREAM, END_HEADERS)."""
    block = hpack.Encoder().encode([(":method", "GET"), (":scheme", "http"), (":path", "/ping"),
                                    (":authority", f"127.0.0.1:{port}")])
    return PREFACE + _frame(H2_SETTINGS, 0, 0) + _frame(H2_HEADERS, END_STREAM | END_HEADERS, 1, block)


def h1_answer(c: Conn) -> bool | None:
    """True: a whole 200 'pong' answer is in; None: not yet; False (c.error set): a wrong one."""
    head_end = c.buf.find(b"\r\n\r\n")
    if head_end < 0:
        return None
    head = c.buf[:head_end].decode("latin-1").split("\r\n")
    parts = head[0].split(" ", 2)
    if len(parts) < 2 or not parts[1].isdigit():
        c.error = "bad status line"
        return False
    length = None
    for h in head[1:]:
        k, _, v = h.partition(":")
        if k.strip().lower() == "content-length":
            length = int(v.strip())
    if length is None:
        c.error = "no Content-Length"
        return False
    if len(c.buf) < head_end + 4 + length:
        return None
    c.status, c.body = int(parts[1]), c.buf[head_end + 4:head_end + 4 + length]
    if c.status != 200 or c.body != b"pong":
        c.error = f"answer {c.status} {c.body[:20]!r}"
        return False
    return True


def h2_answer(c: Conn) -> bool | None:
    """As h1_answer, reading frames; queues a SETTINGS ACK for the server's SETTINGS."""
    while len(c.buf) >= 9:
        length = int.from_bytes(c.buf[:3], "big")
        if len(c.buf) < 9 + length:
            return None
        ftype, flags = c.buf[3], c.buf[4]
        sid = int.from_bytes(c.buf[5:9], "big") & 0x7FFFFFFF
        payload, c.buf = c.buf[9:9 + length], c.buf[9 + length:]
        if ftype == H2_SETTINGS and not flags & ACK:
            c.outq += _frame(H2_SETTINGS, ACK, 0)
        elif ftype == H2_GOAWAY:
            c.error = f"GOAWAY code {int.from_bytes(payload[4:8], 'big')}"
            return False
        elif ftype == H2_RST and sid == 1:
            c.error = f"RST_STREAM code {int.from_bytes(payload[:4], 'big')}"
            return False
        elif ftype == H2_HEADERS and sid == 1:
            c.decoder = c.decoder or hpack.Decoder()
            for name, value in c.decoder.decode(payload):
                if name in (":status", b":status"):
                    c.status = int(value)
        elif ftype == H2_DATA and sid == 1:
            c.body += payload
        if sid == 1 and ftype in (H2_HEADERS, H2_DATA) and flags & END_STREAM:
            if c.status != 200 or c.body != b"pong":
                c.error = f"answer {c.status} {c.body[:20]!r}"
                return False
            return True
    return None


# ---------------------------------------------------------------- opening N connections
def open_conns(port: int, mode: str, n: int, batch: int, timeout_s: float) -> tuple[list[Conn], Counter]:
    """n connections, each with one request answered; returns the answered ones and a count of
    the others by what went wrong. At most `batch` are between connect and answer at a time."""
    request = h1_request(port) if mode == "h1" else h2_request(port)
    answer = h1_answer if mode == "h1" else h2_answer
    sel = selectors.DefaultSelector()
    todo, busy, done, errors = n, 0, [], Counter()
    deadline = time.monotonic() + timeout_s

    def fail(c: Conn, why: str) -> None:
        nonlocal busy
        sel.unregister(c.sock)
        close_reset(c.sock)
        errors[why] += 1
        busy -= 1

    while (todo or busy) and time.monotonic() < deadline:
        while todo and busy < batch:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            # Spread the connections over SOURCES loopback source addresses: with 20,000 of them
            # from one address the kernel's search for a free ephemeral port grows with every
            # port taken (19,900 connections took 7.0 s against 0.34 s for 5,000), long enough
            # to meet the shortest idle timeout among the servers measured (10 s).
            s.bind((f"127.0.0.{2 + todo % SOURCES}", 0))
            rc = s.connect_ex(("127.0.0.1", port))
            todo -= 1
            if rc not in (0, errno.EINPROGRESS):
                close_reset(s)
                errors[f"connect: {errno.errorcode.get(rc, rc)}"] += 1
                continue
            c = Conn(s)
            sel.register(s, selectors.EVENT_WRITE, c)
            busy += 1
        for key, _ in sel.select(timeout=0.2):
            c = key.data
            if c.state == "connecting":
                err = c.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    fail(c, f"connect: {errno.errorcode.get(err, err)}")
                    continue
                try:
                    c.sock.sendall(request)  # a few dozen bytes into an empty socket buffer
                except OSError as e:
                    fail(c, f"write: {errno.errorcode.get(e.errno or 0, e)}")
                    continue
                c.state = "waiting"
                sel.modify(c.sock, selectors.EVENT_READ, c)
                continue
            try:
                data = c.sock.recv(65536)
            except OSError as e:
                fail(c, f"read: {errno.errorcode.get(e.errno or 0, e)}")
                continue
            if not data:
                fail(c, "closed by the server before the answer")
                continue
            c.buf += data
            got = answer(c)
            if c.outq:
                try:
                    c.sock.sendall(c.outq)
                except OSError as e:
                    fail(c, f"write: {errno.errorcode.get(e.errno or 0, e)}")
                    continue
                c.outq = b""
            if got is None:
                continue
            if got is False:
                fail(c, f"wrong answer: {c.error}")
                continue
            sel.unregister(c.sock)
            busy -= 1
            c.state, c.buf, c.body, c.decoder = "idle", b"", b"", None
            done.append(c)
    for key in list(sel.get_map().values()):
        close_reset(key.fileobj)  # type: ignore[arg-type]
        errors["no answer within the timeout" if key.data.state == "waiting" else "connect timed out"] += 1
    errors["never started (timeout)"] += todo
    sel.close()
    return done, +errors


def close_reset(sock: socket.socket) -> None:
    """Close with a reset: no TIME_WAIT on the client's ports."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


def still_open(conns: list[Conn]) -> Counter:
    """Per connection: open (a read would block, or unread data waits), closed (EOF) or reset."""
    out: Counter = Counter()
    for c in conns:
        try:
            data = c.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
            out["open, data unread" if data else "closed by the server"] += 1
        except BlockingIOError:
            out["open"] += 1
        except OSError as e:
            out[f"error: {errno.errorcode.get(e.errno or 0, e)}"] += 1
    return out


def raise_nofile(need: int) -> tuple[int, int]:
    """The soft open-file limit raised to the hard one; (soft, hard) after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        sys.exit(f"idle_conns: {need} connections need an open-file limit above {need}; this process "
                 f"has {soft} (hard {hard})")
    return soft, hard


def utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--mode", choices=("h1", "h2c"), required=True)
    ap.add_argument("--conns", type=int, required=True)
    ap.add_argument("--server-pid", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--asked", type=int, help="N as asked for, when --conns is less (the open-file limit)")
    ap.add_argument("--warmup", type=int, default=64, help="connections opened and closed first")
    ap.add_argument("--batch", type=int, default=256, help="connections between connect and answer at once")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds to open them all")
    ap.add_argument("--settle-min", type=float, default=1.0, help="seconds to wait before reading memory")
    ap.add_argument("--settle-max", type=float, default=10.0, help="seconds after which memory is read as it is")
    args = ap.parse_args(argv)
    limits = raise_nofile(max(args.conns, args.warmup) + 16)
    start = utc()
    warm, warm_errors = open_conns(args.port, args.mode, args.warmup, args.batch, args.timeout)
    for c in warm:
        close_reset(c.sock)
    before = settled_memory(args.server_pid, args.settle_min, args.settle_max)
    t0 = time.monotonic()
    conns, errors = open_conns(args.port, args.mode, args.conns, args.batch, args.timeout)
    open_s = time.monotonic() - t0
    after = settled_memory(args.server_pid, args.settle_min, args.settle_max)
    held_s = time.monotonic() - t0
    states = still_open(conns)
    for c in conns:
        close_reset(c.sock)
    doc = {
        "tool": "idle_conns", "tool_version": TOOL_VERSION, "start_utc": start, "end_utc": utc(),
        "host": "127.0.0.1", "port": args.port, "mode": args.mode, "route": "/ping",
        "server_pid": args.server_pid, "conns_requested": args.conns,
        "conns_asked": args.asked or args.conns, "warmup_conns": args.warmup,
        "warmup_answered": len(warm), "warmup_errors": dict(warm_errors), "batch": args.batch,
        "answered": len(conns), "errors": dict(errors), "open_s": round(open_s, 3),
        "held_s": round(held_s, 3), "states_after": dict(states), "alive_after": states.get("open", 0)
        + states.get("open, data unread", 0), "rlimit_nofile": list(limits),
        "client_pid": os.getpid(), "client_affinity": sorted(os.sched_getaffinity(0)),
        "before": before, "after": after,
    }
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(args.out)
    per = (after["vmrss_kb"] - before["vmrss_kb"]) / args.conns if args.conns else float("nan")
    print(f"{args.mode} {args.conns} conns: {len(conns)} answered, {doc['alive_after']} open after; VmRSS "
          f"{before['vmrss_kb']} -> {after['vmrss_kb']} kB ({per:.2f} KiB per connection); opened in "
          f"{open_s:.2f} s" + (f"; errors {dict(errors)}" if errors else ""))
    return 0
