"""Integration tests for the five-language shoot-out routes of servers/evloop:

    GET  /                      200 text/plain        Hello, World!
    GET  /something?q           200 text/plain        name=value\\n per parameter
    GET  /something?json=true   200 application/json  {"message":..., "query":{...}}
    POST /something             200 application/json  {"received":..., "bytes":n}
                                400 for a body that is not JSON
    anything else on / and /something: 404

over HTTP/1.1 (http.client and raw sockets) and h2c (curl, nghttp).

Run: python3 -m pytest -q tests/integration/test_evloop_languages.py
(after `make -C servers/evloop asan`). The server is the ASan/UBSan build,
started by conftest.py's fixtures, which at teardown require it to be alive,
to exit 0 on SIGTERM and to have printed no sanitizer report.
"""
import http.client
import json
import os
import shutil
import socket
import subprocess

import pytest

HELLO = b"Hello, World!"
BENCH_DOC = b'{"name":"benchmark","value":42,"tags":["a","b"]}'

# Unicode in every UTF-8 length, escapes, numbers of every shape, nesting.
NESTED = {
    "name": "Zoë ✓ 名前 😀",
    "escapes": "quote \" backslash \\ slash / tab \t nl \n ctl \u0001 del \x7f",
    "ints": [0, -1, 42, 9007199254740991, -9007199254740991],
    "floats": [3.25, -0.5, 1e-07, 6.02e+23, 1.5e300],
    "flags": [True, False, None],
    "nested": {"a": {"b": {"c": [1, [2, [3, {"d": "deep"}]]]}}, "empty": {},
               "list": []},
    "": "empty key",
}


# ---- HTTP/1.1 helpers --------------------------------------------------------

