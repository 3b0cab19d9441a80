"""The HTTP/3 and QPACK errors a client can provoke, against the C server's HTTP/3 (ASan build,
--h3 yes), with a client that misbehaves on purpose (quic_client.RawH3, on aioquic): each is met
as RFC 9114 / RFC 9204 say, by closing the connection with the named error (or, for a malformed
request, failing that request only), and the server then serves the next client as before."""
from __future__ import annotations

import os
import socket
import time

import pytest

from aioquic.buffer import encode_uint_var
from aioquic.h3.connection import ErrorCode, FrameType, StreamType, encode_frame
from aioquic.quic.packet import QuicErrorCode
from evloop_process import finish
from quic_client import RawH3, qpack_int
from test_evloop_h3 import cert, start  # noqa: F401 (the certificate fixture)


@pytest.fixture(scope="module")
def server(cert):  # noqa: F811
    s = start(cert, "--h3-max-handshakes", "1000")
    yield s
    finish(s, max_shutdown_s=3)


@pytest.fixture
def client(server):
    c = RawH3(server.port)
    assert c.get("/ping").status == 200          # a working connection first
    yield c
    c.close()
    after = RawH3(server.port)                   # and the server serves on
    assert after.get("/ping").body == b"pong"
    after.close()
    assert server.alive(), server.stderr()
    server.check_clean()


def control(c: RawH3) -> int:
    return c.h3._local_control_stream_id


def test_a_second_settings_frame_closes_the_connection(client):
    client.send_raw(control(client), encode_frame(FrameType.SETTINGS, b""))
    assert client.wait_closed() == ErrorCode.H3_FRAME_UNEXPECTED


def test_data_on_the_control_stream_closes_the_connection(client):
    client.send_raw(control(client), encode_frame(FrameType.DATA, b"hello"))
    assert client.wait_closed() == ErrorCode.H3_FRAME_UNEXPECTED


def test_closing_the_control_stream_closes_the_connection(client):
    client.send_raw(control(client), b"", end=True)
    assert client.wait_closed() == ErrorCode.H3_CLOSED_CRITICAL_STREAM


def test_a_second_control_stream_closes_the_connection(client):
    sid = client.quic.get_next_available_stream_id(is_unidirectional=True)
    client.send_raw(sid, encode_uint_var(StreamType.CONTROL) + encode_frame(FrameType.SETTINGS, b""))
    assert client.wait_closed() == ErrorCode.H3_STREAM_CREATION_ERROR


def test_a_bad_qpack_encoder_instruction_closes_the_connection(client):
    # "Duplicate" (000xxxxx) of entry 5 in a dynamic table that is empty
    client.send_raw(client.h3._local_encoder_stream_id, bytes([0x05]))
    assert client.wait_closed() == ErrorCode.QPACK_ENCODER_STREAM_ERROR


def test_a_header_block_that_references_no_entry_closes_the_connection(client):
    sid = client.quic.get_next_available_stream_id()
    # Required Insert Count 0 (no dynamic entry is needed), base 0, then an indexed field line of
    # dynamic entry 0: a reference the block said it would not make. (A block that needs entries
    # not yet inserted is not an error but a blocked stream, RFC 9204 2.1.2.)
    block = bytes([0x00, 0x00, 0x80])
    client.send_raw(sid, encode_frame(FrameType.HEADERS, block), end=True)
    assert client.wait_closed() == ErrorCode.QPACK_DECOMPRESSION_FAILED


def test_data_before_headers_on_a_request_stream_closes_the_connection(client):
    sid = client.quic.get_next_available_stream_id()
    client.send_raw(sid, encode_frame(FrameType.DATA, b"body first"), end=True)
    assert client.wait_closed() == ErrorCode.H3_FRAME_UNEXPECTED


def test_a_request_without_a_path_fails_alone(client):
    sid = client.quic.get_next_available_stream_id()
    client.h3.send_headers(sid, [(b":method", b"GET"), (b":scheme", b"https"), (b":authority", b"localhost")],
                           end_stream=True)
    client.flush()
    r = client.wait(sid)
    assert client.terminated is None
    assert r.status == 400 or r.reset_code == ErrorCode.H3_MESSAGE_ERROR, r
    assert client.get("/ping").status == 200     # the connection lives


