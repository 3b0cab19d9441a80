#!/usr/bin/env python3
"""Writes the committed seed corpora of the fuzz targets: fuzz/corpus/<target>/.

    python3 servers/evloop/fuzz/make_corpus.py      # rewrites every seed it knows

The seeds are real client traffic -- requests captured (client-to-server bytes, through a
recording proxy in front of http_bench_server) from curl 7.88.1, wrk 4, h2load and nghttp
1.52 -- plus hand-made edge cases and HTTP/2 frames built by the small encoder below (HPACK
literals without Huffman coding). They are kept small: the fuzzer finds the rest.

Seeds of the conn_* targets start with the two knob bytes of fuzz/fuzz_conn.h; the chunked
target's with its two (max_body, split point). The hpack target's are header blocks framed as
fuzz/fuzz_hpack.c reads them (hblock): RFC 7541's examples, blocks from nghttp2's own deflater
(libnghttp2, the library the server links, called through ctypes) and hand-made edge cases. Files found in the corpus directories that
this script did not write (e.g. added by hand) are left alone.
"""
from __future__ import annotations

import base64
import struct
import sys
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus"
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def crlf(text: str) -> bytes:
    """A request written with \\n line ends, sent with CRLF."""
    return text.replace("\n", "\r\n").encode("latin-1")


# ---------------------------------------------------------------- HTTP/1.1 (captured)

CURL_GET = crlf("GET /ping HTTP/1.1\nHost: 127.0.0.1:18081\nUser-Agent: curl/7.88.1\nAccept: */*\n\n")
CURL_POST_JSON = crlf(
    "POST /something HTTP/1.1\nHost: 127.0.0.1:18081\nUser-Agent: curl/7.88.1\nAccept: */*\n"
    "Content-Type: application/json\nContent-Length: 48\n\n") + \
    b'{"name":"benchmark","value":42,"tags":["a","b"]}'
CURL_CHUNKED = crlf(
    "POST /echo HTTP/1.1\nHost: 127.0.0.1:18081\nUser-Agent: curl/7.88.1\nAccept: */*\n"
    "Transfer-Encoding: chunked\nContent-Type: application/x-www-form-urlencoded\n\n"
    "13\nhello chunked world\n0\n\n")
CURL_QUERY_JSON = crlf(
    "GET /something?json=true&x=1&name=Zo%C3%AB&x=2 HTTP/1.1\nHost: 127.0.0.1:18081\n"
    "User-Agent: curl/7.88.1\nAccept: */*\n\n")
CURL_EXPECT = crlf(
    "POST /echo HTTP/1.1\nHost: 127.0.0.1:18081\nUser-Agent: curl/7.88.1\nAccept: */*\n"
    "Expect: 100-continue\nContent-Length: 4\nContent-Type: application/x-www-form-urlencoded\n\n") + b"&x=1"
CURL_HEAD = crlf("HEAD / HTTP/1.1\nHost: 127.0.0.1:18081\nUser-Agent: curl/7.88.1\nAccept: */*\n\n")
CURL_HTTP10 = crlf("GET /ping HTTP/1.0\nHost: 127.0.0.1:18081\nUser-Agent: curl/7.88.1\nAccept: */*\n\n")
WRK_GET = crlf("GET /ping HTTP/1.1\nHost: 127.0.0.1:18081\n\n")
# curl --http2: the Upgrade request, then (after the 101) the preface and its frames.
CURL_UPGRADE_HEAD = crlf(
    "GET /echo?size=100 HTTP/1.1\nHost: 127.0.0.1:18081\nUser-Agent: curl/7.88.1\nAccept: */*\n"
    "Connection: Upgrade, HTTP2-Settings\nUpgrade: h2c\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\n\n")
CURL_UPGRADE_FRAMES = bytes.fromhex(
    "0000120400000000000003000000640004020000000002000000000000000401000000000000040800000000"
    "0001ff0001")
NGHTTP_UPGRADE_HEAD = crlf(
    "GET /ping HTTP/1.1\nhost: 127.0.0.1:18081\nconnection: Upgrade, HTTP2-Settings\n"
    "upgrade: h2c\nhttp2-settings: AAMAAABkAAQAAP__\naccept: */*\nuser-agent: nghttp2/1.52.0\n\n")

# ---------------------------------------------------------------- HTTP/2 (captured, preface cut)

