"""What the attack suite measures while a case runs: the server's memory and CPU
(read from /proc), and a legitimate HTTP/1.1 client that keeps asking GET /ping
and records how long every answer took."""
from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass, field

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _status_kib(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def cpu_seconds(pid: int) -> float:
    """User + system CPU of the process (all its threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def process_tree(pid: int) -> list[int]:
    """pid and its descendants: a server may be a master with workers (nginx)
    or keep a helper process (h2o), and the tree's sum is what it costs."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return out


def _tree_sum(pid: int, one) -> float:
    total = 0.0
    for p in process_tree(pid):
        try:
            total += one(p)
        except (OSError, KeyError, IndexError):
            pass
    return total


class ProcWatch:
    """For a server's process tree: RSS before the attack, the highest RSS
    sampled (every 20 ms) during it, and the CPU seconds spent meanwhile.
    (VmHWM would also cover start-up, so the peak is sampled.)"""

    def __init__(self, pid: int):
        self.pid = pid
        self.rss0_kib = _tree_sum(pid, lambda p: _status_kib(p, "VmRSS"))
        self.cpu0 = _tree_sum(pid, cpu_seconds)
        self.peak_kib = self.rss0_kib
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._sample, daemon=True)
        self._t.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak_kib = max(self.peak_kib, _tree_sum(
                self.pid, lambda p: _status_kib(p, "VmRSS")))

    def stop(self) -> tuple[float, float, float]:
        """(RSS before in MiB, peak RSS in MiB, CPU seconds during)."""
        self._stop.set()
        self._t.join(1)
        cpu = _tree_sum(self.pid, cpu_seconds) - self.cpu0
        return self.rss0_kib / 1024, self.peak_kib / 1024, cpu


@dataclass
class LegitStats:
    latencies_ms: list = field(default_factory=list)
    done: list = field(default_factory=list)       # when each answer came (time.monotonic)
    failures: list = field(default_factory=list)   # (time, what)
    reconnects: int = 0

    def latencies_since(self, t: float) -> list:
        """The latencies of the answers that came at or after t (one clock for every process:
        CLOCK_MONOTONIC). What the client met before an attack began is not the attack's doing:
        over HTTP/3 its first request carries the QUIC handshake, about 80 ms against the ASan
        build, which had made the worst request of every QUIC case its own set-up."""
        return [lat for lat, d in zip(self.latencies_ms, self.done) if d >= t]


class LegitClient:
    """A well-behaved keep-alive client: GET /ping every `interval` s. A request
    counts from the moment it is due, so reconnecting (the server may close an
    idle keep-alive connection) is part of its latency. An answer that is not
    200, or none within `timeout` s, is a failure."""

    REQUEST = b"GET /ping HTTP/1.1\r\nHost: localhost\r\n\r\n"

    def __init__(self, port: int, host: str = "127.0.0.1",
                 interval: float = 0.02, timeout: float = 2.0):
        self.addr = (host, port)
        self.interval, self.timeout = interval, timeout
        self.stats = LegitStats()
        self.sock: socket.socket | None = None
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "LegitClient":
        self._t.start()
        return self

    def stop(self) -> LegitStats:
        self._stop.set()
        self._t.join(self.timeout + 2)
        self._close()
        return self.stats

    def _close(self) -> None:
        if self.sock:
            self.sock.close()

    def _connect(self) -> socket.socket:
        s = socket.create_connection(self.addr, timeout=self.timeout)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s

    def _exchange(self, s: socket.socket) -> int:
        s.sendall(self.REQUEST)
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = s.recv(4096)
            if not chunk:
                raise ConnectionError("closed")
            buf += chunk
        head, _, body = buf.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(body) < length:
            chunk = s.recv(4096)
            if not chunk:
                raise ConnectionError("closed mid-body")
            body += chunk
        if b"connection: close" in head.lower():
            raise _Close(int(head.split()[1]))
        return int(head.split()[1])

    def _run(self) -> None:
        due = time.monotonic()
        while not self._stop.is_set():
            t0 = due
            status = self._ask()
            now = time.monotonic()
            if status is not None:
                self.stats.latencies_ms.append((now - t0) * 1e3)
                self.stats.done.append(now)
                if status != 200:
                    self.stats.failures.append((now, f"status {status}"))
            due = max(due + self.interval, now)
            self._stop.wait(max(0.0, due - time.monotonic()))

    def _ask(self) -> int | None:
        """One GET /ping: its status, or None (the failure recorded)."""
        status = None
        for attempt in range(2):   # a keep-alive close gets one retry
            try:
                if self.sock is None:
                    self.sock = self._connect()
                    if attempt or self.stats.latencies_ms:
                        self.stats.reconnects += 1
                status = self._exchange(self.sock)
                break
            except _Close as c:
                status = c.status
                self.sock.close()
                self.sock = None
                break
            except (OSError, ConnectionError, ValueError) as e:
                if self.sock:
                    self.sock.close()
                self.sock = None
                if attempt or isinstance(e, socket.timeout):
                    self.stats.failures.append((time.monotonic(), repr(e)))
                    break
        return status


class LegitH3Client(LegitClient):
    """The same client over HTTP/3 (one QUIC connection, made again when the
    server closes it), for the QUIC cases: GET /ping every `interval` s."""

    def __init__(self, port: int, interval: float = 0.02, timeout: float = 2.0):
        super().__init__(port, interval=interval, timeout=timeout)
        self.h3 = None

    def _ask(self) -> int | None:
        # aioquic, only for the QUIC cases (attack_quic.py put tests/integration on the path)
        from quic_client import RawH3
        try:
            if self.h3 is None or self.h3.terminated is not None:
                if self.h3 is not None:
                    self.h3.close()
                    self.stats.reconnects += 1
                self.h3 = RawH3(self.addr[1])
            status = self.h3.get("/ping", timeout=self.timeout).status
        except (OSError, AssertionError) as e:
            self.stats.failures.append((time.monotonic(), repr(e)))
            self.h3 = None
            return None
        if status is None:
            self.stats.failures.append((time.monotonic(), "no answer"))
        return status

    def _close(self) -> None:
        if self.h3 is not None:
            self.h3.close()


class LegitProcess:
    """The legitimate client in a process of its own, so that the attack
    clients' threads (and Python's GIL) cannot delay it: what it measures is
    then the server's latency, not ours. `h3`: over HTTP/3 (LegitH3Client)."""

    def __init__(self, port: int, h3: bool = False):
        import multiprocessing as mp
        ctx = mp.get_context("fork")
        self._stop = ctx.Event()
        self._rx, tx = ctx.Pipe(duplex=False)
        self._p = ctx.Process(target=_legit_main, args=(port, h3, self._stop, tx),
                              daemon=True)

    def start(self) -> "LegitProcess":
        self._p.start()
        return self

    def stop(self) -> LegitStats:
        self._stop.set()
        stats = self._rx.recv() if self._rx.poll(10) else LegitStats(
            failures=[(0.0, "legit client gave no result")])
        self._p.join(5)
        if self._p.is_alive():
            self._p.kill()
        return stats


def _legit_main(port: int, h3: bool, stop, tx) -> None:
    client = (LegitH3Client(port) if h3 else LegitClient(port)).start()
    stop.wait()
    tx.send(client.stop())


class _Close(Exception):
    def __init__(self, status: int):
        self.status = status