def request(server, method, target, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        c.request(method, target, body=body, headers=headers or {})
        r = c.getresponse()
        return r, r.read()
    finally:
        c.close()


def ctype(resp):
    return resp.getheader("Content-Type")


def check_framing(resp, body):
    assert resp.getheader("Transfer-Encoding") is None
    assert resp.getheader("Content-Length") == str(len(body))
    assert resp.getheader("Server") == "evloop"
    assert resp.getheader("Date")


def read_responses(sock, count):
    """Reads `count` Content-Length framed responses from a raw socket:
    [(status, {lower-case header: value}, body)]."""
    buf, out = b"", []
    while len(out) < count:
        while b"\r\n\r\n" not in buf:
            chunk = sock.recv(65536)
            assert chunk, f"closed after {len(out)} responses: {buf!r}"
            buf += chunk
        head, buf = buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        hdrs = {k.lower(): v.strip() for k, v in
                (line.split(":", 1) for line in lines[1:])}
        n = int(hdrs["content-length"])
        while len(buf) < n:
            chunk = sock.recv(65536)
            assert chunk, "closed mid-body"
            buf += chunk
        out.append((status, hdrs, buf[:n]))
        buf = buf[n:]
    return out


def read_to_close(sock):
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk


# ---- GET / ---------------------------------------------------------------------

def test_root(server):
    r, body = request(server, "GET", "/")
    assert (r.status, ctype(r), body) == (200, "text/plain", HELLO)
    check_framing(r, body)


def test_root_head(server):
    r, body = request(server, "HEAD", "/")
    assert (r.status, ctype(r), body) == (200, "text/plain", b"")
    assert r.getheader("Content-Length") == str(len(HELLO))


# ---- GET /something ------------------------------------------------------------

@pytest.mark.parametrize("query,expected", [
    (None, b""),
    ("", b""),
    ("foo=bar", b"foo=bar\n"),
    ("a=1&b=x%20y", b"a=1\nb=x y\n"),
    ("a=1&b=x%20y&c=%E2%9C%93", "a=1\nb=x y\nc=✓\n".encode()),
    ("a=1&a=2&plus=x+y", b"a=1\na=2\nplus=x y\n"),
    ("flag&&=v&", b"flag=\n=v\n"),
    ("json=false", b"json=false\n"),
    ("pct=%25%2B%26%3D", b"pct=%+&=\n"),
    ("raw=%FF%00", b"raw=\xff\x00\n"),  # bytes pass through in text
])
def test_query_text(server, query, expected):
    target = "/something" + ("" if query is None else "?" + query)
    r, body = request(server, "GET", target)
    assert (r.status, ctype(r), body) == (200, "text/plain", expected)
    check_framing(r, body)


def test_query_text_head(server):
    r, body = request(server, "HEAD", "/something?foo=bar")
    assert (r.status, body) == (200, b"")
    assert r.getheader("Content-Length") == str(len(b"foo=bar\n"))


@pytest.mark.parametrize("query", ["a=%zz", "a=%", "a=%2", "%g0=1",
                                   "json=true&b=%zz"])
def test_query_malformed_escape(server, query):
    r, body = request(server, "GET", "/something?" + query)
    assert (r.status, ctype(r)) == (400, "text/plain")
    check_framing(r, body)


@pytest.mark.parametrize("query,expected", [
    ("json=true", {"json": "true"}),
    ("json=true&x=1", {"json": "true", "x": "1"}),
    ("x=1&json=true", {"x": "1", "json": "true"}),
    ("json=true&x=1&name=Zo%C3%AB&x=2",
     {"json": "true", "x": "2", "name": "Zoë"}),
    ("json=true&a=1&b=x%20y&c=%E2%9C%93",
     {"json": "true", "a": "1", "b": "x y", "c": "✓"}),
    ("json=true&q=%22%5C%0A%01/%7F&k",
     {"json": "true", "q": "\"\\\n\x01/\x7f", "k": ""}),
    ("json=true&emoji=%F0%9F%98%80&plus=a+b",
     {"json": "true", "emoji": "😀", "plus": "a b"}),
    ("%6Ason=tru%65", {"json": "true"}),
])
def test_query_json(server, query, expected):
    r, body = request(server, "GET", "/something?" + query)
    assert (r.status, ctype(r)) == (200, "application/json"), body
    check_framing(r, body)
    assert json.loads(body) == {"message": "Hello, World!", "query": expected}


def test_query_json_many_repeats(server):
    # 300 parameters over 50 names: the last value of each name wins.
    q = "json=true&" + "&".join(f"k{i % 50}={i}" for i in range(300))
    r, body = request(server, "GET", "/something?" + q)
    assert r.status == 200
    doc = json.loads(body)
    assert doc["query"] == {"json": "true",
                            **{f"k{i % 50}": str(i) for i in range(250, 300)}}
    # and each name once in the text itself, not only after json.loads
    assert body.count(b'"k7"') == 1


@pytest.mark.parametrize("query", ["json=true&b=%FF", "json=true&b=%C3",
                                   "json=true&b=%C0%80", "json=true&%ED%A0%80=1"])
def test_query_json_not_utf8(server, query):
    r, body = request(server, "GET", "/something?" + query)
    assert (r.status, ctype(r)) == (400, "text/plain")
    check_framing(r, body)


# ---- POST /something -------------------------------------------------------------

def post(server, raw, headers=None):
    return request(server, "POST", "/something", body=raw,
                   headers=headers or {"Content-Type": "application/json"})


def test_post_benchmark_document(server):
    r, body = post(server, BENCH_DOC)
    assert (r.status, ctype(r)) == (200, "application/json")
    check_framing(r, body)
    assert json.loads(body) == {
        "received": {"name": "benchmark", "value": 42, "tags": ["a", "b"]},
        "bytes": 48}
    assert len(BENCH_DOC) == 48
    assert body == b'{"received":' + BENCH_DOC + b',"bytes":48}'


@pytest.mark.parametrize("doc", [NESTED, [1, "two", 3.5], "just a string", 12,
                                 None, {}, [], {"a": {"a": {"a": []}}}])
def test_post_json(server, doc):
    raw = json.dumps(doc, ensure_ascii=False).encode()
    r, body = post(server, raw)
    assert (r.status, ctype(r)) == (200, "application/json"), body
    check_framing(r, body)
    assert json.loads(body) == {"received": doc, "bytes": len(raw)}


def test_post_json_ascii_escapes(server):
    # \u escapes (incl. a surrogate pair) come back as UTF-8.
    raw = json.dumps(NESTED, ensure_ascii=True, indent=2).encode()
    r, body = post(server, raw)
    assert r.status == 200
    assert json.loads(body) == {"received": NESTED, "bytes": len(raw)}
    assert "😀".encode() in body and b"\\ud83d" not in body


def test_post_numbers_kept_as_sent(server):
    raw = b'[9007199254740993, 1.0, 1E400, -0, 0.1e-5, 1.50]'
    r, body = post(server, raw)
    assert r.status == 200
    assert body == (b'{"received":[9007199254740993,1.0,1E400,-0,0.1e-5,1.50],'
                    b'"bytes":%d}' % len(raw))


def test_post_repeated_names(server):
    raw = b'{"a": 1, "b": 2, "a": 3}'
    r, body = post(server, raw)
    assert r.status == 200
    assert json.loads(body) == {"received": {"a": 3, "b": 2}, "bytes": len(raw)}
    assert body.count(b'"a"') == 1


def test_post_any_content_type(server):
    for headers in ({"Content-Type": "text/plain"}, {}):
        r, body = post(server, b'{"a": [1, 2]}', headers=headers)
        assert r.status == 200, body
        assert json.loads(body) == {"received": {"a": [1, 2]}, "bytes": 13}


def nest(n):
    return b"[" * n + b"0" + b"]" * n


@pytest.mark.parametrize("raw", [
    b"this is not json", b'{"a": 1', b"", b" ", b"[1, 2] x", b"{'a': 1}",
    b"[1,]", b"01", b"NaN", b'"\\ud83d"', b'"\\ude00"', b'"\\x41"',
    b'"\xff"', b'"\xc0\x80"', b'"\xed\xa0\x80"', b'"a\nb"', b"\xef\xbb\xbf[]",
    nest(65), nest(100000),
], ids=lambda raw: repr(raw[:20]))
def test_post_invalid(server, raw):
    r, body = post(server, raw)
    assert (r.status, ctype(r)) == (400, "text/plain")
    check_framing(r, body)
    assert 0 < len(body) < 200


def test_post_depth_limit(server):
    raw = nest(64)
    r, body = post(server, raw)
    assert r.status == 200
    assert body == b'{"received":' + raw + b',"bytes":%d}' % len(raw)


def test_post_large(server):
    # ~300 KB answer: bigger than the read buffer and the per-connection
    # scratch that is kept, so it is handed to the output queue.
    doc = {"items": [{"id": i, "name": f"item {i} ✓", "v": i * 0.5}
                     for i in range(6000)]}
    raw = json.dumps(doc).encode()
    r, body = post(server, raw)
    assert r.status == 200
    assert json.loads(body) == {"received": doc, "bytes": len(raw)}


def test_post_chunked(server):
    parts = [b'{"chunked": ', b'[1, 2, ', b'"three"]}']
    raw = b"".join(parts)
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(b"POST /something HTTP/1.1\r\nHost: t\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n" +
                  b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) +
                  b"0\r\n\r\n")
        [(status, hdrs, body)] = read_responses(s, 1)
    assert status == 200
    assert json.loads(body) == {"received": {"chunked": [1, 2, "three"]},
                                "bytes": len(raw)}