# curl --http2-prior-knowledge GET /ping
CURL_H2_GET = bytes.fromhex(
    "00001204000000000000030000006400040200000000020000000000000408000000000001ff000100002401"
    "050000000182048462b3553786418b089d5c0b8170dc0bc0783f7a8825b650c3abbcf2e153032a2f2a000000"
    "040100000000")
# h2load -n 4 -c 1 -m 2 GET /ping (two streams at a time), then GOAWAY
H2LOAD_GET = bytes.fromhex(
    "00000c04000000000000020000000000043fffffff0000040800000000003fff000000002601050000000104"
    "8462b3553786418b089d5c0b8170dc0bc0783f827a8f9c541c722954d3a5358980aed8970700000a01050000"
    "0003048462b3553786bf82be00000004010000000000000a010500000005048462b3553786bf82be00000a01"
    "0500000007048462b3553786bf82be0000080700000000000000000000000000")
# h2load -n 2 -d FILE POST /echo (HEADERS, DATA with END_STREAM), then GOAWAY
H2LOAD_POST = bytes.fromhex(
    "00000c04000000000000020000000000043fffffff0000040800000000003fff000000002a01040000000104"
    "8460a49cff86418b089d5c0b8170dc0bc0783f837a8f9c541c722954d3a5358980aed897070f0d0133000003"
    "000100000001766d0a00000004010000000000000e010400000003048460a49cff86bf83be0f0d0133000003"
    "000100000003766d0a0000080700000000000000000000000000")
# nghttp -nv: SETTINGS, PRIORITY tree, HEADERS with priority, GOAWAY
NGHTTP_GET = bytes.fromhex(
    "00000c04000000000000030000006400040000ffff00000502000000000300000000c8000005020000000005"
    "00000000640000050200000000070000000000000005020000000009000000070000000502000000000b0000"
    "00030000003201250000000d0000000b0f82048a60a49cffe20decb0041f86418b089d5c0b8170dc0bc0783f"
    "53032a2f2a907a8aaa69d29ac4c0576c4b830000080700000000000000000000000000")


# ---------------------------------------------------------------- HTTP/2 frames (made here)