def test_more_streams_than_allowed_close_the_connection(client):
    # the server allows 100 request streams at once; the 101st opened past its limit is a
    # STREAM_LIMIT_ERROR (QUIC transport error 0x4), whatever the client's own bookkeeping says
    client.quic._remote_max_streams_bidi = 10_000
    for _ in range(101):
        sid = client.quic.get_next_available_stream_id()
        client.quic.send_stream_data(sid, b"", end_stream=False)
        client.quic._get_or_create_stream_for_send(sid)
        client.quic.send_stream_data(sid, encode_frame(FrameType.HEADERS, b"\x00\x00"), end_stream=False)
    client.flush()
    assert client.wait_closed() == 0x4


def test_uploads_that_never_end_hold_at_most_the_budget(cert):  # noqa: F811
    """20 streams each uploading 90,000 bytes and never ending them, against --max-body 100000
    and a connection budget of 100,000 bytes (--h2-conn-memory, HTTP/3 alike): once its streams
    hold the budget the server grants no more connection credit, so the client can have sent at
    most the budget plus its 1 MiB connection window, not the 1.8 MB it means to (that connection
    then stalls, as HTTP/2's does, until its uploads are reset or it times out); a second client
    is served meanwhile, and one upload within the budget is answered."""
    s = start(cert, "--max-body", "100000", "--h2-conn-memory", "100000")
    try:
        c = RawH3(s.port)
        for _ in range(20):
            sid = c.quic.get_next_available_stream_id()
            c.h3.send_headers(sid, [(b":method", b"POST"), (b":scheme", b"https"), (b":authority", b"localhost"),
                                    (b":path", b"/echo")])
            c.h3.send_data(sid, bytes(90_000), end_stream=False)
        c.pump(until=lambda: False, timeout=2)
        granted = c.quic._remote_max_data
        assert granted <= 100_000 + (1 << 20) + 64 * 1024, granted
        other = RawH3(s.port)
        sid = other.quic.get_next_available_stream_id()
        other.h3.send_headers(sid, [(b":method", b"POST"), (b":scheme", b"https"), (b":authority", b"localhost"),
                                    (b":path", b"/echo")])
        other.h3.send_data(sid, bytes(range(256)) * 300, end_stream=True)
        r = other.wait(sid, timeout=10)
        assert r.status == 200 and r.body == bytes(range(256)) * 300
        other.close()
        c.close()
    finally:
        finish(s)


def _post_head(c: RawH3) -> int:
    sid = c.quic.get_next_available_stream_id()
    c.h3.send_headers(sid, [(b":method", b"POST"), (b":scheme", b"https"), (b":authority", b"localhost"),
                            (b":path", b"/echo")])
    return sid


def test_a_request_body_too_slow_to_arrive_is_answered_408(cert):  # noqa: F811
    """--body-timeout 1000 --body-min-rate 1024, per request stream as over HTTP/2: a body that
    stops after 10 bytes, and one that trickles a byte every 200 ms, are both answered 408 within
    about a second of their head, and the client is asked to stop sending (STOP_SENDING
    H3_NO_ERROR, a response before the request's end: RFC 9114 4.1); a body that keeps up the
    rate is answered 200 whole; the connection serves on after the 408s."""
    s = start(cert, "--body-timeout", "1000", "--body-min-rate", "1024")
    try:
        c = RawH3(s.port)
        stalled, trickle, steady = _post_head(c), _post_head(c), _post_head(c)
        c.h3.send_data(stalled, b"0123456789", end_stream=False)
        body = b""
        for i in range(10):                   # 2 s at 10 KB/s, well above 1024 B/s
            chunk = bytes([i]) * 2000
            body += chunk
            c.h3.send_data(steady, chunk, end_stream=i == 9)
            if trickle not in c.responses:    # (until its answer comes)
                c.h3.send_data(trickle, b"x", end_stream=False)
            c.pump(until=lambda: False, timeout=0.2)
        c.pump(until=lambda: all(c.responses.get(x) and c.responses[x].ended for x in (stalled, trickle, steady)),
               timeout=3)
        for sid in (stalled, trickle):
            r = c.responses.get(sid)
            assert r is not None and r.status == 408 and r.ended, (sid, r)
            assert r.stop_sending_code == ErrorCode.H3_NO_ERROR, r
        ok = c.responses[steady]
        assert ok.status == 200 and ok.body == body
        assert c.terminated is None
        assert c.get("/ping").body == b"pong"
        c.close()
        assert s.alive(), s.stderr()
    finally:
        finish(s)


