"""A QUIC + HTTP/3 client that can misbehave, for the C server's HTTP/3 tests: aioquic's
connection driven synchronously over a UDP socket, with aioquic's H3Connection for the usual
set-up (control stream, SETTINGS, QPACK streams) and raw stream writes for what no well-behaved
client sends. Events are gathered as they come; `terminated` is the server's CONNECTION_CLOSE."""
from __future__ import annotations

import socket
import ssl
import time
from dataclasses import dataclass, field

from aioquic.h3.connection import H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection
from aioquic.quic.events import (ConnectionTerminated, HandshakeCompleted, QuicEvent, StopSendingReceived,
                                  StreamReset)


def qpack_int(value: int, bits: int, first: int) -> bytes:
    """QPACK's prefixed integer (RFC 7541 5.1, as RFC 9204 uses it): `bits` low bits of the
    first byte (`first` holds the pattern above them), then 7 bits a byte."""
    top = (1 << bits) - 1
    if value < top:
        return bytes([first | value])
    out, value = bytearray([first | top]), value - top
    while value >= 128:
        out.append((value & 127) | 128)
        value >>= 7
    return bytes(out + bytes([value]))


@dataclass
class Response:
    status: int | None = None
    body: bytes = b""
    ended: bool = False
    reset_code: int | None = None
    stop_sending_code: int | None = None   # the server asked us to stop sending the request


@dataclass
class RawH3:
    port: int
    quic: QuicConnection = field(init=False)
    h3: H3Connection = field(init=False)
    sock: socket.socket = field(init=False)
    terminated: ConnectionTerminated | None = None
    responses: dict[int, Response] = field(default_factory=dict)

    def __post_init__(self) -> None:
        cfg = QuicConfiguration(is_client=True, alpn_protocols=["h3"], verify_mode=ssl.CERT_NONE,
                                max_datagram_frame_size=None)
        self.quic = QuicConnection(configuration=cfg)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.quic.connect(("127.0.0.1", self.port), now=time.time())
        self.h3 = H3Connection(self.quic)
        self.pump(until=lambda: self._handshake_done, timeout=5)
        assert self._handshake_done, "no handshake"

    _handshake_done: bool = False

    def flush(self) -> None:
        for data, addr in self.quic.datagrams_to_send(now=time.time()):
            self.sock.sendto(data, addr)

    def _handle(self, ev: QuicEvent) -> None:
        if isinstance(ev, HandshakeCompleted):
            self._handshake_done = True
        elif isinstance(ev, ConnectionTerminated):
            self.terminated = ev
        elif isinstance(ev, StreamReset):
            self.responses.setdefault(ev.stream_id, Response()).reset_code = ev.error_code
        elif isinstance(ev, StopSendingReceived):
            self.responses.setdefault(ev.stream_id, Response()).stop_sending_code = ev.error_code
        for h in self.h3.handle_event(ev) if not self.terminated else ():
            r = self.responses.setdefault(getattr(h, "stream_id", -1), Response())
            if isinstance(h, HeadersReceived):
                r.status = int(dict(h.headers)[b":status"])
                r.ended |= h.stream_ended
            elif isinstance(h, DataReceived):
                r.body += h.data
                r.ended |= h.stream_ended

    def pump(self, until, timeout: float) -> None:
        """Sends what is due and feeds what arrives until `until()` or the timeout."""
        end = time.time() + timeout
        while not until() and time.time() < end:
            self.flush()
            t = self.quic.get_timer()
            wait = max(0.001, min(end, t if t is not None else end) - time.time())
            self.sock.settimeout(wait)
            try:
                data, addr = self.sock.recvfrom(65536)
                self.quic.receive_datagram(data, addr, now=time.time())
                self._receive_queued()
            except socket.timeout:
                if t is not None and time.time() >= t:
                    self.quic.handle_timer(now=time.time())
            while (ev := self.quic.next_event()) is not None:
                self._handle(ev)
        self.flush()

    def _receive_queued(self, most: int = 64) -> None:
        """Reads what the kernel already holds before the next flush: aioquic's flush walks every
        stream with data queued, so a client holding many flow-blocked streams that flushed once per
        datagram spent its CPU there (10 such connections in one interpreter took longer than the
        server's timeouts they were waiting for)."""
        self.sock.setblocking(False)
        try:
            for _ in range(most):
                data, addr = self.sock.recvfrom(65536)
                self.quic.receive_datagram(data, addr, now=time.time())
        except BlockingIOError:
            pass
        finally:
            self.sock.setblocking(True)

    def get(self, path: str, timeout: float = 5) -> Response:
        sid = self.quic.get_next_available_stream_id()
        self.h3.send_headers(sid, [(b":method", b"GET"), (b":scheme", b"https"), (b":authority", b"localhost"),
                                   (b":path", path.encode())], end_stream=True)
        return self.wait(sid, timeout)

    def wait(self, sid: int, timeout: float = 5) -> Response:
        self.pump(until=lambda: self.terminated is not None or self.responses.get(sid, Response()).ended
                  or self.responses.get(sid, Response()).reset_code is not None, timeout=timeout)
        return self.responses.get(sid, Response())

    def send_raw(self, stream_id: int, data: bytes, end: bool = False) -> None:
        self.quic.send_stream_data(stream_id, data, end_stream=end)
        self.flush()

    def wait_closed(self, timeout: float = 5) -> int | None:
        """The error code of the server's CONNECTION_CLOSE, or None if none came."""
        self.pump(until=lambda: self.terminated is not None, timeout=timeout)
        return self.terminated.error_code if self.terminated else None

    def close(self) -> None:
        self.sock.close()