def frame(ftype: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", stream) + payload


DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS, PADDED, PRIO = 0x1, 0x1, 0x4, 0x8, 0x20


def hpack_int(v: int) -> bytes:
    """A string length: 7-bit prefix, H = 0 (RFC 7541 5.1)."""
    if v < 127:
        return bytes([v])
    out, v = [127], v - 127
    while v >= 128:
        out.append(v % 128 + 128)
        v //= 128
    return bytes(out + [v])


def hpack(*fields: tuple[str, str]) -> bytes:
    """Literal header fields without indexing, new names, no Huffman (RFC 7541 6.2.2)."""
    out = b""
    for name, value in fields:
        n, v = name.encode(), value.encode()
        out += b"\x00" + hpack_int(len(n)) + n + hpack_int(len(v)) + v
    return out


def req(method: str, path: str, *extra: tuple[str, str]) -> bytes:
    return hpack((":method", method), (":scheme", "http"), (":path", path),
                 (":authority", "localhost"), *extra)


SETTINGS_CLIENT = frame(SETTINGS, 0, 0, struct.pack(">HI", 3, 100) + struct.pack(">HI", 4, 65535))
SETTINGS_ACK = frame(SETTINGS, ACK, 0)


def h2_seeds() -> dict[str, bytes]:
    s = SETTINGS_CLIENT + SETTINGS_ACK
    body = b'{"a":[1,2.5e3,"\\u00e9"],"a":null}'
    return {
        "curl_get": CURL_H2_GET,
        "h2load_get": H2LOAD_GET,
        "h2load_post": H2LOAD_POST,
        "nghttp_get": NGHTTP_GET,
        "get_root_head": s + frame(HEADERS, END_STREAM | END_HEADERS, 1, req("GET", "/"))
        + frame(HEADERS, END_STREAM | END_HEADERS, 3, req("HEAD", "/ping")),
        "get_query_json": s + frame(HEADERS, END_STREAM | END_HEADERS, 1,
                                    req("GET", "/something?json=true&a=%C3%A9&a=2")),
        "get_echo_big": s + frame(HEADERS, END_STREAM | END_HEADERS, 1, req("GET", "/echo?size=70000"))
        + frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 100000))
        + frame(WINDOW_UPDATE, 0, 1, struct.pack(">I", 100000)),
        "post_something_split": s
        + frame(HEADERS, END_HEADERS, 1, req("POST", "/something", ("content-length", str(len(body)))))
        + frame(DATA, 0, 1, body[:10]) + frame(DATA, END_STREAM, 1, body[10:]),
        "post_echo_padded_trailers": s + frame(HEADERS, END_HEADERS, 1, req("POST", "/echo"))
        + frame(DATA, PADDED, 1, b"\x03" + b"hello" + b"\x00" * 3)
        + frame(HEADERS, END_STREAM | END_HEADERS, 1, hpack(("x-trailer", "1"))),
        "post_too_large": s + frame(HEADERS, END_HEADERS, 1,
                                    req("POST", "/echo", ("content-length", "99999999")))
        + frame(DATA, 0, 1, b"x" * 16),
        "continuation": s + frame(HEADERS, END_STREAM, 1, req("GET", "/ping")[:20])
        + frame(CONTINUATION, END_HEADERS, 1, req("GET", "/ping")[20:]),
        "priority_rst_ping": s + frame(PRIORITY, 0, 3, struct.pack(">IB", 1, 15))
        + frame(HEADERS, END_HEADERS | PRIO, 5, struct.pack(">IB", 0, 200) + req("POST", "/echo"))
        + frame(RST_STREAM, 0, 5, struct.pack(">I", 8))
        + frame(PING, 0, 0, b"12345678"),
        "goaway": s + frame(HEADERS, END_STREAM | END_HEADERS, 1, req("GET", "/ping"))
        + frame(GOAWAY, 0, 0, struct.pack(">II", 1, 0)),
        "bad_stream_order": s + frame(HEADERS, END_STREAM | END_HEADERS, 5, req("GET", "/ping"))
        + frame(HEADERS, END_STREAM | END_HEADERS, 3, req("GET", "/ping")),
        # Bodies of 2 KiB and more leave by reference, owned by the stream: the echo's
        # last DATA hands the body to the output queue; a big generated answer moves out of
        # the stream's scratch.
        "post_echo_3k": s + frame(HEADERS, END_HEADERS, 1, req("POST", "/echo", ("content-length", "3000")))
        + frame(DATA, 0, 1, b"e" * 1500) + frame(DATA, END_STREAM, 1, b"f" * 1500),
        "get_something_big": s + frame(HEADERS, END_STREAM | END_HEADERS, 1,
                                       req("GET", "/something?json=true&k=" + "v" * 2100)
                                       + hpack(("x-pad", "1")))
        + frame(HEADERS, END_STREAM | END_HEADERS, 3, req("GET", "/something?" + "&".join(
            f"p{i}=%41%42" for i in range(12)))),
    }


# ---------------------------------------------------------------- HTTP/1.1 (made here)

def h1_made() -> dict[str, bytes]:
    return {
        "pipeline_mixed": crlf("GET /ping HTTP/1.1\nHost: a\n\nHEAD /echo?size=5 HTTP/1.1\nHost: a\n\n"
                               "POST /echo HTTP/1.1\nHost: a\nContent-Length: 3\n\nabc"
                               "GET /nope HTTP/1.1\nHost: a\nConnection: close\n\n"),
        "chunked_ext_trailer": crlf("POST /something HTTP/1.1\nHost: a\nTransfer-Encoding: chunked\n\n"
                                    "4;ext=1\n[1,2\n1 ; x\n]\n0\nTrailer: yes\n\n"),
        "http10_keepalive": crlf("GET /echo HTTP/1.0\nConnection: keep-alive\n\nGET / HTTP/1.0\n\n"),
        "bad_te": crlf("POST /echo HTTP/1.1\nHost: a\nTransfer-Encoding: gzip, chunked\n\n"),
        "cl_te": crlf("POST /echo HTTP/1.1\nHost: a\nContent-Length: 3\nTransfer-Encoding: chunked\n\n"),
        "too_large": crlf("POST /echo HTTP/1.1\nHost: a\nContent-Length: 99999999999\n\n"),
        "method_405": crlf("DELETE /ping HTTP/1.1\nHost: a\n\nPUT /echo HTTP/1.1\nHost: a\n\n"),
        "not_http": crlf("INVALID CONNECTION PREFACE\n\n"),
        "version_505": crlf("GET / HTTP/2.0\nHost: a\n\n"),
        "query_text": crlf("GET /something?a=1&&b=x+y&c=%2F&flag HTTP/1.1\nHost: a\n\n"),
    }


