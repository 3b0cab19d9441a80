"""Hand-made HTTP/2 frames and a frame reader for the attack clients: just enough
HPACK (static-table indexes and literals) to send requests, and a reader that keeps
what an attacker needs to see (GOAWAY, RST_STREAM codes, response statuses,
WINDOW_UPDATEs)."""
from __future__ import annotations

import socket
import struct
from dataclasses import dataclass, field

import hpack

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, \
    CONTINUATION = 0x0, 0x1, 0x2, 0x3, 0x4, 0x6, 0x7, 0x8, 0x9
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
SETTINGS_INITIAL_WINDOW_SIZE = 0x4
ERROR_NAMES = {0x0: "NO_ERROR", 0x1: "PROTOCOL_ERROR", 0x2: "INTERNAL_ERROR",
               0x3: "FLOW_CONTROL_ERROR", 0x5: "STREAM_CLOSED",
               0x6: "FRAME_SIZE_ERROR", 0x7: "REFUSED_STREAM", 0x8: "CANCEL",
               0x9: "COMPRESSION_ERROR", 0xB: "ENHANCE_YOUR_CALM"}
CANCEL = 0x8


def error_name(code: int) -> str:
    return ERROR_NAMES.get(code, hex(code))


def frame(ftype: int, flags: int, sid: int, payload: bytes = b"") -> bytes:
    return (struct.pack(">I", len(payload))[1:] + bytes([ftype, flags])
            + struct.pack(">I", sid) + payload)


def settings(**values: int) -> bytes:
    ids = {"initial_window_size": SETTINGS_INITIAL_WINDOW_SIZE}
    return frame(SETTINGS, 0, 0, b"".join(struct.pack(">HI", ids[k], v)
                                          for k, v in values.items()))


def _hpack_int(value: int, prefix_bits: int, first: int) -> bytes:
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out = [first | limit]
    value -= limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


def hpack_literal(name: bytes, value: bytes, index: bool = False) -> bytes:
    """A literal field with a literal name, added to the dynamic table if
    `index` (RFC 7541 6.2.1), else not indexed (6.2.2)."""
    first, bits = (0x40, 6) if index else (0x00, 4)
    return (_hpack_int(0, bits, first) + _hpack_int(len(name), 7, 0) + name
            + _hpack_int(len(value), 7, 0) + value)


def hpack_indexed(index: int) -> bytes:
    return _hpack_int(index, 7, 0x80)


def request_block(method: bytes, path: bytes, extra: bytes = b"") -> bytes:
    block = {b"GET": hpack_indexed(2), b"POST": hpack_indexed(3)}[method]
    block += hpack_indexed(6)                                   # :scheme http
    block += _hpack_int(4, 4, 0) + _hpack_int(len(path), 7, 0) + path
    block += _hpack_int(1, 4, 0) + _hpack_int(9, 7, 0) + b"localhost"
    return block + extra


def content_length(n: int) -> bytes:
    v = str(n).encode()
    return _hpack_int(28, 4, 0) + _hpack_int(len(v), 7, 0) + v   # index 28


def get(sid: int, path: bytes = b"/ping") -> bytes:
    return frame(HEADERS, END_STREAM | END_HEADERS, sid,
                 request_block(b"GET", path))


def post_head(sid: int, path: bytes, length: int | None) -> bytes:
    extra = content_length(length) if length is not None else b""
    return frame(HEADERS, END_HEADERS, sid, request_block(b"POST", path, extra))


@dataclass
class Seen:
    """What one connection's reader has seen so far."""
    goaway: int | None = None           # error code
    resets: dict = field(default_factory=dict)     # stream -> error code
    statuses: dict = field(default_factory=dict)   # stream -> :status
    ended: set = field(default_factory=set)        # streams the server ended
    conn_window_updates: int = 0
    stream_credit: dict = field(default_factory=dict)  # stream -> bytes
    conn_credit: int = 0
    pings: int = 0
    settings: int = 0                   # the server's SETTINGS (not ACKs)
    eof: bool = False
    data_bytes: int = 0


class H2Reader:
    """Parses frames from a socket as they come (non-blocking use: feed() after
    select says readable). ACKs the server's SETTINGS."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = bytearray()
        self.seen = Seen()
        self.decoder = hpack.Decoder()
        self.decoder.max_header_list_size = 1 << 20
        self.block = b""  # a header block waiting for its CONTINUATIONs

    def feed(self) -> bool:
        """Reads what is there; False at EOF or reset."""
        try:
            data = self.sock.recv(1 << 20)
        except (BlockingIOError, InterruptedError, socket.timeout):
            return True
        except OSError:
            data = b""
        if not data:
            self.seen.eof = True
            return False
        self.buf += data
        self._parse()
        return True

    def _parse(self) -> None:
        while len(self.buf) >= 9:
            length = int.from_bytes(self.buf[:3], "big")
            if len(self.buf) < 9 + length:
                return
            ftype, flags = self.buf[3], self.buf[4]
            sid = int.from_bytes(self.buf[5:9], "big") & 0x7FFFFFFF
            payload = bytes(self.buf[9:9 + length])
            del self.buf[:9 + length]
            self._track(ftype, flags, sid, payload)

    def _track(self, ftype: int, flags: int, sid: int, payload: bytes) -> None:
        s = self.seen
        if ftype == SETTINGS and not flags & ACK:
            s.settings += 1
            try:
                self.sock.sendall(frame(SETTINGS, ACK, 0))
            except OSError:
                pass
        elif ftype == PING and flags & ACK:
            s.pings += 1
        elif ftype in (HEADERS, CONTINUATION):
            if ftype == HEADERS and flags & 0x8:          # PADDED
                payload = payload[1:len(payload) - payload[0]]
            if ftype == HEADERS and flags & 0x20:         # PRIORITY
                payload = payload[5:]
            self.block += payload
            if ftype == HEADERS and flags & END_STREAM:
                s.ended.add(sid)
            if flags & END_HEADERS:
                fields = dict(self.decoder.decode(self.block, raw=True))
                self.block = b""
                if b":status" in fields:
                    s.statuses.setdefault(sid, int(fields[b":status"]))
        elif ftype == DATA:
            s.data_bytes += len(payload)
            if flags & END_STREAM:
                s.ended.add(sid)
        elif ftype == RST_STREAM:
            s.resets[sid] = struct.unpack(">I", payload)[0]
        elif ftype == GOAWAY:
            s.goaway = struct.unpack(">I", payload[4:8])[0]
        elif ftype == WINDOW_UPDATE:
            inc = struct.unpack(">I", payload)[0] & 0x7FFFFFFF
            if sid == 0:
                s.conn_credit += inc
                s.conn_window_updates += 1
            else:
                s.stream_credit[sid] = s.stream_credit.get(sid, 0) + inc