def test_expect_continue(server):
    raw = json.dumps({"big": "x" * 2000}).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(b"POST /something HTTP/1.1\r\nHost: t\r\n"
                  b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(raw))
        interim = s.recv(65536)
        assert interim.startswith(b"HTTP/1.1 100"), interim
        s.sendall(raw)
        [(status, _, body)] = read_responses(s, 1)
    assert status == 200
    assert json.loads(body) == {"received": {"big": "x" * 2000},
                                "bytes": len(raw)}


# ---- 404 / 405 -------------------------------------------------------------------

@pytest.mark.parametrize("method,target", [
    ("GET", "/nope"), ("DELETE", "/"), ("POST", "/"), ("PUT", "/"),
    ("PUT", "/something"), ("DELETE", "/something"), ("PATCH", "/something"),
    ("GET", "/something/else"), ("GET", "/somethingelse"), ("GET", "//"),
])
def test_not_found(server, method, target):
    r, body = request(server, method, target)
    assert r.status == 404
    check_framing(r, body)


def test_ping_echo_keep_405(server):
    r, _ = request(server, "DELETE", "/ping")
    assert (r.status, r.getheader("Allow")) == (405, "GET, HEAD")
    r, _ = request(server, "PUT", "/echo")
    assert (r.status, r.getheader("Allow")) == (405, "GET, HEAD, POST")
    r, body = request(server, "GET", "/ping")
    assert (r.status, body) == (200, b"pong")


# ---- connections -----------------------------------------------------------------

def test_pipelined_generated_bodies(server):
    # Several generated answers from one read: each must come out intact even
    # though they are all built in the same per-connection scratch buffer,
    # including one big enough to be handed over rather than copied: a 12 KB
    # query (heads stay under 16 KiB) whose escapes double in JSON.
    big_q = "json=true&e=" + "%01" * 4000
    raw = b'{"x": [1, 2, 3]}'
    reqs = (b"GET /something?a=1 HTTP/1.1\r\nHost: t\r\n\r\n"
            b"GET /something?json=true&b=2 HTTP/1.1\r\nHost: t\r\n\r\n"
            b"POST /something HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n%s"
            b"GET /something?%s HTTP/1.1\r\nHost: t\r\n\r\n"
            b"GET /something?c=3 HTTP/1.1\r\nHost: t\r\n\r\n"
            b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
            % (len(raw), raw, big_q.encode()))
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(reqs)
        got = read_responses(s, 6)
        assert read_to_close(s) == b""
    assert [g[0] for g in got] == [200] * 6
    assert got[0][2] == b"a=1\n"
    assert json.loads(got[1][2])["query"] == {"json": "true", "b": "2"}
    assert json.loads(got[2][2]) == {"received": {"x": [1, 2, 3]},
                                     "bytes": len(raw)}
    assert len(got[3][2]) > 16384
    assert json.loads(got[3][2])["query"] == {"json": "true", "e": "\x01" * 4000}
    assert got[4][2] == b"c=3\n"
    assert got[5][2] == HELLO and got[5][1]["connection"] == "close"