def knobs(end: int = 0, writes: int = 0, limits: int = 0, settings: int = 0, stall: int = 0,
          chunk_bits: int = 15, seed: int = 0) -> bytes:
    """The two knob bytes of the conn targets (fuzz/fuzz_conn.h)."""
    return bytes([end | writes << 2 | limits << 4 | settings << 6 | stall << 7, chunk_bits | seed << 4])


# ---------------------------------------------------------------- the pure targets

def parser_seeds() -> dict[str, bytes]:
    return {
        "curl_get": CURL_GET, "curl_post": CURL_POST_JSON.split(b"\r\n\r\n")[0] + b"\r\n\r\n",
        "curl_chunked": CURL_CHUNKED.split(b"\r\n\r\n")[0] + b"\r\n\r\n",
        "curl_query": CURL_QUERY_JSON, "curl_expect": CURL_EXPECT.split(b"\r\n\r\n")[0] + b"\r\n\r\n",
        "curl_upgrade": CURL_UPGRADE_HEAD, "nghttp_upgrade": NGHTTP_UPGRADE_HEAD,
        "wrk_get": WRK_GET, "http10": CURL_HTTP10,
        "leading_crlf_ows": crlf("\nGET /a?b HTTP/1.1\nHost:  x \nConnection: keep-alive, Upgrade\n"
                                 "Transfer-Encoding: ,chunked ,\nX-Empty:\n\n"),
        "absolute_form": crlf("OPTIONS http://a:80/x?y=%20 HTTP/1.1\nHost: a\nContent-Length: 0\n"
                              "Content-Length: 0\n\n"),
        "obs_text": b"GET /\xc3\xa9 HTTP/1.1\r\nHost: a\r\nX: \xff\x80\r\n\r\n",
    }


def chunked_seeds() -> dict[str, bytes]:
    k = lambda limit, split: bytes([limit, split])  # noqa: E731 (max_body index, split point)
    return {
        "curl": k(6, 7) + b"13\r\nhello chunked world\r\n0\r\n\r\n",
        "ext_trailers": k(6, 3) + b"4;a=b;c\r\nWiki\r\n5 ;x=\"y\"\r\npedia\r\n0\r\nT: 1\r\nU: 2\r\n\r\nNEXT",
        "hex_sizes": k(5, 10) + b"A\r\n0123456789\r\nf\r\n0123456789abcde\r\n0\r\n\r\n",
        "limit": k(2, 1) + b"11\r\n0123456789abcdef0\r\n0\r\n\r\n",
        "huge_size": k(7, 2) + b"ffffffffffffffff\r\n",
        "partial": k(6, 5) + b"5\r\nab",
    }


def query_seeds() -> dict[str, bytes]:
    return {
        "curl_json": b"json=true&x=1&name=Zo%C3%AB&x=2",
        "text": b"a=1&b=x%20y&c=%E2%9C%93",
        "escapes": b"json=true&q=%22%5C%0A%01/%7F&&k",
        "repeats": b"a=1&a=2&plus=x+y&=v&flag",
        "size": b"size=1048576&size=3",
        "bad": b"a=%2&b=%zz&json=tru%65",
    }


def json_seeds() -> dict[str, bytes]:
    return {
        "curl_post": b'{"name":"benchmark","value":42,"tags":["a","b"]}',
        "strings": '{"n": "Zo\u00eb \u2713 \U0001F600", "e": "q \\" b \\\\ s \\/ t \\t \\u0001 \\ud83d\\ude00"}'
        .encode(),
        "numbers": b"[0, -1, 9007199254740993, 1.50, -0.5e-07, 6.02E+23, 1E400]",
        "literals": b" [true,false,null,{},[]] ",
        "dups": b'{"a":1,"b":2,"a":{"x":[],"x":{}},"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k1":8}',
        "deep": b"[" * 64 + b"]" * 64,
        "scalar": b'"\\b\\f\\n\\r\\t"',
    }


# ---------------------------------------------------------------- the hpack target

def hblock(block: bytes, a: int = 0, b: int = 255) -> bytes:
    """One block of the hpack target (fuzz/fuzz_hpack.c): its length (one byte below 0xf0,
    else two: 0xf0 | high four bits, low byte), the cut bytes A and B (the fragments end at
    len * A / 255 and len * B / 255), then the block."""
    n = len(block)
    assert n < 4096
    head = bytes([n]) if n < 0xF0 else bytes([0xF0 | n >> 8, n & 0xFF])
    return head + bytes([a, b]) + block