def test_held_header_blocks_past_the_connection_memory_close_that_connection_only(cert):  # noqa: F811
    """100 request streams each send 13,000 bytes of a 14,000-byte header field and stop: nghttp3
    keeps each partial block (1.6 MB for the connection without a cap), so at --h3-conn-memory
    512 KiB an allocation is refused and that connection is closed: with H3_INTERNAL_ERROR when
    nghttp3's allocation was the one refused, with the transport's INTERNAL_ERROR when ngtcp2's was
    (it buffers the same streams' data; which of the two crosses the cap first depends on how the
    packets arrived, and a test-command run saw each). A connection made before it and one made
    after it are served, and the server lives on."""
    s = start(cert, "--h3-conn-memory", str(512 << 10))
    try:
        before = RawH3(s.port)
        assert before.get("/ping").status == 200
        c = RawH3(s.port)
        name = b"x-pad"
        block = b"\x00\x00" + qpack_int(len(name), 3, 0x20) + name + qpack_int(14_000, 7, 0x00)
        for _ in range(100):
            sid = c.quic.get_next_available_stream_id()
            c.send_raw(sid, encode_uint_var(FrameType.HEADERS) + encode_uint_var(len(block) + 14_000)
                       + block + bytes(13_000))
        assert c.wait_closed(timeout=5) in (ErrorCode.H3_INTERNAL_ERROR, QuicErrorCode.INTERNAL_ERROR)
        after = RawH3(s.port)
        assert after.get("/ping").body == b"pong" and before.get("/ping").body == b"pong"
        assert s.alive(), s.stderr()
        s.check_clean()
    finally:
        finish(s)


def _drain(sock: socket.socket, seconds: float = 0.05) -> list[bytes]:
    """The datagrams that arrive within `seconds` (after the last one)."""
    sock.settimeout(seconds)
    got = []
    try:
        while True:
            got.append(sock.recv(65536))
    except socket.timeout:
        return got


def test_a_connection_the_server_dropped_is_answered_with_a_stateless_reset(cert):  # noqa: F811
    """--idle-timeout 1000: once the server has dropped an idle connection, the client's next
    packet is answered with a Stateless Reset (RFC 9000 10.3) that ends in the token the server
    gave for that connection ID, smaller than the packet that asked for it; short-header packets
    naming IDs the server never issued get resets too, but no more than its bucket allows (100,
    then 100 a second), and none answers a packet of 21 bytes or less (a reset is at least 21)."""
    s = start(cert, "--idle-timeout", "1000")
    try:
        c = RawH3(s.port)
        assert c.get("/ping").status == 200
        token = c.quic._peer_cid.stateless_reset_token
        assert token and len(token) == 16
        time.sleep(1.6)                          # the server's idle timeout passes; ours (60 s) does not
        _drain(c.sock)                           # what the server sent before it dropped the connection
        c.quic.send_ping(1)
        sent = [d for d, _ in c.quic.datagrams_to_send(now=time.time())]
        for d in sent:
            c.sock.sendto(d, ("127.0.0.1", s.port))
        replies = _drain(c.sock, 1.0)
        assert len(replies) == 1, [r.hex() for r in replies]
        reset = replies[0]
        assert reset[-16:] == token and not reset[0] & 0x80, reset.hex()
        assert 21 <= len(reset) < max(len(d) for d in sent)
        c.close()

        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.settimeout(0.5)
        for size in (10, 21):                    # too small to be answered
            u.sendto(bytes([0x40]) + os.urandom(size - 1), ("127.0.0.1", s.port))
        with pytest.raises(socket.timeout):
            u.recv(65536)
        t0 = time.monotonic()
        for _ in range(300):
            u.sendto(bytes([0x40]) + os.urandom(60), ("127.0.0.1", s.port))
        got = _drain(u, 0.5)
        assert 0 < len(got) <= 100 + 100 * (time.monotonic() - t0) + 2, len(got)
        assert all(len(g) < 61 and not g[0] & 0x80 for g in got)
        u.close()
        assert s.alive(), s.stderr()
        s.check_clean()
    finally:
        finish(s)