# ---- HTTP/2 (h2c) ------------------------------------------------------------------

def need(tool):
    if shutil.which(tool) is None:
        why = f"{tool} not installed (Debian package curl or nghttp2-client)"
        if os.environ.get("LAB_REQUIRE_TOOLS") == "1":
            pytest.fail(why)
        pytest.skip(why)


def curl(server, path, *args, mode="--http2-prior-knowledge", data=None):
    """(status, http version, content type, body) of one curl request; data
    is POSTed from stdin (no argv size limit)."""
    need("curl")
    if data is not None:
        args = (*args, "--data-binary", "@-")
    r = subprocess.run(
        ["curl", "-sS", mode, "--max-time", "20", "-o", "-",
         "-w", "%{stderr}\n%{http_code} %{http_version} %{content_type}",
         *args, f"http://127.0.0.1:{server.port}{path}"],
        input=data, capture_output=True, timeout=30)
    assert r.returncode == 0, r.stderr
    status, version, content_type = r.stderr.decode().splitlines()[-1].split(" ")
    return int(status), version, content_type, r.stdout


def test_h2_root(h2_server):
    assert curl(h2_server, "/") == (200, "2", "text/plain", HELLO)


def test_h2_query(h2_server):
    assert curl(h2_server, "/something?a=1&b=x%20y&c=%E2%9C%93") == (
        200, "2", "text/plain", "a=1\nb=x y\nc=✓\n".encode())
    status, version, content_type, body = curl(
        h2_server, "/something?json=true&x=1")
    assert (status, version, content_type) == (200, "2", "application/json")
    assert json.loads(body) == {"message": "Hello, World!",
                                "query": {"json": "true", "x": "1"}}
    assert curl(h2_server, "/something?a=%zz")[0] == 400


def test_h2_post(h2_server):
    status, version, content_type, body = curl(
        h2_server, "/something", "-H", "Content-Type: application/json",
        data=BENCH_DOC)
    assert (status, version, content_type) == (200, "2", "application/json")
    assert json.loads(body) == {
        "received": {"name": "benchmark", "value": 42, "tags": ["a", "b"]},
        "bytes": 48}
    raw = json.dumps(NESTED, ensure_ascii=False).encode()
    status, _, _, body = curl(h2_server, "/something", data=raw)
    assert status == 200
    assert json.loads(body) == {"received": NESTED, "bytes": len(raw)}
    assert curl(h2_server, "/something", data=b"nope")[0] == 400


def test_h2_large_generated_bodies(h2_server):
    # Answers of 2 KiB and more leave by reference (not copied): they must
    # stay intact until sent, across flow-control windows.
    doc = {"items": [{"id": i, "name": f"item {i} ✓"} for i in range(5000)]}
    raw = json.dumps(doc).encode()
    status, _, _, body = curl(h2_server, "/something", data=raw)
    assert status == 200
    assert json.loads(body) == {"received": doc, "bytes": len(raw)}
    q = "json=true&" + "&".join(f"k{i}=v{i}" for i in range(400))
    status, _, _, body = curl(h2_server, "/something?" + q)
    assert status == 200 and len(body) > 2048
    assert json.loads(body)["query"] == {
        "json": "true", **{f"k{i}": f"v{i}" for i in range(400)}}


def test_h2_not_found_and_head(h2_server):
    assert curl(h2_server, "/nope")[0] == 404
    assert curl(h2_server, "/", "-X", "DELETE")[0] == 404
    assert curl(h2_server, "/something", "-X", "PUT")[0] == 404
    status, _, _, body = curl(h2_server, "/something?foo=bar", "-I")
    assert status == 200 and b"content-length: 8" in body.lower()


def test_h2_concurrent_streams(h2_server):
    # Many generated answers on one connection at once: each stream has its
    # own scratch.
    need("nghttp")
    paths = [f"/something?n={i}" for i in range(40)]
    urls = [f"http://127.0.0.1:{h2_server.port}{p}" for p in paths]
    r = subprocess.run(["nghttp", "-m", "1", *urls], capture_output=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    for i in range(40):
        assert f"n={i}\n".encode() in r.stdout


def test_h2c_upgrade_generated(h2_server):
    # Upgrade: h2c runs the route before the switch, into stream 1's scratch.
    status, version, content_type, body = curl(
        h2_server, "/something?json=true&up=1", mode="--http2")
    assert (status, version) == (200, "2")
    assert json.loads(body)["query"] == {"json": "true", "up": "1"}