# RFC 7541 appendix C: C.3/C.4 three requests (without and with Huffman coding), C.5/C.6
# three responses for a 256-byte table (so preceded here by a size update to 256, 3f e1 01),
# which evict.
RFC_C3 = ["828684410f7777772e6578616d706c652e636f6d", "828684be58086e6f2d6361636865",
          "828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565"]
RFC_C4 = ["828684418cf1e3c2e5f23a6ba0ab90f4ff", "828684be5886a8eb10649cbf",
          "828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf"]
RFC_C5 = ["4803333032580770726976617465611d4d6f6e2c203231204f637420323031332032303a31333a32"
          "3120474d546e1768747470733a2f2f7777772e6578616d706c652e636f6d",
          "4803333037c1c0bf",
          "88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d54c05a04677a6970"
          "7738666f6f3d4153444a4b48514b425a584f5157454f50495541585157454f49553b206d61782d61"
          "67653d333630303b2076657273696f6e3d31"]
RFC_C6 = ["488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad"
          "171863c78f0b97c8e9ae82ae43d3",
          "4883640effc1c0bf",
          "88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2"
          "e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007"]
SIZE_256 = bytes.fromhex("3fe101")


def nghttp2_blocks() -> list[bytes]:
    """Request blocks from nghttp2's own deflater (libnghttp2 through ctypes, the library
    the server links): Huffman coding, indexing and indexed fields, a never-indexed field,
    table size updates (to 512, 0 and back) and the evictions that follow."""
    import ctypes
    import ctypes.util

    lib = ctypes.CDLL(ctypes.util.find_library("nghttp2") or "libnghttp2.so.14")

    class NV(ctypes.Structure):
        _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_char_p), ("namelen", ctypes.c_size_t),
                    ("valuelen", ctypes.c_size_t), ("flags", ctypes.c_uint8)]

    lib.nghttp2_hd_deflate_hd.restype = ctypes.c_ssize_t
    lib.nghttp2_hd_deflate_hd.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                          ctypes.POINTER(NV), ctypes.c_size_t]
    lib.nghttp2_hd_deflate_change_table_size.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    lib.nghttp2_hd_deflate_del.argtypes = [ctypes.c_void_p]
    deflater = ctypes.c_void_p()
    if lib.nghttp2_hd_deflate_new(ctypes.byref(deflater), 4096) != 0:
        raise RuntimeError("nghttp2_hd_deflate_new failed")

    def deflate(*fields: tuple[str, str] | tuple[str, str, int]) -> bytes:
        nva = (NV * len(fields))()
        for nv, f in zip(nva, fields):
            n, v = f[0].encode(), f[1].encode()
            nv.name, nv.value, nv.namelen, nv.valuelen = n, v, len(n), len(v)
            nv.flags = f[2] if len(f) > 2 else 0
        out = ctypes.create_string_buffer(8192)
        r = lib.nghttp2_hd_deflate_hd(deflater, out, len(out), nva, len(fields))
        if r < 0:
            raise RuntimeError(f"nghttp2_hd_deflate_hd: {r}")
        return out.raw[:r]

    get = [(":method", "GET"), (":scheme", "http"), (":path", "/ping"), (":authority", "127.0.0.1:18081"),
           ("user-agent", "h2load nghttp2/1.52.0")]
    blocks = [deflate(*get), deflate(*get),
              deflate((":method", "POST"), (":scheme", "http"), (":path", "/something?json=true&x=1"),
                      (":authority", "127.0.0.1:18081"), ("content-type", "application/json"),
                      ("content-length", "48"), ("authorization", "Bearer abc", 1),  # never indexed
                      ("cookie", "a=1; b=2"), ("x-trace", "t" * 200))]
    lib.nghttp2_hd_deflate_change_table_size(deflater, 512)
    blocks.append(deflate(*get, ("x-a", "a" * 150), ("x-b", "b" * 150), ("x-c", "c" * 150)))
    lib.nghttp2_hd_deflate_change_table_size(deflater, 0)
    blocks.append(deflate(*get))
    lib.nghttp2_hd_deflate_change_table_size(deflater, 4096)
    blocks.append(deflate(*get, ("accept", "*/*"), ("accept-encoding", "gzip, deflate, br")))
    blocks.append(deflate(*get, ("accept", "*/*"), ("accept-encoding", "gzip, deflate, br")))
    lib.nghttp2_hd_deflate_del(deflater)
    return blocks


def hpack_seeds() -> dict[str, bytes]:
    hx = bytes.fromhex
    ng = nghttp2_blocks()
    lit = lambda name, value, first=0x40: (  # noqa: E731 (a literal with a new name, no Huffman)
        bytes([first]) + hpack_int(len(name)) + name + hpack_int(len(value)) + value)
    return {
        # whole blocks, then blocks cut inside fields (inside a string, an integer, a Huffman
        # string)
        "rfc_c3": b"".join(hblock(hx(b)) for b in RFC_C3),
        "rfc_c3_cut": b"".join(hblock(hx(b), a, b_) for b, (a, b_) in zip(RFC_C3, [(60, 120), (30, 200), (90, 91)])),
        "rfc_c4_cut": b"".join(hblock(hx(b), a, b_) for b, (a, b_) in zip(RFC_C4, [(128, 250), (0, 140), (70, 180)])),
        "rfc_c5_256": hblock(SIZE_256 + hx(RFC_C5[0]), 100, 40) + b"".join(hblock(hx(b), 50, 200) for b in RFC_C5[1:]),
        "rfc_c6_256": hblock(SIZE_256 + hx(RFC_C6[0]), 10, 250) + b"".join(hblock(hx(b), 128, 129) for b in RFC_C6[1:]),
        "nghttp2_deflater": b"".join(hblock(b, (i * 37) % 256, (i * 91 + 200) % 256) for i, b in enumerate(ng)),
        # two size updates at a block's start (0 empties the table), an entry larger than the
        # table (emptied, not inserted), then an index into what is left
        "size_updates_evict": hblock(lit(b"x-one", b"1") + lit(b"x-two", b"2")) + hblock(
            hx("3f45") + hx("20") + hx("3f45") + lit(b"x-three", b"3") + lit(b"x-big", b"b" * 80) + hx("82"))
        + hblock(hx("3fe11f") + lit(b"x-four", b"4") + hx("be"), 128, 128),
        # fields our decoder flags (syntax_ok 0) but decodes: an upper-case name, a CR in a
        # value, a value with a leading space, an empty name; indexed again from the table
        "bad_syntax": hblock(lit(b"X-Upper", b"v") + lit(b"x-cr", b"a\rb") + lit(b"x-sp", b" v")
                             + lit(b"", b"empty-name") + lit(b"x-nul", b"a\x00b", 0x00) + lit(b":", b"p", 0x10))
        + hblock(hx("bebfc0c1"), 200, 100),
        # integers: a string length in four continuation octets (ours reads it), and in five
        # (0x80 padding: nghttp2 reads it, ours refuses: the fuzzer's one documented difference)
        "int_4_octets": hblock(b"\x40\x01a\x7f\x80\x80\x80\x00" + b"x" * 127 + b"\xbe"),
        "int_5_octets": hblock(b"\x82") + hblock(b"\x40\x01a\x7f\x80\x80\x80\x80\x00" + b"x" * 127),
        # Huffman: "a" padded with ones (good), then padding of zeros (bad)
        "huffman_padding": hblock(b"\x40\x81\x1f\x81\x1f" + b"\x00\x80\x80") + hblock(b"\x40\x01z\x81\x18"),
        # bad blocks: index 0, an index past the table, a size update after a field, over 4096
        "bad_index": hblock(b"\x82") + hblock(b"\x80"),
        "bad_index_past": hblock(b"\x40\x01a\x01b\xbf"),
        "late_size_update": hblock(b"\x82\x20"),
        "size_over_4096": hblock(b"\x3f\xe2\x1f"),
        "string_over_64k": hblock(b"\x40\x7f\x82\x80\x04", 0, 2),
        "cut_short": hblock(b"\x82\x40\x05hel", 30, 200),
    }


# ---------------------------------------------------------------- writing

def corpora() -> dict[str, dict[str, bytes]]:
    h1 = {
        "curl_get": knobs() + CURL_GET,
        "curl_post_json_1byte": knobs(chunk_bits=0) + CURL_POST_JSON,
        "curl_chunked_short_writes": knobs(writes=1, chunk_bits=3, seed=5) + CURL_CHUNKED,
        "curl_query_json_timeout": knobs(end=1) + CURL_QUERY_JSON,
        "curl_expect_100": knobs(chunk_bits=6, seed=1) + CURL_EXPECT,
        "curl_head_shutdown": knobs(end=2) + CURL_HEAD,
        "curl_http10": knobs() + CURL_HTTP10,
        "curl_upgrade_h2c": knobs(chunk_bits=7, seed=2) + CURL_UPGRADE_HEAD + PREFACE + CURL_UPGRADE_FRAMES,
        "nghttp_upgrade_h2c": knobs(end=3) + NGHTTP_UPGRADE_HEAD + PREFACE + SETTINGS_CLIENT,
        "wrk_pipelined_stalled": knobs(writes=2, stall=1) + WRK_GET * 4,
        "echo_big_eagain": knobs(writes=3) + crlf("GET /echo?size=300000 HTTP/1.1\nHost: a\n\n") * 2,
        "post_body_limit": knobs(limits=2, chunk_bits=4) + crlf(
            "POST /echo HTTP/1.1\nHost: a\nTransfer-Encoding: chunked\n\n40\n") + b"y" * 64 + b"\r\n0\r\n\r\n",
        "partial_head_timeout": knobs(end=1) + b"GET /ping HTTP/1.1\r\nHost:",
        # Bodies of 16 KiB and more that arrive after their head are handed to the output
        # queue (echo: the body buffer; /something: the scratch), not copied.
        "post_echo_20k_split": knobs(chunk_bits=12, seed=3) + crlf(
            "POST /echo HTTP/1.1\nHost: a\nContent-Length: 20000\n\n") + b"z" * 20000,
        "post_something_big_chunked": knobs(chunk_bits=13) + crlf(
            "POST /something HTTP/1.1\nHost: a\nTransfer-Encoding: chunked\n\n") + b"".join(
            b"%x\r\n%s\r\n" % (len(part), part) for part in
            [b"[", b",".join([b'"' + b"j" * 1000 + b'"'] * 17), b"]"]) + b"0\r\n\r\n",
    }
    for name, data in h1_made().items():
        h1[name] = knobs() + data
    h2 = {}
    for i, (name, data) in enumerate(h2_seeds().items()):
        # spread the knobs: whole reads and EOF mostly, some split reads, stalls and timeouts
        h2[name] = knobs(end=i % 4, writes=(i // 2) % 4, limits=2 if "large" in name else 0,
                         stall=1 if i % 5 == 4 else 0, chunk_bits=15 if i % 3 else 5, seed=i % 16) + data
    h2["preface_settings_only"] = knobs(settings=1)
    # Resource attacks (rapid reset, CONTINUATION and PING floods, a header list over the
    # limit), against the tight limits (knob limits=2).
    h2["rapid_reset_tight"] = knobs(limits=2) + SETTINGS_CLIENT + b"".join(
        frame(HEADERS, END_HEADERS, sid, req("POST", "/echo")) + frame(RST_STREAM, 0, sid, struct.pack(">I", 8))
        for sid in range(1, 12, 2))
    h2["continuation_flood_tight"] = knobs(limits=2) + SETTINGS_CLIENT + frame(
        HEADERS, 0, 1, req("GET", "/ping")) + frame(CONTINUATION, 0, 1, hpack(("x-a", "1"))) * 3
    h2["ping_flood_tight"] = knobs(limits=2) + SETTINGS_CLIENT + frame(PING, 0, 0, b"12345678") * 6
    h2["header_list_tight"] = knobs(limits=2) + SETTINGS_CLIENT + frame(
        HEADERS, END_STREAM | END_HEADERS, 1, req("GET", "/ping", ("x-big", "b" * 300)))
    return {"conn_h1": h1, "conn_h2": h2, "http1_parser": parser_seeds(), "chunked": chunked_seeds(),
            "query": query_seeds(), "json": json_seeds(), "hpack": hpack_seeds()}


def main() -> int:
    # The upgrade seeds' HTTP2-Settings must stay valid base64url (h2_base64url_decode).
    base64.urlsafe_b64decode("AAMAAABkAAQCAAAAAAIAAAAA")
    for target, seeds in corpora().items():
        d = CORPUS / target
        d.mkdir(parents=True, exist_ok=True)
        for name, data in seeds.items():
            (d / name).write_bytes(data)
        print(f"{target}: {len(seeds)} seeds, {sum(map(len, seeds.values()))} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
